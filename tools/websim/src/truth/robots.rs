//! robots.txt in the perfect crawl: whether an origin can be reached at all (TLS certificates a
//! careful client refuses), and the one fetch of each origin's robots.txt, read per RFC 9309 as
//! it is served, whose `Sitemap:` lines are links.

use super::crawl::{Crawl, Item};
use super::{Fetched, Outcome};
use crate::robots::RobotsServe;

impl Crawl<'_> {
    /// Whether a crawler that checks certificates can reach `url` of host `h` (not an `https`
    /// URL of a host whose certificate is expired, for another name or self-signed).
    pub(super) fn reachable(&self, h: u32, url: &str) -> bool {
        !url.starts_with("https://") || self.web.hosts[h as usize].tls.is_some_and(|t| t.trusted())
    }

    /// Fetches the robots.txt of `trigger`'s origin (RFC 9309: per scheme, host and port) if
    /// this is the origin's first URL.
    pub(super) fn robots(&mut self, h: u32, trigger: &str, depth: u32, next: &mut Vec<Item>) {
        let tls = trigger.starts_with("https://");
        let bit = if tls { 2 } else { 1 };
        if self.robots_done[h as usize] & bit != 0 {
            return;
        }
        self.robots_done[h as usize] |= bit;
        let spec = &self.web.hosts[h as usize].robots;
        let reachable = self.reachable(h, trigger);
        let status = match spec.serve {
            _ if !reachable => 0,
            RobotsServe::Text | RobotsServe::Huge | RobotsServe::Html => 200,
            RobotsServe::NotFound => 404,
            RobotsServe::ServerError => 503,
            RobotsServe::Timeout => 0,
        };
        let origin = if tls {
            self.web.origin(h)
        } else {
            self.web.http_origin(h)
        };
        let url = format!("{origin}/robots.txt");
        let me = self.fetched.len() as u32;
        self.seen.entry(url.clone()).or_insert(depth);
        self.fetched_at.insert(url.clone());
        self.fetched.push(Fetched {
            url,
            depth,
            status,
            outcome: Outcome::Robots,
            via: Some(trigger.to_string()),
            location: None,
            requisite: false,
        });
        if !reachable || !matches!(spec.serve, RobotsServe::Text | RobotsServe::Huge) {
            return;
        }
        for sm in &spec.sitemaps {
            let item = Item {
                via: Some(me),
                ..self.item_of_url(sm)
            };
            if !self.seen.contains_key(&item.url) {
                self.seen.insert(item.url.clone(), depth + 1);
                next.push(item);
            }
        }
    }
}
