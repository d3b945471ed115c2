//! The tokenizer pass of the link extractor ([`scan_impl`]): the tags of one document, with the
//! pieces of tree construction that decide whether a tag is an HTML element of the document
//! (SVG and MathML through [`super::foreign_step`], `<template>` contents, `<select>`,
//! `<frameset>`, the elements whose content the tokenizer skips) and what each element gives:
//! link targets, the base, meta robots and refresh, the title, anchor texts, and in archive mode
//! the page's requisites.

use std::borrow::Cow;
use std::ops::ControlFlow;

use crate::parse::css::css_urls;

use super::tokenizer::{Foreign, TagToken, Tokenizer};
use super::{
    anchor_text, clean_title, foreign_root, foreign_step, refresh_target, srcset_urls, RawLink,
    Scan, REQUISITE_TAGS,
};

/// A link target of a start tag: its tag and the attribute value.
type Target<'t> = Option<(&'static str, Cow<'t, str>)>;

/// The pass of [`scan_impl`] over one document: where the tokenizer is in the document's tree,
/// and what has been found.
struct Scanner<'t> {
    text: &'t str,
    tk: Tokenizer<'t>,
    page: Scan<'t>,
    /// Open SVG and MathML elements (innermost last).
    foreign: Vec<Foreign<'t>>,
    /// Open `<template>` elements: their content is not part of the document.
    templates: usize,
    /// Open `<frameset>` elements: a `<frame>` counts only inside one.
    framesets: usize,
    /// Inside `<select>`.
    in_select: bool,
    /// A `<meta name=robots>` was met (the first counts).
    robots_seen: bool,
    /// The `<a>` being read (anchors): its index in `raw` and where its content starts.
    open_a: Option<(usize, usize)>,
    /// Archive mode: the page's requisites are found too.
    requisites: bool,
    /// The text of each `<a>` link is kept ([`Scan::anchors`]).
    anchors: bool,
}

/// The pass behind [`super::scan_into`] and [`super::scan_with_anchors`], with the links put in
/// `raw` (cleared first).
pub(super) fn scan_impl<'t>(
    text: &'t str,
    orig: Option<&'t [u8]>,
    mut raw: Vec<RawLink<'t>>,
    requisites: bool,
    anchors: bool,
) -> Scan<'t> {
    raw.clear();
    let mut s = Scanner {
        text,
        tk: Tokenizer::new(text, orig),
        page: Scan {
            base_href: None,
            meta_robots: None,
            title: None,
            raw,
            anchors: Vec::new(),
        },
        foreign: Vec::new(),
        templates: 0,
        framesets: 0,
        in_select: false,
        robots_seen: false,
        open_a: None,
        requisites,
        anchors,
    };
    loop {
        // CDATA sections exist only in foreign content.
        s.tk.cdata = !s.foreign.is_empty();
        let Some(t) = s.tk.next_tag() else { break };
        if s.tag(&t).is_break() {
            break;
        }
    }
    s.close_anchor(text.len());
    s.page
}

impl<'t> Scanner<'t> {
    /// A tag: through the foreign-content rule, then as an HTML end or start tag. `Break` ends
    /// the document (`<plaintext>`).
    fn tag(&mut self, t: &TagToken<'t>) -> ControlFlow<()> {
        let step = foreign_step(&self.foreign, &self.tk, t);
        if self.anchors && (t.end || !step.in_foreign) && t.name.eq_ignore_ascii_case("a") {
            // An end tag closes the anchor, and so does another `<a>` (the parser closes it).
            self.close_anchor(self.tk.pos);
        }
        self.foreign.truncate(step.keep);
        self.foreign.extend(step.push);
        if !step.html {
            return ControlFlow::Continue(());
        }
        if t.end {
            self.end_tag(t.name);
            return ControlFlow::Continue(());
        }
        self.start_tag(t)
    }

    /// Ends the anchor being read, if any, with its content up to `to`.
    fn close_anchor(&mut self, to: usize) {
        if let Some((i, from)) = self.open_a.take() {
            let part = self.tk.text_of(&self.text[from..to]);
            self.page.anchors.push((i, anchor_text(&part)));
        }
    }

