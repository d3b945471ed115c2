//! The prioritize stage: the frontier of a partition and the next cycle's fetch list
//! (docs/design.md §1, §6).
//!
//! `dragnet prioritize --cycle N --partition p DIR` reads what the dedup-merge of cycle N found
//! (`cycles/N/new/pNNNN.run`: new URLs, unfetched URLs whose OPIC cash grew, deferred and failed
//! URLs to retry, fetched URLs whose recrawl is due) and
//!
//! 1. **inserts** each as an [`Entry`] (key = its OPIC cash, higher first; fingerprint; host key)
//!    into the partition's frontier, a disk-resident priority queue in `state/pNNNN/frontier/`
//!    (the quickheap or the CBT of R-blocks, `[prioritize] queue`; see [`crate::queue`]);
//! 2. **extracts** the top entries R at a time, checks each against the URL db the merge just
//!    wrote (`state/pNNNN/urldb.(N+1).run`, looked up in fingerprint order) and keeps those that
//!    are still current, at most `max_urls_per_host` per host and `fetch_budget` in all, then
//!    the *reserve*: up to `reserve_factor` x `fetch_budget` more, the host cap counting both
//!    (none with `max_urls_per_domain_total`);
//! 3. writes them, with URL, depth and the validators for a conditional GET, the reserve's
//!    flagged, as `cycles/(N+1)/fetchlist/pNNNN.run`.
//!
//! **The reserve** is fetched only while the next cycle's window is open
//! ([`crate::fetch::window`]); what it leaves comes back from the merge (`deferred`) and is
//! inserted again. The lifetime host budget charges the listed URLs only and keeps the reserve
//! within what they leave; the fetch charges a reserve URL when it tries it.
//!
//! **Stale entries.** A queue never updates an entry in place. When a URL's cash grows the merge
//! emits it again and a second entry with the higher priority goes in; the older one is stale and
//! is dropped when it surfaces. The URL db decides: an entry of an unfetched URL is current only if
//! its key is the key of the URL's present cash; an entry of a fetched URL only if the URL db has
//! a recrawl pending for it (`recrawl_queued`). Entries of URLs that are gone, or fetched with no
//! recrawl pending, are stale. Entries over a host's cap are put back for a later cycle.
//!
//! **Recrawl.** The merge, which walks the whole URL db every cycle anyway, emits a fetched URL
//! again once its last fetch is older than its interval: `recrawl_after_secs` divided by the
//! observed change rate (changes / fetches, smoothed), within `recrawl_min_secs..=max`. The
//! clock is the partition's fetch start time in its `.done` marker, so re-runs decide alike.
//!
//! **Crash safety.** The queue is the one state that is edited in place; its pager keeps an undo
//! journal (see [`crate::queue::pager`]). The order of commits is: fetch list published, then the
//! queue committed with tag N+1, then the `.done` marker. A kill before the queue commit rolls the
//! queue back on the next open and the stage is redone from its inputs, giving the same bytes (the
//! quickheap's pivot choices come from a seeded generator kept in the queue). A kill after it finds
//! the queue at N+1 and the fetch list in place, and only writes the marker.
//!
//! **Bounded work.** One cycle examines at most [`SCAN_FACTOR`] x (`fetch_budget` + the
//! reserve) entries: where a few hosts hold the whole top of the queue, their cap leaves the rest
//! of the budget unused for this cycle rather than reading the whole queue.
//!
//! Memory: the queue's frame cache (`queue_memory_mib`), one extraction step of R entries, and the
//! fetch list being built (at most `fetch_budget` + the reserve items).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::Config;
use crate::config::QueueKind;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage, StageReport};
use crate::error::{Error, Result};
use crate::queue::{DiskQueue, Entry};
use crate::records::FrontierUpdate;
use crate::records::{FetchItem, UrlRecord, UrlState};
use crate::run::{self, Cursor, RunReader, RunWriter, Schema};

mod budget;

use budget::{domain_budget, host_budget};

