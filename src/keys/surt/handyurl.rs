//! `HandyUrl`: the lenient, byte-oriented URL splitter that SURT keys are computed on.
//!
//! The SURT tools (Python `surt`, and through it pywb and warcio's CDXJ indexer) do not parse
//! URLs with a WHATWG parser: they split them with the RFC 2396 Appendix B regular expression,
//! after a few repairs (default scheme `http://`, `http://https://` collapsed, tabs and line
//! breaks deleted). Identical keys need an identical split, so this module reproduces that
//! behaviour, byte for byte, rather than reusing [`url::Url`]. It never fails: every input
//! splits into something.

use std::fmt;

/// The port of a [`HandyUrl`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Port {
    /// A decimal port in `1..=65535` (port 0 is treated as no port, as the reference does).
    Number(u16),
    /// Port text that is not a decimal number in range. The Python reference raises
    /// `ValueError` here; we keep the text so distinct inputs keep distinct keys.
    Invalid(Vec<u8>),
}

/// A URL split into the parts SURT canonicalization works on.
///
/// Every part is raw bytes: the parser neither decodes nor encodes anything. `None` and an empty
/// value are different, as they are in the reference (`http://a/b?` has no query but remembers
/// its trailing `?` in [`HandyUrl::trailing_question_mark`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandyUrl {
    /// The scheme, exactly as written (not lower-cased).
    pub scheme: Option<Vec<u8>>,
    /// The host (user information removed, brackets of an IPv6 literal removed, ASCII
    /// lower-cased up to an IPv6 zone `%`).
    pub host: Option<Vec<u8>>,
    /// The port, if one was given.
    pub port: Option<Port>,
    /// The path.
    pub path: Option<Vec<u8>>,
    /// The query, without its `?`; `None` when absent or empty.
    pub query: Option<Vec<u8>>,
    /// The fragment, without its `#`; `None` when absent or empty.
    pub fragment: Option<Vec<u8>>,
    /// The input ended with a `?` that introduced no query (`http://a/b?`).
    pub trailing_question_mark: bool,
}

/// Bytes Python's `bytes.strip()` removes: ASCII space, `\t`, `\n`, `\r`, `\x0b`, `\x0c`.
fn is_py_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}

/// Length of a leading `scheme:` (without the colon), if the input starts with one.
fn scheme_len(s: &[u8]) -> Option<usize> {
    if !s.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = s.iter().take_while(|&&b| is_scheme_byte(b)).count();
    (s.get(n) == Some(&b':')).then_some(n)
}

fn is_truthy(v: &Option<Vec<u8>>) -> bool {
    v.as_ref().is_some_and(|v| !v.is_empty())
}

fn non_empty(v: &[u8]) -> Option<Vec<u8>> {
    (!v.is_empty()).then(|| v.to_vec())
}

fn position(s: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    s.iter().position(|&b| pred(b)).unwrap_or(s.len())
}

fn parse_port(raw: &[u8]) -> Option<Port> {
    if raw.is_empty() {
        return None;
    }
    if raw.iter().all(u8::is_ascii_digit) {
        let mut value: u32 = 0;
        for &d in raw {
            value = value * 10 + u32::from(d - b'0');
            if value > 65535 {
                return Some(Port::Invalid(raw.to_vec()));
            }
        }
        // `o.port or None`: port 0 counts as no port.
        return (value != 0).then_some(Port::Number(value as u16));
    }
    Some(Port::Invalid(raw.to_vec()))
}

/// Lower-case a host the way Python's `SplitResultBytes.hostname` does: ASCII only, and not
/// after a `%` (an IPv6 zone identifier keeps its case).
fn lower_hostname(h: &[u8]) -> Vec<u8> {
    let zone = position(h, |b| b == b'%');
    let mut out = h[..zone].to_ascii_lowercase();
    out.extend_from_slice(&h[zone..]);
    out
}

