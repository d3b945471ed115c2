//! What every stage reports ([`StageReport`]), the gate every stage passes before it works
//! ([`gate`]), and the names of the counters that more than one module reads ([`counter`]).
//!
//! The envelope of a stage is the same for all five: [`gate`] answers "already done" (the
//! report from its `.done` marker, nothing run) or "upstream not ready" (an
//! [`Error::NotReady`] naming the command to run first); otherwise the stage runs and commits its
//! `.done` marker. The executors' `run_stage` (used by `dragnet cycle`, `dragnet slurm task` and
//! the stage commands run by hand) adds the `.failed` marker when a stage fails.

use std::collections::BTreeMap;

use serde::Serialize;

use super::done::DoneMarker;
use super::layout::{CrawlDir, Stage};
use crate::config::Config;
use crate::error::{Error, Result};

/// What one stage did for one partition: the counts of its `.done` marker.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StageReport {
    /// The stage was already done (its `.done` existed): nothing ran now.
    pub skipped: bool,
    /// Counters, as in the `.done` marker (each stage's module docs list its own).
    pub counts: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl StageReport {
    /// A counter, 0 if absent.
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// The report of a stage that just committed `m`.
    pub fn ran(m: DoneMarker) -> StageReport {
        StageReport {
            skipped: false,
            counts: m.counts,
            seconds: m.seconds,
        }
    }

    /// The report of a stage found done: its marker's counts and time.
    pub fn already_done(m: DoneMarker) -> StageReport {
        StageReport {
            skipped: true,
            counts: m.counts,
            seconds: m.seconds,
        }
    }
}

/// Counter names read outside the stage that writes them (status, metrics, the demo, the
/// command line), so a rename is one edit.
pub mod counter {
    /// fetch: URLs of the fetch list given a result.
    pub const URLS: &str = "urls";
    /// fetch: results written (the fetch list's URLs and those followed in the run).
    pub const RESULTS: &str = "results";
    /// fetch: HTTP requests made (pages and robots.txt).
    pub const REQUESTS: &str = "requests";
    /// Fetch: URLs followed within the run (results beyond the fetch list's).
    pub const FOLLOWED: &str = "followed";
    /// Fetch: of those, links robots.txt refuses, recorded as such without a request.
    pub const FOLLOWED_REFUSED: &str = "followed_refused";
    /// fetch: robots.txt requests among them.
    pub const ROBOTS_REQUESTS: &str = "robots_requests";
    /// fetch: body bytes received; parse: bytes of pages read.
    pub const BYTES: &str = "bytes";
    /// fetch: results without an HTTP answer.
    pub const NO_ANSWER: &str = "no_answer";
    /// fetch: prefix of the results by status class (`status_2xx` .. `status_5xx`).
    pub const STATUS_PREFIX: &str = "status_";
    /// fetch: prefix of the results by error kind (`error_timeout`, `error_robots`, ...).
    pub const ERROR_PREFIX: &str = "error_";
    /// fetch: WARC files written.
    pub const WARC_FILES: &str = "warc_files";
    /// fetch: bytes of the WARC files written.
    pub const WARC_BYTES: &str = "warc_bytes";
    /// fetch: answers that slowed their host down (a 429 or 503, a 5xx after another).
    pub const SLOWED_DOWN: &str = "slowed_down";
    /// Fetch: answers written as revisits of an identical payload (`[fetch] dedup`).
    pub const REVISITS: &str = "revisits";
    /// parse: 1 when the fetch ran the parse as the pages arrived (`[fetch] parse`).
    pub const INLINE: &str = "inline";
    /// parse: pages read; split: links read.
    pub const PAGES: &str = "pages";
    /// parse, split: links.
    pub const LINKS: &str = "links";
    /// split: CLOCK cache hits.
    pub const CACHE_HITS: &str = "cache_hits";
    /// split: CLOCK cache misses.
    pub const CACHE_MISSES: &str = "cache_misses";
    /// split: hits per thousand lookups.
    pub const CACHE_HIT_PERMILLE: &str = "cache_hit_permille";
    /// merge: URLs discovered.
    pub const NEW: &str = "new";
    /// prioritize: URLs left in the frontier.
    pub const FRONTIER: &str = "frontier";
    /// prioritize: URLs in the next fetch list.
    pub const SELECTED: &str = "selected";
    /// prioritize: URLs of the reserve listed beyond the budget (`[prioritize] reserve_factor`);
    /// fetch: the fetch list's reserve URLs.
    pub const RESERVE: &str = "reserve";
    /// fetch: reserve URLs fetched (or refused, answered, failed: tried) while the window was
    /// open; the rest were deferred back to the frontier.
    pub const RESERVE_TRIED: &str = "reserve_tried";
    /// The prioritize marker's count of its fetch list's politeness bound, milliseconds (what a
    /// fetch run alone keeps its window open for: `crate::fetch::window`).
    pub const POLITENESS_BOUND: &str = "politeness_bound_ms";
    /// prioritize: 1 when it resumed an interrupted run's committed queue.
    pub const RESUMED: &str = "resumed";
    /// prioritize: hosts parked now (`[fetch] park_after_failed_runs`).
    pub const PARKED_HOSTS: &str = "parked_hosts";
    /// prioritize: URLs of parked hosts met and left in the frontier.
    pub const PARKED_URLS: &str = "parked_urls";
    /// prioritize: the first cycle a parked host may be contacted again in.
    pub const PARKED_FIRST_CYCLE: &str = "parked_first_cycle";
    /// init: seeds written to the fetch lists.
    pub const SEEDS: &str = "seeds";
    /// A marker `dragnet repartition` carried: the partitions the crawl had before.
    pub const REPARTITIONED_FROM: &str = "repartitioned_from";

