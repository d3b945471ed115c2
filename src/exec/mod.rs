//! The executors: what runs a cycle's stages over the partitions, and when.
//!
//! - [`local`]: `dragnet cycle`, every stage of every partition on this machine;
//! - [`slurm`]: `dragnet slurm submit`, each stage a Slurm job array over the partitions;
//! - [`config`]: their sections of crawl.toml, `[cycle]` and `[slurm]`.
//!
//! Both run a stage for a partition the same way ([`run_stage`]: the gate of
//! [`crate::crawl::gate`] — already done, or upstream not ready — then the stage and its `.done`,
//! or a `.failed` marker with the error) and end a cycle the same way ([`after_cycle`]: `metrics.prom`, CDXJ indexes merged, old state
//! pruned), so a crawl can move between them
//! from one cycle to the next, and a partition one of them left failed is retried by either.

pub mod config;
pub mod local;
mod progress;
pub mod repair;
pub mod slurm;

pub use local::{
    failure, run_cycles, CycleOptions, CycleReport, CycleRun, FailedPartition, StageRun,
};
pub use progress::CycleDisplay;

use crate::crawl::{Config, CrawlDir, Stage, StageReport};
use crate::error::{Error, Result};
use crate::fetch::FetchOptions;
use crate::run::RunReader;
use crate::util::plural;

/// The cycle to run next: the first whose prioritize is not done for every partition (its fetch
/// lists exist: `init` writes cycle 0's, each prioritize the next one's).
pub fn next_cycle(crawl: &CrawlDir, m: u32) -> u32 {
    let mut c = 0;
    while (0..m).all(|p| crawl.done_path(c, Stage::Prioritize, p).exists()) {
        c += 1;
    }
    c
}

/// What every executor does once a cycle's stages have run: rewrites `metrics.prom`, and if the
/// cycle completed, merges its CDXJ indexes into the cycle's and the crawl's
/// ([`crate::crawl::index`]), rewrites the report in `report/` (`[cycle] report`,
/// [`crate::report`]) and removes state versions older than `[cycle] keep_cycles` cycles need, and the
/// runs between the stages of the cycles before ([`crate::crawl::prune`]). Problems are logged,
/// not returned: the cycle's work is committed.
pub fn after_cycle(crawl: &CrawlDir, cfg: &Config, cycle: u32, complete: bool, log: &dyn Fn(&str)) {
    if let Err(e) = crate::crawl::metrics::write_metrics(crawl, cfg) {
        log(&format!("cannot write metrics.prom: {e}"));
    }
    if complete {
        let r = crate::crawl::index::after_cycle(crawl, cfg.crawl.partitions, cycle);
        for (path, why) in r.iter().flat_map(|r| &r.healed) {
            log(&format!(
                "CDXJ index {} was damaged ({why}): made again from the cycles' indexes",
                crawl.relative(path)
            ));
        }
        match r {
            Ok(r) if !r.cycles_added.is_empty() => log(&format!(
                "CDXJ index: cycle {cycle} {}, the crawl's {} (indexes/index.cdxj)",
                plural(r.cycle_lines.unwrap_or(0), "capture", "captures"),
                plural(r.crawl_lines.unwrap_or(0), "capture", "captures"),
            )),
            Ok(_) => {}
            Err(e) => log(&format!("cannot update the CDXJ indexes: {e}")),
        }
    }
    if complete && cfg.cycle.report {
        let out = crate::report::default_dir(crawl);
        match crate::report::write_report(crawl, cfg, &out) {
            Ok(w) if w.skipped.is_empty() => {}
            Ok(w) => log(&format!(
                "report {}: {} skipped (listed on the page)",
                crawl.relative(&out),
                plural(w.skipped.len() as u64, "file", "files")
            )),
            Err(e) => log(&format!("cannot write the report: {e}")),
        }
    }
    let keep = cfg.cycle.keep_cycles;
    if complete && keep > 0 {
        // The oldest cycle that can still be re-run; what it reads, and all after, stays.
        let oldest = (cycle + 1).saturating_sub(keep);
        match crate::crawl::prune::prune_state(crawl, cfg.crawl.partitions, oldest) {
            Ok(0) => {}
            Ok(n) => log(&format!(
                "removed {} older than cycle {oldest}'s",
                plural(n, "state file", "state files")
            )),
            Err(e) => log(&format!("cannot prune old state: {e}")),
        }
        match crate::crawl::prune::prune_cycles(crawl, oldest) {
            Ok(0) => {}
            Ok(n) => log(&format!(
                "removed {} of cycles before {oldest}",
                plural(
                    n,
                    "links, split or frontier-update run",
                    "links, split and frontier-update runs"
                )
            )),
            Err(e) => log(&format!("cannot prune old cycles' runs: {e}")),
        }
    }
}

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
    slurm::check_no_jobs_queued(crawl, cfg)?;
    let r = run_stage(crawl, cfg, stage, cycle, p, fetch);
    drop(lock);
    r
}

/// Work of `cycle`: URLs in its fetch lists (from the run trailers), plus seeds injected for its
/// merge (`dragnet inject`).
pub fn fetch_list_size(crawl: &CrawlDir, cycle: u32, m: u32) -> Result<u64> {
    let mut n = listed(crawl, cycle, m)?;
    // Seeds `dragnet inject` left for the cycle's merge are work too, with an empty fetch list.
    for p in 0..m {
        for path in crawl.inject_runs(cycle, p) {
            n += RunReader::open(&path)?.len();
        }
    }
    Ok(n)
}

/// URLs in the fetch lists of `cycle`.
fn listed(crawl: &CrawlDir, cycle: u32, m: u32) -> Result<u64> {
    let mut n = 0;
    for p in 0..m {
        let path = crawl.fetchlist(cycle, p);
        if path.exists() {
            n += RunReader::open(&path)?.len();
        }
    }
    Ok(n)
}
