//! Tests of `dragnet status`; [`fixture`] is shared with the metrics tests.

use super::hosts::HostCounter;
use super::render::ranges;
use super::*;
use crate::crawl::failed::{clear_failed, write_failed};
use crate::crawl::DoneMarker;
use crate::error::Error;
use crate::records::FetchResult;
use crate::run::{fp_key, RunWriter, Schema};
use crate::util::parse_rfc3339;
use std::time::{Duration, SystemTime};

fn marker(crawl: &CrawlDir, stage: Stage, c: u32, p: u32, secs: u64, counts: &[(&str, u64)]) {
    let started = SystemTime::now() - Duration::from_secs(secs);
    let mut m = DoneMarker::new(stage, c, p, started);
    for (k, v) in counts {
        m.counts.insert((*k).into(), *v);
    }
    crate::storage::create_dir_all(&crawl.stage_dir(c, stage)).unwrap();
    m.commit(&crawl.done_path(c, stage, p), started).unwrap();
}

fn fetched(crawl: &CrawlDir, c: u32, p: u32, results: &[(&str, u16)]) {
    let mut rs: Vec<(u64, FetchResult)> = results
        .iter()
        .map(|&(url, status)| {
            let r = FetchResult {
                url: url.into(),
                status,
                error: if status == 0 {
                    "robots".into()
                } else {
                    String::new()
                },
                ..FetchResult::default()
            };
            (crate::keys::fingerprint(url), r)
        })
        .collect();
    rs.sort_by_key(|r| r.0);
    let path = crawl.fetched(c, p);
    crate::storage::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = RunWriter::create(&path, Schema::FETCHED).unwrap();
    for (fp, r) in rs {
        w.push(&fp_key(fp), &r.encode()).unwrap();
    }
    w.finish().unwrap();
}

/// A 2-partition crawl named `te"st\<newline>x`: cycle 0 complete (fetch partitions took ~2 s
/// and ~4 s; frontiers of 10 and 20; cache 4 hits of 16), cycle 1 with partition 0 fetched
/// (a.example 3 pages, b.example 1, one refused by robots.txt) and partition 1's fetch failed.
pub(crate) fn fixture() -> (tempfile::TempDir, CrawlDir) {
    let t = tempfile::tempdir().unwrap();
    let crawl = CrawlDir::new(t.path().join("crawl"));
    std::fs::create_dir_all(crawl.root()).unwrap();
    let mut cfg = Config::default();
    cfg.crawl.name = "te\"st\\\nx".into();
    cfg.crawl.partitions = 2;
    std::fs::write(crawl.config_path(), cfg.to_toml()).unwrap();
    crate::crawl::manifest::write(&crawl, &cfg).unwrap();
    for (p, n, v) in [(0u32, 3u64, 0u32), (1, 4, 1)] {
        std::fs::create_dir_all(crawl.state_dir(p)).unwrap();
        let mut w = RunWriter::create(&crawl.state_file(p, "seen", v), Schema::SEEN).unwrap();
        for fp in 0..n {
            w.push(&fp_key(fp), &[]).unwrap();
        }
        w.finish().unwrap();
    }
    for p in 0..2 {
        let secs = 2 + 2 * u64::from(p);
        marker(&crawl, Stage::Init, 0, p, 0, &[("seeds", 1)]);
        let fetch = [
            ("status_2xx", 3),
            ("status_4xx", 1),
            ("urls", 4),
            ("requests", 5),
            ("bytes", 1000),
        ];
        marker(&crawl, Stage::Fetch, 0, p, secs, &fetch);
        marker(&crawl, Stage::Parse, 0, p, 1, &[("pages", 4)]);
        let split = [
            ("cache_hits", 1 + 2 * u64::from(p)),
            ("cache_misses", 7 - 2 * u64::from(p)),
        ];
        marker(&crawl, Stage::Split, 0, p, 1, &split);
        marker(&crawl, Stage::Merge, 0, p, 1, &[("new", 3)]);
        marker(
            &crawl,
            Stage::Prioritize,
            0,
            p,
            1,
            &[("frontier", 10 + 10 * u64::from(p))],
        );
    }
    let fetch = [
        ("status_2xx", 4),
        ("no_answer", 1),
        ("error_robots", 1),
        ("urls", 5),
        ("requests", 6),
        ("bytes", 500),
    ];
    marker(&crawl, Stage::Fetch, 1, 0, 1, &fetch);
    fetched(
        &crawl,
        1,
        0,
        &[
            ("http://a.example/1", 200),
            ("http://a.example/2", 200),
            ("http://a.example:8080/3", 200),
            ("http://b.example/", 200),
            ("http://c.example/", 0),
        ],
    );
    // Partition 1's fetch results exist, but its fetch is not committed: not counted.
    fetched(&crawl, 1, 1, &[("http://z.example/", 200)]);
    let err = Error::corrupt(crawl.fetchlist(1, 1), 42, "bad block");
    write_failed(&crawl, Stage::Fetch, 1, 1, &err).unwrap();
    (t, crawl)
}

