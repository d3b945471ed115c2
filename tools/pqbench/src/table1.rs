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

use std::path::Path;
use std::time::Instant;

use cachesim::plot::{line_chart, Axis, Scale, Series};
use dragnet::error::Result as DnResult;
use dragnet::queue::pager::PagerOptions;
use dragnet::queue::{DiskQueue, Entry, IoStats};
use serde::Serialize;

use crate::efficiency::{efficiency, PAPER_TABLE1};
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
}

/// Opens a new sliced queue in an empty directory.
pub type SlicedOpener<'a> = &'a dyn Fn(&Path, &SliceSetup) -> Result<Box<dyn SlicedQueue>, String>;

/// How the R new entries of a superstep are shared among the slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Shares {
    /// The next R entries of the workload, each to the slice its fingerprint hashes to (what
    /// `CbtQueue::superstep` does with a crawler's batch): shares vary around R/T.
    Hashed,
    /// Exactly R/T new entries for every slice: for each slice, the next R/T entries of the
    /// workload that hash to it (the paper's insert-many(R/T) per thread).
    Equal,
}

impl Shares {
    /// Name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Shares::Hashed => "hashed shares",
            Shares::Equal => "equal shares (R/T each)",
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
}

/// One row of Table 1.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Row {
    /// How the inserts were shared.
    pub shares: Shares,
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
    for shares in [Shares::Equal, Shares::Hashed] {
        let first = rows.len();
        for &t in &cfg.threads {
            let row = table1_row(
                common,
                cfg,
                open,
                &stream,
                shares,
                t,
                measured,
                rows.get(first),
            )?;
            rows.push(row);
        }
    }
    Ok(rows)
}

