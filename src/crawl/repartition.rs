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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::config::{Config, MAX_PARTITIONS};
use super::done::{DoneMarker, FileDigest};
use super::layout::{CrawlDir, Stage};
use super::lock::CrawlLock;
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
    crate::exec::slurm::check_no_jobs_queued(&crawl, &cfg)?;
    let lock = CrawlLock::acquire(dir, "repartition")?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    let cycle = crate::exec::next_cycle(&crawl, m);
    check_between_cycles(&crawl, m, cycle)?;

    let tmp = temp_dir_for(new_dir)?;
    let r = write_all(&crawl, &cfg, &tmp, partitions, cycle).and_then(|mut r| {
        // The commit: the whole directory appears at once.
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
        let to = e.file_name().to_string_lossy().starts_with("to-");
        to && std::fs::read_dir(e.path()).is_ok_and(|rd| {
            rd.flatten().all(|f| {
                let n = f.file_name().to_string_lossy().into_owned();
                (n.starts_with("inject-") && n.ends_with(".run")) || storage::is_temp_name(&n)
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

    // Seen sets and URL dbs: one sort by (new partition, fingerprint).
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
    let mut state = StateSink::new(&out, cycle, m2);
    router.finish(&mut KeepFirst, &mut state)?;
    state.close_through(m2)?;
    report.urls = state.records.iter().sum();

    // Seeds injected for cycle C's merge.
    report.injected = route_injected(crawl, &out, m, m2, cycle, budget, tmp)?;

    // Host-keyed files: streamed in order.
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
    domain_budgets(&latest("domain_budget"), &out, m, m2, cycle)?;

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

    // The configuration last (a directory with crawl.toml is a crawl), manifest first.
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
    super::manifest::write(&out, &new_cfg)?;
    storage::write_atomic(&out.config_path(), new_text.as_bytes())?;
    if let Err(e) = super::metrics::write_metrics(&out, &new_cfg) {
        eprintln!("dragnet: cannot write metrics.prom: {e}");
    }
    Ok(report)
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

/// Copies the runs of `inputs` (old partition order; `None`: that partition has none), all keyed
/// by host key first, into one run per new partition, `out(q)`: old partitions are contiguous
/// ranges of host keys in order, so their records read one after the other are sorted, and cut
/// where the new partitions begin. Writes every new partition's run (empty ones too) if any old
/// one had one. Returns the records.
fn restream(
    inputs: &[Option<PathBuf>],
    schema: Schema,
    m2: u32,
    out: &dyn Fn(u32) -> PathBuf,
) -> Result<u64> {
    if inputs.iter().all(Option::is_none) {
        return Ok(0);
    }
    let mut open: Option<(u32, RunWriter)> = None;
    let mut next = 0u32;
    let mut total = 0u64;
    let mut advance_to = |open: &mut Option<(u32, RunWriter)>, q: u32| -> Result<()> {
        while open.as_ref().is_none_or(|o| o.0 < q) {
            if let Some((_, w)) = open.take() {
                w.finish()?;
            }
            if next >= m2 || next > q {
                break;
            }
            let path = out(next);
            storage::create_dir_all(parent_of(&path))?;
            *open = Some((next, RunWriter::create(&path, schema)?));
            next += 1;
        }
        Ok(())
    };
    for path in inputs.iter().flatten() {
        let mut r = RunReader::open_expect(path, schema)?;
        while let Some((key, payload)) = r.next_record()? {
            let host = run::key_u64(&key[..8]);
            let q = partition_of(host, m2);
            if open.as_ref().is_some_and(|o| o.0 > q) {
                return Err(Error::corrupt(
                    path,
                    0,
                    format!(
                        "host key {host:016x} is out of order: it belongs before the partition \
                         this file stands for; run `dragnet check crawl`"
                    ),
                ));
            }
            advance_to(&mut open, q)?;
            open.as_mut().expect("opened").1.push(key, payload)?;
            total += 1;
        }
    }
    advance_to(&mut open, m2)?;
    if let Some((_, w)) = open.take() {
        w.finish()?;
    }
    Ok(total)
}

/// The domain budgets: new partition q counts, per domain, the sum of the old partitions'
/// counts whose host keys overlap its own (an upper bound on what its hosts have spent).
fn domain_budgets(
    inputs: &[Option<PathBuf>],
    out: &CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
) -> Result<()> {
    if inputs.iter().all(Option::is_none) {
        return Ok(());
    }
    struct Sum(u64);
    impl Reducer for Sum {
        fn record(
            &mut self,
            _: &[u8],
            _: usize,
            payload: &[u8],
            first: bool,
            _: &mut dyn RecordSink,
        ) -> Result<()> {
            let n = u64::from_le_bytes(
                payload
                    .try_into()
                    .map_err(|_| Error::Internal("domain budget count is not 8 bytes".into()))?,
            );
            self.0 = if first { n } else { self.0.saturating_add(n) };
            Ok(())
        }
        fn finish(&mut self, key: &[u8], out: &mut dyn RecordSink) -> Result<()> {
            out.push(key, &self.0.to_le_bytes())
        }
    }
    for q in 0..m2 {
        let readers = overlapping(q, m2, m)
            .filter_map(|p| inputs[p as usize].as_ref())
            .map(|path| RunReader::open_expect(path, Schema::DOMAIN_BUDGET))
            .collect::<Result<Vec<_>>>()?;
        let mut w = RunWriter::create(
            &out.state_file(q, "domain_budget", cycle),
            Schema::DOMAIN_BUDGET,
        )?;
        run::merge(readers, &mut Sum(0), &mut w)?;
        w.finish()?;
    }
    Ok(())
}

/// The seeds `dragnet inject` left for cycle `cycle`'s merge, routed to their new owners (one
/// run each; a seed injected twice is one record with the cash of both, as the merge would have
/// summed them). Returns the seeds.
fn route_injected(
    crawl: &CrawlDir,
    out: &CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
    budget: usize,
    tmp: &Path,
) -> Result<u64> {
    let mut router = Router::new(m2, budget, tmp)?;
    let mut any = false;
    for p in 0..m {
        let dir = crawl
            .stage_dir(cycle, Stage::Split)
            .join(format!("to-{}", CrawlDir::partition_name(p)));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("inject-") && n.ends_with(".run"))
            })
            .collect();
        files.sort();
        for f in files {
            any = true;
            let mut r = RunReader::open_expect(&f, Schema::SPLIT)?;
            while let Some((key, payload)) = r.next_record()? {
                let fp = run::key_u64(key);
                let rec = SplitRecord::decode(payload)
                    .map_err(|e| Error::corrupt(&f, 0, format!("{fp:016x}: {e}")))?;
                router.push(host_key(host_of(&rec.url)), fp, payload)?;
            }
        }
    }
    if !any {
        return Ok(0);
    }
    /// Sums the cash of one URL's injected records, smallest depth.
    struct Combine(Option<SplitRecord>);
    impl Reducer for Combine {
        fn record(
            &mut self,
            _: &[u8],
            _: usize,
            payload: &[u8],
            first: bool,
            _: &mut dyn RecordSink,
        ) -> Result<()> {
            let r = SplitRecord::decode(payload).map_err(|e| Error::Internal(e.to_string()))?;
            match (&mut self.0, first) {
                (Some(acc), false) => {
                    acc.cash += r.cash;
                    acc.depth = acc.depth.min(r.depth);
                    acc.inlinks += r.inlinks;
                }
                _ => self.0 = Some(r),
            }
            Ok(())
        }
        fn finish(&mut self, key: &[u8], out: &mut dyn RecordSink) -> Result<()> {
            let r = self.0.take().expect("a group has a record");
            out.push(key, &r.encode())
        }
    }
    struct Sink<'a> {
        out: &'a CrawlDir,
        cycle: u32,
        open: Option<(u32, RunWriter)>,
        seeds: u64,
    }
    impl RecordSink for Sink<'_> {
        fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
            let (q, fp) = routed(key);
            if self.open.as_ref().map(|o| o.0) != Some(q) {
                if let Some((_, w)) = self.open.take() {
                    w.finish()?;
                }
                let dir = self
                    .out
                    .stage_dir(self.cycle, Stage::Split)
                    .join(format!("to-{}", CrawlDir::partition_name(q)));
                storage::create_dir_all(&dir)?;
                let path = dir.join("inject-000000000000000-repartition.run");
                self.open = Some((q, RunWriter::create(&path, Schema::SPLIT)?));
            }
            self.seeds += 1;
            self.open
                .as_mut()
                .expect("opened")
                .1
                .push(&run::fp_key(fp), payload)
        }
    }
    let mut sink = Sink {
        out,
        cycle,
        open: None,
        seeds: 0,
    };
    router.finish(&mut Combine(None), &mut sink)?;
    if let Some((_, w)) = sink.open.take() {
        w.finish()?;
    }
    Ok(sink.seeds)
}

