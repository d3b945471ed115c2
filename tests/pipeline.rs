//! Two cycles of fetch -> parse -> split -> dedup-merge -> prioritize over a websim web, every
//! partition, stage by stage: every followed link of a fetched page becomes known, the next fetch
//! list holds every new URL, no URL is new twice, and websim's audit stays clean.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use dragnet::crawl::CrawlDir;
use dragnet::keys::{partition_of, Canonicalizer};
use dragnet::prioritize::prioritize_partition;
use dragnet::records::FetchItem;
use dragnet::records::FrontierUpdate;
use dragnet::run::{self, Cursor, RunReader, Schema};
use websim::model::WebConfig;
use websim::server::{Server, ServerOptions};
use websim::truth::{truth, Outcome, Policy};

const M: u32 = 3;

fn keys_of(path: &std::path::Path, schema: Schema) -> BTreeSet<u64> {
    let mut r = RunReader::open_expect(path, schema).unwrap();
    let mut s = BTreeSet::new();
    while r.advance().unwrap() {
        s.insert(run::key_u64(r.key()));
    }
    s
}

fn updates(dir: &CrawlDir, cycle: u32, p: u32) -> BTreeMap<u64, FrontierUpdate> {
    let mut r = RunReader::open_expect(&dir.new_urls(cycle, p), Schema::NEW).unwrap();
    let mut m = BTreeMap::new();
    while r.advance().unwrap() {
        m.insert(
            run::key_u64(r.key()),
            FrontierUpdate::decode(r.payload()).unwrap(),
        );
    }
    m
}

#[test]
fn two_cycles_discover_every_followed_link_once() {
    let (web, server) = Server::start_web(
        WebConfig {
            seed: 12,
            port: 0,
            listeners: 2,
            hosts: 8,
            pages: 10,
            hostile_every: 0,
            max_crawl_delay: Duration::from_millis(100),
            ..WebConfig::default()
        },
        ServerOptions::default(),
    )
    .unwrap();
    let cfg = common::websim_config(M, 4);
    let homes = common::websim_homes(&web);
    let crawl = common::websim_crawl(&web, &homes, cfg);
    let (dir, cfg) = (crawl.dir.clone(), crawl.cfg.clone());
    let canon = Canonicalizer::new(&cfg.canon);
    let c = |u: &str| canon.canonicalize(u, None).unwrap();

    common::stages_until_merge(&dir, &cfg, 0);

    // Every followed link of every fetched home page is known now, in its owner's seen set.
    let t0 = truth(&web, &Policy::new(&web));
    let known: Vec<BTreeSet<u64>> = (0..M)
        .map(|p| keys_of(&dir.state_file(p, "seen", 1), Schema::SEEN))
        .collect();
    let homes_set: BTreeSet<String> = homes.iter().map(|h| c(h).url).collect();
    let mut expected = 0;
    for page in t0
        .pages
        .iter()
        .filter(|pg| homes_set.contains(&c(&pg.url).url))
    {
        if page.meta_nofollow || page.header_nofollow {
            continue;
        }
        for l in page.links.iter().filter(|l| l.followed && !l.nofollow) {
            let k = c(&l.url);
            if l.url.contains(".outside.test") {
                continue; // another web: out of scope
            }
            let owner = partition_of(k.host_key, M) as usize;
            assert!(
                known[owner].contains(&k.fingerprint),
                "{} not known to its owner, partition {owner}",
                l.url
            );
            expected += 1;
        }
    }
    assert!(expected > 20, "{expected} links checked");

    // Prioritize writes the next fetch list: with the default budget, every new URL.
    let mut new0: BTreeSet<u64> = BTreeSet::new();
    for p in 0..M {
        let mut want = BTreeSet::new();
        for (fp, u) in updates(&dir, 0, p) {
            assert!(u.new, "only new URLs after cycle 0: {}", u.url);
            new0.insert(fp);
            want.insert((c(&u.url).host_key, fp));
        }
        prioritize_partition(&dir, &cfg, 0, p).unwrap();
        let mut r = RunReader::open_expect(&dir.fetchlist(1, p), Schema::FETCHLIST).unwrap();
        let mut got = BTreeSet::new();
        while r.advance().unwrap() {
            let item = FetchItem::decode(r.payload()).unwrap();
            let (h, fp) = (run::key_u64(&r.key()[..8]), run::key_u64(&r.key()[8..]));
            assert_eq!(c(&item.url).fingerprint, fp);
            got.insert((h, fp));
        }
        assert_eq!(got, want, "partition {p}");
    }
    assert!(!new0.is_empty());

    common::stages_until_merge(&dir, &cfg, 1);
    for p in 0..M {
        for (fp, u) in updates(&dir, 1, p) {
            if u.new {
                assert!(!new0.contains(&fp), "{} was new twice", u.url);
            }
        }
        let before = keys_of(&dir.state_file(p, "seen", 1), Schema::SEEN);
        let after = keys_of(&dir.state_file(p, "seen", 2), Schema::SEEN);
        assert!(before.is_subset(&after), "the seen set only grows");
    }
    // Cycle 1 fetched the depth-1 pages the model says exist and are allowed.
    let fetched_html = t0
        .fetched
        .iter()
        .filter(|f| f.depth == 1 && f.outcome == Outcome::Html)
        .count();
    assert!(fetched_html > 10);

    let report = server.stop();
    assert_eq!(report.counts.total(), 0, "{:?}", report.counts);
}
