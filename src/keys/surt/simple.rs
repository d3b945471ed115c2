//! The SURT of a simple URL without the reference's machinery.
//!
//! Most URLs a crawl archives are already canonical and plain: `http(s)://host[:port]/path`
//! with a lower-case host name and a path of unreserved bytes. For those every step of
//! [`super::surt_bytes`] is the identity but three: `www.` is dropped from the host, the labels
//! are reversed, the default port goes, the path is lower-cased and one trailing `/` removed.
//! The full path parses the URL into owned pieces, unescapes and escapes each, and allocates at
//! each step (~29 allocations a CDXJ line on the peer web, ~1% of the crawl's CPU); this one
//! writes the key at once.
//!
//! A URL is taken only when nothing else could apply (the module's tests compare it with the
//! full path on every combination of hard pieces):
//!
//! - the scheme is `http` or `https`, lower-case;
//! - the host is lower-case letters, digits, `-` and `.`, with a letter or `-` somewhere (so it
//!   is no numeric address, which the reference rewrites as a dotted quad), no empty label;
//! - a port, if any, is decimal, 1-65535, without a leading zero;
//! - the path is empty or starts with `/`, and holds only letters, digits and `-._~!$&'*+,;=:@/`
//!   (no escape, query, fragment, space, parenthesis: nothing the canonicalization edits but
//!   case), with no empty, `.` or `..` segment but the last (which may be empty: a trailing `/`).

/// The SURT key of `url` if it is simple (see the module doc), else `None`.
pub fn simple_surt(url: &[u8]) -> Option<Vec<u8>> {
    let (rest, default_port) = if let Some(r) = url.strip_prefix(b"http://") {
        (r, 80)
    } else if let Some(r) = url.strip_prefix(b"https://") {
        (r, 443)
    } else {
        return None;
    };
    let host_end = rest
        .iter()
        .position(|&b| b == b':' || b == b'/')
        .unwrap_or(rest.len());
    let (host, rest) = rest.split_at(host_end);
    if !simple_host(host) {
        return None;
    }
    let (port, path) = match rest.strip_prefix(b":") {
        Some(p) => {
            let n = p.iter().position(|&b| b == b'/').unwrap_or(p.len());
            (Some(simple_port(&p[..n])?), &p[n..])
        }
        None => (None, rest),
    };
    if !simple_path(path) {
        return None;
    }
    let host = super::massage_host(host);
    let mut out = Vec::with_capacity(host.len() + path.len() + 8);
    for (i, label) in host.rsplit(|&b| b == b'.').enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(label);
    }
    if let Some(p) = port.filter(|&p| p != default_port) {
        out.push(b':');
        out.extend_from_slice(p.to_string().as_bytes());
    }
    out.push(b')');
    let path = match path {
        b"" => b"/",
        p if p.len() > 1 && p.ends_with(b"/") => &p[..p.len() - 1],
        p => p,
    };
    out.extend(path.iter().map(u8::to_ascii_lowercase));
    Some(out)
}

fn simple_host(host: &[u8]) -> bool {
    !host.is_empty()
        && host
            .iter()
            .all(|&b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.'))
        && host.iter().any(|&b| matches!(b, b'a'..=b'z' | b'-'))
        && host.split(|&b| b == b'.').all(|l| !l.is_empty())
}

fn simple_port(p: &[u8]) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || p[0] == b'0' || !p.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = p
        .iter()
        .fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0'));
    u16::try_from(v).ok()
}

fn simple_path(path: &[u8]) -> bool {
    if path.is_empty() {
        return true;
    }
    if path[0] != b'/' || !path.iter().all(|&b| PATH[usize::from(b)]) {
        return false;
    }
    // No empty, `.` or `..` segment, but the last may be empty (a trailing `/`).
    let mut segments = path[1..].split(|&b| b == b'/').peekable();
    while let Some(s) = segments.next() {
        if is_dots(s) || (s.is_empty() && segments.peek().is_some()) {
            return false;
        }
    }
    true
}

