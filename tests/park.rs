//! Parked hosts (issue 31, point 4; docs/design.md §1, freedom (d)): a host that fails in
//! `park_after_failed_runs` fetch runs in a row is left out of the fetch lists for 1, 2, 4, ...
//! cycles instead of costing every cycle its timeouts, `cycle --until-empty` ends when only
//! parked hosts remain, and `status` names them.
//!
//! The dead host is a listener on 127.0.0.1 that accepts each connection and closes it at once
//! (no answer): it counts the connections, so the test sees which cycles contacted it.

use crate::common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dragnet::records::HostRecord;
use dragnet::run::{Cursor, RunReader, Schema};

/// A server that answers nothing: accepts, closes, counts.
struct Dead {
    port: u16,
    connections: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Dead {
    fn start() -> Dead {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let port = l.local_addr().unwrap().port();
        let connections = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (n, s) = (Arc::clone(&connections), Arc::clone(&stop));
        std::thread::spawn(move || {
            // Bounded: stops when the test drops it, and after 10 minutes in any case.
            let end = std::time::Instant::now() + Duration::from_secs(600);
            while !s.load(Ordering::Relaxed) && std::time::Instant::now() < end {
                match l.accept() {
                    Ok((c, _)) => {
                        n.fetch_add(1, Ordering::Relaxed);
                        drop(c);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Dead {
            port,
            connections,
            stop,
        }
    }

    fn count(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }
}

impl Drop for Dead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The host records named `host` in the newest host tables of every partition.
fn host_record(dir: &dragnet::crawl::CrawlDir, partitions: u32, host: &str) -> Option<HostRecord> {
    (0..partitions).find_map(|p| {
        let (_, path) = dir.latest_state(p, "hosts", u32::MAX)?;
        let mut r = RunReader::open_expect(&path, Schema::HOSTS).unwrap();
        while r.advance().unwrap() {
            let h = HostRecord::decode(r.payload()).unwrap();
            if h.host == host {
                return Some(h);
            }
        }
        None
    })
}

/// The dead host's name.
const DEAD: &str = "dead.websim.test";

#[test]
fn a_host_that_keeps_failing_is_parked_for_doubling_cycles_and_ends_an_until_empty_crawl() {
    let (web, server) = common::small_web(31, 2, 4);
    let dead = Dead::start();
    let (c, dead_urls) = crawl_with_a_dead_host(&web, &dead);
    check_parks_double(&c, &dead);
    check_an_until_empty_crawl_ends_on_the_parked_host(&c);
    // The live web is crawled to its truth all the same, politely.
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "{:?}", audit.violations);
    let got: std::collections::BTreeSet<String> = common::outcome(&c.dir, 2)
        .fetched
        .into_iter()
        .filter(|u| !u.contains(DEAD))
        .collect();
    assert_eq!(got, common::truth_fetched(&web));
    check_status_and_report_name_the_parked_host(&c);
    check_a_listed_parked_host_is_not_contacted(&c, &dead, &dead_urls);
}

/// A crawl of `web`'s homes and three URLs of the dead host (resolving to loopback beside
/// websim's hosts), with the default parking. Returns it and the dead host's URLs.
fn crawl_with_a_dead_host(web: &websim::model::Web, dead: &Dead) -> (common::Crawl, Vec<String>) {
    let dead_urls: Vec<String> = (0..3)
        .map(|i| format!("http://{DEAD}:{}/page{i}", dead.port))
        .collect();
    let mut seeds = common::websim_homes(web);
    seeds.extend(dead_urls.iter().cloned());
    let mut cfg = common::websim_config(2, 4);
    // The defaults: parked after 2 failed runs, at most 16 cycles. The URLs must outlive the
    // cycles the test watches (3 attempts would give them up at the third failed run).
    assert_eq!(cfg.fetch.park_after_failed_runs, 2);
    cfg.prioritize.max_attempts = 20;
    let c = common::websim_crawl(web, &seeds, cfg);
    // The dead host resolves to loopback beside websim's hosts.
    let hosts = c.tmp.path().join("websim.hosts");
    let mut text = std::fs::read_to_string(&hosts).unwrap();
    text.push_str(&format!("127.0.0.1 {DEAD}\n"));
    std::fs::write(&hosts, text).unwrap();
    (c, dead_urls)
}

/// The dead host's fetch results among the crawl's results up to cycle `cycle`.
fn dead_results_before(c: &common::Crawl, cycle: u32) -> usize {
    common::fetch_results(&c.dir, 2, cycle)
        .iter()
        .filter(|f| f.url.contains(DEAD))
        .count()
}

/// Cycles 0 to 5 one at a time: the dead host is contacted in cycles 0, 1 and 3 only (parked for
/// 1, then 2 cycles), and no fetch list of a parked cycle names its URLs.
fn check_parks_double(c: &common::Crawl, dead: &Dead) {
    let one = common::cycles(1);
    // Cycles 0 to 5 one at a time: connections to the dead host in each.
    let mut contacted = Vec::new();
    for cycle in 0..6u32 {
        let before = dead.count();
        let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &one).unwrap();
        assert!(r.complete(), "cycle {cycle}: {r:?}");
        contacted.push(dead.count() > before);
        let listed_dead = dead_results_before(c, cycle + 1);
        let rec = host_record(&c.dir, 2, DEAD).expect("the dead host has a record");
        eprintln!(
            "cycle {cycle}: contacted {}, failed_runs {}, parked_until {}, dead results so far {listed_dead}",
            contacted[cycle as usize], rec.failed_runs, rec.parked_until
        );
    }
    // Failed in cycles 0 and 1: parked for cycle 2, back in 3, failed again: parked for 4 and 5.
    assert_eq!(
        contacted,
        [true, true, false, true, false, false],
        "which cycles contacted the dead host"
    );
    let rec = host_record(&c.dir, 2, DEAD).unwrap();
    assert_eq!((rec.failed_runs, rec.parked_until), (3, 6), "{rec:?}");
    // No fetch list of a parked cycle named its URLs (they waited in the frontier, no result).
    let per_cycle = |cycle: u32| {
        common::fetch_results(&c.dir, 2, cycle + 1)
            .len()
            .saturating_sub(common::fetch_results(&c.dir, 2, cycle).len())
    };
    for cycle in [2u32, 4, 5] {
        let dead_results = dead_results_before(c, cycle + 1) - dead_results_before(c, cycle);
        assert_eq!(dead_results, 0, "cycle {cycle} listed the parked host");
    }
    assert!(per_cycle(0) > 0);
}

/// To the end: cycle 6 tries the host again (failed: parked until 6 + 1 + 4 = 11), and then
/// only the parked host is left. The crawl ends, saying so, instead of running empty cycles.
fn check_an_until_empty_crawl_ends_on_the_parked_host(c: &common::Crawl) {
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(20)).unwrap();
    assert!(r.complete(), "{r:?}");
    assert!(
        r.stopped
            .contains("only parked hosts remain: 1 host (3 URLs held in the frontier)")
            && r.stopped.contains("back in cycle 11"),
        "{}",
        r.stopped
    );
    let rec = host_record(&c.dir, 2, DEAD).unwrap();
    assert_eq!((rec.failed_runs, rec.parked_until), (4, 11), "{rec:?}");
}

/// `status` names the parked host and when it comes back; so does the report, among the hosts
/// given up.
fn check_status_and_report_name_the_parked_host(c: &common::Crawl) {
    let o = common::dragnet_on(&["status"], c.dir.root());
    let text = common::out_text(&o);
    assert!(
        text.contains("parked") && text.contains("cycle 11"),
        "status does not name the parked host:\n{text}"
    );
    common::ok(common::dragnet_on(&["report"], c.dir.root()));
    let html = std::fs::read_to_string(c.dir.root().join("report/index.html")).unwrap();
    assert!(
        html.contains(DEAD) && html.contains("parked until cycle 11"),
        "the report does not name the parked host"
    );
}

/// A fetch list made by hand (or before the park) that names the parked host: its URLs get
/// `parked` results without a request, and the fetch does not wait for them.
fn check_a_listed_parked_host_is_not_contacted(
    c: &common::Crawl,
    dead: &Dead,
    dead_urls: &[String],
) {
    let cycle = dragnet::crawl::next_cycle(&c.dir, 2);
    let hk = dragnet::keys::host_key(DEAD);
    let p = dragnet::keys::partition_of(hk, 2);
    let list = c.dir.fetchlist(cycle, p);
    let _ = std::fs::remove_file(&list);
    let mut w = dragnet::run::RunWriter::create(&list, Schema::FETCHLIST).unwrap();
    let mut items: Vec<(u64, String)> = dead_urls
        .iter()
        .map(|u| (dragnet::keys::fingerprint(u), u.clone()))
        .collect();
    items.sort();
    for (fp, url) in items {
        let item = dragnet::records::FetchItem {
            url,
            ..Default::default()
        };
        w.push(&dragnet::run::host_fp_key(hk, fp), &item.encode())
            .unwrap();
    }
    w.finish().unwrap();
    let before = dead.count();
    common::ok(common::dragnet_on(
        &[
            "fetch",
            "--cycle",
            &cycle.to_string(),
            "--partition",
            &p.to_string(),
        ],
        c.dir.root(),
    ));
    assert_eq!(dead.count(), before, "a parked host was contacted");
    let parked: Vec<String> = common::fetch_results(&c.dir, 2, cycle + 1)
        .into_iter()
        .filter(|f| f.url.contains(DEAD) && f.error == "parked")
        .map(|f| f.url)
        .collect();
    assert_eq!(parked.len(), dead_urls.len(), "{parked:?}");
}
