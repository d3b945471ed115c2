//! The feeder: streams the fetch list into the scheduler host by host, joined with the host
//! table (see the parent module's docs), and the deadline.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use url::Url;

use super::{
    error_result, lock, max_delay, secs, HostState, Job, Sched, Shared, Work, ABANDON_BACKOFF,
    CLOCK_MARGIN,
};
use crate::error::{Error, Result};
use crate::records::{FetchErrorKind, FetchItem, HostBudgets, HostRecord};
use crate::run::{self, Cursor, RunReader};

/// Hosts the feeder reads ahead and admits by priority (its memory: these hosts' URLs).
const FEED_WINDOW: usize = 64;

/// A host read and waiting in the feeder's window: its best priority, key, URLs, old record and
/// lifetime budget spent.
type WindowHost = (f64, u64, Vec<Job>, Option<HostRecord>, u64);

/// Removes and returns the window's host with the highest best priority (the first read on
/// ties, so equal priorities keep the fetch list's order).
fn take_best(window: &mut Vec<WindowHost>) -> WindowHost {
    let mut best = 0;
    for (i, h) in window.iter().enumerate().skip(1) {
        if h.0.total_cmp(&window[best].0).is_gt() {
            best = i;
        }
    }
    window.remove(best)
}

/// A host the feeder gives the scheduler: its key and name, the address of its per-IP limit,
/// its URLs, its record, and the lifetime budget its listed URLs spent.
struct HostToAdd {
    hk: u64,
    name: String,
    ip: Option<IpAddr>,
    jobs: Vec<Job>,
    record: HostRecord,
    listed: u64,
}

/// Hosts the DNS prefetch may look up ahead of the feeder.
const DNS_AHEAD: u64 = 256;
/// Lookups the DNS prefetch runs at once.
const DNS_THREADS: usize = 8;

/// The hosts a DNS prefetch looks up: those of one of the feeder's passes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Prefetch {
    /// The first pass: hosts with listed URLs.
    Listed,
    /// The second: hosts with reserve URLs only; the feeder had fed `fed_before` hosts when
    /// it began.
    ReserveOnly { fed_before: u64 },
}

