//! `dragnet warc convert`: argument handling and printing over `dragnet::ops::convert`.

use std::path::{Path, PathBuf};

use dragnet::error::EXIT_OK;
use dragnet::ops::convert::{self, Dictionary, Options};
use dragnet::warc::Compression;
use dragnet::Error;

use super::args::{OutPath, ToArg};

/// `dragnet warc convert`: FILES into --out, or a crawl's own files in place (--crawl).
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert(
    to: ToArg,
    dictionary: Option<&Path>,
    level: Option<i32>,
    crawl: Option<&Path>,
    out: Option<&OutPath>,
    force: bool,
    json: bool,
    files: &[PathBuf],
) -> Result<i32, Error> {
    let to = match to {
        ToArg::Gz => Compression::Gzip,
        ToArg::Zst => Compression::Zstd,
    };
    let dictionary = match dictionary {
        Some(_) if to != Compression::Zstd => {
            return Err(Error::Usage(
                "--dictionary is for --to zst (a gzip member has no dictionary)".into(),
            ))
        }
        Some(d) => Some(Dictionary::load(d)?),
        None => None,
    };
    let opts = Options {
        to,
        level,
        dictionary,
    };
    let t0 = std::time::Instant::now();
    let (r, what) = match (crawl, out) {
        (Some(dir), _) => {
            let (c, cfg) = dragnet::crawl::CrawlDir::open(dir)?;
            let lock = dragnet::crawl::CrawlLock::acquire_with_lease(
                c.root(),
                &format!("warc convert --to {}", to.name()),
                cfg.cycle.lock_lease(),
            )?;
            if let Some(note) = lock.took_over() {
                eprintln!("dragnet: {note}");
            }
            dragnet::crawl::queued::check_no_jobs_queued(&c, &cfg)?;
            let r = convert::convert_crawl(&c, cfg.crawl.partitions, &opts)?;
            drop(lock);
            (r, dir.display().to_string())
        }
        (None, Some(out)) => {
            let out = out.dir(files, force, convert::is_output_name)?;
            let r = convert::convert_files(files, &out, &opts)?;
            (r, out.given().display().to_string())
        }
        (None, None) => {
            return Err(Error::Usage(
                "give --out DIR with FILES, or --crawl DIR".into(),
            ))
        }
    };
    if json {
        outln!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut line = format!(
        "warc convert: {} records of {} files to {} in {what} ({} -> {} bytes) in {secs:.2}s \
         ({:.1} MB/s read)",
        r.records(),
        r.files.len(),
        to.name(),
        r.bytes_in(),
        r.bytes_out(),
        r.bytes_in() as f64 / 1e6 / secs.max(1e-9)
    );
    if crawl.is_some() {
        line.push_str(&format!(
            "; {} partitions converted, {} resumed, {} files already {}",
            r.partitions,
            r.resumed,
            r.kept,
            to.name()
        ));
    }
    eprintln!("{line}");
    Ok(EXIT_OK)
}
