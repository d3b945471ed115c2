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

use std::borrow::Cow;

use encoding_rs::{Encoding, WINDOWS_1252};

pub use entities::decode_entities;
use entities::decode_refs;
use url::Url;

/// One outlink found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The resolved absolute http(s) URL, without fragment.
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
fn has_directive(value: Option<&str>, directive: &str) -> bool {
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
fn charset_param(s: &str) -> Option<&'static Encoding> {
    let lower = s.to_ascii_lowercase();
    let i = lower.find("charset")?;
    let rest = lower[i + 7..].trim_start().strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == '"' || c == '\'' || c == ';' || c.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Encoding::for_label(&rest.as_bytes()[..end])
}

/// A simplified meta prescan: looks for `charset=` inside `<meta` tags.
fn prescan(head: &[u8]) -> Option<&'static Encoding> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = text[from..].find("<meta") {
        let start = from + i;
        let end = text[start..].find('>').map_or(text.len(), |e| start + e);
        if let Some(enc) = charset_param(&text[start..end]) {
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

/// ASCII whitespace as the tokenizer sees it (CR too: input preprocessing turns it into LF).
fn is_ws(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Whether `b[i..]` starts with `</name` (ASCII case-insensitive) followed by whitespace, `/`
/// or `>`: an "appropriate end tag" that ends RCDATA, RAWTEXT or script data.
fn end_tag_at(b: &[u8], i: usize, name: &str) -> bool {
    b.get(i + 1) == Some(&b'/') && name_at(b, i + 2, name)
}

/// Whether `b[i..]` starts with `name` (ASCII case-insensitive) followed by whitespace, `/` or
/// `>`.
fn name_at(b: &[u8], i: usize, name: &str) -> bool {
    let end = i + name.len();
    b.get(i..end)
        .is_some_and(|s| s.eq_ignore_ascii_case(name.as_bytes()))
        && b.get(end)
            .is_some_and(|&c| is_ws(c) || c == b'/' || c == b'>')
}

/// A start or end tag; its attributes are in [`Tokenizer::attrs`].
struct TagToken<'a> {
    /// The tag name as written (compare ASCII case-insensitively).
    name: &'a str,
    /// An end tag (`</p>`).
    end: bool,
    /// A start tag written `<x/>`.
    self_closing: bool,
}

/// The HTML standard's tokenizer (§13.2.5), reduced to what link extraction needs: it yields
/// the tags and skips text, comments, doctypes, bogus comments and CDATA sections by the
/// standard's rules. Which elements hold RCDATA, RAWTEXT or script data is decided by tree
/// construction, so the caller switches those states with [`Tokenizer::skip_raw`] and
/// [`Tokenizer::skip_script`]. Every byte is looked at a bounded number of times.
struct Tokenizer<'a> {
    /// The decoded document.
    s: &'a str,
    /// Where tokenizing resumes; always at a character boundary.
    pos: usize,
    /// The attributes of the last tag, as (name, raw value), duplicates kept in order (the first
    /// one counts).
    attrs: Vec<(&'a str, &'a str)>,
    /// Whether `<![CDATA[` opens a CDATA section (in foreign content) or a bogus comment.
    cdata: bool,
}

impl<'a> Tokenizer<'a> {
    /// A tokenizer at the start of `s`.
    fn new(s: &'a str) -> Self {
        Tokenizer {
            s,
            pos: 0,
            attrs: Vec::new(),
            cdata: false,
        }
    }

