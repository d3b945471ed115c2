//! `dragnet check crawl`: every kind of file a real crawl directory holds, damaged (a flipped
//! byte, then cut in half), is found and named; an undamaged crawl checks clean; a file of a kind
//! the check does not know fails this test, so a new kind cannot be forgotten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dragnet::crawl::check::{check_crawl, kind_of, FileKind};
use dragnet::crawl::CrawlDir;
use dragnet::exec::{run_cycles, CycleOptions};

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
    )
}

#[test]
fn every_kind_of_damaged_file_is_found_and_named() {
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
    let root = c.dir.root().to_path_buf();
    let clean = check_crawl(&c.dir, Some(&c.cfg)).unwrap();
    assert!(clean.ok(), "{:?}", clean.damaged);
    assert!(
        clean.unknown.is_empty(),
        "files of no known kind: {:?}",
        clean.unknown
    );

    // One file of every kind the crawl holds.
    let mut all = Vec::new();
    files(&root, Path::new(""), &mut all);
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
    let scratch = tempfile::tempdir().unwrap();
    let mut tried = 0;
    for (kind, rel) in by_kind.iter().filter(|(k, _)| checkable(**k)) {
        // A queue's pages carry no checksum (docs/RELIABILITY.md): its meta is damaged instead.
        let target = if *kind == FileKind::QueueData {
            PathBuf::from(format!("{}.meta", rel.display()))
        } else {
            rel.clone()
        };
        for damage in ["flip", "cut"] {
            let copy = scratch.path().join(format!("{kind:?}-{damage}"));
            crate::common::copy_dir(&root, &copy);
            let path = copy.join(&target);
            let mut b = std::fs::read(&path).unwrap();
            match damage {
                "flip" => {
                    let i = b.len() / 2;
                    b[i] ^= 0x10;
                }
                _ => b.truncate(b.len() / 2),
            }
            std::fs::write(&path, &b).unwrap();
            let r = check_crawl(&CrawlDir::new(&copy), Some(&c.cfg)).unwrap();
            assert_eq!(
                r.damaged.len(),
                1,
                "{kind:?} {damage} {}: {:?}",
                target.display(),
                r.damaged
            );
            let (named, why) = &r.damaged[0];
            assert!(
                *named == *rel
                    && why.contains(&target.file_name().unwrap().to_string_lossy().to_string()),
                "{kind:?} {damage}: {} {why}",
                named.display()
            );
            tried += 1;
        }
    }
    assert!(tried >= 12, "{tried}");

    // The command: exit 3 on the damaged copy, 0 on the crawl itself.
    let bin = env!("CARGO_BIN_EXE_dragnet");
    let out = std::process::Command::new(bin)
        .args(["check", "crawl"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let damaged = scratch.path().join("Run-flip");
    let out = std::process::Command::new(bin)
        .args(["check", "crawl"])
        .arg(&damaged)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("DAMAGED") && text.contains("1 file damaged"),
        "{text}"
    );
}
