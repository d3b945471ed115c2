//! The host table of a partition (`state/pNNNN/hosts.CCCCCC.run`; design: the crawl directory): what the crawl
//! remembers about each host between cycles.
//!
//! Above all that is robots.txt. RFC 9309 §2.4 lets a crawler cache the file for up to 24 hours
//! (`robots_ttl_secs`), and refetching it every cycle would double the requests of a host that
//! gets a handful of URLs per cycle. Each [`HostRecord`] keeps, per origin (`scheme://host:port`:
//! robots.txt belongs to an origin, not to a host name), the final status of the last robots.txt
//! fetch, its time and, for a 2xx, the body (at most 500 KiB, RFC 9309 §2.5). The body is kept
//! rather than the parsed rules so that a later release with a better parser reads old tables
//! correctly and operators can see exactly what a host said.
//!
//! An *unreachable* robots.txt (5xx, 429, network error) disallows the whole origin (§2.3.1.4),
//! but only for the fetch run that saw it: the next run asks again, so a host that was down for
//! a minute is not shut out for a day.
//!
//! It also keeps when the host may be contacted again (`next_allowed_ms`): the delay a host
//! earned at the end of one fetch run (a crawl-delay, the back-off after a connection that had
//! to be cut) holds in the next one, which may start less than a second later.
//!
//! The table is keyed by host key and sorted, like the fetch list, so the fetch stage reads it
//! in one merge-join pass alongside the fetch list and writes the next version through an
//! external sort: its memory does not grow with the number of hosts.

use std::time::Duration;

use super::{Dec, DecodeError, Enc, FetchErrorKind};
use crate::robots::{AgentRules, RobotsStatus};
use crate::run::{Cursor, RunReader, Schema};

/// The last robots.txt fetch of one origin.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OriginRobots {
    /// `scheme://host[:port]` (the port only when not the scheme's default).
    pub origin: String,
    /// When it was fetched, Unix milliseconds.
    pub fetched_at_ms: u64,
    /// Final HTTP status after redirects; 0 when no answer came (network error, timeout).
    pub status: u16,
    /// The file as decoded (Content-Encoding undone), 2xx only, at most 500 KiB.
    pub body: Vec<u8>,
}

impl OriginRobots {
    /// The policy this fetch outcome sets (RFC 9309 §2.3.1): rules, allow all or disallow all.
    pub fn status(&self) -> RobotsStatus {
        if self.status == 0 {
            RobotsStatus::Unreachable
        } else {
            RobotsStatus::from_response(self.status, &self.body)
        }
    }

    /// Whether this outcome may still be used at `now_ms`: a file (or a 4xx) for `ttl`, an
    /// unreachable outcome only within the fetch run that saw it (started at `run_ms`).
    pub fn fresh(&self, now_ms: u64, ttl: Duration, run_ms: u64) -> bool {
        if matches!(self.status(), RobotsStatus::Unreachable) {
            return self.fetched_at_ms >= run_ms;
        }
        now_ms.saturating_sub(self.fetched_at_ms) < ttl.as_millis() as u64
    }
}

/// What the crawl remembers about one host ([`crate::run::Schema::HOSTS`], keyed by host key).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostRecord {
    /// The host name.
    pub host: String,
    /// robots.txt per origin, sorted by origin.
    pub robots: Vec<OriginRobots>,
    /// Requests made to the host over the whole crawl (pages and robots.txt).
    pub requests: u64,
    /// Requests that got no usable answer (network errors, timeouts, cut bodies).
    pub failures: u64,
    /// Failures in a row since the last answer; the fetch stage stops a host at
    /// `max_host_failures` and defers the rest of its URLs.
    pub consecutive_failures: u32,
    /// Last request, Unix milliseconds (0: never).
    pub last_request_ms: u64,
    /// Earliest time the host may be contacted again, Unix milliseconds (0: any time): when the
    /// last request ended plus the delay it earned (crawl-delay, back-off after an abandoned
    /// connection, ...). The next fetch run does not lease the host before it, so a run that
    /// starts right after the previous one is as polite as one run would have been.
    pub next_allowed_ms: u64,
    /// URLs of the host followed within fetch runs (same-host links of fetched pages, not in a
    /// fetch list) over the whole crawl; they count against the host's lifetime budget
    /// (`max_urls_per_host_total`) like the URLs prioritize lists.
    pub followed: u64,
    /// Fetch runs in a row in which the host failed: it had URLs and none got an answer
    /// (robots.txt unreachable, connection refused, timeouts, a TLS failure). Reset by any
    /// answer.
    pub failed_runs: u32,
    /// The first cycle that may contact the host again (0: not parked). After
    /// `[fetch] park_after_failed_runs` failed runs in a row the host is *parked*: prioritize
    /// leaves its URLs in the frontier for a number of cycles that doubles with each further
    /// failed run, up to `max_park_cycles` (docs/design.md §1, freedom (d)).
    pub parked_until: u32,
}

