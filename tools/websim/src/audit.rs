//! The politeness audit: a log of every request the server answered, and the judgement of a
//! crawler's manners drawn from it.
//!
//! The server records one small fixed-size [`Entry`] per request (three timestamps, ids, status);
//! strings (hosts, targets, user agents) are interned once, so a benchmark that fetches the same
//! page a million times costs 48 bytes a request, and a crawl of a million distinct URLs costs
//! about 100 bytes more per URL. That is fine for tests and benchmarks of a few million requests;
//! the log is never trimmed while the server runs.
//!
//! The judgement ([`audit`], in `audit/checks.rs`; this file holds the log and the report) is a
//! pure function of a [`Snapshot`] of the log and the [`Site`]'s rules, so it can be tested on
//! hand-made logs with no clocks involved. Definitions, per host
//! (the `Host` header without port; requests without a host are counted but not judged):
//!
//! - A request is **in flight** from the moment the server has read its head (`t_request`) until
//!   the server began the write that handed the last byte of its response to the kernel
//!   (`t_end`: a time taken when that write returned could be later than the client's next
//!   request on a loaded machine, the serving thread not having run again, and flag a client
//!   that waited); an aborted response ends when the server gave up on it.
//! - **concurrent**: a request starts while a request to the same host on *another* connection
//!   is in flight. Counted once per offending request, whatever the number of overlaps.
//! - **too_soon**: a request starts less than [`Site::min_delay`] after the end of the latest
//!   earlier response to that host (`t_request - max(t_end of earlier requests)`), on any
//!   connection. robots.txt fetches count like any request, in both roles: a crawler waits the
//!   delay after fetching robots.txt too. A request already reported as concurrent is not also
//!   reported as too soon. The server-side gap is never shorter than the client's own (the server
//!   ends a response before the client has read it and reads a request after it was sent), so a
//!   client that really waits is never flagged.
//! - **disallowed**: [`Site::disallowed`]`(host, user-agent, target)` is true. `/robots.txt`
//!   itself is never disallowed.
//! - **before_robots**: a request for anything but `/robots.txt` starts before the first request
//!   for that host's `/robots.txt` started (or there was none).
//! - **ignored_retry_after**: a request starts less than [`Site::retry_after`] after the end of
//!   a `429` answer to that host (a rate-limited host's "come back in N seconds").
//!
//! Per server address (the listener a connection came in on, shared by many virtual hosts),
//! when the site sets limits ([`Site::per_ip`]) and counting complete responses only (an aborted
//! one ends when the server gave up, which may be long after the client did):
//!
//! - **ip_concurrent**: a request starts while the address already has its limit of requests
//!   in flight, whatever their hosts.
//! - **ip_too_soon**: a request starts, with none in flight, less than the per-address delay
//!   after the latest response of the address ended.
//!
//! [`Site`]: crate::site::Site
//! [`Site::min_delay`]: crate::site::Site::min_delay
//! [`Site::disallowed`]: crate::site::Site::disallowed
//! [`Site::retry_after`]: crate::site::Site::retry_after
//! [`Site::per_ip`]: crate::site::Site::per_ip

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde::{Deserialize, Serialize};

mod checks;
pub use checks::audit;

/// How many examples of each kind of violation a [`Report`] lists (the counts are exact).
pub const MAX_EXAMPLES: usize = 100;

/// The target of a robots.txt request.
const ROBOTS: &str = "/robots.txt";

/// Request method, as the log stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
    /// Anything else (answered 405 by the server).
    Other,
}

impl Method {
    /// The method named `m` (case-sensitive, as HTTP methods are).
    pub fn of(m: &str) -> Method {
        match m {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            _ => Method::Other,
        }
    }
}

/// One logged request. Times are nanoseconds since the log was created; strings are ids into the
/// log's string table ([`Snapshot::str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// When the server had read the request head.
    pub t_request: u64,
    /// When the server started writing the response (equals `t_end` if nothing was written).
    pub t_start: u64,
    /// When the last byte of the response was written, or the server gave up on it.
    pub t_end: u64,
    /// Server-wide connection id ([`ConnInfo::id`]).
    pub conn: u64,
    /// Host (string id; the empty string if the request had none).
    pub host: u32,
    /// Request target (string id).
    pub target: u32,
    /// User-Agent (string id; empty if none).
    pub agent: u32,
    /// Status code sent (or that would have been sent, for a stalled response).
    pub status: u16,
    /// Method.
    pub method: Method,
    /// Whether the whole response was sent as intended (false: the client went away, a write
    /// timed out, or the server stopped).
    pub complete: bool,
}

