//! Fetching one URL with every limit enforced: the HTTP client of the fetch stage (docs/design.md §7).
//!
//! A crawler talks to servers written by strangers, some broken and some hostile, so nothing a
//! server does may hold a worker thread or memory without bound:
//!
//! - **Timeouts** (`connect_timeout_secs`, `read_timeout_secs`, `total_timeout_secs`): a server
//!   that accepts and then says nothing, or stalls half-way, costs at most these. The total
//!   timeout ends a response that is still arriving; what was received is kept, marked
//!   `WARC-Truncated: time`.
//! - **Minimum rate** (`min_rate` after `min_rate_grace_secs`): a slow drip (one byte a second)
//!   never trips a read timeout, yet would hold a worker for hours; once the grace period is
//!   over the average rate since the request started must stay above `min_rate`, or the
//!   response is cut (`time`, error kind `too_slow`).
//! - **Body cap** (`max_body`): an endless body is read up to the cap and kept, marked
//!   `WARC-Truncated: length`. The cap applies to the bytes as sent (still content-encoded): a
//!   gzip bomb is stored compressed and small; decoding it later is bounded by `max_decoded`
//!   (`crate::warc::http`).
//! - **Header cap** (`max_header_bytes`, and the protocol engine's fixed limit of 128 header
//!   fields): a megabyte of headers is refused (`headers_too_large`) without being kept.
//! - **Content types** (`content_types`): a body of a type the crawl does not keep is not read;
//!   the head is recorded and the record marked `WARC-Truncated: unspecified`.
//!
//! **Redirects are not followed by the client.** A 3xx is the answer for its URL: it is recorded
//! as is, and its `Location` (resolved against the URL, [`Fetched::location`]) re-enters the
//! crawl as a link. Following it here would fetch a URL the scheduler never saw: no robots.txt
//! check, no politeness delay for the target host, no dedup against the seen set, and redirect
//! loops would be the client's problem. (The fetch stage fetches a same-host target later in
//! the run through the host's queue, `[fetch] follow_redirects`.) (robots.txt fetches, which must follow up to five hops,
//! loop over [`Fetcher::fetch`] themselves.)
//!
//! **Name resolution and SSRF.** A host name is looked up in the crawl's own table
//! ([`Resolver::lookup`], `[resolve]` in `crawl.toml`) first, then in system DNS; the SSRF guard
//! ([`guard::check`]) runs on every address found, and the connection goes to the first address
//! it allows (`conn.rs`), never to a name: a name cannot resolve to a public address for the
//! check and to 127.0.0.1 for the connection (DNS rebinding). There is no proxy support for the
//! same reason (a proxy would resolve the name itself). Only the first allowed address is tried,
//! so [`Fetched::ip`] is the address actually used.
//!
//! **HTTP/1.1** is ureq's protocol engine (`ureq-proto`'s `Call`): told the request (a GET of
//! the URI), it skips 1xx answers, frames the body (`Content-Length`, chunked, or to the
//! connection's close) and says whether the connection may be kept. The response head is parsed
//! here, once (`head.rs`, with `httparse` as the engine parses it, at most 128 fields), and the
//! engine is given only its status line and framing fields (`Content-Length`,
//! `Transfer-Encoding`, `Connection`): it decides from those alone, and building its header map
//! of every field cost ~4% of a crawl. The request's head is written here (below); the I/O
//! around both is `conn.rs`: connections, timeouts, keep-alive (at most two idle connections a
//! host), TLS. A body of known length (`Content-Length`, nearly every page) is read here without
//! the engine, which would copy it out of the connection's buffer: the buffer it came in
//! becomes the body's, the rest is read straight after it (`body.rs`), and the connection is
//! kept by what the head says as the engine would decide it (`head.rs`, held to the engine's
//! decision by its tests).
//!
//! **Raw bytes.** The request block of the WARC is the bytes sent: this module writes the
//! request's head itself (the engine is told the method and URI, to frame the answer; its own
//! rendering is not sent), and refuses a header value that could end a header early. The
//! protocol engine removes chunked framing, so the exact response bytes on the wire are not
//! kept. As many crawlers built on high-level clients do, the response block is reconstructed:
//! the status line (`HTTP/1.1`, the status, its canonical reason phrase), the headers as received
//! but grouped by name as a header map orders them (names lower-cased), minus
//! `Transfer-Encoding`, a blank line, then the body de-chunked but still content-encoded (no
//! decompression here; `Accept-Encoding: gzip, deflate, br` is sent by us), possibly cut short
//! ([`Fetched::cut`]).
//! `crate::warc::http` decodes such a block like any other.
//!
//! **Connections.** Each host in rotation gets a [`HostClient`], which keeps the host's one
//! connection alive between requests (keep-alive) and closes it when the host leaves rotation.
//! The fetch stage's scheduler never has two requests to one host in flight, so whichever worker
//! takes the host next reuses that connection. A kept connection is probed once before reuse,
//! with one `recv(MSG_PEEK)`. TLS is rustls with one configuration for the whole stage (`tls.rs`:
//! Mozilla's roots, or the system's, plus the crawl's `extra_ca_files`); a certificate failure
//! is the URL's answer (error kind `tls`, with rustls's reason), never accepted.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ureq_proto::client::{Call, RecvResponseResult, SendRequestResult};
use ureq_proto::http::{self, Uri};
use ureq_proto::BodyMode;
use url::Url;