impl HostRecord {
    /// Version 1: up to `last_request_ms`. Version 2 adds `next_allowed_ms`, version 3
    /// `followed`, version 4 `failed_runs` and `parked_until`; a record is written with the
    /// lowest version that holds its values (zero fields left out), so host tables stay
    /// byte-identical to what earlier builds wrote.
    const VERSION: u8 = 4;

    /// The run files it is the payload of.
    pub const SCHEMA: Schema = Schema::HOSTS;

    /// A host not seen before.
    pub fn new(host: &str) -> HostRecord {
        HostRecord {
            host: host.to_owned(),
            ..HostRecord::default()
        }
    }

    /// The robots.txt outcome for `origin`, if one was recorded.
    pub fn robots_for(&self, origin: &str) -> Option<&OriginRobots> {
        self.robots.iter().find(|r| r.origin == origin)
    }

    /// Records a robots.txt outcome, replacing the origin's previous one.
    pub fn set_robots(&mut self, r: OriginRobots) {
        match self.robots.binary_search_by(|x| x.origin.cmp(&r.origin)) {
            Ok(i) => self.robots[i] = r,
            Err(i) => self.robots.insert(i, r),
        }
    }

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let v = if self.failed_runs != 0 || self.parked_until != 0 {
            4
        } else if self.followed != 0 {
            3
        } else if self.next_allowed_ms != 0 {
            2
        } else {
            1
        };
        let mut e = Enc::default();
        e.u8(v).str(&self.host).u64(self.robots.len() as u64);
        for r in &self.robots {
            e.str(&r.origin)
                .u64(r.fetched_at_ms)
                .u64(u64::from(r.status))
                .bytes(&r.body);
        }
        e.u64(self.requests)
            .u64(self.failures)
            .u64(u64::from(self.consecutive_failures))
            .u64(self.last_request_ms);
        if v >= 2 {
            e.u64(self.next_allowed_ms);
        }
        if v >= 3 {
            e.u64(self.followed);
        }
        if v >= 4 {
            e.u64(u64::from(self.failed_runs))
                .u64(u64::from(self.parked_until));
        }
        e.0
    }

    /// Decodes a payload (version 1 to 4).
    pub fn decode(b: &[u8]) -> Result<HostRecord, DecodeError> {
        let mut d = Dec(b);
        let v = d.u8("record version")?;
        if v == 0 || v > HostRecord::VERSION {
            return Err(DecodeError(format!(
                "host record version {v} is not supported (this build reads 1 to {})",
                HostRecord::VERSION
            )));
        }
        let host = d.str("host")?.to_owned();
        let n = d.u64("robots count")?;
        let mut robots = Vec::with_capacity(n.min(16) as usize);
        for _ in 0..n {
            robots.push(OriginRobots {
                origin: d.str("origin")?.to_owned(),
                fetched_at_ms: d.u64("robots fetched_at_ms")?,
                status: u16::try_from(d.u64("robots status")?)
                    .map_err(|_| DecodeError("robots status out of range".into()))?,
                body: d.bytes("robots body")?.to_vec(),
            });
        }
        let mut r = HostRecord {
            host,
            robots,
            requests: d.u64("requests")?,
            failures: d.u64("failures")?,
            consecutive_failures: u32::try_from(d.u64("consecutive_failures")?)
                .map_err(|_| DecodeError("consecutive_failures out of range".into()))?,
            last_request_ms: d.u64("last_request_ms")?,
            next_allowed_ms: 0,
            followed: 0,
            failed_runs: 0,
            parked_until: 0,
        };
        if v >= 2 {
            r.next_allowed_ms = d.u64("next_allowed_ms")?;
        }
        if v >= 3 {
            r.followed = d.u64("followed")?;
        }
        if v >= 4 {
            let small = |n: u64, what: &str| {
                u32::try_from(n).map_err(|_| DecodeError(format!("{what} out of range")))
            };
            r.failed_runs = small(d.u64("failed_runs")?, "failed_runs")?;
            r.parked_until = small(d.u64("parked_until")?, "parked_until")?;
        }
        d.end()?;
        Ok(r)
    }
}

