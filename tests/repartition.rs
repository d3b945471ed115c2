//! `dragnet repartition` (docs/design.md §3): a crawl run for two cycles with M = 3, rewritten
//! for M2 = 5, 2 and 1, then continued to its end, fetches exactly what the same crawl never
//! repartitioned fetches (websim's ground truth); the new directory passes `dragnet check crawl`
//! and `dragnet status`, holds the same seen set and URL db (as sets over all partitions), every
//! record in the partition of its host; the old one is only read. Errors (mid-cycle, NEWDIR not
//! empty, M2 = 0) name what is wrong and change nothing.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use dragnet::config::Config;

use dragnet::crawl::next_cycle;
use dragnet::crawl::CrawlDir;
use dragnet::exec::{fetch_list_size, run_cycles, CycleOptions};
use dragnet::keys::{host_key, host_of, partition_of};
use dragnet::run::{self, RunReader, Schema};

const M: u32 = 3;

fn config() -> Config {
    let mut cfg = common::websim_config(M, 4);
    cfg.prioritize.block = 16;
    // A crawl of several cycles with URLs left in the frontier between them: no in-run
    // following, and few URLs per host and fetch list.
    cfg.fetch.follow_per_host = 0;
    cfg.prioritize.max_urls_per_host = 4;
    cfg
}

fn quiet(cycles: u32) -> CycleOptions {
    CycleOptions {
        cycles,
        progress: dragnet::fetch::ProgressMode::Quiet,
        log: false,
        ..CycleOptions::default()
    }
}

/// Every file (and link) under `root` with its bytes (a link: its target).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
            if t.is_symlink() {
                let to = std::fs::read_link(e.path()).unwrap();
                out.insert(rel, to.to_string_lossy().as_bytes().to_vec());
            } else if t.is_dir() {
                dirs.push(e.path());
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// The seen set and the URL db (fingerprint -> record bytes) of cycle `cycle`'s state, over all
/// partitions; checks that every URL is in the partition of its host and that each partition's
/// seen set is its URL db's keys.
fn state(dir: &CrawlDir, m: u32, cycle: u32) -> (BTreeSet<u64>, BTreeMap<u64, Vec<u8>>) {
    let mut seen = BTreeSet::new();
    let mut db = BTreeMap::new();
    for p in 0..m {
        let mut keys = Vec::new();
        let mut r =
            RunReader::open_expect(&dir.state_file(p, "seen", cycle), Schema::SEEN).unwrap();
        while let Some((k, _)) = r.next_record().unwrap() {
            keys.push(run::key_u64(k));
        }
        let mut r =
            RunReader::open_expect(&dir.state_file(p, "urldb", cycle), Schema::URLDB).unwrap();
        let mut db_keys = Vec::new();
        while let Some((k, v)) = r.next_record().unwrap() {
            let fp = run::key_u64(k);
            let rec = dragnet::records::UrlRecord::decode(v).unwrap();
            assert_eq!(
                partition_of(host_key(host_of(&rec.url)), m),
                p,
                "{} in partition {p} of {m}",
                rec.url
            );
            db_keys.push(fp);
            assert!(db.insert(fp, v.to_vec()).is_none(), "{fp:016x} twice");
        }
        assert_eq!(keys, db_keys, "partition {p}: seen set and URL db differ");
        seen.extend(keys);
    }
    (seen, db)
}

#[test]
fn a_repartitioned_crawl_fetches_what_the_crawl_would_have() {
    let (web, server) = common::small_web(43, 6, 12);
    let seeds = common::websim_homes(&web);
    let truth = common::truth_fetched(&web);

    // The crawl, two cycles, then repartitioned; continued in DIR at the end, it is the crawl
    // that never changed M.
    let a = common::websim_crawl(&web, &seeds, config());
    let before = two_cycles(&a);
    for m2 in [5u32, 2, 1] {
        let new_root = a.tmp.path().join(format!("m{m2}"));
        let (dir, cfg) = repartition_and_check(&a, &before, &new_root, m2);
        check_continued_to_the_end(&dir, &cfg, m2, &before, &truth);
        if m2 == 5 {
            check_the_commands_and_export(&dir, &cfg, &new_root);
        }
    }
    // DIR, continued without a repartition: the same set, websim's ground truth.
    let r = run_cycles(&a.dir, &a.cfg, &common::until_empty(40)).unwrap();
    assert!(r.complete(), "{r:?}");
    let end = next_cycle(&a.dir, M);
    assert_eq!(common::fetched_urls(&a.dir, M, end), truth);
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);
}

