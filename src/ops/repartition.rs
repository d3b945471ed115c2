//! `dragnet repartition --partitions M2 DIR NEWDIR`: the crawl of DIR, between two cycles,
//! rewritten offline for M2 partitions (docs/design.md §3, "Changing M is an offline job").
//!
//! dragnet maps URLs to machines in two stages, as WebGather does (Yan, Wang, Li and Guo, JSS
//! 2002; docs/design.md, References): a host key to one of M logical partitions, fixed for the
//! life of a crawl, then partitions to machines, the executor's choice per run. The second stage
//! lets machines come and go without moving anything; this module is the first stage's change,
//! for when the partitions themselves are too few (or too many): every record is routed again by
//! its host key to [`partition_of`]`(host_key, M2)`, so all URLs of a host still live in one
//! partition, and the crawl continued from NEWDIR fetches what it would have fetched from DIR.
//!
//! What NEWDIR gets (docs/design.md §2 for the layout):
//!
//! - `crawl.toml` as DIR's, with `partitions = M2` (only that line of the text changes) and a
//!   `manifest.json` with M2 and DIR's other fixed settings;
//! - for every new partition, the state the next cycle C reads, as version C: the seen set and
//!   the URL db (one external sort of every URL record keyed by (new partition, fingerprint):
//!   one sort buffer, whatever M2), the host table and the host budget (keyed by host key, so by
//!   the monotonicity of [`partition_of`] the old partitions' files read in order are already
//!   sorted for the new ones: streamed, no sort), the domain budget (a new partition's count of
//!   a domain is the sum over the old partitions whose key ranges overlap its own: an upper
//!   bound, so a budget is never exceeded), and the frontier queue (each old queue copied to
//!   scratch and drained R at a time, its entries sorted by new partition, then inserted into
//!   each new queue in bounded batches and committed at cycle C, as prioritize leaves it);
//! - cycle C's fetch lists (made by the last prioritize; streamed like the host table) and the
//!   seeds `dragnet inject` left for cycle C's merge;
//! - history: for every cycle before C, its WARC and WET files, its CDXJ indexes and the crawl's
//!   (`indexes/`, `archive -> cycles`), hard-linked (copied where a link cannot be made), with
//!   the same names, so the index's `filename`s still lead to them and pywb replays the whole
//!   crawl from NEWDIR; and every stage's `.done` marker for every new partition, so the cycle
//!   counter goes on from C. A carried marker keeps its cycle's times and adds up the counts of
//!   the old partitions it stands for (old partition p is told to new partition
//!   `p * M2 / M`), so `dragnet status` totals stay; it lists the history files that exist in
//!   NEWDIR, and the state files written here for the cycle before C. The runs between stages
//!   of old cycles (fetch results, links, pages, split and frontier-update runs) are per old
//!   partition and stay in DIR, as does its `metrics.prom`'s history and the split stage's CLOCK
//!   caches (the new partitions' caches start empty: a cache only saves traffic).
//!
//! DIR must be between cycles (every stage of every started cycle done everywhere) and is only
//! read: its lock is held throughout, nothing in it changes. NEWDIR must not exist or be empty;
//! everything is written under a temporary name beside it (`.NAME.tmp.PID@HOST`) and renamed
//! at the end, so a kill leaves nothing at NEWDIR (the temporary is removed by the next run).
//!
//! Memory: one sort buffer (`[sort] memory_budget` / 2) at a time, one queue's frame cache
//! (`[prioritize] queue_memory_mib`) for the old queue being drained and one for the new queue
//! being filled, batches of [`BATCH`] queue entries, one block per open run file, and O(M + M2)
//! small counters. Nothing grows with the number of URLs.

mod frontier;
mod history;
mod runs;
#[cfg(test)]
mod tests;

