//! Sitemaps and feeds: a streaming parser for `<urlset>` and `<sitemapindex>` documents
//! ([sitemaps.org](https://www.sitemaps.org/protocol.html)), RSS 2.0 / RSS 1.0 and Atom feeds.
//!
//! [`parse`] turns the bytes of one fetched document into a [`Sitemap`]: the page URLs it lists
//! ([`Sitemap::urls`]) and, for an index, the child sitemaps ([`Sitemap::sitemaps`]).
//!
//! # Choices
//!
//! - **Streaming, no DOM.** The document is read with `quick-xml`'s pull [`Reader`] straight over
//!   the byte slice; the parser keeps one byte per open element (what kind of element it is) and
//!   the entry being built, nothing else. Memory is the output plus a decompressed and/or a
//!   transcoded copy of the input when one is needed, each at most about `max_bytes`.
//! - **Never fails, never panics.** Sitemaps in the wild are often broken: cut off by a
//!   proxy, hand-edited, served as HTML. Whatever was parsed before the damage is kept and
//!   [`Sitemap::error`] says what went wrong and where (a byte offset into the decoded
//!   document). Only *complete* entries are kept: an `<url>` whose `</url>` never came is
//!   dropped, so a cut-off document never yields a half-read URL or a `lastmod` from the wrong
//!   entry.
//! - **Several root elements.** XML allows one root, but some generators concatenate documents
//!   (a `<urlset>` followed by a `<sitemapindex>`). The reader does not stop after the first
//!   root: entries are collected from all of them. The *first* root decides [`Sitemap::kind`],
//!   and [`Sitemap::error`] notes that the document is not well-formed.
//! - **Where entries are recognised.** An `<url>` counts only as a direct child of a
//!   `<urlset>`, and a `<sitemap>` only as a direct child of a `<sitemapindex>`, which is what
//!   the sitemaps.org schema and lxml's `root.findall(...)` see (an `<url>` inside a
//!   `<sitemapindex>` or a `<sitemap>` inside a `<urlset>` is ignored). Feed entries (`<item>`,
//!   `<entry>`) are recognised at any depth, because RSS 2.0 nests them in `<channel>` and
//!   RSS 1.0 puts them beside it. Entries never nest: inside an entry, only its direct children
//!   are read (`<loc>`, `<lastmod>`, ...); the first occurrence of each wins.
//! - **Names.** Elements and attributes are matched by *local* name (namespace prefixes such as
//!   `xhtml:`, `atom:` or `dc:` and the namespace URIs are ignored), ASCII case-insensitively,
//!   so that sloppy generators (`<URL>`, `<pubdate>`) still work.
//! - **Text.** Text and CDATA inside an element are concatenated, entities are unescaped with
//!   `quick-xml`'s [`unescape`] (the five XML entities and character references; an unknown
//!   entity such as `&nbsp;` is kept as written rather than failing the document), and the
//!   result is trimmed of surrounding whitespace. An empty value counts as absent. Values are
//!   returned as written: URLs are not resolved against a base or normalised here, and dates
//!   are not parsed; `priority` is parsed as a finite `f64` (otherwise `None`).
//! - **Feeds.** RSS `<item>`: `loc` is the text of `<link>` (or, failing that, the `href` of an
//!   `<atom:link>`, or a `<guid>` that is a permalink and an `http(s)` URL); `lastmod` is
//!   `<pubDate>` or `<dc:date>`. Atom `<entry>`: `loc` is the `href` of the first `<link>`
//!   whose `rel` is absent or `alternate`; `lastmod` is `<updated>`, or `<published>`.
//! - **Alternates.** `<xhtml:link rel="alternate" hreflang=".." href=".."/>` children of an
//!   `<url>` become [`UrlEntry::alternates`] (an `href` is required, `hreflang` may be empty).
//! - **Limits** ([`Limits`], by default those of sitemaps.org: 50,000 URLs and 50 MB). A
//!   document starting with the gzip magic bytes is decompressed first
//!   ([`MultiGzDecoder`]), reading at most `max_bytes` decoded bytes, so a gzip bomb costs at
//!   most `max_bytes` of memory; an uncompressed document longer than `max_bytes` is cut to
//!   that length too. Either way [`Sitemap::truncated`] is set and [`Sitemap::error`] says so.
//!   `max_urls` bounds [`Sitemap::urls`] and, separately, [`Sitemap::sitemaps`] (sitemaps.org
//!   allows 50,000 of each); entries beyond it are dropped and `truncated` is set.
//! - **Encodings.** Sitemaps must be UTF-8, and the document is read as UTF-8 (invalid
//!   sequences become U+FFFD) unless a UTF-16 byte order mark or the XML declaration's
//!   `encoding="..."` names another encoding, in which case it is transcoded with `encoding_rs`
//!   first (byte offsets in errors then refer to the transcoded text).

