//! Link extraction and charset detection for HTML documents.
//!
//! Why this shape: the parse stage needs only outlinks and a few page-level signals (base,
//! canonical, meta robots, title), so no tree is built. `Tokenizer` is the HTML standard's
//! tokenizer reduced to tags (text, comments and doctypes are skipped by the standard's rules),
//! and [`extract_links`] adds the few pieces of tree construction that decide whether a tag is an
//! HTML element of the document: raw-text and RCDATA elements, `<template>` contents, SVG and
//! MathML, `<select>`. Both are single linear passes over the decoded text; a document cut off
//! by a byte limit yields what precedes the cut. Character references in attribute values are
//! decoded with the standard's rules ([`decode_entities`]) before WHATWG URL resolution with the
//! `url` crate.
//!
//! The reference for conformance is html5lib (see `docs/parse.md`); the one thing left out on
//! purpose is the tree builder's cloning of misnested `<a>` elements (adoption agency and
//! reconstruction of active formatting elements), which repeats URLs already found.
//!
//! Charset detection follows the order of the HTML standard's encoding sniffing, simplified:
//! BOM, then the HTTP `Content-Type` charset, then a `<meta>` prescan of the first 1,024 bytes,
//! defaulting to windows-1252.
//!
//! The files: `tokenizer.rs` (the tokenizer), `scan.rs` (the pass over a document's tags with
//! its pieces of tree construction), `foreign.rs` (the foreign-content rule, shared with the
//! visible-text extractor), `entities.rs` (character references).

use std::borrow::Cow;

use encoding_rs::{Encoding, WINDOWS_1252};

pub use entities::decode_entities;
use entities::decode_refs;
pub(crate) use foreign::{foreign_root, foreign_step};
use scan::scan_impl;
pub(crate) use scan::select_admits;
use url::Url;

/// One outlink found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The resolved absolute http(s) URL, without fragment and without user information
    /// (credentials are never kept: [`crate::keys::strip_userinfo`]).
    pub url: String,
    /// The tag it came from: `a`, `area`, `link`, `iframe`, `frame` or `meta` (refresh).
    pub tag: String,
    /// Whether the link's `rel` contains `nofollow`.
    pub nofollow: bool,
    /// The raw `rel` attribute, if any.
    pub rel: Option<String>,
}

/// What a page says about its links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// The first `<base href>`, resolved against the document URL.
    pub base: Option<String>,
    /// The first `rel=canonical` link, resolved.
    pub canonical: Option<String>,
    /// The content of the first `<meta name=robots>`.
    pub meta_robots: Option<String>,
    /// The text of the first `<title>`, entities decoded, whitespace collapsed, at most 1,024
    /// bytes.
    pub title: Option<String>,
    /// Outlinks in document order.
    pub links: Vec<Link>,
    /// Links with a scheme other than http(s) (javascript:, mailto:, …) that were dropped.
    pub skipped_schemes: u64,
    /// Links that did not resolve to a URL.
    pub skipped_invalid: u64,
    /// The charset the document was decoded with.
    pub charset: &'static str,
}

impl PageLinks {
    /// Whether meta robots or the X-Robots-Tag header say `nofollow` (or `none`).
    pub fn nofollow(&self, x_robots_tag: Option<&str>) -> bool {
        has_directive(self.meta_robots.as_deref(), "nofollow")
            || has_directive(x_robots_tag, "nofollow")
    }

    /// Whether meta robots or the X-Robots-Tag header say `noindex` (or `none`).
    pub fn noindex(&self, x_robots_tag: Option<&str>) -> bool {
        has_directive(self.meta_robots.as_deref(), "noindex")
            || has_directive(x_robots_tag, "noindex")
    }
}

/// Whether a robots directive list (`noindex, nofollow`) holds `directive` or `none`.
pub(crate) fn has_directive(value: Option<&str>, directive: &str) -> bool {
    value.is_some_and(|v| {
        v.split([',', ' ', ';'])
            .map(str::trim)
            .any(|d| d.eq_ignore_ascii_case(directive) || d.eq_ignore_ascii_case("none"))
    })
}

