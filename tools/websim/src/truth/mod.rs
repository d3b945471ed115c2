//! Ground truth: exactly what a perfect, polite crawler with a given [`Policy`] fetches from a
//! [`Web`], what it must never fetch, how long it must wait between requests to each host, and
//! which links it must extract from every page it fetched.
//!
//! Why a model-side computation and not a reference crawl: the truth has to be *independent* of
//! the crawler under test and *exact*, so it is computed from the structured model
//! ([`Web::page`], [`Web::url`], [`Web::resolve`], the robots spec and sitemap lists), never by
//! parsing what websim serves. A test (`tests/truth.rs`) checks on a sample of pages that the
//! model's links equal what an independent extraction finds in the rendered HTML, so the model
//! and the bytes cannot drift apart unnoticed.
//!
//! # The contract
//!
//! dragnet's stages are tested against these semantics; a crawler that follows them fetches
//! exactly [`Truth::fetched`].
//!
//! **URLs.** Every URL is spelled as websim spells it ([`Web::url`]): `http://host[:port]/path`,
//! or `https://host[:tls_port]/path` for a TLS host ([`crate::model::Tls`]), lower-case host,
//! port only when it is not the scheme's default, no fragment. A link's URL is its href resolved
//! against the document URL or the `<base href>` (RFC 3986 reference resolution), fragment dropped.
//!
//! **Crawl order.** Breadth-first by depth. Seeds have depth 0 (by default every in-scope host's
//! `/`). A URL first discovered on a page at depth `d` has depth `d + 1` (a requisite: `d`, see
//! **Requisites** below); a URL is processed once, at the smallest depth it is discovered at.
//! Within one depth, URLs are processed in byte order of their URL (with requisites: in rounds,
//! each in byte order). Only depths up to [`Policy::max_depth`] are processed: a URL first discovered
//! deeper is never fetched (`depth`, or `scope` if out of scope), and does not cause a robots.txt
//! fetch. Processing a URL at depth `d` means, in this order:
//!
//! 1. **Scope.** A URL whose host is not in [`Policy::scope`] (hosts under `outside.test`, URLs of
//!    foreign hosts or ports, web hosts left out of the scope) is never fetched (`scope`).
//! 2. **robots.txt first.** The first time an origin (scheme, host, port) is processed, its
//!    `/robots.txt` is fetched (one
//!    fetch, at the depth of the URL that caused it, not counted in the host's budget) and read
//!    per RFC 9309 as served: 200 text -> its rules, only the first 500 KiB counting; 404 ->
//!    allow all; 5xx, or no answer (the server holds the connection silent and closes it) ->
//!    disallow all; an HTML page served with 200 -> no valid rules -> allow all. The group is that
//!    of the agent's product token (text before the first `/`, space, `(` or `;`), else `*`;
//!    the longest matching pattern wins, `Allow` on ties ([`crate::robots`], the same matcher
//!    [`crate::site::Site::disallowed`] uses). `Sitemap:` lines are links of robots.txt: they are
//!    discovered at depth `d + 1` and crawled like any URL (scope, robots, depth, budget apply).
//!    **TLS.** A crawler that trusts the web's test CA (and nothing it should not) completes
//!    the handshake with valid TLS hosts only: the robots.txt of an `https` origin whose
//!    certificate is expired, for another name or self-signed is an unreachable fetch (status
//!    0: disallow all), and the origin's URLs are never fetched (`robots`). A TLS host's
//!    `http://` URLs (only [`Web::seed_url`] spells any) are on a plain port that serves
//!    robots.txt itself and answers everything else with a `301` to the same path over HTTPS.
//! 3. **Robots.** A URL robots.txt disallows is never fetched (`robots`). The target matched is
//!    path plus query.
//! 4. **Budget.** At most [`Policy::max_pages_per_host`] fetches per host besides robots.txt
//!    (pages, redirects, errors, sitemap documents all count); URLs of a host whose budget is
//!    spent are never fetched (`budget`). This is what bounds the trap host.
//! 5. **Fetch.** The URL is fetched (one request, also for a redirect), and what it yields is
//!    discovered at depth `d + 1`:
//!    - an HTML page (200, `text/html`): its links, from `<a href>`, `<area href>`,
//!      `<iframe src>`, `<link href>` (any rel, including `canonical`, `alternate` and, without
//!      [`Policy::requisites`], `stylesheet`) and the `<meta http-equiv=refresh>` target, in
//!      document order, duplicates kept. A link is
//!      *followed* (discovered) unless it has `rel` containing `nofollow`, or the page has
//!      `<meta name=robots content=...nofollow...>` or an `X-Robots-Tag: ...nofollow` header,
//!      in which case none of its links are followed; with [`Policy::follow_nofollow`] every link
//!      is followed. Binary bytes served as `text/html` parse to no links;
//!    - a redirect (301, 302, 307, 308): its `Location`, always followed, never fetched inline;
//!    - a sitemap document: every `<loc>` (a sitemap index's children, a urlset's pages);
//!      gzipped sitemaps are gunzipped first;
//!    - PDF, PNG, error statuses (404, 410, 500, 503), unknown paths (404), assets (a
//!      stylesheet too, unless [`Policy::requisites`]): nothing.
//!    - Hostile hosts (all but the trap): robots.txt and sitemaps are served normally, every
//!      other response is broken (a body dripping slower than any sane timeout, a body that never
//!      ends, 1 MiB of headers, a gzip bomb, a reset, a short body): the fetch is attempted,
//!      counts as a fetch with status 0, and yields nothing, not even a redirect's `Location`.
//!      This assumes the crawler's timeout, header limit and decompression cap are below what
//!      the web's [`crate::model::WebConfig`] serves (`drip_interval`, `bomb_bytes`).
//!    - A rate-limited host ([`crate::model::WebConfig::rate_limit_every`]) answers `429` to a
//!      client faster than its bucket allows; such an answer is not a fetch (the crawler asks
//!      again later), so the truth lists its pages as fetched like any host's.
//!    - The subdomain trap ([`crate::model::WebConfig::subdomain_trap`]): each subdomain of
//!      `trap-subs.test` is a host of its own (its robots.txt fetched first: 404), with one
//!      page linking to two more subdomains; only [`Policy::max_pages_per_domain`] and the depth
//!      bound it. The budget per registered domain counts fetches like the host budget, for the
//!      web's domain (`websim.test`) and the trap's; over it a URL is never fetched (`budget`)
//!      and its host's robots.txt is not fetched for it.
//!    - The trap host answers like a normal host, but its infinite calendar and session-id
//!      pages link onwards endlessly; only [`Policy::max_depth`] and the budget stop it.
//!
//! **Requisites** (only with [`Policy::requisites`], dragnet's archive mode; webs with
//! [`crate::model::WebConfig::requisites_every`] > 0 have them). A fetched HTML page's requisites
//! (`<link rel=stylesheet href>`, `<script src>`, `<img src>` and `srcset`, `<source srcset>`,
//! `url()` in a `style` attribute: [`expected_links_with`]) and a fetched stylesheet's
//! (`text/css`: its `@import`s and `url()`s, resolved against the stylesheet's URL; outcome
//! `stylesheet`) are discovered at the page's or stylesheet's **own depth `d`**, not `d + 1`, so
//! [`Policy::max_depth`] never cuts a page from them; then each is processed like any URL
//! (scope, robots.txt, budgets; each URL once). A requisite is followed as the page's links are:
//! not from a page whose meta robots or `X-Robots-Tag` says nofollow (unless
//! [`Policy::follow_nofollow`]); a stylesheet's are always followed. **Order within a depth:**
//! round 0 is the URLs found one level up (the seeds at depth 0), in byte order; round `k + 1`
//! is the requisites first found during round `k`, in byte order (a page's stylesheet in round 1,
//! that stylesheet's `@import` in round 2, ...); depth `d + 1` starts when a round finds
//! nothing. A URL is processed at the smallest depth it is found at: a URL queued for `d + 1` as
//! a link and found again as a requisite at `d` is processed at `d`, as a requisite. In
//! [`Fetched`] a requisite has `requisite: true` and `via` the page or stylesheet that needs it,
//! at the same depth.
//!
//! Links seen only as not-followed links are never fetched either (`nofollow`). Every URL the
//! crawl comes across is therefore in exactly one of [`Truth::fetched`] and [`Truth::never`].
//! [`Fetched::via`] names the fetched URL each one was first discovered from, so every fetch but
//! the seeds and robots.txt is explained by a followed link of a fetch one level up (or, a
//! requisite, by a followed requisite of a fetch at its own depth).
//!
//! **Delays.** Every host whose robots.txt was fetched must see requests at least
//! [`Web::delay`] apart (crawl-delay of the agent's group, or the web's default), robots.txt
//! included.
//!
//! **Caveat: budget-bound hosts.** Which URLs of a host fit in its budget depends on the crawl
//! order; the truth uses the order above. A crawler with another order (a priority queue) may
//! fetch a different subset of a host in [`Truth::hosts_at_budget`] (and so discover a slightly
//! different set elsewhere); compare such hosts by count. The default budget ([`Policy::new`])
//! binds on the trap host only.
//!
//! # Files ([`Truth::write_files`])
//!
//! All sorted by URL (byte order), LF line ends, byte-identical for the same web and policy:
//! `fetch.txt` (one URL a line), `fetch.tsv` (`url depth status outcome via location`),
//! `never.txt`, `never.tsv` (`url reason`), `delays.tsv` (`host delay_ms`), `links.jsonl`
//! (one [`PageLinks`] per fetched HTML page) and `summary.json` (counts and the policy).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use serde::Serialize;