/// The lock file a run that died leaves: its record, without the OS lock a live holder keeps.
fn dead_lock(crawl: &CrawlDir, pid: u32) {
    let info = LockInfo {
        pid,
        host: crate::util::hostname(),
        started: "2026-01-01T00:00:00Z".into(),
        command: "cycle".into(),
    };
    std::fs::write(crawl.lock_path(), serde_json::to_vec(&info).unwrap()).unwrap();
}

#[test]
fn status_reports_states_sizes_pages_cache_and_hosts() {
    let (_t, crawl) = fixture();
    let s = status(crawl.root()).unwrap();
    assert_eq!((s.partitions, s.seen, s.frontier), (2, 7, Some(30)));
    assert_eq!(
        (s.cycles_complete, s.last_complete, s.current),
        (1, Some(0), Some(1))
    );
    assert_eq!(s.failed, 1);
    assert_eq!(s.cycles[0].state, CycleState::Complete);
    assert!(s.cycles[0].completed_at.is_some());
    let c1 = &s.cycles[1];
    assert_eq!(c1.state, CycleState::InProgress);
    let names: Vec<Stage> = c1.stages.iter().map(|st| st.stage).collect();
    assert_eq!(names, Stage::CYCLE);
    let fetch = &c1.stages[0];
    assert_eq!(
        (fetch.done, fetch.running, fetch.failed, fetch.pending),
        (1, 0, 1, 0)
    );
    assert_eq!(
        fetch.partitions,
        [PartitionState::Done, PartitionState::Failed]
    );
    assert_eq!(fetch.failures[0].partition, 1);
    assert!(
        fetch.failures[0].error.contains("bad block"),
        "{:?}",
        fetch.failures
    );
    assert_eq!(fetch.failures[0].exit_code, crate::error::EXIT_IO);
    assert_eq!(c1.stages[1].pending, 2);
    // Stage times of cycle 0: max over partitions and sum.
    let f0 = &s.cycles[0].stages[1];
    assert_eq!(f0.stage, Stage::Fetch);
    assert!(f0.partitions.is_empty());
    assert!((4.0..5.0).contains(&f0.max_seconds), "{}", f0.max_seconds);
    assert!((6.0..7.0).contains(&f0.seconds), "{}", f0.seconds);
    // Pages of the newest fetch, and of all.
    assert_eq!(s.fetch_cycle, Some(1));
    assert_eq!(s.fetch.by_status["2xx"], 4);
    assert_eq!(s.fetch.errors["robots"], 1);
    assert_eq!(s.fetch_total.by_status["2xx"], 10);
    assert_eq!((s.fetch_total.partitions, s.fetch_total.bytes), (3, 2500));
    assert_eq!(
        (s.cache_cycle, s.cache.hits, s.cache.lookups),
        (Some(0), 4, 16)
    );
    assert_eq!(s.cache.hit_rate(), Some(0.25));
    let top = s.top_hosts.as_ref().unwrap();
    assert_eq!((top.cycle, top.partitions, top.pages), (1, 1, 4));
    assert_eq!((top.approximate, top.distinct_hosts), (false, Some(2)));
    let hosts: Vec<(&str, u64)> = top
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.pages))
        .collect();
    assert_eq!(hosts, [("a.example", 3), ("b.example", 1)]);

    let text = s.verbose().to_string();
    for want in [
        "frontier   30 URLs (2 of 2 partitions prioritized)",
        "cycles     1 complete (last 000000, finished ",
        "current 000001: in progress at fetch",
        "p0001 FAILED at ",
        "(exit 3): corrupt file ",
        "cache      cycle 000000: 25.0% hits (4 of 16 lookups)",
        "top hosts  cycle 000001, 4 pages (2 hosts):",
        "           3  a.example",
        "last cycle 000000 stage times",
        "fetched    cycle 000001 (1 of 2 partitions): 5 URLs, 6 requests",
        "2xx 4 no_answer 1; errors: robots 1",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(
        json["cycles"][1]["stages"][0]["partitions"],
        serde_json::json!(["done", "failed"])
    );
    assert_eq!(json["cycles"][1]["state"], "in_progress");

    // Without the top-hosts pass.
    let quick = status_with(crawl.root(), &StatusOptions { top_hosts: false }).unwrap();
    assert!(quick.top_hosts.is_none());
}