use std::borrow::Cow;
use std::io::Read;

use flate2::read::MultiGzDecoder;
use quick_xml::escape::unescape;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use serde::Serialize;

/// Bounds on what one document may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many entries in [`Sitemap::urls`], and as many in [`Sitemap::sitemaps`];
    /// later ones are dropped and [`Sitemap::truncated`] is set.
    pub max_urls: usize,
    /// At most this many bytes of the document are parsed: decoded bytes for a gzipped
    /// document, raw bytes otherwise.
    pub max_bytes: u64,
}

impl Default for Limits {
    /// The sitemaps.org limits: 50,000 URLs and 50 MB (52,428,800 bytes) uncompressed.
    fn default() -> Self {
        Limits {
            max_urls: 50_000,
            max_bytes: 52_428_800,
        }
    }
}

/// What kind of document this was, decided by its first root element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// `<urlset>`: a sitemap listing pages.
    Urlset,
    /// `<sitemapindex>`: a sitemap listing other sitemaps.
    SitemapIndex,
    /// `<rss>` (RSS 0.9x/2.0) or `<rdf:RDF>` (RSS 1.0).
    Rss,
    /// `<feed>`: an Atom feed.
    Atom,
    /// Any other root element, or no root element at all.
    Unknown,
}

/// The result of [`parse`]: everything found in one document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sitemap {
    /// The kind of the first root element.
    pub kind: Kind,
    /// Pages: `<url>` entries of a `<urlset>`, RSS `<item>`s and Atom `<entry>`s, in document
    /// order.
    pub urls: Vec<UrlEntry>,
    /// Child sitemaps: `<sitemap>` entries of a `<sitemapindex>`, in document order.
    pub sitemaps: Vec<SitemapRef>,
    /// Some of the document was not read or some entries were dropped because of [`Limits`].
    pub truncated: bool,
    /// What went wrong, if anything: the document is not well-formed XML (with the byte
    /// offset), ends inside an element, is a damaged gzip stream, or was cut at
    /// [`Limits::max_bytes`]. Several problems are joined with `"; "`.
    pub error: Option<String>,
}

/// One page listed by a sitemap or feed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UrlEntry {
    /// The URL as written (`<loc>`, RSS `<link>`, Atom `<link href>`); never empty.
    pub loc: String,
    /// `<lastmod>` (RSS: `<pubDate>`; Atom: `<updated>`), as written.
    pub lastmod: Option<String>,
    /// `<changefreq>`, as written.
    pub changefreq: Option<String>,
    /// `<priority>` if it is a finite number.
    pub priority: Option<f64>,
    /// `<xhtml:link rel="alternate">` language versions of this page, in document order.
    pub alternates: Vec<Alternate>,
}

/// A language version of a page: `<xhtml:link rel="alternate" hreflang=".." href=".."/>`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alternate {
    /// The `hreflang` attribute (may be empty when the document omits it).
    pub hreflang: String,
    /// The `href` attribute; never empty.
    pub href: String,
}

/// One child sitemap listed by a `<sitemapindex>`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SitemapRef {
    /// `<loc>` as written; never empty.
    pub loc: String,
    /// `<lastmod>` as written.
    pub lastmod: Option<String>,
}

