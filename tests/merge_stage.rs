//! `dragnet merge`: the new URLs equal a reference computed with an in-memory set, duplicates
//! within and across source partitions collapse with their cash summed, a URL is never new
//! twice across cycles, and fetch results fold into the URL db.

use std::collections::{BTreeMap, BTreeSet};

use dragnet::config::Config;

use dragnet::crawl::{CrawlDir, DoneMarker, Stage};

use dragnet::keys::{self, partition_of};
use dragnet::merge::merge_partition;
use dragnet::ops::{self, InitOptions};
use dragnet::records::FrontierUpdate;
use dragnet::records::SplitRecord;
use dragnet::records::{FetchResult, UrlRecord, UrlState};
use dragnet::run::{self, Cursor, RunReader, RunWriter, Schema};
use proptest::prelude::*;

const M: u32 = 2;

fn mark(dir: &CrawlDir, cycle: u32, stage: Stage, p: u32) {
    let done = dir.done_path(cycle, stage, p);
    std::fs::create_dir_all(done.parent().unwrap()).unwrap();
    let now = std::time::SystemTime::now();
    DoneMarker::new(stage, cycle, p, now)
        .commit(&done, now)
        .unwrap();
}

fn write_run(path: &std::path::Path, schema: Schema, mut recs: Vec<(u64, Vec<u8>)>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    recs.sort_by_key(|r| r.0);
    let mut w = RunWriter::create(path, schema).unwrap();
    for (fp, payload) in recs {
        w.push(&run::fp_key(fp), &payload).unwrap();
    }
    w.finish().unwrap();
}

fn read<T>(path: &std::path::Path, schema: Schema, f: impl Fn(&[u8]) -> T) -> BTreeMap<u64, T> {
    let mut r = RunReader::open_expect(path, schema).unwrap();
    let mut m = BTreeMap::new();
    while r.advance().unwrap() {
        assert!(
            m.insert(run::key_u64(r.key()), f(r.payload())).is_none(),
            "unique"
        );
    }
    m
}

