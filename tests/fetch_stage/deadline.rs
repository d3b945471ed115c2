//! The fetch deadline (`[fetch] deadline`): what is left when it passes is deferred, not lost,
//! and it is each host's lowest-priority URLs, and the lowest-priority hosts, that are left; and
//! what the stage does not wait for (the URLs of a host given up for the run).

use super::*;

/// A crawl of 2 hosts x 40 pages, all listed, one partition, 0.2 s between requests to a host
/// and a deadline of 1 s: more than the deadline allows; `tweak` adjusts its configuration.
fn deadline_crawl(
    seed: u64,
    tweak: impl FnOnce(&mut Config),
) -> (std::sync::Arc<Web>, Server, Crawl) {
    let (web, server) = start(WebConfig {
        seed,
        hosts: 2,
        pages: 40,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let seeds = page_urls(&web, 40);
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    cfg.fetch.default_delay_secs = 0.2;
    cfg.fetch.deadline_secs = 1.0;
    tweak(&mut cfg);
    let crawl = crawl_of(&web, &seeds, cfg);
    (web, server, crawl)
}

#[test]
fn the_deadline_defers_what_is_left() {
    let (_web, server, c) = deadline_crawl(11, |_| {});
    let t0 = Instant::now();
    let r = fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    let got = results(&c, 0);
    assert_eq!(got.len(), 80, "deferred URLs are recorded, not lost");
    let deferred = got.values().filter(|r| r.error == "deferred").count();
    assert!(deferred > 40, "{deferred} deferred");
    assert_eq!(r.count("error_deferred") as usize, deferred);
    server.stop();
}

/// Gives the URLs of the crawl's first fetch list priorities unrelated to the key order (a hash
/// of the URL, in [0, 1)).
fn priorities_by_hash(c: &Crawl) {
    let list = c.dir.fetchlist(0, 0);
    let mut r = RunReader::open_expect(&list, Schema::FETCHLIST).unwrap();
    let mut records = Vec::new();
    while r.advance().unwrap() {
        let mut item = FetchItem::decode(r.payload()).unwrap();
        item.priority = (xxhash_rust::xxh3::xxh3_64(item.url.as_bytes()) % 1000) as f64 / 1000.0;
        records.push((r.key().to_vec(), item.encode()));
    }
    drop(r);
    let mut w = RunWriter::create(&list, Schema::FETCHLIST).unwrap();
    for (k, v) in &records {
        w.push(k, v).unwrap();
    }
    w.finish().unwrap();
}

/// The fetch order follows priority: when the deadline cuts the run, what each host has left
/// is its lowest-priority URLs (the fetch list holds them by fingerprint).
#[test]
fn a_deadline_leaves_each_hosts_lowest_priority_urls() {
    let (web, server, c) = deadline_crawl(12, |cfg| cfg.fetch.follow_per_host = 0);
    priorities_by_hash(&c);
    fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    let got = results(&c, 0);
    let mut deferred_any = false;
    for h in 0..2 {
        let origin = web.origin(h);
        let of_host = || got.values().filter(|r| r.url.starts_with(&origin));
        let lowest_fetched = of_host()
            .filter(|r| r.error != "deferred")
            .map(|r| r.priority)
            .fold(f64::INFINITY, f64::min);
        let highest_deferred = of_host()
            .filter(|r| r.error == "deferred")
            .map(|r| r.priority)
            .fold(f64::NEG_INFINITY, f64::max);
        deferred_any |= highest_deferred.is_finite();
        assert!(
            lowest_fetched >= highest_deferred,
            "{origin}: fetched down to {lowest_fetched}, deferred up to {highest_deferred}"
        );
    }
    assert!(deferred_any, "the deadline cut nothing");
    server.stop();
}

/// Hosts enter rotation by priority (among the feeder's window): when the deadline cuts a
/// run of many hosts on one address (one request at a time, 100 ms apart), the hosts left are
/// the lowest-priority ones, not the last by key.
#[test]
fn a_deadline_leaves_the_lowest_priority_hosts() {
    let (web, server) = start(WebConfig {
        seed: 14,
        hosts: 24,
        pages: 1,
        listeners: 1,
        hostile_every: 0,
        max_crawl_delay: Duration::from_millis(10),
        ..WebConfig::default()
    });
    // Hosts whose robots.txt answers at once (not one that stalls or is cut at its size limit:
    // a robots.txt abandoned half-way earns its host a second's back-off, and lower hosts go
    // first meanwhile, rightly).
    let seeds: Vec<String> = web
        .hosts
        .iter()
        .filter(|h| {
            matches!(
                h.robots_serve,
                websim::robots::RobotsServe::Text | websim::robots::RobotsServe::NotFound
            )
        })
        .map(|h| format!("{}/", web.origin(h.index)))
        .collect();
    assert!(seeds.len() >= 12, "{}", seeds.len());
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    cfg.fetch.threads = 1;
    cfg.fetch.per_ip_connections = 1;
    cfg.fetch.per_ip_delay_secs = 0.1;
    // No per-host delays: a host that had to wait out its crawl-delay after its robots.txt
    // would let a lower one go first (the order under test is the hosts', not the delays').
    cfg.fetch.max_crawl_delay_secs = 0.0;
    cfg.fetch.deadline_secs = 1.5;
    cfg.fetch.follow_per_host = 0;
    let c = crawl_of(&web, &seeds, cfg);
    priorities_by_hash(&c);
    fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    let got = results(&c, 0);
    let fetched: Vec<f64> = got
        .values()
        .filter(|r| r.status > 0)
        .map(|r| r.priority)
        .collect();
    let left: Vec<f64> = got
        .values()
        .filter(|r| r.error == "deferred")
        .map(|r| r.priority)
        .collect();
    assert!(
        !fetched.is_empty() && !left.is_empty(),
        "{fetched:?} {left:?}"
    );
    let lowest_fetched = fetched.iter().copied().fold(f64::INFINITY, f64::min);
    let highest_left = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut all: Vec<_> = got
        .values()
        .map(|r| {
            (
                r.priority,
                r.status,
                r.error.as_str(),
                r.fetched_at_ms % 100_000,
            )
        })
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert!(
        lowest_fetched >= highest_left,
        "fetched down to {lowest_fetched}, left up to {highest_left}: {all:?}"
    );
    server.stop();
}

/// A host given up for the run (`max_host_failures` failures in a row) has its other URLs
/// settled as `host_failing` at once, without a request and without waiting out the delay its
/// last failure earned: here 30 to 60 s (`delay_factor` 60 x the drip's 0.5 s until `min_rate`
/// cuts it, or the 1 s total timeout), which the stage must not spend (it ends in about a
/// second; it took 13 s with a factor of 20 before).
#[test]
fn a_host_given_up_has_its_other_urls_settled_without_waiting_out_its_delay() {
    let (web, server) = start(WebConfig {
        seed: 21,
        hosts: 4,
        pages: 6,
        hostile_every: 2,
        drip_interval: Duration::from_millis(200),
        max_crawl_delay: Duration::from_millis(100),
        ..WebConfig::default()
    });
    let drip = web
        .hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::SlowDrip))
        .expect("a host drips")
        .index;
    let urls: Vec<String> = (0..6)
        .map(|page| web.url(PageRef::Page { host: drip, page }))
        .collect();
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    cfg.fetch.threads = 1;
    cfg.fetch.max_host_failures = 1;
    cfg.fetch.total_timeout_secs = 1.0;
    cfg.fetch.delay_factor = 60.0;
    cfg.fetch.deadline_secs = 120.0;
    let c = crawl_of(&web, &urls, cfg);
    let t0 = Instant::now();
    fetch_all(&c, 0);
    let took = t0.elapsed();
    let got = results(&c, 0);
    assert_eq!(got.len(), urls.len());
    let given_up = got.values().filter(|r| r.error == "host_failing").count();
    assert_eq!(given_up, urls.len() - 1, "{got:#?}");
    assert!(
        took < Duration::from_secs(15),
        "the host's other URLs waited out its delay: {took:?}"
    );
    assert_polite(server);
}
