//! The Slurm executor (design: executors): a cycle as job arrays on a cluster.
//!
//! `dragnet slurm submit DIR` submits one cycle as five job arrays, one per stage, each task
//! running one partition (`dragnet slurm task`), each array depending on the one before it with
//! `--dependency=afterok` and `--kill-on-invalid-dep=yes` (a failed task cancels what depends on
//! it instead of leaving it pending forever), then one small job, `dragnet slurm finish`, that
//! ends the cycle as the local executor does ([`super::after_cycle`]: `metrics.prom`, old
//! state pruned) and, if more cycles were asked for (`--cycles K`, `--until-empty`), submits the
//! next cycle. So a chain of cycles needs one `sbatch` on the login node and keeps going by
//! itself; nothing of dragnet runs between jobs, and Slurm does the scheduling, requeueing and
//! accounting. The crawl directory must be on a filesystem every node mounts.
//!
//! Only (stage, partition) pairs without a `.done` marker are submitted, so after a failure
//! `dragnet slurm submit` again (or `dragnet cycle` on one machine) runs only what is missing;
//! each stage's own commit protocol makes a task killed half-way invisible. A task that fails
//! leaves the same `.failed` marker as under the local executor, so `dragnet status` shows it.
//!
//! Partitions to tasks: an array's task index is not the partition number but an index into the
//! list of partitions the array runs (given to the task on its command line as ranges), so a
//! crawl of M = 4,096 partitions fits Slurm's default `MaxArraySize` of 1,001: arrays hold at
//! most `[slurm] max_array` tasks, and a stage of more partitions is several arrays, all of which
//! the next stage waits for. `[slurm] parallel` caps the tasks of one array that run at once
//! (`--array=...%K`); Slurm's own resources decide the rest (WebGather's two-stage mapping: host
//! -> partition by hash, partition -> machine by the scheduler).

mod retry;
#[cfg(test)]
mod tests;

use crate::crawl::queued::{
    beside_sbatch, cancel_interrupted, job_name_part, queued_jobs, refuse_if_queued,
};
pub use retry::{requeue, supervise, TaskEnv};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::{after_cycle, fetch_list_size, EarlyEnd};
use crate::config::Config;
use crate::config::SlurmSection;
use crate::crawl::next_cycle;
use crate::crawl::submissions::{log_root, record_submission};
use crate::crawl::{CrawlDir, Stage, StageReport};
use crate::error::{Error, IoContext, Result, EXIT_IO, EXIT_RETRY};
use crate::fetch::{FetchOptions, ProgressMode};
use crate::ops::stage::run_stage;

/// What happens after the submitted cycle's `finish` job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// Submit this many more cycles, one after another.
    Cycles(u32),
    /// Submit the next cycle while the fetch lists are not empty, at most this many more.
    UntilEmpty(u32),
}

impl Then {
    /// The chain after one more cycle, or `None` if it ends (`next_fetch_list`: URLs in the next
    /// cycle's fetch lists).
    pub fn next(self, next_fetch_list: u64) -> Option<Then> {
        match self {
            Then::Cycles(n) if n > 0 => Some(Then::Cycles(n - 1)),
            Then::UntilEmpty(n) if n > 0 && next_fetch_list > 0 => Some(Then::UntilEmpty(n - 1)),
            _ => None,
        }
    }

    fn args(self) -> Vec<String> {
        match self {
            Then::Cycles(n) => vec!["--then-cycles".into(), n.to_string()],
            Then::UntilEmpty(n) => {
                vec!["--until-empty".into(), "--max-cycles".into(), n.to_string()]
            }
        }
    }
}

/// How to submit.
#[derive(Debug, Clone)]
pub struct SubmitOptions {
    /// What the cycle's `finish` job does next.
    pub then: Then,
    /// Print the `sbatch` commands instead of running them.
    pub dry_run: bool,
    /// The `dragnet` the jobs run, as the nodes see it (default: this executable).
    pub binary: PathBuf,
}

