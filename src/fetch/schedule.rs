//! Mercator-style politeness scheduling: one back queue per host, a heap keyed on the earliest
//! time each host may be hit again, a bounded number of active back queues, and a per-IP limit.
//!
//! This follows the frontier of the Mercator slides (IIR ch. 20; docs/design.md, References): the fetch list
//! plays the front queues (prioritize chose its URLs by priority), each active host has a
//! back queue holding its URLs, and a heap orders the back queues by the time their host may be
//! contacted next. A worker takes the host at the top of the heap once its time has come, fetches
//! one URL, and gives the host back with the delay its response earned; only then can the host
//! be taken again, so a host never has two requests in flight ("one connection per host at a
//! time"). About 3x as many back queues as workers keep every worker busy while each host waits
//! out its delay; further hosts wait in line (FIFO) until a back queue empties, which bounds
//! the memory of the stage by the active hosts, not by the fetch list.
//!
//! **Priority among ready hosts** (the slides' front queues, biased by priority): of the hosts
//! whose time has come, a worker takes the one whose next URL has the highest priority
//! ([`Prioritized`]; ties go to the host that has waited longest), and each host's URLs are in
//! priority order (the fetch stage sorts a host's URLs as it adds them). So when the deadline
//! cuts a partition short, what is left is, host by host and among the hosts in rotation, the
//! lowest-priority work, not whatever sorted last by key. Which hosts enter rotation is the
//! feeder's choice: it reads the fetch list (sorted by host key) 64 hosts ahead and adds the one
//! whose best URL ranks highest, so the order is by priority within that window, not over the
//! whole partition (which would need the fetch list in memory, or in priority order and the host
//! table by key).
//!
//! Two additions to the slides' design, both from running crawls: a host whose IP address already
//! has `per_ip` requests in flight is skipped until one of them completes (a thousand virtual
//! hosts on one server must not become a thousand parallel clients), and [`Scheduler::defer_all`]
//! ends a stage at its deadline with every unfetched URL handed back, not lost.
//!
//! The scheduler is a plain single-threaded data structure driven with explicit times, so its
//! guarantees are tested without clocks or sockets; the fetch stage wraps it in a mutex and a
//! condition variable.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The delay a host gets after a response: the largest of the configured default, the host's
/// robots.txt crawl-delay capped at `max_crawl_delay`, and `factor` times the time the response
/// took (Heritrix's delay factor: a slow host is visited less often).
pub fn politeness_delay(
    default: Duration,
    crawl_delay: Option<Duration>,
    max_crawl_delay: Duration,
    factor: f64,
    response_time: Duration,
) -> Duration {
    let earned = response_time.mul_f64(factor.max(0.0));
    let asked = crawl_delay.map_or(Duration::ZERO, |d| d.min(max_crawl_delay));
    default.max(asked).max(earned)
}

/// What the scheduler asks of an item: its priority (higher first).
pub trait Prioritized {
    /// The item's priority; hosts whose next item is higher are served first among ready ones.
    fn priority(&self) -> f64;
}

/// A priority as a heap key (total order; NaN below everything).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Prio(f64);

impl Eq for Prio {}

