//! `dragnet parse --cycle N --partition p DIR` and `dragnet reparse --warc FILES --out DIR`: the
//! parse stage (docs/design.md §1) and offline reprocessing, one code path.
//!
//! **parse** walks the partition's fetch results (`cycles/N/fetched/pNNNN.run`, fingerprint
//! order) and, for every answered page, reads its response record from the WARC at the offset
//! the result gives: each record is one zstd frame or gzip member, so reading one costs one
//! `pread` and one decompression, and the parse holds one document at a time. It writes
//!
//! - `cycles/N/links/pNNNN.run` ([`crate::records::LinkRecord`], sorted by the target's host key and fingerprint
//!   through an external sort): every link of every HTML page, canonicalized, with its share of
//!   the page's OPIC cash; every `<loc>` of a sitemap or sitemap index and every item of an
//!   RSS/Atom feed ([`super::sitemap`], capped at 50,000 URLs and 50 MB); the `Location` of each
//!   redirect; the `Sitemap:` lines of robots.txt files fetched this cycle (from the host
//!   table);
//! - `cycles/N/pages/pNNNN.run` ([`crate::records::PageRecord`], fingerprint order): status, media type,
//!   charset, title, canonical, meta robots, out-link count, digest of each answered URL;
//! - `cycles/N/parse/pNNNN.done`.
//!
//! **OPIC** (Abiteboul, Preda, Cobena, WWW 2003; docs/design.md, References): a fetched page distributes the cash it was
//! scheduled with (`FetchResult::priority`) equally over its followed out-links. Links marked
//! `rel=nofollow`, and all links of a page whose meta robots or X-Robots-Tag says `nofollow`,
//! are recorded with `nofollow` and no cash; the split stage does not follow them by default.
//! A redirect passes its whole cash to its target; robots.txt sitemaps carry none.
//!
//! **reparse** streams any WARC files (1.0 or 1.1; plain, gzip members or zstd frames; ours,
//! Common Crawl's, Heritrix's, wget's) record by record and runs the same extraction over every
//! HTTP response, with no crawl directory and nothing fetched: `links.run`, `pages.run` and
//! `reparse.json` (counts) in the output directory. Depth and cash are unknown there: links get
//! depth 1 and an equal share of a cash of 1.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use url::Url;

use super::extract::{is_css, is_parsed, media_type, Emit, Extractor, LinkMeta};
use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage, StageReport};
use crate::error::{Error, IoContext, Result};
use crate::records::LinkKind;
use crate::records::{FetchResult, PageRecord};
use crate::records::{HostRecord, OriginRobots};
use crate::run::{self, Cursor, KeepAll, KeepFirst, RunReader, RunWriter, Schema, Sorter};
use crate::warc::http::HttpHead;
use crate::warc::reader::{ReaderOptions, WarcReader};
use crate::warc::{Compression, RecordType};

/// The WARC files of a partition, open, and a reused decompressor: reads one record at an
/// offset with one `pread`. (A memory map saved the copy but cost as much in page faults, and
/// made the process's RSS grow with the WARC files it touched.)
struct RecordFiles {
    dir: PathBuf,
    /// Each file, with a decompressor holding its warc-zstd dictionary if it starts with one.
    open: HashMap<String, (File, Option<zstd::bulk::Decompressor<'static>>)>,
    zstd: zstd::bulk::Decompressor<'static>,
    packed: Vec<u8>,
    plain: Vec<u8>,
    limit: usize,
}

impl RecordFiles {
    fn new(dir: PathBuf, limit: u64) -> Result<RecordFiles> {
        Ok(RecordFiles {
            zstd: zstd::bulk::Decompressor::new().ctx("start zstd for", &dir)?,
            dir,
            open: HashMap::new(),
            packed: Vec::new(),
            plain: Vec::new(),
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        })
    }

