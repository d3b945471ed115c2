//! One measured run: a queue filled with N entries, then bulk-synchronous supersteps.
//!
//! The superstep is the paper's: extract-top-R, then insert-many of the next R entries of the
//! workload. The queue is filled with the first N entries of the workload by insert-many calls
//! of R entries each (the unit a crawler's prioritizer inserts), then runs `warmup` supersteps
//! that are not measured (they include the quickheap's first partitioning of the whole fill, a
//! one-off cost), then the measured ones: at least `min_supersteps`, and enough to extract
//! `turnover` times N entries, so that amortized costs (the quickheap partitions ever larger
//! chunks as it eats into the queue) are measured over a whole cycle of the queue's contents
//! rather than a lucky or unlucky window. The counters of the extract and the insert
//! phases are kept apart. Every extraction is checked: R entries, ascending, and (with `verify`)
//! exactly the R smallest of what was inserted, against an in-memory reference heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::Instant;

use dragnet::queue::{Entry, IoStats};
use serde::Serialize;

use crate::queues::{open, QueueKind, QueueSetup};

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Workload name.
    pub sample: String,
    /// Queue.
    pub queue: QueueKind,
    /// Entries in the queue between supersteps (N).
    pub n: u64,
    /// Entries extracted and inserted per superstep (R).
    pub r: usize,
    /// Pages the N entries occupy when packed (the "queue size" RAM is a fraction of).
    pub queue_pages: u64,
    /// Frames of the pager's cache (the RAM budget; `usize::MAX` meaning unbounded).
    pub cache_pages: usize,
    /// Measured supersteps.
    pub supersteps: usize,
    /// Counters of the fill (N inserts into an empty queue).
    pub fill: IoStats,
    /// Counters of the extract-top-R phases of the measured supersteps, summed.
    pub extract: IoStats,
    /// Counters of the insert-many phases of the measured supersteps, summed.
    pub insert: IoStats,
    /// Wall seconds of the measured supersteps (other work may share the machine).
    pub seconds: f64,
    /// Entries extracted in the measured supersteps that had been inserted by the superstep
    /// just before (how much the workload behaves like a stack).
    pub fresh: u64,
}

impl RunResult {
    /// Both phases together.
    pub fn total(&self) -> IoStats {
        self.extract.add(&self.insert)
    }

    /// Operations (entries extracted plus entries inserted) in the measured supersteps.
    pub fn operations(&self) -> u64 {
        2 * self.r as u64 * self.supersteps as u64
    }

    /// Key comparisons per measured superstep.
    pub fn comparisons_per_superstep(&self) -> f64 {
        self.total().comparisons as f64 / self.supersteps.max(1) as f64
    }

    /// Key comparisons per operation (per entry extracted or inserted).
    pub fn comparisons_per_op(&self) -> f64 {
        self.total().comparisons as f64 / self.operations().max(1) as f64
    }

    /// Block I/Os (reads + writes) per measured superstep.
    pub fn ios_per_superstep(&self) -> f64 {
        self.total().block_ios() as f64 / self.supersteps.max(1) as f64
    }

    /// Fraction of the measured extractions that were inserted by the previous superstep.
    pub fn fresh_fraction(&self) -> f64 {
        self.fresh as f64 / (self.r * self.supersteps).max(1) as f64
    }

    /// Block I/Os per operation.
    pub fn ios_per_op(&self) -> f64 {
        self.total().block_ios() as f64 / self.operations().max(1) as f64
    }
}

/// Counter difference `a - b` (b taken earlier than a).
pub fn delta(a: &IoStats, b: &IoStats) -> IoStats {
    IoStats {
        block_reads: a.block_reads - b.block_reads,
        block_writes: a.block_writes - b.block_writes,
        bytes_read: a.bytes_read - b.bytes_read,
        bytes_written: a.bytes_written - b.bytes_written,
        comparisons: a.comparisons - b.comparisons,
    }
}

/// Pages of `page_size` bytes that `n` entries fill when packed as [`dragnet::queue::pager::Slots`]
/// packs them.
pub fn queue_pages(n: u64, page_size: usize) -> u64 {
    let per_page = (page_size / Entry::SIZE).max(1) as u64;
    n.div_ceil(per_page)
}

/// Entries of the workload a run needs: the fill plus R per superstep.
pub fn stream_len(n: u64, r: usize, sched: &Schedule) -> usize {
    n as usize + r.max(1) * (sched.warmup + sched.measured(n, r))
}

/// The run parameters that are not the queue's.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Unmeasured supersteps after the fill.
    pub warmup: usize,
    /// Measured supersteps, at least.
    pub min_supersteps: usize,
    /// Measure enough supersteps to extract this many times N entries.
    pub turnover: f64,
    /// Check every extraction against an in-memory reference.
    pub verify: bool,
}