impl PartialOrd for Prio {
    fn partial_cmp(&self, other: &Prio) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Prio {
    fn cmp(&self, other: &Prio) -> std::cmp::Ordering {
        let key = |p: f64| if p.is_nan() { f64::NEG_INFINITY } else { p };
        key(self.0).total_cmp(&key(other.0))
    }
}

/// A URL handed to a worker: the host it belongs to (to give back with [`Scheduler::complete`])
/// and the item.
#[derive(Debug)]
pub struct Lease<T> {
    /// The host's slot in the scheduler.
    pub host: usize,
    /// The URL (or whatever the caller queued).
    pub item: T,
}

/// What [`Scheduler::next`] has for a worker.
#[derive(Debug)]
pub enum Next<T> {
    /// Fetch this now.
    Ready(Lease<T>),
    /// Nothing may be fetched before this time (or before a lease completes).
    WaitUntil(Instant),
    /// Every host is in flight or blocked by its IP: wait for a completion.
    WaitForCompletion,
    /// Nothing is left and nothing is in flight.
    Done,
}

struct Host<T> {
    name: String,
    ip: Option<IpAddr>,
    urls: VecDeque<T>,
    /// Earliest time the host may be contacted again.
    next_at: Instant,
    in_flight: bool,
    /// Whether the host sits in `ready` (or `blocked`), so it is never queued twice.
    queued: bool,
}

/// A host in line for a back queue.
struct Waiting<T> {
    name: String,
    ip: Option<IpAddr>,
    urls: VecDeque<T>,
    /// Earliest time it may be contacted, whenever it gets its back queue.
    not_before: Instant,
}

/// Per-host back queues with a heap of next-allowed times and a per-IP limit.
pub struct Scheduler<T> {
    hosts: Vec<Option<Host<T>>>,
    free_slots: Vec<usize>,
    /// Active hosts waiting for their time, earliest first (time, then slot for determinism).
    ready: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Active hosts whose time has come, highest priority of their next URL first, then the
    /// longest waiting.
    due: BinaryHeap<(Prio, Reverse<(Instant, usize)>)>,
    /// Hosts whose time has come but whose IP is at its limit, per IP, in FIFO order.
    blocked: HashMap<IpAddr, VecDeque<usize>>,
    /// Requests in flight per IP address.
    ip_in_flight: HashMap<IpAddr, u32>,
    /// Hosts not yet given a back queue.
    waiting: VecDeque<Waiting<T>>,
    max_active: usize,
    active: usize,
    per_ip: u32,
    in_flight: usize,
    queued_items: usize,
}

impl<T: Prioritized> Scheduler<T> {
    /// A scheduler with at most `max_active` back queues (hosts in rotation) and at most
    /// `per_ip` requests in flight per IP address.
    pub fn new(max_active: usize, per_ip: u32) -> Scheduler<T> {
        Scheduler {
            hosts: Vec::new(),
            free_slots: Vec::new(),
            ready: BinaryHeap::new(),
            due: BinaryHeap::new(),
            blocked: HashMap::new(),
            ip_in_flight: HashMap::new(),
            waiting: VecDeque::new(),
            max_active: max_active.max(1),
            active: 0,
            per_ip: per_ip.max(1),
            in_flight: 0,
            queued_items: 0,
        }
    }

    /// Adds a host with its URLs in fetch order; `ip` (when known) is what the per-IP limit
    /// counts. It may be contacted from `now` on, once it gets a back queue.
    pub fn add_host(&mut self, name: String, ip: Option<IpAddr>, urls: VecDeque<T>, now: Instant) {
        self.add_host_after(name, ip, urls, now, now);
    }

    /// [`Scheduler::add_host`] for a host that may not be contacted before `not_before` (the
    /// delay it earned in an earlier fetch run); it takes a back queue as usual but is not leased
    /// before then.
    pub fn add_host_after(
        &mut self,
        name: String,
        ip: Option<IpAddr>,
        urls: VecDeque<T>,
        not_before: Instant,
        now: Instant,
    ) {
        if urls.is_empty() {
            return;
        }
        self.queued_items += urls.len();
        self.waiting.push_back(Waiting {
            name,
            ip,
            urls,
            not_before,
        });
        self.activate(now);
    }

    /// URLs not yet handed out.
    pub fn queued(&self) -> usize {
        self.queued_items
    }

    /// Leases not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Hosts with a back queue / hosts waiting for one.
    pub fn hosts(&self) -> (usize, usize) {
        (self.active, self.waiting.len())
    }

    /// Name of the host in `slot`.
    pub fn host_name(&self, slot: usize) -> &str {
        &self.hosts[slot].as_ref().expect("live slot").name
    }