/// Detects the charset: BOM, then `content_type`'s charset, then a `<meta>` prescan, else
/// windows-1252.
pub fn detect_charset(bytes: &[u8], content_type: Option<&str>) -> &'static Encoding {
    if let Some((enc, _)) = Encoding::for_bom(bytes) {
        return enc;
    }
    if let Some(enc) = content_type.and_then(charset_param) {
        return enc;
    }
    prescan(&bytes[..bytes.len().min(1024)]).unwrap_or(WINDOWS_1252)
}

/// The encoding named by a `charset=` parameter in `s` (a Content-Type or meta content value).
/// "charset" is matched ASCII-case-insensitively and the label is too ([`Encoding::for_label`]),
/// so nothing is lower-cased into a copy.
fn charset_param(s: &str) -> Option<&'static Encoding> {
    let i = find_ascii_ci(s.as_bytes(), b"charset")?;
    let rest = s[i + 7..].trim_start().strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == '"' || c == '\'' || c == ';' || c.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Encoding::for_label(&rest.as_bytes()[..end])
}

/// Where `needle` (lower-case ASCII) first starts in `hay`, compared ASCII-case-insensitively.
fn find_ascii_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let i = from + memchr::memchr2(first, first.to_ascii_uppercase(), &hay[from..])?;
        if hay.len() - i >= needle.len() && hay[i + 1..i + needle.len()].eq_ignore_ascii_case(rest)
        {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// A simplified meta prescan: looks for `charset=` inside `<meta` tags. Each tag's bytes are
/// read as UTF-8 (`from_utf8_lossy`: invalid sequences, which are never ASCII, become U+FFFD),
/// the tag alone rather than the whole head: a tag starts and ends at an ASCII byte, which no
/// invalid sequence holds, so it is the same text either way, and a page's 1,024 bytes are not
/// validated (and copied, if not UTF-8) for one tag.
fn prescan(head: &[u8]) -> Option<&'static Encoding> {
    let mut from = 0;
    while let Some(i) = find_ascii_ci(&head[from..], b"<meta") {
        let start = from + i;
        let end = memchr::memchr(b'>', &head[start..]).map_or(head.len(), |e| start + e);
        if let Some(enc) = charset_param(&String::from_utf8_lossy(&head[start..end])) {
            // UTF-16 in a meta prescan means UTF-8 (the bytes are ASCII-compatible).
            return Some(
                if enc.output_encoding() == encoding_rs::UTF_8 && enc != encoding_rs::UTF_8 {
                    encoding_rs::UTF_8
                } else {
                    enc
                },
            );
        }
        from = end;
    }
    None
}

/// A link target found in the document, resolved once the base URL is known. Borrowed from the
/// decoded text unless character references had to be decoded.
pub(crate) struct RawLink<'t> {
    /// The tag: `a`, `area`, `link`, `iframe`, `frame` or `meta`.
    pub(crate) tag: &'static str,
    /// The attribute value, character references decoded.
    pub(crate) target: Cow<'t, str>,
    /// The `rel` attribute, character references decoded.
    pub(crate) rel: Option<Cow<'t, str>>,
}

impl RawLink<'_> {
    /// Whether the `rel` attribute holds `name` (lower-case), compared ASCII-case-insensitively.
    pub(crate) fn has_rel(&self, name: &str) -> bool {
        self.rel.as_deref().is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|x| x.eq_ignore_ascii_case(name))
        })
    }

    /// Whether the link is `rel=nofollow` (which does not apply to frames).
    pub(crate) fn nofollow(&self) -> bool {
        !matches!(self.tag, "iframe" | "frame") && self.has_rel("nofollow")
    }

    /// Whether this is a `<link rel=canonical>`.
    pub(crate) fn canonical(&self) -> bool {
        self.tag == "link" && self.has_rel("canonical")
    }
}

