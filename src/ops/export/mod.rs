//! `dragnet export DIR --what pages|links|urls|text [--format parquet|jsonl] --out PATH
//! [--cycle N]`: a crawl's results as tables other tools read (DuckDB, pyarrow, Spark, pandas),
//! streamed from the run files and WARC files with bounded memory ([`table`]: one row group).
//!
//! - **pages**: one row per answered URL of each cycle, from the parse's pages run joined (both
//!   are in fingerprint order) with the fetch results: where its record is in the WARC files.
//! - **links**: one row per link of each page: from, to, the tag, `rel`, the anchor text, and
//!   whether it is followed; read again from the WARC records (the links runs of the crawl do
//!   not keep anchor texts, and are removed with old cycles).
//! - **urls**: the URL db as the crawl stands (each partition's newest version): state, status,
//!   fetches, changes, priority, the last capture.
//! - **text**: the visible text of every HTML page, as the WET files hold it.
//!
//! Columns and types are in docs/formats.md ("Exported tables"), which `tests/export.rs` reads
//! back with DuckDB.

pub mod table;
pub mod wacz;

use std::path::{Path, PathBuf};

use crate::config::Config;

use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, Result};
use crate::records::{FetchResult, PageRecord, UrlRecord};
use crate::run::{Cursor, RunReader, Schema};
use crate::storage::out::Output;
use crate::storage::AtomicFile;
use crate::warc::http::HttpHead;
pub use table::{Col, Format, Kind, TableWriter, Val};

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// Page facts of every answered URL.
    Pages,
    /// The links of every page.
    Links,
    /// The URL db.
    Urls,
    /// Visible text of every HTML page.
    Text,
    /// A WACZ package: WARC files, CDXJ index, pages ([`wacz`]).
    Wacz,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ExportReport {
    /// Rows written.
    pub rows: u64,
    /// Cycles read (pages, links, text).
    pub cycles: Vec<u32>,
    /// Cycles crawled before `dragnet repartition` made this directory, not exported: their
    /// pages and links runs stay in the directory it was made from.
    pub carried: Vec<u32>,
    /// Bytes of run and WARC files read.
    pub bytes_read: u64,
    /// The file written.
    pub out: PathBuf,
}

/// The partition count before, if cycle `c` was carried over by `dragnet repartition` (its
/// parse markers say so, and its runs between stages are not here).
fn repartitioned_from(crawl: &CrawlDir, c: u32) -> Result<Option<u64>> {
    let marker = crate::crawl::DoneMarker::read(&crawl.done_path(c, Stage::Parse, 0))?;
    Ok(marker.and_then(|m| {
        m.counts
            .get(crate::crawl::report::counter::REPARTITIONED_FROM)
            .copied()
    }))
}

/// The `pages` table.
pub const PAGES: &[Col] = &[
    Col::new("url", Kind::Str),
    Col::new("cycle", Kind::Int),
    Col::new("status", Kind::Int),
    Col::new("mime", Kind::OptStr),
    Col::new("charset", Kind::OptStr),
    Col::new("fetch_time", Kind::Time),
    Col::new("title", Kind::OptStr),
    Col::new("canonical", Kind::OptStr),
    Col::new("meta_robots", Kind::OptStr),
    Col::new("noindex", Kind::Bool),
    Col::new("nofollow", Kind::Bool),
    Col::new("outlinks", Kind::Int),
    Col::new("length", Kind::Int),
    Col::new("payload_digest", Kind::OptStr),
    Col::new("revisit", Kind::Bool),
    Col::new("warc_file", Kind::OptStr),
    Col::new("warc_offset", Kind::Int),
    Col::new("warc_length", Kind::Int),
];

/// The `urls` table.
pub const URLS: &[Col] = &[
    Col::new("url", Kind::Str),
    Col::new("state", Kind::Str),
    Col::new("http_status", Kind::Int),
    Col::new("depth", Kind::Int),
    Col::new("priority", Kind::Float),
    Col::new("discovered_cycle", Kind::Int),
    Col::new("last_fetch", Kind::Time),
    Col::new("fetches", Kind::Int),
    Col::new("changes", Kind::Int),
    Col::new("capture_digest", Kind::OptStr),
    Col::new("capture_time", Kind::Time),
];

/// The `links` table.
pub const LINKS: &[Col] = &[
    Col::new("from", Kind::Str),
    Col::new("to", Kind::Str),
    Col::new("cycle", Kind::Int),
    Col::new("tag", Kind::Str),
    Col::new("rel", Kind::OptStr),
    Col::new("anchor", Kind::OptStr),
    Col::new("nofollow", Kind::Bool),
];

/// The `text` table.
pub const TEXT: &[Col] = &[
    Col::new("url", Kind::Str),
    Col::new("cycle", Kind::Int),
    Col::new("fetch_time", Kind::Time),
    Col::new("text", Kind::Str),
];