fn is_dots(s: &[u8]) -> bool {
    s == b"." || s == b".."
}

/// Bytes a simple path may hold.
const PATH: [bool; 256] = crate::keys::alnum_and(b"-._~!$&'*+,;=:@/");

#[cfg(test)]
mod tests {
    use super::super::{full_surt_bytes, HandyUrl};
    use super::*;

    /// Every URL of a scheme, a host, a port and up to three path pieces, each from lists of
    /// the forms the canonicalization treats specially: wherever the simple path answers, it
    /// answers what the full one does, and it answers for the plain forms.
    #[test]
    fn agrees_with_the_full_canonicalization_on_every_combination() {
        let schemes = ["http://", "https://", "HTTP://", "ftp://", "http:/", ""];
        let hosts = [
            "example.com",
            "www.example.com",
            "www12.example.com",
            "wwwx.example.com",
            "www.",
            "a-b.example",
            "-",
            "1.2.3.4",
            "123",
            "0x7f.1",
            "1.2.3.com",
            "a..b",
            ".a",
            "a.",
            "EXAMPLE.com",
            "xn--bcher-kva.de",
            "b\u{fc}cher.de",
            "a_b.com",
            "u@h.com",
            "h%41.com",
            "localhost",
            "www",
            "",
        ];
        let ports = [
            "", ":80", ":443", ":8080", ":0", ":080", ":65535", ":65536", ":", ":8a", ":99999",
        ];
        let pieces = [
            "/",
            "a",
            "B",
            ".",
            "..",
            "%41",
            "(",
            "?q",
            "#f",
            "x.aspx",
            ";p=1",
            "~u",
            "é",
            " ",
            "index.html",
            "q=1&b",
            ":",
            "@",
            "(s(abcdefghijklmnopqrstuvwx))",
            "\\",
            "\"",
            "*",
        ];
        // Paths of up to two pieces with every scheme, host and port; of three with a few.
        let mut short = vec![String::new()];
        let mut long = Vec::new();
        for a in pieces {
            short.extend([a.to_string(), format!("/{a}")]);
            for b in pieces {
                short.extend([format!("{a}{b}"), format!("/{a}{b}"), format!("/{a}/{b}")]);
                for c in pieces {
                    long.extend([format!("/{a}{b}/{c}"), format!("/{a}/{b}/{c}")]);
                }
            }
        }
        let (mut taken, mut all) = (0, 0);
        let mut check = |url: String| {
            all += 1;
            if let Some(key) = simple_surt(url.as_bytes()) {
                taken += 1;
                assert_eq!(
                    String::from_utf8_lossy(&key),
                    String::from_utf8_lossy(&full_surt_bytes(url.as_bytes())),
                    "{url}"
                );
            }
        };
        for s in schemes {
            for h in hosts {
                for p in ports {
                    for path in &short {
                        check(format!("{s}{h}{p}{path}"));
                    }
                }
            }
        }
        for prefix in ["http://www.example.com", "https://a-b.example:8080"] {
            for path in &long {
                check(format!("{prefix}{path}"));
            }
        }
        assert!(taken > 30_000, "{taken} of {all}");
        eprintln!("{taken} of {all} URLs simple");
        for (url, key) in [
            ("http://www.example.com/", "com,example)/"),
            ("https://example.com", "com,example)/"),
            ("https://example.com:443/A/B/", "com,example)/a/b"),
            ("http://example.com:443/a", "com,example:443)/a"),
            ("http://www3.site.org:8080/x;y=1", "org,site:8080)/x;y=1"),
        ] {
            assert_eq!(
                simple_surt(url.as_bytes()).as_deref(),
                Some(key.as_bytes()),
                "{url}"
            );
        }
        // Not simple: left to the full path.
        for url in [
            "http://1.2.3.4/",
            "http://EXAMPLE.com/",
            "http://a.com/%41",
            "http://a.com/b/../c",
        ] {
            assert!(simple_surt(url.as_bytes()).is_none(), "{url}");
            assert!(HandyUrl::parse(url.as_bytes()).scheme.is_some());
        }
    }
}