use crate::model::{Hostile, LinkTag, PageKind, PageRef, PageSpec, Requisite, SitemapKind, Web};
use crate::robots::{product_token, RobotsServe};

mod files;

/// Which hosts a crawl may fetch from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every host of the web (never `*.outside.test`).
    Web,
    /// These host names of the web only.
    Hosts(BTreeSet<String>),
}

/// A crawl policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The User-Agent (its product token selects the robots.txt group).
    pub agent: String,
    /// Seed URLs; `None`: the `/` of every in-scope host.
    pub seeds: Option<Vec<String>>,
    /// Hosts that may be fetched.
    pub scope: Scope,
    /// Largest depth fetched (seeds are depth 0).
    pub max_depth: u32,
    /// Follow `rel=nofollow` links and links of nofollow pages.
    pub follow_nofollow: bool,
    /// Fetches per host besides robots.txt (the trap budget).
    pub max_pages_per_host: u32,
    /// Fetches per registered domain besides robots.txt (`websim.test` for the web's hosts,
    /// `trap-subs.test` for the subdomain trap's); `None`: no such budget.
    pub max_pages_per_domain: Option<u32>,
    /// Archive mode (dragnet's `[parse] requisites`): fetch every fetched page's requisites
    /// (images, scripts, stylesheets, `srcset` candidates, `style` `url()`s) and every fetched
    /// stylesheet's `@import`s and `url()`s, at the depth of the page or stylesheet (see the
    /// module doc, **Requisites**). Default false: requisites are not links and are never
    /// fetched, but for `<link rel=stylesheet>`, a link like any `<link href>`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requisites: bool,
}

