//! `dragnet parse --cycle N --partition p DIR` and `dragnet reparse --warc FILES --out DIR`: the
//! parse stage (DESIGN §1) and offline reprocessing, one code path.
//!
//! **parse** walks the partition's fetch results (`cycles/N/fetched/pNNNN.run`, fingerprint
//! order) and, for every answered page, reads its response record from the WARC at the offset
//! the result gives: each record is one zstd frame or gzip member, so reading one costs one
//! `pread` and one decompression, and the parse holds one document at a time. It writes
//!
//! - `cycles/N/links/pNNNN.run` ([`LinkRecord`], sorted by the target's host key and fingerprint
//!   through an external sort): every link of every HTML page, canonicalized, with its share of
//!   the page's OPIC cash; every `<loc>` of a sitemap or sitemap index and every item of an
//!   RSS/Atom feed ([`super::sitemap`], capped at 50,000 URLs and 50 MB); the `Location` of each
//!   redirect; the `Sitemap:` lines of robots.txt files fetched this cycle (from the host
//!   table);
//! - `cycles/N/pages/pNNNN.run` ([`PageRecord`], fingerprint order): status, media type,
//!   charset, title, canonical, meta robots, out-link count, digest of each answered URL;
//! - `cycles/N/parse/pNNNN.done`.
//!
//! **OPIC** (Abiteboul, Preda, Cobena, seeds/000_*): a fetched page distributes the cash it was
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

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use url::Url;

use super::html::extract_links;
use super::records::{LinkKind, LinkRecord, PageRecord};
use crate::crawl::{Config, CrawlDir, DoneMarker, FetchResult, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};
use crate::fetch::hosts::{HostRecord, OriginRobots};
use crate::keys::Canonicalizer;
use crate::run::{self, Cursor, KeepAll, KeepFirst, RunReader, RunWriter, Schema, Sorter};
use crate::warc::http::HttpHead;
use crate::warc::reader::{ReaderOptions, WarcReader};
use crate::warc::{Compression, RecordType};

/// What a parse did: the counts of its `.done` marker (or `reparse.json`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ParseReport {
    /// The stage was already done: nothing was parsed now.
    pub skipped: bool,
    /// `pages`, `html_pages`, `links`, `links_followed`, `links_nofollow`, `redirects`,
    /// `robots_sitemaps`, `links_unusable`, `bytes`, `records`, ...
    pub counts: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// reparse: files that could not be read to the end, with the error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_files: Vec<String>,
}

impl ParseReport {
    /// A counter, 0 if absent.
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }
}

/// Whether a media type is parsed as HTML.
fn is_html(content_type: &str) -> bool {
    matches!(content_type, "text/html" | "application/xhtml+xml")
}

/// Whether a document is parsed as a sitemap or feed: XML media types, and gzip files whose URL
/// names an XML document (`sitemap.xml.gz` is usually served as `application/gzip`).
fn is_sitemap(content_type: &str, url: &str) -> bool {
    matches!(
        content_type,
        "application/xml"
            | "text/xml"
            | "application/rss+xml"
            | "application/atom+xml"
            | "application/rdf+xml"
    ) || (matches!(
        content_type,
        "application/gzip" | "application/x-gzip" | "application/octet-stream"
    ) && url
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .ends_with(".xml.gz"))
}

/// Whether the parse stage reads the body of a document at all.
fn is_parsed(content_type: &str, url: &str) -> bool {
    is_html(content_type) || is_sitemap(content_type, url)
}

/// The media type of a `Content-Type` header value, lower-case, without parameters.
fn media_type(header: &str) -> String {
    header
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The extraction shared by parse and reparse: one page in, a page record and links out.
struct Extractor {
    canon: Canonicalizer,
    max_decoded: u64,
    counts: BTreeMap<String, u64>,
    /// Canonical forms of recently seen absolute URLs: a site's navigation repeats on every
    /// page, and canonicalizing (two or more URL parses) was the largest cost per link.
    /// Cleared when full, so its memory is bounded.
    seen: HashMap<String, Option<(String, u64, u64)>>,
    /// The payload being encoded (reused).
    buf: Vec<u8>,
    /// Hot counters, kept out of `counts` (a map lookup per link showed in the profile).
    links: u64,
    followed: u64,
    nofollow: u64,
    repeated: u64,
}

/// Where links go: (key, encoded [`LinkRecord`]).
type Emit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// A link's fields other than its target.
#[derive(Clone, Copy)]
struct LinkMeta<'a> {
    source: &'a str,
    kind: LinkKind,
    nofollow: bool,
    cash: f64,
    depth: u32,
}

