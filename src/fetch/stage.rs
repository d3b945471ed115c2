//! `dragnet fetch --cycle N --partition p DIR`: the fetch stage of one partition (DESIGN §1, §7).
//!
//! It reads `cycles/N/fetchlist/pNNNN.run` (sorted by host key, then fingerprint) and the host
//! table `state/pNNNN/hosts.*.run`, and writes
//!
//! - `cycles/N/warc/pNNNN-SSSSSS.warc.zst` (or `.warc.gz`): request and response records of every
//!   request made, robots.txt included, rotating at `warc_rotate`;
//! - `cycles/N/fetched/pNNNN.run`: one [`FetchResult`] per URL of the fetch list, fetched or not
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
//! resolves the host once for the per-IP limit, and hands the host's URLs to the Mercator
//! [`Scheduler`]. It stops reading while one host per worker is already waiting for a back
//! queue, so memory holds the hosts in rotation and a short line behind them, never the whole
//! list.
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
//!    crawl-delay (capped) and `delay_factor` x the response time ([`politeness_delay`]). After
//!    `max_host_failures` failed requests in a row the host's other URLs are recorded as
//!    `host_failing` without requests.
//!
//! At `deadline_secs` every URL not yet handed out is recorded as `deferred` (requests in flight
//! finish, bounded by `total_timeout_secs`), so a host that stalls never holds the partition.
//!
//! # Crash safety
//!
//! Outputs are published atomically and the `.done` marker last. A fetch killed half-way leaves
//! no marker; re-running it first removes the partition's WARC files of that cycle (rotated files
//! may have been published) and then fetches again from the fetch list. What a server answers
//! the second time may differ, so a re-run gives the same *set* of results, not the same bytes.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use url::Url;
use xxhash_rust::xxh3::Xxh3;

use super::client::{Fetched, Fetcher, HostClient, Validators};
use super::hosts::{HostRecord, OriginRobots, Policy};
use super::progress::{Counters, ProgressMode, Reporter};
use super::schedule::{politeness_delay, Lease, Next, Scheduler};
use crate::crawl::{Config, CrawlDir, DoneMarker, FetchItem, FetchResult, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};
use crate::resolve::Resolver;
use crate::run::{self, Cursor, KeepFirst, RunReader, RunWriter, Schema, Sorter};
use crate::warc::writer::{Exchange, ResponseKind, Revisit, WarcWriter, WriterConfig};
use crate::warc::Compression;

/// Least delay after a request whose connection was dropped mid-response or failed: the server
/// may still be writing to the old connection until it notices, and a host that needed cutting
/// off deserves a pause. (The delay is also at least as long as the failed request took.)
const ABANDON_BACKOFF: Duration = Duration::from_secs(1);

/// How to run a fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Progress display.
    pub progress: ProgressMode,
    /// Seconds between log lines when progress is logged.
    pub log_interval: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            progress: ProgressMode::Auto,
            log_interval: Duration::from_secs(10),
        }
    }
}

/// What a fetch did: the counts of its `.done` marker.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FetchReport {
    /// The stage was already done (its `.done` existed): nothing was fetched now.
    pub skipped: bool,
    /// Counters, as in the `.done` marker: `urls`, `requests`, `robots_requests`, `bytes`,
    /// `status_2xx` .. `status_5xx`, `error_<kind>`, `deferred`, `hosts`, `warc_files`, ...
    pub counts: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl FetchReport {
    /// A counter, 0 if absent.
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }
}

