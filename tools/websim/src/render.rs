//! Turning the model into bytes: HTML, robots.txt, sitemaps, other content, and the [`Site`]
//! implementation that answers HTTP requests (content codings, conditional GET, hostile hosts).
//!
//! Rendering is deterministic: the same web gives the same bytes for every URL, which is what
//! lets `websim export` write files nginx serves identically.
//!
//! This file holds the dispatch by page kind ([`Web::render`]), the simple kinds (PDF, PNG,
//! mislabeled binaries, redirects, errors), href spelling and the text filler; the rest is by
//! what is rendered: `html` (HTML pages), `asset` (the `/static/` assets of requisite hosts),
//! `documents` (robots.txt and sitemaps), `respond` (the [`Site`] implementation) and `date`
//! (HTTP dates).
//!
//! [`Site`]: crate::site::Site

use std::time::Duration;

use crate::model::{Charset, HrefStyle, Link, PageKind, PageRef, Web};
use crate::rng::Rng;

mod asset;
mod date;
mod documents;
mod html;
mod respond;

pub use date::{http_date, parse_http_date};
pub use respond::encode;

const WORDS: &[&str] = &[
    "crawl",
    "web",
    "page",
    "link",
    "archive",
    "index",
    "frontier",
    "politeness",
    "server",
    "robot",
    "queue",
    "host",
    "partition",
    "sitemap",
    "document",
    "fetch",
    "parse",
    "merge",
    "priority",
    "cache",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "which",
    "be",
    "are",
    "or",
];

/// How long a `Timeout` robots.txt holds the connection without answering.
pub const ROBOTS_STALL: Duration = Duration::from_secs(20);

/// A rendered response body with its content type, before content coding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// Extra headers (Location, Retry-After, X-Robots-Tag, ...).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Web {
    /// The href a link is written with on a page whose links resolve against `base_path`.
    pub fn href(&self, link: &Link, from_host: u32, base_path: &str) -> String {
        let url = self.url(link.to);
        match link.style {
            HrefStyle::Absolute => url,
            HrefStyle::SchemeRelative => url.trim_start_matches("http:").to_string(),
            HrefStyle::RootRelative | HrefStyle::Relative => {
                let same = matches!(link.to, PageRef::Page { host, .. } | PageRef::Calendar { host, .. } | PageRef::Session { host, .. } | PageRef::Asset { host, .. } if host == from_host);
                if !same {
                    return url;
                }
                let path = self.path(link.to);
                if link.style == HrefStyle::RootRelative {
                    path
                } else {
                    relative(base_path, &path)
                }
            }
        }
    }

    /// Renders any page of the web (status, type, headers, body).
    pub fn render(&self, at: PageRef) -> Rendered {
        let spec = self.page(at);
        let host = match at {
            PageRef::Page { host, .. }
            | PageRef::Calendar { host, .. }
            | PageRef::Session { host, .. } => host,
            PageRef::Asset { host, n } => return self.render_asset(host, n, &spec),
            // Served by the trap host, in its charset and coding.
            PageRef::Sub { .. } => self.sub_trap_host().unwrap_or(0),
            PageRef::Outside { .. } => {
                return Rendered {
                    status: 404,
                    content_type: "text/plain".into(),
                    headers: vec![],
                    body: b"outside".to_vec(),
                }
            }
        };
        let mut r = Rng::new(
            self.config.seed,
            &[
                99,
                host.into(),
                self.url(at).len() as u64,
                spec.last_modified,
            ],
        );
        match &spec.kind {
            PageKind::Html => self.render_html(host, &spec, &mut r),
            PageKind::Pdf => {
                let mut b = b"%PDF-1.4\n% websim\n".to_vec();
                filler_bytes(&mut b, spec.bytes as usize, &mut r);
                b.extend_from_slice(b"\n%%EOF\n");
                Rendered {
                    status: 200,
                    content_type: "application/pdf".into(),
                    headers: vec![],
                    body: b,
                }
            }
            PageKind::Image => {
                let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
                random_bytes(&mut b, spec.bytes as usize, &mut r);
                Rendered {
                    status: 200,
                    content_type: "image/png".into(),
                    headers: vec![],
                    body: b,
                }
            }
            PageKind::BinaryMislabeled => {
                let mut b = Vec::new();
                random_bytes(&mut b, spec.bytes as usize, &mut r);
                Rendered {
                    status: 200,
                    content_type: "text/html".into(),
                    headers: vec![],
                    body: b,
                }
            }
            PageKind::Redirect { status, to } => {
                let loc = self.url(*to);
                let body =
                    format!("<html><body>Moved to <a href=\"{loc}\">{loc}</a></body></html>\n");
                Rendered {
                    status: *status,
                    content_type: "text/html; charset=utf-8".into(),
                    headers: vec![("Location".into(), loc)],
                    body: body.into_bytes(),
                }
            }
            PageKind::Asset => unreachable!("assets are rendered above"),
            PageKind::Error { status } => {
                let mut headers = vec![];
                if *status == 503 {
                    headers.push(("Retry-After".into(), "120".into()));
                }
                let body = format!("<html><body><h1>{status}</h1></body></html>\n");
                Rendered {
                    status: *status,
                    content_type: "text/html; charset=utf-8".into(),
                    headers,
                    body: body.into_bytes(),
                }
            }
        }
    }
}

