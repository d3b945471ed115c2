//! The prioritize stage over a websim crawl: the fetch list is the top of the frontier within the
//! budget and the per-host cap, stale entries never reach it, a re-run after a kill between the
//! queue's commit and the marker changes nothing, and due recrawls come back with validators.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use dragnet::config::Config;

use dragnet::config::prioritize::QueueKind;
use dragnet::crawl::CrawlDir;
use dragnet::fetch::ProgressMode;
use dragnet::keys::{host_key, host_of};
use dragnet::prioritize::prioritize_partition;
use dragnet::queue::Entry;
use dragnet::records::FrontierUpdate;
use dragnet::records::{FetchItem, UrlRecord, UrlState};
use dragnet::run::{self, Cursor, RunReader, Schema};
use websim::model::WebConfig;
use websim::server::{Server, ServerOptions};

const M: u32 = 2;

fn read_all<T>(
    path: &std::path::Path,
    schema: Schema,
    f: impl Fn(&[u8]) -> T,
) -> Vec<(Vec<u8>, T)> {
    let mut r = RunReader::open_expect(path, schema).unwrap();
    let mut v = Vec::new();
    while r.advance().unwrap() {
        v.push((r.key().to_vec(), f(r.payload())));
    }
    v
}

fn fetchlist(dir: &CrawlDir, cycle: u32, p: u32) -> Vec<(u64, u64, FetchItem)> {
    read_all(&dir.fetchlist(cycle, p), Schema::FETCHLIST, |b| {
        FetchItem::decode(b).unwrap()
    })
    .into_iter()
    .map(|(k, item)| (run::key_u64(&k[..8]), run::key_u64(&k[8..]), item))
    .collect()
}

fn urldb(dir: &CrawlDir, cycle: u32, p: u32) -> BTreeMap<u64, UrlRecord> {
    read_all(&dir.state_file(p, "urldb", cycle), Schema::URLDB, |b| {
        UrlRecord::decode(b).unwrap()
    })
    .into_iter()
    .map(|(k, r)| (run::key_u64(&k), r))
    .collect()
}

fn crawl(queue: QueueKind, tune: impl Fn(&mut Config)) -> (common::Crawl, Server) {
    let (web, server) = Server::start_web(
        WebConfig {
            seed: 31,
            port: 0,
            listeners: 2,
            hosts: 6,
            pages: 40,
            hostile_every: 0,
            max_crawl_delay: Duration::from_millis(50),
            ..WebConfig::default()
        },
        ServerOptions::default(),
    )
    .unwrap();
    let mut cfg = common::websim_config(M, 4);
    cfg.prioritize.queue = queue;
    cfg.prioritize.block = 7; // several extraction steps even on a small web
    tune(&mut cfg);
    (
        common::websim_crawl(&web, &common::websim_homes(&web), cfg),
        server,
    )
}

fn budget_and_cap(queue: QueueKind) {
    let (c, server) = crawl(queue, |cfg| {
        cfg.prioritize.fetch_budget = 10;
        cfg.prioritize.max_urls_per_host = 2;
    });
    let (dir, cfg) = (&c.dir, &c.cfg);
    common::stages_until_merge(dir, cfg, 0);
    for p in 0..M {
        let r = prioritize_partition(dir, cfg, 0, p).unwrap();
        // The reference: every update of cycle 0 is a new URL with one entry; take them in
        // priority order, at most 2 per host, at most 10.
        let updates = read_all(&dir.new_urls(0, p), Schema::NEW, |b| {
            FrontierUpdate::decode(b).unwrap()
        });
        let mut entries: Vec<(Entry, String)> = updates
            .iter()
            .map(|(k, u)| {
                let fp = run::key_u64(k);
                let e = Entry::new(Entry::key_for_score(u.score), fp, host_key(host_of(&u.url)));
                (e, u.url.clone())
            })
            .collect();
        entries.sort();
        // Small enough that the stage's scan bound (16 x budget entries) does not cut it short.
        assert!(entries.len() < 16 * 10, "{} updates", entries.len());
        let mut per_host: HashMap<u64, u32> = HashMap::new();
        let mut want = BTreeSet::new();
        for (e, _) in &entries {
            let n = per_host.entry(e.host).or_default();
            if want.len() < 10 && *n < 2 {
                *n += 1;
                want.insert(e.fp);
            }
        }
        let list = fetchlist(dir, 1, p);
        let got: BTreeSet<u64> = list.iter().map(|(_, fp, _)| *fp).collect();
        assert_eq!(got, want, "partition {p}");
        assert_eq!(got.len(), list.len(), "no URL twice");
        for (h, _, item) in &list {
            assert_eq!(*h, host_key(host_of(&item.url)));
        }
        assert_eq!(
            r.counts["frontier"],
            updates.len() as u64 - list.len() as u64
        );
        assert_eq!(r.counts["selected"], list.len() as u64);

        // A kill after the queue's commit and before the marker: the re-run writes only the
        // marker, and the fetch list keeps its bytes.
        let bytes = std::fs::read(dir.fetchlist(1, p)).unwrap();
        std::fs::remove_file(dir.done_path(0, dragnet::crawl::Stage::Prioritize, p)).unwrap();
        let again = prioritize_partition(dir, cfg, 0, p).unwrap();
        assert_eq!(again.counts.get("resumed"), Some(&1));
        assert_eq!(again.counts["frontier"], r.counts["frontier"]);
        assert_eq!(std::fs::read(dir.fetchlist(1, p)).unwrap(), bytes);
    }

    // The next cycle: what the merge re-emits makes older entries stale; none may be selected.
    common::stages_until_merge(dir, cfg, 1);
    let mut stale = 0;
    for p in 0..M {
        let r = prioritize_partition(dir, cfg, 1, p).unwrap();
        stale += r.counts.get("stale").copied().unwrap_or(0);
        let db = urldb(dir, 2, p);
        for (_, fp, item) in fetchlist(dir, 2, p) {
            let rec = &db[&fp];
            assert!(
                matches!(rec.state, UrlState::Unfetched | UrlState::Retry),
                "{} is {:?}",
                item.url,
                rec.state
            );
        }
    }
    // Not a hard law of the web, but this one has links to the same pages from several pages.
    eprintln!("stale entries dropped: {stale}");
    assert_eq!(server.stop().counts.total(), 0);
}