/// One URL of the fetch list on its way through the scheduler.
struct Job {
    host_key: u64,
    fp: u64,
    item: FetchItem,
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
    run_ms: u64,
    robots_requests: AtomicU64,
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
) -> Result<FetchReport> {
    let done_path = crawl.done_path(cycle, Stage::Fetch, p);
    if let Some(m) = DoneMarker::read(&done_path)? {
        return Ok(FetchReport {
            skipped: true,
            counts: m.counts,
            seconds: m.seconds,
        });
    }
    if p >= cfg.crawl.partitions {
        return Err(Error::Usage(format!(
            "partition {p} does not exist: {} has partitions 0..{}",
            crawl.root().display(),
            cfg.crawl.partitions
        )));
    }
    let fetchlist_path = crawl.fetchlist(cycle, p);
    if !fetchlist_path.exists() {
        return Err(Error::Usage(format!(
            "{}: no fetch list for cycle {cycle}, partition {p}; it is written by `dragnet init` \
             (cycle 0) or by the previous cycle's prioritize stage",
            fetchlist_path.display()
        )));
    }
    let started = SystemTime::now();
    let t0 = Instant::now();
    let resolver = Arc::new(Resolver::from_config(
        &cfg.resolve,
        crawl.root(),
        &crawl.config_path(),
    )?);
    let compression = Compression::parse(&cfg.fetch.warc_compression).ok_or_else(|| {
        Error::config(
            crawl.config_path(),
            format!(
                "fetch.warc_compression: {:?} is not zstd, gzip or none",
                cfg.fetch.warc_compression
            ),
        )
    })?;

    // Outputs of an earlier attempt that never committed are redone from scratch.
    let warc_dir = crawl.warc_dir(cycle);
    let prefix = CrawlDir::partition_name(p);
    remove_partition_warcs(&warc_dir, &prefix)?;
    let fetched_path = crawl.fetched(cycle, p);
    let stage_dir = crawl.stage_dir(cycle, Stage::Fetch);
    for d in [
        &warc_dir,
        &stage_dir,
        &fetched_path.parent().expect("has a parent").to_path_buf(),
    ] {
        crate::storage::create_dir_all(d)?;
        crate::storage::remove_temps(d)?;
    }
    crate::storage::create_dir_all(&crawl.state_dir(p))?;

    let mut fetchlist = RunReader::open_expect(&fetchlist_path, Schema::FETCHLIST)?;
    let total = fetchlist.len();
    let old_hosts_path = crawl.latest_state(p, "hosts", cycle).map(|(_, path)| path);
    let new_hosts_path = crawl.state_file(p, "hosts", cycle + 1);

    let mut wcfg = WriterConfig::new(&warc_dir, &prefix, compression);
    wcfg.rotate_bytes = cfg.fetch.warc_rotate.0;
    wcfg.level = cfg.fetch.warc_level();
    wcfg.warcinfo = vec![
        ("isPartOf".into(), cfg.crawl.name.clone()),
        (
            "http-header-user-agent".into(),
            cfg.fetch.user_agent.clone(),
        ),
        ("robots".into(), "classic".into()),
        (
            "description".into(),
            format!("dragnet fetch: cycle {cycle}, partition {p}"),
        ),
    ];
    // The results are small (~200 bytes a URL) and spills are cheap: a fixed slice of the sort
    // budget keeps the stage's memory from growing with the fetch list.
    let budget = usize::try_from(cfg.sort.memory_budget.0 / 16)
        .unwrap_or(usize::MAX)
        .clamp(1 << 20, 16 << 20);
    let f = &cfg.fetch;
    let max_active = (f.threads as usize) * (f.queues_per_thread as usize);
    let counters = Arc::new(Counters::default());
    let shared = Shared {
        cfg,
        agent: crate::fetch::robots::agent_token(&f.user_agent).to_owned(),
        fetcher: Fetcher::new(f, resolver),
        sched: Mutex::new(Sched {
            sched: Scheduler::new(max_active, f.per_ip_connections),
            feeding: true,
            deferred: false,
        }),
        wake: Condvar::new(),
        room: Condvar::new(),
        hosts: Mutex::new(HashMap::new()),
        warc: Mutex::new(WarcWriter::new(wcfg)?),
        results: Mutex::new(Sorter::new(Schema::FETCHED, budget, &stage_dir)?),
        host_out: Mutex::new(Sorter::new(Schema::HOSTS, budget, &stage_dir)?),
        counters: Arc::clone(&counters),
        tally: Mutex::new(BTreeMap::new()),
        failure: Mutex::new(None),
        deadline: t0 + secs(f.deadline_secs),
        run_ms: unix_ms(started),
        robots_requests: AtomicU64::new(0),
    };
    let reporter = Reporter::start(
        opts.progress,
        format!("fetch c{cycle} {prefix}"),
        total,
        Arc::clone(&counters),
        opts.log_interval,
    );

    let mut old_hosts = match &old_hosts_path {
        Some(path) => Some(RunReader::open_expect(path, Schema::HOSTS)?),
        None => None,
    };
    let fed = std::thread::scope(|s| {
        let mut spawned = Ok(());
        for i in 0..f.threads {
            let sh = &shared;
            if let Err(e) = std::thread::Builder::new()
                .name(format!("fetch-{i}"))
                .spawn_scoped(s, move || sh.work())
            {
                spawned = Err(Error::io("spawn a fetch worker for", &fetchlist_path, e));
                break;
            }
        }
        let fed =
            spawned.and_then(|()| shared.feed(&mut fetchlist, old_hosts.as_mut(), &fetchlist_path));
        let mut st = lock(&shared.sched);
        st.feeding = false;
        if fed.is_err() {
            // Stop the workers: nothing more is handed out.
            st.deferred = true;
            let _ = st.sched.defer_all();
        }
        drop(st);
        shared.wake.notify_all();
        fed
    });
    reporter.finish();
    fed?;
    if let Some(e) = lock(&shared.failure).take() {
        return Err(e);
    }
    // Hosts still in the table (all their URLs have results by now) go out as they are.
    for (hk, h) in lock(&shared.hosts).drain() {
        lock(&shared.host_out).push(&run::fp_key(hk), &h.record.encode())?;
    }

    let Shared {
        warc,
        results,
        host_out,
        tally,
        robots_requests,
        ..
    } = shared;
    let summary = warc
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .finish()?;
    let mut w = RunWriter::create(&fetched_path, Schema::FETCHED)?;
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .finish(&mut KeepFirst, &mut w)?;
    let fetched_summary = w.finish()?;
    let mut w = RunWriter::create(&new_hosts_path, Schema::HOSTS)?;
    host_out
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .finish(&mut KeepFirst, &mut w)?;
    let hosts_summary = w.finish()?;

    let mut counts = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    counts.insert("urls".into(), total);
    counts.insert("results".into(), fetched_summary.records);
    counts.insert("requests".into(), counters.requests.load(Relaxed));
    counts.insert("robots_requests".into(), robots_requests.load(Relaxed));
    counts.insert("bytes".into(), counters.bytes.load(Relaxed));
    counts.insert("hosts_in_table".into(), hosts_summary.records);
    counts.insert("warc_files".into(), summary.files.len() as u64);
    counts.insert("warc_records".into(), summary.records);
    counts.insert("warc_bytes".into(), summary.bytes);
    if fetched_summary.records != total {
        return Err(Error::corrupt(
            &fetchlist_path,
            0,
            format!(
                "{} URLs in the fetch list but {} results: the fetch list repeats a fingerprint",
                total, fetched_summary.records
            ),
        ));
    }

    let mut m = DoneMarker::new(Stage::Fetch, cycle, p, started);
    m.inputs.push(FileDigest::of_run(crawl, &fetchlist_path)?);
    if let Some(path) = &old_hosts_path {
        m.inputs.push(FileDigest::of_run(crawl, path)?);
    }
    m.outputs.push(FileDigest::of_run(crawl, &fetched_path)?);
    m.outputs.push(FileDigest::of_run(crawl, &new_hosts_path)?);
    for file in &summary.files {
        m.outputs.push(FileDigest::of_file(crawl, file)?);
    }
    m.counts = counts;
    let m = m.commit(&done_path, started)?;
    Ok(FetchReport {
        skipped: false,
        counts: m.counts,
        seconds: m.seconds,
    })
}

