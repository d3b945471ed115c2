//! Link extraction and charset detection for HTML documents.
//!
//! Why this shape: the parse stage needs only outlinks and a few page-level signals (base,
//! canonical, meta robots), so a non-validating tokenizer (`tl`) that walks tags in document order
//! is enough and is tolerant of truncated input; it yields what it has. `tl` does not decode
//! character references in attribute values, so [`decode_entities`] handles the common ones
//! (`&amp;`, numeric references) before WHATWG URL resolution with the `url` crate.
//!
//! Charset detection follows the order of the HTML standard's encoding sniffing, simplified:
//! BOM, then the HTTP `Content-Type` charset, then a `<meta>` prescan of the first 1,024 bytes,
//! defaulting to windows-1252.

use encoding_rs::{Encoding, WINDOWS_1252};
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

/// Decodes the character references common in attribute values.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // Bytes, not str slicing: the window may end inside a multi-byte character.
        let semi = rest.as_bytes()[..rest.len().min(12)]
            .iter()
            .position(|&b| b == b';');
        let decoded = semi.and_then(|j| {
            let name = &rest[1..j];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => {
                    let num = name.strip_prefix('#')?;
                    let n = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => num.parse().ok()?,
                    };
                    char::from_u32(n)
                }
            }?;
            Some((c, j + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Extracts links from `bytes`, fetched from `doc_url` with the given `Content-Type` header.
pub fn extract_links(bytes: &[u8], doc_url: &Url, content_type: Option<&str>) -> PageLinks {
    let enc = detect_charset(bytes, content_type);
    let (text, _, _) = enc.decode(bytes);
    let mut page = PageLinks {
        charset: enc.name(),
        ..PageLinks::default()
    };
    // `tl` only treats a space as the separator after a tag name (`<link\nrel=…` is lost), so
    // other ASCII whitespace becomes spaces; URL parsing removes tabs and newlines anyway.
    let text = quote_unquoted(&text.replace(['\n', '\r', '\t', '\x0c'], " "));
    let Ok(dom) = tl::parse(&text, tl::ParserOptions::default()) else {
        return page;
    };
    let mut base = doc_url.clone();
    for node in dom.nodes() {
        let Some(tag) = node.as_tag() else { continue };
        let name = tag.name().as_utf8_str().to_ascii_lowercase();
        let attrs = tag.attributes();
        // Attribute names are ASCII case-insensitive in HTML; `tl` keeps them as written.
        let attr = |k: &str| {
            attrs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(k))
                .and_then(|(_, v)| v)
                .map(|v| decode_entities(&v))
        };
        let target = match name.as_str() {
            "title" => {
                if page.title.is_none() {
                    page.title = Some(clean_title(&tag.inner_text(dom.parser())));
                }
                continue;
            }
            "base" => {
                if page.base.is_none() {
                    if let Some(u) = attr("href").and_then(|h| doc_url.join(h.trim()).ok()) {
                        page.base = Some(u.to_string());
                        base = u;
                    }
                }
                continue;
            }
            "meta" => {
                let n = attr("name").unwrap_or_default();
                if n.eq_ignore_ascii_case("robots") && page.meta_robots.is_none() {
                    page.meta_robots = attr("content");
                }
                let equiv = attr("http-equiv").unwrap_or_default();
                if !equiv.eq_ignore_ascii_case("refresh") {
                    continue;
                }
                match attr("content").and_then(|c| refresh_target(&c)) {
                    Some(t) => t,
                    None => continue,
                }
            }
            "a" | "area" | "link" => match attr("href") {
                Some(h) => h,
                None => continue,
            },
            "iframe" | "frame" => match attr("src") {
                Some(s) => s,
                None => continue,
            },
            _ => continue,
        };
        let rel = attr("rel");
        let rels = rel.as_deref().unwrap_or("").to_ascii_lowercase();
        let Ok(mut url) = base.join(target.trim()) else {
            page.skipped_invalid += 1;
            continue;
        };
        url.set_fragment(None);
        if !matches!(url.scheme(), "http" | "https") {
            page.skipped_schemes += 1;
            continue;
        }
        if name == "link"
            && page.canonical.is_none()
            && rels.split_whitespace().any(|r| r == "canonical")
        {
            page.canonical = Some(url.to_string());
        }
        page.links.push(Link {
            url: url.into(),
            tag: name,
            nofollow: rels.split_whitespace().any(|r| r == "nofollow"),
            rel,
        });
    }
    page
}

/// A title as a page record keeps it: entities decoded, runs of whitespace made one space, cut
/// to at most 1,024 bytes at a character boundary.
fn clean_title(raw: &str) -> String {
    let mut t = decode_entities(raw)
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

/// Quotes unquoted attribute values (`<a href=/x>` becomes `<a href="/x">`): `tl` drops tags
/// whose values are unquoted, which HTML allows and minifiers produce.
fn quote_unquoted(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let (mut i, mut copied, mut in_tag) = (0, 0, false);
    while i < b.len() {
        match b[i] {
            b'<' if b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) => in_tag = true,
            b'>' => in_tag = false,
            b'"' | b'\'' if in_tag => {
                // Skip a quoted value whole.
                let q = b[i];
                match b[i + 1..].iter().position(|&c| c == q) {
                    Some(j) => i += j + 1,
                    None => break,
                }
            }
            b'=' if in_tag => {
                let mut j = i + 1;
                while b.get(j) == Some(&b' ') {
                    j += 1;
                }
                if j < b.len() && !matches!(b[j], b'"' | b'\'' | b'>') {
                    let end = b[j..]
                        .iter()
                        .position(|&c| c == b' ' || c == b'>')
                        .map_or(b.len(), |e| j + e);
                    out.push_str(&text[copied..j]);
                    out.push('"');
                    out.push_str(&text[j..end].replace('"', "&quot;"));
                    out.push('"');
                    copied = end;
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn links(html: &str, url: &str) -> PageLinks {
        extract_links(html.as_bytes(), &Url::parse(url).unwrap(), None)
    }

    #[test]
    fn charset_order() {
        assert_eq!(
            detect_charset(b"\xEF\xBB\xBFx", Some("text/html; charset=latin1")),
            encoding_rs::UTF_8
        );
        assert_eq!(
            detect_charset(
                b"<meta charset=utf-8>",
                Some("text/html; charset=\"ISO-8859-2\"")
            )
            .name(),
            "ISO-8859-2"
        );
        assert_eq!(
            detect_charset(
                b"<meta http-equiv=content-type content='text/html; charset=utf-8'>",
                None
            ),
            encoding_rs::UTF_8
        );
        assert_eq!(detect_charset(b"<p>hi", None), WINDOWS_1252);
    }

    #[test]
    fn base_relative_fragments_entities_and_schemes() {
        let p = links(
            r#"<base href="/d/"><a href="x?a=1&amp;b=2#f">x</a><a href="javascript:void(0)">j</a>
               <a rel="nofollow" href="https://o.example/">o</a><link rel=canonical href="/c">"#,
            "http://h.example/p/q",
        );
        assert_eq!(p.base.as_deref(), Some("http://h.example/d/"));
        assert_eq!(p.links[0].url, "http://h.example/d/x?a=1&b=2");
        assert_eq!(p.skipped_schemes, 1);
        assert!(p.links[1].nofollow);
        assert_eq!(p.canonical.as_deref(), Some("http://h.example/c"));
    }

    #[test]
    fn meta_robots_refresh_and_truncation() {
        let p = links(
            r#"<meta name="robots" content="noindex, nofollow"><meta http-equiv="refresh" content="0; url=/n"><a href="/t"#,
            "http://h.example/",
        );
        assert!(p.noindex(None) && p.nofollow(None));
        assert_eq!(p.links[0].url, "http://h.example/n");
        assert!(links("", "http://h.example/").nofollow(Some("none")));
        let p = links(
            "<link rel=alternate href=https://r.org/a/ ><a href=/b>b</a>",
            "http://h/",
        );
        assert_eq!(p.links.len(), 2, "{p:?}");
        // Never panics on odd input: multi-byte text after `&` or in a refresh.
        links(
            "<a href='&ééééééééé'><meta http-equiv=refresh content='0;é'>",
            "http://h/",
        );
    }
}