/// The frontier directory of partition `p`.
pub fn frontier_dir(crawl: &CrawlDir, p: u32) -> PathBuf {
    crawl.state_dir(p).join("frontier")
}

/// Opens (or creates) the frontier queue of partition `p` as `[prioritize]` configures it.
///
/// The queue kind is written into the frontier directory when it is created; a crawl.toml that
/// names another kind later is a configuration error, not a silently empty new frontier.
pub fn open_frontier(crawl: &CrawlDir, cfg: &Config, p: u32) -> Result<Box<dyn DiskQueue>> {
    let pc = &cfg.prioritize;
    let dir = frontier_dir(crawl, p);
    let kind_path = dir.join("kind");
    match std::fs::read_to_string(&kind_path) {
        Ok(k) if k.trim() == pc.queue.name() => {}
        Ok(k) => {
            return Err(Error::config(
                crawl.config_path(),
                format!(
                    "prioritize.queue is \"{}\" but the frontier of partition {p} ({}) is a {}; \
                     set queue = \"{}\" again (a frontier cannot change kind in place)",
                    pc.queue.name(),
                    dir.display(),
                    k.trim(),
                    k.trim()
                ),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::storage::create_dir_all(&dir)?;
            crate::storage::write_atomic(&kind_path, format!("{}\n", pc.queue.name()).as_bytes())?;
        }
        Err(e) => return Err(Error::io("read", &kind_path, e)),
    }
    Ok(match pc.queue {
        QueueKind::Quickheap => Box::new(crate::queue::quickheap::QuickHeap::open(
            &dir,
            crate::queue::quickheap::QuickHeapOptions {
                pager: pc.pager(),
                seed: 0x6472_6167_6e65_7400 ^ u64::from(p),
                ..Default::default()
            },
        )?),
        QueueKind::Cbt => Box::new(crate::queue::cbt::CbtQueue::open(
            &dir,
            crate::queue::cbt::CbtOptions {
                block: pc.block as usize,
                slices: pc.slices as usize,
                pager: pc.pager(),
            },
        )?),
    })
}

/// Runs the prioritize stage of `cycle` for partition `p` (a no-op if its `.done` exists).
pub fn prioritize_partition(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
) -> Result<StageReport> {
    if let Some(done) = crate::crawl::gate(crawl, cfg, Stage::Prioritize, cycle, p)? {
        return Ok(done);
    }
    let done_path = crawl.done_path(cycle, Stage::Prioritize, p);
    let started = SystemTime::now();
    let updates_path = crawl.new_urls(cycle, p);
    let urldb_path = crawl.state_file(p, "urldb", cycle + 1);
    let out_path = crawl.fetchlist(cycle + 1, p);
    crate::storage::create_dir_all(&crawl.stage_dir(cycle, Stage::Prioritize))?;
    crate::storage::create_dir_all(out_path.parent().expect("has a parent"))?;
    crate::storage::remove_temps(out_path.parent().expect("has a parent"))?;

    let mut queue = open_frontier(crawl, cfg, p)?;
    let applied = u64::from(cycle) + 1;
    let mut counts = BTreeMap::new();
    // State files read besides the updates and the URL db (the host budget, the host table).
    let mut read: Vec<PathBuf> = Vec::new();
    if queue.tag() == applied && out_path.exists() {
        // Killed between the queue's commit and the marker: the work is done and committed.
        counts.insert(counter::RESUMED.into(), 1);
        counts.insert(
            counter::SELECTED.into(),
            crate::run::verify(&out_path)?.records,
        );
    } else if queue.tag() != u64::from(cycle) {
        return Err(frontier_out_of_step(crawl, p, cycle, queue.tag()));
    } else {
        let mut st = Prioritize {
            cfg,
            queue: queue.as_mut(),
            counts: BTreeMap::new(),
        };
        st.insert_updates(&updates_path)?;
        let parked = parked_hosts(crawl, cycle, p, &mut st.counts, &mut read)?;
        let items = st.select(&urldb_path, &parked)?;
        counts = st.counts;
        let items = host_budget(crawl, cfg, cycle, p, items, &mut counts, &mut read)?;
        let items = domain_budget(crawl, cfg, cycle, p, items, &mut counts, &mut read)?;
        let bound = politeness_bound(crawl, cfg, cycle, p, &items)?;
        if bound > 0 {
            counts.insert(
                crate::crawl::report::counter::POLITENESS_BOUND.into(),
                bound,
            );
        }
        write_fetchlist(&out_path, items)?;
        queue.commit(applied)?;
    }
    let io = queue.stats();
    counts.insert(counter::FRONTIER.into(), queue.len());
    counts.insert("queue_block_reads".into(), io.block_reads);
    counts.insert("queue_block_writes".into(), io.block_writes);
    counts.insert("queue_comparisons".into(), io.comparisons);

    let mut marker = DoneMarker::new(Stage::Prioritize, cycle, p, started);
    for path in [&updates_path, &urldb_path].into_iter().chain(&read) {
        marker.inputs.push(FileDigest::of_run(crawl, path)?);
    }
    marker.outputs.push(FileDigest::of_run(crawl, &out_path)?);
    marker.counts = counts;
    Ok(StageReport::ran(marker.commit(&done_path, started)?))
}

fn frontier_out_of_step(crawl: &CrawlDir, p: u32, cycle: u32, tag: u64) -> Error {
    let dir = frontier_dir(crawl, p);
    if tag > u64::from(cycle) {
        Error::Usage(format!(
            "{}: the frontier of partition {p} already holds cycle {} (prioritize of cycle {cycle} \
             ran before and later cycles went on); an old cycle cannot be prioritized again",
            dir.display(),
            tag - 1
        ))
    } else if crawl
        .done_path(tag.min(u64::from(u32::MAX)) as u32, Stage::Prioritize, p)
        .exists()
    {
        // The prioritize that would bring it forward ran already: the frontier went back in
        // time (restored from an old copy, or made anew), and re-running cannot help.
        Error::corrupt(
            &dir,
            0,
            format!(
                "the frontier of partition {p} has applied cycles before {tag} only, but cycle \
                 {tag}'s prioritize already ran (its .done marker exists): the frontier was \
                 reset or restored from an older copy. Restore the frontier directory from the \
                 copy that matches cycle {cycle}, or remove it to start it over from nothing \
                 (the URLs it held stay in the URL db but are not queued again)"
            ),
        )
    } else {
        Error::Usage(format!(
            "{}: the frontier of partition {p} has applied cycles before {tag} only, but this is \
             cycle {cycle}: run `dragnet prioritize --cycle {tag} --partition {p} {}` first",
            dir.display(),
            crawl.root().display()
        ))
    }
}

struct Prioritize<'a> {
    cfg: &'a Config,
    queue: &'a mut dyn DiskQueue,
    counts: BTreeMap<String, u64>,
}

/// A cycle examines at most this many times `fetch_budget` queue entries (module docs).
pub const SCAN_FACTOR: usize = 16;

/// Entries inserted per `insert_many` call.
const INSERT_BATCH: usize = 1 << 16;

impl Prioritize<'_> {
    fn bump(&mut self, name: &str, n: u64) {
        crate::util::count(&mut self.counts, name, n);
    }

    /// Step 1: every update of the merge becomes a queue entry.
    fn insert_updates(&mut self, path: &Path) -> Result<()> {
        let mut r = RunReader::open_expect(path, Schema::NEW)?;
        let mut batch = Vec::with_capacity(INSERT_BATCH.min(r.len() as usize));
        while r.advance()? {
            let fp = run::key_u64(r.key());
            let u = FrontierUpdate::decode(r.payload())
                .map_err(|e| Error::corrupt(path, r.block_offset(), format!("{fp:016x}: {e}")))?;
            self.bump(
                if u.new {
                    "inserted_new"
                } else if u.recrawl {
                    "inserted_recrawl"
                } else {
                    "inserted_requeue"
                },
                1,
            );
            let host = crate::keys::host_key(crate::keys::host_of(&u.url));
            batch.push(Entry::new(Entry::key_for_score(u.score), fp, host));
            if batch.len() == INSERT_BATCH {
                // SIGINT or SIGTERM: stop here, the queue's transaction uncommitted (its
                // journal undoes it when the queue is opened next, as after a kill).
                crate::interrupt::check()?;
                self.queue.insert_many(&batch)?;
                batch.clear();
            }
        }
        self.queue.insert_many(&batch)?;
        Ok(())
    }

    /// Step 2: extract, drop stale entries, apply the host cap and the budget.
    fn select(
        &mut self,
        urldb_path: &Path,
        parked: &HashMap<u64, u32>,
    ) -> Result<Vec<(u64, u64, FetchItem)>> {
        let pc = &self.cfg.prioritize;
        let listed = usize::try_from(pc.fetch_budget).unwrap_or(usize::MAX);
        // The list, then the reserve beyond it (module docs).
        let budget = listed.saturating_add(usize::try_from(pc.reserve()).unwrap_or(usize::MAX));
        let step = (pc.block as usize).max(1);
        let mut urldb = Lookup::new(urldb_path)?;
        let mut selected: Vec<(u64, u64, FetchItem)> = Vec::new();
        let mut chosen: HashSet<u64> = HashSet::new();
        let mut per_host: HashMap<u64, u64> = HashMap::new();
        let mut held: Vec<Entry> = Vec::new();
        // One cycle examines at most SCAN_FACTOR x budget entries, so a few hosts with millions
        // of queued URLs at the top cannot make one cycle read the whole queue; what their cap
        // holds back stays in memory (24 bytes an entry) until it goes back in.
        let scan_limit = budget.saturating_mul(SCAN_FACTOR).max(step);
        let mut scanned = 0usize;
        let mut chunk = Vec::with_capacity(step);
        while selected.len() < budget && scanned < scan_limit && !self.queue.is_empty() {
            crate::interrupt::check()?;
            chunk.clear();
            self.queue
                .extract_top(step.min(scan_limit - scanned), &mut chunk)?;
            scanned += chunk.len();
            self.bump("extracted", chunk.len() as u64);
            // Look the chunk up in fingerprint order (one forward pass over the URL db), then
            // take the current entries in priority order.
            let mut by_fp: Vec<usize> = (0..chunk.len()).collect();
            by_fp.sort_unstable_by_key(|&i| chunk[i].fp);
            let mut records: Vec<Option<UrlRecord>> = vec![None; chunk.len()];
            for &i in &by_fp {
                records[i] = urldb.get(chunk[i].fp)?;
            }
            for (e, rec) in chunk.iter().zip(records) {
                let Some(rec) = rec else {
                    self.bump("stale_unknown", 1);
                    continue;
                };
                if !current(e, &rec) || chosen.contains(&e.fp) {
                    self.bump("stale", 1);
                    continue;
                }
                if parked.contains_key(&e.host) {
                    self.bump(counter::PARKED_URLS, 1);
                    held.push(*e);
                    continue;
                }
                if selected.len() >= budget {
                    held.push(*e);
                    continue;
                }
                let n = per_host.entry(e.host).or_insert(0);
                if *n >= pc.max_urls_per_host {
                    self.bump("host_capped", 1);
                    held.push(*e);
                    continue;
                }
                *n += 1;
                chosen.insert(e.fp);
                self.bump(
                    if rec.state == UrlState::Unfetched || rec.state == UrlState::Retry {
                        if rec.fetches == 0 {
                            "selected_first_fetch"
                        } else {
                            "selected_retry"
                        }
                    } else {
                        "selected_recrawl"
                    },
                    1,
                );
                selected.push((
                    e.host,
                    e.fp,
                    FetchItem {
                        url: rec.url,
                        depth: rec.depth,
                        priority: rec.score,
                        etag: rec.etag,
                        last_modified: rec.last_modified,
                        capture: rec.capture,
                        reserve: selected.len() >= listed,
                    },
                ));
            }
        }
        // What was taken out but not used goes back, with its priority, for a later cycle.
        self.bump("put_back", held.len() as u64);
        self.queue.insert_many(&held)?;
        let reserve = selected.len().saturating_sub(listed);
        self.bump(counter::SELECTED, (selected.len() - reserve) as u64);
        if reserve > 0 {
            self.bump(counter::RESERVE, reserve as u64);
        }
        self.bump("hosts", per_host.len() as u64);
        Ok(selected)
    }
}