/// The last segment of a path (`/static/theme.css` -> `theme.css`).
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The directory part of a path (`/docs/page-3.html` -> `/docs/`).
pub fn dir_of(path: &str) -> &str {
    let p = path.split('?').next().unwrap_or(path);
    &p[..p.rfind('/').map_or(1, |i| i + 1)]
}

/// A relative reference from directory `base` (ending in `/`) to absolute path `target`.
pub fn relative(base: &str, target: &str) -> String {
    let (tpath, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let bsegs: Vec<&str> = base
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let tdir = dir_of(tpath);
    let tsegs: Vec<&str> = tdir
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let common = bsegs.iter().zip(&tsegs).take_while(|(a, b)| a == b).count();
    let mut s = "../".repeat(bsegs.len() - common);
    for seg in &tsegs[common..] {
        s.push_str(seg);
        s.push('/');
    }
    s.push_str(&tpath[tdir.len()..]);
    if s.is_empty() {
        s.push_str("./");
    } else if s.starts_with("//") || s.split('/').next().is_some_and(|first| first.contains(':')) {
        s.insert_str(0, "./");
    }
    if let Some(q) = query {
        s.push('?');
        s.push_str(q);
    }
    s
}

fn text(out: &mut Vec<u8>, bytes: usize, cs: Charset, r: &mut Rng) {
    // One random draw per word (the low bits pick an accented phrase 1 time in 40, the high bits
    // the word) and no reallocation: text is most of a page, and rendering it was a quarter of
    // the server's time under wrk.
    out.reserve(bytes + 32);
    let start = out.len();
    while out.len() - start < bytes {
        let x = r.next_u64();
        if (x & 0xffff) % 40 == 0 {
            match cs {
                Charset::Utf8 => out.extend_from_slice("café naïve 日本 ".as_bytes()),
                Charset::Windows1252 => out.extend_from_slice(b"caf\xe9 \x93quoted\x94 "),
                Charset::Latin1 => out.extend_from_slice(b"caf\xe9 na\xefve "),
            }
        } else {
            out.extend_from_slice(WORDS[((x >> 16) % WORDS.len() as u64) as usize].as_bytes());
            out.push(b' ');
        }
    }
}

fn filler_bytes(out: &mut Vec<u8>, bytes: usize, r: &mut Rng) {
    let start = out.len();
    while out.len() - start < bytes {
        out.extend_from_slice(r.pick(WORDS).as_bytes());
        out.push(b'\n');
    }
}

fn random_bytes(out: &mut Vec<u8>, bytes: usize, r: &mut Rng) {
    out.reserve(bytes);
    while out.len() < bytes {
        out.extend_from_slice(&r.next_u64().to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WebConfig;

    #[test]
    fn relative_references() {
        assert_eq!(relative("/docs/", "/docs/page-3.html"), "page-3.html");
        assert_eq!(
            relative("/docs/", "/news/page-3.html"),
            "../news/page-3.html"
        );
        assert_eq!(relative("/", "/news/page-3.html"), "news/page-3.html");
        assert_eq!(relative("/docs/", "/"), "../");
        assert_eq!(relative("/", "/"), "./");
        assert_eq!(relative("/a/b/", "/a/c/x?y=1"), "../c/x?y=1");
    }

    #[test]
    fn html_sizes_have_a_realistic_median() {
        let w = Web::new(WebConfig {
            hosts: 20,
            pages: 200,
            ..WebConfig::default()
        });
        let mut sizes = Vec::new();
        for h in 0..20 {
            for p in 0..200 {
                let at = PageRef::Page { host: h, page: p };
                if w.kind(h, p) == PageKind::Html {
                    sizes.push(w.render(at).body.len());
                }
            }
        }
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((11_000..20_000).contains(&median), "median {median}");
        assert!(*sizes.last().unwrap() > 100_000, "long tail");
    }
}
