//! Reading URLs: a URL string to what it is on the web ([`Crawl::item_of_url`]: a page of the
//! model, a sitemap, another path, an `http://` URL of a TLS host, or foreign), and the parts of
//! a URL the crawl needs.

use super::crawl::{Crawl, Item, Kind};
use crate::model::PageRef;

impl Crawl<'_> {
    /// Reads a seed URL: a web host's URL (right scheme and port), or foreign.
    pub(super) fn item_of_url(&self, url: &str) -> Item {
        let foreign = Item {
            url: url.to_string(),
            host: None,
            kind: Kind::Foreign,
            via: None,
            requisite: false,
        };
        let (tls, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => return foreign,
        };
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (auth, target) = rest.split_at(end);
        let (name, port) = match auth.rsplit_once(':') {
            Some((h, p)) => (h, p.parse::<u16>().ok()),
            None => (auth, Some(if tls { 443 } else { 80 })),
        };
        let Some(h) = self.web.host_index(&name.to_ascii_lowercase()) else {
            return foreign;
        };
        let host_tls = self.web.hosts[h as usize].tls.is_some();
        let cfg = &self.web.config;
        if port != Some(if tls { cfg.tls_port } else { cfg.port }) || (tls && !host_tls) {
            return foreign;
        }
        let target = if target.is_empty() { "/" } else { target };
        if host_tls && !tls && target != "/robots.txt" {
            return Item {
                url: format!("{}{target}", self.web.http_origin(h)),
                host: Some(h),
                kind: Kind::Upgrade,
                via: None,
                requisite: false,
            };
        }
        if let Some(r) = self.web.resolve(h, target) {
            if tls == host_tls {
                return self.item(r, None);
            }
        }
        let kind = if self.web.sitemap_paths(h).contains(&target) {
            Kind::Sitemap
        } else {
            Kind::Path
        };
        let origin = if tls {
            self.web.origin(h)
        } else {
            self.web.http_origin(h)
        };
        Item {
            url: format!("{origin}{target}"),
            host: Some(h),
            kind,
            via: None,
            requisite: false,
        }
    }
}

/// The web host of a page (`None` outside the web).
pub(super) fn host_of_ref(r: PageRef) -> Option<u32> {
    match r {
        PageRef::Page { host, .. }
        | PageRef::Calendar { host, .. }
        | PageRef::Session { host, .. }
        | PageRef::Asset { host, .. } => Some(host),
        PageRef::Outside { .. } | PageRef::Sub { .. } => None,
    }
}

/// Path and query of an absolute URL (`/` if it has none).
pub(super) fn target_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find(['/', '?']).map_or("/", |i| &rest[i..])
}

/// The host name of an `http://` or `https://` URL (without port).
pub(super) fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let auth = rest.split(['/', '?']).next().unwrap_or(rest);
    auth.rsplit_once(':').map_or(auth, |(h, _)| h)
}
