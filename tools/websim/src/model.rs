//! The synthetic web: hosts, their personalities, pages and links, all pure functions of the seed.
//!
//! A [`Web`] holds only its hosts (a few hundred bytes each); a page is generated when asked for
//! ([`Web::page`]) from `(seed, host, page)`, so the server, the truth and the export agree by
//! construction and a web of any size costs no memory.
//!
//! Link structure follows the figures of Broder, Najork and Wiener (WWW 2003; docs/design.md, References): about 80% of
//! links stay on their host (they measured 81.5%), about 30% of the links on a page repeat an
//! earlier link of the same page, and targets are drawn from a Zipf law, which gives the
//! power-law in-degree of the real web. A few links leave the web (hosts under `outside.test`),
//! and must stay unfetched when a crawl is scoped to the web.
//!
//! Paths encode the page number (`/docs/page-17.html`), so the server maps a path back to its page
//! without any table, and refuses paths the web never generated.

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::rng::Rng;
use crate::robots::{Group, RobotsServe, RobotsSpec, Rule};

/// Decision contexts (the first element of every [`Rng::new`] context).
const T_HOST: u64 = 1;
const T_PAGE: u64 = 2;
const T_LINKS: u64 = 3;
const T_TRAP: u64 = 4;

/// Every knob of a generated web.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WebConfig {
    /// The seed everything derives from.
    pub seed: u64,
    /// Hosts H.
    pub hosts: u32,
    /// Pages per host P (page 0 is `/`).
    pub pages: u32,
    /// Loopback listener addresses the hosts are spread over (127.0.1.1 ...).
    pub listeners: u8,
    /// Port every host is served on (80 means no port in URLs).
    pub port: u16,
    /// One host in this many is hostile (0: none).
    pub hostile_every: u32,
    /// Politeness delay every host expects when it sets no crawl-delay.
    pub default_delay: Duration,
    /// Largest crawl-delay a host asks for (scaled down for quick demos).
    pub max_crawl_delay: Duration,
    /// Interval between the bytes of a slow-drip response.
    pub drip_interval: Duration,
    /// Median HTML page size in bytes (log-normal, long tail).
    pub median_page_bytes: u32,
    /// Decompressed size of the gzip bomb.
    pub bomb_bytes: u64,
    /// One host in this many is served over TLS ([`Tls`]; 0: none, every host plain HTTP).
    pub tls_every: u32,
    /// Port the TLS hosts are served on (443 means no port in URLs; 0 until a server binds one).
    pub tls_port: u16,
    /// One host in this many rate-limits its pages ([`RATE_BURST`] requests, then one per
    /// [`RATE_REFILL`]; beyond it `429` with `Retry-After`; 0: none).
    pub rate_limit_every: u32,
    /// Requests in flight at once a polite crawler keeps per server address (over all the
    /// hosts it serves), for the audit's per-address check (0: no check).
    pub per_ip_connections: u32,
    /// Least time between requests to one server address, for the same check.
    pub per_ip_delay: Duration,
    /// The trap host's home also links into an endless tree of subdomains of another
    /// registered domain (`s0.trap-subs.test`, `s1...`: [`PageRef::Sub`]), which only a budget
    /// per registered domain bounds.
    pub subdomain_trap: bool,
    /// One host in this many (never a hostile one) has page requisites: its HTML pages load
    /// stylesheets, a script, images and a font from `/static/` ([`PageRef::Asset`],
    /// [`Requisite`], [`Web::requisite_hosts`]; the `requisites` module doc says which and how);
    /// 0: none, the web as it was before requisites existed.
    #[serde(skip_serializing_if = "is_zero")]
    pub requisites_every: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            seed: 1,
            hosts: 100,
            pages: 50,
            listeners: 4,
            port: 8480,
            hostile_every: 20,
            default_delay: Duration::from_millis(0),
            max_crawl_delay: Duration::from_secs(2),
            drip_interval: Duration::from_secs(1),
            median_page_bytes: 15_000,
            bomb_bytes: 1 << 30,
            tls_every: 0,
            tls_port: 8443,
            rate_limit_every: 0,
            per_ip_connections: 0,
            per_ip_delay: Duration::ZERO,
            subdomain_trap: false,
            requisites_every: 0,
        }
    }
}