impl Policy {
    /// The default policy for `web`: agent `dragnet`, every host's `/` as seed, the whole web in
    /// scope, depth up to 100, nofollow respected, and a budget of pages per host + 100, which no
    /// normal host can reach (it has `pages` pages and at most 3 sitemap documents).
    pub fn new(web: &Web) -> Policy {
        Policy {
            agent: "dragnet".into(),
            seeds: None,
            scope: Scope::Web,
            max_depth: 100,
            follow_nofollow: false,
            max_pages_per_host: web.config.pages.saturating_add(100),
            max_pages_per_domain: None,
            requisites: false,
        }
    }
}

/// What fetching a URL gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `/robots.txt` (any status, or 0: no answer).
    Robots,
    /// A sitemap document.
    Sitemap,
    /// A 200 `text/html` page (its links are in [`Truth::pages`]).
    Html,
    /// Another 200 document (PDF, PNG): no links.
    Other,
    /// A redirect: its `Location` was discovered.
    Redirect,
    /// An error status (404, 410, 500, 503) or an unknown path.
    Error,
    /// A hostile host's broken response (status 0): nothing.
    Hostile,
    /// A 200 `text/css` stylesheet read for its `@import`s and `url()`s ([`Policy::requisites`]
    /// only; without it a stylesheet is [`Outcome::Other`]).
    Stylesheet,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Robots => "robots",
            Outcome::Sitemap => "sitemap",
            Outcome::Html => "html",
            Outcome::Other => "other",
            Outcome::Redirect => "redirect",
            Outcome::Error => "error",
            Outcome::Hostile => "hostile",
            Outcome::Stylesheet => "stylesheet",
        }
    }
}