/// One request to record, with its strings ([`Log::record`]).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Connection id.
    pub conn: u64,
    /// Host without port, lower-case ("" if none).
    pub host: &'a str,
    /// Request target.
    pub target: &'a str,
    /// User-Agent ("" if none).
    pub agent: &'a str,
    /// Method.
    pub method: Method,
    /// Status.
    pub status: u16,
    /// Whether the response was sent completely.
    pub complete: bool,
    /// Request head read (ns since the log's epoch, [`Log::now_ns`]).
    pub t_request: u64,
    /// Response start (ns).
    pub t_start: u64,
    /// Response end (ns).
    pub t_end: u64,
}

/// One client connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnInfo {
    /// Server-wide id, also in [`crate::site::Request::conn`].
    pub id: u64,
    /// Client address.
    pub peer: SocketAddr,
    /// Listener address.
    pub local: SocketAddr,
    /// When it was accepted (ns since the epoch).
    pub opened: u64,
}

#[derive(Default)]
struct Strings {
    ids: HashMap<Arc<str>, u32>,
    list: Vec<Arc<str>>,
}

impl Strings {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.list.len())
            .expect("fewer than 2^32 distinct strings in a websim log");
        let s: Arc<str> = Arc::from(s);
        self.list.push(s.clone());
        self.ids.insert(s, id);
        id
    }
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    strings: Strings,
    conns: Vec<ConnInfo>,
    rejected: u64,
}

/// The request log of one server: append-only, shared by all connection threads (one short lock
/// per request).
pub struct Log {
    epoch: Instant,
    inner: Mutex<Inner>,
}

impl Default for Log {
    fn default() -> Self {
        Log::new()
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("Log")
            .field("entries", &inner.entries.len())
            .field("connections", &inner.conns.len())
            .finish()
    }
}

impl Log {
    /// An empty log whose epoch is now.
    pub fn new() -> Log {
        let mut strings = Strings::default();
        strings.intern(""); // id 0: "no host", "no agent"
        Log {
            epoch: Instant::now(),
            inner: Mutex::new(Inner {
                strings,
                ..Inner::default()
            }),
        }
    }

    /// Nanoseconds since the log's epoch.
    pub fn now_ns(&self) -> u64 {
        self.ns_of(Instant::now())
    }

    /// `t` as nanoseconds since the log's epoch (0 if earlier).
    pub fn ns_of(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the log consistent (every update is one push).
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one request.
    pub fn record(&self, r: &Record<'_>) {
        let mut inner = self.lock();
        let host = inner.strings.intern(r.host);
        let target = inner.strings.intern(r.target);
        let agent = inner.strings.intern(r.agent);
        inner.entries.push(Entry {
            t_request: r.t_request,
            t_start: r.t_start,
            t_end: r.t_end,
            conn: r.conn,
            host,
            target,
            agent,
            status: r.status,
            method: r.method,
            complete: r.complete,
        });
    }

    /// Records a new connection.
    pub fn connection(&self, info: ConnInfo) {
        self.lock().conns.push(info);
    }

    /// Counts a connection refused because the server had `max_connections` already.
    pub fn rejected(&self) {
        self.lock().rejected += 1;
    }

    /// Number of requests logged so far.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether nothing was logged yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the log as it is now (entries in the order their responses ended).
    pub fn snapshot(&self) -> Snapshot {
        let elapsed_ns = self.now_ns();
        let inner = self.lock();
        Snapshot {
            elapsed_ns,
            entries: inner.entries.clone(),
            strings: inner.strings.list.clone(),
            conns: inner.conns.clone(),
            rejected: inner.rejected,
        }
    }
}

/// A copy of a [`Log`] at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Nanoseconds from the log's epoch to the snapshot.
    pub elapsed_ns: u64,
    /// Requests, in the order their responses ended.
    pub entries: Vec<Entry>,
    strings: Vec<Arc<str>>,
    /// Connections, in the order they were accepted.
    pub conns: Vec<ConnInfo>,
    /// Connections refused for lack of room.
    pub rejected: u64,
}

impl Snapshot {
    /// The string with id `id` (host, target or agent of an [`Entry`]).
    pub fn str(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }

    /// The connection with id `id`.
    pub fn conn(&self, id: u64) -> Option<&ConnInfo> {
        self.conns.iter().find(|c| c.id == id)
    }
}

