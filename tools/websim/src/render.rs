//! Turning the model into bytes: HTML, robots.txt, sitemaps, other content, and the [`Site`]
//! implementation that answers HTTP requests (content codings, conditional GET, hostile hosts).
//!
//! Rendering is deterministic: the same web gives the same bytes for every URL, which is what
//! lets `websim export` write files nginx serves identically.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use crate::model::{
    asset_type, Charset, CharsetDecl, Coding, Hostile, HrefStyle, Link, LinkTag, PageKind, PageRef,
    PageSpec, Requisite, SitemapKind, Web, ASSET_APP_JS, ASSET_FONT, ASSET_SITE_CSS,
    ASSET_THEME_CSS,
};
use crate::rng::Rng;
use crate::robots::RobotsServe;
use crate::site::{Body, Request, Response, Site};

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

    fn render_html(&self, host: u32, spec: &PageSpec, r: &mut Rng) -> Rendered {
        let h = &self.hosts[host as usize];
        let page_path = self.path(spec.at);
        let base_path = spec
            .base
            .clone()
            .unwrap_or_else(|| dir_of(&page_path).to_string());
        let mut s: Vec<u8> = Vec::with_capacity(spec.bytes as usize + 1024);
        s.extend_from_slice(b"<!DOCTYPE html>\n<html><head>\n");
        if matches!(h.charset_decl, CharsetDecl::Meta | CharsetDecl::Both) {
            let _ = writeln!(s, "<meta charset=\"{}\">", h.charset.label());
        }
        let _ = writeln!(
            s,
            "<title>websim {} page {}</title>",
            h.name,
            page_path.replace('&', "&amp;")
        );
        if let Some(b) = &spec.base {
            let _ = writeln!(s, "<base href=\"{}{b}\">", self.origin(host));
        }
        if let Some(c) = spec.canonical {
            let _ = writeln!(s, "<link rel=\"canonical\" href=\"{}\">", self.url(c));
        }
        let robots: Vec<&str> = [(spec.noindex, "noindex"), (spec.meta_nofollow, "nofollow")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, w)| *w)
            .collect();
        if !robots.is_empty() {
            let _ = writeln!(
                s,
                "<meta name=\"robots\" content=\"{}\">",
                robots.join(", ")
            );
        }
        if let Some(t) = spec.refresh {
            let _ = writeln!(
                s,
                "<meta http-equiv=\"refresh\" content=\"0; url={}\">",
                self.url(t)
            );
        }
        for q in spec.requisites.iter().filter(|q| q.in_head()) {
            self.write_requisite(&mut s, q, host);
        }
        s.extend_from_slice(b"</head>\n<body>\n");
        let _ = writeln!(s, "<h1>{}</h1>", page_path.replace('&', "&amp;"));
        for q in spec.requisites.iter().filter(|q| !q.in_head()) {
            self.write_requisite(&mut s, q, host);
        }
        let per_link = (spec.bytes as usize / (spec.links.len() + 1)).clamp(40, 4000);
        for (i, l) in spec.links.iter().enumerate() {
            s.extend_from_slice(b"<p>");
            text(&mut s, per_link / 2, h.charset, r);
            s.extend_from_slice(b"</p>\n");
            let href = self.href(l, host, &base_path).replace('&', "&amp;");
            let rel = if l.nofollow { " rel=\"nofollow\"" } else { "" };
            let _ = match l.tag {
                LinkTag::A => writeln!(s, "<a href=\"{href}\"{rel}>link {i}</a>"),
                LinkTag::Area => writeln!(s, "<map name=\"m{i}\"><area shape=\"rect\" coords=\"0,0,1,1\" href=\"{href}\"{rel} alt=\"a{i}\"></map>"),
                LinkTag::Iframe => writeln!(s, "<iframe src=\"{href}\"></iframe>"),
                LinkTag::Link => writeln!(s, "<link rel=\"alternate{}\" href=\"{href}\">", if l.nofollow { " nofollow" } else { "" }),
            };
        }
        while s.len() + 20 < spec.bytes as usize {
            s.extend_from_slice(b"<p>");
            let want = (spec.bytes as usize - s.len()).min(2000);
            text(&mut s, want, h.charset, r);
            s.extend_from_slice(b"</p>\n");
        }
        s.extend_from_slice(b"</body></html>\n");
        let content_type = if matches!(h.charset_decl, CharsetDecl::Header | CharsetDecl::Both) {
            format!("text/html; charset={}", h.charset.label())
        } else {
            "text/html".into()
        };
        let mut headers = vec![];
        if spec.x_robots_nofollow {
            headers.push(("X-Robots-Tag".into(), "noindex, nofollow".into()));
        }
        Rendered {
            status: 200,
            content_type,
            headers,
            body: s,
        }
    }

    /// The href of a requisite on a page of `from_host`: root-relative on the same host,
    /// absolute elsewhere.
    fn requisite_href(&self, to: PageRef, from_host: u32) -> String {
        match to {
            PageRef::Asset { host, .. } if host == from_host => self.path(to),
            _ => self.url(to),
        }
    }

    /// One requisite element of an HTML page ([`Requisite`]), on a line of its own.
    fn write_requisite(&self, s: &mut Vec<u8>, q: &Requisite, host: u32) {
        let href = |to: &PageRef| self.requisite_href(*to, host).replace('&', "&amp;");
        let _ = match q {
            Requisite::Stylesheet(to) => {
                writeln!(s, "<link rel=\"stylesheet\" href=\"{}\">", href(to))
            }
            Requisite::Script(to) => writeln!(s, "<script src=\"{}\"></script>", href(to)),
            Requisite::Img { src, srcset } if srcset.is_empty() => {
                writeln!(s, "<img src=\"{}\" alt=\"\">", href(src))
            }
            Requisite::Img { src, srcset } => {
                let set: Vec<String> = srcset
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{} {}x", href(c), i + 2))
                    .collect();
                writeln!(
                    s,
                    "<img src=\"{}\" srcset=\"{}\" alt=\"\">",
                    href(src),
                    set.join(", ")
                )
            }
            Requisite::Picture(to) => {
                writeln!(s, "<picture><source srcset=\"{} 1x\"></picture>", href(to))
            }
            Requisite::Background(to) => writeln!(
                s,
                "<div class=\"hero\" style=\"background-image: url('{}')\"></div>",
                href(to)
            ),
            // Only in stylesheets.
            Requisite::Import(_) | Requisite::CssUrl(_) => Ok(()),
        };
    }

    /// Asset `n` of a requisite host: a stylesheet naming [`PageSpec::requisites`], a script,
    /// PNG images, a font; deterministic bytes.
    fn render_asset(&self, host: u32, n: u32, spec: &PageSpec) -> Rendered {
        let mut r = Rng::new(self.config.seed, &[98, host.into(), n.into()]);
        let mut b = Vec::new();
        match n {
            ASSET_SITE_CSS | ASSET_THEME_CSS => {
                let name = &self.hosts[host as usize].name;
                let _ = writeln!(b, "/* websim {name}{} */", self.path(spec.at));
                for q in &spec.requisites {
                    // Spelled as a hand-written stylesheet would: imports and the font relative
                    // to the stylesheet or root-relative, images quoted or not.
                    let _ = match q {
                        Requisite::Import(to) if !self.import_as_url(host) => {
                            writeln!(b, "@import \"{}\";", file_name(&self.path(*to)))
                        }
                        Requisite::Import(to) => writeln!(b, "@import url({});", self.path(*to)),
                        Requisite::CssUrl(to @ PageRef::Asset { n: ASSET_FONT, .. }) => writeln!(
                            b,
                            "@font-face {{ font-family: \"Websim\"; src: url({}) format(\"woff2\"); }}\nh1 {{ font-family: \"Websim\", sans-serif; }}",
                            file_name(&self.path(*to))
                        ),
                        Requisite::CssUrl(to @ PageRef::Asset { n: crate::model::ASSET_BG, .. }) => {
                            writeln!(
                                b,
                                "body {{ margin: 0; background: #fff url({}) no-repeat; }}",
                                self.path(*to)
                            )
                        }
                        Requisite::CssUrl(to) => writeln!(
                            b,
                            ".logo {{ background-image: url(\"{}\"); width: 120px; }}",
                            file_name(&self.path(*to))
                        ),
                        _ => Ok(()),
                    };
                }
                b.extend_from_slice(b"p { line-height: 1.4; }\n");
            }
            ASSET_APP_JS => {
                b.extend_from_slice(b"/* websim app.js */\n(function () {\n  var words = [");
                while b.len() + 20 < spec.bytes as usize {
                    let _ = write!(b, "\"{}\", ", r.pick(WORDS));
                }
                b.extend_from_slice(b"\"\"];\n  document.title += \" \" + words.length;\n})();\n");
            }
            ASSET_FONT => {
                b.extend_from_slice(b"wOF2\x00\x01\x00\x00");
                random_bytes(&mut b, spec.bytes as usize, &mut r);
            }
            _ => {
                b.extend_from_slice(b"\x89PNG\r\n\x1a\n");
                random_bytes(&mut b, spec.bytes as usize, &mut r);
            }
        }
        Rendered {
            status: 200,
            content_type: asset_type(n).into(),
            headers: vec![],
            body: b,
        }
    }

    /// The robots.txt response of a host.
    pub fn render_robots(&self, host: u32) -> Option<Rendered> {
        let h = &self.hosts[host as usize];
        let text = |status: u16, ct: &str, body: Vec<u8>| {
            Some(Rendered {
                status,
                content_type: ct.into(),
                headers: vec![],
                body,
            })
        };
        match h.robots_serve {
            RobotsServe::Text | RobotsServe::Huge => text(200, "text/plain", h.robots.text().into_bytes()),
            RobotsServe::NotFound => text(404, "text/html", b"<html><body>not found</body></html>\n".to_vec()),
            RobotsServe::ServerError => text(503, "text/html", b"<html><body>unavailable</body></html>\n".to_vec()),
            RobotsServe::Html => text(
                200,
                "text/html",
                b"<!DOCTYPE html><html><head><title>Welcome</title></head><body><p>Disallow is not a word here.</p></body></html>\n"
                    .to_vec(),
            ),
            RobotsServe::Timeout => None,
        }
    }

    /// Sitemap documents of a host: `(path, content type, body)`.
    pub fn sitemap(&self, host: u32, path: &str) -> Option<Rendered> {
        let kind = self.hosts[host as usize].sitemap?;
        let pages = self.sitemap_pages(host);
        let half = pages.len() / 2;
        let xml = |pages: &[PageRef]| -> Vec<u8> {
            let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
            for &p in pages {
                let spec = self.page(p);
                s.push_str(&format!(
                    "  <url><loc>{}</loc><lastmod>{}</lastmod><changefreq>weekly</changefreq><priority>0.5</priority></url>\n",
                    self.url(p).replace('&', "&amp;"),
                    iso_date(spec.last_modified)
                ));
            }
            s.push_str("</urlset>\n");
            s.into_bytes()
        };
        let ok = |ct: &str, body: Vec<u8>| {
            Some(Rendered {
                status: 200,
                content_type: ct.into(),
                headers: vec![],
                body,
            })
        };
        match (kind, path) {
            (SitemapKind::Urlset, "/sitemap.xml") => ok("application/xml", xml(&pages)),
            (SitemapKind::Gzipped, "/sitemap.xml.gz") => ok("application/gzip", gzip(&xml(&pages))),
            (SitemapKind::Index, "/sitemap_index.xml") => {
                let o = self.origin(host);
                let body = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n  <sitemap><loc>{o}/sitemaps/s-0.xml.gz</loc></sitemap>\n  <sitemap><loc>{o}/sitemaps/s-1.xml.gz</loc></sitemap>\n</sitemapindex>\n"
                );
                ok("application/xml", body.into_bytes())
            }
            (SitemapKind::Index, "/sitemaps/s-0.xml.gz") => {
                ok("application/gzip", gzip(&xml(&pages[..half])))
            }
            (SitemapKind::Index, "/sitemaps/s-1.xml.gz") => {
                ok("application/gzip", gzip(&xml(&pages[half..])))
            }
            _ => None,
        }
    }

    /// Sitemap document paths of a host.
    pub fn sitemap_paths(&self, host: u32) -> Vec<&'static str> {
        match self.hosts[host as usize].sitemap {
            Some(SitemapKind::Urlset) => vec!["/sitemap.xml"],
            Some(SitemapKind::Gzipped) => vec!["/sitemap.xml.gz"],
            Some(SitemapKind::Index) => vec![
                "/sitemap_index.xml",
                "/sitemaps/s-0.xml.gz",
                "/sitemaps/s-1.xml.gz",
            ],
            None => vec![],
        }
    }

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
            // A subdomain of the subdomain trap: its home, nothing else (robots.txt: 404).
            if req.method != "GET" && req.method != "HEAD" {
                return Response::method_not_allowed();
            }
            return match req.target.as_str() {
                "/" => to_response(self.render(PageRef::Sub { n })),
                _ => Response::new(
                    404,
                    "text/html",
                    b"<html><body>not found</body></html>\n".to_vec(),
                ),
            };
        }
        let Some(host) = self.host_index(&req.host) else {
            return Response::unknown_host(req);
        };
        if req.method != "GET" && req.method != "HEAD" {
            return Response::method_not_allowed();
        }
        let target = req.target.as_str();
        match (self.hosts[host as usize].tls.is_some(), req.tls) {
            // A TLS host on the plain port: robots.txt as is, everything else moved to HTTPS.
            (true, false) if target != "/robots.txt" => {
                let origin = crate::model::origin(&self.config, &req.host, true);
                return Response::new(
                    301,
                    "text/html",
                    b"<html><body>moved</body></html>\n".to_vec(),
                )
                .with("Location", format!("{origin}{target}"));
            }
            // (The handshake fails first: no certificate for the name.)
            (false, true) => {
                return Response::new(421, "text/plain", b"websim: not a TLS host\n".to_vec())
            }
            _ => {}
        }
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
            return Response::new(
                404,
                "text/html",
                b"<html><body>not found</body></html>\n".to_vec(),
            );
        };
        let rendered = self.render(at);
        let spec_lm = self.page(at).last_modified;
        let etag = self.etag(at, spec_lm);
        let last_modified = http_date(spec_lm);
        if rendered.status == 200 {
            let inm = req
                .header("if-none-match")
                .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
            let ims = req
                .header("if-modified-since")
                .and_then(parse_http_date)
                .is_some_and(|t| t >= spec_lm);
            if inm || (req.header("if-none-match").is_none() && ims) {
                return Response {
                    status: 304,
                    headers: vec![
                        ("ETag".into(), etag),
                        ("Last-Modified".into(), last_modified),
                    ],
                    body: Body::Full(vec![]),
                };
            }
        }
        let hostile = self.hosts[host as usize].hostile;
        let mut resp = to_response(rendered);
        if resp.status == 200 {
            resp.headers.push(("ETag".into(), etag));
            resp.headers.push(("Last-Modified".into(), last_modified));
        }
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

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(body).expect("in-memory write");
    e.finish().expect("in-memory gzip")
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

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (y, m, d) = civil(days);
    let t = secs % 86_400;
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[m as usize - 1],
        t / 3600,
        t % 3600 / 60,
        t % 60
    )
}

/// Parses an IMF-fixdate; `None` for anything else.
pub fn parse_http_date(s: &str) -> Option<u64> {
    let mut it = s.split_whitespace();
    let _day = it.next()?;
    let d: u32 = it.next()?.parse().ok()?;
    let mon = it.next()?;
    let m = MONTHS.iter().position(|&x| x == mon)? as u32 + 1;
    let y: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|x| x.parse::<u64>());
    let (hh, mm, ss) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    if it.next()? != "GMT" {
        return None;
    }
    let days = days_from_civil(y, m, d);
    u64::try_from(days)
        .ok()
        .map(|days| days * 86_400 + hh * 3600 + mm * 60 + ss)
}

fn iso_date(secs: u64) -> String {
    let (y, m, d) = civil((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
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
    fn http_dates_round_trip() {
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        for t in [0u64, 1_767_225_600, 1_795_424_040] {
            assert_eq!(parse_http_date(&http_date(t)), Some(t));
        }
        assert_eq!(parse_http_date("yesterday"), None);
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