/// The ways a hostile host misbehaves (on its pages; robots.txt is served normally).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hostile {
    /// One byte per `drip_interval`.
    SlowDrip,
    /// A chunked body that never ends.
    EndlessBody,
    /// About 1 MiB of response headers.
    HugeHeaders,
    /// A small gzip body that inflates to `bomb_bytes`.
    GzipBomb,
    /// The connection is reset half-way through the body.
    ResetMidBody,
    /// `Content-Length` larger than the body, then the connection closes.
    WrongContentLength,
    /// An infinite calendar and session-id URLs: a crawler trap.
    Trap,
}

impl Hostile {
    /// All kinds, in the order hostile hosts cycle through them.
    pub const ALL: [Hostile; 7] = [
        Hostile::Trap,
        Hostile::SlowDrip,
        Hostile::EndlessBody,
        Hostile::HugeHeaders,
        Hostile::GzipBomb,
        Hostile::ResetMidBody,
        Hostile::WrongContentLength,
    ];
}

/// How a TLS host serves (one host in [`WebConfig::tls_every`], never a hostile one).
///
/// Every TLS host's URLs are `https://name[:tls_port]/...` and its pages link to each other that
/// way; on the plain-HTTP port it serves robots.txt (the same rules) and answers every other path
/// with a `301` to the same path over HTTPS. The certificate is what tells the kinds apart: the
/// server picks it by SNI (`crate::server`), from a CA generated when the server starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tls {
    /// A valid certificate from the web's CA.
    Valid,
    /// Valid, and its default seed is the `http://` URL of `/`, which redirects to HTTPS.
    Upgrade,
    /// The CA's certificate for the right name, expired a month ago.
    Expired,
    /// The CA's certificate for another name (`wrong-name.invalid`).
    WrongName,
    /// A self-signed certificate for the right name.
    SelfSigned,
}

impl Tls {
    /// The kinds, in the order TLS hosts cycle through them (valid ones more often).
    pub const CYCLE: [Tls; 8] = [
        Tls::Valid,
        Tls::Upgrade,
        Tls::Valid,
        Tls::Expired,
        Tls::Valid,
        Tls::WrongName,
        Tls::Upgrade,
        Tls::SelfSigned,
    ];

    /// A client that checks certificates completes the handshake.
    pub fn trusted(self) -> bool {
        matches!(self, Tls::Valid | Tls::Upgrade)
    }
}

/// Content codings a host applies when the client accepts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coding {
    /// `gzip`.
    Gzip,
    /// `deflate` (zlib, as RFC 9110 defines it).
    Deflate,
    /// `br`.
    Brotli,
}

impl Coding {
    /// The token in `Content-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
        }
    }
}

/// Character encodings pages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Charset {
    /// UTF-8.
    Utf8,
    /// windows-1252 (Latin-1 superset).
    Windows1252,
    /// ISO-8859-1.
    Latin1,
}

impl Charset {
    /// The IANA label.
    pub fn label(self) -> &'static str {
        match self {
            Charset::Utf8 => "utf-8",
            Charset::Windows1252 => "windows-1252",
            Charset::Latin1 => "iso-8859-1",
        }
    }
}

/// Where a host declares its charset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CharsetDecl {
    /// In the `Content-Type` header.
    Header,
    /// In `<meta charset>`.
    Meta,
    /// Both.
    Both,
}

/// Sitemaps a host offers in its robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SitemapKind {
    /// `/sitemap.xml`, a urlset.
    Urlset,
    /// `/sitemap_index.xml` pointing at gzipped urlsets `/sitemaps/s-N.xml.gz`.
    Index,
    /// `/sitemap.xml.gz`, a gzipped urlset.
    Gzipped,
}