    /// The plain bytes of the record of `length` bytes at `offset` in `name`.
    fn read(&mut self, name: &str, offset: u64, length: u64) -> Result<&[u8]> {
        use std::os::unix::fs::FileExt;
        if !self.open.contains_key(name) {
            let path = self.dir.join(name);
            let f = File::open(&path).ctx("open", &path)?;
            let dict = match Compression::from_name(name) {
                Some(Compression::Zstd) => crate::warc::dictionary::of_file(&f, &path)?,
                _ => None,
            };
            let z = dict
                .map(|d| crate::warc::dictionary::decompressor(Some(&d)))
                .transpose()
                .ctx("start zstd for", &path)?;
            self.open.insert(name.to_owned(), (f, z));
        }
        let (f, dict_zstd) = self.open.get_mut(name).expect("opened above");
        let f = &*f;
        let path = || self.dir.join(name);
        let bad = |why: String| Error::corrupt(path(), offset, why);
        let len = usize::try_from(length)
            .ok()
            .filter(|&l| l <= self.limit)
            .ok_or_else(|| bad(format!("record length {length} out of range")))?;
        // Grown, never shrunk or cleared: zeroing the buffer for every record cost ~1% of a parse.
        if self.packed.len() < len {
            self.packed.resize(len, 0);
        }
        if let Err(e) = f.read_exact_at(&mut self.packed[..len], offset) {
            if e.kind() != std::io::ErrorKind::UnexpectedEof {
                return Err(Error::io("read a record of", path(), e));
            }
            // The fetch results name a record the file no longer holds whole: truncated.
            let size = f.metadata().ctx("stat", &path())?.len();
            return Err(bad(format!(
                "the record of {length} bytes the fetch results name runs past the end of the \
                 file ({size} bytes): the WARC file was truncated"
            )));
        }
        let packed = &self.packed[..len];
        self.plain.clear();
        match Compression::from_name(name).unwrap_or(Compression::None) {
            Compression::None => self.plain.extend_from_slice(packed),
            Compression::Zstd => {
                let size = zstd::zstd_safe::get_frame_content_size(packed)
                    .ok()
                    .flatten()
                    .map_or(self.limit, |s| usize::try_from(s).unwrap_or(usize::MAX));
                if size > self.limit {
                    return Err(bad(format!(
                        "record of {size} bytes is larger than the {} bytes a fetched record can be",
                        self.limit
                    )));
                }
                self.plain.reserve(size);
                dict_zstd
                    .as_mut()
                    .unwrap_or(&mut self.zstd)
                    .decompress_to_buffer(packed, &mut self.plain)
                    .map_err(|e| bad(format!("zstd frame: {e}")))?;
            }
            Compression::Gzip => {
                flate2::read::MultiGzDecoder::new(packed)
                    .take(self.limit as u64)
                    .read_to_end(&mut self.plain)
                    .map_err(|e| bad(format!("gzip member: {e}")))?;
            }
        }
        Ok(&self.plain)
    }
}

/// Runs the parse stage of partition `p` in `cycle` (see the module docs). Returns at once with
/// What `dragnet reparse` did: the counts of a parse over the given WARC files, and the files it
/// could not read to their end.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ReparseReport {
    /// The counts, as a parse stage reports them.
    #[serde(flatten)]
    pub stage: StageReport,
    /// Files that could not be read to the end, with the error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_files: Vec<String>,
}

impl ReparseReport {
    /// A counter, 0 if absent.
    pub fn count(&self, name: &str) -> u64 {
        self.stage.count(name)
    }
}

