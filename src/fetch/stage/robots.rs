//! robots.txt in the fetch run: an origin's policy from the run's cache or the host table, or
//! fetched (following redirects) and recorded in the host's state (see the parent module's
//! docs, step 1).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use url::Url;

use super::payload::decode_body;
use super::{lock, secs, unix_ms, HostState, Shared, ABANDON_BACKOFF};
use crate::error::Result;
use crate::fetch::client::HostClient;
use crate::records::{Capture, FetchErrorKind, OriginRobots, Policy};

impl Shared<'_> {
    /// The origin's policy for this run, from the run's cache or the host table; `None` if
    /// robots.txt must be fetched first.
    pub(super) fn policy(&self, h: &mut HostState, origin: &str) -> Option<Arc<Policy>> {
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
    pub(super) fn fetch_robots(
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
        let mut ssrf = false;
        let mut tls_failure = None;
        loop {
            let mut got = match self.fetcher.fetch_robots(client, &target) {
                Ok(g) => g,
                Err(e) if e.kind() == FetchErrorKind::Ssrf => {
                    // Refused before any byte left: no request, and nothing to ask again.
                    ssrf = true;
                    break;
                }
                Err(e) => {
                    self.counters.requests.fetch_add(1, Relaxed);
                    self.robots_requests.fetch_add(1, Relaxed);
                    // A certificate failure: unreachable, with its reason kept for the URLs. The
                    // handshake ended cleanly (no HTTP request went out, no connection was cut
                    // off mid-answer), so it earns no abandonment back-off.
                    tls_failure = Some(e.kind()).filter(|k| k.is_tls());
                    abandoned = tls_failure.is_none();
                    break; // no answer: unreachable
                }
            };
            self.counters.requests.fetch_add(1, Relaxed);
            self.robots_requests.fetch_add(1, Relaxed);
            abandoned |= got.cut.is_some();
            self.counters
                .bytes
                .fetch_add(got.body.len() as u64, Relaxed);
            self.write_warc(target.as_str(), &mut got, &Capture::default())?;
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
                outcome.body = decode_body(&got, crate::robots::MAX_ROBOTS_BYTES as u64).0;
            }
            break;
        }
        let took = t.elapsed();
        let answered = outcome.status != 0;
        let policy = Arc::new(if ssrf {
            Policy::Ssrf
        } else if let Some(kind) = tls_failure {
            Policy::Tls(kind)
        } else {
            Policy::new(&outcome.status(), &self.agent)
        });
        let crawl_delay = policy.crawl_delay();
        {
            let mut hosts = lock(&self.hosts);
            let h = hosts.get_mut(&hk).expect("host of a lease");
            h.record.set_robots(outcome);
            h.policies.insert(origin.to_owned(), policy);
        }
        let mut delay = self.delay(crawl_delay, took);
        if abandoned {
            delay = delay.max(ABANDON_BACKOFF);
        }
        if ssrf {
            // Nothing was sent: no delay earned, no failure counted against the host.
            return Ok(Duration::ZERO);
        }
        self.note_request(hk, answered, delay);
        Ok(delay)
    }
}
