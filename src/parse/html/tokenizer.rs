//! The HTML standard's tokenizer reduced to tags (see [`super`]): text, comments and doctypes
//! are skipped by the standard's rules; `Foreign` tracks SVG and MathML content and the tags
//! that break out of it.

use std::borrow::Cow;

use encoding_rs::WINDOWS_1252;

use super::entities::decode_refs;

/// ASCII whitespace as the tokenizer sees it (CR too: input preprocessing turns it into LF).
pub(crate) fn is_ws(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Whether `b[i..]` starts with `</name` (ASCII case-insensitive) followed by whitespace, `/`
/// or `>`: an "appropriate end tag" that ends RCDATA, RAWTEXT or script data.
pub(crate) fn end_tag_at(b: &[u8], i: usize, name: &str) -> bool {
    b.get(i + 1) == Some(&b'/') && name_at(b, i + 2, name)
}

/// Whether `b[i..]` starts with `name` (ASCII case-insensitive) followed by whitespace, `/` or
/// `>`.
pub(crate) fn name_at(b: &[u8], i: usize, name: &str) -> bool {
    let end = i + name.len();
    b.get(i..end)
        .is_some_and(|s| s.eq_ignore_ascii_case(name.as_bytes()))
        && b.get(end)
            .is_some_and(|&c| is_ws(c) || c == b'/' || c == b'>')
}

/// A start or end tag; its attributes are in [`Tokenizer::attrs`].
pub(crate) struct TagToken<'a> {
    /// The tag name as written (compare ASCII case-insensitively).
    pub(crate) name: &'a str,
    /// An end tag (`</p>`).
    pub(crate) end: bool,
    /// A start tag written `<x/>`.
    pub(crate) self_closing: bool,
}

/// The HTML standard's tokenizer (§13.2.5), reduced to what link extraction needs: it yields
/// the tags and skips text, comments, doctypes, bogus comments and CDATA sections by the
/// standard's rules. Which elements hold RCDATA, RAWTEXT or script data is decided by tree
/// construction, so the caller switches those states with [`Tokenizer::skip_raw`] and
/// [`Tokenizer::skip_script`]. Every byte is looked at a bounded number of times.
pub(crate) struct Tokenizer<'a> {
    /// The decoded document.
    pub(crate) s: &'a str,
    /// Where tokenizing resumes; always at a character boundary.
    pub(crate) pos: usize,
    /// The attributes of the last tag, as (name, raw value), duplicates kept in order (the first
    /// one counts).
    pub(crate) attrs: Vec<(&'a str, &'a str)>,
    /// Whether `<![CDATA[` opens a CDATA section (in foreign content) or a bogus comment.
    pub(crate) cdata: bool,
    /// The windows-1252 bytes of the document when `s` is their ASCII skeleton (see
    /// [`decode_text`]): what the tokenizer hands out is decoded from here.
    pub(crate) orig: Option<&'a [u8]>,
}

impl<'a> Tokenizer<'a> {
    /// A tokenizer at the start of `s`; `orig`, if given, is the windows-1252 document whose
    /// ASCII skeleton `s` is.
    pub(crate) fn new(s: &'a str, orig: Option<&'a [u8]>) -> Self {
        Tokenizer {
            s,
            pos: 0,
            attrs: Vec::new(),
            cdata: false,
            orig,
        }
    }