/// Moves every old frontier's entries into the new partitions' queues, committed at `cycle`
/// (what prioritize of cycle - 1 leaves). Each old queue is copied to scratch (DIR is only read)
/// and drained [`BATCH`] entries at a time into one sort by (new partition, fingerprint); each
/// new queue is then filled in batches of [`BATCH`] and committed before the next is opened.
/// Returns the new queues' lengths.
fn frontiers(
    crawl: &CrawlDir,
    cfg: &Config,
    out: &CrawlDir,
    new_cfg: &Config,
    cycle: u32,
    budget: usize,
    tmp: &Path,
) -> Result<Vec<u64>> {
    let m = cfg.crawl.partitions;
    let m2 = new_cfg.crawl.partitions;
    let scratch = CrawlDir::new(tmp.join(format!(".scratch{}0", storage::TEMP_MARK)));
    let mut router = Router::new(m2, budget, tmp)?;
    let mut chunk = Vec::with_capacity(BATCH);
    let mut moved = 0u64;
    for p in 0..m {
        let from = frontier_dir(crawl, p);
        if !from.join("kind").exists() {
            return Err(Error::corrupt(
                &from,
                0,
                format!(
                    "missing: the frontier of partition {p}, which the prioritize of cycle {} \
                     committed; run `dragnet repair {}`",
                    cycle - 1,
                    crawl.root().display()
                ),
            ));
        }
        let copy = frontier_dir(&scratch, p);
        storage::create_dir_all(&copy)?;
        for e in std::fs::read_dir(&from).ctx("list", &from)? {
            let e = e.ctx("list", &from)?;
            if e.file_type().ctx("stat", &e.path())?.is_file() {
                std::fs::copy(e.path(), copy.join(e.file_name())).ctx("copy", &e.path())?;
            }
        }
        {
            let mut q = open_frontier(&scratch, cfg, p)?;
            if q.tag() != u64::from(cycle) {
                return Err(Error::corrupt(
                    &from,
                    0,
                    format!(
                        "the frontier of partition {p} is committed at cycle {} but the crawl is \
                         between cycles {} and {cycle}; run `dragnet repair {}`",
                        q.tag(),
                        cycle - 1,
                        crawl.root().display()
                    ),
                ));
            }
            let mut buf = [0u8; Entry::SIZE];
            while !q.is_empty() {
                chunk.clear();
                q.extract_top(BATCH, &mut chunk)?;
                for e in &chunk {
                    e.write_to(&mut buf);
                    router.push(e.host, e.fp, &buf)?;
                    moved += 1;
                }
            }
        }
        std::fs::remove_dir_all(&copy).ctx("remove", &copy)?;
    }
    let _ = std::fs::remove_dir_all(scratch.root());
    struct Sink<'a> {
        out: &'a CrawlDir,
        cfg: &'a Config,
        cycle: u32,
        open: Option<(u32, Box<dyn DiskQueue>)>,
        next: u32,
        batch: Vec<Entry>,
        lens: Vec<u64>,
    }
    impl Sink<'_> {
        fn flush(&mut self) -> Result<()> {
            if let Some((_, q)) = self.open.as_mut() {
                q.insert_many(&self.batch)?;
            }
            self.batch.clear();
            Ok(())
        }
        fn close_through(&mut self, end: u32) -> Result<()> {
            loop {
                self.flush()?;
                if let Some((q, mut queue)) = self.open.take() {
                    queue.commit(u64::from(self.cycle))?;
                    self.lens[q as usize] = queue.len();
                }
                if self.next >= end.min(self.lens.len() as u32) {
                    return Ok(());
                }
                let q = self.next;
                self.open = Some((q, open_frontier(self.out, self.cfg, q)?));
                self.next = q + 1;
            }
        }
    }
    impl RecordSink for Sink<'_> {
        fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
            let (q, _) = routed(key);
            if self.open.as_ref().map(|o| o.0) != Some(q) {
                self.close_through(q)?;
                self.open = Some((q, open_frontier(self.out, self.cfg, q)?));
                self.next = q + 1;
            }
            self.batch.push(Entry::read_from(payload));
            if self.batch.len() == BATCH {
                self.flush()?;
            }
            Ok(())
        }
    }
    let mut sink = Sink {
        out,
        cfg: new_cfg,
        cycle,
        open: None,
        next: 0,
        batch: Vec::with_capacity(BATCH),
        lens: vec![0; m2 as usize],
    };
    router.finish(&mut run::KeepAll, &mut sink)?;
    sink.close_through(m2)?;
    let total: u64 = sink.lens.iter().sum();
    if total != moved {
        return Err(Error::Internal(format!(
            "repartition: {moved} frontier entries read, {total} written"
        )));
    }
    Ok(sink.lens)
}

