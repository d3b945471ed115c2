//! Table 1: load balance of the CBT's T slices under bulk-synchronous supersteps.
//!
//! The paper "repeatedly executed an extract-top(R/T) operation immediately followed by a
//! corresponding insert-many(R/T) operation" on a CBT of T slices, one OpenMP thread per slice,
//! with R = 8000 in total (R/T = 8000, 4000, 2000, 1000 for T = 1, 2, 4, 8). Here each superstep
//! is two calls of the queue's parallel superstep: one with every slice extracting its R/T and
//! no inserts, one inserting the next R entries of the workload (each slice takes its share) and
//! extracting nothing, so the per-slice counters of the two operations come apart, as in the
//! paper's two columns. Each call returns one [`IoStats`] delta per slice; the work of a slice
//! is its key comparisons, or its block I/Os, and [`efficiency`] turns the per-slice work of all
//! measured supersteps into X/Y.
//!
//! Two settings can be varied: how the R new entries are shared among the slices ([`Shares`])
//! and whether the CBT runs every SELECT of the paper's Figs. 1 and 2 or skips the ones its RAM
//! summaries show would change nothing ([`Selects`]; dragnet's default is to skip).

use std::path::Path;
use std::time::Instant;

use cachesim::plot::{line_chart, Axis, Scale, Series};
use dragnet::error::Result as DnResult;
use dragnet::queue::pager::PagerOptions;
use dragnet::queue::{DiskQueue, Entry, IoStats};
use serde::Serialize;

use crate::efficiency::{efficiency, windows, PAPER_TABLE1};
use crate::experiments::{cache_for_percent, Common};
use crate::run::{delta, stream_len};
use crate::workload::Sample;

/// A queue of T slices that runs a superstep with one thread per slice (the CBT).
pub trait SlicedQueue: DiskQueue {
    /// T.
    fn slice_count(&self) -> usize;

    /// The slice that entry `e` is inserted into.
    fn slice_of(&self, e: &Entry) -> usize;

    /// Every slice extracts its top `per_slice_extract` into `out`, then inserts its share of
    /// `inserts`; returns each slice's counter deltas.
    fn parallel_superstep(
        &mut self,
        per_slice_extract: usize,
        inserts: &[Entry],
        out: &mut Vec<Entry>,
    ) -> DnResult<Vec<IoStats>>;
}

/// How to open a sliced queue for one Table 1 row.
#[derive(Debug, Clone, Copy)]
pub struct SliceSetup {
    /// Slices (threads), T.
    pub slices: usize,
    /// Entries each slice extracts per superstep, R/T (the CBT's block size).
    pub per_slice: usize,
    /// Pager options of the whole queue (the RAM budget of all slices together).
    pub pager: PagerOptions,
    /// Seed.
    pub seed: u64,
    /// Run every SELECT of Figs. 1 and 2 ([`Selects::Paper`]).
    pub paper_selects: bool,
}

/// Opens a new sliced queue in an empty directory.
pub type SlicedOpener<'a> = &'a dyn Fn(&Path, &SliceSetup) -> Result<Box<dyn SlicedQueue>, String>;

/// How the R new entries of a superstep are shared among the slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum Shares {
    /// The next R entries of the workload, each to the slice its fingerprint hashes to (what
    /// `CbtQueue::superstep` does with a crawler's batch): shares vary around R/T.
    Hashed,
    /// Exactly R/T new entries for every slice: for each slice, the next R/T entries of the
    /// workload that hash to it (the paper's insert-many(R/T) per thread). The fill is the first
    /// N entries of the workload, hashed, so the slices hold slightly different numbers of
    /// entries and keep different numbers (0 to R/T - 1) of them pending in RAM.
    Equal,
    /// Equal shares and an equal fill: every slice is filled with N/T entries (the next that
    /// hash to it) by insert-many of R/T, and inserts exactly R/T per superstep, so every slice
    /// holds whole blocks only, the same number of them, and nothing pending: the paper's CBT
    /// "symmetrically partitioned into T slices".
    Symmetric,
}

