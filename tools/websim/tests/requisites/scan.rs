//! An independent scan of the requisites in HTML and CSS, written here from scratch: what the
//! rendered pages and stylesheets load, to compare with the model's requisites.

use std::collections::HashMap;

use crate::truth::{attrs, resolve};

/// The URLs of a `srcset` (descriptors dropped).
fn srcset(v: &str) -> Vec<&str> {
    v.split(',')
        .filter_map(|c| c.split_whitespace().next())
        .collect()
}

/// `url(...)` values of CSS text, quotes stripped, and `@import` targets (either spelling), in
/// order.
pub(super) fn css_refs(css: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = css;
    loop {
        let imp = rest.find("@import");
        let url = rest.find("url(");
        let (at, is_import) = match (imp, url) {
            (Some(i), Some(u)) if i < u => (i, true),
            (_, Some(u)) => (u, false),
            (Some(i), None) => (i, true),
            (None, None) => break,
        };
        if is_import {
            let after = rest[at + "@import".len()..].trim_start();
            if let Some(inner) = after.strip_prefix("url(") {
                let end = inner.find(')').unwrap();
                out.push(unquote(&inner[..end]));
                rest = &inner[end + 1..];
            } else {
                let q = after.chars().next().unwrap();
                let end = after[1..].find(q).unwrap() + 1;
                out.push(after[1..end].to_string());
                rest = &after[end + 1..];
            }
        } else {
            let inner = &rest[at + 4..];
            let end = inner.find(')').unwrap();
            out.push(unquote(&inner[..end]));
            rest = &inner[end + 1..];
        }
    }
    out
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// `(url, tag)` of every requisite of an HTML page: `<link rel=stylesheet href>`, `<script
/// src>`, `<img src srcset>`, `<source srcset>`, `url()` in `style` attributes.
pub(super) fn scan_requisites(html: &str, doc: &str) -> Vec<(String, String)> {
    let mut base = doc.to_string();
    let mut based = false;
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        rest = &rest[end..];
        let name_end = tag
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(tag.len());
        let name = tag[..name_end].to_ascii_lowercase();
        let a: HashMap<String, String> = attrs(&tag[name_end..]).into_iter().collect();
        let mut push = |u: &str, t: &str| out.push((resolve(&base, u), t.to_string()));
        match name.as_str() {
            "link"
                if a.get("rel")
                    .is_some_and(|r| r.eq_ignore_ascii_case("stylesheet")) =>
            {
                push(&a["href"], "link")
            }
            "script" => {
                if let Some(s) = a.get("src") {
                    push(s, "script");
                }
            }
            "img" => {
                if let Some(s) = a.get("src") {
                    push(s, "img");
                }
                for u in a.get("srcset").map_or(vec![], |s| srcset(s)) {
                    push(u, "img");
                }
            }
            "source" => {
                for u in a.get("srcset").map_or(vec![], |s| srcset(s)) {
                    push(u, "source");
                }
            }
            _ => {}
        }
        if let Some(style) = a.get("style") {
            for u in css_refs(style) {
                push(&u, "style");
            }
        }
        if name == "base" && !based {
            if let Some(h) = a.get("href") {
                base = resolve(doc, h);
                based = true;
            }
        }
    }
    out
}
