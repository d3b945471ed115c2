//! `dragnet fetch` (the fetch stage of one partition) against websim on loopback: every URL gets
//! exactly one result, the politeness audit finds nothing, disallowed URLs are never requested,
//! hostile hosts are bounded, the SSRF guard holds by default, the deadline defers rather than
//! loses, robots.txt is cached across cycles, and the WARC files check (ours, and warcio's when
//! it is installed).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dragnet::config::{ByteSize, Config};
use dragnet::crawl::StageReport;
use dragnet::crawl::{CrawlDir, Stage};
use dragnet::fetch::{fetch_partition, FetchOptions, ProgressMode};
use dragnet::ops::{self, InitOptions};
use dragnet::records::HostRecord;
use dragnet::records::{FetchItem, FetchResult};
use dragnet::run::{Cursor, RunReader, RunWriter, Schema};
use websim::model::{Hostile, PageRef, Web, WebConfig};
use websim::server::{Server, ServerOptions};
use websim::truth::{truth, Outcome, Policy, Reason};

use common::{websim_crawl as crawl_of, Crawl};

fn start(config: WebConfig) -> (std::sync::Arc<Web>, Server) {
    Server::start_web(
        WebConfig {
            port: 0,
            listeners: 2,
            ..config
        },
        ServerOptions::default(),
    )
    .expect("websim starts")
}

/// Timeouts for webs without hostile hosts: generous, so a loaded CI machine never turns a
/// slow answer into a failed fetch (the hostile tests use [`test_config`]'s short ones).
fn patient(mut cfg: Config) -> Config {
    cfg.fetch.connect_timeout_secs = 10.0;
    cfg.fetch.read_timeout_secs = 10.0;
    cfg.fetch.total_timeout_secs = 30.0;
    cfg.fetch.min_rate_grace_secs = 10.0;
    cfg
}

/// Limits small enough that every hostile host ends within seconds.
fn test_config() -> Config {
    let mut cfg = Config::default();
    cfg.crawl.partitions = 2;
    let f = &mut cfg.fetch;
    f.allow_private_addresses = true;
    f.threads = 6;
    f.default_delay_secs = 0.0;
    f.delay_factor = 0.0;
    f.connect_timeout_secs = 2.0;
    f.read_timeout_secs = 1.0;
    f.total_timeout_secs = 3.0;
    f.min_rate = 4096;
    f.min_rate_grace_secs = 0.5;
    f.max_body = ByteSize(256 << 10);
    f.max_decoded = ByteSize(1 << 20);
    f.deadline_secs = 60.0;
    cfg
}

fn quiet() -> FetchOptions {
    FetchOptions {
        progress: ProgressMode::Quiet,
        ..FetchOptions::default()
    }
}

fn fetch_all(c: &Crawl, cycle: u32) -> Vec<StageReport> {
    (0..c.cfg.crawl.partitions)
        .map(|p| fetch_partition(&c.dir, &c.cfg, cycle, p, &quiet()).unwrap())
        .collect()
}

/// Every fetch result of a cycle, by URL; panics if a URL has two.
fn results(c: &Crawl, cycle: u32) -> BTreeMap<String, FetchResult> {
    let mut out = BTreeMap::new();
    for p in 0..c.cfg.crawl.partitions {
        let mut r = RunReader::open_expect(&c.dir.fetched(cycle, p), Schema::FETCHED).unwrap();
        while r.advance().unwrap() {
            let fr = FetchResult::decode(r.payload()).unwrap();
            assert_eq!(
                r.key(),
                dragnet::run::fp_key(dragnet::keys::fingerprint(&fr.url)),
                "keyed by fingerprint"
            );
            assert!(
                out.insert(fr.url.clone(), fr).is_none(),
                "one result per URL"
            );
        }
    }
    out
}

