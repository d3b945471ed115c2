//! The walker's simplified tree construction: HTML start and end tags against the stack of open
//! elements (implied end tags of `p`, `li`, `dd`/`dt`, headings, options and table parts; end
//! tags that stop at special elements or the table), `<select>` and `<template>`, the elements
//! whose content the tokenizer skips or keeps as written (`script`, `title`, `xmp`,
//! `plaintext`, raw text), and where an element hides its content.

use super::hide::hides;
use super::kind::{
    kind, Kind, BLOCK, CLOSES_P, FMT, HIDE, PRE, RAW, ROOT, SCOPE, SPECIAL, T, TABLE_PART, VOID,
};
use super::out::Out;
use super::{Walker, MAX_OPEN, SEARCH};
use crate::parse::html::entities::decode_text_refs;
use crate::parse::html::tokenizer::TagToken;
use crate::parse::html::{foreign_root, select_admits};

/// An open HTML element.
pub(super) struct Open<'a> {
    /// The tag name as written (for elements that are not in the table of [`kind`]).
    name: &'a str,
    kind: Kind,
}

impl<'a> Walker<'a> {
    /// An HTML start tag; `false` ends the document (`<plaintext>`).
    pub(super) fn start_tag(&mut self, t: TagToken<'a>) -> bool {
        let k = kind(t.name);
        if self.in_select && !select_admits(&mut self.in_select, t.name) {
            return true;
        }
        let live = self.templates == 0;
        if let Some(go_on) = self.content_model(k, &t, live) {
            return go_on;
        }
        if live && !k.has(ROOT) {
            self.implied_ends(k);
            self.open(k, t.name);
        }
        true
    }

    /// A start tag that is not an ordinary element of the document (`live`: not in a
    /// template): SVG and MathML, `<template>`, `<select>`, and the elements whose content the
    /// tokenizer skips or keeps as written. `Some` with what [`Walker::start_tag`] returns, or
    /// `None` for an ordinary element.
    fn content_model(&mut self, k: Kind, t: &TagToken<'a>, live: bool) -> Option<bool> {
        match k.t {
            T::Svg | T::Math => {
                if let Some(f) = foreign_root(t, k.t == T::Svg) {
                    self.foreign_push(f);
                }
            }
            T::Template => self.templates += 1,
            T::Select => self.in_select = true,
            T::Plaintext if live => {
                self.plaintext();
                return Some(false);
            }
            T::Script => self.tk.skip_script(),
            T::Title => self.title_element(live),
            T::Xmp => self.xmp(k),
            _ if k.has(RAW) => {
                self.tk.skip_raw(k.id);
            }
            _ => return None,
        }
        Some(true)
    }

    /// `<plaintext>`: the rest of the document is its text, as written.
    fn plaintext(&mut self) {
        let rest = &self.tk.s[self.tk.pos..];
        if self.visible() {
            self.out.block();
            let rest = self.tk.text_of(rest);
            self.out.pre(&rest);
        }
    }

    /// A `<title>`: the first one of the document (`live`) is the title line.
    fn title_element(&mut self, live: bool) {
        let inner = self.tk.skip_raw("title");
        if live && self.title.is_none() {
            let raw = self.tk.text_of(inner);
            let mut t = Out::new(self.max_chars, raw.len());
            t.text(&decode_text_refs(&raw));
            self.title = Some(t.finish());
        }
    }

    /// An `<xmp>` (of kind `k`): its raw text is a block that keeps its whitespace.
    fn xmp(&mut self, k: Kind) {
        let inner = self.tk.skip_raw(k.id);
        if self.visible() {
            self.out.block();
            let raw = self.tk.text_of(inner);
            self.out.pre(raw.strip_prefix('\n').unwrap_or(&raw));
            self.out.block();
        }
    }

    /// Opens an ordinary element of kind `k` named `name`, its implied ends done: the line
    /// break or tab it starts, whether it hides its content, and its place on the stack (not
    /// for void elements, nor past [`MAX_OPEN`]).
    fn open(&mut self, k: Kind, name: &'a str) {
        let void = k.has(VOID);
        // (Inside a hidden element, whether this one hides too does not matter.)
        let hidden = !void && self.hidden.is_none() && self.hides_content(k);
        if !hidden && self.visible() {
            if k.has(BLOCK) || k.t == T::Br {
                self.out.block();
            } else if matches!(k.t, T::Td | T::Th) {
                self.out.cell();
            }
        }
        if void || self.stack.len() >= MAX_OPEN {
            return;
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
        self.stack.push(Open { name, kind: k });
    }

    /// Whether the element of kind `k` whose start tag was just read hides its content: by
    /// its kind, as a `<dialog>` that is not `open`, or by its attributes ([`hides`]).
    fn hides_content(&self, k: Kind) -> bool {
        k.has(HIDE)
            || (k.t == T::Dialog
                && !self
                    .tk
                    .attrs
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("open")))
            || hides(&self.tk)
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
    pub(super) fn end_tag(&mut self, t: TagToken<'a>) {
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
