//! Answering HTTP requests ([`Site`] for [`Web`]): routing by host and path, TLS hosts on the
//! plain port, conditional GET, content codings, the rate limiter, and the hostile hosts' broken
//! answers.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use super::date::{http_date, parse_http_date};
use super::{Rendered, ROBOTS_STALL};
use crate::model::{Coding, Hostile, PageRef, Web};
use crate::site::{Body, Request, Response, Site};

impl Web {
    /// The ETag of a page.
    pub fn etag(&self, at: PageRef, last_modified: u64) -> String {
        let h = crate::rng::mix(
            self.config.seed ^ crate::rng::mix(last_modified) ^ self.url(at).len() as u64,
        );
        format!("\"w{h:012x}\"")
    }

    fn bomb(&self) -> &'static [u8] {
        static BOMB: OnceLock<(u64, Vec<u8>)> = OnceLock::new();
        let (size, bytes) = BOMB.get_or_init(|| {
            let n = self.config.bomb_bytes;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            let zeros = vec![0u8; 1 << 20];
            let mut left = n;
            while left > 0 {
                let k = left.min(zeros.len() as u64) as usize;
                e.write_all(&zeros[..k]).expect("in-memory write");
                left -= k as u64;
            }
            (n, e.finish().expect("in-memory gzip"))
        });
        debug_assert_eq!(*size, self.config.bomb_bytes, "one bomb size per process");
        bytes
    }
}

impl Site for Web {
    fn respond(&self, req: &Request) -> Response {
        if let Some(n) = self.sub_index(&req.host) {
            return self.respond_sub(n, req);
        }
        let Some(host) = self.host_index(&req.host) else {
            return Response::unknown_host(req);
        };
        if req.method != "GET" && req.method != "HEAD" {
            return Response::method_not_allowed();
        }
        if let Some(r) = self.wrong_scheme(host, req) {
            return r;
        }
        let target = req.target.as_str();
        if target == "/robots.txt" {
            return match self.render_robots(host) {
                Some(r) => to_response(r),
                None => Response {
                    status: 200,
                    headers: vec![],
                    body: Body::Stall { hold: ROBOTS_STALL },
                },
            };
        }
        if let Some(r) = self.sitemap(host, target) {
            return to_response(r);
        }
        let Some(at) = self.resolve(host, target) else {
            return not_found();
        };
        self.respond_page(host, at, req)
    }

    fn min_delay(&self, host: &str) -> Duration {
        self.host_index(host)
            .map_or(self.config.default_delay, |h| self.delay(h, "dragnet"))
    }

    fn disallowed(&self, host: &str, agent: &str, target: &str) -> bool {
        self.host_index(host)
            .is_some_and(|h| !self.hosts[h as usize].robots.allowed(agent, target))
    }

    fn gate(&self, req: &Request) -> Option<Response> {
        let h = self.host_index(&req.host)?;
        if !self.hosts[h as usize].rate_limited || req.target == "/robots.txt" {
            return None;
        }
        let now = std::time::Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, at) = buckets.entry(h).or_insert((crate::model::RATE_BURST, now));
        let earned =
            now.duration_since(*at).as_secs_f64() / crate::model::RATE_REFILL.as_secs_f64();
        *tokens = (*tokens + earned).min(crate::model::RATE_BURST);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            return None;
        }
        let secs = crate::model::RATE_RETRY_AFTER_SECS;
        Some(
            Response::new(429, "text/plain", b"websim: too many requests\n".to_vec())
                .with("Retry-After", secs.to_string()),
        )
    }

    fn per_ip(&self) -> Option<(usize, Duration)> {
        let c = &self.config;
        (c.per_ip_connections > 0).then_some((c.per_ip_connections as usize, c.per_ip_delay))
    }

    fn retry_after(&self, host: &str) -> Option<Duration> {
        let h = self.host_index(host)?;
        self.hosts[h as usize]
            .rate_limited
            .then_some(Duration::from_secs(crate::model::RATE_RETRY_AFTER_SECS))
    }

    fn cache_key_headers(&self) -> Option<&'static [&'static str]> {
        // `respond` reads exactly these; keep this list in step with it.
        Some(&["accept-encoding", "if-none-match", "if-modified-since"])
    }
}

impl Web {
    /// A subdomain of the subdomain trap: its home, nothing else (robots.txt: 404).
    fn respond_sub(&self, n: u64, req: &Request) -> Response {
        if req.method != "GET" && req.method != "HEAD" {
            return Response::method_not_allowed();
        }
        match req.target.as_str() {
            "/" => to_response(self.render(PageRef::Sub { n })),
            _ => not_found(),
        }
    }