impl HandyUrl {
    /// Split `input` the way the reference `handyurl.parse` does.
    ///
    /// Surrounding ASCII whitespace is stripped and every tab, CR and LF deleted; an input that
    /// does not start with `scheme:` gets `http://` prepended; a run of leading `http://` /
    /// `https://` prefixes keeps only the last; a host ending in `:` loses the colon; an
    /// `http*` URL without an authority (`http:////www.vikings.com`) takes its host from the
    /// first path segment. User information is dropped.
    pub fn parse(input: &[u8]) -> HandyUrl {
        let start = position(input, |b| !is_py_space(b));
        let end = input.len() - input.iter().rev().take_while(|&&b| is_py_space(b)).count();
        let mut url: Vec<u8> = input[start..end.max(start)]
            .iter()
            .copied()
            .filter(|&b| !matches!(b, b'\n' | b'\r' | b'\t'))
            .collect();
        if url.is_empty() {
            return HandyUrl::default();
        }
        if scheme_len(&url).is_none() {
            url.splice(0..0, b"http://".iter().copied());
        }
        collapse_repeated_http_prefixes(&mut url);

        // RFC 2396 Appendix B, with the scheme limited to legal scheme characters.
        let (scheme, rest) = match scheme_len(&url) {
            Some(n) => (Some(url[..n].to_vec()), &url[n + 1..]),
            None => (None, &url[..]),
        };
        let (netloc, rest) = match rest.strip_prefix(b"//") {
            Some(after) => {
                let n = position(after, |b| matches!(b, b'/' | b'?' | b'#'));
                (&after[..n], &after[n..])
            }
            None => (&rest[..0], rest),
        };
        let n = position(rest, |b| matches!(b, b'?' | b'#'));
        let (path, rest) = rest.split_at(n);
        let (query, rest) = match rest.strip_prefix(b"?") {
            Some(after) => {
                let n = position(after, |b| b == b'#');
                (&after[..n], &after[n..])
            }
            None => (&rest[..0], rest),
        };
        let fragment = rest.strip_prefix(b"#").unwrap_or(&rest[..0]);

        // The authority: a trailing ':' without a port is dropped, user information ignored.
        let mut netloc = netloc;
        while let Some(stripped) = netloc.strip_suffix(b":") {
            netloc = stripped;
        }
        let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
            Some(at) => &netloc[at + 1..],
            None => netloc,
        };
        let (hostname, port) = match hostinfo.iter().position(|&b| b == b'[') {
            Some(open) => {
                let bracketed = &hostinfo[open + 1..];
                let close = position(bracketed, |b| b == b']');
                let after = bracketed.get(close + 1..).unwrap_or(&[]);
                let port = match after.iter().position(|&b| b == b':') {
                    Some(c) => &after[c + 1..],
                    None => &after[..0],
                };
                (&bracketed[..close], port)
            }
            None => {
                let colon = position(hostinfo, |b| b == b':');
                let port = hostinfo.get(colon + 1..).unwrap_or(&[]);
                (&hostinfo[..colon], port)
            }
        };

        let mut host = (!hostname.is_empty()).then(|| lower_hostname(hostname));
        let mut path = non_empty(path);
        if scheme.as_deref().is_some_and(|s| s.starts_with(b"http")) && host.is_none() {
            // "http:////////////////www.vikings.com"
            if let Some(p) = path.take() {
                let trimmed = &p[position(&p, |b| b != b'/')..];
                let slash = position(trimmed, |b| b == b'/');
                host = Some(trimmed[..slash].to_vec());
                let mut new_path = b"/".to_vec();
                new_path.extend_from_slice(trimmed.get(slash + 1..).unwrap_or(&[]));
                path = Some(new_path);
            }
        }
        let query = non_empty(query);
        let trailing_question_mark = url.ends_with(b"?") && query.is_none();
        HandyUrl {
            scheme,
            host,
            port: parse_port(port),
            path,
            query,
            fragment: non_empty(fragment),
            trailing_question_mark,
        }
    }

    /// True if the URL has a non-empty host.
    pub fn has_host(&self) -> bool {
        is_truthy(&self.host)
    }

    /// Serialize as a URL (the reference's `getURLString()`).
    pub fn to_url_bytes(&self) -> Vec<u8> {
        let mut s = self.scheme.clone().unwrap_or_default();
        s.push(b':');
        if let Some(host) = self.host.as_ref().filter(|h| !h.is_empty()) {
            if self.scheme.as_deref() != Some(b"dns") {
                s.extend_from_slice(b"//");
            }
            s.extend_from_slice(host);
            self.push_port(&mut s);
        }
        self.push_path_query_fragment(&mut s);
        s
    }

    /// Serialize as a SURT key in the form CDXJ indexes use: no scheme, the host's labels
    /// reversed and joined with `,` (IPv4 addresses too), no trailing comma, then `)` and the
    /// path (`http://www.archive.org/goo?a` is `org,archive,www)/goo?a` before canonicalization).
    /// A URL without a host is written `scheme:path`.
    pub fn to_surt_bytes(&self) -> Vec<u8> {
        let mut s = Vec::new();
        match self.host.as_ref().filter(|h| !h.is_empty()) {
            Some(host) => {
                s.extend_from_slice(&super::host_to_surt(host));
                self.push_port(&mut s);
                s.push(b')');
            }
            None => {
                s.extend_from_slice(self.scheme.as_deref().unwrap_or_default());
                s.push(b':');
            }
        }
        self.push_path_query_fragment(&mut s);
        s
    }

    fn push_port(&self, s: &mut Vec<u8>) {
        match &self.port {
            None => {}
            Some(Port::Number(n)) => s.extend_from_slice(format!(":{n}").as_bytes()),
            Some(Port::Invalid(raw)) => {
                s.push(b':');
                s.extend_from_slice(&super::escape_once(raw));
            }
        }
    }

    fn push_path_query_fragment(&self, s: &mut Vec<u8>) {
        if is_truthy(&self.path) {
            s.extend_from_slice(self.path.as_deref().unwrap_or_default());
        } else if self.query.is_some() || self.fragment.is_some() {
            s.push(b'/');
        }
        if let Some(q) = &self.query {
            s.push(b'?');
            s.extend_from_slice(q);
        }
        if let Some(f) = &self.fragment {
            s.push(b'#');
            s.extend_from_slice(f);
        }
        if self.trailing_question_mark {
            s.push(b'?');
        }
    }
}