/// `skipped` if the stage is already done.
pub fn parse_partition(crawl: &CrawlDir, cfg: &Config, cycle: u32, p: u32) -> Result<StageReport> {
    if let Some(done) = crate::crawl::gate(crawl, cfg, Stage::Parse, cycle, p)? {
        return Ok(done);
    }
    let done_path = crawl.done_path(cycle, Stage::Parse, p);
    let started = SystemTime::now();
    let fetched_path = crawl.fetched(cycle, p);
    output_dirs(crawl, cycle, p)?;
    let stage_dir = crawl.stage_dir(cycle, Stage::Parse);
    let budget = usize::try_from(cfg.sort.memory_budget.0 / 2).unwrap_or(usize::MAX);
    let mut links = Sorter::new(Schema::LINKS, budget.max(1 << 20), &stage_dir)?;
    let mut pages = RunWriter::create(&crawl.pages(cycle, p), Schema::PAGES)?;
    let mut ex = Extractor::new(cfg);
    // A record holds at most max_body of body plus the WARC and HTTP heads.
    let limit = cfg.fetch.max_body.0 + 2 * cfg.fetch.max_header_bytes.0 + (1 << 20);
    let mut files = RecordFiles::new(crawl.warc_dir(cycle), limit)?;
    let prefix = CrawlDir::partition_name(p);
    super::wet::remove_wet(&crawl.warc_dir(cycle), &prefix)?;
    let mut wet = cfg
        .parse
        .text
        .then(|| {
            super::wet::Wet::new(
                cfg,
                &crawl.warc_dir(cycle),
                &prefix,
                format!("dragnet parse: text of cycle {cycle}, partition {p}"),
            )
        })
        .transpose()?;
    let mut emit = |key: &[u8], payload: &[u8]| links.push(key, payload);

    let mut results = RunReader::open_expect(&fetched_path, Schema::FETCHED)?;
    while results.advance()? {
        let fr = FetchResult::decode(results.payload()).map_err(|e| {
            Error::corrupt(
                &fetched_path,
                results.block_offset(),
                format!("fetch result: {e}"),
            )
        })?;
        let mut head = None;
        let mut decoded = std::mem::take(&mut ex.body);
        decoded.clear();
        let mut body: &[u8] = &[];
        if fr.status != 0 && reads_body(&fr, ex.requisites) && !fr.warc_file.is_empty() {
            let plain = files.read(&fr.warc_file, fr.warc_offset, fr.warc_length)?;
            ex.bump("records", 1);
            let path = || crawl.warc_dir(cycle).join(&fr.warc_file);
            if let Some((h, b)) = ex.response(plain, &path, &mut decoded)? {
                head = Some(h);
                body = b.unwrap_or(&decoded);
            }
        }
        if let (Some(w), Some(h)) = (wet.as_mut(), head.as_ref()) {
            text_of(w, &mut ex, &fr, h, body)?;
        }
        let page = result_page(&mut ex, &fr, head.as_ref(), body, &mut emit);
        ex.body = decoded;
        let Some(page) = page? else {
            continue;
        };
        pages.push(results.key(), &page.encode())?;
        ex.bump(counter::PAGES, 1);
    }
    write_links(crawl, cycle, p, &mut ex, links)?;
    pages.finish()?;
    let m = done_marker(crawl, cycle, p, started, &fetched_path, wet, ex)?;
    Ok(StageReport::ran(m.commit(&done_path, started)?))
}

/// Creates the directories the parse of partition `p` in `cycle` writes in (its stage's, the
/// `links` and `pages` runs'), and removes what a killed attempt left in them.
pub(super) fn output_dirs(crawl: &CrawlDir, cycle: u32, p: u32) -> Result<()> {
    for d in [
        crawl.stage_dir(cycle, Stage::Parse),
        crawl
            .links(cycle, p)
            .parent()
            .expect("has a parent")
            .to_path_buf(),
        crawl
            .pages(cycle, p)
            .parent()
            .expect("has a parent")
            .to_path_buf(),
    ] {
        crate::storage::create_dir_all(&d)?;
        crate::storage::remove_temps(&d)?;
    }
    Ok(())
}

/// Adds the `Sitemap:` lines of the robots.txt files partition `p` fetched in `cycle` to
/// `links`, and writes them as its `links` run.
pub(super) fn write_links(
    crawl: &CrawlDir,
    cycle: u32,
    p: u32,
    ex: &mut Extractor,
    mut links: Sorter,
) -> Result<()> {
    robots_sitemaps(crawl, cycle, p, ex, &mut |k, v| links.push(k, v))?;
    let mut w = RunWriter::create(&crawl.links(cycle, p), Schema::LINKS)?;
    links.finish(&mut KeepAll, &mut w)?;
    w.finish()?;
    Ok(())
}

/// The parse stage's `.done` marker of partition `p` in `cycle`, begun at `started`, once its
/// outputs are written (by `dragnet parse` from the WARC, or by the fetch's inline parse): the
/// fetch results `fetched` in, the `links` and `pages` runs and the WET files of `wet` out, and
/// the counts of `ex`.
pub(super) fn done_marker(
    crawl: &CrawlDir,
    cycle: u32,
    p: u32,
    started: SystemTime,
    fetched: &Path,
    wet: Option<super::wet::Wet>,
    ex: Extractor,
) -> Result<DoneMarker> {
    let mut m = DoneMarker::new(Stage::Parse, cycle, p, started);
    m.inputs.push(FileDigest::of_run(crawl, fetched)?);
    m.outputs
        .push(FileDigest::of_run(crawl, &crawl.links(cycle, p))?);
    m.outputs
        .push(FileDigest::of_run(crawl, &crawl.pages(cycle, p))?);
    if let Some(w) = wet {
        for f in w.finish()? {
            m.outputs.push(FileDigest::of_file(crawl, &f)?);
        }
    }
    m.counts = ex.into_counts();
    Ok(m)
}