    /// The bytes of the document under `part`, a slice of `s` (or a string of its own, such as
    /// the empty value of an attribute written without one: its own bytes).
    pub(crate) fn bytes_of(&self, part: &'a str) -> &'a [u8] {
        let Some(orig) = self.orig else {
            return part.as_bytes();
        };
        // Found by fuzzing: an empty value is a literal, not a slice of `s`, and its address
        // minus `s`'s overflowed.
        let at = (part.as_ptr() as usize).checked_sub(self.s.as_ptr() as usize);
        match at {
            Some(at) if at + part.len() <= self.s.len() && at + part.len() <= orig.len() => {
                &orig[at..at + part.len()]
            }
            _ => part.as_bytes(),
        }
    }

    /// The text of `part`, a slice of `s`: `part` itself, or decoded from the document if `s`
    /// is a skeleton and `part` covers non-ASCII bytes.
    pub(crate) fn text_of(&self, part: &'a str) -> Cow<'a, str> {
        let bytes = self.bytes_of(part);
        if self.orig.is_none() || bytes.is_ascii() {
            return Cow::Borrowed(part);
        }
        Cow::Owned(
            WINDOWS_1252
                .decode_without_bom_handling(bytes)
                .0
                .into_owned(),
        )
    }

    /// Whether two tag names (slices of `s`) are equal ASCII-case-insensitively, as text.
    pub(crate) fn same_name(&self, a: &'a str, b: &'a str) -> bool {
        self.bytes_of(a).eq_ignore_ascii_case(self.bytes_of(b))
    }

    /// The next tag, or `None` at the end of input (a tag cut off by the end is dropped, as the
    /// standard says).
    pub(crate) fn next_tag(&mut self) -> Option<TagToken<'a>> {
        let b = self.s.as_bytes();
        loop {
            let lt = self.pos + memchr::memchr(b'<', &b[self.pos..])?;
            self.pos = lt + 1;
            match b.get(lt + 1) {
                Some(c) if c.is_ascii_alphabetic() => return self.tag(lt + 1, false),
                Some(b'/') => match b.get(lt + 2) {
                    Some(c) if c.is_ascii_alphabetic() => return self.tag(lt + 2, true),
                    Some(b'>') => self.pos = lt + 3,
                    None => return None,
                    Some(_) => self.skip_past(lt + 2, ">"),
                },
                Some(b'!') => self.markup_declaration(lt + 2),
                Some(b'?') => self.skip_past(lt + 1, ">"),
                _ => {}
            }
        }
    }

    /// Moves past the first `end` at or after `from`, or to the end of input.
    pub(crate) fn skip_past(&mut self, from: usize, end: &str) {
        let rest = &self.s.as_bytes()[from..];
        let found = match end.as_bytes() {
            [c] => memchr::memchr(*c, rest),
            e => memchr::memmem::find(rest, e),
        };
        self.pos = found.map_or(self.s.len(), |i| from + i + end.len());
    }

    /// Skips what follows `<!`: a comment, a doctype, a CDATA section or a bogus comment.
    pub(crate) fn markup_declaration(&mut self, at: usize) {
        let b = self.s.as_bytes();
        let rest = &b[at..];
        if rest.starts_with(b"--") {
            self.comment(at + 2);
        } else if self.cdata && rest.starts_with(b"[CDATA[") {
            self.skip_past(at + 7, "]]>");
        } else {
            // A doctype ends at the first `>` even inside a quoted identifier, like a bogus
            // comment.
            self.skip_past(at, ">");
        }
    }

    /// Skips a comment whose text starts at `c`: it ends at `-->` or `--!>`, or at once with
    /// `<!-->` and `<!--->`.
    pub(crate) fn comment(&mut self, c: usize) {
        let b = self.s.as_bytes();
        if b.get(c) == Some(&b'>') {
            self.pos = c + 1;
            return;
        }
        if b[c..].starts_with(b"->") {
            self.pos = c + 2;
            return;
        }
        let mut k = c;
        while let Some(gt) = memchr::memchr(b'>', &b[k..]) {
            let gt = k + gt;
            if (gt >= c + 2 && &b[gt - 2..gt] == b"--") || (gt >= c + 3 && &b[gt - 3..gt] == b"--!")
            {
                self.pos = gt + 1;
                return;
            }
            k = gt + 1;
        }
        self.pos = self.s.len();
    }

    /// Reads a tag whose name starts at `start`: the tag name, before/after attribute name,
    /// attribute value and self-closing start tag states.
    pub(crate) fn tag(&mut self, start: usize, end: bool) -> Option<TagToken<'a>> {
        let s = self.s;
        let b = s.as_bytes();
        let delim = |c: u8| is_ws(c) || c == b'/' || c == b'>';
        let mut i = start;
        while i < b.len() && !delim(b[i]) {
            i += 1;
        }
        let name = &s[start..i];
        self.attrs.clear();
        loop {
            // Before attribute name.
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            match *b.get(i)? {
                b'>' => {
                    self.pos = i + 1;
                    return Some(TagToken {
                        name,
                        end,
                        self_closing: false,
                    });
                }
                b'/' => {
                    // Self-closing start tag; anything but `>` is reconsumed as above.
                    i += 1;
                    if *b.get(i)? == b'>' {
                        self.pos = i + 1;
                        return Some(TagToken {
                            name,
                            end,
                            self_closing: true,
                        });
                    }
                    continue;
                }
                _ => {}
            }
            // Attribute name: the first character may be `=`.
            let n0 = i;
            i += 1;
            while i < b.len() && !delim(b[i]) && b[i] != b'=' {
                i += 1;
            }
            let attr = &s[n0..i];
            // After attribute name.
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            if *b.get(i)? != b'=' {
                self.attrs.push((attr, ""));
                continue;
            }
            // Before attribute value.
            i += 1;
            while i < b.len() && is_ws(b[i]) {
                i += 1;
            }
            let value = match *b.get(i)? {
                q @ (b'"' | b'\'') => {
                    let v0 = i + 1;
                    i = v0 + b[v0..].iter().position(|&c| c == q)?;
                    let v = &s[v0..i];
                    i += 1;
                    v
                }
                // A missing value; the `>` ends the tag above.
                b'>' => "",
                _ => {
                    let v0 = i;
                    while i < b.len() && !is_ws(b[i]) && b[i] != b'>' {
                        i += 1;
                    }
                    &s[v0..i]
                }
            };
            self.attrs.push((attr, value));
        }
    }