    /// The next URL a worker may fetch at `now`.
    pub fn next(&mut self, now: Instant) -> Next<T> {
        // Every host whose time has come competes on the priority of its next URL.
        while let Some(&Reverse((at, slot))) = self.ready.peek() {
            if at > now {
                break;
            }
            self.ready.pop();
            let host = self.hosts[slot].as_ref().expect("queued host is live");
            let p = host
                .urls
                .front()
                .map_or(f64::NEG_INFINITY, Prioritized::priority);
            self.due.push((Prio(p), Reverse((at, slot))));
        }
        while let Some((_, Reverse((_, slot)))) = self.due.pop() {
            let host = self.hosts[slot].as_mut().expect("queued host is live");
            if let Some(ip) = host.ip {
                let n = self.ip_in_flight.entry(ip).or_insert(0);
                if *n >= self.per_ip {
                    // Park it until a request to this IP completes; it stays `queued`.
                    self.blocked.entry(ip).or_default().push_back(slot);
                    continue;
                }
                *n += 1;
            }
            host.queued = false;
            host.in_flight = true;
            let item = host.urls.pop_front().expect("active hosts have URLs");
            self.queued_items -= 1;
            self.in_flight += 1;
            return Next::Ready(Lease { host: slot, item });
        }
        if let Some(&Reverse((at, _))) = self.ready.peek() {
            return Next::WaitUntil(at);
        }
        if self.in_flight > 0 {
            Next::WaitForCompletion
        } else {
            debug_assert!(self.waiting.is_empty() && self.blocked.values().all(|b| b.is_empty()));
            Next::Done
        }
    }

    /// Whether a host may be leased at `now`: one whose time has come (the per-IP limit may
    /// still park it when [`Scheduler::next`] gets to it).
    pub fn has_ready(&self, now: Instant) -> bool {
        !self.due.is_empty() || self.ready.peek().is_some_and(|&Reverse((at, _))| at <= now)
    }

    /// Gives a host back after its lease: it may be contacted again `delay` after `now`. A host
    /// with no URLs left gives its back queue to the next waiting host.
    pub fn complete(&mut self, host_slot: usize, now: Instant, delay: Duration) {
        let host = self.hosts[host_slot].as_mut().expect("leased host is live");
        assert!(host.in_flight, "complete() without a lease");
        host.in_flight = false;
        self.in_flight -= 1;
        host.next_at = now + delay;
        let ip = host.ip;
        if host.urls.is_empty() {
            self.hosts[host_slot] = None;
            self.free_slots.push(host_slot);
            self.active -= 1;
        } else {
            host.queued = true;
            self.ready.push(Reverse((host.next_at, host_slot)));
        }
        if let Some(ip) = ip {
            if let Some(n) = self.ip_in_flight.get_mut(&ip) {
                *n -= 1;
            }
            // One blocked host of this IP may go again (its own time has already come).
            if let Some(slot) = self.blocked.get_mut(&ip).and_then(|q| q.pop_front()) {
                let at = self.hosts[slot]
                    .as_ref()
                    .expect("blocked host is live")
                    .next_at;
                self.ready.push(Reverse((at, slot)));
            }
        }
        self.activate(now);
    }

    /// Puts `item` back at the front of a leased host's queue, to be handed out first when the
    /// host is completed and its delay has passed (the fetch stage does this with a URL whose
    /// origin needed its robots.txt fetched first). Call it before [`Scheduler::complete`].
    pub fn push_front(&mut self, host_slot: usize, item: T) {
        let host = self.hosts[host_slot].as_mut().expect("leased host is live");
        assert!(host.in_flight, "push_front() without a lease");
        host.urls.push_front(item);
        self.queued_items += 1;
    }

    /// Adds `item` at the back of a leased host's queue (a URL found while fetching the host,
    /// fetched in the same run). Call it before [`Scheduler::complete`].
    pub fn push_back(&mut self, host_slot: usize, item: T) {
        let host = self.hosts[host_slot].as_mut().expect("leased host is live");
        assert!(host.in_flight, "push_back() without a lease");
        host.urls.push_back(item);
        self.queued_items += 1;
    }

    /// Takes the leased host's queued items that `take` picks out of its queue, in order (the
    /// fetch stage settles, without a request, the URLs of an origin whose robots.txt just
    /// turned out unreachable). Call it before [`Scheduler::complete`].
    pub fn drain_where(&mut self, host_slot: usize, mut take: impl FnMut(&T) -> bool) -> Vec<T> {
        let host = self.hosts[host_slot].as_mut().expect("leased host is live");
        assert!(host.in_flight, "drain_where() without a lease");
        let mut out = Vec::new();
        let mut keep = VecDeque::with_capacity(host.urls.len());
        for item in host.urls.drain(..) {
            if take(&item) {
                out.push(item);
            } else {
                keep.push_back(item);
            }
        }
        host.urls = keep;
        self.queued_items -= out.len();
        out
    }