/// URLs on hosts of partition 0 of M.
fn urls_of_partition_0(n: usize) -> Vec<String> {
    (0..)
        .map(|h| format!("h{h}.test"))
        .filter(|h| partition_of(keys::host_key(h), M) == 0)
        .take(8)
        .flat_map(|h| (0..n).map(move |i| format!("http://{h}/p{i}")))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn merge_equals_an_in_memory_reference(
        seeds in proptest::collection::btree_set(0usize..40, 1..10),
        routed in proptest::collection::vec((0usize..80, 0u32..2, 0u8..4, any::<bool>(), 1u32..6), 0..120),
        fetched in proptest::collection::btree_set(0usize..40, 0..6),
    ) {
        let pool = urls_of_partition_0(10);
        let t = tempfile::tempdir().unwrap();
        let seed_file = t.path().join("seeds");
        let seed_urls: Vec<&String> = seeds.iter().map(|&i| &pool[i]).collect();
        std::fs::write(&seed_file, seed_urls.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")).unwrap();
        let root = t.path().join("crawl");
        ops::init(&root, &InitOptions { seeds: seed_file, config: None, partitions: Some(M) }, &mut |_| {}).unwrap();
        let dir = CrawlDir::new(&root);
        let cfg = Config::load(&dir.config_path()).unwrap();

        // Fetch results for some seeds (fetched ones answer 200 with a digest).
        let fetched_urls: BTreeSet<&String> = fetched.iter().map(|&i| &pool[i]).filter(|u| seed_urls.contains(u)).collect();
        let results: Vec<(u64, Vec<u8>)> = fetched_urls.iter().map(|u| {
            let r = FetchResult { url: u.to_string(), status: 200, digest: 7, fetched_at_ms: 5_000, ..FetchResult::default() };
            (keys::fingerprint(u), r.encode())
        }).collect();
        write_run(&dir.fetched(0, 0), Schema::FETCHED, results);
        mark(&dir, 0, Stage::Fetch, 0);
        // What each source partition routed here: a URL or a bare credit, cash, depth.
        let mut per_source: Vec<BTreeMap<u64, SplitRecord>> = vec![BTreeMap::new(), BTreeMap::new()];
        for &(i, q, c, credit, depth) in &routed {
            let url = &pool[i];
            let known_seed = seed_urls.contains(&url);
            // A credit only for a URL the owner knows (the sender's cache guarantees that).
            let credit = credit && known_seed;
            let e = per_source[q as usize].entry(keys::fingerprint(url)).or_default();
            e.cash += f64::from(c) * 0.5;
            e.depth = if e.inlinks == 0 { depth } else { e.depth.min(depth) };
            e.inlinks += 1;
            if !credit { e.url = url.clone(); }
        }
        for q in 0..M {
            let recs = per_source[q as usize].iter().map(|(fp, r)| (*fp, r.encode())).collect();
            write_run(&dir.split_run(0, 0, q), Schema::SPLIT, recs);
            mark(&dir, 0, Stage::Split, q);
        }

        let r = merge_partition(&dir, &cfg, 0, 0).unwrap();

        // Reference.
        let mut cash: BTreeMap<u64, f64> = BTreeMap::new();
        let mut with_url: BTreeMap<u64, String> = BTreeMap::new();
        for src in &per_source {
            for (fp, s) in src {
                *cash.entry(*fp).or_default() += s.cash;
                if !s.url.is_empty() { with_url.insert(*fp, s.url.clone()); }
            }
        }
        let seed_fps: BTreeSet<u64> = seed_urls.iter().map(|u| keys::fingerprint(u)).collect();
        let new: BTreeSet<u64> = with_url.keys().filter(|fp| !seed_fps.contains(fp)).copied().collect();
        let updates = read(&dir.new_urls(0, 0), Schema::NEW, |p| FrontierUpdate::decode(p).unwrap());
        let got_new: BTreeSet<u64> = updates.iter().filter(|(_, u)| u.new).map(|(fp, _)| *fp).collect();
        prop_assert_eq!(&got_new, &new);
        prop_assert_eq!(r.count("new") as usize, new.len());
        for fp in &new {
            prop_assert!((updates[fp].score - cash[fp]).abs() < 1e-9);
            prop_assert_eq!(&updates[fp].url, &with_url[fp]);
        }
        let seen = read(&dir.state_file(0, "seen", 1), Schema::SEEN, |_| ());
        let want_seen: BTreeSet<u64> = seed_fps.union(&new).copied().collect();
        prop_assert_eq!(seen.keys().copied().collect::<BTreeSet<_>>(), want_seen);
        let db = read(&dir.state_file(0, "urldb", 1), Schema::URLDB, |p| UrlRecord::decode(p).unwrap());
        for u in &fetched_urls {
            let rec = &db[&keys::fingerprint(u)];
            prop_assert_eq!(rec.state, UrlState::Fetched);
            prop_assert_eq!(rec.digest, 7);
            prop_assert_eq!(rec.fetches, 1);
            // Its cash was spent on its out-links; only what its in-links brought now is left.
            prop_assert!((rec.score - cash.get(&keys::fingerprint(u)).copied().unwrap_or(0.0)).abs() < 1e-9);
        }

        // Cycle 1: the same links again. Nothing is new twice.
        write_run(&dir.fetched(1, 0), Schema::FETCHED, Vec::new());
        mark(&dir, 1, Stage::Fetch, 0);
        for q in 0..M {
            let recs = per_source[q as usize].iter().map(|(fp, r)| (*fp, r.encode())).collect();
            write_run(&dir.split_run(1, 0, q), Schema::SPLIT, recs);
            mark(&dir, 1, Stage::Split, q);
        }
        let r = merge_partition(&dir, &cfg, 1, 0).unwrap();
        prop_assert_eq!(r.count("new"), 0);
        let updates = read(&dir.new_urls(1, 0), Schema::NEW, |p| FrontierUpdate::decode(p).unwrap());
        prop_assert!(updates.values().all(|u| !u.new));
        let seen2 = read(&dir.state_file(0, "seen", 2), Schema::SEEN, |_| ());
        prop_assert_eq!(seen2.len(), seen.len());
    }
}

#[test]
fn merge_needs_every_split_and_names_what_is_missing() {
    let t = tempfile::tempdir().unwrap();
    let seeds = t.path().join("seeds");
    std::fs::write(&seeds, "http://a.test/\n").unwrap();
    let root = t.path().join("crawl");
    ops::init(
        &root,
        &InitOptions {
            seeds,
            config: None,
            partitions: Some(3),
        },
        &mut |_| {},
    )
    .unwrap();
    let dir = CrawlDir::new(&root);
    let cfg = Config::load(&dir.config_path()).unwrap();
    mark(&dir, 0, Stage::Fetch, 1);
    mark(&dir, 0, Stage::Split, 0);
    let e = merge_partition(&dir, &cfg, 0, 1).unwrap_err().to_string();
    assert!(
        e.contains("split of partition 1") && e.contains("split of partition 2"),
        "{e}"
    );
    assert!(!e.contains("fetch of partition 1,"), "{e}");
}

/// A crawl of M partitions made by `init` from four seeds of partition 0.
fn four_seeds() -> (tempfile::TempDir, CrawlDir, Config) {
    let pool = urls_of_partition_0(4);
    let t = tempfile::tempdir().unwrap();
    let seed_file = t.path().join("seeds");
    std::fs::write(&seed_file, pool.join("\n")).unwrap();
    let root = t.path().join("crawl");
    let opts = InitOptions {
        seeds: seed_file,
        config: None,
        partitions: Some(M),
    };
    ops::init(&root, &opts, &mut |_| {}).unwrap();
    let dir = CrawlDir::new(&root);
    let cfg = Config::load(&dir.config_path()).unwrap();
    (t, dir, cfg)
}

/// Cycle `c` of partition 0 fetched nothing and was routed nothing: its merge may run.
fn nothing_fetched_or_routed(dir: &CrawlDir, c: u32) {
    write_run(&dir.fetched(c, 0), Schema::FETCHED, Vec::new());
    mark(dir, c, Stage::Fetch, 0);
    for q in 0..M {
        write_run(&dir.split_run(c, 0, q), Schema::SPLIT, Vec::new());
        mark(dir, c, Stage::Split, q);
    }
}

/// What a merge killed mid-write leaves in the state directory (its half-written seen set and
/// URL db, the biggest temporaries of a crawl) is removed when the merge runs again; a live
/// writer's temporary is spared.
#[test]
fn a_killed_merges_temporaries_are_swept_by_the_next_merge() {
    let (_t, dir, cfg) = four_seeds();
    nothing_fetched_or_routed(&dir, 0);
    // pid 4194311 is above any pid_max: the writer is gone.
    let state = dir.state_dir(0);
    let dead = [
        state.join(".seen.000001.run.tmp.4194311"),
        state.join(".urldb.000001.run.tmp.4194311"),
    ];
    let live = state.join(format!(".other.run.tmp.{}", std::process::id()));
    for p in dead.iter().chain([&live]) {
        std::fs::write(p, vec![0u8; 4096]).unwrap();
    }
    merge_partition(&dir, &cfg, 0, 0).unwrap();
    for p in &dead {
        assert!(!p.exists(), "{} was left behind", p.display());
    }
    assert!(live.exists(), "a live writer's temporary was removed");
}

/// The merge of cycle N reads exactly version N of the seen set and URL db: when both are gone
/// it fails naming the missing file (exit 3) instead of falling back to an older pair, which
/// would queue again every URL fetched since.
#[test]
fn a_missing_state_version_is_an_error_not_a_fallback_to_an_older_one() {
    let (_t, dir, cfg) = four_seeds();
    for c in 0..2 {
        nothing_fetched_or_routed(&dir, c);
    }
    merge_partition(&dir, &cfg, 0, 0).unwrap();
    for kind in ["seen", "urldb"] {
        std::fs::remove_file(dir.state_file(0, kind, 1)).unwrap();
        assert!(dir.state_file(0, kind, 0).exists());
    }
    let e = merge_partition(&dir, &cfg, 1, 0).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.exit_code(), dragnet::error::EXIT_IO, "{msg}");
    assert!(
        msg.contains("seen.000001.run") && msg.contains("missing"),
        "{msg}"
    );
    assert!(!dir.done_path(1, Stage::Merge, 0).exists());
}