    /// The value of the first attribute called `name`, character references decoded (borrowed
    /// from the document when there are none).
    pub(crate) fn attr(&self, name: &str) -> Option<Cow<'a, str>> {
        let &(_, v) = self
            .attrs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        Some(match self.text_of(v) {
            Cow::Borrowed(v) => decode_refs(v, true),
            Cow::Owned(v) => Cow::Owned(decode_refs(&v, true).into_owned()),
        })
    }

    /// Skips the RCDATA or RAWTEXT content of the element `name` just opened, up to its end tag
    /// (which is tokenized next), and returns the raw text.
    pub(crate) fn skip_raw(&mut self, name: &str) -> &'a str {
        let b = self.s.as_bytes();
        let start = self.pos;
        let mut k = start;
        while let Some(i) = memchr::memchr(b'<', &b[k..]) {
            let i = k + i;
            if end_tag_at(b, i, name) {
                self.pos = i;
                return &self.s[start..i];
            }
            k = i + 1;
        }
        self.pos = self.s.len();
        &self.s[start..]
    }

    /// Skips script data up to `</script>`, following the script data escaped and double
    /// escaped states: inside `<!--`, a `<script>` hides the next `</script>` until `-->`.
    pub(crate) fn skip_script(&mut self) {
        let b = self.s.as_bytes();
        // 0: script data; 1: escaped; 2: double escaped. `dashes` counts the `-` just seen.
        let (mut state, mut dashes) = (0u8, 0u8);
        let mut i = self.pos;
        while i < b.len() {
            if state == 0 {
                // In script data only `<` matters (the dash count is reset by it).
                match memchr::memchr(b'<', &b[i..]) {
                    Some(k) => i += k,
                    None => break,
                }
            }
            match b[i] {
                b'<' => {
                    dashes = 0;
                    if state < 2 && end_tag_at(b, i, "script") {
                        self.pos = i;
                        return;
                    }
                    if state == 0 && b[i + 1..].starts_with(b"!--") {
                        // Script data escape start: lands in "escaped dash dash".
                        state = 1;
                        dashes = 2;
                        i += 4;
                        continue;
                    }
                    if state == 1 && name_at(b, i + 1, "script") {
                        state = 2;
                        i += 8;
                        continue;
                    }
                    if state == 2 && end_tag_at(b, i, "script") {
                        state = 1;
                        i += 9;
                        continue;
                    }
                }
                b'-' if state > 0 => dashes = dashes.saturating_add(1),
                b'>' if state > 0 && dashes >= 2 => {
                    state = 0;
                    dashes = 0;
                }
                _ => dashes = 0,
            }
            i += 1;
        }
        self.pos = b.len();
    }

    /// The next text run or tag, or `None` at the end of input: [`Tokenizer::next_tag`] for
    /// visible-text extraction (`crate::parse::text`), which also needs the text between the
    /// tags. A `<` that starts no markup (`a < b`, `<3`) is text, as in the standard's data
    /// state; a tag cut off by the end of input ends the input.
    pub(crate) fn next_token(&mut self) -> Option<Token<'a>> {
        let b = self.s.as_bytes();
        let mut start = self.pos;
        let mut k = start;
        loop {
            let Some(i) = memchr::memchr(b'<', &b[k.min(b.len())..]) else {
                self.pos = b.len();
                return (start < b.len()).then(|| Token::Text(&self.s[start..]));
            };
            let lt = k + i;
            let markup = matches!(b.get(lt + 1), Some(c) if c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?'));
            if !markup {
                k = lt + 1;
                continue;
            }
            if lt > start {
                self.pos = lt;
                return Some(Token::Text(&self.s[start..lt]));
            }
            self.pos = lt + 1;
            match b[lt + 1] {
                b'/' => match b.get(lt + 2) {
                    Some(c) if c.is_ascii_alphabetic() => {
                        return self.tag(lt + 2, true).map(Token::Tag)
                    }
                    Some(b'>') => self.pos = lt + 3,
                    // `</` at the end of input is text.
                    None => {
                        self.pos = b.len();
                        return Some(Token::Text(&self.s[lt..]));
                    }
                    Some(_) => self.skip_past(lt + 2, ">"),
                },
                b'!' if self.cdata && b[lt + 2..].starts_with(b"[CDATA[") => {
                    // A CDATA section (in foreign content) is text.
                    let start = lt + 9;
                    let end =
                        memchr::memmem::find(&b[start..], b"]]>").map_or(b.len(), |e| start + e);
                    self.pos = (end + 3).min(b.len());
                    if end > start {
                        return Some(Token::Cdata(&self.s[start..end]));
                    }
                }
                b'!' => self.markup_declaration(lt + 2),
                b'?' => self.skip_past(lt + 1, ">"),
                _ => return self.tag(lt + 1, false).map(Token::Tag),
            }
            start = self.pos;
            k = start;
        }
    }
}

