//! `dragnet fetch --cycle N --partition p DIR`: the fetch stage of one partition (docs/design.md §1, §7).
//!
//! It reads `cycles/N/fetchlist/pNNNN.run` (sorted by host key, then fingerprint) and the host
//! table `state/pNNNN/hosts.*.run`, and writes
//!
//! - `cycles/N/warc/pNNNN-SSSSSS.warc.zst` (or `.warc.gz`): request and response records of every
//!   request made, robots.txt included, rotating at `warc_rotate`;
//! - `cycles/N/fetched/pNNNN.run`: one [`FetchResult`](crate::records::FetchResult) per URL of the fetch list, fetched or not
//!   (`error` says why not: `robots`, `robots_unreachable`, `host_failing`, `deferred`, or the
//!   fetch error);
//! - `state/pNNNN/hosts.(N+1).run`: the host table with this run's robots.txt fetches and
//!   counters;
//! - `cycles/N/fetch/pNNNN.done` last, the commit.
//!
//! # How the work flows
//!
//! The calling thread is the *feeder*: it streams the fetch list host by host, joins each host
//! with its record in the old host table (both are sorted by host key: one merge-join pass),
//! keeps the next 64 hosts in a window and hands the one with the highest-priority URL on first
//! (so a deadline leaves the lowest-priority hosts of the window), resolves the host once for
//! the per-IP limit (names the crawl's table lacks were usually
//! looked up already: a prefetch thread reads the fetch list a few hundred hosts ahead and
//! resolves their names eight at a time into the fetcher's DNS cache), and hands the host's
//! URLs to the Mercator
//! [`Scheduler`], not to be leased before the time the record says (`next_allowed_ms`: the delay
//! the host earned in the previous run holds in this one, which may start a moment later). It
//! stops reading while one host per worker is already waiting for a back queue, so memory holds
//! the hosts in rotation and a short line behind them, never the whole list. The list's reserve
//! (URLs beyond the fetch budget, [`crate::fetch::window`]) rides behind a host's listed URLs;
//! hosts with reserve URLs only are left to a second pass over the list, which waits until the
//! partition's own work is done and feeds them while the cycle's window is open (deferring them
//! once it has closed).
//!
//! `threads` workers share one [`Fetcher`] and one [`WarcWriter`]. Each host in the run has its
//! own keep-alive [`HostClient`], so its one connection is reused by whichever worker takes the
//! host next and closed when the host is done. A worker takes the host whose time has come
//! (waking one other worker, not all: a thundering herd of 16 threads on every completion cost a
//! tenth of the CPU), and for its URL:
//!
//! 1. **robots.txt first.** If the URL's origin has no fresh robots.txt outcome (from the host
//!    table, `robots_ttl_secs`), the lease is spent fetching `/robots.txt` (following up to
//!    `max_redirects` hops, RFC 9309 §2.3.1.2), and the URL goes back to the front of the host's
//!    queue, so it waits for the host's delay like any other request. The file is parsed once per
//!    origin and kept for the run.
//! 2. A URL the rules refuse is recorded (`robots`) without a request; an origin whose robots.txt
//!    is unreachable refuses everything this run (`robots_unreachable`).
//! 3. Otherwise one GET with every limit ([`Fetcher::fetch`]), conditional when the fetch list
//!    carries validators; the exchange goes to the WARC (a 304 as a revisit record) and its
//!    result to an external sort keyed by fingerprint.
//! 4. The host is given back with its delay: the largest of `default_delay_secs`, the robots.txt
//!    crawl-delay (capped) and `delay_factor` x the response time ([`politeness_delay`](super::schedule::politeness_delay)), at
//!    least `ABANDON_BACKOFF` after an abandoned connection, plus `CLOCK_MARGIN`; the host's
//!    record notes when that delay ends, for the next run. After `max_host_failures` failed
//!    requests in a row the host's other URLs are recorded as `host_failing` without requests.
//!
//! At `deadline_secs` every URL not yet handed out is recorded as `deferred` (requests in flight
//! finish, bounded by `total_timeout_secs`), so a host that stalls never holds the partition.
//!
//! # Crash safety
//!
//! Outputs are published atomically and the `.done` marker last. A fetch killed half-way leaves
//! no marker; re-running it first reads the request records of the WARC files the dead attempt
//! left (published or half-written) for when it last asked each host, so the re-run keeps the
//! host's delay (plus the back-off after the connection the kill abandoned) from that request,
//! then removes those files and fetches again from the fetch list. What a server answers
//! the second time may differ, so a re-run gives the same *set* of results, not the same bytes.
//!
//! One partition's run (setup, run loop, commit) is `stage/partition.rs`; the feeder lives in
//! `stage/feed.rs`, the workers in `stage/worker.rs`, robots.txt fetching and the per-origin
//! policy in `stage/robots.rs`, in-run following in `stage/follow.rs`.