fn warc_files(c: &Crawl, cycle: u32) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(c.dir.warc_dir(cycle))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Checks every record of every WARC file of the cycle; returns the response/revisit records
/// by URI (robots.txt included).
fn check_warcs(c: &Crawl, cycle: u32) -> BTreeMap<String, u64> {
    let mut by_uri = BTreeMap::new();
    for f in warc_files(c, cycle) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "no temporary file left: {name}");
        let rep = dragnet::warc::check::check_file(&f, &mut |r| {
            if r.warc_type == "response" || r.warc_type == "revisit" {
                *by_uri.entry(r.uri.clone().unwrap()).or_default() += 1;
            }
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rep.bad_digests, 0, "{name}");
    }
    by_uri
}

/// The first `pages` page URLs of every host.
fn page_urls(web: &Web, pages: u32) -> Vec<String> {
    web.hosts
        .iter()
        .flat_map(|h| {
            (0..pages).map(move |page| {
                web.url(PageRef::Page {
                    host: h.index,
                    page,
                })
            })
        })
        .collect()
}

/// Records of one WARC type in a cycle's files.
fn check_warcs_of_type(c: &Crawl, cycle: u32, kind: &str) -> usize {
    let mut n = 0;
    for f in warc_files(c, cycle) {
        dragnet::warc::check::check_file(&f, &mut |r| n += usize::from(r.warc_type == kind))
            .unwrap();
    }
    n
}

fn is_seedable(url: &str) -> bool {
    !url.ends_with("/robots.txt") && !url.contains(".outside.test")
}

#[test]
fn fetches_every_url_once_politely_and_caches_robots_across_cycles() {
    let (web, server) = start(WebConfig {
        seed: 7,
        hosts: 16,
        pages: 8,
        hostile_every: 0,
        max_crawl_delay: Duration::from_millis(300),
        ..WebConfig::default()
    });
    let t = truth(&web, &Policy::new(&web));
    let fetch: Vec<&websim::truth::Fetched> =
        t.fetched.iter().filter(|f| is_seedable(&f.url)).collect();
    let refused: Vec<&str> = t
        .never
        .iter()
        .filter(|(u, r)| *r == Reason::Robots && is_seedable(u))
        .map(|(u, _)| u.as_str())
        .collect();
    assert!(!refused.is_empty(), "the web has robots-disallowed URLs");
    let mut seeds: Vec<String> = fetch.iter().map(|f| f.url.clone()).collect();
    seeds.extend(refused.iter().map(|u| u.to_string()));
    let c = crawl_of(&web, &seeds, patient(test_config()));

    let reports = fetch_all(&c, 0);
    let got = results(&c, 0);
    assert_eq!(got.len(), seeds.len(), "every seed has exactly one result");
    let total: u64 = reports.iter().map(|r| r.count("urls")).sum();
    assert_eq!(total as usize, seeds.len());
    check_results_follow_the_model(&got, &fetch, &refused);
    check_the_warc_holds_each_request_once(&c, &reports, &fetch, &refused);

    // The stage is done: running it again does nothing.
    let again = fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    assert!(again.skipped);

    check_the_host_tables_hold_every_robots_txt(&c);
    check_a_recrawl_is_conditional_and_reuses_robots(&c, &web, &got, seeds.len());

    let report = server.stop();
    assert!(
        report.polite,
        "politeness violations: {:?} {:?}",
        report.counts,
        &report.violations[..report.violations.len().min(5)]
    );
    assert_eq!(report.counts.total(), 0);
}

/// Statuses are what the model says; disallowed URLs were refused without a request.
fn check_results_follow_the_model(
    got: &BTreeMap<String, FetchResult>,
    fetch: &[&websim::truth::Fetched],
    refused: &[&str],
) {
    for f in fetch {
        let r = &got[&f.url];
        assert_eq!(r.status, f.status, "{}: {r:?}", f.url);
        if f.outcome == Outcome::Redirect {
            assert_eq!(Some(&r.redirect), f.location.as_ref(), "{}", f.url);
        }
        if r.status == 200 {
            assert!(r.error.is_empty() && r.digest != 0, "{}: {r:?}", f.url);
            assert!(!r.warc_file.is_empty());
        }
    }
    for u in refused {
        let r = &got[*u];
        assert!(r.error.starts_with("robots"), "{u}: {r:?}");
        assert_eq!(r.status, 0);
    }
}

