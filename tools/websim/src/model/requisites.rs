//! Page requisites ([`WebConfig::requisites_every`]): the stylesheets, script, images and font
//! the HTML pages of a few hosts load to show themselves, served under `/static/`
//! ([`PageRef::Asset`]), and which of them each page and each stylesheet names ([`Requisite`]).
//!
//! Every decision here draws from random streams of its own, never from those of
//! links and text, so a web with requisites has the same link graph and the same non-asset URLs
//! as the web without them; and a web with `requisites_every = 0` is the web it was before
//! requisites existed, byte for byte.
//!
//! **Which hosts.** With `requisites_every = N > 0`, host `h` has requisites when
//! `h % N == offset` ([`requisite_offset`]: drawn from the seed) and it is not hostile (so never
//! a trap host, and never the subdomain trap's pages). TLS and rate-limited hosts can have them;
//! their assets are then `https://` or rate-limited like their pages.
//!
//! **The assets** of such a host, a fixed set ([`ASSETS`], `n` of [`PageRef::Asset`]):
//!
//! | n | path | type | names |
//! |---|---|---|---|
//! | 0 | `/static/site.css` | `text/css` | `@import` of theme.css (`"theme.css"` or `url(/static/theme.css)`, by host: [`Web::import_as_url`]), `url(/static/bg.png)`, `url("img-K.png")` (K by host, relative to the stylesheet) |
//! | 1 | `/static/theme.css` | `text/css` | `@font-face { src: url(font.woff2) format("woff2") }` |
//! | 2 | `/static/app.js` | `text/javascript` | nothing |
//! | 3 | `/static/bg.png` | `image/png` | |
//! | 4 | `/static/font.woff2` | `font/woff2` | |
//! | 5..=12 | `/static/img-0.png` ... `/static/img-7.png` | `image/png` | |
//! | 13 | `/static/private/pixel.png` | `image/png` | |
//!
//! **robots.txt.** A requisite host whose robots.txt is served as text gets, in every group,
//! `Disallow: /static/private/` (the pixel is refused), and one more rule by the host's ordinal
//! `h / N`: even, `Disallow: /static/*.woff2$` (the font, reached only through site.css's
//! `@import` of theme.css); odd, `Disallow: /static/img-7.png`.
//!
//! **Pages.** Every `PageRef::Page` HTML page of a requisite host names, in document order: in the
//! head a `<link rel="stylesheet" href="/static/site.css">` (always on `/`, else 4 pages in 5)
//! and a `<script src="/static/app.js"></script>` (always on `/`, else 3 in 5); in the body,
//! right after the `<h1>`, one or two `<img src="/static/img-K.png">`, sometimes an `<img>` with
//! a `srcset` of two more (`2x`, `3x`), a `<div style="background-image: url('...')">`, a
//! `<picture><source srcset="... 1x"></picture>`, the private pixel, and an image on a host
//! outside the web (`http://x0NN.outside.test/...`: [`PageRef::Outside`]). Same-host hrefs are
//! root-relative. None is inside `<template>` or `<noscript>`, none has a `rel=nofollow`.

use super::*;

/// Decision context of requisites (the first element of their [`Rng::new`] contexts).
pub(super) const T_REQ: u64 = 5;

/// Assets per requisite host (`n` of [`PageRef::Asset`] is below this).
pub const ASSETS: u32 = 14;
/// `/static/site.css`.
pub const ASSET_SITE_CSS: u32 = 0;
/// `/static/theme.css`.
pub const ASSET_THEME_CSS: u32 = 1;
/// `/static/app.js`.
pub const ASSET_APP_JS: u32 = 2;
/// `/static/bg.png`.
pub const ASSET_BG: u32 = 3;
/// `/static/font.woff2`.
pub const ASSET_FONT: u32 = 4;
/// `/static/img-0.png` (`img-K` is `ASSET_IMG + K`, K in 0..8).
pub const ASSET_IMG: u32 = 5;
/// `/static/private/pixel.png` (refused by the robots.txt of every requisite host that has rules).
pub const ASSET_PIXEL: u32 = 13;

