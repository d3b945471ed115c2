//! `dragnet status`: what a crawl directory holds.
//!
//! The text report leads with a summary of at most 25 lines of 100 columns
//! (`summary.rs`: progress, health, what to do next); [`Status::verbose`] adds every stage's
//! counters (`render.rs`); the JSON is the [`Status`] itself.
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::crawl::failed::FailedMarker;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, Stage};
use crate::crawl::{Holder, LockInfo};
use crate::error::Result;
use crate::run::RunReader;

use hosts::top_hosts;
use partitions::stage_status;

mod hosts;
mod partitions;
mod render;
mod summary;
#[cfg(test)]
pub(crate) mod tests;

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
    /// 2xx answers written as revisits of an identical payload (`[fetch] dedup`).
    pub revisits: u64,
    /// Of `urls`, the fetch lists' reserve (`[prioritize] reserve_factor`).
    pub reserve: u64,
    /// Reserve URLs tried in the cycle's window (the rest went back to the frontier).
    pub reserve_tried: u64,
}

impl FetchSummary {
    /// Adds the counts of `partitions` fetch markers (summed).
    fn add(&mut self, counts: &BTreeMap<String, u64>, partitions: u32) {
        self.partitions += partitions;
        for (k, &v) in counts {
            match k.as_str() {
                counter::URLS => self.urls += v,
                counter::REQUESTS => self.requests += v,
                counter::BYTES => self.bytes += v,
                counter::REVISITS => self.revisits += v,
                counter::RESERVE => self.reserve += v,
                counter::RESERVE_TRIED => self.reserve_tried += v,
                counter::NO_ANSWER => *self.by_status.entry(k.clone()).or_default() += v,
                _ => {
                    if let Some(class) = k.strip_prefix(counter::STATUS_PREFIX) {
                        *self.by_status.entry(class.to_owned()).or_default() += v;
                    } else if let Some(kind) = k.strip_prefix(counter::ERROR_PREFIX) {
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
        self.hits += get(counter::CACHE_HITS);
        self.lookups += get(counter::CACHE_HITS) + get(counter::CACHE_MISSES);
    }

    /// Hits / lookups, if there were any lookups.
    pub fn hit_rate(&self) -> Option<f64> {
        (self.lookups > 0).then(|| self.hits as f64 / self.lookups as f64)
    }
}

/// Hosts parked because they failed run after run (`[fetch] park_after_failed_runs`), from
/// the prioritize markers: their URLs wait in the frontier, out of the fetch lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Parked {
    /// Hosts parked.
    pub hosts: u64,
    /// Their URLs the prioritize met and left in the frontier (a lower bound: it looks at the
    /// top of the queue only).
    pub urls: u64,
    /// The first cycle one of them may be contacted again in.
    pub first_cycle: u64,
}

impl Parked {
    /// What one prioritize marker's `counts` say, if it parked any host.
    pub fn of_counts(counts: &BTreeMap<String, u64>) -> Option<Parked> {
        let get = |k: &str| counts.get(k).copied().unwrap_or(0);
        (get(counter::PARKED_HOSTS) > 0).then(|| Parked {
            hosts: get(counter::PARKED_HOSTS),
            urls: get(counter::PARKED_URLS),
            first_cycle: get(counter::PARKED_FIRST_CYCLE),
        })
    }

    /// Several partitions' parks together.
    pub fn sum(parts: impl IntoIterator<Item = Parked>) -> Option<Parked> {
        parts.into_iter().reduce(|a, b| Parked {
            hosts: a.hosts + b.hosts,
            urls: a.urls + b.urls,
            first_cycle: a.first_cycle.min(b.first_cycle),
        })
    }

    /// The hosts the prioritize of `cycle` left parked, over `m` partitions (damaged or missing
    /// markers count as none).
    pub fn of_cycle(crawl: &CrawlDir, cycle: u32, m: u32) -> Option<Parked> {
        Parked::sum((0..m).filter_map(|p| {
            let path = crawl.done_path(cycle, Stage::Prioritize, p);
            let marker = crate::crawl::DoneMarker::read(&path).ok().flatten()?;
            Parked::of_counts(&marker.counts)
        }))
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
    /// The crawl is done: the current cycle has not started and its fetch lists, written by the
    /// complete cycle before it, are empty (nothing is left to fetch until URLs are added).
    pub finished: bool,
    /// Partitions (of any stage and cycle) whose last attempt failed.
    pub failed: u32,
    /// The newest cycle whose fetch did work (had URLs to fetch); failing that, the newest
    /// with fetch results.
    pub fetch_cycle: Option<u32>,
    /// What the fetches of `fetch_cycle` did.
    pub fetch: FetchSummary,
    /// What every fetch in the directory did.
    pub fetch_total: FetchSummary,
    /// The newest cycle whose split did work (had links); failing that, the newest with split
    /// results.
    pub cache_cycle: Option<u32>,
    /// The CLOCK cache in the splits of `cache_cycle`.
    pub cache: CacheSummary,
    /// The CLOCK cache over every split in the directory.
    pub cache_total: CacheSummary,
    /// Hosts with the most fetched pages in `fetch_cycle` (if asked for and there are results).
    pub top_hosts: Option<TopHosts>,
    /// Hosts parked now (each partition's newest prioritize), if any.
    pub parked: Option<Parked>,
    /// Cycles with a directory.
    pub cycles: Vec<CycleStatus>,
    /// The newest submission to Slurm (`dragnet slurm submit`), if the crawl was ever submitted.
    pub slurm: Option<crate::crawl::submissions::LastSubmission>,
}

impl Status {
    /// The newest complete cycle's status.
    pub fn last_complete_cycle(&self) -> Option<&CycleStatus> {
        let c = self.last_complete?;
        self.cycles.iter().find(|s| s.cycle == c)
    }

    /// The newest complete cycle that had URLs to fetch (failing that, the newest complete
    /// one): the cycle whose stage times are worth showing.
    pub fn last_working_cycle(&self) -> Option<&CycleStatus> {
        let complete = || {
            self.cycles
                .iter()
                .rev()
                .filter(|c| c.state == CycleState::Complete)
        };
        complete()
            .find(|c| c.fetchlist_urls > 0)
            .or_else(|| complete().next())
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
    let (crawl, config) = CrawlDir::open(dir)?;
    status_of(&crawl, &config, opts)
}

/// [`status_with`] for a crawl whose configuration is loaded.
pub(crate) fn status_of(crawl: &CrawlDir, config: &Config, opts: &StatusOptions) -> Result<Status> {
    let dir = crawl.root();
    let m = config.crawl.partitions;
    let lock = crate::crawl::probe_lock(dir)?;
    let live = matches!(lock, Some((_, Holder::Alive)));
    let (seen, urldb) = state_sizes(crawl, m)?;
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
        finished: false,
        failed: 0,
        fetch_cycle: None,
        fetch: FetchSummary::default(),
        fetch_total: FetchSummary::default(),
        cache_cycle: None,
        cache: CacheSummary::default(),
        cache_total: CacheSummary::default(),
        top_hosts: None,
        parked: None,
        slurm: crate::crawl::submissions::last_submission(crawl, config),
        cycles: Vec::new(),
    };
    let mut walk = Walk {
        crawl,
        m,
        live,
        frontier: vec![None; m as usize],
        parked: vec![None; m as usize],
        fetched_parts: Vec::new(),
        fetch_did_work: false,
        cache_did_work: false,
    };
    for c in crawl.cycles() {
        let is_current = s.current.is_none();
        let (cycle, fetchlists) = walk.cycle_status(c, is_current)?;
        if cycle.state == CycleState::Complete {
            s.cycles_complete += 1;
            s.last_complete = Some(c);
        } else if is_current {
            s.current = Some(c);
        }
        for st in &cycle.stages {
            s.failed += st.failed;
            s.headline(c, st, m, &mut walk);
        }
        if is_current
            && cycle.state == CycleState::NotStarted
            && fetchlists == m
            && cycle.fetchlist_urls == 0
            && s.last_complete == c.checked_sub(1)
        {
            s.finished = true;
        }
        s.cycles.push(cycle);
    }
    s.frontier_partitions = walk.frontier.iter().flatten().count() as u32;
    if s.frontier_partitions > 0 {
        s.frontier = Some(walk.frontier.iter().flatten().sum());
    }
    s.parked = Parked::sum(walk.parked.into_iter().flatten());
    if let (true, Some(c)) = (opts.top_hosts, s.fetch_cycle) {
        s.top_hosts = Some(top_hosts(crawl, c, &walk.fetched_parts)?);
    }
    Ok(s)
}

/// Records in the newest seen sets and in the newest URL dbs of the `m` partitions.
fn state_sizes(crawl: &CrawlDir, m: u32) -> Result<(u64, u64)> {
    let mut seen = 0;
    let mut urldb = 0;
    for p in 0..m {
        for (kind, total) in [("seen", &mut seen), ("urldb", &mut urldb)] {
            if let Some((_, path)) = crawl.latest_state(p, kind, u32::MAX) {
                *total += RunReader::open(&path)?.len();
            }
        }
    }
    Ok((seen, urldb))
}

/// The walk over the cycles of a crawl of `m` partitions, and what it carries from one cycle
/// to the next besides the [`Status`].
struct Walk<'a> {
    crawl: &'a CrawlDir,
    m: u32,
    /// The lock's holder runs on this host.
    live: bool,
    /// Each partition's newest prioritize marker's `frontier` count.
    frontier: Vec<Option<u64>>,
    /// Each partition's newest prioritize marker's parked hosts.
    parked: Vec<Option<Parked>>,
    /// The partitions whose fetch is done in [`Status::fetch_cycle`].
    fetched_parts: Vec<u32>,
    /// The fetch of [`Status::fetch_cycle`] had URLs.
    fetch_did_work: bool,
    /// The split of [`Status::cache_cycle`] had links.
    cache_did_work: bool,
}

impl Walk<'_> {
    /// Cycle `c` and how many fetch lists it has; `is_current`: `c` is the oldest cycle not
    /// complete.
    fn cycle_status(&mut self, c: u32, is_current: bool) -> Result<(CycleStatus, u32)> {
        let (crawl, m) = (self.crawl, self.m);
        let (mut fetchlist_urls, mut fetchlists) = (0, 0);
        for p in 0..m {
            let path = crawl.fetchlist(c, p);
            if path.exists() {
                fetchlist_urls += RunReader::open(&path)?.len();
                fetchlists += 1;
            }
        }
        let stages = self.stages_of(c, is_current)?;
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
        let cycle = CycleStatus {
            cycle: c,
            state,
            completed_at,
            fetchlist_urls,
            stages,
        };
        Ok((cycle, fetchlists))
    }

    /// The stages of cycle `c` worth listing: `init` if it ran in `c`, every stage of a cycle that
    /// has begun or is the current one. The prioritize markers' frontier and parks are kept.
    fn stages_of(&mut self, c: u32, is_current: bool) -> Result<Vec<StageStatus>> {
        let (crawl, m, live) = (self.crawl, self.m, self.live);
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
                if let (Stage::Prioritize, Some(&n)) = (stage, mk.counts.get(counter::FRONTIER)) {
                    self.frontier[p as usize] = Some(n);
                }
                if stage == Stage::Prioritize {
                    self.parked[p as usize] = Parked::of_counts(&mk.counts);
                }
            })?;
            if stage != Stage::Init && st.done < m && running_stage.is_none() {
                running_stage = Some(stage);
            }
            stages.push(st);
        }
        Ok(stages)
    }
}

