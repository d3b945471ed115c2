//! No command writes over what it must not (issue 30, point 2): every `--out` (export, index,
//! reparse) refuses, with exit 2, a message naming the path and nothing written, a path inside
//! a crawl directory, an input (the same path, a hard link or a symlink to it), a device, a FIFO,
//! a symlink, a directory (a file, for reparse's output directory), and an existing file (an
//! earlier output, for reparse) without `--force`; with `--force` that file is replaced. Each
//! refusal leaves the target as it was (bytes, FIFO, link), no temporary next to it, and the
//! crawl byte for byte as it was.

use crate::common::{self, dragnet};

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A crawl of a small web, one cycle: WARC files, state runs, the manifest and the CDXJ index.
fn crawled() -> common::Crawl {
    let (web, server) = common::small_web(43, 3, 4);
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(1)).unwrap();
    server.stop();
    c
}

/// Every file under `dir`: relative path -> what it is (bytes, link target, or kind).
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            out.insert(rel, state(&p));
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

/// What a path is, to compare before and after: a regular file's bytes (as a digest and
/// length), a link's target, or its kind.
fn state(p: &Path) -> String {
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return "absent".into();
    };
    let t = m.file_type();
    if t.is_symlink() {
        format!("symlink to {}", std::fs::read_link(p).unwrap().display())
    } else if t.is_file() {
        let bytes = std::fs::read(p).unwrap();
        format!(
            "file of {} bytes, xxh3 {:016x}, inode {}",
            bytes.len(),
            xxhash_rust::xxh3::xxh3_64(&bytes),
            m.ino()
        )
    } else if t.is_dir() {
        "directory".into()
    } else if t.is_fifo() {
        "fifo".into()
    } else if t.is_char_device() {
        "character device".into()
    } else {
        "other".into()
    }
}

/// The directory a refusal must leave as it was: the target's own (or its nearest existing
/// ancestor's).
fn watched_dir(target: &Path) -> PathBuf {
    let mut d = target.parent().unwrap().to_path_buf();
    while !d.exists() {
        d = d.parent().unwrap().to_path_buf();
    }
    d
}

/// Runs `args` (with `--out target` in them), expects exit 2 with `target` and `why` in the
/// message, and the target and its directory's listing as they were.
fn refused(args: &[&Path], target: &Path, why: &str) {
    let dir = watched_dir(target);
    let before = state(target);
    let listing = (dir != Path::new("/dev")).then(|| tree_top(&dir));
    let out = dragnet(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        common::out_text(&out)
    );
    assert!(
        err.contains(&target.display().to_string()) && err.contains(why),
        "{args:?}: the message should name {} and say {why:?}: {err}",
        target.display()
    );
    assert_eq!(
        state(target),
        before,
        "{args:?} changed {}",
        target.display()
    );
    if let Some(listing) = listing {
        assert_eq!(
            tree_top(&dir),
            listing,
            "{args:?} left something in {}",
            dir.display()
        );
    }
}

/// A directory's entries (not recursive) with what each is.
fn tree_top(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                state(&p),
            )
        })
        .collect()
}

