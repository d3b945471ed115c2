//! The synthetic web: hosts, their personalities, pages and links, all pure functions of the seed.
//!
//! A [`Web`] holds only its hosts (a few hundred bytes each); a page is generated when asked for
//! ([`Web::page`]) from `(seed, host, page)`, so the server, the truth and the export agree by
//! construction and a web of any size costs no memory.
//!
//! Link structure follows the figures of Broder, Najork and Wiener (WWW 2003; docs/design.md, References): about 80% of
//! links stay on their host (they measured 81.5%), about 30% of the links on a page repeat an
//! earlier link of the same page, and targets are drawn from a Zipf law, which gives the
//! power-law in-degree of the real web. A few links leave the web (hosts under `outside.test`),
//! and must stay unfetched when a crawl is scoped to the web.
//!
//! Paths encode the page number (`/docs/page-17.html`), so the server maps a path back to its page
//! without any table, and refuses paths the web never generated.
//!
//! This file holds the configuration ([`WebConfig`]), the [`Web`] and its host-level queries
//! (origins, host names, delays). The rest is by job: `types` (host and page types, re-exported
//! here), `hosts` (host generation), `pages` (page generation: [`Web::kind`], [`Web::page`]),
//! `paths` (URL spelling and resolving) and [`requisites`].

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::rng::Rng;
use crate::robots::{Group, RobotsServe, RobotsSpec, Rule};

/// Decision contexts (the first element of every [`Rng::new`] context).
const T_HOST: u64 = 1;
const T_PAGE: u64 = 2;
const T_LINKS: u64 = 3;
const T_TRAP: u64 = 4;

/// Every knob of a generated web.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WebConfig {
    /// The seed everything derives from.
    pub seed: u64,
    /// Hosts H.
    pub hosts: u32,
    /// Pages per host P (page 0 is `/`).
    pub pages: u32,
    /// Loopback listener addresses the hosts are spread over (127.0.1.1 ...).
    pub listeners: u8,
    /// Port every host is served on (80 means no port in URLs).
    pub port: u16,
    /// One host in this many is hostile (0: none).
    pub hostile_every: u32,
    /// Politeness delay every host expects when it sets no crawl-delay.
    pub default_delay: Duration,
    /// Largest crawl-delay a host asks for (scaled down for quick demos).
    pub max_crawl_delay: Duration,
    /// Interval between the bytes of a slow-drip response.
    pub drip_interval: Duration,
    /// Median HTML page size in bytes (log-normal, long tail).
    pub median_page_bytes: u32,
    /// Decompressed size of the gzip bomb.
    pub bomb_bytes: u64,
    /// One host in this many is served over TLS ([`Tls`]; 0: none, every host plain HTTP).
    pub tls_every: u32,
    /// Port the TLS hosts are served on (443 means no port in URLs; 0 until a server binds one).
    pub tls_port: u16,
    /// One host in this many rate-limits its pages ([`RATE_BURST`] requests, then one per
    /// [`RATE_REFILL`]; beyond it `429` with `Retry-After`; 0: none).
    pub rate_limit_every: u32,
    /// Requests in flight at once a polite crawler keeps per server address (over all the
    /// hosts it serves), for the audit's per-address check (0: no check).
    pub per_ip_connections: u32,
    /// Least time between requests to one server address, for the same check.
    pub per_ip_delay: Duration,
    /// The trap host's home also links into an endless tree of subdomains of another
    /// registered domain (`s0.trap-subs.test`, `s1...`: [`PageRef::Sub`]), which only a budget
    /// per registered domain bounds.
    pub subdomain_trap: bool,
    /// One host in this many (never a hostile one) has page requisites: its HTML pages load
    /// stylesheets, a script, images and a font from `/static/` ([`PageRef::Asset`],
    /// [`Requisite`], [`Web::requisite_hosts`]; the `requisites` module doc says which and how);
    /// 0: none, the web as it was before requisites existed.
    #[serde(skip_serializing_if = "is_zero")]
    pub requisites_every: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            seed: 1,
            hosts: 100,
            pages: 50,
            listeners: 4,
            port: 8480,
            hostile_every: 20,
            default_delay: Duration::from_millis(0),
            max_crawl_delay: Duration::from_secs(2),
            drip_interval: Duration::from_secs(1),
            median_page_bytes: 15_000,
            bomb_bytes: 1 << 30,
            tls_every: 0,
            tls_port: 8443,
            rate_limit_every: 0,
            per_ip_connections: 0,
            per_ip_delay: Duration::ZERO,
            subdomain_trap: false,
            requisites_every: 0,
        }
    }
}

/// The registered domain of the subdomain trap's hosts.
pub const SUB_DOMAIN: &str = "trap-subs.test";
/// Subdomains beyond this number are not served (and never linked).
const SUB_LIMIT: u64 = 1 << 40;

/// Requests a rate-limited host answers in a burst (its token bucket's size).
pub const RATE_BURST: f64 = 4.0;
/// A rate-limited host earns one more request per this long.
pub const RATE_REFILL: Duration = Duration::from_secs(1);
/// The `Retry-After` (seconds) of a rate-limited host's `429`: when a token is sure to be back.
pub const RATE_RETRY_AFTER_SECS: u64 = 1;