/// Why a URL the crawl came across is never fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Its host is out of scope.
    Scope,
    /// robots.txt disallows it (or robots.txt failed: disallow all).
    Robots,
    /// Discovered beyond `max_depth`.
    Depth,
    /// Its host's budget was spent.
    Budget,
    /// Only ever seen as a link that is not followed.
    Nofollow,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::Scope => "scope",
            Reason::Robots => "robots",
            Reason::Depth => "depth",
            Reason::Budget => "budget",
            Reason::Nofollow => "nofollow",
        }
    }
}

/// One fetch of the perfect crawl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fetched {
    /// The URL.
    pub url: String,
    /// Its depth (robots.txt: the depth of the URL that needed it).
    pub depth: u32,
    /// HTTP status a correct client records (0: no usable response).
    pub status: u16,
    /// What it gave.
    pub outcome: Outcome,
    /// The fetched URL it was first discovered from (robots.txt: the URL that needed it;
    /// `None` for seeds).
    pub via: Option<String>,
    /// A redirect's target.
    pub location: Option<String>,
    /// First discovered as a requisite of the page or stylesheet `via`, at its depth
    /// ([`Policy::requisites`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requisite: bool,
}

/// A link as an HTML link extractor must find it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpectedLink {
    /// Absolute URL (base resolved, no fragment).
    pub url: String,
    /// Element: `a`, `area`, `iframe`, `link` or `meta` (refresh); for a requisite also
    /// `script`, `img`, `source`, `style` (a `style` attribute) or `css` (in a stylesheet).
    pub tag: &'static str,
    /// The element's `rel` contains `nofollow`.
    pub nofollow: bool,
    /// The crawler follows it under the policy.
    pub followed: bool,
    /// A requisite (only with [`Policy::requisites`]): discovered at the page's own depth.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requisite: bool,
}

/// The links of one fetched HTML page, or with [`Policy::requisites`] of one fetched stylesheet
/// (one line of `links.jsonl`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageLinks {
    /// The page.
    pub url: String,
    /// Its depth.
    pub depth: u32,
    /// `<meta name=robots>` says nofollow.
    pub meta_nofollow: bool,
    /// `X-Robots-Tag` says nofollow.
    pub header_nofollow: bool,
    /// Links in document order, duplicates kept.
    pub links: Vec<ExpectedLink>,
}

/// The ground truth of a crawl (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    /// The policy it is the truth for.
    pub policy: Policy,
    /// Every fetch, sorted by URL.
    pub fetched: Vec<Fetched>,
    /// Every URL come across and not fetched, with why, sorted by URL.
    pub never: Vec<(String, Reason)>,
    /// Minimum delay per visited host, sorted by host name.
    pub delays: Vec<(String, Duration)>,
    /// Links of every fetched HTML page, sorted by URL.
    pub pages: Vec<PageLinks>,
    /// Hosts where the budget refused a URL, sorted.
    pub hosts_at_budget: Vec<String>,
}

/// What a discovered URL is.
#[derive(Debug, Clone, Copy)]
enum Kind {
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

#[derive(Debug, Clone)]
struct Item {
    url: String,
    host: Option<u32>,
    kind: Kind,
    via: Option<u32>,
    /// Discovered as a requisite (processed at the depth it was found at).
    requisite: bool,
}

struct Crawl<'a> {
    web: &'a Web,
    policy: &'a Policy,
    token: String,
    in_scope: Vec<bool>,
    /// Every URL come across, with the depth it is queued at (the smallest it was found at).
    seen: HashMap<String, u32>,
    fetched: Vec<Fetched>,
    fetched_at: HashSet<String>,
    never: BTreeMap<String, Reason>,
    /// robots.txt fetched, per host: bit 0 its `http` origin, bit 1 its `https` origin.
    robots_done: Vec<u8>,
    used: Vec<u32>,
    pages: Vec<PageLinks>,
    not_followed: Vec<(String, Option<u32>)>,
    /// Fetches per registered domain: the web's (`websim.test`), the subdomain trap's.
    domain_used: [u32; 2],
    /// Subdomains of the trap whose robots.txt was fetched.
    sub_robots: BTreeSet<u64>,
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
    fn scoped(&self, host: Option<u32>) -> bool {
        host.is_some_and(|h| self.in_scope[h as usize])
    }