use frontier::frontiers;
use history::{history, markers};
use runs::{domain_budgets, restream, route_injected};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::config::{Config, MAX_PARTITIONS};
use crate::crawl::CrawlLock;
use crate::crawl::{CrawlDir, Stage};
use crate::crawl::{DoneMarker, FileDigest};
use crate::error::{Error, IoContext, Result};
use crate::keys::{host_key, host_of, partition_of};
use crate::prioritize::{frontier_dir, open_frontier};
use crate::queue::{DiskQueue, Entry};
use crate::records::{SplitRecord, UrlRecord};
use crate::run::{self, KeepFirst, RecordSink, Reducer, RunReader, RunWriter, Schema, Sorter};
use crate::storage;

/// Queue entries drained or inserted per call.
pub const BATCH: usize = 1 << 14;

/// The shape of the scratch runs sorted by (new partition, fingerprint): a 16-byte key and a
/// payload, not unique. Only the sorter's own spills have it; nothing is published with it.
const ROUTED: Schema = Schema::LINKS;

/// What `repartition` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RepartitionReport {
    /// The crawl read.
    pub from: PathBuf,
    /// The crawl written.
    pub to: PathBuf,
    /// Its partitions before.
    pub old_partitions: u32,
    /// Its partitions now.
    pub partitions: u32,
    /// The cycle NEWDIR runs next (the one DIR would have run).
    pub next_cycle: u32,
    /// URLs in the seen sets and URL dbs.
    pub urls: u64,
    /// Entries moved from the old frontier queues into the new ones.
    pub frontier: u64,
    /// URLs in cycle C's fetch lists.
    pub fetchlist: u64,
    /// Host records.
    pub hosts: u64,
    /// Seeds injected for cycle C's merge.
    pub injected: u64,
    /// History files (WARC, WET, CDXJ) hard-linked from DIR.
    pub linked: u64,
    /// History files copied (no hard link possible, e.g. another filesystem).
    pub copied: u64,
    /// Stage markers of the cycles before C written for the new partitions.
    pub markers: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Rewrites the crawl at `dir` for `partitions` partitions into the new directory `new_dir`
/// (see the module docs).
pub fn repartition(dir: &Path, new_dir: &Path, partitions: u32) -> Result<RepartitionReport> {
    let started = SystemTime::now();
    if partitions == 0 || partitions > MAX_PARTITIONS {
        return Err(Error::Usage(format!(
            "--partitions {partitions}: a crawl has between 1 and {MAX_PARTITIONS} partitions; \
             give the new count M2 in that range"
        )));
    }
    let (crawl, cfg) = CrawlDir::open(dir)?;
    let m = cfg.crawl.partitions;
    check_new_dir(dir, new_dir)?;
    crate::crawl::queued::check_no_jobs_queued(&crawl, &cfg)?;
    let lock = CrawlLock::acquire(dir, "repartition")?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    let cycle = crate::crawl::next_cycle(&crawl, m);
    check_between_cycles(&crawl, m, cycle)?;

    let tmp = temp_dir_for(new_dir)?;
    // Removed if a signal's stop is cut short (`crate::interrupt`).
    let _stop = crate::interrupt::remove_on_stop(&tmp);
    let r = write_all(&crawl, &cfg, &tmp, partitions, cycle).and_then(|mut r| {
        // The commit: the whole directory appears at once (not after SIGINT or SIGTERM).
        crate::interrupt::check()?;
        std::fs::rename(&tmp, new_dir).ctx("rename", &tmp)?;
        storage::sync_dir(parent_of(new_dir))?;
        r.to = new_dir.to_path_buf();
        Ok(r)
    });
    if r.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    drop(lock);
    let mut r = r?;
    r.from = dir.to_path_buf();
    r.seconds = started.elapsed().map_or(0.0, |d| d.as_secs_f64());
    Ok(r)
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(q) if !q.as_os_str().is_empty() => q,
        _ => Path::new("."),
    }
}

