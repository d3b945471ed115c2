//! CDXJ indexes of WARC files, the format pywb replays from and `cdxj-indexer` writes:
//! one line per capture, `<SURT> <14-digit timestamp> <JSON>`, sorted.
//!
//! ```text
//! org,iana)/ 20140126200624 {"url": "http://www.iana.org/", "mime": "text/html", "status": "200", "digest": "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", "length": "2258", "offset": "334", "filename": "iana.warc.gz"}
//! ```
//!
//! The JSON fields, as `cdxj-indexer` writes them (all strings): `url` (WARC-Target-URI),
//! `mime` (the HTTP `Content-Type` without parameters; `warc/revisit` for a revisit record, the
//! record's own type for a resource), `status` (HTTP status, absent for a resource), `digest`
//! (WARC-Payload-Digest as written, `sha1:` and base32), `length` and `offset` (the record's
//! gzip member or zstd frame in the file: what a replay tool seeks to and reads), `filename`
//! (the file's name, without directories). Indexed: `response`, `revisit` and `resource`
//! records; `request`, `metadata`, `warcinfo` and `conversion` records are not (neither are they
//! by `cdxj-indexer` by default). The key is the SURT of the URL (`crate::keys::surt`, pywb's
//! form) and the WARC-Date as `YYYYMMDDhhmmss`.
//!
//! Lines are sorted as bytes, whole lines (what `LC_ALL=C sort` does and what pywb's binary
//! search assumes). Sorting is external ([`CdxjSorter`]: a memory budget, sorted spills, one
//! k-way merge), and so is combining sorted indexes ([`merge_sorted`]), so neither grows with
//! the WARCs indexed.
//!
//! - `dragnet index --warc FILES... [--out F]` indexes anyone's WARCs (`.warc`, `.warc.gz`,
//!   `.warc.zst`). `tests/cdxj.rs` compares every field of every line with `cdxj-indexer`'s on
//!   the test data's WARCs. Of a `.warc.zst` record only the head is inflated: the frame's end
//!   comes from its block headers ([`super::reader::Record::skip`]).
//! - In a crawl, the WARC writer of each fetch indexes its records as it writes them (it knows
//!   their offsets, lengths and digests), and the executors merge the partitions' indexes per
//!   cycle and for the whole crawl ([`crate::ops::index`]), with `filename` the path under
//!   `cycles/`, so that the crawl directory is a pywb collection.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::http::HttpHead;
use super::reader::{ReaderOptions, WarcReader};
use super::{RecordType, WarcHeader};
use crate::error::{Error, IoContext, Result};
use crate::util::lines::LineReader;

/// Whether a record of this type gets a CDXJ line.
pub fn is_indexed(kind: &RecordType) -> bool {
    matches!(
        kind,
        RecordType::Response | RecordType::Revisit | RecordType::Resource
    )
}

/// `2014-01-26T20:06:24Z` -> `20140126200624` (fractions dropped); `None` if it is not a
/// WARC-Date.
fn timestamp14(date: &str) -> Option<String> {
    let digits: String = date
        .chars()
        .take_while(|c| *c != '.' && *c != 'Z')
        .filter(char::is_ascii_digit)
        .collect();
    (digits.len() >= 14).then(|| digits[..14].to_string())
}

/// The CDXJ line (no newline) of a record with header `h` written at `offset` with `length`
/// bytes in `filename`; `head` is the HTTP head of its block (responses and revisits). `None`
/// for records that are not indexed or cannot be replayed (no URL or no date).
pub fn record_line(
    h: &WarcHeader,
    head: Option<&HttpHead>,
    offset: u64,
    length: u64,
    filename: &str,
) -> Option<String> {
    fields_line(&LineFields::of(h), head, offset, length, filename)
}

