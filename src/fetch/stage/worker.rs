//! The workers: lease a host, fetch robots.txt or the URL, write the WARC and the result, give
//! the host back with its delay (see the parent module's docs).

use std::net::IpAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use url::Url;

use super::payload::{decode_body, digest_body};
use super::{lock, secs, unix_ms, with_margin, HostState, Job, Shared, Work, ABANDON_BACKOFF};
use crate::crawl::report::counter;
use crate::error::Result;
use crate::fetch::client::{Cut, Fetched, HostClient, Validators};
use crate::fetch::schedule::{politeness_delay, Lease, Next};
use crate::records::Policy;
use crate::records::{Capture, FetchErrorKind, FetchItem, FetchResult};
use crate::run;
use crate::warc::writer::{Exchange, ExchangeLocations, ResponseKind, Revisit};

/// What handling a lease gives: the host's delay, the URL to put back (robots.txt was fetched
/// instead), and the URLs of the host to follow in this run.
pub(super) type Handled = (Duration, Option<Job>, Vec<Job>);

/// URLs followed beyond the cap in the cycle's window that may wait in a partition's queues at a
/// time (about 200 bytes each: some 13 MiB).
const EXTRA_QUEUED: u64 = 1 << 16;

impl Shared<'_> {
    /// A worker: lease, fetch, give back, until the schedule is done.
    pub(super) fn work(&self) {
        loop {
            let lease = {
                let mut st = lock(&self.sched);
                loop {
                    // SIGINT or SIGTERM: stop as after a failure, nothing more handed out.
                    if let Err(e) = crate::interrupt::check() {
                        self.fail(e);
                    }
                    if lock(&self.failure).is_some() {
                        self.defer_locked(&mut st);
                    }
                    let now = Instant::now();
                    if now >= self.deadline {
                        self.defer_locked(&mut st);
                    }
                    let wait_until = match st.sched.next(now) {
                        Next::Ready(l) => {
                            // More hosts ready than this worker takes: one more worker goes on
                            // (and does the same), so wake-ups follow the work.
                            if st.sched.has_ready(now) {
                                self.wake.notify_one();
                            }
                            break l;
                        }
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
            let (delay, requeue, follows) = match self.process(&lease) {
                Ok(x) => x,
                Err(e) => {
                    self.fail(e);
                    (Duration::ZERO, None, Vec::new())
                }
            };
            let mut st = lock(&self.sched);
            if let Some(job) = requeue {
                if st.deferred {
                    if let Err(e) =
                        self.finish_job(&job, error_result(&job, FetchErrorKind::Deferred))
                    {
                        self.fail(e);
                    }
                } else if let Some((origin, kind)) = self.refused_outright(&job) {
                    // robots.txt came back unreachable (or the TLS handshake failed): this URL
                    // and the host's others of that origin are settled now, without a request,
                    // rather than each waiting for the host's turn (after a timeout, as long
                    // again) only to be refused.
                    let rest = st
                        .sched
                        .drain_where(lease.host, |j| origin_of(j).as_deref() == Some(&origin));
                    for j in std::iter::once(job).chain(rest) {
                        if let Err(e) = self.finish_job(&j, error_result(&j, kind)) {
                            self.fail(e);
                        }
                    }
                } else {
                    st.sched.push_front(lease.host, job);
                }
            }
            // Links followed in the run join the back of the host's queue.
            for job in follows {
                if st.deferred {
                    if let Err(e) =
                        self.finish_job(&job, error_result(&job, FetchErrorKind::Deferred))
                    {
                        self.fail(e);
                    }
                } else {
                    st.sched.push_back(lease.host, job);
                }
            }
            if self.failing(lease.item.host_key) {
                // The host is given up for the run: its other URLs are settled now, without a
                // request, rather than each waiting out the host's delay (after a timeout, as
                // long again) only to be refused.
                for j in st.sched.drain_where(lease.host, |_| true) {
                    if let Err(e) =
                        self.finish_job(&j, error_result(&j, FetchErrorKind::HostFailing))
                    {
                        self.fail(e);
                    }
                }
            }
            // With the margin, as `note_request` recorded it for the next run.
            let delay = with_margin(delay);
            st.sched.complete(lease.host, Instant::now(), delay);
            self.publish_hosts(&st);
            drop(st);
            // One host came back (or freed its queue for a waiting one). This worker goes back
            // for the next lease itself (and wakes another if more is ready); only a host that
            // is not ready at once needs a waiting worker's timer to cover its time. Waking a
            // worker on every completion was ~1 wasted wake-up a page; waking every worker, a
            // tenth of the stage's CPU. The feeder may go on.
            if !delay.is_zero() {
                self.wake.notify_one();
            }
            self.room.notify_one();
        }
    }

    /// Handles one lease: returns the host's delay, the URL to put back if robots.txt was
    /// fetched instead, and the URLs of the host to follow in this run.
    pub(super) fn process(&self, lease: &Lease<Job>) -> Result<Handled> {
        let job = &lease.item;
        let url = match self.refusal_before_host(job) {
            Ok(url) => url,
            Err(kind) => return self.settle(job, kind),
        };
        let origin = crate::keys::origin(&url);
        let (policy, failing, client, ip) = {
            let mut hosts = lock(&self.hosts);
            let h = hosts.get_mut(&job.host_key).expect("host of a lease");
            (
                self.policy(h, &origin),
                self.failing_host(h),
                Arc::clone(&h.client),
                h.ip,
            )
        };
        if failing {
            return self.settle(job, FetchErrorKind::HostFailing);
        }
        let Some(policy) = policy else {
            let permit = ip.map(|ip| self.ip_gate.acquire(ip, self.deadline));
            let delay = self.fetch_robots(&client, job.host_key, &url, &origin)?;
            drop(permit);
            let again = Job {
                host_key: job.host_key,
                fp: job.fp,
                item: job.item.clone(),
                hops: job.hops,
                work: job.work,
            };
            return Ok((delay, Some(again), Vec::new()));
        };
        if let Some(kind) = policy.refusal(url.as_str()) {
            return self.settle(job, kind);
        }
        self.fetch_page(job, &url, &client, ip, &policy)
    }

    /// Whether the host failed `[fetch] max_host_failures` requests in a row: given up for the
    /// rest of the run (its URLs are settled as `host_failing`, without a request).
    fn failing_host(&self, h: &HostState) -> bool {
        let max = self.cfg.fetch.max_host_failures;
        max > 0 && h.record.consecutive_failures >= max
    }

    /// [`Self::failing_host`] of the host `hk` (false once it has left the run's table).
    fn failing(&self, hk: u64) -> bool {
        lock(&self.hosts)
            .get(&hk)
            .is_some_and(|h| self.failing_host(h))
    }

    /// The job's URL, or why it is refused before its host is looked at: followed beyond the
    /// cap while the cycle's window was open and it has closed since (`deferred`: left to the
    /// frontier, which the merge queues it in as a new URL), not a URL (`url`), or out of the
    /// scope as configured now (a rule added since the URL entered the frontier applies to it
    /// too: the split applied the rules of its day).
    fn refusal_before_host(&self, job: &Job) -> std::result::Result<Url, FetchErrorKind> {
        if job.window_only() && !self.window_open() {
            if job.work == Work::Followed {
                self.extended_deferred.fetch_add(1, Relaxed);
            }
            return Err(FetchErrorKind::Deferred);
        }
        let url = Url::parse(&job.item.url).map_err(|_| FetchErrorKind::Url)?;
        let host = url.host_str().unwrap_or("");
        match self.cfg.scope.refusal(&job.item.url, host, job.item.depth) {
            Some(_) => Err(FetchErrorKind::OutOfScope),
            None => Ok(url),
        }
    }

    /// Settles a job without a request: its result records `kind`, and the host is given back
    /// at once.
    fn settle(&self, job: &Job, kind: FetchErrorKind) -> Result<Handled> {
        self.finish_job(job, error_result(job, kind))?;
        Ok((Duration::ZERO, None, Vec::new()))
    }

    /// Fetches the job's URL, which `policy` allows, over the host's `client` (the address's
    /// turn first, shared with every partition this process fetches): stores the answer,
    /// follows what it links to, and works out the delay the request earned its host.
    fn fetch_page(
        &self,
        job: &Job,
        url: &Url,
        client: &HostClient,
        ip: Option<IpAddr>,
        policy: &Policy,
    ) -> Result<Handled> {
        let validators = Validators {
            etag: Some(job.item.etag.as_str()).filter(|s| !s.is_empty()),
            last_modified: Some(job.item.last_modified.as_str()).filter(|s| !s.is_empty()),
        };
        let permit = ip.map(|ip| self.ip_gate.acquire(ip, self.deadline));
        let t = Instant::now();
        let outcome = self.fetcher.fetch_with(client, url, validators);
        let took = t.elapsed();
        drop(permit);
        // A URL refused by the SSRF guard never left the machine: not a request.
        let refused = matches!(&outcome, Err(e) if e.kind() == FetchErrorKind::Ssrf);
        if !refused {
            self.counters.requests.fetch_add(1, Relaxed);
        }
        // A connection dropped mid-response (body cut, read failed) may still be busy at the
        // server until it notices: back off before the next request to the host.
        let abandoned;
        let mut follows = Vec::new();
        // A "slow down" answer (429, 5xx), with its Retry-After.
        let mut slow_down = None;
        let result = match outcome {
            Ok(mut fetched) => {
                abandoned = fetched.cut.is_some();
                if fetched.status == 429 || fetched.status >= 500 {
                    slow_down = Some((fetched.status, fetched.retry_after));
                }
                let (r, decoded) = self.store(job, url, &mut fetched)?;
                follows = self.parse_and_follow(job, url, &fetched, (&r, decoded), policy)?;
                crate::fetch::client::recycle(fetched.body);
                r
            }
            Err(e) => {
                // A failed TLS handshake sent no request and left no connection half-read.
                abandoned = !e.kind().is_tls();
                let mut r = error_result(job, e.kind());
                r.fetched_at_ms = unix_ms(SystemTime::now() - took);
                r.duration_ms = took.as_millis().min(u128::from(u32::MAX)) as u32;
                r
            }
        };
        // A cut body (slow drip, reset, timeout) is a failure even with a status line.
        let answered = result.usable();
        let mut delay = self.delay(policy.crawl_delay(), took);
        if abandoned {
            delay = delay.max(ABANDON_BACKOFF);
        }
        if result.status > 0 {
            delay = delay.max(self.back_off(job.host_key, slow_down));
        }
        // Before the result: the host's last result sends its record to the new table.
        self.note_request(job.host_key, answered, delay);
        self.finish_job(job, result)?;
        Ok((delay, None, follows))
    }

    /// Parses the page `got` answered (its result `r`) when the fetch runs the parse
    /// ([`crate::parse::inline`]), and returns the URLs of it to fetch in this run
    /// ([`super::follow`]), counted as pending results of the host (before the page's own
    /// result, so the host stays in the table).
    fn parse_and_follow(
        &self,
        job: &Job,
        url: &Url,
        got: &Fetched,
        (r, decoded): (&FetchResult, Option<Vec<u8>>),
        policy: &Policy,
    ) -> Result<Vec<Job>> {
        let Some(parse) = &self.parse else {
            return Ok(Vec::new());
        };
        let window = self.window_open();
        let (room, refuse_room) = match &self.follow {
            Some(_) => lock(&self.hosts).get(&job.host_key).map_or((0, 0), |h| {
                let extra = if window { h.extra_left } else { 0 };
                (h.follow_left + extra, h.refused_left)
            }),
            None => (0, 0),
        };
        // A redirect is read for its target when it may be followed one hop further.
        let redirect = (300..400).contains(&got.status);
        let hops_left = job.hops < self.cfg.fetch.follow_redirects;
        let follow = self
            .follow
            .as_ref()
            .filter(|f| f.reads(got, room, hops_left));
        if follow.is_none() && !self.parse_writes {
            return Ok(Vec::new());
        }
        // Decoded outside the lock: the workers of the partition decode in parallel.
        let doc = crate::parse::inline::document(
            r,
            got.head.as_ref(),
            (&got.body[..], decoded),
            self.cfg.fetch.max_decoded.0,
            self.cfg.parse.requisites,
        );
        let host_key = crate::keys::host_key(url.host_str().unwrap_or(""));
        let mut found = super::follow::Found::take();
        let mut each = |k: &[u8], v: &[u8]| {
            if let Some(f) = follow {
                f.consider(host_key, k, v, &mut found);
            }
        };
        lock(parse).result(&run::fp_key(job.fp), r, doc.as_ref(), &mut each)?;
        let Some(follow) = follow else {
            return Ok(Vec::new());
        };
        let unqueued = follow.unqueued(&found);
        found.recycle();
        let found = unqueued;
        let (found, refused) =
            follow.select(self.cfg, url, found, policy, (room, refuse_room), redirect);
        if !refused.is_empty() {
            self.record_refused(job, refused)?;
        }
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let mut hosts = lock(&self.hosts);
        let Some(h) = hosts.get_mut(&job.host_key) else {
            return Ok(Vec::new());
        };
        // Within the cap first, then beyond it while the window is open, with at most
        // `EXTRA_QUEUED` such URLs of the partition waiting at a time (a bound on memory; a
        // link not taken now is in the parse's links, for the next cycle).
        let usual = (found.len() as u64).min(h.follow_left);
        let beyond = match window {
            true => (found.len() as u64 - usual)
                .min(h.extra_left)
                .min(EXTRA_QUEUED.saturating_sub(self.extra_queued.load(Relaxed))),
            false => 0,
        };
        self.extra_queued.fetch_add(beyond, Relaxed);
        h.follow_left -= usual;
        h.extra_left -= beyond;
        // Within the caps: the partition's own work, before the page's own result.
        self.base_left.fetch_add(usual, Relaxed);
        let n = (usual + beyond) as usize;
        h.pending += n;
        h.record.followed += n as u64;
        drop(hosts);
        self.followed.fetch_add(n as u64, Relaxed);
        self.extended.fetch_add(beyond, Relaxed);
        Ok(found
            .into_iter()
            .take(n)
            .enumerate()
            .map(|(i, c)| {
                let hops = if redirect { job.hops + 1 } else { 0 };
                let work = if (i as u64) < usual {
                    Work::Own
                } else {
                    Work::Followed
                };
                job.found_on(c, hops, work)
            })
            .collect())
    }

    /// Records the links of `job`'s page that its robots.txt refuses (`Follow::select`) as
    /// `robots` results, as the next cycle's fetch would, without a request or a lease.
    fn record_refused(&self, job: &Job, refused: Vec<super::follow::Candidate>) -> Result<()> {
        if let Some(h) = lock(&self.hosts).get_mut(&job.host_key) {
            h.refused_left = h.refused_left.saturating_sub(refused.len() as u64);
        }
        self.followed.fetch_add(refused.len() as u64, Relaxed);
        self.followed_refused
            .fetch_add(refused.len() as u64, Relaxed);
        for c in refused {
            let j = job.found_on(c, 0, Work::Own);
            self.emit(&j, &error_result(&j, FetchErrorKind::Robots))?;
        }
        Ok(())
    }

    /// The origin of `job` and the error kind, when its origin's policy refuses every URL
    /// without a request (robots.txt unreachable, a TLS failure, the SSRF guard).
    fn refused_outright(&self, job: &Job) -> Option<(String, FetchErrorKind)> {
        let origin = origin_of(job)?;
        let hosts = lock(&self.hosts);
        let kind = match hosts.get(&job.host_key)?.policies.get(&origin)?.as_ref() {
            Policy::Rules(_) | Policy::AllowAll => return None,
            p @ (Policy::Unreachable | Policy::Tls(_) | Policy::Ssrf) => {
                p.refusal(&job.item.url)?
            }
        };
        Some((origin, kind))
    }

    /// Whether the cycle's window is open ([`crate::fetch::window`]); never without one.
    pub(super) fn window_open(&self) -> bool {
        self.window.as_ref().is_some_and(|w| w.open())
    }

    /// The back-off an answer earns its host. A 429 or 503 asks the client to slow down: from
    /// the first one, `backoff_base_secs`, doubled for each such answer (or other 5xx) in a row
    /// before it, at most `backoff_max_secs`, and at least its `Retry-After` (capped at
    /// `max_retry_after_secs`). Another 5xx (500, 502, ...) may be one broken page: it counts
    /// toward the run, and slows the host down from the second in a row. After any other
    /// answer, none, and the count starts over.
    fn back_off(&self, hk: u64, slow_down: Option<(u16, Option<Duration>)>) -> Duration {
        let f = &self.cfg.fetch;
        let mut hosts = lock(&self.hosts);
        let Some(h) = hosts.get_mut(&hk) else {
            return Duration::ZERO;
        };
        let Some((status, retry_after)) = slow_down else {
            h.slowdowns = 0;
            return Duration::ZERO;
        };
        h.slowdowns = h.slowdowns.saturating_add(1);
        let n = h.slowdowns;
        drop(hosts);
        if !matches!(status, 429 | 503) && n < 2 {
            return Duration::ZERO;
        }
        *lock(&self.tally)
            .entry(counter::SLOWED_DOWN.into())
            .or_default() += 1;
        let doubling = 2f64.powi(i32::try_from(n - 1).unwrap_or(i32::MAX).min(62));
        let backoff = secs((f.backoff_base_secs * doubling).min(f.backoff_max_secs));
        let asked = retry_after.map_or(Duration::ZERO, |r| r.min(secs(f.max_retry_after_secs)));
        backoff.max(asked)
    }

    pub(super) fn delay(&self, crawl_delay: Option<Duration>, took: Duration) -> Duration {
        let f = &self.cfg.fetch;
        politeness_delay(
            secs(f.default_delay_secs),
            crawl_delay,
            secs(f.max_crawl_delay_secs),
            f.delay_factor,
            took,
        )
    }

    /// Counts a request against its host (consecutive failures end a host for the run) and
    /// records when the host may be contacted again: now plus the `delay` the request earned
    /// (with the clock margin, as the scheduler gets it), so that the next fetch run keeps it.
    pub(super) fn note_request(&self, hk: u64, answered: bool, delay: Duration) {
        let now = SystemTime::now();
        let mut hosts = lock(&self.hosts);
        let h = hosts.get_mut(&hk).expect("host of a lease");
        h.record.requests += 1;
        h.record.last_request_ms = unix_ms(now);
        // Rounded up: the next run must not come a fraction of a millisecond early.
        h.record.next_allowed_ms = (now + with_margin(delay))
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos().div_ceil(1_000_000) as u64);
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

    /// Writes the exchange: a response record, a server-not-modified revisit for a 304, or an
    /// identical-payload-digest revisit when the payload is that of the URL's last capture
    /// (`[fetch] dedup`: a whole 2xx body whose digest equals the capture's). Returns where,
    /// and whether it was a revisit of an identical payload.
    pub(super) fn write_warc(
        &self,
        uri: &str,
        got: &mut Fetched,
        capture: &Capture,
    ) -> Result<(ExchangeLocations, bool)> {
        let refers_date = |c: &Capture| Some(UNIX_EPOCH + Duration::from_micros(c.date_us));
        let identical = self.cfg.fetch.dedup
            && capture.is_known()
            && (200..300).contains(&got.status)
            && got.cut.is_none()
            && {
                let mut d = crate::warc::digest::Sha1Digest::new();
                d.update(&got.body);
                d.value() == capture.payload_digest
            };
        let kind = if got.status == 304 {
            ResponseKind::NotModified(Revisit::default())
        } else if identical {
            ResponseKind::IdenticalPayload(Revisit {
                refers_to_uri: Some(uri),
                refers_to_date: refers_date(capture),
                refers_to: Some(capture.record_id.as_str()).filter(|id| !id.is_empty()),
                payload_digest: Some(capture.payload_digest.as_str()),
            })
        } else {
            ResponseKind::Response {
                truncated: got.truncated(),
            }
        };
        // The body is compressed where it lies, its record's header written in front of it.
        let loc = lock(&self.warc).write_exchange(Exchange {
            target_uri: uri,
            date: got.started,
            ip: Some(got.ip),
            request: Some(&got.raw_request),
            response: &got.raw_response_head,
            response_rest: &[],
            response_room: Some(got.body.room()),
            response_head: got.head.as_ref(),
            kind,
        })?;
        Ok((loc, identical))
    }

    /// Writes an answered fetch to the WARC and returns its result, with the decoded payload
    /// when the parse will read it and the body had a content coding ([`Shared::decode_once`]).
    pub(super) fn store(
        &self,
        job: &Job,
        url: &Url,
        got: &mut Fetched,
    ) -> Result<(FetchResult, Option<Vec<u8>>)> {
        self.counters
            .bytes
            .fetch_add(got.body.len() as u64, Relaxed);
        let (loc, revisit) = self.write_warc(url.as_str(), got, &job.item.capture)?;
        let error = got.error_kind();
        let mut r = FetchResult {
            url: job.item.url.clone(),
            status: got.status,
            fetched_at_ms: unix_ms(got.started),
            duration_ms: got.duration.as_millis().min(u128::from(u32::MAX)) as u32,
            content_type: got.content_type.clone(),
            length: got.body.len() as u64,
            truncated: got.cut.is_some(),
            digest: 0,
            warc_file: loc.response.file.clone(),
            warc_offset: loc.response.offset,
            warc_length: loc.response.length,
            etag: got.etag.clone().unwrap_or_default(),
            last_modified: got.last_modified.clone().unwrap_or_default(),
            redirect: got.location.clone().unwrap_or_default(),
            error: error.map_or_else(String::new, |k| k.as_str().to_owned()),
            depth: job.item.depth,
            priority: job.item.priority,
            payload_digest: loc.response.payload_digest.clone().unwrap_or_default(),
            record_id: loc.response.record_id.clone(),
            warc_date_us: got
                .started
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64),
            revisit,
        };
        let mut decoded = None;
        if (200..300).contains(&got.status) && got.cut != Some(Cut::ContentType) {
            let cap = self.cfg.fetch.max_decoded.0;
            let (digest, capped) = match self.decode_once(got, &r, cap) {
                Some((body, capped)) => {
                    let digest = xxhash_rust::xxh3::xxh3_64(&body);
                    decoded = Some(body);
                    (digest, capped)
                }
                None => digest_body(got, cap),
            };
            r.digest = digest;
            if capped && error.is_none() {
                r.error = FetchErrorKind::DecodedTooLarge.as_str().to_owned();
            }
        }
        Ok((r, decoded))
    }

    /// The payload of `got` (result `r`) decoded once, at most `cap` bytes, and whether the cap
    /// cut it: for a content-coded body the parse will read, so the digest and the parse share
    /// one decoding (a brotli or gzip page was decoded twice). `None` otherwise: the digest
    /// then streams the payload without keeping it.
    fn decode_once(&self, got: &Fetched, r: &FetchResult, cap: u64) -> Option<(Vec<u8>, bool)> {
        let head = got.head.as_ref()?;
        if self.parse.is_none()
            || head.codings().is_empty()
            || !crate::parse::inline::reads(r, self.cfg.parse.requisites)
        {
            return None;
        }
        Some(decode_body(got, cap))
    }

    /// Records the result of a job of a host in the table, and emits the host when it has no
    /// URL left.
    pub(super) fn finish_job(&self, job: &Job, result: FetchResult) -> Result<()> {
        let mut hosts = lock(&self.hosts);
        let Some(h) = hosts.get_mut(&job.host_key) else {
            drop(hosts);
            return self.emit(job, &result);
        };
        h.pending -= 1;
        // A reserve URL tried counts against the host's lifetime budget, which prioritize did
        // not charge it to (`crate::prioritize`'s budget).
        if job.work == Work::Reserve && !not_tried(&result) {
            h.record.followed += 1;
        }
        match host_failed(&result) {
            Some(true) => h.failed += 1,
            Some(false) => h.answered += 1,
            None => {}
        }
        let finished = h.pending == 0;
        if finished {
            h.settle_park(self.cycle, &self.cfg.fetch);
        }
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

    pub(super) fn emit(&self, job: &Job, result: &FetchResult) -> Result<()> {
        {
            let mut t = lock(&self.tally);
            let key = if result.status > 0 {
                counter::status_class(result.status / 100)
            } else {
                counter::NO_ANSWER.to_owned()
            };
            *t.entry(key).or_default() += 1;
            if !result.error.is_empty() {
                *t.entry(counter::error(&result.error)).or_default() += 1;
            }
            if result.truncated {
                *t.entry("truncated".into()).or_default() += 1;
            }
            if result.revisit {
                *t.entry(counter::REVISITS.into()).or_default() += 1;
            }
        }
        self.counters.done.fetch_add(1, Relaxed);
        lock(&self.results).push(&run::fp_key(job.fp), &result.encode())?;
        if job.work == Work::Followed {
            self.extra_queued.fetch_sub(1, Relaxed);
        }
        if job.work == Work::Reserve && !not_tried(result) {
            self.reserve_tried.fetch_add(1, Relaxed);
        }
        // The last result of its own work: the window hears this partition is done with it.
        if !job.window_only() && self.base_left.fetch_sub(1, Relaxed) == 1 {
            if let Some(w) = &self.window {
                w.list_done(self.partition);
            }
        }
        Ok(())
    }
}
/// The origin (`scheme://host[:port]`) of a job's URL, as the policies are keyed.
fn origin_of(job: &Job) -> Option<String> {
    Url::parse(&job.item.url)
        .ok()
        .map(|u| crate::keys::origin(&u).into_owned())
}

/// Whether a result is of a URL not tried in this run (deferred, or its host parked): back to
/// the frontier as it was.
fn not_tried(r: &FetchResult) -> bool {
    matches!(
        r.error_kind(),
        Some(FetchErrorKind::Deferred | FetchErrorKind::Parked)
    )
}

/// What a result says of its host, for parking: `Some(true)` the host failed it (robots.txt
/// unreachable, the host given up for the run, a TLS failure, no answer at all), `Some(false)`
/// the host answered (any status, or robots.txt rules that refuse the URL), `None` neither (not
/// attempted: deferred, parked, a bad URL, out of scope, refused by the SSRF guard).
pub(super) fn host_failed(r: &FetchResult) -> Option<bool> {
    use FetchErrorKind as K;
    match r.error_kind() {
        Some(K::Deferred | K::Parked | K::Url | K::OutOfScope | K::Ssrf) => None,
        Some(K::RobotsUnreachable | K::HostFailing) => Some(true),
        Some(K::Robots) => Some(false),
        Some(k) if k.is_tls() => Some(true),
        _ => Some(r.status == 0),
    }
}

impl Job {
    /// The job of a link `c` found on this job's page: its host, the page's priority.
    fn found_on(&self, c: super::follow::Candidate, hops: u32, work: Work) -> Job {
        Job {
            host_key: self.host_key,
            fp: c.fp,
            item: FetchItem {
                url: c.url,
                depth: c.depth,
                priority: self.item.priority,
                ..FetchItem::default()
            },
            hops,
            work,
        }
    }
}

/// A result without an answer.
pub(super) fn error_result(job: &Job, kind: FetchErrorKind) -> FetchResult {
    FetchResult {
        url: job.item.url.clone(),
        error: kind.as_str().to_owned(),
        depth: job.item.depth,
        priority: job.item.priority,
        ..FetchResult::default()
    }
}
