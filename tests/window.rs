//! The cycle as a window (issue 31, point 3; `src/fetch/window.rs`): while one partition's own
//! work is unfinished (here a host with `Crawl-delay: 1`), another partition whose hosts have
//! more links than `[fetch] follow_per_host` goes on following them instead of idling until the
//! cycle ends, politely, and the crawl still fetches each page once. Without in-run following,
//! the partition fetches its reserve (`[prioritize] reserve_factor`: frontier URLs listed beyond
//! the fetch budget) instead; with the window off, the reserve goes back to the frontier
//! unfetched and nothing is lost.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use dragnet::config::Config;
use websim::site::{Request, Response, Site};

/// `slow.websim.test`: [`SLOW_PAGES`] pages with `Crawl-delay: 1`, a chain (each page links the
/// next: the cycle's politeness bound is about that many seconds) or, with a fan-out, a tree;
/// `big.websim.test`: a tree of [`BIG_PAGES`] pages, 8 links a page, no delay.
struct TwoHosts {
    /// Links a slow page has (1: the chain).
    slow_fanout: u32,
}

const SLOW_PAGES: u32 = 5;
const BIG_PAGES: u32 = 120;
/// `[fetch] follow_per_host` in these crawls: far fewer than the big host's pages.
const CAP: u32 = 10;

impl Site for TwoHosts {
    fn respond(&self, req: &Request) -> Response {
        let slow = req.host.starts_with("slow.");
        if req.target == "/robots.txt" {
            let rules = if slow {
                "User-agent: *\nCrawl-delay: 1\n"
            } else {
                "User-agent: *\nDisallow:\n"
            };
            return Response::new(200, "text/plain", rules.as_bytes().to_vec());
        }
        let n: u32 = match req.target.as_str() {
            "/" => 0,
            t => match t.strip_prefix("/p/").and_then(|n| n.parse().ok()) {
                Some(n) => n,
                None => return Response::new(404, "text/html", b"no".to_vec()),
            },
        };
        let (pages, kids): (u32, Vec<u32>) = if slow {
            let f = self.slow_fanout;
            (SLOW_PAGES.max(f + 1), (n * f + 1..=n * f + f).collect())
        } else {
            (BIG_PAGES, (n * 8 + 1..=n * 8 + 8).collect())
        };
        if n >= pages {
            return Response::new(404, "text/html", b"no".to_vec());
        }
        let links: String = kids
            .into_iter()
            .filter(|&k| k < pages)
            .map(|k| format!("<a href=\"/p/{k}\">page {k}</a>\n"))
            .collect();
        let body = format!("<!doctype html><title>{} {n}</title>\n{links}", req.host);
        Response::new(200, "text/html", body.into_bytes())
    }

    fn min_delay(&self, host: &str) -> Duration {
        if host.starts_with("slow.") {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        }
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}

/// Crawls the two hosts to the end with `tune`'s configuration, both partitions fetching at
/// once (the window never opens while one waits to start), and checks the audit; returns the
/// crawl and its cycles.
fn crawl_two_hosts(tune: impl Fn(&mut Config)) -> (common::Crawl, usize) {
    let (server, port) = common::serve_site(Arc::new(TwoHosts { slow_fanout: 1 }));
    let names = ["slow.websim.test".to_owned(), "big.websim.test".to_owned()];
    let tmp = tempfile::tempdir().unwrap();
    let hosts = common::loopback_hosts(tmp.path(), &names);
    let mut cfg = common::websim_config(2, 4);
    cfg.resolve.hosts_files = vec![hosts];
    cfg.cycle.fetch_partitions = 2;
    tune(&mut cfg);
    let seeds: Vec<String> = names
        .iter()
        .map(|n| format!("http://{n}:{port}/"))
        .collect();
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(40)).unwrap();
    assert!(r.complete(), "{r:?}");
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "{:?}", audit.violations);
    (c, r.cycles.len())
}

/// Every URL fetched over a crawl of `cycles` cycles, with how many times.
fn fetched_urls(c: &common::Crawl, cycles: usize) -> Vec<(String, usize)> {
    let mut times = std::collections::BTreeMap::<String, usize>::new();
    for f in common::fetch_results(&c.dir, 2, cycles as u32 + 1) {
        if f.status > 0 {
            *times.entry(f.url).or_default() += 1;
        }
    }
    times.into_iter().collect()
}