    /// Ends the schedule: every URL not handed out, by host name, in fetch order (the stage
    /// records them as deferred). Leases in flight stay valid and can still be completed.
    pub fn defer_all(&mut self) -> Vec<(String, Vec<T>)> {
        let mut out = Vec::new();
        for host in self.hosts.iter_mut().flatten() {
            if !host.urls.is_empty() {
                out.push((host.name.clone(), host.urls.drain(..).collect()));
            }
        }
        for w in self.waiting.drain(..) {
            out.push((w.name, w.urls.into_iter().collect()));
        }
        self.ready.clear();
        self.due.clear();
        self.blocked.clear();
        self.queued_items = 0;
        // Hosts not in flight are gone; those in flight are removed when they complete.
        for slot in 0..self.hosts.len() {
            if self.hosts[slot].as_ref().is_some_and(|h| !h.in_flight) {
                self.hosts[slot] = None;
                self.free_slots.push(slot);
                self.active -= 1;
            }
        }
        out
    }

    fn activate(&mut self, now: Instant) {
        while self.active < self.max_active {
            let Some(w) = self.waiting.pop_front() else {
                break;
            };
            let at = w.not_before.max(now);
            let host = Host {
                name: w.name,
                ip: w.ip,
                urls: w.urls,
                next_at: at,
                in_flight: false,
                queued: true,
            };
            let slot = match self.free_slots.pop() {
                Some(s) => {
                    self.hosts[s] = Some(host);
                    s
                }
                None => {
                    self.hosts.push(Some(host));
                    self.hosts.len() - 1
                }
            };
            self.active += 1;
            self.ready.push(Reverse((at, slot)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Plain test items: all of one priority (the order is then the time order of the heap).
    impl Prioritized for i32 {
        fn priority(&self) -> f64 {
            0.0
        }
    }

    impl Prioritized for (usize, u8) {
        fn priority(&self) -> f64 {
            0.0
        }
    }

    /// Items with a priority: `(name, priority)`.
    impl Prioritized for (&'static str, f64) {
        fn priority(&self) -> f64 {
            self.1
        }
    }

    #[test]
    fn among_ready_hosts_the_highest_priority_goes_first() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(8, 8);
        s.add_host(
            "low".into(),
            None,
            VecDeque::from([("l1", 0.1), ("l2", 0.1)]),
            t0,
        );
        s.add_host("high".into(), None, VecDeque::from([("h1", 0.9)]), t0);
        s.add_host(
            "mid".into(),
            None,
            VecDeque::from([("m1", 0.5), ("m2", 0.05)]),
            t0,
        );
        let mut order = Vec::new();
        let mut now = t0;
        for _ in 0..10 {
            match s.next(now) {
                Next::Ready(l) => {
                    order.push(l.item.0);
                    s.complete(l.host, now, Duration::ZERO);
                }
                Next::WaitUntil(t) => now = t,
                Next::WaitForCompletion => unreachable!("nothing in flight"),
                Next::Done => break,
            }
        }
        // Each pick is the best next URL among the hosts ready at that moment.
        assert_eq!(order, ["h1", "m1", "l1", "l2", "m2"]);
        // A host not ready yet waits however high its priority.
        let mut s = Scheduler::new(8, 8);
        s.add_host_after(
            "later".into(),
            None,
            VecDeque::from([("x", 1.0)]),
            t0 + Duration::from_secs(1),
            t0,
        );
        s.add_host("now".into(), None, VecDeque::from([("y", 0.0)]), t0);
        let Next::Ready(l) = s.next(t0) else {
            panic!("a ready host")
        };
        assert_eq!(l.item.0, "y");
    }

    /// `has_ready` says whether another lease is there to take, so a worker that took one
    /// knows whether to wake another: hosts whose time has come, not leased ones nor ones
    /// still waiting out their delay.
    #[test]
    fn has_ready_counts_the_hosts_another_worker_could_take() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Scheduler::new(8, 8);
        assert!(!s.has_ready(t0));
        s.add_host("a".into(), None, VecDeque::from([1, 2]), t0);
        s.add_host("b".into(), None, VecDeque::from([3]), t0);
        let Next::Ready(first) = s.next(t0) else {
            panic!()
        };
        assert!(s.has_ready(t0), "the other host is ready");
        let Next::Ready(second) = s.next(t0) else {
            panic!()
        };
        assert!(!s.has_ready(t0), "both hosts leased");
        let a = if first.item == 1 { first } else { second };
        s.complete(a.host, t0, ms(100));
        assert!(!s.has_ready(t0), "host a waits out its delay");
        assert!(s.has_ready(t0 + ms(100)));
    }

    #[test]
    fn delay_is_the_largest_of_its_parts() {
        let ms = Duration::from_millis;
        assert_eq!(
            politeness_delay(ms(100), None, ms(1000), 2.0, ms(10)),
            ms(100)
        );
        assert_eq!(
            politeness_delay(ms(100), Some(ms(500)), ms(1000), 2.0, ms(10)),
            ms(500)
        );
        assert_eq!(
            politeness_delay(ms(100), Some(ms(5000)), ms(1000), 2.0, ms(10)),
            ms(1000)
        );
        assert_eq!(
            politeness_delay(ms(100), Some(ms(500)), ms(1000), 2.0, ms(400)),
            ms(800)
        );
    }

    #[test]
    fn drain_where_takes_the_picked_items_of_a_leased_host_and_keeps_the_rest() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(4, 8);
        s.add_host("a".into(), None, VecDeque::from([1, 2, 3, 4, 5]), t0);
        let Next::Ready(l) = s.next(t0) else { panic!() };
        assert_eq!(l.item, 1);
        assert_eq!(s.drain_where(l.host, |&i| i % 2 == 0), vec![2, 4]);
        assert_eq!(s.queued(), 2);
        s.complete(l.host, t0, Duration::ZERO);
        let mut rest = Vec::new();
        while let Next::Ready(l) = s.next(t0) {
            rest.push(l.item);
            s.complete(l.host, t0, Duration::ZERO);
        }
        assert_eq!(rest, [3, 5]);
        assert!(matches!(s.next(t0), Next::Done));
    }

    #[test]
    fn a_host_waits_its_delay_and_is_never_leased_twice() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(4, 8);
        s.add_host("a".into(), None, VecDeque::from([1, 2]), t0);
        let Next::Ready(l) = s.next(t0) else { panic!() };
        assert_eq!(l.item, 1);
        // In flight: nothing else to do.
        assert!(matches!(s.next(t0), Next::WaitForCompletion));
        s.complete(l.host, t0, Duration::from_secs(1));
        match s.next(t0) {
            Next::WaitUntil(at) => assert_eq!(at, t0 + Duration::from_secs(1)),
            other => panic!("{other:?}"),
        }
        let Next::Ready(l) = s.next(t0 + Duration::from_secs(1)) else {
            panic!()
        };
        assert_eq!(l.item, 2);
        s.complete(l.host, t0 + Duration::from_secs(1), Duration::ZERO);
        assert!(matches!(s.next(t0 + Duration::from_secs(2)), Next::Done));
    }