#[test]
fn a_live_lock_makes_the_first_unfinished_stage_running() {
    let (_t, crawl) = fixture();
    let _held = crate::crawl::CrawlLock::acquire(crawl.root(), "cycle").unwrap();
    let s = status(crawl.root()).unwrap();
    let c1 = &s.cycles[1];
    // Partition 1 failed: failed, not running.
    assert_eq!((c1.stages[0].running, c1.stages[0].failed), (0, 1));
    assert_eq!(c1.stages[1].partitions, [PartitionState::Pending; 2]);
    // Once the runner clears the failure to retry it, it is running; later stages wait.
    clear_failed(&crawl, Stage::Fetch, 1, 1).unwrap();
    let s = status(crawl.root()).unwrap();
    let c1 = &s.cycles[1];
    assert_eq!(
        c1.stages[0].partitions,
        [PartitionState::Done, PartitionState::Running]
    );
    assert_eq!(c1.stages[1].running, 0);
    assert_eq!(s.cycles[0].stages[1].running, 0);
    let text = s.verbose().to_string();
    assert!(text.contains("running: p0001"), "{text}");
    assert!(s.to_string().contains("): running"), "{text}");
}

#[test]
fn a_stale_lock_says_the_next_cycle_takes_it_over() {
    let (_t, crawl) = fixture();
    // A dead holder, whatever its pid: a pid still in use (this process) does not keep it.
    for pid in [4_194_304 + 7, std::process::id()] {
        dead_lock(&crawl, pid);
        let s = status(crawl.root()).unwrap();
        assert_eq!(s.cycles[1].stages[0].running, 0);
        let text = s.to_string();
        let want = format!("dragnet unlock {}", crawl.root().display());
        assert!(
            text.contains("STALE") && text.contains("takes it over") && text.contains(&want),
            "{text}"
        );
    }
}

#[test]
fn a_fresh_crawl_shows_cycle_0_not_started() {
    let (_t, crawl) = fixture();
    std::fs::remove_dir_all(crawl.cycles_root()).unwrap();
    marker(&crawl, Stage::Init, 0, 0, 0, &[]);
    marker(&crawl, Stage::Init, 0, 1, 0, &[]);
    let s = status(crawl.root()).unwrap();
    assert_eq!(
        (s.current, s.last_complete, s.frontier),
        (Some(0), None, None)
    );
    assert_eq!(s.cycles[0].state, CycleState::NotStarted);
    assert_eq!(s.cycles[0].stages.len(), 6);
    assert_eq!(s.cycles[0].stages[1].pending, 2);
    assert!(s.top_hosts.is_none() && s.fetch_cycle.is_none());
    let text = s.verbose().to_string();
    assert!(text.contains("frontier   unknown"), "{text}");
    assert!(text.contains("current 000000: not started"), "{text}");
}

