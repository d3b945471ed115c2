//! The Slurm executor (`dragnet slurm`): a crawl to completion through job arrays fetches exactly
//! websim's ground truth, a failed task cancels what depends on it and a second submission runs
//! only what is missing, large crawls are cut into arrays Slurm accepts.
//!
//! Two kinds of Slurm: a stand-in `sbatch` (a shell script, below) that runs each job as it is
//! submitted and cancels jobs whose dependency failed, so the executor's logic is tested on any
//! machine; and the real thing, when a cluster answers here (`.ci/slurm-up` starts a one-node
//! cluster; without one that test says so and passes).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dragnet::crawl::next_cycle;
use dragnet::crawl::Stage;

const M: u32 = 3;

/// A stand-in for `sbatch --parsable`: gives job ids from a counter, runs the `--wrap` command
/// at once (for each array index, with SLURM_ARRAY_TASK_ID set, output to `--output`), and marks
/// a job failed if a task fails; a job with an `afterok` dependency on a failed job is cancelled
/// (marked failed, not run), as `--kill-on-invalid-dep=yes` does, and a task of an array with
/// an `aftercorr` dependency is cancelled if the corresponding task failed or was cancelled.
/// Every call is logged.
const FAKE_SBATCH: &str = r#"#!/usr/bin/env bash
set -u
state=${FAKE_SBATCH_STATE:?}
array=""; deps=""; corr=""; wrap=""; out="/dev/null"
for a in "$@"; do
    case "$a" in
        --array=*) array=${a#--array=} ;;
        --dependency=afterok:*) deps=${a#--dependency=afterok:} ;;
        --dependency=aftercorr:*) corr=${a#--dependency=aftercorr:} ;;
        --wrap=*) wrap=${a#--wrap=} ;;
        --output=*) out=${a#--output=} ;;
    esac
done
printf '%s\n' "$*" >> "$state/calls"
id=$(( $(cat "$state/next" 2>/dev/null || echo 100) + 1 ))
echo "$id" > "$state/next"
for d in ${deps//:/ }; do
    if [ -e "$state/failed.$d" ]; then touch "$state/failed.$id"; echo "$id"; exit 0; fi
done
run() {
    if [ -n "$corr" ] && [ -e "$state/failed.$corr.$1" ]; then
        touch "$state/failed.$id" "$state/failed.$id.$1"; return
    fi
    local log=${out//%A/$id}; log=${log//%a/$1}; log=${log//%j/$id}
    SLURM_JOB_ID=$id SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$1 sh -c "$wrap" > "$log" 2>&1 \
        || touch "$state/failed.$id" "$state/failed.$id.$1"
}
if [ -n "$array" ]; then
    range=${array%%\%*}
    for i in $(seq 0 "${range#0-}"); do run "$i"; done
else
    run ""
fi
echo "$id"
"#;

fn fake_sbatch(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-sbatch");
    std::fs::write(&path, FAKE_SBATCH).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    // `scontrol` beside it (the executor looks it up there): logs its arguments. The stand-in
    // sbatch runs jobs at once, so releasing them (they are submitted held) changes nothing.
    let scontrol = dir.join("scontrol");
    std::fs::write(
        &scontrol,
        "#!/bin/sh\necho \"$*\" >> \"${FAKE_SBATCH_STATE:?}/scontrol\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&scontrol, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(dir.join("sbatch-state")).unwrap();
    path
}

fn dragnet(args: &[&str], dir: &Path, state: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .arg(dir)
        .env("FAKE_SBATCH_STATE", state)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `out`, after checking the command succeeded (its stderr in the message if not).
fn ok(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every job log the chain wrote, whole.
fn whole_logs(root: &Path) -> String {
    let mut out = String::new();
    for dir in std::fs::read_dir(root.join("logs/slurm"))
        .into_iter()
        .flatten()
    {
        for f in std::fs::read_dir(dir.unwrap().path()).into_iter().flatten() {
            out.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap_or_default());
        }
    }
    out
}

/// Every job log the chain wrote (their last lines), for failure messages.
fn logs(root: &Path) -> String {
    let mut out = String::new();
    let Ok(cycles) = std::fs::read_dir(root.join("logs/slurm")) else {
        return out;
    };
    let mut files: Vec<PathBuf> = cycles
        .flat_map(|c| std::fs::read_dir(c.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        out.push_str(&format!("== {}\n", f.display()));
        for l in tail.into_iter().rev() {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_crawl_through_simulated_slurm_fetches_exactly_the_ground_truth() {
    let (web, server) = common::small_web(71, 8, 12);
    let work = tempfile::tempdir().unwrap();
    let mut cfg = common::websim_config(M, 2);
    cfg.slurm.sbatch = fake_sbatch(work.path()).display().to_string();
    cfg.slurm.parallel = 2;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let state = work.path().join("sbatch-state");

    let out = dragnet(
        &["slurm", "submit", "--until-empty", "--max-cycles", "30"],
        c.dir.root(),
        &state,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}\n{}", logs(c.dir.root()));
    assert!(err.contains("cycle 0 ("), "{err}");
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);

    // The chain ran to the end by itself: the last cycle's finish found empty fetch lists.
    let last = next_cycle(&c.dir, M);
    assert!(last >= 3, "a crawl of a few cycles, got {last}");
    assert_eq!(dragnet::exec::fetch_list_size(&c.dir, last, M).unwrap(), 0);
    let calls = std::fs::read_to_string(state.join("calls")).unwrap();
    // Per cycle: four arrays (the fetch parses as pages arrive: no parse array) and a finish
    // job; every job but the fetch waits for the one before it (a cycle is submitted by the
    // finish job of the one before, once that is complete): the split and the prioritize of a
    // partition for that partition's task before them, the merge and the finish for all.
    assert_eq!(calls.lines().count() as u32, 5 * last, "{calls}");
    assert!(!calls.contains("--stage parse"), "{calls}");
    // Each cycle's jobs were submitted held, then released together once recorded.
    let released = std::fs::read_to_string(state.join("scontrol")).unwrap();
    assert_eq!(released.lines().count() as u32, last, "{released}");
    for line in released.lines() {
        assert!(
            line.starts_with("release ") && line.matches(',').count() == 4,
            "{line}"
        );
    }
    for line in calls.lines() {
        let per_partition = line.contains("-split ") || line.contains("-prioritize ");
        assert_eq!(
            line.contains("--dependency=afterok:"),
            !line.contains("-fetch ") && !per_partition,
            "{line}"
        );
        assert_eq!(
            line.contains("--dependency=aftercorr:"),
            per_partition,
            "{line}"
        );
        assert!(
            line.contains(" --requeue ") && line.contains(" --hold "),
            "{line}"
        );
        if line.contains("--array=") {
            assert!(line.contains("--array=0-2%2 "), "{line}");
        }
    }
    assert!(std::fs::read_dir(c.dir.root().join("logs/slurm/c000000"))
        .unwrap()
        .any(|e| e.unwrap().file_name() == "submitted.jsonl"));
    assert!(c.dir.root().join("metrics.prom").exists());
    assert!(!c.dir.lock_path().exists());
    // `dragnet status` shows the newest submission: the summary its cycle, `--verbose` its jobs.
    let status = ok(dragnet(&["status", "--verbose"], c.dir.root(), &state));
    let status = String::from_utf8_lossy(&status.stdout);
    let lines: Vec<&str> = status.lines().filter(|l| l.starts_with("slurm ")).collect();
    let [summary, dump] = lines[..] else {
        panic!("{status}")
    };
    assert!(
        summary.contains(&format!("cycle {:06} submitted", last - 1)),
        "{summary}"
    );
    assert!(
        dump.contains(&format!("cycle {} submitted", last - 1)) && dump.contains(", finish "),
        "{dump}"
    );

    let got = common::fetched_urls(&c.dir, M, last);
    let should = common::truth_fetched(&web);
    let missed: Vec<_> = should.difference(&got).collect();
    let extra: Vec<_> = got.difference(&should).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "missed {missed:?}\nextra {extra:?}"
    );
}

#[test]
fn a_failed_task_cancels_what_depends_on_it_and_a_resubmit_runs_only_what_is_missing() {
    let (web, server) = common::small_web(53, 6, 10);
    let work = tempfile::tempdir().unwrap();
    let mut cfg = common::websim_config(M, 2);
    cfg.slurm.sbatch = fake_sbatch(work.path()).display().to_string();
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let state = work.path().join("sbatch-state");
    // Damage partition 1's fetch list (keep a copy to repair it).
    let list = c.dir.fetchlist(0, 1);
    let good = common::flip_middle_byte(&list);

    ok(dragnet(&["slurm", "submit"], c.dir.root(), &state));
    let failed = dragnet::crawl::failed::read_failed(&c.dir, Stage::Fetch, 0, 1)
        .unwrap()
        .expect("the failed task leaves a .failed marker");
    assert!(failed.error.contains("p0001.run"), "{}", failed.error);
    for p in [0, 2] {
        assert!(
            c.dir.done_path(0, Stage::Fetch, p).exists(),
            "fetch p{p} kept"
        );
    }
    for p in 0..M {
        // The fetches that ran parsed their pages as they came, and their partitions' splits
        // ran (aftercorr); the split of partition 1 was cancelled, and with it the merge.
        assert_eq!(
            c.dir.done_path(0, Stage::Parse, p).exists(),
            p != 1,
            "parse of p{p}"
        );
        assert_eq!(
            c.dir.done_path(0, Stage::Split, p).exists(),
            p != 1,
            "split of p{p}"
        );
        assert!(!c.dir.done_path(0, Stage::Merge, p).exists());
    }
    assert_eq!(next_cycle(&c.dir, M), 0);

    // Repaired, a second submission runs only the missing fetch, then the rest of the cycle.
    std::fs::write(&list, &good).unwrap();
    let before = std::fs::read_to_string(state.join("calls"))
        .unwrap()
        .lines()
        .count();
    let out = ok(dragnet(
        &["slurm", "submit", "--json"],
        c.dir.root(),
        &state,
    ));
    let sub: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = sub["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["what"], "fetch");
    assert_eq!(jobs[0]["partitions"], "1");
    // No parse array: the fetch of partition 1 parses its pages as they come; only its split
    // is missing, then the merge and prioritize of every partition.
    assert_eq!(jobs[1]["what"], "split");
    assert_eq!(jobs[1]["partitions"], "1");
    assert_eq!(jobs[2]["what"], "merge");
    assert_eq!(jobs[2]["partitions"], "0-2");
    let calls = std::fs::read_to_string(state.join("calls")).unwrap();
    assert_eq!(calls.lines().count() - before, 5);
    assert_eq!(next_cycle(&c.dir, M), 1, "{}", logs(c.dir.root()));
    assert!(
        dragnet::crawl::failed::read_failed(&c.dir, Stage::Fetch, 0, 1)
            .unwrap()
            .is_none()
    );
    // The chain was one cycle: nothing of cycle 1 was submitted.
    assert!(!c.dir.done_path(1, Stage::Fetch, 0).exists());
    server.stop();
}

#[test]
fn a_fetch_task_run_again_after_its_fetch_committed_parses_the_partition() {
    let (web, server) = common::small_web(53, 6, 10);
    let c = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(M, 2),
    );
    let task = || {
        Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .args([
                "slurm", "task", "--worker", "--stage", "fetch", "--cycle", "0",
            ])
            .args(["--partitions", "0-2"])
            .arg(c.dir.root())
            .env("SLURM_ARRAY_TASK_ID", "0")
            .output()
            .unwrap()
    };
    // The fetch of partition 0 parses its pages as they come ([fetch] parse).
    ok(task());
    let parse = c.dir.done_path(0, Stage::Parse, 0);
    assert!(parse.exists());
    // Killed between the two commits (its node went away): the fetch is done, the parse not.
    std::fs::remove_file(&parse).unwrap();
    // The requeued task parses the partition: no parse array would, and the split waits for it.
    let out = ok(task());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("its parse is not: parsing"),
        "{}",
        common::out_text(&out)
    );
    assert!(parse.exists());
    server.stop();
}

#[test]
fn a_large_crawl_is_cut_into_arrays_slurm_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = tmp.path().join("seeds.txt");
    std::fs::write(&seeds, "http://a.example/\nhttp://b.example/\n").unwrap();
    let config = tmp.path().join("crawl.toml");
    std::fs::write(
        &config,
        "[crawl]\nname = \"big crawl\"\npartitions = 2500\n[slurm]\nmax_array = 1000\n\
         parallel = 8\nargs = [\"--partition=crawl\"]\nfetch_args = [\"--cpus-per-task=4\"]\n\
         [fetch]\nparse = false\n",
    )
    .unwrap();
    let root = tmp.path().join("crawl");
    ok(Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["init", "--seeds"])
        .arg(&seeds)
        .arg("--config")
        .arg(&config)
        .arg(&root)
        .output()
        .unwrap());
    // The parse runs as its own array (`[fetch] parse = false`): five arrays per cycle.
    let out = ok(Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["slurm", "submit", "--dry-run", "--json", "--cycles", "3"])
        .args(["--binary", "/opt/dragnet/bin/dragnet"])
        .arg(&root)
        .output()
        .unwrap());
    assert!(!root.join("logs").exists(), "a dry run writes nothing");
    let sub: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = sub["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 5 * 3 + 1);
    let argv = |j: &serde_json::Value| -> Vec<String> {
        j["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    for (s, stage) in ["fetch", "parse", "split", "merge", "prioritize"]
        .iter()
        .enumerate()
    {
        let arrays = &jobs[s * 3..s * 3 + 3];
        let parts: Vec<&str> = arrays
            .iter()
            .map(|j| j["partitions"].as_str().unwrap())
            .collect();
        assert_eq!(parts, ["0-999", "1000-1999", "2000-2499"], "{stage}");
        for (i, j) in arrays.iter().enumerate() {
            assert_eq!(j["what"], *stage);
            let a = argv(j);
            let n = if i == 2 { 499 } else { 999 };
            assert!(a.contains(&format!("--array=0-{n}%8")), "{a:?}");
            assert!(a.contains(&"--partition=crawl".to_owned()), "{a:?}");
            assert_eq!(a.contains(&"--cpus-per-task=4".to_owned()), s == 0, "{a:?}");
            assert!(a.contains(&format!("--job-name=dragnet-big_crawl-c0-{stage}")));
            let wrap = a.last().unwrap();
            assert!(
                wrap.starts_with(&format!(
                    "--wrap=exec /opt/dragnet/bin/dragnet slurm task --stage {stage} --cycle 0 \
                     --partitions {}",
                    parts[i]
                )),
                "{wrap}"
            );
            // The merge waits for every array of the split; the parse, split and prioritize of
            // a partition for its task in the array before, the one of the same partitions.
            assert!(a.contains(&"--requeue".to_owned()), "{a:?}");
            // A dry run prints commands to run as they are: not held.
            assert!(!a.contains(&"--hold".to_owned()), "{a:?}");
            if *stage == "merge" {
                let before: Vec<&str> = jobs[(s - 1) * 3..s * 3]
                    .iter()
                    .map(|j| j["id"].as_str().unwrap())
                    .collect();
                assert!(
                    a.contains(&format!("--dependency=afterok:{}", before.join(":"))),
                    "{a:?}"
                );
            } else if s > 0 {
                let before = jobs[(s - 1) * 3 + i]["id"].as_str().unwrap();
                assert!(
                    a.contains(&format!("--dependency=aftercorr:{before}")),
                    "{a:?}"
                );
            } else {
                assert!(!a.iter().any(|x| x.starts_with("--dependency")), "{a:?}");
            }
        }
    }
    let finish = argv(&jobs[15]);
    assert!(
        finish
            .last()
            .unwrap()
            .contains("slurm finish --cycle 0 --binary /opt/dragnet/bin/dragnet --then-cycles 2 "),
        "{finish:?}"
    );
}

/// Whether a Slurm cluster answers here whose nodes are all this machine (the test's crawl lives
/// in a local temporary directory, and its web on loopback: every node's address is loopback or
/// this host) and can take jobs.
fn cluster_up() -> bool {
    let Ok(out) = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%o %T"])
        .output()
    else {
        return false;
    };
    let me = dragnet::util::hostname();
    let me = me.split('.').next().unwrap_or("");
    let text = String::from_utf8_lossy(&out.stdout);
    let nodes: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    let local = |addr: &str| {
        addr.starts_with("127.")
            || addr == "::1"
            || addr == "localhost"
            || addr.split('.').next() == Some(me)
    };
    out.status.success()
        && !nodes.is_empty()
        && nodes.iter().all(|(addr, _)| local(addr))
        && nodes.iter().any(|(_, state)| {
            ["idle", "mixed", "allocated"].contains(&state.trim().trim_end_matches('*'))
        })
}

/// Whether the cluster runs a job at all: a trivial job submitted must leave the queue within a
/// minute (a node that registers but cannot start jobs is the cluster's problem, not dragnet's).
fn cluster_runs_jobs() -> bool {
    let Ok(out) = Command::new("sbatch")
        .args([
            "--parsable",
            "--job-name=dragnet-probe",
            "--output=/dev/null",
            "--wrap=true",
        ])
        .output()
    else {
        return false;
    };
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_owned();
    if !out.status.success() || id.is_empty() {
        return false;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let q = Command::new("squeue").args(["-h", "-j", &id]).output();
        if q.is_ok_and(|q| q.status.success() && q.stdout.trim_ascii().is_empty()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = Command::new("scancel").arg(&id).status();
    false
}

/// Job names of this crawl still queued or running.
fn queued(name: &str) -> Vec<String> {
    let out = Command::new("squeue")
        .args(["-h", "-o", "%i %j %T"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&format!("dragnet-{name}-")))
        .map(str::to_owned)
        .collect()
}

/// The real-cluster tests share one cluster, and one of them stops a node: one at a time.
static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cluster, to this test alone; the test fails (never passes) if there is none.
fn real_cluster() -> std::sync::MutexGuard<'static, ()> {
    let guard = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    common::require(
        "a Slurm cluster",
        cluster_up(),
        "no cluster of this machine answers `sinfo`; `.ci/slurm-up` starts one",
    );
    common::require(
        "a Slurm cluster",
        cluster_runs_jobs(),
        "the cluster answers but did not run a trivial job in 60 s (see /var/log/slurm)",
    );
    guard
}

/// The web of the real-cluster tests and its configuration (named `name`, for the job names).
fn real_web(
    name: &str,
) -> (
    std::sync::Arc<websim::model::Web>,
    websim::server::Server,
    dragnet::config::Config,
) {
    let (web, server) = common::small_web(29, 6, 8);
    let mut cfg = common::websim_config(M, 2);
    cfg.crawl.name = format!("{name}{}", std::process::id());
    (web, server, cfg)
}

/// Submits the crawl to the cluster until its fetch lists are empty and waits (bounded) until
/// none of its jobs is queued; `meanwhile` is called every 50 ms while jobs are.
fn crawl_through_slurm(c: &common::Crawl, mut meanwhile: impl FnMut()) -> String {
    let name = c.cfg.crawl.name.clone();
    let submitted = ok(common::dragnet_on(
        &["slurm", "submit", "--until-empty", "--max-cycles", "20"],
        c.dir.root(),
    ));
    // The chain ends by itself: poll until none of its jobs is queued (bounded).
    let deadline = Instant::now() + Duration::from_secs(480);
    let mut idle = 0;
    while idle < 2 {
        if Instant::now() > deadline {
            for j in queued(&name) {
                let id = j.split_whitespace().next().unwrap().to_owned();
                let _ = Command::new("scancel").arg(id).status();
            }
            panic!("the chain did not end in time\n{}", logs(c.dir.root()));
        }
        meanwhile();
        std::thread::sleep(Duration::from_millis(50));
        idle = if queued(&name).is_empty() {
            idle + 1
        } else {
            0
        };
    }
    String::from_utf8_lossy(&submitted.stderr).into_owned()
}

/// What the local executor decides for the same web and configuration.
fn local_outcome(web: &websim::model::Web, cfg: &dragnet::config::Config) -> common::Outcome {
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg.clone());
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(20)).unwrap();
    common::outcome(&c.dir, M)
}

/// The crawl ended (its last fetch lists are empty), fetched exactly the truth, and decided what
/// the local executor decides: the same seen sets, URL db (timestamps aside) and fetched set.
fn same_as_local(c: &common::Crawl, web: &websim::model::Web, local: &common::Outcome) {
    let last = next_cycle(&c.dir, M);
    assert_eq!(
        dragnet::exec::fetch_list_size(&c.dir, last, M).unwrap(),
        0,
        "the chain stopped before the crawl was done\n{}",
        logs(c.dir.root())
    );
    let got = common::outcome(&c.dir, M);
    assert_eq!(
        got.fetched,
        common::truth_fetched(web),
        "{}",
        logs(c.dir.root())
    );
    assert!(
        got == *local,
        "the Slurm crawl decided otherwise than the local one\n{}",
        logs(c.dir.root())
    );
}

/// A `dragnet slurm task --worker` process of the crawl (the child that runs a stage).
struct Worker {
    pid: u32,
    /// The node it runs on (`SLURMD_NODENAME`).
    node: String,
    /// The array task whose `SLURM_JOB_ID` is the array's own id (`SLURM_ARRAY_JOB_ID`).
    carries_array_id: bool,
}

/// The crawl's stage processes now running.
fn workers(root: &Path) -> Vec<Worker> {
    let root = root.canonicalize().unwrap();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in procs.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        if !args.contains(&&b"--worker"[..]) || !args.contains(&root.as_os_str().as_encoded_bytes())
        {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        let var = |name: &str| {
            env.split(|&b| b == 0)
                .find_map(|v| v.strip_prefix(format!("{name}=").as_bytes()))
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        out.push(Worker {
            pid,
            node: var("SLURMD_NODENAME").unwrap_or_default(),
            carries_array_id: var("SLURM_JOB_ID").is_some()
                && var("SLURM_JOB_ID") == var("SLURM_ARRAY_JOB_ID"),
        });
    }
    out
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn a_crawl_through_real_slurm_job_arrays() {
    let _cluster = real_cluster();
    let (web, server, cfg) = real_web("arrays");
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let mut nodes = std::collections::BTreeSet::new();
    crawl_through_slurm(&c, || {
        nodes.extend(workers(c.dir.root()).into_iter().map(|w| w.node))
    });
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);
    same_as_local(&c, &web, &local);
    eprintln!("tasks seen running on nodes {nodes:?}");
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn a_task_killed_mid_stage_is_requeued_and_the_crawl_is_unchanged() {
    let _cluster = real_cluster();
    let (web, server, cfg) = real_web("killed");
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // SIGKILL to a stage process (as the kernel's OOM killer would send it): the one of the
    // array task whose job id is the array's own, the case where requeueing by `SLURM_JOB_ID`
    // would requeue the whole array. A stage may end between being seen and the kill: then the
    // next such process seen is killed, until one death shows in the logs.
    const KILLED: &str = "killed by signal 9; requeued job";
    let mut tried = Vec::new();
    crawl_through_slurm(&c, || {
        if whole_logs(c.dir.root()).contains(KILLED) {
            return;
        }
        if let Some(w) = workers(c.dir.root())
            .into_iter()
            .find(|w| w.carries_array_id && !tried.contains(&w.pid))
        {
            let _ = Command::new("kill")
                .args(["-9", &w.pid.to_string()])
                .status();
            tried.push(w.pid);
        }
    });
    server.stop();
    let logs_now = whole_logs(c.dir.root());
    let kills = logs_now.matches(KILLED).count();
    assert!(
        kills >= 1,
        "no stage process was killed and requeued (tried {tried:?})\n{}",
        logs(c.dir.root())
    );
    // Those tasks alone: no other task of their arrays was stopped and run again.
    let requeued = logs_now.matches("DUE TO JOB REQUEUE").count();
    assert!(
        requeued <= kills,
        "{requeued} tasks stopped for {kills} killed\n{}",
        logs(c.dir.root())
    );
    same_as_local(&c, &web, &local);
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn the_held_leftovers_of_an_interrupted_submission_are_cancelled_and_the_cycle_submitted_again() {
    let _cluster = real_cluster();
    let (web, server, cfg) = real_web("interrupted");
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // A submission killed half-way (a `finish` job on a node that went away) leaves jobs of the
    // crawl held in the queue, recorded nowhere.
    let out = ok(Command::new("sbatch")
        .args(["--parsable", "--hold", "--output=/dev/null", "--wrap=true"])
        .arg(format!("--job-name=dragnet-{}-c0-fetch", c.cfg.crawl.name))
        .output()
        .unwrap());
    let stray = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let said = crawl_through_slurm(&c, || {});
    server.stop();
    assert!(
        said.contains("cancelled 1 held job(s)") && said.contains(&stray),
        "{said}"
    );
    let q = Command::new("squeue")
        .args(["-h", "-j", &stray])
        .output()
        .unwrap();
    assert!(
        q.stdout.trim_ascii().is_empty(),
        "the stray job is still queued"
    );
    let last = next_cycle(&c.dir, M);
    assert_eq!(dragnet::exec::fetch_list_size(&c.dir, last, M).unwrap(), 0);
    assert_eq!(
        common::fetched_urls(&c.dir, M, last),
        common::truth_fetched(&web),
        "{}",
        logs(c.dir.root())
    );
}

/// Brings back a node stopped by the test, however the test ends.
struct NodeBack(Option<String>);

impl Drop for NodeBack {
    fn drop(&mut self) {
        if let Some(node) = self.0.take() {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-node");
            let out = Command::new(script).args(["start", &node]).output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) {
                eprintln!("could not bring {node} back: {out:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs the multi-node Slurm cluster of .ci/slurm-up; .ci/run runs it there"]
fn a_node_that_goes_away_mid_cycle_has_its_tasks_run_on_the_others() {
    let _cluster = real_cluster();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-node");
    let nodes = String::from_utf8(
        Command::new("sinfo")
            .args(["-h", "-N", "-o", "%N"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    common::require(
        "the cluster of .ci/slurm-up",
        nodes.lines().filter(|n| n.starts_with("node")).count() >= 2
            && Path::new("/run/slurmd-node1.pid").exists(),
        "this test stops one node of the cluster .ci/slurm-up starts (node1..nodeN, pid files \
         /run/slurmd-nodeK.pid); start it with `.ci/slurm-up`",
    );
    let (web, server, cfg) = real_web("nodeloss");
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // The first node seen running one of the crawl's stages goes away (slurmd and the job's
    // processes killed); it comes back when the chain has ended.
    // (If the stage ended between being seen and the stop, no job process was killed: the node
    // is brought back and the next one seen goes away.)
    let mut back = NodeBack(None);
    let mut lost = false;
    crawl_through_slurm(&c, || {
        if lost {
            return;
        }
        if let Some(node) = workers(c.dir.root())
            .into_iter()
            .map(|w| w.node)
            .find(|n| !n.is_empty())
        {
            let out = Command::new(&script)
                .args(["stop", &node])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", common::out_text(&out));
            back.0 = Some(node);
            lost = !String::from_utf8_lossy(&out.stdout).contains(" and 0 job processes");
            if !lost {
                drop(std::mem::replace(&mut back, NodeBack(None)));
            }
        }
    });
    server.stop();
    let node = back.0.clone().expect("a node running a stage was seen");
    assert!(
        whole_logs(c.dir.root()).contains(", run 2"),
        "no task ran a second time after {node} went away\n{}",
        logs(c.dir.root())
    );
    same_as_local(&c, &web, &local);
    drop(back);
}
