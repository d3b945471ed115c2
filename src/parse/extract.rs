//! The extraction shared by `dragnet parse` and `dragnet reparse` ([`super::stage`]): one HTTP
//! response in, a page record and its links out, with the caches that make a site's repeated
//! navigation cheap (resolved targets by base prefix, canonical forms by absolute URL), bounded
//! by clearing them when full.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;

use url::Url;

use super::html;
use super::records::{LinkKind, LinkRecord, PageRecord};
use crate::crawl::Config;
use crate::error::Result;
use crate::keys::Canonicalizer;
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

/// xxh3 of a key's bytes in one call, seeded per process (the keys come from web pages): the
/// extractor's maps are looked up once or twice per link, and SipHash showed in the profile.
#[derive(Clone, Copy)]
pub(super) struct SeededXxh3(u64);

impl SeededXxh3 {
    pub(super) fn new() -> SeededXxh3 {
        SeededXxh3(std::collections::hash_map::RandomState::new().hash_one(0u64))
    }
}

impl BuildHasher for SeededXxh3 {
    type Hasher = Xxh3Hasher;
    fn build_hasher(&self) -> Xxh3Hasher {
        Xxh3Hasher(self.0)
    }
}

pub(super) struct Xxh3Hasher(u64);

impl Hasher for Xxh3Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    fn write_u8(&mut self, b: u8) {
        // The terminator `str` hashes after its bytes.
        self.0 = self.0.rotate_left(8) ^ u64::from(b);
    }
    fn finish(&self) -> u64 {
        self.0
    }
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

/// An absolute URL the extractor has met, and its canonical form.
pub(super) struct Interned {
    /// As joined (fragment removed) or as given.
    url: String,
    /// Canonical URL, fingerprint and host key; `None` if it cannot be crawled.
    canon: Option<(String, u64, u64)>,
}