impl Schedule {
    /// Measured supersteps of a run with queue size `n` and `r` per superstep.
    pub fn measured(&self, n: u64, r: usize) -> usize {
        let by_turnover = (self.turnover * n as f64 / r.max(1) as f64).ceil() as usize;
        self.min_supersteps.max(by_turnover).max(1)
    }
}

/// Runs `setup` on `stream` (at least [`stream_len`] entries) in a fresh directory under `work`.
pub fn run(
    sample: &str,
    setup: &QueueSetup,
    sched: &Schedule,
    stream: &[Entry],
    work: &Path,
) -> Result<RunResult, String> {
    let need = stream_len(setup.n, setup.r, sched);
    let measured = sched.measured(setup.n, setup.r);
    if stream.len() < need {
        return Err(format!(
            "{sample}: the workload has {} entries, the run needs {need}",
            stream.len()
        ));
    }
    let r = setup.r.max(1);
    let dir = tempfile::Builder::new()
        .prefix(&format!("pq-{}-", setup.kind.cli_name()))
        .tempdir_in(work)
        .map_err(|e| format!("temporary directory in {}: {e}", work.display()))?;
    let mut q = open(dir.path(), setup)?;
    let ctx = |what: &str, e: dragnet::error::Error| {
        format!(
            "{sample} {} N={} R={r}: {what}: {e}",
            setup.kind.label(),
            setup.n
        )
    };
    let (fill, rest) = stream.split_at(setup.n as usize);
    let mut reference: Option<BinaryHeap<Reverse<Entry>>> = sched
        .verify
        .then(|| fill.iter().copied().map(Reverse).collect());
    for chunk in fill.chunks(r) {
        q.insert_many(chunk).map_err(|e| ctx("fill", e))?;
    }
    if q.len() != setup.n {
        return Err(format!(
            "{sample} {}: {} entries after filling {}",
            setup.kind.label(),
            q.len(),
            setup.n
        ));
    }
    let fill_stats = q.stats();
    q.reset_stats();
    let mut out = Vec::with_capacity(r);
    let mut extract = IoStats::default();
    let mut insert = IoStats::default();
    let mut seconds = 0.0;
    let mut fresh = 0u64;
    let mut last: std::collections::HashSet<Entry> = Default::default();
    for (step, batch) in rest.chunks(r).take(sched.warmup + measured).enumerate() {
        let measured = step >= sched.warmup;
        let t = Instant::now();
        let s0 = q.stats();
        out.clear();
        q.extract_top(r, &mut out).map_err(|e| ctx("extract", e))?;
        let s1 = q.stats();
        q.insert_many(batch).map_err(|e| ctx("insert", e))?;
        let s2 = q.stats();
        let dt = t.elapsed().as_secs_f64();
        check_extraction(&out, r, reference.as_mut())
            .map_err(|m| format!("{sample} {} superstep {step}: {m}", setup.kind.label()))?;
        if let Some(h) = reference.as_mut() {
            h.extend(batch.iter().copied().map(Reverse));
        }
        if measured {
            fresh += out.iter().filter(|e| last.contains(e)).count() as u64;
            extract = extract.add(&delta(&s1, &s0));
            insert = insert.add(&delta(&s2, &s1));
            seconds += dt;
        }
        last.clear();
        last.extend(batch.iter().copied());
    }
    if q.len() != setup.n {
        return Err(format!(
            "{sample} {}: {} entries after the supersteps, expected {}",
            setup.kind.label(),
            q.len(),
            setup.n
        ));
    }
    Ok(RunResult {
        sample: sample.to_string(),
        queue: setup.kind,
        n: setup.n,
        r,
        queue_pages: queue_pages(setup.n, setup.pager.page_size),
        cache_pages: setup.pager.cache_pages,
        supersteps: measured,
        fill: fill_stats,
        extract,
        insert,
        seconds,
        fresh,
    })
}

/// Checks one extract-top-R: `r` entries in ascending order and, given the reference heap of
/// everything in the queue, exactly its `r` smallest (which are then removed from it).
pub fn check_extraction(
    out: &[Entry],
    r: usize,
    reference: Option<&mut BinaryHeap<Reverse<Entry>>>,
) -> Result<(), String> {
    if out.len() != r {
        return Err(format!("extract-top-{r} returned {} entries", out.len()));
    }
    if let Some(i) = out.windows(2).position(|w| w[1] < w[0]) {
        return Err(format!(
            "extract-top-{r} not ascending at {i}: {:?} then {:?}",
            out[i],
            out[i + 1]
        ));
    }
    if let Some(h) = reference {
        for (i, got) in out.iter().enumerate() {
            let Some(Reverse(want)) = h.pop() else {
                return Err("more extracted than inserted".into());
            };
            if *got != want {
                return Err(format!(
                    "extracted entry {i} is {got:?}, the reference says {want:?}"
                ));
            }
        }
    }
    Ok(())
}
