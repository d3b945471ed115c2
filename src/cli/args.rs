//! The command line: every subcommand and its arguments (clap derive). One line of help each in
//! `dragnet --help`; the detail is in each subcommand's own `--help`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use dragnet::fetch::ProgressMode;
use dragnet::storage::out::Output;

#[derive(Parser)]
#[command(name = "dragnet", version, about = "An out-of-core, batch web-crawl pipeline", long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Add seeds to an existing crawl, for the cycle that runs next
    ///
    /// The seeds are canonicalized, checked against [scope], and handed to the next cycle's
    /// merge like discovered links: new URLs join the frontier with --priority, known ones are
    /// not queued twice. Not while a cycle runs (the crawl's lock) or is half-merged.
    Inject {
        /// The seed list: one URL per line; blank lines and lines starting with # are skipped.
        #[arg(long)]
        seeds: PathBuf,
        /// OPIC cash each seed brings (a seed of `dragnet init` has 1).
        #[arg(long, default_value_t = 1.0)]
        priority: f64,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Show what a crawl directory holds: a one-screen summary (progress, health, what to do next)
    Status {
        /// Print JSON instead of text (everything, with each partition's state).
        #[arg(long)]
        json: bool,
        /// After the summary, every cycle's stages per partition state with their counters,
        /// stage times and the ten top hosts.
        #[arg(long)]
        verbose: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Remove a crawl's lock left by a process that is gone
    ///
    /// A dead holder's lock on this host is removed (the next run would take it over anyway).
    /// A live holder's (its OS lock is held) is never removed: exit 5, naming its pid.
    Unlock {
        /// Also remove another host's lock, whose holder cannot be checked from here (never a
        /// live holder's).
        #[arg(long)]
        force: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Rewrite a crawl, between cycles, for another number of partitions, into NEWDIR
    ///
    /// Every partition's state (seen set, URL db, host table, budgets, frontier queue) and the
    /// next cycle's fetch lists are routed again by host key to the M2 new partitions, streaming
    /// in bounded memory; the cycle counter goes on, and the earlier cycles' WARC files and CDXJ
    /// indexes are hard-linked. DIR is only read (its lock is held); NEWDIR must be new or empty
    /// and appears at once when done. `dragnet cycle NEWDIR` continues the crawl.
    Repartition {
        /// The new number of partitions M2.
        #[arg(long)]
        partitions: u32,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory (between cycles).
        dir: PathBuf,
        /// The new crawl directory (new or empty).
        new_dir: PathBuf,
    },
    /// Rebuild what `dragnet check crawl` finds damaged, from committed inputs
    ///
    /// A damaged frontier is rebuilt from the URL db its last prioritize read; damage to
    /// anything a cycle made rolls the crawl back to the start of that cycle (its stage outputs,
    /// later cycles and later state versions removed, every frontier rebuilt), and the next
    /// `dragnet cycle` runs it again. WARC files of complete cycles, the manifest, crawl.toml
    /// and init's own files are reported, not repaired (exit 3). Holds the crawl lock.
    Repair {
        /// Print the plan; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Run crawl cycles on this machine (the local executor)
    ///
    /// Fetch, parse and split every partition (a few partitions at a time), then merge and
    /// prioritize every partition, skipping every (stage, partition) already done, so a re-run
    /// after a crash resumes where it stopped. Holds the crawl lock. Writes metrics.prom after
    /// each cycle. Exit 4 if a partition failed (the others' work is kept; a re-run retries it),
    /// 5 if another run holds the crawl's lock or its Slurm jobs are queued (a dead run's lock is
    /// taken over and logged), 2 if DIR is not a crawl.
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
    Slurm(Slurm),
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
        /// One host in N is served over HTTPS (valid, expired, wrong-name or self-signed
        /// certificate; the crawl trusts websim's test CA); 0: none.
        #[arg(long, default_value_t = 6)]
        tls_every: u32,
        /// Print the summary as JSON on stdout too.
        #[arg(long)]
        json: bool,
    },
    /// Fetch one partition's fetch list into WARC files (stage 1 of a cycle)
    ///
    /// Fetches politely (robots.txt first, per-host delays, every limit of [fetch] in
    /// crawl.toml) into WARC files and a fetch-results run. Does nothing if the stage is already
    /// done. Exit 1 if the deadline deferred URLs. Like every stage run by hand, holds the crawl
    /// lock: exit 5, nothing done, while a cycle runs or the crawl's Slurm jobs are queued.
    Fetch {
        #[command(flatten)]
        args: StageArgs,
        /// Progress: a bar on a terminal, log lines otherwise.
        #[arg(long, value_enum, default_value = "auto")]
        progress: ProgressArg,
    },
    /// Extract links and page facts from one partition's fetch (stage 2)
    ///
    /// Reads each answered page of the fetch from the WARC, extracts its links (HTML, sitemaps,
    /// feeds), canonicalizes them, shares its OPIC cash over the followed ones, and writes the
    /// links and pages runs. Does nothing if the stage is already done. Holds the crawl lock
    /// (exit 5 if busy).
    Parse {
        #[command(flatten)]
        args: StageArgs,
    },
    /// Filter one partition's links and route them to their owners (stage 3)
    ///
    /// Collapses the links per target (cash summed), applies the [scope] rules and trap
    /// defences, passes them through the partition's CLOCK cache, and routes them to the
    /// partitions owning their hosts (split/to-q/from-p.run). Does nothing if the stage is
    /// already done. Holds the crawl lock (exit 5 if busy).
    Split {
        #[command(flatten)]
        args: StageArgs,
    },
    /// Merge what was fetched and found into one partition's seen set and URL db (stage 4)
    ///
    /// One sequential pass over its seen set, URL db, fetch results and everything the splits
    /// routed to it; writes the next seen set and URL db and the URLs for prioritize
    /// (new/pNNNN.run). Needs every partition's split. Does nothing if the stage is done.
    /// Holds the crawl lock (exit 5 if busy).
    Merge {
        #[command(flatten)]
        args: StageArgs,
    },
    /// Queue one partition's new URLs and write its next fetch list (stage 5)
    ///
    /// Inserts what the merge found (new URLs, cash updates, retries, due recrawls) into the
    /// partition's disk-resident frontier queue, then extracts its top into the next cycle's
    /// fetch list within the fetch budget and the per-host cap. Does nothing if the stage is done.
    /// Holds the crawl lock (exit 5 if busy).
    Prioritize {
        #[command(flatten)]
        args: StageArgs,
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
        /// Output directory: new (created with its parents) or empty; with --force, one that
        /// holds only an earlier reparse's output. Refused (exit 2, nothing written): a path
        /// inside a crawl directory (one holding crawl.toml and manifest.json, or either beside
        /// cycles/ or state/), a directory holding an input, a symlink, a file, a device or
        /// FIFO.
        #[arg(long)]
        out: OutPath,
        /// Replace the output of an earlier reparse in --out (links.run, pages.run,
        /// reparse.json, text-*.warc.wet.zst; nothing else is touched).
        #[arg(long)]
        force: bool,
        /// A crawl.toml whose [canon] rules and limits to use (defaults otherwise).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Also write the visible text of every HTML page as a WET file
        /// (`text-000001.warc.wet.zst`: WARC conversion records, as Common Crawl's).
        #[arg(long)]
        text: bool,
    },
    /// Write a CDXJ index of WARC files (the format pywb replays from)
    ///
    /// One line per response, revisit and resource record: `SURT timestamp {json}`, sorted, with
    /// the fields cdxj-indexer writes (url, mime, status, digest, length, offset, filename).
    /// Reads .warc, .warc.gz and .warc.zst, anyone's.
    Index {
        /// WARC files to index.
        #[arg(long, required = true, num_args = 1..)]
        warc: Vec<PathBuf>,
        /// Write the index to this file (atomically) instead of standard output. Refused (exit
        /// 2, nothing written): a path inside a crawl directory (one holding crawl.toml and
        /// manifest.json, or either beside cycles/ or state/; the crawl's own
        /// indexes/index.cdxj is kept by its cycles), an input (or a hard link to one), a
        /// symlink, a directory, a device or FIFO, and an existing file without --force.
        #[arg(long)]
        out: Option<OutPath>,
        /// Replace an existing regular file at --out (never one of the paths refused above).
        #[arg(long, requires = "out")]
        force: bool,
    },
    /// Export a crawl's pages, links, URL db or page text as Parquet or JSON Lines
    ///
    /// Streams from the crawl's run files (and WARC files, for links and text) with bounded
    /// memory; the columns are in docs/formats.md ("Exported tables"). DuckDB reads the output
    /// with `SELECT * FROM 'pages.parquet'`.
    Export {
        /// What to export.
        #[arg(long, value_enum)]
        what: WhatArg,
        /// The file format.
        #[arg(long, value_enum, default_value = "parquet")]
        format: FormatArg,
        /// The file to write (atomically). Refused (exit 2, nothing written): a path inside a
        /// crawl directory (this crawl's or another's: one holding crawl.toml and manifest.json,
        /// or either beside cycles/ or state/), a symlink, a directory, a device or FIFO, and an
        /// existing file without --force.
        #[arg(long)]
        out: OutPath,
        /// Replace an existing regular file at --out (never one of the paths refused above).
        #[arg(long)]
        force: bool,
        /// Only this cycle (pages, links, text); default: every cycle parsed everywhere.
        #[arg(long)]
        cycle: Option<u32>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Write a crawl's report: one HTML page with charts, and CSV files
    ///
    /// `index.html` (self-contained: inline SVG charts, no script, nothing fetched) and the CSV
    /// files of docs/formats.md, "Reports" (crawl-report, hosts-report, mimetype-report,
    /// responsecode-report, frontier-summary, cycles), from the commit markers, the state and
    /// the page facts (never the WARC files). What cannot be read is named on the page and
    /// left out. `dragnet cycle` rewrites DIR/report after each complete cycle ([cycle] report).
    Report {
        /// The directory to write into [default: DIR/report].
        #[arg(long)]
        out: Option<PathBuf>,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// Work on WARC files: convert them between .warc.gz and .warc.zst
    #[command(subcommand)]
    Warc(WarcCmd),
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

/// An output path as given (`--out`). Nothing reads the path but [`OutPath::file`] and
/// [`OutPath::dir`], which check it against the rules of [`dragnet::storage::out`] (not inside a
/// crawl, not an input, not a link, device or FIFO, an existing file only with `--force`), so
/// no command writes to a path it did not check.
#[derive(Clone, Debug)]
pub(crate) struct OutPath(PathBuf);

impl From<std::ffi::OsString> for OutPath {
    fn from(s: std::ffi::OsString) -> Self {
        OutPath(PathBuf::from(s))
    }
}

impl OutPath {
    /// The path checked as a file output of a command reading `inputs`.
    pub(crate) fn file(&self, inputs: &[PathBuf], force: bool) -> dragnet::Result<Output> {
        Output::file(&self.0, inputs, force)
    }

    /// The path checked as a directory output of a command reading `inputs` and writing the
    /// files `own` names.
    pub(crate) fn dir(
        &self,
        inputs: &[PathBuf],
        force: bool,
        own: fn(&str) -> bool,
    ) -> dragnet::Result<Output> {
        Output::dir(&self.0, inputs, force, own)
    }
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
pub(crate) enum WhatArg {
    /// One row per answered URL: status, type, title, canonical, where its record is.
    Pages,
    /// One row per link: from, to, tag, rel, anchor text.
    Links,
    /// The URL db: state, fetches, changes, priority, last capture.
    Urls,
    /// The visible text of every HTML page.
    Text,
    /// A WACZ 1.1.1 package of the crawl's WARC files, CDXJ index and pages (--format is
    /// ignored).
    Wacz,
}

impl From<WhatArg> for dragnet::ops::export::What {
    fn from(w: WhatArg) -> Self {
        match w {
            WhatArg::Pages => Self::Pages,
            WhatArg::Links => Self::Links,
            WhatArg::Urls => Self::Urls,
            WhatArg::Text => Self::Text,
            WhatArg::Wacz => Self::Wacz,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// Apache Parquet (zstd).
    Parquet,
    /// One JSON object per line.
    Jsonl,
}

impl From<FormatArg> for dragnet::ops::export::Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Parquet => Self::Parquet,
            FormatArg::Jsonl => Self::Jsonl,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ProgressArg {
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
pub(crate) enum Check {
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
    /// Check every file of a crawl directory
    ///
    /// Run files, WARC files (with their digests), stage markers, the manifest, CLOCK caches,
    /// the frontier's queue files, crawl.toml and the lock, each checked as the stage that reads
    /// it does, nothing changed. Lists the damaged files with the error (file and offset) and
    /// the temporaries dead writers left; exit 3 if anything is damaged.
    Crawl {
        /// Print the result as one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// The crawl directory.
        dir: PathBuf,
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

#[derive(Subcommand)]
pub(crate) enum WarcCmd {
    /// Convert WARC files to .warc.gz or .warc.zst, record by record
    ///
    /// Streams each file (bounded memory, any record size), verifies every record's block and
    /// payload digests on the way, and writes each record as its own gzip member or zstd frame:
    /// every record is byte for byte the same once decompressed. FILES... --out DIR writes
    /// anyone's files into DIR (the inputs are only read); --crawl DIR converts a crawl's own
    /// files in place, under its lock, rewriting its fetch results, CDXJ indexes and markers
    /// (resumable after a kill: run it again). A file that is not a WARC, a truncated member,
    /// a bad digest or a dictionary that does not match stop it with an error naming the file
    /// and offset; nothing is changed then.
    Convert {
        /// The compression to convert to.
        #[arg(long, value_enum)]
        to: ToArg,
        /// With --to zst: a zstd dictionary (`zstd --train`), written as the warc-zstd
        /// dictionary frame at the start of each file and used for every record.
        #[arg(long)]
        dictionary: Option<PathBuf>,
        /// Compression level [default: gzip 6, zstd 3].
        #[arg(long)]
        level: Option<i32>,
        /// Convert this crawl's own WARC files in place (no FILES, no --out).
        #[arg(long, conflicts_with_all = ["files", "out"])]
        crawl: Option<PathBuf>,
        /// The directory to write into: new (made) or empty; with --force, one holding only WARC
        /// files (an earlier conversion's), which are replaced. Refused (exit 2, nothing
        /// written): a path inside a crawl directory, a directory holding an input, a symlink,
        /// a file, a device or FIFO.
        #[arg(long, required_unless_present = "crawl")]
        out: Option<OutPath>,
        /// Replace an earlier conversion's files in --out.
        #[arg(long)]
        force: bool,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// WARC files to convert (.warc, .warc.gz, .warc.zst).
        #[arg(required_unless_present = "crawl")]
        files: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ToArg {
    /// `.warc.gz`: one gzip member per record.
    Gz,
    /// `.warc.zst`: one zstd frame per record (IIPC warc-zstd).
    Zst,
}

/// What every stage command takes: which (cycle, partition) of which crawl.
#[derive(clap::Args)]
pub(crate) struct StageArgs {
    /// Cycle number.
    #[arg(long)]
    pub(crate) cycle: u32,
    /// Partition number.
    #[arg(long)]
    pub(crate) partition: u32,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// The crawl directory.
    pub(crate) dir: PathBuf,
}

#[derive(Subcommand)]
pub(crate) enum Slurm {
    /// Submit the crawl's next cycles to Slurm as job arrays
    ///
    /// One job array per stage over the partitions whose stage is not done, each depending on
    /// the one before (afterok), then a job that ends the cycle (metrics.prom, old state pruned)
    /// and submits the next one while cycles remain. Settings: [slurm] in crawl.toml (sbatch
    /// arguments, array size, tasks at once).
    Submit {
        #[command(flatten)]
        count: super::args::CycleCount,
        /// Print the sbatch commands, submit nothing.
        #[arg(long)]
        dry_run: bool,
        /// The dragnet binary as the compute nodes see it [default: this one].
        #[arg(long)]
        binary: Option<PathBuf>,
        /// Print the submission as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The crawl directory (on a filesystem every node mounts).
        dir: PathBuf,
    },
    /// (Run by Slurm) One array task: a stage for one partition
    ///
    /// Runs the stage for the partition that SLURM_ARRAY_TASK_ID picks from --partitions.
    Task {
        /// fetch, parse, split, merge or prioritize.
        #[arg(long)]
        stage: String,
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// The array's partitions, as ranges (0-3,7); task i runs the i-th.
        #[arg(long)]
        partitions: String,
        /// Run the stage in this process (the task itself runs it in a child process, and asks
        /// Slurm to run it again if the child fails for a transient reason or is killed).
        #[arg(long, hide = true)]
        worker: bool,
        /// The crawl directory.
        dir: PathBuf,
    },
    /// (Run by Slurm) End a complete cycle and submit the next one if the chain goes on.
    Finish {
        /// Cycle number.
        #[arg(long)]
        cycle: u32,
        /// Cycles still to submit after this one.
        #[arg(long, default_value_t = 0)]
        then_cycles: u32,
        /// Submit the next cycle while fetch lists are not empty (at most --max-cycles more).
        #[arg(long)]
        until_empty: bool,
        /// The bound for --until-empty.
        #[arg(long, default_value_t = 0)]
        max_cycles: u32,
        /// The dragnet binary the next jobs run [default: this one].
        #[arg(long)]
        binary: Option<PathBuf>,
        /// The crawl directory.
        dir: PathBuf,
    },
}
