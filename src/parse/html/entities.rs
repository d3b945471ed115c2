//! Character references (`&amp;`, `&#47;`, `&copy`) as the HTML standard's tokenizer decodes them,
//! in attribute values and in text.

use std::borrow::Cow;

use encoding_rs::WINDOWS_1252;

/// Decodes the character references in an attribute value as the HTML tokenizer does: numeric
/// references (with the standard's replacements) and named ones. The named table holds the
/// legacy names, which also count without `;` unless followed by `=` or an alphanumeric (so
/// `?a=1&copy=2` stays as written), and the common punctuation and typographic names; other
/// names stay as written. CR and CRLF become LF, NUL becomes U+FFFD.
pub fn decode_entities(s: &str) -> String {
    decode_refs(s, true).into_owned()
}

/// Decodes character references in an attribute value (`in_attr`) or in text; borrows `s` when
/// there is nothing to decode.
pub(crate) fn decode_refs(s: &str, in_attr: bool) -> Cow<'_, str> {
    if memchr::memchr3(b'&', b'\r', 0, s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    decode_with(s, &mut out, |rest| char_ref(rest, in_attr));
    Cow::Owned(out)
}

/// The character reference at the start of `rest` (just after a `&`): the character and how
/// many bytes of `rest` it used, or `None` if `&` stays literal.
fn char_ref(rest: &str, in_attr: bool) -> Option<(char, usize)> {
    let b = rest.as_bytes();
    if b.first() == Some(&b'#') {
        let (radix, start) = match b.get(1) {
            Some(b'x' | b'X') => (16, 2),
            _ => (10, 1),
        };
        let mut i = start;
        let mut n: u32 = 0;
        while let Some(d) = b.get(i).and_then(|&c| char::from(c).to_digit(radix)) {
            n = n.saturating_mul(radix).saturating_add(d);
            i += 1;
        }
        if i == start {
            return None;
        }
        if b.get(i) == Some(&b';') {
            i += 1;
        }
        return Some((numeric_ref(n), i));
    }
    let run = b
        .iter()
        .take(32)
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    if b.get(run) == Some(&b';') {
        if let Some(c) = named_ref(&rest[..run]) {
            return Some((c, run + 1));
        }
    }
    // Without a `;`, only the legacy names count, and the longest one that prefixes the run.
    let (c, len) = (2..=run.min(6))
        .rev()
        .find_map(|len| Some((legacy_ref(&rest[..len])?, len)))?;
    let next = b.get(len).copied();
    if in_attr && next.is_some_and(|n| n == b'=' || n.is_ascii_alphanumeric()) {
        // "For historical reasons" the tokenizer leaves such a reference alone.
        return None;
    }
    Some((c, len))
}

/// The character of a numeric reference, with the HTML standard's replacements (NUL,
/// surrogates and out-of-range values become U+FFFD; 0x80–0x9F are read as windows-1252).
fn numeric_ref(n: u32) -> char {
    match n {
        0x80..=0x9f => WINDOWS_1252
            .decode_without_bom_handling(&[n as u8])
            .0
            .chars()
            .next()
            .unwrap_or('\u{fffd}'),
        _ => char::from_u32(n)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{fffd}'),
    }
}

/// The Latin-1 named references U+00A0 to U+00FF in code point order: with the four below
/// (`amp`, `lt`, `gt`, `quot`, also in upper case) and `COPY`, `REG` they are the legacy names
/// that the tokenizer accepts without a `;`.
const LATIN1_NAMES: [&str; 96] = [
    "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf",
    "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro",
    "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
    "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute",
    "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute",
    "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute",
    "THORN", "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil",
    "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde",
    "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
    "uuml", "yacute", "thorn", "yuml",
];

/// A legacy named reference (one that may appear without `;`).
fn legacy_ref(name: &str) -> Option<char> {
    match name {
        "amp" | "AMP" => Some('&'),
        "lt" | "LT" => Some('<'),
        "gt" | "GT" => Some('>'),
        "quot" | "QUOT" => Some('"'),
        "COPY" => Some('©'),
        "REG" => Some('®'),
        _ => {
            let i = LATIN1_NAMES.iter().position(|&n| n == name)?;
            char::from_u32(0xa0 + i as u32)
        }
    }
}