/// NEWDIR must be new or an empty directory, and not DIR.
fn check_new_dir(dir: &Path, new_dir: &Path) -> Result<()> {
    let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
    if same(dir, new_dir) {
        return Err(Error::Usage(format!(
            "{}: NEWDIR is the crawl itself; give a new directory for the repartitioned crawl \
             (DIR is left as it is)",
            new_dir.display()
        )));
    }
    let parent = parent_of(new_dir);
    if let (Ok(d), Ok(pa)) = (dir.canonicalize(), parent.canonicalize()) {
        if pa.starts_with(&d) {
            return Err(Error::Usage(format!(
                "{}: NEWDIR is inside the crawl {}; give a directory outside it (DIR is only \
                 read)",
                new_dir.display(),
                dir.display()
            )));
        }
    }
    match std::fs::read_dir(new_dir) {
        Ok(mut entries) => {
            if let Some(e) = entries.next() {
                let e = e.ctx("list", new_dir)?;
                return Err(Error::Usage(format!(
                    "{} exists and is not empty (it holds '{}'); dragnet repartition writes a new \
                     crawl directory: give a new or empty NEWDIR",
                    new_dir.display(),
                    e.file_name().to_string_lossy()
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(Error::Usage(format!(
            "{} exists and is a file; give a new or empty directory as NEWDIR",
            new_dir.display()
        ))),
        Err(e) => Err(Error::io("list", new_dir, e)),
    }
}

/// DIR must be between cycles: nothing of cycle `cycle` begun (its fetch lists and injected
/// seeds aside).
fn check_between_cycles(crawl: &CrawlDir, m: u32, cycle: u32) -> Result<()> {
    let root = crawl.root().display();
    let mut begun: Vec<String> = Vec::new();
    for stage in Stage::CYCLE {
        let done = (0..m)
            .filter(|&p| crawl.done_path(cycle, stage, p).exists())
            .count();
        let failed = (0..m)
            .filter(|&p| crawl.failed_path(cycle, stage, p).exists())
            .count();
        if done > 0 {
            begun.push(format!("{stage} done in {done} of {m} partitions"));
        }
        if failed > 0 {
            begun.push(format!("{stage} failed in {failed} of {m} partitions"));
        }
    }
    if begun.is_empty() {
        // A stage killed before its first marker leaves its outputs' directories.
        if let Ok(entries) = std::fs::read_dir(crawl.cycle_dir(cycle)) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let only_injected = name == "split" && split_holds_only_injected(&e.path());
                if name != "fetchlist" && !only_injected && !storage::is_temp_name(&name) {
                    begun.push(format!("{} exists", crawl.relative(&e.path())));
                }
            }
        }
    }
    if !begun.is_empty() {
        return Err(Error::Usage(format!(
            "{root} is in the middle of cycle {cycle} ({}): dragnet repartition works between \
             cycles; finish the cycle first with `dragnet cycle {root}` (or `dragnet repair \
             {root}` to roll it back), then repartition",
            begun.join(", ")
        )));
    }
    for p in 0..m {
        let list = crawl.fetchlist(cycle, p);
        if !list.exists() {
            return Err(Error::corrupt(
                &list,
                0,
                format!(
                    "missing: cycle {cycle}'s fetch list of partition {p}, which {} wrote; \
                     run `dragnet repair {root}`",
                    if cycle == 0 {
                        "`dragnet init`".to_string()
                    } else {
                        format!("the prioritize of cycle {}", cycle - 1)
                    }
                ),
            ));
        }
    }
    Ok(())
}

fn split_holds_only_injected(split: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(split) else {
        return false;
    };
    entries.flatten().all(|e| {
        let to = CrawlDir::is_split_to_dir(&e.file_name().to_string_lossy());
        to && std::fs::read_dir(e.path()).is_ok_and(|rd| {
            rd.flatten().all(|f| {
                let n = f.file_name().to_string_lossy().into_owned();
                CrawlDir::is_inject_run(&n) || storage::is_temp_name(&n)
            })
        })
    })
}

/// The temporary directory NEWDIR is written in, beside it; what a killed run left there is
/// removed first.
fn temp_dir_for(new_dir: &Path) -> Result<PathBuf> {
    let name = new_dir
        .file_name()
        .ok_or_else(|| {
            Error::Usage(format!(
                "{}: NEWDIR must name a directory",
                new_dir.display()
            ))
        })?
        .to_string_lossy()
        .into_owned();
    let parent = parent_of(new_dir);
    storage::create_dir_all(parent)?;
    let prefix = format!(".{name}{}", storage::TEMP_MARK);
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(tag) = n.strip_prefix(&prefix) else {
                continue;
            };
            let (pid, host) = tag.split_once('@').unwrap_or((tag, ""));
            let dead = host == storage::host_tag()
                && pid
                    .parse::<u32>()
                    .is_ok_and(|pid| !crate::util::pid_alive(pid));
            if dead {
                eprintln!(
                    "dragnet: removing {}, left by a repartition that did not finish",
                    e.path().display()
                );
                std::fs::remove_dir_all(e.path()).ctx("remove", &e.path())?;
            }
        }
    }
    let tmp = parent.join(format!("{prefix}{}", storage::temp_writer_tag()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).ctx("remove", &tmp)?;
    }
    storage::create_dir_all(&tmp)?;
    Ok(tmp)
}

/// `crawl.toml`'s text with `[crawl] partitions` set to `m2`, nothing else changed.
pub fn with_partitions(text: &str, m2: u32) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut section = String::new();
    let mut done = false;
    let in_crawl_end = |out: &mut String, section: &str, done: &mut bool| {
        if section == "crawl" && !*done {
            if !out.ends_with('\n') && !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("partitions = {m2}\n"));
            *done = true;
        }
    };
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            in_crawl_end(&mut out, &section, &mut done);
            section = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
        } else if section == "crawl" && !done {
            if let Some((k, rest)) = t.split_once('=') {
                if k.trim() == "partitions" {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    let comment = rest
                        .find('#')
                        .map(|i| format!(" {}", rest[i..].trim_end()))
                        .unwrap_or_default();
                    out.push_str(&format!("{indent}partitions = {m2}{comment}\n"));
                    done = true;
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    in_crawl_end(&mut out, &section, &mut done);
    if !done {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("\n[crawl]\npartitions = {m2}\n"));
    }
    out
}

/// The smallest host key of new partition `q` of `m2` (`2^64` past the last).
fn first_key(q: u32, m2: u32) -> u128 {
    (u128::from(q) << 64).div_ceil(u128::from(m2))
}

/// The old partitions (of `m`) whose host keys overlap new partition `q`'s (of `m2`).
fn overlapping(q: u32, m2: u32, m: u32) -> std::ops::RangeInclusive<u32> {
    let lo = first_key(q, m2) as u64;
    let hi = (first_key(q + 1, m2) - 1) as u64;
    partition_of(lo, m)..=partition_of(hi, m)
}

/// Everything, into `tmp`.
fn write_all(
    crawl: &CrawlDir,
    cfg: &Config,
    tmp: &Path,
    m2: u32,
    cycle: u32,
) -> Result<RepartitionReport> {
    let m = cfg.crawl.partitions;
    let out = CrawlDir::new(tmp);
    let mut new_cfg = cfg.clone();
    new_cfg.crawl.partitions = m2;
    let budget = (cfg.sort.memory_budget.0 / 2) as usize;
    let mut report = RepartitionReport {
        old_partitions: m,
        partitions: m2,
        next_cycle: cycle,
        ..RepartitionReport::default()
    };
    storage::create_dir_all(&out.state_root())?;
    for q in 0..m2 {
        storage::create_dir_all(&out.state_dir(q))?;
    }
    storage::create_dir_all(&out.cycle_dir(cycle).join("fetchlist"))?;
    let rw = Rewrite {
        crawl,
        out: &out,
        m,
        m2,
        cycle,
        budget,
        tmp,
    };
    report.urls = rw.url_state()?;
    // Seeds injected for cycle C's merge.
    report.injected = route_injected(&rw)?;
    rw.host_keyed(&mut report)?;
    // The frontier queues.
    let lens = if cycle > 0 {
        let lens = frontiers(crawl, cfg, &out, &new_cfg, cycle, budget, tmp)?;
        report.frontier = lens.iter().sum();
        Some(lens)
    } else {
        None
    };
    // History and the markers that carry the cycle counter.
    let (linked, copied) = history(crawl, &out, m, cycle)?;
    report.linked = linked;
    report.copied = copied;
    report.markers = markers(crawl, &out, m, m2, cycle, lens.as_deref())?;
    write_config(crawl, &out, &new_cfg)?;
    Ok(report)
}

/// One repartition's two crawls: DIR (`crawl`, `m` partitions) read as cycle `cycle` starts,
/// NEWDIR (`out`, `m2` partitions) written under its temporary name `tmp`, sorting within
/// `budget` bytes.
struct Rewrite<'a> {
    crawl: &'a CrawlDir,
    out: &'a CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
    budget: usize,
    tmp: &'a Path,
}