/// Asserts that `times` has each page of both sites once.
fn each_page_once(times: &[(String, usize)], what: &str) {
    let twice: Vec<&(String, usize)> = times.iter().filter(|(_, n)| *n > 1).collect();
    assert!(twice.is_empty(), "{what}: fetched twice: {twice:?}");
    let every: BTreeSet<String> = (0..BIG_PAGES)
        .map(|n| match n {
            0 => "/".to_owned(),
            n => format!("/p/{n}"),
        })
        .collect();
    let big: BTreeSet<String> = times
        .iter()
        .filter(|(u, _)| u.contains("big."))
        .map(|(u, _)| u[u.find("/p/").or_else(|| u.rfind('/')).unwrap()..].to_owned())
        .collect();
    assert_eq!(big, every, "{what}");
    let slow = times.iter().filter(|(u, _)| u.contains("slow.")).count();
    assert_eq!(slow, SLOW_PAGES as usize, "{what}");
}

/// The fetch markers' count `name` summed over the partitions, per cycle.
fn per_cycle(c: &common::Crawl, cycles: usize, name: &str) -> Vec<u64> {
    (0..cycles as u32)
        .map(|cycle| {
            (0..2)
                .filter_map(|p| {
                    let path = c.dir.done_path(cycle, dragnet::crawl::Stage::Fetch, p);
                    dragnet::crawl::DoneMarker::read(&path).unwrap()
                })
                .map(|m| m.counts.get(name).copied().unwrap_or(0))
                .sum()
        })
        .collect()
}

/// Crawls the two hosts to the end (`[cycle] window` = `window`); returns the big host's pages
/// fetched in cycle 0, the crawl's cycles, the cycle-0 fetch markers' `followed_in_window`, and
/// every URL fetched over the crawl with how many times.
fn crawl(window: bool) -> (usize, usize, u64, Vec<(String, usize)>) {
    let (c, cycles) = crawl_two_hosts(|cfg| {
        cfg.fetch.follow_per_host = CAP;
        cfg.cycle.window = window;
    });

    let cycle0 = common::fetch_results(&c.dir, 2, 1);
    let big0 = cycle0
        .iter()
        .filter(|f| f.status == 200 && f.url.contains("big."))
        .count();
    let in_window = per_cycle(&c, 1, "followed_in_window")[0];
    (big0, cycles, in_window, fetched_urls(&c, cycles))
}

#[test]
fn a_partition_keeps_following_beyond_its_cap_while_a_slow_host_holds_the_cycle() {
    for window in [true, false] {
        let (big0, cycles, in_window, times) = crawl(window);
        // Each page once, the whole of both sites, whichever way.
        each_page_once(&times, &format!("window {window}"));
        if window {
            // The slow host's chain holds the cycle for about SLOW_PAGES seconds; the big host's
            // partition followed past its cap meanwhile: its whole site in cycle 0.
            assert_eq!(big0, BIG_PAGES as usize, "cycle 0 fetched {big0} big pages");
            assert!(in_window > 0);
        } else {
            // Without the window: the seed and CAP followed links in cycle 0, the rest later.
            assert_eq!(big0, 1 + CAP as usize, "window off");
            assert_eq!(in_window, 0);
            assert!(cycles > 1);
        }
    }
}

/// A fetch budget far below the big site, no in-run following: the reserve is what the big
/// host's partition fetches while the slow host holds each cycle.
const BUDGET: u64 = 8;

#[test]
fn a_partition_fetches_its_reserve_while_a_slow_host_holds_the_cycle_and_returns_the_rest() {
    let mut runs = Vec::new();
    for window in [true, false] {
        let (c, cycles) = crawl_two_hosts(|cfg| {
            cfg.fetch.follow_per_host = 0;
            cfg.prioritize.fetch_budget = BUDGET;
            cfg.prioritize.reserve_factor = 4.0;
            cfg.cycle.window = window;
        });
        let what = format!("window {window}");
        // Each page once and the whole of both sites: reserve URLs not fetched went back to
        // the frontier and came out again.
        each_page_once(&fetched_urls(&c, cycles), &what);
        let reserve: u64 = per_cycle(&c, cycles, "reserve").iter().sum();
        let tried = per_cycle(&c, cycles, "reserve_tried");
        assert!(
            reserve > 0,
            "{what}: the big host's frontier outgrows the budget"
        );
        // The prioritize markers count the reserve they listed as the fetch markers do.
        let listed: u64 = (0..cycles as u32 - 1)
            .flat_map(|cycle| (0..2).map(move |p| (cycle, p)))
            .filter_map(|(cycle, p)| {
                let path = c.dir.done_path(cycle, dragnet::crawl::Stage::Prioritize, p);
                dragnet::crawl::DoneMarker::read(&path).unwrap()
            })
            .map(|m| m.counts.get("reserve").copied().unwrap_or(0))
            .sum();
        assert_eq!(listed, reserve, "{what}");
        eprintln!("{what}: {cycles} cycles, reserve {reserve}, tried by cycle {tried:?}");
        if window {
            // A cycle in which the big host's partition fetched beyond its budget.
            assert!(tried.iter().any(|&n| n > 0), "{what}: {tried:?}");
        } else {
            assert!(tried.iter().all(|&n| n == 0), "{what}: {tried:?}");
        }
        runs.push(cycles);
    }
    // The reserve fetched in the window leaves fewer cycles for the big site's tail.
    assert!(
        runs[0] < runs[1],
        "cycles with and without the window: {runs:?}"
    );
}