/// The robots.txt policy of one origin for the crawl's agent, ready to check URLs with.
#[derive(Debug, Clone)]
pub enum Policy {
    /// The agent's rules from a fetched file.
    Rules(AgentRules),
    /// robots.txt unavailable (4xx): everything is allowed.
    AllowAll,
    /// robots.txt unreachable (5xx, 429, no answer): nothing is allowed this run.
    Unreachable,
    /// The host resolves only to addresses the SSRF guard refuses: nothing is fetched from it,
    /// and its URLs are given up (`ssrf`), not retried.
    Ssrf,
    /// robots.txt could not be fetched because the TLS handshake failed (an expired, wrong-name
    /// or untrusted certificate): unreachable, and its URLs are recorded with that reason (the
    /// fetch error kind, `tls_expired`, ...), retried in a later run like `robots_unreachable`.
    Tls(FetchErrorKind),
}

impl Policy {
    /// The policy of `status` for the agent with product token `agent`.
    pub fn new(status: &RobotsStatus, agent: &str) -> Policy {
        match status {
            RobotsStatus::Rules(r) => Policy::Rules(r.for_agent(agent)),
            RobotsStatus::Unavailable => Policy::AllowAll,
            RobotsStatus::Unreachable => Policy::Unreachable,
        }
    }

    /// `None` if the agent may fetch `url`; otherwise the error kind recorded for it:
    /// `robots` (disallowed), `robots_unreachable` (retried in a later run), a TLS failure's
    /// kind (likewise) or `ssrf`.
    pub fn refusal(&self, url: &str) -> Option<FetchErrorKind> {
        match self {
            Policy::Rules(r) => (!r.allowed(url)).then_some(FetchErrorKind::Robots),
            Policy::AllowAll => None,
            Policy::Unreachable => Some(FetchErrorKind::RobotsUnreachable),
            Policy::Ssrf => Some(FetchErrorKind::Ssrf),
            Policy::Tls(kind) => Some(*kind),
        }
    }

    /// The agent's crawl-delay, if the file gives one.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Policy::Rules(r) => r.crawl_delay(),
            _ => None,
        }
    }
}

/// The next (host key, count) of a host budget run (`state/pNNNN/host_budget.C.run`, schema
/// 11), or `None` at its end or without one. Prioritize writes it; the fetch stage reads
/// it too, for the room its in-run following has left.
pub fn next_budget(r: Option<&mut RunReader>) -> crate::error::Result<Option<(u64, u64)>> {
    let Some(r) = r else { return Ok(None) };
    if !r.advance()? {
        return Ok(None);
    }
    let n: [u8; 8] = r.payload().try_into().map_err(|_| {
        crate::error::Error::corrupt(r.path(), 0, "host budget count is not 8 bytes")
    })?;
    Ok(Some((crate::run::key_u64(r.key()), u64::from_le_bytes(n))))
}

/// A host budget run (`state/pNNNN/host_budget.C.run`, schema 11) read in host order beside
/// another input sorted by host key (prioritize's selection, the fetch list).
pub struct HostBudgets {
    reader: Option<RunReader>,
    /// The next (host key, count) not yet handled.
    next: Option<(u64, u64)>,
}

impl HostBudgets {
    /// The budgets of the run at `path` (none if `None`).
    pub fn open(path: Option<&std::path::Path>) -> crate::error::Result<HostBudgets> {
        let mut reader = match path {
            Some(path) => Some(RunReader::open_expect(path, Schema::HOST_BUDGET)?),
            None => None,
        };
        let next = next_budget(reader.as_mut())?;
        Ok(HostBudgets { reader, next })
    }

    /// `host`'s count so far (0 if it has none; hosts asked for in ascending order), after the
    /// hosts before it are handed to `skipped` with their counts.
    pub fn of(
        &mut self,
        host: u64,
        mut skipped: impl FnMut(u64, u64) -> crate::error::Result<()>,
    ) -> crate::error::Result<u64> {
        while let Some((h, n)) = self.next.filter(|&(h, _)| h < host) {
            skipped(h, n)?;
            self.next = next_budget(self.reader.as_mut())?;
        }
        match self.next {
            Some((h, n)) if h == host => {
                self.next = next_budget(self.reader.as_mut())?;
                Ok(n)
            }
            _ => Ok(0),
        }
    }