#[test]
fn host_counter_is_exact_under_the_cap_and_keeps_heavy_hosts_past_it() {
    let mut c = HostCounter::new(4);
    for h in ["a", "b", "a", "c", "a"] {
        c.add(h);
    }
    let t = c.finish(0, 1, 2);
    assert_eq!(
        (t.approximate, t.distinct_hosts, t.pages),
        (false, Some(3), 5)
    );
    assert_eq!(
        t.hosts[0],
        HostCount {
            host: "a".into(),
            pages: 3
        }
    );
    assert_eq!(t.hosts[1].host, "b");

    // Past the cap: 2000 pages, "big.example" 666 of them, "mid.example" 334, and 1000
    // hosts of one page. Misra–Gries keeps every host with more than 2000 / (4 + 1) = 400
    // pages, and each count is at most error_bound below the truth.
    let mut c = HostCounter::new(4);
    for i in 0..1000u32 {
        c.add(if i % 3 == 0 {
            "mid.example"
        } else {
            "big.example"
        });
        c.add(&format!("h{i}.example"));
    }
    assert!(c.counts.len() <= 4);
    let t = c.finish(0, 1, 10);
    assert!(t.approximate && t.distinct_hosts.is_none());
    assert_eq!(t.pages, 2000);
    assert_eq!(t.hosts[0].host, "big.example");
    assert!(t.error_bound <= 400, "{}", t.error_bound);
    for h in &t.hosts {
        let truth = match h.host.as_str() {
            "big.example" => 666,
            "mid.example" => 334,
            _ => 1,
        };
        assert!(
            h.pages <= truth && h.pages + t.error_bound >= truth,
            "{h:?} {t:?}"
        );
    }
}

#[test]
fn rfc3339_round_trips() {
    for secs in [0u64, 951_782_400, 1_700_000_000, 4_102_444_800 + 86_399] {
        assert_eq!(parse_rfc3339(&crate::util::rfc3339(secs)), Some(secs));
    }
    assert_eq!(parse_rfc3339(""), None);
    assert_eq!(parse_rfc3339("2026-01-01 00:00:00Z"), None);
}

#[test]
fn partition_ranges() {
    assert_eq!(
        ranges([0, 1, 2, 5, 7, 8].into_iter(), 8),
        "p0000-p0002, p0005, p0007-p0008"
    );
    assert_eq!(
        ranges([0, 2, 4].into_iter(), 2),
        "p0000, p0002, ... (1 more ranges)"
    );
}

