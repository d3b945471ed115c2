//! The response head a fetch keeps: the bytes of the WARC block's head, and the same head parsed
//! ([`HttpHead`]) for the parse and the index, both made from the client's parsed response
//! without writing the text and reading it back.

use ureq_proto::http;

use crate::warc::http::{HttpHead, DEFAULT_MAX_HEAD};

/// The status line as the head's text starts (without its line end), appended to `out`:
/// `HTTP/1.1 200 OK`, the reason left empty when the code has none (the line then ends in a
/// space, which [`head_of`] trims). Written piece by piece: it was formatted twice a page.
fn push_status_line(out: &mut Vec<u8>, parts: &http::response::Parts) {
    let version = match parts.version {
        http::Version::HTTP_10 => "HTTP/1.0",
        _ => "HTTP/1.1",
    };
    out.extend_from_slice(version.as_bytes());
    out.push(b' ');
    // Always three digits (a `StatusCode` is 100..=999).
    out.extend_from_slice(parts.status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
}

/// The fields the head keeps: all but `Transfer-Encoding` (the body is stored de-chunked).
fn kept_fields(
    parts: &http::response::Parts,
) -> impl Iterator<Item = (&http::HeaderName, &http::HeaderValue)> {
    parts
        .headers
        .iter()
        .filter(|(name, _)| *name != http::header::TRANSFER_ENCODING)
}

/// The response head as a WARC block starts: status line, headers but `Transfer-Encoding`,
/// blank line.
pub(super) fn head_bytes(parts: &http::response::Parts) -> Vec<u8> {
    let fields: usize = kept_fields(parts)
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum();
    let mut h = Vec::with_capacity(fields + 64);
    push_status_line(&mut h, parts);
    h.extend_from_slice(b"\r\n");
    for (name, value) in kept_fields(parts) {
        h.extend_from_slice(name.as_str().as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(value.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// What [`crate::warc::http::read_head`] reads from [`head_bytes`] (`len` of them), taken
/// from the parsed fields instead: the start line without trailing space, values lossily
/// decoded and trimmed, `None` past [`DEFAULT_MAX_HEAD`] as there. Each fetched page's head
/// was written and parsed again (~20 allocations and 11k instructions a page).
pub(super) fn head_of(parts: &http::response::Parts, len: usize) -> Option<HttpHead> {
    if len > DEFAULT_MAX_HEAD {
        return None;
    }
    let mut line = Vec::with_capacity(48);
    push_status_line(&mut line, parts);
    let mut start_line = String::from_utf8(line).expect("a version, three digits and a reason");
    start_line.truncate(start_line.trim_end().len());
    let mut head = HttpHead::with_capacity(start_line, parts.headers.len(), len);
    for (name, value) in kept_fields(parts) {
        // Visible ASCII (nearly every value) is its own text; lossy decoding of a few bytes
        // costs more than checking them.
        let value = match value.to_str() {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(value.as_bytes()),
        };
        head.push(name.as_str(), value.trim());
    }
    head.len = len as u64;
    Some(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::http::read_head;

    fn parts(
        status: u16,
        version: http::Version,
        fields: &[(&str, &[u8])],
    ) -> http::response::Parts {
        let mut b = http::Response::builder().status(status).version(version);
        for (n, v) in fields {
            b = b.header(*n, http::HeaderValue::from_bytes(v).unwrap());
        }
        b.body(()).unwrap().into_parts().0
    }

    /// The head taken from the fields is the head read back from the bytes, whatever the
    /// status, version and field values (non-UTF-8, inner spaces, repeated names).
    #[test]
    fn the_head_from_the_fields_is_the_head_read_from_the_bytes() {
        let cases = [
            parts(200, http::Version::HTTP_11, &[]),
            parts(
                200,
                http::Version::HTTP_11,
                &[
                    ("content-type", b"text/html; charset=ISO-8859-1"),
                    ("transfer-encoding", b"chunked"),
                    ("set-cookie", b"a=1"),
                    ("set-cookie", b"b=2"),
                    ("x-latin", b"caf\xe9 \xff"),
                    ("x-spaced", b"a  b\tc"),
                    ("x-empty", b""),
                    ("x-padded", b" \t padded \t"),
                ],
            ),
            parts(404, http::Version::HTTP_10, &[("content-length", b"0")]),
            // A code without a reason phrase: the line ends after the code.
            parts(299, http::Version::HTTP_11, &[("location", b"/x")]),
            parts(599, http::Version::HTTP_2, &[("etag", b"\"v1\"")]),
        ];
        for p in &cases {
            let bytes = head_bytes(p);
            let read = read_head(&mut &bytes[..], DEFAULT_MAX_HEAD).ok();
            assert!(read.is_some());
            assert_eq!(head_of(p, bytes.len()), read, "{:?}", p.status);
        }
        let p = &cases[1];
        assert!(!String::from_utf8_lossy(&head_bytes(p)).contains("chunked"));
        assert_eq!(head_of(p, DEFAULT_MAX_HEAD + 1), None);
    }

    /// The status line is the one `format!` wrote before it was written piece by piece, for
    /// every code and version.
    #[test]
    fn the_status_line_is_the_formatted_one() {
        for code in 100..=999u16 {
            for version in [http::Version::HTTP_10, http::Version::HTTP_11] {
                let p = parts(code, version, &[]);
                let v = if version == http::Version::HTTP_10 {
                    "HTTP/1.0"
                } else {
                    "HTTP/1.1"
                };
                let reason = p.status.canonical_reason().unwrap_or("");
                let want = format!("{v} {code} {reason}\r\n\r\n");
                assert_eq!(String::from_utf8(head_bytes(&p)).unwrap(), want);
            }
        }
    }
}