/// One row: T slices, the inserts shared as `shares`; `base` is the row the speed-up is relative
/// to.
#[allow(clippy::too_many_arguments)]
fn table1_row(
    common: &Common,
    cfg: &Table1Config,
    open: SlicedOpener<'_>,
    stream: &[Entry],
    shares: Shares,
    t: usize,
    measured: usize,
    base: Option<&Table1Row>,
) -> Result<Table1Row, String> {
    let sched = common.sched;
    {
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
        let err = |what: &str, e: dragnet::error::Error| format!("table1 T={t}: {what}: {e}");
        let (fill, rest) = stream.split_at(cfg.n as usize);
        let steps = sched.warmup + measured;
        let batches: Vec<Vec<Entry>> = match shares {
            Shares::Hashed => rest
                .chunks(per_slice * t)
                .take(steps)
                .map(|c| c.to_vec())
                .collect(),
            Shares::Equal => {
                let mut per: Vec<Vec<Entry>> = vec![Vec::new(); t];
                for e in rest {
                    let s = q.slice_of(e);
                    if per[s].len() < per_slice * steps {
                        per[s].push(*e);
                    }
                }
                (0..steps)
                    .map(|i| {
                        per.iter()
                            .flat_map(|p| p.iter().skip(i * per_slice).take(per_slice))
                            .copied()
                            .collect()
                    })
                    .collect()
            }
        };
        if batches.len() < steps || batches.iter().any(|b| b.len() != per_slice * t) {
            return Err(format!("table1 T={t}: the workload is too short"));
        }
        for chunk in fill.chunks(cfg.r.max(1)) {
            q.insert_many(chunk).map_err(|e| err("fill", e))?;
        }
        q.reset_stats();
        let mut ext_cmp = Vec::new();
        let mut ext_io = Vec::new();
        let mut ins_cmp = Vec::new();
        let mut ins_io = Vec::new();
        let mut step_cmp = Vec::new();
        let (mut ms_e, mut ms_i) = (0.0, 0.0);
        let (mut cmp_total, mut io_total) = (0u64, 0u64);
        let mut out = Vec::with_capacity(cfg.r);
        let want = per_slice * t;
        for (step, batch) in batches.iter().enumerate() {
            out.clear();
            let s0 = q.stats();
            let te = Instant::now();
            let e = q
                .parallel_superstep(per_slice, &[], &mut out)
                .map_err(|e| err("extract superstep", e))?;
            let de = te.elapsed().as_secs_f64();
            if out.len() != want {
                return Err(format!(
                    "table1 T={t} superstep {step}: extracted {} entries, expected {want}",
                    out.len()
                ));
            }
            let ti = Instant::now();
            let i = q
                .parallel_superstep(0, batch, &mut out)
                .map_err(|e| err("insert superstep", e))?;
            let di = ti.elapsed().as_secs_f64();
            let s1 = q.stats();
            if e.len() != t || i.len() != t {
                return Err(format!(
                    "table1 T={t}: superstep returned {} and {} slice counters",
                    e.len(),
                    i.len()
                ));
            }
            if q.len() != cfg.n {
                return Err(format!(
                    "table1 T={t} superstep {step}: {} entries, expected {}",
                    q.len(),
                    cfg.n
                ));
            }
            if step < sched.warmup {
                continue;
            }
            let d = delta(&s1, &s0);
            cmp_total += d.comparisons;
            io_total += d.block_ios();
            ms_e += 1e3 * de;
            ms_i += 1e3 * di;
            ext_cmp.push(e.iter().map(|s| s.comparisons).collect::<Vec<_>>());
            ext_io.push(e.iter().map(|s| s.block_ios()).collect::<Vec<_>>());
            ins_cmp.push(i.iter().map(|s| s.comparisons).collect::<Vec<_>>());
            ins_io.push(i.iter().map(|s| s.block_ios()).collect::<Vec<_>>());
            step_cmp.push(
                e.iter()
                    .zip(&i)
                    .map(|(a, b)| a.comparisons + b.comparisons)
                    .collect::<Vec<_>>(),
            );
        }
        let s = measured as f64;
        let ms = (ms_e + ms_i) / s;
        let speedup = base.map_or(1.0, |r0| r0.ms_per_superstep / ms);
        let row = Table1Row {
            shares,
            t,
            per_slice,
            n: cfg.n,
            supersteps: measured,
            cache_pages: setup.pager.cache_pages,
            extract_cmp: efficiency(&ext_cmp),
            insert_cmp: efficiency(&ins_cmp),
            extract_io: efficiency(&ext_io),
            insert_io: efficiency(&ins_io),
            superstep_cmp: efficiency(&step_cmp),
            extract_cmp_run: efficiency(&[column_sums(&ext_cmp)]),
            insert_cmp_run: efficiency(&[column_sums(&ins_cmp)]),
            comparisons_per_superstep: cmp_total as f64 / s,
            ios_per_superstep: io_total as f64 / s,
            ms_per_superstep: ms,
            ms_extract: ms_e / s,
            ms_insert: ms_i / s,
            speedup,
        };
        eprintln!(
            "pqbench: table1: {}, T={t} R/T={per_slice}: extract {:.3}, insert {:.3} (comparisons); \
             {:.3}, {:.3} (I/Os); {:.1} ms/superstep",
            shares.label(),
            row.extract_cmp, row.insert_cmp, row.extract_io, row.insert_io, ms
        );
        Ok(row)
    }
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
    for shares in [Shares::Equal, Shares::Hashed] {
        let sel: Vec<&Table1Row> = rows.iter().filter(|r| r.shares == shares).collect();
        if sel.is_empty() {
            continue;
        }
        out.push_str(&format!("### Inserts: {}\n\n", shares.label()));
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
    }
    out
}

/// Table 1 chart (`pqbench-table1.png`): efficiency (work = key comparisons) versus T, for both
/// ways of sharing the inserts, and the paper's.
pub fn table1_png(rows: &[Table1Row]) -> std::io::Result<Vec<u8>> {
    let pick = |shares: Shares, f: &dyn Fn(&Table1Row) -> f64| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.shares == shares)
            .map(|r| (r.t as f64, f(r)))
            .collect()
    };
    let series = vec![
        Series {
            label: "EXTRACT EQUAL".into(),
            color: [30, 90, 220],
            points: pick(Shares::Equal, &|r| r.extract_cmp),
        },
        Series {
            label: "INSERT EQUAL".into(),
            color: [0, 150, 60],
            points: pick(Shares::Equal, &|r| r.insert_cmp),
        },
        Series {
            label: "EXTRACT HASHED".into(),
            color: [130, 170, 245],
            points: pick(Shares::Hashed, &|r| r.extract_cmp),
        },
        Series {
            label: "INSERT HASHED".into(),
            color: [120, 215, 150],
            points: pick(Shares::Hashed, &|r| r.insert_cmp),
        },
        Series {
            label: "PAPER EXTRACT".into(),
            color: [0, 0, 0],
            points: PAPER_TABLE1.iter().map(|p| (p.0 as f64, p.2)).collect(),
        },
        Series {
            label: "PAPER INSERT".into(),
            color: [150, 150, 150],
            points: PAPER_TABLE1.iter().map(|p| (p.0 as f64, p.3)).collect(),
        },
    ];
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
