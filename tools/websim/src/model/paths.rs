//! URL spelling: the path and URL of every page ([`Web::path`], [`Web::url`]), and back from a
//! request path to the page it names ([`Web::resolve`]), which refuses any path the web never
//! generated.

use super::*;

impl Web {
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
}
