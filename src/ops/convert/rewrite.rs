//! What points into a partition's WARC files, rewritten for the converted files and staged:
//! the partition's CDXJ index, its fetch results (each record's file, offset and length, found
//! through an [`OffsetMap`] of where every record went), its fetch marker and the parse and
//! merge markers that list the fetch results as an input; and, once the partitions are
//! committed, the crawl's index merged again from its cycles'.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::journal::{staged, Staging, Unit};
use super::Moved;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};
use crate::storage::{self, AtomicFile};
use crate::warc::cdxj::{self, CdxjSorter};

/// Where the records of a partition's converted files went: each one's new offset and length
/// (for the fetch results) and its new CDXJ line (for the partition's index).
pub(super) struct Moves {
    /// Old offset to new offset and length, per file.
    pub(super) map: OffsetMap,
    /// The converted files' CDXJ lines.
    pub(super) sorter: CdxjSorter,
}

impl Moves {
    /// Scratch files in `dir` (the cycle's WARC directory).
    pub(super) fn new(dir: &Path) -> Result<Moves> {
        Ok(Moves {
            map: OffsetMap::new(dir)?,
            sorter: CdxjSorter::new(64 << 20, dir),
        })
    }

    /// Notes a record moved into the file the index calls `filename`.
    pub(super) fn push(&mut self, m: &Moved<'_>, filename: &str) -> Result<()> {
        self.map.push(m.old_offset, m.new_offset, m.new_length)?;
        if let Some(line) =
            cdxj::record_line(m.header, m.http, m.new_offset, m.new_length, filename)
        {
            self.sorter.push(line)?;
        }
        Ok(())
    }
}

/// The partition's index staged: the converted files' lines (in `sorter`), and the kept files'
/// lines as they were. Nothing without an index.
pub(super) fn partition_index(
    unit: Unit<'_>,
    mut sorter: CdxjSorter,
    staging: &mut Staging,
) -> Result<()> {
    let crawl = unit.crawl;
    let cdxj_path = crawl.partition_cdxj(unit.cycle, unit.p);
    if !cdxj_path.exists() {
        return Ok(());
    }
    let f = File::open(&cdxj_path).ctx("open", &cdxj_path)?;
    let mut lines = crate::util::lines::LineReader::new(BufReader::new(f), cdxj::MAX_CDXJ_LINE);
    let names: Vec<String> = staging
        .converted
        .iter()
        .map(|c| {
            format!(
                "\"filename\": {}}}",
                serde_json::to_string(c).expect("string")
            )
        })
        .collect();
    while let Some(l) = lines.next_line().ctx("read", &cdxj_path)? {
        let text = String::from_utf8_lossy(l.text).into_owned();
        if !names.iter().any(|n| text.ends_with(n)) {
            sorter.push(text)?;
        }
    }
    let stage = staged(&cdxj_path);
    let (_, sum) = cdxj::write_sorted(sorter, &stage)?;
    staging.replace_output(crawl, &cdxj_path, FileDigest::of_sum(crawl, &stage, sum));
    staging.renames.push((stage, cdxj_path));
    Ok(())
}

/// The fetch results staged, each record's file, offset and length in the new files; their
/// digest (under the final name), `None` without fetch results.
pub(super) fn fetch_results(
    unit: Unit<'_>,
    map: &OffsetMap,
    staging: &mut Staging,
) -> Result<Option<FileDigest>> {
    use crate::records::FetchResult;
    use crate::run::{Cursor, RunReader, RunWriter, Schema};
    let crawl = unit.crawl;
    let fetched = crawl.fetched(unit.cycle, unit.p);
    if !fetched.exists() {
        return Ok(None);
    }
    let stage = staged(&fetched);
    let mut r = RunReader::open_expect(&fetched, Schema::FETCHED)?;
    let mut w = RunWriter::create(&stage, Schema::FETCHED)?;
    while r.advance()? {
        let at = r.block_offset();
        let mut fr = FetchResult::decode(r.payload())
            .map_err(|e| Error::corrupt(&fetched, at, format!("fetch result: {e}")))?;
        if map.converts(&fr.warc_file) {
            let Some((name, off, len)) = map.find(&fr.warc_file, fr.warc_offset) else {
                return Err(Error::corrupt(
                    &fetched,
                    at,
                    format!(
                        "{}: its record is at offset {} of {}, where no record of that file \
                         starts; nothing converted",
                        fr.url, fr.warc_offset, fr.warc_file
                    ),
                ));
            };
            fr.warc_file = name.to_owned();
            fr.warc_offset = off;
            fr.warc_length = len;
        }
        w.push(r.key(), &fr.encode())?;
    }
    w.finish()?;
    let mut d = FileDigest::of_run(crawl, &stage)?;
    d.path = crawl.relative(&fetched);
    staging.replace_output(crawl, &fetched, d.clone());
    staging.renames.push((stage, fetched));
    Ok(Some(d))
}