/// The WARC holds one response per request, robots.txt included, and nothing refused.
fn check_the_warc_holds_each_request_once(
    c: &Crawl,
    reports: &[StageReport],
    fetch: &[&websim::truth::Fetched],
    refused: &[&str],
) {
    let in_warc = check_warcs(c, 0);
    for f in fetch {
        assert_eq!(in_warc.get(&f.url), Some(&1), "{} in the WARC once", f.url);
    }
    for u in refused {
        assert!(
            !in_warc.contains_key(*u),
            "{u} was refused, never requested"
        );
    }
    let requests: u64 = reports.iter().map(|r| r.count("requests")).sum();
    assert_eq!(in_warc.values().sum::<u64>(), requests);
}

/// The host tables after cycle 0 hold a robots.txt for each of the web's 16 hosts.
fn check_the_host_tables_hold_every_robots_txt(c: &Crawl) {
    let hosts_seen: BTreeSet<String> = (0..2)
        .flat_map(|p| {
            let mut r =
                RunReader::open_expect(&c.dir.state_file(p, "hosts", 1), Schema::HOSTS).unwrap();
            let mut v = Vec::new();
            while r.advance().unwrap() {
                let h = HostRecord::decode(r.payload()).unwrap();
                assert!(!h.robots.is_empty(), "{}: robots.txt recorded", h.host);
                v.push(h.host);
            }
            v
        })
        .collect();
    assert_eq!(hosts_seen.len(), 16);
}

/// A next cycle over the same URLs (the results of cycle 0 `got`, of `seeds` URLs) reuses every
/// robots.txt from the host table, and sends each page's validators: every unchanged page
/// answers 304, a revisit record.
fn check_a_recrawl_is_conditional_and_reuses_robots(
    c: &Crawl,
    web: &Web,
    got: &BTreeMap<String, FetchResult>,
    seeds: usize,
) {
    // The recrawl carries each page's validators (as prioritize will): conditional GETs.
    for p in 0..2 {
        let next = c.dir.fetchlist(1, p);
        std::fs::create_dir_all(next.parent().unwrap()).unwrap();
        let mut r = RunReader::open_expect(&c.dir.fetchlist(0, p), Schema::FETCHLIST).unwrap();
        let mut w = RunWriter::create(&next, Schema::FETCHLIST).unwrap();
        while r.advance().unwrap() {
            let mut item = FetchItem::decode(r.payload()).unwrap();
            if let Some(prev) = got.get(&item.url) {
                item.etag = prev.etag.clone();
                item.last_modified = prev.last_modified.clone();
            }
            w.push(r.key(), &item.encode()).unwrap();
        }
        w.finish().unwrap();
    }
    let reports = fetch_all(c, 1);
    let again = results(c, 1);
    let with_validators = got
        .values()
        .filter(|r| r.status == 200 && !(r.etag.is_empty() && r.last_modified.is_empty()))
        .count();
    let not_modified = again.values().filter(|r| r.status == 304).count();
    assert!(
        with_validators > 10,
        "{with_validators} pages sent validators"
    );
    assert_eq!(
        not_modified, with_validators,
        "every unchanged page answers 304"
    );
    let revisits = check_warcs_of_type(c, 1, "revisit");
    assert_eq!(revisits, not_modified, "a 304 is a revisit record");
    let robots: u64 = reports.iter().map(|r| r.count("robots_requests")).sum();
    let unreachable_hosts = web
        .hosts
        .iter()
        .filter(|h| {
            matches!(
                h.robots_serve,
                websim::robots::RobotsServe::ServerError | websim::robots::RobotsServe::Timeout
            )
        })
        .count() as u64;
    // Only origins whose robots.txt was unreachable are asked again.
    assert!(
        robots <= unreachable_hosts * 6,
        "{robots} robots.txt requests"
    );
    assert_eq!(results(c, 1).len(), seeds);
}