/// A generated web.
#[derive(Debug, Clone)]
pub struct Web {
    /// Its configuration.
    pub config: WebConfig,
    /// Its hosts, by index.
    pub hosts: Vec<HostSpec>,
    /// Token buckets of the rate-limited hosts: tokens left and when they were counted. The only
    /// state a web has, and only the server's [`crate::site::Site::gate`] touches it.
    pub(crate) buckets:
        std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u32, (f64, std::time::Instant)>>>,
}

/// `scheme://name[:port]`, without the port when it is the scheme's default.
pub(crate) fn origin(cfg: &WebConfig, name: &str, tls: bool) -> String {
    match (tls, if tls { cfg.tls_port } else { cfg.port }) {
        (false, 80) => format!("http://{name}"),
        (false, p) => format!("http://{name}:{p}"),
        (true, 443) => format!("https://{name}"),
        (true, p) => format!("https://{name}:{p}"),
    }
}

const SECTIONS: [&str; 6] = ["news", "docs", "blog", "shop", "about", "archive"];
const OUTSIDE_HOSTS: u32 = 50;

impl Web {
    /// Generates the web of `config`.
    pub fn new(config: WebConfig) -> Web {
        let hosts = (0..config.hosts).map(|h| gen_host(&config, h)).collect();
        Web {
            config,
            hosts,
            buckets: Default::default(),
        }
    }

    /// `http://name[:port]`, or `https://name[:tls_port]` for a TLS host.
    pub fn origin(&self, host: u32) -> String {
        let h = &self.hosts[host as usize];
        origin(&self.config, &h.name, h.tls.is_some())
    }

    /// The plain-HTTP origin of a host, `http://name[:port]` (for a TLS host it redirects).
    pub fn http_origin(&self, host: u32) -> String {
        origin(&self.config, &self.hosts[host as usize].name, false)
    }

    /// A host's default seed: the URL of `/`, spelled `http://` for a [`Tls::Upgrade`] host (as
    /// an operator who typed the bare name would), so the crawl meets the redirect to HTTPS.
    pub fn seed_url(&self, host: u32) -> String {
        if self.hosts[host as usize].tls == Some(Tls::Upgrade) {
            format!("{}/", self.http_origin(host))
        } else {
            self.url(PageRef::Page { host, page: 0 })
        }
    }

    /// The host that serves the subdomain trap: the first trap host, if the web has the trap.
    pub fn sub_trap_host(&self) -> Option<u32> {
        if !self.config.subdomain_trap {
            return None;
        }
        self.hosts
            .iter()
            .find(|h| h.hostile == Some(Hostile::Trap))
            .map(|h| h.index)
    }

    /// The subdomain number of a host name of the subdomain trap (`s12.trap-subs.test`).
    pub fn sub_index(&self, name: &str) -> Option<u64> {
        self.sub_trap_host()?;
        let n: u64 = name
            .strip_prefix('s')?
            .strip_suffix(SUB_DOMAIN)?
            .strip_suffix('.')?
            .parse()
            .ok()?;
        (n < SUB_LIMIT && name == format!("s{n}.{SUB_DOMAIN}")).then_some(n)
    }

    /// Whether any host is served over TLS.
    pub fn has_tls(&self) -> bool {
        self.hosts.iter().any(|h| h.tls.is_some())
    }

    /// The host index for a host name, if it is one of the web's.
    pub fn host_index(&self, name: &str) -> Option<u32> {
        let n = name.strip_prefix('h')?.strip_suffix(".websim.test")?;
        if n.len() != 4 && n.len() != 5 {
            return None;
        }
        let i: u32 = n.parse().ok()?;
        (i < self.config.hosts && self.hosts[i as usize].name == name).then_some(i)
    }

    /// The delay a polite crawler using `agent` must keep between requests to `host`.
    pub fn delay(&self, host: u32, agent: &str) -> Duration {
        let h = &self.hosts[host as usize];
        let crawl_delay = h
            .robots
            .crawl_delay(agent)
            .map(Duration::from_secs_f64)
            .unwrap_or_default();
        crawl_delay.max(self.config.default_delay)
    }

    /// The sitemap URLs listed for `host`, and for each sitemap document path the pages it lists.
    pub fn sitemap_pages(&self, host: u32) -> Vec<PageRef> {
        // Every 7th page, which reaches pages no link points at (Zipf rarely picks high numbers).
        (0..self.config.pages)
            .step_by(7)
            .map(|page| PageRef::Page { host, page })
            .collect()
    }
}

mod hosts;
use hosts::gen_host;

mod pages;
mod paths;

mod types;
pub use types::*;

pub mod requisites;
pub use requisites::{
    asset_type, requisite_offset, Requisite, ASSETS, ASSET_APP_JS, ASSET_BG, ASSET_FONT, ASSET_IMG,
    ASSET_PIXEL, ASSET_SITE_CSS, ASSET_THEME_CSS,
};

#[cfg(test)]
mod tests;
