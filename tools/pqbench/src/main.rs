//! `pqbench`: the WIDM 2008 priority-queue evaluation on dragnet's disk queues.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pqbench::experiments::{self, Common, Fig8Config, Fig9Config};
use pqbench::queues::{open_sliced, QueueKind};
use pqbench::run::Schedule;
use pqbench::table1::{self, Selects, Shares, Table1Config};
use pqbench::workload::Sample;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
enum Experiment {
    /// Fig. 8: key comparisons versus N and versus R.
    Fig8,
    /// Fig. 9: block I/Os versus R with RAM = each --ram-percents of the queue.
    Fig9,
    /// Table 1: load-balance efficiency of the CBT's slices for each --threads.
    Table1,
    /// Fig. 8, Fig. 9 and Table 1.
    All,
}

/// Key comparisons, block I/Os and CBT load balance of dragnet's disk priority queues
/// (quickheap, CBT) and a binary heap on disk, under the bulk-synchronous supersteps of Marin,
/// Paredes & Bonacic (WIDM 2008). Markdown tables on stdout, progress on stderr.
#[derive(Debug, Parser)]
#[command(name = "pqbench", version)]
struct Args {
    #[command(subcommand)]
    experiment: Experiment,
    /// Workloads: `synthetic`, or the name of a graph in --graphs-dir (`california`, `epa`).
    #[arg(long, global = true, value_delimiter = ',', default_values_t = ["california".to_string(), "epa".to_string(), "synthetic".to_string()])]
    samples: Vec<String>,
    /// Queues to compare (Fig. 8 and 9).
    #[arg(long, global = true, value_enum, value_delimiter = ',', default_values_t = QueueKind::ALL)]
    queues: Vec<QueueKind>,
    /// Fig. 8: queue sizes N of the N sweep.
    #[arg(long, global = true, value_delimiter = ',', default_values_t = [10_000u64, 30_000, 100_000, 300_000, 1_000_000])]
    n_values: Vec<u64>,
    /// Fig. 8: R of the N sweep.
    #[arg(long, global = true, default_value_t = 1000)]
    r: usize,
    /// Fig. 8 and 9: the R values of the R sweeps.
    #[arg(long, global = true, value_delimiter = ',', default_values_t = [100usize, 300, 1000, 3000, 10_000])]
    r_values: Vec<usize>,
    /// Fig. 8 and 9: N of the R sweeps.
    #[arg(long, global = true, default_value_t = 1_000_000)]
    n: u64,
    /// Fig. 9: RAM budgets, percent of the queue's packed pages.
    #[arg(long, global = true, value_delimiter = ',', default_values_t = [10.0f64, 30.0])]
    ram_percents: Vec<f64>,
    /// Fig. 9: give each run pages that hold R entries (24 R + 8 bytes rounded up to 512) instead
    /// of --page-size: a CBT node is then one page, the paper's R-sized disk blocks.
    #[arg(long, global = true)]
    page_per_r: bool,
    /// Table 1: the workload.
    #[arg(long, global = true, default_value = "california")]
    table1_sample: String,
    /// Table 1: N.
    #[arg(long, global = true, default_value_t = 1_000_000)]
    table1_n: u64,
    /// Table 1: R in total per superstep (each slice extracts R/T).
    #[arg(long, global = true, default_value_t = 8000)]
    table1_r: usize,
    /// Table 1: RAM budget, percent of the queue's packed pages.
    #[arg(long, global = true, default_value_t = 10.0)]
    table1_ram_percent: f64,
    /// Table 1: how the fill and the R new entries of a superstep are shared among the slices:
    /// `symmetric` (N/T and R/T each), `equal` (R/T each, the fill hashed) and/or `hashed` (each
    /// entry to the slice of its fingerprint).
    #[arg(long, global = true, value_enum, value_delimiter = ',', default_values_t = [Shares::Symmetric, Shares::Equal, Shares::Hashed])]
    table1_shares: Vec<Shares>,
    /// Table 1: `skip` (dragnet's CBT skips the SELECTs that would change nothing) and/or
    /// `paper` (every SELECT of the paper's Figs. 1 and 2 is run).
    #[arg(long, global = true, value_enum, value_delimiter = ',', default_values_t = [Selects::Skip, Selects::Paper])]
    table1_selects: Vec<Selects>,
    /// Table 1: the values of T (slices, one thread each).
    #[arg(long, global = true, value_delimiter = ',', default_values_t = [1usize, 2, 4, 8])]
    threads: Vec<usize>,
    /// Measured supersteps per run, at least.
    #[arg(long, global = true, default_value_t = 20)]
    supersteps: usize,
    /// Measure enough supersteps to extract this many times N entries.
    #[arg(long, global = true, default_value_t = 1.0)]
    turnover: f64,
    /// Unmeasured supersteps after the fill.
    #[arg(long, global = true, default_value_t = 3)]
    warmup: usize,
    /// Page (block) size in bytes.
    #[arg(long, global = true, default_value_t = 4096)]
    page_size: usize,
    /// Seed of the quickheap's pivots.
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// Synthetic workload: seed.
    #[arg(long, global = true, default_value_t = 1)]
    synth_seed: u64,
    /// Synthetic workload: Pareto tail index of the scores.
    #[arg(long, global = true, default_value_t = 1.1)]
    synth_alpha: f64,
    /// Synthetic workload: hosts.
    #[arg(long, global = true, default_value_t = 100_000)]
    synth_hosts: u64,
    /// Runs of Fig. 8 and 9 in parallel (Table 1 always runs alone).
    #[arg(long, global = true, default_value_t = 2)]
    jobs: usize,
    /// Do not check extractions against an in-memory reference heap.
    #[arg(long, global = true)]
    no_verify: bool,
    /// Folder of the graph files (default: $DRAGNET_TESTDATA/graphs, else the repository's
    /// tests/data/graphs).
    #[arg(long, global = true)]
    graphs_dir: Option<PathBuf>,
    /// Where queue files go while a run lasts (default: the system temporary directory).
    #[arg(long, global = true)]
    work_dir: Option<PathBuf>,
    /// Write the charts here (`pqbench-*.png`).
    #[arg(long, global = true)]
    png_dir: Option<PathBuf>,
    /// Write all results as JSON here.
    #[arg(long, global = true)]
    json: Option<PathBuf>,
}