/// One host and its personality.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HostSpec {
    /// Index in the web.
    pub index: u32,
    /// Host name, `hNNNN.websim.test`.
    pub name: String,
    /// Loopback address it is served on (shared with other hosts: virtual hosting).
    pub addr: Ipv4Addr,
    /// Its robots.txt.
    #[serde(skip)]
    pub robots: RobotsSpec,
    /// How robots.txt is served.
    pub robots_serve: RobotsServe,
    /// Its sitemaps, if any.
    pub sitemap: Option<SitemapKind>,
    /// Page charset.
    pub charset: Charset,
    /// Where the charset is declared.
    pub charset_decl: CharsetDecl,
    /// Content coding used when accepted.
    pub coding: Option<Coding>,
    /// Misbehaviour, if any.
    pub hostile: Option<Hostile>,
    /// Served over TLS, and how; `None`: plain HTTP.
    pub tls: Option<Tls>,
    /// Rate-limits its pages (`429` with `Retry-After` when a client asks too fast).
    pub rate_limited: bool,
    /// Its HTML pages have requisites under `/static/` ([`WebConfig::requisites_every`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requisites: bool,
}

/// What a page is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PageKind {
    /// An HTML page with links.
    Html,
    /// A PDF document.
    Pdf,
    /// A PNG image.
    Image,
    /// Binary data served as `text/html` (a wrong content type).
    BinaryMislabeled,
    /// A redirect.
    Redirect {
        /// 301, 302, 307 or 308.
        status: u16,
        /// Where it points.
        to: PageRef,
    },
    /// An error answer.
    Error {
        /// 404, 410, 500 or 503.
        status: u16,
    },
    /// An asset of a requisite host (stylesheet, script, image, font: [`PageRef::Asset`]).
    Asset,
}

/// A page of the web, or a page outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageRef {
    /// Page `page` of host `host`.
    Page {
        /// Host index.
        host: u32,
        /// Page index.
        page: u32,
    },
    /// A page on a host outside the web (never served).
    Outside {
        /// Which outside host.
        host: u32,
        /// Which page.
        page: u32,
    },
    /// A trap page of host `host`: calendar month `n` months from January 2026 (may be
    /// negative), or a session-id page.
    Calendar {
        /// Host index.
        host: u32,
        /// Months from 2026-01.
        month: i64,
    },
    /// A session-id URL: item `item` with session `sid`.
    Session {
        /// Host index.
        host: u32,
        /// Item number.
        item: u32,
        /// Session id.
        sid: u64,
    },
    /// The home of subdomain `s{n}.trap-subs.test` of the subdomain trap
    /// ([`WebConfig::subdomain_trap`]), served by the trap host; it links to `s{2n+1}` and
    /// `s{2n+2}`.
    Sub {
        /// Which subdomain.
        n: u64,
    },
    /// Asset `n` of requisite host `host`, under `/static/` (`n` below [`ASSETS`]; see the
    /// `requisites` module doc for the table: 0 `site.css`, 1 `theme.css`, 2 `app.js`, 3
    /// `bg.png`, 4 `font.woff2`, 5..=12 `img-0.png`..`img-7.png`, 13 `private/pixel.png`).
    Asset {
        /// Host index.
        host: u32,
        /// Which asset.
        n: u32,
    },
}

/// The registered domain of the subdomain trap's hosts.
pub const SUB_DOMAIN: &str = "trap-subs.test";
/// Subdomains beyond this number are not served (and never linked).
const SUB_LIMIT: u64 = 1 << 40;

/// How a link is written in HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkTag {
    /// `<a href>`.
    A,
    /// `<area href>`.
    Area,
    /// `<iframe src>`.
    Iframe,
    /// `<link rel=alternate href>`.
    Link,
}

