//! `dragnet repair` (docs/RELIABILITY.md, campaign 5): every derived file of a crawl, damaged one
//! at a time, is made again from what is committed (the stage that wrote it run again in a
//! sandbox, proven byte for byte by its marker; a frontier rebuilt from the URL db), the crawl
//! checks clean, keeps every WARC byte and CDXJ line, and cycles on to the same end as an
//! undamaged crawl. Damage only a rollback can repair moves what it takes out to quarantine,
//! captures included, never deleting them. What it cannot make again (a WARC file of a complete
//! cycle) is reported with exit 3 and left alone; `--dry-run` changes nothing.

use crate::common::{self, dragnet_on as dragnet};

use std::path::{Path, PathBuf};
use std::process::Output;

const M: u32 = 3;

fn text(o: &Output) -> String {
    common::out_text(o)
}

/// A websim crawl two cycles in (`base`), the same crawl run to its end (`want`), and the web
/// serving both.
struct Fixture {
    _template: common::Crawl,
    _scratch: tempfile::TempDir,
    base: PathBuf,
    want: common::Outcome,
    server: websim::server::Server,
    scratch: PathBuf,
}

fn fixture() -> Fixture {
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
    let base = scratch.path().join("base");
    common::copy_dir(&root, &base);
    let out = dragnet(&["cycle", "--cycles", "2", "--progress", "quiet"], &base);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        dragnet::crawl::next_cycle(&dragnet::crawl::CrawlDir::new(&base), M),
        2
    );
    Fixture {
        _template: template,
        base,
        want,
        server,
        scratch: scratch.path().to_path_buf(),
        _scratch: scratch,
    }
}

/// The captures of a crawl: every WARC file's bytes and every line of the crawl's CDXJ index.
type Captures = (Vec<(PathBuf, Vec<u8>)>, Vec<String>);

/// The [`Captures`] of the crawl in `dir`.
fn captures(dir: &Path) -> Captures {
    let warcs = common::snapshot(&dir.join("cycles"))
        .into_iter()
        .filter(|(p, _)| p.components().any(|c| c.as_os_str() == "warc"))
        .map(|(p, b)| (p.strip_prefix(dir).unwrap().to_path_buf(), b))
        .collect();
    let index = std::fs::read_to_string(dir.join("indexes/index.cdxj")).unwrap_or_default();
    (warcs, index.lines().map(String::from).collect())
}

/// Damages `path` (a flipped byte in the middle) and checks that `check crawl` sees it.
fn damage(dir: &Path, path: &Path, what: &str) {
    assert!(path.is_file(), "{what}: {} missing", path.display());
    let mut b = std::fs::read(path).unwrap();
    let i = b.len() / 2;
    b[i] ^= 0x10;
    std::fs::write(path, &b).unwrap();
    let check = dragnet(&["check", "crawl"], dir);
    assert_eq!(check.status.code(), Some(3), "{what}: {}", text(&check));
}

/// `repair --dry-run` changes nothing; `repair --json` exits 0 and returns its report.
fn repair(dir: &Path, what: &str) -> serde_json::Value {
    let before = common::snapshot(dir);
    let dry = dragnet(&["repair", "--dry-run"], dir);
    assert_eq!(dry.status.code(), Some(0), "{what}: {}", text(&dry));
    assert!(
        common::snapshot(dir) == before,
        "{what}: the dry run changed files"
    );
    let fixed = dragnet(&["repair", "--json"], dir);
    assert_eq!(fixed.status.code(), Some(0), "{what}: {}", text(&fixed));
    let check = dragnet(&["check", "crawl"], dir);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{what}: after repair: {}",
        text(&check)
    );
    eprint!("{}", String::from_utf8_lossy(&fixed.stderr));
    serde_json::from_slice(&fixed.stdout).unwrap()
}

/// Runs the crawl in `dir` to its end and checks it ends as the undamaged one did.
fn ends_as_wanted(f: &Fixture, dir: &Path, what: &str) {
    let out = dragnet(&["cycle", "--until-empty", "--progress", "quiet"], dir);
    assert!(out.status.success(), "{what}: {}", text(&out));
    let got = common::outcome(&dragnet::crawl::CrawlDir::new(dir), M);
    assert!(
        got == f.want,
        "{what}: the repaired crawl ended differently"
    );
}

