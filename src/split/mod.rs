//! `dragnet split --cycle N --partition p DIR`: routes the links partition p's pages hold to the
//! partitions that own their hosts (docs/design.md §1, §3, §5).
//!
//! Input: `cycles/N/links/pNNNN.run`, sorted by the target's (host key, fingerprint). Because the
//! partition of a host is a monotone function of its host key ([`crate::keys::partition_of`]),
//! the targets arrive owner partition after owner partition, so the stage holds one output at a
//! time. For every target (all its occurrences are adjacent):
//!
//! 1. **Collapse**: its occurrences become one record: OPIC cash summed over the followed ones,
//!    the smallest depth over the followed ones, the number of in-links. Nofollow occurrences
//!    count (for cash and depth) only with `scope.follow_nofollow`; a target only ever linked
//!    with nofollow is dropped (`nofollow`).
//! 2. **Scope and trap rules** ([`scope::ScopeSection::refusal`]) and the per-host budget of new
//!    URLs per cycle; each refusal is counted by its reason.
//! 3. **CLOCK cache** ([`clock::Clock`], Broder, Najork & Wiener; sized by `docs/cachesim.md`): a
//!    fingerprint the partition routed recently (in this cycle or an earlier one: the cache is
//!    saved in `state/pNNNN/cache.CCCCCC.clock` between cycles) is known to the owner's seen set
//!    already. Its record is sent without URL, as a bare cash credit (a few bytes instead of the
//!    URL), or not at all if it carries no cash; only misses carry the URL the owner may not know.
//!    The cache's hit rate is in `.done` and `dragnet status`.
//! 4. **Route** to the owner q: `cycles/N/split/to-qqqq/from-pppp.run` ([`SplitRecord`], sorted
//!    by fingerprint through an external sort, the order the dedup-merge of q reads). A q routed
//!    nothing gets no file: the marker lists the runs written, so the merge never guesses.
//!
//! Re-running a split whose `.done` is missing reads the same links and the same cache version
//! and writes the same bytes.

pub mod clock;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage, StageReport};
use crate::error::{Error, Result};
use crate::keys::partition_of;
use crate::records::SplitRecord;
use crate::records::{LinkRecord, LinkView};
use crate::run::{self, Cursor, KeepFirst, RunReader, RunWriter, Schema, Sorter};
use clock::Clock;

/// OPIC cash summed exactly, in fixed point (units of 2^-64), so the sum of a target's
/// occurrences does not depend on the order they come in: links to one target are adjacent in the
/// links run, but in the order their pages were parsed, which a fetch that parses pages as they
/// arrive (`[fetch] parse`) does not fix. Floating-point addition would round differently in
/// another order. A share of at least 2^-11 converts exactly; smaller ones lose bits below 2^-64.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Cash(i128);

impl Cash {
    /// 2^64: one unit of cash in fixed point.
    const ONE: f64 = 18_446_744_073_709_551_616.0;

    fn of(c: f64) -> Cash {
        // `as` saturates (and maps NaN to 0).
        Cash((c * Cash::ONE) as i128)
    }

    fn add(&mut self, c: f64) {
        self.0 = self.0.saturating_add(Cash::of(c).0);
    }

    fn get(self) -> f64 {
        self.0 as f64 / Cash::ONE
    }
}

/// One target being collapsed.
struct Target {
    key: [u8; 16],
    url: String,
    cash: Cash,
    depth: u32,
    inlinks: u32,
    followed: bool,
}

impl Target {
    /// The first occurrence of a target: `l`, with key `key`, followed or not.
    fn new(key: [u8; 16], l: &LinkView<'_>, follow: bool) -> Target {
        Target {
            key,
            url: l.url.to_owned(),
            cash: Cash::of(if follow { l.cash } else { 0.0 }),
            depth: l.depth,
            inlinks: 1,
            followed: follow,
        }
    }

    /// Another occurrence `l` of the target, followed or not.
    fn absorb(&mut self, l: &LinkView<'_>, follow: bool) {
        self.inlinks = self.inlinks.saturating_add(1);
        // Only a followed occurrence discovers the target: a nofollow link from a shallower
        // page gives it no depth (the first followed one replaces the depth of nofollow
        // occurrences before it).
        if follow {
            self.depth = if self.followed {
                self.depth.min(l.depth)
            } else {
                l.depth
            };
            self.cash.add(l.cash);
            self.followed = true;
        }
    }
}

