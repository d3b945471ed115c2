//! The extraction shared by `dragnet parse` and `dragnet reparse` ([`super::stage`]): one HTTP
//! response in, a page record and its links out, with the caches that make a site's repeated
//! navigation cheap (resolved targets by base prefix, canonical forms by absolute URL), bounded
//! by clearing them when full.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::path::PathBuf;

use url::Url;

use super::cache::{Hash, StrMap};
use super::html;
use crate::config::Config;
use crate::error::Result;
use crate::keys::Canonicalizer;
use crate::records::{LinkKind, LinkRecord, PageRecord};
use crate::run;
use crate::warc::http::{self, HttpHead};
use crate::warc::memory::MemRecord;
use crate::warc::reader::{ReaderOptions, WarcReader};
use crate::warc::RecordType;

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

/// What a link target resolves to against a base URL.
#[derive(Clone, Copy)]
pub(super) enum Resolved {
    /// It does not parse.
    Invalid,
    /// A scheme other than http(s).
    OtherScheme,
    /// An absolute http(s) URL: its index in [`Extractor::urls`].
    Url(u32),
}

impl Resolved {
    /// As a value of [`Extractor::joins`].
    fn to_u32(self) -> u32 {
        match self {
            Resolved::Invalid => 0,
            Resolved::OtherScheme => 1,
            Resolved::Url(id) => id.saturating_add(2),
        }
    }

    fn from_u32(v: u32) -> Resolved {
        match v {
            0 => Resolved::Invalid,
            1 => Resolved::OtherScheme,
            id => Resolved::Url(id - 2),
        }
    }
}

/// A distinct target of a page not found in [`Extractor::joins`]: its index in the page's
/// distinct targets, and where its URL is in [`Extractor::joined`] with the URL's hash in
/// [`Extractor::interned`], or what it resolved to if it is not an http(s) URL.
type Missed = (usize, std::result::Result<(usize, usize, Hash), Resolved>);

/// An absolute URL the extractor has met, and its canonical form.
pub(super) struct Interned {
    /// As joined (fragment removed) or as given: where it is in `interned`'s keys, or the URL
    /// itself if the map could not take it.
    url: Result<(u32, u32), Box<str>>,
    /// Canonical URL (where it is in [`Extractor::canon_text`]), fingerprint and host key;
    /// `None` if it cannot be crawled.
    canon: Option<(usize, usize, u64, u64)>,
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
    /// The URLs of `joined` as parsed (see [`Extractor::resolve_all`]).
    parsed: Vec<Url>,
    /// Seeds the hash of `seen` (the targets come from web pages).
    seed: u64,
    /// The payload being encoded (reused).
    buf: Vec<u8>,
    /// Hot counters, kept out of `counts` (a map lookup per link showed in the profile).
    links: u64,
    followed: u64,
    nofollow: u64,
    repeated: u64,
}

/// An HTTP response's head and payload: the payload borrowed from the record (`Some`), or in the
/// caller's buffer (`None`).
pub(super) type Response<'p> = (HttpHead, Option<&'p [u8]>);

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

/// Entries of [`Extractor::urls`] before all caches are cleared (~150 bytes each with the
/// URL, its canonical form and 32 bytes of table). On the 200 x 250 websim corpus a parse meets
/// 52k distinct URLs.
pub(super) const URL_CACHE: usize = 1 << 16;

/// Bytes of URLs (as joined) in [`Extractor::interned`] before all caches are cleared.
pub(super) const URL_BYTES: usize = 16 << 20;

/// Entries of [`Extractor::joins`] before it is cleared (~90 bytes each: key and 32 bytes of
/// table). The same corpus has 213k distinct (base prefix, target) pairs (a site's relative
/// links are written from several directories), which this cap holds without clearing; at 2^16
/// it was cleared six times a run and missed 430k times instead of 213k (a URL parse and a
/// lookup in `interned` each).
pub(super) const JOIN_CACHE: usize = 1 << 18;