/// One `sbatch` call.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    /// The stage, or `finish`.
    pub what: String,
    /// The job id Slurm gave (in a dry run, a placeholder).
    pub id: String,
    /// The partitions the array runs, as ranges (`0-3,7`); empty for `finish`.
    pub partitions: String,
    /// The `sbatch` arguments.
    pub argv: Vec<String>,
}

/// What `dragnet slurm submit` did.
#[derive(Debug, Clone, Serialize)]
pub struct Submission {
    /// The cycle submitted.
    pub cycle: u32,
    /// URLs in its fetch lists.
    pub fetch_list: u64,
    /// The jobs, in submission order (the last is `finish`); empty if nothing was submitted.
    pub jobs: Vec<Job>,
    /// Why nothing was submitted, if so.
    pub nothing: Option<String>,
}

/// Submits the next cycle of the crawl (the first whose prioritize is not done everywhere) as
/// job arrays, only the (stage, partition) pairs without `.done`; see the module docs.
///
/// `dragnet slurm submit` holds the crawl lock while it submits (a dry run only looks at it), so
/// it and a local run exclude each other: a `dragnet cycle` or a stage by hand that starts after
/// it sees the jobs in the queue (they are queued before the lock is released) and refuses.
pub fn submit(crawl: &CrawlDir, cfg: &Config, opts: &SubmitOptions) -> Result<Submission> {
    if opts.dry_run {
        refuse_if_locked(crawl, false)?;
        return submit_unlocked(crawl, cfg, opts);
    }
    let lock = crate::crawl::CrawlLock::acquire_with_lease(
        crawl.root(),
        SUBMIT_LOCK,
        cfg.cycle.lock_lease(),
    )?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    let r = submit_unlocked(crawl, cfg, opts);
    drop(lock);
    r
}

/// The command a `dragnet slurm submit` names in the crawl lock it holds.
const SUBMIT_LOCK: &str = "slurm submit";

/// For what a Slurm job does to the crawl (`finish`, and the submission it makes): refuses
/// (exit 5) while a local run holds the crawl lock, without taking it. A Slurm job does not hold
/// the lock: the Slurm queue guards it (a local run refuses to start while the crawl's jobs are
/// queued), and a lock it left when its node went away would name a host nobody can check,
/// stopping the chain until someone ran `dragnet unlock --force`. A dead local run's lock is
/// taken over and released (logged), as the next cycle would. With `in_chain`, a live `dragnet
/// slurm submit` holding the lock is no conflict: the job belongs to the chain it submits (a
/// stand-in sbatch runs jobs while it submits).
fn refuse_if_locked(crawl: &CrawlDir, in_chain: bool) -> Result<()> {
    match crate::crawl::probe_lock(crawl.root())? {
        // A dead local run's lock: taken over and released (logged), as the next cycle would.
        Some((_, crate::crawl::Holder::Gone)) => {
            let lock = crate::crawl::CrawlLock::acquire(crawl.root(), SUBMIT_LOCK)?;
            if let Some(note) = lock.took_over() {
                eprintln!("dragnet: {note}");
            }
        }
        Some((lock, crate::crawl::Holder::Alive)) if in_chain && lock.command == SUBMIT_LOCK => {}
        Some((lock, _)) => {
            return Err(lock.locked(format!(
                "{} is locked by `{}` (pid {} on {}, since {}): a local run works on the crawl; \
                 submit to Slurm when it has finished",
                crawl.root().display(),
                lock.command,
                lock.pid,
                lock.host,
                lock.started
            )));
        }
        None => {}
    }
    Ok(())
}