/// Writes the visible text of an HTML page `fr` (head `head`, decoded `body`) to `wet`.
pub(super) fn text_of(
    wet: &mut super::wet::Wet,
    ex: &mut Extractor,
    fr: &FetchResult,
    head: &HttpHead,
    body: &[u8],
) -> Result<()> {
    let ct = head.get("content-type");
    if !ct.is_some_and(|c| super::extract::is_html(&media_type(c))) {
        return Ok(());
    }
    let date_us = if fr.warc_date_us != 0 {
        fr.warc_date_us
    } else {
        fr.fetched_at_ms * 1000
    };
    wet.page(&fr.url, date_us, &fr.record_id, body, ct)?;
    ex.bump("text_pages", 1);
    Ok(())
}

/// What [`for_each_html_page`] calls with each page.
pub type PageFn<'a> = dyn FnMut(&FetchResult, &HttpHead, &[u8]) -> Result<()> + 'a;

/// Calls `f` with every HTML page partition `p` of `cycle` fetched (fetch-result order: by
/// fingerprint), its response head and decoded body read from the WARC files, as the parse
/// stage reads them. Returns the bytes of WARC records read. (`dragnet export --what
/// links|text`.)
pub fn for_each_html_page(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
    f: &mut PageFn<'_>,
) -> Result<u64> {
    let fetched_path = crawl.fetched(cycle, p);
    let ex = Extractor::new(cfg);
    let limit = cfg.fetch.max_body.0 + 2 * cfg.fetch.max_header_bytes.0 + (1 << 20);
    let mut files = RecordFiles::new(crawl.warc_dir(cycle), limit)?;
    let mut results = RunReader::open_expect(&fetched_path, Schema::FETCHED)?;
    let mut decoded = Vec::new();
    let mut read = 0;
    while results.advance()? {
        let fr = FetchResult::decode(results.payload()).map_err(|e| {
            Error::corrupt(
                &fetched_path,
                results.block_offset(),
                format!("fetch result: {e}"),
            )
        })?;
        if fr.status == 0
            || !reads_body(&fr, false)
            || fr.warc_file.is_empty()
            || !super::extract::is_html(&fr.content_type)
        {
            continue;
        }
        let plain = files.read(&fr.warc_file, fr.warc_offset, fr.warc_length)?;
        read += fr.warc_length;
        let path = || crawl.warc_dir(cycle).join(&fr.warc_file);
        if let Some((h, b)) = ex.response(plain, &path, &mut decoded)? {
            let body = b.unwrap_or(&decoded);
            f(&fr, &h, body)?;
        }
    }
    Ok(read)
}

/// Whether the parse reads the body of the page a fetch result answered: a 2xx HTML page,
/// sitemap or feed (and in archive mode, `requisites`, a stylesheet), unless it is a revisit of
/// an identical payload (the WARC holds no body, and the links are those of the capture it
/// refers to, found when that was parsed: as for a 304).
pub(super) fn reads_body(fr: &FetchResult, requisites: bool) -> bool {
    (200..300).contains(&fr.status)
        && !fr.revisit
        && (is_parsed(&fr.content_type, &fr.url) || (requisites && is_css(&fr.content_type)))
}

/// The parse of one fetch result, wherever its response comes from (the WARC here, the fetch's
/// own buffers in [`super::inline`]): the link of a redirect, then, for a result with an
/// answer, its page record and links (`head` and the decoded `body` when [`reads_body`] and the
/// response was read; its digest and media type from the result). `None` for a result without
/// an answer.
pub(super) fn result_page(
    ex: &mut Extractor,
    fr: &FetchResult,
    head: Option<&HttpHead>,
    body: &[u8],
    emit: &mut Emit<'_>,
) -> Result<Option<PageRecord>> {
    if !fr.redirect.is_empty() {
        let meta = LinkMeta {
            source: &fr.url,
            kind: LinkKind::Redirect,
            nofollow: false,
            cash: fr.priority,
            depth: fr.depth.saturating_add(1),
        };
        if ex.link(&fr.redirect, None, meta, emit)? {
            ex.bump("redirects", 1);
        }
    }
    if fr.status == 0 {
        return Ok(None);
    }
    let mut page = ex.page(&fr.url, fr.status, head, body, fr.depth, fr.priority, emit)?;
    page.digest = fr.digest;
    if head.is_none() {
        page.content_type = fr.content_type.clone();
    }
    Ok(Some(page))
}

