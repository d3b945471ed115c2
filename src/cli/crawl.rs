//! `dragnet init|status|unlock|cycle|reparse`: the commands on a whole crawl (or, for reparse,
//! on anyone's WARC files).

use std::path::{Path, PathBuf};

use dragnet::config::Config;

use dragnet::crawl::{self, CrawlDir};

use dragnet::error::{EXIT_OK, EXIT_PARTIAL};
use dragnet::fetch::ProgressMode;
use dragnet::ops::{self, InitOptions};
use dragnet::Error;

use super::args::{CycleCount, OutPath};

/// `dragnet init`: exit 1 if some seed lines were bad (each is reported with its line number).
pub(crate) fn init(
    seeds: PathBuf,
    partitions: Option<u32>,
    config: Option<PathBuf>,
    dir: &Path,
) -> Result<i32, Error> {
    let opts = InitOptions {
        seeds: seeds.clone(),
        config,
        partitions,
    };
    let r = ops::init(dir, &opts, &mut |b| skipped_seed(&seeds, b))?;
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

/// Says on stderr which line of the seed file was skipped, and why.
fn skipped_seed(seeds: &Path, b: &ops::BadSeed) {
    eprintln!(
        "{}:{}: skipped seed {:?}: {}",
        seeds.display(),
        b.line,
        b.text,
        b.error
    );
}

/// `dragnet inject`.
pub(crate) fn inject(seeds: &Path, priority: f64, dir: &Path) -> Result<i32, Error> {
    let r = ops::inject(dir, seeds, priority, &mut |b| skipped_seed(seeds, b))?;
    eprintln!(
        "injected {} seeds from {} lines ({} bad) into cycle {} of {} ({} partitions)",
        r.seeds,
        r.lines,
        r.bad,
        r.cycle,
        dir.display(),
        r.files.len()
    );
    Ok(if r.bad > 0 { EXIT_PARTIAL } else { EXIT_OK })
}

/// `dragnet status`: the summary, with `verbose` every stage's counters too (JSON holds all).
pub(crate) fn status(json: bool, verbose: bool, dir: &Path) -> Result<i32, Error> {
    let s = ops::status(dir)?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&s).expect("status serializes")
        );
    } else if verbose {
        outln!("{}", s.verbose().to_string().trim_end_matches('\n'));
    } else {
        outln!("{}", s.to_string().trim_end_matches('\n'));
    }
    Ok(EXIT_OK)
}

/// `dragnet export`.
pub(crate) fn export(
    what: dragnet::ops::export::What,
    format: dragnet::ops::export::Format,
    out: &OutPath,
    force: bool,
    cycle: Option<u32>,
    json: bool,
    dir: &Path,
) -> Result<i32, Error> {
    let (crawl, cfg) = CrawlDir::open(dir)?;
    let out = out.file(&[dir.to_path_buf()], force)?;
    let t0 = std::time::Instant::now();
    let r = dragnet::ops::export::export_to(&crawl, &cfg, what, format, &out, cycle)?;
    if json {
        outln!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "export: {} rows from {} into {} in {secs:.2}s ({:.1} MB/s read)",
        r.rows,
        dragnet::util::plural(r.cycles.len() as u64, "cycle", "cycles"),
        out.given().display(),
        r.bytes_read as f64 / 1e6 / secs.max(1e-9)
    );
    if !r.carried.is_empty() {
        eprintln!(
            "export: cycles {:?} were crawled before `dragnet repartition` made {}: their pages \
             and links are in the crawl directory it was made from (export them there)",
            r.carried,
            dir.display()
        );
    }
    Ok(EXIT_OK)
}

/// `dragnet unlock`.
pub(crate) fn unlock(force: bool, dir: &Path) -> Result<i32, Error> {
    match crawl::unlock(dir, force)? {
        Some(l) => eprintln!(
            "removed the lock of pid {} on {} ({}, since {})",
            l.pid, l.host, l.command, l.started
        ),
        None => eprintln!("{} is not locked", dir.display()),
    }
    Ok(EXIT_OK)
}

/// `dragnet repartition`: the report on stderr (and as JSON on stdout with `--json`).
pub(crate) fn repartition(
    partitions: u32,
    json: bool,
    dir: &Path,
    new_dir: &Path,
) -> Result<i32, Error> {
    let r = ops::repartition(dir, new_dir, partitions)?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&r).expect("report serializes")
        );
    }
    eprintln!(
        "repartitioned {} ({} partitions) into {} ({} partitions), next cycle {}: {} URLs, {} \
         frontier entries, {} URLs in the fetch lists, {} hosts, {} injected seeds; history: {} \
         files hard-linked, {} copied, {} stage markers; {:.2}s",
        r.from.display(),
        r.old_partitions,
        r.to.display(),
        r.partitions,
        r.next_cycle,
        r.urls,
        r.frontier,
        r.fetchlist,
        r.hosts,
        r.injected,
        r.linked,
        r.copied,
        r.markers,
        r.seconds
    );
    Ok(EXIT_OK)
}