/// Entries of [`Extractor::seen`] before it is cleared (~100 bytes each).
const CANON_CACHE: usize = 1 << 16;

impl Extractor {
    fn new(cfg: &Config) -> Extractor {
        Extractor {
            canon: Canonicalizer::new(&cfg.canon),
            max_decoded: cfg.fetch.max_decoded.0,
            counts: BTreeMap::new(),
            seen: HashMap::new(),
            buf: Vec::new(),
            links: 0,
            followed: 0,
            nofollow: 0,
            repeated: 0,
        }
    }

    /// All counters, the hot ones included.
    fn into_counts(mut self) -> BTreeMap<String, u64> {
        for (k, v) in [
            ("links", self.links),
            ("links_followed", self.followed),
            ("links_nofollow", self.nofollow),
            ("links_repeated", self.repeated),
        ] {
            self.counts.insert(k.to_owned(), v);
        }
        self.counts
    }

    fn bump(&mut self, name: &str, n: u64) {
        crate::util::count(&mut self.counts, name, n);
    }

    /// Canonicalizes `target` and hands the link's encoded [`LinkRecord`] to `out`, keyed by
    /// the target's (host key, fingerprint).
    fn link(
        &mut self,
        target: &str,
        base: Option<&Url>,
        meta: LinkMeta<'_>,
        out: &mut Emit<'_>,
    ) -> Result<bool> {
        if base.is_none() {
            if let Some(hit) = self.seen.get(target) {
                let Some((url, fp, hk)) = hit else {
                    self.bump("links_unusable", 1);
                    return Ok(false);
                };
                LinkRecord::encode_parts(
                    &mut self.buf,
                    url,
                    meta.source,
                    meta.kind,
                    meta.nofollow,
                    meta.cash,
                    meta.depth,
                );
                out(&run::host_fp_key(*hk, *fp), &self.buf)?;
                self.links += 1;
                return Ok(true);
            }
        }
        let canonical = {
            {
                let k = self
                    .canon
                    .canonicalize(target, base)
                    .ok()
                    .map(|k| (k.url, k.fingerprint, k.host_key));
                if base.is_none() {
                    if self.seen.len() >= CANON_CACHE {
                        self.seen.clear();
                    }
                    self.seen.insert(target.to_owned(), k.clone());
                }
                k
            }
        };
        match canonical {
            Some((url, fp, hk)) => {
                LinkRecord::encode_parts(
                    &mut self.buf,
                    &url,
                    meta.source,
                    meta.kind,
                    meta.nofollow,
                    meta.cash,
                    meta.depth,
                );
                out(&run::host_fp_key(hk, fp), &self.buf)?;
                self.links += 1;
                Ok(true)
            }
            None => {
                self.bump("links_unusable", 1);
                Ok(false)
            }
        }
    }