/// Parses a sitemap, sitemap index, RSS or Atom feed, gzipped or not. Never fails: see the
/// [module documentation](self) for what is kept from a damaged document.
pub fn parse(bytes: &[u8], limits: &Limits) -> Sitemap {
    let mut out = Sitemap {
        kind: Kind::Unknown,
        urls: Vec::new(),
        sitemaps: Vec::new(),
        truncated: false,
        error: None,
    };
    let mut problems = Vec::new();
    let max_bytes = limits.max_bytes;

    let decoded: Cow<'_, [u8]> = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut buf = Vec::new();
        let mut reader = MultiGzDecoder::new(bytes).take(max_bytes.saturating_add(1));
        // On an error, read_to_end leaves what was decoded before it in `buf`.
        if let Err(e) = reader.read_to_end(&mut buf) {
            problems.push(format!(
                "gzip: {e} after {} decoded bytes; parsed what came before",
                buf.len()
            ));
        }
        if buf.len() as u64 > max_bytes {
            buf.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
            out.truncated = true;
            problems.push(format!(
                "gzip: decoded size exceeds max_bytes ({max_bytes}); parsed the first {max_bytes} bytes"
            ));
        }
        Cow::Owned(buf)
    } else if bytes.len() as u64 > max_bytes {
        out.truncated = true;
        problems.push(format!(
            "document of {} bytes exceeds max_bytes ({max_bytes}); parsed the first {max_bytes} bytes",
            bytes.len()
        ));
        let keep = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        Cow::Borrowed(&bytes[..keep.min(bytes.len())])
    } else {
        Cow::Borrowed(bytes)
    };

    let text = to_utf8(&decoded);
    let mut parser = Parser {
        limits,
        out: &mut out,
        stack: Vec::new(),
        entry: None,
        field: None,
        roots: 0,
        problems,
    };
    parser.run(&text);
    let problems = parser.problems;
    if !problems.is_empty() {
        out.error = Some(problems.join("; "));
    }
    out
}

/// Returns the document as UTF-8 bytes: as is (less a UTF-8 BOM) unless a UTF-16 BOM or the XML
/// declaration names another encoding.
fn to_utf8(bytes: &[u8]) -> Cow<'_, [u8]> {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let rest = bytes.get(bom_len..).unwrap_or_default();
        if encoding == encoding_rs::UTF_8 {
            return Cow::Borrowed(rest);
        }
        let (text, _) = encoding.decode_without_bom_handling(rest);
        return Cow::Owned(text.into_owned().into_bytes());
    }
    let Some(label) = declared_encoding(bytes) else {
        return Cow::Borrowed(bytes);
    };
    // `output_encoding` maps UTF-16 to UTF-8: a declaration readable as ASCII cannot be UTF-16.
    match encoding_rs::Encoding::for_label(label).map(|e| e.output_encoding()) {
        Some(encoding) if encoding != encoding_rs::UTF_8 => {
            let (text, _) = encoding.decode_without_bom_handling(bytes);
            Cow::Owned(text.into_owned().into_bytes())
        }
        _ => Cow::Borrowed(bytes),
    }
}

/// The `encoding="..."` label of an XML declaration at the very start of `bytes`.
fn declared_encoding(bytes: &[u8]) -> Option<&[u8]> {
    let head = bytes.get(..bytes.len().min(512))?;
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = find(head, b"?>")?;
    let decl = &head[..end];
    let at = find(decl, b"encoding")? + b"encoding".len();
    let rest = decl[at..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let (&quote, rest) = rest.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let close = rest.iter().position(|&b| b == quote)?;
    Some(&rest[..close])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What an open element is, as far as the parser cares (one byte per open element).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Urlset,
    SitemapIndex,
    Other,
}

/// What entry is being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Url,
    Sitemap,
    RssItem,
    AtomEntry,
}

/// Which child of an entry is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    Lastmod,
    Changefreq,
    Priority,
    /// RSS `<link>`.
    Link,
    /// RSS `<guid>`; `true` if it may be a permalink.
    Guid(bool),
    /// RSS `<pubDate>`.
    PubDate,
    /// `<dc:date>`.
    DcDate,
    /// Atom `<updated>`.
    Updated,
    /// Atom `<published>`.
    Published,
}