impl Shares {
    /// Name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Shares::Hashed => "hashed shares",
            Shares::Equal => "equal shares (R/T each)",
            Shares::Symmetric => "symmetric (equal fill of N/T and equal shares of R/T)",
        }
    }
}

/// Which SELECTs of the paper's Figs. 1 and 2 the CBT runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum Selects {
    /// dragnet's default: a SELECT that would change nothing (decided from the blocks' smallest
    /// and largest entries, kept in RAM) is skipped with its block I/O.
    Skip,
    /// The paper's pseudo-code: a SELECT (here a merge) at every level of the path
    /// (`CbtQueue::set_paper_selects`).
    Paper,
}

impl Selects {
    /// Name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Selects::Skip => "SELECTs skipped when they change nothing (dragnet)",
            Selects::Paper => "every SELECT run (the paper's Figs. 1 and 2)",
        }
    }
}

/// Table 1 parameters.
#[derive(Debug, Clone)]
pub struct Table1Config {
    /// The workload.
    pub sample: Sample,
    /// Queue size N (all slices together).
    pub n: u64,
    /// R, extracted (and inserted) per superstep by all slices together.
    pub r: usize,
    /// The values of T.
    pub threads: Vec<usize>,
    /// RAM budget in percent of the queue's packed pages (for the I/O efficiencies).
    pub ram_percent: f64,
    /// The ways of sharing the inserts to run.
    pub shares: Vec<Shares>,
    /// The SELECT settings to run.
    pub selects: Vec<Selects>,
}

/// Window lengths (in supersteps) of [`Table1Row::windows`].
pub const WINDOWS: [usize; 5] = [1, 2, 5, 10, 25];

/// Efficiency when each slice's work is summed over windows of `supersteps` supersteps.
#[derive(Debug, Clone, Serialize)]
pub struct WindowEfficiency {
    /// Window length in supersteps.
    pub supersteps: usize,
    /// Extract-top(R/T), work = key comparisons.
    pub extract_cmp: f64,
    /// Insert-many, work = key comparisons.
    pub insert_cmp: f64,
}

/// One row of Table 1.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Row {
    /// How the inserts were shared.
    pub shares: Shares,
    /// Which SELECTs the CBT ran.
    pub selects: Selects,
    /// T.
    pub t: usize,
    /// R/T.
    pub per_slice: usize,
    /// N.
    pub n: u64,
    /// Measured supersteps.
    pub supersteps: usize,
    /// Frames of the pager cache.
    pub cache_pages: usize,
    /// Efficiency of extract-top(R/T), work = key comparisons.
    pub extract_cmp: f64,
    /// Efficiency of insert-many, work = key comparisons.
    pub insert_cmp: f64,
    /// Efficiency of extract-top(R/T), work = block I/Os.
    pub extract_io: f64,
    /// Efficiency of insert-many, work = block I/Os.
    pub insert_io: f64,
    /// Efficiency of extract-top(R/T) over the whole run (each slice's comparisons summed over
    /// the measured supersteps, then mean over max), the lenient reading of the paper's X/Y.
    pub extract_cmp_run: f64,
    /// Efficiency of insert-many over the whole run, work = key comparisons.
    pub insert_cmp_run: f64,
    /// Efficiency (comparisons) over windows of each of [`WINDOWS`] supersteps.
    pub windows: Vec<WindowEfficiency>,
    /// Efficiency of the whole superstep (both operations), work = key comparisons.
    pub superstep_cmp: f64,
    /// Key comparisons per superstep, all slices.
    pub comparisons_per_superstep: f64,
    /// Block I/Os per superstep, all slices.
    pub ios_per_superstep: f64,
    /// Wall milliseconds per superstep (extract call + insert call).
    pub ms_per_superstep: f64,
    /// Wall milliseconds per extract call.
    pub ms_extract: f64,
    /// Wall milliseconds per insert call.
    pub ms_insert: f64,
    /// Speed-up: ms per superstep at T = the first T of the table over this row's.
    pub speedup: f64,
}

