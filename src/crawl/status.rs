//! `dragnet status`: what a crawl directory holds.
//!
//! Everything here is read from the directory (markers, run-file trailers, the lock), never from a
//! running process, so status works the same from cron, from another node of the cluster, or after
//! a crash. Sizes come from run-file trailers (one read each) and counts from the `.done` markers,
//! so status stays fast at any crawl size. The one exception is the top-hosts table, which streams
//! the newest cycle's fetch results (one record per fetched URL, bounded memory: a Misra–Gries
//! summary of at most [`MAX_TRACKED_HOSTS`] hosts); [`StatusOptions::top_hosts`] turns it off.
//!
//! Each partition of each stage is in one [`PartitionState`]: `done` (a valid `.done` marker),
//! `failed` (a `.failed` marker and no `.done`; see [`super::failed`]), `running` (the lock's
//! holder runs on this host and this is the first unfinished stage of the current cycle), or
//! `pending`.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::config::Config;
use super::done::DoneMarker;
use super::failed::{read_failed, FailedMarker};
use super::layout::{CrawlDir, Stage};
use super::lock::{read_lock, Holder, LockInfo};
use super::records::FetchResult;
use crate::error::{Error, Result};
use crate::run::{RunReader, Schema};

/// Hosts the top-hosts count keeps at most; past that the counts are approximate.
pub const MAX_TRACKED_HOSTS: usize = 100_000;
/// Hosts listed in [`TopHosts`].
pub const TOP_HOSTS: usize = 10;

/// What one partition of one stage is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionState {
    /// A valid `.done` marker: committed.
    Done,
    /// No marker yet, and the live lock holder is working on this stage.
    Running,
    /// The last attempt failed (a `.failed` marker, no `.done`).
    Failed,
    /// Not started (or its marker is damaged and it must be re-run).
    Pending,
}

/// The state of one stage of one cycle over all partitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageStatus {
    /// The stage.
    pub stage: Stage,
    /// Partitions with a valid `.done` marker.
    pub done: u32,
    /// Partitions being worked on now (see [`PartitionState::Running`]).
    pub running: u32,
    /// Partitions whose last attempt failed.
    pub failed: u32,
    /// Partitions neither done, running nor failed.
    pub pending: u32,
    /// Why each failed partition failed (its `.failed` marker), by partition.
    pub failures: Vec<FailedMarker>,
    /// Partitions whose marker is damaged (the stage must be re-run for them).
    pub damaged: Vec<String>,
    /// Sum of the stage's wall-clock seconds over its done partitions.
    pub seconds: f64,
    /// The slowest done partition's wall-clock seconds.
    pub max_seconds: f64,
    /// When the last done partition finished, Unix seconds.
    pub finished_at: Option<u64>,
    /// Sum of each counter over the done partitions.
    pub counts: BTreeMap<String, u64>,
    /// Each partition's state, by partition number; empty when every partition is done.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionState>,
}

impl StageStatus {
    /// The state of partition `p`.
    pub fn state(&self, p: u32) -> PartitionState {
        match self.partitions.get(p as usize) {
            Some(&st) => st,
            None => PartitionState::Done, // the list is empty when every partition is done
        }
    }
}

/// Where a cycle stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleState {
    /// Every stage is done for every partition.
    Complete,
    /// Some stage has a marker (done or failed) or is running; not all are done.
    InProgress,
    /// Only its fetch lists exist so far.
    NotStarted,
}

/// One cycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleStatus {
    /// Cycle number.
    pub cycle: u32,
    /// Where it stands.
    pub state: CycleState,
    /// When it completed (its last stage's last partition), Unix seconds.
    pub completed_at: Option<u64>,
    /// URLs in this cycle's fetch lists (0 if none yet).
    pub fetchlist_urls: u64,
    /// `init` if it ran in this cycle, then every stage of the cycle once it has begun.
    pub stages: Vec<StageStatus>,
}

/// What fetches did, from the fetch `.done` counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FetchSummary {
    /// Fetch markers summed.
    pub partitions: u32,
    /// URLs in the fetch lists.
    pub urls: u64,
    /// HTTP requests made (robots.txt included).
    pub requests: u64,
    /// Response bytes received.
    pub bytes: u64,
    /// Fetch results by HTTP status class (`2xx` .. `5xx`) and `no_answer`.
    pub by_status: BTreeMap<String, u64>,
    /// Results with an error, by kind (`robots`, `deferred`, `timeout`, ...).
    pub errors: BTreeMap<String, u64>,
}

impl FetchSummary {
    /// Adds the counts of `partitions` fetch markers (summed).
    fn add(&mut self, counts: &BTreeMap<String, u64>, partitions: u32) {
        self.partitions += partitions;
        for (k, &v) in counts {
            match k.as_str() {
                "urls" => self.urls += v,
                "requests" => self.requests += v,
                "bytes" => self.bytes += v,
                "no_answer" => *self.by_status.entry(k.clone()).or_default() += v,
                _ => {
                    if let Some(class) = k.strip_prefix("status_") {
                        *self.by_status.entry(class.to_owned()).or_default() += v;
                    } else if let Some(kind) = k.strip_prefix("error_") {
                        *self.errors.entry(kind.to_owned()).or_default() += v;
                    }
                }
            }
        }
    }
}