/// The crawl of [`finished_crawl`]: the headline shows cycle 0, the last that did work, and the
/// crawl is called done instead of "cycle 2 not started".
#[test]
fn a_finished_crawl_says_so_and_shows_the_last_cycle_that_did_work() {
    let (_t, crawl) = finished_crawl();
    let s = status(crawl.root()).unwrap();
    assert!(s.finished);
    assert_eq!((s.current, s.last_complete), (Some(2), Some(1)));
    assert_eq!((s.fetch_cycle, s.cache_cycle), (Some(0), Some(0)));
    assert_eq!(s.fetch.urls, 4);
    assert_eq!(s.last_working_cycle().map(|c| c.cycle), Some(0));
    let text = s.verbose().to_string();
    for want in [
        "the crawl is done: the fetch lists of cycle 000002 are empty",
        "fetched    cycle 000000 (1 of 1 partitions): 4 URLs, 4 requests",
        "last cycle 000000 stage times",
        "cycle 000001: complete, fetch list 0 URLs",
        "cycle 000002: nothing to fetch (the crawl is done)",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
    assert!(!text.contains("not started"), "{text}");

    // A URL put back into the last fetch list: not done any more.
    let path = crawl.fetchlist(2, 0);
    let mut w = RunWriter::create(&path, Schema::FETCHLIST).unwrap();
    w.push(&crate::run::host_fp_key(1, 1), &[]).unwrap();
    w.finish().unwrap();
    let s = status(crawl.root()).unwrap();
    assert!(!s.finished);
    assert!(s
        .verbose()
        .to_string()
        .contains("current 000002: not started"));
    let text = s.to_string();
    assert!(
        text.contains("cycle 000002 not started (1 URL in its fetch lists)"),
        "{text}"
    );
    assert!(!text.contains("the crawl is done"), "{text}");
}

/// A crawl run to its end: cycle 0 fetched, cycle 1 had nothing to fetch (run by hand with
/// `--cycles`), and cycle 2's fetch lists are written and empty.
fn finished_crawl() -> (tempfile::TempDir, CrawlDir) {
    let t = tempfile::tempdir().unwrap();
    let crawl = CrawlDir::new(t.path().join("crawl"));
    std::fs::create_dir_all(crawl.root()).unwrap();
    let mut cfg = Config::default();
    cfg.crawl.partitions = 1;
    std::fs::write(crawl.config_path(), cfg.to_toml()).unwrap();
    crate::crawl::manifest::write(&crawl, &cfg).unwrap();
    marker(&crawl, Stage::Init, 0, 0, 0, &[("seeds", 1)]);
    for c in 0..2 {
        let urls = if c == 0 { 4 } else { 0 };
        let fetch = [("status_2xx", urls), ("urls", urls), ("requests", urls)];
        marker(&crawl, Stage::Fetch, c, 0, 1, &fetch);
        marker(&crawl, Stage::Parse, c, 0, 1, &[("pages", urls)]);
        let split = [
            ("links", 3 * urls),
            ("cache_hits", urls),
            ("cache_misses", urls),
        ];
        marker(&crawl, Stage::Split, c, 0, 1, &split);
        marker(&crawl, Stage::Merge, c, 0, 1, &[]);
        marker(&crawl, Stage::Prioritize, c, 0, 1, &[("frontier", 0)]);
    }
    for c in 0..3 {
        let path = crawl.fetchlist(c, 0);
        crate::storage::create_dir_all(path.parent().unwrap()).unwrap();
        let mut w = RunWriter::create(&path, Schema::FETCHLIST).unwrap();
        if c == 0 {
            w.push(&crate::run::host_fp_key(1, 1), &[]).unwrap();
        }
        w.finish().unwrap();
    }
    (t, crawl)
}

/// The summary fits one screen: at most 25 lines of at most 100 columns (the test crawls' paths
/// are short), and it does not hold the counter dump of `--verbose`.
fn assert_fits(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() <= super::summary::MAX_LINES,
        "{} lines:\n{text}",
        lines.len()
    );
    for l in &lines {
        assert!(
            l.chars().count() <= super::summary::WIDTH,
            "{} columns: {l:?}\n{text}",
            l.chars().count()
        );
    }
    for dump in ["urldb ", "stage times", "cache_hits=", "  fetch      "] {
        assert!(!text.contains(dump), "{dump:?} is for --verbose:\n{text}");
    }
}

/// `--verbose`: the summary, a blank line, then the counter dump.
#[test]
fn verbose_is_the_summary_then_the_counter_dump() {
    let (_t, crawl) = fixture();
    let s = status(crawl.root()).unwrap();
    let summary = s.to_string();
    let verbose = s.verbose().to_string();
    let (head, dump) = verbose.split_once("\n\n").unwrap();
    assert_eq!(format!("{head}\n"), summary);
    for want in [
        "seen       7 URLs",
        "urldb      0 records",
        "  fetch          2 done     0 pending ",
        "bytes=2000 requests=10 status_2xx=6 status_4xx=2 urls=8",
        "cache_hits=4 cache_misses=12",
        "    p0001 FAILED at ",
        "last cycle 000000 stage times",
        "cycle 000001: in progress, fetch list 0 URLs",
    ] {
        assert!(dump.contains(want), "{want:?} missing from\n{dump}");
    }
}

