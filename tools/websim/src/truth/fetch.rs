//! One fetch of the perfect crawl: the status a correct client records, the outcome, a
//! redirect's target, and the URLs the answer yields (an HTML page's links and requisites, a
//! stylesheet's references, a sitemap's `<loc>`s, a redirect's `Location`).

use super::crawl::{Crawl, Item, Kind};
use super::links::{expected_links_with, sitemap_locs};
use super::urls::{host_of_ref, target_of};
use super::{Outcome, PageLinks};
use crate::model::{Hostile, PageKind, PageRef, PageSpec};

/// What one fetch gave: status, outcome, redirect target, URLs discovered.
pub(super) type Fetch = (u16, Outcome, Option<String>, Vec<Item>);

impl Crawl<'_> {
    /// One fetch: status, outcome, redirect target, URLs discovered.
    pub(super) fn fetch(&mut self, h: u32, item: &Item, depth: u32, me: u32) -> Fetch {
        let web = self.web;
        let r = match item.kind {
            Kind::Page(r) => r,
            Kind::Upgrade => {
                let to = format!("{}{}", web.origin(h), target_of(&item.url));
                let t = Item {
                    via: Some(me),
                    ..self.item_of_url(&to)
                };
                return (301, Outcome::Redirect, Some(to), vec![t]);
            }
            Kind::Sitemap => return self.fetch_sitemap(h, item, me),
            Kind::Path | Kind::Foreign => return (404, Outcome::Error, None, vec![]),
        };
        if let PageRef::Calendar { .. } = r {
            if web.resolve(h, target_of(&item.url)) != Some(r) {
                return (404, Outcome::Error, None, vec![]); // beyond year 9999
            }
        }
        let hostile = web.hosts[h as usize]
            .hostile
            .is_some_and(|k| k != Hostile::Trap);
        let spec = web.page(r);
        if hostile {
            return (0, Outcome::Hostile, None, vec![]);
        }
        match &spec.kind {
            PageKind::Html | PageKind::BinaryMislabeled => self.fetch_html(item, depth, me, &spec),
            // A stylesheet, read in archive mode: its `@import`s and `url()`s are requisites.
            PageKind::Asset if self.policy.requisites && !spec.requisites.is_empty() => {
                self.fetch_stylesheet(item, depth, me, &spec)
            }
            PageKind::Pdf | PageKind::Image | PageKind::Asset => {
                (200, Outcome::Other, None, vec![])
            }
            PageKind::Redirect { status, to } => {
                let t = self.item(*to, Some(me));
                (*status, Outcome::Redirect, Some(t.url.clone()), vec![t])
            }
            PageKind::Error { status } => (*status, Outcome::Error, None, vec![]),
        }
    }

    /// A sitemap document of host `h`: its `<loc>`s (404 for a path the host has no sitemap at).
    fn fetch_sitemap(&mut self, h: u32, item: &Item, me: u32) -> Fetch {
        let target = target_of(&item.url);
        match sitemap_locs(self.web, h, target) {
            Some(locs) => {
                let found = locs
                    .into_iter()
                    .map(|u| Item {
                        via: Some(me),
                        ..self.item_of_url(&u)
                    })
                    .collect();
                (200, Outcome::Sitemap, None, found)
            }
            None => (404, Outcome::Error, None, vec![]),
        }
    }

    /// An HTML page (or binary bytes served as HTML, which have no links): its followed links and
    /// requisites are found, the others noted as not followed, and its links recorded.
    fn fetch_html(&mut self, item: &Item, depth: u32, me: u32, spec: &PageSpec) -> Fetch {
        let links = expected_links_with(
            self.web,
            spec,
            self.policy.follow_nofollow,
            self.policy.requisites,
        );
        let mut found = Vec::new();
        for l in &links {
            let to = match l.target {
                Some(t) => t,
                None => continue,
            };
            if l.link.followed {
                found.push(Item {
                    requisite: l.link.requisite,
                    ..self.item(to, Some(me))
                });
            } else {
                self.not_followed
                    .push((l.link.url.clone(), host_of_ref(to)));
            }
        }
        self.pages.push(PageLinks {
            url: item.url.clone(),
            depth,
            meta_nofollow: spec.meta_nofollow,
            header_nofollow: spec.x_robots_nofollow,
            links: links.into_iter().map(|l| l.link).collect(),
        });
        (200, Outcome::Html, None, found)
    }

    /// A stylesheet read in archive mode: its `@import`s and `url()`s, all requisites.
    fn fetch_stylesheet(&mut self, item: &Item, depth: u32, me: u32, spec: &PageSpec) -> Fetch {
        let links = expected_links_with(self.web, spec, self.policy.follow_nofollow, true);
        let found = links
            .iter()
            .filter_map(|l| l.target)
            .map(|to| Item {
                requisite: true,
                ..self.item(to, Some(me))
            })
            .collect();
        self.pages.push(PageLinks {
            url: item.url.clone(),
            depth,
            meta_nofollow: false,
            header_nofollow: false,
            links: links.into_iter().map(|l| l.link).collect(),
        });
        (200, Outcome::Stylesheet, None, found)
    }
}
