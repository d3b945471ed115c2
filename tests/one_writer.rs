//! One writer, always (issue 30, point 4): `dragnet unlock --force` never removes the lock of a
//! live holder (its OS lock proves it alive) and still clears a dead one's; every command that
//! writes a crawl, a stage run by hand included, is busy (exit 5, nothing done) while another
//! process holds the lock or the crawl's Slurm jobs are queued; a cycle with a failed partition
//! exits 4, never 0, and a stage whose `.done` exists never gets a `.failed` beside it.

use crate::common::{self, dragnet_on as dragnet};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use dragnet::crawl::{CrawlDir, CrawlLock, Stage};

const BIN: &str = env!("CARGO_BIN_EXE_dragnet");

fn text(o: &Output) -> String {
    common::out_text(o)
}

/// Every file under `dir` but the lock, with its size and modification time, and every
/// directory: what "nothing done" compares.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
                out.insert(path, (0, std::time::SystemTime::UNIX_EPOCH));
                continue;
            }
            if path.file_name().is_some_and(|n| n == "lock") {
                continue;
            }
            out.insert(path, (meta.len(), meta.modified().unwrap()));
        }
    }
    out
}

/// A crawl of `web` with `partitions`, a slow one (`delay` between two requests to a host) if
/// asked.
fn crawl(web: &websim::model::Web, partitions: u32, delay: f64) -> common::Crawl {
    let mut cfg = common::websim_config(partitions, 2);
    cfg.fetch.default_delay_secs = delay;
    cfg.crawl.name = "one-writer".into();
    common::websim_crawl(web, &common::websim_homes(web), cfg)
}