impl Rewrite<'_> {
    /// The seen sets and URL dbs that `cycle` reads, routed to the `m2` new partitions of `out`
    /// through one sort by (new partition, fingerprint); returns the URLs written.
    fn url_state(&self) -> Result<u64> {
        let (crawl, out, m, m2, cycle) = (self.crawl, self.out, self.m, self.m2, self.cycle);
        let (budget, tmp) = (self.budget, self.tmp);
        let mut router = Router::new(m2, budget, tmp)?;
        for p in 0..m {
            let urldb = crawl.state_file(p, "urldb", cycle);
            let seen = crawl.state_file(p, "seen", cycle);
            let (n_db, n_seen) = (
                RunReader::open_expect(&urldb, Schema::URLDB)?.len(),
                RunReader::open_expect(&seen, Schema::SEEN)?.len(),
            );
            if n_db != n_seen {
                return Err(Error::corrupt(
                    &seen,
                    0,
                    format!(
                    "{n_seen} fingerprints, but the URL db beside it ({}) holds {n_db} records: \
                     the seen set and the URL db disagree; run `dragnet check crawl`",
                    urldb.display()
                ),
                ));
            }
            let mut r = RunReader::open_expect(&urldb, Schema::URLDB)?;
            while let Some((key, payload)) = r.next_record()? {
                let fp = run::key_u64(key);
                let rec = UrlRecord::decode(payload)
                    .map_err(|e| Error::corrupt(&urldb, 0, format!("{fp:016x}: {e}")))?;
                router.push(host_key(host_of(&rec.url)), fp, payload)?;
            }
        }
        let mut state = StateSink::new(out, cycle, m2);
        router.finish(&mut KeepFirst, &mut state)?;
        state.close_through(m2)?;
        Ok(state.records.iter().sum())
    }

    /// The host-keyed files, streamed in order: host tables, host budgets, cycle C's fetch lists
    /// (their sizes into `report`), and the domain budgets.
    fn host_keyed(&self, report: &mut RepartitionReport) -> Result<()> {
        let (crawl, out, m, m2, cycle) = (self.crawl, self.out, self.m, self.m2, self.cycle);
        let latest = |kind: &str| -> Vec<Option<PathBuf>> {
            (0..m)
                .map(|p| crawl.latest_state(p, kind, cycle).map(|(_, path)| path))
                .collect()
        };
        report.hosts = restream(&latest("hosts"), Schema::HOSTS, m2, &|q| {
            out.state_file(q, "hosts", cycle)
        })?;
        restream(&latest("host_budget"), Schema::HOST_BUDGET, m2, &|q| {
            out.state_file(q, "host_budget", cycle)
        })?;
        let lists: Vec<Option<PathBuf>> = (0..m).map(|p| Some(crawl.fetchlist(cycle, p))).collect();
        report.fetchlist = restream(&lists, Schema::FETCHLIST, m2, &|q| out.fetchlist(cycle, q))?;
        domain_budgets(&latest("domain_budget"), out, m, m2, cycle)
    }
}

