//! The executors: what runs a cycle's stages over the partitions, and when.
//!
//! - [`local`]: `dragnet cycle`, every stage of every partition on this machine;
//! - [`slurm`]: `dragnet slurm submit`, each stage a Slurm job array over the partitions;
//! - [`config`]: their sections of crawl.toml, `[cycle]` and `[slurm]`.
//!
//! Both run a stage for a partition the same way ([`run_stage`]: the gate of
//! [`crate::crawl::gate`] — already done, or upstream not ready — then the stage and its `.done`,
//! or a `.failed` marker with the error) and end a cycle the same way ([`after_cycle`]:
//! `metrics.prom`, CDXJ indexes merged, old state pruned), so a crawl can move between them
//! from one cycle to the next, and a partition one of them left failed is retried by either.

pub mod local;
mod progress;
pub mod slurm;

pub use local::{
    failure, run_cycles, ByStage, CycleOptions, CycleReport, CycleRun, FailedPartition, StageRun,
};
pub use progress::CycleDisplay;

use crate::config::Config;
use crate::crawl::CrawlDir;
use crate::error::Result;
use crate::run::RunReader;
use crate::util::plural;

/// What an executor did of a cycle's end before the cycle's merge and prioritize were done: the
/// local executor merges the CDXJ indexes and reads the report's fetch results and page facts
/// beside them, as soon as every partition has fetched (they need nothing the two write).
#[derive(Default)]
pub struct EarlyEnd {
    /// The CDXJ indexes were merged ([`end_indexes`]).
    pub indexed: bool,
    /// The report's reading of the fetch results and page facts
    /// ([`crate::ops::report::Fetches::read_now`]).
    pub fetches: Option<crate::ops::report::Fetches>,
}

/// What every executor does once a cycle's stages have run: rewrites `metrics.prom`, and if the
/// cycle completed, merges its CDXJ indexes into the cycle's and the crawl's
/// ([`crate::ops::index`]), rewrites the report in `report/` (`[cycle] report`,
/// [`crate::ops::report`]; its reading runs on a second thread beside the index merge, if the
/// executor has not merged the indexes already) and
/// removes state versions older than `[cycle] keep_cycles` cycles need, and the runs between
/// the stages of the cycles before ([`crate::ops::prune`]). What `early` did already is not
/// done again. Problems are logged, not returned: the cycle's work is committed.
pub fn after_cycle(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    complete: bool,
    early: EarlyEnd,
    log: &dyn Fn(&str),
) {
    if let Err(e) = crate::ops::metrics::write_metrics(crawl, cfg) {
        log(&format!("cannot write metrics.prom: {e}"));
    }
    let EarlyEnd { indexed, fetches } = early;
    // The report's reading (every done fetch and parse, the URL db and host tables) and the
    // indexes' merge touch different files, so they run side by side: on two cores the end of
    // a cycle takes the longer of the two, not their sum.
    std::thread::scope(|scope| {
        let report = (complete && cfg.cycle.report)
            .then(|| scope.spawn(move || crate::ops::report::collect_with(crawl, cfg, fetches)));
        if complete && !indexed {
            end_indexes(crawl, cfg, cycle, log);
        }
        if let Some(collecting) = report {
            let out = crate::ops::report::default_dir(crawl);
            let Ok(r) = collecting.join() else {
                log("cannot write the report: its reading panicked (a bug: please report it)");
                return;
            };
            match crate::ops::report::write_collected(crawl, r, &out) {
                Ok(w) if w.skipped.is_empty() => {}
                Ok(w) => log(&format!(
                    "report {}: {} skipped (listed on the page)",
                    crawl.relative(&out),
                    plural(w.skipped.len() as u64, "file", "files")
                )),
                Err(e) => log(&format!("cannot write the report: {e}")),
            }
        }
    });
    let keep = cfg.cycle.keep_cycles;
    if complete && keep > 0 {
        // The oldest cycle that can still be re-run; what it reads, and all after, stays.
        let oldest = (cycle + 1).saturating_sub(keep);
        match crate::ops::prune::prune_state(crawl, cfg.crawl.partitions, oldest) {
            Ok(0) => {}
            Ok(n) => log(&format!(
                "removed {} older than cycle {oldest}'s",
                plural(n, "state file", "state files")
            )),
            Err(e) => log(&format!("cannot prune old state: {e}")),
        }
        match crate::ops::prune::prune_cycles(crawl, oldest) {
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

/// The CDXJ indexes at the end of a cycle ([`crate::ops::index::after_cycle`]), with what they
/// did logged. They are made from the cycle's fetches alone, so they can be merged as soon as
/// every partition has fetched, before the cycle's merge and prioritize have run.
pub(crate) fn end_indexes(crawl: &CrawlDir, cfg: &Config, cycle: u32, log: &dyn Fn(&str)) {
    let r = crate::ops::index::after_cycle(crawl, cfg.crawl.partitions, cycle);
    for (path, why) in r.iter().flat_map(|r| &r.healed) {
        log(&format!(
            "CDXJ index {} was damaged ({why}): made again from the cycles' indexes",
            crawl.relative(path)
        ));
    }
    match r {
        Ok(r) if !r.cycles_added.is_empty() => log(&format!(
            "CDXJ index: cycle {cycle} {}, {} (indexes/index.cdxj)",
            plural(r.cycle_lines.unwrap_or(0), "capture", "captures"),
            match r.crawl_lines {
                Some(n) => format!("the crawl's {}", plural(n, "capture", "captures")),
                None => "the crawl's unchanged".to_owned(),
            },
        )),
        Ok(_) => {}
        Err(e) => log(&format!("cannot update the CDXJ indexes: {e}")),
    }
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
