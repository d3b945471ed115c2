//! Node URLs: a label read into its canonical `(host, path)` ([`parse_node_url`]), or the reason
//! it is skipped, and request targets canonicalized the same way ([`normalize_target`]); the
//! rules are in the module doc of [`crate::graph`].

use super::Skip;

/// Reads a node label: `(host, path)` in canonical form, or why it is skipped (module doc).
pub fn parse_node_url(raw: &str) -> Result<(String, String), Skip> {
    let s = raw.trim();
    let s = s.split('#').next().unwrap_or(s);
    let colon = s.find(':').ok_or(Skip::Malformed)?;
    let scheme = &s[..colon];
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(Skip::Malformed);
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(Skip::NotHttp);
    }
    let rest = s[colon + 1..].strip_prefix("//").ok_or(Skip::Malformed)?;
    let end = rest.find(['/', '\\', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(end);
    if auth.contains('@') {
        return Err(Skip::Malformed);
    }
    let (host, port) = match auth.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (auth, None),
    };
    let host = host.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host);
    let labels_ok = !host.is_empty()
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !labels_ok {
        return Err(Skip::Malformed);
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Skip::IpHost);
    }
    match port {
        None | Some("") | Some("80") => {}
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok() => {
            if p.parse::<u16>() != Ok(80) {
                return Err(Skip::OtherPort);
            }
        }
        Some(_) => return Err(Skip::Malformed),
    }
    Ok((host.to_string(), normalize_target(tail)))
}

/// Canonical path-and-query (module doc): `\` -> `/`, percent-escapes normalized, bytes outside
/// `pchar` encoded, dot segments removed, empty path -> `/`. The fragment must be gone already.
pub fn normalize_target(target: &str) -> String {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let path = percent_normalize(&path.replace('\\', "/"), b"/");
    let mut out = remove_dot_segments(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(&percent_normalize(q, b"/?"));
    }
    out
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Keeps unreserved, sub-delims, `:`, `@` and `extra`; decodes escaped unreserved bytes;
/// upper-cases other escapes; encodes everything else.
fn percent_normalize(s: &str, extra: &[u8]) -> String {
    let keep = |b: u8| is_unreserved(b) || b"!$&'()*+,;=:@".contains(&b) || extra.contains(&b);
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                let v = (h * 16 + l) as u8;
                if is_unreserved(v) {
                    out.push(v as char);
                } else {
                    out.push_str(&format!("%{v:02X}"));
                }
                i += 3;
                continue;
            }
        }
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
    out
}

/// RFC 3986 §5.2.4 on an absolute path; an empty path becomes `/`.
fn remove_dot_segments(path: &str) -> String {
    let mut segs: Vec<&str> = Vec::new();
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut trailing = false;
    for (i, seg) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *seg {
            "." => trailing = last,
            ".." => {
                segs.pop();
                trailing = last;
            }
            s => {
                segs.push(s);
                trailing = false;
            }
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    for s in &segs {
        out.push('/');
        out.push_str(s);
    }
    if trailing || out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        let (h, p) = parse_node_url(s).unwrap_or_else(|e| panic!("{s}: {e:?}"));
        format!("http://{h}{p}")
    }

    #[test]
    fn labels_are_canonicalized() {
        assert_eq!(ok("http://www.Caltech.EDU"), "http://www.caltech.edu/");
        assert_eq!(
            ok("HTTP://www.srs.gov./x.html#top"),
            "http://www.srs.gov/x.html"
        );
        assert_eq!(
            ok("http://www.via.net:80/~csf/"),
            "http://www.via.net/~csf/"
        );
        assert_eq!(ok("http://a.b/%7euser/%2fx%20"), "http://a.b/~user/%2Fx%20");
        assert_eq!(
            ok("http://www.yahoo.com/new/*\"http://gocalif.ca.gov/movies/"),
            "http://www.yahoo.com/new/*%22http://gocalif.ca.gov/movies/"
        );
        assert_eq!(ok("http://www.netscape.com\\"), "http://www.netscape.com/");
        assert_eq!(ok("http://a.b/d\\m\\l.htm"), "http://a.b/d/m/l.htm");
        assert_eq!(ok("http://a.b/x|y^z{w}"), "http://a.b/x%7Cy%5Ez%7Bw%7D");
        assert_eq!(ok("http://a.b/100%"), "http://a.b/100%25");
        assert_eq!(
            ok("http://www.macnet.com/~../../home/r.html"),
            "http://www.macnet.com/home/r.html"
        );
        assert_eq!(ok("http://a.b/./PR/x"), "http://a.b/PR/x");
        assert_eq!(ok("http://a.b/~j/pubs/.."), "http://a.b/~j/");
        assert_eq!(ok("http://www_radar.x.edu/p"), "http://www_radar.x.edu/p");
        assert_eq!(ok("http://www.usa-"), "http://www.usa-/");
        assert_eq!(ok("http://a.b/s?q=1 2"), "http://a.b/s?q=1%202");
    }

    #[test]
    fn bad_labels_are_classified() {
        for (s, why) in [
            ("http:/docs", Skip::Malformed),
            ("http:/cacb/Forms.nsf/main/page", Skip::Malformed),
            ("http://www.oznet.ksu.edu>", Skip::Malformed),
            ("http://u@a.b/", Skip::Malformed),
            ("http:///x", Skip::Malformed),
            ("no url", Skip::Malformed),
            ("ftp://a.b/", Skip::NotHttp),
            ("https://a.b/", Skip::NotHttp),
            ("http://129.8.21.20/", Skip::IpHost),
            ("http://a.b:8080/x", Skip::OtherPort),
            ("http://a.b:99999/x", Skip::Malformed),
        ] {
            assert_eq!(parse_node_url(s), Err(why), "{s}");
        }
    }

    #[test]
    fn canonical_form_is_a_fixed_point() {
        for s in [
            "http://a.b/%7euser/%2fx%20",
            "http://a.b/x|y\"z/../q?r=%7e&s=|",
            "http://a.b/é",
        ] {
            let once = ok(s);
            assert_eq!(ok(&once), once, "{s}");
            assert!(once.is_ascii());
        }
    }
}