/// A link on an HTML page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    /// What it points at.
    pub to: PageRef,
    /// The element.
    pub tag: LinkTag,
    /// `rel=nofollow`.
    pub nofollow: bool,
    /// Href style (decided when rendering against the page's base).
    pub style: HrefStyle,
}

/// How an href is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HrefStyle {
    /// `http://host:port/path`.
    Absolute,
    /// `//host:port/path`.
    SchemeRelative,
    /// `/path`.
    RootRelative,
    /// `../x/y.html` or `y.html`, relative to the base.
    Relative,
}

/// Everything about one HTML page besides its text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PageSpec {
    /// The page.
    pub at: PageRef,
    /// Kind.
    pub kind: PageKind,
    /// Body size target in bytes.
    pub bytes: u32,
    /// Links in document order (HTML only).
    pub links: Vec<Link>,
    /// Requisites in document order: of an HTML page of a requisite host, or a stylesheet's
    /// `@import`s and `url()`s (empty everywhere else).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requisites: Vec<Requisite>,
    /// `<base href>` directory, if the page has one (a path on the same host, ending in `/`).
    pub base: Option<String>,
    /// `<link rel=canonical>` target, if any.
    pub canonical: Option<PageRef>,
    /// `<meta name=robots content=noindex>`.
    pub noindex: bool,
    /// `<meta name=robots content=nofollow>`.
    pub meta_nofollow: bool,
    /// `X-Robots-Tag: noindex, nofollow` header.
    pub x_robots_nofollow: bool,
    /// `<meta http-equiv=refresh>` target, if any.
    pub refresh: Option<PageRef>,
    /// Last-Modified, Unix seconds.
    pub last_modified: u64,
}

/// Requests a rate-limited host answers in a burst (its token bucket's size).
pub const RATE_BURST: f64 = 4.0;
/// A rate-limited host earns one more request per this long.
pub const RATE_REFILL: Duration = Duration::from_secs(1);
/// The `Retry-After` (seconds) of a rate-limited host's `429`: when a token is sure to be back.
pub const RATE_RETRY_AFTER_SECS: u64 = 1;

/// A generated web.
#[derive(Debug, Clone)]
pub struct Web {
    /// Its configuration.
    pub config: WebConfig,
    /// Its hosts, by index.
    pub hosts: Vec<HostSpec>,
    /// Token buckets of the rate-limited hosts: tokens left and when they were counted. The only
    /// state a web has, and only the server's [`crate::site::Site::gate`] touches it.
    pub(crate) buckets:
        std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u32, (f64, std::time::Instant)>>>,
}

/// `scheme://name[:port]`, without the port when it is the scheme's default.
pub(crate) fn origin(cfg: &WebConfig, name: &str, tls: bool) -> String {
    match (tls, if tls { cfg.tls_port } else { cfg.port }) {
        (false, 80) => format!("http://{name}"),
        (false, p) => format!("http://{name}:{p}"),
        (true, 443) => format!("https://{name}"),
        (true, p) => format!("https://{name}:{p}"),
    }
}

const SECTIONS: [&str; 6] = ["news", "docs", "blog", "shop", "about", "archive"];
const OUTSIDE_HOSTS: u32 = 50;

impl Web {
    /// Generates the web of `config`.
    pub fn new(config: WebConfig) -> Web {
        let hosts = (0..config.hosts).map(|h| gen_host(&config, h)).collect();
        Web {
            config,
            hosts,
            buckets: Default::default(),
        }
    }

    /// `http://name[:port]`, or `https://name[:tls_port]` for a TLS host.
    pub fn origin(&self, host: u32) -> String {
        let h = &self.hosts[host as usize];
        origin(&self.config, &h.name, h.tls.is_some())
    }

    /// The plain-HTTP origin of a host, `http://name[:port]` (for a TLS host it redirects).
    pub fn http_origin(&self, host: u32) -> String {
        origin(&self.config, &self.hosts[host as usize].name, false)
    }