mod feed;
mod follow;
mod partition;
mod payload;
mod robots;
mod worker;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::client::{Fetcher, HostClient};
use super::progress::{Counters, ProgressMode};
use super::schedule::Scheduler;
use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, Stage, StageReport};
use crate::error::{Error, Result};
use crate::parse::inline::InlineParse;
use crate::records::FetchItem;
use crate::records::{HostRecord, Policy};
use crate::run::Sorter;
use crate::warc::writer::WarcWriter;
use partition::PartitionRun;
use worker::error_result;

/// Least delay after a request whose connection was dropped mid-response or failed: the server
/// may still be writing to the old connection until it notices (its next write fails), and a
/// host that needed cutting off deserves a pause. How long the request took counts through
/// `delay_factor`, as for any request: a slow drip cut after the 60 s total timeout earns 120
/// s by default; a crawl that sets the factor to 0 (the demo) waits this long, not as long again.
const ABANDON_BACKOFF: Duration = Duration::from_secs(1);

/// Slack added to every non-zero delay. The server stamps a response's end when its last write
/// returns, which can come after the client has read the last byte, so "at least the delay
/// apart" measured at the server needs a few milliseconds more than the client measures.
/// websim's audit saw a 99.2 ms gap for a 100 ms crawl-delay with no margin, and 98.2 ms with
/// 5 ms of margin on two cores shared by the crawler, the server and a build.
const CLOCK_MARGIN: Duration = Duration::from_millis(10);

/// The delay a host is given back with: `delay` plus [`CLOCK_MARGIN`] unless it is zero.
pub(crate) fn with_margin(delay: Duration) -> Duration {
    if delay.is_zero() {
        delay
    } else {
        delay.saturating_add(CLOCK_MARGIN)
    }
}

/// The longest delay a host can earn under `f`: a bound on the wait a host record carries into
/// the next run, so a wall clock set back (or a damaged record) cannot shut a host out for long.
fn max_delay(f: &crate::config::FetchSection) -> Duration {
    // A robots.txt fetch may follow redirects: each hop is one request of up to the total timeout.
    let took = f.total_timeout_secs * (f64::from(f.max_redirects) + 1.0);
    let earned =
        Duration::try_from_secs_f64(took * f.delay_factor.max(1.0)).unwrap_or(Duration::MAX);
    with_margin(
        secs(f.default_delay_secs)
            .max(secs(f.max_crawl_delay_secs))
            .max(ABANDON_BACKOFF)
            .max(earned),
    )
}

/// How to run a fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Progress display.
    pub progress: ProgressMode,
    /// Seconds between log lines when progress is logged.
    pub log_interval: Duration,
    /// Counters for the workers to bump, read by a caller's display as well (`dragnet cycle`
    /// sums those of every fetch); fresh ones if `None`. Give each fetch its own.
    pub counters: Option<Arc<Counters>>,
    /// The per-IP limits shared with the other fetches of this process (`dragnet cycle` gives
    /// every fetch of a cycle the same); a gate of its own if `None`.
    pub ip_gate: Option<Arc<crate::fetch::ipgate::IpGate>>,
    /// Where names the crawl's table lacks are looked up (tests count lookups with their own);
    /// the system resolver if `None`.
    pub lookup: Option<Arc<dyn crate::resolve::Lookup>>,
    /// The cycle's window shared with the other fetches of the cycle (`dragnet cycle`): while
    /// it is open the fetch follows links beyond `follow_per_host`. `None` keeps to the cap.
    pub window: Option<Arc<crate::fetch::window::CycleWindow>>,
    /// Without a shared `window`, open one from the fetch lists (`[cycle] window`; a fetch run
    /// alone, as under Slurm: [`crate::fetch::window::Window::from_lists`]).
    pub window_from_lists: bool,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            progress: ProgressMode::Auto,
            log_interval: Duration::from_secs(10),
            counters: None,
            ip_gate: None,
            lookup: None,
            window: None,
            window_from_lists: true,
        }
    }
}

