//! The documents of a host besides its pages: robots.txt as the host serves it, and its
//! sitemaps (a urlset, a gzipped urlset, or an index of two gzipped urlsets).

use super::date::iso_date;
use super::respond::gzip;
use super::Rendered;
use crate::model::{PageRef, SitemapKind, Web};
use crate::robots::RobotsServe;

impl Web {
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
}