    /// The next tag, or `None` at the end of input (a tag cut off by the end is dropped, as the
    /// standard says).
    fn next_tag(&mut self) -> Option<TagToken<'a>> {
        let b = self.s.as_bytes();
        loop {
            let lt = self.pos + self.s[self.pos..].find('<')?;
            self.pos = lt + 1;
            match b.get(lt + 1) {
                Some(c) if c.is_ascii_alphabetic() => return self.tag(lt + 1, false),
                Some(b'/') => match b.get(lt + 2) {
                    Some(c) if c.is_ascii_alphabetic() => return self.tag(lt + 2, true),
                    Some(b'>') => self.pos = lt + 3,
                    None => return None,
                    Some(_) => self.skip_past(lt + 2, ">"),
                },
                Some(b'!') => self.markup_declaration(lt + 2),
                Some(b'?') => self.skip_past(lt + 1, ">"),
                _ => {}
            }
        }
    }

    /// Moves past the first `end` at or after `from`, or to the end of input.
    fn skip_past(&mut self, from: usize, end: &str) {
        self.pos = self.s[from..]
            .find(end)
            .map_or(self.s.len(), |i| from + i + end.len());
    }

    /// Skips what follows `<!`: a comment, a doctype, a CDATA section or a bogus comment.
    fn markup_declaration(&mut self, at: usize) {
        let b = self.s.as_bytes();
        let rest = &b[at..];
        if rest.starts_with(b"--") {
            self.comment(at + 2);
        } else if self.cdata && rest.starts_with(b"[CDATA[") {
            self.skip_past(at + 7, "]]>");
        } else {
            // A doctype ends at the first `>` even inside a quoted identifier, like a bogus
            // comment.
            self.skip_past(at, ">");
        }
    }

    /// Skips a comment whose text starts at `c`: it ends at `-->` or `--!>`, or at once with
    /// `<!-->` and `<!--->`.
    fn comment(&mut self, c: usize) {
        let b = self.s.as_bytes();
        if b.get(c) == Some(&b'>') {
            self.pos = c + 1;
            return;
        }
        if b[c..].starts_with(b"->") {
            self.pos = c + 2;
            return;
        }
        let mut k = c;
        while let Some(gt) = self.s[k..].find('>') {
            let gt = k + gt;
            if (gt >= c + 2 && &b[gt - 2..gt] == b"--") || (gt >= c + 3 && &b[gt - 3..gt] == b"--!")
            {
                self.pos = gt + 1;
                return;
            }
            k = gt + 1;
        }
        self.pos = self.s.len();
    }

    /// Reads a tag whose name starts at `start`: the tag name, before/after attribute name,
    /// attribute value and self-closing start tag states.
    fn tag(&mut self, start: usize, end: bool) -> Option<TagToken<'a>> {
        let s = self.s;
        let b = s.as_bytes();
        let delim = |c: u8| is_ws(c) || c == b'/' || c == b'>';
        let mut i = start;
        while i < b.len() && !delim(b[i]) {
            i += 1;
        }
        let name = &s[start..i];
        self.attrs.clear();
        loop {
            // Before attribute name.
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            match *b.get(i)? {
                b'>' => {
                    self.pos = i + 1;
                    return Some(TagToken {
                        name,
                        end,
                        self_closing: false,
                    });
                }
                b'/' => {
                    // Self-closing start tag; anything but `>` is reconsumed as above.
                    i += 1;
                    if *b.get(i)? == b'>' {
                        self.pos = i + 1;
                        return Some(TagToken {
                            name,
                            end,
                            self_closing: true,
                        });
                    }
                    continue;
                }
                _ => {}
            }
            // Attribute name: the first character may be `=`.
            let n0 = i;
            i += 1;
            while i < b.len() && !delim(b[i]) && b[i] != b'=' {
                i += 1;
            }
            let attr = &s[n0..i];
            // After attribute name.
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            if *b.get(i)? != b'=' {
                self.attrs.push((attr, ""));
                continue;
            }
            // Before attribute value.
            i += 1;
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            let value = match *b.get(i)? {
                q @ (b'"' | b'\'') => {
                    let v0 = i + 1;
                    i = v0 + b[v0..].iter().position(|&c| c == q)?;
                    let v = &s[v0..i];
                    i += 1;
                    v
                }
                // A missing value; the `>` ends the tag above.
                b'>' => "",
                _ => {
                    let v0 = i;
                    while i < b.len() && !is_ws(b[i]) && b[i] != b'>' {
                        i += 1;
                    }
                    &s[v0..i]
                }
            };
            self.attrs.push((attr, value));
        }
    }

    /// The value of the first attribute called `name`, character references decoded.
    fn attr(&self, name: &str) -> Option<String> {
        self.attrs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| decode_entities(v))
    }

    /// Skips the RCDATA or RAWTEXT content of the element `name` just opened, up to its end tag
    /// (which is tokenized next), and returns the raw text.
    fn skip_raw(&mut self, name: &str) -> &'a str {
        let b = self.s.as_bytes();
        let start = self.pos;
        let mut k = start;
        while let Some(i) = self.s[k..].find("</") {
            let i = k + i;
            if end_tag_at(b, i, name) {
                self.pos = i;
                return &self.s[start..i];
            }
            k = i + 2;
        }
        self.pos = self.s.len();
        &self.s[start..]
    }

    /// Skips script data up to `</script>`, following the script data escaped and double
    /// escaped states: inside `<!--`, a `<script>` hides the next `</script>` until `-->`.
    fn skip_script(&mut self) {
        let b = self.s.as_bytes();
        // 0: script data; 1: escaped; 2: double escaped. `dashes` counts the `-` just seen.
        let (mut state, mut dashes) = (0u8, 0u8);
        let mut i = self.pos;
        while i < b.len() {
            match b[i] {
                b'<' => {
                    dashes = 0;
                    if state < 2 && end_tag_at(b, i, "script") {
                        self.pos = i;
                        return;
                    }
                    if state == 0 && b[i + 1..].starts_with(b"!--") {
                        // Script data escape start: lands in "escaped dash dash".
                        state = 1;
                        dashes = 2;
                        i += 4;
                        continue;
                    }
                    if state == 1 && name_at(b, i + 1, "script") {
                        state = 2;
                        i += 8;
                        continue;
                    }
                    if state == 2 && end_tag_at(b, i, "script") {
                        state = 1;
                        i += 9;
                        continue;
                    }
                }
                b'-' if state > 0 => dashes = dashes.saturating_add(1),
                b'>' if state > 0 && dashes >= 2 => {
                    state = 0;
                    dashes = 0;
                }
                _ => dashes = 0,
            }
            i += 1;
        }
        self.pos = b.len();
    }
}

