//! `dragnet export --what wacz --out F.wacz [--cycle N]`: the crawl as a WACZ 1.1.1 package
//! (Web Archive Collection Zipped, specs.webrecorder.net/wacz/1.1.1), the file ReplayWeb.page
//! opens and `wacz validate` checks:
//!
//! ```text
//! archive/CCCCCC-pNNNN-SSSSSS.warc.gz   every WARC file of the cycles exported, flat (a cycle's
//!                                       files repeat the names of the cycle before)
//! indexes/index.cdx                     CDXJ of every record, `filename` the archive/ name
//! pages/pages.jsonl                     every HTML capture: url, ts (its WARC-Date), title
//! datapackage.json                      every file above with its bytes and sha256
//! datapackage-digest.json               the sha256 of datapackage.json
//! ```
//!
//! The ZIP is written here (no crate): every entry STORED (the WARC members must stay
//! addressable by offset inside the package), ZIP64 fields where a size or offset reaches
//! 4 GiB. WARC files are streamed from disk twice (CRC-32 and SHA-256 first, then the copy;
//! the second read comes from the page cache for files of a usual size), never held in
//! memory. `.warc.zst` files, which the spec does not allow and no WACZ reader decodes, are
//! converted to `.warc.gz` on the way ([`crate::ops::convert`], records byte for byte the
//! same, digests checked), one at a time through a scratch file beside the output, and their
//! index lines come from the conversion; the lines of files copied as they are come from the
//! crawl's cycle indexes (or the file is indexed again when its cycle has none). The index is
//! named `index.cdx`, not `index.cdxj` (the spec's content, CDXJ, either way): pywb 2.10's
//! `wb-manager add --unpack-wacz` only takes `*.cdx` and `*.cdx.gz` indexes.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use super::ExportReport;
use crate::config::Config;
use crate::crawl::CrawlDir;
use crate::error::{Error, IoContext, Result};
use crate::ops::convert::{self, Options};
use crate::records::{FetchResult, PageRecord};
use crate::run::{Cursor, RunReader, Schema};
use crate::storage::AtomicFile;
use crate::warc::cdxj::{self, CdxjSorter};
use crate::warc::Compression;

/// The WACZ version written.
pub const WACZ_VERSION: &str = "1.1.1";

/// A file's CRC-32, SHA-256 and size, computed while it streams.
#[derive(Clone)]
struct Sums {
    crc: crc32fast::Hasher,
    sha: sha2::Sha256,
    size: u64,
}

impl Sums {
    fn new() -> Sums {
        Sums {
            crc: crc32fast::Hasher::new(),
            sha: sha2::Sha256::new(),
            size: 0,
        }
    }
    fn update(&mut self, b: &[u8]) {
        self.crc.update(b);
        self.sha.update(b);
        self.size += b.len() as u64;
    }
    fn done(self) -> Done {
        Done {
            crc: self.crc.finalize(),
            sha256: hex(&self.sha.finalize()),
            size: self.size,
        }
    }
    fn of_file(path: &Path) -> Result<Done> {
        let mut f = File::open(path).ctx("open", path)?;
        let mut s = Sums::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = f.read(&mut buf).ctx("read", path)?;
            if k == 0 {
                return Ok(s.done());
            }
            s.update(&buf[..k]);
        }
    }
}

#[derive(Clone)]
struct Done {
    crc: u32,
    sha256: String,
    size: u64,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A `Write` to a file that sums what goes through.
struct Summed<W> {
    inner: W,
    sums: Sums,
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.sums.update(&buf[..k]);
        Ok(k)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One entry of the ZIP, for its central directory and the datapackage.
struct Entry {
    name: String,
    offset: u64,
    sums: Done,
}

/// A ZIP of STORED entries written front to back (sizes and CRCs known before each entry).
struct Zip<W: Write> {
    w: W,
    pos: u64,
    entries: Vec<Entry>,
    time: (u16, u16),
    /// Entries of at least this size get ZIP64 fields (4 GiB - 1; lower only in tests).
    zip64_at: u64,
}

const U32_MAX: u64 = 0xffff_ffff;

impl<W: Write> Zip<W> {
    fn new(w: W, now: u64) -> Zip<W> {
        // A debug build's DRAGNET_WACZ_ZIP64=1 writes every field ZIP64 (the test of that path).
        let zip64_at = if cfg!(debug_assertions) && std::env::var_os("DRAGNET_WACZ_ZIP64").is_some()
        {
            0
        } else {
            U32_MAX
        };
        Zip {
            w,
            pos: 0,
            entries: Vec::new(),
            time: dos_time(now),
            zip64_at,
        }
    }