#[test]
fn hostile_hosts_are_bounded_and_recorded() {
    let (web, server) = start(WebConfig {
        seed: 3,
        hosts: 14,
        pages: 6,
        hostile_every: 2,
        drip_interval: Duration::from_millis(100),
        bomb_bytes: 64 << 20,
        max_crawl_delay: Duration::from_millis(100),
        ..WebConfig::default()
    });
    let seeds = page_urls(&web, 6);
    let mut cfg = test_config();
    cfg.fetch.deadline_secs = 40.0;
    let c = crawl_of(&web, &seeds, cfg);
    let t0 = Instant::now();
    fetch_all(&c, 0);
    let took = t0.elapsed();
    // Two partitions, each bounded by its deadline plus one request's total timeout.
    assert!(took < Duration::from_secs(2 * 45), "took {took:?}");
    let got = results(&c, 0);
    assert_eq!(got.len(), seeds.len());
    for r in got.values() {
        assert!(r.length <= 256 << 10, "{}: body capped: {r:?}", r.url);
    }
    // The trap's pages are well-formed (its danger is in its links, the split stage's business).
    let hostile: Vec<&websim::model::HostSpec> = web
        .hosts
        .iter()
        .filter(|h| h.hostile.is_some_and(|k| k != Hostile::Trap))
        .collect();
    assert!(hostile.len() >= 5);
    for h in &hostile {
        let home = web.url(PageRef::Page {
            host: h.index,
            page: 0,
        });
        let r = &got[&home];
        assert!(
            !r.error.is_empty() || r.truncated || r.status != 200,
            "{:?} home page recorded as a failure or truncated: {r:?}",
            h.hostile
        );
    }
    check_warcs(&c, 0);
    assert_polite(server);
}