/// The entry being built: the values of its direct children, first occurrence wins.
#[derive(Debug)]
struct Entry {
    kind: EntryKind,
    /// The depth of the entry element (its index in the element stack).
    depth: usize,
    loc: Option<String>,
    lastmod: Option<String>,
    changefreq: Option<String>,
    priority: Option<String>,
    alternates: Vec<Alternate>,
    /// RSS/Atom values that become `loc` or `lastmod` when the entry ends.
    link: Option<String>,
    link_href: Option<String>,
    guid: Option<String>,
    pub_date: Option<String>,
    dc_date: Option<String>,
    updated: Option<String>,
    published: Option<String>,
}

impl Entry {
    fn new(kind: EntryKind, depth: usize) -> Self {
        Entry {
            kind,
            depth,
            loc: None,
            lastmod: None,
            changefreq: None,
            priority: None,
            alternates: Vec::new(),
            link: None,
            link_href: None,
            guid: None,
            pub_date: None,
            dc_date: None,
            updated: None,
            published: None,
        }
    }

    fn slot(&mut self, field: Field) -> &mut Option<String> {
        match field {
            Field::Loc => &mut self.loc,
            Field::Lastmod => &mut self.lastmod,
            Field::Changefreq => &mut self.changefreq,
            Field::Priority => &mut self.priority,
            Field::Link => &mut self.link,
            Field::Guid(_) => &mut self.guid,
            Field::PubDate => &mut self.pub_date,
            Field::DcDate => &mut self.dc_date,
            Field::Updated => &mut self.updated,
            Field::Published => &mut self.published,
        }
    }
}

struct Parser<'a> {
    limits: &'a Limits,
    out: &'a mut Sitemap,
    stack: Vec<Tag>,
    entry: Option<Entry>,
    /// The field being read, its depth, and the text so far.
    field: Option<(Field, usize, String)>,
    /// Root elements seen so far.
    roots: usize,
    /// What went wrong, for [`Sitemap::error`].
    problems: Vec<String>,
}