impl Status {
    /// Adds stage `st` of cycle `c` to the totals, and makes it the headline if it is the
    /// newest that did work ([`Status::fetch_cycle`], [`Status::cache_cycle`]).
    fn headline(&mut self, c: u32, st: &StageStatus, m: u32, walk: &mut Walk<'_>) {
        if st.done == 0 {
            return;
        }
        // The headline is the newest cycle that did work: an empty last cycle (the few
        // retries at the end of a crawl aside) does not hide the one before it.
        let did_work = |k: &str| st.counts.get(k).is_some_and(|&n| n > 0);
        match st.stage {
            Stage::Fetch => {
                self.fetch_total.add(&st.counts, st.done);
                if did_work(counter::URLS) || self.fetch_cycle.is_none() || !walk.fetch_did_work {
                    self.fetch_cycle = Some(c);
                    walk.fetch_did_work = did_work(counter::URLS);
                    self.fetch = FetchSummary::default();
                    self.fetch.add(&st.counts, st.done);
                    walk.fetched_parts = (0..m)
                        .filter(|&p| st.state(p) == PartitionState::Done)
                        .collect();
                }
            }
            Stage::Split => {
                self.cache_total.add(&st.counts);
                if did_work(counter::LINKS) || self.cache_cycle.is_none() || !walk.cache_did_work {
                    self.cache_cycle = Some(c);
                    walk.cache_did_work = did_work(counter::LINKS);
                    self.cache = CacheSummary::default();
                    self.cache.add(&st.counts);
                }
            }
            _ => {}
        }
    }
}
