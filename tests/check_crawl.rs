//! `dragnet check crawl`: every kind of file a real crawl directory holds, damaged at many
//! offsets (a byte flipped at the edges and throughout, cut at several lengths), is found and
//! named; an undamaged crawl checks clean; a file of a kind
//! the check does not know fails this test, so a new kind cannot be forgotten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dragnet::crawl::CrawlDir;
use dragnet::exec::{run_cycles, CycleOptions};
use dragnet::ops::check::{check_crawl, kind_of, FileKind};

fn files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(root.join(rel)).unwrap() {
        let e = e.unwrap();
        let r = rel.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            files(root, &r, out);
        } else {
            out.push(r);
        }
    }
}

/// The kinds whose damage a check can see: the rest are rewritten as a whole (metrics), edited
/// by people (crawl.toml, checked by loading it), or checked through another file (a queue's
/// meta, with its data file).
fn checkable(k: FileKind) -> bool {
    !matches!(
        k,
        FileKind::Config
            | FileKind::Metrics
            | FileKind::Lock
            | FileKind::QueueKind
            | FileKind::QueueMeta
            | FileKind::QueueJournal
            | FileKind::Temporary
            | FileKind::Log
            | FileKind::Report
            | FileKind::ArchiveLink
    )
}

#[test]
fn every_kind_of_damaged_file_is_found_and_named() {
    let c = crawl_a_small_web();
    let root = c.dir.root().to_path_buf();
    let by_kind = one_file_of_each_kind(&root);
    let targets = damage_targets(&by_kind);
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("copy");
    crate::common::copy_dir(&root, &copy);
    let (tried, harmless) = damage_each_and_check_it_is_named(&copy, &c.cfg, &targets);
    eprintln!(
        "check crawl: {tried} damaged copies of {} files ({} kinds), each found and named; \
         {harmless} more left the same JSON value (a cut final newline)",
        targets.len(),
        by_kind.keys().filter(|k| checkable(**k)).count()
    );
    assert!(tried >= 100, "{tried}");
    check_the_command(&root, &scratch.path().join("Run-flip"), &by_kind);
}

/// A crawl of a small web, run until empty (at most 4 cycles), which checks clean.
fn crawl_a_small_web() -> crate::common::Crawl {
    let (web, server) = crate::common::small_web(51, 6, 12);
    let mut cfg = crate::common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0; // more cycles: more kinds of state files
    let c = crate::common::websim_crawl(&web, &crate::common::websim_homes(&web), cfg);
    let opts = CycleOptions {
        until_empty: true,
        max_cycles: 4,
        log: false,
        ..CycleOptions::default()
    };
    run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    server.stop();
    let clean = check_crawl(&c.dir, Some(&c.cfg)).unwrap();
    assert!(clean.ok(), "{:?}", clean.damaged);
    assert!(
        clean.unknown.is_empty(),
        "files of no known kind: {:?}",
        clean.unknown
    );
    c
}

/// One file (the first by path) of every kind the crawl under `root` holds, which has at least
/// the kinds every crawl has.
fn one_file_of_each_kind(root: &Path) -> BTreeMap<FileKind, PathBuf> {
    let mut all = Vec::new();
    files(root, Path::new(""), &mut all);
    all.sort();
    let mut by_kind: BTreeMap<FileKind, PathBuf> = BTreeMap::new();
    for rel in all {
        by_kind.entry(kind_of(&rel)).or_insert(rel);
    }
    for k in [
        FileKind::Run,
        FileKind::Warc,
        FileKind::DoneMarker,
        FileKind::Manifest,
        FileKind::ClockCache,
        FileKind::QueueData,
    ] {
        assert!(
            by_kind.contains_key(&k),
            "the crawl has no {k:?}: {by_kind:?}"
        );
    }
    by_kind
}

/// (kind, the file the check must name, the file damaged): a queue's meta is checked with its
/// data file, and named as it.
fn damage_targets(by_kind: &BTreeMap<FileKind, PathBuf>) -> Vec<(FileKind, PathBuf, PathBuf)> {
    let mut targets = Vec::new();
    for (kind, rel) in by_kind.iter().filter(|(k, _)| checkable(**k)) {
        targets.push((*kind, rel.clone(), rel.clone()));
        if *kind == FileKind::QueueData {
            targets.push((
                *kind,
                rel.clone(),
                PathBuf::from(format!("{}.meta", rel.display())),
            ));
        }
    }
    targets
}

