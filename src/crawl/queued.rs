//! The crawl's jobs in Slurm's queue (`squeue`): what the local executor and a stage by hand
//! refuse to run beside, and what a submission finds left by an interrupted one (held jobs no
//! recorded submission names, which it cancels).

use std::process::Command;

use crate::config::cycle::SlurmSection;
use crate::config::Config;
use crate::crawl::submissions::log_root;
use crate::crawl::CrawlDir;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// For the local executor: an error if the crawl has been submitted to Slurm (its job log
/// directory exists) and jobs of it are still in the queue, as two executors must not run the
/// same stages at once. A crawl never submitted costs nothing here (no `squeue` call).
pub fn check_no_jobs_queued(crawl: &CrawlDir, cfg: &Config) -> Result<()> {
    if !log_root(crawl.root(), cfg).is_dir() {
        return Ok(());
    }
    refuse_if_queued(
        cfg,
        queued_jobs(&cfg.slurm, &job_name_part(&cfg.crawl.name), false),
    )
}

/// Job ids of every submission recorded for the crawl (`submitted.jsonl` of every cycle).
fn recorded_job_ids(crawl: &CrawlDir, cfg: &Config) -> std::collections::BTreeSet<String> {
    let mut ids = std::collections::BTreeSet::new();
    for dir in std::fs::read_dir(log_root(crawl.root(), cfg))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(dir.path().join("submitted.jsonl")) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            for j in v["submission"]["jobs"].as_array().into_iter().flatten() {
                if let Some(id) = j["id"].as_str() {
                    ids.insert(id.to_owned());
                }
            }
        }
    }
    ids
}

/// Cancels the leftovers of an interrupted submission among the crawl's `queued` jobs: held
/// (a submission holds its jobs until it has recorded them) and named by no recorded
/// submission. Returns the other jobs.
pub(crate) fn cancel_interrupted(
    crawl: &CrawlDir,
    cfg: &Config,
    queued: Vec<Queued>,
) -> Result<Vec<Queued>> {
    if !queued.iter().any(|q| q.held) {
        return Ok(queued);
    }
    let recorded = recorded_job_ids(crawl, cfg);
    let (stray, rest): (Vec<Queued>, Vec<Queued>) = queued
        .into_iter()
        .partition(|q| q.held && !recorded.contains(&q.id));
    if stray.is_empty() {
        return Ok(rest);
    }
    let scancel = beside_sbatch(&cfg.slurm, "scancel");
    let ids: Vec<&str> = stray.iter().map(|q| q.id.as_str()).collect();
    let out = Command::new(&scancel).args(&ids).output();
    if !out.as_ref().is_ok_and(|o| o.status.success()) {
        return Err(Error::External {
            program: scancel.display().to_string(),
            message: format!(
                "held jobs of an interrupted submission of crawl {:?} are in the queue ({}), \
                 and `{} {}` failed ({}); cancel them by hand and submit again",
                cfg.crawl.name,
                ids.join(", "),
                scancel.display(),
                ids.join(" "),
                match &out {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                }
            ),
        });
    }
    eprintln!(
        "slurm: cancelled {} held job(s) of a submission that was interrupted before it was \
         recorded ({}); submitting again",
        stray.len(),
        stray
            .iter()
            .map(|q| format!("{} {}", q.id, q.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(rest)
}

pub(crate) fn refuse_if_queued(cfg: &Config, queued: Vec<Queued>) -> Result<()> {
    if queued.is_empty() {
        return Ok(());
    }
    let queued: Vec<String> = queued
        .into_iter()
        .map(|q| format!("{} {}{}", q.id, q.name, if q.held { " (held)" } else { "" }))
        .collect();
    let message = format!(
        "jobs of crawl {:?} are still queued or running in Slurm ({}): the chain submitted \
         before is not finished; wait for it (`squeue`), or cancel it (`scancel {}`) and start \
         again",
        cfg.crawl.name,
        queued.join(", "),
        queued
            .iter()
            .map(|j| j.split(' ').next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Err(Error::SlurmQueued {
        jobs: queued,
        message,
    })
}

/// A job of the crawl in Slurm's queue.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Queued {
    /// The job id (an array's).
    pub id: String,
    /// The job name.
    pub name: String,
    /// Held by its submitter (pending for `JobHeldUser`).
    pub held: bool,
}

/// The crawl's jobs in Slurm's queue, but the job this runs in (a `finish` job submitting the
/// next cycle). `squeue` is looked up beside `[slurm] sbatch`; if it cannot run, nothing is
/// known to be queued (a warning says so if `warn`).
pub(crate) fn queued_jobs(s: &SlurmSection, name: &str, warn: bool) -> Vec<Queued> {
    let squeue = beside_sbatch(s, "squeue");
    let out = match Command::new(&squeue)
        .args(["-h", "-o", "%A %j %r"])
        .output()
    {
        Ok(out) if out.status.success() => out,
        _ => {
            if warn {
                eprintln!(
                    "slurm: warning: cannot list the queue with `{}`; not checking for jobs of \
                     this crawl still queued",
                    squeue.display()
                );
            }
            return Vec::new();
        }
    };
    let me = std::env::var("SLURM_JOB_ID").unwrap_or_default();
    let prefix = format!("dragnet-{name}-c");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (id, job) = (w.next()?, w.next()?);
            (job.starts_with(&prefix) && id != me).then(|| Queued {
                id: id.to_owned(),
                name: job.to_owned(),
                held: w.next() == Some("JobHeldUser"),
            })
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A Slurm program (`squeue`, `scontrol`) where `[slurm] sbatch` is, or on PATH.
pub(crate) fn beside_sbatch(s: &SlurmSection, program: &str) -> PathBuf {
    match Path::new(&s.sbatch).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(program),
        _ => PathBuf::from(program),
    }
}

/// The crawl's name as it can stand in a job name.
pub(crate) fn job_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
