//! A crawl's own WARC files converted in place ([`convert_crawl`]), one (cycle, partition) at a
//! time: its files converted under staged names, what points into them rewritten
//! (`rewrite.rs`), the whole committed by a journal (`journal.rs`); then the crawl's indexes
//! merged again, and the old files removed.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::journal::{journal_path, staged, sweep_staged, Journal, Staging, Unit};
use super::rewrite::{self, Moves};
use super::{convert_stream, output_name, FileReport, Options, Report};
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage};
use crate::error::{IoContext, Result};
use crate::storage::{self, AtomicFile};
use crate::warc::{Compression, ReaderOptions, WarcReader};

/// Converts the WARC files of the crawl at `crawl` (of `partitions` partitions) in place; the
/// caller holds the crawl lock. Resumes a conversion that was killed.
pub fn convert_crawl(crawl: &CrawlDir, partitions: u32, opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    let mut touched: Vec<u32> = Vec::new();
    let converted = convert_all(crawl, partitions, opts, &mut report, &mut touched);
    // What was committed is finished even when a later partition failed: the crawl is left
    // consistent (partly converted), and the error is the failed file's.
    touched.dedup();
    let finished = finish(crawl, partitions, &touched, &mut report);
    converted?;
    finished?;
    Ok(report)
}

/// Every partition converted (or an interrupted one's journal applied) until one fails; the
/// cycles touched in `touched`.
fn convert_all(
    crawl: &CrawlDir,
    partitions: u32,
    opts: &Options,
    report: &mut Report,
    touched: &mut Vec<u32>,
) -> Result<()> {
    for c in crawl.cycles() {
        sweep_staged(crawl, c)?;
        for p in 0..partitions {
            let jp = journal_path(crawl, c, p);
            if let Some(j) = Journal::read(&jp)? {
                j.apply(crawl)?;
                report.resumed += 1;
                touched.push(c);
                continue;
            }
            let unit = Unit { crawl, cycle: c, p };
            match convert_partition(unit, opts, report) {
                Ok(Some(_)) => touched.push(c),
                Ok(None) => {}
                Err(e) => {
                    // Nothing of this partition was committed: its staged files go.
                    if !jp.exists() {
                        let _ = sweep_staged(crawl, c);
                    }
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// The indexes of the cycles `touched` and the crawl's made again (they name the new files),
/// then the old files the journals list removed, and the journals.
fn finish(crawl: &CrawlDir, partitions: u32, touched: &[u32], report: &mut Report) -> Result<()> {
    for &c in touched {
        if crawl.cycle_cdxj(c).exists() {
            crate::ops::index::index_cycle(crawl, partitions, c)?;
        }
    }
    if !touched.is_empty() {
        report.index_lines = rewrite::crawl_index(crawl, partitions)?;
    }
    for c in crawl.cycles() {
        for p in 0..partitions {
            let jp = journal_path(crawl, c, p);
            if let Some(j) = Journal::read(&jp)? {
                j.finish(crawl)?;
                storage::fault::check("remove", &jp)
                    .and_then(|()| std::fs::remove_file(&jp))
                    .ctx("remove", &jp)?;
                storage::sync_dir(jp.parent().expect("fetch/"))?;
            }
        }
    }
    Ok(())
}

/// Converts a partition of a cycle (its fetch committed): stages everything, then publishes
/// its journal and applies it. `None` if nothing needed converting.
fn convert_partition(
    unit: Unit<'_>,
    opts: &Options,
    report: &mut Report,
) -> Result<Option<Journal>> {
    let done = unit.crawl.done_path(unit.cycle, Stage::Fetch, unit.p);
    let Some(marker) = DoneMarker::read(&done)? else {
        return Ok(None);
    };
    let todo = files_to_convert(unit.crawl, &marker, opts, report)?;
    if todo.is_empty() {
        return Ok(None);
    }
    let mut staging = Staging::new(marker.outputs.clone());
    let mut moves = Moves::new(&unit.crawl.warc_dir(unit.cycle))?;
    for (i, path) in &todo {
        let rep = stage_file(unit, *i, path, opts, &mut moves, &mut staging)?;
        report.files.push(rep);
    }
    let Moves { mut map, sorter } = moves;
    map.seal()?;
    rewrite::partition_index(unit, sorter, &mut staging)?;
    let fetched = rewrite::fetch_results(unit, &map, &mut staging)?;
    rewrite::markers(unit, &marker, fetched.as_ref(), &mut staging)?;
    let journal = staging.commit(unit)?;
    report.partitions += 1;
    Ok(Some(journal))
}

/// The WARC files `marker` lists that are not already what `opts` write (those are counted as
/// kept), with their places in its outputs.
fn files_to_convert(
    crawl: &CrawlDir,
    marker: &DoneMarker,
    opts: &Options,
    report: &mut Report,
) -> Result<Vec<(usize, PathBuf)>> {
    let mut todo = Vec::new();
    for (i, d) in marker.outputs.iter().enumerate() {
        if !is_warc_output(&d.path) {
            continue;
        }
        let path = crawl.root().join(&d.path);
        let rd = WarcReader::open(&path, ReaderOptions::default())?;
        if opts.keeps(rd.compression(), rd.has_dictionary()) {
            report.kept += 1;
        } else {
            todo.push((i, path));
        }
    }
    Ok(todo)
}

/// The WARC file at `path`, output `i` of the fetch marker, converted under its staged new
/// name, its records' moves noted in `moves`.
fn stage_file(
    unit: Unit<'_>,
    i: usize,
    path: &Path,
    opts: &Options,
    moves: &mut Moves,
    staging: &mut Staging,
) -> Result<FileReport> {
    let crawl = unit.crawl;
    let prefix = crate::crawl::warc_filename_prefix(unit.cycle);
    let old_name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let new_name = output_name(&old_name, opts.to);
    let fin = crawl.warc_dir(unit.cycle).join(&new_name);
    let stage = staged(&fin);
    moves.map.start(&old_name, &new_name);
    let mut file = AtomicFile::create(&stage)?;
    let filename = format!("{prefix}{new_name}");
    let mut rep = {
        let mut w = BufWriter::with_capacity(1 << 20, &mut file);
        let rep = convert_stream(path, &mut w, opts, &mut |m| moves.push(m, &filename))?;
        w.flush().ctx("write", &stage)?;
        rep
    };
    file.commit()?;
    rep.output = fin.clone();
    staging.bytes_in += rep.record_bytes_in;
    staging.bytes_out += rep.record_bytes_out;
    let mut d = FileDigest::of_file(crawl, &stage)?;
    d.path = crawl.relative(&fin);
    staging.outputs[i] = d;
    staging.renames.push((stage, fin.clone()));
    if fin != path {
        staging.remove.push(path.to_path_buf());
    }
    staging.converted.push(format!("{prefix}{old_name}"));
    Ok(rep)
}

/// A WARC file a fetch marker lists as its output (not a WET file).
fn is_warc_output(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.contains(".warc.wet") && Compression::from_name(name).is_some()
}