/// Exports `what` of the crawl at `crawl` (configuration `cfg`) to `out`; pages, links and text
/// from `cycle` only, or from every cycle parsed in every partition. `out` is written as given
/// (replaced if it exists): `dragnet export` checks its `--out` first ([`export_to`]).
pub fn export(
    crawl: &CrawlDir,
    cfg: &Config,
    what: What,
    format: Format,
    out: &Path,
    cycle: Option<u32>,
) -> Result<ExportReport> {
    export_with(
        crawl,
        cfg,
        what,
        format,
        out,
        &|| AtomicFile::create(out),
        cycle,
    )
}

/// [`export`] to an output path that passed [`crate::storage::out`]'s rules (not in a crawl, not
/// a link, device or directory, an existing file only with `--force`), published after they are
/// checked again.
pub fn export_to(
    crawl: &CrawlDir,
    cfg: &Config,
    what: What,
    format: Format,
    out: &Output,
    cycle: Option<u32>,
) -> Result<ExportReport> {
    let mut r = export_with(
        crawl,
        cfg,
        what,
        format,
        out.path(),
        &|| out.create_file(),
        cycle,
    )?;
    r.out = out.given().to_path_buf();
    Ok(r)
}

fn export_with(
    crawl: &CrawlDir,
    cfg: &Config,
    what: What,
    format: Format,
    out: &Path,
    open: &dyn Fn() -> Result<AtomicFile>,
    cycle: Option<u32>,
) -> Result<ExportReport> {
    let mut report = ExportReport {
        out: out.to_path_buf(),
        ..ExportReport::default()
    };
    if what != What::Urls {
        choose_cycles(crawl, cfg.crawl.partitions, cycle, &mut report)?;
    }
    if what == What::Wacz {
        let (cycles, carried) = (report.cycles.clone(), report.carried.clone());
        wacz::write(crawl, cfg, &cycles, &carried, out, open()?, &mut report)?;
        return Ok(report);
    }
    write_table(crawl, cfg, what, format, open()?, &mut report)?;
    Ok(report)
}

/// The cycles to export into `report`: `cycle` if given (refused unless parsed everywhere and
/// crawled here), else every parsed cycle, those carried by `dragnet repartition` aside.
fn choose_cycles(
    crawl: &CrawlDir,
    partitions: u32,
    cycle: Option<u32>,
    report: &mut ExportReport,
) -> Result<()> {
    let parsed = |c: u32| crawl.done_everywhere(c, Stage::Parse, partitions);
    report.cycles = match cycle {
        Some(c) => {
            if !parsed(c) {
                return Err(Error::Usage(format!(
                    "cycle {c} of {} is not parsed in every partition yet: nothing to \
                     export from it (see `dragnet status`)",
                    crawl.root().display()
                )));
            }
            if let Some(m) = repartitioned_from(crawl, c)? {
                return Err(Error::Usage(format!(
                    "cycle {c} of {} was crawled before `dragnet repartition` (from {m} \
                     partitions): its pages, links and text runs stay in the crawl \
                     directory it was repartitioned from; export cycle {c} from there",
                    crawl.root().display()
                )));
            }
            vec![c]
        }
        None => {
            let mut cycles = Vec::new();
            for c in crawl.cycles().into_iter().filter(|&c| parsed(c)) {
                if repartitioned_from(crawl, c)?.is_some() {
                    report.carried.push(c);
                } else {
                    cycles.push(c);
                }
            }
            cycles
        }
    };
    Ok(())
}

/// The table `what` (not WACZ) of `report.cycles` (the URL dbs for `urls`) into `file`.
fn write_table(
    crawl: &CrawlDir,
    cfg: &Config,
    what: What,
    format: Format,
    file: AtomicFile,
    report: &mut ExportReport,
) -> Result<()> {
    let partitions = cfg.crawl.partitions;
    let cycles = report.cycles.clone();
    match what {
        What::Wacz => unreachable!("not a table"),
        What::Pages => {
            let mut t = TableWriter::create_in(file, "pages", PAGES, format)?;
            for &c in &cycles {
                for p in 0..partitions {
                    report.bytes_read += pages(crawl, c, p, &mut t)?;
                }
            }
            report.rows = t.finish()?;
        }
        What::Urls => {
            let mut t = TableWriter::create_in(file, "urls", URLS, format)?;
            let next = crate::crawl::next_cycle(crawl, partitions);
            for p in 0..partitions {
                if let Some((_, path)) = crawl.latest_state(p, "urldb", next + 1) {
                    report.bytes_read += urls(&path, &mut t)?;
                }
            }
            report.rows = t.finish()?;
        }
        What::Links | What::Text => {
            let (name, columns, rows): (_, _, PageRows) = if what == What::Links {
                ("links", LINKS, links)
            } else {
                ("text", TEXT, text)
            };
            let mut t = TableWriter::create_in(file, name, columns, format)?;
            for &c in &cycles {
                for p in 0..partitions {
                    report.bytes_read += crate::parse::stage::for_each_html_page(
                        crawl,
                        cfg,
                        c,
                        p,
                        &mut |fr, h, body| rows(fr, h, body, c, &mut t),
                    )?;
                }
            }
            report.rows = t.finish()?;
        }
    }
    Ok(())
}