/// One URL of the fetch list on its way through the scheduler.
struct Job {
    host_key: u64,
    fp: u64,
    item: FetchItem,
    /// Redirects followed in this run to reach this URL (0: listed, or a followed link).
    hops: u32,
    /// Whose work it is: the partition's own, or work for the cycle's window only.
    work: Work,
}

/// Whose work a [`Job`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    /// The fetch list's, or followed within `follow_per_host`: the partition's own work,
    /// which the cycle waits for.
    Own,
    /// Followed beyond `follow_per_host` while the cycle's window was open: deferred, not
    /// fetched, once it has closed ([`crate::fetch::window`]).
    Followed,
    /// From the fetch list's reserve (`[prioritize] reserve_factor`): fetched while the window
    /// is open, deferred back to the frontier once it has closed.
    Reserve,
}

impl Job {
    /// Whether the job is fetched only while the cycle's window is open.
    fn window_only(&self) -> bool {
        self.work != Work::Own
    }
}

impl crate::fetch::schedule::Prioritized for Job {
    fn priority(&self) -> f64 {
        self.item.priority
    }
}

/// What the workers know about a host while it is in the run.
struct HostState {
    record: HostRecord,
    /// Parsed robots.txt policies by origin, for this run.
    policies: HashMap<String, Arc<Policy>>,
    /// URLs of the fetch list not yet given a result.
    pending: usize,
    /// The host's keep-alive connection, closed when the host leaves the table.
    client: Arc<HostClient>,
    /// URLs this run may still follow on the host ([`follow`]).
    follow_left: u64,
    /// 429 and 5xx answers in a row: the host's back-off doubles with each.
    slowdowns: u32,
    /// The address the feeder resolved for it (the per-IP limits), if any.
    ip: Option<std::net::IpAddr>,
    /// URLs the run may follow on the host beyond `follow_left` while the cycle's window is
    /// open ([`crate::fetch::window`]).
    extra_left: u64,
    /// Same-origin links robots.txt refuses that the run may still record without a request
    /// ([`follow`]).
    refused_left: u64,
    /// Results of this run that the host failed (no answer: [`worker::host_failed`]) and that
    /// it answered, which decide whether the run counts toward parking it.
    failed: u32,
    answered: u32,
}

impl HostState {
    /// Settles the park at the end of the host's run (`[fetch] park_after_failed_runs`): any
    /// answer ends it; a run in which every attempt failed counts one more failed run, and
    /// from `park_after` failed runs on the host is parked for 1, 2, 4, ... cycles (at most
    /// `max_park_cycles`) after this one.
    fn settle_park(&mut self, cycle: u32, f: &crate::config::FetchSection) {
        let r = &mut self.record;
        if self.answered > 0 {
            r.failed_runs = 0;
            r.parked_until = 0;
        } else if self.failed > 0 {
            r.failed_runs = r.failed_runs.saturating_add(1);
            let n = f.park_after_failed_runs;
            if n > 0 && r.failed_runs >= n {
                let doubling = 1u32 << (r.failed_runs - n).min(31);
                r.parked_until = cycle
                    .saturating_add(1)
                    .saturating_add(doubling.min(f.max_park_cycles.max(1)));
            }
        }
    }
}

struct Sched {
    sched: Scheduler<Job>,
    /// The feeder is still adding hosts.
    feeding: bool,
    /// The deadline passed: nothing more is handed out or requeued.
    deferred: bool,
}