/// What the tokenizer pass over a document found, before URL resolution (see [`scan`]).
pub(crate) struct Scan<'t> {
    /// The first `<base href>`, unresolved.
    pub(crate) base_href: Option<Cow<'t, str>>,
    /// The content of the first `<meta name=robots>`.
    pub(crate) meta_robots: Option<String>,
    /// The cleaned text of the first `<title>`.
    pub(crate) title: Option<String>,
    /// Link targets in document order.
    pub(crate) raw: Vec<RawLink<'t>>,
    /// With anchors asked for ([`scan_with_anchors`]): the text of each `<a>` link, by its index
    /// in `raw`.
    pub(crate) anchors: Vec<(usize, String)>,
}

impl Scan<'_> {
    /// The base URL of the links: the first `<base href>` wherever it is, resolved against
    /// `doc_url`; `None` if there is none or it does not parse (then it is the document URL).
    pub(crate) fn base(&self, doc_url: &Url) -> Option<Url> {
        doc_url.join(self.base_href.as_deref()?).ok()
    }
}

/// The text of `bytes` in `enc`, exactly as `enc.decode(bytes)` gives it (a BOM overrides `enc`
/// and is removed; malformed sequences become U+FFFD), without an allocation per document: the
/// bytes are borrowed when they are the text already (valid UTF-8, or ASCII in an
/// ASCII-compatible encoding), else decoded into `buf`, which is reused.
///
/// A windows-1252 document that is not ASCII is not decoded at all: the text returned is its
/// ASCII skeleton (every byte from 0x80 up made 0x01, which no tokenizer state treats specially,
/// as it treats no non-ASCII character specially), with the document's bytes alongside, and the
/// tokenizer decodes just the parts it hands out. Byte offsets are the same in both, and
/// windows-1252 maps every byte to its own character, so this gives the same results as
/// tokenizing the decoded text. (Decoding whole documents was 5% of the parse stage's time.)
pub(crate) fn decode_text<'a>(
    bytes: &'a [u8],
    enc: &'static Encoding,
    buf: &'a mut String,
) -> (&'a str, Option<&'a [u8]>) {
    let (enc, rest) = match Encoding::for_bom(bytes) {
        Some((e, n)) => (e, &bytes[n..]),
        None => (enc, bytes),
    };
    // A UTF-8 document is validated once, by the decoding below (looking for ASCII first
    // would read the whole page twice: an ASCII page is valid UTF-8 anyway).
    let utf8 = enc == encoding_rs::UTF_8;
    if utf8 || (enc.is_ascii_compatible() && Encoding::ascii_valid_up_to(rest) == rest.len()) {
        if let Some(Cow::Borrowed(s)) =
            encoding_rs::UTF_8.decode_without_bom_handling_and_without_replacement(rest)
        {
            return (s, None);
        }
    }
    if enc == WINDOWS_1252 {
        let mut skeleton = std::mem::take(buf).into_bytes();
        skeleton.clear();
        skeleton.extend(rest.iter().map(|&b| if b < 0x80 { b } else { 1 }));
        *buf = String::from_utf8(skeleton).expect("ASCII is UTF-8");
        return (buf, Some(rest));
    }
    let mut dec = enc.new_decoder_without_bom_handling();
    buf.clear();
    match dec.max_utf8_buffer_length(rest.len()) {
        Some(n) => {
            buf.reserve(n);
            let _ = dec.decode_to_string(rest, buf, true);
        }
        None => *buf = enc.decode_without_bom_handling(rest).0.into_owned(),
    }
    (buf, None)
}