/// The split stage's CLOCK cache, from the split `.done` counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CacheSummary {
    /// Lookups that hit.
    pub hits: u64,
    /// All lookups (hits + misses).
    pub lookups: u64,
}

impl CacheSummary {
    fn add(&mut self, counts: &BTreeMap<String, u64>) {
        let get = |k: &str| counts.get(k).copied().unwrap_or(0);
        self.hits += get("cache_hits");
        self.lookups += get("cache_hits") + get("cache_misses");
    }

    /// Hits / lookups, if there were any lookups.
    pub fn hit_rate(&self) -> Option<f64> {
        (self.lookups > 0).then(|| self.hits as f64 / self.lookups as f64)
    }
}

/// One host of [`TopHosts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    /// The host.
    pub host: String,
    /// Fetched pages (results with an HTTP answer); a lower bound if the table is approximate.
    pub pages: u64,
}

/// The hosts with the most fetched pages in one cycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopHosts {
    /// The cycle counted (the newest with fetch results).
    pub cycle: u32,
    /// Fetch result files read (partitions whose fetch is done).
    pub partitions: u32,
    /// Fetched pages counted.
    pub pages: u64,
    /// Distinct hosts, if exact.
    pub distinct_hosts: Option<u64>,
    /// More than [`MAX_TRACKED_HOSTS`] hosts: the counts are lower bounds, each at most
    /// `error_bound` below the truth, and a host with more than `error_bound` pages is listed.
    pub approximate: bool,
    /// See `approximate`; 0 when exact.
    pub error_bound: u64,
    /// Up to [`TOP_HOSTS`] hosts, most pages first.
    pub hosts: Vec<HostCount>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// Crawl directory.
    pub dir: PathBuf,
    /// `crawl.name`.
    pub name: String,
    /// Partitions M.
    pub partitions: u32,
    /// The lock, if held, and whether its holder runs.
    pub lock: Option<(LockInfo, Holder)>,
    /// URLs ever discovered (sum of the newest seen sets).
    pub seen: u64,
    /// Records in the newest URL dbs.
    pub urldb: u64,
    /// URLs in the frontiers: the sum over partitions of their newest prioritize marker's
    /// `frontier` count; `None` before any prioritize.
    pub frontier: Option<u64>,
    /// Partitions that contributed to `frontier`.
    pub frontier_partitions: u32,
    /// Cycles complete.
    pub cycles_complete: u32,
    /// The newest complete cycle.
    pub last_complete: Option<u32>,
    /// The oldest cycle that is not complete (the one a `dragnet cycle` works on).
    pub current: Option<u32>,
    /// Partitions (of any stage and cycle) whose last attempt failed.
    pub failed: u32,
    /// The newest cycle with fetch results.
    pub fetch_cycle: Option<u32>,
    /// What the fetches of `fetch_cycle` did.
    pub fetch: FetchSummary,
    /// What every fetch in the directory did.
    pub fetch_total: FetchSummary,
    /// The newest cycle with split results.
    pub cache_cycle: Option<u32>,
    /// The CLOCK cache in the splits of `cache_cycle`.
    pub cache: CacheSummary,
    /// The CLOCK cache over every split in the directory.
    pub cache_total: CacheSummary,
    /// Hosts with the most fetched pages in `fetch_cycle` (if asked for and there are results).
    pub top_hosts: Option<TopHosts>,
    /// Cycles with a directory.
    pub cycles: Vec<CycleStatus>,
}

impl Status {
    /// The newest complete cycle's status.
    pub fn last_complete_cycle(&self) -> Option<&CycleStatus> {
        let c = self.last_complete?;
        self.cycles.iter().find(|s| s.cycle == c)
    }
}

/// What [`status_with`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusOptions {
    /// Stream the newest cycle's fetch results to count pages per host (the one part of status
    /// whose cost grows with the crawl: one pass over one cycle's fetch results).
    pub top_hosts: bool,
}

impl Default for StatusOptions {
    fn default() -> StatusOptions {
        StatusOptions { top_hosts: true }
    }
}

/// Reads the status of the crawl at `dir`, everything included.
pub fn status(dir: &Path) -> Result<Status> {
    status_with(dir, &StatusOptions::default())
}

/// Reads the status of the crawl at `dir`.
pub fn status_with(dir: &Path, opts: &StatusOptions) -> Result<Status> {
    let crawl = CrawlDir::new(dir);
    let config_path = crawl.config_path();
    if !config_path.exists() {
        return Err(Error::Usage(format!(
            "{} is not a crawl directory (no crawl.toml); create one with `dragnet init --seeds FILE {}`",
            dir.display(),
            dir.display()
        )));
    }
    let config = Config::load(&config_path)?;
    status_of(&crawl, &config, opts)
}