    /// A host's default seed: the URL of `/`, spelled `http://` for a [`Tls::Upgrade`] host (as
    /// an operator who typed the bare name would), so the crawl meets the redirect to HTTPS.
    pub fn seed_url(&self, host: u32) -> String {
        if self.hosts[host as usize].tls == Some(Tls::Upgrade) {
            format!("{}/", self.http_origin(host))
        } else {
            self.url(PageRef::Page { host, page: 0 })
        }
    }

    /// The host that serves the subdomain trap: the first trap host, if the web has the trap.
    pub fn sub_trap_host(&self) -> Option<u32> {
        if !self.config.subdomain_trap {
            return None;
        }
        self.hosts
            .iter()
            .find(|h| h.hostile == Some(Hostile::Trap))
            .map(|h| h.index)
    }

    /// The subdomain number of a host name of the subdomain trap (`s12.trap-subs.test`).
    pub fn sub_index(&self, name: &str) -> Option<u64> {
        self.sub_trap_host()?;
        let n: u64 = name
            .strip_prefix('s')?
            .strip_suffix(SUB_DOMAIN)?
            .strip_suffix('.')?
            .parse()
            .ok()?;
        (n < SUB_LIMIT && name == format!("s{n}.{SUB_DOMAIN}")).then_some(n)
    }

    /// Whether any host is served over TLS.
    pub fn has_tls(&self) -> bool {
        self.hosts.iter().any(|h| h.tls.is_some())
    }

    /// The host index for a host name, if it is one of the web's.
    pub fn host_index(&self, name: &str) -> Option<u32> {
        let n = name.strip_prefix('h')?.strip_suffix(".websim.test")?;
        if n.len() != 4 && n.len() != 5 {
            return None;
        }
        let i: u32 = n.parse().ok()?;
        (i < self.config.hosts && self.hosts[i as usize].name == name).then_some(i)
    }

    /// Path (and query) of a page.
    pub fn path(&self, r: PageRef) -> String {
        match r {
            PageRef::Page { host, page } => self.page_path(host, page),
            PageRef::Outside { page, .. } => format!("/ext/page-{page}.html"),
            PageRef::Calendar { month, .. } => {
                let y = 2026 + month.div_euclid(12);
                let m = month.rem_euclid(12) + 1;
                format!("/calendar/{y}/{m:02}/")
            }
            PageRef::Session { item, sid, .. } => format!("/shop/item-{item}?sid={sid:016x}"),
            PageRef::Sub { .. } => "/".into(),
            PageRef::Asset { n, .. } => Web::asset_path(n),
        }
    }

    /// Absolute URL of a page.
    pub fn url(&self, r: PageRef) -> String {
        let origin = match r {
            PageRef::Page { host, .. }
            | PageRef::Calendar { host, .. }
            | PageRef::Session { host, .. }
            | PageRef::Asset { host, .. } => self.origin(host),
            PageRef::Outside { host, .. } => format!("http://x{host:03}.outside.test"),
            PageRef::Sub { n } => origin(&self.config, &format!("s{n}.{SUB_DOMAIN}"), false),
        };
        format!("{origin}{}", self.path(r))
    }

    fn page_path(&self, host: u32, page: u32) -> String {
        if page == 0 {
            return "/".into();
        }
        match self.kind(host, page) {
            PageKind::Html => {
                let s =
                    SECTIONS[(Rng::new(self.config.seed, &[T_PAGE, host.into(), page.into(), 1])
                        .below(6)) as usize];
                format!("/{s}/page-{page}.html")
            }
            PageKind::Pdf => format!("/files/report-{page}.pdf"),
            PageKind::Image => format!("/img/photo-{page}.png"),
            PageKind::BinaryMislabeled => format!("/dl/data-{page}.bin"),
            PageKind::Redirect { .. } => format!("/go/r-{page}"),
            PageKind::Error { .. } => format!("/old/gone-{page}.html"),
            PageKind::Asset => unreachable!("kind() never gives an asset"),
        }
    }

