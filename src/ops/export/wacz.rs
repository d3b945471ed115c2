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

mod zip;

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use self::zip::{hex, Entry, Summed, Sums, Zip};
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
    {
        let mut pkg = Package {
            zip: Zip::new(
                BufWriter::with_capacity(1 << 20, &mut file),
                crate::util::unix_now(),
            ),
            scratch: &scratch.0,
            out,
        };
        let mut sorter = CdxjSorter::new(256 << 20, &scratch.0);
        let mut all: Vec<u32> = cycles.iter().chain(carried).copied().collect();
        all.sort_unstable();
        all.dedup();
        for &c in &all {
            pkg.archive_cycle(crawl, c, &mut sorter, report)?;
        }
        pkg.add_written("indexes/index.cdx", "index.cdx", |w, idx| {
            sorter.finish(w, idx).map(drop)
        })?;
        pkg.add_written("pages/pages.jsonl", "pages.jsonl", |w, path| {
            w.write_all(
                b"{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
            )
            .ctx("write", path)?;
            for &c in cycles {
                for p in 0..cfg.crawl.partitions {
                    report.rows += pages(crawl, c, p, w, path)?;
                }
            }
            Ok(())
        })?;
        let (dp, dd) = datapackage(crawl, &pkg.zip.entries);
        pkg.zip.add_bytes("datapackage.json", &dp, out)?;
        pkg.zip.add_bytes("datapackage-digest.json", &dd, out)?;
        let mut w = pkg.zip.finish(out)?;
        w.flush().ctx("write", out)?;
    }
    file.commit()?;
    Ok(())
}

/// The package being written: its ZIP, with a scratch directory beside `out` for the entries
/// made on the way.
struct Package<'a, W: Write> {
    zip: Zip<W>,
    scratch: &'a Path,
    out: &'a Path,
}

impl<W: Write> Package<'_, W> {
    /// The WARC files of cycle `c` archived, and their index lines in `sorter`: `.warc.zst`
    /// files converted to `.warc.gz` (their lines from the conversion), the others as they are
    /// (their lines from the cycle's index, or the files indexed again).
    fn archive_cycle(
        &mut self,
        crawl: &CrawlDir,
        c: u32,
        sorter: &mut CdxjSorter,
        report: &mut ExportReport,
    ) -> Result<()> {
        let prefix = crate::crawl::warc_filename_prefix(c);
        let mut as_is: Vec<String> = Vec::new();
        for name in warc_files(crawl, c)? {
            let path = crawl.warc_dir(c).join(&name);
            let kind = crate::warc::WarcReader::open(&path, Default::default())?.compression();
            if kind == Compression::Zstd {
                let archived = format!("{c:06}-{}", convert::output_name(&name, Compression::Gzip));
                report.bytes_read += self.archive_converted(&path, &archived, sorter)?;
            } else {
                let archived = format!("{c:06}-{name}");
                self.zip
                    .add_file(&format!("archive/{archived}"), &path, None, self.out)?;
                report.bytes_read += super::file_len(&path);
                as_is.push(format!("{prefix}{name}"));
            }
        }
        if !as_is.is_empty() {
            index_as_is(crawl, c, &as_is, sorter)?;
        }
        Ok(())
    }

    /// The `.warc.zst` file at `path` converted to `.warc.gz` and archived as `archived`, its
    /// index lines in `sorter`; the bytes read.
    fn archive_converted(
        &mut self,
        path: &Path,
        archived: &str,
        sorter: &mut CdxjSorter,
    ) -> Result<u64> {
        let to_gz = Options::new(Compression::Gzip);
        let mut bytes_in = 0;
        self.add_written(&format!("archive/{archived}"), archived, |w, _| {
            let rep = convert::convert_stream(path, w, &to_gz, &mut |m| {
                if let Some(l) =
                    cdxj::record_line(m.header, m.http, m.new_offset, m.new_length, archived)
                {
                    sorter.push(l)?;
                }
                Ok(())
            })?;
            bytes_in = rep.bytes_in;
            Ok(())
        })?;
        Ok(bytes_in)
    }

    /// Adds the entry `entry`, written first to the scratch file `name` by `fill` (given the
    /// writer and the file's path) and summed on the way; the scratch file is removed after.
    fn add_written(
        &mut self,
        entry: &str,
        name: &str,
        fill: impl FnOnce(&mut dyn Write, &Path) -> Result<()>,
    ) -> Result<()> {
        let tmp = self.scratch.join(name);
        let f = File::create(&tmp).ctx("create", &tmp)?;
        let mut w = Summed {
            inner: BufWriter::with_capacity(1 << 20, f),
            sums: Sums::new(),
        };
        fill(&mut w, &tmp)?;
        w.flush().ctx("write", &tmp)?;
        self.zip
            .add_file(entry, &tmp, Some(w.sums.done()), self.out)?;
        std::fs::remove_file(&tmp).ctx("remove", &tmp)
    }
}

/// The index lines of cycle `c`'s files archived as they are (`as_is`, as CDXJ lines name
/// them) into `sorter`, renamed to their archive names: from the cycle's index, or the files
/// indexed again when the cycle has none.
fn index_as_is(crawl: &CrawlDir, c: u32, as_is: &[String], sorter: &mut CdxjSorter) -> Result<()> {
    let prefix = crate::crawl::warc_filename_prefix(c);
    let rename = |old: &str| {
        as_is
            .iter()
            .any(|a| a == old)
            .then(|| format!("{c:06}-{}", old.strip_prefix(&prefix).unwrap_or(old)))
    };
    let index = crawl.cycle_cdxj(c);
    if index.exists() {
        let f = File::open(&index).ctx("open", &index)?;
        let mut lines = crate::util::lines::LineReader::new(BufReader::new(f), cdxj::MAX_CDXJ_LINE);
        while let Some(l) = lines.next_line().ctx("read", &index)? {
            if let Some(line) = refile(&String::from_utf8_lossy(l.text), &rename) {
                sorter.push(line)?;
            }
        }
    } else {
        for a in as_is {
            let name = a.strip_prefix(&prefix).unwrap_or(a);
            cdxj::index_file_as(
                &crawl.warc_dir(c).join(name),
                &format!("{c:06}-{name}"),
                sorter,
            )?;
        }
    }
    Ok(())
}

/// `datapackage.json` for the ZIP's `entries` so far, and `datapackage-digest.json` (its
/// SHA-256), each pretty JSON with a final newline.
fn datapackage(crawl: &CrawlDir, entries: &[Entry]) -> (Vec<u8>, Vec<u8>) {
    let resources: Vec<serde_json::Value> = entries
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
    (dp, dd)
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
        let page = PageRecord::decode(pages.payload()).map_err(|e| {
            Error::corrupt(
                &pages_path,
                pages.block_offset(),
                format!("page record: {e}"),
            )
        })?;
        let html = page.content_type.contains("html");
        if !html || !(200..300).contains(&page.status) {
            continue;
        }
        let fr = FetchResult::decode(fetched.payload()).map_err(|e| {
            Error::corrupt(
                &fetched_path,
                fetched.block_offset(),
                format!("fetch result: {e}"),
            )
        })?;
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
}
