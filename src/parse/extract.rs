//! The extraction shared by `dragnet parse` and `dragnet reparse` ([`super::stage`]): one HTTP
//! response in, a page record and its links out, with the caches that make a site's repeated
//! navigation cheap (resolved targets by base prefix, canonical forms by absolute URL), bounded
//! by clearing them when full.
//!
//! Here: which documents are parsed (by media type), the [`Extractor`] with its counters, and
//! the encoding of one link record. The parts: `page.rs` (what a page gives: its record and its
//! links), `resolve.rs` (link resolution and the caches), `record.rs` (a WARC record's HTTP
//! response, decoded).

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use url::Url;

use super::cache::{Hash, StrMap};
use super::html;
use crate::config::Config;
use crate::error::Result;
use crate::keys::Canonicalizer;
use crate::records::{LinkKind, LinkRecord};
use crate::run;
pub(super) use record::payload;
use resolve::{Interned, Missed, Resolved, JOIN_BYTES, JOIN_CACHE, URL_BYTES, URL_CACHE};

mod page;
mod record;
mod resolve;

/// Whether a media type is parsed as HTML.
pub(super) fn is_html(content_type: &str) -> bool {
    matches!(content_type, "text/html" | "application/xhtml+xml")
}

/// Whether a document is parsed as a sitemap or feed: XML media types, and gzip files whose URL
/// names an XML document (`sitemap.xml.gz` is usually served as `application/gzip`).
pub(super) fn is_sitemap(content_type: &str, url: &str) -> bool {
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

/// Whether a document is a stylesheet (parsed for its `url()`s in archive mode).
pub(super) fn is_css(content_type: &str) -> bool {
    content_type == "text/css"
}

/// Whether the parse stage reads the body of a document at all.
pub(super) fn is_parsed(content_type: &str, url: &str) -> bool {
    is_html(content_type) || is_sitemap(content_type, url)
}

/// The media type of a `Content-Type` header value, lower-case, without parameters.
pub(super) fn media_type(header: &str) -> String {
    header
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The extraction shared by parse and reparse: one page in, a page record and links out.
pub(super) struct Extractor {
    pub(super) canon: Canonicalizer,
    /// Archive mode: requisites are links too (`[parse] requisites`).
    pub(super) requisites: bool,
    pub(super) max_decoded: u64,
    pub(super) counts: BTreeMap<String, u64>,
    /// Resolved link targets ([`Resolved::to_u32`]), keyed by the part of the base URL a
    /// target's resolution depends on (up to the last `/` of its path), a space and the target
    /// as written. A site's navigation repeats on every page, and resolving (a URL parse) then
    /// canonicalizing (two or more) was the largest cost per link; with this, a repeated link
    /// costs one lookup.
    joins: StrMap,
    /// Entries of `urls` (and `interned`) before all caches are cleared: [`URL_CACHE`], less
    /// when the stage's memory share is small ([`Extractor::new`]).
    url_cache: usize,
    /// Absolute URLs met (as joined, or redirect targets as given) -> index in `urls`.
    interned: StrMap,
    urls: Vec<Interned>,
    /// The canonical URLs of `urls`, one after the other.
    canon_text: String,
    /// Per URL in `urls`: 1 + its index among the current page's targets, 0 if not on it.
    slot: Vec<u32>,
    /// Reused buffers: a page's cache keys, a decoded document, a decoded body, a page's links.
    key: String,
    text: String,
    pub(super) body: Vec<u8>,
    page_links: Vec<(u32, LinkKind, bool)>,
    /// A page's link targets as found (emptied between pages), and as one record each.
    raw: Vec<html::RawLink<'static>>,
    targets: Vec<(u32, LinkKind, bool, f64)>,
    /// A page's distinct targets so far, an open-addressing table of (32 bits of the target's
    /// hash, its index in the page's links), and what each link resolved to.
    seen: Vec<(u32, usize)>,
    resolved: Vec<Resolved>,
    /// Per link of a page, the index of the first link with its target; per distinct target,
    /// (that index, its `joins` key in `key`, its hash if cached).
    first: Vec<usize>,
    distinct: Vec<(usize, usize, usize, Option<Hash>)>,
    /// The distinct targets of a page not in `joins`, and their URLs.
    missed: Vec<Missed>,
    joined: String,
    /// Directories of page bases found canonical (see [`crate::keys::FastBase`]).
    known_dirs: crate::keys::KnownDirs,
    /// The URLs of `joined` as parsed, or for those written canonical without the parser,
    /// their host keys (see [`Extractor::resolve_all`]).
    parsed: Vec<std::result::Result<Url, u64>>,
    /// Seeds the hash of `seen` (the targets come from web pages).
    seed: u64,
    /// The payload being encoded (reused).
    buf: Vec<u8>,
    /// Hot counters, kept out of `counts` (a map lookup per link showed in the profile).
    links: u64,
    followed: u64,
    nofollow: u64,
    repeated: u64,
    /// Distinct targets resolved (not found in `joins`), those of them written without the
    /// URL parser ([`crate::keys::FastBase`]), and times the caches were emptied
    /// ([`Extractor::trim_caches`]).
    joined_urls: u64,
    joined_simple: u64,
    cleared: u64,
}

/// Where links go: (key, encoded [`LinkRecord`]).
pub(super) type Emit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// A link's fields other than its target.
#[derive(Clone, Copy)]
pub(super) struct LinkMeta<'a> {
    pub(super) source: &'a str,
    pub(super) kind: LinkKind,
    pub(super) nofollow: bool,
    pub(super) cash: f64,
    pub(super) depth: u32,
}

impl Extractor {
    /// An extractor whose caches take at most a quarter of `cfg`'s sort budget (the links
    /// sorter has half): [`URL_BYTES`] and [`JOIN_BYTES`] with the default 256 MiB, scaled down
    /// (entries too) when the budget is a share of a process running many stages at once.
    pub(super) fn new(cfg: &Config) -> Extractor {
        let full = URL_BYTES + JOIN_BYTES;
        let room = usize::try_from(cfg.sort.memory_budget.0 / 4)
            .unwrap_or(usize::MAX)
            .min(full);
        let scale = |n: usize| (n as u128 * room as u128 / full as u128) as usize;
        let url_cache = scale(URL_CACHE).max(1024);
        Extractor {
            url_cache,
            canon: Canonicalizer::new(&cfg.canon),
            requisites: cfg.parse.requisites,
            max_decoded: cfg.fetch.max_decoded.0,
            counts: BTreeMap::new(),
            joins: StrMap::new(scale(JOIN_CACHE).max(1024), scale(JOIN_BYTES).max(1 << 16)),
            interned: StrMap::new(url_cache, scale(URL_BYTES).max(1 << 16)),
            urls: Vec::new(),
            canon_text: String::new(),
            slot: Vec::new(),
            key: String::new(),
            text: String::new(),
            body: Vec::new(),
            page_links: Vec::new(),
            raw: Vec::new(),
            targets: Vec::new(),
            seen: Vec::new(),
            resolved: Vec::new(),
            first: Vec::new(),
            distinct: Vec::new(),
            missed: Vec::new(),
            joined: String::new(),
            known_dirs: Default::default(),
            parsed: Vec::new(),
            seed: std::collections::hash_map::RandomState::new().hash_one(0u64),
            buf: Vec::new(),
            links: 0,
            followed: 0,
            nofollow: 0,
            repeated: 0,
            joined_urls: 0,
            joined_simple: 0,
            cleared: 0,
        }
    }

    /// All counters, the hot ones included.
    pub(super) fn into_counts(mut self) -> BTreeMap<String, u64> {
        for (k, v) in [
            ("links", self.links),
            ("links_followed", self.followed),
            ("links_nofollow", self.nofollow),
            ("links_repeated", self.repeated),
            ("links_joined", self.joined_urls),
            ("links_joined_simple", self.joined_simple),
            ("link_caches_cleared", self.cleared),
        ] {
            self.counts.insert(k.to_owned(), v);
        }
        self.counts
    }

    pub(super) fn bump(&mut self, name: &str, n: u64) {
        crate::util::count(&mut self.counts, name, n);
    }

    /// Hands the encoded [`LinkRecord`] of a link to `urls[id]` to `out`, keyed by the
    /// target's (host key, fingerprint); false (and counted) if it cannot be crawled.
    pub(super) fn emit(&mut self, id: u32, meta: LinkMeta<'_>, out: &mut Emit<'_>) -> Result<bool> {
        let Some((at, len, fp, hk)) = self.urls[id as usize].canon else {
            self.bump("links_unusable", 1);
            return Ok(false);
        };
        LinkRecord::encode_parts(
            &mut self.buf,
            &self.canon_text[at..at + len],
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

    /// Canonicalizes `target` (resolved against `base`, if given) and hands the link's encoded
    /// [`LinkRecord`] to `out`, keyed by the target's (host key, fingerprint).
    pub(super) fn link(
        &mut self,
        target: &str,
        base: Option<&Url>,
        meta: LinkMeta<'_>,
        out: &mut Emit<'_>,
    ) -> Result<bool> {
        let Some(base) = base else {
            self.trim_caches();
            let id = self.intern(target);
            return self.emit(id, meta, out);
        };
        match self.canon.canonicalize(target, Some(base)) {
            Ok(k) => {
                LinkRecord::encode_parts(
                    &mut self.buf,
                    &k.url,
                    meta.source,
                    meta.kind,
                    meta.nofollow,
                    meta.cash,
                    meta.depth,
                );
                out(&run::host_fp_key(k.host_key, k.fingerprint), &self.buf)?;
                self.links += 1;
                Ok(true)
            }
            Err(_) => {
                self.bump("links_unusable", 1);
                Ok(false)
            }
        }
    }
}