/// The rows of a table of HTML pages from one page of cycle `cycle`: its response, HTTP head
/// and decoded body.
type PageRows = fn(&FetchResult, &HttpHead, &[u8], u32, &mut TableWriter) -> Result<()>;

/// The visible text of one HTML page (as its WET record holds it).
fn text(
    fr: &FetchResult,
    head: &HttpHead,
    body: &[u8],
    cycle: u32,
    t: &mut TableWriter,
) -> Result<()> {
    let text = crate::parse::text::visible_text(body, head.get("content-type"), MAX_TEXT_CHARS);
    t.row(&[
        Val::Str(&fr.url),
        Val::Int(i64::from(cycle)),
        Val::Time(fr.fetched_at_ms as i64),
        Val::Str(&text),
    ])
}

/// The most characters of a page's text exported (as in its WET record).
const MAX_TEXT_CHARS: usize = 1 << 20;

/// The links of one HTML page, with their anchor texts.
fn links(
    fr: &FetchResult,
    head: &HttpHead,
    body: &[u8],
    cycle: u32,
    t: &mut TableWriter,
) -> Result<()> {
    let Ok(url) = url::Url::parse(&fr.url) else {
        return Ok(());
    };
    for l in crate::parse::html::links_with_text(body, &url, head.get("content-type")) {
        t.row(&[
            Val::Str(&fr.url),
            Val::Str(&l.link.url),
            Val::Int(i64::from(cycle)),
            Val::Str(&l.link.tag),
            Val::Str(l.link.rel.as_deref().unwrap_or("")),
            Val::Str(&l.text),
            Val::Bool(l.link.nofollow),
        ])?;
    }
    Ok(())
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The pages of partition `p` of `cycle`: its pages run joined with its fetch results.
fn pages(crawl: &CrawlDir, cycle: u32, p: u32, t: &mut TableWriter) -> Result<u64> {
    let pages_path = crawl.pages(cycle, p);
    let fetched_path = crawl.fetched(cycle, p);
    let mut pages = RunReader::open_expect(&pages_path, Schema::PAGES)?;
    let mut fetched = RunReader::open_expect(&fetched_path, Schema::FETCHED)?;
    let mut have_fetched = fetched.advance()?;
    let prefix = crate::crawl::warc_filename_prefix(cycle);
    while pages.advance()? {
        let page = PageRecord::decode(pages.payload()).map_err(|e| {
            Error::corrupt(
                &pages_path,
                pages.block_offset(),
                format!("page record: {e}"),
            )
        })?;
        while have_fetched && fetched.key() < pages.key() {
            have_fetched = fetched.advance()?;
        }
        let fr = if have_fetched && fetched.key() == pages.key() {
            FetchResult::decode(fetched.payload()).map_err(|e| {
                Error::corrupt(
                    &fetched_path,
                    fetched.block_offset(),
                    format!("fetch result: {e}"),
                )
            })?
        } else {
            FetchResult::default()
        };
        let warc_file = if fr.warc_file.is_empty() {
            String::new()
        } else {
            format!("{prefix}{}", fr.warc_file)
        };
        t.row(&[
            Val::Str(&page.url),
            Val::Int(i64::from(cycle)),
            Val::Int(i64::from(page.status)),
            Val::Str(&page.content_type),
            Val::Str(&page.charset),
            Val::Time(fr.fetched_at_ms as i64),
            Val::Str(&page.title),
            Val::Str(&page.canonical),
            Val::Str(&page.meta_robots),
            Val::Bool(page.noindex),
            Val::Bool(page.nofollow),
            Val::Int(i64::from(page.outlinks)),
            Val::Int(fr.length as i64),
            Val::Str(&fr.payload_digest),
            Val::Bool(fr.revisit),
            Val::Str(&warc_file),
            Val::Int(fr.warc_offset as i64),
            Val::Int(fr.warc_length as i64),
        ])?;
    }
    Ok(file_len(&pages_path) + file_len(&fetched_path))
}

/// The URL records of one URL db.
fn urls(path: &Path, t: &mut TableWriter) -> Result<u64> {
    let mut r = RunReader::open_expect(path, Schema::URLDB)?;
    while r.advance()? {
        let u = UrlRecord::decode(r.payload())
            .map_err(|e| Error::corrupt(path, r.block_offset(), format!("URL record: {e}")))?;
        t.row(&[
            Val::Str(&u.url),
            Val::Str(u.state.name()),
            Val::Int(i64::from(u.http_status)),
            Val::Int(i64::from(u.depth)),
            Val::Float(u.score),
            Val::Int(i64::from(u.discovered)),
            Val::Time(u.fetched_at as i64 * 1000),
            Val::Int(i64::from(u.fetches)),
            Val::Int(i64::from(u.changes)),
            Val::Str(&u.capture.payload_digest),
            Val::Time((u.capture.date_us / 1000) as i64),
        ])?;
    }
    Ok(file_len(path))
}
