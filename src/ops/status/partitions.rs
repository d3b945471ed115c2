//! Per-partition state of one stage: done, running, failed or pending, from the markers.

use std::collections::BTreeMap;

use super::{PartitionState, StageStatus};
use crate::crawl::failed::{read_failed, FailedMarker};
use crate::crawl::DoneMarker;
use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, Result};

/// Reads the markers of one stage of one cycle. `exists`: the stage's directory exists (if not,
/// no partition has a marker). `may_run`: partitions without a marker count as running.
pub(super) fn stage_status(
    crawl: &CrawlDir,
    c: u32,
    stage: Stage,
    m: u32,
    exists: bool,
    may_run: bool,
    on_done: &mut dyn FnMut(u32, &DoneMarker),
) -> Result<StageStatus> {
    let mut s = StageStatus {
        stage,
        done: 0,
        running: 0,
        failed: 0,
        pending: 0,
        failures: Vec::new(),
        damaged: Vec::new(),
        seconds: 0.0,
        max_seconds: 0.0,
        finished_at: None,
        counts: BTreeMap::new(),
        partitions: Vec::with_capacity(m as usize),
    };
    for p in 0..m {
        let done = if exists {
            DoneMarker::read(&crawl.done_path(c, stage, p))
        } else {
            Ok(None)
        };
        let state = match done {
            Ok(Some(mk)) => {
                on_done(p, &mk);
                s.seconds += mk.seconds;
                s.max_seconds = s.max_seconds.max(mk.seconds);
                s.finished_at = s.finished_at.max(crate::util::parse_rfc3339(&mk.finished));
                for (k, v) in mk.counts {
                    *s.counts.entry(k).or_default() += v;
                }
                PartitionState::Done
            }
            other => {
                if let Err(e) = other {
                    s.damaged.push(e.to_string());
                }
                let failed = if exists {
                    read_failed(crawl, stage, c, p)
                        .unwrap_or_else(|e| Some(damaged_failed(stage, c, p, &e)))
                } else {
                    None
                };
                match failed {
                    Some(f) => {
                        s.failures.push(f);
                        PartitionState::Failed
                    }
                    None if may_run => PartitionState::Running,
                    None => PartitionState::Pending,
                }
            }
        };
        match state {
            PartitionState::Done => s.done += 1,
            PartitionState::Running => s.running += 1,
            PartitionState::Failed => s.failed += 1,
            PartitionState::Pending => s.pending += 1,
        }
        s.partitions.push(state);
    }
    if s.done == m {
        s.partitions = Vec::new();
    }
    Ok(s)
}

/// A `.failed` marker that cannot be read still says the partition failed.
fn damaged_failed(stage: Stage, cycle: u32, partition: u32, e: &Error) -> FailedMarker {
    FailedMarker {
        magic: String::new(),
        version: 0,
        stage,
        cycle,
        partition,
        error: format!("(unreadable .failed marker: {e})"),
        exit_code: e.exit_code(),
        at: 0,
        host: String::new(),
        pid: 0,
        checksum: String::new(),
    }
}