/// An element on the stack of open SVG and MathML elements.
struct Foreign<'a> {
    /// The tag name as written.
    name: &'a str,
    /// Whether this is an SVG element (else MathML).
    svg: bool,
}

impl Foreign<'_> {
    /// An HTML integration point (`foreignObject`, `desc`, `title` in SVG; `annotation-xml`
    /// with an HTML encoding is approximated by its name) or a MathML text integration point
    /// (`mi`, `mo`, `mn`, `ms`, `mtext`): HTML start tags inside it are HTML elements.
    fn integration_point(&self) -> bool {
        let n = self.name;
        if self.svg {
            ["foreignobject", "desc", "title"]
                .iter()
                .any(|x| n.eq_ignore_ascii_case(x))
        } else {
            ["mi", "mo", "mn", "ms", "mtext", "annotation-xml"]
                .iter()
                .any(|x| n.eq_ignore_ascii_case(x))
        }
    }
}

/// Start tags that end foreign content (SVG, MathML) and are processed as HTML.
const BREAKOUT: [&str; 44] = [
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// A link target found in the document, resolved once the base URL is known.
struct RawLink {
    /// The tag: `a`, `area`, `link`, `iframe`, `frame` or `meta`.
    tag: &'static str,
    /// The attribute value, character references decoded.
    target: String,
    /// The raw `rel` attribute.
    rel: Option<String>,
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
    let (text, _, _) = enc.decode(bytes);
    let mut page = PageLinks {
        charset: enc.name(),
        ..PageLinks::default()
    };
    let mut tk = Tokenizer::new(&text);
    let mut foreign: Vec<Foreign> = Vec::new();
    let (mut templates, mut framesets, mut in_select) = (0usize, 0usize, false);
    let (mut base_href, mut robots_seen) = (None::<String>, false);
    let mut raw: Vec<RawLink> = Vec::new();
    loop {
        // CDATA sections exist only in foreign content.
        tk.cdata = !foreign.is_empty();
        let Some(t) = tk.next_tag() else { break };
        // The "adjusted current node" is foreign; start tags in an integration point are HTML.
        let top = foreign.last();
        let is = |n: &str| t.name.eq_ignore_ascii_case(n);
        let in_foreign = top.is_some_and(|f| {
            let annotation = !f.svg && f.name.eq_ignore_ascii_case("annotation-xml");
            !f.integration_point()
                || (!t.end && !f.svg && !annotation && (is("mglyph") || is("malignmark")))
                || (!t.end && annotation && is("svg"))
        });
        if t.end {
            if in_foreign {
                // The standard walks up the foreign elements to one of the same name and pops
                // to it; reaching an HTML element instead, the end tag is processed as HTML and
                // closes that element, with the SVG or MathML subtree inside it.
                match foreign
                    .iter()
                    .rposition(|f| f.name.eq_ignore_ascii_case(t.name))
                {
                    Some(k) => {
                        foreign.truncate(k);
                        continue;
                    }
                    None => foreign.clear(),
                }
            } else if top.is_some_and(|f| f.name.eq_ignore_ascii_case(t.name)) {
                // Integration points are "special": HTML end tags inside one stop at it.
                foreign.pop();
                continue;
            }
            if is("template") {
                templates = templates.saturating_sub(1);
            } else if is("select") {
                in_select = false;
            } else if is("frameset") {
                framesets = framesets.saturating_sub(1);
            }
            continue;
        }
        if in_foreign {
            let breakout = BREAKOUT.iter().any(|n| is(n))
                || (is("font")
                    && tk.attrs.iter().any(|(n, _)| {
                        ["color", "face", "size"]
                            .iter()
                            .any(|x| n.eq_ignore_ascii_case(x))
                    }));
            if !breakout {
                if !t.self_closing {
                    // Children take the parent's namespace (`<svg>` in `annotation-xml` is SVG).
                    let svg = top.is_some_and(|f| {
                        f.svg || (is("svg") && f.name.eq_ignore_ascii_case("annotation-xml"))
                    });
                    foreign.push(Foreign { name: t.name, svg });
                }
                continue;
            }
            while foreign.last().is_some_and(|f| !f.integration_point()) {
                foreign.pop();
            }
        }
        let name = if t.name.bytes().any(|c| c.is_ascii_uppercase()) {
            Cow::Owned(t.name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(t.name)
        };
        if in_select {
            // "In select": these close the select; script and template work as in the head;
            // every other start tag is ignored.
            match &*name {
                "select" | "input" | "keygen" | "textarea" | "caption" | "table" | "tbody"
                | "tfoot" | "thead" | "tr" | "td" | "th" => in_select = false,
                "script" | "template" => {}
                _ => continue,
            }
            if name == "select" {
                continue;
            }
        }
        let live = templates == 0;
        let target = match &*name {
            "svg" | "math" => {
                if !t.self_closing {
                    foreign.push(Foreign {
                        name: t.name,
                        svg: name == "svg",
                    });
                }
                None
            }
            "template" => {
                templates += 1;
                None
            }
            "select" => {
                in_select = true;
                None
            }
            "frameset" => {
                framesets += 1;
                None
            }
            "plaintext" => break,
            "script" => {
                tk.skip_script();
                None
            }
            "style" | "xmp" | "noembed" | "noframes" | "textarea" => {
                tk.skip_raw(&name);
                None
            }
            "title" => {
                let inner = tk.skip_raw(&name);
                if live && page.title.is_none() {
                    page.title = Some(clean_title(inner));
                }
                None
            }
            "iframe" => {
                let src = tk.attr("src");
                tk.skip_raw(&name);
                src.map(|s| ("iframe", s))
            }
            "frame" if framesets > 0 => tk.attr("src").map(|s| ("frame", s)),
            "a" => tk.attr("href").map(|h| ("a", h)),
            "area" => tk.attr("href").map(|h| ("area", h)),
            "link" => tk.attr("href").map(|h| ("link", h)),
            "base" if live && base_href.is_none() => {
                base_href = tk.attr("href");
                None
            }
            "meta" if live => {
                let n = tk.attr("name").unwrap_or_default();
                if !robots_seen && n.eq_ignore_ascii_case("robots") {
                    robots_seen = true;
                    page.meta_robots = tk.attr("content");
                }
                let equiv = tk.attr("http-equiv").unwrap_or_default();
                if equiv.eq_ignore_ascii_case("refresh") {
                    tk.attr("content")
                        .and_then(|c| refresh_target(&c))
                        .map(|t| ("meta", t))
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some((tag, target)) = target.filter(|_| live) {
            raw.push(RawLink {
                tag,
                target,
                rel: tk.attr("rel"),
            });
        }
    }
    // The base URL is the first `<base href>` wherever it is; if it does not parse, the
    // document URL.
    let base = match base_href.map(|h| doc_url.join(&h)) {
        Some(Ok(u)) => {
            page.base = Some(u.to_string());
            u
        }
        _ => doc_url.clone(),
    };
    let mut canonical_seen = false;
    page.links.reserve(raw.len());
    for RawLink { tag, target, rel } in raw {
        let rels = rel.as_deref().unwrap_or("").to_ascii_lowercase();
        let has = |r: &str| rels.split_ascii_whitespace().any(|x| x == r);
        let canonical = tag == "link" && !canonical_seen && has("canonical");
        canonical_seen |= canonical;
        let Ok(mut url) = base.join(&target) else {
            page.skipped_invalid += 1;
            continue;
        };
        url.set_fragment(None);
        if !matches!(url.scheme(), "http" | "https") {
            page.skipped_schemes += 1;
            continue;
        }
        if canonical {
            page.canonical = Some(url.to_string());
        }
        page.links.push(Link {
            url: url.into(),
            tag: tag.to_string(),
            nofollow: !matches!(tag, "iframe" | "frame") && has("nofollow"),
            rel,
        });
    }
    page
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

mod entities;
#[cfg(test)]
mod tests;
