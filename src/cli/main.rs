//! The `dragnet` command: parses arguments and calls the library (ripgrep's thin-binary habit).
//! `args.rs` holds every subcommand's arguments; each command lives in the file of its kind.
//!
//! Exit codes (`dragnet::error`): 0 done; 1 finished with recorded per-item failures (bad seed
//! lines, URLs that do not parse, deferred URLs, unreadable WARC files); 2 usage or configuration
//! error, or a stage asked for before its input exists; 3 I/O failure or corrupt data; 4 a cycle
//! finished with failed partitions (the others' work is kept; re-run to retry); 5 busy: another
//! run holds the crawl's lock or its Slurm jobs are queued (nothing was done); 130 and 143
//! stopped by SIGINT or SIGTERM (within 2 s, its temporaries removed, its lock released; the
//! next run resumes). (6, a stale lock, is no longer used: the next run takes a dead run's lock
//! over.)

/// `println!` that ends the process quietly (exit 0) when stdout is closed early, as in
/// `dragnet check run ... | head`, instead of panicking; another write error is exit 3.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

mod args;
mod check;
mod crawl;
mod demo;
mod report;
mod slurm;
mod stage;
mod warc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dragnet::crawl::Stage;
use dragnet::Error;

use args::{Cli, Command, WarcCmd};

fn main() -> ExitCode {
    dragnet::util::tune_allocator();
    let cli = Cli::parse();
    // SIGINT and SIGTERM stop every command cleanly (`dragnet::interrupt`); websim has its own.
    if !matches!(cli.command, Command::Websim { .. }) {
        if let Err(e) = dragnet::interrupt::install() {
            eprintln!("dragnet: warning: cannot catch SIGINT and SIGTERM ({e}); they kill at once");
        }
    }
    let code = match execute(cli.command) {
        Ok(code) => code,
        Err(e) => {
            report(&e);
            e.exit_code()
        }
    };
    // A stop asked for by a signal ends with its code, even if the work in hand got done.
    let code = match dragnet::interrupt::requested() {
        Some(signal) => 128 + signal,
        None => code,
    };
    ExitCode::from(code as u8)
}

/// Ends the process after a failed write to stdout: quietly if the reader went away.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("dragnet: error: cannot write to stdout: {e}");
    std::process::exit(dragnet::error::EXIT_IO);
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
        } => crawl::init(seeds, partitions, config, &dir),
        Command::Inject {
            seeds,
            priority,
            dir,
        } => crawl::inject(&seeds, priority, &dir),
        Command::Status { json, verbose, dir } => crawl::status(json, verbose, &dir),
        Command::Unlock { force, dir } => crawl::unlock(force, &dir),
        Command::Repair { dry_run, json, dir } => crawl::repair(dry_run, json, &dir),
        Command::Repartition {
            partitions,
            json,
            dir,
            new_dir,
        } => crawl::repartition(partitions, json, &dir, &new_dir),
        Command::Cycle {
            count,
            progress,
            json,
            dir,
        } => crawl::cycle(&count, progress.into(), json, &dir),
        Command::Slurm(cmd) => slurm::run(cmd),
        Command::Demo {
            dir,
            hosts,
            pages,
            seed,
            tls_every,
            json,
        } => demo::command(dir, hosts, pages, seed, tls_every, json),
        Command::Fetch { args, progress } => stage::run(Stage::Fetch, &args, progress.into()),
        Command::Parse { args } => stage::run(Stage::Parse, &args, Default::default()),
        Command::Split { args } => stage::run(Stage::Split, &args, Default::default()),
        Command::Merge { args } => stage::run(Stage::Merge, &args, Default::default()),
        Command::Prioritize { args } => stage::run(Stage::Prioritize, &args, Default::default()),
        Command::Reparse {
            warc,
            out,
            force,
            config,
            json,
            text,
        } => crawl::reparse(&warc, &out, force, config.as_deref(), json, text),
        Command::Index { warc, out, force } => index(&warc, out, force),
        Command::Export {
            what,
            format,
            out,
            force,
            cycle,
            json,
            dir,
        } => crawl::export(what.into(), format.into(), &out, force, cycle, json, &dir),
        Command::Report { out, dir } => report::run(&dir, out.as_deref()),
        Command::Warc(WarcCmd::Convert {
            to,
            dictionary,
            level,
            crawl,
            out,
            force,
            json,
            files,
        }) => warc::convert(
            to,
            dictionary.as_deref(),
            level,
            crawl.as_deref(),
            out.as_ref(),
            force,
            json,
            &files,
        ),
        Command::Check(cmd) => check::run(cmd),
        Command::Websim { args } => {
            let argv = std::iter::once(std::ffi::OsString::from("dragnet websim")).chain(args);
            // websim's exit codes follow the same convention (0 / 2 usage / 3 I/O).
            Ok(i32::from(websim::cli::run(argv)))
        }
    }
}

/// `dragnet index`: the CDXJ index of WARC files, to stdout or `out`.
fn index(warc: &[PathBuf], out: Option<args::OutPath>, force: bool) -> Result<i32, Error> {
    let out = out.map(|o| o.file(warc, force)).transpose()?;
    let n = dragnet::warc::cdxj::index_to(warc, out.as_ref(), 256 << 20)?;
    if let Some(out) = &out {
        eprintln!(
            "indexed {n} records of {} files into {}",
            warc.len(),
            out.given().display()
        );
    }
    Ok(dragnet::error::EXIT_OK)
}