/// The hosts parked for the next cycle (`[fetch] park_after_failed_runs`): host key -> the
/// first cycle that may contact the host again, read from the host table this cycle's fetch
/// wrote (`state/pNNNN/hosts.(N+1).run`). Their URLs stay in the frontier. Counts
/// `parked_hosts` and `parked_first_cycle` (the earliest cycle one of them comes back in).
///
/// Memory: 16 bytes per parked host (a failing host is parked, not forgotten, so the map holds
/// the partition's dead hosts; a million of them is 16 MiB).
fn parked_hosts(
    crawl: &CrawlDir,
    cycle: u32,
    p: u32,
    counts: &mut BTreeMap<String, u64>,
    read: &mut Vec<PathBuf>,
) -> Result<HashMap<u64, u32>> {
    let mut parked = HashMap::new();
    let path = crawl.state_file(p, "hosts", cycle + 1);
    if !path.exists() {
        return Ok(parked);
    }
    let next = cycle + 1;
    let mut r = RunReader::open_expect(&path, Schema::HOSTS)?;
    while r.advance()? {
        let k = run::key_u64(r.key());
        let rec = crate::records::HostRecord::decode(r.payload())
            .map_err(|e| Error::corrupt(r.path(), 0, format!("host record {k:016x}: {e}")))?;
        if rec.parked_until > next {
            parked.insert(k, rec.parked_until);
        }
    }
    read.push(path);
    if let Some(first) = parked.values().min() {
        counts.insert(counter::PARKED_HOSTS.into(), parked.len() as u64);
        counts.insert(counter::PARKED_FIRST_CYCLE.into(), u64::from(*first));
    }
    Ok(parked)
}