/// [`status_with`] for a crawl whose configuration is loaded.
pub(crate) fn status_of(crawl: &CrawlDir, config: &Config, opts: &StatusOptions) -> Result<Status> {
    let dir = crawl.root();
    let m = config.crawl.partitions;
    let lock = read_lock(dir)?.map(|l| {
        let h = l.holder();
        (l, h)
    });
    let live = matches!(lock, Some((_, Holder::Alive)));
    let mut seen = 0;
    let mut urldb = 0;
    for p in 0..m {
        for (kind, total) in [("seen", &mut seen), ("urldb", &mut urldb)] {
            if let Some((_, path)) = crawl.latest_state(p, kind, u32::MAX) {
                *total += RunReader::open(&path)?.len();
            }
        }
    }
    let mut s = Status {
        dir: dir.to_path_buf(),
        name: config.crawl.name.clone(),
        partitions: m,
        lock,
        seen,
        urldb,
        frontier: None,
        frontier_partitions: 0,
        cycles_complete: 0,
        last_complete: None,
        current: None,
        failed: 0,
        fetch_cycle: None,
        fetch: FetchSummary::default(),
        fetch_total: FetchSummary::default(),
        cache_cycle: None,
        cache: CacheSummary::default(),
        cache_total: CacheSummary::default(),
        top_hosts: None,
        cycles: Vec::new(),
    };
    let mut frontier: Vec<Option<u64>> = vec![None; m as usize];
    let mut fetched_parts: Vec<u32> = Vec::new();
    for c in crawl.cycles() {
        let mut fetchlist_urls = 0;
        for p in 0..m {
            let path = crawl.fetchlist(c, p);
            if path.exists() {
                fetchlist_urls += RunReader::open(&path)?.len();
            }
        }
        let is_current = s.current.is_none();
        let begun = Stage::CYCLE
            .iter()
            .any(|&st| crawl.stage_dir(c, st).is_dir());
        let mut stages = Vec::new();
        let mut running_stage = None;
        for stage in std::iter::once(Stage::Init).chain(Stage::CYCLE) {
            let exists = crawl.stage_dir(c, stage).is_dir();
            if !exists && (stage == Stage::Init || !(begun || is_current)) {
                continue;
            }
            // Only the first unfinished stage of the current cycle can be running.
            let may_run = live && is_current && stage != Stage::Init && running_stage.is_none();
            let st = stage_status(crawl, c, stage, m, exists, may_run, &mut |p, mk| {
                if let (Stage::Prioritize, Some(&n)) = (stage, mk.counts.get("frontier")) {
                    frontier[p as usize] = Some(n);
                }
            })?;
            if stage != Stage::Init && st.done < m && running_stage.is_none() {
                running_stage = Some(stage);
            }
            stages.push(st);
        }
        let cycle_stages = || stages.iter().filter(|st| st.stage != Stage::Init);
        let complete =
            cycle_stages().count() == Stage::CYCLE.len() && cycle_stages().all(|st| st.done == m);
        let state = if complete {
            CycleState::Complete
        } else if cycle_stages()
            .any(|st| st.done + st.failed + st.running > 0 || !st.damaged.is_empty())
        {
            CycleState::InProgress
        } else {
            CycleState::NotStarted
        };
        let completed_at = complete
            .then(|| cycle_stages().filter_map(|st| st.finished_at).max())
            .flatten();
        if complete {
            s.cycles_complete += 1;
            s.last_complete = Some(c);
        } else if is_current {
            s.current = Some(c);
        }
        for st in &stages {
            s.failed += st.failed;
            if st.done == 0 {
                continue;
            }
            match st.stage {
                Stage::Fetch => {
                    s.fetch_cycle = Some(c);
                    s.fetch = FetchSummary::default();
                    s.fetch.add(&st.counts, st.done);
                    s.fetch_total.add(&st.counts, st.done);
                    fetched_parts = (0..m)
                        .filter(|&p| st.state(p) == PartitionState::Done)
                        .collect();
                }
                Stage::Split => {
                    s.cache_cycle = Some(c);
                    s.cache = CacheSummary::default();
                    s.cache.add(&st.counts);
                    s.cache_total.add(&st.counts);
                }
                _ => {}
            }
        }
        s.cycles.push(CycleStatus {
            cycle: c,
            state,
            completed_at,
            fetchlist_urls,
            stages,
        });
    }
    s.frontier_partitions = frontier.iter().flatten().count() as u32;
    if s.frontier_partitions > 0 {
        s.frontier = Some(frontier.iter().flatten().sum());
    }
    if let (true, Some(c)) = (opts.top_hosts, s.fetch_cycle) {
        s.top_hosts = Some(top_hosts(crawl, c, &fetched_parts)?);
    }
    Ok(s)
}