/// Hard-links (or copies) the archive of every cycle before `cycle`: WARC and WET files, CDXJ
/// indexes, the crawl's index, and makes `archive -> cycles`. Returns (linked, copied).
fn history(crawl: &CrawlDir, out: &CrawlDir, m: u32, cycle: u32) -> Result<(u64, u64)> {
    let (mut linked, mut copied) = (0u64, 0u64);
    let mut carry = |from: &Path, to: &Path| -> Result<()> {
        storage::create_dir_all(parent_of(to))?;
        match std::fs::hard_link(from, to) {
            Ok(()) => linked += 1,
            Err(_) => {
                std::fs::copy(from, to).ctx("copy", from)?;
                std::fs::File::open(to)
                    .and_then(|f| f.sync_all())
                    .ctx("sync", to)?;
                copied += 1;
            }
        }
        Ok(())
    };
    for c in crawl.cycles().into_iter().filter(|&c| c < cycle) {
        for sub in ["warc", "cdxj"] {
            let dir = crawl.cycle_dir(c).join(sub);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<_> = entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name())
                .filter(|n| !storage::is_temp_name(&n.to_string_lossy()))
                .collect();
            names.sort();
            for n in names {
                carry(&dir.join(&n), &out.cycle_dir(c).join(sub).join(&n))?;
            }
            storage::sync_dir(&out.cycle_dir(c).join(sub))?;
        }
        let index = crawl.cycle_cdxj(c);
        if index.exists() {
            carry(&index, &out.cycle_cdxj(c))?;
        } else if (0..m).all(|p| crawl.done_path(c, Stage::Fetch, p).exists()) {
            // A cycle whose end was not indexed: its index from the old partitions' (linked
            // above), as the executor would have made it.
            super::index::index_cycle(out, m, c)?;
        }
    }
    let indexes = crawl.indexes_dir();
    if let Ok(entries) = std::fs::read_dir(&indexes) {
        for e in entries.flatten() {
            let n = e.file_name();
            if e.file_type().is_ok_and(|t| t.is_file())
                && !storage::is_temp_name(&n.to_string_lossy())
            {
                carry(&e.path(), &out.indexes_dir().join(&n))?;
            }
        }
    }
    if crawl.archive_link().symlink_metadata().is_ok() {
        std::os::unix::fs::symlink("cycles", out.archive_link())
            .ctx("link", &out.archive_link())?;
    }
    Ok((linked, copied))
}