/// Every derived file a cycle writes, damaged one at a time, is made again by running the
/// stage that wrote it (the same bytes, proven by its marker) or, for a frontier, rebuilt from
/// the URL db: nothing is rolled back, every WARC byte and CDXJ line is still in the crawl, the
/// damaged copy is kept in quarantine, and the crawl continues to the same end.
#[test]
fn every_derived_file_is_made_again_and_no_capture_is_lost() {
    let f = fixture();
    let undamaged = captures(&f.base);
    for (what, target) in &derived_files(&f) {
        damage_and_repair(&f, what, target, &undamaged);
    }
    check_a_file_that_cannot_be_made_again_is_quarantined(&f, &undamaged);
    f.server.stop();
}

/// A derived file of each kind a cycle writes, relative to the crawl, with what it is.
fn derived_files(f: &Fixture) -> Vec<(&'static str, PathBuf)> {
    use dragnet::crawl::Stage;
    let crawl = dragnet::crawl::CrawlDir::new(&f.base);
    let rel = |p: &Path| p.strip_prefix(&f.base).unwrap().to_path_buf();
    // The partition whose frontier holds the most, and its queue file.
    let frontier = (0..M)
        .map(|p| dragnet::prioritize::frontier_dir(&crawl, p).join("heap.dat"))
        .filter(|f| f.exists())
        .max_by_key(|f| std::fs::metadata(f).unwrap().len())
        .unwrap();
    vec![
        ("a page of a frontier queue", rel(&frontier)),
        ("the newest URL db", rel(&crawl.state_file(0, "urldb", 2))),
        ("the newest seen set", rel(&crawl.state_file(1, "seen", 2))),
        ("an older URL db", rel(&crawl.state_file(2, "urldb", 1))),
        ("the next fetch list", rel(&crawl.fetchlist(2, 1))),
        ("a fetch list already fetched", rel(&crawl.fetchlist(1, 0))),
        (
            "a split run of the last cycle",
            rel(&crawl.split_run(1, 2, 0)),
        ),
        ("a links run", rel(&crawl.links(1, 0))),
        ("a pages run", rel(&crawl.pages(1, 2))),
        ("the merge's updates", rel(&crawl.new_urls(1, 1))),
        (
            "a CLOCK cache",
            rel(&crawl.state_file_ext(0, "cache", "clock", 2)),
        ),
        ("a host budget", rel(&crawl.state_file(1, "host_budget", 2))),
        ("a merge marker", rel(&crawl.done_path(1, Stage::Merge, 0))),
        ("a parse marker", rel(&crawl.done_path(1, Stage::Parse, 2))),
        (
            "a prioritize marker",
            rel(&crawl.done_path(0, Stage::Prioritize, 1)),
        ),
    ]
}

/// In a copy of the crawl, damages `target` (`what`), repairs it without a rollback, checks it
/// was made again (or its frontier rebuilt), that the captures are `undamaged`, and that the
/// crawl ends as wanted.
fn damage_and_repair(f: &Fixture, what: &str, target: &Path, undamaged: &Captures) {
    let dir = f.scratch.join(what.replace([' ', '\''], "-"));
    common::copy_dir(&f.base, &dir);
    let path = dir.join(target);
    let good = std::fs::read(&path).unwrap();
    damage(&dir, &path, what);
    // `status` still reports the crawl.
    let status = dragnet(&["status"], &dir);
    assert_eq!(status.status.code(), Some(0), "{what}: {}", text(&status));
    let r = repair(&dir, what);
    eprintln!(
        "repair of {what}: regenerated {}, frontiers rebuilt {}, quarantined {}",
        r["regenerated"], r["frontiers_rebuilt"], r["quarantined"]
    );
    assert!(r["rolled_back_to"].is_null(), "{what}: {r}");
    if target.components().any(|c| c.as_os_str() == "frontier") {
        assert!(
            !r["frontiers_rebuilt"].as_array().unwrap().is_empty(),
            "{what}: {r}"
        );
    } else {
        check_made_again(&dir, what, target, &r, &good);
    }
    assert!(
        captures(&dir) == *undamaged,
        "{what}: a capture changed or went"
    );
    ends_as_wanted(f, &dir, what);
}