/// A named reference written with `;`: the legacy names plus the ones that occur in URLs and
/// titles (ASCII punctuation, typographic quotes and dashes, a few symbols). The standard's
/// table has 2,231 names; a name missing here stays as written.
fn named_ref(name: &str) -> Option<char> {
    Some(match name {
        "apos" => '\'',
        "Tab" => '\t',
        "NewLine" => '\n',
        "excl" => '!',
        "num" => '#',
        "dollar" => '$',
        "percnt" => '%',
        "lpar" => '(',
        "rpar" => ')',
        "ast" | "midast" => '*',
        "plus" => '+',
        "comma" => ',',
        "period" => '.',
        "sol" => '/',
        "colon" => ':',
        "semi" => ';',
        "equals" => '=',
        "quest" => '?',
        "commat" => '@',
        "lsqb" | "lbrack" => '[',
        "bsol" => '\\',
        "rsqb" | "rbrack" => ']',
        "Hat" => '^',
        "lowbar" | "UnderBar" => '_',
        "grave" | "DiacriticalGrave" => '`',
        "lcub" | "lbrace" => '{',
        "verbar" | "vert" | "VerticalLine" => '|',
        "rcub" | "rbrace" => '}',
        "hellip" | "mldr" => '…',
        "ndash" => '–',
        "mdash" => '—',
        "lsquo" | "OpenCurlyQuote" => '‘',
        "rsquo" | "rsquor" | "CloseCurlyQuote" => '’',
        "sbquo" | "lsquor" => '‚',
        "ldquo" | "OpenCurlyDoubleQuote" => '“',
        "rdquo" | "rdquor" | "CloseCurlyDoubleQuote" => '”',
        "bdquo" | "ldquor" => '„',
        "bull" | "bullet" => '•',
        "euro" => '€',
        "trade" | "TRADE" => '™',
        "dagger" => '†',
        "Dagger" | "ddagger" => '‡',
        "permil" => '‰',
        "lsaquo" => '‹',
        "rsaquo" => '›',
        "OElig" => 'Œ',
        "oelig" => 'œ',
        "Scaron" => 'Š',
        "scaron" => 'š',
        "Yuml" => 'Ÿ',
        "fnof" => 'ƒ',
        "circ" => 'ˆ',
        "tilde" => '˜',
        "ensp" => '\u{2002}',
        "emsp" => '\u{2003}',
        "thinsp" => '\u{2009}',
        "zwnj" => '\u{200c}',
        "zwj" => '\u{200d}',
        "lrm" => '\u{200e}',
        "rlm" => '\u{200f}',
        "prime" => '′',
        "Prime" => '″',
        "larr" => '←',
        "rarr" => '→',
        "uarr" => '↑',
        "darr" => '↓',
        "harr" => '↔',
        "minus" => '−',
        "le" => '≤',
        "ge" => '≥',
        "ne" => '≠',
        "infin" => '∞',
        "hearts" => '♥',
        // Names that start with a legacy name and must not decode as it.
        "notin" => '∉',
        "parallel" => '∥',
        "centerdot" => '·',
        "copysr" => '℗',
        "timesb" => '⊠',
        "timesd" => '⨰',
        _ => return legacy_ref(name),
    })
}

/// Decodes the character references in text (not in an attribute value) for visible-text
/// extraction (`crate::parse::text`): [`decode_refs`] with the HTML 4 names that the table of
/// [`named_ref`] leaves out as well ([`html4_ref`]: Greek letters, mathematical symbols, arrows,
/// card suits), which text uses more than URLs do. The link extractor does not use it.
pub(crate) fn decode_text_refs(s: &str) -> Cow<'_, str> {
    if memchr::memchr3(b'&', b'\r', 0, s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    decode_text_refs_into(s, &mut out);
    Cow::Owned(out)
}

/// [`decode_text_refs`], appending to `out` (a buffer reused from run to run).
pub(crate) fn decode_text_refs_into(s: &str, out: &mut String) {
    decode_with(s, out, text_char_ref);
}

/// Appends `s` to `out` with its character references decoded by `char_ref` (given what
/// follows a `&`, the character and how many bytes it used), CR and CRLF made LF and NUL made
/// U+FFFD, as the tokenizer does.
fn decode_with(s: &str, out: &mut String, char_ref: impl Fn(&str) -> Option<(char, usize)>) {
    let b = s.as_bytes();
    let (mut i, mut copied) = (0, 0);
    while let Some(k) = memchr::memchr3(b'&', b'\r', 0, &b[i..]) {
        i += k;
        let (c, len) = match b[i] {
            b'\r' => ('\n', if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 }),
            0 => ('\u{fffd}', 1),
            _ => match char_ref(&s[i + 1..]) {
                Some((c, len)) => (c, len + 1),
                None => {
                    i += 1;
                    continue;
                }
            },
        };
        out.push_str(&s[copied..i]);
        out.push(c);
        i += len;
        copied = i;
    }
    out.push_str(&s[copied..]);
}

/// [`char_ref`] in text, with the names of [`html4_ref`] too.
fn text_char_ref(rest: &str) -> Option<(char, usize)> {
    let b = rest.as_bytes();
    let run = b
        .iter()
        .take(32)
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    if run > 0 && b.get(run) == Some(&b';') {
        if let Some(c) = html4_ref(&rest[..run]) {
            return Some((c, run + 1));
        }
    }
    char_ref(rest, false)
}