impl Shared<'_> {
    /// Looks up the names of the fetch list's hosts a little ahead of the feeder, several at a
    /// time, into the fetcher's DNS cache, so neither the feeder nor a worker waits on one slow
    /// name after another: a name that takes 50 ms costs the run 50 ms once, not 50 ms per host
    /// in a row. Names the crawl's table answers are skipped (with `[resolve] only`, all are),
    /// and so are the hosts the feeder's pass does not feed (`which`): a host with reserve URLs
    /// only is looked up in the second pass, which the window may never open. Reads the fetch
    /// list with a reader of its own; stops at `stop`.
    pub(super) fn prefetch_names(&self, path: &Path, which: Prefetch, stop: &AtomicBool) {
        if self.fetcher.table_only() {
            return;
        }
        let Ok(mut list) = RunReader::open(path) else {
            return;
        };
        let stopped = || stop.load(Relaxed);
        // The hosts the feeder fed before this pass began (the pacing counts this pass's).
        let fed_before = match which {
            Prefetch::Listed => 0,
            Prefetch::ReserveOnly { fed_before } => fed_before,
        };
        let (tx, rx) = std::sync::mpsc::sync_channel::<Url>(DNS_THREADS * 4);
        let rx = std::sync::Mutex::new(rx);
        std::thread::scope(|s| {
            for i in 0..DNS_THREADS {
                let rx = &rx;
                let _ = std::thread::Builder::new()
                    .name(format!("fetch-dns-{i}"))
                    .spawn_scoped(s, move || loop {
                        let next = lock(rx).recv();
                        let Ok(url) = next else { return };
                        if !stopped() {
                            let _ = self.fetcher.address_of(&url);
                        }
                    });
            }
            // The host being read: its key, its first URL, whether it has a listed URL.
            let mut host: Option<(u64, Option<Url>, bool)> = None;
            let mut read = 0u64;
            while !stopped() {
                let more = matches!(list.advance(), Ok(true));
                let hk = more.then(|| run::key_u64(&list.key()[..8]));
                if let (Some(hk), Some(h)) = (hk, host.as_mut()) {
                    if h.0 == hk {
                        h.2 |= !FetchItem::is_reserve_payload(list.payload());
                        continue;
                    }
                }
                // The host's records are all read: look it up if this pass feeds it.
                if let Some((_, Some(url), listed)) = host.take() {
                    let fed = listed == matches!(which, Prefetch::Listed);
                    if fed && self.fetcher.needs_dns(&url) {
                        read += 1;
                        while read
                            > (self.hosts_fed.load(Relaxed) - fed_before).saturating_add(DNS_AHEAD)
                            && !stopped()
                        {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        if tx.send(url).is_err() {
                            break;
                        }
                    }
                }
                let Some(hk) = hk else { break };
                let payload = list.payload();
                let url = FetchItem::decode(payload)
                    .ok()
                    .and_then(|i| Url::parse(&i.url).ok());
                host = Some((hk, url, !FetchItem::is_reserve_payload(payload)));
            }
            drop(tx);
        });
    }

    /// Streams the fetch list into the scheduler, host by host (see the module docs), then the
    /// hosts that have reserve URLs only ([`Self::feed_reserve`]).
    pub(super) fn feed(
        &self,
        fetchlist: &mut RunReader,
        path: &Path,
        old_hosts: Option<&Path>,
        budget_path: Option<&Path>,
    ) -> Result<()> {
        // One host per worker waits for a back queue: enough that a worker never waits for the
        // feeder, few enough that memory holds little beyond the hosts in rotation.
        let max_waiting = self.cfg.fetch.threads as usize;
        let mut old = OldHosts::open(old_hosts)?;
        let mut budget = HostBudgets::open(budget_path)?;
        let mut window: Vec<WindowHost> = Vec::with_capacity(FEED_WINDOW);
        let mut reserve_hosts = 0u64;
        let mut groups = Groups::new(fetchlist)?;
        while let Some(jobs) = groups.next(self, path)? {
            crate::interrupt::check()?;
            // Join the host with its old record, pass hosts not in the fetch list through
            // unchanged.
            let hk = jobs[0].host_key;
            let record = old.take(hk, |k, v| lock(&self.host_out).push(k, v))?;
            // The host's lifetime budget spent on listed URLs (sorted by host key too).
            let listed = budget.of(hk, |_, _| Ok(()))?;
            if jobs.iter().all(|j| j.work == Work::Reserve) {
                // Fed in the second pass, its record with it (not passed through now).
                reserve_hosts += 1;
                self.hosts_fed.fetch_add(1, Relaxed);
                continue;
            }
            let best = jobs
                .iter()
                .map(|j| j.item.priority)
                .fold(f64::NEG_INFINITY, f64::max);
            window.push((best, hk, jobs, record, listed));
            // Hosts enter rotation by priority among the next few read (a window of
            // `FEED_WINDOW`): a deadline leaves the lowest-priority hosts, not the last by key.
            if window.len() >= FEED_WINDOW {
                let (_, hk, jobs, record, listed) = take_best(&mut window);
                self.add_host(hk, jobs, record, listed, max_waiting)?;
            }
        }
        while !window.is_empty() {
            let (_, hk, jobs, record, listed) = take_best(&mut window);
            self.add_host(hk, jobs, record, listed, max_waiting)?;
        }
        old.rest(|k, v| lock(&self.host_out).push(k, v))?;
        if reserve_hosts > 0 {
            self.feed_reserve(path, old_hosts, budget_path, max_waiting)?;
        }
        Ok(())
    }

    /// The second pass over the fetch list: the hosts with reserve URLs only (a host with
    /// listed URLs too has its reserve behind them in its queue). They enter rotation once the
    /// partition's own work is done, while the cycle's window is open; once it has closed, their
    /// URLs are deferred (back to the frontier) without a request.
    fn feed_reserve(
        &self,
        path: &Path,
        old_hosts: Option<&Path>,
        budget: Option<&Path>,
        max_waiting: usize,
    ) -> Result<()> {
        self.wait_for_own_work()?;
        let mut list = RunReader::open_expect(path, crate::run::Schema::FETCHLIST)?;
        let mut old = OldHosts::open(old_hosts)?;
        let mut budget = HostBudgets::open(budget)?;
        let mut groups = Groups::new(&mut list)?;
        let stop = AtomicBool::new(false);
        let which = Prefetch::ReserveOnly {
            fed_before: self.hosts_fed.load(Relaxed),
        };
        std::thread::scope(|s| {
            // Their names ahead of this pass, if the window is still open for them.
            if self.window_open() {
                let stop = &stop;
                let _ = std::thread::Builder::new()
                    .name("fetch-dns-reserve".into())
                    .spawn_scoped(s, move || self.prefetch_names(path, which, stop));
            }
            let fed = (|| -> Result<()> {
                while let Some(jobs) = groups.next(self, path)? {
                    crate::interrupt::check()?;
                    if jobs.iter().any(|j| j.work != Work::Reserve) {
                        continue;
                    }
                    let hk = jobs[0].host_key;
                    // The first pass passed the other hosts' records through already.
                    let record = old.take(hk, |_, _| Ok(()))?;
                    let listed = budget.of(hk, |_, _| Ok(()))?;
                    if self.window_open() {
                        self.add_host(hk, jobs, record, listed, max_waiting)?;
                    } else {
                        stop.store(true, Relaxed);
                        let name = host_name(&jobs);
                        let record = record.unwrap_or_else(|| HostRecord::new(&name));
                        self.pass_host(hk, jobs, &record, FetchErrorKind::Deferred)?;
                    }
                }
                Ok(())
            })();
            stop.store(true, Relaxed);
            fed
        })
    }

    /// Waits until the partition's own work is done (every listed URL, and those followed
    /// within the cap, has a result), the window has closed, the deadline has come or a
    /// worker has failed.
    fn wait_for_own_work(&self) -> Result<()> {
        while self.base_left.load(Relaxed) > 0
            && self.window_open()
            && Instant::now() < self.deadline
            && lock(&self.failure).is_none()
        {
            crate::interrupt::check()?;
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    pub(super) fn job(&self, fetchlist: &RunReader, path: &Path) -> Result<Job> {
        let key = fetchlist.key();
        let item = FetchItem::decode(fetchlist.payload()).map_err(|e| {
            Error::corrupt(
                path,
                fetchlist.block_offset(),
                format!("fetch list record {}: {e}", hex(key)),
            )
        })?;
        Ok(Job {
            host_key: run::key_u64(&key[..8]),
            fp: run::key_u64(&key[8..16]),
            work: if item.reserve {
                Work::Reserve
            } else {
                Work::Own
            },
            item,
            hops: 0,
        })
    }

    /// Gives one host's URLs to the scheduler, waiting while enough hosts already wait.
    pub(super) fn add_host(
        &self,
        hk: u64,
        jobs: Vec<Job>,
        record: Option<HostRecord>,
        listed: u64,
        max_waiting: usize,
    ) -> Result<()> {
        let first = Url::parse(&jobs[0].item.url).ok();
        let name = host_name(&jobs);
        let mut record = record.unwrap_or_else(|| HostRecord::new(&name));
        // Parked (it failed `park_after_failed_runs` runs in a row): prioritize leaves such
        // hosts out of the fetch lists, but a list made before the park (or by hand) may name
        // one. Its URLs go back untried and the cycle does not wait for it.
        if record.parked_until > self.cycle {
            self.hosts_fed.fetch_add(1, Relaxed);
            return self.pass_host(hk, jobs, &record, FetchErrorKind::Parked);
        }
        // Back from a park: a fresh try, not the failures that parked it.
        if record.parked_until != 0 {
            record.consecutive_failures = 0;
        }
        // The address, for the per-IP limit only: a failure here is recorded by the fetch.
        // (The DNS prefetch has usually looked the name up already.)
        let ip: Option<IpAddr> = first.and_then(|u| self.fetcher.address_of(&u).ok());
        self.hosts_fed.fetch_add(1, Relaxed);
        let Some(mut st) = self.wait_for_room(max_waiting)? else {
            return Ok(());
        };
        if st.deferred || Instant::now() >= self.deadline {
            self.defer_locked(&mut st);
            drop(st);
            return self.pass_host(hk, jobs, &record, FetchErrorKind::Deferred);
        }
        let host = HostToAdd {
            hk,
            name,
            ip,
            jobs,
            record,
            listed,
        };
        self.enter_rotation(st, host);
        Ok(())
    }

    /// Waits while `max_waiting` hosts already wait for a back queue (or until the deadline,
    /// which defers the rest); `None` once a worker has failed.
    fn wait_for_room(&self, max_waiting: usize) -> Result<Option<MutexGuard<'_, Sched>>> {
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
                return Ok(None);
            }
            crate::interrupt::check()?;
        }
        Ok(Some(st))
    }

    /// A host that never enters the table: its URLs are recorded with `kind`, its record goes
    /// out as is.
    fn pass_host(
        &self,
        hk: u64,
        jobs: Vec<Job>,
        record: &HostRecord,
        kind: FetchErrorKind,
    ) -> Result<()> {
        for j in jobs {
            self.emit(&j, &error_result(&j, kind))?;
        }
        lock(&self.host_out).push(&run::fp_key(hk), &record.encode())
    }

    /// Puts a host in the table and its URLs in the scheduler (`st`, held), not to be leased
    /// before the time its last request earned, which may lie in this run if the last one
    /// ended moments ago.
    fn enter_rotation(&self, mut st: MutexGuard<'_, Sched>, host: HostToAdd) {
        let HostToAdd {
            hk,
            name,
            ip,
            mut jobs,
            record,
            listed,
        } = host;
        let now = Instant::now();
        let wait = carried_wait(
            record.next_allowed_ms,
            SystemTime::now(),
            max_delay(&self.cfg.fetch),
        )
        .max(self.restart_wait(&name, &record));
        let not_before = now.checked_add(wait).unwrap_or(now);
        let (follow_left, extra_left) = self.follow_room(&record, listed);
        if let Some(f) = &self.follow {
            // Never followed again in this run: the list's own URLs (normally in the seen set
            // already, but a fetch list made by hand need not be).
            f.queue(jobs.iter().map(|j| j.fp));
        }
        lock(&self.hosts).insert(
            hk,
            HostState {
                record,
                policies: HashMap::new(),
                pending: jobs.len(),
                client: Arc::new(self.fetcher.client()),
                follow_left,
                slowdowns: 0,
                ip,
                extra_left,
                refused_left: u64::from(self.cfg.fetch.follow_per_host),
                failed: 0,
                answered: 0,
            },
        );
        // The host's URLs highest priority first (the fetch list has them by fingerprint), so a
        // deadline leaves its least wanted ones, and its reserve last.
        jobs.sort_by(|a, b| {
            (a.window_only().cmp(&b.window_only()))
                .then(b.item.priority.total_cmp(&a.item.priority))
        });
        st.sched
            .add_host_after(name, ip, jobs.into_iter().collect(), not_before, now);
        self.publish_hosts(&st);
        drop(st);
        self.wake.notify_one();
    }

    /// URLs this run may follow on a host: `[fetch] follow_per_host`, at most the new URLs a
    /// host may bring in a cycle (`[scope] max_new_urls_per_host`), and no more than is left of
    /// its lifetime budget after the `listed` URLs prioritize gave it and those followed in
    /// earlier runs. Returns that and how many more the run may follow while the cycle's window
    /// is open ([`crate::fetch::window`]: the same limits without `follow_per_host`).
    fn follow_room(&self, record: &HostRecord, listed: u64) -> (u64, u64) {
        if self.follow.is_none() {
            return (0, 0);
        }
        let mut most = self.cfg.scope.max_new_urls_per_host;
        if let total @ 1.. = self.cfg.prioritize.max_urls_per_host_total {
            most = most.min(total.saturating_sub(listed.saturating_add(record.followed)));
        }
        let per_run = u64::from(self.cfg.fetch.follow_per_host).min(most);
        let extra = match self.window {
            Some(_) if self.cfg.fetch.follow_per_host > 0 => most - per_run,
            _ => 0,
        };
        (per_run, extra)
    }

    /// How long a host asked by a killed attempt of this fetch must still wait: from that
    /// request, the host's delay (the default, or its robots.txt crawl-delay as far as the host
    /// table knows it, capped) plus the back-off after an abandoned connection (the kill
    /// abandoned it) and the clock margin.
    fn restart_wait(&self, name: &str, record: &HostRecord) -> Duration {
        let Some(&at_ms) = self.restarted.get(name) else {
            return Duration::ZERO;
        };
        let f = &self.cfg.fetch;
        let crawl_delay = record
            .robots
            .iter()
            .filter_map(|r| crate::records::Policy::new(&r.status(), &self.agent).crawl_delay())
            .max()
            .unwrap_or_default()
            .min(secs(f.max_crawl_delay_secs));
        let gap = secs(f.default_delay_secs).max(crawl_delay) + ABANDON_BACKOFF + CLOCK_MARGIN;
        let until_ms = at_ms.saturating_add(gap.as_millis() as u64);
        carried_wait(until_ms, SystemTime::now(), max_delay(f))
    }

    pub(super) fn publish_hosts(&self, st: &Sched) {
        let (active, waiting) = st.sched.hosts();
        self.counters.hosts_active.store(active as u64, Relaxed);
        self.counters.hosts_waiting.store(waiting as u64, Relaxed);
    }

    /// At the deadline: every URL not handed out is recorded as deferred.
    pub(super) fn defer_locked(&self, st: &mut Sched) {
        if st.deferred {
            return;
        }
        st.deferred = true;
        for (_, jobs) in st.sched.defer_all() {
            for j in jobs {
                if let Err(e) = self.finish_job(&j, error_result(&j, FetchErrorKind::Deferred)) {
                    self.fail(e);
                }
            }
        }
        self.wake.notify_all();
        self.room.notify_all();
    }

    pub(super) fn fail(&self, e: Error) {
        let mut f = lock(&self.failure);
        if f.is_none() {
            *f = Some(e);
        }
    }
}