    #[test]
    fn a_host_added_with_a_later_time_waits_for_it() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // One back queue: "b" waits in line behind "a" and keeps its time when it gets one.
        let mut s = Scheduler::new(1, 8);
        s.add_host_after("a".into(), None, VecDeque::from([1]), t0 + ms(300), t0);
        s.add_host_after("b".into(), None, VecDeque::from([2]), t0 + ms(900), t0);
        match s.next(t0) {
            Next::WaitUntil(at) => assert_eq!(at, t0 + ms(300)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(s.next(t0 + ms(299)), Next::WaitUntil(_)));
        let Next::Ready(l) = s.next(t0 + ms(300)) else {
            panic!()
        };
        assert_eq!(l.item, 1);
        s.complete(l.host, t0 + ms(310), Duration::ZERO);
        match s.next(t0 + ms(310)) {
            Next::WaitUntil(at) => assert_eq!(at, t0 + ms(900)),
            other => panic!("{other:?}"),
        }
        let Next::Ready(l) = s.next(t0 + ms(900)) else {
            panic!()
        };
        assert_eq!(l.item, 2);
        s.complete(l.host, t0 + ms(900), Duration::ZERO);
        // A time already past changes nothing.
        s.add_host_after("c".into(), None, VecDeque::from([3]), t0, t0 + ms(1000));
        assert!(matches!(s.next(t0 + ms(1000)), Next::Ready(_)));
    }

