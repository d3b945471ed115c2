//! The visible text of an HTML document, as Common Crawl's WET files hold it: what a later
//! `[parse] text = true` writes into WARC `conversion` records.
//!
//! Why this shape: the parse stage builds no tree (see `docs/parse.md`), and a text pass that
//! built one would cost more than the link extraction it rides along with. So this is one
//! linear pass over the same tokenizer (`Tokenizer::next_token`, the HTML standard's
//! tokenizer, which also yields the text between tags) with a small stack of open elements
//! instead of a DOM: just enough tree construction to know where an element ends (implied end
//! tags of `p`, `li`, `dd`/`dt`, table parts; end tags that stop at "special" elements), which is
//! what decides whether text is inside a hidden element. The rules (`docs/parse.md`, "Visible
//! text (WET)"):
//!
//! - no text of `script`, `style`, `template`, `noscript` (a browser runs scripts), `textarea`,
//!   `iframe`, `noembed`, `noframes`, `select` (with its options), `datalist`, `audio`, `video`,
//!   `rp`, a `dialog` that is not `open`; comments and doctypes; SVG text except in `<text>` and
//!   `<foreignObject>` (icons' `<title>` and `<style>` are not shown); MathML is shown; the text
//!   of `<button>` and `<label>` is shown, as browsers and Common Crawl show it;
//! - no text of hidden elements and their descendants: the `hidden` attribute,
//!   `aria-hidden="true"`, an inline `style` with `display: none` or `visibility: hidden`;
//! - the first `<title>` is the first line; the head has no other text;
//! - block-level elements start and end lines, `<br>` ends one, table cells are separated by a
//!   tab; inside a line runs of whitespace are one space, lines are trimmed and there are no
//!   empty lines (Common Crawl's WET has none); `<pre>`, `<listing>`, `<xmp>` and `<plaintext>`
//!   keep their whitespace;
//! - character references are decoded by the standard's rules, with the link extractor's table
//!   plus the HTML 4 names (`decode_text_refs`); the charset is the link extractor's
//!   ([`detect_charset`], then `encoding_rs`);
//! - at most `max_chars` characters; any input is handled in time linear in its length (at most
//!   `MAX_OPEN` open elements are tracked, a search of them looks at `SEARCH`).
//!
//! Not followed, as in the link extractor: the adoption agency's reparenting of misnested
//! formatting elements, and foster parenting (text directly in a `<table>` keeps its place).
//! Agreement with resiliparse and speed against `extract_links`: `docs/parse.md`.

use super::html::entities::{decode_text_refs, decode_text_refs_into};
use super::html::tokenizer::{is_ws, Foreign, TagToken, Token, Tokenizer};
use super::html::{decode_text, detect_charset};

/// The visible text of the HTML document `bytes` (charset detected as the link extractor does:
/// BOM, the HTTP Content-Type charset, a <meta> prescan, windows-1252), at most `max_chars`
/// characters.
pub fn visible_text(bytes: &[u8], content_type: Option<&str>, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let enc = detect_charset(bytes, content_type);
    let mut buf = String::new();
    let (text, orig) = decode_text(bytes, enc, &mut buf);
    Walker::new(text, orig, max_chars).run()
}

/// How many open HTML elements are tracked; deeper ones are not (their end is not known, so
/// they cannot hide their content).
const MAX_OPEN: usize = 512;

/// How far down the stack of open elements an end tag (or an implied end) looks for its
/// element: real pages close elements much nearer the top, and adversarial ones (hundreds of
/// open elements and end tags that match none) cost at most this many steps per tag.
const SEARCH: usize = 128;

// What the walker needs to know about an element (flags of [`Kind`]).
/// A void element: never on the stack.
const VOID: u16 = 1;
/// The standard's "special" category: the end tag of an ordinary element stops at one.
const SPECIAL: u16 = 1 << 1;
/// Starts and ends a line.
const BLOCK: u16 = 1 << 2;
/// Its start tag closes an open `<p>`.
const CLOSES_P: u16 = 1 << 3;
/// A boundary of the standard's "has an element in scope".
const SCOPE: u16 = 1 << 4;
/// Its content is never rendered.
const HIDE: u16 = 1 << 5;
/// Keeps its whitespace.
const PRE: u16 = 1 << 6;
/// A formatting element (`a`, `b`, ...): its end tag looks through special elements.
const FMT: u16 = 1 << 7;
/// `html`, `head`, `body`: implied, never on the stack.
const ROOT: u16 = 1 << 8;
/// Its content is skipped by the tokenizer (RAWTEXT, RCDATA, script data); its end tag is
/// consumed there.
const RAW: u16 = 1 << 9;
/// A part of a table whose end tag looks up to the table (`td`, `tr`, `tbody`, ...).
const TABLE_PART: u16 = 1 << 10;