/// Extracts links from `bytes`, fetched from `doc_url` with the given `Content-Type` header.
///
/// The document is tokenized by the HTML standard's rules (`Tokenizer`), and the parts of tree
/// construction that decide what is an HTML element in the document are followed: the content
/// models of `script`, `style`, `title`, `textarea`, `iframe`, `xmp`, `noembed`, `noframes` and
/// `plaintext`; `<template>` contents (not part of the document); SVG and MathML (foreign)
/// elements, including the start tags that break out of them; `<select>`, where most start tags
/// are ignored; `<frame>` only inside `<frameset>`. `<noscript>` content is parsed (scripting
/// off). The base URL is the first `<base href>` in the document and applies to every link.
pub fn extract_links(bytes: &[u8], doc_url: &Url, content_type: Option<&str>) -> PageLinks {
    let enc = detect_charset(bytes, content_type);
    let mut buf = String::new();
    let (text, orig) = decode_text(bytes, enc, &mut buf);
    let found = scan(text, orig);
    let mut page = PageLinks {
        charset: enc.name(),
        meta_robots: found.meta_robots.clone(),
        title: found.title.clone(),
        ..PageLinks::default()
    };
    let base = match found.base(doc_url) {
        Some(u) => {
            page.base = Some(u.to_string());
            u
        }
        None => doc_url.clone(),
    };
    let mut canonical_seen = false;
    page.links.reserve(found.raw.len());
    for l in &found.raw {
        let canonical = !canonical_seen && l.canonical();
        canonical_seen |= canonical;
        let Ok(mut url) = base.join(&l.target) else {
            page.skipped_invalid += 1;
            continue;
        };
        url.set_fragment(None);
        crate::keys::strip_userinfo(&mut url);
        if !matches!(url.scheme(), "http" | "https") {
            page.skipped_schemes += 1;
            continue;
        }
        if canonical {
            page.canonical = Some(url.to_string());
        }
        page.links.push(Link {
            url: url.into(),
            tag: l.tag.to_string(),
            nofollow: l.nofollow(),
            rel: l.rel.as_ref().map(|r| r.to_string()),
        });
    }
    page
}

/// The tokenizer pass of [`extract_links`] over a document as [`decode_text`] returns it:
/// page-level signals and link targets, unresolved (the caller resolves them against
/// [`Scan::base`] or the document URL).
pub(crate) fn scan<'t>(text: &'t str, orig: Option<&'t [u8]>) -> Scan<'t> {
    scan_into(text, orig, Vec::new(), false)
}

/// The tags of the requisites [`scan_into`] finds (archive mode): what a browser loads to show
/// the page. A `link` is a requisite by its `rel` ([`is_requisite_rel`]).
pub const REQUISITE_TAGS: [&str; 12] = [
    "img", "source", "script", "input", "video", "audio", "track", "embed", "object", "style",
    "body", "table",
];

/// Whether a `<link rel>` names something the page loads to show itself (a stylesheet, an
/// icon, a preload), rather than a related document.
pub fn is_requisite_rel(rel: &str) -> bool {
    rel.split_ascii_whitespace().any(|r| {
        [
            "stylesheet",
            "icon",
            "apple-touch-icon",
            "apple-touch-icon-precomposed",
            "mask-icon",
            "preload",
            "modulepreload",
            "manifest",
        ]
        .iter()
        .any(|k| r.eq_ignore_ascii_case(k))
    })
}

/// The URLs of a `srcset` attribute (the HTML standard's candidate parsing, descriptors
/// dropped).
pub fn srcset_urls(srcset: &str) -> Vec<&str> {
    let b = srcset.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut url = &srcset[start..i];
        if url.ends_with(',') {
            url = url.trim_end_matches(',');
        } else {
            // Descriptors up to the next comma outside parentheses.
            let mut depth = 0u32;
            while i < b.len() {
                match b[i] {
                    b'(' => depth += 1,
                    b')' => depth = depth.saturating_sub(1),
                    b',' if depth == 0 => break,
                    _ => {}
                }
                i += 1;
            }
        }
        if !url.is_empty() {
            out.push(url);
        }
    }
    out
}

/// [`scan`], with the links put in `raw` (cleared first; a buffer from [`recycle`]); with
/// `requisites`, also what the page loads to show itself (tags [`REQUISITE_TAGS`]: `src`,
/// `srcset`, `poster`, `data`, `background`, the URLs of `<style>` and `style=""`).
pub(crate) fn scan_into<'t>(
    text: &'t str,
    orig: Option<&'t [u8]>,
    raw: Vec<RawLink<'t>>,
    requisites: bool,
) -> Scan<'t> {
    scan_impl(text, orig, raw, requisites, false)
}