/// The repair (its report `r`) of the crawl in `dir` made `target` (`what`, once `good`) again:
/// the same bytes (a links run aside), the damaged copy kept in quarantine.
fn check_made_again(dir: &Path, what: &str, target: &Path, r: &serde_json::Value, good: &[u8]) {
    assert!(
        r["regenerated"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(target)),
        "{what}: {r}"
    );
    // A links run made from the WARC may order links to one target otherwise (proven
    // the same through the split); everything else is the same bytes.
    let name = target.to_string_lossy();
    if !name.ends_with(".done") && !name.contains("links") {
        assert!(
            std::fs::read(dir.join(target)).unwrap() == good,
            "{what}: not the same bytes"
        );
    }
    // The damaged copy is kept, at the same relative path under quarantine/T/.
    let q = dir.join(r["quarantine"].as_str().unwrap()).join(target);
    assert!(q.is_file(), "{what}: {} not kept", q.display());
}

/// A derived file no longer needed that cannot be made again (its stage's inputs pruned) is
/// moved to quarantine, not a reason to refuse for ever.
fn check_a_file_that_cannot_be_made_again_is_quarantined(f: &Fixture, undamaged: &Captures) {
    let what = "an old seen set whose inputs were pruned";
    let dir = f.scratch.join("old-seen");
    common::copy_dir(&f.base, &dir);
    let c = dragnet::crawl::CrawlDir::new(&dir);
    std::fs::remove_file(c.state_file(0, "seen", 0)).unwrap();
    std::fs::remove_file(c.state_file(0, "urldb", 0)).unwrap();
    let crawl = dragnet::crawl::CrawlDir::new(&f.base);
    let target = crawl
        .state_file(0, "seen", 1)
        .strip_prefix(&f.base)
        .unwrap()
        .to_path_buf();
    damage(&dir, &dir.join(&target), what);
    let r = repair(&dir, what);
    assert!(r["rolled_back_to"].is_null(), "{what}: {r}");
    assert_eq!(r["quarantined"][0][0], serde_json::json!(target), "{r}");
    assert!(!dir.join(&target).exists(), "{what}: still in the crawl");
    assert!(captures(&dir) == *undamaged, "{what}: a capture changed");
    ends_as_wanted(f, &dir, what);
}

/// Damage only a rollback can repair (a host table the fetch wrote, which nothing else holds)
/// rolls the crawl back, and what the rollback takes out of the crawl, the captures of the
/// cycle rolled back included, goes to quarantine whole (listed with sizes by `--dry-run`),
/// never deleted.
#[test]
fn a_rollback_moves_the_captures_to_quarantine() {
    let f = fixture();
    let crawl = dragnet::crawl::CrawlDir::new(&f.base);
    let what = "the newest host table";
    let dir = f.scratch.join("hosts");
    common::copy_dir(&f.base, &dir);
    let target = crawl.state_file(0, "hosts", 2);
    let target = target.strip_prefix(&f.base).unwrap();
    damage(&dir, &dir.join(target), what);
    let dry = dragnet(&["repair", "--dry-run"], &dir);
    let t = text(&dry);
    assert!(
        t.contains("would move cycles/000001/warc") && t.contains("to quarantine"),
        "{t}"
    );
    let r = repair(&dir, what);
    assert_eq!(r["rolled_back_to"].as_u64(), Some(1), "{r}");
    let q = dir.join(r["quarantine"].as_str().unwrap());
    let moved: Vec<(PathBuf, u64)> = serde_json::from_value(r["quarantined"].clone()).unwrap();
    assert!(
        moved.iter().any(|(p, n)| p.ends_with("warc") && *n > 0),
        "{r}"
    );
    // Every WARC byte of the undamaged crawl is in the crawl or in quarantine.
    for (p, b) in captures(&f.base).0 {
        let here = std::fs::read(dir.join(&p)).ok();
        let kept = std::fs::read(q.join(&p)).ok();
        assert!(
            here.as_ref() == Some(&b) || kept.as_ref() == Some(&b),
            "{}: lost",
            p.display()
        );
    }
    ends_as_wanted(&f, &dir, what);
    f.server.stop();
}

