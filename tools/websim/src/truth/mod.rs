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
//!
//! # Code
//!
//! This file holds the policy and the truth's types. The computation is in `crawl` (the loop,
//! queuing and processing URLs), `robots` (reachability and robots.txt), `fetch` (what one fetch
//! yields), `urls` (reading URLs) and `links` (a page's links as an extractor finds them); the
//! files are written by `files`.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Serialize;

use crate::model::Web;

mod crawl;
mod fetch;
mod files;
mod links;
mod robots;
mod urls;

pub use crawl::truth;
pub use links::{expected_links, expected_links_with, sitemap_locs, ModelLink};

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