/// Reads the markers of one stage of one cycle. `exists`: the stage's directory exists (if not,
/// no partition has a marker). `may_run`: partitions without a marker count as running.
fn stage_status(
    crawl: &CrawlDir,
    c: u32,
    stage: Stage,
    m: u32,
    exists: bool,
    may_run: bool,
    on_done: &mut dyn FnMut(u32, &DoneMarker),
) -> Result<StageStatus> {
    let mut s = StageStatus {
        stage,
        done: 0,
        running: 0,
        failed: 0,
        pending: 0,
        failures: Vec::new(),
        damaged: Vec::new(),
        seconds: 0.0,
        max_seconds: 0.0,
        finished_at: None,
        counts: BTreeMap::new(),
        partitions: Vec::with_capacity(m as usize),
    };
    for p in 0..m {
        let done = if exists {
            DoneMarker::read(&crawl.done_path(c, stage, p))
        } else {
            Ok(None)
        };
        let state = match done {
            Ok(Some(mk)) => {
                on_done(p, &mk);
                s.seconds += mk.seconds;
                s.max_seconds = s.max_seconds.max(mk.seconds);
                s.finished_at = s.finished_at.max(parse_rfc3339(&mk.finished));
                for (k, v) in mk.counts {
                    *s.counts.entry(k).or_default() += v;
                }
                PartitionState::Done
            }
            other => {
                if let Err(e) = other {
                    s.damaged.push(e.to_string());
                }
                let failed = if exists {
                    read_failed(crawl, stage, c, p)
                        .unwrap_or_else(|e| Some(damaged_failed(stage, c, p, &e)))
                } else {
                    None
                };
                match failed {
                    Some(f) => {
                        s.failures.push(f);
                        PartitionState::Failed
                    }
                    None if may_run => PartitionState::Running,
                    None => PartitionState::Pending,
                }
            }
        };
        match state {
            PartitionState::Done => s.done += 1,
            PartitionState::Running => s.running += 1,
            PartitionState::Failed => s.failed += 1,
            PartitionState::Pending => s.pending += 1,
        }
        s.partitions.push(state);
    }
    if s.done == m {
        s.partitions = Vec::new();
    }
    Ok(s)
}

/// A `.failed` marker that cannot be read still says the partition failed.
fn damaged_failed(stage: Stage, cycle: u32, partition: u32, e: &Error) -> FailedMarker {
    FailedMarker {
        magic: String::new(),
        version: 0,
        stage,
        cycle,
        partition,
        error: format!("(unreadable .failed marker: {e})"),
        exit_code: e.exit_code(),
        at: 0,
        host: String::new(),
        pid: 0,
        checksum: String::new(),
    }
}

/// Counts fetched pages (results with an HTTP answer) per host in the fetch results of `parts`
/// of cycle `c`, keeping at most [`MAX_TRACKED_HOSTS`] hosts.
fn top_hosts(crawl: &CrawlDir, c: u32, parts: &[u32]) -> Result<TopHosts> {
    let mut counter = HostCounter::new(MAX_TRACKED_HOSTS);
    for &p in parts {
        let path = crawl.fetched(c, p);
        if !path.exists() {
            continue;
        }
        let mut r = RunReader::open_expect(&path, Schema::FETCHED)?;
        while let Some((_, payload)) = r.next_record()? {
            let fr = FetchResult::decode(payload)
                .map_err(|e| Error::corrupt(&path, 0, format!("fetch result: {e}")))?;
            if fr.status > 0 {
                counter.add(crate::keys::host_of(&fr.url));
            }
        }
    }
    Ok(counter.finish(c, parts.len() as u32, TOP_HOSTS))
}

/// Pages per host with bounded memory: exact up to `cap` hosts, then the Misra–Gries summary
/// (each new host past the cap takes one page off every tracked host, and hosts at 0 leave), so
/// a host's count is at most `rounds` below its truth and any host with more pages stays.
struct HostCounter {
    counts: HashMap<String, u64>,
    cap: usize,
    rounds: u64,
    pages: u64,
}

impl HostCounter {
    fn new(cap: usize) -> HostCounter {
        HostCounter {
            counts: HashMap::new(),
            cap,
            rounds: 0,
            pages: 0,
        }
    }

    fn add(&mut self, host: &str) {
        self.pages += 1;
        if let Some(n) = self.counts.get_mut(host) {
            *n += 1;
        } else if self.counts.len() < self.cap {
            self.counts.insert(host.to_owned(), 1);
        } else {
            self.rounds += 1;
            self.counts.retain(|_, n| {
                *n -= 1;
                *n > 0
            });
        }
    }

    fn finish(self, cycle: u32, partitions: u32, k: usize) -> TopHosts {
        let approximate = self.rounds > 0;
        let distinct_hosts = (!approximate).then_some(self.counts.len() as u64);
        let mut hosts: Vec<HostCount> = self
            .counts
            .into_iter()
            .map(|(host, pages)| HostCount { host, pages })
            .collect();
        hosts.sort_unstable_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.host.cmp(&b.host)));
        hosts.truncate(k);
        TopHosts {
            cycle,
            partitions,
            pages: self.pages,
            distinct_hosts,
            approximate,
            error_bound: self.rounds,
            hosts,
        }
    }
}

/// Parses the markers' `YYYY-MM-DDTHH:MM:SSZ` into Unix seconds.
pub(crate) fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, se) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from civil (H. Hinnant's algorithm), the inverse of `util::rfc3339`.
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if mo > 2 { mo - 3 } else { mo + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + mi * 60 + se).ok()
}