/// [`submit`] once the crawl lock is dealt with.
fn submit_unlocked(crawl: &CrawlDir, cfg: &Config, opts: &SubmitOptions) -> Result<Submission> {
    let name = job_name_part(&cfg.crawl.name);
    if !opts.dry_run {
        let queued = queued_jobs(&cfg.slurm, &name, true);
        let queued = cancel_interrupted(crawl, cfg, queued)?;
        refuse_if_queued(cfg, queued)?;
    }
    let m = cfg.crawl.partitions;
    let cycle = next_cycle(crawl, m);
    let fetch_list = fetch_list_size(crawl, cycle, m)?;
    let mut sub = Submission {
        cycle,
        fetch_list,
        jobs: Vec::new(),
        nothing: None,
    };
    if matches!(opts.then, Then::UntilEmpty(_)) && fetch_list == 0 {
        sub.nothing = Some(format!("the fetch lists of cycle {cycle} are empty"));
        return Ok(sub);
    }
    let root = absolute(crawl.root())?;
    let log_dir = log_root(&root, cfg).join(format!("c{cycle:06}"));
    if !opts.dry_run {
        std::fs::create_dir_all(&log_dir).ctx("create", &log_dir)?;
    }
    let cycle_jobs = CycleJobs {
        crawl,
        cfg,
        opts,
        name,
        cycle,
        root,
        log_dir,
    };
    let after = cycle_jobs.stages(&mut sub)?;
    cycle_jobs.finish(&after, &mut sub)?;
    if !opts.dry_run {
        // Every job was submitted held: nothing runs until the whole cycle is in the queue and
        // recorded. A submission interrupted before this point (a `finish` job killed with its
        // node) leaves only held jobs that no record names, which the next submission cancels
        // (`cancel_interrupted`) before submitting again.
        record_submission(&cycle_jobs.log_dir, &sub)?;
        release(&cfg.slurm, &sub.jobs)?;
    }
    Ok(sub)
}

/// The jobs of one cycle's submission, and what they all share.
struct CycleJobs<'a> {
    crawl: &'a CrawlDir,
    cfg: &'a Config,
    opts: &'a SubmitOptions,
    /// The crawl's name as job names carry it.
    name: String,
    cycle: u32,
    /// The crawl directory, absolute (as the nodes see it).
    root: PathBuf,
    /// Where the cycle's jobs write their logs.
    log_dir: PathBuf,
}