/// The configuration, written last (a directory with crawl.toml is a crawl): DIR's text with
/// the one `partitions` line changed, after the manifest; then `metrics.prom`.
fn write_config(crawl: &CrawlDir, out: &CrawlDir, new_cfg: &Config) -> Result<()> {
    let m2 = new_cfg.crawl.partitions;
    let text = std::fs::read_to_string(crawl.config_path()).ctx("read", &crawl.config_path())?;
    let new_text = with_partitions(&text, m2);
    let check = Config::parse(&new_text, &out.config_path())?;
    if check.to_toml() != new_cfg.to_toml() {
        return Err(Error::config(
            crawl.config_path(),
            format!(
                "cannot set partitions = {m2} in this crawl.toml by changing one line (is \
                 `partitions` set outside [crawl]?); set it under [crawl] and run again"
            ),
        ));
    }
    crate::crawl::manifest::write(out, new_cfg)?;
    storage::write_atomic(&out.config_path(), new_text.as_bytes())?;
    if let Err(e) = super::metrics::write_metrics(out, new_cfg) {
        eprintln!("dragnet: cannot write metrics.prom: {e}");
    }
    Ok(())
}

/// Records keyed by (new partition, fingerprint) through one external sort with a fixed
/// budget: what routes the URL records (and the queue entries) of every old partition to the
/// new ones, with one buffer whatever M2 is.
pub struct Router {
    sorter: Sorter,
    m2: u32,
    /// The most bytes the sorter has held in memory at once.
    pub max_buffered: usize,
}