/// A tag name's role: `t` says which known element it is (`Other` for the others, `Void` for
/// most void elements), `id` is its lower-case name.
#[derive(Clone, Copy)]
struct Kind {
    t: T,
    id: &'static str,
    f: u16,
}

/// The elements the walker knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum T {
    A,
    B,
    I,
    U,
    S,
    P,
    Other,
    Em,
    Tt,
    Li,
    Dd,
    Dt,
    Dl,
    Ul,
    Ol,
    H1,
    H2,
    H3,
    H4,
    H5,
    H6,
    Hr,
    Br,
    Tr,
    Td,
    Th,
    Rp,
    Big,
    Div,
    Dir,
    Nav,
    Pre,
    Col,
    Svg,
    Xmp,
    Void,
    Code,
    Font,
    Nobr,
    Menu,
    Main,
    Form,
    Html,
    Math,
    Small,
    Aside,
    Table,
    Tbody,
    Thead,
    Tfoot,
    Audio,
    Video,
    Style,
    Title,
    Strike,
    Strong,
    Center,
    Header,
    Footer,
    Hgroup,
    Search,
    Figure,
    Dialog,
    Legend,
    Applet,
    Object,
    Button,
    Option,
    Select,
    Script,
    Iframe,
    Address,
    Article,
    Details,
    Summary,
    Section,
    Listing,
    Caption,
    Marquee,
    Noembed,
    Fieldset,
    Colgroup,
    Frameset,
    Optgroup,
    Template,
    Datalist,
    Noframes,
    Noscript,
    Textarea,
    Plaintext,
    Figcaption,
    Blockquote,
}

impl Kind {
    fn has(self, f: u16) -> bool {
        self.f & f != 0
    }
}