/// DIR after its two cycles, before any repartition.
struct Before {
    /// Every file with its bytes.
    snapshot: BTreeMap<PathBuf, Vec<u8>>,
    /// The seen set and URL db of cycle 2's state.
    seen: BTreeSet<u64>,
    db: BTreeMap<u64, Vec<u8>>,
    /// The URLs fetched in cycles 0 and 1.
    fetched: BTreeSet<String>,
    /// The size of cycle 2's fetch lists, and the frontier `status` counts.
    listed: u64,
    frontier: Option<u64>,
}

/// Runs two cycles of the crawl `a`, which leave URLs listed and in the frontier.
fn two_cycles(a: &common::Crawl) -> Before {
    run_cycles(&a.dir, &a.cfg, &quiet(2)).unwrap();
    assert_eq!(next_cycle(&a.dir, M), 2);
    let listed = fetch_list_size(&a.dir, 2, M).unwrap();
    let frontier = dragnet::ops::status(a.dir.root()).unwrap().frontier;
    assert!(
        listed > 0 && frontier.unwrap_or(0) > 0,
        "too short a crawl: {listed} URLs listed, frontier {frontier:?}"
    );
    let (seen, db) = state(&a.dir, M, 2);
    Before {
        snapshot: snapshot(a.dir.root()),
        seen,
        db,
        fetched: common::fetched_urls(&a.dir, M, 2),
        listed,
        frontier,
    }
}

/// Repartitions the crawl `a` into `new_root` with `m2` partitions: DIR unchanged, nothing
/// left beside, the new crawl checks clean and holds the same state and fetch lists. Returns it.
fn repartition_and_check(
    a: &common::Crawl,
    before: &Before,
    new_root: &Path,
    m2: u32,
) -> (CrawlDir, Config) {
    let r = dragnet::ops::repartition(a.dir.root(), new_root, m2).unwrap();
    assert_eq!(
        snapshot(a.dir.root()),
        before.snapshot,
        "repartition changed DIR"
    );
    assert_eq!((r.old_partitions, r.partitions, r.next_cycle), (M, m2, 2));
    assert_eq!(r.urls, before.db.len() as u64);
    assert_eq!(r.fetchlist, before.listed);
    assert_eq!(Some(r.frontier), before.frontier);
    assert!(r.linked > 0, "{r:?}");
    // Nothing but NEWDIR beside it: no temporary left.
    let beside: Vec<_> = std::fs::read_dir(a.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(beside.is_empty(), "{beside:?}");

    let (dir, cfg) = CrawlDir::open(new_root).unwrap();
    assert_eq!(cfg.crawl.partitions, m2);
    let mut expect_cfg = a.cfg.clone();
    expect_cfg.crawl.partitions = m2;
    assert_eq!(cfg.to_toml(), expect_cfg.to_toml());
    let check = dragnet::ops::check::check_crawl(&dir, Some(&cfg)).unwrap();
    assert!(check.ok(), "m2 = {m2}: {:?}", check.damaged);
    assert!(
        check.unknown.is_empty() && check.temporaries.is_empty(),
        "{check:?}"
    );
    let st = dragnet::ops::status(new_root).unwrap();
    assert_eq!((st.partitions, st.cycles_complete), (m2, 2), "{st}");
    assert_eq!(st.current, Some(2), "{st}");
    assert_eq!(st.frontier, before.frontier, "{st}");
    assert_eq!(next_cycle(&dir, m2), 2);
    assert_eq!(fetch_list_size(&dir, 2, m2).unwrap(), before.listed);
    // (b) The same seen set and URL db, each URL in its host's new partition.
    let (seen2, db2) = state(&dir, m2, 2);
    assert_eq!(seen2, before.seen, "m2 = {m2}");
    assert_eq!(db2, before.db, "m2 = {m2}");
    (dir, cfg)
}

/// (a) The repartitioned crawl continued to the end: the same fetched set as the crawl never
/// repartitioned (`truth`), nothing fetched twice, and it checks clean.
fn check_continued_to_the_end(
    dir: &CrawlDir,
    cfg: &Config,
    m2: u32,
    before: &Before,
    truth: &BTreeSet<String>,
) {
    let r = run_cycles(dir, cfg, &common::until_empty(40)).unwrap();
    assert!(r.complete(), "{r:?}");
    let end = next_cycle(dir, m2);
    let mut got = before.fetched.clone();
    let after = common::fetched_urls(dir, m2, end);
    assert!(
        after.is_disjoint(&before.fetched),
        "fetched again after the repartition: {:?}",
        after.intersection(&before.fetched).collect::<Vec<_>>()
    );
    got.extend(after);
    let missed: Vec<_> = truth.difference(&got).collect();
    let extra: Vec<_> = got.difference(truth).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "m2 = {m2}: missed {missed:?}\nextra {extra:?}"
    );
    let check = dragnet::ops::check::check_crawl(dir, Some(cfg)).unwrap();
    assert!(check.ok(), "m2 = {m2} at the end: {:?}", check.damaged);
}

