//! SURT keys, compatible with the Python `surt` library that CDXJ tools use.
//!
//! A SURT ("Sort-friendly URI Reordering Transform") writes a URL host-first with the labels
//! reversed (`http://www.archive.org/goo?b&a` becomes `org,archive)/goo?a&b`), so that sorting
//! keys groups a site, then its sub-domains, together. CDXJ indexes (pywb, warcio's
//! `cdxj-indexer`, OpenWayback) are sorted on these keys and looked up by recomputing the key of
//! the requested URL, so our keys must be *byte-identical* to those of `surt.surt(url)` (its
//! `DefaultIAURLCanonicalizer`: the Google Safe Browsing canonicalization followed by the
//! Internet Archive one). Being "a reasonable SURT" is not enough: a different key is a record
//! the replay tool cannot find.
//!
//! This is an independent reimplementation of that behaviour (the Python library is AGPL and its
//! code is not used), including its quirks: the lenient RFC 2396 split in [`HandyUrl`],
//! repeated unescaping, lower-casing of path and query, `www` stripping, session-id removal and
//! query-argument sorting. It works on bytes, as the reference does; [`surt`] is the `&str`
//! convenience. Known, deliberate differences from the Python code are listed in
//! `docs/keys.md` (internationalized host names use UTS 46 instead of IDNA 2003, invalid ports
//! are kept instead of raising, non-UTF-8 hosts are read as Latin-1).
//!
//! The building blocks are public because each is tested separately against the reference's
//! test cases (`tests/url_conformance.rs`, `surt.json`).

mod handyurl;
mod simple;

pub use handyurl::{HandyUrl, Port};

