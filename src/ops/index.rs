//! The crawl's CDXJ indexes (docs/formats.md, "CDXJ indexes"): what makes a crawl directory a
//! pywb collection.
//!
//! ```text
//! cycles/CCCCCC/cdxj/pNNNN.cdxj   one partition's WARC files: written by its fetch
//! cycles/CCCCCC/index.cdxj        the cycle's: the partitions' merged, at the end of the cycle
//! indexes/index.cdxj              the crawl's: every cycle's merged, at the end of each cycle
//! indexes/index.cycles            the cycles indexes/index.cdxj holds, one number a line
//! archive -> cycles               where the `filename`s of the index lead
//! ```
//!
//! The fetch stage's WARC writer indexes each record as it writes it (it knows the offset, the
//! length and the digests: nothing is read again), with `filename` the file's path under
//! `cycles/` (`000003/warc/p0001-000001.warc.gz`), sorts the lines externally and commits the
//! partition's index with the stage. Once every partition has fetched, the executors
//! ([`crate::exec::after_cycle`]) merge the partitions' indexes into the cycle's, and the cycles'
//! into the crawl's: a k-way merge of sorted files ([`crate::warc::cdxj::merge_sorted`]), each
//! line read once, memory independent of the crawl. The crawl's index is rewritten with each
//! cycle (one sequential pass, like the seen set's merge), merging only the cycles it does not
//! hold yet; a line equal to one already there is dropped, so redoing a merge that was killed
//! after the index but before its list of cycles changes nothing. A cycle that captured nothing
//! leaves the crawl's index as it is (only `index.cycles` grows), and the crawl's first captures
//! are the cycle's index itself: `indexes/index.cdxj` is then a hard link to
//! `cycles/CCCCCC/index.cdxj` (a copy where the file system has no hard links), until the next
//! cycle with captures writes it anew. So a capture's line is written twice at the end of its
//! cycle (the partition's index, the cycle's), not three times, and once more at the end of
//! each later cycle with captures. Every file is published atomically (a new file renamed over
//! the old, never edited in place, so the two names of a link never diverge by halves).
//! Deleting `indexes/` makes the next cycle's end rebuild it from the cycles'.
//!
//! pywb finds a collection's indexes in `indexes/` and its WARC files under `archive/`, so
//! `ln -s /path/to/crawl collections/crawl && wayback` replays the crawl (README, "Replaying a
//! crawl with pywb").

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::crawl::{CrawlDir, Stage};
use crate::error::{IoContext, Result};
use crate::warc::cdxj::{self, CdxjSorter};

/// Memory for indexing a partition's WARC files that its fetch did not index (crawls older than
/// the fetch's index).
const REINDEX_BUDGET: usize = 64 << 20;

/// What [`after_cycle`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Lines of the cycle's index (`None`: not every partition has fetched yet).
    pub cycle_lines: Option<u64>,
    /// Cycles merged into the crawl's index.
    pub cycles_added: Vec<u32>,
    /// Lines of the crawl's index after the merge (when it was rewritten; `None` when the
    /// cycles added captured nothing and it was left as it was).
    pub crawl_lines: Option<u64>,
    /// Damaged indexes found and made again (they are derived from the WARC files): the
    /// crawl's, or a cycle's, with what was wrong.
    pub healed: Vec<(PathBuf, String)>,
}

/// `indexes/index.cdxj`.
pub fn crawl_index(crawl: &CrawlDir) -> PathBuf {
    crawl.indexes_dir().join("index.cdxj")
}

fn cycles_list(crawl: &CrawlDir) -> PathBuf {
    crawl.indexes_dir().join("index.cycles")
}