/// The command line says the same (`check crawl`, `status`); an export gives the cycles crawled
/// in the repartitioned crawl, and a clear word on the ones before (their runs between stages
/// stayed in DIR).
fn check_the_commands_and_export(dir: &CrawlDir, cfg: &Config, new_root: &Path) {
    common::ok(common::dragnet_on(&["check", "crawl"], new_root));
    common::ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .arg("status")
            .arg(new_root)
            .output()
            .unwrap(),
    );
    let r = dragnet::ops::export::export(
        dir,
        cfg,
        dragnet::ops::export::What::Pages,
        dragnet::ops::export::Format::Jsonl,
        &new_root.join("pages.jsonl"),
        None,
    )
    .unwrap();
    assert_eq!(r.carried, [0, 1]);
    assert!(
        !r.cycles.is_empty() && r.cycles.iter().all(|&c| c >= 2),
        "{r:?}"
    );
    assert!(r.rows > 0);
    let err = dragnet::ops::export::export(
        dir,
        cfg,
        dragnet::ops::export::What::Pages,
        dragnet::ops::export::Format::Jsonl,
        &new_root.join("old.jsonl"),
        Some(0),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("before `dragnet repartition`"), "{err}");
}

#[test]
fn refusals_name_the_problem_and_change_nothing() {
    let (web, server) = common::small_web(44, 3, 8);
    let seeds = common::websim_homes(&web);
    let mut cfg = config();
    // Domain budgets on (and never reached), to route them too.
    cfg.prioritize.max_urls_per_domain_total = 100_000;
    let a = common::websim_crawl(&web, &seeds, cfg);
    run_cycles(&a.dir, &a.cfg, &quiet(1)).unwrap();
    let root = a.dir.root();
    let before = snapshot(root);
    let new_root = a.tmp.path().join("new");

    // M2 = 0, through the command line.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["repartition", "--partitions", "0"])
        .arg(root)
        .arg(&new_root)
        .output()
        .unwrap();
    let text = common::out_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--partitions 0") && text.contains("between 1 and"),
        "{text}"
    );
    assert!(!new_root.exists());
    assert_eq!(snapshot(root), before);

    // NEWDIR holds something.
    std::fs::create_dir_all(&new_root).unwrap();
    std::fs::write(new_root.join("notes.txt"), b"mine").unwrap();
    let e = dragnet::ops::repartition(root, &new_root, 2).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&new_root.display().to_string())
            && msg.contains("not empty")
            && msg.contains("notes.txt"),
        "{msg}"
    );
    assert_eq!(snapshot(&new_root).len(), 1);
    assert_eq!(snapshot(root), before);
    std::fs::remove_file(new_root.join("notes.txt")).unwrap();

    // In the middle of a cycle: one partition fetched.
    let quiet_fetch = dragnet::fetch::FetchOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        ..dragnet::fetch::FetchOptions::default()
    };
    dragnet::fetch::fetch_partition(&a.dir, &a.cfg, 1, 0, &quiet_fetch).unwrap();
    let mid = snapshot(root);
    let e = dragnet::ops::repartition(root, &new_root, 2).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("middle of cycle 1")
            && msg.contains("fetch done in 1 of 3 partitions")
            && msg.contains("dragnet cycle"),
        "{msg}"
    );
    assert_eq!(e.exit_code(), dragnet::error::EXIT_USAGE);
    assert_eq!(snapshot(root), mid);
    assert!(snapshot(&new_root).is_empty());

    // Finished, with seeds injected for the next cycle, the same crawl repartitions into the
    // (empty) NEWDIR, and goes on there.
    run_cycles(&a.dir, &a.cfg, &quiet(1)).unwrap();
    let more = a.tmp.path().join("more.txt");
    std::fs::write(&more, seeds.join("\n")).unwrap();
    let inj = dragnet::ops::inject(root, &more, 2.0, &mut |b| panic!("{b:?}")).unwrap();
    assert!(inj.seeds > 0);
    let r = dragnet::ops::repartition(root, &new_root, 2).unwrap();
    assert_eq!((r.next_cycle, r.injected), (2, inj.seeds));
    let (dir, cfg) = CrawlDir::open(&new_root).unwrap();
    for q in 0..2 {
        assert!(dir.state_file(q, "domain_budget", 2).exists());
    }
    let check = dragnet::ops::check::check_crawl(&dir, Some(&cfg)).unwrap();
    assert!(check.ok() && check.unknown.is_empty(), "{check:?}");
    let r = run_cycles(&dir, &cfg, &quiet(1)).unwrap();
    assert!(r.complete(), "{r:?}");
    assert_eq!(next_cycle(&dir, 2), 3);
    server.stop();
}