impl CycleJobs<'_> {
    /// Submits the job arrays of every stage, each waiting for the stage before it; returns
    /// the arrays of the last stage that had any (what `finish` waits for).
    fn stages(&self, sub: &mut Submission) -> Result<Vec<String>> {
        let s = &self.cfg.slurm;
        // The arrays of the last stage that had any, and the partitions they run: a stage of the
        // same partitions may wait for them task by task (see `Dependency`).
        let mut after: Vec<String> = Vec::new();
        let mut after_list: Vec<u32> = Vec::new();
        for stage in Stage::CYCLE {
            let pending = self.pending(stage);
            // Parse, split and prioritize of p read only p's output of the stage before, so
            // task i may start when task i of that stage's array is done, if both arrays run the
            // same partitions in the same order; merge of p reads every partition's split.
            let per_partition = s.per_partition
                && matches!(stage, Stage::Parse | Stage::Split | Stage::Prioritize)
                && !pending.is_empty()
                && pending == after_list;
            let mut ids = Vec::new();
            for (k, chunk) in pending.chunks(s.max_array as usize).enumerate() {
                let dep = if per_partition {
                    Dependency::Corresponding(&after[k])
                } else {
                    Dependency::All(&after)
                };
                let id = self.array(stage, chunk, dep, ids.len(), sub)?;
                ids.push(id);
            }
            if !ids.is_empty() {
                after = ids;
                after_list = pending;
            }
        }
        Ok(after)
    }

    /// The partitions `stage` still has to run in the cycle.
    fn pending(&self, stage: Stage) -> Vec<u32> {
        let (crawl, cycle) = (self.crawl, self.cycle);
        // A fetch that parses as pages arrive (`[fetch] parse`) commits the partition's parse
        // too: no parse task for a partition whose fetch is still to run (its task parses it
        // even when a killed run left the fetch done and the parse not, see `task`).
        (0..self.cfg.crawl.partitions)
            .filter(|&p| !crawl.done_path(cycle, stage, p).exists())
            .filter(|&p| {
                stage != Stage::Parse
                    || !self.cfg.fetch.parse
                    || crawl.done_path(cycle, Stage::Fetch, p).exists()
            })
            .collect()
    }

    /// Submits array `n` of `stage`, one task for each partition of `chunk`; returns its id.
    fn array(
        &self,
        stage: Stage,
        chunk: &[u32],
        dep: Dependency<'_>,
        n: usize,
        sub: &mut Submission,
    ) -> Result<String> {
        let (s, name, cycle) = (&self.cfg.slurm, &self.name, self.cycle);
        let list = ranges(chunk);
        let array = format!(
            "0-{}{}",
            chunk.len() - 1,
            if s.parallel > 0 {
                format!("%{}", s.parallel)
            } else {
                String::new()
            }
        );
        let extra = if stage == Stage::Fetch {
            &s.fetch_args[..]
        } else {
            &[]
        };
        let cmd = [
            self.opts.binary.display().to_string(),
            "slurm".into(),
            "task".into(),
            "--stage".into(),
            stage.name().into(),
            "--cycle".into(),
            cycle.to_string(),
            "--partitions".into(),
            list.clone(),
            self.root.display().to_string(),
        ];
        let argv = job_argv(
            !self.opts.dry_run,
            &format!("dragnet-{name}-c{cycle}-{stage}"),
            Some(&array),
            &self.log_dir.join(format!("{stage}-%A_%a.log")),
            dep,
            s.args.iter().chain(extra),
            &cmd,
        );
        let id = sbatch(s, &argv, self.opts.dry_run, &format!("{stage}-{n}"))?;
        sub.jobs.push(Job {
            what: stage.name().into(),
            id: id.clone(),
            partitions: list,
            argv,
        });
        Ok(id)
    }

    /// Submits the cycle's `finish` job, waiting for the arrays `after`.
    fn finish(&self, after: &[String], sub: &mut Submission) -> Result<()> {
        let (s, name, cycle, opts) = (&self.cfg.slurm, &self.name, self.cycle, self.opts);
        let mut cmd = vec![
            opts.binary.display().to_string(),
            "slurm".into(),
            "finish".into(),
            "--cycle".into(),
            cycle.to_string(),
            "--binary".into(),
            opts.binary.display().to_string(),
        ];
        cmd.extend(opts.then.args());
        cmd.push(self.root.display().to_string());
        let argv = job_argv(
            !opts.dry_run,
            &format!("dragnet-{name}-c{cycle}-finish"),
            None,
            &self.log_dir.join("finish-%j.log"),
            Dependency::All(after),
            s.args.iter(),
            &cmd,
        );
        let id = sbatch(s, &argv, opts.dry_run, "finish")?;
        sub.jobs.push(Job {
            what: "finish".into(),
            id,
            partitions: String::new(),
            argv,
        });
        Ok(())
    }
}

/// `scontrol release` of every job of a submission (they were submitted held).
fn release(s: &SlurmSection, jobs: &[Job]) -> Result<()> {
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    let scontrol = beside_sbatch(s, "scontrol");
    let list = ids.join(",");
    let failed = |why: String| Error::External {
        program: scontrol.display().to_string(),
        message: format!(
            "the cycle's jobs were submitted held, and `{} release {list}` failed ({why}): \
             release them by hand with that command, or cancel them (`scancel {}`) and submit \
             again",
            scontrol.display(),
            ids.join(" ")
        ),
    };
    match Command::new(&scontrol).args(["release", &list]).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(failed(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) => Err(failed(e.to_string())),
    }
}

