//! The perfect crawl itself: its state ([`Crawl`]), the breadth-first loop by depth and rounds of
//! requisites ([`truth`]), queuing what a fetch yields, processing one URL (scope, robots.txt,
//! budgets; the subdomain trap's hosts apart), and the sorted [`Truth`] at the end. What one
//! fetch yields is in `fetch`, robots.txt and reachability in `robots`, URL reading in `urls`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use super::links::expected_links;
use super::urls::{host_of, host_of_ref, target_of};
use super::{Fetched, Outcome, PageLinks, Policy, Reason, Scope, Truth};
use crate::model::{PageRef, Web};
use crate::robots::product_token;

/// What a discovered URL is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// A page of the model (including outside and trap pages).
    Page(PageRef),
    /// A sitemap document of a web host.
    Sitemap,
    /// Another path on a web host (a seed).
    Path,
    /// A URL on the plain-HTTP port of a TLS host: a `301` to the same path over HTTPS.
    Upgrade,
    /// Not a URL of the web.
    Foreign,
}

/// A URL the crawl came across, with what it is and where it was found.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub(super) url: String,
    pub(super) host: Option<u32>,
    pub(super) kind: Kind,
    pub(super) via: Option<u32>,
    /// Discovered as a requisite (processed at the depth it was found at).
    pub(super) requisite: bool,
}

/// The state of the perfect crawl.
pub(super) struct Crawl<'a> {
    pub(super) web: &'a Web,
    pub(super) policy: &'a Policy,
    pub(super) token: String,
    pub(super) in_scope: Vec<bool>,
    /// Every URL come across, with the depth it is queued at (the smallest it was found at).
    pub(super) seen: HashMap<String, u32>,
    pub(super) fetched: Vec<Fetched>,
    pub(super) fetched_at: HashSet<String>,
    pub(super) never: BTreeMap<String, Reason>,
    /// robots.txt fetched, per host: bit 0 its `http` origin, bit 1 its `https` origin.
    pub(super) robots_done: Vec<u8>,
    pub(super) used: Vec<u32>,
    pub(super) pages: Vec<PageLinks>,
    pub(super) not_followed: Vec<(String, Option<u32>)>,
    /// Fetches per registered domain: the web's (`websim.test`), the subdomain trap's.
    pub(super) domain_used: [u32; 2],
    /// Subdomains of the trap whose robots.txt was fetched.
    pub(super) sub_robots: BTreeSet<u64>,
}

/// Computes the truth of `policy` on `web`.
pub fn truth(web: &Web, policy: &Policy) -> Truth {
    let n = web.hosts.len();
    let in_scope = web
        .hosts
        .iter()
        .map(|h| match &policy.scope {
            Scope::Web => true,
            Scope::Hosts(set) => set.contains(&h.name),
        })
        .collect::<Vec<_>>();
    let mut c = Crawl {
        web,
        policy,
        token: product_token(&policy.agent),
        in_scope,
        seen: HashMap::new(),
        fetched: Vec::new(),
        fetched_at: HashSet::new(),
        never: BTreeMap::new(),
        robots_done: vec![0; n],
        used: vec![0; n],
        pages: Vec::new(),
        not_followed: Vec::new(),
        domain_used: [0; 2],
        sub_robots: BTreeSet::new(),
    };
    let seeds: Vec<Item> = match &policy.seeds {
        Some(urls) => urls.iter().map(|u| c.item_of_url(u)).collect(),
        None => (0..n as u32)
            .filter(|&h| c.in_scope[h as usize])
            .map(|h| c.item_of_url(&web.seed_url(h)))
            .collect(),
    };
    let mut level = Vec::new();
    for s in seeds {
        if !c.seen.contains_key(&s.url) {
            c.seen.insert(s.url.clone(), 0);
            level.push(s);
        }
    }
    let mut depth = 0u32;
    while !level.is_empty() && depth <= policy.max_depth {
        let mut next = Vec::new();
        // Rounds: the URLs found one level up, then the requisites they gave, then the
        // requisites of those (a stylesheet's imports), each round in byte order.
        let mut round = level;
        while !round.is_empty() {
            round.sort_unstable_by(|a, b| a.url.cmp(&b.url));
            let mut same = Vec::new();
            for item in round {
                if c.seen.get(&item.url) == Some(&depth) {
                    c.visit(item, depth, &mut next, &mut same);
                }
            }
            round = same;
        }
        level = next;
        depth += 1;
    }
    // (An item whose URL was found again as a requisite one level up is no longer queued here.)
    level.retain(|item| c.seen.get(&item.url) == Some(&depth));
    for item in level {
        let why = if c.scoped(item.host) {
            Reason::Depth
        } else {
            Reason::Scope
        };
        c.never.insert(item.url, why);
    }
    for (url, host) in std::mem::take(&mut c.not_followed) {
        if !c.seen.contains_key(&url) {
            let why = if c.scoped(host) {
                Reason::Nofollow
            } else {
                Reason::Scope
            };
            c.never.entry(url).or_insert(why);
        }
    }
    c.finish()
}

