//! `dragnet slurm`: the Slurm executor's commands (the work is in `dragnet::exec::slurm`).

use std::path::{Path, PathBuf};

use super::args::{CycleCount, Slurm};

use dragnet::config::cycle::SlurmSection;
use dragnet::config::Config;
use dragnet::crawl::{self, Stage};
use dragnet::error::{EXIT_OK, EXIT_RETRY};
use dragnet::exec::slurm::{self, SubmitOptions, Then};
use dragnet::Error;

fn binary(b: Option<PathBuf>) -> Result<PathBuf, Error> {
    match b {
        Some(b) => Ok(b),
        None => std::env::current_exe().map_err(|e| {
            Error::Usage(format!(
                "cannot tell where this dragnet is ({e}); pass --binary"
            ))
        }),
    }
}

fn load(dir: &std::path::Path) -> Result<(crawl::CrawlDir, Config), Error> {
    crawl::CrawlDir::open(dir)
}

fn print_submission(s: &slurm::Submission, dry_run: bool) {
    if let Some(why) = &s.nothing {
        eprintln!("slurm: cycle {}: nothing submitted: {why}", s.cycle);
        return;
    }
    eprintln!(
        "slurm: cycle {} ({} URLs to fetch): {} job(s) {}",
        s.cycle,
        s.fetch_list,
        s.jobs.len(),
        if dry_run {
            "would be submitted"
        } else {
            "submitted"
        }
    );
    for j in &s.jobs {
        if dry_run {
            outln!("sbatch {}", j.argv.join(" "));
        } else if j.partitions.is_empty() {
            eprintln!("  {} job {}", j.what, j.id);
        } else {
            eprintln!("  {} job {} (partitions {})", j.what, j.id, j.partitions);
        }
    }
}

pub(crate) fn run(cmd: Slurm) -> Result<i32, Error> {
    match cmd {
        Slurm::Submit {
            count,
            dry_run,
            binary: b,
            json,
            dir,
        } => submit(count, dry_run, b, json, &dir),
        Slurm::Task {
            stage: name,
            cycle,
            partitions,
            worker,
            dir,
        } => {
            let stage = Stage::CYCLE
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "--stage {name:?}: expected fetch, parse, split, merge or prioritize"
                    ))
                })?;
            slurm::parse_ranges(&partitions)?;
            if worker {
                work(stage, cycle, &partitions, &dir)
            } else {
                supervise(stage, cycle, &partitions, &dir)
            }
        }
        Slurm::Finish {
            cycle,
            then_cycles,
            until_empty,
            max_cycles,
            binary: b,
            dir,
        } => {
            let then = if until_empty {
                Then::UntilEmpty(max_cycles)
            } else {
                Then::Cycles(then_cycles)
            };
            finish(cycle, then, b, &dir)
        }
    }
}

/// `dragnet slurm submit`.
fn submit(
    count: CycleCount,
    dry_run: bool,
    b: Option<PathBuf>,
    json: bool,
    dir: &Path,
) -> Result<i32, Error> {
    let (crawl, cfg) = load(dir)?;
    let then = if count.until_empty {
        Then::UntilEmpty(count.max_cycles.saturating_sub(1))
    } else {
        Then::Cycles(count.cycles.max(1) - 1)
    };
    let opts = SubmitOptions {
        then,
        dry_run,
        binary: binary(b)?,
    };
    let s = slurm::submit(&crawl, &cfg, &opts)?;
    if json {
        outln!("{}", serde_json::to_string(&s).expect("serializes"));
    }
    print_submission(&s, dry_run && !json);
    Ok(EXIT_OK)
}

/// `dragnet slurm task` as Slurm runs it: runs itself again as the worker (`--worker`) under
/// [`slurm::supervise`], which requeues the task after a transient failure.
fn supervise(stage: Stage, cycle: u32, partitions: &str, dir: &Path) -> Result<i32, Error> {
    let section = match load(dir) {
        Ok((_, cfg)) => cfg.slurm,
        Err(e) if e.is_transient() => {
            super::report(&e);
            return Ok(slurm::requeue(
                &SlurmSection::default(),
                "the crawl could not be opened",
                &slurm::TaskEnv::from_env(),
            ));
        }
        Err(e) => return Err(e),
    };
    let mut child = std::process::Command::new(binary(None)?);
    child
        .args([
            "slurm",
            "task",
            "--worker",
            "--stage",
            stage.name(),
            "--cycle",
        ])
        .arg(cycle.to_string())
        .args(["--partitions", partitions])
        .arg(dir);
    slurm::supervise(&section, child, &slurm::TaskEnv::from_env())
}

/// `dragnet slurm task --worker`: runs the stage for the task's partition; a transient
/// failure exits [`EXIT_RETRY`] (the supervisor requeues the task).
fn work(stage: Stage, cycle: u32, partitions: &str, dir: &Path) -> Result<i32, Error> {
    let task =
        load(dir).and_then(|(crawl, cfg)| slurm::task(&crawl, &cfg, stage, cycle, partitions));
    let (p, r) = match task {
        Ok(done) => done,
        Err(e) => {
            super::report(&e);
            return Ok(if e.is_transient() {
                EXIT_RETRY
            } else {
                e.exit_code()
            });
        }
    };
    if r.skipped {
        eprintln!("{stage}: cycle {cycle} partition {p} was already done");
    } else {
        eprintln!(
            "{stage}: cycle {cycle} partition {p}: {}",
            super::stage::summary(stage, cycle, &r)
        );
    }
    Ok(EXIT_OK)
}

/// `dragnet slurm finish`: ends the cycle and submits the next if `then` asks for one.
fn finish(cycle: u32, then: Then, b: Option<PathBuf>, dir: &Path) -> Result<i32, Error> {
    let (crawl, cfg) = load(dir)?;
    let f = slurm::finish(&crawl, &cfg, cycle, then, binary(b)?)?;
    eprintln!(
        "slurm finish: cycle {cycle} complete; {} URLs in the fetch lists of cycle {}",
        f.next_fetch_list,
        cycle + 1
    );
    match &f.next {
        Some(s) => print_submission(s, false),
        None => eprintln!("slurm finish: the chain of cycles ends here"),
    }
    Ok(EXIT_OK)
}