/// The first file under `dir` whose name satisfies `pred`.
fn find(dir: &Path, pred: impl Fn(&str) -> bool) -> PathBuf {
    let t = tree(dir);
    let rel = t
        .keys()
        .find(|p| pred(&p.file_name().unwrap().to_string_lossy()))
        .unwrap_or_else(|| panic!("no such file under {}: {t:?}", dir.display()));
    dir.join(rel)
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// The files of a crawl an output must never replace, and new names inside it.
fn crawl_targets(root: &Path) -> Vec<PathBuf> {
    vec![
        root.join("crawl.toml"),
        root.join("manifest.json"),
        find(root, |n| n.contains(".warc")),
        root.join("indexes/index.cdxj"),
        find(&root.join("state"), |n| {
            n.starts_with("seen.") && n.ends_with(".run")
        }),
        root.join("new-output"),
        root.join("cycles/new-output"),
    ]
}

/// Dangerous targets outside any crawl, made in `t`: (target, what the message says).
fn outside_targets(t: &Path) -> Vec<(PathBuf, &'static str)> {
    let file = t.join("some-file");
    std::fs::write(&file, b"precious").unwrap();
    let link = t.join("link-to-file");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let fifo = t.join("fifo");
    mkfifo(&fifo);
    let dir = t.join("some-dir");
    std::fs::create_dir(&dir).unwrap();
    vec![
        (PathBuf::from("/dev/null"), "character device"),
        (fifo, "FIFO"),
        (link, "symbolic link"),
        (dir, "directory"),
        (file, "--force"),
    ]
}

#[test]
fn export_refuses_every_dangerous_out_and_replaces_a_file_only_with_force() {
    let c = crawled();
    let root = c.dir.root().to_path_buf();
    let t = c.tmp.path().join("outside");
    std::fs::create_dir(&t).unwrap();
    // A configuration to start crawls from does not make its directory a crawl.
    std::fs::write(t.join("crawl.toml"), "# a template\n").unwrap();
    let crawl_before = tree(&root);
    let export = |out: &Path, force: bool| -> Vec<PathBuf> {
        let mut a: Vec<PathBuf> = ["export", "--what", "pages", "--format", "jsonl", "--out"]
            .iter()
            .map(PathBuf::from)
            .collect();
        a.push(out.to_path_buf());
        if force {
            a.push("--force".into());
        }
        a.push(root.clone());
        a
    };
    let run = |out: &Path, force: bool, why: &str| {
        let a = export(out, force);
        let a: Vec<&Path> = a.iter().map(PathBuf::as_path).collect();
        refused(&a, out, why);
    };
    for target in crawl_targets(&root) {
        run(&target, false, "inside the crawl directory");
        run(&target, true, "inside the crawl directory");
    }
    // The crawl reached through a symlink and through `..`.
    let via = t.join("via-link");
    std::os::unix::fs::symlink(&root, &via).unwrap();
    run(&via.join("pages.jsonl"), true, "inside the crawl directory");
    run(
        &root.join("cycles/../pages.jsonl"),
        true,
        "inside the crawl directory",
    );
    // The input itself: the crawl directory.
    run(&root, true, "input");
    for (target, why) in outside_targets(&t) {
        run(&target, false, why);
        if why != "--force" {
            run(&target, true, why);
        }
    }
    run(&t.join("no-such-dir/pages.jsonl"), true, "does not exist");
    assert!(!t.join("no-such-dir").exists());
    assert_eq!(tree(&root), crawl_before, "the crawl changed");

    // A new file is written; an existing one is replaced with --force only.
    let out = t.join("pages.jsonl");
    common::ok(dragnet(
        &export(&out, false)
            .iter()
            .map(PathBuf::as_path)
            .collect::<Vec<_>>(),
    ));
    let rows = std::fs::read(&out).unwrap();
    assert!(!rows.is_empty());
    let file = t.join("some-file");
    common::ok(dragnet(
        &export(&file, true)
            .iter()
            .map(PathBuf::as_path)
            .collect::<Vec<_>>(),
    ));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        rows,
        "--force replaces the file"
    );
    assert!(
        tree_top(&t).keys().all(|n| !n.contains(".tmp.")),
        "a temporary was left: {:?}",
        tree_top(&t)
    );
    assert_eq!(tree(&root), crawl_before, "the crawl changed");
}

#[test]
fn index_refuses_every_dangerous_out_and_replaces_a_file_only_with_force() {
    let c = crawled();
    let root = c.dir.root().to_path_buf();
    let t = c.tmp.path().join("outside");
    std::fs::create_dir(&t).unwrap();
    let warc = find(&root, |n| n.contains(".warc"));
    let input = t.join("input.warc.zst");
    std::fs::copy(&warc, &input).unwrap();
    let crawl_before = tree(&root);
    let index = |inputs: &[&Path], out: &Path, force: bool| -> Vec<PathBuf> {
        let mut a: Vec<PathBuf> = vec!["index".into(), "--warc".into()];
        a.extend(inputs.iter().map(|p| p.to_path_buf()));
        a.push("--out".into());
        a.push(out.to_path_buf());
        if force {
            a.push("--force".into());
        }
        a
    };
    let run = |inputs: &[&Path], out: &Path, force: bool, why: &str| {
        let a = index(inputs, out, force);
        let a: Vec<&Path> = a.iter().map(PathBuf::as_path).collect();
        refused(&a, out, why);
    };
    for target in crawl_targets(&root) {
        run(&[&warc], &target, false, "inside the crawl directory");
        run(&[&input], &target, true, "inside the crawl directory");
    }
    // The input itself, a hard link to it, a symlink to it.
    run(&[&input], &input, true, "input");
    run(&[&warc, &input], &input, true, "input");
    let hard = t.join("hard.warc.zst");
    std::fs::hard_link(&input, &hard).unwrap();
    run(&[&input], &hard, true, "same file as the input");
    let sym = t.join("sym.warc.zst");
    std::os::unix::fs::symlink(&input, &sym).unwrap();
    run(&[&input], &sym, true, "symbolic link");
    for (target, why) in outside_targets(&t) {
        run(&[&input], &target, false, why);
        if why != "--force" {
            run(&[&input], &target, true, why);
        }
    }
    assert_eq!(tree(&root), crawl_before, "the crawl changed");

    // A new file; an existing one replaced with --force only.
    let out = t.join("index.cdxj");
    common::ok(dragnet(
        &index(&[&input], &out, false)
            .iter()
            .map(PathBuf::as_path)
            .collect::<Vec<_>>(),
    ));
    let cdxj = std::fs::read(&out).unwrap();
    assert!(!cdxj.is_empty());
    let file = t.join("some-file");
    common::ok(dragnet(
        &index(&[&input], &file, true)
            .iter()
            .map(PathBuf::as_path)
            .collect::<Vec<_>>(),
    ));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        cdxj,
        "--force replaces the file"
    );
    assert!(
        tree_top(&t).keys().all(|n| !n.contains(".tmp.")),
        "a temporary was left: {:?}",
        tree_top(&t)
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(&warc).unwrap()
    );
}