use crate::config::fetch::FetchSection;
pub use crate::fetch::conn::HostClient;
use crate::fetch::conn::{Conn, ConnKey, Limits};
use crate::fetch::guard;
use crate::fetch::tls;
use crate::records::FetchErrorKind;
use crate::resolve::{DnsCache, Lookup, Resolver, SystemLookup};
use crate::warc::http::HttpHead;
use crate::warc::Truncated;

mod body;
pub use body::{recycle, Body};
mod head;

/// Validators from an earlier fetch, for a conditional GET.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Validators<'a> {
    /// Sent as `If-None-Match`.
    pub etag: Option<&'a str>,
    /// Sent as `If-Modified-Since`.
    pub last_modified: Option<&'a str>,
}

/// Why a response body was not read to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The body reached `max_body`.
    Length,
    /// The transfer fell below `min_rate` after the grace period.
    TooSlow,
    /// The total or read timeout ended the transfer.
    Timeout,
    /// The connection was closed or reset before the body ended.
    Disconnect,
    /// The media type is not one the crawl keeps: the body was not read.
    ContentType,
}

impl Cut {
    /// The `WARC-Truncated` value.
    pub fn truncated(self) -> Truncated {
        match self {
            Cut::Length => Truncated::Length,
            Cut::TooSlow | Cut::Timeout => Truncated::Time,
            Cut::Disconnect => Truncated::Disconnect,
            Cut::ContentType => Truncated::Unspecified,
        }
    }

    /// The error kind for the fetch result (`FetchResult::error`), if the cut makes the
    /// response unusable: `too_slow`, `timeout`, `disconnect`; `None` for the size cap and the
    /// content-type filter (the record is still what the crawl wants).
    pub fn error_kind(self) -> Option<FetchErrorKind> {
        match self {
            Cut::TooSlow => Some(FetchErrorKind::TooSlow),
            Cut::Timeout => Some(FetchErrorKind::Timeout),
            Cut::Disconnect => Some(FetchErrorKind::Disconnect),
            Cut::Length | Cut::ContentType => None,
        }
    }
}

/// One answered fetch.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// HTTP status.
    pub status: u16,
    /// The request's head, as sent.
    pub raw_request: Vec<u8>,
    /// Status line and headers of the response, ending with the blank line.
    pub raw_response_head: Vec<u8>,
    /// `raw_response_head` parsed, once for the WARC index line, the payload's decoding and the
    /// parse (`None` if it does not parse, which a head this client wrote always does).
    pub head: Option<HttpHead>,
    /// The body as received: de-chunked, still content-encoded, at most `max_body` bytes (with
    /// room in front of it for its WARC record's header, [`Body`]).
    pub body: Body,
    /// Why the body is incomplete, if it is.
    pub cut: Option<Cut>,
    /// The address connected to.
    pub ip: IpAddr,
    /// When the fetch started.
    pub started: SystemTime,
    /// How long it took, up to the last body byte kept.
    pub duration: Duration,
    /// Media type without parameters, lower-case (`text/html`); empty if none.
    pub content_type: String,
    /// `ETag`, if sent.
    pub etag: Option<String>,
    /// `Last-Modified`, if sent.
    pub last_modified: Option<String>,
    /// `Location` of a 3xx, resolved against the URL, without user information.
    pub location: Option<String>,
    /// `Retry-After` of a 429 or 503 (RFC 9110 §10.2.3: seconds, or an HTTP date, taken from
    /// now).
    pub retry_after: Option<Duration>,
}

