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
    let status = common::ok(dragnet(&["status", "--verbose"], c.dir.root(), &state));
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

    common::ok(dragnet(&["slurm", "submit"], c.dir.root(), &state));
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
    let out = common::ok(dragnet(
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
    common::ok(task());
    let parse = c.dir.done_path(0, Stage::Parse, 0);
    assert!(parse.exists());
    // Killed between the two commits (its node went away): the fetch is done, the parse not.
    std::fs::remove_file(&parse).unwrap();
    // The requeued task parses the partition: no parse array would, and the split waits for it.
    let out = common::ok(task());
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
    let root = init_a_crawl_of_2500_partitions(tmp.path());
    // The parse runs as its own array (`[fetch] parse = false`): five arrays per cycle.
    let out = common::ok(
        Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .args(["slurm", "submit", "--dry-run", "--json", "--cycles", "3"])
            .args(["--binary", "/opt/dragnet/bin/dragnet"])
            .arg(&root)
            .output()
            .unwrap(),
    );
    assert!(!root.join("logs").exists(), "a dry run writes nothing");
    let sub: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = sub["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 5 * 3 + 1);
    for (s, stage) in ["fetch", "parse", "split", "merge", "prioritize"]
        .iter()
        .enumerate()
    {
        check_the_arrays_of_a_stage(jobs, s, stage);
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

/// `dragnet init` in `tmp` of a crawl of 2500 partitions with arrays of at most 1000 tasks, 8
/// at a time, sbatch arguments of its own, and the parse as its own stage. Returns its root.
fn init_a_crawl_of_2500_partitions(tmp: &std::path::Path) -> std::path::PathBuf {
    let seeds = tmp.join("seeds.txt");
    std::fs::write(&seeds, "http://a.example/\nhttp://b.example/\n").unwrap();
    let config = tmp.join("crawl.toml");
    std::fs::write(
        &config,
        "[crawl]\nname = \"big crawl\"\npartitions = 2500\n[slurm]\nmax_array = 1000\n\
         parallel = 8\nargs = [\"--partition=crawl\"]\nfetch_args = [\"--cpus-per-task=4\"]\n\
         [fetch]\nparse = false\n",
    )
    .unwrap();
    let root = tmp.join("crawl");
    common::ok(
        Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .args(["init", "--seeds"])
            .arg(&seeds)
            .arg("--config")
            .arg(&config)
            .arg(&root)
            .output()
            .unwrap(),
    );
    root
}

/// The sbatch arguments of the job `j` of a dry run.
fn argv(j: &serde_json::Value) -> Vec<String> {
    j["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

/// The three arrays of `stage` (the `s`th of the cycle) among the dry run's `jobs`: 1000, 1000
/// and 500 tasks, 8 at a time, with the crawl's sbatch arguments, each task running the stage
/// on its partitions after what it waits for.
fn check_the_arrays_of_a_stage(jobs: &[serde_json::Value], s: usize, stage: &str) {
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
        assert!(a.contains(&"--requeue".to_owned()), "{a:?}");
        // A dry run prints commands to run as they are: not held.
        assert!(!a.contains(&"--hold".to_owned()), "{a:?}");
        check_what_the_array_waits_for(jobs, s, i, stage, &a);
    }
}

/// The merge waits for every array of the split; the parse, split and prioritize of a
/// partition for its task in the array before, the one of the same partitions (`a`: the
/// arguments of array `i` of `stage`, the `s`th).
fn check_what_the_array_waits_for(
    jobs: &[serde_json::Value],
    s: usize,
    i: usize,
    stage: &str,
    a: &[String],
) {
    if stage == "merge" {
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

mod cluster;
