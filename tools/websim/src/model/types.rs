//! The vocabulary of the model: a host's personality ([`HostSpec`] and the kinds it is made of:
//! hostile, TLS, coding, charset, sitemaps) and a page's description ([`PageRef`], [`PageKind`],
//! [`PageSpec`] and its [`Link`]s). Only types; the generation is in the sibling modules.

use super::*;

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
