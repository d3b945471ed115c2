//! `dragnet slurm`: the Slurm executor's commands (the work is in `dragnet::exec::slurm`).

use std::path::PathBuf;

use clap::Subcommand;
use dragnet::crawl::{self, Config, Stage};
use dragnet::error::{EXIT_OK, EXIT_RETRY};
use dragnet::exec::config::SlurmSection;
use dragnet::exec::slurm::{self, SubmitOptions, Then};
use dragnet::Error;

#[derive(Subcommand)]
pub(crate) enum Slurm {
    /// Submit the crawl's next cycles to Slurm as job arrays
    ///
    /// One job array per stage over the partitions whose stage is not done, each depending on
    /// the one before (afterok), then a job that ends the cycle (metrics.prom, old state pruned)
    /// and submits the next one while cycles remain. Settings: [slurm] in crawl.toml (sbatch
    /// arguments, array size, tasks at once).
    Submit {
        #[command(flatten)]
        count: super::args::CycleCount,
        /// Print the sbatch commands, submit nothing.
        #[arg(long)]
        dry_run: bool,
        /// The dragnet binary as the compute nodes see it [default: this one].
        #[arg(long)]
        binary: Option<PathBuf>,
        /// Print the submission as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory (on a filesystem every node mounts).
        dir: PathBuf,
    },
    /// (Run by Slurm) One array task: a stage for one partition
    ///
    /// Runs the stage for the partition that SLURM_ARRAY_TASK_ID picks from --partitions.
    Task {
        /// fetch, parse, split, merge or prioritize.
        #[arg(long)]
        stage: String,
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// The array's partitions, as ranges (0-3,7); task i runs the i-th.
        #[arg(long)]
        partitions: String,
        /// Run the stage in this process (the task itself runs it in a child process, and asks
        /// Slurm to run it again if the child fails for a transient reason or is killed).
        #[arg(long, hide = true)]
        worker: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// (Run by Slurm) End a complete cycle and submit the next one if the chain goes on.
    Finish {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Cycles still to submit after this one.
        #[arg(long, default_value_t = 0)]
        then_cycles: u32,
        /// Submit the next cycle while fetch lists are not empty (at most --max-cycles more).
        #[arg(long)]
        until_empty: bool,
        /// The bound for --until-empty.
        #[arg(long, default_value_t = 0)]
        max_cycles: u32,
        /// The dragnet binary the next jobs run [default: this one].
        #[arg(long)]
        binary: Option<PathBuf>,
        /// The crawl directory.
        dir: PathBuf,
    },
}

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
            count:
                super::args::CycleCount {
                    cycles,
                    until_empty,
                    max_cycles,
                },
            dry_run,
            binary: b,
            json,
            dir,
        } => {
            let (crawl, cfg) = load(&dir)?;
            let then = if until_empty {
                Then::UntilEmpty(max_cycles.saturating_sub(1))
            } else {
                Then::Cycles(cycles.max(1) - 1)
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
            if !worker {
                let section = match load(&dir) {
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
                    .args(["slurm", "task", "--worker", "--stage", &name, "--cycle"])
                    .arg(cycle.to_string())
                    .args(["--partitions", &partitions])
                    .arg(&dir);
                return slurm::supervise(&section, child, &slurm::TaskEnv::from_env());
            }
            let task = load(&dir)
                .and_then(|(crawl, cfg)| slurm::task(&crawl, &cfg, stage, cycle, &partitions));
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
        Slurm::Finish {
            cycle,
            then_cycles,
            until_empty,
            max_cycles,
            binary: b,
            dir,
        } => {
            let (crawl, cfg) = load(&dir)?;
            let then = if until_empty {
                Then::UntilEmpty(max_cycles)
            } else {
                Then::Cycles(then_cycles)
            };
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
    }
}