    /// An HTML end tag: the ends of templates, selects and framesets.
    fn end_tag(&mut self, name: &str) {
        let is = |n: &str| name.eq_ignore_ascii_case(n);
        if is("template") {
            self.templates = self.templates.saturating_sub(1);
        } else if is("select") {
            self.in_select = false;
        } else if is("frameset") {
            self.framesets = self.framesets.saturating_sub(1);
        }
    }

    /// An HTML start tag: what it opens or skips, and the link target, requisites and page
    /// signals it gives. `Break` at `<plaintext>`.
    fn start_tag(&mut self, t: &TagToken<'t>) -> ControlFlow<()> {
        let name = if t.name.bytes().any(|c| c.is_ascii_uppercase()) {
            Cow::Owned(t.name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(t.name)
        };
        if self.in_select && !select_admits(&mut self.in_select, &name) {
            return ControlFlow::Continue(());
        }
        let live = self.templates == 0;
        let target = match self.content_model(&name, t, live) {
            Some(flow) => flow?,
            None => self.element(&name, live),
        };
        if self.requisites && live && name != "style" {
            // `style=""` on any element.
            if let Some(style) = self.tk.attr("style") {
                style_urls(style, &mut self.page.raw);
            }
        }
        if let Some((tag, target)) = target.filter(|_| live) {
            self.page.raw.push(RawLink {
                tag,
                target,
                rel: self.tk.attr("rel"),
            });
            if self.anchors && tag == "a" {
                self.open_a = Some((self.page.raw.len() - 1, self.tk.pos));
            }
        }
        ControlFlow::Continue(())
    }

    /// A start tag `name` (lower-case) that changes where the tokenizer is (foreign content,
    /// templates, select, frameset, plaintext) or whose content it skips (script, raw text,
    /// the title): `Some` with the link target it gives, or `Break` at `<plaintext>`; `None`
    /// for the other elements.
    fn content_model(
        &mut self,
        name: &str,
        t: &TagToken<'t>,
        live: bool,
    ) -> Option<ControlFlow<(), Target<'t>>> {
        let target = match name {
            "svg" | "math" => {
                self.foreign.extend(foreign_root(t, name == "svg"));
                None
            }
            "template" => {
                self.templates += 1;
                None
            }
            "select" => {
                self.in_select = true;
                None
            }
            "frameset" => {
                self.framesets += 1;
                None
            }
            "plaintext" => return Some(ControlFlow::Break(())),
            "script" => {
                let src = if self.requisites {
                    self.tk.attr("src")
                } else {
                    None
                };
                self.tk.skip_script();
                src.map(|s| ("script", s))
            }
            "style" if self.requisites => {
                let inner = self.tk.skip_raw(name);
                if live {
                    let raw = &mut self.page.raw;
                    css_urls(inner, &mut |u| {
                        raw.push(RawLink {
                            tag: "style",
                            target: u,
                            rel: None,
                        })
                    });
                }
                None
            }
            "style" | "xmp" | "noembed" | "noframes" | "textarea" => {
                self.tk.skip_raw(name);
                None
            }
            "title" => {
                let inner = self.tk.skip_raw(name);
                if live && self.page.title.is_none() {
                    self.page.title = Some(clean_title(&self.tk.text_of(inner)));
                }
                None
            }
            "iframe" => {
                let src = self.tk.attr("src");
                self.tk.skip_raw(name);
                src.map(|s| ("iframe", s))
            }
            _ => return None,
        };
        Some(ControlFlow::Continue(target))
    }