#[test]
fn a_damaged_index_or_warc_is_handled_without_a_rollback() {
    let f = fixture();
    let (base, scratch) = (&f.base, &f.scratch);
    let crawl = dragnet::crawl::CrawlDir::new(base);
    let rel = |p: &Path| p.strip_prefix(base).unwrap().to_path_buf();
    let warc = std::fs::read_dir(crawl.warc_dir(0))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| dragnet::warc::Compression::from_name(&p.to_string_lossy()).is_some())
        .unwrap();
    // A damaged CDXJ index, or the archive link, is made again: the same bytes, nothing rolled
    // back.
    let whole = dragnet::ops::index::crawl_index(&crawl);
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
        let dir = scratch.join(what.replace([' ', '\''], "-"));
        common::copy_dir(base, &dir);
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
            common::snapshot(&dir)
                .into_iter()
                .map(|(p, b)| (p.strip_prefix(&dir).unwrap().to_path_buf(), b))
                .eq(common::snapshot(base)
                    .into_iter()
                    .map(|(p, b)| (p.strip_prefix(base).unwrap().to_path_buf(), b))),
            "{what}: the repaired crawl differs from the undamaged one"
        );
    }

    // A WARC of a complete cycle cannot be made again: reported, left, exit 3.
    let dir = scratch.join("old-warc");
    common::copy_dir(base, &dir);
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
    f.server.stop();
}

/// A lost manifest is no licence to change the settings fixed at creation: the crawl is refused
/// (exit 3, naming it) until `dragnet repair` rebuilds it from the crawl's own files, after which
/// a crawl.toml that changed the partition count is a configuration error as before. A crawl
/// whose init predates manifests still opens without one.
#[test]
fn a_lost_manifest_is_refused_and_rebuilt_by_repair() {
    let (web, server) = common::small_web(92, 3, 4);
    let crawl = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(M, 2),
    );
    let dir = crawl.dir.root();
    let manifest = dir.join("manifest.json");
    let good = std::fs::read(&manifest).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    let toml = dir.join("crawl.toml");
    let cfg = std::fs::read_to_string(&toml).unwrap();
    let edited = cfg.replace(&format!("partitions = {M}"), "partitions = 1");
    assert_ne!(edited, cfg, "crawl.toml names its partitions");
    std::fs::write(&toml, &edited).unwrap();
    let before = common::snapshot(dir);
    for cmd in [
        &["cycle", "--progress", "quiet"][..],
        &["status"],
        &["fetch", "--cycle", "0", "--partition", "0"],
    ] {
        let out = dragnet(cmd, dir);
        assert_eq!(out.status.code(), Some(3), "{cmd:?}: {}", text(&out));
        assert!(text(&out).contains("manifest.json"), "{}", text(&out));
    }
    assert!(
        common::snapshot(dir) == before,
        "a refused command changed the crawl"
    );

    let out = dragnet(&["repair"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains(&format!("{M} partitions")) && t.contains("warning: [canon]"),
        "{t}"
    );
    assert_eq!(
        std::fs::read(&manifest).unwrap(),
        good,
        "the manifest init wrote"
    );
    let out = dragnet(&["cycle", "--progress", "quiet"], dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("crawl.partitions"), "{}", text(&out));
    std::fs::write(&toml, &cfg).unwrap();
    let out = dragnet(&["status"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A crawl made before manifests (its init marker says so) opens without one.
    std::fs::remove_file(&manifest).unwrap();
    for p in 0..M {
        let path = crawl.dir.done_path(0, dragnet::crawl::Stage::Init, p);
        let mut m = dragnet::crawl::DoneMarker::read(&path).unwrap().unwrap();
        m.started = "2026-11-01T00:00:00Z".into();
        m.publish(&path).unwrap();
    }
    let out = dragnet(&["status"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    server.stop();
}