/// Removes `prefix-*.warc*` files (and their temporaries) an uncommitted attempt left.
fn remove_partition_warcs(dir: &Path, prefix: &str) -> Result<()> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mine = format!("{prefix}-");
    for entry in rd {
        let entry = entry.ctx("list", dir)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let bare = name.trim_start_matches('.');
        if bare.starts_with(&mine) && Compression::from_name(bare).is_some() {
            let path = entry.path();
            std::fs::remove_file(&path).ctx("remove", &path)?;
        }
    }
    Ok(())
}

impl Shared<'_> {
    /// Streams the fetch list into the scheduler, host by host (see the module docs).
    fn feed(
        &self,
        fetchlist: &mut RunReader,
        mut old_hosts: Option<&mut RunReader>,
        path: &Path,
    ) -> Result<()> {
        // One host per worker waits for a back queue: enough that a worker never waits for the
        // feeder, few enough that memory holds little beyond the hosts in rotation.
        let max_waiting = self.cfg.fetch.threads as usize;
        let mut jobs: Vec<Job> = Vec::new();
        let mut old_valid = match old_hosts.as_deref_mut() {
            Some(r) => r.advance()?,
            None => false,
        };
        let mut more = fetchlist.advance()?;
        while more || !jobs.is_empty() {
            let key = more.then(|| run::key_u64(&fetchlist.key()[..8]));
            if let (Some(k), Some(first)) = (key, jobs.first()) {
                if k == first.host_key {
                    jobs.push(self.job(fetchlist, path)?);
                    more = fetchlist.advance()?;
                    continue;
                }
            } else if jobs.is_empty() {
                jobs.push(self.job(fetchlist, path)?);
                more = fetchlist.advance()?;
                continue;
            }
            // `jobs` holds one whole host: join it with its old record, pass hosts not in the
            // fetch list through unchanged.
            let hk = jobs[0].host_key;
            let mut record = None;
            while let Some(r) = old_hosts.as_deref_mut().filter(|_| old_valid) {
                let k = run::key_u64(r.key());
                if k > hk {
                    break;
                }
                let rec = HostRecord::decode(r.payload()).map_err(|e| {
                    Error::corrupt(r.path(), 0, format!("host record {k:016x}: {e}"))
                })?;
                if k == hk {
                    record = Some(rec);
                } else {
                    lock(&self.host_out).push(&run::fp_key(k), r.payload())?;
                }
                old_valid = r.advance()?;
            }
            self.add_host(hk, std::mem::take(&mut jobs), record, max_waiting)?;
        }
        while let Some(r) = old_hosts.as_deref_mut().filter(|_| old_valid) {
            lock(&self.host_out).push(r.key(), r.payload())?;
            old_valid = r.advance()?;
        }
        Ok(())
    }

    fn job(&self, fetchlist: &RunReader, path: &Path) -> Result<Job> {
        let key = fetchlist.key();
        let item = FetchItem::decode(fetchlist.payload())
            .map_err(|e| Error::corrupt(path, 0, format!("fetch list record {}: {e}", hex(key))))?;
        Ok(Job {
            host_key: run::key_u64(&key[..8]),
            fp: run::key_u64(&key[8..16]),
            item,
        })
    }

    /// Gives one host's URLs to the scheduler, waiting while enough hosts already wait.
    fn add_host(
        &self,
        hk: u64,
        jobs: Vec<Job>,
        record: Option<HostRecord>,
        max_waiting: usize,
    ) -> Result<()> {
        let first = Url::parse(&jobs[0].item.url).ok();
        let name = first
            .as_ref()
            .and_then(|u| u.host_str())
            .unwrap_or("")
            .to_owned();
        // The address, for the per-IP limit only: a failure here is recorded by the fetch.
        let ip: Option<IpAddr> = first.and_then(|u| self.fetcher.address_of(&u).ok());
        let record = record.unwrap_or_else(|| HostRecord::new(&name));
        let mut st = lock(&self.sched);
        while !st.deferred && st.sched.hosts().1 >= max_waiting {
            st = self
                .room
                .wait_timeout(st, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if Instant::now() >= self.deadline {
                self.defer_locked(&mut st);
            }
            if lock(&self.failure).is_some() {
                return Ok(());
            }
        }
        if st.deferred || Instant::now() >= self.deadline {
            self.defer_locked(&mut st);
            drop(st);
            let mut state = HostState {
                record,
                policies: HashMap::new(),
                pending: jobs.len(),
                client: Arc::new(self.fetcher.client()),
            };
            for j in jobs {
                self.record(&j, &mut state, error_result(&j, "deferred"))?;
            }
            lock(&self.host_out).push(&run::fp_key(hk), &state.record.encode())?;
            return Ok(());
        }
        lock(&self.hosts).insert(
            hk,
            HostState {
                record,
                policies: HashMap::new(),
                pending: jobs.len(),
                client: Arc::new(self.fetcher.client()),
            },
        );
        st.sched
            .add_host(name, ip, jobs.into_iter().collect(), Instant::now());
        self.publish_hosts(&st);
        drop(st);
        self.wake.notify_one();
        Ok(())
    }

    fn publish_hosts(&self, st: &Sched) {
        let (active, waiting) = st.sched.hosts();
        self.counters.hosts_active.store(active as u64, Relaxed);
        self.counters.hosts_waiting.store(waiting as u64, Relaxed);
    }

    /// At the deadline: every URL not handed out is recorded as deferred.
    fn defer_locked(&self, st: &mut Sched) {
        if st.deferred {
            return;
        }
        st.deferred = true;
        for (_, jobs) in st.sched.defer_all() {
            for j in jobs {
                if let Err(e) = self.finish_job(&j, error_result(&j, "deferred")) {
                    self.fail(e);
                }
            }
        }
        self.wake.notify_all();
        self.room.notify_all();
    }

    fn fail(&self, e: Error) {
        let mut f = lock(&self.failure);
        if f.is_none() {
            *f = Some(e);
        }
    }

    /// A worker: lease, fetch, give back, until the schedule is done.
    fn work(&self) {
        loop {
            let lease = {
                let mut st = lock(&self.sched);
                loop {
                    if lock(&self.failure).is_some() {
                        self.defer_locked(&mut st);
                    }
                    let now = Instant::now();
                    if now >= self.deadline {
                        self.defer_locked(&mut st);
                    }
                    let wait_until = match st.sched.next(now) {
                        Next::Ready(l) => break l,
                        Next::WaitUntil(t) => t.min(self.deadline),
                        Next::WaitForCompletion => self.deadline,
                        Next::Done if st.feeding => self.deadline,
                        Next::Done => {
                            self.wake.notify_all();
                            return;
                        }
                    };
                    let d = wait_until
                        .saturating_duration_since(now)
                        .clamp(Duration::from_millis(1), Duration::from_millis(500));
                    st = self
                        .wake
                        .wait_timeout(st, d)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            };
            let (delay, requeue) = match self.process(&lease) {
                Ok(x) => x,
                Err(e) => {
                    self.fail(e);
                    (Duration::ZERO, None)
                }
            };
            let mut st = lock(&self.sched);
            if let Some(job) = requeue {
                if st.deferred {
                    if let Err(e) = self.finish_job(&job, error_result(&job, "deferred")) {
                        self.fail(e);
                    }
                } else {
                    st.sched.push_front(lease.host, job);
                }
            }
            st.sched.complete(lease.host, Instant::now(), delay);
            self.publish_hosts(&st);
            drop(st);
            // One host came back (or freed its queue for a waiting one): one worker and the
            // feeder may go on. Waking every worker here was a tenth of the stage's CPU.
            self.wake.notify_one();
            self.room.notify_one();
        }
    }

    /// Handles one lease: returns the host's delay and, if robots.txt was fetched instead, the
    /// URL to put back.
    fn process(&self, lease: &Lease<Job>) -> Result<(Duration, Option<Job>)> {
        let job = &lease.item;
        let url = match Url::parse(&job.item.url) {
            Ok(u) => u,
            Err(_) => {
                self.finish_job(job, error_result(job, "url"))?;
                return Ok((Duration::ZERO, None));
            }
        };
        let origin = url.origin().ascii_serialization();
        let (policy, failing, client) = {
            let mut hosts = lock(&self.hosts);
            let h = hosts.get_mut(&job.host_key).expect("host of a lease");
            let failing = self.cfg.fetch.max_host_failures > 0
                && h.record.consecutive_failures >= self.cfg.fetch.max_host_failures;
            (self.policy(h, &origin), failing, Arc::clone(&h.client))
        };
        if failing {
            self.finish_job(job, error_result(job, "host_failing"))?;
            return Ok((Duration::ZERO, None));
        }
        let Some(policy) = policy else {
            let delay = self.fetch_robots(&client, job.host_key, &url, &origin)?;
            let again = Job {
                host_key: job.host_key,
                fp: job.fp,
                item: job.item.clone(),
            };
            return Ok((delay, Some(again)));
        };
        if let Some(kind) = policy.refusal(url.as_str()) {
            self.finish_job(job, error_result(job, kind))?;
            return Ok((Duration::ZERO, None));
        }
        let validators = Validators {
            etag: Some(job.item.etag.as_str()).filter(|s| !s.is_empty()),
            last_modified: Some(job.item.last_modified.as_str()).filter(|s| !s.is_empty()),
        };
        let t = Instant::now();
        let outcome = self.fetcher.fetch_with(&client, &url, validators);
        let took = t.elapsed();
        self.counters.requests.fetch_add(1, Relaxed);
        // A connection dropped mid-response (body cut, read failed) may still be busy at the
        // server until it notices: back off before the next request to the host.
        let mut abandoned = true;
        let result = match outcome {
            Ok(fetched) => {
                abandoned = fetched.cut.is_some();
                self.store(job, &url, &fetched)?
            }
            Err(e) => {
                let mut r = error_result(job, e.kind());
                r.fetched_at_ms = unix_ms(SystemTime::now() - took);
                r.duration_ms = took.as_millis().min(u128::from(u32::MAX)) as u32;
                r
            }
        };
        // A cut body (slow drip, reset, timeout) is a failure even with a status line.
        let answered = result.error.is_empty() || result.error == "decoded_too_large";
        self.note_request(job.host_key, answered);
        self.finish_job(job, result)?;
        let mut delay = self.delay(policy.crawl_delay(), took);
        if abandoned {
            delay = delay.max(took.max(ABANDON_BACKOFF));
        }
        Ok((delay, None))
    }

    fn delay(&self, crawl_delay: Option<Duration>, took: Duration) -> Duration {
        let f = &self.cfg.fetch;
        politeness_delay(
            secs(f.default_delay_secs),
            crawl_delay,
            secs(f.max_crawl_delay_secs),
            f.delay_factor,
            took,
        )
    }

    /// The origin's policy for this run, from the run's cache or the host table; `None` if
    /// robots.txt must be fetched first.
    fn policy(&self, h: &mut HostState, origin: &str) -> Option<Arc<Policy>> {
        if let Some(p) = h.policies.get(origin) {
            return Some(Arc::clone(p));
        }
        let ttl = secs(self.cfg.fetch.robots_ttl_secs);
        let r = h.record.robots_for(origin)?;
        if !r.fresh(unix_ms(SystemTime::now()), ttl, self.run_ms) {
            return None;
        }
        let p = Arc::new(Policy::new(&r.status(), &self.agent));
        h.policies.insert(origin.to_owned(), Arc::clone(&p));
        Some(p)
    }

    /// Fetches `origin`'s robots.txt (following redirects), records the outcome in the host's
    /// state, and returns the host's delay.
    fn fetch_robots(
        &self,
        client: &HostClient,
        hk: u64,
        url: &Url,
        origin: &str,
    ) -> Result<Duration> {
        let mut target = url.join("/robots.txt").expect("an http(s) URL joins");
        let started = SystemTime::now();
        let t = Instant::now();
        let mut outcome = OriginRobots {
            origin: origin.to_owned(),
            fetched_at_ms: unix_ms(started),
            status: 0,
            body: Vec::new(),
        };
        let mut hops = 0;
        let mut abandoned = false;
        loop {
            self.counters.requests.fetch_add(1, Relaxed);
            self.robots_requests.fetch_add(1, Relaxed);
            let got = match self.fetcher.fetch_robots(client, &target) {
                Ok(g) => g,
                Err(_) => {
                    abandoned = true;
                    break; // no answer: unreachable
                }
            };
            abandoned |= got.cut.is_some();
            self.counters
                .bytes
                .fetch_add(got.body.len() as u64, Relaxed);
            self.write_warc(target.as_str(), &got)?;
            match (&got.location, hops < self.cfg.fetch.max_redirects) {
                (Some(loc), true) if (300..400).contains(&got.status) => match Url::parse(loc) {
                    Ok(next) if matches!(next.scheme(), "http" | "https") => {
                        target = next;
                        hops += 1;
                        continue;
                    }
                    _ => {
                        outcome.status = got.status;
                        break;
                    }
                },
                _ => {}
            }
            if got.cut.and_then(|c| c.error_kind()).is_some() {
                break; // the file did not arrive whole: unreachable, ask again next run
            }
            outcome.status = got.status;
            if (200..300).contains(&got.status) {
                outcome.body = decode_body(&got, crate::fetch::robots::MAX_ROBOTS_BYTES as u64).0;
            }
            break;
        }
        let took = t.elapsed();
        let answered = outcome.status != 0;
        let policy = Arc::new(Policy::new(&outcome.status(), &self.agent));
        let crawl_delay = policy.crawl_delay();
        {
            let mut hosts = lock(&self.hosts);
            let h = hosts.get_mut(&hk).expect("host of a lease");
            h.record.set_robots(outcome);
            h.policies.insert(origin.to_owned(), policy);
        }
        self.note_request(hk, answered);
        let delay = self.delay(crawl_delay, took);
        Ok(if abandoned {
            delay.max(took.max(ABANDON_BACKOFF))
        } else {
            delay
        })
    }

    /// Counts a request against its host (consecutive failures end a host for the run).
    fn note_request(&self, hk: u64, answered: bool) {
        let mut hosts = lock(&self.hosts);
        let h = hosts.get_mut(&hk).expect("host of a lease");
        h.record.requests += 1;
        h.record.last_request_ms = unix_ms(SystemTime::now());
        if answered {
            h.record.consecutive_failures = 0;
        } else {
            h.record.failures += 1;
            h.record.consecutive_failures += 1;
        }
        if !answered {
            self.counters.errors.fetch_add(1, Relaxed);
        }
    }

    fn write_warc(
        &self,
        uri: &str,
        got: &Fetched,
    ) -> Result<crate::warc::writer::ExchangeLocations> {
        let block = got.response_block();
        let kind = if got.status == 304 {
            ResponseKind::NotModified(Revisit::default())
        } else {
            ResponseKind::Response {
                truncated: got.truncated(),
            }
        };
        lock(&self.warc).write_exchange(&Exchange {
            target_uri: uri,
            date: got.started,
            ip: Some(got.ip),
            request: Some(&got.raw_request),
            response: &block,
            kind,
        })
    }

    /// Writes an answered fetch to the WARC and returns its result.
    fn store(&self, job: &Job, url: &Url, got: &Fetched) -> Result<FetchResult> {
        self.counters
            .bytes
            .fetch_add(got.body.len() as u64, Relaxed);
        let loc = self.write_warc(url.as_str(), got)?;
        let mut error = got.error_kind().unwrap_or("").to_owned();
        let mut digest = 0;
        if (200..300).contains(&got.status) && got.cut != Some(super::client::Cut::ContentType) {
            let (payload_digest, capped) = digest_body(got, self.cfg.fetch.max_decoded.0);
            digest = payload_digest;
            if capped && error.is_empty() {
                error = "decoded_too_large".into();
            }
        }
        Ok(FetchResult {
            url: job.item.url.clone(),
            status: got.status,
            fetched_at_ms: unix_ms(got.started),
            duration_ms: got.duration.as_millis().min(u128::from(u32::MAX)) as u32,
            content_type: got.content_type.clone(),
            length: got.body.len() as u64,
            truncated: got.cut.is_some(),
            digest,
            warc_file: loc.response.file.clone(),
            warc_offset: loc.response.offset,
            warc_length: loc.response.length,
            etag: got.etag.clone().unwrap_or_default(),
            last_modified: got.last_modified.clone().unwrap_or_default(),
            redirect: got.location.clone().unwrap_or_default(),
            error,
            depth: job.item.depth,
            priority: job.item.priority,
        })
    }

    /// Records the result of a job of a host in the table, and emits the host when it has no
    /// URL left.
    fn finish_job(&self, job: &Job, result: FetchResult) -> Result<()> {
        let mut hosts = lock(&self.hosts);
        let Some(h) = hosts.get_mut(&job.host_key) else {
            drop(hosts);
            return self.emit(job, &result);
        };
        h.pending -= 1;
        let finished = h.pending == 0;
        let record = finished.then(|| h.record.encode());
        if finished {
            hosts.remove(&job.host_key);
        }
        drop(hosts);
        self.emit(job, &result)?;
        if let Some(rec) = record {
            lock(&self.host_out).push(&run::fp_key(job.host_key), &rec)?;
        }
        Ok(())
    }

    /// Like [`Shared::finish_job`] for a host the feeder holds itself (deferred at once).
    fn record(&self, job: &Job, state: &mut HostState, result: FetchResult) -> Result<()> {
        state.pending -= 1;
        self.emit(job, &result)
    }

    fn emit(&self, job: &Job, result: &FetchResult) -> Result<()> {
        {
            let mut t = lock(&self.tally);
            let key = if result.status > 0 {
                format!("status_{}xx", result.status / 100)
            } else {
                "no_answer".to_owned()
            };
            *t.entry(key).or_default() += 1;
            if !result.error.is_empty() {
                *t.entry(format!("error_{}", result.error)).or_default() += 1;
            }
            if result.truncated {
                *t.entry("truncated".into()).or_default() += 1;
            }
        }
        self.counters.done.fetch_add(1, Relaxed);
        lock(&self.results).push(&run::fp_key(job.fp), &result.encode())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A result without an answer.
fn error_result(job: &Job, kind: &str) -> FetchResult {
    FetchResult {
        url: job.item.url.clone(),
        error: kind.to_owned(),
        depth: job.item.depth,
        priority: job.item.priority,
        ..FetchResult::default()
    }
}

/// The body with its Content-Encoding undone, at most `cap` bytes; `true` if the cap cut it.
fn decode_body(got: &Fetched, cap: u64) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let capped = decode_into(got, cap, &mut |b| out.extend_from_slice(b));
    (out, capped)
}

/// xxh3-64 of the decoded payload (at most `cap` bytes), and whether the cap cut it.
fn digest_body(got: &Fetched, cap: u64) -> (u64, bool) {
    let mut h = Xxh3::new();
    let capped = decode_into(got, cap, &mut |b| h.update(b));
    (h.digest(), capped)
}

/// Streams the decoded payload of `got` into `sink`. A body that does not decode (a truncated
/// gzip member, a wrong coding) gives what decoded before the error; `true` if `cap` was hit.
fn decode_into(got: &Fetched, cap: u64, sink: &mut dyn FnMut(&[u8])) -> bool {
    use std::io::Read;
    let head = match crate::warc::http::read_head(&mut &got.raw_response_head[..], 1 << 20) {
        Ok(h) => h,
        Err(_) => {
            sink(&got.body);
            return false;
        }
    };
    if head.codings().is_empty() {
        let n = got
            .body
            .len()
            .min(usize::try_from(cap).unwrap_or(usize::MAX));
        sink(&got.body[..n]);
        return (got.body.len() as u64) > cap;
    }
    let mut r = match crate::warc::http::payload_reader(&head, &got.body[..], cap) {
        Ok(r) => r,
        Err(_) => return false,
    };
    let mut buf = [0u8; 16 << 10];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => sink(&buf[..n]),
            Err(e) if crate::warc::http::is_cap_exceeded(&e) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}
