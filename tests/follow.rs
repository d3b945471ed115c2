//! In-run following (`[fetch] follow_per_host`): a site whose pages form a long chain of "next"
//! links is crawled in a couple of cycles, not one cycle per link, with robots.txt, delays, depth
//! and budgets kept, and the URL db the same as a crawl that waits a cycle per link.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use dragnet::config::Config;

use dragnet::crawl::CrawlDir;

use dragnet::exec::{run_cycles, CycleOptions, CycleReport};
use dragnet::ops::InitOptions;
use dragnet::records::UrlState;
use dragnet::run::{Cursor, RunReader, Schema};
use websim::server::{Server, ServerOptions};
use websim::site::{Request, Response, Site};

/// One host, `chain.test`: `/` links to `/p/0`, `/p/i` to `/p/{i+1}` up to `/p/{n-1}`, and to
/// `/private/i`, which robots.txt disallows; every page also links to `/` (known) and to a page
/// of another host (never fetched: out of scope).
struct Chain {
    n: u32,
    delay: Duration,
}

impl Site for Chain {
    fn respond(&self, req: &Request) -> Response {
        let html = |links: Vec<String>| {
            let body: String = links
                .iter()
                .map(|l| format!("<a href=\"{l}\">x</a>\n"))
                .collect();
            Response::new(
                200,
                "text/html",
                format!("<html><body>{body}</body></html>").into_bytes(),
            )
        };
        match req.target.as_str() {
            "/robots.txt" => Response::new(
                200,
                "text/plain",
                format!(
                    "User-agent: *\nDisallow: /private/\nCrawl-delay: {}\n",
                    self.delay.as_secs_f64()
                )
                .into_bytes(),
            ),
            "/" => html(vec!["/p/0".into()]),
            t => match t.strip_prefix("/p/").and_then(|i| i.parse::<u32>().ok()) {
                Some(i) if i < self.n => {
                    let mut l = vec![
                        "/".to_owned(),
                        format!("/private/{i}"),
                        "http://elsewhere.test/".to_owned(),
                    ];
                    if i + 1 < self.n {
                        l.push(format!("/p/{}", i + 1));
                    }
                    html(l)
                }
                _ => Response::new(404, "text/plain", b"no\n".to_vec()),
            },
        }
    }

    fn min_delay(&self, _host: &str) -> Duration {
        self.delay
    }

    fn disallowed(&self, _host: &str, _agent: &str, target: &str) -> bool {
        target.starts_with("/private/")
    }
}

fn serve(n: u32, delay: Duration) -> (Server, SocketAddr) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = Server::start(
        Arc::new(Chain { n, delay }),
        &[any],
        ServerOptions::default(),
    )
    .expect("websim serves on loopback");
    let addr = server.addrs()[0];
    (server, addr)
}