/// `Sitemap:` lines of the robots.txt files the fetch of `cycle` fetched (new or changed entries
/// of the host table), as links.
pub(super) fn robots_sitemaps(
    crawl: &CrawlDir,
    cycle: u32,
    p: u32,
    ex: &mut Extractor,
    emit: &mut Emit<'_>,
) -> Result<()> {
    let new_path = crawl.state_file(p, "hosts", cycle + 1);
    if !new_path.exists() {
        return Ok(());
    }
    let mut new = RunReader::open_expect(&new_path, Schema::HOSTS)?;
    let mut old = match crawl.latest_state(p, "hosts", cycle) {
        Some((_, path)) => Some(RunReader::open_expect(&path, Schema::HOSTS)?),
        None => None,
    };
    let mut old_rec: Option<(u64, HostRecord)> = None;
    let decode = |r: &RunReader| {
        HostRecord::decode(r.payload())
            .map_err(|e| Error::corrupt(r.path(), 0, format!("host record: {e}")))
    };
    if let Some(o) = old.as_mut() {
        if o.advance()? {
            old_rec = Some((run::key_u64(o.key()), decode(o)?));
        }
    }
    while new.advance()? {
        let hk = run::key_u64(new.key());
        let rec = decode(&new)?;
        while let (Some(o), Some((k, _))) = (old.as_mut(), old_rec.as_ref()) {
            if *k >= hk {
                break;
            }
            old_rec = if o.advance()? {
                Some((run::key_u64(o.key()), decode(o)?))
            } else {
                None
            };
        }
        let before = old_rec.as_ref().filter(|(k, _)| *k == hk).map(|(_, r)| r);
        for r in &rec.robots {
            let unchanged = before
                .and_then(|b| b.robots_for(&r.origin))
                .is_some_and(|b: &OriginRobots| b.fetched_at_ms == r.fetched_at_ms);
            if unchanged {
                continue;
            }
            let source = format!("{}/robots.txt", r.origin);
            let base = Url::parse(&source).ok();
            for sm in r.status().sitemaps().to_vec() {
                let meta = LinkMeta {
                    source: &source,
                    kind: LinkKind::RobotsSitemap,
                    nofollow: false,
                    cash: 0.0,
                    depth: 1,
                };
                if ex.link(&sm, base.as_ref(), meta, emit)? {
                    ex.bump("robots_sitemaps", 1);
                }
            }
        }
    }
    Ok(())
}

/// Offline reprocessing: parses every HTTP response of `warcs` into `out/links.run` and
/// `out/pages.run` (see the module docs). A file that cannot be read to the end is reported in
/// `failed_files` after what it held before the damage was parsed; the others go on.
pub fn reparse(warcs: &[PathBuf], out: &Path, cfg: &Config) -> Result<ReparseReport> {
    reparse_with(warcs, out, cfg, false)
}