/// Runs the split stage of partition `p` in `cycle` (see the module docs).
pub fn split_partition(crawl: &CrawlDir, cfg: &Config, cycle: u32, p: u32) -> Result<StageReport> {
    if let Some(done) = crate::crawl::gate(crawl, cfg, Stage::Split, cycle, p)? {
        return Ok(done);
    }
    let done_path = crawl.done_path(cycle, Stage::Split, p);
    let started = SystemTime::now();
    let links_path = crawl.links(cycle, p);
    let stage_dir = crawl.stage_dir(cycle, Stage::Split);
    crate::storage::create_dir_all(&stage_dir)?;
    crate::storage::remove_temps(&stage_dir)?;
    let capacity = usize::try_from(cfg.split.cache_entries).unwrap_or(1 << 20);
    let old_cache = crawl.latest_state_ext(p, "cache", "clock", cycle);
    let mut cache = match &old_cache {
        Some((_, path)) => Clock::load(path, capacity)?,
        None => Clock::new(capacity),
    };
    let mut st = Split {
        cfg,
        counts: BTreeMap::new(),
        cache: &mut cache,
        host: (u64::MAX, 0),
        domains: std::collections::HashMap::new(),
    };
    let mut owners = Owners::new(crawl, cfg, cycle, p, stage_dir)?;
    let reader = RunReader::open_expect(&links_path, Schema::LINKS)?;
    st.route_links(reader, &links_path, &mut owners)?;
    let outputs = owners.finish()?;
    let mut counts = st.counts;
    let new_cache = crawl.state_file_ext(p, "cache", "clock", cycle + 1);
    cache.save(&new_cache)?;
    cache_counts(&mut counts, &cache);

    let mut marker = DoneMarker::new(Stage::Split, cycle, p, started);
    marker.inputs.push(FileDigest::of_run(crawl, &links_path)?);
    if let Some((_, path)) = &old_cache {
        marker.inputs.push(FileDigest::of_file(crawl, path)?);
    }
    for o in &outputs {
        marker.outputs.push(FileDigest::of_run(crawl, o)?);
    }
    marker.outputs.push(FileDigest::of_file(crawl, &new_cache)?);
    marker.counts = counts;
    Ok(StageReport::ran(marker.commit(&done_path, started)?))
}

/// The cache's counters: its hit rate (per thousand lookups) and its entries.
fn cache_counts(counts: &mut BTreeMap<String, u64>, cache: &Clock) {
    let (hits, misses) = (
        counts.get(counter::CACHE_HITS).copied().unwrap_or(0),
        counts.get(counter::CACHE_MISSES).copied().unwrap_or(0),
    );
    counts.insert(
        counter::CACHE_HIT_PERMILLE.into(),
        (hits * 1000).checked_div(hits + misses).unwrap_or(0),
    );
    counts.insert("cache_entries".into(), cache.len() as u64);
}

/// The owners' runs of one split: the links come owner partition after owner partition, so
/// one external sort at a time, each written when the next owner's records begin.
struct Owners<'a> {
    crawl: &'a CrawlDir,
    cycle: u32,
    p: u32,
    m: u32,
    /// Memory of one sort.
    budget: usize,
    stage_dir: PathBuf,
    /// The owner whose records `sorter` takes.
    q: u32,
    sorter: Option<Sorter>,
    /// The runs written so far.
    outputs: Vec<PathBuf>,
}

impl<'a> Owners<'a> {
    fn new(
        crawl: &'a CrawlDir,
        cfg: &Config,
        cycle: u32,
        p: u32,
        stage_dir: PathBuf,
    ) -> Result<Owners<'a>> {
        let budget = usize::try_from(cfg.sort.memory_budget.0 / 2)
            .unwrap_or(usize::MAX)
            .max(1 << 20);
        let m = cfg.crawl.partitions;
        Ok(Owners {
            crawl,
            cycle,
            p,
            m,
            budget,
            sorter: Some(Sorter::new(Schema::SPLIT, budget, &stage_dir)?),
            stage_dir,
            q: 0,
            outputs: Vec::with_capacity(m as usize),
        })
    }

    /// The sort of owner `q`'s records, once the owners before it are written.
    fn of(&mut self, q: u32) -> Result<&mut Sorter> {
        while self.q < q {
            self.next()?;
        }
        Ok(self.sorter.as_mut().expect("a sorter until finish"))
    }

    /// Writes the current owner's run and starts the next owner's sort.
    fn next(&mut self) -> Result<()> {
        let sorter = self.sorter.take().expect("a sorter until finish");
        let (crawl, cycle, q, p) = (self.crawl, self.cycle, self.q, self.p);
        self.outputs.extend(finish(crawl, cycle, q, p, sorter)?);
        self.sorter = Some(Sorter::new(Schema::SPLIT, self.budget, &self.stage_dir)?);
        self.q += 1;
        Ok(())
    }

    /// Writes the rest of the owners' runs; returns every run written.
    fn finish(mut self) -> Result<Vec<PathBuf>> {
        while self.q < self.m {
            self.next()?;
        }
        Ok(self.outputs)
    }
}