/// `dragnet repair`: exit 3 if damage is left that it cannot repair.
pub(crate) fn repair(dry_run: bool, json: bool, dir: &Path) -> Result<i32, Error> {
    let crawl = CrawlDir::new(dir);
    if !crawl.config_path().is_file() {
        return Err(crawl.not_a_crawl());
    }
    let cfg = dragnet::config::Config::load(&crawl.config_path())?;
    let r = dragnet::ops::repair::repair(&crawl, &cfg, dry_run)?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&r).expect("report serializes")
        );
    } else {
        let verb = if dry_run { "would" } else { "did" };
        if let Some(m) = &r.manifest_rebuilt {
            outln!(
                "{verb} rebuild the lost manifest.json from the crawl's files: {} partitions, \
                 queue {}",
                m.partitions,
                m.queue
            );
            for w in &m.warnings {
                outln!("  warning: {w}");
            }
        }
        if r.damaged.is_empty() && r.manifest_rebuilt.is_none() {
            outln!("{}: nothing damaged, nothing to repair", dir.display());
        }
        for (path, why) in &r.damaged {
            outln!("DAMAGED {}: {why}", path.display());
        }
        if let Some(k) = r.rolled_back_to {
            outln!(
                "{verb} roll the crawl back to the start of cycle {k}: `dragnet cycle` runs it again"
            );
        }
        for path in &r.regenerated {
            outln!(
                "{verb} make {} again by running the stage that wrote it (the same bytes, \
                 proven by its marker)",
                path.display()
            );
        }
        let q = r.quarantine.as_deref().unwrap_or(Path::new("quarantine"));
        for (path, bytes) in &r.quarantined {
            outln!(
                "  {verb} move {} ({}) to {}/",
                path.display(),
                dragnet::config::ByteSize(*bytes),
                q.display()
            );
        }
        for path in &r.removed {
            outln!("  {verb} remove {}", path.display());
        }
        for (p, n) in &r.frontiers_rebuilt {
            outln!("{verb} rebuild the frontier of partition {p} from its URL db: {n} entries");
        }
        for (path, why) in &r.unrepairable {
            outln!("NOT REPAIRED {}: {why}", path.display());
        }
    }
    Ok(if r.unrepairable.is_empty() {
        EXIT_OK
    } else {
        dragnet::error::EXIT_IO
    })
}

/// `dragnet cycle`: exit [`dragnet::error::EXIT_CYCLE_INCOMPLETE`] if a partition failed (the
/// others' work is kept).
pub(crate) fn cycle(
    count: &CycleCount,
    progress: ProgressMode,
    json: bool,
    dir: &Path,
) -> Result<i32, Error> {
    let (crawl, cfg) = CrawlDir::open(dir)?;
    let opts = dragnet::exec::CycleOptions {
        cycles: count.cycles,
        until_empty: count.until_empty,
        max_cycles: count.max_cycles,
        progress,
        log: true,
    };
    let r = dragnet::exec::run_cycles(&crawl, &cfg, &opts)?;
    if json {
        outln!("{}", serde_json::to_string(&r).expect("report serializes"));
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

/// What `dragnet reparse` writes in its output directory, which `--force` may replace.
fn reparse_output(name: &str) -> bool {
    matches!(name, "links.run" | "pages.run" | "reparse.json")
        || (name.starts_with("text-") && name.contains(".warc.wet"))
}

/// `dragnet reparse`: exit 1 if a file could not be read to its end. The output is written in a
/// staging directory inside `--out` and moved in when complete (`reparse.json` last).
pub(crate) fn reparse(
    warc: &[PathBuf],
    out: &OutPath,
    force: bool,
    config: Option<&Path>,
    json: bool,
    text: bool,
) -> Result<i32, Error> {
    let mut inputs = warc.to_vec();
    inputs.extend(config.map(Path::to_path_buf));
    let out = out.dir(&inputs, force, reparse_output)?;
    let cfg = match config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let staged = out.stage_dir()?;
    let r = dragnet::parse::stage::reparse_with(warc, staged.path(), &cfg, text)?;
    staged.publish("reparse.json")?;
    if json {
        outln!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    eprintln!("reparse: {}", dragnet::parse::stage::summary(&r.stage));
    for f in &r.failed_files {
        eprintln!("reparse: {f}");
    }
    eprintln!("reparse: wrote {}", out.given().display());
    Ok(if r.failed_files.is_empty() {
        EXIT_OK
    } else {
        EXIT_PARTIAL
    })
}