/// [`scan`], with the text of every `<a>` link ([`Scan::anchors`]): what `dragnet export --what
/// links` writes.
pub(crate) fn scan_with_anchors<'t>(text: &'t str, orig: Option<&'t [u8]>) -> Scan<'t> {
    scan_impl(text, orig, Vec::new(), false, true)
}

/// The most characters of an anchor text kept.
const MAX_ANCHOR_CHARS: usize = 1000;

/// The text of an anchor from the document text `part` (the tags in it dropped, character
/// references decoded, whitespace collapsed), cut at [`MAX_ANCHOR_CHARS`].
fn anchor_text(part: &str) -> String {
    let mut bare = String::with_capacity(part.len().min(4 * MAX_ANCHOR_CHARS));
    let mut in_tag = false;
    for c in part.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                bare.push(' ');
            }
            _ if !in_tag => bare.push(c),
            _ => {}
        }
        if bare.len() > 8 * MAX_ANCHOR_CHARS {
            break;
        }
    }
    decode_refs(&bare, false)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_ANCHOR_CHARS)
        .collect()
}

/// A link of a page with its anchor text (`dragnet export --what links`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchoredLink {
    /// The link, resolved as [`extract_links`] resolves it.
    pub link: Link,
    /// The text of an `<a>` link (tags dropped, whitespace collapsed); empty for other tags.
    pub text: String,
}

/// [`extract_links`] with the anchor text of every `<a>` link.
pub fn links_with_text(
    bytes: &[u8],
    doc_url: &Url,
    content_type: Option<&str>,
) -> Vec<AnchoredLink> {
    let enc = detect_charset(bytes, content_type);
    let mut buf = String::new();
    let (text, orig) = decode_text(bytes, enc, &mut buf);
    let found = scan_with_anchors(text, orig);
    let base = found.base(doc_url).unwrap_or_else(|| doc_url.clone());
    let mut texts: std::collections::HashMap<usize, &str> = found
        .anchors
        .iter()
        .map(|(i, t)| (*i, t.as_str()))
        .collect();
    let mut out = Vec::with_capacity(found.raw.len());
    for (i, l) in found.raw.iter().enumerate() {
        let Ok(mut url) = base.join(&l.target) else {
            continue;
        };
        url.set_fragment(None);
        crate::keys::strip_userinfo(&mut url);
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        out.push(AnchoredLink {
            link: Link {
                url: url.into(),
                tag: l.tag.to_string(),
                nofollow: l.nofollow(),
                rel: l.rel.as_ref().map(|r| r.to_string()),
            },
            text: texts.remove(&i).unwrap_or_default().to_string(),
        });
    }
    out
}

/// `raw`, emptied, as a buffer for links of another lifetime: the allocation is kept (the
/// standard library collects in place when the item types have the same layout), so a parse
/// does not grow a new list of links for every page.
// `filter` cannot change the item's lifetime, which is the point here.
#[allow(clippy::unnecessary_filter_map)]
pub(crate) fn recycle<'a, 'b>(mut raw: Vec<RawLink<'a>>) -> Vec<RawLink<'b>> {
    raw.clear();
    raw.into_iter().filter_map(|_| None).collect()
}

/// A title as a page record keeps it: character references decoded, runs of whitespace made one
/// space, cut to at most 1,024 bytes at a character boundary.
fn clean_title(raw: &str) -> String {
    let mut t = decode_refs(raw, false)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if t.len() > 1024 {
        let mut cut = 1024;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    t
}

/// The URL of a meta refresh `content` such as `5; url=/next`.
fn refresh_target(content: &str) -> Option<String> {
    let (_, rest) = content.split_once([';', ','])?;
    let rest = rest.trim_start();
    let rest = if rest.get(..3).is_some_and(|u| u.eq_ignore_ascii_case("url")) {
        rest[3..].trim_start().strip_prefix('=')?.trim_start()
    } else {
        rest
    };
    let t = rest.trim_matches(['"', '\'']).trim();
    (!t.is_empty()).then(|| t.to_string())
}

pub(crate) mod entities;
mod foreign;
mod scan;
#[cfg(test)]
mod tests;
pub(crate) mod tokenizer;
