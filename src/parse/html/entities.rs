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
pub(super) fn decode_refs(s: &str, in_attr: bool) -> Cow<'_, str> {
    let b = s.as_bytes();
    if !b.iter().any(|&c| matches!(c, b'&' | b'\r' | 0)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        let (c, len) = match b[i] {
            b'\r' => ('\n', if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 }),
            0 => ('\u{fffd}', 1),
            b'&' => match char_ref(&s[i + 1..], in_attr) {
                Some((c, len)) => (c, len + 1),
                None => {
                    i += 1;
                    continue;
                }
            },
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[copied..i]);
        out.push(c);
        i += len;
        copied = i;
    }
    out.push_str(&s[copied..]);
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
