//! Whether an element's attributes hide it and its descendants: `hidden`,
//! `aria-hidden="true"`, an inline `style` with `display: none` or `visibility: hidden`.

use crate::parse::html::tokenizer::{is_ws, Tokenizer};

/// Whether a start tag's attributes hide the element: `hidden`, `aria-hidden="true"`, or an
/// inline style with `display: none` or `visibility: hidden` (the first of duplicate attributes
/// counts, as in the standard).
pub(super) fn hides(tk: &Tokenizer<'_>) -> bool {
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

/// ASCII whitespace as HTML defines it.
fn is_ws_char(c: char) -> bool {
    c.is_ascii() && is_ws(c as u8)
}