    #[test]
    fn deadline_defers_everything_unfetched() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(1, 8);
        s.add_host("a".into(), None, VecDeque::from([1, 2, 3]), t0);
        s.add_host("b".into(), None, VecDeque::from([4]), t0);
        let Next::Ready(l) = s.next(t0) else { panic!() };
        let deferred = s.defer_all();
        assert_eq!(
            deferred,
            vec![("a".into(), vec![2, 3]), ("b".into(), vec![4])]
        );
        s.complete(l.host, t0, Duration::ZERO);
        assert!(matches!(s.next(t0), Next::Done));
    }

    /// A simulated crawl: workers take leases as the scheduler allows, each fetch takes a random
    /// time; afterwards every item was fetched exactly once, no host had two leases at once, no
    /// IP had more than `per_ip`, and consecutive fetches of a host were at least its delay apart.
    fn simulate(hosts: Vec<(u8, u8, u8)>, workers: usize, max_active: usize, per_ip: u32) {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Scheduler::new(max_active, per_ip);
        let mut expected = Vec::new();
        let mut ip_of = Vec::new();
        let mut delay_of = Vec::new();
        for (h, &(n, ip, delay)) in hosts.iter().enumerate() {
            let items: VecDeque<(usize, u8)> = (0..n).map(|i| (h, i)).collect();
            expected.extend(items.iter().copied());
            let ip = IpAddr::from([10, 0, 0, ip % 4]);
            ip_of.push(ip);
            delay_of.push(ms(u64::from(delay % 5) * 10));
            s.add_host(format!("h{h}"), Some(ip), items, t0);
        }
        // (end time, slot, item) of fetches in flight.
        let mut running: Vec<(Instant, usize, (usize, u8))> = Vec::new();
        let mut last_end: HashMap<usize, Instant> = HashMap::new();
        let mut got = Vec::new();
        let mut now = t0;
        for step in 0..100_000 {
            assert!(step < 99_999, "simulation did not finish");
            // Start what may start.
            let mut wait_until = None;
            while running.len() < workers {
                match s.next(now) {
                    Next::Ready(l) => {
                        let (h, i) = l.item;
                        assert!(running.iter().all(|r| r.2 .0 != h), "host {h} leased twice");
                        if let Some(&end) = last_end.get(&h) {
                            assert!(now >= end + delay_of[h], "host {h} hit too soon");
                        }
                        let ip = ip_of[h];
                        let same_ip = running.iter().filter(|r| ip_of[r.2 .0] == ip).count();
                        assert!(same_ip < per_ip as usize, "IP limit exceeded");
                        let took = ms(1 + (h as u64 * 7 + u64::from(i) * 3) % 20);
                        running.push((now + took, l.host, (h, i)));
                    }
                    Next::WaitUntil(at) => {
                        wait_until = Some(at);
                        break;
                    }
                    Next::WaitForCompletion => break,
                    Next::Done => {
                        assert!(running.is_empty());
                        got.sort();
                        expected.sort();
                        assert_eq!(got, expected);
                        return;
                    }
                }
            }
            // Advance to the next event: a completion or a host's time.
            let next_end = running.iter().map(|r| r.0).min();
            now = match (next_end, wait_until) {
                (Some(e), Some(w)) => e.min(w),
                (Some(e), None) => e,
                (None, Some(w)) => w,
                (None, None) => panic!("stuck: nothing running and nothing to wait for"),
            };
            let mut k = 0;
            while k < running.len() {
                if running[k].0 <= now {
                    let (end, slot, item) = running.swap_remove(k);
                    last_end.insert(item.0, end);
                    got.push(item);
                    s.complete(slot, end, delay_of[item.0]);
                } else {
                    k += 1;
                }
            }
        }
    }

    proptest! {
        #[test]
        fn simulated_crawls_are_polite_and_complete(
            hosts in proptest::collection::vec((0u8..6, any::<u8>(), any::<u8>()), 0..30),
            workers in 1usize..6,
            max_active in 1usize..12,
            per_ip in 1u32..3,
        ) {
            simulate(hosts, workers, max_active, per_ip);
        }
    }
}