/// Two fetch runs back to back (a cycle boundary): the second keeps the delays the first one's
/// requests earned, as recorded in the host table (`next_allowed_ms`). A slow-drip host cut off
/// at the end of the first run is still being written to by the server when the second starts
/// (its 1 s back-off must hold across the runs, or the audit sees `concurrent`), and hosts
/// with a crawl-delay must not be asked again too soon.
#[test]
fn delays_earned_in_one_run_hold_in_the_next() {
    let (web, server) = start(WebConfig {
        seed: 21,
        hosts: 4,
        pages: 4,
        hostile_every: 2,
        // The server notices a hung-up drip only at its next write or the one after: the old
        // request stays in flight 300 to 600 ms after the client gave up.
        drip_interval: Duration::from_millis(300),
        max_crawl_delay: Duration::from_millis(300),
        ..WebConfig::default()
    });
    let drip = web
        .hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::SlowDrip))
        .expect("host 3 drips")
        .index;
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    cfg.fetch.deadline_secs = 20.0;
    let page = |n: u32| -> Vec<String> {
        (0..web.hosts.len() as u32)
            .map(|host| web.url(PageRef::Page { host, page: n }))
            .collect()
    };
    let c = crawl_of(&web, &page(0), cfg.clone());
    // Cycle 1's fetch list: the next page of every host, as `init` would write it.
    let next = crawl_of(&web, &page(1), cfg);
    let list = c.dir.fetchlist(1, 0);
    std::fs::create_dir_all(list.parent().unwrap()).unwrap();
    std::fs::copy(next.dir.fetchlist(0, 0), &list).unwrap();

    let t0 = Instant::now();
    fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    let r1 = fetch_partition(&c.dir, &c.cfg, 1, 0, &quiet()).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert_eq!(r1.count("results"), 4);
    let drip_url = web.url(PageRef::Page {
        host: drip,
        page: 1,
    });
    let got = results(&c, 1);
    assert!(got[&drip_url].truncated || !got[&drip_url].error.is_empty());

    // The table cycle 1 started from said when the dripping host could be asked again: at least
    // the back-off after its last request.
    let mut r = RunReader::open_expect(&c.dir.state_file(0, "hosts", 1), Schema::HOSTS).unwrap();
    let mut seen = 0;
    while r.advance().unwrap() {
        let h = HostRecord::decode(r.payload()).unwrap();
        assert!(h.next_allowed_ms >= h.last_request_ms, "{h:?}");
        if h.host == web.hosts[drip as usize].name {
            assert!(
                h.next_allowed_ms >= h.last_request_ms + 1000,
                "abandoned: 1 s back-off recorded: {h:?}"
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 4);

    assert_polite(server);
}

#[test]
fn a_killed_fetchs_requests_hold_the_delays_of_its_rerun() {
    // Every host wants 300 ms between requests (websim's default delay, which the crawl knows
    // as its own default). The first attempt fetches each host's robots.txt and home page, then
    // "dies" before committing: its WARC file stays (as a temporary, like a killed writer's) and
    // its host table is never written. The re-run, at once, must not ask those hosts again
    // within their delay of the dead attempt's last request: it knows them from the WARC.
    let (web, server) = start(WebConfig {
        seed: 33,
        hosts: 5,
        pages: 3,
        hostile_every: 0,
        default_delay: Duration::from_millis(300),
        max_crawl_delay: Duration::ZERO,
        ..WebConfig::default()
    });
    let mut cfg = patient(test_config());
    cfg.crawl.partitions = 1;
    cfg.fetch.default_delay_secs = 0.3;
    cfg.fetch.follow_per_host = 0;
    let homes: Vec<String> = common::websim_homes(&web);
    let c = crawl_of(&web, &homes, cfg);
    fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    // Undo the commit as a kill before it would have: no marker, no results, no host table;
    // the WARC file renamed to a writer's temporary name.
    std::fs::remove_file(c.dir.done_path(0, Stage::Fetch, 0)).unwrap();
    std::fs::remove_file(c.dir.fetched(0, 0)).unwrap();
    std::fs::remove_file(c.dir.state_file(0, "hosts", 1)).unwrap();
    for f in warc_files(&c, 0) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::rename(&f, f.with_file_name(format!(".{name}.tmp.999999"))).unwrap();
    }
    let r = fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet()).unwrap();
    assert_eq!(r.count("results"), homes.len() as u64);
    // The dead attempt's file is gone, the new one is complete.
    assert!(warc_files(&c, 0).iter().all(|f| !f
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with('.')));
    assert_polite(server);
}