    /// The page a path names on `host`, if the web generated that path.
    pub fn resolve(&self, host: u32, target: &str) -> Option<PageRef> {
        if target == "/" {
            return Some(PageRef::Page { host, page: 0 });
        }
        if target.starts_with("/static/") {
            if let Some(r) = self.resolve_asset(host, target) {
                return Some(r);
            }
        }
        let hostile_trap = self.hosts[host as usize].hostile == Some(Hostile::Trap);
        if hostile_trap {
            if let Some(rest) = target.strip_prefix("/calendar/") {
                let mut it = rest.trim_end_matches('/').split('/');
                let y: i64 = it.next()?.parse().ok()?;
                let m: i64 = it.next()?.parse().ok()?;
                if it.next().is_some() || !(1..=12).contains(&m) || !(1..=9999).contains(&y) {
                    return None;
                }
                let r = PageRef::Calendar {
                    host,
                    month: (y - 2026) * 12 + m - 1,
                };
                return (self.path(r) == target).then_some(r);
            }
            if let Some(rest) = target.strip_prefix("/shop/item-") {
                let (item, sid) = rest.split_once("?sid=")?;
                let r = PageRef::Session {
                    host,
                    item: item.parse().ok()?,
                    sid: u64::from_str_radix(sid, 16).ok()?,
                };
                return (self.path(r) == target).then_some(r);
            }
        }
        let num = target.rsplit_once('-')?.1;
        let num = num.split('.').next()?;
        let page: u32 = num.parse().ok()?;
        if page == 0 || page >= self.config.pages {
            return None;
        }
        (self.page_path(host, page) == target).then_some(PageRef::Page { host, page })
    }

    /// What page `page` of `host` is.
    pub fn kind(&self, host: u32, page: u32) -> PageKind {
        if page == 0 {
            return PageKind::Html;
        }
        let mut r = Rng::new(self.config.seed, &[T_PAGE, host.into(), page.into()]);
        let x = r.below(100);
        match x {
            0..=84 => PageKind::Html,
            85..=88 => PageKind::Pdf,
            89..=92 => PageKind::Image,
            93..=94 => PageKind::BinaryMislabeled,
            95..=97 => {
                let status = *r.pick(&[301u16, 302, 307, 308]);
                let to = match r.below(10) {
                    // Chains: to the next redirect page, if any, else a plain page.
                    0 => self
                        .next_redirect(host, page)
                        .unwrap_or(PageRef::Page { host, page: 0 }),
                    // Loop: to itself.
                    1 => PageRef::Page { host, page },
                    // Another host's home page.
                    2 | 3 => PageRef::Page {
                        host: r.below(self.config.hosts.into()) as u32,
                        page: 0,
                    },
                    _ => PageRef::Page {
                        host,
                        page: r.below(self.config.pages.into()) as u32,
                    },
                };
                PageKind::Redirect { status, to }
            }
            _ => PageKind::Error {
                status: *r.pick(&[404u16, 410, 500, 503]),
            },
        }
    }

    /// The next redirect page of `host` after `page`, within a short window (chains).
    fn next_redirect(&self, host: u32, page: u32) -> Option<PageRef> {
        ((page + 1)..self.config.pages.min(page + 40)).find_map(|p| {
            let mut r = Rng::new(self.config.seed, &[T_PAGE, host.into(), p.into()]);
            (95..=97)
                .contains(&r.below(100))
                .then_some(PageRef::Page { host, page: p })
        })
    }

