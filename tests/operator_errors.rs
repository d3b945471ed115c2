//! The operator-error campaign (docs/RELIABILITY.md, campaign 9): every command that writes,
//! pointed at the dangerous places a hostile or tired operator would give it, refuses with a
//! clear message and a usage exit code, and leaves the crawl byte for byte as it was. The
//! `--out` paths of export, index and reparse are in `tests/out_paths.rs`, the lock in
//! `tests/one_writer.rs`, signals in `tests/signals.rs`, damaged files in `tests/repair.rs`.

use crate::common::{self, dragnet};

use std::path::Path;

#[test]
fn commands_that_make_a_crawl_refuse_a_place_inside_or_over_one() {
    let t = tempfile::tempdir().unwrap();
    let seeds = t.path().join("seeds.txt");
    std::fs::write(&seeds, "http://127.0.0.1:9/\nhttp://127.0.0.2:9/a\n").unwrap();
    let dir = t.path().join("crawl");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    common::ok(dragnet(&[
        "init",
        "--seeds",
        &s(&seeds),
        "--partitions",
        "2",
        &s(&dir),
    ]));
    std::os::unix::fs::symlink(&dir, t.path().join("link")).unwrap();
    let before = common::snapshot(&dir);
    for (what, args, says) in dangerous_places(t.path(), &seeds, &dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = dragnet(&args);
        let text = common::out_text(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {text}");
        assert!(text.contains(says), "{what}: {text}");
        assert!(
            common::snapshot(&dir) == before,
            "{what}: the crawl changed"
        );
    }
    assert!(!dir.join("state/new").exists() && !dir.join("sub").exists());
}

/// (what, the command, what its refusal says): commands that make a crawl, pointed inside or
/// over the crawl `dir` (made in `t` from `seeds`; `t/link` links to it).
fn dangerous_places(
    t: &Path,
    seeds: &Path,
    dir: &Path,
) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let s = |p: &Path| p.to_str().unwrap().to_string();
    vec![
        (
            "init over a crawl",
            vec!["init".into(), "--seeds".into(), s(seeds), s(dir)],
            "already a crawl",
        ),
        (
            "init inside a crawl's state",
            vec![
                "init".into(),
                "--seeds".into(),
                s(seeds),
                s(&dir.join("state/new")),
            ],
            "inside the crawl",
        ),
        (
            "init inside a crawl, through a symlink",
            vec![
                "init".into(),
                "--seeds".into(),
                s(seeds),
                s(&t.join("link/cycles/x")),
            ],
            "inside the crawl",
        ),
        (
            "init inside a crawl, through ..",
            vec![
                "init".into(),
                "--seeds".into(),
                s(seeds),
                s(&dir.join("cycles/../sub")),
            ],
            "inside the crawl",
        ),
        (
            "demo into a crawl",
            vec!["demo".into(), "--dir".into(), s(dir)],
            "already a crawl",
        ),
        (
            "repartition onto the crawl itself",
            vec![
                "repartition".into(),
                "--partitions".into(),
                "3".into(),
                s(dir),
                s(dir),
            ],
            "the crawl itself",
        ),
        (
            "repartition onto a symlink to the crawl",
            vec![
                "repartition".into(),
                "--partitions".into(),
                "3".into(),
                s(dir),
                s(&t.join("link")),
            ],
            "the crawl itself",
        ),
        (
            "repartition inside the crawl",
            vec![
                "repartition".into(),
                "--partitions".into(),
                "3".into(),
                s(dir),
                s(&dir.join("state")),
            ],
            "inside the crawl",
        ),
    ]
}
