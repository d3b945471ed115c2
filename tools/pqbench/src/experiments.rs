//! Fig. 8 (key comparisons) and Fig. 9 (block I/Os): the runs, their markdown tables and PNG
//! charts. Table 1 is in [`crate::table1`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use cachesim::plot::{line_chart, Axis, Rgb, Scale, Series};
use dragnet::queue::pager::PagerOptions;
use dragnet::queue::Entry;

use crate::queues::{QueueKind, QueueSetup};
use crate::run::{queue_pages, run, stream_len, RunResult, Schedule};
use crate::workload::Sample;

/// Settings shared by every experiment.
#[derive(Debug, Clone)]
pub struct Common {
    /// Workloads.
    pub samples: Vec<Sample>,
    /// Queues compared.
    pub queues: Vec<QueueKind>,
    /// Bytes per page (block).
    pub page_size: usize,
    /// Seed of the quickheap's pivots.
    pub seed: u64,
    /// Warm-up, measured supersteps, verification.
    pub sched: Schedule,
    /// Runs in parallel (counts do not depend on it; wall times do).
    pub jobs: usize,
    /// Where the queue files go (a temporary directory per run).
    pub work: PathBuf,
}

/// How the supersteps of a run were scheduled, as a sentence.
pub fn schedule_line(s: &Schedule) -> String {
    format!(
        "The queue is filled with N entries (insert-many of R at a time), then {} unmeasured \
         supersteps, then max({}, {} x N / R) measured ones (column `steps` of the details); \
         every extraction {}.",
        s.warmup,
        s.min_supersteps,
        s.turnover,
        if s.verify {
            "was checked against an in-memory reference heap"
        } else {
            "was checked for size and order only"
        }
    )
}

/// A pager cache big enough to hold any of the queues of `n` entries whole (frames are only
/// allocated when used): for comparison counts, which do not depend on the RAM budget.
pub fn unbounded_cache(n: u64, page_size: usize) -> usize {
    (8 * queue_pages(n, page_size) + 4096) as usize
}

/// The smallest page (a multiple of 512 bytes, as the pager wants) that holds R entries besides
/// the pager's page trailer: with it, a CBT block of R entries is exactly one page and one I/O,
/// the paper's "R-sized nodes" on disk, and the quickheap's array is in blocks of R as well.
pub fn page_for_r(r: usize) -> usize {
    (r.max(1) * Entry::SIZE + dragnet::queue::pager::PAGE_TRAILER).div_ceil(512) * 512
}

/// The cache that holds `percent` % of the pages of `n` packed entries (at least one page).
pub fn cache_for_percent(n: u64, page_size: usize, percent: f64) -> usize {
    ((queue_pages(n, page_size) as f64 * percent / 100.0).round() as usize).max(1)
}

/// One run to do: workload index and queue setup.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// Index into [`Common::samples`].
    pub sample: usize,
    /// The queue.
    pub setup: QueueSetup,
}

/// Runs `jobs` (on [`Common::jobs`] threads), each on the stream of its sample. Results in job
/// order.
pub fn run_jobs(common: &Common, tag: &str, jobs: &[Job]) -> Result<Vec<RunResult>, String> {
    // One stream per sample, as long as the longest run needs; shorter runs use a prefix (the
    // generators are prefix-stable).
    let mut need: BTreeMap<usize, usize> = BTreeMap::new();
    for j in jobs {
        let len = stream_len(j.setup.n, j.setup.r, &common.sched);
        let e = need.entry(j.sample).or_default();
        *e = (*e).max(len);
    }
    let mut streams: BTreeMap<usize, Vec<Entry>> = BTreeMap::new();
    for (&s, &len) in &need {
        let t = Instant::now();
        let v = common.samples[s].entries(len)?;
        if v.len() < len {
            return Err(format!(
                "{}: the workload yields only {} entries",
                common.samples[s].name(),
                v.len()
            ));
        }
        eprintln!(
            "pqbench: {tag}: {} stream of {len} entries made in {:.1} s",
            common.samples[s].name(),
            t.elapsed().as_secs_f64()
        );
        streams.insert(s, v);
    }
    let cursor = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Result<RunResult, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..common.jobs.max(1) {
            sc.spawn(|| loop {
                let i = cursor.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let name = common.samples[j.sample].name();
                let t = Instant::now();
                let r = run(
                    &name,
                    &j.setup,
                    &common.sched,
                    &streams[&j.sample],
                    &common.work,
                );
                if let Ok(res) = &r {
                    eprintln!(
                        "pqbench: {tag}: {name} {} N={} R={} cache={}: {:.2} cmp/op, {:.3} I/O/op ({:.1} s)",
                        j.setup.kind.label(),
                        j.setup.n,
                        j.setup.r,
                        j.setup.pager.cache_pages,
                        res.comparisons_per_op(),
                        res.ios_per_op(),
                        t.elapsed().as_secs_f64()
                    );
                }
                let failed = r.is_err();
                done.lock().expect("lock").push((i, r));
                if failed {
                    // Stop handing out work; the error is reported below.
                    cursor.store(jobs.len(), Ordering::Relaxed);
                }
            });
        }
    });
    let mut done = done.into_inner().expect("lock");
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Fig. 8 parameters.
#[derive(Debug, Clone)]
pub struct Fig8Config {
    /// Queue sizes of the N sweep.
    pub n_values: Vec<u64>,
    /// R of the N sweep.
    pub r: usize,
    /// R values of the R sweep.
    pub r_values: Vec<usize>,
    /// N of the R sweep.
    pub n: u64,
}