impl Crawl<'_> {
    pub(super) fn scoped(&self, host: Option<u32>) -> bool {
        host.is_some_and(|h| self.in_scope[h as usize])
    }

    pub(super) fn item(&self, r: PageRef, via: Option<u32>) -> Item {
        Item {
            url: self.web.url(r),
            host: host_of_ref(r),
            kind: Kind::Page(r),
            via,
            requisite: false,
        }
    }

    /// Queues a URL found while processing depth `depth`: a link one level down (`next`) if it
    /// was never come across; a requisite at `depth` itself (`same`) unless it is already queued
    /// or processed at `depth` or less (a URL queued one level down is moved up).
    fn discover(&mut self, f: Item, depth: u32, next: &mut Vec<Item>, same: &mut Vec<Item>) {
        let queued = self.seen.get(&f.url).copied();
        if f.requisite {
            if queued.is_none_or(|d| d > depth) {
                self.seen.insert(f.url.clone(), depth);
                same.push(f);
            }
        } else if queued.is_none() {
            self.seen.insert(f.url.clone(), depth + 1);
            next.push(f);
        }
    }

    /// Whether the domain budget (`d`: 0 the web's domain, 1 the subdomain trap's) is spent.
    fn domain_spent(&self, d: usize) -> bool {
        self.policy
            .max_pages_per_domain
            .is_some_and(|b| self.domain_used[d] >= b)
    }

    /// A page of the subdomain trap: its own host (robots.txt 404, allow all), budgets of the
    /// host (one page) and of the trap's registered domain.
    fn visit_sub(
        &mut self,
        n: u64,
        item: Item,
        depth: u32,
        next: &mut Vec<Item>,
        same: &mut Vec<Item>,
    ) {
        let name = format!("s{n}.{}", crate::model::SUB_DOMAIN);
        let in_scope = match &self.policy.scope {
            Scope::Web => true,
            Scope::Hosts(set) => set.contains(&name),
        };
        if !in_scope {
            self.never.insert(item.url, Reason::Scope);
            return;
        }
        // Over the domain's budget the URL is never listed: no robots.txt fetch either.
        if self.domain_spent(1) || self.policy.max_pages_per_host == 0 {
            self.never.insert(item.url, Reason::Budget);
            return;
        }
        if self.sub_robots.insert(n) {
            let url = format!("{}/robots.txt", item.url.trim_end_matches('/'));
            self.seen.entry(url.clone()).or_insert(depth);
            self.fetched_at.insert(url.clone());
            self.fetched.push(Fetched {
                url,
                depth,
                status: 404,
                outcome: Outcome::Robots,
                via: Some(item.url.clone()),
                location: None,
                requisite: false,
            });
        }
        self.domain_used[1] += 1;
        let me = self.fetched.len() as u32;
        let via = item.via.map(|v| self.fetched[v as usize].url.clone());
        let spec = self.web.page(PageRef::Sub { n });
        let links = expected_links(self.web, &spec, self.policy.follow_nofollow);
        let mut found = Vec::new();
        for l in &links {
            if let Some(to) = l.target {
                found.push(self.item(to, Some(me)));
            }
        }
        self.pages.push(PageLinks {
            url: item.url.clone(),
            depth,
            meta_nofollow: false,
            header_nofollow: false,
            links: links.into_iter().map(|l| l.link).collect(),
        });
        self.fetched_at.insert(item.url.clone());
        self.fetched.push(Fetched {
            url: item.url,
            depth,
            status: 200,
            outcome: Outcome::Html,
            via,
            location: None,
            requisite: item.requisite,
        });
        for f in found {
            self.discover(f, depth, next, same);
        }
    }

    /// Processes one URL at `depth`: links it yields go to `next`, requisites to `same`.
    fn visit(&mut self, item: Item, depth: u32, next: &mut Vec<Item>, same: &mut Vec<Item>) {
        if let Kind::Page(PageRef::Sub { n }) = item.kind {
            return self.visit_sub(n, item, depth, next, same);
        }
        let Some(h) = item.host.filter(|&h| self.in_scope[h as usize]) else {
            self.never.insert(item.url, Reason::Scope);
            return;
        };
        // Over the domain's budget a URL is never listed: no robots.txt fetch for it either.
        if self.domain_spent(0) {
            self.never.insert(item.url, Reason::Budget);
            return;
        }
        self.robots(h, &item.url, depth, next);
        if self.fetched_at.contains(&item.url) {
            return; // a seed naming robots.txt, fetched just now
        }
        let spec = &self.web.hosts[h as usize].robots;
        let target = target_of(&item.url);
        // A certificate the crawler must refuse: robots.txt could not be fetched (disallow all).
        if !spec.allowed(&self.token, target) || !self.reachable(h, &item.url) {
            self.never.insert(item.url, Reason::Robots);
            return;
        }
        if self.used[h as usize] >= self.policy.max_pages_per_host || self.domain_spent(0) {
            self.never.insert(item.url, Reason::Budget);
            return;
        }
        self.used[h as usize] += 1;
        self.domain_used[0] += 1;
        let me = self.fetched.len() as u32;
        let via = item.via.map(|v| self.fetched[v as usize].url.clone());
        let (status, outcome, location, found) = self.fetch(h, &item, depth, me);
        self.fetched_at.insert(item.url.clone());
        self.fetched.push(Fetched {
            url: item.url,
            depth,
            status,
            outcome,
            via,
            location,
            requisite: item.requisite,
        });
        for f in found {
            self.discover(f, depth, next, same);
        }
    }

    fn finish(self) -> Truth {
        let mut fetched = self.fetched;
        fetched.sort_unstable_by(|a, b| a.url.cmp(&b.url));
        let mut pages = self.pages;
        pages.sort_unstable_by(|a, b| a.url.cmp(&b.url));
        let mut delays: Vec<(String, Duration)> = (0..self.web.hosts.len() as u32)
            .filter(|&h| self.robots_done[h as usize] != 0)
            .map(|h| {
                let name = self.web.hosts[h as usize].name.clone();
                (name, self.web.delay(h, &self.policy.agent))
            })
            .collect();
        for &n in &self.sub_robots {
            let name = format!("s{n}.{}", crate::model::SUB_DOMAIN);
            delays.push((name, self.web.config.default_delay));
        }
        delays.sort();
        let mut at_budget = BTreeSet::new();
        for (url, why) in &self.never {
            if *why == Reason::Budget {
                at_budget.insert(host_of(url).to_string());
            }
        }
        Truth {
            policy: self.policy.clone(),
            fetched,
            never: self.never.into_iter().collect(),
            delays,
            pages,
            hosts_at_budget: at_budget.into_iter().collect(),
        }
    }
}