/// What [`Tokenizer::next_token`] yields: a run of text (character references not decoded yet)
/// or a tag.
pub(crate) enum Token<'a> {
    /// Text between markup, a slice of `s`: never empty, and comments, doctypes, bogus comments
    /// and CDATA sections are not part of it.
    Text(&'a str),
    /// A start or end tag; its attributes are in [`Tokenizer::attrs`].
    Tag(TagToken<'a>),
    /// The text of a CDATA section (in SVG or MathML, when [`Tokenizer::cdata`]): character
    /// references are not decoded there.
    Cdata(&'a str),
}

/// An element on the stack of open SVG and MathML elements.
pub(crate) struct Foreign<'a> {
    /// The tag name as written.
    pub(crate) name: &'a str,
    /// Whether this is an SVG element (else MathML).
    pub(crate) svg: bool,
}

impl Foreign<'_> {
    /// An HTML integration point (`foreignObject`, `desc`, `title` in SVG; `annotation-xml`
    /// with an HTML encoding is approximated by its name) or a MathML text integration point
    /// (`mi`, `mo`, `mn`, `ms`, `mtext`): HTML start tags inside it are HTML elements.
    pub(crate) fn integration_point(&self) -> bool {
        let n = self.name;
        if self.svg {
            ["foreignobject", "desc", "title"]
                .iter()
                .any(|x| n.eq_ignore_ascii_case(x))
        } else {
            ["mi", "mo", "mn", "ms", "mtext", "annotation-xml"]
                .iter()
                .any(|x| n.eq_ignore_ascii_case(x))
        }
    }
}

/// Start tags that end foreign content (SVG, MathML) and are processed as HTML.
pub(crate) const BREAKOUT: [&str; 44] = [
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];
