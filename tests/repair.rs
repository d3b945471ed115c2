//! `dragnet repair` (docs/RELIABILITY.md, campaign 5): a crawl damaged in a frontier page, in its
//! newest URL db, in a fetch list, is repaired from committed inputs (a frontier rebuilt from the
//! URL db; a rollback to the start of the cycle that made the damaged file), checks clean, and
//! cycles on to the same end as an undamaged crawl. What it cannot make again (a WARC file of a
//! complete cycle) is reported with exit 3 and left alone; `--dry-run` changes nothing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const M: u32 = 3;

fn dragnet(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .arg(dir)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    common::out_text(o)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_symlink() {
                let to = std::fs::read_link(e.path()).unwrap();
                out.push((e.path(), to.to_string_lossy().as_bytes().to_vec()));
            } else if e.file_type().unwrap().is_dir() {
                dirs.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn damage_anywhere_a_cycle_wrote_is_repaired_and_the_crawl_ends_the_same() {
    let (web, server) = common::small_web(91, 6, 14);
    let mut cfg = common::websim_config(M, 2);
    cfg.fetch.follow_per_host = 0; // a cycle per link depth: frontiers that hold URLs
    cfg.prioritize.block = 16;
    let template = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let root = template.dir.root().to_path_buf();
    let scratch = tempfile::tempdir().unwrap();
    let reference = scratch.path().join("reference");
    common::copy_dir(&root, &reference);
    let out = dragnet(
        &["cycle", "--until-empty", "--progress", "quiet"],
        &reference,
    );
    assert!(out.status.success(), "{}", text(&out));
    let want = common::outcome(&dragnet::crawl::CrawlDir::new(&reference), M);

    // Two cycles in, then one damage at a time.
    let base = scratch.path().join("base");
    common::copy_dir(&root, &base);
    let out = dragnet(&["cycle", "--cycles", "2", "--progress", "quiet"], &base);
    assert!(out.status.success(), "{}", text(&out));
    let crawl = dragnet::crawl::CrawlDir::new(&base);
    assert_eq!(dragnet::exec::next_cycle(&crawl, M), 2);
    // The partition whose frontier holds the most, and its queue file.
    let frontier = (0..M)
        .map(|p| dragnet::prioritize::frontier_dir(&crawl, p).join("heap.dat"))
        .filter(|f| f.exists())
        .max_by_key(|f| std::fs::metadata(f).unwrap().len())
        .unwrap();
    let rel = |p: &Path| p.strip_prefix(&base).unwrap().to_path_buf();
    let warc = std::fs::read_dir(crawl.warc_dir(0))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".warc.zst"))
        .unwrap();
    let cases: Vec<(&str, PathBuf, Option<u32>)> = vec![
        ("a page of a frontier queue", rel(&frontier), None),
        (
            "the newest URL db",
            rel(&crawl.state_file(0, "urldb", 2)),
            Some(1),
        ),
        ("the next fetch list", rel(&crawl.fetchlist(2, 1)), Some(1)),
        (
            "a split run of the last cycle",
            rel(&crawl.split_run(1, 2, 0)),
            Some(1),
        ),
    ];
    for (what, target, rollback) in &cases {
        let dir = scratch.path().join(what.replace(' ', "-"));
        common::copy_dir(&base, &dir);
        let path = dir.join(target);
        assert!(path.is_file(), "{what}: {} missing", path.display());
        let mut b = std::fs::read(&path).unwrap();
        let i = b.len() / 2;
        b[i] ^= 0x10;
        std::fs::write(&path, &b).unwrap();
        let check = dragnet(&["check", "crawl"], &dir);
        assert_eq!(check.status.code(), Some(3), "{what}: {}", text(&check));
        // `status` still reports the crawl.
        let status = dragnet(&["status"], &dir);
        assert_eq!(status.status.code(), Some(0), "{what}: {}", text(&status));

        // A dry run plans and changes nothing.
        let before = snapshot(&dir);
        let dry = dragnet(&["repair", "--dry-run"], &dir);
        assert_eq!(dry.status.code(), Some(0), "{what}: {}", text(&dry));
        assert!(
            snapshot(&dir) == before,
            "{what}: the dry run changed files"
        );

        let fixed = dragnet(&["repair", "--json"], &dir);
        assert_eq!(fixed.status.code(), Some(0), "{what}: {}", text(&fixed));
        let r: serde_json::Value = serde_json::from_slice(&fixed.stdout).unwrap();
        eprintln!(
            "repair of {what}: rolled back to {}, frontiers rebuilt {}, {} files removed",
            r["rolled_back_to"],
            r["frontiers_rebuilt"],
            r["removed"].as_array().map_or(0, Vec::len)
        );
        assert_eq!(
            r["rolled_back_to"].as_u64(),
            rollback.map(u64::from),
            "{what}: {r}"
        );
        assert!(
            !r["frontiers_rebuilt"].as_array().unwrap().is_empty(),
            "{what}: {r}"
        );
        let check = dragnet(&["check", "crawl"], &dir);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{what}: after repair: {}",
            text(&check)
        );
        let out = dragnet(&["cycle", "--until-empty", "--progress", "quiet"], &dir);
        assert!(out.status.success(), "{what}: {}", text(&out));
        let got = common::outcome(&dragnet::crawl::CrawlDir::new(&dir), M);
        assert!(got == want, "{what}: the repaired crawl ended differently");
    }

    // A damaged CDXJ index, or the archive link, is made again: the same bytes, nothing rolled
    // back.
    let whole = dragnet::crawl::index::crawl_index(&crawl);
    let index_cases = [
        ("a partition's CDXJ index", crawl.partition_cdxj(0, 1)),
        ("a cycle's CDXJ index", crawl.cycle_cdxj(1)),
        ("the crawl's CDXJ index", whole.clone()),
        (
            "the list of the crawl's index",
            whole.with_extension("cycles"),
        ),
        ("the archive link", crawl.archive_link()),
    ];
    for (what, target) in &index_cases {
        let dir = scratch.path().join(what.replace([' ', '\''], "-"));
        common::copy_dir(&base, &dir);
        let path = dir.join(rel(target));
        if target == &crawl.archive_link() {
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink("elsewhere", &path).unwrap();
        } else {
            let mut b = std::fs::read(&path).unwrap();
            if b.len() > 400 {
                let i = b.len() / 3;
                b.swap(i, i + 200); // out of order, or a line that does not parse
            } else {
                b.insert(0, b'x'); // not a cycle number
            }
            b.truncate(b.len() - 1); // and an unfinished last line
            std::fs::write(&path, &b).unwrap();
        }
        let check = dragnet(&["check", "crawl"], &dir);
        assert_eq!(check.status.code(), Some(3), "{what}: {}", text(&check));
        let fixed = dragnet(&["repair", "--json"], &dir);
        assert_eq!(fixed.status.code(), Some(0), "{what}: {}", text(&fixed));
        let r: serde_json::Value = serde_json::from_slice(&fixed.stdout).unwrap();
        assert!(r["rolled_back_to"].is_null(), "{what}: {r}");
        let check = dragnet(&["check", "crawl"], &dir);
        assert_eq!(check.status.code(), Some(0), "{what}: {}", text(&check));
        assert!(
            snapshot(&dir)
                .into_iter()
                .map(|(p, b)| (p.strip_prefix(&dir).unwrap().to_path_buf(), b))
                .eq(snapshot(&base)
                    .into_iter()
                    .map(|(p, b)| (p.strip_prefix(&base).unwrap().to_path_buf(), b))),
            "{what}: the repaired crawl differs from the undamaged one"
        );
    }

    // A WARC of a complete cycle cannot be made again: reported, left, exit 3.
    let dir = scratch.path().join("old-warc");
    common::copy_dir(&base, &dir);
    let path = dir.join(rel(&warc));
    let mut b = std::fs::read(&path).unwrap();
    b.truncate(b.len() / 2);
    std::fs::write(&path, &b).unwrap();
    let out = dragnet(&["repair"], &dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("NOT REPAIRED") && t.contains("restore it from a copy"),
        "{t}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b, "left as it was");
    server.stop();
}