impl Router {
    /// A router to `m2` partitions sorting within `budget` bytes, spilling under `tmp`.
    pub fn new(m2: u32, budget: usize, tmp: &Path) -> Result<Router> {
        Ok(Router {
            sorter: Sorter::new(ROUTED, budget, tmp)?,
            m2,
            max_buffered: 0,
        })
    }

    /// Routes a record of host `host` and fingerprint `fp`.
    pub fn push(&mut self, host: u64, fp: u64, payload: &[u8]) -> Result<()> {
        let q = partition_of(host, self.m2);
        self.sorter
            .push(&run::host_fp_key(u64::from(q), fp), payload)?;
        self.max_buffered = self.max_buffered.max(self.sorter.buffered_bytes());
        Ok(())
    }

    /// Hands everything, sorted by (new partition, fingerprint), to `out` through `reducer`.
    /// Returns the spills made.
    pub fn finish(self, reducer: &mut dyn Reducer, out: &mut dyn RecordSink) -> Result<u64> {
        Ok(self.sorter.finish(reducer, out)?.spills)
    }
}

/// The new partition and the fingerprint of a routed key.
fn routed(key: &[u8]) -> (u32, u64) {
    (run::key_u64(&key[..8]) as u32, run::key_u64(&key[8..]))
}

/// Writes each new partition's seen set and URL db (version `cycle`) from the routed records.
struct StateSink<'a> {
    out: &'a CrawlDir,
    cycle: u32,
    m2: u32,
    open: Option<(u32, RunWriter, RunWriter)>,
    next: u32,
    records: Vec<u64>,
}

impl<'a> StateSink<'a> {
    fn new(out: &'a CrawlDir, cycle: u32, m2: u32) -> StateSink<'a> {
        StateSink {
            out,
            cycle,
            m2,
            open: None,
            next: 0,
            records: vec![0; m2 as usize],
        }
    }

    fn open(&mut self, q: u32) -> Result<()> {
        self.open = Some((
            q,
            RunWriter::create(&self.out.state_file(q, "seen", self.cycle), Schema::SEEN)?,
            RunWriter::create(&self.out.state_file(q, "urldb", self.cycle), Schema::URLDB)?,
        ));
        self.next = q + 1;
        Ok(())
    }

    /// Finishes the open partition and writes (empty) every one before `end`.
    fn close_through(&mut self, end: u32) -> Result<()> {
        loop {
            if let Some((q, seen, urldb)) = self.open.take() {
                seen.finish()?;
                self.records[q as usize] = urldb.finish()?.records;
            }
            if self.next >= end.min(self.m2) {
                return Ok(());
            }
            self.open(self.next)?;
        }
    }
}

impl RecordSink for StateSink<'_> {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        let (q, fp) = routed(key);
        if self.open.as_ref().map(|o| o.0) != Some(q) {
            self.close_through(q)?;
            self.open(q)?;
        }
        let (_, seen, urldb) = self.open.as_mut().expect("opened above");
        seen.push(&run::fp_key(fp), &[])?;
        urldb.push(&run::fp_key(fp), payload)
    }
}