    fn item(&self, r: PageRef, via: Option<u32>) -> Item {
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

    /// Reads a seed URL: a web host's URL (right scheme and port), or foreign.
    fn item_of_url(&self, url: &str) -> Item {
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

    /// Whether a crawler that checks certificates can reach `url` of host `h` (not an `https`
    /// URL of a host whose certificate is expired, for another name or self-signed).
    fn reachable(&self, h: u32, url: &str) -> bool {
        !url.starts_with("https://") || self.web.hosts[h as usize].tls.is_some_and(|t| t.trusted())
    }

    /// Fetches the robots.txt of `trigger`'s origin (RFC 9309: per scheme, host and port) if
    /// this is the origin's first URL.
    fn robots(&mut self, h: u32, trigger: &str, depth: u32, next: &mut Vec<Item>) {
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

    /// One fetch: status, outcome, redirect target, URLs discovered.
    fn fetch(
        &mut self,
        h: u32,
        item: &Item,
        depth: u32,
        me: u32,
    ) -> (u16, Outcome, Option<String>, Vec<Item>) {
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
            Kind::Sitemap => {
                let target = target_of(&item.url);
                return match sitemap_locs(web, h, target) {
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
                };
            }
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
            PageKind::Html | PageKind::BinaryMislabeled => {
                let links = expected_links_with(
                    web,
                    &spec,
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
            // A stylesheet, read in archive mode: its `@import`s and `url()`s are requisites.
            PageKind::Asset if self.policy.requisites && !spec.requisites.is_empty() => {
                let links = expected_links_with(web, &spec, self.policy.follow_nofollow, true);
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

/// The web host of a page (`None` outside the web).
fn host_of_ref(r: PageRef) -> Option<u32> {
    match r {
        PageRef::Page { host, .. }
        | PageRef::Calendar { host, .. }
        | PageRef::Session { host, .. }
        | PageRef::Asset { host, .. } => Some(host),
        PageRef::Outside { .. } | PageRef::Sub { .. } => None,
    }
}

/// Path and query of an absolute URL (`/` if it has none).
fn target_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find(['/', '?']).map_or("/", |i| &rest[i..])
}

/// The host name of an `http://` or `https://` URL (without port).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let auth = rest.split(['/', '?']).next().unwrap_or(rest);
    auth.rsplit_once(':').map_or(auth, |(h, _)| h)
}

/// A link of the model with the page it points at.
#[derive(Debug, Clone)]
pub struct ModelLink {
    /// The link as the extractor must find it.
    pub link: ExpectedLink,
    /// The model page it names (always `Some` for the model's own pages).
    pub target: Option<PageRef>,
}

/// The links an HTML link extractor finds on the page `spec` (document order: the canonical
/// `<link>`, the refresh `<meta>` and a `<link rel=stylesheet>` in the head, then the body's
/// links), with whether a crawler follows each. Empty for binary bytes served as HTML and for
/// non-HTML pages. [`expected_links_with`] with `requisites` false.
pub fn expected_links(web: &Web, spec: &PageSpec, follow_nofollow: bool) -> Vec<ModelLink> {
    expected_links_with(web, spec, follow_nofollow, false)
}

/// The links of `spec` as an extractor finds them, in archive mode (`requisites`) or not.
///
/// Without `requisites`: [`expected_links`]; a `<link rel=stylesheet href>` is a link (tag
/// `link`) like any `<link href>`, and images, scripts and `style` URLs are not links.
///
/// With `requisites`, an HTML page's list is, in document order: the canonical `<link>`, the
/// refresh `<meta>`, the head's requisites (`<link rel=stylesheet>` as tag `link`, `<script
/// src>`), the body's requisites (`img` src then srcset candidates, `source` srcset, `style`
/// attribute `url()`), then the body's links; the requisites flagged
/// [`ExpectedLink::requisite`]. A requisite is followed as a link of the page is: unless the page
/// says nofollow (meta robots or `X-Robots-Tag`; requisite elements carry no `rel=nofollow`),
/// or always with `follow_nofollow`. A stylesheet's list is its `@import`s and `url()`s (tag
/// `css`, always followed). Other assets and non-HTML pages: empty.
pub fn expected_links_with(
    web: &Web,
    spec: &PageSpec,
    follow_nofollow: bool,
    requisites: bool,
) -> Vec<ModelLink> {
    if spec.kind == PageKind::Asset {
        if !requisites {
            return Vec::new();
        }
        let mut out = Vec::new();
        for q in &spec.requisites {
            for (to, tag) in q.targets() {
                out.push(ModelLink {
                    link: ExpectedLink {
                        url: web.url(to),
                        tag,
                        nofollow: false,
                        followed: true,
                        requisite: true,
                    },
                    target: Some(to),
                });
            }
        }
        return out;
    }
    if spec.kind != PageKind::Html {
        return Vec::new();
    }
    let page_nofollow = spec.meta_nofollow || spec.x_robots_nofollow;
    let follows = |nofollow: bool| follow_nofollow || !(page_nofollow || nofollow);
    let mut out = Vec::with_capacity(spec.links.len() + spec.requisites.len() + 2);
    let mut push = |to: PageRef, tag: &'static str, nofollow: bool, requisite: bool| {
        out.push(ModelLink {
            link: ExpectedLink {
                url: web.url(to),
                tag,
                nofollow,
                followed: follows(nofollow),
                requisite,
            },
            target: Some(to),
        })
    };
    if let Some(c) = spec.canonical {
        push(c, "link", false, false);
    }
    if let Some(t) = spec.refresh {
        push(t, "meta", false, false);
    }
    // As rendered: the head's requisites, then (after the `<h1>`) the body's.
    let head = spec.requisites.iter().filter(|q| q.in_head());
    let body = spec.requisites.iter().filter(|q| !q.in_head());
    for q in head.chain(body) {
        for (to, tag) in q.targets() {
            if requisites {
                push(to, tag, false, true);
            } else if matches!(q, Requisite::Stylesheet(_)) {
                push(to, tag, false, false); // a `<link href>`, a link as ever
            }
        }
    }
    for l in &spec.links {
        let tag = match l.tag {
            LinkTag::A => "a",
            LinkTag::Area => "area",
            LinkTag::Iframe => "iframe",
            LinkTag::Link => "link",
        };
        push(l.to, tag, l.nofollow, false);
    }
    out
}

/// The `<loc>` URLs of sitemap document `path` of host `h`, as rendered by [`Web::sitemap`].
pub fn sitemap_locs(web: &Web, h: u32, path: &str) -> Option<Vec<String>> {
    let kind = web.hosts[h as usize].sitemap?;
    let pages = web.sitemap_pages(h);
    let half = pages.len() / 2;
    let urls = |ps: &[PageRef]| ps.iter().map(|&p| web.url(p)).collect::<Vec<_>>();
    match (kind, path) {
        (SitemapKind::Urlset, "/sitemap.xml") | (SitemapKind::Gzipped, "/sitemap.xml.gz") => {
            Some(urls(&pages))
        }
        (SitemapKind::Index, "/sitemap_index.xml") => {
            let o = web.origin(h);
            Some(vec![
                format!("{o}/sitemaps/s-0.xml.gz"),
                format!("{o}/sitemaps/s-1.xml.gz"),
            ])
        }
        (SitemapKind::Index, "/sitemaps/s-0.xml.gz") => Some(urls(&pages[..half])),
        (SitemapKind::Index, "/sitemaps/s-1.xml.gz") => Some(urls(&pages[half..])),
        _ => None,
    }
}

impl Truth {
    /// The fetched URLs.
    pub fn fetch_set(&self) -> BTreeSet<&str> {
        self.fetched.iter().map(|f| f.url.as_str()).collect()
    }

    /// The never-fetched URLs.
    pub fn never_set(&self) -> BTreeSet<&str> {
        self.never.iter().map(|(u, _)| u.as_str()).collect()
    }
}