struct Shared<'a> {
    cfg: &'a Config,
    /// Per-IP limits across the process's fetches.
    ip_gate: Arc<crate::fetch::ipgate::IpGate>,
    agent: String,
    fetcher: Fetcher,
    sched: Mutex<Sched>,
    /// Workers wait here for a host to become ready.
    wake: Condvar,
    /// The feeder waits here for room in the line of waiting hosts.
    room: Condvar,
    hosts: Mutex<HashMap<u64, HostState>>,
    warc: Mutex<WarcWriter>,
    results: Mutex<Sorter>,
    host_out: Mutex<Sorter>,
    counters: Arc<Counters>,
    tally: Mutex<BTreeMap<String, u64>>,
    failure: Mutex<Option<Error>>,
    deadline: Instant,
    /// Hosts the feeder has handed to the scheduler (the DNS prefetch stays a little ahead).
    hosts_fed: AtomicU64,
    /// The feeder is done: the DNS prefetch stops.
    feed_done: std::sync::atomic::AtomicBool,
    run_ms: u64,
    /// The cycle this run fetches (a parked host's `parked_until` is compared with it).
    cycle: u32,
    /// The partition it fetches.
    partition: u32,
    /// URLs of the fetch list and URLs followed within the caps without a result yet: the
    /// partition's own work; at 0 the window hears it is done ([`crate::fetch::window`]).
    base_left: AtomicU64,
    /// The cycle's window, if any ([`crate::fetch::window`]).
    window: Option<crate::fetch::window::Window>,
    /// URLs followed beyond `follow_per_host` in the window, and those of them deferred when
    /// it closed.
    extended: AtomicU64,
    extended_deferred: AtomicU64,
    /// URLs followed beyond the cap waiting for their fetch (at most `worker::EXTRA_QUEUED`).
    extra_queued: AtomicU64,
    /// Reserve URLs tried (fetched, or refused or failed on the way) while the window was open.
    reserve_tried: AtomicU64,
    robots_requests: AtomicU64,
    /// In-run following, if on.
    follow: Option<follow::Follow>,
    /// The parse, run as pages arrive: writing the parse stage's outputs (`[fetch] parse`), or
    /// only extracting links for the following; `None` if neither is on.
    parse: Option<Mutex<InlineParse>>,
    /// `parse` writes the parse stage's outputs.
    parse_writes: bool,
    /// URLs followed in this run (each has a result besides the fetch list's), those recorded
    /// as refused by robots.txt without a request included.
    followed: AtomicU64,
    /// Of `followed`, the links robots.txt refuses, recorded without a request.
    followed_refused: AtomicU64,
    /// Host name -> when an unfinished (killed) attempt of this fetch last sent it a request,
    /// Unix milliseconds ([`unfinished_requests`]).
    restarted: HashMap<String, u64>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

/// Runs the fetch stage of partition `p` in `cycle` (see the module docs). Returns at once with
/// `skipped` if the stage is already done.
pub fn fetch_partition(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
    opts: &FetchOptions,
) -> Result<StageReport> {
    if let Some(done) = crate::crawl::gate(crawl, cfg, Stage::Fetch, cycle, p)? {
        return Ok(done);
    }
    let (mut run, setup) = PartitionRun::prepare(crawl, cfg, cycle, p)?;
    let shared = run.shared(setup, opts)?;
    if let Err(e) = run.fetch(&shared, opts) {
        return Err(partition::abandon(shared, e));
    }
    run.commit(shared)
}

/// What a fetch did, in one line (`dragnet fetch`, `dragnet slurm task`).
pub fn summary(r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    let errors: Vec<String> = r
        .counts
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(counter::ERROR_PREFIX)
                .map(|k| format!("{k} {v}"))
        })
        .collect();
    format!(
        "{} URLs, {} requests ({} robots.txt), {} 2xx, {} 3xx, {} 4xx, {} 5xx, {:.1} MiB in {:.1}s ({:.0} requests/s); errors: {}; {} WARC files",
        n(counter::URLS),
        n(counter::REQUESTS),
        n(counter::ROBOTS_REQUESTS),
        n(&counter::status_class(2)),
        n(&counter::status_class(3)),
        n(&counter::status_class(4)),
        n(&counter::status_class(5)),
        n(counter::BYTES) as f64 / (1 << 20) as f64,
        r.seconds,
        n(counter::REQUESTS) as f64 / r.seconds.max(1e-9),
        if errors.is_empty() { "none".to_owned() } else { errors.join(", ") },
        n(counter::WARC_FILES),
    )
}