/// Sorts one owner's records by fingerprint into `split/to-q/from-p.run`; nothing (and `None`)
/// when there are none: the merge takes a run this stage's marker does not list as empty, so a
/// cycle with little to do writes M runs fewer per partition, not M empty ones.
fn finish(crawl: &CrawlDir, cycle: u32, q: u32, p: u32, sorter: Sorter) -> Result<Option<PathBuf>> {
    if sorter.is_empty() {
        return Ok(None);
    }
    let path = crawl.split_run(cycle, q, p);
    crate::storage::create_dir_all(path.parent().expect("has a parent"))?;
    let mut w = RunWriter::create(&path, Schema::SPLIT)?;
    sorter.finish(&mut KeepFirst, &mut w)?;
    w.finish()?;
    Ok(Some(path))
}

struct Split<'a> {
    cfg: &'a Config,
    counts: BTreeMap<String, u64>,
    cache: &'a mut Clock,
    /// The host being counted against its budget: (host key, new URLs so far).
    host: (u64, u64),
    /// New URLs so far per registered domain ([`crate::keys::domain_key`]), when
    /// `max_new_urls_per_domain` is set: a domain's hosts are not adjacent in key order.
    domains: std::collections::HashMap<u64, u64>,
}

impl Split<'_> {
    /// Collapses the links of `reader` (read from `path`) target by target and routes each
    /// target to its owner's sort in `owners`.
    fn route_links(
        &mut self,
        mut reader: RunReader,
        path: &std::path::Path,
        owners: &mut Owners<'_>,
    ) -> Result<()> {
        let m = self.cfg.crawl.partitions;
        let mut cur: Option<Target> = None;
        // Counted here and added once: a counter's name looked up in the map was ~135
        // instructions a link and again a target.
        let (mut links, mut targets) = (0u64, 0u64);
        loop {
            let next = if reader.advance()? {
                let key: [u8; 16] = reader.key().try_into().expect("16-byte links key");
                let l = LinkRecord::view(reader.payload()).map_err(|e| {
                    Error::corrupt(path, reader.block_offset(), format!("link record: {e}"))
                })?;
                links += 1;
                Some((key, l))
            } else {
                None
            };
            // The current target ends when the key changes (or the input does).
            let same = matches!((&cur, &next), (Some(t), Some((k, _))) if t.key == *k);
            if !same {
                if let Some(t) = cur.take() {
                    let q = partition_of(run::key_u64(&t.key[..8]), m);
                    targets += 1;
                    self.route(t, owners.of(q)?)?;
                }
            }
            let Some((key, l)) = next else { break };
            let follow = !l.nofollow || self.cfg.scope.follow_nofollow;
            match &mut cur {
                Some(t) if same => t.absorb(&l, follow),
                _ => cur = Some(Target::new(key, &l, follow)),
            }
        }
        // Only counters that counted something are named, as when they were bumped one by one.
        for (name, n) in [(counter::LINKS, links), ("targets", targets)] {
            if n > 0 {
                self.bump(name, n);
            }
        }
        Ok(())
    }

    fn bump(&mut self, name: &str, n: u64) {
        crate::util::count(&mut self.counts, name, n);
    }

    /// Applies the rules to one collapsed target and routes what survives.
    fn route(&mut self, t: Target, out: &mut Sorter) -> Result<()> {
        if !t.followed {
            self.bump("nofollow", 1);
            return Ok(());
        }
        let host = crate::keys::host_of(&t.url);
        if let Some(reason) = self.cfg.scope.refusal(&t.url, host, t.depth) {
            self.bump(reason, 1);
            return Ok(());
        }
        let fp = run::key_u64(&t.key[8..]);
        // Only a URL that is routed with its URL may enter the cache: a hit means "the owner
        // knows it". So the budget is checked before a miss is inserted.
        if self.cache.contains(fp) {
            self.cache.check_insert(fp); // marks it
            self.bump(counter::CACHE_HITS, 1);
            if t.cash.get() > 0.0 {
                self.bump("credits", 1);
                let r = SplitRecord {
                    url: String::new(),
                    cash: t.cash.get(),
                    depth: t.depth,
                    inlinks: t.inlinks,
                };
                out.push(&run::fp_key(fp), &r.encode())?;
            }
            return Ok(());
        }
        self.bump(counter::CACHE_MISSES, 1);
        let hk = run::key_u64(&t.key[..8]);
        if self.host.0 != hk {
            self.host = (hk, 0);
        }
        if self.host.1 >= self.cfg.scope.max_new_urls_per_host {
            self.bump("over_host_budget", 1);
            return Ok(());
        }
        let per_domain = self.cfg.scope.max_new_urls_per_domain;
        if per_domain > 0 {
            let n = self
                .domains
                .entry(crate::keys::domain_key(host))
                .or_insert(0);
            if *n >= per_domain {
                self.bump("over_domain_budget", 1);
                return Ok(());
            }
            *n += 1;
        }
        self.host.1 += 1;
        self.cache.check_insert(fp);
        self.bump("routed", 1);
        let r = SplitRecord {
            url: t.url,
            cash: t.cash.get(),
            depth: t.depth,
            inlinks: t.inlinks,
        };
        out.push(&run::fp_key(fp), &r.encode())
    }
}