impl Parser<'_> {
    /// Reads the whole document, up to the first XML error.
    fn run(&mut self, text: &[u8]) {
        let mut reader = Reader::from_reader(text);
        {
            let config = reader.config_mut();
            config.check_end_names = true;
            config.expand_empty_elements = false;
            config.trim_text(false);
        }
        loop {
            let at = reader.buffer_position();
            match reader.read_event() {
                Ok(Event::Start(e)) => self.start(&e, false, at),
                Ok(Event::Empty(e)) => self.start(&e, true, at),
                Ok(Event::End(_)) => self.end(),
                Ok(Event::Text(t)) => self.text(&t.into_inner(), true),
                Ok(Event::CData(t)) => self.text(&t.into_inner(), false),
                Ok(Event::Eof) => {
                    if self.roots == 0 {
                        self.problems.push("xml: no root element".to_owned());
                    } else if !self.stack.is_empty() {
                        self.problems.push(format!(
                            "xml: unexpected end of document at byte {} with {} element(s) \
                             still open; incomplete entries dropped",
                            reader.buffer_position(),
                            self.stack.len()
                        ));
                    }
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    self.problems.push(format!(
                        "xml: {e} at byte {}; kept the entries before it",
                        reader.error_position()
                    ));
                    return;
                }
            }
        }
    }

    /// An element starts at byte `at` (`empty`: `<x/>`).
    fn start(&mut self, e: &BytesStart<'_>, empty: bool, at: u64) {
        let name = e.local_name();
        let name = name.as_ref();
        let depth = self.stack.len();
        let parent = self.stack.last().copied();
        let mut tag = Tag::Other;

        if depth == 0 {
            let kind = if name.eq_ignore_ascii_case(b"urlset") {
                tag = Tag::Urlset;
                Kind::Urlset
            } else if name.eq_ignore_ascii_case(b"sitemapindex") {
                tag = Tag::SitemapIndex;
                Kind::SitemapIndex
            } else if name.eq_ignore_ascii_case(b"rss") || name.eq_ignore_ascii_case(b"rdf") {
                Kind::Rss
            } else if name.eq_ignore_ascii_case(b"feed") {
                Kind::Atom
            } else {
                Kind::Unknown
            };
            if self.roots == 0 {
                self.out.kind = kind;
            } else if self.roots == 1 {
                self.problems.push(format!(
                    "xml: not well-formed: a second root element <{}> at byte {at} (read anyway)",
                    String::from_utf8_lossy(e.name().as_ref())
                ));
            }
            self.roots += 1;
        } else if let Some(entry) = &mut self.entry {
            if depth == entry.depth + 1 && self.field.is_none() {
                if name.eq_ignore_ascii_case(b"link") {
                    link_element(entry, e);
                }
                if let Some(field) = field_of(entry.kind, name, e) {
                    if empty {
                        // `<loc/>`: present but empty, i.e. absent.
                    } else {
                        self.field = Some((field, depth, String::new()));
                    }
                }
            }
        } else {
            let kind = if name.eq_ignore_ascii_case(b"url") && parent == Some(Tag::Urlset) {
                Some(EntryKind::Url)
            } else if name.eq_ignore_ascii_case(b"sitemap") && parent == Some(Tag::SitemapIndex) {
                Some(EntryKind::Sitemap)
            } else if name.eq_ignore_ascii_case(b"item") {
                Some(EntryKind::RssItem)
            } else if name.eq_ignore_ascii_case(b"entry") {
                Some(EntryKind::AtomEntry)
            } else {
                None
            };
            // An empty `<url/>` has no `<loc>`: nothing to record.
            if let (Some(kind), false) = (kind, empty) {
                self.entry = Some(Entry::new(kind, depth));
            }
        }

        if !empty {
            self.stack.push(tag);
        }
    }

    fn end(&mut self) {
        // With `check_end_names`, quick-xml reports an unmatched end tag as an error, so the
        // stack is never empty here; `pop` on an empty stack would be harmless anyway.
        self.stack.pop();
        let depth = self.stack.len();
        if let Some((field, field_depth, _)) = &self.field {
            if *field_depth == depth {
                let field = *field;
                if let Some((_, _, value)) = self.field.take() {
                    // A `<guid isPermaLink="false">` is never a `loc`.
                    if let (Some(entry), false) = (&mut self.entry, field == Field::Guid(false)) {
                        let slot = entry.slot(field);
                        let value = value.trim();
                        if slot.is_none() && !value.is_empty() {
                            *slot = Some(value.to_owned());
                        }
                    }
                }
            }
        }
        if self
            .entry
            .as_ref()
            .is_some_and(|entry| entry.depth == depth)
        {
            if let Some(entry) = self.entry.take() {
                self.finish(entry);
            }
        }
    }

    fn text(&mut self, raw: &[u8], escaped: bool) {
        let Some((_, _, value)) = &mut self.field else {
            return;
        };
        let raw = String::from_utf8_lossy(raw);
        if escaped {
            value.push_str(&unescape_lenient(&raw));
        } else {
            value.push_str(&raw);
        }
    }

    fn finish(&mut self, entry: Entry) {
        match entry.kind {
            EntryKind::Url => {
                let Some(loc) = entry.loc else { return };
                let priority = entry
                    .priority
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| p.is_finite());
                self.push_url(UrlEntry {
                    loc,
                    lastmod: entry.lastmod,
                    changefreq: entry.changefreq,
                    priority,
                    alternates: entry.alternates,
                });
            }
            EntryKind::Sitemap => {
                let Some(loc) = entry.loc else { return };
                if self.out.sitemaps.len() < self.limits.max_urls {
                    self.out.sitemaps.push(SitemapRef {
                        loc,
                        lastmod: entry.lastmod,
                    });
                } else {
                    self.out.truncated = true;
                }
            }
            EntryKind::RssItem => {
                let guid = entry.guid.filter(|g| is_http_url(g));
                let Some(loc) = entry.link.or(entry.link_href).or(guid) else {
                    return;
                };
                self.push_url(UrlEntry {
                    loc,
                    lastmod: entry.pub_date.or(entry.dc_date),
                    changefreq: None,
                    priority: None,
                    alternates: Vec::new(),
                });
            }
            EntryKind::AtomEntry => {
                let Some(loc) = entry.link_href else { return };
                self.push_url(UrlEntry {
                    loc,
                    lastmod: entry.updated.or(entry.published),
                    changefreq: None,
                    priority: None,
                    alternates: Vec::new(),
                });
            }
        }
    }

    fn push_url(&mut self, url: UrlEntry) {
        if self.out.urls.len() < self.limits.max_urls {
            self.out.urls.push(url);
        } else {
            self.out.truncated = true;
        }
    }
}