/// How long a host whose record says it may be contacted from `next_allowed_ms` (Unix
/// milliseconds) on must still wait at `now`: zero once that time has passed, at most `cap`.
fn carried_wait(next_allowed_ms: u64, now: SystemTime, cap: Duration) -> Duration {
    UNIX_EPOCH
        .checked_add(Duration::from_millis(next_allowed_ms))
        .map_or(cap, |at| at.duration_since(now).unwrap_or(Duration::ZERO))
        .min(cap)
}

/// The host name of a host's jobs (empty if the first URL does not parse).
fn host_name(jobs: &[Job]) -> String {
    Url::parse(&jobs[0].item.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The fetch list read one host at a time (it is sorted by host key).
struct Groups<'r> {
    list: &'r mut RunReader,
    /// The reader sits on a record not yet taken.
    more: bool,
}

impl<'r> Groups<'r> {
    fn new(list: &'r mut RunReader) -> Result<Groups<'r>> {
        let more = list.advance()?;
        Ok(Groups { list, more })
    }

    /// The next host's URLs, as jobs.
    fn next(&mut self, shared: &Shared<'_>, path: &Path) -> Result<Option<Vec<Job>>> {
        if !self.more {
            return Ok(None);
        }
        let first = shared.job(self.list, path)?;
        let hk = first.host_key;
        let mut jobs = vec![first];
        loop {
            self.more = self.list.advance()?;
            if !self.more || run::key_u64(&self.list.key()[..8]) != hk {
                return Ok(Some(jobs));
            }
            jobs.push(shared.job(self.list, path)?);
        }
    }
}

/// The host table a run starts from, read beside the fetch list (both sorted by host key).
struct OldHosts {
    reader: Option<RunReader>,
    /// The reader sits on a record not yet taken.
    valid: bool,
}

impl OldHosts {
    fn open(path: Option<&Path>) -> Result<OldHosts> {
        let mut reader = match path {
            Some(p) => Some(RunReader::open_expect(p, crate::run::Schema::HOSTS)?),
            None => None,
        };
        let valid = match reader.as_mut() {
            Some(r) => r.advance()?,
            None => false,
        };
        Ok(OldHosts { reader, valid })
    }

    /// The record of host `hk` (hosts asked for in ascending order), if there is one; the
    /// records of the hosts before it go to `others` (key, payload) as they are.
    fn take(
        &mut self,
        hk: u64,
        mut others: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<Option<HostRecord>> {
        let mut record = None;
        while let Some(r) = self.reader.as_mut().filter(|_| self.valid) {
            let k = run::key_u64(r.key());
            if k > hk {
                break;
            }
            if k == hk {
                record = Some(HostRecord::decode(r.payload()).map_err(|e| {
                    Error::corrupt(r.path(), 0, format!("host record {k:016x}: {e}"))
                })?);
            } else {
                others(r.key(), r.payload())?;
            }
            self.valid = r.advance()?;
        }
        Ok(record)
    }

    /// The records after the last host asked for go to `others`.
    fn rest(&mut self, mut others: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        while let Some(r) = self.reader.as_mut().filter(|_| self.valid) {
            others(r.key(), r.payload())?;
            self.valid = r.advance()?;
        }
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carried_time_is_waited_for_until_it_passes_and_never_beyond_the_cap() {
        let ms = Duration::from_millis;
        let now = UNIX_EPOCH + ms(10_000);
        let cap = ms(2_000);
        assert_eq!(carried_wait(0, now, cap), Duration::ZERO, "never contacted");
        assert_eq!(carried_wait(9_000, now, cap), Duration::ZERO, "passed");
        assert_eq!(carried_wait(10_000, now, cap), Duration::ZERO);
        assert_eq!(carried_wait(10_300, now, cap), ms(300));
        // A clock set back (or a damaged record) does not shut the host out for long.
        assert_eq!(carried_wait(99_000, now, cap), cap);
        assert_eq!(carried_wait(u64::MAX, now, cap), cap);
    }
}