/// The header fields a CDXJ line takes from a record.
#[derive(Debug, Clone)]
pub struct LineFields<'a> {
    /// `WARC-Type`.
    pub kind: RecordType,
    /// `WARC-Target-URI`, without angle brackets.
    pub url: Option<&'a str>,
    /// `WARC-Date`.
    pub date: Option<&'a str>,
    /// `Content-Type`.
    pub content_type: Option<&'a str>,
    /// `WARC-Payload-Digest`.
    pub payload_digest: Option<&'a str>,
}

impl<'a> LineFields<'a> {
    /// The fields of header `h`.
    pub fn of(h: &'a WarcHeader) -> LineFields<'a> {
        LineFields {
            kind: h.record_type(),
            url: h.target_uri(),
            date: h.date(),
            content_type: h.content_type(),
            payload_digest: h.get("WARC-Payload-Digest"),
        }
    }
}

/// [`record_line`] from the fields themselves (the WARC writer has them at hand, without a
/// parsed header).
pub fn fields_line(
    h: &LineFields<'_>,
    head: Option<&HttpHead>,
    offset: u64,
    length: u64,
    filename: &str,
) -> Option<String> {
    let kind = h.kind.clone();
    if !is_indexed(&kind) {
        return None;
    }
    let url = h.url.filter(|u| !u.is_empty())?;
    let date = h.date.and_then(timestamp14)?;
    let (mime, status) = match kind {
        RecordType::Resource => (
            h.content_type
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
            None,
        ),
        _ => {
            let status = head.and_then(HttpHead::status);
            let mime = if kind == RecordType::Revisit {
                "warc/revisit".to_string()
            } else {
                head.and_then(|h| h.get("content-type"))
                    .and_then(|v| v.split(';').next())
                    .map(|v| v.trim().to_ascii_lowercase())
                    .unwrap_or_else(|| "unk".to_string())
            };
            (mime, status)
        }
    };
    // In `cdxj-indexer`'s field order, with its spacing; values escaped as JSON strings,
    // written into the line itself (one allocation per line, not one per field).
    let mut line = crate::keys::surt(url).into_bytes();
    line.reserve(256);
    line.push(b' ');
    line.extend_from_slice(date.as_bytes());
    line.extend_from_slice(b" {");
    // Every value is a JSON string, numbers too (as cdxj-indexer writes them); each is
    // escaped straight from its text, without the formatting machinery (once a record).
    let mut field = |k: &str, v: &str, first: bool| {
        if !first {
            line.extend_from_slice(b", ");
        }
        line.push(b'"');
        line.extend_from_slice(k.as_bytes());
        line.extend_from_slice(b"\": ");
        serde_json::to_writer(&mut line, v).expect("strings serialize");
    };
    let mut n = itoa::Buffer::new();
    field("url", url, true);
    field("mime", &mime, false);
    if let Some(s) = status {
        field("status", n.format(s), false);
    }
    if let Some(d) = h.payload_digest {
        field("digest", d, false);
    }
    field("length", n.format(length), false);
    field("offset", n.format(offset), false);
    field("filename", filename, false);
    line.push(b'}');
    Some(String::from_utf8(line).expect("a SURT, a timestamp and JSON strings are UTF-8"))
}

/// Pushes the CDXJ lines of the WARC file at `path` into `out`, with `filename` its name
/// without directories.
pub fn index_file(path: &Path, out: &mut CdxjSorter) -> Result<()> {
    let filename = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    index_file_as(path, &filename, out)
}

/// [`index_file`] with `filename` the `filename` field of its lines.
pub fn index_file_as(path: &Path, filename: &str, out: &mut CdxjSorter) -> Result<()> {
    let mut rd = WarcReader::open(path, ReaderOptions::default())?;
    while let Some(mut rec) = rd.next_record()? {
        let h = rec.header().clone();
        let kind = h.record_type();
        if !is_indexed(&kind) {
            rec.skip()?;
            continue;
        }
        let offset = rec.offset();
        // The HTTP head of the response (a revisit carries one too).
        let head = (kind != RecordType::Resource)
            .then(|| rec.http_head().ok())
            .flatten();
        // A zstd frame's end comes from its block headers: only the heads above are inflated.
        let end = rec.skip()?;
        if let Some(line) = record_line(&h, head.as_ref(), offset, end.length, filename) {
            out.push(line)?;
        }
    }
    Ok(())
}

/// Indexes `files` and writes the lines sorted (pywb needs them so) to `out`, sorting within
/// `budget` bytes of memory (spills under `tmp`). Files are indexed in parallel, one per core
/// (rayon), each sorted on its own within its share of the budget, then merged: indexing gzip
/// is decompression-bound, as a gzip member's end is only found by inflating it (a zstd
/// frame's end is read from its block headers, and only the record's head is inflated).
pub fn index_files(
    files: &[PathBuf],
    out: &mut dyn Write,
    budget: usize,
    tmp: &Path,
) -> Result<u64> {
    if files.len() <= 1 {
        let mut sorter = CdxjSorter::new(budget, tmp);
        for f in files {
            index_file(f, &mut sorter)?;
        }
        return sorter.finish(out, Path::new("<cdxj>"));
    }
    use rayon::prelude::*;
    let dir = tmp.join(format!(
        ".cdxj-index.tmp.{}.{}",
        crate::storage::temp_writer_tag(),
        SPILL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _stop = crate::interrupt::remove_on_stop(&dir);
    std::fs::create_dir_all(&dir).ctx("create", &dir)?;
    let share = budget / rayon::current_num_threads().max(1);
    let parts: Result<Vec<PathBuf>> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let mut sorter = CdxjSorter::new(share, &dir);
            index_file(f, &mut sorter)?;
            let path = dir.join(format!("{i:06}.cdxj"));
            let file = File::create(&path).ctx("create", &path)?;
            let mut w = BufWriter::with_capacity(1 << 16, file);
            sorter.finish(&mut w, &path)?;
            w.flush().ctx("write", &path)?;
            Ok(path)
        })
        .collect();
    let n = parts.and_then(|parts| merge_sorted(&parts, out, Path::new("<cdxj>"), false));
    let _ = std::fs::remove_dir_all(&dir);
    n
}

/// [`index_files`] into a file that passed [`crate::storage::out`]'s rules (published atomically,
/// after they are checked again; spills in its directory) or standard output.
pub fn index_to(
    files: &[PathBuf],
    out: Option<&crate::storage::out::Output>,
    budget: usize,
) -> Result<u64> {
    match out {
        Some(out) => {
            let path = out.path();
            let tmp = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let mut file = out.create_file()?;
            let n = {
                let mut w = BufWriter::with_capacity(1 << 16, &mut file);
                let n = index_files(files, &mut w, budget, tmp)?;
                w.flush().ctx("write", path)?;
                n
            };
            file.commit()?;
            Ok(n)
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = BufWriter::with_capacity(1 << 16, stdout.lock());
            let n = index_files(files, &mut lock, budget, &std::env::temp_dir())?;
            lock.flush().ctx("write", Path::new("<stdout>"))?;
            Ok(n)
        }
    }
}

/// An external sort of CDXJ lines: lines are buffered up to a budget in bytes, then sorted and
/// spilled (zstd, level 1: spills are scratch) into a private directory under the parent given,
/// made at the first spill and removed with the sorter; [`CdxjSorter::finish`] merges the
/// spills and the last buffer.
pub struct CdxjSorter {
    lines: Vec<String>,
    bytes: usize,
    budget: usize,
    tmp_parent: PathBuf,
    dir: Option<PathBuf>,
    /// Removes `dir` if a signal's stop is cut short ([`crate::interrupt`]).
    stop: Option<crate::interrupt::OnStop>,
    spills: Vec<PathBuf>,
    pushed: u64,
}

impl CdxjSorter {
    /// A sorter holding at most about `budget` bytes of lines in memory.
    pub fn new(budget: usize, tmp_parent: &Path) -> CdxjSorter {
        CdxjSorter {
            lines: Vec::new(),
            bytes: 0,
            budget: budget.max(4096),
            tmp_parent: tmp_parent.to_path_buf(),
            dir: None,
            stop: None,
            spills: Vec::new(),
            pushed: 0,
        }
    }