impl fmt::Display for HandyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_url_bytes()))
    }
}

/// `^(https?://)+` is replaced by its last repetition: `http://https://x` becomes `https://x`.
fn collapse_repeated_http_prefixes(url: &mut Vec<u8>) {
    let prefix_len = |s: &[u8]| {
        if s.starts_with(b"http://") {
            Some(7)
        } else if s.starts_with(b"https://") {
            Some(8)
        } else {
            None
        }
    };
    let mut at = 0;
    let mut last = None;
    while let Some(n) = prefix_len(&url[at..]) {
        last = Some(at);
        at += n;
    }
    if let Some(last) = last {
        url.drain(..last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> String {
        HandyUrl::parse(s.as_bytes()).to_string()
    }

    #[test]
    fn round_trips_like_the_reference() {
        // URLParserTest.java cases, as used by the reference's own tests.
        assert_eq!(
            url("http://www.archive.org/index.html#foo"),
            "http://www.archive.org/index.html#foo"
        );
        assert_eq!(url("http://www.archive.org/"), "http://www.archive.org/");
        assert_eq!(url("http://www.archive.org"), "http://www.archive.org");
        assert_eq!(url("http://www.archive.org?"), "http://www.archive.org?");
        assert_eq!(
            url("http://www.archive.org:8080/index.html?query#foo"),
            "http://www.archive.org:8080/index.html?query#foo"
        );
        assert_eq!(
            url("http://www.archive.org:8080/index.html?#foo"),
            "http://www.archive.org:8080/index.html#foo"
        );
        assert_eq!(
            url("http://www.archive.org:8080?#foo"),
            "http://www.archive.org:8080/#foo"
        );
        assert_eq!(
            url("http://bücher.ch:8080?#foo"),
            "http://bücher.ch:8080/#foo"
        );
        assert_eq!(url("dns:bücher.ch"), "dns:bücher.ch");
        assert_eq!(
            url("http:////////////////www.vikings.com"),
            "http://www.vikings.com/"
        );
        assert_eq!(
            url("http://https://order.1and1.com"),
            "https://order.1and1.com"
        );
        assert_eq!(
            url("http://mineral.galleries.com:/minerals/silicate/chabazit/chabazit.htm"),
            "http://mineral.galleries.com/minerals/silicate/chabazit/chabazit.htm"
        );
        assert_eq!(url("mailto:bot@archive.org"), "mailto:bot@archive.org");
    }

    #[test]
    fn splits_parts() {
        let h = HandyUrl::parse(b" \tHTTP://User:Pw@WWW.Example.COM:0080/a b?q=1#f \x0b");
        assert_eq!(h.scheme.as_deref(), Some(&b"HTTP"[..]));
        assert_eq!(h.host.as_deref(), Some(&b"www.example.com"[..]));
        assert_eq!(h.port, Some(Port::Number(80)));
        assert_eq!(h.path.as_deref(), Some(&b"/a b"[..]));
        assert_eq!(h.query.as_deref(), Some(&b"q=1"[..]));
        assert_eq!(h.fragment.as_deref(), Some(&b"f"[..]));
    }

    #[test]
    fn ports() {
        assert_eq!(HandyUrl::parse(b"http://a:0/").port, None);
        assert_eq!(
            HandyUrl::parse(b"http://a:70000/").port,
            Some(Port::Invalid(b"70000".to_vec()))
        );
        assert_eq!(
            HandyUrl::parse(b"http://a:x/").port,
            Some(Port::Invalid(b"x".to_vec()))
        );
        let v6 = HandyUrl::parse(b"http://[::1]:8080/x");
        assert_eq!(v6.host.as_deref(), Some(&b"::1"[..]));
        assert_eq!(v6.port, Some(Port::Number(8080)));
    }

    #[test]
    fn empty_and_blank() {
        assert_eq!(HandyUrl::parse(b""), HandyUrl::default());
        assert_eq!(HandyUrl::parse(b" \t "), HandyUrl::default());
    }
}
