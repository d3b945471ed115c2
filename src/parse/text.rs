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
//!
//! Here: the walker over the tokens (text runs, foreign content's visibility). The parts:
//! `kind.rs` (what an element is, by its tag name), `tree.rs` (start and end tags against the
//! open elements), `hide.rs` (attributes that hide an element), `out.rs` (lines, whitespace,
//! the bound).

use super::html::entities::decode_text_refs_into;
use super::html::tokenizer::{Foreign, TagToken, Token, Tokenizer};
use super::html::{decode_text, detect_charset};
use hide::hides;
use out::{all_ws, Out};
use tree::Open;

mod hide;
mod kind;
mod out;
mod tree;

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
}

#[cfg(test)]
mod tests;
