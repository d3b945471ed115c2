//! Rule patterns and the paths they are matched against (see the parent module, "Matching").
//!
//! A pattern is compiled once: its normalized text, whether it ends in `$`, whether it holds a
//! `*`. Matching takes the pieces between stars left to right, each at its leftmost place, with
//! the standard library's Two-Way substring search: linear in path and pattern, no backtracking.

use std::borrow::Cow;

/// A normalized allow/disallow pattern, compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Pattern {
    /// The normalized pattern, all ASCII; its length is the match priority.
    text: Box<str>,
    /// Ends in `$`: the match must end at the end of the path.
    anchored: bool,
    /// Holds a `*` (before any final `$`).
    wild: bool,
}

impl Pattern {
    pub(super) fn new(text: String) -> Pattern {
        let anchored = text.ends_with('$');
        let wild = text[..text.len() - usize::from(anchored)].contains('*');
        Pattern {
            text: text.into_boxed_str(),
            anchored,
            wild,
        }
    }

    pub(super) fn priority(&self) -> usize {
        self.text.len()
    }

    pub(super) fn matches(&self, path: &str) -> bool {
        let body = &self.text[..self.text.len() - usize::from(self.anchored)];
        if !self.wild {
            return if self.anchored {
                path == body
            } else {
                path.starts_with(body)
            };
        }
        let mut pieces = body.split('*');
        // `wild` guarantees at least two pieces.
        let (Some(first), Some(last)) = (pieces.next(), pieces.next_back()) else {
            return true;
        };
        let Some(mut rest) = path.strip_prefix(first) else {
            return false;
        };
        for piece in pieces {
            match rest.find(piece) {
                // Pieces are ASCII, so `at + len` is a char boundary.
                Some(at) => rest = &rest[at + piece.len()..],
                None => return false,
            }
        }
        if self.anchored {
            rest.ends_with(last)
        } else {
            rest.contains(last)
        }
    }
}

/// The part of a URL that rules are matched against: path, parameters and query, without the
/// fragment, always starting with `/` (Google's `GetPathParamsQuery`). `/` if the URL has no
/// path. A string starting with `/` is taken as a path (`//host/p` as a scheme-relative URL).
pub fn path_params_query(url: &str) -> Cow<'_, str> {
    let b = url.as_bytes();
    let first_of = |from: usize| {
        b[from..]
            .iter()
            .position(|c| matches!(c, b'/' | b'?' | b';'))
            .map(|i| i + from)
    };
    let search_start = if url.starts_with("//") { 2 } else { 0 };
    let early_path = first_of(search_start);
    let protocol_end = match url[search_start..].find("://") {
        // A `/`, `?` or `;` before `://` means the `://` is not the end of a scheme.
        Some(p) if early_path.is_none_or(|e| e >= p + search_start) => p + search_start + 3,
        _ => search_start,
    };
    let Some(path_start) = first_of(protocol_end) else {
        return Cow::Borrowed("/");
    };
    let hash = url[search_start..].find('#').map(|i| i + search_start);
    if hash.is_some_and(|h| h < path_start) {
        return Cow::Borrowed("/");
    }
    let s = &url[path_start..hash.unwrap_or(url.len())];
    if s.starts_with('/') {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("/{s}"))
    }
}

/// Normalizes an allow/disallow value as Google does (`MaybeEscapePattern`): bytes >= 0x80
/// become `%XX`, and `%xx` escapes get upper-case hex. The result is ASCII.
pub fn escape_pattern(value: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b == b'%'
            && value.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && value.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            out.push('%');
            out.push(char::from(value[i + 1].to_ascii_uppercase()));
            out.push(char::from(value[i + 2].to_ascii_uppercase()));
            i += 3;
            continue;
        }
        if b >= 0x80 {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        } else {
            out.push(char::from(b));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pat(p: &str) -> Pattern {
        Pattern::new(escape_pattern(p.as_bytes()))
    }

    #[test]
    fn patterns_match_like_google() {
        let cases = [
            ("/", "/anything", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish", false),
            ("/fish*", "/fishheads/x", true),
            ("/*.php", "/folder/filename.php?p", true),
            ("/*.php", "/windows.PHP", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?p", false),
            ("/fish*.php", "/fishheads/catfish.php?p", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/a$b", "/a$b/c", true),
            ("$", "/", false),
            ("*$", "/x", true),
            ("/**", "/", true),
            ("/a*b*c$", "/abcabc", true),
            ("/a*b*c$", "/abcab", false),
            ("/a*a", "/a", false),
            ("/a*a", "/aa", true),
        ];
        for (p, path, want) in cases {
            assert_eq!(pat(p).matches(path), want, "{p:?} vs {path:?}");
        }
    }

    #[test]
    fn star_patterns_on_long_paths_are_linear() {
        let path = format!("/{}", "a".repeat(16 * 1024));
        let p = pat("/*a*a*a*a*a*b");
        let q = pat(&format!("/*{}b", "a".repeat(8 * 1024)));
        let t = std::time::Instant::now();
        for _ in 0..100 {
            assert!(!p.matches(&path));
            assert!(!q.matches(&path));
        }
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[test]
    fn escapes_like_google() {
        assert_eq!(
            escape_pattern("/SanJoséSellers".as_bytes()),
            "/SanJos%C3%A9Sellers"
        );
        assert_eq!(escape_pattern(b"%aa%2f%zz%"), "%AA%2F%zz%");
        assert_eq!(escape_pattern(b"/\xff"), "/%FF");
    }
}