/// The [`Kind`] of a tag name (ASCII case-insensitive).
fn kind(name: &str) -> Kind {
    const B: u16 = BLOCK | SPECIAL | CLOSES_P;
    let b = name.as_bytes();
    let mut buf = [0u8; 10];
    if b.len() > buf.len() {
        return Kind {
            t: T::Other,
            id: "",
            f: 0,
        };
    }
    // Most names are lower case already.
    let low = if b.iter().any(u8::is_ascii_uppercase) {
        for (d, s) in buf.iter_mut().zip(b) {
            *d = s.to_ascii_lowercase();
        }
        &buf[..b.len()]
    } else {
        b
    };
    // By length first: a match on a slice compares it with the patterns one by one.
    let (t, id, f) = match low.len() {
        1 => match low {
            b"a" => (T::A, "a", FMT),
            b"b" => (T::B, "b", FMT),
            b"i" => (T::I, "i", FMT),
            b"u" => (T::U, "u", FMT),
            b"s" => (T::S, "s", FMT),
            b"p" => (T::P, "p", B),
            _ => (T::Other, "", 0),
        },
        2 => match low {
            b"em" => (T::Em, "em", FMT),
            b"tt" => (T::Tt, "tt", FMT),
            b"li" => (T::Li, "li", B),
            b"dd" => (T::Dd, "dd", B),
            b"dt" => (T::Dt, "dt", B),
            b"dl" => (T::Dl, "dl", B),
            b"ul" => (T::Ul, "ul", B),
            b"ol" => (T::Ol, "ol", B),
            b"h1" => (T::H1, "h1", B),
            b"h2" => (T::H2, "h2", B),
            b"h3" => (T::H3, "h3", B),
            b"h4" => (T::H4, "h4", B),
            b"h5" => (T::H5, "h5", B),
            b"h6" => (T::H6, "h6", B),
            b"hr" => (T::Hr, "hr", B | VOID),
            b"br" => (T::Br, "br", SPECIAL | VOID),
            b"tr" => (T::Tr, "tr", BLOCK | SPECIAL | TABLE_PART),
            b"td" => (T::Td, "td", SPECIAL | SCOPE | TABLE_PART),
            b"th" => (T::Th, "th", SPECIAL | SCOPE | TABLE_PART),
            b"rp" => (T::Rp, "rp", HIDE),
            _ => (T::Other, "", 0),
        },
        3 => match low {
            b"big" => (T::Big, "big", FMT),
            b"div" => (T::Div, "div", B),
            b"dir" => (T::Dir, "dir", B),
            b"nav" => (T::Nav, "nav", B),
            b"pre" => (T::Pre, "pre", B | PRE),
            b"col" => (T::Col, "col", SPECIAL | VOID),
            b"svg" => (T::Svg, "svg", 0),
            b"xmp" => (T::Xmp, "xmp", B | RAW),
            b"img" | b"wbr" => (T::Void, "void", SPECIAL | VOID),
            _ => (T::Other, "", 0),
        },
        4 => match low {
            b"code" => (T::Code, "code", FMT),
            b"font" => (T::Font, "font", FMT),
            b"nobr" => (T::Nobr, "nobr", FMT),
            b"menu" => (T::Menu, "menu", B),
            b"main" => (T::Main, "main", B),
            b"form" => (T::Form, "form", B),
            b"html" | b"head" | b"body" => (T::Html, "html", ROOT),
            b"math" => (T::Math, "math", 0),
            b"area" | b"base" | b"link" | b"meta" => (T::Void, "void", SPECIAL | VOID),
            _ => (T::Other, "", 0),
        },
        5 => match low {
            b"small" => (T::Small, "small", FMT),
            b"aside" => (T::Aside, "aside", B),
            b"table" => (T::Table, "table", B | SCOPE | TABLE_PART),
            b"tbody" => (T::Tbody, "tbody", SPECIAL | TABLE_PART),
            b"thead" => (T::Thead, "thead", SPECIAL | TABLE_PART),
            b"tfoot" => (T::Tfoot, "tfoot", SPECIAL | TABLE_PART),
            b"audio" => (T::Audio, "audio", HIDE),
            b"video" => (T::Video, "video", HIDE),
            b"style" => (T::Style, "style", SPECIAL | RAW),
            b"title" => (T::Title, "title", SPECIAL | RAW),
            b"embed" | b"input" | b"param" | b"track" | b"frame" | b"image" => {
                (T::Void, "void", SPECIAL | VOID)
            }
            _ => (T::Other, "", 0),
        },
        6 => match low {
            b"strike" => (T::Strike, "strike", FMT),
            b"strong" => (T::Strong, "strong", FMT),
            b"center" => (T::Center, "center", B),
            b"header" => (T::Header, "header", B),
            b"footer" => (T::Footer, "footer", B),
            b"hgroup" => (T::Hgroup, "hgroup", B),
            b"search" => (T::Search, "search", B),
            b"figure" => (T::Figure, "figure", B),
            b"dialog" => (T::Dialog, "dialog", B),
            b"legend" => (T::Legend, "legend", BLOCK),
            b"applet" => (T::Applet, "applet", SPECIAL | SCOPE),
            b"object" => (T::Object, "object", SPECIAL | SCOPE),
            b"button" => (T::Button, "button", SPECIAL),
            b"option" => (T::Option, "option", 0),
            b"select" => (T::Select, "select", SPECIAL),
            b"script" => (T::Script, "script", SPECIAL | RAW),
            b"iframe" => (T::Iframe, "iframe", SPECIAL | RAW),
            b"keygen" | b"source" => (T::Void, "void", SPECIAL | VOID),
            _ => (T::Other, "", 0),
        },
        7 => match low {
            b"address" => (T::Address, "address", B),
            b"article" => (T::Article, "article", B),
            b"details" => (T::Details, "details", B),
            b"summary" => (T::Summary, "summary", B),
            b"section" => (T::Section, "section", B),
            b"listing" => (T::Listing, "listing", B | PRE),
            b"caption" => (T::Caption, "caption", BLOCK | SPECIAL | SCOPE | TABLE_PART),
            b"marquee" => (T::Marquee, "marquee", SPECIAL | SCOPE),
            b"noembed" => (T::Noembed, "noembed", SPECIAL | RAW),
            b"bgsound" => (T::Void, "void", SPECIAL | VOID),
            _ => (T::Other, "", 0),
        },
        8 => match low {
            b"fieldset" => (T::Fieldset, "fieldset", B),
            b"colgroup" => (T::Colgroup, "colgroup", SPECIAL | TABLE_PART),
            b"frameset" => (T::Frameset, "frameset", SPECIAL),
            b"optgroup" => (T::Optgroup, "optgroup", 0),
            b"template" => (T::Template, "template", SPECIAL),
            b"datalist" => (T::Datalist, "datalist", HIDE),
            b"noframes" => (T::Noframes, "noframes", SPECIAL | RAW),
            b"noscript" => (T::Noscript, "noscript", SPECIAL | RAW),
            b"textarea" => (T::Textarea, "textarea", SPECIAL | RAW),
            b"basefont" => (T::Void, "void", SPECIAL | VOID),
            _ => (T::Other, "", 0),
        },
        9 => match low {
            b"plaintext" => (T::Plaintext, "plaintext", B),
            _ => (T::Other, "", 0),
        },
        10 => match low {
            b"figcaption" => (T::Figcaption, "figcaption", B),
            b"blockquote" => (T::Blockquote, "blockquote", B),
            _ => (T::Other, "", 0),
        },
        _ => (T::Other, "", 0),
    };
    Kind { t, id, f }
}