    fn put(&mut self, b: &[u8], out: &Path) -> Result<()> {
        self.w.write_all(b).ctx("write", out)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// The local header of an entry of `sums`.
    fn begin(&mut self, name: &str, sums: &Done, out: &Path) -> Result<()> {
        let big = sums.size >= self.zip64_at;
        let mut h = Vec::with_capacity(30 + name.len() + 20);
        h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        h.extend_from_slice(&(if big { 45u16 } else { 20 }).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes()); // flags
        h.extend_from_slice(&0u16.to_le_bytes()); // STORED
        h.extend_from_slice(&self.time.0.to_le_bytes());
        h.extend_from_slice(&self.time.1.to_le_bytes());
        h.extend_from_slice(&sums.crc.to_le_bytes());
        let small = if big {
            U32_MAX as u32
        } else {
            sums.size as u32
        };
        h.extend_from_slice(&small.to_le_bytes());
        h.extend_from_slice(&small.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&(if big { 20u16 } else { 0 }).to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        if big {
            h.extend_from_slice(&1u16.to_le_bytes());
            h.extend_from_slice(&16u16.to_le_bytes());
            h.extend_from_slice(&sums.size.to_le_bytes());
            h.extend_from_slice(&sums.size.to_le_bytes());
        }
        self.entries.push(Entry {
            name: name.to_owned(),
            offset: self.pos,
            sums: sums.clone(),
        });
        self.put(&h, out)
    }

    /// Adds `bytes` as `name`.
    fn add_bytes(&mut self, name: &str, bytes: &[u8], out: &Path) -> Result<()> {
        let mut s = Sums::new();
        s.update(bytes);
        self.begin(name, &s.done(), out)?;
        self.put(bytes, out)
    }

    /// Adds the file at `path` as `name`; `sums` if they are known, else read first.
    fn add_file(&mut self, name: &str, path: &Path, sums: Option<Done>, out: &Path) -> Result<()> {
        let sums = match sums {
            Some(s) => s,
            None => Sums::of_file(path)?,
        };
        self.begin(name, &sums, out)?;
        let mut f = File::open(path).ctx("open", path)?;
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        loop {
            let k = f.read(&mut buf).ctx("read", path)?;
            if k == 0 {
                break;
            }
            n += k as u64;
            self.put(&buf[..k], out)?;
        }
        if n != sums.size {
            return Err(Error::io(
                "copy",
                path,
                std::io::Error::other(format!(
                    "it changed while it was packed ({} bytes, then {n})",
                    sums.size
                )),
            ));
        }
        Ok(())
    }

    /// The central directory and its end records.
    fn finish(mut self, out: &Path) -> Result<W> {
        let start = self.pos;
        let entries = std::mem::take(&mut self.entries);
        for e in &entries {
            let big_size = e.sums.size >= self.zip64_at;
            let big_off = e.offset >= self.zip64_at.min(U32_MAX);
            let mut extra = Vec::new();
            if big_size {
                extra.extend_from_slice(&e.sums.size.to_le_bytes());
                extra.extend_from_slice(&e.sums.size.to_le_bytes());
            }
            if big_off {
                extra.extend_from_slice(&e.offset.to_le_bytes());
            }
            let mut h = Vec::with_capacity(46 + e.name.len() + 28);
            h.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            h.extend_from_slice(&(45u16 | (3 << 8)).to_le_bytes()); // made by: unix, 4.5
            h.extend_from_slice(&(if extra.is_empty() { 20u16 } else { 45 }).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&self.time.0.to_le_bytes());
            h.extend_from_slice(&self.time.1.to_le_bytes());
            h.extend_from_slice(&e.sums.crc.to_le_bytes());
            let small = if big_size {
                U32_MAX as u32
            } else {
                e.sums.size as u32
            };
            h.extend_from_slice(&small.to_le_bytes());
            h.extend_from_slice(&small.to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            let xlen = if extra.is_empty() { 0 } else { 4 + extra.len() };
            h.extend_from_slice(&(xlen as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // comment
            h.extend_from_slice(&0u16.to_le_bytes()); // disk
            h.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            h.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
            let off = if big_off {
                U32_MAX as u32
            } else {
                e.offset as u32
            };
            h.extend_from_slice(&off.to_le_bytes());
            h.extend_from_slice(e.name.as_bytes());
            if !extra.is_empty() {
                h.extend_from_slice(&1u16.to_le_bytes());
                h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
                h.extend_from_slice(&extra);
            }
            self.put(&h, out)?;
        }
        let size = self.pos - start;
        let n = entries.len() as u64;
        let big = n >= 0xffff || size >= U32_MAX || start >= self.zip64_at.min(U32_MAX);
        if big {
            let at = self.pos;
            let mut r = Vec::with_capacity(76);
            r.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            r.extend_from_slice(&44u64.to_le_bytes());
            r.extend_from_slice(&(45u16 | (3 << 8)).to_le_bytes());
            r.extend_from_slice(&45u16.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&size.to_le_bytes());
            r.extend_from_slice(&start.to_le_bytes());
            r.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&at.to_le_bytes());
            r.extend_from_slice(&1u32.to_le_bytes());
            self.put(&r, out)?;
        }
        let mut r = Vec::with_capacity(22);
        r.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        let n16 = if big { 0xffff } else { n as u16 };
        r.extend_from_slice(&n16.to_le_bytes());
        r.extend_from_slice(&n16.to_le_bytes());
        let (s32, o32) = if big {
            (U32_MAX as u32, U32_MAX as u32)
        } else {
            (size as u32, start as u32)
        };
        r.extend_from_slice(&s32.to_le_bytes());
        r.extend_from_slice(&o32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        self.put(&r, out)?;
        self.entries = entries;
        Ok(self.w)
    }
}

/// MS-DOS time and date of Unix time `secs` (UTC).
fn dos_time(secs: u64) -> (u16, u16) {
    let t = crate::util::rfc3339(secs);
    let n = |r: std::ops::Range<usize>| t.get(r).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
    let (y, mo, d, h, mi, s) = (n(0..4), n(5..7), n(8..10), n(11..13), n(14..16), n(17..19));
    let time = (h << 11) | (mi << 5) | (s / 2);
    let date = (y.saturating_sub(1980) << 9) | (mo << 5) | d;
    (time, date)
}

/// A scratch directory beside the output (a temporary name, removed when dropped).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The WARC files of `cycle` (not WET files, not temporaries), sorted.
fn warc_files(crawl: &CrawlDir, cycle: u32) -> Result<Vec<String>> {
    let dir = crawl.warc_dir(cycle);
    let mut v = Vec::new();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(v),
        Err(e) => return Err(Error::io("list", &dir, e)),
    };
    for e in rd {
        let name = e
            .ctx("list", &dir)?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !name.starts_with('.')
            && !name.contains(".warc.wet")
            && Compression::from_name(&name).is_some()
        {
            v.push(name);
        }
    }
    v.sort();
    Ok(v)
}

/// `line` with its `filename` (the last field, as dragnet and cdxj-indexer write it) replaced
/// through `rename`; `None` if `rename` says the line is not wanted.
fn refile(line: &str, rename: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let at = line.rfind("\"filename\": ")?;
    let value = line[at + 12..].strip_suffix('}')?;
    let old: String = serde_json::from_str(value).ok()?;
    let new = rename(&old)?;
    Some(format!(
        "{}\"filename\": {}}}",
        &line[..at],
        serde_json::to_string(&new).expect("strings serialize")
    ))
}

/// Writes the WACZ of `cycles` (WARC files, index, pages) and `carried` (WARC files and index
/// only: their pages runs stayed where `dragnet repartition` read them) into `file`, committed.
pub(super) fn write(
    crawl: &CrawlDir,
    cfg: &Config,
    cycles: &[u32],
    carried: &[u32],
    out: &Path,
    file: AtomicFile,
    report: &mut ExportReport,
) -> Result<()> {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let scratch = Scratch(dir.join(format!(
        ".wacz{}{}",
        crate::storage::TEMP_MARK,
        crate::storage::temp_writer_tag()
    )));
    let _stop = crate::interrupt::remove_on_stop(&scratch.0);
    std::fs::create_dir_all(&scratch.0).ctx("create", &scratch.0)?;
    let mut file = file;
    let mut zip = Zip::new(
        BufWriter::with_capacity(1 << 20, &mut file),
        crate::util::unix_now(),
    );
    let mut sorter = CdxjSorter::new(256 << 20, &scratch.0);
    let mut all: Vec<u32> = cycles.iter().chain(carried).copied().collect();
    all.sort_unstable();
    all.dedup();
    let to_gz = Options::new(Compression::Gzip);
    for &c in &all {
        let prefix = crate::crawl::warc_filename_prefix(c);
        let mut as_is: Vec<String> = Vec::new();
        for name in warc_files(crawl, c)? {
            let path = crawl.warc_dir(c).join(&name);
            let kind = crate::warc::WarcReader::open(&path, Default::default())?.compression();
            if kind == Compression::Zstd {
                let archived = format!("{c:06}-{}", convert::output_name(&name, Compression::Gzip));
                let tmp = scratch.0.join(&archived);
                let f = File::create(&tmp).ctx("create", &tmp)?;
                let mut w = Summed {
                    inner: BufWriter::with_capacity(1 << 20, f),
                    sums: Sums::new(),
                };
                let rep = convert::convert_stream(&path, &mut w, &to_gz, &mut |m| {
                    if let Some(l) =
                        cdxj::record_line(m.header, m.http, m.new_offset, m.new_length, &archived)
                    {
                        sorter.push(l)?;
                    }
                    Ok(())
                })?;
                w.flush().ctx("write", &tmp)?;
                report.bytes_read += rep.bytes_in;
                zip.add_file(
                    &format!("archive/{archived}"),
                    &tmp,
                    Some(w.sums.done()),
                    out,
                )?;
                std::fs::remove_file(&tmp).ctx("remove", &tmp)?;
            } else {
                let archived = format!("{c:06}-{name}");
                zip.add_file(&format!("archive/{archived}"), &path, None, out)?;
                report.bytes_read += super::file_len(&path);
                as_is.push(format!("{prefix}{name}"));
            }
        }
        if as_is.is_empty() {
            continue;
        }
        let rename = |old: &str| {
            as_is
                .iter()
                .any(|a| a == old)
                .then(|| format!("{c:06}-{}", old.strip_prefix(&prefix).unwrap_or(old)))
        };
        let index = crawl.cycle_cdxj(c);
        if index.exists() {
            let f = File::open(&index).ctx("open", &index)?;
            let mut lines =
                crate::util::lines::LineReader::new(BufReader::new(f), cdxj::MAX_CDXJ_LINE);
            while let Some(l) = lines.next_line().ctx("read", &index)? {
                if let Some(line) = refile(&String::from_utf8_lossy(l.text), &rename) {
                    sorter.push(line)?;
                }
            }
        } else {
            for a in &as_is {
                let name = a.strip_prefix(&prefix).unwrap_or(a);
                cdxj::index_file_as(
                    &crawl.warc_dir(c).join(name),
                    &format!("{c:06}-{name}"),
                    &mut sorter,
                )?;
            }
        }
    }

    // indexes/index.cdx
    let idx = scratch.0.join("index.cdx");
    let sums = {
        let f = File::create(&idx).ctx("create", &idx)?;
        let mut w = Summed {
            inner: BufWriter::with_capacity(1 << 16, f),
            sums: Sums::new(),
        };
        sorter.finish(&mut w, &idx)?;
        w.flush().ctx("write", &idx)?;
        w.sums.done()
    };
    zip.add_file("indexes/index.cdx", &idx, Some(sums), out)?;
    std::fs::remove_file(&idx).ctx("remove", &idx)?;

    // pages/pages.jsonl
    let pages_path = scratch.0.join("pages.jsonl");
    let sums = {
        let f = File::create(&pages_path).ctx("create", &pages_path)?;
        let mut w = Summed {
            inner: BufWriter::with_capacity(1 << 16, f),
            sums: Sums::new(),
        };
        w.write_all(
            b"{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
        )
        .ctx("write", &pages_path)?;
        for &c in cycles {
            for p in 0..cfg.crawl.partitions {
                report.rows += pages(crawl, c, p, &mut w, &pages_path)?;
            }
        }
        w.flush().ctx("write", &pages_path)?;
        w.sums.done()
    };
    zip.add_file("pages/pages.jsonl", &pages_path, Some(sums), out)?;
    std::fs::remove_file(&pages_path).ctx("remove", &pages_path)?;

    // datapackage.json, then its digest.
    let resources: Vec<serde_json::Value> = zip
        .entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name.rsplit('/').next().unwrap_or(&e.name).to_lowercase(),
                "path": e.name,
                "hash": format!("sha256:{}", e.sums.sha256),
                "bytes": e.sums.size,
            })
        })
        .collect();
    let title = crawl.root().file_name().map_or_else(
        || "dragnet crawl".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let package = serde_json::json!({
        "profile": "data-package",
        "wacz_version": WACZ_VERSION,
        "title": title,
        "created": crate::util::rfc3339(crate::util::unix_now()),
        "software": format!("dragnet {}", env!("CARGO_PKG_VERSION")),
        "resources": resources,
    });
    let mut dp = serde_json::to_vec_pretty(&package).expect("JSON serializes");
    dp.push(b'\n');
    let digest = serde_json::json!({
        "path": "datapackage.json",
        "hash": format!("sha256:{}", hex(&sha2::Sha256::digest(&dp))),
    });
    let mut dd = serde_json::to_vec_pretty(&digest).expect("JSON serializes");
    dd.push(b'\n');
    zip.add_bytes("datapackage.json", &dp, out)?;
    zip.add_bytes("datapackage-digest.json", &dd, out)?;
    let mut w = zip.finish(out)?;
    w.flush().ctx("write", out)?;
    drop(w);
    file.commit()?;
    Ok(())
}

/// The HTML captures of partition `p` of `cycle` as pages.jsonl lines: its pages run (titles)
/// joined with its fetch results (the record's date and ID). Returns the lines written.
fn pages(crawl: &CrawlDir, cycle: u32, p: u32, w: &mut dyn Write, out: &Path) -> Result<u64> {
    let pages_path = crawl.pages(cycle, p);
    let fetched_path = crawl.fetched(cycle, p);
    if !pages_path.exists() || !fetched_path.exists() {
        return Ok(0);
    }
    let mut pages = RunReader::open_expect(&pages_path, Schema::PAGES)?;
    let mut fetched = RunReader::open_expect(&fetched_path, Schema::FETCHED)?;
    let mut have = fetched.advance()?;
    let mut n = 0;
    while pages.advance()? {
        while have && fetched.key() < pages.key() {
            have = fetched.advance()?;
        }
        if !(have && fetched.key() == pages.key()) {
            continue;
        }
        let page = PageRecord::decode(pages.payload())
            .map_err(|e| Error::corrupt(&pages_path, 0, format!("page record: {e}")))?;
        let html = page.content_type.contains("html");
        if !html || !(200..300).contains(&page.status) {
            continue;
        }
        let fr = FetchResult::decode(fetched.payload())
            .map_err(|e| Error::corrupt(&fetched_path, 0, format!("fetch result: {e}")))?;
        if fr.warc_file.is_empty() {
            continue;
        }
        let us = if fr.warc_date_us > 0 {
            fr.warc_date_us
        } else {
            fr.fetched_at_ms * 1000
        };
        let ts = crate::warc::warc_date(
            std::time::UNIX_EPOCH + std::time::Duration::from_micros(us),
            true,
        );
        let id = fr
            .record_id
            .trim_start_matches("<urn:uuid:")
            .trim_end_matches('>')
            .to_owned();
        let id = if id.is_empty() {
            format!("{cycle}-{}", hex(pages.key()))
        } else {
            id
        };
        let mut line = serde_json::json!({"id": id, "url": page.url, "ts": ts});
        if !page.title.is_empty() {
            line["title"] = serde_json::Value::String(page.title.clone());
        }
        let mut text = serde_json::to_vec(&line).expect("JSON serializes");
        text.push(b'\n');
        w.write_all(&text).ctx("write", out)?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refile_keeps_the_line_but_its_filename() {
        let l = r#"com,example)/ 20260101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200", "length": "10", "offset": "0", "filename": "000001/warc/p0000-000001.warc.gz"}"#;
        let r = refile(l, &|o| {
            Some(format!(
                "000001-{}",
                o.strip_prefix("000001/warc/").unwrap()
            ))
        });
        assert_eq!(r.unwrap(), l.replace("000001/warc/p0000", "000001-p0000"));
        assert!(refile(l, &|_| None).is_none());
    }

    #[test]
    fn dos_times() {
        // 2026-11-23T09:00:04Z
        let (t, d) = dos_time(1_795_424_404);
        assert_eq!((t >> 11, (t >> 5) & 63, (t & 31) * 2), (9, 0, 4));
        assert_eq!(((d >> 9) + 1980, (d >> 5) & 15, d & 31), (2026, 11, 23));
    }

    #[test]
    fn a_zip_of_stored_entries_ends_with_its_directory() {
        let mut z = Zip::new(Vec::new(), 0);
        z.add_bytes("a.txt", b"hello", Path::new("x")).unwrap();
        let out = z.finish(Path::new("x")).unwrap();
        assert_eq!(&out[..4], b"PK\x03\x04");
        assert_eq!(&out[30..35], b"a.txt");
        assert_eq!(&out[35..40], b"hello");
        let eocd = out.len() - 22;
        assert_eq!(&out[eocd..eocd + 4], b"PK\x05\x06");
        let crc = u32::from_le_bytes(out[14..18].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(b"hello"));
    }
}