/// Whether `s` starts with `http://` or `https://` (ASCII case-insensitive).
fn is_http_url(s: &str) -> bool {
    let b = s.as_bytes();
    let starts = |p: &[u8]| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p);
    starts(b"http://") || starts(b"https://")
}

/// The field a direct child named `name` of an entry of `kind` fills, if any.
fn field_of(kind: EntryKind, name: &[u8], e: &BytesStart<'_>) -> Option<Field> {
    let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
    match kind {
        EntryKind::Url | EntryKind::Sitemap if is("loc") => Some(Field::Loc),
        EntryKind::Url | EntryKind::Sitemap if is("lastmod") => Some(Field::Lastmod),
        EntryKind::Url if is("changefreq") => Some(Field::Changefreq),
        EntryKind::Url if is("priority") => Some(Field::Priority),
        EntryKind::RssItem if is("link") => Some(Field::Link),
        EntryKind::RssItem if is("guid") => {
            let permalink =
                attribute(e, "ispermalink").is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
            Some(Field::Guid(permalink))
        }
        EntryKind::RssItem if is("pubdate") => Some(Field::PubDate),
        EntryKind::RssItem if is("date") => Some(Field::DcDate),
        EntryKind::AtomEntry if is("updated") => Some(Field::Updated),
        EntryKind::AtomEntry if is("published") => Some(Field::Published),
        _ => None,
    }
}

/// A `<link>` direct child of an entry: an `<xhtml:link rel="alternate">` of an `<url>`, the
/// `href` of an Atom `<link>` (or of an `<atom:link>` in an RSS item).
fn link_element(entry: &mut Entry, e: &BytesStart<'_>) {
    let Some(href) = attribute(e, "href").map(|h| h.trim().to_owned()) else {
        return;
    };
    if href.is_empty() {
        return;
    }
    let rel = attribute(e, "rel");
    let rel_alternate = rel
        .as_deref()
        .is_none_or(|r| r.trim().eq_ignore_ascii_case("alternate"));
    match entry.kind {
        EntryKind::Url => {
            if rel.is_some() && rel_alternate {
                let hreflang = attribute(e, "hreflang").unwrap_or_default();
                entry.alternates.push(Alternate {
                    hreflang: hreflang.trim().to_owned(),
                    href,
                });
            }
        }
        EntryKind::AtomEntry | EntryKind::RssItem => {
            if rel_alternate && entry.link_href.is_none() {
                entry.link_href = Some(href);
            }
        }
        EntryKind::Sitemap => {}
    }
}

/// The unescaped value of the attribute with local name `name` (ASCII case-insensitive).
/// Lenient: unquoted values and duplicates are accepted, and a malformed attribute list is read
/// up to the damage.
fn attribute(e: &BytesStart<'_>, name: &str) -> Option<String> {
    let mut attrs = e.html_attributes();
    attrs.with_checks(false);
    for attr in attrs {
        let Ok(attr) = attr else { break };
        if attr
            .key
            .local_name()
            .as_ref()
            .eq_ignore_ascii_case(name.as_bytes())
        {
            let raw = String::from_utf8_lossy(&attr.value);
            return Some(unescape_lenient(&raw).into_owned());
        }
    }
    None
}

/// `quick-xml`'s [`unescape`], except that a reference it cannot resolve (`&nbsp;`, a stray
/// `&`) is kept as written instead of failing the whole text.
fn unescape_lenient(raw: &str) -> Cow<'_, str> {
    if let Ok(text) = unescape(raw) {
        return text;
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        // A reference is `&name;` with a short name; try it on its own.
        let resolved = tail
            .char_indices()
            .take(40)
            .find(|&(_, c)| c == ';')
            .and_then(|(semi, _)| {
                let reference = &tail[..=semi];
                unescape(reference).ok().map(|text| (text, semi + 1))
            });
        match resolved {
            Some((text, len)) => {
                out.push_str(&text);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
