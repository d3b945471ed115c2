//! One stage for one partition: the envelope every executor and the operator use.
//!
//! [`run_stage`] dispatches to the stage ([`crate::fetch`], [`crate::parse`], [`crate::split`],
//! [`crate::merge`], [`crate::prioritize`]) and records a failure for `dragnet status`;
//! [`run_stage_by_hand`] is `dragnet <stage> --cycle N --partition P`, with the crawl lock and
//! the Slurm-queue refusal first. The executors ([`crate::exec`]) and `dragnet repair` call these.

use crate::config::Config;
use crate::crawl::{CrawlDir, Stage, StageReport};
use crate::error::{Error, Result};
use crate::fetch::FetchOptions;

/// Runs `stage` of `cycle` for partition `p` and records the outcome for `dragnet status`: a
/// `.failed` marker with the error, or none (an old one is removed). The one envelope of every
/// stage, whoever runs it: `dragnet cycle`, `dragnet slurm task`, or `dragnet <stage>` by hand
/// (through [`run_stage_by_hand`], which takes the crawl lock first; the other two are guarded
/// by the lock the local executor holds and by the Slurm queue).
/// Each stage first passes [`crate::crawl::gate`] (already done: its report, nothing run;
/// upstream not done: [`Error::NotReady`], which is not a failure of the stage and leaves no
/// marker), then commits its `.done` marker.
///
/// No `.failed` marker is written for a stop asked by a signal ([`Error::Interrupted`]: nothing
/// failed), nor beside a `.done` marker: a stage whose `.done` exists is done, whatever went
/// wrong after its commit (its error is still returned, and a cycle counts it as failed).
pub fn run_stage(
    crawl: &CrawlDir,
    cfg: &Config,
    stage: Stage,
    cycle: u32,
    p: u32,
    fetch: &FetchOptions,
) -> Result<StageReport> {
    crate::interrupt::check()?;
    let r = match stage {
        Stage::Fetch => crate::fetch::fetch_partition(crawl, cfg, cycle, p, fetch),
        Stage::Parse => crate::parse::parse_partition(crawl, cfg, cycle, p),
        Stage::Split => crate::split::split_partition(crawl, cfg, cycle, p),
        Stage::Merge => crate::merge::merge_partition(crawl, cfg, cycle, p),
        Stage::Prioritize => crate::prioritize::prioritize_partition(crawl, cfg, cycle, p),
        Stage::Init => Err(Error::Usage(
            "init is not a stage of a cycle; use `dragnet init`".into(),
        )),
    };
    match &r {
        Ok(_) => {
            let _ = crate::crawl::failed::clear_failed(crawl, stage, cycle, p);
        }
        Err(Error::NotReady(_) | Error::Interrupted { .. }) => {}
        Err(_) if p >= cfg.crawl.partitions || stage == Stage::Init => {}
        Err(_) if crawl.done_path(cycle, stage, p).exists() => {}
        Err(e) => {
            if let Err(w) = crate::crawl::failed::write_failed(crawl, stage, cycle, p, e) {
                eprintln!("cannot record the failure of {stage} p{p}: {w}");
            }
        }
    }
    r
}

/// `dragnet <stage> --cycle N --partition P` by hand: the crawl lock first, held while the stage
/// runs (a stage by hand while a cycle, another stage by hand, a repair or an injection runs is
/// refused: [`Error::Locked`], exit 5, nothing done), then a refusal while the crawl's Slurm
/// jobs are queued ([`Error::SlurmQueued`], exit 5), then [`run_stage`].
///
/// Only for a stage run alone: the local executor holds the lock for its whole run and calls
/// [`run_stage`] for each stage, and Slurm tasks (`dragnet slurm task`) run many partitions'
/// stages at once on many nodes, guarded by the Slurm queue instead (a local run refuses to
/// start while the crawl's jobs are queued), so neither comes through here.
pub fn run_stage_by_hand(
    crawl: &CrawlDir,
    cfg: &Config,
    stage: Stage,
    cycle: u32,
    p: u32,
    fetch: &FetchOptions,
) -> Result<StageReport> {
    let lock = crate::crawl::CrawlLock::acquire_with_lease(
        crawl.root(),
        &format!("{stage} --cycle {cycle} --partition {p}"),
        cfg.cycle.lock_lease(),
    )?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    crate::crawl::queued::check_no_jobs_queued(crawl, cfg)?;
    let r = run_stage(crawl, cfg, stage, cycle, p, fetch);
    drop(lock);
    r
}
