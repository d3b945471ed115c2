//! A fetched body's payload: its content coding undone under the `max_decoded` cap, for the
//! payload digest of the fetch result, robots.txt, and the inline parse.

use xxhash_rust::xxh3::Xxh3;

use crate::fetch::client::Fetched;

/// The body with its Content-Encoding undone, at most `cap` bytes; `true` if the cap cut it.
pub(in crate::fetch::stage) fn decode_body(got: &Fetched, cap: u64) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let capped = decode_into(got, cap, &mut |b| out.extend_from_slice(b));
    (out, capped)
}

/// xxh3-64 of the decoded payload (at most `cap` bytes), and whether the cap cut it.
pub(in crate::fetch::stage) fn digest_body(got: &Fetched, cap: u64) -> (u64, bool) {
    let mut h = Xxh3::new();
    let capped = decode_into(got, cap, &mut |b| h.update(b));
    (h.digest(), capped)
}

/// Streams the decoded payload of `got` into `sink`. A body that does not decode (a truncated
/// gzip member, a wrong coding) gives what decoded before the error; `true` if `cap` was hit.
fn decode_into(got: &Fetched, cap: u64, sink: &mut dyn FnMut(&[u8])) -> bool {
    use std::io::Read;
    // `got.head` was parsed within the WARC reader's cap on heads; a bigger one (possible when
    // `max_header_bytes` is raised past it) is parsed here with the larger cap it always had.
    let parsed;
    let head = match &got.head {
        Some(head) => head,
        None => match crate::warc::http::read_head(&mut &got.raw_response_head[..], 1 << 20) {
            Ok(h) => {
                parsed = h;
                &parsed
            }
            Err(_) => {
                sink(&got.body);
                return false;
            }
        },
    };
    if head.codings().is_empty() {
        let n = got
            .body
            .len()
            .min(usize::try_from(cap).unwrap_or(usize::MAX));
        sink(&got.body[..n]);
        return (got.body.len() as u64) > cap;
    }
    let mut r = match crate::warc::http::payload_reader(head, &got.body[..], cap) {
        Ok(r) => r,
        Err(_) => return false,
    };
    let mut buf = [0u8; 16 << 10];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => sink(&buf[..n]),
            Err(e) if crate::warc::http::is_cap_exceeded(&e) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::http::read_payload;
    use std::io::Write;

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// A response of `body` with `coding`, as the client hands it over.
    fn fetched(coding: &str, body: Vec<u8>) -> Fetched {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {coding}\r\n\r\n"
        );
        let parsed = crate::warc::http::read_head(&mut head.as_bytes(), 1 << 20).unwrap();
        Fetched {
            status: 200,
            raw_response_head: head.into_bytes(),
            head: Some(parsed),
            body: body.into(),
            raw_request: Vec::new(),
            cut: None,
            ip: std::net::Ipv4Addr::LOCALHOST.into(),
            started: std::time::UNIX_EPOCH,
            duration: std::time::Duration::ZERO,
            content_type: "text/html".into(),
            etag: None,
            last_modified: None,
            location: None,
            retry_after: None,
        }
    }

    #[test]
    fn the_fetchs_decoding_is_the_parses() {
        let page: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("<p>{i}</p>").into_bytes())
            .collect();
        let whole = gzip(&page);
        let cases = [
            ("gzip", whole.clone(), 1 << 30),                     // all of it
            ("gzip", whole.clone(), 100_000),                     // cut by the cap
            ("gzip", whole[..whole.len() / 2].to_vec(), 1 << 30), // a truncated member
            ("gzip", b"not gzip at all".to_vec(), 1 << 30),       // no payload at all
            ("identity, gzip", gzip(&whole), 1 << 30),            // two codings
        ];
        // `dragnet parse` decodes a page from the WARC with `read_payload`; the inline parse
        // reads the fetch's one decoding: the two must agree, byte for byte and on the cap.
        let parse = |got: &Fetched, cap| {
            let mut out = Vec::new();
            let capped = read_payload(got.head.as_ref().unwrap(), &got.body[..], cap, &mut out);
            (out, capped)
        };
        for (coding, body, cap) in cases {
            let got = fetched(coding, body);
            let (once, capped) = decode_body(&got, cap);
            assert_eq!(
                (once.clone(), capped),
                parse(&got, cap),
                "{coding}, cap {cap}"
            );
            let (digest, digest_capped) = digest_body(&got, cap);
            assert_eq!(digest, xxhash_rust::xxh3::xxh3_64(&once));
            assert_eq!(digest_capped, capped);
        }
        let got = fetched("gzip", whole);
        assert_eq!(decode_body(&got, 1 << 30).0, page);
        assert!(decode_body(&got, 1000).1);
    }
}