    /// Lines pushed so far.
    pub fn len(&self) -> u64 {
        self.pushed
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Spill files written so far.
    pub fn spills(&self) -> usize {
        self.spills.len()
    }

    /// Adds a line (without its newline).
    pub fn push(&mut self, line: String) -> Result<()> {
        // A line's own bytes plus its `String` (24 bytes).
        self.bytes += line.len() + 24;
        self.lines.push(line);
        self.pushed += 1;
        if self.bytes >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let dir = match &self.dir {
            Some(d) => d.clone(),
            None => {
                let d = self.tmp_parent.join(format!(
                    ".cdxj-sort.tmp.{}.{}",
                    crate::storage::temp_writer_tag(),
                    SPILL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                ));
                self.stop = Some(crate::interrupt::remove_on_stop(&d));
                std::fs::create_dir_all(&d).ctx("create", &d)?;
                self.dir = Some(d.clone());
                d
            }
        };
        let path = dir.join(format!("{:06}.cdxj.zst", self.spills.len()));
        let file = File::create(&path).ctx("create", &path)?;
        let mut z = zstd::Encoder::new(BufWriter::with_capacity(1 << 16, file), 1)
            .ctx("compress", &path)?;
        self.lines.sort_unstable();
        for l in self.lines.drain(..) {
            z.write_all(l.as_bytes())
                .and_then(|()| z.write_all(b"\n"))
                .ctx("write", &path)?;
        }
        z.finish().and_then(|mut w| w.flush()).ctx("write", &path)?;
        self.bytes = 0;
        self.spills.push(path);
        Ok(())
    }

    /// Writes every line pushed, sorted, each followed by a newline, to `out` (named `name` in
    /// errors). Returns the number of lines.
    pub fn finish(mut self, out: &mut dyn Write, name: &Path) -> Result<u64> {
        self.lines.sort_unstable();
        if self.spills.is_empty() {
            for l in &self.lines {
                out.write_all(l.as_bytes())
                    .and_then(|()| out.write_all(b"\n"))
                    .ctx("write", name)?;
            }
            return Ok(self.lines.len() as u64);
        }
        let mut inputs: Vec<LineSource> = Vec::with_capacity(self.spills.len() + 1);
        for path in &self.spills {
            let f = File::open(path).ctx("open", path)?;
            let z = zstd::Decoder::new(f).ctx("decompress", path)?;
            inputs.push(LineSource::new(
                path.clone(),
                Box::new(BufReader::with_capacity(1 << 16, z)),
            ));
        }
        let rest = std::mem::take(&mut self.lines).join("\n");
        let rest = if rest.is_empty() { rest } else { rest + "\n" };
        inputs.push(LineSource::new(
            PathBuf::from("<memory>"),
            Box::new(std::io::Cursor::new(rest.into_bytes())),
        ));
        merge_sources(inputs, out, name, false)
    }
}

impl Drop for CdxjSorter {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

static SPILL_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The longest line of a CDXJ index read (`dragnet check crawl`, the merges of the crawl's
/// indexes): a line holds a SURT key, a timestamp and a JSON object with a URL of at most
/// `[canon] max_url_len` bytes, far below this; a longer line is damage, and no more of it is
/// held in memory.
pub const MAX_CDXJ_LINE: usize = 1 << 20;

/// One sorted input of a merge: its name (for errors), its lines, and the last line read.
struct LineSource {
    name: PathBuf,
    rd: LineReader<Box<dyn BufRead>>,
    line: Vec<u8>,
    number: u64,
    /// Byte offset of the next line.
    offset: u64,
}

impl LineSource {
    fn new(name: PathBuf, rd: Box<dyn BufRead>) -> LineSource {
        LineSource {
            name,
            rd: LineReader::new(rd, MAX_CDXJ_LINE),
            line: Vec::new(),
            number: 0,
            offset: 0,
        }
    }

    /// Reads the next line (without its newline) into `self.line`, checking the order; `false`
    /// at the end.
    fn advance(&mut self) -> Result<bool> {
        let Some(l) = self.rd.next_line().ctx("read", &self.name)? else {
            return Ok(false);
        };
        self.number = l.number;
        let at = self.offset;
        self.offset += l.bytes;
        if l.too_long() {
            return Err(Error::corrupt(
                &self.name,
                at,
                format!(
                    "{}: not a CDXJ index (make it again with `dragnet index`)",
                    l.too_long_message(MAX_CDXJ_LINE)
                ),
            ));
        }
        let next = l.text.to_vec();
        if self.number > 1 && next < self.line {
            return Err(Error::corrupt(
                &self.name,
                at,
                format!(
                    "line {} sorts before the line above it: a CDXJ index must be sorted \
                     (`LC_ALL=C sort` it, or make it again with `dragnet index`)",
                    self.number
                ),
            ));
        }
        self.line = next;
        Ok(true)
    }
}

/// Merges sorted CDXJ `inputs` into `out` (named `name` in errors), keeping the order; with
/// `dedup`, a line equal to the one written before it is dropped (merging an index into one
/// that already holds it changes nothing). An input out of order is an error naming it.
/// Returns the number of lines written.
pub fn merge_sorted(
    inputs: &[PathBuf],
    out: &mut dyn Write,
    name: &Path,
    dedup: bool,
) -> Result<u64> {
    let mut sources = Vec::with_capacity(inputs.len());
    for path in inputs {
        let f = File::open(path).ctx("open", path)?;
        sources.push(LineSource::new(
            path.clone(),
            Box::new(BufReader::with_capacity(1 << 16, f)),
        ));
    }
    merge_sources(sources, out, name, dedup)
}

fn merge_sources(
    mut sources: Vec<LineSource>,
    out: &mut dyn Write,
    name: &Path,
    dedup: bool,
) -> Result<u64> {
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (i, s) in sources.iter_mut().enumerate() {
        if s.advance()? {
            heap.push(Reverse((std::mem::take(&mut s.line), i)));
        }
    }
    let mut written = 0u64;
    let mut last: Vec<u8> = Vec::new();
    while let Some(Reverse((line, i))) = heap.pop() {
        if !(dedup && written > 0 && line == last) {
            out.write_all(&line)
                .and_then(|()| out.write_all(b"\n"))
                .ctx("write", name)?;
            written += 1;
            last.clear();
            last.extend_from_slice(&line);
        }
        // The source checks its next line against this one.
        let s = &mut sources[i];
        s.line = line;
        if s.advance()? {
            heap.push(Reverse((std::mem::take(&mut s.line), i)));
        }
    }
    Ok(written)
}
/// Finishes `sorter` into the file `out`, published atomically. Returns its lines and the
/// file's length and xxh3 (for a `.done` marker).
pub fn write_sorted(sorter: CdxjSorter, out: &Path) -> Result<(u64, crate::storage::Sum)> {
    let mut file = crate::storage::AtomicFile::create(out)?.summed();
    let n = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
        let n = sorter.finish(&mut w, out)?;
        w.flush().ctx("write", out)?;
        n
    };
    Ok((n, file.commit_summed()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields are escaped through `format_args!` (serde's `collect_str`) into the line:
    /// the same JSON string as `serde_json::to_string` of the text.
    #[test]
    fn fields_are_escaped_as_json_strings() {
        for v in [
            "http://example.com/a?q=\"quoted\"&b=\\",
            "tab\there\nnewline\u{1}\u{1f}\u{7f}",
            "non-ASCII: é ü 日本 \u{1F600} \u{2028}",
            "",
        ] {
            let mut line = Vec::new();
            serde_json::to_writer(&mut line, &format_args!("{v}")).unwrap();
            assert_eq!(
                String::from_utf8(line).unwrap(),
                serde_json::to_string(v).unwrap()
            );
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            timestamp14("2014-01-26T20:06:24Z").as_deref(),
            Some("20140126200624")
        );
        assert_eq!(
            timestamp14("2024-05-18T01:58:10.123456Z").as_deref(),
            Some("20240518015810")
        );
        assert_eq!(timestamp14("yesterday"), None);
    }

    fn lines(n: usize, seed: u64) -> Vec<String> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!(
                    "com,example)/{:x} 2024{:010} {{\"n\": \"{i}\"}}",
                    x >> 40,
                    x % 1000
                )
            })
            .collect()
    }

    fn sorted(budget: usize, input: &[String], tmp: &Path) -> (Vec<u8>, usize) {
        let mut s = CdxjSorter::new(budget, tmp);
        for l in input {
            s.push(l.clone()).unwrap();
        }
        let spills = s.spills();
        let mut out = Vec::new();
        assert_eq!(
            s.finish(&mut out, Path::new("t")).unwrap(),
            input.len() as u64
        );
        (out, spills)
    }

    #[test]
    fn a_sort_that_spills_gives_what_one_in_memory_gives() {
        let tmp = tempfile::tempdir().unwrap();
        let input = lines(5000, 7);
        let (big, spills) = sorted(1 << 30, &input, tmp.path());
        assert_eq!(spills, 0);
        let (small, spills) = sorted(8192, &input, tmp.path());
        assert!(spills > 10, "{spills}");
        assert_eq!(small, big);
        let mut want = input.clone();
        want.sort();
        assert_eq!(String::from_utf8(big).unwrap(), want.join("\n") + "\n");
        // The spill directory goes with the sorter.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn merging_keeps_the_order_drops_repeats_when_asked_and_names_an_unsorted_input() {
        let tmp = tempfile::tempdir().unwrap();
        let mut all = lines(300, 3);
        all.sort();
        let write = |name: &str, ls: &[String]| {
            let p = tmp.path().join(name);
            std::fs::write(&p, ls.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
            p
        };
        let a = write(
            "a.cdxj",
            &all.iter().step_by(2).cloned().collect::<Vec<_>>(),
        );
        let b = write(
            "b.cdxj",
            &all.iter().skip(1).step_by(2).cloned().collect::<Vec<_>>(),
        );
        let whole = write("whole.cdxj", &all);
        let mut out = Vec::new();
        let n = merge_sorted(&[a.clone(), b.clone()], &mut out, Path::new("o"), false).unwrap();
        assert_eq!(n, 300);
        assert_eq!(String::from_utf8(out).unwrap(), all.join("\n") + "\n");
        // Merging an index into one that holds it already: the same lines once, with dedup.
        let mut out = Vec::new();
        merge_sorted(&[whole.clone(), a.clone()], &mut out, Path::new("o"), true).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), all.join("\n") + "\n");
        let mut out = Vec::new();
        assert_eq!(
            merge_sorted(&[whole, a], &mut out, Path::new("o"), false).unwrap(),
            450
        );
        let mut shuffled = all.clone();
        shuffled.swap(10, 20);
        let bad = write("bad.cdxj", &shuffled);
        let e = merge_sorted(&[b, bad], &mut Vec::new(), Path::new("o"), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bad.cdxj") && e.contains("line 12") && e.contains("sort"),
            "{e}"
        );
    }

    /// An input with a line past [`MAX_CDXJ_LINE`] (here 3 MiB without a newline) is an error
    /// naming the file and the line, with no more than the limit of it in memory.
    #[test]
    fn an_over_long_line_is_an_error_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let long = t.path().join("long.cdxj");
        let mut text = b"com,example)/ 20260101000000 {}\ncom,example)/b ".to_vec();
        text.resize(3 << 20, b'x');
        std::fs::write(&long, text).unwrap();
        let e = merge_sorted(&[long], &mut Vec::new(), Path::new("o"), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("long.cdxj") && e.contains("line 2 is") && e.contains("over the limit"),
            "{e}"
        );
    }
}