#[test]
fn reparse_refuses_every_dangerous_out_dir_and_replaces_its_own_output_only_with_force() {
    let c = crawled();
    let root = c.dir.root().to_path_buf();
    let t = c.tmp.path().join("outside");
    std::fs::create_dir(&t).unwrap();
    let warc = find(&root, |n| n.contains(".warc"));
    let inputs = t.join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let input = inputs.join("input.warc.zst");
    std::fs::copy(&warc, &input).unwrap();
    let crawl_before = tree(&root);
    check_reparse_refuses_places_in_the_crawl(&root, &warc, &input);
    check_reparse_refuses_inputs_links_and_what_is_not_its_own(&t, &inputs, &input);
    assert_eq!(tree(&root), crawl_before, "the crawl changed");
    check_reparse_replaces_its_own_output_only_with_force(&t, &input);
}

/// `dragnet reparse --warc INPUT --out OUT [--force]`.
fn reparse_args(input: &Path, out: &Path, force: bool) -> Vec<PathBuf> {
    let mut a: Vec<PathBuf> = vec!["reparse".into(), "--warc".into(), input.into()];
    a.push("--out".into());
    a.push(out.to_path_buf());
    if force {
        a.push("--force".into());
    }
    a
}

/// [`refused`], for `dragnet reparse` of `input` into `out`.
fn reparse_refused(input: &Path, out: &Path, force: bool, why: &str) {
    let a = reparse_args(input, out, force);
    let a: Vec<&Path> = a.iter().map(PathBuf::as_path).collect();
    refused(&a, out, why);
}

/// Inside a crawl (at `root`): the crawl itself, a directory of it, a file of it, new names in
/// it. `warc` is a WARC file of the crawl, `input` a copy of it outside.
fn check_reparse_refuses_places_in_the_crawl(root: &Path, warc: &Path, input: &Path) {
    reparse_refused(input, root, true, "crawl directory");
    reparse_refused(
        warc,
        &root.join("indexes"),
        true,
        "inside the crawl directory",
    );
    reparse_refused(
        input,
        &root.join("cycles/000000"),
        true,
        "inside the crawl directory",
    );
    for target in crawl_targets(root) {
        reparse_refused(input, &target, true, "inside the crawl directory");
    }
    reparse_refused(
        input,
        &root.join("new/deeper"),
        true,
        "inside the crawl directory",
    );
}

/// The input's directory (`inputs`, it holds the input), the input itself, a link to a
/// directory, the dangerous targets outside a crawl (in `t`) and a directory with a file of
/// someone else's.
fn check_reparse_refuses_inputs_links_and_what_is_not_its_own(
    t: &Path,
    inputs: &Path,
    input: &Path,
) {
    reparse_refused(input, inputs, true, "holds the input");
    reparse_refused(input, input, true, "input");
    let link = t.join("link-to-dir");
    std::fs::create_dir(t.join("empty")).unwrap();
    std::os::unix::fs::symlink(t.join("empty"), &link).unwrap();
    reparse_refused(input, &link, true, "symbolic link");
    for (target, why) in outside_targets(t) {
        let why = match why {
            "directory" => continue, // an empty directory is a fine output directory
            "--force" => "not a directory",
            w => w,
        };
        reparse_refused(input, &target, true, why);
    }
    let full = t.join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("notes.txt"), b"mine").unwrap();
    reparse_refused(input, &full, true, "notes.txt");
}

/// A new directory (and its parents); an empty one; an earlier output replaced with --force
/// only, and nothing else in it; no temporary left in `t`.
fn check_reparse_replaces_its_own_output_only_with_force(t: &Path, input: &Path) {
    let args = |out: &Path, force: bool| reparse_args(input, out, force);
    let ok = |a: Vec<PathBuf>| {
        common::ok(dragnet(&a.iter().map(PathBuf::as_path).collect::<Vec<_>>()));
    };
    let out = t.join("new/reparsed");
    ok(args(&out, false));
    let names: Vec<String> = tree_top(&out).into_keys().collect();
    assert_eq!(names, ["links.run", "pages.run", "reparse.json"]);
    ok(args(&t.join("some-dir"), false));
    assert_eq!(tree_top(&t.join("some-dir")).len(), 3);
    let first = tree(&out);
    reparse_refused(input, &out, false, "--force");
    assert_eq!(tree(&out), first);
    let mut a = args(&out, true);
    a.push("--text".into());
    ok(a);
    let names: Vec<String> = tree_top(&out).into_keys().collect();
    assert_eq!(
        names,
        [
            "links.run",
            "pages.run",
            "reparse.json",
            "text-000001.warc.wet.zst"
        ]
    );
    ok(args(&out, true));
    let names: Vec<String> = tree_top(&out).into_keys().collect();
    assert_eq!(
        names,
        ["links.run", "pages.run", "reparse.json"],
        "the old WET file went"
    );
    assert!(
        tree(t)
            .keys()
            .all(|p| !p.to_string_lossy().contains(".tmp.")),
        "a temporary was left: {:?}",
        tree(t)
    );
}