/// Runs Table 1: one row per T.
pub fn table1(
    common: &Common,
    cfg: &Table1Config,
    open: SlicedOpener<'_>,
) -> Result<Vec<Table1Row>, String> {
    let sched = common.sched;
    let measured = sched.measured(cfg.n, cfg.r);
    // Equal shares take each slice's entries from further down the stream: some slack.
    let len = stream_len(cfg.n, cfg.r, &sched) + cfg.r * (sched.warmup + measured) / 4 + 4 * cfg.r;
    let t0 = Instant::now();
    let stream = cfg.sample.entries(len)?;
    if stream.len() < len {
        return Err(format!("{}: workload too short", cfg.sample.name()));
    }
    eprintln!(
        "pqbench: table1: {} stream of {len} entries made in {:.1} s",
        cfg.sample.name(),
        t0.elapsed().as_secs_f64()
    );
    let mut rows: Vec<Table1Row> = Vec::new();
    for &selects in &cfg.selects {
        for &shares in &cfg.shares {
            let first = rows.len();
            for &t in &cfg.threads {
                let row = table1_row(
                    common,
                    cfg,
                    open,
                    &stream,
                    (shares, selects),
                    t,
                    measured,
                    rows.get(first),
                )?;
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

/// One row: T slices, the inserts shared as `shares`, the SELECTs as `selects`; `base` is the row
/// the speed-up is relative to.
#[allow(clippy::too_many_arguments)]
fn table1_row(
    common: &Common,
    cfg: &Table1Config,
    open: SlicedOpener<'_>,
    stream: &[Entry],
    (shares, selects): (Shares, Selects),
    t: usize,
    measured: usize,
    base: Option<&Table1Row>,
) -> Result<Table1Row, String> {
    let sched = common.sched;
    let t = t.max(1);
    let per_slice = (cfg.r / t).max(1);
    let setup = SliceSetup {
        slices: t,
        per_slice,
        pager: PagerOptions {
            page_size: common.page_size,
            cache_pages: cache_for_percent(cfg.n, common.page_size, cfg.ram_percent),
            durable: false,
        },
        seed: common.seed,
        paper_selects: selects == Selects::Paper,
    };
    let dir = tempfile::Builder::new()
        .prefix("pq-table1-")
        .tempdir_in(&common.work)
        .map_err(|e| format!("temporary directory in {}: {e}", common.work.display()))?;
    let mut q = open(dir.path(), &setup)?;
    if q.slice_count() != t {
        return Err(format!(
            "asked for {t} slices, the queue has {}",
            q.slice_count()
        ));
    }
    let steps = sched.warmup + measured;
    let (fills, batches) = row_workload(cfg, stream, &*q, shares, t, per_slice, steps);
    if batches.len() < steps || batches.iter().any(|b| b.len() != per_slice * t) {
        return Err(format!("table1 T={t}: the workload is too short"));
    }
    for chunk in &fills {
        q.insert_many(chunk).map_err(|e| failed(t, "fill", e))?;
    }
    if q.len() != cfg.n {
        return Err(format!(
            "table1 T={t}: {} entries after the fill, expected {}",
            q.len(),
            cfg.n
        ));
    }
    q.reset_stats();
    let work = run_supersteps(&mut *q, &batches, per_slice, cfg, sched.warmup)?;
    let row = work.row((shares, selects), &setup, cfg.n, measured, base);
    eprintln!(
        "pqbench: table1: {}, {:?} SELECTs, T={t} R/T={per_slice}: extract {:.3}, insert {:.3} \
         (comparisons); {:.3}, {:.3} (I/Os); {:.1} ms/superstep",
        shares.label(),
        selects,
        row.extract_cmp,
        row.insert_cmp,
        row.extract_io,
        row.insert_io,
        row.ms_per_superstep
    );
    Ok(row)
}

/// The message of a queue error in `what` of the row of T = `t`.
fn failed(t: usize, what: &str, e: dragnet::error::Error) -> String {
    format!("table1 T={t}: {what}: {e}")
}

/// The fill of the queue `q` (T = `t` slices), as insert-many calls, and the inserts of each of
/// `steps` supersteps (R/T = `per_slice` for each slice), taken from `stream` and shared among
/// the slices as `shares`.
fn row_workload(
    cfg: &Table1Config,
    stream: &[Entry],
    q: &dyn SlicedQueue,
    shares: Shares,
    t: usize,
    per_slice: usize,
    steps: usize,
) -> (Vec<Vec<Entry>>, Vec<Vec<Entry>>) {
    match shares {
        Shares::Hashed | Shares::Equal => {
            let (fill, rest) = stream.split_at(cfg.n as usize);
            let fills = fill.chunks(cfg.r.max(1)).map(<[Entry]>::to_vec).collect();
            let batches = if shares == Shares::Hashed {
                rest.chunks(per_slice * t)
                    .take(steps)
                    .map(<[Entry]>::to_vec)
                    .collect()
            } else {
                let per = by_slice(rest, q, &vec![per_slice * steps; t]);
                interleave(&per, &vec![0; t], per_slice, steps)
            };
            (fills, batches)
        }
        Shares::Symmetric => symmetric_workload(cfg.n as usize, stream, q, t, per_slice, steps),
    }
}

/// [`Shares::Symmetric`]: every slice filled with `n`/T entries by insert-many of R/T, then R/T
/// inserted into every slice in each superstep.
fn symmetric_workload(
    n: usize,
    stream: &[Entry],
    q: &dyn SlicedQueue,
    t: usize,
    per_slice: usize,
    steps: usize,
) -> (Vec<Vec<Entry>>, Vec<Vec<Entry>>) {
    let sizes: Vec<usize> = (0..t).map(|s| n / t + usize::from(s < n % t)).collect();
    let want: Vec<usize> = sizes.iter().map(|f| f + per_slice * steps).collect();
    let per = by_slice(stream, q, &want);
    let fill_steps = sizes.iter().max().map_or(0, |m| m.div_ceil(per_slice));
    let mut fills = Vec::with_capacity(fill_steps);
    for i in 0..fill_steps {
        let chunk: Vec<Entry> = per
            .iter()
            .zip(&sizes)
            .flat_map(|(p, &f)| p[(i * per_slice).min(f)..((i + 1) * per_slice).min(f)].iter())
            .copied()
            .collect();
        fills.push(chunk);
    }
    (fills, interleave(&per, &sizes, per_slice, steps))
}

/// One superstep as the queue ran it: each slice's counter deltas of the extract call and of
/// the insert call, the whole queue's, and the wall seconds of the two calls.
struct Superstep {
    extract: Vec<IoStats>,
    insert: Vec<IoStats>,
    whole: IoStats,
    extract_secs: f64,
    insert_secs: f64,
}

/// Superstep `step` of the queue `q` (of `n` entries, T slices): every slice extracts its
/// `per_slice` into `out`, then the queue inserts `batch`; checks what came out and that the
/// queue holds `n` entries again.
fn superstep(
    q: &mut dyn SlicedQueue,
    step: usize,
    per_slice: usize,
    batch: &[Entry],
    n: u64,
    out: &mut Vec<Entry>,
) -> Result<Superstep, String> {
    let t = q.slice_count();
    let want = per_slice * t;
    out.clear();
    let s0 = q.stats();
    let te = Instant::now();
    let e = q
        .parallel_superstep(per_slice, &[], out)
        .map_err(|e| failed(t, "extract superstep", e))?;
    let de = te.elapsed().as_secs_f64();
    if out.len() != want {
        return Err(format!(
            "table1 T={t} superstep {step}: extracted {} entries, expected {want}",
            out.len()
        ));
    }
    let ti = Instant::now();
    let i = q
        .parallel_superstep(0, batch, out)
        .map_err(|e| failed(t, "insert superstep", e))?;
    let di = ti.elapsed().as_secs_f64();
    let s1 = q.stats();
    if e.len() != t || i.len() != t {
        return Err(format!(
            "table1 T={t}: superstep returned {} and {} slice counters",
            e.len(),
            i.len()
        ));
    }
    if q.len() != n {
        return Err(format!(
            "table1 T={t} superstep {step}: {} entries, expected {n}",
            q.len()
        ));
    }
    Ok(Superstep {
        extract: e,
        insert: i,
        whole: delta(&s1, &s0),
        extract_secs: de,
        insert_secs: di,
    })
}

/// The work of the measured supersteps: each slice's, superstep by superstep, and the totals.
#[derive(Default)]
struct Work {
    ext_cmp: Vec<Vec<u64>>,
    ext_io: Vec<Vec<u64>>,
    ins_cmp: Vec<Vec<u64>>,
    ins_io: Vec<Vec<u64>>,
    step_cmp: Vec<Vec<u64>>,
    ms_e: f64,
    ms_i: f64,
    cmp_total: u64,
    io_total: u64,
}

/// Runs a superstep per batch of `batches` on `q`, and returns the work of those after the
/// first `warmup`.
fn run_supersteps(
    q: &mut dyn SlicedQueue,
    batches: &[Vec<Entry>],
    per_slice: usize,
    cfg: &Table1Config,
    warmup: usize,
) -> Result<Work, String> {
    let mut work = Work::default();
    let mut out = Vec::with_capacity(cfg.r);
    for (step, batch) in batches.iter().enumerate() {
        let s = superstep(q, step, per_slice, batch, cfg.n, &mut out)?;
        if step >= warmup {
            work.add(&s);
        }
    }
    Ok(work)
}

impl Work {
    /// Adds the work of the measured superstep `s`.
    fn add(&mut self, s: &Superstep) {
        let (e, i) = (&s.extract, &s.insert);
        self.cmp_total += s.whole.comparisons;
        self.io_total += s.whole.block_ios();
        self.ms_e += 1e3 * s.extract_secs;
        self.ms_i += 1e3 * s.insert_secs;
        self.ext_cmp
            .push(e.iter().map(|s| s.comparisons).collect::<Vec<_>>());
        self.ext_io
            .push(e.iter().map(|s| s.block_ios()).collect::<Vec<_>>());
        self.ins_cmp
            .push(i.iter().map(|s| s.comparisons).collect::<Vec<_>>());
        self.ins_io
            .push(i.iter().map(|s| s.block_ios()).collect::<Vec<_>>());
        self.step_cmp.push(
            e.iter()
                .zip(i)
                .map(|(a, b)| a.comparisons + b.comparisons)
                .collect::<Vec<_>>(),
        );
    }

    /// The row of this work: the queue opened as `setup`, `n` entries, `measured` supersteps,
    /// the speed-up relative to `base`.
    fn row(
        &self,
        (shares, selects): (Shares, Selects),
        setup: &SliceSetup,
        n: u64,
        measured: usize,
        base: Option<&Table1Row>,
    ) -> Table1Row {
        let s = measured as f64;
        let ms = (self.ms_e + self.ms_i) / s;
        let speedup = base.map_or(1.0, |r0| r0.ms_per_superstep / ms);
        Table1Row {
            shares,
            selects,
            t: setup.slices,
            per_slice: setup.per_slice,
            n,
            supersteps: measured,
            cache_pages: setup.pager.cache_pages,
            extract_cmp: efficiency(&self.ext_cmp),
            insert_cmp: efficiency(&self.ins_cmp),
            extract_io: efficiency(&self.ext_io),
            insert_io: efficiency(&self.ins_io),
            superstep_cmp: efficiency(&self.step_cmp),
            windows: WINDOWS
                .iter()
                .map(|&w| WindowEfficiency {
                    supersteps: w,
                    extract_cmp: efficiency(&windows(&self.ext_cmp, w)),
                    insert_cmp: efficiency(&windows(&self.ins_cmp, w)),
                })
                .collect(),
            extract_cmp_run: efficiency(&[column_sums(&self.ext_cmp)]),
            insert_cmp_run: efficiency(&[column_sums(&self.ins_cmp)]),
            comparisons_per_superstep: self.cmp_total as f64 / s,
            ios_per_superstep: self.io_total as f64 / s,
            ms_per_superstep: ms,
            ms_extract: self.ms_e / s,
            ms_insert: self.ms_i / s,
            speedup,
        }
    }
}

/// For each slice s, the first `want[s]` entries of `stream` that go to it, in stream order.
fn by_slice(stream: &[Entry], q: &dyn SlicedQueue, want: &[usize]) -> Vec<Vec<Entry>> {
    let mut per: Vec<Vec<Entry>> = want.iter().map(|&w| Vec::with_capacity(w)).collect();
    for e in stream {
        let s = q.slice_of(e);
        if per[s].len() < want[s] {
            per[s].push(*e);
        }
    }
    per
}

/// `steps` batches of `per_slice` entries from every slice: batch i takes, from slice s,
/// `per[s][skip[s] + i * per_slice ..][.. per_slice]` (short if the slice's list runs out).
fn interleave(
    per: &[Vec<Entry>],
    skip: &[usize],
    per_slice: usize,
    steps: usize,
) -> Vec<Vec<Entry>> {
    (0..steps)
        .map(|i| {
            per.iter()
                .zip(skip)
                .flat_map(|(p, &k)| p.iter().skip(k + i * per_slice).take(per_slice))
                .copied()
                .collect()
        })
        .collect()
}

/// Per-slice totals of `work[s][t]` over the supersteps s.
fn column_sums(work: &[Vec<u64>]) -> Vec<u64> {
    let mut sum = vec![0u64; work.first().map_or(0, Vec::len)];
    for step in work {
        for (a, b) in sum.iter_mut().zip(step) {
            *a += b;
        }
    }
    sum
}

fn paper(t: usize) -> Option<(f64, f64)> {
    PAPER_TABLE1.iter().find(|p| p.0 == t).map(|p| (p.2, p.3))
}

/// Table 1 as markdown, with the paper's values beside ours.
pub fn table1_markdown(rows: &[Table1Row], common: &Common, cfg: &Table1Config) -> String {
    let mut out = String::from("## Table 1: efficiency of the CBT's slices\n\n");
    out.push_str(&format!(
        "Workload {}: {}. N = {}, R = {} per superstep in total, RAM = {} % of the queue's \
         pages, page {} B. {} Efficiency X/Y (1 = perfect \
         balance) with the work of a slice counted as key comparisons or as block I/Os, per \
         superstep (X = mean over supersteps of the mean over slices, Y = mean over supersteps \
         of the maximum); \"run\" columns use each slice's total over all measured supersteps \
         instead; \"superstep\" is both operations together. Wall times are of the parallel \
         calls on this machine; speed-up is relative to the first T.\n\n",
        cfg.sample.name(),
        cfg.sample.describe(),
        cfg.n,
        cfg.r,
        cfg.ram_percent,
        common.page_size,
        crate::experiments::schedule_line(&common.sched)
    ));
    for (shares, selects) in groups(rows) {
        let sel: Vec<&Table1Row> = rows
            .iter()
            .filter(|r| r.shares == shares && r.selects == selects)
            .collect();
        out.push_str(&format!(
            "### Inserts: {}; {}\n\n",
            shares.label(),
            selects.label()
        ));
        out.push_str(
            "| T | R/T | extract (cmp) | insert (cmp) | paper extract | paper insert | extract \
             (cmp, run) | insert (cmp, run) | extract (I/O) | insert (I/O) | superstep (cmp) | \
             cmp/superstep | I/Os/superstep | ms extract | ms insert | speed-up |\n|---:|---:|---:\
             |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in sel {
            let (pe, pi) = paper(r.t)
                .map(|(e, i)| (format!("{e:.2}"), format!("{i:.2}")))
                .unwrap_or(("-".into(), "-".into()));
            out.push_str(&format!(
                "| {} | {} | {:.3} | {:.3} | {pe} | {pi} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} \
                 | {:.0} | {:.1} | {:.1} | {:.1} | {:.2} |\n",
                r.t,
                r.per_slice,
                r.extract_cmp,
                r.insert_cmp,
                r.extract_cmp_run,
                r.insert_cmp_run,
                r.extract_io,
                r.insert_io,
                r.superstep_cmp,
                r.comparisons_per_superstep,
                r.ios_per_superstep,
                r.ms_extract,
                r.ms_insert,
                r.speedup
            ));
        }
        out.push('\n');
        out.push_str(
            "Efficiency extract / insert (comparisons) with each slice's work summed over windows \
             of W supersteps:\n\n| T |",
        );
        for w in WINDOWS {
            out.push_str(&format!(" W = {w} |"));
        }
        out.push_str(" run | paper |\n|---:|");
        for _ in 0..WINDOWS.len() + 2 {
            out.push_str("---:|");
        }
        out.push('\n');
        for r in rows
            .iter()
            .filter(|r| r.shares == shares && r.selects == selects)
        {
            out.push_str(&format!("| {} |", r.t));
            for w in &r.windows {
                out.push_str(&format!(" {:.3} / {:.3} |", w.extract_cmp, w.insert_cmp));
            }
            let p = paper(r.t).map_or("-".into(), |(e, i)| format!("{e:.2} / {i:.2}"));
            out.push_str(&format!(
                " {:.3} / {:.3} | {p} |\n",
                r.extract_cmp_run, r.insert_cmp_run
            ));
        }
        out.push('\n');
    }
    out
}

/// The (shares, selects) combinations present in `rows`, in order of appearance.
fn groups(rows: &[Table1Row]) -> Vec<(Shares, Selects)> {
    let mut g: Vec<(Shares, Selects)> = Vec::new();
    for r in rows {
        if !g.contains(&(r.shares, r.selects)) {
            g.push((r.shares, r.selects));
        }
    }
    g
}

/// Table 1 chart (`pqbench-table1.png`): efficiency (work = key comparisons) versus T, for every
/// way of sharing the inserts and SELECT setting run, and the paper's.
pub fn table1_png(rows: &[Table1Row]) -> std::io::Result<Vec<u8>> {
    let mut series = Vec::new();
    // Extract and insert colours of each group, in order (blues and greens, then purples and
    // oranges).
    const COLORS: [([u8; 3], [u8; 3]); 6] = [
        ([30, 90, 220], [0, 150, 60]),
        ([130, 170, 245], [120, 215, 150]),
        ([150, 40, 200], [200, 120, 0]),
        ([210, 150, 240], [240, 190, 110]),
        ([0, 170, 190], [160, 160, 0]),
        ([220, 60, 120], [120, 80, 40]),
    ];
    for (gi, (shares, selects)) in groups(rows).into_iter().enumerate() {
        // Short labels (the chart's legend is narrow): shares SYM / EQ / HASH, SELECTs SKIP
        // (dragnet) / ALL (the paper's).
        let name = format!(
            "{} {}",
            match shares {
                Shares::Equal => "EQ",
                Shares::Hashed => "HASH",
                Shares::Symmetric => "SYM",
            },
            match selects {
                Selects::Skip => "SKIP",
                Selects::Paper => "ALL",
            }
        );
        let (ce, ci) = COLORS[gi % COLORS.len()];
        let pick = |f: &dyn Fn(&Table1Row) -> f64| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r.shares == shares && r.selects == selects)
                .map(|r| (r.t as f64, f(r)))
                .collect()
        };
        series.push(Series {
            label: format!("EXT {name}"),
            color: ce,
            points: pick(&|r| r.extract_cmp),
        });
        series.push(Series {
            label: format!("INS {name}"),
            color: ci,
            points: pick(&|r| r.insert_cmp),
        });
    }
    series.extend([
        Series {
            label: "PAPER EXT".into(),
            color: [0, 0, 0],
            points: PAPER_TABLE1.iter().map(|p| (p.0 as f64, p.2)).collect(),
        },
        Series {
            label: "PAPER INS".into(),
            color: [150, 150, 150],
            points: PAPER_TABLE1.iter().map(|p| (p.0 as f64, p.3)).collect(),
        },
    ]);
    let lo = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::min);
    let y = Axis {
        label: "EFFICIENCY X/Y".into(),
        min: ((lo * 10.0).floor() / 10.0).clamp(0.0, 0.9),
        max: 1.0,
        scale: Scale::Linear,
    };
    let tmax = rows.iter().map(|r| r.t).chain([8]).max().unwrap_or(8) as f64;
    let x = Axis {
        label: "T (SLICES = THREADS)".into(),
        min: 0.0,
        max: tmax,
        scale: Scale::Linear,
    };
    line_chart(
        "TABLE 1: CBT LOAD BALANCE (COMPARISONS) VS T",
        &x,
        &y,
        &series,
    )
    .to_png()
}