/// A crawl of `chain.test` at `addr` (3 partitions), following in-run as `follow` says.
fn crawl(addr: SocketAddr, follow: u32) -> (tempfile::TempDir, CrawlDir, Config) {
    let mut cfg = crate::common::websim_config(3, 2);
    cfg.resolve.entries = vec![format!("chain.test:{}:{}", addr.port(), addr.ip())];
    cfg.scope.allowed_domains = vec!["chain.test".into()];
    cfg.fetch.follow_per_host = follow;
    cfg.scope.max_depth = 1000;
    let t = tempfile::tempdir().unwrap();
    let config = t.path().join("config.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let seeds = t.path().join("seeds.txt");
    std::fs::write(&seeds, format!("http://chain.test:{}/\n", addr.port())).unwrap();
    let root = t.path().join("crawl");
    let opts = InitOptions {
        seeds,
        config: Some(config),
        partitions: None,
    };
    dragnet::ops::init(&root, &opts, &mut |b| panic!("bad seed {b:?}")).unwrap();
    let dir = CrawlDir::new(&root);
    let cfg = Config::load(&dir.config_path()).unwrap();
    (t, dir, cfg)
}

fn until_empty(max_cycles: u32) -> CycleOptions {
    CycleOptions {
        until_empty: true,
        max_cycles,
        log: false,
        ..CycleOptions::default()
    }
}

/// Every URL of the URL db with its state and depth, over all partitions.
fn urldb(dir: &CrawlDir, m: u32) -> Vec<(String, u8, u32)> {
    let mut out = Vec::new();
    for p in 0..m {
        let Some((_, path)) = dir.latest_state(p, "urldb", u32::MAX) else {
            continue;
        };
        let mut r = RunReader::open_expect(&path, Schema::URLDB).unwrap();
        while r.advance().unwrap() {
            let u = dragnet::records::UrlRecord::decode(r.payload()).unwrap();
            out.push((u.url, u.state as u8, u.depth));
        }
    }
    out.sort();
    out
}

/// URLs followed in the fetches of `r` (fetched, or recorded as refused by robots.txt).
fn followed(r: &CycleReport) -> u64 {
    fetch_count(r, "followed")
}

fn fetch_count(r: &CycleReport, name: &str) -> u64 {
    r.cycles
        .iter()
        .map(|c| c.stages["fetch"].counts.get(name).copied().unwrap_or(0))
        .sum()
}

#[test]
fn a_chain_of_next_links_costs_a_run_not_a_cycle_per_link() {
    let n = 120;
    let (server, addr) = serve(n, Duration::ZERO);
    let (_t, dir, cfg) = crawl(addr, 1000);
    let r = run_cycles(&dir, &cfg, &until_empty(20)).unwrap();
    let audit = server.stop();
    assert!(r.stopped.contains("empty"), "{}", r.stopped);
    // Cycle 0 fetches the seed and follows the whole chain, and records the links robots.txt
    // refuses (one a page) without a request: no cycle is left for them.
    assert_eq!(r.cycles.len(), 1, "{r:?}");
    assert_eq!(fetch_count(&r, "followed_refused"), u64::from(n), "{r:?}");
    assert_eq!(followed(&r), 2 * u64::from(n), "{r:?}");
    assert_eq!(fetch_count(&r, "error_robots"), u64::from(n), "{r:?}");
    let db = urldb(&dir, 3);
    let fetched = db
        .iter()
        .filter(|(u, s, _)| u.contains("/p/") && *s == 1)
        .count();
    assert_eq!(fetched, n as usize, "{db:?}");
    // Depth counts links from the seed, as when each link waits for its cycle.
    let last = format!("http://chain.test:{}/p/{}", addr.port(), n - 1);
    assert!(db.iter().any(|(u, _, d)| *u == last && *d == n), "{db:?}");
    // robots.txt first, nothing disallowed, no request too soon or concurrent.
    assert_eq!(
        audit.counts.total(),
        0,
        "politeness: {:?} {:?}",
        audit.counts,
        audit.violations
    );
    assert!(!db
        .iter()
        .any(|(u, s, _)| u.contains("/private/") && *s == 1));
    // Each refused link is settled as the next cycle's fetch would have settled it: gone.
    let private: Vec<_> = db
        .iter()
        .filter(|(u, _, _)| u.contains("/private/"))
        .collect();
    assert_eq!(private.len(), n as usize);
    assert!(
        private.iter().all(|(_, s, _)| *s == UrlState::Gone as u8),
        "{private:?}"
    );
}

#[test]
fn following_gives_the_same_url_db_as_waiting_a_cycle_per_link_and_keeps_delays() {
    // A short chain with a crawl-delay: following keeps the delay (websim's audit), and the URL
    // db ends the same as without following, which needs a cycle per link.
    let n = 12;
    let delay = Duration::from_millis(50);
    let (server, addr) = serve(n, delay);
    let (_t, dir, cfg) = crawl(addr, 1000);
    let t = std::time::Instant::now();
    let with = run_cycles(&dir, &cfg, &until_empty(30)).unwrap();
    let with_s = t.elapsed().as_secs_f64();
    let (_t2, dir2, cfg2) = crawl(addr, 0);
    let t = std::time::Instant::now();
    let without = run_cycles(&dir2, &cfg2, &until_empty(30)).unwrap();
    let without_s = t.elapsed().as_secs_f64();
    let audit = server.stop();
    // For the record (docs/BENCHMARKS.md), never asserted: the chain back to back at the
    // host's delay takes (n + 1) x delay (the home page, then n pages).
    eprintln!(
        "chain of {n} at {} ms: back to back {:.2} s; with following {} cycles in {with_s:.2} s; \
         without {} cycles in {without_s:.2} s",
        delay.as_millis(),
        (n + 1) as f64 * delay.as_secs_f64(),
        with.cycles.len(),
        without.cycles.len()
    );
    assert_eq!(
        audit.counts.total(),
        0,
        "politeness: {:?} {:?}",
        audit.counts,
        audit.violations
    );
    assert_eq!(followed(&without), 0);
    assert!(
        without.cycles.len() as u32 > n && with.cycles.len() <= 3,
        "{} cycles with following, {} without",
        with.cycles.len(),
        without.cycles.len()
    );
    assert_eq!(urldb(&dir, 3), urldb(&dir2, 3));
}

#[test]
fn a_host_budget_bounds_what_is_followed() {
    let n = 60;
    let (server, addr) = serve(n, Duration::ZERO);
    let (_t, dir, mut cfg) = crawl(addr, 1000);
    // At most 20 URLs of the host over the whole crawl, followed ones included.
    cfg.prioritize.max_urls_per_host_total = 20;
    std::fs::write(dir.config_path(), cfg.to_toml()).unwrap();
    let r = run_cycles(&dir, &cfg, &until_empty(40)).unwrap();
    server.stop();
    let db = urldb(&dir, 3);
    let fetched = db.iter().filter(|(_, s, _)| *s == 1).count();
    assert!(fetched <= 21, "{fetched} fetched: {r:?}");
    assert!(followed(&r) > 0);
}