/// A breach of politeness, with enough context to find it in a crawler's own log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Violation {
    /// A request started while another connection had a request to the host in flight.
    Concurrent {
        /// Host.
        host: String,
        /// The later request's target.
        target: String,
        /// Its connection.
        conn: u64,
        /// When it started (ms since the server started).
        at_ms: f64,
        /// A request in flight on another connection at that moment: its target.
        other_target: String,
        /// ... and its connection.
        other_conn: u64,
    },
    /// A request came sooner after the previous response than the host's delay allows.
    TooSoon {
        /// Host.
        host: String,
        /// The request's target.
        target: String,
        /// Its connection.
        conn: u64,
        /// When it started (ms since the server started).
        at_ms: f64,
        /// The target of the request whose response ended last before it.
        previous_target: String,
        /// Time from that response's end to this request (ms).
        gap_ms: f64,
        /// The host's minimum delay (ms).
        min_delay_ms: f64,
    },
    /// A fetch of a URL robots.txt disallows for the request's user agent.
    Disallowed {
        /// Host.
        host: String,
        /// Target.
        target: String,
        /// User-Agent sent.
        agent: String,
        /// Connection.
        conn: u64,
        /// When (ms since the server started).
        at_ms: f64,
    },
    /// A request came sooner after a `429` than its `Retry-After` allowed.
    IgnoredRetryAfter {
        /// Host.
        host: String,
        /// The request's target.
        target: String,
        /// Its connection.
        conn: u64,
        /// When it started (ms since the server started).
        at_ms: f64,
        /// Time from the end of the `429` to this request (ms).
        gap_ms: f64,
        /// The `Retry-After` the `429` carried (ms).
        retry_after_ms: f64,
    },
    /// A request to a server address that already had its limit of requests in flight.
    IpConcurrent {
        /// The address.
        ip: String,
        /// Host of the request.
        host: String,
        /// Target.
        target: String,
        /// When (ms since the server started).
        at_ms: f64,
        /// Requests in flight to the address at that moment.
        in_flight: u64,
    },
    /// A request to a server address sooner after its previous response than its delay.
    IpTooSoon {
        /// The address.
        ip: String,
        /// Host of the request.
        host: String,
        /// Target.
        target: String,
        /// When (ms since the server started).
        at_ms: f64,
        /// Time since the address's latest response ended (ms).
        gap_ms: f64,
        /// The per-address delay (ms).
        delay_ms: f64,
    },
    /// A fetch of a page before the host's robots.txt was requested.
    BeforeRobots {
        /// Host.
        host: String,
        /// Target.
        target: String,
        /// Connection.
        conn: u64,
        /// When (ms since the server started).
        at_ms: f64,
    },
}

/// How many violations of each kind (exact, unlike the example list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViolationCounts {
    /// Requests started while another connection was busy with the same host.
    pub concurrent: u64,
    /// Requests that came sooner than the host's minimum delay.
    pub too_soon: u64,
    /// Fetches of disallowed URLs.
    pub disallowed: u64,
    /// Fetches before the host's robots.txt.
    pub before_robots: u64,
    /// Requests sooner after a `429` than its `Retry-After`.
    #[serde(default)]
    pub ignored_retry_after: u64,
    /// Requests beyond a server address's limit of requests in flight.
    #[serde(default)]
    pub ip_concurrent: u64,
    /// Requests sooner after an address's previous response than its delay.
    #[serde(default)]
    pub ip_too_soon: u64,
}

impl ViolationCounts {
    /// All violations together.
    pub fn total(&self) -> u64 {
        self.concurrent
            + self.too_soon
            + self.disallowed
            + self.before_robots
            + self.ignored_retry_after
            + self.ip_concurrent
            + self.ip_too_soon
    }
}

/// What the audit found: counts of traffic and the violations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Seconds from the server's start to the report.
    pub elapsed_s: f64,
    /// Requests answered (all listeners, control address excluded).
    pub requests: u64,
    /// Requests whose response was cut short (client gone, timeout, shutdown).
    pub incomplete: u64,
    /// Connections accepted.
    pub connections: u64,
    /// Connections refused because `max_connections` were open.
    pub rejected_connections: u64,
    /// Requests per status code.
    pub by_status: BTreeMap<u16, u64>,
    /// Requests per host (`""`: requests without a Host header or unparseable ones).
    pub by_host: BTreeMap<String, u64>,
    /// Whether no violation was found.
    pub polite: bool,
    /// Violations per kind.
    pub counts: ViolationCounts,
    /// Up to [`MAX_EXAMPLES`] violations of each kind, in time order within a kind.
    pub violations: Vec<Violation>,
}

impl Report {
    /// The violations of one kind among the examples (`"concurrent"`, `"too_soon"`,
    /// `"disallowed"`, `"before_robots"`).
    pub fn examples(&self, kind: &str) -> Vec<&Violation> {
        self.violations
            .iter()
            .filter(|v| v.kind() == kind)
            .collect()
    }
}

impl Violation {
    /// The kind, as spelled in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Concurrent { .. } => "concurrent",
            Violation::TooSoon { .. } => "too_soon",
            Violation::Disallowed { .. } => "disallowed",
            Violation::BeforeRobots { .. } => "before_robots",
            Violation::IgnoredRetryAfter { .. } => "ignored_retry_after",
            Violation::IpConcurrent { .. } => "ip_concurrent",
            Violation::IpTooSoon { .. } => "ip_too_soon",
        }
    }
}