#[test]
fn quickheap_frontier_honours_budget_cap_and_staleness() {
    budget_and_cap(QueueKind::Quickheap);
}

#[test]
fn cbt_frontier_honours_budget_cap_and_staleness() {
    budget_and_cap(QueueKind::Cbt);
}

#[test]
fn the_reserve_follows_the_list_within_the_host_cap_and_is_not_charged_to_the_budget() {
    let (c, server) = crawl(QueueKind::Quickheap, |cfg| {
        cfg.prioritize.fetch_budget = 3;
        cfg.prioritize.max_urls_per_host = 4;
        cfg.prioritize.reserve_factor = 1.0;
        // Cycle 0 fetches the seeds only, so every partition's frontier holds more than the
        // budget and the reserve (in-run following would fetch most of this small web, and
        // settle the links robots.txt refuses, in cycle 0).
        cfg.fetch.follow_per_host = 0;
    });
    let (dir, cfg) = (&c.dir, &c.cfg);
    common::stages_until_merge(dir, cfg, 0);
    let mut reserved = 0;
    for p in 0..M {
        let r = prioritize_partition(dir, cfg, 0, p).unwrap();
        // The reference: in priority order, at most 4 per host counting list and reserve, the
        // first 3 listed, the next 3 the reserve.
        let updates = read_all(&dir.new_urls(0, p), Schema::NEW, |b| {
            FrontierUpdate::decode(b).unwrap()
        });
        let mut entries: Vec<Entry> = updates
            .iter()
            .map(|(k, u)| {
                let fp = run::key_u64(k);
                Entry::new(Entry::key_for_score(u.score), fp, host_key(host_of(&u.url)))
            })
            .collect();
        entries.sort();
        let mut per_host: HashMap<u64, u32> = HashMap::new();
        let (mut listed, mut reserve) = (BTreeSet::new(), BTreeSet::new());
        for e in &entries {
            let n = per_host.entry(e.host).or_default();
            if *n < 4 && reserve.len() < 3 {
                *n += 1;
                match listed.len() < 3 {
                    true => listed.insert(e.fp),
                    false => reserve.insert(e.fp),
                };
            }
        }
        reserved += reserve.len();
        let list = fetchlist(dir, 1, p);
        let got = |flag: bool| -> BTreeSet<u64> {
            list.iter()
                .filter(|(_, _, i)| i.reserve == flag)
                .map(|(_, fp, _)| *fp)
                .collect()
        };
        assert_eq!(got(false), listed, "partition {p}");
        assert_eq!(got(true), reserve, "partition {p}");
        assert_eq!(r.counts["selected"], 3);
        let counted = r.counts.get("reserve").copied().unwrap_or(0);
        assert_eq!(counted, reserve.len() as u64);
        // The lifetime budget is charged the listed URLs only: the fetch charges the reserve
        // URLs it tries.
        let spent: u64 = read_all(
            &dir.state_file(p, "host_budget", 1),
            Schema::HOST_BUDGET,
            |b| u64::from_le_bytes(b.try_into().unwrap()),
        )
        .iter()
        .map(|(_, n)| n)
        .sum();
        assert_eq!(spent, 3, "partition {p}");
    }
    assert!(reserved > 0, "the web has URLs beyond the budget");
    // A domain budget turns the reserve off.
    let mut with_domains = cfg.clone();
    with_domains.prioritize.max_urls_per_domain_total = 1000;
    assert_eq!(with_domains.prioritize.reserve(), 0);
    assert_eq!(cfg.prioritize.reserve(), 3);
    assert_eq!(server.stop().counts.total(), 0);
}

