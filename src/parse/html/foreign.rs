//! Foreign content (SVG and MathML inside HTML): what a tag does to the open foreign elements,
//! by the HTML standard's rules ("the rules for parsing tokens in foreign content"). One rule
//! for the link extractor (`scan_impl`) and the visible-text extractor
//! (`parse::text`): [`foreign_step`] for every tag, [`foreign_root`] for the `<svg>` and `<math>`
//! start tags that enter foreign content from HTML.

use super::tokenizer::{Foreign, TagToken, Tokenizer, BREAKOUT};

/// What a tag does to the open SVG and MathML elements ([`foreign_step`]), one rule for the
/// link extractor and the text extractor.
pub(crate) struct ForeignStep<'a> {
    /// The tag is in foreign content: the "adjusted current node" is foreign and not an
    /// integration point whose start tags are HTML.
    pub(crate) in_foreign: bool,
    /// How many of the open foreign elements stay open (the rest close first).
    pub(crate) keep: usize,
    /// The foreign element the tag opens, after those close.
    pub(crate) push: Option<Foreign<'a>>,
    /// The tag goes on to be processed as HTML.
    pub(crate) html: bool,
}

/// What tag `t` (its attributes in `tk`) does to the open SVG and MathML elements `foreign`
/// (innermost last), by the standard's rules for foreign content.
pub(crate) fn foreign_step<'a>(
    foreign: &[Foreign<'a>],
    tk: &Tokenizer<'_>,
    t: &TagToken<'a>,
) -> ForeignStep<'a> {
    // The "adjusted current node" is foreign; start tags in an integration point are HTML.
    let top = foreign.last();
    let is = |n: &str| t.name.eq_ignore_ascii_case(n);
    let in_foreign = top.is_some_and(|f| {
        let annotation = !f.svg && f.name.eq_ignore_ascii_case("annotation-xml");
        !f.integration_point()
            || (!t.end && !f.svg && !annotation && (is("mglyph") || is("malignmark")))
            || (!t.end && annotation && is("svg"))
    });
    let step = |keep: usize, push: Option<Foreign<'a>>, html: bool| ForeignStep {
        in_foreign,
        keep,
        push,
        html,
    };
    let open = foreign.len();
    if t.end {
        if in_foreign {
            // The standard walks up the foreign elements to one of the same name and pops to
            // it; reaching an HTML element instead, the end tag is processed as HTML and closes
            // that element, with the SVG or MathML subtree inside it.
            return match foreign.iter().rposition(|f| tk.same_name(f.name, t.name)) {
                Some(k) => step(k, None, false),
                None => step(0, None, true),
            };
        }
        if top.is_some_and(|f| tk.same_name(f.name, t.name)) {
            // Integration points are "special": HTML end tags inside one stop at it.
            return step(open - 1, None, false);
        }
        return step(open, None, true);
    }
    if !in_foreign {
        return step(open, None, true);
    }
    if !breaks_out(tk, t.name) {
        // Children take the parent's namespace (`<svg>` in `annotation-xml` is SVG).
        let push = (!t.self_closing).then(|| Foreign {
            name: t.name,
            svg: top.is_some_and(|f| {
                f.svg || (is("svg") && f.name.eq_ignore_ascii_case("annotation-xml"))
            }),
        });
        return step(open, push, false);
    }
    let keep = foreign
        .iter()
        .rposition(Foreign::integration_point)
        .map_or(0, |k| k + 1);
    step(keep, None, true)
}

/// The foreign element that an `<svg>` or `<math>` start tag `t` in HTML content opens (`svg`:
/// which of the two): none if it is self-closing (`<svg/>` opens and closes at once).
pub(crate) fn foreign_root<'a>(t: &TagToken<'a>, svg: bool) -> Option<Foreign<'a>> {
    (!t.self_closing).then_some(Foreign { name: t.name, svg })
}

/// Whether the start tag `name` (its attributes in `tk`) breaks out of SVG or MathML content
/// back into HTML, as the standard lists them (and `<font>` with `color`, `face` or `size`).
fn breaks_out(tk: &Tokenizer<'_>, name: &str) -> bool {
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    BREAKOUT.iter().any(|n| is(n))
        || (is("font")
            && tk.attrs.iter().any(|(n, _)| {
                ["color", "face", "size"]
                    .iter()
                    .any(|x| n.eq_ignore_ascii_case(x))
            }))
}