/// A requisite element of an HTML page, or a reference in a stylesheet.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Requisite {
    /// `<link rel="stylesheet" href>` in the head.
    Stylesheet(PageRef),
    /// `<script src></script>` in the head.
    Script(PageRef),
    /// `<img src>`, with a `srcset` of these candidates (`2x`, `3x`, ...) if not empty.
    Img {
        /// The `src`.
        src: PageRef,
        /// The `srcset` candidates, densities 2x, 3x, ... in order.
        srcset: Vec<PageRef>,
    },
    /// `<picture><source srcset="URL 1x"></picture>`.
    Picture(PageRef),
    /// `<div style="background-image: url('URL')"></div>`.
    Background(PageRef),
    /// A stylesheet's `@import`.
    Import(PageRef),
    /// A stylesheet's `url()` (not an `@import`).
    CssUrl(PageRef),
}

impl Requisite {
    /// The URLs it loads in document order, each with the tag an extractor reports it under:
    /// `link`, `script`, `img` (src, then srcset), `source`, `style` (a `style` attribute) or
    /// `css` (a stylesheet's `@import` or `url()`).
    pub fn targets(&self) -> Vec<(PageRef, &'static str)> {
        match self {
            Requisite::Stylesheet(r) => vec![(*r, "link")],
            Requisite::Script(r) => vec![(*r, "script")],
            Requisite::Img { src, srcset } => std::iter::once(*src)
                .chain(srcset.iter().copied())
                .map(|r| (r, "img"))
                .collect(),
            Requisite::Picture(r) => vec![(*r, "source")],
            Requisite::Background(r) => vec![(*r, "style")],
            Requisite::Import(r) | Requisite::CssUrl(r) => vec![(*r, "css")],
        }
    }

    /// Whether it is written in the head (stylesheet, script) rather than the body.
    pub fn in_head(&self) -> bool {
        matches!(self, Requisite::Stylesheet(_) | Requisite::Script(_))
    }
}

/// The residue `h % requisites_every` of the requisite hosts, drawn from the seed.
pub fn requisite_offset(cfg: &WebConfig) -> u32 {
    if cfg.requisites_every == 0 {
        return 0;
    }
    (Rng::new(cfg.seed, &[T_REQ, u64::MAX]).below(cfg.requisites_every.into())) as u32
}

/// Whether host `h` (hostile or not) has requisites under `cfg`.
pub(super) fn is_requisite_host(cfg: &WebConfig, h: u32, hostile: Option<Hostile>) -> bool {
    let n = cfg.requisites_every;
    n > 0 && hostile.is_none() && h % n == requisite_offset(cfg)
}

/// Adds the `/static/` rules to the robots.txt of requisite host `h` (see the module doc).
pub(super) fn robots_rules(cfg: &WebConfig, h: u32, robots: &mut RobotsSpec) {
    if !matches!(robots.serve, RobotsServe::Text | RobotsServe::Huge) {
        return;
    }
    let extra = if (h / cfg.requisites_every.max(1)) % 2 == 0 {
        "/static/*.woff2$"
    } else {
        "/static/img-7.png"
    };
    for g in &mut robots.groups {
        for pattern in ["/static/private/", extra] {
            g.rules.push(Rule {
                allow: false,
                pattern: pattern.into(),
            });
        }
    }
}

/// The file name under `/static/` of asset `n`.
fn asset_name(n: u32) -> String {
    match n {
        ASSET_SITE_CSS => "site.css".into(),
        ASSET_THEME_CSS => "theme.css".into(),
        ASSET_APP_JS => "app.js".into(),
        ASSET_BG => "bg.png".into(),
        ASSET_FONT => "font.woff2".into(),
        ASSET_PIXEL => "private/pixel.png".into(),
        k => format!("img-{}.png", k - ASSET_IMG),
    }
}

/// The `Content-Type` asset `n` is served with.
pub fn asset_type(n: u32) -> &'static str {
    match n {
        ASSET_SITE_CSS | ASSET_THEME_CSS => "text/css",
        ASSET_APP_JS => "text/javascript",
        ASSET_FONT => "font/woff2",
        _ => "image/png",
    }
}

impl Web {
    /// The hosts whose HTML pages have requisites, in index order (none when
    /// [`WebConfig::requisites_every`] is 0). A web for an archive-mode test:
    /// `Web::new(WebConfig { requisites_every: 2, ..WebConfig::default() })`, and its truth with
    /// `Policy { requisites: true, ..Policy::new(&web) }` ([`crate::truth::Policy::requisites`]).
    pub fn requisite_hosts(&self) -> Vec<u32> {
        self.hosts
            .iter()
            .filter(|h| h.requisites)
            .map(|h| h.index)
            .collect()
    }

    /// Every asset of `host` (empty unless it is a requisite host), `n` in order.
    pub fn assets(&self, host: u32) -> Vec<PageRef> {
        if !self.hosts[host as usize].requisites {
            return Vec::new();
        }
        (0..ASSETS).map(|n| PageRef::Asset { host, n }).collect()
    }