/// Partition numbers as ranges: `p0000-p0003, p0007`, at most `max` ranges.
fn ranges(parts: impl Iterator<Item = u32>, max: usize) -> String {
    let mut rs: Vec<(u32, u32)> = Vec::new();
    for p in parts {
        match rs.last_mut() {
            Some((_, hi)) if *hi + 1 == p => *hi = p,
            _ => rs.push((p, p)),
        }
    }
    let mut out: Vec<String> = rs
        .iter()
        .take(max)
        .map(|&(lo, hi)| match lo == hi {
            true => CrawlDir::partition_name(lo),
            false => format!(
                "{}-{}",
                CrawlDir::partition_name(lo),
                CrawlDir::partition_name(hi)
            ),
        })
        .collect();
    if rs.len() > max {
        out.push(format!("... ({} more ranges)", rs.len() - max));
    }
    out.join(", ")
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn fetch_line(f: &FetchSummary) -> String {
    let mut line = format!(
        "{} URLs, {} requests, {:.1} MiB;",
        f.urls,
        f.requests,
        mib(f.bytes)
    );
    for (k, v) in &f.by_status {
        let _ = write!(line, " {k} {v}");
    }
    if !f.errors.is_empty() {
        let errs: Vec<String> = f.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(line, "; errors: {}", errs.join(", "));
    }
    line
}

fn rate(c: &CacheSummary) -> String {
    match c.hit_rate() {
        Some(r) => format!(
            "{:.1}% hits ({} of {} lookups)",
            r * 100.0,
            c.hits,
            c.lookups
        ),
        None => "no lookups".into(),
    }
}

/// Failed partitions listed per stage in the text report (JSON lists all).
const SHOW_FAILED: usize = 10;

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "crawl      {} ({})", self.name, self.dir.display())?;
        writeln!(f, "partitions {}", self.partitions)?;
        match &self.lock {
            None => writeln!(f, "lock       free")?,
            Some((l, h)) => {
                let state = match h {
                    Holder::Alive => "running".to_owned(),
                    Holder::Gone => format!(
                        "STALE: holder is gone, clear with `dragnet unlock {}`",
                        self.dir.display()
                    ),
                    Holder::Unknown => "held from another host".to_owned(),
                };
                writeln!(
                    f,
                    "lock       pid {} on {} since {} ({}): {state}",
                    l.pid, l.host, l.started, l.command
                )?
            }
        }
        writeln!(f, "seen       {} URLs", self.seen)?;
        writeln!(f, "urldb      {} records", self.urldb)?;
        match self.frontier {
            Some(n) => writeln!(
                f,
                "frontier   {n} URLs ({} of {} partitions prioritized)",
                self.frontier_partitions, self.partitions
            )?,
            None => writeln!(f, "frontier   unknown (no prioritize yet)")?,
        }
        let mut cycles = format!("cycles     {} complete", self.cycles_complete);
        if let Some(c) = self.last_complete_cycle() {
            let _ = write!(cycles, " (last {:06}", c.cycle);
            if let Some(t) = c.completed_at {
                let _ = write!(cycles, ", finished {}", crate::util::rfc3339(t));
            }
            cycles.push(')');
        }
        if let Some(c) = self.cycles.iter().find(|c| Some(c.cycle) == self.current) {
            let stage = c
                .stages
                .iter()
                .find(|st| st.stage != Stage::Init && st.done < self.partitions);
            let _ = write!(
                cycles,
                "; current {:06}: {}",
                c.cycle,
                match (c.state, stage) {
                    (CycleState::NotStarted, _) => "not started".to_owned(),
                    (_, Some(st)) => format!("in progress at {}", st.stage),
                    _ => "in progress".to_owned(),
                }
            );
        }
        writeln!(f, "{cycles}")?;
        if self.failed > 0 {
            writeln!(
                f,
                "failed     {} partition-stage(s) failed; see their cycles below",
                self.failed
            )?;
        }
        if let Some(c) = self.fetch_cycle {
            writeln!(
                f,
                "fetched    cycle {c:06} ({} of {} partitions): {}",
                self.fetch.partitions,
                self.partitions,
                fetch_line(&self.fetch)
            )?;
            writeln!(
                f,
                "           all cycles: {}",
                fetch_line(&self.fetch_total)
            )?;
        }
        if let Some(c) = self.cache_cycle {
            writeln!(
                f,
                "cache      cycle {c:06}: {}; all cycles: {}",
                rate(&self.cache),
                rate(&self.cache_total)
            )?;
        }
        if let Some(t) = self.top_hosts.as_ref().filter(|t| t.pages == 0) {
            writeln!(f, "top hosts  cycle {:06}: no page fetched", t.cycle)?;
        } else if let Some(t) = &self.top_hosts {
            let how = if t.approximate {
                format!(
                    "approximate: over {MAX_TRACKED_HOSTS} hosts, counts may be up to {} low",
                    t.error_bound
                )
            } else {
                format!("{} hosts", t.distinct_hosts.unwrap_or(0))
            };
            writeln!(
                f,
                "top hosts  cycle {:06}, {} pages ({how}):",
                t.cycle, t.pages
            )?;
            for h in &t.hosts {
                writeln!(f, "  {:>10}  {}", h.pages, h.host)?;
            }
        }
        if let Some(c) = self.last_complete_cycle() {
            writeln!(
                f,
                "last cycle {:06} stage times (slowest partition / sum over partitions):",
                c.cycle
            )?;
            for st in c.stages.iter().filter(|st| st.stage != Stage::Init) {
                writeln!(
                    f,
                    "  {:<10} {:>9.1}s {:>10.1}s",
                    st.stage.name(),
                    st.max_seconds,
                    st.seconds
                )?;
            }
        }
        for c in &self.cycles {
            let state = match c.state {
                CycleState::Complete => "complete",
                CycleState::InProgress => "in progress",
                CycleState::NotStarted => "not started",
            };
            writeln!(
                f,
                "cycle {:06}: {state}, fetch list {} URLs",
                c.cycle, c.fetchlist_urls
            )?;
            for s in &c.stages {
                let counts: Vec<String> =
                    s.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let mut states = format!("{:>5} done", s.done);
                for (n, what) in [(s.running, "running"), (s.failed, "failed")] {
                    if n > 0 {
                        let _ = write!(states, " {n:>5} {what}");
                    }
                }
                let line = format!(
                    "  {:<10} {states} {:>5} pending  {:>8.2}s (max {:.2}s)  {}",
                    s.stage.name(),
                    s.pending,
                    s.seconds,
                    s.max_seconds,
                    counts.join(" ")
                );
                writeln!(f, "{}", line.trim_end())?;
                if s.running > 0 {
                    let running = s
                        .partitions
                        .iter()
                        .enumerate()
                        .filter(|(_, st)| **st == PartitionState::Running)
                        .map(|(p, _)| p as u32);
                    writeln!(f, "    running: {}", ranges(running, 8))?;
                }
                for fm in s.failures.iter().take(SHOW_FAILED) {
                    writeln!(
                        f,
                        "    {} FAILED at {} (exit {}): {}",
                        CrawlDir::partition_name(fm.partition),
                        crate::util::rfc3339(fm.at),
                        fm.exit_code,
                        fm.error
                    )?;
                }
                if s.failures.len() > SHOW_FAILED {
                    writeln!(
                        f,
                        "    ... and {} more failed partitions (`dragnet status --json` lists all)",
                        s.failures.len() - SHOW_FAILED
                    )?;
                }
                for d in &s.damaged {
                    writeln!(f, "    damaged marker: {d}")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::crawl::failed::{clear_failed, write_failed};
    use crate::run::{fp_key, RunWriter};
    use std::time::{Duration, SystemTime};

    fn marker(crawl: &CrawlDir, stage: Stage, c: u32, p: u32, secs: u64, counts: &[(&str, u64)]) {
        let started = SystemTime::now() - Duration::from_secs(secs);
        let mut m = DoneMarker::new(stage, c, p, started);
        for (k, v) in counts {
            m.counts.insert((*k).into(), *v);
        }
        crate::storage::create_dir_all(&crawl.stage_dir(c, stage)).unwrap();
        m.commit(&crawl.done_path(c, stage, p), started).unwrap();
    }

    fn fetched(crawl: &CrawlDir, c: u32, p: u32, results: &[(&str, u16)]) {
        let mut rs: Vec<(u64, FetchResult)> = results
            .iter()
            .map(|&(url, status)| {
                let r = FetchResult {
                    url: url.into(),
                    status,
                    error: if status == 0 {
                        "robots".into()
                    } else {
                        String::new()
                    },
                    ..FetchResult::default()
                };
                (crate::keys::fingerprint(url), r)
            })
            .collect();
        rs.sort_by_key(|r| r.0);
        let path = crawl.fetched(c, p);
        crate::storage::create_dir_all(path.parent().unwrap()).unwrap();
        let mut w = RunWriter::create(&path, Schema::FETCHED).unwrap();
        for (fp, r) in rs {
            w.push(&fp_key(fp), &r.encode()).unwrap();
        }
        w.finish().unwrap();
    }

    /// A 2-partition crawl named `te"st\<newline>x`: cycle 0 complete (fetch partitions took ~2 s
    /// and ~4 s; frontiers of 10 and 20; cache 4 hits of 16), cycle 1 with partition 0 fetched
    /// (a.example 3 pages, b.example 1, one refused by robots.txt) and partition 1's fetch failed.
    pub(crate) fn fixture() -> (tempfile::TempDir, CrawlDir) {
        let t = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(t.path().join("crawl"));
        std::fs::create_dir_all(crawl.root()).unwrap();
        let mut cfg = Config::default();
        cfg.crawl.name = "te\"st\\\nx".into();
        cfg.crawl.partitions = 2;
        std::fs::write(crawl.config_path(), cfg.to_toml()).unwrap();
        for (p, n, v) in [(0u32, 3u64, 0u32), (1, 4, 1)] {
            std::fs::create_dir_all(crawl.state_dir(p)).unwrap();
            let mut w = RunWriter::create(&crawl.state_file(p, "seen", v), Schema::SEEN).unwrap();
            for fp in 0..n {
                w.push(&fp_key(fp), &[]).unwrap();
            }
            w.finish().unwrap();
        }
        for p in 0..2 {
            let secs = 2 + 2 * u64::from(p);
            marker(&crawl, Stage::Init, 0, p, 0, &[("seeds", 1)]);
            let fetch = [
                ("status_2xx", 3),
                ("status_4xx", 1),
                ("urls", 4),
                ("requests", 5),
                ("bytes", 1000),
            ];
            marker(&crawl, Stage::Fetch, 0, p, secs, &fetch);
            marker(&crawl, Stage::Parse, 0, p, 1, &[("pages", 4)]);
            let split = [
                ("cache_hits", 1 + 2 * u64::from(p)),
                ("cache_misses", 7 - 2 * u64::from(p)),
            ];
            marker(&crawl, Stage::Split, 0, p, 1, &split);
            marker(&crawl, Stage::Merge, 0, p, 1, &[("new", 3)]);
            marker(
                &crawl,
                Stage::Prioritize,
                0,
                p,
                1,
                &[("frontier", 10 + 10 * u64::from(p))],
            );
        }
        let fetch = [
            ("status_2xx", 4),
            ("no_answer", 1),
            ("error_robots", 1),
            ("urls", 5),
            ("requests", 6),
            ("bytes", 500),
        ];
        marker(&crawl, Stage::Fetch, 1, 0, 1, &fetch);
        fetched(
            &crawl,
            1,
            0,
            &[
                ("http://a.example/1", 200),
                ("http://a.example/2", 200),
                ("http://a.example:8080/3", 200),
                ("http://b.example/", 200),
                ("http://c.example/", 0),
            ],
        );
        // Partition 1's fetch results exist, but its fetch is not committed: not counted.
        fetched(&crawl, 1, 1, &[("http://z.example/", 200)]);
        let err = Error::corrupt(crawl.fetchlist(1, 1), 42, "bad block");
        write_failed(&crawl, Stage::Fetch, 1, 1, &err).unwrap();
        (t, crawl)
    }

    fn own_lock(crawl: &CrawlDir, pid: u32) {
        let info = LockInfo {
            pid,
            host: crate::util::hostname(),
            started: "2026-01-01T00:00:00Z".into(),
            command: "cycle".into(),
        };
        std::fs::write(crawl.lock_path(), serde_json::to_vec(&info).unwrap()).unwrap();
    }

    #[test]
    fn status_reports_states_sizes_pages_cache_and_hosts() {
        let (_t, crawl) = fixture();
        let s = status(crawl.root()).unwrap();
        assert_eq!((s.partitions, s.seen, s.frontier), (2, 7, Some(30)));
        assert_eq!(
            (s.cycles_complete, s.last_complete, s.current),
            (1, Some(0), Some(1))
        );
        assert_eq!(s.failed, 1);
        assert_eq!(s.cycles[0].state, CycleState::Complete);
        assert!(s.cycles[0].completed_at.is_some());
        let c1 = &s.cycles[1];
        assert_eq!(c1.state, CycleState::InProgress);
        let names: Vec<Stage> = c1.stages.iter().map(|st| st.stage).collect();
        assert_eq!(names, Stage::CYCLE);
        let fetch = &c1.stages[0];
        assert_eq!(
            (fetch.done, fetch.running, fetch.failed, fetch.pending),
            (1, 0, 1, 0)
        );
        assert_eq!(
            fetch.partitions,
            [PartitionState::Done, PartitionState::Failed]
        );
        assert_eq!(fetch.failures[0].partition, 1);
        assert!(
            fetch.failures[0].error.contains("bad block"),
            "{:?}",
            fetch.failures
        );
        assert_eq!(fetch.failures[0].exit_code, crate::error::EXIT_IO);
        assert_eq!(c1.stages[1].pending, 2);
        // Stage times of cycle 0: max over partitions and sum.
        let f0 = &s.cycles[0].stages[1];
        assert_eq!(f0.stage, Stage::Fetch);
        assert!(f0.partitions.is_empty());
        assert!((4.0..5.0).contains(&f0.max_seconds), "{}", f0.max_seconds);
        assert!((6.0..7.0).contains(&f0.seconds), "{}", f0.seconds);
        // Pages of the newest fetch, and of all.
        assert_eq!(s.fetch_cycle, Some(1));
        assert_eq!(s.fetch.by_status["2xx"], 4);
        assert_eq!(s.fetch.errors["robots"], 1);
        assert_eq!(s.fetch_total.by_status["2xx"], 10);
        assert_eq!((s.fetch_total.partitions, s.fetch_total.bytes), (3, 2500));
        assert_eq!(
            (s.cache_cycle, s.cache.hits, s.cache.lookups),
            (Some(0), 4, 16)
        );
        assert_eq!(s.cache.hit_rate(), Some(0.25));
        let top = s.top_hosts.as_ref().unwrap();
        assert_eq!((top.cycle, top.partitions, top.pages), (1, 1, 4));
        assert_eq!((top.approximate, top.distinct_hosts), (false, Some(2)));
        let hosts: Vec<(&str, u64)> = top
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.pages))
            .collect();
        assert_eq!(hosts, [("a.example", 3), ("b.example", 1)]);

        let text = s.to_string();
        for want in [
            "frontier   30 URLs (2 of 2 partitions prioritized)",
            "cycles     1 complete (last 000000, finished ",
            "current 000001: in progress at fetch",
            "p0001 FAILED at ",
            "(exit 3): corrupt file ",
            "cache      cycle 000000: 25.0% hits (4 of 16 lookups)",
            "top hosts  cycle 000001, 4 pages (2 hosts):",
            "           3  a.example",
            "last cycle 000000 stage times",
            "fetched    cycle 000001 (1 of 2 partitions): 5 URLs, 6 requests",
            "2xx 4 no_answer 1; errors: robots 1",
        ] {
            assert!(text.contains(want), "{want:?} missing from\n{text}");
        }
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["cycles"][1]["stages"][0]["partitions"],
            serde_json::json!(["done", "failed"])
        );
        assert_eq!(json["cycles"][1]["state"], "in_progress");

        // Without the top-hosts pass.
        let quick = status_with(crawl.root(), &StatusOptions { top_hosts: false }).unwrap();
        assert!(quick.top_hosts.is_none());
    }

    #[test]
    fn a_live_lock_makes_the_first_unfinished_stage_running() {
        let (_t, crawl) = fixture();
        own_lock(&crawl, std::process::id());
        let s = status(crawl.root()).unwrap();
        let c1 = &s.cycles[1];
        // Partition 1 failed: failed, not running.
        assert_eq!((c1.stages[0].running, c1.stages[0].failed), (0, 1));
        assert_eq!(c1.stages[1].partitions, [PartitionState::Pending; 2]);
        // Once the runner clears the failure to retry it, it is running; later stages wait.
        clear_failed(&crawl, Stage::Fetch, 1, 1).unwrap();
        let s = status(crawl.root()).unwrap();
        let c1 = &s.cycles[1];
        assert_eq!(
            c1.stages[0].partitions,
            [PartitionState::Done, PartitionState::Running]
        );
        assert_eq!(c1.stages[1].running, 0);
        assert_eq!(s.cycles[0].stages[1].running, 0);
        let text = s.to_string();
        assert!(text.contains("running: p0001"), "{text}");
        assert!(text.contains("): running"), "{text}");
    }

    #[test]
    fn a_stale_lock_names_the_unlock_command() {
        let (_t, crawl) = fixture();
        own_lock(&crawl, 4_194_304 + 7); // above any pid_max
        let s = status(crawl.root()).unwrap();
        assert_eq!(s.cycles[1].stages[0].running, 0);
        let text = s.to_string();
        let want = format!("dragnet unlock {}", crawl.root().display());
        assert!(text.contains("STALE") && text.contains(&want), "{text}");
    }

    #[test]
    fn a_fresh_crawl_shows_cycle_0_not_started() {
        let (_t, crawl) = fixture();
        std::fs::remove_dir_all(crawl.cycles_root()).unwrap();
        marker(&crawl, Stage::Init, 0, 0, 0, &[]);
        marker(&crawl, Stage::Init, 0, 1, 0, &[]);
        let s = status(crawl.root()).unwrap();
        assert_eq!(
            (s.current, s.last_complete, s.frontier),
            (Some(0), None, None)
        );
        assert_eq!(s.cycles[0].state, CycleState::NotStarted);
        assert_eq!(s.cycles[0].stages.len(), 6);
        assert_eq!(s.cycles[0].stages[1].pending, 2);
        assert!(s.top_hosts.is_none() && s.fetch_cycle.is_none());
        let text = s.to_string();
        assert!(text.contains("frontier   unknown"), "{text}");
        assert!(text.contains("current 000000: not started"), "{text}");
    }

    #[test]
    fn host_counter_is_exact_under_the_cap_and_keeps_heavy_hosts_past_it() {
        let mut c = HostCounter::new(4);
        for h in ["a", "b", "a", "c", "a"] {
            c.add(h);
        }
        let t = c.finish(0, 1, 2);
        assert_eq!(
            (t.approximate, t.distinct_hosts, t.pages),
            (false, Some(3), 5)
        );
        assert_eq!(
            t.hosts[0],
            HostCount {
                host: "a".into(),
                pages: 3
            }
        );
        assert_eq!(t.hosts[1].host, "b");

        // Past the cap: 2000 pages, "big.example" 666 of them, "mid.example" 334, and 1000
        // hosts of one page. Misra–Gries keeps every host with more than 2000 / (4 + 1) = 400
        // pages, and each count is at most error_bound below the truth.
        let mut c = HostCounter::new(4);
        for i in 0..1000u32 {
            c.add(if i % 3 == 0 {
                "mid.example"
            } else {
                "big.example"
            });
            c.add(&format!("h{i}.example"));
        }
        assert!(c.counts.len() <= 4);
        let t = c.finish(0, 1, 10);
        assert!(t.approximate && t.distinct_hosts.is_none());
        assert_eq!(t.pages, 2000);
        assert_eq!(t.hosts[0].host, "big.example");
        assert!(t.error_bound <= 400, "{}", t.error_bound);
        for h in &t.hosts {
            let truth = match h.host.as_str() {
                "big.example" => 666,
                "mid.example" => 334,
                _ => 1,
            };
            assert!(
                h.pages <= truth && h.pages + t.error_bound >= truth,
                "{h:?} {t:?}"
            );
        }
    }

    #[test]
    fn rfc3339_round_trips() {
        for secs in [0u64, 951_782_400, 1_700_000_000, 4_102_444_800 + 86_399] {
            assert_eq!(parse_rfc3339(&crate::util::rfc3339(secs)), Some(secs));
        }
        assert_eq!(parse_rfc3339(""), None);
        assert_eq!(parse_rfc3339("2026-01-01 00:00:00Z"), None);
    }

    #[test]
    fn partition_ranges() {
        assert_eq!(
            ranges([0, 1, 2, 5, 7, 8].into_iter(), 8),
            "p0000-p0002, p0005, p0007-p0008"
        );
        assert_eq!(
            ranges([0, 2, 4].into_iter(), 2),
            "p0000, p0002, ... (1 more ranges)"
        );
    }
}