    /// The link target of an ordinary start tag `name` (lower-case), and the base, meta robots
    /// and requisites it gives.
    fn element(&mut self, name: &str, live: bool) -> Target<'t> {
        let tk = &self.tk;
        match name {
            "frame" if self.framesets > 0 => tk.attr("src").map(|s| ("frame", s)),
            "a" => tk.attr("href").map(|h| ("a", h)),
            "area" => tk.attr("href").map(|h| ("area", h)),
            "link" => tk.attr("href").map(|h| ("link", h)),
            "base" if live && self.page.base_href.is_none() => {
                self.page.base_href = tk.attr("href");
                None
            }
            "meta" if live => {
                let n = tk.attr("name").unwrap_or_default();
                if !self.robots_seen && n.eq_ignore_ascii_case("robots") {
                    self.robots_seen = true;
                    self.page.meta_robots = tk.attr("content").map(Cow::into_owned);
                }
                let equiv = tk.attr("http-equiv").unwrap_or_default();
                if equiv.eq_ignore_ascii_case("refresh") {
                    tk.attr("content")
                        .and_then(|c| refresh_target(&c))
                        .map(|t| ("meta", Cow::Owned(t)))
                } else {
                    None
                }
            }
            _ if self.requisites && live => {
                requisites_of(name, tk, &mut self.page.raw);
                None
            }
            _ => None,
        }
    }
}

/// "In select" (inside a `<select>`, `in_select`): whether the start tag `name` (any case) goes
/// on to be processed, by the standard's rules for that insertion mode, simplified. These close
/// the select, clearing `in_select` (and `<select>` does nothing more); script and template work
/// as in the head; every other start tag is ignored. One rule for the link extractor and the
/// visible-text extractor (`parse::text`).
pub(crate) fn select_admits(in_select: &mut bool, name: &str) -> bool {
    const CLOSE: [&str; 12] = [
        "select", "input", "keygen", "textarea", "caption", "table", "tbody", "tfoot", "thead",
        "tr", "td", "th",
    ];
    let is = |n: &&str| name.eq_ignore_ascii_case(n);
    if CLOSE.iter().any(is) {
        *in_select = false;
    } else if !["script", "template"].iter().any(is) {
        return false;
    }
    !name.eq_ignore_ascii_case("select")
}

/// The requisites of one start tag `name` (lower-case) but `script`, `style` and `link`, which
/// [`Scanner`] handles: its `src`, `srcset`, `poster`, `data`, `background`.
fn requisites_of<'t>(name: &str, tk: &Tokenizer<'t>, raw: &mut Vec<RawLink<'t>>) {
    let Some(&tag) = REQUISITE_TAGS.iter().find(|t| **t == name) else {
        return;
    };
    let mut push = |target: Cow<'t, str>| {
        if !target.trim().is_empty() {
            raw.push(RawLink {
                tag,
                target,
                rel: None,
            });
        }
    };
    match name {
        "input" => {
            if tk
                .attr("type")
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("image"))
            {
                tk.attr("src").map(&mut push);
            }
        }
        "object" => {
            tk.attr("data").map(&mut push);
        }
        "body" | "table" => {
            tk.attr("background").map(&mut push);
        }
        _ => {
            tk.attr("src").map(&mut push);
            if name == "video" {
                tk.attr("poster").map(&mut push);
            }
            if let Some(set) = tk.attr("srcset") {
                match set {
                    Cow::Borrowed(s) => srcset_urls(s)
                        .into_iter()
                        .for_each(|u| push(Cow::Borrowed(u))),
                    Cow::Owned(s) => srcset_urls(&s)
                        .into_iter()
                        .for_each(|u| push(Cow::Owned(u.to_owned()))),
                }
            }
        }
    }
}

/// The URLs of a `style` attribute's CSS, as requisites.
fn style_urls<'t>(style: Cow<'t, str>, raw: &mut Vec<RawLink<'t>>) {
    if !style.contains("url(") && !style.contains("URL(") && !style.contains("Url(") {
        return;
    }
    let mut push = |target: Cow<'t, str>| {
        raw.push(RawLink {
            tag: "style",
            target,
            rel: None,
        })
    };
    match style {
        Cow::Borrowed(s) => css_urls(s, &mut push),
        Cow::Owned(s) => css_urls(&s, &mut |u| push(Cow::Owned(u.into_owned()))),
    }
}
