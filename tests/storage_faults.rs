//! Storage fault injection (docs/RELIABILITY.md, campaign 3): one cycle of a websim crawl, with
//! the Nth storage operation of the process failing (EIO or ENOSPC, through the debug build's
//! `DRAGNET_FAULT` hook in `storage::fault`). For each N: the cycle fails (exit 4, cycle
//! incomplete, when a partition's stage failed; 3 for the cycle's own files) with an error
//! naming the file and the cause, nothing committed is lost or damaged (`dragnet check crawl` finds
//! nothing wrong), and the next run, without a fault, ends the cycle with the same decisions as a
//! cycle that never failed.
//!
//! The default run sweeps a sample of N spread over the whole cycle; the full sweep over every
//! operation is `#[ignore]`d and run by `.ci/run`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

const M: u32 = 2;

/// `dragnet ARGS DIR` with `env`.
fn dragnet(args: &[&str], dir: &Path, env: &[(&str, String)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dragnet"));
    c.args(args).arg(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    common::out_text(o)
}

const CYCLE: &[&str] = &["cycle", "--max-cycles", "1", "--progress", "quiet"];

/// What the sweep found for one N.
#[derive(Debug, Default)]
struct Sweep {
    cases: usize,
    failed_runs: usize,
    /// Faults that came after the cycle's last commit (the run completed the cycle).
    after_commit: usize,
    by_op: std::collections::BTreeMap<String, usize>,
}

/// Where two outcomes differ, briefly.
fn diff(got: &common::Outcome, want: &common::Outcome) -> String {
    let mut out = Vec::new();
    for p in 0..got.seen.len() {
        if got.seen[p] != want.seen[p] {
            out.push(format!(
                "p{p} seen: {} vs {} fingerprints",
                got.seen[p].len(),
                want.seen[p].len()
            ));
        }
        for (fp, w) in &want.urldb[p] {
            match got.urldb[p].get(fp) {
                Some(g) if g == w => {}
                g => out.push(format!("p{p} url {fp:x}: got {g:?}, want {w:?}")),
            }
        }
        for fp in got.urldb[p]
            .keys()
            .filter(|k| !want.urldb[p].contains_key(k))
        {
            out.push(format!("p{p} url {fp:x}: extra {:?}", got.urldb[p][fp]));
        }
    }
    if got.fetched != want.fetched {
        out.push(format!(
            "fetched: {:?} vs {:?}",
            got.fetched
                .symmetric_difference(&want.fetched)
                .collect::<Vec<_>>(),
            ()
        ));
    }
    out.truncate(12);
    out.join("\n")
}

/// Sweeps the faults `at` over one cycle of a fresh crawl each, and checks each (module docs).
fn sweep(full: bool) -> Sweep {
    let (web, server) = common::small_web(61, 4, 8);
    let template = common::websim_crawl(&web, &common::websim_homes(&web), {
        let mut cfg = common::websim_config(M, 2);
        cfg.prioritize.block = 16;
        cfg
    });
    let root = template.dir.root().to_path_buf();
    let scratch = tempfile::tempdir().unwrap();
    let (want, ops) = reference(&root, scratch.path());
    let total = ops.len() as u64;
    let mut s = Sweep::default();
    for (i, &n) in fault_points(full, &ops).iter().enumerate() {
        let kind = if i % 2 == 0 { "eio" } else { "enospc" };
        fail_once_and_recover(&root, scratch.path(), n, kind, &want, &mut s);
    }
    server.stop();
    eprintln!(
        "storage faults: {} operations in the cycle, {} faults injected, {} runs failed (exit 3 \
         or 4) and recovered, {} came after the cycle's last commit, by operation: {:?}",
        total, s.cases, s.failed_runs, s.after_commit, s.by_op
    );
    s
}

/// The reference: the cycle of a copy of the crawl at `root` without a fault, its operations
/// counted and logged. Returns its outcome and its storage operations (the lines of the log).
fn reference(root: &Path, scratch: &Path) -> (common::Outcome, Vec<String>) {
    let reference = scratch.join("reference");
    common::copy_dir(root, &reference);
    let log = scratch.join("ops.log");
    let out = dragnet(
        CYCLE,
        &reference,
        &[("DRAGNET_FAULT_LOG", log.display().to_string())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let want = common::outcome(&dragnet::crawl::CrawlDir::new(&reference), M);
    let ops: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let total = ops.len() as u64;
    assert!(
        total > 100,
        "a cycle does more than {total} storage operations"
    );
    (want, ops)
}

/// The operations to fail: every one (`full`), or a sample spread over the cycle `ops`.
fn fault_points(full: bool, ops: &[String]) -> Vec<u64> {
    let total = ops.len() as u64;
    if full {
        // DRAGNET_FAULT_FROM=N resumes a sweep at N (to look at one failure again).
        let from = std::env::var("DRAGNET_FAULT_FROM")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        (from..=total).collect()
    } else {
        // 24 points spread over the cycle, and the first of each kind of operation.
        let mut p: Vec<u64> = (0..24).map(|i| 1 + i * total / 24).collect();
        for kind in [
            " fsync ",
            " rename ",
            " fsync directory ",
            " create directory ",
        ] {
            if let Some(i) = ops.iter().position(|l| l.contains(kind)) {
                p.push(i as u64 + 1);
            }
        }
        p.sort_unstable();
        p.dedup();
        p
    }
}

/// One case of the sweep: the cycle of a copy of the crawl at `root` with operation `n` failing
/// with `kind` fails cleanly (or completes, the fault coming after its last commit), the crawl
/// checks clean, and the next run ends the cycle as `want`. Counts it in `s`.
fn fail_once_and_recover(
    root: &Path,
    scratch: &Path,
    n: u64,
    kind: &str,
    want: &common::Outcome,
    s: &mut Sweep,
) {
    let dir = scratch.join(format!("fault-{n}"));
    common::copy_dir(root, &dir);
    let flog = scratch.join(format!("fault-{n}.log"));
    let out = dragnet(
        CYCLE,
        &dir,
        &[
            ("DRAGNET_FAULT", format!("{n}:{kind}")),
            ("DRAGNET_FAULT_LOG", flog.display().to_string()),
        ],
    );
    // The operation that failed (operations of threads interleave differently in every run,
    // so the Nth is not always the reference's Nth).
    let failed = std::fs::read_to_string(&flog)
        .unwrap_or_default()
        .lines()
        .find(|l| l.split(' ').next() == Some(&n.to_string()))
        .map(str::to_owned);
    let what = format!("fault {n} ({kind}) at {failed:?}");
    s.cases += 1;
    if let Some(f) = &failed {
        // `N op path`: the op may have a space ("fsync directory"), the path starts with /.
        let op = f
            .split_once(' ')
            .and_then(|(_, rest)| rest.split_once(" /"))
            .map_or("?", |(op, _)| op)
            .to_owned();
        *s.by_op.entry(op).or_default() += 1;
    }
    check_the_failure(&out, kind, &dir, &what, s);
    check_the_recovery(out, &dir, want, &what, s);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The faulted run `out` (in `dir`) failed naming the cause and the file, or completed.
fn check_the_failure(out: &Output, kind: &str, dir: &Path, what: &str, s: &mut Sweep) {
    match out.status.code() {
        // 3: an I/O error outside the partitions' stages (the lock, the cycle's own files);
        // 4: a partition's stage failed with it, the cycle is incomplete (the stage alone,
        // `dragnet fetch ...`, exits 3).
        Some(3 | 4) => {
            s.failed_runs += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            let cause = if kind == "eio" {
                "Input/output error"
            } else {
                "No space left on device"
            };
            assert!(err.contains(cause), "{what}: {}", text(out));
            // The error names the file (its path in the crawl directory).
            assert!(
                err.contains(&dir.display().to_string()),
                "{what}: the error names no file: {}",
                text(out)
            );
        }
        // The fault hit after the cycle's work was committed, where a failure is only
        // reported (or the run did fewer operations than N this time).
        Some(0) => {}
        _ => panic!("{what}: {}", text(out)),
    }
}

/// After the faulted run `out`: nothing committed in `dir` is damaged, and the next run ends
/// the cycle (unless the fault came after its last commit: then there is nothing left to do),
/// with the same decisions as `want`.
fn check_the_recovery(out: Output, dir: &Path, want: &common::Outcome, what: &str, s: &mut Sweep) {
    let check = dragnet(&["check", "crawl"], dir, &[]);
    assert_eq!(check.status.code(), Some(0), "{what}: {}", text(&check));
    let crawl = dragnet::crawl::CrawlDir::new(dir);
    let mut again = out;
    if dragnet::crawl::next_cycle(&crawl, M) == 0 {
        again = dragnet(CYCLE, dir, &[]);
        assert_eq!(again.status.code(), Some(0), "{what}: {}", text(&again));
    } else {
        s.after_commit += 1;
    }
    assert_eq!(dragnet::crawl::next_cycle(&crawl, M), 1, "{what}");
    let got = common::outcome(&crawl, M);
    assert!(
        got == *want,
        "{what}: the cycle ended differently: {}\n{}",
        diff(&got, want),
        text(&again)
    );
}

#[test]
fn a_storage_fault_anywhere_in_a_cycle_fails_it_cleanly_and_the_next_run_recovers() {
    let s = sweep(false);
    assert!(
        s.failed_runs * 2 >= s.cases,
        "most faults must fail the run: {s:?}"
    );
}

#[test]
#[ignore = "the full sweep (every storage operation of a cycle, several minutes): .ci/run runs it"]
fn every_storage_operation_of_a_cycle_fails_once_and_the_next_run_recovers() {
    let s = sweep(true);
    assert!(s.failed_runs * 2 >= s.cases, "{s:?}");
}
