//! `dragnet fetch|parse|split|merge|prioritize`: one stage of one partition, run by hand through
//! the same envelope as the executors (`dragnet::ops::stage::run_stage`: skip if done, refuse if the
//! upstream stage is not, `.done` or `.failed` after), holding the crawl lock
//! (`dragnet::ops::stage::run_stage_by_hand`: busy, exit 5, while a cycle runs or the crawl's Slurm
//! jobs are queued), then a one-line summary on stderr.

use dragnet::crawl::report::counter as c;
use dragnet::crawl::{CrawlDir, Stage, StageReport};
use dragnet::error::{EXIT_OK, EXIT_PARTIAL};
use dragnet::fetch::{FetchOptions, ProgressMode};
use dragnet::Error;

use super::args::StageArgs;

/// Runs `stage` for the partition `args` names; exit 1 if a fetch's deadline deferred URLs.
pub(crate) fn run(stage: Stage, args: &StageArgs, progress: ProgressMode) -> Result<i32, Error> {
    let (crawl, cfg) = CrawlDir::open(&args.dir)?;
    let fetch = FetchOptions {
        progress,
        ..FetchOptions::default()
    };
    // By hand: the crawl lock first (busy while a cycle runs: exit 5, nothing done).
    let r = dragnet::ops::stage::run_stage_by_hand(
        &crawl,
        &cfg,
        stage,
        args.cycle,
        args.partition,
        &fetch,
    )?;
    if args.json {
        outln!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    let (cycle, p) = (args.cycle, args.partition);
    if r.skipped {
        eprintln!("{stage}: cycle {cycle} partition {p} is already done (its .done marker exists); nothing to do");
    } else {
        eprintln!(
            "{stage}: cycle {cycle} partition {p}: {}",
            summary(stage, cycle, &r)
        );
    }
    Ok(match stage {
        Stage::Fetch if r.count(&c::error("deferred")) > 0 => EXIT_PARTIAL,
        _ => EXIT_OK,
    })
}

/// What a stage did, in a line: each stage says it in its own words (its counters are its own).
pub(crate) fn summary(stage: Stage, cycle: u32, r: &StageReport) -> String {
    match stage {
        Stage::Fetch => dragnet::fetch::stage::summary(r),
        Stage::Parse => dragnet::parse::stage::summary(r),
        Stage::Split => dragnet::split::summary(r),
        Stage::Merge => dragnet::merge::summary(r),
        Stage::Prioritize => dragnet::prioritize::summary(r, cycle),
        Stage::Init => String::new(),
    }
}