/// Fig. 8 results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fig8 {
    /// The N sweep (R fixed).
    pub by_n: Vec<RunResult>,
    /// The R sweep (N fixed).
    pub by_r: Vec<RunResult>,
}

/// Fig. 8: key comparisons of every queue on every sample, versus N and versus R, with a RAM
/// budget that holds the whole queue.
pub fn fig8(common: &Common, cfg: &Fig8Config) -> Result<Fig8, String> {
    let mk = |sample: usize, kind: QueueKind, n: u64, r: usize| Job {
        sample,
        setup: QueueSetup {
            kind,
            n,
            r,
            pager: PagerOptions {
                page_size: common.page_size,
                cache_pages: unbounded_cache(n, common.page_size),
                durable: false,
            },
            seed: common.seed,
        },
    };
    let mut by_n = Vec::new();
    let mut by_r = Vec::new();
    for s in 0..common.samples.len() {
        for &n in &cfg.n_values {
            for &k in &common.queues {
                by_n.push(mk(s, k, n, cfg.r));
            }
        }
        for &r in &cfg.r_values {
            for &k in &common.queues {
                by_r.push(mk(s, k, cfg.n, r));
            }
        }
    }
    Ok(Fig8 {
        by_n: run_jobs(common, "fig8", &by_n)?,
        by_r: run_jobs(common, "fig8", &by_r)?,
    })
}

/// Fig. 9 parameters.
#[derive(Debug, Clone)]
pub struct Fig9Config {
    /// Queue size.
    pub n: u64,
    /// R values.
    pub r_values: Vec<usize>,
    /// RAM budgets in percent of the queue's packed pages.
    pub ram_percents: Vec<f64>,
    /// Pages of R entries ([`page_for_r`]) for each R instead of [`Common::page_size`].
    pub page_per_r: bool,
}

/// Fig. 9 results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fig9 {
    /// RAM percent of each run, in the order of `runs`.
    pub ram_percent: Vec<f64>,
    /// Whether each run's page held R entries ([`Fig9Config::page_per_r`]).
    pub page_per_r: bool,
    /// The runs.
    pub runs: Vec<RunResult>,
}

/// Fig. 9: block I/Os of every queue on every sample versus R, with the pager's cache at each
/// RAM percentage of the queue's size.
pub fn fig9(common: &Common, cfg: &Fig9Config) -> Result<Fig9, String> {
    let mut jobs = Vec::new();
    let mut pct = Vec::new();
    for s in 0..common.samples.len() {
        for &p in &cfg.ram_percents {
            for &r in &cfg.r_values {
                let page = if cfg.page_per_r {
                    page_for_r(r)
                } else {
                    common.page_size
                };
                for &k in &common.queues {
                    pct.push(p);
                    jobs.push(Job {
                        sample: s,
                        setup: QueueSetup {
                            kind: k,
                            n: cfg.n,
                            r,
                            pager: PagerOptions {
                                page_size: page,
                                cache_pages: cache_for_percent(cfg.n, page, p),
                                durable: false,
                            },
                            seed: common.seed,
                        },
                    });
                }
            }
        }
    }
    Ok(Fig9 {
        ram_percent: pct,
        page_per_r: cfg.page_per_r,
        runs: run_jobs(common, "fig9", &jobs)?,
    })
}