/// A fetch run alone (`dragnet fetch`, a Slurm task) cannot see the other partitions: its
/// window is the largest politeness bound of the cycle's fetch lists, from the prioritize
/// markers. The big host's partition, fetched alone, takes its reserve within the bound the
/// slow host's list sets (4 URLs a second apart); any reserve URL it did not try is deferred.
#[test]
fn a_fetch_run_alone_takes_its_reserve_within_the_fetch_lists_politeness_bound() {
    const FANOUT: u32 = 8;
    const BUDGET: u64 = 4;
    let (server, port) = common::serve_site(Arc::new(TwoHosts {
        slow_fanout: FANOUT,
    }));
    // A host's partition depends on its port too: a big host's name that lands in the other
    // partition than the slow host's (the site answers any name but `slow.*` as the big one).
    let part = |name: &str| {
        let url = format!("http://{name}:{port}/");
        dragnet::keys::partition_of(dragnet::keys::host_key(dragnet::keys::host_of(&url)), 2)
    };
    let slow_name = "slow.websim.test".to_owned();
    let big_name = (0..64)
        .map(|i| format!("big{i}.websim.test"))
        .find(|n| part(n) != part(&slow_name))
        .expect("one of 64 names hashes to the other partition");
    let (slow, big) = (part(&slow_name), part(&big_name));
    let names = [slow_name, big_name];
    let tmp = tempfile::tempdir().unwrap();
    let hosts = common::loopback_hosts(tmp.path(), &names);
    let mut cfg = common::websim_config(2, 4);
    cfg.resolve.hosts_files = vec![hosts];
    cfg.fetch.follow_per_host = 0;
    cfg.prioritize.fetch_budget = BUDGET;
    cfg.prioritize.reserve_factor = 4.0;
    let seeds: Vec<String> = names
        .iter()
        .map(|n| format!("http://{n}:{port}/"))
        .collect();
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let (dir, cfg) = (&c.dir, &c.cfg);

    // Cycle 0 stage by stage, as Slurm tasks run it, then both prioritizes.
    common::stages_until_merge(dir, cfg, 0);
    for p in 0..2 {
        dragnet::prioritize::prioritize_partition(dir, cfg, 0, p).unwrap();
    }
    let marker = |stage, p| {
        dragnet::crawl::DoneMarker::read(&dir.done_path(0, stage, p))
            .unwrap()
            .unwrap()
    };
    let bound = marker(dragnet::crawl::Stage::Prioritize, slow).counts["politeness_bound_ms"];
    assert!(bound >= BUDGET * 1000, "bound {bound} ms");
    let listed = marker(dragnet::crawl::Stage::Prioritize, big).counts["reserve"];
    assert!(listed > 0, "the big host's frontier outgrows the budget");

    // The big host's partition alone: no shared window, the lists' bound instead.
    let quiet = dragnet::fetch::FetchOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        ..dragnet::fetch::FetchOptions::default()
    };
    let r = dragnet::fetch::fetch_partition(dir, cfg, 1, big, &quiet).unwrap();
    let get = |k: &str| r.count(k);
    assert_eq!(get("reserve"), listed);
    assert!(get("reserve_tried") > 0, "{:?}", r.counts);
    // Every URL of the list has a result: the reserve's untried ones deferred.
    assert_eq!(get("results"), get("urls"));
    let deferred = get("error_deferred");
    assert_eq!(deferred, listed - get("reserve_tried"), "{:?}", r.counts);
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "{:?}", audit.violations);
}