/// Whether a start tag's attributes hide the element: `hidden`, `aria-hidden="true"`, or an
/// inline style with `display: none` or `visibility: hidden` (the first of duplicate attributes
/// counts, as in the standard).
fn hides(tk: &Tokenizer<'_>) -> bool {
    let (mut aria, mut style) = (false, false);
    for &(n, _) in &tk.attrs {
        match n.len() {
            6 if n.eq_ignore_ascii_case("hidden") => return true,
            11 if !aria && n.eq_ignore_ascii_case("aria-hidden") => {
                aria = true;
                if tk
                    .attr("aria-hidden")
                    .is_some_and(|v| v.trim_matches(is_ws_char).eq_ignore_ascii_case("true"))
                {
                    return true;
                }
            }
            5 if !style && n.eq_ignore_ascii_case("style") => {
                style = true;
                if tk.attr("style").is_some_and(|v| style_hides(&v)) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether a `style` attribute's declarations say `display: none` or `visibility: hidden`
/// (or `collapse`), `!important` or not. (A descendant made `visibility: visible` again is not
/// followed.)
fn style_hides(css: &str) -> bool {
    css.split(';').any(|decl| {
        let Some((prop, value)) = decl.split_once(':') else {
            return false;
        };
        let value = value.trim();
        let value = match value.get(value.len().saturating_sub(10)..) {
            Some(tail) if tail.eq_ignore_ascii_case("!important") => {
                value[..value.len() - 10].trim_end()
            }
            _ => value,
        };
        let prop = prop.trim();
        (prop.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (prop.eq_ignore_ascii_case("visibility")
                && (value.eq_ignore_ascii_case("hidden") || value.eq_ignore_ascii_case("collapse")))
    })
}

/// Whether `b` is all ASCII whitespace, 16 bytes at a time (most text runs are the
/// whitespace between tags).
fn all_ws(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(16);
    for c in &mut chunks {
        if c.iter().fold(false, |bad, &x| bad | !is_ws(x)) {
            return false;
        }
    }
    chunks.remainder().iter().all(|&x| is_ws(x))
}

/// ASCII whitespace as HTML defines it.
fn is_ws_char(c: char) -> bool {
    c.is_ascii() && is_ws(c as u8)
}

/// The text being written: lines, pending separators, and the bound.
struct Out {
    s: String,
    /// The bound, in characters.
    max: usize,
    /// Characters that may still be written, once `exact`.
    left: usize,
    /// Whether characters are counted: only once `s` has `max` bytes, since until then it has
    /// fewer than `max` characters.
    exact: bool,
    /// The bound is reached: the walker stops.
    full: bool,
    /// The current line has text.
    line: bool,
    /// A line break is due before the next text.
    brk: bool,
    /// A space is due before the next text on this line.
    space: bool,
    /// A tab (table cell) is due before the next text on this line.
    tab: bool,
}

impl Out {
    /// Text of at most `max` characters, with room for `capacity` bytes.
    fn new(max: usize, capacity: usize) -> Self {
        Out {
            s: String::with_capacity(capacity.min(max)),
            max,
            left: max,
            exact: false,
            full: max == 0,
            line: false,
            brk: false,
            space: false,
            tab: false,
        }
    }

    /// Ends the current line, if it has text.
    fn block(&mut self) {
        self.brk |= self.line;
    }

    /// A table cell starts: a tab if the line has text already.
    fn cell(&mut self) {
        self.tab |= self.line;
    }

    /// Writes what is due before text on the current line.
    fn flush(&mut self) {
        if self.brk {
            self.end_line();
        } else if self.line && (self.tab || self.space) {
            self.push(if self.tab { "\t" } else { " " });
        }
        self.tab = false;
        self.space = false;
    }

    /// Trims the current line's trailing whitespace and writes a line break.
    fn end_line(&mut self) {
        while let Some(c) = self
            .s
            .chars()
            .next_back()
            .filter(|c| c.is_whitespace() && *c != '\n')
        {
            self.s.truncate(self.s.len() - c.len_utf8());
            if self.exact {
                self.left += 1;
            }
        }
        if !self.s.is_empty() {
            self.push("\n");
        }
        self.line = false;
        self.brk = false;
        self.tab = false;
        self.space = false;
    }

    /// Appends `w` as far as the bound allows.
    fn push(&mut self, w: &str) {
        if self.full {
            return;
        }
        if !self.exact {
            self.s.push_str(w);
            if self.s.len() >= self.max {
                // From here on characters are counted.
                self.exact = true;
                match self.s.char_indices().nth(self.max) {
                    Some((cut, _)) => {
                        self.s.truncate(cut);
                        self.left = 0;
                    }
                    None => self.left = self.max - self.s.chars().count(),
                }
                self.full = self.left == 0;
            }
            return;
        }
        let n = if w.is_ascii() {
            w.len()
        } else {
            w.bytes().filter(|&b| b & 0xc0 != 0x80).count()
        };
        if n < self.left {
            self.s.push_str(w);
            self.left -= n;
        } else {
            let cut = w.char_indices().nth(self.left).map_or(w.len(), |(i, _)| i);
            self.s.push_str(&w[..cut]);
            self.left = 0;
            self.full = true;
        }
    }

    /// Text whose whitespace collapses: runs of ASCII whitespace are one space, and a line
    /// starts with no whitespace (nor a no-break space).
    fn text(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && !self.full {
            if is_ws(b[i]) {
                self.space |= self.line;
                i += 1;
                continue;
            }
            // Words with single spaces between them are written as they are.
            let start = i;
            loop {
                while i < b.len() && !is_ws(b[i]) {
                    i += 1;
                }
                if b.get(i) == Some(&b' ') && b.get(i + 1).is_some_and(|&c| !is_ws(c)) {
                    i += 1;
                } else {
                    break;
                }
            }
            let mut w = &s[start..i];
            if (!self.line || self.brk) && b[start] >= 0x80 {
                w = w.trim_start_matches(char::is_whitespace);
                if w.is_empty() {
                    continue;
                }
            }
            if self.brk || self.space || self.tab {
                self.flush();
            }
            self.push(w);
            self.line = true;
        }
    }

    /// Text that keeps its whitespace (`<pre>`): line breaks as written, empty lines too.
    fn pre(&mut self, s: &str) {
        for (k, part) in s.split('\n').enumerate() {
            if self.full {
                return;
            }
            if k > 0 {
                if self.brk {
                    self.end_line();
                }
                if !self.s.is_empty() {
                    self.push("\n");
                }
                self.line = false;
            }
            if !part.is_empty() {
                self.flush();
                self.push(part);
                self.line = true;
            }
        }
    }

    /// The text, trailing whitespace removed.
    fn finish(mut self) -> String {
        let n = self.s.trim_end().len();
        self.s.truncate(n);
        self.s
    }
}

/// An open HTML element.
struct Open<'a> {
    /// The tag name as written (for elements without an `id`).
    name: &'a str,
    kind: Kind,
}

/// The pass over one document.
struct Walker<'a> {
    tk: Tokenizer<'a>,
    out: Out,
    /// The bound, for the title.
    max_chars: usize,
    /// The first `<title>`, cleaned.
    title: Option<String>,
    /// Open HTML elements (at most [`MAX_OPEN`]).
    stack: Vec<Open<'a>>,
    /// The stack index of the outermost hidden element, if any is open.
    hidden: Option<usize>,
    /// Open `<p>` elements.
    p_open: usize,
    /// Open elements that keep whitespace.
    pre: usize,
    /// The next text starts after `<pre>`: one leading line feed is dropped.
    skip_lf: bool,
    /// Open SVG and MathML elements, as in the link extractor.
    foreign: Vec<Foreign<'a>>,
    /// The `foreign` index of the outermost hidden SVG or MathML element.
    foreign_hidden: Option<usize>,
    /// For each element of `foreign`, whether its text is shown.
    shown_in_foreign: Vec<bool>,
    /// Open `<template>` elements: their content is not part of the document.
    templates: usize,
    /// Inside `<select>`.
    in_select: bool,
    /// A buffer for text with character references decoded.
    scratch: String,
}

impl<'a> Walker<'a> {
    fn new(text: &'a str, orig: Option<&'a [u8]>, max_chars: usize) -> Self {
        Walker {
            tk: Tokenizer::new(text, orig),
            out: Out::new(max_chars, text.len() / 8),
            max_chars,
            title: None,
            stack: Vec::new(),
            hidden: None,
            p_open: 0,
            pre: 0,
            skip_lf: false,
            foreign: Vec::new(),
            foreign_hidden: None,
            shown_in_foreign: Vec::new(),
            templates: 0,
            in_select: false,
            scratch: String::new(),
        }
    }

    fn run(mut self) -> String {
        while !self.out.full {
            // CDATA sections exist only in foreign content.
            self.tk.cdata = !self.foreign.is_empty();
            match self.tk.next_token() {
                None => break,
                Some(Token::Text(t)) => self.text(t, true),
                Some(Token::Cdata(t)) => self.text(t, false),
                Some(Token::Tag(t)) => {
                    self.skip_lf = false;
                    if !self.tag(t) {
                        break;
                    }
                }
            }
        }
        self.finish()
    }

    /// The title line, then the body text, within the bound.
    fn finish(self) -> String {
        let body = self.out.finish();
        let Some(title) = self.title.filter(|t| !t.is_empty()) else {
            return body;
        };
        let mut s = String::with_capacity(title.len() + 1 + body.len());
        s.push_str(&title);
        if !body.is_empty() {
            s.push('\n');
            s.push_str(&body);
        }
        // (Fewer bytes than the bound are fewer characters.)
        if s.len() > self.max_chars {
            if let Some((cut, _)) = s.char_indices().nth(self.max_chars) {
                s.truncate(cut);
                s.truncate(s.trim_end().len());
            }
        }
        s
    }

    /// Whether text here is shown.
    fn visible(&self) -> bool {
        self.hidden.is_none() && !self.in_select && self.templates == 0 && self.foreign_shown()
    }

    /// Whether text in the current SVG or MathML content is shown.
    fn foreign_shown(&self) -> bool {
        self.foreign_hidden.is_none() && self.shown_in_foreign.last().copied().unwrap_or(true)
    }

    /// A text run; `refs`: with character references to decode.
    fn text(&mut self, t: &'a str, refs: bool) {
        let skip_lf = std::mem::take(&mut self.skip_lf);
        if !self.visible() {
            return;
        }
        if self.pre == 0 && all_ws(t.as_bytes()) {
            // Most runs are the whitespace between tags.
            self.out.space |= self.out.line;
            return;
        }
        let t = self.tk.text_of(t);
        let mut t: &str = &t;
        let mut scratch = std::mem::take(&mut self.scratch);
        if refs && memchr::memchr3(b'&', b'\r', 0, t.as_bytes()).is_some() {
            scratch.clear();
            decode_text_refs_into(t, &mut scratch);
            t = &scratch;
        }
        if self.pre > 0 {
            if skip_lf {
                t = t.strip_prefix('\n').unwrap_or(t);
            }
            self.out.pre(t);
        } else {
            self.out.text(t);
        }
        self.scratch = scratch;
    }

    /// Truncates `foreign` to `n` elements.
    fn foreign_truncate(&mut self, n: usize) {
        self.foreign.truncate(n);
        self.shown_in_foreign.truncate(n);
        if self.foreign_hidden.is_some_and(|h| h >= n) {
            self.foreign_hidden = None;
        }
    }

    /// Opens a foreign element (`<svg>`, or one inside SVG or MathML).
    fn foreign_push(&mut self, f: Foreign<'a>) {
        if self.foreign_hidden.is_none() && hides(&self.tk) {
            self.foreign_hidden = Some(self.foreign.len());
        }
        // MathML is shown; SVG only inside `<text>` or as HTML in `<foreignObject>` (not the
        // `<title>`, `<desc>` or `<style>` of icons).
        let is = |n: &str| f.name.eq_ignore_ascii_case(n);
        let inherited = self.shown_in_foreign.last().copied();
        let shown = if f.svg {
            if is("foreignObject") || is("text") {
                true
            } else if is("svg") || is("title") || is("desc") || is("style") || is("script") {
                false
            } else {
                inherited.unwrap_or(false)
            }
        } else {
            !(is("annotation") || is("annotation-xml")) && inherited.unwrap_or(true)
        };
        self.shown_in_foreign.push(shown);
        self.foreign.push(f);
    }

    /// A tag; `false` ends the document (`<plaintext>`).
    fn tag(&mut self, t: TagToken<'a>) -> bool {
        // SVG and MathML, as in the link extractor (`html::scan_into`).
        let step = super::html::foreign_step(&self.foreign, &self.tk, &t);
        self.foreign_truncate(step.keep);
        if let Some(f) = step.push {
            self.foreign_push(f);
        }
        if !step.html {
            return true;
        }
        if t.end {
            self.end_tag(t);
            return true;
        }
        self.start_tag(t)
    }

    /// An HTML start tag.
    fn start_tag(&mut self, t: TagToken<'a>) -> bool {
        let k = kind(t.name);
        if self.in_select {
            // "In select": these close the select; script and template work as in the head;
            // every other start tag is ignored.
            match k.t {
                T::Select
                | T::Textarea
                | T::Caption
                | T::Table
                | T::Tbody
                | T::Tfoot
                | T::Thead
                | T::Tr
                | T::Td
                | T::Th => self.in_select = false,
                T::Void
                    if t.name.eq_ignore_ascii_case("input")
                        || t.name.eq_ignore_ascii_case("keygen") =>
                {
                    self.in_select = false
                }
                T::Script | T::Template => {}
                _ => return true,
            }
            if k.t == T::Select {
                return true;
            }
        }
        let live = self.templates == 0;
        match k.t {
            T::Svg | T::Math => {
                if !t.self_closing {
                    self.foreign_push(Foreign {
                        name: t.name,
                        svg: k.t == T::Svg,
                    });
                }
                return true;
            }
            T::Template => {
                self.templates += 1;
                return true;
            }
            T::Select => {
                self.in_select = true;
                return true;
            }
            T::Plaintext if live => {
                let rest = &self.tk.s[self.tk.pos..];
                if self.visible() {
                    self.out.block();
                    let rest = self.tk.text_of(rest);
                    self.out.pre(&rest);
                }
                return false;
            }
            T::Script => {
                self.tk.skip_script();
                return true;
            }
            T::Title => {
                let inner = self.tk.skip_raw("title");
                if live && self.title.is_none() {
                    let raw = self.tk.text_of(inner);
                    let mut t = Out::new(self.max_chars, raw.len());
                    t.text(&decode_text_refs(&raw));
                    self.title = Some(t.finish());
                }
                return true;
            }
            T::Xmp => {
                let inner = self.tk.skip_raw(k.id);
                if self.visible() {
                    self.out.block();
                    let raw = self.tk.text_of(inner);
                    self.out.pre(raw.strip_prefix('\n').unwrap_or(&raw));
                    self.out.block();
                }
                return true;
            }
            _ if k.has(RAW) => {
                self.tk.skip_raw(k.id);
                return true;
            }
            _ => {}
        }
        if !live || k.has(ROOT) {
            return true;
        }
        self.implied_ends(k);
        let void = k.has(VOID);
        // (Inside a hidden element, whether this one hides too does not matter.)
        let hidden = !void
            && self.hidden.is_none()
            && (k.has(HIDE)
                || (k.t == T::Dialog
                    && !self
                        .tk
                        .attrs
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case("open")))
                || hides(&self.tk));
        if !hidden && self.visible() {
            if k.has(BLOCK) || k.t == T::Br {
                self.out.block();
            } else if matches!(k.t, T::Td | T::Th) {
                self.out.cell();
            }
        }
        if void || self.stack.len() >= MAX_OPEN {
            return true;
        }
        if hidden {
            self.hidden = Some(self.stack.len());
        }
        if k.has(PRE) {
            self.pre += 1;
            self.skip_lf = true;
        }
        if k.t == T::P {
            self.p_open += 1;
        }
        self.stack.push(Open {
            name: t.name,
            kind: k,
        });
        true
    }

    /// The end tags a start tag of kind `k` implies (a simplified tree construction).
    fn implied_ends(&mut self, k: Kind) {
        if k.has(CLOSES_P) && self.p_open > 0 {
            // "Close a p element" if one is in button scope.
            let lo = self.search_floor();
            if let Some(i) = self.stack[lo..]
                .iter()
                .rposition(|o| o.kind.t == T::P || o.kind.has(SCOPE) || o.kind.t == T::Button)
            {
                if self.stack[lo + i].kind.t == T::P {
                    self.truncate(lo + i);
                }
            }
        }
        match k.t {
            T::Li | T::Dd | T::Dt => {
                let closes = |t: T| {
                    if k.t == T::Li {
                        t == T::Li
                    } else {
                        t == T::Dd || t == T::Dt
                    }
                };
                for i in (self.search_floor()..self.stack.len()).rev() {
                    let o = self.stack[i].kind;
                    if closes(o.t) {
                        self.truncate(i);
                        break;
                    }
                    if o.has(SPECIAL) && !matches!(o.t, T::Address | T::Div | T::P) {
                        break;
                    }
                }
            }
            // A heading closes a heading; an option, an option.
            T::H1 | T::H2 | T::H3 | T::H4 | T::H5 | T::H6 | T::Option | T::Optgroup => {
                let closes = |t: T| match k.t {
                    T::Option | T::Optgroup => t == T::Option,
                    _ => matches!(t, T::H1 | T::H2 | T::H3 | T::H4 | T::H5 | T::H6),
                };
                if self.stack.last().is_some_and(|o| closes(o.kind.t)) {
                    self.truncate(self.stack.len() - 1);
                }
            }
            // A cell, row or section ends the open cell, row or section of its table.
            T::Td | T::Th => self.close_in_table(&[T::Td, T::Th]),
            T::Tr => self.close_in_table(&[T::Tr, T::Td, T::Th]),
            T::Tbody | T::Thead | T::Tfoot | T::Caption | T::Colgroup => self.close_in_table(&[
                T::Tbody,
                T::Thead,
                T::Tfoot,
                T::Tr,
                T::Td,
                T::Th,
                T::Caption,
                T::Colgroup,
            ]),
            _ => {}
        }
    }

    /// Closes the lowest open element named in `ids` above the nearest table.
    fn close_in_table(&mut self, ids: &[T]) {
        let mut lowest = None;
        for (i, o) in self.stack.iter().enumerate().rev().take(SEARCH) {
            if o.kind.t == T::Table {
                break;
            }
            if ids.contains(&o.kind.t) {
                lowest = Some(i);
            }
        }
        if let Some(i) = lowest {
            self.truncate(i);
        }
    }

    /// The lowest stack index a search for an open element looks at ([`SEARCH`]).
    fn search_floor(&self) -> usize {
        self.stack.len().saturating_sub(SEARCH)
    }

    /// Pops the stack to `n` elements.
    fn truncate(&mut self, n: usize) {
        for o in &self.stack[n..] {
            if o.kind.has(PRE) {
                self.pre -= 1;
            }
            if o.kind.t == T::P {
                self.p_open -= 1;
            }
        }
        self.stack.truncate(n);
        if self.hidden.is_some_and(|h| h >= n) {
            self.hidden = None;
        }
    }

    /// An HTML end tag.
    fn end_tag(&mut self, t: TagToken<'a>) {
        let k = kind(t.name);
        if k.t == T::Template {
            self.templates = self.templates.saturating_sub(1);
            return;
        }
        if self.in_select {
            if k.t == T::Select {
                self.in_select = false;
            }
            return;
        }
        if self.templates > 0 || k.has(RAW | ROOT) {
            return;
        }
        if k.t == T::Br {
            // `</br>` is a `<br>`.
            if self.visible() {
                self.out.block();
            }
            return;
        }
        let found = self.find(t.name, k);
        let visible = self.visible();
        if let Some(i) = found {
            self.truncate(i);
        }
        // A `</p>` without a `<p>` makes an empty paragraph.
        if visible && k.has(BLOCK) && (found.is_some() || k.t == T::P) {
            self.out.block();
        }
    }

    /// Where the end tag `name` (of kind `k`) closes the stack: formatting and special elements
    /// look up to a scope boundary, table parts up to the table, others up to the first
    /// special element.
    fn find(&self, name: &str, k: Kind) -> Option<usize> {
        for (i, o) in self.stack.iter().enumerate().rev().take(SEARCH) {
            let same = if k.t == T::Other {
                o.kind.t == T::Other && self.tk.same_name(o.name, name)
            } else {
                o.kind.t == k.t
            };
            if same {
                return Some(i);
            }
            let stop = if k.has(TABLE_PART) {
                o.kind.t == T::Table
            } else if k.has(SPECIAL | FMT) {
                o.kind.has(SCOPE)
            } else {
                o.kind.has(SPECIAL)
            };
            if stop {
                return None;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