/// Adds `from`'s counts into `into` (cache hit rates recomputed, flags kept as flags).
fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, &v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        if k == "inline" || k == "resumed" {
            *e = (*e).max(v);
        } else {
            *e = e.saturating_add(v);
        }
    }
    let (hits, misses) = (
        into.get(super::report::counter::CACHE_HITS).copied(),
        into.get(super::report::counter::CACHE_MISSES).copied(),
    );
    if let (Some(h), Some(mi)) = (hits, misses) {
        if into.contains_key(super::report::counter::CACHE_HIT_PERMILLE) {
            let n = h + mi;
            into.insert(
                super::report::counter::CACHE_HIT_PERMILLE.into(),
                (h * 1000).checked_div(n).unwrap_or(0),
            );
        }
    }
}

/// Writes every stage's marker of every cycle before `cycle` for the new partitions (see the
/// module docs). Returns how many.
fn markers(
    crawl: &CrawlDir,
    out: &CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
    frontier: Option<&[u64]>,
) -> Result<u64> {
    let mut written = 0u64;
    let last = cycle.checked_sub(1);
    let cycles: Vec<u32> = (0..=cycle).filter(|&c| c < cycle || c == 0).collect();
    for c in cycles {
        for stage in std::iter::once(Stage::Init).chain(Stage::CYCLE) {
            if stage == Stage::Init && c != 0 {
                continue;
            }
            if stage != Stage::Init && c >= cycle {
                continue;
            }
            let dir = crawl.stage_dir(c, stage);
            if !dir.is_dir() {
                continue;
            }
            storage::create_dir_all(&out.stage_dir(c, stage))?;
            // Old partitions in order; each goes to new partition p * m2 / m.
            let home = |p: u32| (u64::from(p) * u64::from(m2) / u64::from(m)) as u32;
            let mut p = 0u32;
            for q in 0..m2 {
                let mut group: Vec<DoneMarker> = Vec::new();
                while p < m && home(p) == q {
                    if let Some(mk) = DoneMarker::read(&crawl.done_path(c, stage, p))? {
                        group.push(mk);
                    }
                    p += 1;
                }
                // Times from the old partition holding the new one's first hosts if none is its.
                let rep = match group.first() {
                    Some(mk) => mk.clone(),
                    None => {
                        let at = partition_of(first_key(q, m2) as u64, m);
                        match DoneMarker::read(&crawl.done_path(c, stage, at))? {
                            Some(mk) => mk,
                            None => continue,
                        }
                    }
                };
                let mut mk = DoneMarker {
                    partition: q,
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                    counts: BTreeMap::new(),
                    checksum: String::new(),
                    ..rep
                };
                for g in &group {
                    add_counts(&mut mk.counts, &g.counts);
                    mk.started = mk.started.clone().min(g.started.clone());
                    mk.finished = mk.finished.clone().max(g.finished.clone());
                    mk.seconds = mk.seconds.max(g.seconds);
                    for o in &g.outputs {
                        let path = out.root().join(&o.path);
                        if path.is_file() && o.records.is_none() {
                            mk.outputs.push(o.clone());
                        }
                    }
                }
                mk.counts.insert("repartitioned_from".into(), u64::from(m));
                // The files written here that this stage of this cycle made.
                let produced: Vec<PathBuf> = match stage {
                    Stage::Init if cycle == 0 => vec![
                        out.state_file(q, "seen", 0),
                        out.state_file(q, "urldb", 0),
                        out.fetchlist(0, q),
                    ],
                    Stage::Merge if Some(c) == last => vec![
                        out.state_file(q, "seen", cycle),
                        out.state_file(q, "urldb", cycle),
                    ],
                    Stage::Prioritize if Some(c) == last => vec![out.fetchlist(cycle, q)],
                    _ => Vec::new(),
                };
                for path in &produced {
                    mk.outputs.push(FileDigest::of_run(out, path)?);
                }
                if Stage::Prioritize == stage && Some(c) == last {
                    let listed = RunReader::open(&out.fetchlist(cycle, q))?.len();
                    mk.counts
                        .insert(super::report::counter::SELECTED.into(), listed);
                    if let Some(f) = frontier {
                        mk.counts
                            .insert(super::report::counter::FRONTIER.into(), f[q as usize]);
                    }
                }
                if stage == Stage::Init && cycle == 0 {
                    let n = RunReader::open(&out.fetchlist(0, q))?.len();
                    mk.counts.insert("seeds".into(), n);
                }
                mk.publish(&out.done_path(c, stage, q))?;
                written += 1;
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_router_stays_within_its_budget_and_sorts_by_new_partition() {
        let t = tempfile::tempdir().unwrap();
        let budget = 4096;
        let m2 = 7;
        let mut router = Router::new(m2, budget, t.path()).unwrap();
        let mut want = Vec::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let host = xxhash_rust::xxh3::xxh3_64(&(x % 300).to_le_bytes());
            let fp = x ^ (i << 1);
            let payload = vec![(i % 251) as u8; 40];
            router.push(host, fp, &payload).unwrap();
            assert!(
                router.max_buffered <= budget,
                "{} bytes buffered, budget {budget}",
                router.max_buffered
            );
            want.push((partition_of(host, m2), fp, payload));
        }
        let mut got: Vec<run::OwnedRecord> = Vec::new();
        let spills = router.finish(&mut run::KeepAll, &mut got).unwrap();
        // 5,000 records of ~60 bytes through a 4 KiB buffer: spilled many times.
        assert!(spills > 50, "{spills} spills");
        want.sort();
        let got: Vec<(u32, u64, Vec<u8>)> = got
            .into_iter()
            .map(|(k, v)| {
                let (q, fp) = routed(&k);
                (q, fp, v)
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn new_partitions_overlap_the_old_ones_that_share_their_keys() {
        for (m, m2) in [(3u32, 5u32), (5, 3), (3, 1), (1, 4), (256, 4096), (7, 7)] {
            for q in 0..m2 {
                let r = overlapping(q, m2, m);
                let lo = first_key(q, m2) as u64;
                let hi = (first_key(q + 1, m2) - 1) as u64;
                assert_eq!(partition_of(lo, m2), q);
                assert_eq!(partition_of(hi, m2), q);
                assert_eq!(*r.start(), partition_of(lo, m));
                assert_eq!(*r.end(), partition_of(hi, m));
            }
            assert_eq!(first_key(m2, m2), 1u128 << 64);
        }
    }

    #[test]
    fn only_the_partitions_line_changes() {
        let text =
            "# head\n[crawl]\nname = \"x\"\npartitions = 3   # fixed\n\n[fetch]\nthreads = 4\n";
        assert_eq!(
            with_partitions(text, 5),
            "# head\n[crawl]\nname = \"x\"\npartitions = 5 # fixed\n\n[fetch]\nthreads = 4\n"
        );
        assert_eq!(
            with_partitions("[crawl]\nname = \"x\"\n[fetch]\n", 2),
            "[crawl]\nname = \"x\"\npartitions = 2\n[fetch]\n"
        );
        assert_eq!(
            with_partitions("[fetch]\nthreads = 1\n", 2),
            "[fetch]\nthreads = 1\n\n[crawl]\npartitions = 2\n"
        );
    }
}