    /// `/static/...` path of asset `n`.
    pub(super) fn asset_path(n: u32) -> String {
        format!("/static/{}", asset_name(n))
    }

    /// The asset a `/static/` target names on a requisite host.
    pub(super) fn resolve_asset(&self, host: u32, target: &str) -> Option<PageRef> {
        if !self.hosts[host as usize].requisites {
            return None;
        }
        let name = target.strip_prefix("/static/")?;
        (0..ASSETS)
            .find(|&n| asset_name(n) == name)
            .map(|n| PageRef::Asset { host, n })
    }

    /// The description of asset `n` of `host`: kind [`PageKind::Asset`], its size and date, and
    /// for a stylesheet the references in it ([`PageSpec::requisites`]).
    pub(super) fn asset_spec(&self, at: PageRef, host: u32, n: u32) -> PageSpec {
        let mut r = Rng::new(
            self.config.seed,
            &[T_REQ, host.into(), (1u64 << 40) | u64::from(n)],
        );
        let bytes = match n {
            ASSET_SITE_CSS | ASSET_THEME_CSS => 0, // the stylesheet's text, as it is
            ASSET_APP_JS => 200 + r.below(1500) as u32,
            ASSET_FONT => 1000 + r.below(3000) as u32,
            _ => 200 + r.below(3000) as u32,
        };
        let last_modified = 1_767_225_600 + r.below(300 * 86_400);
        let asset = |n| PageRef::Asset { host, n };
        let requisites = match n {
            ASSET_SITE_CSS => vec![
                Requisite::Import(asset(ASSET_THEME_CSS)),
                Requisite::CssUrl(asset(ASSET_BG)),
                Requisite::CssUrl(asset(ASSET_IMG + (self.css_choice(host) >> 1) as u32 % 8)),
            ],
            ASSET_THEME_CSS => vec![Requisite::CssUrl(asset(ASSET_FONT))],
            _ => vec![],
        };
        PageSpec {
            at,
            kind: PageKind::Asset,
            bytes,
            links: Vec::new(),
            requisites,
            base: None,
            canonical: None,
            noindex: false,
            meta_nofollow: false,
            x_robots_nofollow: false,
            refresh: None,
            last_modified,
        }
    }

    /// Random bits fixing how `host`'s site.css is written.
    fn css_choice(&self, host: u32) -> u64 {
        Rng::new(self.config.seed, &[T_REQ, host.into(), 2u64 << 40]).next_u64()
    }

    /// Whether `host`'s site.css spells its `@import` `url(/static/theme.css)` (else
    /// `"theme.css"`).
    pub fn import_as_url(&self, host: u32) -> bool {
        self.css_choice(host) & 1 == 1
    }

    /// The requisites of HTML page `page` of requisite host `host`, in document order.
    pub(super) fn page_requisites(&self, host: u32, page: u32) -> Vec<Requisite> {
        let mut r = Rng::new(self.config.seed, &[T_REQ, host.into(), page.into()]);
        let asset = |n| PageRef::Asset { host, n };
        let img = |r: &mut Rng| asset(ASSET_IMG + r.below(8) as u32);
        let home = page == 0;
        let mut out = Vec::new();
        if r.chance(0.8) || home {
            out.push(Requisite::Stylesheet(asset(ASSET_SITE_CSS)));
        }
        if r.chance(0.6) || home {
            out.push(Requisite::Script(asset(ASSET_APP_JS)));
        }
        for _ in 0..1 + r.below(2) {
            out.push(Requisite::Img {
                src: img(&mut r),
                srcset: vec![],
            });
        }
        if r.chance(0.3) {
            let src = img(&mut r);
            let srcset = vec![img(&mut r), img(&mut r)];
            out.push(Requisite::Img { src, srcset });
        }
        if r.chance(0.25) {
            out.push(Requisite::Background(img(&mut r)));
        }
        if r.chance(0.2) {
            out.push(Requisite::Picture(img(&mut r)));
        }
        if r.chance(0.15) {
            out.push(Requisite::Img {
                src: asset(ASSET_PIXEL),
                srcset: vec![],
            });
        }
        if r.chance(0.1) {
            let host = r.below(OUTSIDE_HOSTS.into()) as u32;
            let page = r.below(100) as u32;
            out.push(Requisite::Img {
                src: PageRef::Outside { host, page },
                srcset: vec![],
            });
        }
        out
    }
}