    /// The answer to a request on the wrong port for its host: a TLS host on the plain port
    /// (robots.txt as is, everything else moved to HTTPS), a plain host over TLS.
    fn wrong_scheme(&self, host: u32, req: &Request) -> Option<Response> {
        let target = req.target.as_str();
        match (self.hosts[host as usize].tls.is_some(), req.tls) {
            (true, false) if target != "/robots.txt" => {
                let origin = crate::model::origin(&self.config, &req.host, true);
                Some(
                    Response::new(
                        301,
                        "text/html",
                        b"<html><body>moved</body></html>\n".to_vec(),
                    )
                    .with("Location", format!("{origin}{target}")),
                )
            }
            // (The handshake fails first: no certificate for the name.)
            (false, true) => Some(Response::new(
                421,
                "text/plain",
                b"websim: not a TLS host\n".to_vec(),
            )),
            _ => None,
        }
    }

    /// A page of the web: `304` to a matching conditional request, else the page with its
    /// validators, as the host serves it ([`Web::as_served`]).
    fn respond_page(&self, host: u32, at: PageRef, req: &Request) -> Response {
        let rendered = self.render(at);
        let spec_lm = self.page(at).last_modified;
        let etag = self.etag(at, spec_lm);
        let last_modified = http_date(spec_lm);
        if rendered.status == 200 && not_modified(req, &etag, spec_lm) {
            return Response {
                status: 304,
                headers: vec![
                    ("ETag".into(), etag),
                    ("Last-Modified".into(), last_modified),
                ],
                body: Body::Full(vec![]),
            };
        }
        let mut resp = to_response(rendered);
        if resp.status == 200 {
            resp.headers.push(("ETag".into(), etag));
            resp.headers.push(("Last-Modified".into(), last_modified));
        }
        self.as_served(host, req, resp)
    }

    /// A page's response as host `host` sends it: broken the host's hostile way, or in its
    /// content coding when the client accepts it.
    fn as_served(&self, host: u32, req: &Request, mut resp: Response) -> Response {
        let hostile = self.hosts[host as usize].hostile;
        let body = match &resp.body {
            Body::Full(b) => b.clone(),
            _ => Vec::new(),
        };
        match hostile {
            Some(Hostile::SlowDrip) => {
                resp.body = Body::Drip {
                    bytes: body,
                    interval: self.config.drip_interval,
                }
            }
            Some(Hostile::EndlessBody) => resp.body = Body::Endless,
            Some(Hostile::HugeHeaders) => {
                let filler = "x".repeat(1000);
                for i in 0..1100 {
                    resp.headers.push((format!("X-Filler-{i}"), filler.clone()));
                }
            }
            Some(Hostile::GzipBomb) => {
                resp.headers
                    .push(("Content-Encoding".into(), "gzip".into()));
                resp.body = Body::Full(self.bomb().to_vec());
            }
            Some(Hostile::ResetMidBody) => {
                let after = body.len() / 2;
                resp.body = Body::ResetAfter { bytes: body, after };
            }
            Some(Hostile::WrongContentLength) => {
                let declared = body.len() as u64 + 1000;
                resp.body = Body::WrongLength {
                    bytes: body,
                    declared,
                };
            }
            Some(Hostile::Trap) | None => {
                if let Some(c) = self.hosts[host as usize].coding {
                    let is_html = resp
                        .headers
                        .iter()
                        .any(|(n, v)| n == "Content-Type" && v.starts_with("text/html"));
                    if is_html && resp.status == 200 && req.accepts(c.token()) {
                        resp.body = Body::Full(encode(c, &body));
                        resp.headers
                            .push(("Content-Encoding".into(), c.token().into()));
                        resp.headers.push(("Vary".into(), "Accept-Encoding".into()));
                    }
                }
            }
        }
        resp
    }
}

/// Whether a conditional request's validators match: `If-None-Match` names the ETag, or, without
/// it, the page is not newer than `If-Modified-Since`.
fn not_modified(req: &Request, etag: &str, last_modified: u64) -> bool {
    let inm = req
        .header("if-none-match")
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let ims = req
        .header("if-modified-since")
        .and_then(parse_http_date)
        .is_some_and(|t| t >= last_modified);
    inm || (req.header("if-none-match").is_none() && ims)
}

fn not_found() -> Response {
    Response::new(
        404,
        "text/html",
        b"<html><body>not found</body></html>\n".to_vec(),
    )
}

fn to_response(r: Rendered) -> Response {
    let mut resp = Response::new(r.status, &r.content_type, r.body);
    resp.headers.extend(r.headers);
    resp
}

/// Compresses `body` with a content coding.
pub fn encode(c: Coding, body: &[u8]) -> Vec<u8> {
    match c {
        Coding::Gzip => gzip(body),
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).expect("in-memory write");
            e.finish().expect("in-memory zlib")
        }
        Coding::Brotli => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 4, 22);
                w.write_all(body).expect("in-memory write");
            }
            out
        }
    }
}

pub(super) fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(body).expect("in-memory write");
    e.finish().expect("in-memory gzip")
}
