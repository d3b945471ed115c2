//! `cachesim`: the URL-cache study on websim, real-graph and synthetic link streams.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};

use cachesim::streams::{graph_stream, synthetic_stream, websim_stream, GraphOrder, SynthConfig};
use cachesim::study;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StreamKind {
    /// Out-links of a websim web in websim::truth's BFS crawl order.
    Websim,
    /// Kleinberg's California graph (`California.*.tsv`).
    California,
    /// Kleinberg's epa graph (`epa.*.tsv`).
    Epa,
    /// The synthetic crawl with the paper's statistics.
    Synthetic,
}

/// Miss rates of RANDOM, STATIC, LRU, CLOCK, MIN and INFINITE URL caches (Broder, Najork &
/// Wiener, WWW 2003) for cache sizes 2^min-log2 ... 2^max-log2. Prints a markdown table per
/// stream on stdout; progress goes to stderr.
#[derive(Debug, Parser)]
#[command(name = "cachesim", version)]
struct Args {
    /// Streams to study, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [StreamKind::Websim, StreamKind::California, StreamKind::Epa, StreamKind::Synthetic])]
    streams: Vec<StreamKind>,
    /// log2 of the smallest cache size.
    #[arg(long, default_value_t = 10)]
    min_log2: u32,
    /// log2 of the largest cache size.
    #[arg(long, default_value_t = 20)]
    max_log2: u32,
    /// Simulation threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Write one PNG chart per stream here (`cachesim-<stream>.png`).
    #[arg(long)]
    png_dir: Option<PathBuf>,
    /// Write all results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Seed of RANDOM's victim choice.
    #[arg(long, default_value_t = 1)]
    random_seed: u64,
    /// websim: seed of the web.
    #[arg(long, default_value_t = 1)]
    websim_seed: u64,
    /// websim: hosts.
    #[arg(long, default_value_t = 300)]
    websim_hosts: u32,
    /// websim: pages per host.
    #[arg(long, default_value_t = 200)]
    websim_pages: u32,
    /// Folder of the graph files (`NAME.nodes.tsv`, `NAME.edges.tsv`).
    #[arg(long, default_value = "tests/data/graphs")]
    graphs_dir: PathBuf,
    /// Crawl order of the graph streams.
    #[arg(long, value_enum, default_value_t = GraphOrder::Bfs)]
    graph_order: GraphOrder,
    /// synthetic: seed.
    #[arg(long, default_value_t = 1)]
    synth_seed: u64,
    /// synthetic: minimum number of links.
    #[arg(long, default_value_t = 12_000_000)]
    synth_links: u64,
    /// synthetic: hosts crawled at the same time.
    #[arg(long, default_value_t = 500)]
    synth_active_hosts: usize,
    /// synthetic: probability that a link repeats an earlier link of its page.
    #[arg(long, default_value_t = 0.10)]
    synth_repeat: f64,
    /// synthetic: distinct URLs linked per page of a host.
    #[arg(long, default_value_t = 8)]
    synth_urls_per_page: u64,
    /// synthetic: smallest number of pages of a host.
    #[arg(long, default_value_t = 10)]
    synth_min_host_pages: u64,
    /// synthetic: median links per page.
    #[arg(long, default_value_t = 23.0)]
    synth_median_links: f64,
    /// synthetic: size of the host universe.
    #[arg(long, default_value_t = 1 << 20)]
    synth_hosts: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.min_log2 > args.max_log2 || args.max_log2 > 30 {
        eprintln!("cachesim: need min-log2 <= max-log2 <= 30");
        return ExitCode::from(2);
    }
    let mut results = Vec::new();
    for kind in &args.streams {
        let t = Instant::now();
        let stream = match kind {
            StreamKind::Websim => {
                websim_stream(args.websim_seed, args.websim_hosts, args.websim_pages)
            }
            StreamKind::California | StreamKind::Epa => {
                let name = if *kind == StreamKind::Epa {
                    "epa"
                } else {
                    "California"
                };
                match graph_stream(&args.graphs_dir, name, args.graph_order) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!(
                            "cachesim: {name} graph in {}: {e}",
                            args.graphs_dir.display()
                        );
                        return ExitCode::from(3);
                    }
                }
            }
            StreamKind::Synthetic => synthetic_stream(&SynthConfig {
                seed: args.synth_seed,
                links: args.synth_links,
                active_hosts: args.synth_active_hosts,
                hosts: args.synth_hosts,
                repeat: args.synth_repeat,
                urls_per_page: args.synth_urls_per_page,
                median_links: args.synth_median_links,
                min_host_pages: args.synth_min_host_pages,
                ..SynthConfig::default()
            }),
        };
        eprintln!(
            "cachesim: {} stream: {} links, {} distinct, built in {:.1} s",
            stream.name,
            stream.stats.links,
            stream.stats.distinct,
            t.elapsed().as_secs_f64()
        );
        if stream.fps.is_empty() {
            eprintln!("cachesim: {} stream is empty, skipped", stream.name);
            continue;
        }
        let r = study::run(
            &stream,
            args.min_log2,
            args.max_log2,
            args.threads,
            args.random_seed,
        );
        eprintln!("cachesim: {} simulated in {:.1} s", r.name, r.seconds);
        print!("{}", study::markdown(&r));
        if let Some(dir) = &args.png_dir {
            let path = dir.join(format!("cachesim-{}.png", r.name.to_lowercase()));
            let res = std::fs::create_dir_all(dir)
                .and_then(|_| study::png(&r))
                .and_then(|bytes| std::fs::write(&path, bytes));
            if let Err(e) = res {
                eprintln!("cachesim: writing {}: {e}", path.display());
                return ExitCode::from(3);
            }
            eprintln!("cachesim: wrote {}", path.display());
        }
        results.push(r);
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&results).expect("results serialize");
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("cachesim: writing {}: {e}", path.display());
            return ExitCode::from(3);
        }
    }
    ExitCode::SUCCESS
}
