//! The parse stage run by the fetch stage, page by page as the pages arrive (docs/design.md §1,
//! §7): `[fetch] parse = true`, the default.
//!
//! A fetch already holds each response's head and body in memory, and its in-run following
//! extracts the links of every HTML page it fetches. Parsing the WARC afterwards decompressed
//! every record again and extracted every page a second time (about a tenth of a whole crawl's
//! CPU). Here the fetch hands each fetch result, with its response decoded once, to the parse
//! stage's own extraction ([`super::stage::result_page`], the function `dragnet parse` runs for
//! each result it reads from the WARC), and the links go both to the following and to the
//! parse's outputs. When the fetch has committed, [`InlineParse::finish`] writes the partition's
//! `links` and `pages` runs and the parse stage's `.done` marker, exactly what `dragnet parse`
//! would write from the WARC:
//!
//! - the same records: the same function over the same bytes (a WARC record's block is the
//!   response head and body the fetch received, and the payload is decoded with the same cap);
//! - the same order: both runs are sorted (links by target, pages by fingerprint); links to the
//!   same target may come in another order, which nothing downstream depends on (the split sums
//!   their cash exactly, whatever the order).
//!
//! The marker is an ordinary parse marker (inputs: the fetch results; outputs: the two runs), so
//! every executor sees the partition parsed, and an operator who removes it re-parses from the
//! WARC with `dragnet parse` as before. A fetch killed between its own marker and this one leaves
//! the parse to run from the WARC.

use std::borrow::Cow;
use std::path::Path;
use std::time::SystemTime;

use super::extract::{payload, Extractor};
use super::stage::{done_marker, output_dirs, reads_body, result_page, write_links};
use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker};
use crate::error::Result;
use crate::records::FetchResult;
use crate::run::{KeepFirst, RunWriter, Schema, Sorter};
use crate::warc::http::HttpHead;

/// A response's HTTP head and its decoded payload (borrowed from the body when it has no
/// coding).
pub(crate) type Document<'a> = (&'a HttpHead, Cow<'a, [u8]>);

/// The decoded response the parse of `fr` reads, from the head a fetch received (parsed) and its
/// body bytes (`rest`, and the payload when the fetch decoded it already, [`reads`]): `None`
/// when the parse reads no body for it (not a 2xx HTML page, sitemap or feed) or the head did
/// not parse. Needs no [`InlineParse`]: workers decode in parallel, outside its lock.
pub(crate) fn document<'a>(
    fr: &FetchResult,
    head: Option<&'a HttpHead>,
    (rest, decoded): (&'a [u8], Option<Vec<u8>>),
    max_decoded: u64,
    requisites: bool,
) -> Option<Document<'a>> {
    if !reads(fr, requisites) {
        return None;
    }
    let head = head?;
    if let Some(decoded) = decoded {
        return Some((head, Cow::Owned(decoded)));
    }
    let mut decoded = Vec::new();
    let body = match payload(max_decoded, head, rest, rest, &mut decoded) {
        Some(b) => Cow::Borrowed(b),
        None => Cow::Owned(decoded),
    };
    Some((head, body))
}

/// Whether the parse reads the payload of the response of `fr`.
pub(crate) fn reads(fr: &FetchResult, requisites: bool) -> bool {
    fr.status != 0 && reads_body(fr, requisites)
}

/// The run files the parse writes, while they are being sorted.
struct Outputs {
    links: Sorter,
    pages: Sorter,
    /// The WET file (`[parse] text`).
    wet: Option<super::wet::Wet>,
}

/// A partition's parse, fed by its fetch (see the module docs).
pub(crate) struct InlineParse {
    ex: Extractor,
    /// `None`: extraction only, for the fetch's following (`[fetch] parse = false`).
    out: Option<Outputs>,
}