/// Bytes of keys in [`Extractor::joins`] before it is cleared.
pub(super) const JOIN_BYTES: usize = 32 << 20;

/// Keys longer than this (a `data:` URL, say) are not added to [`Extractor::joins`].
const JOIN_KEY_MAX: usize = 4096;

/// The part of `base` that resolving `target` against it depends on, for a target that is not
/// empty and starts with neither `?` nor `#` (see [`Extractor::join_key`]): nothing for an
/// absolute http(s) URL, the scheme and authority for a path starting with `/` (or `\`, its
/// equivalent in http URLs), else everything up to the last `/` of the path. `None` for bases
/// other than http(s).
pub(super) fn base_prefix<'b>(base: &'b Url, target: &str) -> Option<&'b str> {
    if !matches!(base.scheme(), "http" | "https") {
        return None;
    }
    if target.starts_with("http://") || target.starts_with("https://") {
        return Some("");
    }
    if target.starts_with(['/', '\\']) {
        return Some(&base[..url::Position::BeforePath]);
    }
    let s = &base[..url::Position::AfterPath];
    s.rfind('/').map(|i| &s[..=i])
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
            parsed: Vec::new(),
            seed: std::collections::hash_map::RandomState::new().hash_one(0u64),
            buf: Vec::new(),
            links: 0,
            followed: 0,
            nofollow: 0,
            repeated: 0,
        }
    }

    /// All counters, the hot ones included.
    pub(super) fn into_counts(mut self) -> BTreeMap<String, u64> {
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

    pub(super) fn bump(&mut self, name: &str, n: u64) {
        crate::util::count(&mut self.counts, name, n);
    }

    /// Empties the caches once they are full (between pages: a page's links hold indexes into
    /// `urls`), so their memory is bounded.
    pub(super) fn trim_caches(&mut self) {
        if self.urls.len() >= self.url_cache || self.interned.full() {
            self.joins.clear();
            self.interned.clear();
            self.urls.clear();
            self.canon_text.clear();
            self.slot.clear();
        } else if self.joins.full() {
            self.joins.clear();
        }
    }

    /// The index in `urls` of the absolute URL `url`, canonicalized when first met.
    pub(super) fn intern(&mut self, url: &str) -> u32 {
        self.intern_hashed(self.interned.hash(url), url, None)
    }

    /// [`Extractor::intern`] of `url`, whose hash in `interned` is `h`; `parsed` is `url`
    /// parsed already, if the caller has it (its serialization is `url`), so that a URL met
    /// for the first time is not parsed again to be canonicalized.
    fn intern_hashed(&mut self, h: Hash, url: &str, parsed: Option<Url>) -> u32 {
        if let Some(id) = self.interned.get(h, url) {
            return id;
        }
        let key = match parsed {
            Some(p) => {
                debug_assert_eq!(p.as_str(), url);
                self.canon.canonicalize_parsed(p)
            }
            None => self.canon.canonicalize(url, None),
        };
        let canon = key.ok().map(|k| {
            let at = self.canon_text.len();
            self.canon_text.push_str(&k.url);
            (at, k.url.len(), k.fingerprint, k.host_key)
        });
        let id = u32::try_from(self.urls.len()).expect("caches are cleared long before");
        let url = self.interned.insert(h, url, id).ok_or_else(|| url.into());
        self.urls.push(Interned { url, canon });
        id
    }

    /// The URL of `urls[id]` as joined.
    fn url_of(&self, id: u32) -> &str {
        match &self.urls[id as usize].url {
            Ok((at, len)) => self.interned.key(*at, *len),
            Err(url) => url,
        }
    }

    /// Appends the [`Extractor::joins`] key of `target` against `base` to `keys` and returns
    /// true, if the resolution can be cached. The result of resolving depends only on the
    /// target and its [`base_prefix`] unless the target is empty, starts with `?` or `#` (which
    /// keep the base's last path segment or query), or holds whitespace or control characters
    /// (which the URL parser strips or removes); keys longer than `JOIN_KEY_MAX` are not
    /// cached either.
    fn join_key(base: &Url, target: &str, keys: &mut String) -> bool {
        let cacheable = !target.is_empty()
            && !target.starts_with(['?', '#'])
            && target.bytes().all(|c| c > b' ');
        let Some(prefix) = cacheable.then(|| base_prefix(base, target)).flatten() else {
            return false;
        };
        if prefix.len() + 1 + target.len() > JOIN_KEY_MAX {
            return false;
        }
        keys.push_str(prefix);
        keys.push(' ');
        keys.push_str(target);
        true
    }

    /// What every link target of a page resolves to against `base`, in `resolved` (one per
    /// target, in order). Each distinct target is resolved once, and looked up in `joins` and
    /// `interned` in passes, so that the cache misses of the lookups overlap (the tables are
    /// too large for the CPU's caches, and a lookup was mostly two misses, one after the
    /// other).
    ///
    /// A resolution depends only on the target and its [`base_prefix`] unless the target is
    /// empty, starts with `?` or `#` (which keep the base's last path segment or query), or
    /// holds whitespace or control characters (which the URL parser strips or removes); all
    /// other targets are looked up in, or added to, `joins`.
    fn resolve_all(&mut self, base: &Url, raw: &[html::RawLink<'_>], resolved: &mut Vec<Resolved>) {
        // 1. The page's distinct targets: a target written again on the page (a third of them
        //    are) resolves as it did the first time. `seen` is an open-addressing table of (32
        //    bits of a target's hash, its index in `raw`), small enough to stay in cache.
        let mask = (2 * raw.len()).next_power_of_two().max(8) - 1;
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        seen.resize(mask + 1, (0, usize::MAX));
        let mut first = std::mem::take(&mut self.first);
        first.clear();
        let mut distinct = std::mem::take(&mut self.distinct);
        distinct.clear();
        for (j, l) in raw.iter().enumerate() {
            let h = xxhash_rust::xxh3::xxh3_64_with_seed(l.target.as_bytes(), self.seed);
            let tag = (h >> 32) as u32;
            let mut i = h as usize & mask;
            let f = loop {
                match seen[i] {
                    (_, usize::MAX) => {
                        seen[i] = (tag, j);
                        distinct.push((j, 0, 0, None));
                        break j;
                    }
                    (t, k) if t == tag && raw[k].target == l.target => break k,
                    _ => i = (i + 1) & mask,
                }
            };
            first.push(f);
        }
        // 2. Their `joins` keys and hashes; then the table's slots for them and the keys these
        //    point to, read in loops of loads that do not depend on one another (nor branch on
        //    what they read), so that their cache misses overlap.
        let mut keys = std::mem::take(&mut self.key);
        keys.clear();
        for d in distinct.iter_mut() {
            let at = keys.len();
            if Extractor::join_key(base, &raw[d.0].target, &mut keys) {
                *d = (d.0, at, keys.len(), Some(self.joins.hash(&keys[at..])));
            }
        }
        let mut sum = 0u32;
        for d in &distinct {
            sum = sum.wrapping_add(d.3.map_or(0, |h| self.joins.touch_slot(h)));
        }
        for d in &distinct {
            sum = sum.wrapping_add(d.3.map_or(0, |h| self.joins.touch_key(h)));
        }
        std::hint::black_box(sum);
        // 3. Looked up in `joins`; the others resolved by the URL parser (as a browser does,
        //    fragment removed), the http(s) URLs among them into `joined`.
        resolved.clear();
        resolved.resize(raw.len(), Resolved::Invalid);
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        let mut missed = std::mem::take(&mut self.missed);
        missed.clear();
        // The parsed URLs of the `Ok` entries of `missed`, in order: canonicalized from these
        // rather than parsed again from `joined` when first met.
        let mut parsed = std::mem::take(&mut self.parsed);
        parsed.clear();
        for (n, &(j, at, end, h)) in distinct.iter().enumerate() {
            if let Some(r) = h.and_then(|h| self.joins.get(h, &keys[at..end])) {
                resolved[j] = Resolved::from_u32(r);
                continue;
            }
            let r = match base.join(&raw[j].target) {
                Err(_) => Err(Resolved::Invalid),
                Ok(mut url) => {
                    url.set_fragment(None);
                    if matches!(url.scheme(), "http" | "https") {
                        let from = joined.len();
                        joined.push_str(url.as_str());
                        parsed.push(url);
                        Ok((from, joined.len(), self.interned.hash(&joined[from..])))
                    } else {
                        Err(Resolved::OtherScheme)
                    }
                }
            };
            missed.push((n, r));
        }
        // 4. The URLs interned, after loads of their slots in `interned` (as in 2.), and the
        //    results added to `joins`.
        let mut sum = 0u32;
        for (_, r) in &missed {
            sum = sum.wrapping_add(r.as_ref().map_or(0, |&(.., h)| self.interned.touch_slot(h)));
        }
        for (_, r) in &missed {
            sum = sum.wrapping_add(r.as_ref().map_or(0, |&(.., h)| self.interned.touch_key(h)));
        }
        std::hint::black_box(sum);
        let mut urls = parsed.drain(..);
        for &(n, r) in &missed {
            let r = match r {
                Ok((from, to, h)) => {
                    Resolved::Url(self.intern_hashed(h, &joined[from..to], urls.next()))
                }
                Err(r) => r,
            };
            let (j, at, end, h) = distinct[n];
            resolved[j] = r;
            if let Some(h) = h {
                let _ = self.joins.insert(h, &keys[at..end], r.to_u32());
            }
        }
        drop(urls);
        self.parsed = parsed;
        self.joined = joined;
        self.missed = missed;
        for (j, &f) in first.iter().enumerate() {
            resolved[j] = resolved[f];
        }
        self.key = keys;
        self.seen = seen;
        self.first = first;
        self.distinct = distinct;
    }

    /// Reads the first byte of the canonical URL of every `urls[id]` given. Their entries were
    /// last used pages ago and are rarely in the CPU's caches; these loads do not depend on one
    /// another, so their cache misses overlap here rather than come one by one in
    /// [`Extractor::emit`] (they were most of its time).
    fn warm(&self, ids: impl Iterator<Item = u32>) {
        let text = self.canon_text.as_bytes();
        let mut sum = 0u8;
        for id in ids {
            if let Some(&(at, ..)) = self.urls.get(id as usize).and_then(|u| u.canon.as_ref()) {
                sum = sum.wrapping_add(text.get(at).copied().unwrap_or(0));
            }
        }
        std::hint::black_box(sum);
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

    /// Parses one answered page: `head` and the decoded `body` of its response. Emits its links
    /// through `out` and returns its page record.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn page(
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
        if self.requisites && is_css(&content_type) {
            self.stylesheet(&mut page, body, depth, cash, out)?;
            return Ok(page);
        }
        if !is_html(&content_type) {
            return Ok(page);
        }
        self.bump("html_pages", 1);
        self.trim_caches();
        let enc = html::detect_charset(body, content_type_header);
        let mut text = std::mem::take(&mut self.text);
        let (decoded, orig) = html::decode_text(body, enc, &mut text);
        let mut found = html::scan_into(
            decoded,
            orig,
            html::recycle(std::mem::take(&mut self.raw)),
            self.requisites,
        );
        page.charset = enc.name().to_owned();
        page.title = found.title.clone().unwrap_or_default();
        let meta_robots = found.meta_robots.as_deref();
        page.meta_robots = [meta_robots, x_robots.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        let says =
            |d| html::has_directive(meta_robots, d) || html::has_directive(x_robots.as_deref(), d);
        page.noindex = says("noindex");
        page.nofollow = says("nofollow");
        // Resolve every target against the base, as `html::extract_links` does.
        let base_url = found.base(&doc_url);
        let base = base_url.as_ref().unwrap_or(&doc_url);
        let mut list = std::mem::take(&mut self.page_links);
        list.clear();
        let (mut invalid, mut schemes, mut canonical_seen) = (0, 0, false);
        let mut resolved = std::mem::take(&mut self.resolved);
        self.resolve_all(base, &found.raw, &mut resolved);
        for (l, &r) in found.raw.iter().zip(&resolved) {
            let canonical = !canonical_seen && l.canonical();
            canonical_seen |= canonical;
            let id = match r {
                Resolved::Invalid => {
                    invalid += 1;
                    continue;
                }
                Resolved::OtherScheme => {
                    schemes += 1;
                    continue;
                }
                Resolved::Url(id) => id,
            };
            if canonical {
                page.canonical = self.url_of(id).to_owned();
            }
            let requisite = self.requisites
                && (html::REQUISITE_TAGS.contains(&l.tag)
                    || (l.tag == "link" && l.rel.as_deref().is_some_and(html::is_requisite_rel)));
            let kind = if requisite {
                LinkKind::Requisite
            } else {
                LinkKind::of_tag(l.tag)
            };
            list.push((id, kind, l.nofollow()));
        }
        self.resolved = resolved;
        self.raw = html::recycle(std::mem::take(&mut found.raw));
        drop(found);
        self.text = text;
        page.outlinks = u32::try_from(list.len()).unwrap_or(u32::MAX);
        self.bump("links_skipped_scheme", schemes);
        self.bump("links_unusable", invalid);
        let n = list.iter().filter(|l| !l.2 && !page.nofollow).count();
        let share = if n > 0 { cash / n as f64 } else { 0.0 };
        // One record per target of the page: its occurrences' cash summed (a page repeats ~30-40%
        // of its links: menus, headers, "read more"), followed if any occurrence is. OPIC's
        // total is unchanged, and the sort behind has that much less to do.
        self.slot.resize(self.urls.len(), 0);
        let mut targets = std::mem::take(&mut self.targets);
        targets.clear();
        for &(id, kind, rel_nofollow) in &list {
            let follow = !rel_nofollow && !page.nofollow;
            let c = if follow { share } else { 0.0 };
            match self.slot[id as usize] {
                0 => {
                    targets.push((id, kind, follow, c));
                    self.slot[id as usize] = targets.len() as u32;
                }
                i => {
                    let t = &mut targets[i as usize - 1];
                    t.2 |= follow;
                    t.3 += c;
                    self.repeated += 1;
                }
            }
        }
        self.page_links = list;
        for t in &targets {
            self.slot[t.0 as usize] = 0;
        }
        self.warm(targets.iter().map(|t| t.0));
        for &(id, kind, follow, c) in &targets {
            let meta = LinkMeta {
                source: url,
                kind,
                nofollow: !follow,
                cash: c,
                // A requisite is part of its page: at its depth (depth limits do not cut a page
                // from its images and stylesheets).
                depth: if kind == LinkKind::Requisite {
                    depth
                } else {
                    depth.saturating_add(1)
                },
            };
            if self.emit(id, meta, out)? {
                if follow {
                    self.followed += 1;
                } else {
                    self.nofollow += 1;
                }
            }
        }
        self.targets = targets;
        Ok(page)
    }

    /// Requisites of a stylesheet (archive mode): every `url()` and `@import`, at the
    /// stylesheet's own depth, sharing its cash. Decoded as UTF-8 (a URL rarely needs more).
    pub(super) fn stylesheet(
        &mut self,
        page: &mut PageRecord,
        body: &[u8],
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<()> {
        self.bump("stylesheets", 1);
        let css = String::from_utf8_lossy(body);
        let mut targets = Vec::new();
        super::css::css_urls(&css, &mut |u| targets.push(u.into_owned()));
        let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
        // A stylesheet's imports and images are part of its pages: at its depth.
        self.shared_links(page, &targets, LinkKind::Requisite, depth, cash, out)
    }

    /// Links of `page` to `targets` (resolved against it), of `kind` at `depth`, sharing the
    /// page's `cash` equally, all followed: a sitemap's `<loc>`s, a stylesheet's URLs.
    fn shared_links(
        &mut self,
        page: &mut PageRecord,
        targets: &[&str],
        kind: LinkKind,
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<()> {
        page.outlinks = u32::try_from(targets.len()).unwrap_or(u32::MAX);
        let share = if targets.is_empty() {
            0.0
        } else {
            cash / targets.len() as f64
        };
        let base = Url::parse(&page.url).ok();
        let source = page.url.clone();
        for t in targets {
            let meta = LinkMeta {
                source: &source,
                kind,
                nofollow: false,
                cash: share,
                depth,
            };
            if self.link(t, base.as_ref(), meta, out)? {
                self.followed += 1;
            }
        }
        Ok(())
    }

    /// Links of a sitemap, sitemap index or RSS/Atom feed: every `<loc>` (capped at 50,000
    /// URLs and 50 MB decoded, as sitemaps.org says, so a sitemap flood cannot swamp a host)
    /// shares the document's cash.
    pub(super) fn sitemap(
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
        self.shared_links(
            page,
            &locs,
            LinkKind::Sitemap,
            depth.saturating_add(1),
            cash,
            out,
        )
    }

    /// Decodes the HTTP response in `plain` (the plain bytes of one WARC record) and returns its
    /// head and payload, decoded and capped at `max_decoded`: borrowed from `plain` if the
    /// payload has no codings (`Some`), else decoded into `body` (`None`).
    pub(super) fn response<'p>(
        &self,
        plain: &'p [u8],
        path: &dyn Fn() -> PathBuf,
        body: &mut Vec<u8>,
    ) -> Result<Option<Response<'p>>> {
        body.clear();
        let opts = ReaderOptions::default();
        let Some(rec) = MemRecord::parse(plain, &opts) else {
            // Not the usual shape: the streaming reader decides (and reports any corruption).
            let mut rd = WarcReader::new(plain, path(), opts)?;
            let Some(mut rec) = rd.next_record()? else {
                return Ok(None);
            };
            if rec.header().record_type() != RecordType::Response || !rec.header().is_http() {
                return Ok(None);
            }
            let Ok(head) = rec.http_head() else {
                return Ok(None);
            };
            if let Ok(mut r) = rec.http_payload(&head, self.max_decoded) {
                // A body that stops decoding (truncated gzip, cap) still yields what it has.
                let _ = r.read_to_end(body);
            }
            return Ok(Some((head, None)));
        };
        if rec.record_type() != RecordType::Response || !rec.is_http() {
            return Ok(None);
        }
        let mut block = rec.block();
        let Ok(head) = http::read_head(&mut block, http::DEFAULT_MAX_HEAD) else {
            return Ok(None);
        };
        let rest = block.rest();
        let payload = payload(self.max_decoded, &head, rest, block, body);
        Ok(Some((head, payload)))
    }
}

/// The decoded payload of a response with HTTP head `head`, of which `rest` are the bytes
/// after the head (and `reader` reads them), at most `max_decoded` bytes: a slice of `rest`
/// when it has no content or transfer coding, else `None` and the decoded bytes in `body` (as
/// much as decodes: a truncated gzip member or a cut body still yields what it has).
pub(super) fn payload<'p>(
    max_decoded: u64,
    head: &HttpHead,
    rest: &'p [u8],
    reader: impl std::io::BufRead + 'p,
    body: &mut Vec<u8>,
) -> Option<&'p [u8]> {
    if head.codings().is_empty() {
        // What the capped payload reader would copy out.
        let cap = usize::try_from(max_decoded).unwrap_or(usize::MAX);
        return Some(&rest[..rest.len().min(cap)]);
    }
    if let Ok(mut r) = http::payload_reader(head, reader, max_decoded) {
        let _ = r.read_to_end(body);
    }
    None
}