/// A live `dragnet cycle` holds the lock: `unlock --force` refuses it (exit 5, naming its pid
/// and command, saying to wait or stop it), and so does a stage run by hand; once the cycle is
/// killed (kill -9: its lock file stays), `unlock --force` clears the dead holder's lock.
#[test]
fn unlock_force_refuses_a_live_cycles_lock_and_clears_a_dead_ones() {
    let (web, server) = common::small_web(81, 4, 30);
    let c = crawl(&web, 2, 0.25);
    let dir = c.dir.root().to_path_buf();
    let log = c.tmp.path().join("cycle.log");
    let mut cycle = Command::new(BIN)
        .args(["cycle", "--until-empty", "--progress", "log"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while dragnet::crawl::read_lock(&dir).ok().flatten().is_none() {
        assert!(cycle.try_wait().unwrap().is_none(), "the cycle ended early");
        assert!(Instant::now() < deadline, "the cycle took no lock in 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    let held = dragnet::crawl::read_lock(&dir).unwrap().unwrap();
    assert_eq!(held.pid, cycle.id());

    for args in [&["unlock", "--force"][..], &["unlock"][..]] {
        let out = dragnet(args, &dir);
        let err = text(&out);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {err}");
        assert!(
            err.contains(&format!("pid {}", cycle.id()))
                && err.contains("`cycle`")
                && err.contains("wait for it")
                && err.contains("stop that process"),
            "{args:?}: {err}"
        );
        assert_eq!(
            dragnet::crawl::read_lock(&dir).unwrap().as_ref(),
            Some(&held),
            "the live lock stays"
        );
    }
    // A stage by hand beside the running cycle: busy, nothing done (it would fetch partition 1
    // beside the cycle's own fetch of it).
    let out = dragnet(&["fetch", "--cycle", "0", "--partition", "1"], &dir);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert!(text(&out).contains("already running"), "{}", text(&out));

    // kill -9: the lock file stays, its OS lock dies with the holder.
    cycle.kill().unwrap();
    cycle.wait().unwrap();
    assert!(dir.join("lock").exists());
    let out = dragnet(&["unlock", "--force"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("removed the lock of pid {}", held.pid)),
        "{}",
        text(&out)
    );
    assert!(!dir.join("lock").exists());
    // The crawl goes on from where the killed cycle stopped.
    let out = dragnet(&["cycle", "--until-empty", "--progress", "quiet"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    server.stop();
    let got = common::outcome(&c.dir, 2).fetched;
    assert_eq!(got, common::truth_fetched(&web));
}

/// While another process holds the crawl's lock, every command that writes the crawl exits 5
/// and changes nothing: the five stages by hand, `cycle`, `inject`, `repair`, `repartition` and
/// `slurm submit`.
#[test]
fn every_writing_command_is_busy_while_another_process_holds_the_lock() {
    let (web, server) = common::small_web(82, 3, 4);
    let c = crawl(&web, 2, 0.0);
    let dir = c.dir.root().to_path_buf();
    let seeds = c.tmp.path().join("more-seeds.txt");
    std::fs::write(&seeds, format!("{}\n", common::websim_homes(&web)[0])).unwrap();
    let new_dir = c.tmp.path().join("repartitioned");
    // Another process (this test, as a running cycle would) holds the lock and its OS lock.
    let held = CrawlLock::acquire(&dir, "cycle").unwrap();
    let before = snapshot(&dir);
    let seeds_arg = seeds.to_str().unwrap().to_owned();
    let new_arg = new_dir.to_str().unwrap().to_owned();
    let mut commands: Vec<Vec<&str>> = Vec::new();
    for stage in ["fetch", "parse", "split", "merge", "prioritize"] {
        commands.push(vec![stage, "--cycle", "0", "--partition", "0"]);
    }
    commands.push(vec!["cycle"]);
    commands.push(vec!["inject", "--seeds", &seeds_arg]);
    commands.push(vec!["repair"]);
    commands.push(vec!["slurm", "submit"]);
    for args in &commands {
        let out = dragnet(args, &dir);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("pid {}", std::process::id())),
            "{args:?} names the holder: {}",
            text(&out)
        );
        assert_eq!(snapshot(&dir), before, "{args:?} changed the crawl");
    }
    // `repartition DIR NEWDIR` only reads DIR, but holds its lock: busy too, NEWDIR not made.
    let out = Command::new(BIN)
        .args(["repartition", "--partitions", "3"])
        .arg(&dir)
        .arg(&new_arg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert!(!new_dir.exists());
    assert_eq!(snapshot(&dir), before);
    assert_eq!(
        dragnet::crawl::read_lock(&dir).unwrap().as_ref(),
        Some(held.info())
    );
    drop(held);
    // Released: the stage by hand runs.
    let out = dragnet(&["fetch", "--cycle", "0", "--partition", "0"], &dir);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    assert!(c.dir.done_path(0, Stage::Fetch, 0).exists());
    assert!(!dir.join("lock").exists(), "the stage released the lock");
    server.stop();
}

/// A stage by hand refuses while the crawl's Slurm jobs are queued (as `dragnet cycle` does):
/// a Slurm task may be running it on a node. The queue is a stand-in `squeue` beside
/// `[slurm] sbatch`.
#[test]
fn a_stage_by_hand_is_busy_while_the_crawls_slurm_jobs_are_queued() {
    use std::os::unix::fs::PermissionsExt;
    let (web, server) = common::small_web(83, 3, 4);
    let c = crawl(&web, 2, 0.0);
    let dir = c.dir.root().to_path_buf();
    let bin = c.tmp.path().join("slurm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let squeue = bin.join("squeue");
    std::fs::write(
        &squeue,
        "#!/bin/sh\necho '4242 dragnet-one-writer-c000000-fetch None'\n",
    )
    .unwrap();
    std::fs::set_permissions(&squeue, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cfg = c.cfg.clone();
    cfg.slurm.sbatch = bin.join("sbatch").display().to_string();
    std::fs::write(c.dir.config_path(), cfg.to_toml()).unwrap();
    // The crawl was submitted: its job log directory exists.
    std::fs::create_dir_all(dir.join(&cfg.slurm.log_dir)).unwrap();
    let before = snapshot(&dir);
    for args in [
        &["fetch", "--cycle", "0", "--partition", "0"][..],
        &["cycle"][..],
    ] {
        let out = dragnet(args, &dir);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("4242"), "{args:?}: {}", text(&out));
        assert_eq!(snapshot(&dir), before, "{args:?} changed the crawl");
        assert!(!dir.join("lock").exists(), "{args:?} released the lock");
    }
    server.stop();
}

/// The operations of a `dragnet cycle` on a copy of `template` as `DRAGNET_FAULT_LOG` lists
/// them, with `fault` injected; returns the run and the log's lines.
fn run_logged(template: &Path, dir: &Path, fault: Option<u64>) -> (Output, Vec<String>) {
    common::copy_dir(template, dir);
    let log = dir.with_extension("ops");
    let mut cmd = Command::new(BIN);
    cmd.args(["cycle", "--progress", "quiet"])
        .arg(dir)
        .env("DRAGNET_FAULT_LOG", &log);
    if let Some(n) = fault {
        cmd.env("DRAGNET_FAULT", format!("{n}:eio"));
    }
    let out = cmd.output().unwrap();
    let ops = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    (out, ops)
}

/// The number of the operation that fsyncs the prioritize directory just after prioritize's
/// `.done` marker of `p` was renamed into place: the last step of its commit.
fn after_prioritize_commit(ops: &[String], p: u32) -> Option<u64> {
    let marker = format!("/prioritize/.p{p:04}.done");
    let i = ops
        .iter()
        .position(|l| l.contains(" rename ") && l.contains(&marker))?;
    let next = ops.get(i + 1)?;
    next.contains(" fsync directory ")
        .then(|| next.split(' ').next()?.parse().ok())
        .flatten()
}

/// The reported run: a stage failed with its `.done` already committed (there, by a second
/// cycle beside the first; here, by an I/O error on the directory fsync after the marker's
/// rename). It printed FAILED, left `prioritize/p0000.failed` beside the `.done`, and exited 0.
/// Now: exit 4, and no `.failed` beside a `.done`; the next run goes on.
#[test]
fn a_stage_that_fails_after_its_commit_exits_4_with_no_failed_marker_beside_its_done() {
    let (web, server) = common::small_web(84, 3, 4);
    let mut cfg = common::websim_config(1, 1);
    cfg.crawl.name = "one-writer".into();
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let scratch = tempfile::tempdir().unwrap();
    let (out, ops) = run_logged(c.dir.root(), &scratch.path().join("reference"), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut n = after_prioritize_commit(&ops, 0).expect("the reference commits prioritize");
    // Threads may order operations differently from run to run: aim again from the run's own
    // log until the fault lands on that fsync.
    let mut landed = None;
    for attempt in 0..5 {
        let dir = scratch.path().join(format!("fault-{attempt}"));
        let (out, ops) = run_logged(c.dir.root(), &dir, Some(n));
        match after_prioritize_commit(&ops, 0) {
            Some(m) if m == n => {
                landed = Some((dir, out));
                break;
            }
            Some(m) => n = m,
            None => panic!("no prioritize commit in the faulty run: {}", text(&out)),
        }
    }
    let (dir, out) = landed.expect("the fault never landed on the fsync after the marker");
    let crawl = CrawlDir::new(&dir);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        text(&out).contains("Input/output error") && text(&out).contains("prioritize"),
        "{}",
        text(&out)
    );
    assert!(crawl.done_path(0, Stage::Prioritize, 0).exists());
    assert!(
        !crawl.failed_path(0, Stage::Prioritize, 0).exists(),
        "a .failed beside the .done"
    );
    // The cycle is committed: the next run starts cycle 1.
    let again = dragnet(&["cycle", "--progress", "quiet"], &dir);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(crawl.done_path(1, Stage::Fetch, 0).exists());
    server.stop();
}

/// A partition whose stage fails: the cycle exits 4 with the failure named, the partition's
/// `.failed` marker says why, and the other partition's work is kept.
#[test]
fn a_cycle_with_a_failed_partition_exits_4() {
    let (web, server) = common::small_web(85, 4, 4);
    let c = crawl(&web, 2, 0.0);
    let dir = c.dir.root().to_path_buf();
    // Partition 1's state directory is a file: its fetch cannot write there and fails.
    let state = c.dir.state_dir(1);
    if state.exists() {
        std::fs::remove_dir_all(&state).unwrap();
    }
    std::fs::write(&state, "in the way").unwrap();
    let out = dragnet(&["cycle", "--progress", "quiet"], &dir);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        text(&out).contains("fetch of partition 1 failed"),
        "{}",
        text(&out)
    );
    assert!(c.dir.failed_path(0, Stage::Fetch, 1).exists());
    assert!(c.dir.done_path(0, Stage::Fetch, 0).exists());
    server.stop();
}