/// A fresh crawl: cycle 0 not started, its fetch lists, and `dragnet cycle` to run it.
#[test]
fn summary_of_a_fresh_crawl() {
    let (_t, crawl) = fixture();
    std::fs::remove_dir_all(crawl.cycles_root()).unwrap();
    for p in 0..2 {
        marker(&crawl, Stage::Init, 0, p, 0, &[("seeds", 2)]);
        let path = crawl.fetchlist(0, p);
        crate::storage::create_dir_all(path.parent().unwrap()).unwrap();
        let mut w = RunWriter::create(&path, Schema::FETCHLIST).unwrap();
        for fp in 0..2 {
            w.push(&crate::run::host_fp_key(1, fp), &[]).unwrap();
        }
        w.finish().unwrap();
    }
    let s = status(crawl.root()).unwrap();
    let text = s.to_string();
    assert_fits(&text);
    let dir = crawl.root().display();
    for want in [
        format!(r#"crawl      te"st\\nx in {dir}, 2 partitions"#),
        "progress   cycle 000000 not started (a fresh crawl; 4 URLs in its fetch lists)".into(),
        "           no cycle complete yet".into(),
        "URLs       7 seen, 0 fetched, no frontier yet".into(),
        "WARC       none written yet".into(),
        "lock       free".into(),
        format!("next       dragnet cycle {dir} "),
        "# runs cycle 000000".into(),
        format!("           dragnet status --verbose {dir} "),
    ] {
        assert!(text.contains(&want), "{want:?} missing from\n{text}");
    }
    for not in ["failed", "damaged", "top hosts", "errors", "fetch list "] {
        assert!(!text.contains(not), "{not:?} in\n{text}");
    }
}

/// The reserve of a fetch list is counted apart: what the window left of it was deferred back
/// to the frontier by design, not by the deadline.
#[test]
fn the_reserve_is_not_counted_as_listed_or_deferred_by_the_deadline() {
    let (_t, crawl) = fixture();
    let fetch = [
        ("status_2xx", 5),
        ("no_answer", 1),
        ("error_robots", 1),
        ("error_deferred", 4),
        ("urls", 11),
        ("reserve", 5),
        ("reserve_tried", 2),
        ("requests", 7),
        ("bytes", 500),
    ];
    marker(&crawl, Stage::Fetch, 1, 0, 1, &fetch);
    let s = status(crawl.root()).unwrap();
    assert_eq!((s.fetch.reserve, s.fetch.reserve_tried), (5, 2));
    assert_fits(&s.to_string());
    // 6 listed: 5 tried, 1 deferred by the deadline (4 deferred, 3 of them the reserve's).
    assert_eq!(
        s.coverage_line().unwrap(),
        "cycle 000001: 5 of 6 URLs tried (83.3%), 1 deferred by the deadline; 1 of 2 partitions \
         fetched; reserve: 2 of 5 tried"
    );
}

/// A crawl a live run works on: running, where, and nothing to run but status again.
#[test]
fn summary_of_a_running_crawl() {
    let (_t, crawl) = fixture();
    let _held = crate::crawl::CrawlLock::acquire(crawl.root(), "cycle").unwrap();
    clear_failed(&crawl, Stage::Fetch, 1, 1).unwrap();
    let s = status(crawl.root()).unwrap();
    let text = s.to_string();
    assert_fits(&text);
    let dir = crawl.root().display();
    for want in [
        "progress   cycle 000001 running, at fetch: 1 of 2 partitions done, 1 running".into(),
        "           1 cycle complete (last 000000, finished ".into(),
        "URLs       7 seen, 12 fetched, 30 waiting in the frontier".into(),
        "fetch list cycle 000001: 5 of 5 URLs tried (100.0%); 1 of 2 partitions fetched".into(),
        format!("lock       pid {} on ", std::process::id()),
        " (cycle): running".into(),
        "answers    cycle 000001: 2xx 80.0%, no answer 20.0%".into(),
        "errors     20.0% of 5 results: robots 1".into(),
        "top hosts  cycle 000001, 4 pages (2 hosts):".into(),
        "                    3  a.example".into(),
        format!("next       dragnet status {dir} "),
        format!("# later: pid {} is at work on it", std::process::id()),
    ] {
        assert!(text.contains(&want), "{want:?} missing from\n{text}");
    }
    assert!(
        !text.contains("dragnet cycle"),
        "a cycle would exit 5:\n{text}"
    );
    assert!(!text.contains("FAILED"), "{text}");
}

/// A failed partition: the cycle failed, the partition named with its error, `dragnet cycle`
/// to retry it.
#[test]
fn summary_of_a_crawl_with_a_failed_partition() {
    let (_t, crawl) = fixture();
    let s = status(crawl.root()).unwrap();
    let text = s.to_string();
    assert_fits(&text);
    let dir = crawl.root().display();
    for want in [
        "progress   cycle 000001 FAILED, at fetch: 1 of 2 partitions done, 1 failed".into(),
        "failed     cycle 000001 fetch: p0001 FAILED at ".into(),
        " (exit 3):\n             corrupt file ".into(),
        "  corrupt file cycles/000001/fetchlist/p0001.run at byte offset 42: bad block".into(),
        format!("next       dragnet cycle {dir} "),
        "# retries the failed partitions".into(),
        format!("           dragnet status --verbose {dir} "),
    ] {
        assert!(text.contains(&want), "{want:?} missing from\n{text}");
    }
    // A damaged marker is shown, and `dragnet repair` comes first.
    let done = crawl.done_path(0, Stage::Parse, 1);
    let mut bytes = std::fs::read(&done).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x55;
    std::fs::write(&done, bytes).unwrap();
    let s = status(crawl.root()).unwrap();
    let text = s.to_string();
    assert_fits(&text);
    for want in [
        "damaged    1 damaged marker, first cycle 000000 parse: ".into(),
        format!("next       dragnet repair {dir} "),
        format!("           dragnet cycle {dir} "),
    ] {
        assert!(text.contains(&want), "{want:?} missing from\n{text}");
    }
}

/// A finished crawl says so, and what adds work.
#[test]
fn summary_of_a_finished_crawl() {
    let (_t, crawl) = finished_crawl();
    let s = status(crawl.root()).unwrap();
    let text = s.to_string();
    assert_fits(&text);
    let dir = crawl.root().display();
    for want in [
        "progress   the crawl is done: the fetch lists of cycle 000002 are empty".into(),
        "           2 cycles complete (last 000001, finished ".into(),
        "URLs       0 seen, 4 fetched, 0 waiting in the frontier".into(),
        "fetch list cycle 000000: 4 of 4 URLs tried (100.0%)\n".into(),
        format!("next       dragnet inject --seeds FILE {dir} "),
        "# more seeds to go on".into(),
    ] {
        assert!(text.contains(&want), "{want:?} missing from\n{text}");
    }
    assert!(!text.contains("dragnet cycle"), "{text}");
}

/// However large the crawl (many failures, long errors and host names, a Slurm submission, a
/// stale lock, damaged markers, big counts), the summary keeps to one screen.
#[test]
fn summary_fits_one_screen_at_any_size() {
    let (_t, crawl) = fixture();
    dead_lock(&crawl, 4_194_304 + 7);
    let mut s = status(crawl.root()).unwrap();
    s.partitions = 4096;
    s.seen = 12_345_678_901_234;
    s.name = "a very long crawl name ".repeat(10);
    let long = "x".repeat(300);
    let c1 = &mut s.cycles[1];
    let proto = c1.stages[0].failures[0].clone();
    for st in &mut c1.stages {
        for p in 0..500 {
            let mut fm = proto.clone();
            fm.stage = st.stage;
            fm.partition = p;
            fm.error = format!("error {p}: {long}\nsecond line");
            st.failures.push(fm);
            st.damaged.push(format!("damaged {p}: {long}"));
        }
        st.failed += 500;
    }
    s.failed += 2500;
    for k in ["timeout", "reset", "tls_expired", "dns", "too_big"] {
        s.fetch.errors.insert(k.into(), 1_000_000_000);
    }
    for class in ["1xx", "3xx", "5xx", "4xx"] {
        s.fetch.by_status.insert(class.into(), 123_456_789);
    }
    s.fetch.revisits = 99;
    s.fetch.urls = 6_000_000_000;
    let top = s.top_hosts.as_mut().unwrap();
    top.approximate = true;
    top.error_bound = 123_456_789;
    top.hosts = (0..10)
        .map(|i| HostCount {
            host: format!("{i}.{}.example", "h".repeat(250)),
            pages: 10_000_000_000,
        })
        .collect();
    s.slurm = Some(crate::crawl::submissions::LastSubmission {
        cycle: 1,
        time: "2026-01-01T00:00:00Z".into(),
        host: "login-node-with-a-long-name.cluster.example.org".into(),
        jobs: (0..6)
            .map(|i| ("fetch".into(), format!("{}", 99_000_000 + i)))
            .collect(),
    });
    let text = s.to_string();
    assert_fits(&text);
    for want in [
        "STALE",
        "takes it over",
        "... 2,499 more failed",
        "slurm      cycle 000001",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
}