    /// `status_2xx` for class 2, ...
    pub fn status_class(class: u16) -> String {
        format!("{STATUS_PREFIX}{class}xx")
    }

    /// `error_<kind>`.
    pub fn error(kind: &str) -> String {
        format!("{ERROR_PREFIX}{kind}")
    }
}

/// The gate of `stage` for partition `p` of `cycle`: `Some(report)` if it is already done,
/// `None` if it may run now, and an error if `p` does not exist or what it reads is not there
/// yet ([`Error::NotReady`], naming the command that makes it).
pub fn gate(
    crawl: &CrawlDir,
    cfg: &Config,
    stage: Stage,
    cycle: u32,
    p: u32,
) -> Result<Option<StageReport>> {
    let m = cfg.crawl.partitions;
    if p >= m {
        return Err(Error::Usage(format!(
            "partition {p} does not exist: {} has partitions 0..{m}",
            crawl.root().display(),
        )));
    }
    if let Some(marker) = DoneMarker::read(&crawl.done_path(cycle, stage, p))? {
        return Ok(Some(StageReport::already_done(marker)));
    }
    let root = crawl.root().display();
    let done = |s: Stage, q: u32| crawl.done_path(cycle, s, q);
    let before = |s: Stage, what: &str| -> Result<()> {
        match DoneMarker::read(&done(s, p))? {
            Some(_) => Ok(()),
            None => Err(Error::NotReady(format!(
                "cycle {cycle} partition {p} has not been {what} ({} is missing): run \
                 `dragnet {s} --cycle {cycle} --partition {p} {root}` first",
                done(s, p).display(),
            ))),
        }
    };
    match stage {
        Stage::Init => Err(Error::Usage(
            "init is not a stage of a cycle; use `dragnet init`".into(),
        )),
        Stage::Fetch => {
            let fetchlist = crawl.fetchlist(cycle, p);
            if fetchlist.exists() {
                Ok(None)
            } else {
                Err(Error::NotReady(format!(
                    "{}: no fetch list for cycle {cycle}, partition {p}; it is written by \
                     `dragnet init` (cycle 0) or by the previous cycle's prioritize stage",
                    fetchlist.display()
                )))
            }
        }
        Stage::Parse => before(Stage::Fetch, "fetched").map(|()| None),
        Stage::Split => before(Stage::Parse, "parsed").map(|()| None),
        Stage::Merge => {
            let missing: Vec<String> = std::iter::once((Stage::Fetch, p))
                .chain((0..m).map(|q| (Stage::Split, q)))
                .filter(|&(s, q)| !done(s, q).exists())
                .map(|(s, q)| format!("{s} of partition {q}"))
                .collect();
            if missing.is_empty() {
                Ok(None)
            } else {
                Err(Error::NotReady(format!(
                    "the merge of cycle {cycle} partition {p} needs the fetch of partition {p} \
                     and the split of every partition; missing: {} (run them first)",
                    missing.join(", ")
                )))
            }
        }
        Stage::Prioritize => before(Stage::Merge, "merged").map(|()| None),
    }
}