/// Colour of a queue's line (a lighter shade for the second RAM budget of Fig. 9).
pub fn color(kind: QueueKind, light: bool) -> Rgb {
    match (kind, light) {
        (QueueKind::Qheap, false) => [30, 90, 220],
        (QueueKind::Qheap, true) => [130, 170, 245],
        (QueueKind::Cbt, false) => [0, 150, 60],
        (QueueKind::Cbt, true) => [120, 215, 150],
        (QueueKind::Bheap, false) => [230, 110, 0],
        (QueueKind::Bheap, true) => [250, 185, 115],
    }
}

fn queues_in(runs: &[RunResult]) -> Vec<QueueKind> {
    let mut q: Vec<QueueKind> = runs.iter().map(|r| r.queue).collect();
    q.sort();
    q.dedup();
    q
}

fn samples_in(runs: &[RunResult]) -> Vec<String> {
    let mut s: Vec<String> = Vec::new();
    for r in runs {
        if !s.contains(&r.sample) {
            s.push(r.sample.clone());
        }
    }
    s
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".into()
    }
}

/// A pivot table of `runs` (one sample): a row per `row_key`, a column per queue with
/// `value`, and the QHEAP/BHEAP and QHEAP/CBT ratios when those queues are present.
fn pivot(
    runs: &[&RunResult],
    row_head: &str,
    row_key: impl Fn(&RunResult) -> (u64, String),
    value: impl Fn(&RunResult) -> f64,
    decimals: usize,
) -> String {
    let queues = queues_in(&runs.iter().map(|r| (*r).clone()).collect::<Vec<_>>());
    let mut rows: BTreeMap<u64, (String, BTreeMap<QueueKind, f64>)> = BTreeMap::new();
    for r in runs {
        let (k, label) = row_key(r);
        rows.entry(k)
            .or_insert_with(|| (label, BTreeMap::new()))
            .1
            .insert(r.queue, value(r));
    }
    let has = |k| queues.contains(&k);
    let mut out = format!("| {row_head} |");
    for q in &queues {
        out.push_str(&format!(" {} |", q.label()));
    }
    let ratios: Vec<(QueueKind, QueueKind)> = [
        (QueueKind::Qheap, QueueKind::Bheap),
        (QueueKind::Qheap, QueueKind::Cbt),
    ]
    .into_iter()
    .filter(|(a, b)| has(*a) && has(*b))
    .collect();
    for (a, b) in &ratios {
        out.push_str(&format!(" {} / {} |", a.label(), b.label()));
    }
    out.push_str("\n|---:|");
    for _ in 0..queues.len() + ratios.len() {
        out.push_str("---:|");
    }
    out.push('\n');
    for (label, vals) in rows.values() {
        out.push_str(&format!("| {label} |"));
        for q in &queues {
            match vals.get(q) {
                Some(v) => out.push_str(&format!(" {v:.decimals$} |")),
                None => out.push_str(" - |"),
            }
        }
        for (a, b) in &ratios {
            match (vals.get(a), vals.get(b)) {
                (Some(x), Some(y)) => out.push_str(&format!(" {} |", ratio(*x, *y))),
                _ => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// Detail rows: every counter of every run.
fn details(runs: &[&RunResult], with_ram: Option<&[f64]>) -> String {
    let mut out = String::from("| sample | queue | N | R |");
    if with_ram.is_some() {
        out.push_str(" RAM % (pages) |");
    }
    out.push_str(
        " steps | fresh % | cmp/superstep | extract cmp/entry | insert cmp/entry | reads/superstep | writes/superstep | I/Os per op | ms/superstep |\n|---|---|---:|---:|",
    );
    if with_ram.is_some() {
        out.push_str("---:|");
    }
    out.push_str("---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i, r) in runs.iter().enumerate() {
        let s = r.supersteps.max(1) as f64;
        let ops = (r.r * r.supersteps).max(1) as f64;
        out.push_str(&format!(
            "| {} | {} | {} | {} |",
            r.sample,
            r.queue.label(),
            r.n,
            r.r
        ));
        if let Some(p) = with_ram {
            out.push_str(&format!(" {} ({}) |", p[i], r.cache_pages));
        }
        out.push_str(&format!(
            " {} | {:.1} | {:.0} | {:.2} | {:.2} | {:.1} | {:.1} | {:.4} | {:.1} |\n",
            r.supersteps,
            100.0 * r.fresh_fraction(),
            r.comparisons_per_superstep(),
            r.extract.comparisons as f64 / ops,
            r.insert.comparisons as f64 / ops,
            r.total().block_reads as f64 / s,
            r.total().block_writes as f64 / s,
            r.ios_per_op(),
            1e3 * r.seconds / s,
        ));
    }
    out.push('\n');
    out
}

/// Fig. 8 as markdown: per sample, comparisons per operation versus N and versus R, then the
/// details.
pub fn fig8_markdown(f: &Fig8, common: &Common) -> String {
    let mut out = String::from("## Fig. 8: key comparisons\n\n");
    out.push_str(&format!(
        "Per operation = per entry extracted or inserted (a superstep is R of each). Queue \
         entirely in RAM (cache of every page), page {} B. {}\n\n",
        common.page_size,
        schedule_line(&common.sched)
    ));
    let mut names = samples_in(&f.by_n);
    for s in samples_in(&f.by_r) {
        if !names.contains(&s) {
            names.push(s);
        }
    }
    for name in &names {
        if let Some(desc) = common
            .samples
            .iter()
            .find(|s| &s.name() == name)
            .map(|s| s.describe())
        {
            out.push_str(&format!("### {name}\n\n{desc}.\n\n"));
        } else {
            out.push_str(&format!("### {name}\n\n"));
        }
        let by_n: Vec<&RunResult> = f.by_n.iter().filter(|r| &r.sample == name).collect();
        if let Some(r0) = by_n.first() {
            out.push_str(&format!(
                "Key comparisons per operation versus N (R = {}):\n\n",
                r0.r
            ));
            out.push_str(&pivot(
                &by_n,
                "N",
                |r| (r.n, r.n.to_string()),
                |r| r.comparisons_per_op(),
                2,
            ));
        }
        let by_r: Vec<&RunResult> = f.by_r.iter().filter(|r| &r.sample == name).collect();
        if let Some(r0) = by_r.first() {
            out.push_str(&format!(
                "Key comparisons per operation versus R (N = {}):\n\n",
                r0.n
            ));
            out.push_str(&pivot(
                &by_r,
                "R",
                |r| (r.r as u64, r.r.to_string()),
                |r| r.comparisons_per_op(),
                2,
            ));
        }
    }
    out.push_str("### Fig. 8 details\n\n");
    let all: Vec<&RunResult> = f.by_n.iter().chain(f.by_r.iter()).collect();
    out.push_str(&details(&all, None));
    out
}

/// Fig. 9 as markdown: per sample, block I/Os per superstep versus R for each RAM budget, then
/// the details.
pub fn fig9_markdown(f: &Fig9, common: &Common) -> String {
    let mut out = String::from("## Fig. 9: block I/Os\n\n");
    let pages = if f.page_per_r {
        "pages of R entries each: 24 R bytes plus an 8-byte trailer, rounded up to a multiple \
         of 512, so that a CBT block is one page, the paper's R-sized disk nodes"
            .to_string()
    } else {
        format!(
            "{} B pages, {} entries each",
            common.page_size,
            common.page_size / Entry::SIZE
        )
    };
    out.push_str(&format!(
        "Block I/Os = pages read into plus dirty pages written out of the pager's frame cache, \
         whose size is the RAM budget: a percentage of the pages the N entries fill when packed \
         ({pages}). {}\n\n",
        schedule_line(&common.sched)
    ));
    let runs: Vec<(&RunResult, f64)> = f.runs.iter().zip(f.ram_percent.iter().copied()).collect();
    for name in samples_in(&f.runs) {
        if let Some(desc) = common
            .samples
            .iter()
            .find(|s| s.name() == name)
            .map(|s| s.describe())
        {
            out.push_str(&format!("### {name}\n\n{desc}.\n\n"));
        }
        let mut pcts: Vec<f64> = runs.iter().map(|x| x.1).collect();
        pcts.sort_by(f64::total_cmp);
        pcts.dedup();
        for p in pcts {
            let sel: Vec<&RunResult> = runs
                .iter()
                .filter(|(r, q)| r.sample == name && *q == p)
                .map(|x| x.0)
                .collect();
            let Some(r0) = sel.first() else { continue };
            if f.page_per_r {
                out.push_str(&format!(
                    "Block I/Os per superstep versus R, RAM = {p} % of the queue's pages (pages \
                     of R entries), N = {}:\n\n",
                    r0.n
                ));
            } else {
                out.push_str(&format!(
                    "Block I/Os per superstep versus R, RAM = {p} % ({} of {} pages), N = {}:\n\n",
                    r0.cache_pages, r0.queue_pages, r0.n
                ));
            }
            out.push_str(&pivot(
                &sel,
                "R",
                |r| (r.r as u64, r.r.to_string()),
                |r| r.ios_per_superstep(),
                if f.page_per_r { 1 } else { 0 },
            ));
        }
    }
    out.push_str("### Fig. 9 details\n\n");
    let all: Vec<&RunResult> = f.runs.iter().collect();
    out.push_str(&details(&all, Some(&f.ram_percent)));
    out
}

/// A PNG file to write: name and bytes.
pub type Png = (String, Vec<u8>);

fn sweep_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    yscale: Scale,
    series: Vec<Series>,
) -> std::io::Result<Vec<u8>> {
    let x = Axis::fit(
        xlabel,
        Scale::Log10,
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
    );
    let y = Axis::fit(
        ylabel,
        yscale,
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    line_chart(title, &x, &y, &series).to_png()
}

/// Fig. 8 charts: `pqbench-fig8-<sample>-n.png` and `pqbench-fig8-<sample>-r.png`.
pub fn fig8_pngs(f: &Fig8) -> std::io::Result<Vec<Png>> {
    let mut out = Vec::new();
    for (runs, axis, suffix) in [(&f.by_n, "N", "n"), (&f.by_r, "R", "r")] {
        for name in samples_in(runs) {
            let sel: Vec<&RunResult> = runs.iter().filter(|r| r.sample == name).collect();
            let series: Vec<Series> = queues_in(runs)
                .into_iter()
                .map(|q| Series {
                    label: q.label().to_string(),
                    color: color(q, false),
                    points: sel
                        .iter()
                        .filter(|r| r.queue == q)
                        .map(|r| {
                            let x = if suffix == "n" {
                                r.n as f64
                            } else {
                                r.r as f64
                            };
                            (x, r.comparisons_per_op())
                        })
                        .collect(),
                })
                .collect();
            let fixed = match (suffix, sel.first()) {
                ("n", Some(r)) => format!("R={}", r.r),
                (_, Some(r)) => format!("N={}", r.n),
                _ => String::new(),
            };
            let title = format!("FIG 8 {name}: KEY COMPARISONS PER OP VS {axis}, {fixed}");
            let png = sweep_chart(
                &title,
                axis,
                "COMPARISONS PER OPERATION",
                Scale::Linear,
                series,
            )?;
            out.push((format!("pqbench-fig8-{name}-{suffix}.png"), png));
        }
    }
    Ok(out)
}

/// Fig. 9 charts: `pqbench-fig9-<sample>.png`, I/Os per operation versus R (log scale), one
/// line per queue and RAM budget (the larger budget in a lighter shade).
pub fn fig9_pngs(f: &Fig9) -> std::io::Result<Vec<Png>> {
    let mut out = Vec::new();
    let mut pcts: Vec<f64> = f.ram_percent.clone();
    pcts.sort_by(f64::total_cmp);
    pcts.dedup();
    for name in samples_in(&f.runs) {
        let mut series = Vec::new();
        for (pi, &p) in pcts.iter().enumerate() {
            for q in queues_in(&f.runs) {
                series.push(Series {
                    label: format!("{} {p}%", q.label()),
                    color: color(q, pi > 0),
                    points: f
                        .runs
                        .iter()
                        .zip(&f.ram_percent)
                        .filter(|(r, &rp)| r.sample == name && r.queue == q && rp == p)
                        .map(|(r, _)| (r.r as f64, r.ios_per_op()))
                        .collect(),
                });
            }
        }
        let n = f.runs.iter().find(|r| r.sample == name).map_or(0, |r| r.n);
        let title = format!("FIG 9 {name}: BLOCK I/OS PER OP VS R, N={n}");
        let png = sweep_chart(
            &title,
            "R",
            "BLOCK I/OS PER OPERATION",
            Scale::Log10,
            series,
        )?;
        out.push((format!("pqbench-fig9-{name}.png"), png));
    }
    Ok(out)
}