/// The damages done to a file of `len` bytes: (what, the byte flipped, the length cut to).
/// Flips at the edges and spread through the file, and cuts at several lengths.
fn damages(len: usize) -> Vec<(String, Option<usize>, Option<usize>)> {
    let mut flips: Vec<usize> = [0, 1, 7, 8, 15, 64]
        .into_iter()
        .chain((1..8).map(|i| i * len / 8))
        .chain([len.saturating_sub(9), len.saturating_sub(8), len - 1])
        .filter(|&i| i < len)
        .collect();
    flips.sort_unstable();
    flips.dedup();
    let mut cuts: Vec<usize> = [0, 1, len / 3, len / 2, len - 1].into_iter().collect();
    cuts.sort_unstable();
    cuts.dedup();
    flips
        .iter()
        .map(|&i| (format!("byte {i} flipped"), Some(i), None))
        .chain(
            cuts.iter()
                .map(|&n| (format!("cut to {n} bytes"), None, Some(n))),
        )
        .collect()
}

/// JSON files (markers, the manifest) are checksummed over their content, not their layout: a
/// damage that leaves the same JSON value (a cut final newline) is no damage.
fn same_json(a: &[u8], b: &[u8]) -> bool {
    matches!(
        (
            serde_json::from_slice::<serde_json::Value>(a),
            serde_json::from_slice::<serde_json::Value>(b),
        ),
        (Ok(x), Ok(y)) if x == y
    )
}

/// Damages each target in the crawl `copy` in every way of [`damages`], one at a time, and
/// checks that `check_crawl` finds exactly that file and names it. Returns (damages found,
/// damages that left the same JSON value).
fn damage_each_and_check_it_is_named(
    copy: &Path,
    cfg: &dragnet::config::Config,
    targets: &[(FileKind, PathBuf, PathBuf)],
) -> (usize, usize) {
    let mut tried = 0;
    let mut harmless = 0;
    for (kind, rel, target) in targets {
        let path = copy.join(target);
        let good = std::fs::read(&path).unwrap();
        for (damage, flip, cut) in damages(good.len()) {
            let mut b = good.clone();
            if let Some(i) = flip {
                b[i] ^= 0x10;
            }
            if let Some(n) = cut {
                b.truncate(n);
            }
            std::fs::write(&path, &b).unwrap();
            let r = check_crawl(&CrawlDir::new(copy), Some(cfg)).unwrap();
            std::fs::write(&path, &good).unwrap();
            if r.damaged.is_empty() && same_json(&b, &good) {
                harmless += 1;
                continue;
            }
            assert_eq!(
                r.damaged.len(),
                1,
                "{kind:?} {} {damage}: {:?}",
                target.display(),
                r.damaged
            );
            let (named, why) = &r.damaged[0];
            assert!(
                named == rel
                    && why.contains(&target.file_name().unwrap().to_string_lossy().to_string()),
                "{kind:?} {damage}: {} {why}",
                named.display()
            );
            tried += 1;
        }
    }
    (tried, harmless)
}

/// The command: exit 3 on a copy of the crawl at `root` with a byte of a run flipped (made at
/// `damaged`), 0 on the crawl itself.
fn check_the_command(root: &Path, damaged: &Path, by_kind: &BTreeMap<FileKind, PathBuf>) {
    crate::common::copy_dir(root, damaged);
    let run = damaged.join(&by_kind[&FileKind::Run]);
    let mut b = std::fs::read(&run).unwrap();
    let i = b.len() / 2;
    b[i] ^= 0x10;
    std::fs::write(&run, &b).unwrap();

    let bin = env!("CARGO_BIN_EXE_dragnet");
    let out = std::process::Command::new(bin)
        .args(["check", "crawl"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = std::process::Command::new(bin)
        .args(["check", "crawl"])
        .arg(damaged)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("DAMAGED") && text.contains("1 file damaged"),
        "{text}"
    );
}
