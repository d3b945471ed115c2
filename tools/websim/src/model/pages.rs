//! Page generation: what each page is ([`Web::kind`]) and its full description
//! ([`Web::page`]): size, date, meta directives and links, drawn from `(seed, host, page)`.

use super::*;

impl Web {
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
        if let Some(links) = self.trap_page_links(at) {
            spec.links = links;
            return spec;
        }
        self.directives(&mut spec, host, &mut r);
        spec.links = self.links(at, host, &mut r);
        if let PageRef::Page { page, .. } = at {
            if self.hosts[host as usize].requisites {
                spec.requisites = self.page_requisites(host, page);
            }
        }
        spec
    }

    /// The links of a page of a trap (a calendar month, the subdomain trap, a session-id page),
    /// which lead on endlessly; `None` for any other page.
    fn trap_page_links(&self, at: PageRef) -> Option<Vec<Link>> {
        let link = |to: PageRef, style: HrefStyle| Link {
            to,
            tag: LinkTag::A,
            nofollow: false,
            style,
        };
        match at {
            PageRef::Calendar { host, month } => Some(
                [month - 1, month + 1]
                    .into_iter()
                    .map(|m| {
                        link(
                            PageRef::Calendar { host, month: m },
                            HrefStyle::RootRelative,
                        )
                    })
                    .chain(std::iter::once(link(
                        PageRef::Page { host, page: 0 },
                        HrefStyle::RootRelative,
                    )))
                    .collect(),
            ),
            PageRef::Sub { n } => Some(
                [2 * n + 1, 2 * n + 2]
                    .into_iter()
                    .filter(|&k| k < SUB_LIMIT)
                    .map(|k| link(PageRef::Sub { n: k }, HrefStyle::Absolute))
                    .collect(),
            ),
            PageRef::Session { host, item, sid } => {
                let mut t = Rng::new(self.config.seed, &[T_TRAP, host.into(), sid]);
                Some(
                    (0..4)
                        .map(|k| {
                            let to = PageRef::Session {
                                host,
                                item: item.wrapping_add(k + 1) % 1000,
                                sid: t.next_u64(),
                            };
                            link(to, HrefStyle::RootRelative)
                        })
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// The meta directives of an HTML page: robots `noindex`/`nofollow`, `X-Robots-Tag`,
    /// `<base href>`, canonical and refresh.
    fn directives(&self, spec: &mut PageSpec, host: u32, r: &mut Rng) {
        spec.noindex = r.chance(0.03);
        spec.meta_nofollow = r.chance(0.03);
        spec.x_robots_nofollow = r.chance(0.02);
        if r.chance(0.05) {
            spec.base = Some(format!("/{}/", r.pick(&SECTIONS)));
        }
        if r.chance(0.10) {
            spec.canonical = Some(if r.chance(0.8) {
                spec.at
            } else {
                self.local_target(r, host)
            });
        }
        if r.chance(0.01) {
            spec.refresh = Some(self.local_target(r, host));
        }
    }

    /// The links of an HTML page: count log-normal around 25; 30% repeats; 80% on the host; ~1%
    /// leave the web. A trap host's home first links into its traps.
    fn links(&self, at: PageRef, host: u32, r: &mut Rng) -> Vec<Link> {
        let n = r.lognormal(25.0, 0.6).clamp(1.0, 300.0) as usize;
        let mut links: Vec<Link> = Vec::with_capacity(n + 2);
        if let (Some(Hostile::Trap), PageRef::Page { page: 0, .. }) =
            (self.hosts[host as usize].hostile, at)
        {
            self.trap_entry_links(host, &mut links, r);
        }
        for _ in 0..n {
            if !links.is_empty() && r.chance(0.30) {
                let prev = links[r.below(links.len() as u64) as usize].clone();
                links.push(prev);
                continue;
            }
            links.push(self.random_link(host, r));
        }
        links
    }

    /// The trap host's home page's ways into its traps: a calendar month, a session-id page and,
    /// with [`WebConfig::subdomain_trap`], the first subdomain.
    fn trap_entry_links(&self, host: u32, links: &mut Vec<Link>, r: &mut Rng) {
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

    /// A fresh link of a page of `host`: its target, element, href style and `rel=nofollow`.
    fn random_link(&self, host: u32, r: &mut Rng) -> Link {
        let cfg = &self.config;
        let x = r.unit();
        let to = if x < 0.80 {
            self.local_target(r, host)
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
        Link {
            to,
            tag,
            nofollow,
            style,
        }
    }

    fn local_target(&self, r: &mut Rng, host: u32) -> PageRef {
        PageRef::Page {
            host,
            page: r.zipf(self.config.pages.into(), 1.0) as u32,
        }
    }
}
