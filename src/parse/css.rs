//! The URLs a CSS text loads: `url(...)` tokens and `@import "..."` strings, for archive mode
//! (`[parse] requisites`), in `<style>` elements, `style` attributes and fetched stylesheets.
//!
//! Not a CSS parser: one linear pass that knows comments, strings and the `url(` function as CSS
//! Syntax Level 3 tokenizes them (an unquoted `url(` ends at `)`; quotes inside `url("...")`
//! and `@import '...'` end at the matching quote, backslash escapes are undone). Every `url(`
//! counts, wherever it is (a property, `@import url()`, `@font-face src`); a `data:` URL is
//! returned like the others and dropped later with the other non-HTTP schemes.

use std::borrow::Cow;

/// Calls `out` with every URL `css` loads, in order, as written (unresolved).
pub fn css_urls<'a>(css: &'a str, out: &mut dyn FnMut(Cow<'a, str>)) {
    let b = css.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = match css[i + 2..].find("*/") {
                    Some(k) => i + 2 + k + 2,
                    None => b.len(),
                };
            }
            b'"' | b'\'' => {
                // A string outside url() and @import loads nothing.
                let (_, end) = string_at(css, i);
                i = end;
            }
            b'@' if css[i + 1..]
                .get(..6)
                .is_some_and(|k| k.eq_ignore_ascii_case("import")) =>
            {
                match string_after(css, i + 7, out) {
                    Ok(end) => i = end,
                    Err(k) => i = k, // `@import url(...)`: the url( below finds it
                }
            }
            b'u' | b'U'
                if css[i..]
                    .get(..4)
                    .is_some_and(|k| k.eq_ignore_ascii_case("url("))
                    && (i == 0 || !is_name(b[i - 1])) =>
            {
                match string_after(css, i + 4, out) {
                    Ok(end) => i = end,
                    Err(k) => {
                        let end = css[k..].find(')').map_or(b.len(), |e| k + e);
                        let raw = css[k..end].trim();
                        if !raw.is_empty() {
                            out(unescape(raw));
                        }
                        i = end + 1;
                    }
                }
            }
            _ => i += 1,
        }
    }
}

/// After optional whitespace from `from`: a quoted string, given to `out` unless blank,
/// `Ok(the index after it)`; anything else, `Err(where it starts)`.
fn string_after<'a>(
    css: &'a str,
    from: usize,
    out: &mut dyn FnMut(Cow<'a, str>),
) -> Result<usize, usize> {
    let b = css.as_bytes();
    let mut k = from.min(b.len());
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    if k < b.len() && (b[k] == b'"' || b[k] == b'\'') {
        let (s, end) = string_at(css, k);
        if !s.trim().is_empty() {
            out(s);
        }
        return Ok(end);
    }
    Err(k)
}

/// Whether `c` can be part of a CSS identifier (so `xurl(` is not `url(`).
fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c >= 0x80
}

/// The string starting with the quote at `at`: its value (escapes undone) and the index after
/// its closing quote (or the end of a line or of the text, for an unclosed one).
fn string_at(css: &str, at: usize) -> (Cow<'_, str>, usize) {
    let b = css.as_bytes();
    let q = b[at];
    let mut k = at + 1;
    let mut escaped = false;
    while k < b.len() && b[k] != q && b[k] != b'\n' {
        if b[k] == b'\\' {
            escaped = true;
            k += 1;
        }
        k += 1;
    }
    let end = k.min(b.len());
    let raw = &css[at + 1..end];
    let value = if escaped {
        unescape(raw)
    } else {
        Cow::Borrowed(raw)
    };
    (value, (end + 1).min(b.len()))
}

/// Undoes CSS backslash escapes: `\` + up to six hex digits (and one whitespace after) is that
/// code point, `\` + any other character is the character, `\` + newline is nothing.
fn unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let mut hex = String::new();
        while hex.len() < 6 && chars.peek().is_some_and(char::is_ascii_hexdigit) {
            hex.push(chars.next().expect("peeked"));
        }
        if hex.is_empty() {
            match chars.next() {
                Some('\n') | None => {}
                Some(c) => out.push(c),
            }
            continue;
        }
        if chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        let v = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
        out.push(
            char::from_u32(v)
                .filter(|&c| c != '\0')
                .unwrap_or('\u{FFFD}'),
        );
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(css: &str) -> Vec<String> {
        let mut v = Vec::new();
        css_urls(css, &mut |u| v.push(u.into_owned()));
        v
    }

    #[test]
    fn url_functions_and_imports_in_every_form() {
        let css = r#"
            @import "base.css";
            @import url(print.css) print;
            @IMPORT 'theme.css';
            body { background: URL( "img/bg.png" ) no-repeat; }
            .a { background-image: url('a.png'), url(b.png); }
            @font-face { src: url(font.woff2) format("woff2"), url("font.woff") format("woff"); }
            .icon { mask: url(data:image/svg+xml;base64,AAAA); }
        "#;
        assert_eq!(
            urls(css),
            [
                "base.css",
                "print.css",
                "theme.css",
                "img/bg.png",
                "a.png",
                "b.png",
                "font.woff2",
                "font.woff",
                "data:image/svg+xml;base64,AAAA"
            ]
        );
    }

    #[test]
    fn comments_strings_and_other_functions_load_nothing() {
        let css = r#"
            /* url(commented.png) @import "no.css"; */
            .a::before { content: "url(not-a-url.png)"; }
            .b { background: xurl(nope.png); --x: my-url(nope2.png); }
            .c { background: url(yes.png) }
            /* unclosed comment url(never.png)"#;
        assert_eq!(urls(css), ["yes.png"]);
    }

    #[test]
    fn escapes_are_undone() {
        assert_eq!(urls(r#"a { b: url("a\"b.png") }"#), ["a\"b.png"]);
        assert_eq!(urls(r"a { b: url(sp\ ace.png) }"), ["sp ace.png"]);
        assert_eq!(urls(r"a { b: url(\66 oo.png) }"), ["foo.png"]);
        assert_eq!(urls(r"a { b: url(x\,y.png) }"), ["x,y.png"]);
    }

    #[test]
    fn broken_css_ends_without_panicking() {
        for css in [
            "url(",
            "url(\"",
            "@import",
            "@import '",
            "u",
            "/*",
            "\\",
            "url(\\",
        ] {
            let _ = urls(css);
        }
        assert_eq!(urls("url(  )"), Vec::<String>::new());
        assert_eq!(urls("url(a.png"), ["a.png"]);
    }
}