impl Fetched {
    /// `WARC-Truncated`, if the body is incomplete.
    pub fn truncated(&self) -> Option<Truncated> {
        self.cut.map(Cut::truncated)
    }

    /// The error kind for `FetchResult::error`, if the answer is not usable.
    pub fn error_kind(&self) -> Option<FetchErrorKind> {
        self.cut.and_then(Cut::error_kind)
    }

    /// An answer as far as its head: status, the head's bytes and the fields the crawl reads
    /// (content type, validators, a redirect's `Location`, a `Retry-After`); no body yet.
    fn from_head(
        url: &Url,
        received: head::Received,
        raw_request: Vec<u8>,
        ip: IpAddr,
        started: SystemTime,
    ) -> Fetched {
        let status = received.status;
        let content_type = received
            .content_type
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let location = if (300..400).contains(&status) {
            // Without user information: a Location's credentials reach no record, no URL db and
            // no robots.txt request (links take the target through canonicalization as well).
            received.location.and_then(|l| {
                let mut to = url.join(&l).ok()?;
                crate::keys::strip_userinfo(&mut to);
                Some(String::from(to))
            })
        } else {
            None
        };
        Fetched {
            status,
            raw_request,
            raw_response_head: received.bytes,
            head: received.head,
            body: Body::default(),
            cut: None,
            ip,
            started,
            duration: Duration::ZERO,
            content_type,
            etag: received.etag,
            last_modified: received.last_modified,
            location,
            retry_after: matches!(status, 429 | 503)
                .then(|| received.retry_after.and_then(|v| retry_after(&v)))
                .flatten(),
        }
    }

    /// The WARC response block: head then body.
    pub fn response_block(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.raw_response_head.len() + self.body.len());
        b.extend_from_slice(&self.raw_response_head);
        b.extend_from_slice(&self.body);
        b
    }
}

/// A `Retry-After` value: delay-seconds, or an HTTP date (a date in the past is no delay).
pub(crate) fn retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(v.parse().unwrap_or(u64::MAX)));
    }
    let at = crate::util::parse_http_date(v)?;
    Some(Duration::from_secs(
        at.saturating_sub(crate::util::unix_now()),
    ))
}

/// A failed fetch: a kind for the fetch result and a detail for logs.
#[derive(Clone, Debug)]
pub struct FetchError {
    /// What went wrong.
    pub kind: FetchErrorKind,
    /// The address tried, if one was chosen.
    pub ip: Option<IpAddr>,
    /// A human-readable detail.
    pub detail: String,
}

impl FetchError {
    fn new(kind: FetchErrorKind, ip: Option<IpAddr>, detail: impl Into<String>) -> FetchError {
        FetchError {
            kind,
            ip,
            detail: detail.into(),
        }
    }

    /// What went wrong, as `FetchResult::error` records it ([`FetchErrorKind::as_str`]:
    /// `dns`, `ssrf`, `timeout`, ...).
    pub fn kind(&self) -> FetchErrorKind {
        self.kind
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

impl std::error::Error for FetchError {}

/// A URL as the client sends it: checked (`http` or `https`, a host, a port), without user
/// information and fragment.
struct Request<'a> {
    host: url::Host<&'a str>,
    port: u16,
    /// The `Host` header: the host, and the port when the URL names one.
    host_header: String,
    /// The request target: the path and the query.
    target: String,
    /// What the protocol engine asks for (its request line and `Host`).
    uri: Uri,
}

impl Request<'_> {
    fn of(url: &Url) -> Result<Request<'_>, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(url_error(url, "not an http or https URL"));
        }
        let host = url.host().ok_or_else(|| url_error(url, "no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| url_error(url, "no port"))?;
        let host_str = url.host_str().unwrap_or_default();
        // Each piece pushed, not formatted: this runs for every request.
        let mut host_header = String::with_capacity(host_str.len() + 6);
        host_header.push_str(host_str);
        if let Some(p) = url.port() {
            host_header.push(':');
            host_header.push_str(itoa::Buffer::new().format(p));
        }
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        // No user info and no fragment on the wire.
        let mut text =
            String::with_capacity(url.scheme().len() + 3 + host_header.len() + target.len());
        for piece in [url.scheme(), "://", &host_header, &target] {
            text.push_str(piece);
        }
        let uri: Uri = text
            .parse()
            .map_err(|e: http::uri::InvalidUri| url_error(url, &e.to_string()))?;
        Ok(Request {
            host,
            port,
            host_header,
            target,
            uri,
        })
    }
}