#[test]
fn a_split_run_its_marker_lists_but_the_directory_lacks_is_an_error_and_unlisted_ones_are_empty() {
    let (web, server) = crate::common::small_web(61, 2, 8);
    let cfg = crate::common::websim_config(4, 2);
    let c = crate::common::websim_crawl(&web, &crate::common::websim_homes(&web), cfg);
    let quiet = dragnet::fetch::FetchOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        ..dragnet::fetch::FetchOptions::default()
    };
    for p in 0..4 {
        dragnet::fetch::fetch_partition(&c.dir, &c.cfg, 0, p, &quiet).unwrap();
        dragnet::parse::parse_partition(&c.dir, &c.cfg, 0, p).unwrap();
        dragnet::split::split_partition(&c.dir, &c.cfg, 0, p).unwrap();
    }
    server.stop();
    // Splits write no run for an owner they routed nothing to: 2 hosts own at most 2 of the 4
    // partitions.
    let written: Vec<(u32, u32)> = (0..4)
        .flat_map(|p| (0..4).map(move |q| (p, q)))
        .filter(|&(p, q)| c.dir.split_run(0, p, q).exists())
        .collect();
    assert!(!written.is_empty() && written.len() < 16, "{written:?}");
    // A listed run lost: the merge that reads it names it.
    let (p, q) = written[0];
    std::fs::remove_file(c.dir.split_run(0, p, q)).unwrap();
    let e = dragnet::merge::merge_partition(&c.dir, &c.cfg, 0, p).unwrap_err();
    assert_eq!(e.exit_code(), dragnet::error::EXIT_IO, "{e}");
    assert!(
        e.to_string().contains("missing") && e.to_string().contains("lists it"),
        "{e}"
    );
    // The other partitions merge, taking their unlisted runs as empty.
    for other in (0..4).filter(|&o| o != p) {
        dragnet::merge::merge_partition(&c.dir, &c.cfg, 0, other).unwrap();
    }
}