/// What a job waits for.
#[derive(Debug, Clone, Copy)]
enum Dependency<'a> {
    /// Every task of every one of these jobs (`afterok`); nothing if empty.
    All(&'a [String]),
    /// Task i of this array job waits for task i of that one (`aftercorr`).
    Corresponding(&'a str),
}

/// The `sbatch` arguments of one job: its name, array, log file, held (`--hold`: a real
/// submission releases its jobs once all are queued and recorded; a dry run prints them without),
/// dependency (the job is
/// cancelled if what it waits for fails), requeueable (Slurm runs it again elsewhere when its
/// node fails, and the task asks for it after a transient failure), the configured `args`, and
/// `cmd` as its script.
fn job_argv<'a>(
    held: bool,
    job_name: &str,
    array: Option<&str>,
    output: &Path,
    after: Dependency<'_>,
    args: impl Iterator<Item = &'a String>,
    cmd: &[String],
) -> Vec<String> {
    let mut argv = vec!["--parsable".to_owned(), format!("--job-name={job_name}")];
    if let Some(a) = array {
        argv.push(format!("--array={a}"));
    }
    argv.push(format!("--output={}", output.display()));
    if held {
        argv.push("--hold".into());
    }
    // A requeued job appends to its log: the run before and why it ended stay readable.
    argv.push("--requeue".into());
    argv.push("--open-mode=append".into());
    let dependency = match after {
        Dependency::All([]) => None,
        Dependency::All(ids) => Some(format!("afterok:{}", ids.join(":"))),
        Dependency::Corresponding(id) => Some(format!("aftercorr:{id}")),
    };
    if let Some(d) = dependency {
        argv.push(format!("--dependency={d}"));
        argv.push("--kill-on-invalid-dep=yes".into());
    }
    argv.extend(args.cloned());
    argv.push(format!("--wrap=exec {}", shell_words(cmd)));
    argv
}

/// Runs `sbatch ARGV` and returns the job id it prints (`--parsable`: `id` or `id;cluster`).
fn sbatch(s: &SlurmSection, argv: &[String], dry_run: bool, placeholder: &str) -> Result<String> {
    if dry_run {
        return Ok(format!("<{placeholder}>"));
    }
    let out = Command::new(&s.sbatch)
        .args(argv)
        .output()
        .map_err(|e| Error::External {
            program: s.sbatch.clone(),
            message: format!(
                "cannot run `{}` ({e}): is Slurm installed here? Set [slurm] sbatch in crawl.toml \
                 to its path, or submit from a node that has it",
                s.sbatch
            ),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let id = stdout.trim().split(';').next().unwrap_or("").trim();
    if !out.status.success() || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::External {
            program: s.sbatch.clone(),
            message: format!(
                "`{} {}` failed ({}): {}{}; jobs submitted before it are still queued (`squeue`)",
                s.sbatch,
                argv.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                stdout.trim()
            ),
        });
    }
    Ok(id.to_owned())
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(p).ctx("resolve", p)
}

/// Words quoted for `sh` (the `--wrap` script).
fn shell_words(words: &[String]) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        if !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./,=:@%+".contains(&b))
        {
            s.push_str(w);
        } else {
            s.push('\'');
            s.push_str(&w.replace('\'', "'\\''"));
            s.push('\'');
        }
    }
    s
}