/// A `url` error: `url` cannot be fetched, and why.
fn url_error(url: &Url, why: &str) -> FetchError {
    FetchError::new(FetchErrorKind::Url, None, format!("{url}: {why}"))
}

/// Fetches URLs with the limits of a [`FetchSection`]; shared by the workers of a fetch stage.
pub struct Fetcher {
    /// The idle connections of [`Fetcher::fetch`] (tests, one-off fetches).
    shared: HostClient,
    resolver: Arc<Resolver>,
    /// Answers of the system resolver (or a test's [`Lookup`]) for names the table lacks.
    dns: DnsCache,
    cfg: FetchSection,
    tls: Arc<rustls::ClientConfig>,
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.001))
}

impl Fetcher {
    /// A fetcher with `cfg`'s limits, resolving through `resolver` before DNS.
    pub fn new(cfg: &FetchSection, resolver: Arc<Resolver>) -> Fetcher {
        let dns = DnsCache::new(Arc::new(SystemLookup), resolver.cache_limits());
        Fetcher {
            shared: HostClient::default(),
            resolver,
            dns,
            cfg: cfg.clone(),
            tls: tls::default_config(),
        }
    }

    /// The fetcher asking `lookup` instead of the system resolver for names the crawl's table
    /// lacks (tests count lookups with it).
    pub fn with_lookup(mut self, lookup: Arc<dyn Lookup>) -> Fetcher {
        self.dns = DnsCache::new(lookup, self.resolver.cache_limits());
        self
    }

    /// Lookups sent to the system resolver (cache misses) so far.
    pub fn dns_lookups(&self) -> u64 {
        self.dns.lookups()
    }

    /// The fetcher with another TLS configuration ([`tls::client_config`]: the crawl's
    /// `tls_roots` and `extra_ca_files`) instead of Mozilla's roots alone.
    pub fn with_tls(mut self, tls: Arc<rustls::ClientConfig>) -> Fetcher {
        self.tls = tls;
        self
    }

    /// A keep-alive client for one host (see [`HostClient`]).
    pub fn client(&self) -> HostClient {
        HostClient::default()
    }

    /// Whether the crawl's table is the only source of addresses (`[resolve] only`).
    pub fn table_only(&self) -> bool {
        self.resolver.only()
    }

    /// Whether resolving `url`'s host may ask the system resolver (a name the crawl's table
    /// lacks, and the table is not the only source): worth looking up ahead of time.
    pub fn needs_dns(&self, url: &Url) -> bool {
        let (Some(url::Host::Domain(name)), Some(port)) = (url.host(), url.port_or_known_default())
        else {
            return false;
        };
        !self.resolver.only() && self.resolver.lookup(name, port).is_none()
    }