/// [`reparse`]; with `text`, also the visible text of every HTML page as a WET file,
/// `out/text-SSSSSS.warc.wet.zst` (`dragnet reparse --text`).
pub fn reparse_with(
    warcs: &[PathBuf],
    out: &Path,
    cfg: &Config,
    text: bool,
) -> Result<ReparseReport> {
    let started = std::time::Instant::now();
    crate::storage::create_dir_all(out)?;
    crate::storage::remove_temps(out)?;
    let budget = usize::try_from(cfg.sort.memory_budget.0 / 4)
        .unwrap_or(usize::MAX)
        .max(1 << 20);
    let mut links = Sorter::new(Schema::LINKS, budget, out)?;
    let mut pages = Sorter::new(Schema::PAGES, budget, out)?;
    let mut ex = Extractor::new(cfg);
    let mut failed = Vec::new();
    super::wet::remove_wet(out, "text")?;
    let mut wet = text
        .then(|| super::wet::Wet::new(cfg, out, "text", "dragnet reparse --text".into()))
        .transpose()?;
    for path in warcs {
        let mut emit = |key: &[u8], payload: &[u8]| links.push(key, payload);
        match reparse_file(path, &mut ex, &mut emit, &mut pages, wet.as_mut()) {
            Ok(()) => ex.bump("files", 1),
            Err(e) => failed.push(format!("{e}")),
        }
    }
    let links_path = out.join("links.run");
    let pages_path = out.join("pages.run");
    let mut w = RunWriter::create(&links_path, Schema::LINKS)?;
    links.finish(&mut KeepAll, &mut w)?;
    w.finish()?;
    let mut w = RunWriter::create(&pages_path, Schema::PAGES)?;
    pages.finish(&mut KeepFirst, &mut w)?;
    let pages_written = w.finish()?.records;
    ex.counts.insert("pages_unique".into(), pages_written);
    if let Some(w) = wet {
        w.finish()?;
    }
    let report = ReparseReport {
        stage: StageReport {
            skipped: false,
            counts: ex.into_counts(),
            seconds: started.elapsed().as_secs_f64(),
        },
        failed_files: failed,
    };
    let mut json = serde_json::to_string_pretty(&report).expect("report serializes");
    json.push('\n');
    crate::storage::write_atomic(&out.join("reparse.json"), json.as_bytes())?;
    Ok(report)
}

fn reparse_file(
    path: &Path,
    ex: &mut Extractor,
    emit: &mut Emit<'_>,
    pages: &mut Sorter,
    mut wet: Option<&mut super::wet::Wet>,
) -> Result<()> {
    let mut rd = WarcReader::open(path, ReaderOptions::default())?;
    while let Some(mut rec) = rd.next_record()? {
        ex.bump("records", 1);
        let h = rec.header();
        if h.record_type() != RecordType::Response || !h.is_http() {
            continue;
        }
        let Some(uri) = h.target_uri().map(str::to_owned) else {
            continue;
        };
        let record_id = h.record_id().unwrap_or("").to_owned();
        let date_us = h.date().and_then(parse_warc_date_us).unwrap_or(0);
        let Ok(k) = ex.canon.canonicalize(&uri, None) else {
            ex.bump("responses_unusable_uri", 1);
            continue;
        };
        let Ok(head) = rec.http_head() else {
            ex.bump("responses_bad_http", 1);
            continue;
        };
        let status = head.status().unwrap_or(0);
        let mut body = std::mem::take(&mut ex.body);
        body.clear();
        let parsed = head
            .get("content-type")
            .is_some_and(|ct| is_parsed(&media_type(ct), &k.url));
        if (200..300).contains(&status) && parsed {
            if let Ok(mut r) = rec.http_payload(&head, ex.max_decoded) {
                let _ = r.read_to_end(&mut body);
            }
        }
        if let (Some(w), true) = (wet.as_deref_mut(), (200..300).contains(&status) && parsed) {
            let fr = FetchResult {
                url: uri.clone(),
                record_id: record_id.clone(),
                warc_date_us: date_us,
                ..FetchResult::default()
            };
            text_of(w, ex, &fr, &head, &body)?;
        }
        let page = ex.page(&k.url, status, Some(&head), &body, 0, 1.0, emit);
        ex.body = body;
        let mut page = page?;
        page.digest = xxhash_rust::xxh3::xxh3_64(&ex.body);
        pages.push(&run::fp_key(k.fingerprint), &page.encode())?;
        ex.bump(counter::PAGES, 1);
    }
    Ok(())
}

/// A `WARC-Date` (with or without a fraction) as Unix microseconds.
fn parse_warc_date_us(d: &str) -> Option<u64> {
    let (secs, nanos) = crate::util::parse_rfc3339_nanos(d)?;
    Some(secs * 1_000_000 + u64::from(nanos / 1000))
}

/// What a parse (or a reparse) did, in one line.
pub fn summary(r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    format!(
        "{} pages ({} HTML, {:.1} MiB), {} links ({} followed, {} nofollow, {} unusable), {} redirects, {} robots.txt sitemaps in {:.1}s ({:.0} pages/s)",
        n(counter::PAGES),
        n("html_pages"),
        n(counter::BYTES) as f64 / (1 << 20) as f64,
        n(counter::LINKS),
        n("links_followed"),
        n("links_nofollow"),
        n("links_unusable"),
        n("redirects"),
        n("robots_sitemaps"),
        r.seconds,
        n(counter::PAGES) as f64 / r.seconds.max(1e-9),
    )
}