/// The cycles `indexes/index.cdxj` holds.
pub fn indexed_cycles(crawl: &CrawlDir) -> Vec<u32> {
    std::fs::read_to_string(cycles_list(crawl))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Ends cycle `cycle` of a crawl of `partitions` partitions for its indexes: the cycle's index
/// from the partitions' (when every partition has fetched), then every cycle index the crawl's
/// index lacks merged into it, and the `archive` link made.
pub fn after_cycle(crawl: &CrawlDir, partitions: u32, cycle: u32) -> Result<IndexReport> {
    update(crawl, partitions, Some(cycle))
}

/// Makes what is missing: the index of each cycle the crawl's index lacks and whose partitions
/// have all fetched (from the partitions' indexes, or their WARC files), then the crawl's index
/// and the `archive` link (`dragnet repair` after removing damaged indexes).
pub fn rebuild(crawl: &CrawlDir, partitions: u32) -> Result<IndexReport> {
    update(crawl, partitions, None)
}

fn update(crawl: &CrawlDir, partitions: u32, ended: Option<u32>) -> Result<IndexReport> {
    let fetched = |c: u32| crawl.done_everywhere(c, Stage::Fetch, partitions);
    let mut report = IndexReport::default();
    if let Some(c) = ended.filter(|&c| fetched(c)) {
        report.cycle_lines = Some(index_cycle(crawl, partitions, c)?);
    }
    // The crawl's index is derived: damaged (a line that does not parse, out of order, cut
    // short), it is made again from the cycles' instead of carried on into the next.
    let whole = crawl_index(crawl);
    for path in [&whole, &cycles_list(crawl)] {
        if let Err(e) = path_exists_then(path, super::check::check_cdxj) {
            report.healed.push((whole.clone(), e.to_string()));
            std::fs::remove_dir_all(crawl.indexes_dir()).ctx("remove", &crawl.indexes_dir())?;
            break;
        }
    }
    let held = indexed_cycles(crawl);
    let mut missing = Vec::new();
    for c in crawl.cycles() {
        if held.contains(&c) {
            continue;
        }
        if let Err(e) = path_exists_then(&crawl.cycle_cdxj(c), super::check::check_cdxj) {
            report.healed.push((crawl.cycle_cdxj(c), e.to_string()));
            std::fs::remove_file(crawl.cycle_cdxj(c)).ctx("remove", &crawl.cycle_cdxj(c))?;
        }
        if !crawl.cycle_cdxj(c).exists() {
            // A cycle in progress has no index yet; one whose index was removed gets it again.
            if ended == Some(c) || !fetched(c) {
                continue;
            }
            index_cycle(crawl, partitions, c)?;
        }
        missing.push(c);
    }
    if !missing.is_empty() {
        let dir = crawl.indexes_dir();
        crate::storage::create_dir_all(&dir)?;
        // A cycle that captured nothing adds nothing to merge (the tail of a crawl, or cycles
        // whose hosts are all parked).
        let mut inputs: Vec<PathBuf> = missing
            .iter()
            .map(|&c| crawl.cycle_cdxj(c))
            .filter(|p| std::fs::metadata(p).map_or(true, |m| m.len() > 0))
            .collect();
        let old = whole.exists() && !held.is_empty();
        // The crawl's first captures are the index of the cycle just ended, line for line
        // (any other missing cycle captured nothing): the same file under a second name, not a
        // copy written (a crawl's first cycle is most of its index).
        let just_ended = ended.map(|c| crawl.cycle_cdxj(c));
        let first = match (&inputs[..], report.cycle_lines) {
            ([only], Some(lines)) if !old && Some(only) == just_ended.as_ref() => Some(lines),
            _ => None,
        };
        if old && inputs.is_empty() {
            // The crawl's index stays as it is; only its list of cycles grows.
        } else if let Some(lines) = first {
            crate::storage::link_atomic(&inputs[0], &whole)
                .or_else(|_| write_merged(&inputs, &whole, true).map(|_| ()))?;
            report.crawl_lines = Some(lines);
        } else {
            if old {
                inputs.push(whole.clone());
            }
            report.crawl_lines = Some(write_merged(&inputs, &whole, true)?);
        }
        let mut all = held;
        all.extend(&missing);
        all.sort_unstable();
        all.dedup();
        let text: String = all.iter().map(|c| format!("{c}\n")).collect();
        crate::storage::write_atomic(&cycles_list(crawl), text.as_bytes())?;
        report.cycles_added = missing;
    }
    link_archive(crawl)?;
    Ok(report)
}

/// `check(path)` if `path` exists.
fn path_exists_then(path: &Path, check: fn(&Path) -> Result<()>) -> Result<()> {
    if path.exists() {
        check(path)
    } else {
        Ok(())
    }
}

/// Writes `cycles/CCCCCC/index.cdxj` from the partitions' indexes; a partition whose fetch
/// wrote none (a crawl older than them) has its WARC files indexed now. Returns its lines.
pub fn index_cycle(crawl: &CrawlDir, partitions: u32, cycle: u32) -> Result<u64> {
    let mut inputs = Vec::with_capacity(partitions as usize);
    for p in 0..partitions {
        let path = crawl.partition_cdxj(cycle, p);
        if !path.exists() {
            reindex_partition(crawl, cycle, p, &path)?;
        }
        inputs.push(path);
    }
    write_merged(&inputs, &crawl.cycle_cdxj(cycle), false)
}

/// Indexes the WARC files of partition `p` of `cycle` into `out`, as its fetch would have (the
/// same bytes).
pub fn reindex_partition(crawl: &CrawlDir, cycle: u32, p: u32, out: &Path) -> Result<()> {
    let dir = crawl.warc_dir(cycle);
    let mine = format!("{}-", CrawlDir::partition_name(p));
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|f| {
                let n = f.file_name().unwrap_or_default().to_string_lossy();
                n.starts_with(&mine)
                    && n.contains(".warc")
                    && !n.contains(".warc.wet")
                    && !n.starts_with('.')
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let parent = out.parent().expect("cdxj/ under the cycle");
    crate::storage::create_dir_all(parent)?;
    let mut sorter = CdxjSorter::new(REINDEX_BUDGET, parent);
    for f in &files {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        cdxj::index_file_as(
            f,
            &format!("{}{name}", crate::crawl::warc_filename_prefix(cycle)),
            &mut sorter,
        )?;
    }
    cdxj::write_sorted(sorter, out)?;
    Ok(())
}

fn write_merged(inputs: &[PathBuf], out: &Path, dedup: bool) -> Result<u64> {
    let mut file = crate::storage::AtomicFile::create(out)?;
    let n = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
        let n = cdxj::merge_sorted(inputs, &mut w, out, dedup)?;
        w.flush().ctx("write", out)?;
        n
    };
    file.commit()?;
    Ok(n)
}

/// Makes `archive` a link to `cycles` (relative, so the crawl can move), unless something is
/// there already.
fn link_archive(crawl: &CrawlDir) -> Result<()> {
    let link = crawl.archive_link();
    if link.symlink_metadata().is_ok() {
        return Ok(());
    }
    std::os::unix::fs::symlink("cycles", &link).ctx("link", &link)
}