fn graphs_dir(arg: &Option<PathBuf>) -> PathBuf {
    if let Some(d) = arg {
        return d.clone();
    }
    if let Some(d) = std::env::var_os("DRAGNET_TESTDATA") {
        return PathBuf::from(d).join("graphs");
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/graphs")
}

fn sample(name: &str, args: &Args, dir: &std::path::Path) -> Result<Sample, String> {
    if name == "synthetic" {
        return Ok(Sample::Synthetic {
            seed: args.synth_seed,
            alpha: args.synth_alpha,
            hosts: args.synth_hosts,
        });
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("graphs folder {}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let f = e.file_name().to_string_lossy().into_owned();
        if let Some(g) = f.strip_suffix(".nodes.tsv") {
            if g.eq_ignore_ascii_case(name) {
                return Ok(Sample::Graph {
                    dir: dir.to_path_buf(),
                    name: g.to_string(),
                });
            }
        }
    }
    Err(format!(
        "no graph {name:?} in {} (expected {name}.nodes.tsv and {name}.edges.tsv); set \
         --graphs-dir or DRAGNET_TESTDATA",
        dir.display()
    ))
}

fn write_pngs(
    dir: &Option<PathBuf>,
    pngs: std::io::Result<Vec<experiments::Png>>,
) -> Result<(), String> {
    let Some(dir) = dir else { return Ok(()) };
    let pngs = pngs.map_err(|e| format!("drawing charts: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, bytes) in pngs {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
        eprintln!("pqbench: wrote {}", p.display());
    }
    Ok(())
}

fn real_main(args: &Args) -> Result<(), String> {
    let gdir = graphs_dir(&args.graphs_dir);
    let samples = args
        .samples
        .iter()
        .map(|s| sample(&s.to_lowercase(), args, &gdir))
        .collect::<Result<Vec<_>, _>>()?;
    let common = Common {
        samples,
        queues: args.queues.clone(),
        page_size: args.page_size,
        seed: args.seed,
        sched: Schedule {
            warmup: args.warmup,
            min_supersteps: args.supersteps,
            turnover: args.turnover,
            verify: !args.no_verify,
        },
        jobs: args.jobs,
        work: args.work_dir.clone().unwrap_or_else(std::env::temp_dir),
    };
    if args.page_size < dragnet::queue::Entry::SIZE || args.page_size % 512 != 0 {
        return Err("--page-size must be a positive multiple of 512".into());
    }
    let mut json = serde_json::Map::new();
    let e = args.experiment;
    if matches!(e, Experiment::Fig8 | Experiment::All) {
        let cfg = Fig8Config {
            n_values: args.n_values.clone(),
            r: args.r,
            r_values: args.r_values.clone(),
            n: args.n,
        };
        let f = experiments::fig8(&common, &cfg)?;
        print!("{}", experiments::fig8_markdown(&f, &common));
        write_pngs(&args.png_dir, experiments::fig8_pngs(&f))?;
        json.insert("fig8".into(), serde_json::to_value(&f).expect("serializes"));
    }
    if matches!(e, Experiment::Fig9 | Experiment::All) {
        let cfg = Fig9Config {
            n: args.n,
            r_values: args.r_values.clone(),
            ram_percents: args.ram_percents.clone(),
            page_per_r: args.page_per_r,
        };
        let f = experiments::fig9(&common, &cfg)?;
        print!("{}", experiments::fig9_markdown(&f, &common));
        write_pngs(&args.png_dir, experiments::fig9_pngs(&f))?;
        json.insert("fig9".into(), serde_json::to_value(&f).expect("serializes"));
    }
    if matches!(e, Experiment::Table1 | Experiment::All) {
        let cfg = Table1Config {
            sample: sample(&args.table1_sample.to_lowercase(), args, &gdir)?,
            n: args.table1_n,
            r: args.table1_r,
            threads: args.threads.clone(),
            ram_percent: args.table1_ram_percent,
            shares: args.table1_shares.clone(),
            selects: args.table1_selects.clone(),
        };
        let rows = table1::table1(&common, &cfg, &open_sliced)?;
        print!("{}", table1::table1_markdown(&rows, &common, &cfg));
        write_pngs(
            &args.png_dir,
            table1::table1_png(&rows).map(|b| vec![("pqbench-table1.png".to_string(), b)]),
        )?;
        json.insert(
            "table1".into(),
            serde_json::to_value(&rows).expect("serializes"),
        );
    }
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&json).expect("serializes");
        std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match real_main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pqbench: {e}");
            ExitCode::from(3)
        }
    }
}