/// The HTML 4 named references (written with `;`) that [`named_ref`] does not hold, with the
/// characters the HTML standard gives them (`lang` and `rang` are U+27E8 and U+27E9 there):
/// Greek letters, mathematical symbols, arrows, card suits. Sorted by name (byte order), for
/// [`html4_ref`]'s binary search.
pub(super) const HTML4_REFS: [(&str, char); 106] = [
    ("Alpha", '\u{391}'),
    ("Beta", '\u{392}'),
    ("Chi", '\u{3a7}'),
    ("Delta", '\u{394}'),
    ("Epsilon", '\u{395}'),
    ("Eta", '\u{397}'),
    ("Gamma", '\u{393}'),
    ("Iota", '\u{399}'),
    ("Kappa", '\u{39a}'),
    ("Lambda", '\u{39b}'),
    ("Mu", '\u{39c}'),
    ("Nu", '\u{39d}'),
    ("Omega", '\u{3a9}'),
    ("Omicron", '\u{39f}'),
    ("Phi", '\u{3a6}'),
    ("Pi", '\u{3a0}'),
    ("Psi", '\u{3a8}'),
    ("Rho", '\u{3a1}'),
    ("Sigma", '\u{3a3}'),
    ("Tau", '\u{3a4}'),
    ("Theta", '\u{398}'),
    ("Upsilon", '\u{3a5}'),
    ("Xi", '\u{39e}'),
    ("Zeta", '\u{396}'),
    ("alefsym", '\u{2135}'),
    ("alpha", '\u{3b1}'),
    ("and", '\u{2227}'),
    ("ang", '\u{2220}'),
    ("asymp", '\u{2248}'),
    ("beta", '\u{3b2}'),
    ("cap", '\u{2229}'),
    ("chi", '\u{3c7}'),
    ("clubs", '\u{2663}'),
    ("cong", '\u{2245}'),
    ("crarr", '\u{21b5}'),
    ("cup", '\u{222a}'),
    ("dArr", '\u{21d3}'),
    ("delta", '\u{3b4}'),
    ("diams", '\u{2666}'),
    ("empty", '\u{2205}'),
    ("epsilon", '\u{3b5}'),
    ("equiv", '\u{2261}'),
    ("eta", '\u{3b7}'),
    ("exist", '\u{2203}'),
    ("forall", '\u{2200}'),
    ("frasl", '\u{2044}'),
    ("gamma", '\u{3b3}'),
    ("hArr", '\u{21d4}'),
    ("image", '\u{2111}'),
    ("int", '\u{222b}'),
    ("iota", '\u{3b9}'),
    ("isin", '\u{2208}'),
    ("kappa", '\u{3ba}'),
    ("lArr", '\u{21d0}'),
    ("lambda", '\u{3bb}'),
    ("lang", '\u{27e8}'),
    ("lceil", '\u{2308}'),
    ("lfloor", '\u{230a}'),
    ("lowast", '\u{2217}'),
    ("loz", '\u{25ca}'),
    ("mu", '\u{3bc}'),
    ("nabla", '\u{2207}'),
    ("ni", '\u{220b}'),
    ("nsub", '\u{2284}'),
    ("nu", '\u{3bd}'),
    ("oline", '\u{203e}'),
    ("omega", '\u{3c9}'),
    ("omicron", '\u{3bf}'),
    ("oplus", '\u{2295}'),
    ("or", '\u{2228}'),
    ("otimes", '\u{2297}'),
    ("part", '\u{2202}'),
    ("perp", '\u{22a5}'),
    ("phi", '\u{3c6}'),
    ("pi", '\u{3c0}'),
    ("piv", '\u{3d6}'),
    ("prod", '\u{220f}'),
    ("prop", '\u{221d}'),
    ("psi", '\u{3c8}'),
    ("rArr", '\u{21d2}'),
    ("radic", '\u{221a}'),
    ("rang", '\u{27e9}'),
    ("rceil", '\u{2309}'),
    ("real", '\u{211c}'),
    ("rfloor", '\u{230b}'),
    ("rho", '\u{3c1}'),
    ("sdot", '\u{22c5}'),
    ("sigma", '\u{3c3}'),
    ("sigmaf", '\u{3c2}'),
    ("sim", '\u{223c}'),
    ("spades", '\u{2660}'),
    ("sub", '\u{2282}'),
    ("sube", '\u{2286}'),
    ("sum", '\u{2211}'),
    ("sup", '\u{2283}'),
    ("supe", '\u{2287}'),
    ("tau", '\u{3c4}'),
    ("there4", '\u{2234}'),
    ("theta", '\u{3b8}'),
    ("thetasym", '\u{3d1}'),
    ("uArr", '\u{21d1}'),
    ("upsih", '\u{3d2}'),
    ("upsilon", '\u{3c5}'),
    ("weierp", '\u{2118}'),
    ("xi", '\u{3be}'),
    ("zeta", '\u{3b6}'),
];

/// The character of an HTML 4 named reference of [`HTML4_REFS`].
fn html4_ref(name: &str) -> Option<char> {
    HTML4_REFS
        .binary_search_by(|&(n, _)| n.cmp(name))
        .ok()
        .map(|k| HTML4_REFS[k].1)
}
