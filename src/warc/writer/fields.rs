//! A record header's fields, written straight into bytes: the WARC writer writes two records
//! per fetched page, and building each header from owned strings cost a dozen allocations.

use std::net::IpAddr;

/// An `application/warc-fields` block.
pub(super) fn warc_fields<'a>(fields: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (n, v) in fields {
        put_field(&mut out, &clean_str(n), v);
    }
    out
}

/// Appends the header field `name: value` and its CRLF to `out`. A CR or LF in the value
/// becomes a space: it would end the field early, and the rest would be read as fields of its
/// own (header injection through a URL or a server's value).
pub(super) fn put_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    let start = out.len();
    out.extend_from_slice(value.as_bytes());
    for b in &mut out[start..] {
        if matches!(*b, b'\r' | b'\n') {
            *b = b' ';
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// `v` as [`put_field`] writes it.
pub(super) fn clean_str(v: &str) -> std::borrow::Cow<'_, str> {
    if v.contains(['\r', '\n']) {
        v.replace(['\r', '\n'], " ").into()
    } else {
        v.into()
    }
}

/// `ip` as `Display` writes it, an IPv4 address without the formatting machinery (twice a
/// page: the request's and the response's `WARC-IP-Address`).
pub(super) fn ip_text(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let mut s = String::with_capacity(15);
            for (i, o) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    s.push('.');
                }
                s.push_str(itoa::Buffer::new().format(o));
            }
            s
        }
        IpAddr::V6(_) => ip.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_never_spans_lines() {
        let mut out = Vec::new();
        put_field(
            &mut out,
            "WARC-Target-URI",
            "http://a.test/\r\nWARC-Type: forged",
        );
        put_field(&mut out, "Content-Length", "12");
        assert_eq!(
            out,
            b"WARC-Target-URI: http://a.test/  WARC-Type: forged\r\nContent-Length: 12\r\n"
        );
        assert_eq!(clean_str("a\nb"), "a b");
        assert!(matches!(clean_str("ab"), std::borrow::Cow::Borrowed("ab")));
        let block = warc_fields([("a\r", "x\ny")].into_iter());
        assert_eq!(block, b"a : x y\r\n");
    }

    /// `ip_text` is `Display`'s text, for every IPv4 octet value and for IPv6.
    #[test]
    fn ip_text_is_displays() {
        for o in 0..=255u8 {
            for ip in [[o, 0, 9, 255], [10, o, o, 1], [255, 255, 0, o]] {
                let ip = std::net::IpAddr::from(ip);
                assert_eq!(super::ip_text(ip), ip.to_string());
            }
        }
        let v6: std::net::IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(super::ip_text(v6), v6.to_string());
    }
}