/// The fetch marker staged (its outputs as staged, `warc_bytes` for the new sizes), and the
/// parse and merge markers that list the fetch results (`fetched`, their new digest) as an
/// input.
pub(super) fn markers(
    unit: Unit<'_>,
    marker: &DoneMarker,
    fetched: Option<&FileDigest>,
    staging: &mut Staging,
) -> Result<()> {
    let (crawl, cycle, p) = (unit.crawl, unit.cycle, unit.p);
    let mut m = marker.clone();
    m.outputs = staging.outputs.clone();
    if let Some(b) = m.counts.get_mut(crate::crawl::report::counter::WARC_BYTES) {
        *b = b.saturating_sub(staging.bytes_in) + staging.bytes_out;
    }
    let done = crawl.done_path(cycle, Stage::Fetch, p);
    let stage = staged(&done);
    m.publish(&stage)?;
    staging.renames.push((stage, done));
    let Some(d) = fetched else {
        return Ok(());
    };
    for st in [Stage::Parse, Stage::Merge] {
        let path = crawl.done_path(cycle, st, p);
        let Some(mut other) = DoneMarker::read(&path)? else {
            continue;
        };
        let mut changed = false;
        for input in other.inputs.iter_mut().filter(|i| i.path == d.path) {
            *input = d.clone();
            changed = true;
        }
        if changed {
            let stage = staged(&path);
            other.publish(&stage)?;
            staging.renames.push((stage, path));
        }
    }
    Ok(())
}

/// Where one old record went: old offset, new offset, new length (24 bytes, little-endian),
/// written in input order (so sorted by old offset) to a scratch file, then searched through a
/// memory map: memory stays bounded whatever the number of records.
pub(super) struct OffsetMap {
    path: PathBuf,
    w: Option<BufWriter<File>>,
    map: Option<memmap2::Mmap>,
    /// (old file name, new file name, first entry, entries) per converted file.
    files: Vec<(String, String, u64, u64)>,
    n: u64,
}

impl OffsetMap {
    pub(super) fn new(dir: &Path) -> Result<OffsetMap> {
        let path = dir.join(format!(
            ".convert-map{}{}",
            storage::TEMP_MARK,
            storage::temp_writer_tag()
        ));
        let f = File::create(&path).ctx("create", &path)?;
        Ok(OffsetMap {
            path,
            w: Some(BufWriter::new(f)),
            map: None,
            files: Vec::new(),
            n: 0,
        })
    }

    pub(super) fn start(&mut self, old: &str, new: &str) {
        self.files.push((old.to_owned(), new.to_owned(), self.n, 0));
    }

    pub(super) fn push(&mut self, old_off: u64, new_off: u64, new_len: u64) -> Result<()> {
        let w = self.w.as_mut().expect("map being written");
        for v in [old_off, new_off, new_len] {
            w.write_all(&v.to_le_bytes()).ctx("write", &self.path)?;
        }
        self.n += 1;
        self.files.last_mut().expect("a file started").3 += 1;
        Ok(())
    }

    pub(super) fn seal(&mut self) -> Result<()> {
        let w = self.w.take().expect("sealed once");
        w.into_inner()
            .map_err(|e| Error::io("write", &self.path, e.into_error()))?;
        if self.n > 0 {
            let f = File::open(&self.path).ctx("open", &self.path)?;
            // SAFETY: the scratch file is private to this process and no longer written.
            self.map = Some(unsafe { memmap2::Mmap::map(&f) }.ctx("map", &self.path)?);
        }
        Ok(())
    }

    fn entry(&self, i: u64) -> (u64, u64, u64) {
        let m = self.map.as_ref().expect("sealed with entries");
        let at = (i * 24) as usize;
        let v = |k: usize| {
            u64::from_le_bytes(m[at + k * 8..at + k * 8 + 8].try_into().expect("8 bytes"))
        };
        (v(0), v(1), v(2))
    }

    /// Whether `old` is one of the files converted.
    pub(super) fn converts(&self, old: &str) -> bool {
        !old.is_empty() && self.files.iter().any(|f| f.0 == old)
    }

    /// Where the record at `old_off` of `old` went: (new file, new offset, new length).
    pub(super) fn find(&self, old: &str, old_off: u64) -> Option<(&str, u64, u64)> {
        let (_, new, first, count) = self.files.iter().find(|f| f.0 == old)?;
        let (mut lo, mut hi) = (*first, first + count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (o, n, l) = self.entry(mid);
            match o.cmp(&old_off) {
                std::cmp::Ordering::Equal => return Some((new.as_str(), n, l)),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }
}

impl Drop for OffsetMap {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `indexes/index.cdxj` merged again from the cycles' indexes it holds (they were rewritten),
/// published atomically; rebuilt as a cycle's end would if a cycle index is missing.
pub(super) fn crawl_index(crawl: &CrawlDir, partitions: u32) -> Result<Option<u64>> {
    use crate::ops::index;
    let whole = index::crawl_index(crawl);
    if !whole.exists() {
        return Ok(None);
    }
    let held = index::indexed_cycles(crawl);
    let inputs: Vec<PathBuf> = held.iter().map(|&c| crawl.cycle_cdxj(c)).collect();
    if inputs.iter().any(|p| !p.exists()) {
        std::fs::remove_file(&whole).ctx("remove", &whole)?;
        let cycles = crawl.indexes_dir().join("index.cycles");
        let _ = std::fs::remove_file(&cycles);
        return Ok(index::rebuild(crawl, partitions)?.crawl_lines);
    }
    let mut file = AtomicFile::create(&whole)?;
    let n = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
        let n = cdxj::merge_sorted(&inputs, &mut w, &whole, true)?;
        w.flush().ctx("write", &whole)?;
        n
    };
    file.commit()?;
    Ok(Some(n))
}