    /// The full description of an HTML page (links, meta directives), or of any page's kind.
    pub fn page(&self, at: PageRef) -> PageSpec {
        let cfg = &self.config;
        let (host, key) = match at {
            PageRef::Page { host, page } => (host, u64::from(page)),
            PageRef::Calendar { host, month } => (host, (1u64 << 40) ^ month as u64),
            PageRef::Session { host, item, sid } => {
                (host, (2u64 << 40) ^ u64::from(item) ^ sid.rotate_left(7))
            }
            PageRef::Outside { host, page } => (host, u64::from(page)),
            PageRef::Sub { n } => (self.sub_trap_host().unwrap_or(0), (3u64 << 40) ^ n),
            PageRef::Asset { host, n } => return self.asset_spec(at, host, n),
        };
        let kind = match at {
            PageRef::Page { host, page } => self.kind(host, page),
            _ => PageKind::Html,
        };
        let mut r = Rng::new(cfg.seed, &[T_LINKS, host.into(), key]);
        let bytes = match kind {
            PageKind::Html => r
                .lognormal(f64::from(cfg.median_page_bytes), 1.0)
                .clamp(600.0, 2_000_000.0) as u32,
            PageKind::Pdf => r.lognormal(120_000.0, 0.8).clamp(2_000.0, 5_000_000.0) as u32,
            PageKind::Image => r.lognormal(40_000.0, 0.8).clamp(500.0, 3_000_000.0) as u32,
            PageKind::BinaryMislabeled => r.lognormal(20_000.0, 0.5) as u32,
            _ => 0,
        };
        let last_modified = 1_767_225_600 + r.below(300 * 86_400); // 2026-01-01 + up to 300 days
        let mut spec = PageSpec {
            at,
            kind: kind.clone(),
            bytes,
            links: Vec::new(),
            requisites: Vec::new(),
            base: None,
            canonical: None,
            noindex: false,
            meta_nofollow: false,
            x_robots_nofollow: false,
            refresh: None,
            last_modified,
        };
        if kind != PageKind::Html {
            return spec;
        }
        match at {
            PageRef::Calendar { host, month } => {
                spec.links = [month - 1, month + 1]
                    .into_iter()
                    .map(|m| Link {
                        to: PageRef::Calendar { host, month: m },
                        tag: LinkTag::A,
                        nofollow: false,
                        style: HrefStyle::RootRelative,
                    })
                    .chain(std::iter::once(Link {
                        to: PageRef::Page { host, page: 0 },
                        tag: LinkTag::A,
                        nofollow: false,
                        style: HrefStyle::RootRelative,
                    }))
                    .collect();
                return spec;
            }
            PageRef::Sub { n } => {
                spec.links = [2 * n + 1, 2 * n + 2]
                    .into_iter()
                    .filter(|&k| k < SUB_LIMIT)
                    .map(|k| Link {
                        to: PageRef::Sub { n: k },
                        tag: LinkTag::A,
                        nofollow: false,
                        style: HrefStyle::Absolute,
                    })
                    .collect();
                return spec;
            }
            PageRef::Session { host, item, sid } => {
                let mut t = Rng::new(cfg.seed, &[T_TRAP, host.into(), sid]);
                spec.links = (0..4)
                    .map(|k| Link {
                        to: PageRef::Session {
                            host,
                            item: item.wrapping_add(k + 1) % 1000,
                            sid: t.next_u64(),
                        },
                        tag: LinkTag::A,
                        nofollow: false,
                        style: HrefStyle::RootRelative,
                    })
                    .collect();
                return spec;
            }
            _ => {}
        }
        // Directives.
        spec.noindex = r.chance(0.03);
        spec.meta_nofollow = r.chance(0.03);
        spec.x_robots_nofollow = r.chance(0.02);
        if r.chance(0.05) {
            spec.base = Some(format!("/{}/", r.pick(&SECTIONS)));
        }
        if r.chance(0.10) {
            spec.canonical = Some(if r.chance(0.8) {
                at
            } else {
                self.local_target(&mut r, host)
            });
        }
        if r.chance(0.01) {
            spec.refresh = Some(self.local_target(&mut r, host));
        }
        // Links: count log-normal around 25; 30% repeats; 80% on the host; ~1% leave the web.
        let n = r.lognormal(25.0, 0.6).clamp(1.0, 300.0) as usize;
        let mut links: Vec<Link> = Vec::with_capacity(n + 2);
        if let (Some(Hostile::Trap), PageRef::Page { page: 0, .. }) =
            (self.hosts[host as usize].hostile, at)
        {
            links.push(Link {
                to: PageRef::Calendar { host, month: 10 },
                tag: LinkTag::A,
                nofollow: false,
                style: HrefStyle::RootRelative,
            });
            links.push(Link {
                to: PageRef::Session {
                    host,
                    item: 1,
                    sid: r.next_u64(),
                },
                tag: LinkTag::A,
                nofollow: false,
                style: HrefStyle::RootRelative,
            });
            if self.sub_trap_host() == Some(host) {
                links.push(Link {
                    to: PageRef::Sub { n: 0 },
                    tag: LinkTag::A,
                    nofollow: false,
                    style: HrefStyle::Absolute,
                });
            }
        }
        for _ in 0..n {
            if !links.is_empty() && r.chance(0.30) {
                let prev = links[r.below(links.len() as u64) as usize].clone();
                links.push(prev);
                continue;
            }
            let x = r.unit();
            let to = if x < 0.80 {
                self.local_target(&mut r, host)
            } else if x < 0.99 {
                let h = r.zipf(cfg.hosts.into(), 1.0) as u32;
                PageRef::Page {
                    host: h,
                    page: r.zipf(cfg.pages.into(), 1.0) as u32,
                }
            } else {
                PageRef::Outside {
                    host: r.below(OUTSIDE_HOSTS.into()) as u32,
                    page: r.below(100) as u32,
                }
            };
            let tag = match r.below(100) {
                0..=93 => LinkTag::A,
                94..=95 => LinkTag::Area,
                96..=97 => LinkTag::Iframe,
                _ => LinkTag::Link,
            };
            let same_host = matches!(to, PageRef::Page { host: h, .. } if h == host);
            let style = if !same_host {
                if r.chance(0.1) {
                    HrefStyle::SchemeRelative
                } else {
                    HrefStyle::Absolute
                }
            } else {
                match r.below(10) {
                    0 => HrefStyle::Absolute,
                    1..=4 => HrefStyle::RootRelative,
                    _ => HrefStyle::Relative,
                }
            };
            let nofollow = r.chance(0.05) && tag != LinkTag::Iframe; // iframes carry no rel
            links.push(Link {
                to,
                tag,
                nofollow,
                style,
            });
        }
        spec.links = links;
        if let PageRef::Page { page, .. } = at {
            if self.hosts[host as usize].requisites {
                spec.requisites = self.page_requisites(host, page);
            }
        }
        spec
    }