    /// The address a fetch of `url` would connect to (the crawl's table, then DNS, then the SSRF
    /// guard), or why there is none. The fetch stage asks once per host, for the per-IP limit.
    pub fn address_of(&self, url: &Url) -> Result<IpAddr, FetchError> {
        let host = url.host().ok_or_else(|| url_error(url, "no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| url_error(url, "no port"))?;
        self.resolve(&host, port)
    }

    /// Resolves `host` (the crawl's table, then DNS) and returns the first address the SSRF
    /// guard allows.
    fn resolve(&self, host: &url::Host<&str>, port: u16) -> Result<IpAddr, FetchError> {
        let addrs: Vec<IpAddr> = match host {
            url::Host::Ipv4(a) => vec![IpAddr::V4(*a)],
            url::Host::Ipv6(a) => vec![IpAddr::V6(*a)],
            url::Host::Domain(name) => match self.resolver.lookup(name, port) {
                Some(a) => a.to_vec(),
                None if self.resolver.only() => {
                    return Err(FetchError::new(
                        FetchErrorKind::Dns,
                        None,
                        format!("{name}: not in the crawl's resolve table ([resolve] only = true)"),
                    ))
                }
                None => self
                    .dns
                    .resolve(name, port)
                    .map_err(|e| FetchError::new(FetchErrorKind::Dns, None, e))?
                    .to_vec(),
            },
        };
        let mut refused = None;
        for a in &addrs {
            match guard::check(*a, self.cfg.allow_private_addresses) {
                Ok(()) => return Ok(*a),
                Err(r) => refused = Some((*a, r)),
            }
        }
        Err(match refused {
            Some((a, r)) => FetchError::new(
                FetchErrorKind::Ssrf,
                Some(a),
                format!("{host} resolves to {a}, a {}", r.describe()),
            ),
            None => FetchError::new(FetchErrorKind::Dns, None, format!("{host}: no address")),
        })
    }

    /// Fetches `url` once (GET, redirects not followed), with `validators` for a conditional
    /// GET. An answer with an incomplete body is still `Ok` (see [`Fetched::cut`]).
    pub fn fetch(&self, url: &Url, validators: Validators<'_>) -> Result<Fetched, FetchError> {
        self.get(&self.shared, url, validators, false)
    }

    /// [`Fetcher::fetch`] over `client`'s connection.
    pub fn fetch_with(
        &self,
        client: &HostClient,
        url: &Url,
        validators: Validators<'_>,
    ) -> Result<Fetched, FetchError> {
        self.get(client, url, validators, false)
    }

    /// Fetches a `/robots.txt` once (redirects not followed: the caller follows up to
    /// [`crate::robots::MAX_REDIRECTS`]): like [`Fetcher::fetch`], but whatever the
    /// `content_types` filter says the body is read, and only up to
    /// [`crate::robots::MAX_ROBOTS_BYTES`] (RFC 9309 §2.5), or `max_body` if smaller.
    pub fn fetch_robots(&self, client: &HostClient, url: &Url) -> Result<Fetched, FetchError> {
        self.get(client, url, Validators::default(), true)
    }

    /// One GET of `url` over `client`'s connection: the address resolved and checked, the
    /// request sent, the head read ([`Fetched::from_head`]), then the body if the crawl keeps
    /// it (`robots`: a robots.txt, always read, to its own cap).
    fn get(
        &self,
        client: &HostClient,
        url: &Url,
        validators: Validators<'_>,
        robots: bool,
    ) -> Result<Fetched, FetchError> {
        let req = Request::of(url)?;
        let start = Instant::now();
        let started = SystemTime::now();
        let ip = self.resolve(&req.host, req.port)?;
        let limits = Limits {
            connect: secs(self.cfg.connect_timeout_secs),
            per_io: secs(self.cfg.read_timeout_secs),
            deadline: start + secs(self.cfg.total_timeout_secs),
        };

        let headers = self.headers(&req.host_header, validators);
        let mut raw_request = Vec::with_capacity(256);
        for piece in ["GET ", &req.target, " HTTP/1.1\r\n"] {
            raw_request.extend_from_slice(piece.as_bytes());
        }
        // The request's head is sent as the WARC records it ([`Fetched::raw_request`]); a value
        // that could end a header early is refused, not sent.
        for (n, v) in &headers {
            if let Err(why) = crate::config::fetch::header_value(v) {
                return Err(url_error(url, &format!("{n}: {why}")));
            }
            for piece in [n, ": ", v, "\r\n"] {
                raw_request.extend_from_slice(piece.as_bytes());
            }
        }
        raw_request.extend_from_slice(b"\r\n");
        // The protocol engine is told what was asked (a GET of this URI), to frame the answer.
        let mut request = http::Request::new(());
        *request.uri_mut() = req.uri;

        let key = ConnKey {
            addr: SocketAddr::new(ip, req.port),
            tls_name: (url.scheme() == "https").then(|| {
                let h = url.host_str().unwrap_or_default();
                h.trim_start_matches('[').trim_end_matches(']').to_string()
            }),
        };
        let mut conn = match client.take(&key) {
            Some(c) => c,
            None => Conn::open(key, &self.tls, limits).map_err(|e| io_error(&e, ip))?,
        };
        let (received, next) = exchange(&mut conn, request, &raw_request, limits, &self.cfg, ip)?;
        // A body's announced length (at most the cap) sizes its buffer: no regrowth copies.
        let length_hint = received.content_length;
        let close = received.close;
        let mut fetched = Fetched::from_head(url, received, raw_request, ip, started);
        // The body's call, or whether the connection may be kept when there is no body.
        let (body_call, mut keep) = match next {
            RecvResponseResult::RecvBody(c) => (Some(c), false),
            RecvResponseResult::Redirect(c) => (None, !c.must_close_connection()),
            RecvResponseResult::Cleanup(c) => (None, !c.must_close_connection()),
        };
        if robots || self.wants(&fetched.content_type) {
            let max = usize::try_from(self.cfg.max_body.0).unwrap_or(usize::MAX);
            let max = if robots {
                max.min(crate::robots::MAX_ROBOTS_BYTES)
            } else {
                max
            };
            let hint = length_hint.map_or(0, |n| n.min(max));
            let mode = body_call.as_ref().map(|c| c.body_mode());
            (fetched.body, fetched.cut) = match (body_call, mode) {
                // A body of known length is read without the engine, and without a copy.
                (Some(_), Some(BodyMode::LengthDelimited(n))) => {
                    let (body, cut, k) = body::read_known_length(
                        &self.cfg,
                        &mut conn,
                        limits,
                        start,
                        (n, max),
                        close,
                    );
                    keep = k;
                    (body, cut)
                }
                (Some(call), _) => {
                    let mut stream = body::BodyStream::new(&mut conn, call, limits);
                    let read = body::read_body(&self.cfg, &mut stream, start, max, hint);
                    keep = stream.keep() && read.1.is_none();
                    read
                }
                (None, _) => body::read_body(&self.cfg, io::empty(), start, max, 0),
            };
        } else {
            // The body is not read: the connection cannot take another request.
            fetched.cut = Some(Cut::ContentType);
            keep &= body_call.is_none();
        }
        if keep {
            client.give(conn);
        }
        fetched.duration = start.elapsed();
        Ok(fetched)
    }

    /// The request's headers, in the order sent: `Host`, `User-Agent`, `Accept`,
    /// `Accept-Encoding`, then `From` and the validators when there are.
    fn headers<'a>(
        &'a self,
        host_header: &'a str,
        validators: Validators<'a>,
    ) -> Vec<(&'static str, &'a str)> {
        let mut headers: Vec<(&str, &str)> = vec![
            ("Host", host_header),
            ("User-Agent", &self.cfg.user_agent),
            ("Accept", "*/*"),
            ("Accept-Encoding", "gzip, deflate, br"),
        ];
        if !self.cfg.from.is_empty() {
            headers.push(("From", &self.cfg.from));
        }
        if let Some(e) = validators.etag {
            headers.push(("If-None-Match", e));
        }
        if let Some(lm) = validators.last_modified {
            headers.push(("If-Modified-Since", lm));
        }
        headers
    }

    /// Whether bodies of `media_type` are kept (`content_types`; empty keeps all).
    fn wants(&self, media_type: &str) -> bool {
        self.cfg.content_types.is_empty()
            || self.cfg.content_types.iter().any(|t| {
                let t = t.to_ascii_lowercase();
                if t.ends_with('/') {
                    media_type.starts_with(&t)
                } else {
                    media_type == t
                }
            })
    }
}

/// Sends `head` (the request's bytes, as the WARC records them) over `conn` and reads the
/// response head: the head parsed (`head.rs`), and the call's next state (its body, or the end
/// of the exchange). The protocol engine is driven through the request `request` (a GET, no
/// body) to frame the response; its own rendering of the request is not sent, and it is given
/// the answer's framing fields, not the whole head (`head.rs`). 1xx answers are skipped; a head
/// longer than `max_header_bytes` is refused.
fn exchange(
    conn: &mut Conn,
    request: http::Request<()>,
    head: &[u8],
    limits: Limits,
    cfg: &FetchSection,
    ip: IpAddr,
) -> Result<(head::Received, RecvResponseResult), FetchError> {
    let proto = |e: ureq_proto::Error| proto_error(&e, ip);
    let io = |e: io::Error| io_error(&e, ip);
    let mut call = Call::new(request).map_err(proto)?.proceed();
    // The engine's rendering of the request line and `Host` moves it on; `head` is sent. That
    // rendering is never longer than `head`, which holds the same line and host and more.
    let mut rendered = vec![0u8; head.len() + 64];
    while !call.can_proceed() {
        if call.write(&mut rendered).map_err(proto)? == 0 {
            return Err(FetchError::new(
                FetchErrorKind::Url,
                Some(ip),
                "the request line is longer than the client renders",
            ));
        }
    }
    conn.send(head, limits).map_err(io)?;
    let Some(SendRequestResult::RecvResponse(mut call)) = call.proceed().map_err(proto)? else {
        unreachable!("a GET has no body to send");
    };
    let max_head = usize::try_from(cfg.max_header_bytes.0).unwrap_or(usize::MAX);
    let too_large = |size: usize| {
        FetchError::new(
            FetchErrorKind::HeadersTooLarge,
            Some(ip),
            format!("response header is too big: {size} > {max_head} bytes (max_header_bytes)"),
        )
    };
    let closed = |when: &str| {
        FetchError::new(
            FetchErrorKind::Protocol,
            Some(ip),
            format!("the server closed the connection {when}"),
        )
    };
    let received = loop {
        let input = conn.input();
        if input.is_empty() {
            if conn.fill(limits).map_err(io)? == 0 {
                return Err(closed("without a response"));
            }
            continue;
        }
        let parsed = head::Received::parse(input).map_err(|e| match e {
            head::HeadError::TooManyFields => {
                proto_error(&ureq_proto::Error::HttpParseTooManyHeaders, ip)
            }
            head::HeadError::Invalid(why) => {
                proto_error(&ureq_proto::Error::HttpParseFail(why), ip)
            }
        })?;
        let Some(received) = parsed else {
            if input.len() > max_head {
                return Err(too_large(input.len()));
            }
            if conn.fill(limits).map_err(io)? == 0 {
                return Err(closed("before its response head ended"));
            }
            continue;
        };
        if received.len > max_head {
            return Err(too_large(received.len));
        }
        let (used, response) = call.try_response(&received.framing, false).map_err(proto)?;
        debug_assert_eq!(
            used,
            received.framing.len(),
            "the engine takes the head whole"
        );
        conn.consume(received.len);
        if response.is_some() {
            break received;
        }
        // A 1xx answer, skipped.
    };
    let next = call.proceed().expect("a response was read");
    Ok((received, next))
}

/// A protocol error of the exchange: a head of more than 128 fields is a head too large.
fn proto_error(e: &ureq_proto::Error, ip: IpAddr) -> FetchError {
    let kind = match e {
        ureq_proto::Error::HttpParseTooManyHeaders => FetchErrorKind::HeadersTooLarge,
        _ => FetchErrorKind::Protocol,
    };
    FetchError::new(kind, Some(ip), format!("protocol: {e}"))
}

/// An I/O error before the response head: a rustls failure is a `tls` kind (or a more
/// precise certificate kind), a timeout `timeout`, a broken answer `protocol`, anything else
/// (refused, reset) `connect`.
fn io_error(e: &io::Error, ip: IpAddr) -> FetchError {
    if let Some(r) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return FetchError::new(tls_kind(r), Some(ip), format!("tls: {r}"));
    }
    let kind = match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => FetchErrorKind::Timeout,
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => FetchErrorKind::Protocol,
        io::ErrorKind::InvalidInput => FetchErrorKind::Tls,
        _ => FetchErrorKind::Connect,
    };
    FetchError::new(kind, Some(ip), format!("io: {e}"))
}

/// The kind of a rustls failure: the certificate reasons an operator acts on, else `tls`.
fn tls_kind(e: &rustls::Error) -> FetchErrorKind {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => FetchErrorKind::TlsExpired,
            C::NotValidForName | C::NotValidForNameContext { .. } => FetchErrorKind::TlsWrongName,
            C::UnknownIssuer | C::BadSignature => FetchErrorKind::TlsUntrusted,
            _ => FetchErrorKind::Tls,
        },
        _ => FetchErrorKind::Tls,
    }
}

#[cfg(test)]
mod tests;
