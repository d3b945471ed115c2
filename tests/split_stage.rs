//! `dragnet split`: links collapse per target with their cash summed, go to the partition that
//! owns their host, scope and trap rules and per-host budgets hold, and the CLOCK cache turns
//! a URL seen in an earlier cycle into a bare cash credit.

use crate::common;
use std::collections::BTreeMap;

use dragnet::config::Config;

use dragnet::crawl::{CrawlDir, DoneMarker, Stage};

use dragnet::keys::{self, partition_of};
use dragnet::ops::{self, InitOptions};
use dragnet::records::SplitRecord;
use dragnet::records::{LinkKind, LinkRecord};
use dragnet::run::{self, Cursor, RunReader, RunWriter, Schema};
use dragnet::split::split_partition;
use proptest::prelude::*;

const M: u32 = 4;

/// A crawl with M partitions and a configuration `tweak` changes.
fn crawl(tweak: impl FnOnce(&mut Config)) -> (tempfile::TempDir, CrawlDir, Config) {
    let t = tempfile::tempdir().unwrap();
    let mut cfg = Config::default();
    cfg.crawl.partitions = M;
    tweak(&mut cfg);
    let config = t.path().join("config.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let seeds = t.path().join("seeds");
    std::fs::write(&seeds, "http://seed.test/\n").unwrap();
    let root = t.path().join("crawl");
    ops::init(
        &root,
        &InitOptions {
            seeds,
            config: Some(config),
            partitions: None,
        },
        &mut |_| {},
    )
    .unwrap();
    let dir = CrawlDir::new(&root);
    let cfg = Config::load(&dir.config_path()).unwrap();
    (t, dir, cfg)
}

/// Writes `links` as partition p's links run of `cycle` and marks its parse done.
fn write_links(dir: &CrawlDir, cycle: u32, p: u32, links: &[LinkRecord]) {
    let mut keyed: Vec<([u8; 16], Vec<u8>)> = links
        .iter()
        .map(|l| {
            let host = url::Url::parse(&l.url)
                .unwrap()
                .host_str()
                .unwrap()
                .to_owned();
            (
                run::host_fp_key(keys::host_key(&host), keys::fingerprint(&l.url)),
                l.encode(),
            )
        })
        .collect();
    keyed.sort();
    let path = dir.links(cycle, p);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = RunWriter::create(&path, Schema::LINKS).unwrap();
    for (k, v) in &keyed {
        w.push(k, v).unwrap();
    }
    w.finish().unwrap();
    let done = dir.done_path(cycle, Stage::Parse, p);
    std::fs::create_dir_all(done.parent().unwrap()).unwrap();
    DoneMarker::new(Stage::Parse, cycle, p, std::time::SystemTime::now())
        .commit(&done, std::time::SystemTime::now())
        .unwrap();
}

/// Everything partition p's split routed in `cycle`, by owner, keyed by fingerprint.
fn routed(dir: &CrawlDir, cycle: u32, p: u32) -> BTreeMap<u32, Vec<(u64, SplitRecord)>> {
    let mut out = BTreeMap::new();
    let m = Config::load(&dir.config_path()).unwrap().crawl.partitions;
    for q in 0..m {
        // No run for an owner nothing was routed to.
        let path = dir.split_run(cycle, q, p);
        if !path.exists() {
            out.insert(q, Vec::new());
            continue;
        }
        let mut r = RunReader::open_expect(&path, Schema::SPLIT).unwrap();
        let mut v = Vec::new();
        while r.advance().unwrap() {
            v.push((
                run::key_u64(r.key()),
                SplitRecord::decode(r.payload()).unwrap(),
            ));
        }
        out.insert(q, v);
    }
    out
}

fn link(url: &str, cash: f64, depth: u32, nofollow: bool) -> LinkRecord {
    LinkRecord {
        url: url.to_owned(),
        source: "http://source.test/".into(),
        kind: LinkKind::A,
        nofollow,
        cash,
        depth,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The split's output equals a reference computed in memory: one record per followed
    /// target, cash summed, smallest depth, in-links counted, in its owner's file, sorted by
    /// fingerprint; a second cycle over the same links sends only cash credits.
    #[test]
    fn split_equals_an_in_memory_reference(
        raw in proptest::collection::vec((0u8..12, 0u16..40, 0u32..5, any::<bool>(), 0u8..4), 1..300)
    ) {
        let (_t, dir, cfg) = crawl(|_| {});
        let links: Vec<LinkRecord> = raw
            .iter()
            .map(|&(h, page, depth, nofollow, c)| {
                link(&format!("http://h{h}.test/p{page}"), f64::from(c) * 0.25, depth, nofollow)
            })
            .collect();
        write_links(&dir, 0, 1, &links);
        let r = split_partition(&dir, &cfg, 0, 1).unwrap();
        let mut want: BTreeMap<u64, (String, f64, u32, u32, bool)> = BTreeMap::new();
        for l in &links {
            let e = want
                .entry(keys::fingerprint(&l.url))
                .or_insert((l.url.clone(), 0.0, u32::MAX, 0, false));
            e.3 += 1;
            // A nofollow occurrence gives neither cash nor depth.
            if !l.nofollow {
                e.1 += l.cash;
                e.2 = e.2.min(l.depth);
                e.4 = true;
            }
        }
        let got = routed(&dir, 0, 1);
        let mut seen = 0;
        for (q, recs) in &got {
            prop_assert!(recs.windows(2).all(|w| w[0].0 < w[1].0), "sorted, unique");
            for (fp, rec) in recs {
                let (url, cash, depth, inlinks, followed) = &want[fp];
                prop_assert!(*followed);
                let host = url::Url::parse(url).unwrap().host_str().unwrap().to_owned();
                prop_assert_eq!(partition_of(keys::host_key(&host), M), *q);
                prop_assert_eq!(&rec.url, url);
                prop_assert!((rec.cash - cash).abs() < 1e-9);
                prop_assert_eq!(rec.depth, *depth);
                prop_assert_eq!(rec.inlinks, *inlinks);
                seen += 1;
            }
        }
        let followed = want.values().filter(|w| w.4).count();
        prop_assert_eq!(seen, followed);
        prop_assert_eq!(r.count("nofollow") as usize, want.len() - followed);

        // The next cycle: the same links hit the cache and become bare cash credits.
        write_links(&dir, 1, 1, &links);
        let r = split_partition(&dir, &cfg, 1, 1).unwrap();
        prop_assert_eq!(r.count("cache_hits") as usize, followed);
        prop_assert_eq!(r.count("cache_misses"), 0);
        for recs in routed(&dir, 1, 1).values() {
            for (fp, rec) in recs {
                prop_assert!(rec.url.is_empty(), "a credit carries no URL");
                prop_assert!(rec.cash > 0.0);
                prop_assert!((rec.cash - want[fp].1).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn scope_traps_and_host_budgets_are_enforced_and_counted() {
    let (_t, dir, cfg) = crawl(|c| {
        c.scope.allowed_domains = vec!["in.test".into()];
        c.scope.max_depth = 3;
        c.scope.max_new_urls_per_host = 5;
        c.scope.drop_patterns = vec!["/calendar/".into()];
    });
    let mut links = vec![
        link("http://out.test/a", 1.0, 1, false),
        link("http://www.in.test/deep", 1.0, 9, false),
        link("http://www.in.test/a/b/a/b/a/b/a/b", 1.0, 1, false),
        link("http://www.in.test/calendar/2026-11", 1.0, 1, false),
    ];
    for i in 0..20 {
        links.push(link(
            &format!("http://trap.in.test/page/{i}"),
            0.1,
            1,
            false,
        ));
    }
    write_links(&dir, 0, 0, &links);
    let r = split_partition(&dir, &cfg, 0, 0).unwrap();
    assert_eq!(r.count("out_of_domain"), 1, "{r:?}");
    assert_eq!(r.count("too_deep"), 1);
    assert_eq!(r.count("trap_repeat"), 1);
    assert_eq!(r.count("dropped_pattern"), 1);
    assert_eq!(r.count("over_host_budget"), 15);
    assert_eq!(r.count("routed"), 5);
    // A URL refused for the budget was not cached: next cycle it may still come with its URL.
    write_links(&dir, 1, 0, &links);
    let r = split_partition(&dir, &cfg, 1, 0).unwrap();
    assert_eq!(r.count("cache_hits"), 5);
    assert_eq!(r.count("routed"), 5, "{r:?}");
    let urls: usize = routed(&dir, 1, 0)
        .values()
        .flatten()
        .filter(|(_, s)| !s.url.is_empty())
        .count();
    assert_eq!(urls, 5);
    // Re-running a done stage does nothing.
    assert!(split_partition(&dir, &cfg, 1, 0).unwrap().skipped);
}

#[test]
fn split_needs_the_parse_and_names_it() {
    let (_t, dir, cfg) = crawl(|_| {});
    let e = split_partition(&dir, &cfg, 0, 2).unwrap_err().to_string();
    assert!(e.contains("dragnet parse --cycle 0 --partition 2"), "{e}");
}

/// websim's trap host (an endless calendar) through fetch, parse and split for a few cycles'
/// worth of its pages: its new URLs per cycle never exceed the host budget, and no URL past the
/// depth limit is routed.
#[test]
fn websim_trap_host_is_bounded_by_budget_and_depth() {
    use dragnet::fetch::{fetch_partition, FetchOptions, ProgressMode};
    use websim::model::{Hostile, PageRef, WebConfig};
    let (web, server) = websim::server::Server::start_web(
        WebConfig {
            seed: 4,
            port: 0,
            listeners: 1,
            hosts: 2,
            pages: 5,
            hostile_every: 1,
            ..WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap();
    let trap = web
        .hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::Trap))
        .expect("a trap host");
    let home = web.url(PageRef::Page {
        host: trap.index,
        page: 0,
    });
    let t = tempfile::tempdir().unwrap();
    let hosts = t.path().join("hosts");
    std::fs::write(&hosts, websim::cli::hosts_file(&web)).unwrap();
    let (_t2, dir, _) = crawl(|c| {
        c.crawl.partitions = 1;
        c.resolve.hosts_files = vec![hosts.clone()];
        common::patient_loopback_fetch(&mut c.fetch);
        c.scope.max_new_urls_per_host = 3;
        c.scope.max_depth = 1;
    });
    // `crawl()` seeded seed.test; seed the trap's entry page instead.
    let cfg = Config::load(&dir.config_path()).unwrap();
    let fl = dir.fetchlist(0, 0);
    let mut w = RunWriter::create(&fl, Schema::FETCHLIST).unwrap();
    let host = url::Url::parse(&home)
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned();
    let item = dragnet::records::FetchItem {
        url: home.clone(),
        depth: 0,
        priority: 1.0,
        ..Default::default()
    };
    w.push(
        &run::host_fp_key(keys::host_key(&host), keys::fingerprint(&home)),
        &item.encode(),
    )
    .unwrap();
    w.finish().unwrap();
    let quiet = FetchOptions {
        progress: ProgressMode::Quiet,
        ..FetchOptions::default()
    };
    fetch_partition(&dir, &cfg, 0, 0, &quiet).unwrap();
    let parsed = dragnet::parse::parse_partition(&dir, &cfg, 0, 0).unwrap();
    assert!(
        parsed.count("links") > 3,
        "the trap page links onwards: {parsed:?}"
    );
    let r = split_partition(&dir, &cfg, 0, 0).unwrap();
    server.stop();
    let trap_routed: Vec<SplitRecord> = routed(&dir, 0, 0)
        .into_values()
        .flatten()
        .map(|(_, s)| s)
        .filter(|s| s.url.contains(&host))
        .collect();
    assert!(
        trap_routed.len() <= 3,
        "{} trap URLs routed",
        trap_routed.len()
    );
    assert!(trap_routed.iter().all(|s| s.depth <= 1));
    assert!(r.count("over_host_budget") > 0, "{r:?}");
}