/// Partition numbers (ascending) as ranges: `0-3,7,9-10`.
pub fn ranges(ps: &[u32]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < ps.len() {
        let mut j = i;
        while j + 1 < ps.len() && ps[j + 1] == ps[j] + 1 {
            j += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if i == j {
            let _ = write!(s, "{}", ps[i]);
        } else {
            let _ = write!(s, "{}-{}", ps[i], ps[j]);
        }
        i = j + 1;
    }
    s
}

/// The partitions of a ranges list (see [`ranges`]).
pub fn parse_ranges(s: &str) -> Result<Vec<u32>> {
    let bad = || {
        Error::Usage(format!(
            "--partitions {s:?}: expected ascending partition numbers and ranges such as 0-3,7"
        ))
    };
    let mut out: Vec<u32> = Vec::new();
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        if a > b || out.last().is_some_and(|&l| l >= a) {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// `dragnet slurm task`: runs `stage` of `cycle` for the partition this array task stands for
/// (`SLURM_ARRAY_TASK_ID` indexes `partitions`), recording `.done` or `.failed` as any executor.
pub fn task(
    crawl: &CrawlDir,
    cfg: &Config,
    stage: Stage,
    cycle: u32,
    partitions: &str,
) -> Result<(u32, StageReport)> {
    let list = parse_ranges(partitions)?;
    let index: usize = std::env::var("SLURM_ARRAY_TASK_ID")
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| {
            Error::Usage(
                "SLURM_ARRAY_TASK_ID is not set: `dragnet slurm task` runs as a Slurm array task; \
                 to run one partition by hand, use `dragnet <stage> --cycle N --partition P`"
                    .into(),
            )
        })?;
    let p = *list.get(index).ok_or_else(|| {
        Error::Usage(format!(
            "array task {index} is past the {} partitions {partitions}",
            list.len()
        ))
    })?;
    let m = cfg.crawl.partitions;
    if p >= m {
        return Err(Error::Usage(format!(
            "partition {p} is out of range: the crawl has {m} partitions"
        )));
    }
    let env = TaskEnv::from_env();
    eprintln!(
        "slurm task {}_{index}: {stage} of cycle {cycle}, partition {p}, on node {} (host {}), \
         run {}",
        std::env::var("SLURM_ARRAY_JOB_ID").unwrap_or_default(),
        std::env::var("SLURMD_NODENAME").unwrap_or_default(),
        crate::util::hostname(),
        env.restarts + 1
    );
    let fetch = FetchOptions {
        progress: ProgressMode::Log,
        ..FetchOptions::default()
    };
    let r = run_stage(crawl, cfg, stage, cycle, p, &fetch)?;
    // A fetch that parses as pages arrive (`[fetch] parse`) owns the partition's parse: no parse
    // array runs it, and the split of p starts when this task ends (aftercorr). A run of this
    // task killed between the two commits (its node went away) left the fetch done and the
    // parse not; the requeued run finds the fetch done and parses the partition's WARCs.
    if stage == Stage::Fetch && cfg.fetch.parse && !crawl.done_path(cycle, Stage::Parse, p).exists()
    {
        eprintln!("slurm task: the fetch of partition {p} is done, its parse is not: parsing");
        run_stage(crawl, cfg, Stage::Parse, cycle, p, &fetch)?;
    }
    Ok((p, r))
}

/// What `dragnet slurm finish` did.
#[derive(Debug, Clone, Serialize)]
pub struct Finish {
    /// The cycle ended.
    pub cycle: u32,
    /// URLs in the next cycle's fetch lists.
    pub next_fetch_list: u64,
    /// The next cycle's submission, if the chain goes on.
    pub next: Option<Submission>,
}

/// `dragnet slurm finish`: ends `cycle` (which must be complete) as the local executor does, then
/// submits the next cycle if `then` says so.
pub fn finish(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    then: Then,
    binary: PathBuf,
) -> Result<Finish> {
    // A local run must not be working on the crawl; the Slurm queue guards the rest.
    refuse_if_locked(crawl, true)?;
    let m = cfg.crawl.partitions;
    let missing: Vec<u32> = (0..m)
        .filter(|&p| !crawl.done_path(cycle, Stage::Prioritize, p).exists())
        .collect();
    if !missing.is_empty() {
        return Err(Error::NotReady(format!(
            "cycle {cycle} is not complete: prioritize has not finished partitions {}; \
             `dragnet status {}` shows what failed, and `dragnet slurm submit` submits what is \
             missing",
            ranges(&missing),
            crawl.root().display()
        )));
    }
    after_cycle(crawl, cfg, cycle, true, EarlyEnd::default(), &|line| {
        eprintln!("slurm finish: {line}")
    });
    let next_fetch_list = fetch_list_size(crawl, cycle + 1, m)?;
    // This job run again (requeued after its node went away) after it had submitted the next
    // cycle: the chain goes on already.
    let recorded = log_root(crawl.root(), cfg)
        .join(format!("c{:06}", cycle + 1))
        .join("submitted.jsonl")
        .is_file();
    let next = match then.next(next_fetch_list) {
        Some(_) if recorded => {
            eprintln!(
                "slurm finish: cycle {} was submitted already (its submitted.jsonl exists)",
                cycle + 1
            );
            None
        }
        Some(then) => Some(submit_unlocked(
            crawl,
            cfg,
            &SubmitOptions {
                then,
                dry_run: false,
                binary,
            },
        )?),
        None => None,
    };
    Ok(Finish {
        cycle,
        next_fetch_list,
        next,
    })
}