    fn local_target(&self, r: &mut Rng, host: u32) -> PageRef {
        PageRef::Page {
            host,
            page: r.zipf(self.config.pages.into(), 1.0) as u32,
        }
    }

    /// The delay a polite crawler using `agent` must keep between requests to `host`.
    pub fn delay(&self, host: u32, agent: &str) -> Duration {
        let h = &self.hosts[host as usize];
        let crawl_delay = h
            .robots
            .crawl_delay(agent)
            .map(Duration::from_secs_f64)
            .unwrap_or_default();
        crawl_delay.max(self.config.default_delay)
    }

    /// The sitemap URLs listed for `host`, and for each sitemap document path the pages it lists.
    pub fn sitemap_pages(&self, host: u32) -> Vec<PageRef> {
        // Every 7th page, which reaches pages no link points at (Zipf rarely picks high numbers).
        (0..self.config.pages)
            .step_by(7)
            .map(|page| PageRef::Page { host, page })
            .collect()
    }
}

mod hosts;
use hosts::gen_host;

pub mod requisites;
pub use requisites::{
    asset_type, requisite_offset, Requisite, ASSETS, ASSET_APP_JS, ASSET_BG, ASSET_FONT, ASSET_IMG,
    ASSET_PIXEL, ASSET_SITE_CSS, ASSET_THEME_CSS,
};

#[cfg(test)]
mod tests;
