//! The `dragnet` command: parses arguments and calls the library (ripgrep's thin-binary habit).
//!
//! Exit codes: 0 done; 1 finished with recorded per-item failures (bad seed lines, URLs that do
//! not parse, `check robots` lines that cannot be checked); 2 usage or configuration error; 3 I/O failure or corrupt data.

mod cli_check;
mod cli_slurm;

use cli_check::{check_links, check_robots, check_run, check_url, check_warc};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use dragnet::crawl::{self, Config, InitOptions};
use dragnet::error::{EXIT_OK, EXIT_PARTIAL};
use dragnet::fetch::{FetchOptions, ProgressMode};
use dragnet::Error;

#[derive(Parser)]
#[command(name = "dragnet", version, about = "An out-of-core, batch web-crawl pipeline", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a crawl directory from a seed list (one URL per line).
    Init {
        /// The seed list: one URL per line; blank lines and lines starting with # are skipped.
        #[arg(long)]
        seeds: PathBuf,
        /// Logical partitions M, fixed for the life of the crawl [default: 256, or crawl.partitions].
        #[arg(long)]
        partitions: Option<u32>,
        /// A crawl.toml to start from (see pipeline/crawl.toml).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The crawl directory to create (must be new or empty).
        dir: PathBuf,
    },
    /// Show what a crawl directory holds: cycles, stages per partition, sizes, the lock.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Remove a crawl's lock left by a process that is gone.
    Unlock {
        /// Remove the lock even if its holder may still run (another host, or a live pid).
        #[arg(long)]
        force: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Run crawl cycles on this machine (the local executor)
    ///
    /// Fetch, parse and split every partition (a few partitions at a time), then merge and
    /// prioritize every partition, skipping every (stage, partition) already done, so a re-run
    /// after a crash resumes where it stopped. Holds the crawl lock. Writes metrics.prom after
    /// each cycle. Exit 3 if a partition failed (the others' work is kept), 2 if the crawl is
    /// locked or DIR is not a crawl.
    Cycle {
        #[command(flatten)]
        count: CycleCount,
        /// Progress: one live display for the whole cycle on a terminal (cycle, stage,
        /// partitions done/running/failed, URLs fetched, rate, ETA), log lines otherwise.
        #[arg(long, value_enum, default_value = "auto")]
        progress: ProgressArg,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Run crawl cycles on a Slurm cluster, each stage a job array over partitions
    #[command(subcommand)]
    Slurm(cli_slurm::Slurm),
    /// Crawl a built-in synthetic web on loopback and check it against its ground truth
    ///
    /// Starts websim (a few hundred hosts on 127.0.x.y, some hostile: slow drips, endless bodies,
    /// huge headers, gzip bombs, a crawler trap) in this process, crawls it to the end with the
    /// same code as `dragnet cycle`, then prints what was fetched, how fast, coverage against
    /// the web's ground truth and the server's politeness audit. The crawl directory is kept.
    Demo {
        /// Keep the crawl in this (new) directory [default: a new directory in the temp dir].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Hosts in the synthetic web.
        #[arg(long, default_value_t = 300)]
        hosts: u32,
        /// Pages per host.
        #[arg(long, default_value_t = 15)]
        pages: u32,
        /// The web's random seed.
        #[arg(long, default_value_t = 2026)]
        seed: u64,
        /// Print the summary as JSON on stdout too.
        #[arg(long)]
        json: bool,
    },
    /// Fetch one partition's fetch list into WARC files (stage 1 of a cycle)
    ///
    /// Fetches politely (robots.txt first, per-host delays, every limit of [fetch] in
    /// crawl.toml) into WARC files and a fetch-results run. Does nothing if the stage is already
    /// done. Exit 1 if the deadline deferred URLs.
    Fetch {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Partition number.
        #[arg(long)]
        partition: u32,
        /// Progress: a bar on a terminal, log lines otherwise.
        #[arg(long, value_enum, default_value = "auto")]
        progress: ProgressArg,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Extract links and page facts from one partition's fetch (stage 2)
    ///
    /// Reads each answered page of the fetch from the WARC, extracts its links (HTML, sitemaps,
    /// feeds), canonicalizes them, shares its OPIC cash over the followed ones, and writes the
    /// links and pages runs. Does nothing if the stage is already done.
    Parse {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Partition number.
        #[arg(long)]
        partition: u32,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Filter one partition's links and route them to their owners (stage 3)
    ///
    /// Collapses the links per target (cash summed), applies the [scope] rules and trap
    /// defences, passes them through the partition's CLOCK cache, and routes them to the
    /// partitions owning their hosts (split/to-q/from-p.run). Does nothing if the stage is
    /// already done.
    Split {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Partition number.
        #[arg(long)]
        partition: u32,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Merge what was fetched and found into one partition's seen set and URL db (stage 4)
    ///
    /// One sequential pass over its seen set, URL db, fetch results and everything the splits
    /// routed to it; writes the next seen set and URL db and the URLs for prioritize
    /// (new/pNNNN.run). Needs every partition's split. Does nothing if the stage is done.
    Merge {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Partition number.
        #[arg(long)]
        partition: u32,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Queue one partition's new URLs and write its next fetch list (stage 5)
    ///
    /// Inserts what the merge found (new URLs, cash updates, retries, due recrawls) into the
    /// partition's disk-resident frontier queue, then extracts its top into the next cycle's
    /// fetch list within the fetch budget and the per-host cap. Does nothing if the stage is done.
    Prioritize {
        /// Cycle number (writes the fetch list of the next cycle).
        #[arg(long)]
        cycle: u32,
        /// Partition number.
        #[arg(long)]
        partition: u32,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Parse anyone's WARC files again, offline, fetching nothing
    ///
    /// Parses the HTTP responses of WARC files (WARC 1.0/1.1, plain, .gz or .zst) into
    /// links.run, pages.run and reparse.json in --out. Exit 1 if a file could not be read to its
    /// end (what it held before is kept).
    Reparse {
        /// WARC files to read.
        #[arg(long, required = true, num_args = 1..)]
        warc: Vec<PathBuf>,
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// A crawl.toml whose [canon] rules and limits to use (defaults otherwise).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Inspect URLs, run files, WARC files, robots.txt verdicts and links
    #[command(subcommand)]
    Check(Check),
    /// Serve the synthetic web on loopback, or write its truth or a static export
    ///
    /// The synthetic web of tests, the demo and benchmarks (`dragnet websim --help`): serve a
    /// seeded web on loopback, write its hosts file, its ground truth or a static export.
    #[command(disable_help_flag = true)]
    Websim {
        /// Arguments of websim.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// How many cycles `dragnet cycle` and `dragnet slurm submit` run.
#[derive(clap::Args)]
pub(crate) struct CycleCount {
    /// Cycles to run, one after another.
    #[arg(long, default_value_t = 1)]
    pub(crate) cycles: u32,
    /// Run cycles until the fetch lists are empty (at most --max-cycles).
    #[arg(long)]
    pub(crate) until_empty: bool,
    /// The bound for --until-empty.
    #[arg(long, default_value_t = 1000)]
    pub(crate) max_cycles: u32,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ProgressArg {
    /// The live display if stderr is a terminal, log lines otherwise.
    Auto,
    /// The live display, even when stderr is not a terminal.
    Bar,
    /// Plain log lines: one per stage, and every 10 s while fetching.
    Log,
    /// No progress; only the final summary.
    Quiet,
}

impl From<ProgressArg> for ProgressMode {
    fn from(p: ProgressArg) -> ProgressMode {
        match p {
            ProgressArg::Auto => ProgressMode::Auto,
            ProgressArg::Bar => ProgressMode::Bar,
            ProgressArg::Log => ProgressMode::Log,
            ProgressArg::Quiet => ProgressMode::Quiet,
        }
    }
}

#[derive(Subcommand)]
enum Check {
    /// Canonical form, SURT, fingerprint and partition of URLs (JSON lines)
    Url {
        /// Partitions M to map hosts onto [default: 256, or the config's].
        #[arg(long)]
        partitions: Option<u32>,
        /// Use the [canon] rules and partitions of this crawl.toml.
        #[arg(long)]
        config: Option<PathBuf>,
        /// URLs to check.
        #[arg(required = true)]
        urls: Vec<String>,
    },
    /// Extract the links of an HTML file as JSON
    ///
    /// Reads an HTML file (plain or gzip) and prints one JSON object: `base`, `canonical`,
    /// `meta_robots` and `links` (`url`, `tag`, `nofollow`, `rel`).
    Links {
        /// The URL the document was fetched from (the base for relative links).
        #[arg(long)]
        url: String,
        /// The HTML file.
        file: PathBuf,
    },
    /// Check URLs against robots.txt files (JSON lines on stdin)
    ///
    /// Reads JSON lines on stdin, each with `agent`, `url` and the file as `robots` (its text)
    /// or `robots_file` (a path, read as raw bytes), and writes each line back with
    /// `"allowed": true|false` added. A line that cannot be checked
    /// is written back with `"error"` instead, reported on stderr with its number, and makes the
    /// exit code 1.
    Robots,
    /// Validate run files and print their counts
    ///
    /// Checks magic, version, every checksum and the key order, and prints each file's header,
    /// block and record counts; exit 3 with the offset on corruption.
    Run {
        /// Print one JSON object per file instead of text.
        #[arg(long)]
        json: bool,
        /// Run files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Validate WARC files and list their records
    ///
    /// Reads .warc, .warc.gz and .warc.zst (WARC 1.0 and 1.1) and lists each record: offset,
    /// length, type, HTTP status, block/payload digest checks (ok, bad, absent, unchecked) and
    /// URI. Exit 3 with the offset on corruption or a digest mismatch.
    Warc {
        /// Print one JSON object per record (with its file) instead of text.
        #[arg(long)]
        json: bool,
        /// WARC files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match execute(cli.command) {
        Ok(code) => code,
        Err(e) => {
            report(&e);
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}

/// Prints an error with the causes its message does not already say ([`Error::with_causes`]).
pub(crate) fn report(e: &Error) {
    eprintln!("dragnet: error: {}", e.with_causes("\n  "));
}

fn execute(cmd: Command) -> Result<i32, Error> {
    match cmd {
        Command::Init {
            seeds,
            partitions,
            config,
            dir,
        } => {
            let opts = InitOptions {
                seeds: seeds.clone(),
                config,
                partitions,
            };
            let mut on_bad = |b: &crawl::BadSeed| {
                eprintln!(
                    "{}:{}: skipped seed {:?}: {}",
                    seeds.display(),
                    b.line,
                    b.text,
                    b.error
                );
            };
            let r = crawl::init(&dir, &opts, &mut on_bad)?;
            eprintln!(
                "initialized {} with {} partitions: {} seeds from {} lines ({} duplicates, {} bad) in {} partitions, {:.2}s",
                r.dir.display(),
                r.partitions,
                r.seeds,
                r.lines,
                r.duplicates,
                r.bad,
                r.partitions_with_seeds,
                r.seconds
            );
            if r.seeds == 0 {
                eprintln!(
                    "warning: no usable seed: the crawl is empty; check {}",
                    seeds.display()
                );
            }
            Ok(if r.bad > 0 { EXIT_PARTIAL } else { EXIT_OK })
        }
        Command::Status { json, dir } => {
            let s = crawl::status(&dir)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&s).expect("status serializes")
                );
            } else {
                print!("{s}");
            }
            Ok(EXIT_OK)
        }
        Command::Unlock { force, dir } => {
            match crawl::unlock(&dir, force)? {
                Some(l) => eprintln!(
                    "removed the lock of pid {} on {} ({}, since {})",
                    l.pid, l.host, l.command, l.started
                ),
                None => eprintln!("{} is not locked", dir.display()),
            }
            Ok(EXIT_OK)
        }
        Command::Cycle {
            count:
                CycleCount {
                    cycles,
                    until_empty,
                    max_cycles,
                },
            progress,
            json,
            dir,
        } => {
            let (crawl, cfg) = crawl::CrawlDir::open(&dir)?;
            let opts = dragnet::exec::CycleOptions {
                cycles,
                until_empty,
                max_cycles,
                progress: progress.into(),
                log: true,
            };
            let r = dragnet::exec::run_cycles(&crawl, &cfg, &opts)?;
            if json {
                println!("{}", serde_json::to_string(&r).expect("report serializes"));
            }
            eprintln!("cycle: {}", r.stopped);
            Ok(match dragnet::exec::failure(&crawl, &r) {
                Some((msg, code)) => {
                    eprintln!("dragnet: error: {msg}");
                    code
                }
                None => EXIT_OK,
            })
        }
        Command::Slurm(cmd) => cli_slurm::run(cmd),
        Command::Demo {
            dir,
            hosts,
            pages,
            seed,
            json,
        } => {
            let opts = dragnet::demo::DemoOptions {
                dir,
                hosts,
                pages,
                seed,
                ..Default::default()
            };
            let s = dragnet::demo::run_demo(&opts)?;
            if json {
                println!("{}", serde_json::to_string(&s).expect("summary serializes"));
            }
            eprint!("{}", dragnet::demo::render(&s));
            Ok(EXIT_OK)
        }
        Command::Fetch {
            cycle,
            partition,
            progress,
            json,
            dir,
        } => fetch(cycle, partition, progress.into(), json, &dir),
        Command::Parse {
            cycle,
            partition,
            json,
            dir,
        } => {
            let run = |c: &crawl::CrawlDir, cfg: &Config| {
                dragnet::parse::parse_partition(c, cfg, cycle, partition)
            };
            stage_cmd(
                "parse",
                &dir,
                cycle,
                partition,
                json,
                run,
                |r| r.skipped,
                |r| print_parse("parse", r),
            )?;
            Ok(EXIT_OK)
        }
        Command::Split {
            cycle,
            partition,
            json,
            dir,
        } => {
            let run = |c: &crawl::CrawlDir, cfg: &Config| {
                dragnet::split::split_partition(c, cfg, cycle, partition)
            };
            stage_cmd(
                "split",
                &dir,
                cycle,
                partition,
                json,
                run,
                |r| r.skipped,
                |r| print_split(cycle, partition, r),
            )?;
            Ok(EXIT_OK)
        }
        Command::Merge {
            cycle,
            partition,
            json,
            dir,
        } => {
            let run = |c: &crawl::CrawlDir, cfg: &Config| {
                dragnet::merge::merge_partition(c, cfg, cycle, partition)
            };
            stage_cmd(
                "merge",
                &dir,
                cycle,
                partition,
                json,
                run,
                |r| r.skipped,
                |r| print_merge(cycle, partition, r),
            )?;
            Ok(EXIT_OK)
        }
        Command::Prioritize {
            cycle,
            partition,
            json,
            dir,
        } => {
            let run = |c: &crawl::CrawlDir, cfg: &Config| {
                dragnet::prioritize::prioritize_partition(c, cfg, cycle, partition)
            };
            stage_cmd(
                "prioritize",
                &dir,
                cycle,
                partition,
                json,
                run,
                |r| r.skipped,
                |r| print_prioritize(cycle, partition, r),
            )?;
            Ok(EXIT_OK)
        }
        Command::Reparse {
            warc,
            out,
            config,
            json,
        } => {
            let cfg = match &config {
                Some(p) => Config::load(p)?,
                None => Config::default(),
            };
            let r = dragnet::parse::reparse(&warc, &out, &cfg)?;
            if json {
                println!("{}", serde_json::to_string(&r).expect("report serializes"));
            }
            print_parse("reparse", &r);
            for f in &r.failed_files {
                eprintln!("reparse: {f}");
            }
            eprintln!("reparse: wrote {}", out.display());
            Ok(if r.failed_files.is_empty() {
                EXIT_OK
            } else {
                EXIT_PARTIAL
            })
        }
        Command::Check(Check::Url {
            partitions,
            config,
            urls,
        }) => check_url(partitions, config, &urls),
        Command::Check(Check::Run { json, files }) => check_run(json, &files),
        Command::Check(Check::Robots) => check_robots(),
        Command::Check(Check::Links { url, file }) => check_links(&url, &file),
        Command::Check(Check::Warc { json, files }) => check_warc(json, &files),
        Command::Websim { args } => {
            let argv = std::iter::once(std::ffi::OsString::from("dragnet websim")).chain(args);
            // websim's exit codes follow the same convention (0 / 2 usage / 3 I/O).
            Ok(i32::from(websim::cli::run(argv)))
        }
    }
}

fn fetch(
    cycle: u32,
    partition: u32,
    progress: ProgressMode,
    json: bool,
    dir: &std::path::Path,
) -> Result<i32, Error> {
    let (crawl, cfg) = crawl::CrawlDir::open(dir)?;
    let opts = FetchOptions {
        progress,
        ..FetchOptions::default()
    };
    let r = dragnet::fetch::fetch_partition(&crawl, &cfg, cycle, partition, &opts)?;
    if json {
        println!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    let c = |k: &str| r.count(k);
    if r.skipped {
        eprintln!("fetch: cycle {cycle} partition {partition} is already done (its .done marker exists); nothing to do");
    } else {
        let errors: Vec<String> = r
            .counts
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("error_").map(|k| format!("{k} {v}")))
            .collect();
        eprintln!(
            "fetch: cycle {cycle} partition {partition}: {} URLs, {} requests ({} robots.txt), {} 2xx, {} 3xx, {} 4xx, {} 5xx, {:.1} MiB in {:.1}s ({:.0} requests/s); {}; {} WARC files",
            c("urls"),
            c("requests"),
            c("robots_requests"),
            c("status_2xx"),
            c("status_3xx"),
            c("status_4xx"),
            c("status_5xx"),
            c("bytes") as f64 / (1 << 20) as f64,
            r.seconds,
            c("requests") as f64 / r.seconds.max(1e-9),
            if errors.is_empty() { "no errors".to_owned() } else { errors.join(", ") },
            c("warc_files"),
        );
    }
    Ok(if c("error_deferred") > 0 {
        EXIT_PARTIAL
    } else {
        EXIT_OK
    })
}

/// Runs one stage of one partition for the command line: loads the crawl's configuration, runs
/// the stage, prints its report as JSON on stdout if asked, and a one-line summary (or that the
/// stage was already done) on stderr.
#[allow(clippy::too_many_arguments)]
fn stage_cmd<R: serde::Serialize>(
    name: &str,
    dir: &std::path::Path,
    cycle: u32,
    partition: u32,
    json: bool,
    run: impl FnOnce(&crawl::CrawlDir, &Config) -> Result<R, Error>,
    skipped: impl Fn(&R) -> bool,
    summary: impl FnOnce(&R),
) -> Result<R, Error> {
    let (crawl, cfg) = crawl::CrawlDir::open(dir)?;
    let r = run(&crawl, &cfg)?;
    if json {
        println!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    if skipped(&r) {
        eprintln!("{name}: cycle {cycle} partition {partition} is already done (its .done marker exists); nothing to do");
    } else {
        summary(&r);
    }
    Ok(r)
}

fn print_split(cycle: u32, partition: u32, r: &dragnet::split::SplitReport) {
    let c = |k: &str| r.count(k);
    let refused: Vec<String> = [
        "nofollow",
        "out_of_domain",
        "too_deep",
        "trap_path",
        "trap_repeat",
        "trap_query",
        "dropped_pattern",
        "over_host_budget",
    ]
    .iter()
    .filter(|k| c(k) > 0)
    .map(|k| format!("{k} {}", c(k)))
    .collect();
    eprintln!(
        "split: cycle {cycle} partition {partition}: {} links to {} URLs; {} routed with their URL, {} as cash credits; cache hit rate {:.1}%; refused: {} in {:.1}s",
        c("links"),
        c("targets"),
        c("routed"),
        c("credits"),
        c("cache_hit_permille") as f64 / 10.0,
        if refused.is_empty() { "none".to_owned() } else { refused.join(", ") },
        r.seconds
    );
}

fn print_merge(cycle: u32, partition: u32, r: &dragnet::merge::MergeReport) {
    let c = |k: &str| r.count(k);
    eprintln!(
        "merge: cycle {cycle} partition {partition}: {} URLs known before, {} new, {} after; {} fetch results folded in, {} links to known URLs ({} cash credits), {} frontier updates in {:.1}s",
        c("known_before"),
        c("new"),
        c("known_after"),
        c("fetch_results"),
        c("links_to_known"),
        c("credits"),
        c("updates"),
        r.seconds
    );
}

fn print_prioritize(cycle: u32, partition: u32, r: &dragnet::prioritize::PrioritizeReport) {
    let c = |k: &str| r.count(k);
    eprintln!(
        "prioritize: cycle {cycle} partition {partition}: {} inserted ({} new, {} recrawls), {} extracted, {} stale, {} over their host's cap; {} URLs from {} hosts in the fetch list of cycle {}; frontier {} in {:.1}s",
        c("inserted_new") + c("inserted_requeue") + c("inserted_recrawl"),
        c("inserted_new"),
        c("inserted_recrawl"),
        c("extracted"),
        c("stale") + c("stale_unknown"),
        c("host_capped"),
        c("selected"),
        c("hosts"),
        cycle + 1,
        c("frontier"),
        r.seconds
    );
}

fn print_parse(what: &str, r: &dragnet::parse::ParseReport) {
    let c = |k: &str| r.count(k);
    eprintln!(
        "{what}: {} pages ({} HTML, {:.1} MiB), {} links ({} followed, {} nofollow, {} unusable), {} redirects, {} robots.txt sitemaps in {:.1}s ({:.0} pages/s)",
        c("pages"),
        c("html_pages"),
        c("bytes") as f64 / (1 << 20) as f64,
        c("links"),
        c("links_followed"),
        c("links_nofollow"),
        c("links_unusable"),
        c("redirects"),
        c("robots_sitemaps"),
        r.seconds,
        c("pages") as f64 / r.seconds.max(1e-9),
    );
}