/// The extraction shared by parse and reparse: one page in, a page record and links out.
pub(super) struct Extractor {
    pub(super) canon: Canonicalizer,
    pub(super) max_decoded: u64,
    pub(super) counts: BTreeMap<String, u64>,
    /// Resolved link targets, keyed by the part of the base URL a target's resolution depends
    /// on (up to the last `/` of its path), a space and the target as written. A site's
    /// navigation repeats on every page, and resolving (a URL parse) then canonicalizing (two
    /// or more) was the largest cost per link; with this, a repeated link costs one lookup.
    joins: HashMap<String, Resolved, SeededXxh3>,
    /// Absolute URLs met (as joined, or redirect targets as given) -> index in `urls`.
    interned: HashMap<String, u32, SeededXxh3>,
    urls: Vec<Interned>,
    /// Per URL in `urls`: 1 + its index among the current page's targets, 0 if not on it.
    slot: Vec<u32>,
    /// Reused buffers: a cache key, a decoded document, a decoded body, a page's links.
    key: String,
    text: String,
    pub(super) body: Vec<u8>,
    page_links: Vec<(u32, LinkKind, bool)>,
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

/// Entries of [`Extractor::urls`] before all caches are cleared (~250 bytes each, both maps
/// included). On the 200 x 250 websim corpus a parse meets 52k distinct URLs.
pub(super) const URL_CACHE: usize = 1 << 16;

/// Entries of [`Extractor::joins`] before it is cleared (~130 bytes each). The same corpus has
/// 213k distinct (base prefix, target) pairs (a site's relative links are written from several
/// directories), so this cap clears it about six times a run; a cap of 2^18 took as much CPU
/// within the benchmark's noise (4.4 vs 4.3 CPU-s) and raised parse's peak RSS from 153 to
/// 251 MiB.
pub(super) const JOIN_CACHE: usize = 1 << 16;

/// The part of `base` that resolving `target` against it depends on, for a target that is not
/// empty and starts with neither `?` nor `#` (see [`Extractor::resolve`]): nothing for an
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
    pub(super) fn new(cfg: &Config) -> Extractor {
        Extractor {
            canon: Canonicalizer::new(&cfg.canon),
            max_decoded: cfg.fetch.max_decoded.0,
            counts: BTreeMap::new(),
            joins: HashMap::with_hasher(SeededXxh3::new()),
            interned: HashMap::with_hasher(SeededXxh3::new()),
            urls: Vec::new(),
            slot: Vec::new(),
            key: String::new(),
            text: String::new(),
            body: Vec::new(),
            page_links: Vec::new(),
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
        if self.urls.len() >= URL_CACHE {
            self.joins.clear();
            self.interned.clear();
            self.urls.clear();
            self.slot.clear();
        } else if self.joins.len() >= JOIN_CACHE {
            self.joins.clear();
        }
    }

    /// The index in `urls` of the absolute URL `url`, canonicalized when first met.
    pub(super) fn intern(&mut self, url: &str) -> u32 {
        if let Some(&id) = self.interned.get(url) {
            return id;
        }
        let canon = self
            .canon
            .canonicalize(url, None)
            .ok()
            .map(|k| (k.url, k.fingerprint, k.host_key));
        let id = u32::try_from(self.urls.len()).expect("caches are cleared long before");
        self.urls.push(Interned {
            url: url.to_owned(),
            canon,
        });
        self.interned.insert(url.to_owned(), id);
        id
    }

    /// Resolves `target` against `base` as a browser does, fragment removed. The result depends
    /// only on the target and its [`base_prefix`] unless the target is empty, starts with `?`
    /// or `#` (which keep the base's last path segment or query), or holds whitespace or
    /// control characters (which the URL parser strips or removes); all other targets are
    /// looked up in, or added to, `joins`.
    pub(super) fn resolve(&mut self, base: &Url, target: &str) -> Resolved {
        let cacheable = !target.is_empty()
            && !target.starts_with(['?', '#'])
            && target.bytes().all(|c| c > b' ');
        let cached = if cacheable {
            base_prefix(base, target)
        } else {
            None
        };
        if let Some(prefix) = cached {
            self.key.clear();
            self.key.push_str(prefix);
            self.key.push(' ');
            self.key.push_str(target);
            if let Some(&r) = self.joins.get(self.key.as_str()) {
                return r;
            }
        }
        let r = match base.join(target) {
            Err(_) => Resolved::Invalid,
            Ok(mut url) => {
                url.set_fragment(None);
                if matches!(url.scheme(), "http" | "https") {
                    Resolved::Url(self.intern(url.as_str()))
                } else {
                    Resolved::OtherScheme
                }
            }
        };
        if cached.is_some() {
            self.joins.insert(self.key.clone(), r);
        }
        r
    }

    /// Hands the encoded [`LinkRecord`] of a link to `urls[id]` to `out`, keyed by the
    /// target's (host key, fingerprint); false (and counted) if it cannot be crawled.
    pub(super) fn emit(&mut self, id: u32, meta: LinkMeta<'_>, out: &mut Emit<'_>) -> Result<bool> {
        let Some((url, fp, hk)) = &self.urls[id as usize].canon else {
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
        if !is_html(&content_type) {
            return Ok(page);
        }
        self.bump("html_pages", 1);
        self.trim_caches();
        let enc = html::detect_charset(body, content_type_header);
        let mut text = std::mem::take(&mut self.text);
        let (decoded, orig) = html::decode_text(body, enc, &mut text);
        let found = html::scan(decoded, orig);
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
        for l in &found.raw {
            let canonical = !canonical_seen && l.canonical();
            canonical_seen |= canonical;
            let id = match self.resolve(base, &l.target) {
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
                page.canonical = self.urls[id as usize].url.clone();
            }
            list.push((id, LinkKind::of_tag(l.tag), l.nofollow()));
        }
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
        let mut targets: Vec<(u32, LinkKind, bool, f64)> = Vec::with_capacity(list.len());
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
        for (id, kind, follow, c) in targets {
            let meta = LinkMeta {
                source: url,
                kind,
                nofollow: !follow,
                cash: c,
                depth: depth.saturating_add(1),
            };
            if self.emit(id, meta, out)? {
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
        if rec.header().record_type() != RecordType::Response || !rec.header().is_http() {
            return Ok(None);
        }
        let mut block = rec.block();
        let Ok(head) = http::read_head(&mut block, http::DEFAULT_MAX_HEAD) else {
            return Ok(None);
        };
        if head.codings().is_empty() {
            // What the capped payload reader would copy out.
            let rest = block.rest();
            let cap = usize::try_from(self.max_decoded).unwrap_or(usize::MAX);
            return Ok(Some((head, Some(&rest[..rest.len().min(cap)]))));
        }
        if let Ok(mut r) = http::payload_reader(&head, block, self.max_decoded) {
            let _ = r.read_to_end(body);
        }
        Ok(Some((head, None)))
    }
}