    /// Parses one answered page: `head` and the decoded `body` of its response. Emits its links
    /// through `out` and returns its page record.
    #[allow(clippy::too_many_arguments)]
    fn page(
        &mut self,
        url: &str,
        status: u16,
        head: Option<&HttpHead>,
        body: &[u8],
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<PageRecord> {
        let content_type_header = head.and_then(|h| h.get("content-type"));
        let content_type = content_type_header.map(media_type).unwrap_or_default();
        let x_robots: Vec<&str> = head
            .map(|h| h.get_all("x-robots-tag").collect())
            .unwrap_or_default();
        let x_robots = (!x_robots.is_empty()).then(|| x_robots.join(", "));
        let mut page = PageRecord {
            url: url.to_owned(),
            status,
            content_type: content_type.clone(),
            length: body.len() as u64,
            ..PageRecord::default()
        };
        self.bump("bytes", body.len() as u64);
        let Ok(doc_url) = Url::parse(url) else {
            return Ok(page);
        };
        if !(200..300).contains(&status) {
            return Ok(page);
        }
        if is_sitemap(&content_type, url) {
            self.sitemap(&mut page, body, depth, cash, out)?;
            return Ok(page);
        }
        if !is_html(&content_type) {
            return Ok(page);
        }
        self.bump("html_pages", 1);
        let found = extract_links(body, &doc_url, content_type_header);
        page.charset = found.charset.to_owned();
        page.title = found.title.clone().unwrap_or_default();
        page.canonical = found.canonical.clone().unwrap_or_default();
        page.meta_robots = [found.meta_robots.as_deref(), x_robots.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        page.noindex = found.noindex(x_robots.as_deref());
        page.nofollow = found.nofollow(x_robots.as_deref());
        page.outlinks = u32::try_from(found.links.len()).unwrap_or(u32::MAX);
        self.bump("links_skipped_scheme", found.skipped_schemes);
        self.bump("links_unusable", found.skipped_invalid);
        let followed = |l: &super::html::Link| !l.nofollow && !page.nofollow;
        let n = found.links.iter().filter(|l| followed(l)).count();
        let share = if n > 0 { cash / n as f64 } else { 0.0 };
        // One record per target of the page: its occurrences' cash summed (a page repeats ~30-40%
        // of its links: menus, headers, "read more"), followed if any occurrence is. OPIC's
        // total is unchanged, and the sort behind has that much less to do.
        let mut targets: Vec<(&str, LinkKind, bool, f64)> = Vec::with_capacity(found.links.len());
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(found.links.len());
        for l in &found.links {
            let follow = followed(l);
            let c = if follow { share } else { 0.0 };
            match at.get(l.url.as_str()) {
                Some(&i) => {
                    targets[i].2 |= follow;
                    targets[i].3 += c;
                    self.repeated += 1;
                }
                None => {
                    at.insert(&l.url, targets.len());
                    targets.push((&l.url, LinkKind::of_tag(&l.tag), follow, c));
                }
            }
        }
        for (target, kind, follow, c) in targets {
            let meta = LinkMeta {
                source: url,
                kind,
                nofollow: !follow,
                cash: c,
                depth: depth.saturating_add(1),
            };
            if self.link(target, None, meta, out)? {
                if follow {
                    self.followed += 1;
                } else {
                    self.nofollow += 1;
                }
            }
        }
        Ok(page)
    }

    /// Links of a sitemap, sitemap index or RSS/Atom feed: every `<loc>` (capped at 50,000
    /// URLs and 50 MB decoded, as sitemaps.org says, so a sitemap flood cannot swamp a host)
    /// shares the document's cash.
    fn sitemap(
        &mut self,
        page: &mut PageRecord,
        body: &[u8],
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<()> {
        let sm = super::sitemap::parse(body, &super::sitemap::Limits::default());
        self.bump("sitemaps", 1);
        if sm.truncated {
            self.bump("sitemaps_truncated", 1);
        }
        if sm.error.is_some() {
            self.bump("sitemaps_malformed", 1);
        }
        let locs: Vec<&str> = sm
            .urls
            .iter()
            .map(|u| u.loc.as_str())
            .chain(sm.sitemaps.iter().map(|s| s.loc.as_str()))
            .collect();
        page.outlinks = u32::try_from(locs.len()).unwrap_or(u32::MAX);
        let share = if locs.is_empty() {
            0.0
        } else {
            cash / locs.len() as f64
        };
        let base = Url::parse(&page.url).ok();
        let source = page.url.clone();
        for loc in locs {
            let meta = LinkMeta {
                source: &source,
                kind: LinkKind::Sitemap,
                nofollow: false,
                cash: share,
                depth: depth.saturating_add(1),
            };
            if self.link(loc, base.as_ref(), meta, out)? {
                self.followed += 1;
            }
        }
        Ok(())
    }

    /// Decodes the HTTP response in a WARC record's `block` (plain bytes of one record) and
    /// returns its head and decoded payload, capped at `max_decoded`.
    fn response(&self, plain: &[u8], path: &Path) -> Result<Option<(HttpHead, Vec<u8>)>> {
        let mut rd = WarcReader::new(plain, path, ReaderOptions::default())?;
        let Some(mut rec) = rd.next_record()? else {
            return Ok(None);
        };
        if rec.header().record_type() != RecordType::Response || !rec.header().is_http() {
            return Ok(None);
        }
        let Ok(head) = rec.http_head() else {
            return Ok(None);
        };
        let mut body = Vec::new();
        if let Ok(mut r) = rec.http_payload(&head, self.max_decoded) {
            // A body that stops decoding (truncated gzip, cap) still yields what it has.
            let _ = r.read_to_end(&mut body);
        }
        Ok(Some((head, body)))
    }
}

/// The WARC files of a partition, open, and a reused decompressor: reads one record at an
/// offset with one `pread`. (A memory map saved the copy but cost as much in page faults, and
/// made the process's RSS grow with the WARC files it touched.)
struct RecordFiles {
    dir: PathBuf,
    open: HashMap<String, File>,
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
        let path = self.dir.join(name);
        if !self.open.contains_key(name) {
            let f = File::open(&path).ctx("open", &path)?;
            self.open.insert(name.to_owned(), f);
        }
        let f = &self.open[name];
        let bad = |why: String| Error::corrupt(&path, offset, why);
        let len = usize::try_from(length)
            .ok()
            .filter(|&l| l <= self.limit)
            .ok_or_else(|| bad(format!("record length {length} out of range")))?;
        self.packed.resize(len, 0);
        f.read_exact_at(&mut self.packed, offset)
            .ctx("read a record of", &path)?;
        let packed = &self.packed[..];
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
                self.zstd
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
/// `skipped` if the stage is already done.
pub fn parse_partition(crawl: &CrawlDir, cfg: &Config, cycle: u32, p: u32) -> Result<ParseReport> {
    let done_path = crawl.done_path(cycle, Stage::Parse, p);
    if let Some(m) = DoneMarker::read(&done_path)? {
        return Ok(ParseReport {
            skipped: true,
            counts: m.counts,
            seconds: m.seconds,
            failed_files: Vec::new(),
        });
    }
    if DoneMarker::read(&crawl.done_path(cycle, Stage::Fetch, p))?.is_none() {
        return Err(Error::Usage(format!(
            "cycle {cycle} partition {p} has not been fetched ({} is missing): run \
             `dragnet fetch --cycle {cycle} --partition {p} {}` first",
            crawl.done_path(cycle, Stage::Fetch, p).display(),
            crawl.root().display()
        )));
    }
    let started = SystemTime::now();
    let fetched_path = crawl.fetched(cycle, p);
    let links_path = crawl.links(cycle, p);
    let pages_path = crawl.pages(cycle, p);
    let stage_dir = crawl.stage_dir(cycle, Stage::Parse);
    for d in [
        &stage_dir,
        &links_path.parent().expect("has a parent").to_path_buf(),
        &pages_path.parent().expect("has a parent").to_path_buf(),
    ] {
        crate::storage::create_dir_all(d)?;
        crate::storage::remove_temps(d)?;
    }
    let budget = usize::try_from(cfg.sort.memory_budget.0 / 2).unwrap_or(usize::MAX);
    let mut links = Sorter::new(Schema::LINKS, budget.max(1 << 20), &stage_dir)?;
    let mut pages = RunWriter::create(&pages_path, Schema::PAGES)?;
    let mut ex = Extractor::new(cfg);
    // A record holds at most max_body of body plus the WARC and HTTP heads.
    let limit = cfg.fetch.max_body.0 + 2 * cfg.fetch.max_header_bytes.0 + (1 << 20);
    let mut files = RecordFiles::new(crawl.warc_dir(cycle), limit)?;
    let mut emit = |key: &[u8], payload: &[u8]| links.push(key, payload);

    let mut results = RunReader::open_expect(&fetched_path, Schema::FETCHED)?;
    while results.advance()? {
        let fr = FetchResult::decode(results.payload())
            .map_err(|e| Error::corrupt(&fetched_path, 0, format!("fetch result: {e}")))?;
        if !fr.redirect.is_empty() {
            let meta = LinkMeta {
                source: &fr.url,
                kind: LinkKind::Redirect,
                nofollow: false,
                cash: fr.priority,
                depth: fr.depth.saturating_add(1),
            };
            if ex.link(&fr.redirect, None, meta, &mut emit)? {
                ex.bump("redirects", 1);
            }
        }
        if fr.status == 0 {
            continue;
        }
        let mut head = None;
        let mut body = Vec::new();
        let parsable = (200..300).contains(&fr.status) && is_parsed(&fr.content_type, &fr.url);
        if parsable && !fr.warc_file.is_empty() {
            let plain = files.read(&fr.warc_file, fr.warc_offset, fr.warc_length)?;
            ex.bump("records", 1);
            let path = crawl.warc_dir(cycle).join(&fr.warc_file);
            if let Some((h, b)) = ex.response(plain, &path)? {
                head = Some(h);
                body = b;
            }
        }
        let mut page = ex.page(
            &fr.url,
            fr.status,
            head.as_ref(),
            &body,
            fr.depth,
            fr.priority,
            &mut emit,
        )?;
        page.digest = fr.digest;
        if head.is_none() {
            page.content_type = fr.content_type.clone();
        }
        pages.push(results.key(), &page.encode())?;
        ex.bump("pages", 1);
    }
    robots_sitemaps(crawl, cycle, p, &mut ex, &mut emit)?;
    let mut w = RunWriter::create(&links_path, Schema::LINKS)?;
    links.finish(&mut KeepAll, &mut w)?;
    w.finish()?;
    pages.finish()?;

    let mut m = DoneMarker::new(Stage::Parse, cycle, p, started);
    m.inputs.push(FileDigest::of_run(crawl, &fetched_path)?);
    m.outputs.push(FileDigest::of_run(crawl, &links_path)?);
    m.outputs.push(FileDigest::of_run(crawl, &pages_path)?);
    m.counts = ex.into_counts();
    let m = m.commit(&done_path, started)?;
    Ok(ParseReport {
        skipped: false,
        counts: m.counts,
        seconds: m.seconds,
        failed_files: Vec::new(),
    })
}

/// `Sitemap:` lines of the robots.txt files the fetch of `cycle` fetched (new or changed entries
/// of the host table), as links.
fn robots_sitemaps(
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
pub fn reparse(warcs: &[PathBuf], out: &Path, cfg: &Config) -> Result<ParseReport> {
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
    for path in warcs {
        let mut emit = |key: &[u8], payload: &[u8]| links.push(key, payload);
        match reparse_file(path, &mut ex, &mut emit, &mut pages) {
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
    let report = ParseReport {
        skipped: false,
        counts: ex.into_counts(),
        seconds: started.elapsed().as_secs_f64(),
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
        let Ok(k) = ex.canon.canonicalize(&uri, None) else {
            ex.bump("responses_unusable_uri", 1);
            continue;
        };
        let Ok(head) = rec.http_head() else {
            ex.bump("responses_bad_http", 1);
            continue;
        };
        let status = head.status().unwrap_or(0);
        let mut body = Vec::new();
        let parsed = head
            .get("content-type")
            .is_some_and(|ct| is_parsed(&media_type(ct), &k.url));
        if (200..300).contains(&status) && parsed {
            if let Ok(mut r) = rec.http_payload(&head, ex.max_decoded) {
                let _ = r.read_to_end(&mut body);
            }
        }
        let mut page = ex.page(&k.url, status, Some(&head), &body, 0, 1.0, emit)?;
        page.digest = xxhash_rust::xxh3::xxh3_64(&body);
        pages.push(&run::fp_key(k.fingerprint), &page.encode())?;
        ex.bump("pages", 1);
    }
    Ok(())
}