/// The refusal counters of a split, in the order its summary lists them.
const REFUSALS: [&str; 9] = [
    "nofollow",
    "out_of_domain",
    "too_deep",
    "trap_path",
    "trap_repeat",
    "trap_query",
    "dropped_pattern",
    "over_host_budget",
    "over_domain_budget",
];

/// What a split did, in one line.
pub fn summary(r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    let refused: Vec<String> = REFUSALS
        .iter()
        .filter(|k| n(k) > 0)
        .map(|k| format!("{k} {}", n(k)))
        .collect();
    format!(
        "{} links to {} URLs; {} routed with their URL, {} as cash credits; cache hit rate {:.1}%; refused: {} in {:.1}s",
        n(counter::LINKS),
        n("targets"),
        n("routed"),
        n("credits"),
        n(counter::CACHE_HIT_PERMILLE) as f64 / 10.0,
        if refused.is_empty() { "none".to_owned() } else { refused.join(", ") },
        r.seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_record_round_trip() {
        let r = SplitRecord {
            url: "http://a.test/".into(),
            cash: 0.5,
            depth: 2,
            inlinks: 7,
        };
        let b = r.encode();
        assert_eq!(SplitRecord::decode(&b).unwrap(), r);
        for n in 0..b.len() {
            assert!(SplitRecord::decode(&b[..n]).is_err());
        }
    }

    #[test]
    fn cash_sums_the_same_bits_in_any_order() {
        // Shares as pages give them: cash / outlinks, over a spread of magnitudes.
        let mut shares: Vec<f64> = (1..200u32)
            .map(|i| f64::from(i % 17 + 1) / f64::from(i * 7 + 3))
            .chain([1.0, 1e-3, 0.1, 1.0 / 3.0, 123.456])
            .collect();
        let sum = |v: &[f64]| {
            let mut c = Cash::default();
            for &x in v {
                c.add(x);
            }
            c.get()
        };
        let want = sum(&shares);
        let plain: f64 = shares.iter().sum();
        assert!((want - plain).abs() < 1e-12 * plain, "{want} vs {plain}");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..50 {
            // Fisher-Yates with a xorshift: every order gives the same bits.
            for i in (1..shares.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                shares.swap(i, (x % (i as u64 + 1)) as usize);
            }
            assert_eq!(sum(&shares).to_bits(), want.to_bits());
        }
        // One share is itself, exactly.
        for c in [0.5, 1.0 / 3.0, 0.001, 42.0] {
            assert_eq!(Cash::of(c).get(), c);
        }
        assert_eq!(Cash::of(f64::NAN).get(), 0.0);
    }
}