    /// Hands the hosts after the last one asked for to `skipped`.
    pub fn rest(
        &mut self,
        mut skipped: impl FnMut(u64, u64) -> crate::error::Result<()>,
    ) -> crate::error::Result<()> {
        while let Some((h, n)) = self.next {
            skipped(h, n)?;
            self.next = next_budget(self.reader.as_mut())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HostRecord {
        let mut h = HostRecord::new("a.test");
        h.set_robots(OriginRobots {
            origin: "https://a.test".into(),
            fetched_at_ms: 5_000,
            status: 200,
            body: b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n\xff".to_vec(),
        });
        h.set_robots(OriginRobots {
            origin: "http://a.test".into(),
            fetched_at_ms: 6_000,
            status: 503,
            body: Vec::new(),
        });
        h.requests = 12;
        h.failures = 2;
        h.consecutive_failures = 1;
        h.last_request_ms = 7_000;
        h
    }

    #[test]
    fn round_trip_refuses_prefixes_and_keeps_origins_sorted() {
        let h = sample();
        assert_eq!(h.robots[0].origin, "http://a.test");
        let b = h.encode();
        assert_eq!(HostRecord::decode(&b).unwrap(), h);
        for n in 0..b.len() {
            assert!(HostRecord::decode(&b[..n]).is_err(), "prefix {n}");
        }
    }

    #[test]
    fn version_3_carries_followed() {
        let mut r = HostRecord::new("a.example");
        r.followed = 17;
        let b = r.encode();
        assert_eq!(b[0], 3);
        assert_eq!(HostRecord::decode(&b).unwrap(), r);
        r.next_allowed_ms = 5;
        assert_eq!(HostRecord::decode(&r.encode()).unwrap(), r);
    }

    #[test]
    fn version_4_carries_the_park() {
        let mut r = sample();
        r.followed = 3;
        let v3 = r.encode();
        r.failed_runs = 2;
        r.parked_until = 7;
        let b = r.encode();
        assert_eq!(b[0], 4);
        assert_eq!(&b[1..v3.len()], &v3[1..], "version 4 appends to version 3");
        assert_eq!(HostRecord::decode(&b).unwrap(), r);
        for n in 0..b.len() {
            assert!(HostRecord::decode(&b[..n]).is_err(), "prefix {n}");
        }
        // A park alone (followed zero) still needs version 4, with the zero fields written.
        let mut p = HostRecord::new("b.example");
        p.parked_until = 3;
        assert_eq!(p.encode()[0], 4);
        assert_eq!(HostRecord::decode(&p.encode()).unwrap(), p);
    }

    #[test]
    fn version_2_carries_next_allowed_and_version_1_is_still_written_and_read() {
        // Without a next-allowed time: version 1, byte for byte what earlier builds wrote.
        let v1 = sample();
        let b = v1.encode();
        assert_eq!(b[0], 1, "next_allowed_ms zero: written as version 1");
        assert_eq!(HostRecord::decode(&b).unwrap(), v1);
        // With one: version 2, the field appended.
        let mut v2 = sample();
        v2.next_allowed_ms = 8_300;
        let b2 = v2.encode();
        assert_eq!(b2[0], 2, "next_allowed_ms needs version 2");
        assert_eq!(&b2[1..b.len()], &b[1..], "version 2 appends to version 1");
        assert_eq!(HostRecord::decode(&b2).unwrap(), v2);
        for n in 0..b2.len() {
            assert!(HostRecord::decode(&b2[..n]).is_err(), "prefix {n}");
        }
        // A version-1 payload with trailing bytes is refused, as are unknown versions.
        let mut long = b.clone();
        long.push(0);
        assert!(HostRecord::decode(&long).is_err());
        for v in [0, 5] {
            let mut other = b2.clone();
            other[0] = v;
            let e = HostRecord::decode(&other).unwrap_err();
            assert!(e.0.contains(&format!("version {v}")), "{e:?}");
        }
    }

    #[test]
    fn policies_and_freshness() {
        let h = sample();
        let ttl = Duration::from_secs(10);
        let rules = h.robots_for("https://a.test").unwrap();
        let p = Policy::new(&rules.status(), "dragnet");
        assert_eq!(
            p.refusal("https://a.test/private/x"),
            Some(FetchErrorKind::Robots)
        );
        assert_eq!(p.refusal("https://a.test/public"), None);
        assert_eq!(p.crawl_delay(), Some(Duration::from_secs(2)));
        assert!(rules.fresh(14_999, ttl, 0));
        assert!(!rules.fresh(15_000, ttl, 0));
        // 503: unreachable, disallow all, and only trusted within the run that saw it.
        let down = h.robots_for("http://a.test").unwrap();
        let p = Policy::new(&down.status(), "dragnet");
        assert_eq!(
            p.refusal("http://a.test/"),
            Some(FetchErrorKind::RobotsUnreachable)
        );
        assert!(down.fresh(6_500, ttl, 6_000));
        assert!(!down.fresh(6_500, ttl, 6_001));
        let gone = OriginRobots {
            status: 404,
            ..OriginRobots::default()
        };
        assert!(matches!(
            Policy::new(&gone.status(), "dragnet"),
            Policy::AllowAll
        ));
    }
}