/// The SURT key of `url`, as `surt.surt(url)` of the Python `surt` library computes it.
///
/// An empty (or all-whitespace) input gives `-`; `filedesc:` records are returned unchanged.
/// Keys are ASCII except for the unchanged `filedesc:` case.
pub fn surt(url: &str) -> String {
    match String::from_utf8(surt_bytes(url.as_bytes())) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// [`surt`] on raw bytes (for URLs read from WARC headers that are not valid UTF-8).
pub fn surt_bytes(url: &[u8]) -> Vec<u8> {
    // Most URLs a crawl archives need none of the reference's machinery (`simple.rs`).
    simple::simple_surt(url).unwrap_or_else(|| full_surt_bytes(url))
}

/// [`surt_bytes`] the reference's way, whatever the URL.
fn full_surt_bytes(url: &[u8]) -> Vec<u8> {
    if url.starts_with(b"filedesc") {
        return url.to_vec();
    }
    let mut h = HandyUrl::parse(url);
    if h.scheme.is_none() {
        // Empty or blank input (the reference answers "-" for empty input and raises for blank).
        return b"-".to_vec();
    }
    default_ia_canonicalize(&mut h);
    h.to_surt_bytes()
}

/// The reference's `DefaultIAURLCanonicalizer`: [`google_canonicalize`], then
/// [`ia_canonicalize`].
pub fn default_ia_canonicalize(url: &mut HandyUrl) {
    google_canonicalize(url);
    ia_canonicalize(url);
}

/// The Google Safe Browsing canonicalization, as the reference's `GoogleURLCanonicalizer`.
///
/// - the fragment is removed;
/// - the query is unescaped repeatedly, then escaped once ([`escape_once`]);
/// - the host is unescaped repeatedly; a non-ASCII host is converted to IDNA (A-labels) when
///   possible; `..` becomes `.` and leading/trailing dots go; a numeric host in any of the
///   `inet_aton` forms becomes a dotted quad ([`attempt_ip_formats`]); otherwise it is
///   lower-cased and escaped once;
/// - the path is unescaped repeatedly, dot segments and empty segments are removed (only when
///   there is a host: otherwise the path is opaque, as in `mailto:`), and escaped once.
pub fn google_canonicalize(url: &mut HandyUrl) {
    url.fragment = None;
    if let Some(q) = url.query.as_mut().filter(|q| !q.is_empty()) {
        *q = escape_once(&unescape_repeatedly(q));
    }
    if let Some(h) = url.host.as_mut().filter(|h| !h.is_empty()) {
        *h = canonical_host(h);
    }
    let path = url.path.as_deref().map(unescape_repeatedly);
    let path = if url.has_host() {
        Some(normalize_path(path.as_deref().unwrap_or_default()))
    } else {
        path
    };
    url.path = path.map(|p| escape_once(&p));
}

fn canonical_host(raw: &[u8]) -> Vec<u8> {
    let mut host = unescape_repeatedly(raw);
    if !host.is_ascii() {
        if let Some(ascii) = idna_to_ascii(&host) {
            host = ascii.into_bytes();
        }
    }
    let host = replace_double_dots(&host);
    let start = host.iter().position(|&b| b != b'.').unwrap_or(host.len());
    let end = host
        .iter()
        .rposition(|&b| b != b'.')
        .map_or(start, |i| i + 1);
    let host = &host[start..end.max(start)];
    match attempt_ip_formats(host) {
        Some(ip) => ip.into_bytes(),
        None => escape_once(&host.to_ascii_lowercase()),
    }
}

/// IDNA for a non-ASCII host. UTF-8 is decoded as such; bytes that are not UTF-8 are read as
/// Latin-1 (what warcio does with such header values). Returns `None` where the reference's
/// IDNA encoding fails too (disallowed code points, empty or over-long labels): the host is then
/// kept as bytes and percent-escaped.
fn idna_to_ascii(host: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(host) {
        Ok(s) => s.to_owned(),
        Err(_) => host.iter().map(|&b| char::from(b)).collect(),
    };
    let ascii = match url::Host::parse(&text).ok()? {
        url::Host::Domain(d) => d,
        url::Host::Ipv4(ip) => return Some(ip.to_string()),
        url::Host::Ipv6(_) => return None,
    };
    let labels = ascii.strip_suffix('.').unwrap_or(&ascii);
    if labels.split('.').any(|l| l.is_empty() || l.len() > 63) {
        return None;
    }
    Some(ascii)
}

/// Python's `bytes.replace(b'..', b'.')`: non-overlapping, left to right.
fn replace_double_dots(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'.' && s.get(i + 1) == Some(&b'.') {
            out.push(b'.');
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// Resolve `.` and `..` segments and drop empty segments (`//`), keeping a trailing `/`.
/// A `..` with nothing to pop is kept, as in the reference.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for seg in path.split(|&b| b == b'/').skip(1) {
        match seg {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(seg);
                }
            }
            _ => kept.push(seg),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for seg in init.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(seg);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

/// A numeric host as a dotted quad, as the reference's `attemptIPFormats`.
///
/// All-digit hosts are read as a 32-bit number (larger values keep their low 32 bits: some
/// Wayback ARC files contain such hosts). Otherwise a host of one to four all-digit parts,
/// either starting with `1`-`9` or entirely octal, is parsed with `inet_aton` rules (a leading
/// `0` means octal; the last part fills the remaining bytes). Anything else is `None`.
pub fn attempt_ip_formats(host: &[u8]) -> Option<String> {
    if host.is_empty() {
        return None;
    }
    if host.iter().all(u8::is_ascii_digit) {
        let v = host.iter().fold(0u32, |acc, &d| {
            acc.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
        });
        return Some(std::net::Ipv4Addr::from(v).to_string());
    }
    let parts: Vec<&[u8]> = host.split(|&b| b == b'.').collect();
    if parts.len() > 4
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.iter().all(u8::is_ascii_digit))
    {
        return None;
    }
    let first = parts[0];
    let decimal_form = first[0] != b'0';
    let octal_form = parts.iter().all(|p| p.iter().all(|&b| b <= b'7'));
    if !decimal_form && !octal_form {
        return None;
    }
    inet_aton(&parts).map(|v| std::net::Ipv4Addr::from(v).to_string())
}

/// glibc `inet_aton` on all-digit parts (the only kind [`attempt_ip_formats`] passes).
fn inet_aton(parts: &[&[u8]]) -> Option<u32> {
    let mut values = Vec::with_capacity(parts.len());
    for p in parts {
        let (digits, radix) = if p.len() > 1 && p[0] == b'0' {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        let mut v: u64 = 0;
        for &d in digits {
            let d = u64::from(d - b'0');
            if d >= radix {
                return None;
            }
            v = v * radix + d;
            if v > u64::from(u32::MAX) {
                return None;
            }
        }
        values.push(v);
    }
    let (last, init) = values.split_last()?;
    if init.iter().any(|&v| v > 0xff) {
        return None;
    }
    let last_max = [u32::MAX as u64, 0xff_ffff, 0xffff, 0xff][init.len()];
    if *last > last_max {
        return None;
    }
    let mut addr: u32 = 0;
    for (i, &v) in init.iter().enumerate() {
        addr |= (v as u32) << (24 - 8 * i);
    }
    Some(addr | *last as u32)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decode every valid `%XX` escape once (Python's `unquote_to_bytes`); invalid ones are kept.
fn unescape_once(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            if let (Some(h), Some(l)) = (
                s.get(i + 1).copied().and_then(hex_value),
                s.get(i + 2).copied().and_then(hex_value),
            ) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Decode `%XX` escapes until nothing changes: `%252525` becomes `%`.
pub fn unescape_repeatedly(s: &[u8]) -> Vec<u8> {
    let mut cur = s.to_vec();
    loop {
        let next = unescape_once(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

/// Percent-escape (upper-case hex) every byte that is a control character, space, `#`, `%`,
/// DEL or non-ASCII; all other printable ASCII is kept (Python's `quote` with the reference's
/// safe set).
pub fn escape_once(s: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(s.len());
    for &b in s {
        if b <= 0x20 || b >= 0x7f || b == b'#' || b == b'%' {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        } else {
            out.push(b);
        }
    }
    out
}

/// The Internet Archive canonicalization with the reference's default options
/// (`IAURLCanonicalizer`):
///
/// - host lower-cased, and a leading `www.` / `wwwNN.` removed ([`massage_host`]) except for
///   `dns:` URLs;
/// - user information removed;
/// - the scheme's default port (80 for http, 443 for https) removed;
/// - path lower-cased, ASP.NET session-id segments removed ([`strip_path_session_id`]), one
///   trailing `/` removed unless the path is `/`;
/// - query: session ids removed ([`strip_query_session_id`]), lower-cased, arguments sorted
///   ([`alpha_reorder_query`]); an empty query (and a trailing `?`) removed.
pub fn ia_canonicalize(url: &mut HandyUrl) {
    if let Some(h) = url.host.as_mut().filter(|h| !h.is_empty()) {
        h.make_ascii_lowercase();
        if url.scheme.as_deref() != Some(b"dns") {
            *h = massage_host(h).to_vec();
        }
    }
    if let (Some(scheme), Some(Port::Number(port))) = (&url.scheme, &url.port) {
        let default = if scheme.eq_ignore_ascii_case(b"http") {
            80
        } else if scheme.eq_ignore_ascii_case(b"https") {
            443
        } else {
            0
        };
        if *port == default {
            url.port = None;
        }
    }
    if let Some(p) = url.path.as_mut().filter(|p| !p.is_empty()) {
        p.make_ascii_lowercase();
        *p = strip_path_session_id(p);
        if p.len() > 1 && p.ends_with(b"/") {
            p.pop();
        }
    }
    if let Some(q) = url.query.as_mut().filter(|q| !q.is_empty()) {
        *q = strip_query_session_id(q);
        q.make_ascii_lowercase();
        *q = alpha_reorder_query(q);
    }
    match &url.query {
        None => url.trailing_question_mark = false,
        Some(q) if q.is_empty() => url.query = None,
        Some(_) => {}
    }
}

/// Sort query arguments: split on `&`, then each on its first `=`, and sort the (name, value)
/// pairs bytewise, a name without `=` before the same name with one. Arguments are not decoded
/// and empty arguments are kept (`a=1&` becomes `&a=1`).
pub fn alpha_reorder_query(query: &[u8]) -> Vec<u8> {
    if query.len() <= 1 {
        return query.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|arg| match arg.iter().position(|&b| b == b'=') {
            Some(eq) => (&arg[..eq], Some(&arg[eq + 1..])),
            None => (arg, None),
        })
        .collect();
    args.sort();
    let mut out = Vec::with_capacity(query.len());
    for (i, (name, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(v) = value {
            out.push(b'=');
            out.extend_from_slice(v);
        }
    }
    out
}

/// Remove a leading `www.` or `www` + digits + `.` (`www12.foo.com` is `foo.com`), once.
pub fn massage_host(host: &[u8]) -> &[u8] {
    if let Some(rest) = host.strip_prefix(b"www") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if rest.get(digits) == Some(&b'.') {
            return &rest[digits + 1..];
        }
    }
    host
}

/// The reversed, comma-joined labels of a host (`www.archive.org` is `org,archive,www`).
pub fn host_to_surt(host: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(host.len());
    for (i, label) in host.rsplit(|&b| b == b'.').enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(label);
    }
    out
}

/// Remove ASP.NET cookieless session segments before an `.aspx` page:
/// `/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx` and `/(4hqa0555fwsecu455xqckv45)/mileg.aspx`
/// both become `/mileg.aspx`. Matching is ASCII case-insensitive; the last such segment that is
/// followed by `….aspx` (before any `?`) is removed, first in the `(X(id)…)` form, then in the
/// `(id)` form. Inputs are taken to contain no line feed (parsing deletes them).
pub fn strip_path_session_id(path: &[u8]) -> Vec<u8> {
    let once = strip_last_path_segment_matching(path, aspnet_multi_segment_len);
    strip_last_path_segment_matching(&once, aspnet_single_segment_len)
}

fn strip_last_path_segment_matching(path: &[u8], seg_len: fn(&[u8]) -> Option<usize>) -> Vec<u8> {
    for i in (1..=path.len()).rev() {
        if path[i - 1] != b'/' {
            continue;
        }
        if let Some(n) = seg_len(&path[i..]) {
            if has_aspx_page(&path[i + n..]) {
                let mut out = path[..i].to_vec();
                out.extend_from_slice(&path[i + n..]);
                return out;
            }
        }
    }
    path.to_vec()
}

fn is_alnum_run(s: &[u8], n: usize) -> bool {
    s.len() >= n && s[..n].iter().all(u8::is_ascii_alphanumeric)
}

/// `\((?:[a-z]\([0-9a-z]{24}\))+\)/`: length of the match at the start of `s`.
fn aspnet_multi_segment_len(s: &[u8]) -> Option<usize> {
    if s.first() != Some(&b'(') {
        return None;
    }
    let mut i = 1;
    let mut groups = 0;
    while s.get(i).is_some_and(u8::is_ascii_alphabetic) {
        if s.get(i + 1) != Some(&b'(')
            || !is_alnum_run(&s[i + 2..], 24)
            || s.get(i + 26) != Some(&b')')
        {
            return None;
        }
        i += 27;
        groups += 1;
    }
    (groups > 0 && s.get(i) == Some(&b')') && s.get(i + 1) == Some(&b'/')).then_some(i + 2)
}

/// `\([0-9a-z]{24}\)/`: length of the match at the start of `s`.
fn aspnet_single_segment_len(s: &[u8]) -> Option<usize> {
    (s.first() == Some(&b'(')
        && is_alnum_run(&s[1..], 24)
        && s.get(25) == Some(&b')')
        && s.get(26) == Some(&b'/'))
    .then_some(27)
}

/// `[^?]+\.aspx.*`: one or more non-`?` bytes, then `.aspx`.
fn has_aspx_page(s: &[u8]) -> bool {
    let limit = s.iter().position(|&b| b == b'?').unwrap_or(s.len());
    (1..limit).any(|p| s.len() >= p + 5 && s[p..p + 5].eq_ignore_ascii_case(b".aspx"))
}

/// Remove session-id arguments from a query, as the reference does, in this order:
/// `jsessionid=` and 32 alphanumerics, `phpsessid=` and 32, `sid=` and 32, `ASPSESSIONID`, 8
/// letters, `=` and 24 letters, and `cfid=…&cftoken=…`. Names match ASCII case-insensitively
/// and anywhere (`xsid=…` matches too); the argument must end the query or be followed by `&`,
/// which is removed with it. Only the last occurrence of each kind is removed. Inputs are taken
/// to contain no line feed (parsing deletes them).
pub fn strip_query_session_id(query: &[u8]) -> Vec<u8> {
    let mut q = query.to_vec();
    for matcher in [
        (|s: &[u8]| prefixed_run(s, b"jsessionid=", 32, u8::is_ascii_alphanumeric))
            as fn(&[u8]) -> Option<usize>,
        |s| prefixed_run(s, b"phpsessid=", 32, u8::is_ascii_alphanumeric),
        |s| prefixed_run(s, b"sid=", 32, u8::is_ascii_alphanumeric),
        aspsessionid_len,
        cfid_len,
    ] {
        q = strip_last_query_match(&q, matcher);
    }
    q
}

/// `^(.*)X(?:&(.*))?$` with a greedy `(.*)`: the last start where `X` matches and is followed
/// by the end or `&`; the result is group 1 followed by group 2.
fn strip_last_query_match(q: &[u8], x_len: fn(&[u8]) -> Option<usize>) -> Vec<u8> {
    for i in (0..q.len()).rev() {
        if let Some(n) = x_len(&q[i..]) {
            let j = i + n;
            if j == q.len() || q[j] == b'&' {
                let mut out = q[..i].to_vec();
                out.extend_from_slice(q.get(j + 1..).unwrap_or_default());
                return out;
            }
        }
    }
    q.to_vec()
}

fn prefixed_run(s: &[u8], prefix: &[u8], n: usize, class: fn(&u8) -> bool) -> Option<usize> {
    let p = prefix.len();
    (s.len() >= p + n && s[..p].eq_ignore_ascii_case(prefix) && s[p..p + n].iter().all(class))
        .then_some(p + n)
}

/// `ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}`.
fn aspsessionid_len(s: &[u8]) -> Option<usize> {
    let name = prefixed_run(s, b"aspsessionid", 8, u8::is_ascii_alphabetic)?;
    let value = prefixed_run(&s[name..], b"=", 24, u8::is_ascii_alphabetic)?;
    Some(name + value)
}

/// `cfid=[^&]+&cftoken=[^&]+`.
fn cfid_len(s: &[u8]) -> Option<usize> {
    if s.len() < 5 || !s[..5].eq_ignore_ascii_case(b"cfid=") {
        return None;
    }
    let v1 = s[5..].iter().take_while(|&&b| b != b'&').count();
    let k = 5 + v1;
    if v1 == 0 || s.len() < k + 9 || !s[k..k + 9].eq_ignore_ascii_case(b"&cftoken=") {
        return None;
    }
    let v2 = s[k + 9..].iter().take_while(|&&b| b != b'&').count();
    (v2 > 0).then_some(k + 9 + v2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn google(s: &str) -> String {
        let mut h = HandyUrl::parse(s.as_bytes());
        google_canonicalize(&mut h);
        h.to_string()
    }

    #[test]
    fn surt_examples() {
        assert_eq!(surt(""), "-");
        assert_eq!(surt("   "), "-");
        assert_eq!(surt("filedesc:foo.arc.gz"), "filedesc:foo.arc.gz");
        assert_eq!(surt("dns:archive.org"), "dns:archive.org");
        assert_eq!(surt("http://www.archive.org/"), "org,archive)/");
        assert_eq!(
            surt("http://archive.org/goo/?a=2&b&a=1"),
            "org,archive)/goo?a=1&a=2&b"
        );
        assert_eq!(surt("https://www.Example.com:443/A/"), "com,example)/a");
        assert_eq!(surt("http://example.com:8080/"), "com,example:8080)/");
        assert_eq!(surt("http://1.2.3.4/x"), "4,3,2,1)/x");
        assert_eq!(surt("mailto:Foo@Example.com"), "mailto:foo@example.com");
        assert_eq!(surt("http://bücher.ch/"), "ch,xn--bcher-kva)/");
    }

    #[test]
    fn google_examples() {
        assert_eq!(google("http://host/%25%32%35"), "http://host/%25");
        assert_eq!(
            google("http://www.google.com.../"),
            "http://www.google.com/"
        );
        assert_eq!(google("http://3279880203/blah"), "http://195.127.0.11/blah");
        assert_eq!(
            google("http://host.com//twoslashes?more//slashes"),
            "http://host.com/twoslashes?more//slashes"
        );
        assert_eq!(google("http://a/b/../../../c"), "http://a/c");
        assert_eq!(google("http://a/../c"), "http://a/../c");
    }

    #[test]
    fn ip_formats() {
        assert_eq!(attempt_ip_formats(b"www.foo.com"), None);
        assert_eq!(
            attempt_ip_formats(b"127.0.0.1").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            attempt_ip_formats(b"017.0.0.1").as_deref(),
            Some("15.0.0.1")
        );
        assert_eq!(attempt_ip_formats(b"10.0.258").as_deref(), Some("10.0.1.2"));
        assert_eq!(attempt_ip_formats(b"1.2.3.256"), None);
        assert_eq!(
            attempt_ip_formats(b"39024579298").as_deref(),
            Some("22.11.210.226")
        );
        assert_eq!(attempt_ip_formats(b"1.08.0.0"), None);
        assert_eq!(attempt_ip_formats(b"0.9.1.1"), None);
        assert_eq!(attempt_ip_formats(b"1.2.3.4.5"), None);
    }

    #[test]
    fn query_session_ids() {
        let id = "0123456789abcdefghijklemopqrstuv";
        let strip = |q: String| String::from_utf8(strip_query_session_id(q.as_bytes())).unwrap();
        assert_eq!(strip(format!("?jsessionid={id}")), "?");
        assert_eq!(
            strip(format!("?jsessionid={id}0")),
            format!("?jsessionid={id}0")
        );
        assert_eq!(strip(format!("?jsessionid={id}&x=y")), "?x=y");
        assert_eq!(
            strip(format!("?one=two&jsessionid={id}&x=y")),
            "?one=two&x=y"
        );
        assert_eq!(strip(format!("?one=two&jsessionid={id}")), "?one=two&");
        assert_eq!(
            strip("?aspsessionidABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&x=y".into()),
            "?x=y"
        );
        assert_eq!(
            strip(format!("?one=two&phpsessid={id}&x=y")),
            "?one=two&x=y"
        );
        assert_eq!(
            strip("?sid=9682993c8daa2c5497996114facdc805&x=y".into()),
            "?x=y"
        );
        assert_eq!(
            strip(format!(
                "?sid=9682993c8daa2c5497996114facdc805&jsessionid={id}"
            )),
            "?"
        );
        assert_eq!(
            strip("?CFID=1169580&CFTOKEN=48630702&dtstamp=22%2F08%2F2006%7C06%3A58%3A11".into()),
            "?dtstamp=22%2F08%2F2006%7C06%3A58%3A11"
        );
        assert_eq!(
            strip(
                "?CFID=14475712&CFTOKEN=2D89F5AF-3048-2957-DA4EE4B6B13661AB&r=468710288378\
                 &m=forgotten"
                    .into()
            ),
            "?r=468710288378&m=forgotten"
        );
        assert_eq!(
            strip("?CFID=16603925&CFTOKEN=2AE13EEE-3048-85B0-56CEDAAB0ACA44B8".into()),
            "?"
        );
    }

    #[test]
    fn path_session_ids() {
        let strip = |p: &str| String::from_utf8(strip_path_session_id(p.as_bytes())).unwrap();
        assert_eq!(
            strip("/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx"),
            "/mileg.aspx"
        );
        assert_eq!(
            strip("/a/(4hqa0555fwsecu455xqckv45)/b/mileg.aspx"),
            "/a/b/mileg.aspx"
        );
        assert_eq!(
            strip("/(4hqa0555fwsecu455xqckv45)/mileg.html"),
            "/(4hqa0555fwsecu455xqckv45)/mileg.html"
        );
        assert_eq!(
            strip("/(4hqa0555fwsecu455xqckv45)/?x.aspx"),
            "/(4hqa0555fwsecu455xqckv45)/?x.aspx"
        );
    }

    #[test]
    fn host_helpers() {
        assert_eq!(massage_host(b"www.foo.com"), b"foo.com");
        assert_eq!(massage_host(b"www12.foo.com"), b"foo.com");
        assert_eq!(massage_host(b"www2foo.com"), b"www2foo.com");
        assert_eq!(massage_host(b"wwwfoo.com"), b"wwwfoo.com");
        assert_eq!(host_to_surt(b"www.archive.org"), b"org,archive,www");
        assert_eq!(host_to_surt(b"x.y.z."), b",z,y,x");
        assert_eq!(escape_once(b"a b#%\x7f\xff~"), b"a%20b%23%25%7F%FF~");
        assert_eq!(unescape_repeatedly(b"%25%32%35"), b"%");
    }
}
