//! The seam between the web's content and the HTTP server.
//!
//! The server knows nothing about pages: it parses requests, hands each to a [`Site`], and sends
//! back what the site answers, including the hostile ways of answering ([`Body`]). The audit asks
//! the site for each host's rules ([`Site::min_delay`], [`Site::disallowed`]) to judge a crawler's
//! manners. The synthetic web ([`crate::model::Web`]) is one `Site`; tests write small ones.

use std::net::SocketAddr;
use std::time::Duration;

/// One parsed HTTP request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method, as sent (`GET`, `HEAD`, ...).
    pub method: String,
    /// Request target: path and query, as sent.
    pub target: String,
    /// Host header without port, lower-cased (empty if absent).
    pub host: String,
    /// All headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// Client address.
    pub peer: SocketAddr,
    /// Listener address the request came in on.
    pub local: SocketAddr,
    /// Server-wide id of the client connection (for the audit: one connection per host).
    pub conn: u64,
    /// The request came over TLS (`https`).
    pub tls: bool,
}

impl Request {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client accepts a content coding (`gzip`, `deflate`, `br`).
    pub fn accepts(&self, coding: &str) -> bool {
        self.header("accept-encoding").is_some_and(|v| {
            v.split(',').any(|c| {
                let mut parts = c.trim().split(';');
                let name = parts.next().unwrap_or("").trim();
                let q0 = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
                name.eq_ignore_ascii_case(coding) && !q0
            })
        })
    }
}

/// A response body, including the hostile ways of sending one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The bytes, with a correct `Content-Length`.
    Full(Vec<u8>),
    /// The bytes with a correct `Content-Length`, one byte every `interval` (slow drip).
    Drip {
        /// Body.
        bytes: Vec<u8>,
        /// Pause between bytes.
        interval: Duration,
    },
    /// A chunked body that never ends (until the client hangs up or the server stops).
    Endless,
    /// `Content-Length` of the whole body, but the connection is reset (RST) after `after` bytes.
    ResetAfter {
        /// Body.
        bytes: Vec<u8>,
        /// Bytes sent before the reset.
        after: usize,
    },
    /// Sends `bytes` under a `Content-Length` of `declared`, then closes the connection.
    WrongLength {
        /// What is actually sent.
        bytes: Vec<u8>,
        /// What `Content-Length` claims.
        declared: u64,
    },
    /// Sends nothing at all (not even a status line) and holds the connection for `hold`.
    Stall {
        /// How long to hold the connection before closing it.
        hold: Duration,
    },
}

/// An HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers besides `Content-Length`/`Transfer-Encoding`/`Connection`, which the server adds.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl Response {
    /// A response with a full body.
    pub fn new(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Full(body),
        }
    }

    /// The answer to a request for a host the site does not serve.
    pub fn unknown_host(req: &Request) -> Response {
        Response::new(
            404,
            "text/plain",
            format!("websim: unknown host '{}'\n", req.host).into_bytes(),
        )
    }

    /// The answer to a method other than GET and HEAD.
    pub fn method_not_allowed() -> Response {
        Response::new(405, "text/plain", b"method not allowed\n".to_vec())
            .with("Allow", "GET, HEAD")
    }

    /// Adds a header.
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

/// A web the server can serve.
pub trait Site: Send + Sync {
    /// Answers one request.
    fn respond(&self, req: &Request) -> Response;

    /// The least time a polite crawler leaves between two requests to `host` (crawl-delay, or
    /// the web's default politeness delay).
    fn min_delay(&self, host: &str) -> Duration;

    /// The `Retry-After` of `host`'s `429` answers, if it sends any: the audit checks that no
    /// request to the host comes sooner after one (`ignored_retry_after`).
    fn retry_after(&self, _host: &str) -> Option<Duration> {
        None
    }

    /// The limits a polite crawler keeps per server address, over all its hosts: requests in
    /// flight at once and the least time between them (`None`, the default: no such check).
    fn per_ip(&self) -> Option<(usize, Duration)> {
        None
    }

    /// Whether robots.txt forbids `agent` to fetch `target` (path and query) on `host`.
    fn disallowed(&self, host: &str, agent: &str, target: &str) -> bool;

    /// If every answer is a pure function of the request's method, host, target and the request
    /// headers named here (lower-case), the names: the server may then answer a repeated request
    /// from its cache instead of asking again. `None` (the default): always ask.
    fn cache_key_headers(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// An answer that comes before the page, whatever it is and whether or not it is cached: a
    /// rate limiter's `429`. Called for every request; `None` (the default): go on.
    fn gate(&self, _req: &Request) -> Option<Response> {
        None
    }
}