impl InlineParse {
    /// The parse of a fetch whose scratch directory is `stage_dir`; with `outputs` false it
    /// only extracts links (for in-run following) and writes nothing. `wet`: where the WET file
    /// of `[parse] text` goes (the WARC directory and the partition's name), and what it is.
    pub(crate) fn new(
        cfg: &Config,
        stage_dir: &Path,
        outputs: bool,
        wet: (&Path, &str, String),
    ) -> Result<InlineParse> {
        let out = if outputs {
            // The fetch's share of the budget: its results sorter has a sixteenth, the caches of
            // the extraction a quarter.
            let share = |d: u64| {
                usize::try_from(cfg.sort.memory_budget.0 / d)
                    .unwrap_or(usize::MAX)
                    .max(1 << 20)
            };
            let (dir, prefix, about) = wet;
            Some(Outputs {
                links: Sorter::new(Schema::LINKS, share(4), stage_dir)?,
                pages: Sorter::new(Schema::PAGES, share(16).min(16 << 20), stage_dir)?,
                wet: cfg
                    .parse
                    .text
                    .then(|| super::wet::Wet::new(cfg, dir, prefix, about))
                    .transpose()?,
            })
        } else {
            None
        };
        Ok(InlineParse {
            ex: Extractor::new(cfg),
            out,
        })
    }

    /// Whether this parse writes the parse stage's outputs.
    pub(crate) fn writes(&self) -> bool {
        self.out.is_some()
    }

    /// Parses one fetch result (`key`: its fingerprint key) whose response, when the parse reads
    /// one, is `doc` ([`document`]). Every link found is also shown to `each` (its key and encoded
    /// [`crate::records::LinkRecord`]).
    pub(crate) fn result(
        &mut self,
        key: &[u8],
        fr: &FetchResult,
        doc: Option<&Document<'_>>,
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<()> {
        let InlineParse { ex, out } = self;
        if fr.status != 0 && reads_body(fr, ex.requisites) {
            // As `dragnet parse` counts the WARC records it reads.
            ex.bump("records", 1);
        }
        let (head, body) = match doc {
            Some((h, b)) => (Some(*h), &b[..]),
            None => (None, &[][..]),
        };
        let mut links = out.as_mut().map(|o| &mut o.links);
        let mut emit = |k: &[u8], v: &[u8]| -> Result<()> {
            each(k, v);
            match links.as_mut() {
                Some(l) => l.push(k, v),
                None => Ok(()),
            }
        };
        let page = result_page(ex, fr, head, body, &mut emit)?;
        if let (Some((h, b)), Some(w)) = (doc, out.as_mut().and_then(|o| o.wet.as_mut())) {
            super::stage::text_of(w, ex, fr, h, b)?;
        }
        if let (Some(page), Some(o)) = (page, out.as_mut()) {
            o.pages.push(key, &page.encode())?;
            ex.bump(counter::PAGES, 1);
        }
        Ok(())
    }

    /// After the fetch of partition `p` in `cycle` has written its results (`fetched`) and host
    /// table: adds the `Sitemap:` lines of the robots.txt files it fetched, writes the `links`
    /// and `pages` runs, and returns the parse stage's marker for the caller to commit after the
    /// fetch's own. `None` if this parse writes nothing.
    pub(crate) fn finish(
        self,
        crawl: &CrawlDir,
        cycle: u32,
        p: u32,
        fetched: &Path,
        started: SystemTime,
    ) -> Result<Option<DoneMarker>> {
        let InlineParse { mut ex, out } = self;
        let Some(Outputs { links, pages, wet }) = out else {
            return Ok(None);
        };
        output_dirs(crawl, cycle, p)?;
        write_links(crawl, cycle, p, &mut ex, links)?;
        let mut w = RunWriter::create(&crawl.pages(cycle, p), Schema::PAGES)?;
        pages.finish(&mut KeepFirst, &mut w)?;
        w.finish()?;
        ex.bump(counter::INLINE, 1);
        done_marker(crawl, cycle, p, started, fetched, wet, ex).map(Some)
    }
}