#[test]
fn due_recrawls_come_back_with_validators() {
    let (c, server) = crawl(QueueKind::Quickheap, |cfg| {
        cfg.prioritize.recrawl_after_secs = 0;
        cfg.prioritize.recrawl_min_secs = 0;
    });
    let (dir, cfg) = (&c.dir, &c.cfg);
    common::stages_until_merge(dir, cfg, 0);
    for p in 0..M {
        prioritize_partition(dir, cfg, 0, p).unwrap();
    }
    // Cycle 1's merge runs on a clock (its fetch's start) later than every cycle-0 fetch.
    std::thread::sleep(Duration::from_millis(1100));
    common::stages_until_merge(dir, cfg, 1);
    let mut recrawls = 0;
    let mut with_validators = 0;
    for p in 0..M {
        let r = prioritize_partition(dir, cfg, 1, p).unwrap();
        let db = urldb(dir, 2, p);
        for (_, fp, item) in fetchlist(dir, 2, p) {
            let rec = &db[&fp];
            if rec.fetches > 0 && rec.state != UrlState::Retry {
                recrawls += 1;
                assert_ne!(rec.recrawl_queued, 0, "{}", item.url);
                if !item.etag.is_empty() || !item.last_modified.is_empty() {
                    with_validators += 1;
                }
            }
        }
        assert_eq!(
            r.counts.get("selected_recrawl").copied().unwrap_or(0),
            fetchlist(dir, 2, p)
                .iter()
                .filter(|(_, fp, _)| db[fp].fetches > 0 && db[fp].state != UrlState::Retry)
                .count() as u64
        );
    }
    assert!(recrawls > 0, "no recrawl was scheduled");
    assert!(
        with_validators > 0,
        "recrawls carry the validators of their last fetch"
    );
    assert_eq!(server.stop().counts.total(), 0);
}

#[test]
fn the_lifetime_host_budget_holds_across_cycles() {
    let (c, server) = crawl(QueueKind::Cbt, |cfg| {
        cfg.prioritize.max_urls_per_host_total = 5;
    });
    let (dir, cfg) = (&c.dir, &c.cfg);
    let opts = dragnet::exec::CycleOptions {
        until_empty: true,
        max_cycles: 20,
        progress: ProgressMode::Quiet,
        log: false,
        ..Default::default()
    };
    let r = dragnet::exec::run_cycles(dir, cfg, &opts).unwrap();
    assert!(r.complete() && r.stopped.contains("empty"), "{}", r.stopped);
    let last = dragnet::crawl::next_cycle(dir, M);
    let mut per_host: HashMap<u64, u64> = HashMap::new();
    let mut spent = 0;
    for cycle in 1..=last {
        for p in 0..M {
            for (h, _, _) in fetchlist(dir, cycle, p) {
                *per_host.entry(h).or_default() += 1;
            }
            let done = dragnet::crawl::DoneMarker::read(&dir.done_path(
                cycle - 1,
                dragnet::crawl::Stage::Prioritize,
                p,
            ))
            .unwrap()
            .unwrap();
            spent += done.counts.get("host_budget_spent").copied().unwrap_or(0);
            // The marker names every state file the budget was computed from.
            let read: Vec<&str> = done.inputs.iter().map(|i| i.path.as_str()).collect();
            assert!(
                read.iter().any(|p| p.contains("hosts.")),
                "cycle {}: {read:?}",
                cycle - 1
            );
            if cycle > 1 {
                assert!(read.iter().any(|p| p.contains("host_budget.")), "{read:?}");
            }
        }
    }
    // Cycle 0's fetch list (the seeds) counts for nobody: init wrote it.
    assert!(per_host.values().all(|&n| n <= 5), "{per_host:?}");
    assert!(spent > 0, "a 40-page host must hit a 5-URL budget");
    assert_eq!(server.stop().counts.total(), 0);
}

#[test]
fn a_frontier_restored_from_an_older_copy_is_named_not_sent_to_a_prioritize_that_ran() {
    let (c, server) = crawl(QueueKind::Quickheap, |cfg| cfg.fetch.follow_per_host = 0);
    let frontier = c.dir.state_dir(0).join("frontier");
    let old = c.tmp.path().join("frontier-after-cycle-0");
    for cycle in 0..2 {
        common::stages_until_merge(&c.dir, &c.cfg, cycle);
        for p in 0..M {
            prioritize_partition(&c.dir, &c.cfg, cycle, p).unwrap();
        }
        if cycle == 0 {
            common::copy_dir(&frontier, &old);
        }
    }
    common::stages_until_merge(&c.dir, &c.cfg, 2);
    server.stop();
    // Partition 0's frontier put back as it was after cycle 0: it has applied cycle 0 only,
    // and cycle 1's prioritize, which would bring it forward, ran already.
    std::fs::remove_dir_all(&frontier).unwrap();
    common::copy_dir(&old, &frontier);
    let e = prioritize_partition(&c.dir, &c.cfg, 2, 0).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.exit_code(), dragnet::error::EXIT_IO, "{msg}");
    assert!(
        msg.contains("frontier")
            && msg.contains("older copy")
            && !msg.contains("dragnet prioritize --cycle"),
        "{msg}"
    );
}
