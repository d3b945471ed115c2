//! Back-off on "slow down" answers (issue 21, point 3): a host answering 429 with `Retry-After`
//! is not asked again before the time it named; a host answering 503 again and again is asked
//! less and less often (the back-off doubles, from `backoff_base_secs`, within a run; the next
//! run waits out the last one), and a success resets it.
//! Throttled URLs are not counted as fetched: they come back in a later cycle and are fetched
//! then. The server (a websim `Site`) keeps every request's time and audits the gaps itself.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use websim::site::{Request, Response, Site};

/// One request as the server saw it: host, target, when, the status it got.
type Seen = (String, String, Instant, u16);

/// `busy.test` answers every page's first request 429 (`Retry-After: 1`), later ones 200;
/// `flaky.test` answers its first four page requests 503 (no `Retry-After`), then 200.
#[derive(Default)]
struct Throttling {
    seen: Mutex<Vec<Seen>>,
    asked: Mutex<HashMap<String, u32>>,
}

impl Site for Throttling {
    fn respond(&self, req: &Request) -> Response {
        let host = req.host.split(':').next().unwrap_or("").to_owned();
        let target = req.target.clone();
        let resp = if target == "/robots.txt" {
            Response::new(200, "text/plain", b"User-agent: *\nAllow: /\n".to_vec())
        } else {
            let mut asked = self.asked.lock().unwrap();
            let key = if host == "busy.test" {
                format!("{host}{target}")
            } else {
                host.clone()
            };
            let n = asked.entry(key).or_default();
            *n += 1;
            match (host.as_str(), *n) {
                ("busy.test", 1) => {
                    let mut r = Response::new(429, "text/plain", b"slow down\n".to_vec());
                    r.headers.push(("Retry-After".into(), "1".into()));
                    r
                }
                ("flaky.test", 1..=4) => Response::new(503, "text/plain", b"busy\n".to_vec()),
                _ => Response::new(200, "text/html", b"<html><body>ok</body></html>".to_vec()),
            }
        };
        self.seen
            .lock()
            .unwrap()
            .push((host, target, Instant::now(), resp.status));
        resp
    }

    fn min_delay(&self, _host: &str) -> Duration {
        Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}

#[test]
fn slow_down_answers_slow_the_host_down_and_the_urls_come_back() {
    let site = Arc::new(Throttling::default());
    let (server, port) = common::serve_site(site.clone());
    let scratch = tempfile::tempdir().unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1 busy.test\n127.0.0.1 flaky.test\n").unwrap();
    let seeds: Vec<String> = ["busy.test", "flaky.test"]
        .iter()
        .flat_map(|h| (0..3).map(move |i| format!("http://{h}:{port}/p/{i}")))
        .collect();
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = 1;
    cfg.resolve.hosts_files = vec![hosts];
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.threads = 4;
    cfg.fetch.follow_per_host = 0;
    cfg.fetch.backoff_base_secs = 0.2;
    cfg.fetch.backoff_max_secs = 2.0;
    cfg.fetch.max_retry_after_secs = 600.0;
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let out = common::dragnet_on(
        &["cycle", "--until-empty", "--progress", "log", "--json"],
        c.dir.root(),
    );
    server.stop();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let slowed: u64 = report["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["stages"]["fetch"]["counts"]["slowed_down"]
                .as_u64()
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(slowed, 3 + 4, "429s and 503s counted: {report}");

    let seen = site.seen.lock().unwrap().clone();
    let of = |h: &str| -> Vec<Seen> { seen.iter().filter(|s| s.0 == h).cloned().collect() };
    let ms = |a: Instant, b: Instant| b.duration_since(a).as_secs_f64() * 1000.0;
    // busy.test: nothing sooner than the Retry-After (1 s) after a 429.
    let busy = of("busy.test");
    for w in busy.windows(2) {
        if w[0].3 == 429 {
            let gap = ms(w[0].2, w[1].2);
            assert!(
                gap >= 990.0,
                "busy.test asked again {gap:.0} ms after a 429: {busy:?}"
            );
        }
    }
    // flaky.test: 503, 503, 503 in cycle 0 (its 3 pages), then 503, 200 in cycle 1. Within a
    // run the back-off doubles from 200 ms; the next run waits out the last back-off the host
    // earned (its host record carries it), and counts afresh.
    let flaky = of("flaky.test");
    let pages: Vec<&Seen> = flaky.iter().filter(|s| s.1 != "/robots.txt").collect();
    let statuses: Vec<u16> = pages.iter().map(|s| s.3).collect();
    assert_eq!(&statuses[..5], &[503, 503, 503, 503, 200], "{flaky:?}");
    let gaps: Vec<f64> = pages
        .windows(2)
        .take(4)
        .map(|w| ms(w[0].2, w[1].2))
        .collect();
    for (gap, want) in gaps.iter().zip([200.0, 400.0, 800.0, 200.0]) {
        assert!(
            *gap >= want - 10.0,
            "flaky.test gaps after 503s {gaps:?}, want at least {want} ms"
        );
    }
    // Every page was fetched in the end (a later cycle), each 200 once.
    for h in ["busy.test", "flaky.test"] {
        for i in 0..3 {
            let ok = seen
                .iter()
                .filter(|s| s.0 == h && s.1 == format!("/p/{i}") && s.3 == 200)
                .count();
            assert_eq!(ok, 1, "{h}/p/{i}: {seen:?}");
        }
    }
    assert!(report["cycles"].as_array().unwrap().len() >= 2, "{report}");
}

/// websim's rate-limited hosts (a burst of 4, then one page a second, 429 with `Retry-After: 1`
/// beyond): a crawl to completion fetches exactly the ground truth, meets 429s on the way, and
/// websim's audit finds no request sooner after a 429 than its `Retry-After`.
#[test]
fn websim_rate_limited_hosts_are_crawled_to_the_truth_without_ignoring_retry_after() {
    let (web, server) = websim::server::Server::start_web(
        websim::model::WebConfig {
            seed: 5,
            port: 0,
            listeners: 2,
            hosts: 6,
            pages: 12,
            hostile_every: 0,
            rate_limit_every: 2,
            max_crawl_delay: Duration::from_millis(20),
            ..websim::model::WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap();
    assert!(web.hosts.iter().filter(|h| h.rate_limited).count() >= 2);
    let mut cfg = common::websim_config(2, 4);
    // All of the hosts' `Retry-After: 1` is obeyed.
    cfg.fetch.max_retry_after_secs = 1.0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let opts = common::until_empty(20);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    assert!(r.complete(), "{r:?}");
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "{:?}", audit.violations);
    assert!(
        audit.by_status.get(&429).copied().unwrap_or(0) > 0,
        "no 429 met: {:?}",
        audit.by_status
    );
    let should = common::truth_fetched(&web);
    let got = common::outcome(&c.dir, 2).fetched;
    assert_eq!(got, should);
}