#[test]
fn private_addresses_are_refused_by_default() {
    let (web, server) = start(WebConfig {
        hosts: 4,
        pages: 3,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let seeds: Vec<String> = (0..4).map(|h| format!("{}/", web.origin(h))).collect();
    let mut cfg = test_config();
    cfg.fetch.allow_private_addresses = false;
    let c = crawl_of(&web, &seeds, cfg);
    let reports = fetch_all(&c, 0);
    let got = results(&c, 0);
    assert_eq!(got.len(), 4);
    for r in got.values() {
        // Recorded once as a permanent `ssrf` refusal, not as an unreachable robots.txt that
        // would be asked again each cycle.
        assert_eq!(r.error, "ssrf", "{r:?}");
        assert_eq!(r.status, 0);
    }
    let sum = |k: &str| reports.iter().map(|r| r.count(k)).sum::<u64>();
    assert_eq!(sum("requests"), 0, "refusals are not requests");
    assert_eq!(sum("error_ssrf"), 4);
    let report = server.stop();
    assert_eq!(report.requests, 0, "nothing reached the server");
}

/// A fetch of a small web into gzip WARCs, checked by our own reader.
fn gzip_warc_fetch() -> Crawl {
    let (web, server) = start(WebConfig {
        seed: 5,
        hosts: 6,
        pages: 5,
        hostile_every: 0,
        max_crawl_delay: Duration::from_millis(100),
        ..WebConfig::default()
    });
    let seeds: Vec<String> = (0..6).map(|h| format!("{}/", web.origin(h))).collect();
    let mut cfg = patient(test_config());
    cfg.fetch.warc_compression = "gzip".into();
    let c = crawl_of(&web, &seeds, cfg);
    fetch_all(&c, 0);
    check_warcs(&c, 0);
    server.stop();
    c
}

#[test]
fn gzip_warcs_read_back() {
    gzip_warc_fetch();
}

#[test]
#[ignore = "needs warcio (pip install warcio==1.8.1); .ci/run runs it where warcio is installed"]
fn gzip_warcs_pass_warcio_check() {
    let warcio = std::process::Command::new("warcio")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("warcio", warcio, "pip install warcio==1.8.1");
    let c = gzip_warc_fetch();
    for f in warc_files(&c, 0) {
        let out = std::process::Command::new("warcio")
            .arg("check")
            .arg("-v")
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "warcio check {}: {}{}",
            f.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_missing_fetch_list_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = tmp.path().join("seeds");
    std::fs::write(&seeds, "http://a.test/\n").unwrap();
    let root = tmp.path().join("c");
    ops::init(
        &root,
        &InitOptions {
            seeds,
            config: None,
            partitions: Some(1),
        },
        &mut |_| {},
    )
    .unwrap();
    let dir = CrawlDir::new(&root);
    let cfg = Config::load(&dir.config_path()).unwrap();
    let e = fetch_partition(&dir, &cfg, 5, 0, &quiet()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("fetchlist/p0000.run") && msg.contains("prioritize"),
        "{msg}"
    );
    assert!(!dir.done_path(5, Stage::Fetch, 0).exists());
}

/// Stops the server and checks its audit saw no politeness violation.
fn assert_polite(server: Server) {
    let report = server.stop();
    assert_eq!(
        report.counts.total(),
        0,
        "{:?} {:#?}",
        report.counts,
        report.violations
    );
}

/// A slow resolver (50 ms a name) that knows the web's hosts, counting its calls and how many
/// run at once.
#[derive(Debug, Default)]
struct SlowDns {
    table: std::collections::HashMap<String, std::net::IpAddr>,
    calls: std::sync::Mutex<Vec<String>>,
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl dragnet::resolve::Lookup for SlowDns {
    fn lookup(&self, name: &str, _port: u16) -> std::io::Result<Vec<std::net::IpAddr>> {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(n, SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        self.now.fetch_sub(1, SeqCst);
        self.calls.lock().unwrap().push(name.to_string());
        self.table
            .get(name)
            .map(|ip| vec![*ip])
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
    }
}

/// `c`'s configuration without its resolve table, and fetch options that send every name to
/// a [`SlowDns`] knowing `web`'s hosts.
fn through_slow_dns(
    web: &websim::model::Web,
    c: &Crawl,
) -> (Config, std::sync::Arc<SlowDns>, FetchOptions) {
    // No table: every name goes to the (test's) resolver.
    let mut cfg = c.cfg.clone();
    cfg.resolve.hosts_files.clear();
    cfg.resolve.only = false;
    let dns = std::sync::Arc::new(SlowDns {
        table: web
            .hosts
            .iter()
            .map(|h| (h.name.clone(), std::net::IpAddr::V4(h.addr)))
            .collect(),
        ..SlowDns::default()
    });
    let opts = FetchOptions {
        lookup: Some(dns.clone()),
        ..quiet()
    };
    (cfg, dns, opts)
}

/// Names the crawl's table lacks go to the resolver once per host per run, several at a time
/// ahead of the feeder (never one slow name after another), and their answers serve the fetch.
#[test]
fn dns_lookups_are_one_per_host_and_run_ahead_in_parallel() {
    let (web, server) = start(WebConfig {
        seed: 13,
        hosts: 24,
        pages: 3,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let seeds: Vec<String> = (0..24).map(|h| format!("{}/", web.origin(h))).collect();
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    let c = common::websim_crawl(&web, &seeds, cfg);
    let (cfg, dns, opts) = through_slow_dns(&web, &c);
    fetch_partition(&c.dir, &cfg, 0, 0, &opts).unwrap();
    let got = results(&c, 0);
    // Every host resolved (some have a robots.txt that never answers: not a DNS matter).
    let dns_errors: Vec<&String> = seeds.iter().filter(|s| got[*s].error == "dns").collect();
    assert!(dns_errors.is_empty(), "{dns_errors:?}");
    assert!(seeds.iter().filter(|s| got[*s].status == 200).count() >= 20);
    let mut calls = dns.calls.lock().unwrap().clone();
    calls.sort();
    let before = calls.len();
    calls.dedup();
    assert_eq!(before, 24, "one lookup per host: {calls:?}");
    assert_eq!(calls.len(), 24);
    assert!(
        dns.most.load(std::sync::atomic::Ordering::SeqCst) > 1,
        "lookups ran one at a time"
    );
    server.stop();
}

/// A host with reserve URLs only (`[prioritize] reserve_factor`) is fed only while the cycle's
/// window is open: with none open, its URLs are deferred without a request, and the DNS
/// prefetch never asks for its name.
#[test]
fn hosts_with_reserve_urls_only_are_not_looked_up_when_no_window_opens() {
    let (web, server) = start(WebConfig {
        seed: 13,
        hosts: 8,
        pages: 3,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let seeds: Vec<String> = (0..8).map(|h| format!("{}/", web.origin(h))).collect();
    let mut cfg = test_config();
    cfg.crawl.partitions = 1;
    let c = common::websim_crawl(&web, &seeds, cfg);
    // The list made by hand: hosts 4..8 have reserve URLs only.
    let reserve: Vec<&String> = seeds[4..].iter().collect();
    let path = c.dir.fetchlist(0, 0);
    let mut items = Vec::new();
    let mut r = dragnet::run::RunReader::open(&path).unwrap();
    while r.advance().unwrap() {
        let mut item = dragnet::records::FetchItem::decode(r.payload()).unwrap();
        item.reserve = reserve.contains(&&item.url);
        items.push((r.key().to_vec(), item));
    }
    drop(r);
    std::fs::remove_file(&path).unwrap();
    let mut w = dragnet::run::RunWriter::create(&path, dragnet::run::Schema::FETCHLIST).unwrap();
    for (k, item) in &items {
        w.push(k, &item.encode()).unwrap();
    }
    w.finish().unwrap();
    let (cfg, dns, opts) = through_slow_dns(&web, &c);
    // Cycle 0's fetch run alone: no window (no fetch lists of a prioritize to bound one).
    let report = fetch_partition(&c.dir, &cfg, 0, 0, &opts).unwrap();
    assert_eq!(report.count("reserve"), 4);
    assert_eq!(report.count("reserve_tried"), 0);
    let got = results(&c, 0);
    for s in &seeds[..4] {
        assert_eq!(got[s].status, 200, "{s}");
    }
    for s in reserve {
        assert_eq!(got[s].error, "deferred", "{s}");
    }
    let mut calls = dns.calls.lock().unwrap().clone();
    calls.sort();
    let listed: Vec<String> = {
        let mut v: Vec<String> = seeds[..4]
            .iter()
            .map(|s| url::Url::parse(s).unwrap().host_str().unwrap().to_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(calls, listed, "only the listed hosts' names are looked up");
    server.stop();
}

mod deadline;