/// The politeness bound of a fetch list, milliseconds: per host, its URLs times its delay (the
/// larger of `default_delay_secs` and its robots.txt crawl-delay as the host table this cycle's
/// fetch wrote knows it, capped at `max_crawl_delay_secs`), the largest over the hosts. The
/// fetch of the next cycle, run alone, keeps its window open that long
/// ([`crate::fetch::window`]). `items` are sorted by host key; one merge-join pass over the host
/// table.
fn politeness_bound(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
    items: &[(u64, u64, FetchItem)],
) -> Result<u64> {
    let f = &cfg.fetch;
    let secs = |s: f64| std::time::Duration::try_from_secs_f64(s).unwrap_or_default();
    let default = secs(f.default_delay_secs);
    let cap = secs(f.max_crawl_delay_secs);
    let path = crawl.state_file(p, "hosts", cycle + 1);
    let mut hosts = match path.exists() {
        true => Some(RunReader::open_expect(&path, Schema::HOSTS)?),
        false => None,
    };
    let mut valid = match hosts.as_mut() {
        Some(r) => r.advance()?,
        None => false,
    };
    let agent = f.robots_agent();
    let mut bound = std::time::Duration::ZERO;
    for group in items.chunk_by(|a, b| a.0 == b.0) {
        let host = group[0].0;
        let mut delay = default;
        while let Some(r) = hosts.as_mut().filter(|_| valid) {
            let k = run::key_u64(r.key());
            if k > host {
                break;
            }
            if k == host {
                let rec = crate::records::HostRecord::decode(r.payload()).map_err(|e| {
                    Error::corrupt(r.path(), 0, format!("host record {k:016x}: {e}"))
                })?;
                for o in &rec.robots {
                    let d = crate::records::Policy::new(&o.status(), agent).crawl_delay();
                    delay = delay.max(d.unwrap_or_default().min(cap));
                }
            }
            valid = r.advance()?;
        }
        // The reserve is fetched only in the window, which this bound opens: not counted.
        let listed = group.iter().filter(|i| !i.2.reserve).count();
        bound = bound.max(delay.saturating_mul(u32::try_from(listed).unwrap_or(u32::MAX)));
    }
    Ok(bound.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// Whether a surfaced entry still stands for its URL (module docs, "Stale entries").
fn current(e: &Entry, rec: &UrlRecord) -> bool {
    match rec.state {
        UrlState::Unfetched | UrlState::Retry => e.key == Entry::key_for_score(rec.score),
        UrlState::Fetched | UrlState::NotModified | UrlState::Redirected => rec.recrawl_queued != 0,
        UrlState::Gone => false,
    }
}

/// Step 3: the fetch list, sorted by host key then fingerprint as the fetch stage reads it.
fn write_fetchlist(path: &Path, items: Vec<(u64, u64, FetchItem)>) -> Result<()> {
    let mut w = RunWriter::create(path, Schema::FETCHLIST)?;
    for (h, fp, item) in &items {
        w.push(&run::host_fp_key(*h, *fp), &item.encode())?;
    }
    w.finish()?;
    Ok(())
}

/// Lookups of fingerprints in a URL db, fast when they come in ascending order: a short forward
/// scan when the next key is near, a seek through the block index when it is far or behind.
struct Lookup {
    path: PathBuf,
    reader: RunReader,
    /// The reader sits on a record.
    positioned: bool,
    /// The reader has been advanced at least once (or sought).
    started: bool,
    last: u64,
}

impl Lookup {
    fn new(path: &Path) -> Result<Lookup> {
        Ok(Lookup {
            path: path.to_path_buf(),
            reader: RunReader::open_expect(path, Schema::URLDB)?,
            positioned: false,
            started: false,
            last: 0,
        })
    }

    /// The record of `fp`, if the URL db has one.
    fn get(&mut self, fp: u64) -> Result<Option<UrlRecord>> {
        const SCAN: usize = 64;
        let target = run::fp_key(fp);
        if !self.started || fp < self.last {
            self.seek(&target)?;
        }
        self.last = fp;
        let mut scanned = 0;
        while self.positioned && self.reader.key() < target.as_slice() {
            if scanned == SCAN {
                self.seek(&target)?;
                break;
            }
            self.positioned = self.reader.advance()?;
            scanned += 1;
        }
        if !self.positioned || self.reader.key() != target.as_slice() {
            return Ok(None);
        }
        let r = UrlRecord::decode(self.reader.payload()).map_err(|e| {
            Error::corrupt(
                &self.path,
                self.reader.block_offset(),
                format!("{fp:016x}: {e}"),
            )
        })?;
        Ok(Some(r))
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.reader.seek(key)?;
        self.positioned = self.reader.advance()?;
        self.started = true;
        Ok(())
    }
}

/// What a prioritize of `cycle` did, in one line.
pub fn summary(r: &StageReport, cycle: u32) -> String {
    let n = |k: &str| r.count(k);
    format!(
        "{} inserted ({} new, {} recrawls), {} extracted, {} stale, {} over their host's cap; {} URLs from {} hosts in the fetch list of cycle {}; frontier {} in {:.1}s",
        n("inserted_new") + n("inserted_requeue") + n("inserted_recrawl"),
        n("inserted_new"),
        n("inserted_recrawl"),
        n("extracted"),
        n("stale") + n("stale_unknown"),
        n("host_capped"),
        n(counter::SELECTED),
        n("hosts"),
        cycle + 1,
        n(counter::FRONTIER),
        r.seconds
    )
}
