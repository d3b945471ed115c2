//! The head parsed here against the engine's own parse of the same bytes: the kept head, the
//! fields the crawl reads, and the framing the engine decides.

use super::*;
use crate::warc::http::read_head;
use ureq_proto::client::{Call, RecvBodyResult, RecvResponseResult, SendRequestResult};
use ureq_proto::BodyMode;

/// The kept head as it was made from the engine's `http::Response` before (the oracle).
fn oracle_bytes(parts: &http::response::Parts) -> Vec<u8> {
    let version = match parts.version {
        http::Version::HTTP_10 => "HTTP/1.0",
        _ => "HTTP/1.1",
    };
    let mut h = format!(
        "{version} {} {}\r\n",
        parts.status.as_str(),
        parts.status.canonical_reason().unwrap_or("")
    )
    .into_bytes();
    for (name, value) in parts.headers.iter() {
        if name == http::header::TRANSFER_ENCODING {
            continue;
        }
        h.extend_from_slice(name.as_str().as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(value.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// A field as the client read it from the engine's response before (the oracle).
fn oracle_field(parts: &http::response::Parts, name: &str) -> Option<String> {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
}

/// What the engine decides from `head` after a GET: the body's framing (`None`: no body) and
/// whether the connection must close once that body (if framed) has ended.
fn engine(head: &[u8]) -> Result<(Option<BodyMode>, bool), String> {
    let req = http::Request::get("http://a.test/").body(()).unwrap();
    let mut call = Call::new(req).unwrap().proceed();
    let mut out = vec![0u8; 256];
    while !call.can_proceed() {
        call.write(&mut out).unwrap();
    }
    let Some(SendRequestResult::RecvResponse(mut call)) = call.proceed().unwrap() else {
        panic!("a GET has no body");
    };
    let mut input = head;
    loop {
        let (used, r) = call.try_response(input, false).map_err(|e| e.to_string())?;
        input = &input[used..];
        if r.is_some() {
            break;
        }
        assert!(used > 0, "a whole head");
    }
    match call.proceed().unwrap() {
        RecvResponseResult::RecvBody(mut c) => {
            let mode = c.body_mode();
            let body: Vec<u8> = match mode {
                BodyMode::LengthDelimited(n) => vec![b'x'; n as usize],
                BodyMode::Chunked => b"0\r\n\r\n".to_vec(),
                _ => return Ok((Some(mode), true)),
            };
            let mut sink = vec![0u8; body.len() + 16];
            let mut at = 0;
            while !c.can_proceed() {
                let (used, _) = c.read(&body[at..], &mut sink).unwrap();
                at += used;
                assert!(used > 0 || c.can_proceed(), "the body ends");
            }
            let close = match c.proceed() {
                Some(RecvBodyResult::Cleanup(c)) => c.must_close_connection(),
                Some(RecvBodyResult::Redirect(c)) => c.must_close_connection(),
                None => true,
            };
            Ok((Some(mode), close))
        }
        RecvResponseResult::Redirect(c) => Ok((None, c.must_close_connection())),
        RecvResponseResult::Cleanup(c) => Ok((None, c.must_close_connection())),
    }
}

fn heads() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        &b"HTTP/1.1 200 OK\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Mon, 30 Nov 2026 02:00:00 GMT\r\n\
          Content-Type: text/html; charset=utf-8\r\nContent-Length: 12\r\n\
          Last-Modified: Sun, 29 Nov 2026 00:00:00 GMT\r\nConnection: keep-alive\r\n\
          ETag: \"6749-3\"\r\nAccept-Ranges: bytes\r\n\r\n",
        b"HTTP/1.1 200 Whatever\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\
          Set-Cookie: a=1\r\nX-One: 1\r\nset-cookie: b=2\r\nSET-COOKIE: c=3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: Keep-Alive\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: Upgrade, close\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nconnection:  CLOSE \r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: closed, x-close\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\xff\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: \tclose\t,x\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nConnection: x, Keep-Alive\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\xff\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length:  7 \r\n\r\n",
        b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 100\r\n\r\n",
        b"HTTP/1.1 301 Moved\r\nLocation: /next\r\nlocation: /other\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 302 Found\r\nLocation: /caf\xc3\xa9\r\n\r\n",
        b"HTTP/1.1 503 Busy\r\nRetry-After:  120 \r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 299 \r\nX-Latin: caf\xe9 \xff\r\nX-Spaced: a  b\tc\r\nX-Empty:\r\n\r\n",
        b"HTTP/1.1 599 Odd\r\nContent-Type: \tTEXT/Plain ; q=1\t\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n",
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 404 Not Found\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\nServer: x\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        b"HTTP/1.1 099 Low\r\n\r\n",
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n",
        b"HTTP/1.1 200 OK\n\n",
        b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\n\r\n",
    ]
    .iter()
    .map(|h| h.to_vec())
    .collect();
    // The field limit, at it and past it.
    for n in [MAX_FIELDS, MAX_FIELDS + 1] {
        let mut h = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..n {
            h.extend_from_slice(format!("X-{i}: {i}\r\n").as_bytes());
        }
        h.extend_from_slice(b"\r\n");
        v.push(h);
    }
    v
}

/// Parses `input` as the fetch does: 1xx answers but `101` skipped (each given to the engine
/// whole, which ends the exchange at a `100` with fields), up to the last head.
fn parse_final(input: &[u8]) -> Result<(usize, Received), HeadError> {
    let mut at = 0;
    loop {
        let r = Received::parse(&input[at..])?.expect("a whole head");
        at += r.len;
        // The engine refuses a 100 with fields: the exchange ends there.
        let refused = r.status == 100 && r.head.as_ref().is_some_and(|h| h.headers().count() > 0);
        if r.status >= 200 || r.status == 101 || refused || at == input.len() {
            return Ok((at, r));
        }
        assert_eq!(
            r.framing,
            &input[at - r.len..at],
            "a 1xx goes to the engine whole"
        );
    }
}

/// Every head: the kept head and the fields are the engine's `http::Response`'s, and the
/// engine frames the body from the framing head as from the whole head; what the engine
/// refuses is refused here (the limit on fields as too many fields).
#[test]
fn the_head_is_the_engines_parse() {
    for input in heads() {
        same_as_the_engine(&input);
    }
}

/// Holds the parse of `input` (heads one after the other, the last one final) to the engine's.
fn same_as_the_engine(input: &[u8]) {
    let name = String::from_utf8_lossy(input).into_owned();
    // The engine's parse of the final answer, skipping what it skips.
    let mut at = 0;
    let oracle = loop {
        match ureq_proto::parser::try_parse_response::<MAX_FIELDS>(&input[at..]) {
            Ok(Some((used, r))) if r.status().is_informational() => {
                if r.status() == http::StatusCode::CONTINUE && !r.headers().is_empty() {
                    break Err(ureq_proto::Error::HeadersWith100);
                }
                if r.status() == http::StatusCode::SWITCHING_PROTOCOLS {
                    break Ok((at + used, r));
                }
                at += used;
            }
            Ok(Some((used, r))) => break Ok((at + used, r)),
            Ok(None) => panic!("a whole head: {name}"),
            Err(e) => break Err(e),
        }
    };
    let mine = parse_final(input);
    match (oracle, mine) {
        (Ok((used, r)), Ok((len, mine))) => {
            let (parts, ()) = r.into_parts();
            assert_eq!(len, used, "{name}");
            assert_eq!(mine.status, parts.status.as_u16(), "{name}");
            assert_eq!(
                String::from_utf8_lossy(&mine.bytes),
                String::from_utf8_lossy(&oracle_bytes(&parts)),
                "{name}"
            );
            assert_eq!(mine.bytes, oracle_bytes(&parts), "{name}");
            let read = read_head(&mut &mine.bytes[..], DEFAULT_MAX_HEAD).ok();
            assert!(read.is_some(), "{name}");
            assert_eq!(mine.head, read, "{name}");
            for (field, got) in [
                ("content-type", &mine.content_type),
                ("etag", &mine.etag),
                ("last-modified", &mine.last_modified),
                ("location", &mine.location),
                ("retry-after", &mine.retry_after),
            ] {
                assert_eq!(got, &oracle_field(&parts, field), "{field} of {name}");
            }
            assert_eq!(
                mine.content_length,
                oracle_field(&parts, "content-length").and_then(|v| v.parse().ok()),
                "{name}"
            );
            let decided = engine(&input[len - mine.len..len]);
            assert_eq!(engine(&mine.framing), decided, "the framing of {name}");
            // Whether the connection closes after the body, as the engine decides it: what
            // the fetch keeps a connection by when it reads a body of known length itself.
            if let Ok((mode, close)) = decided {
                if mode != Some(BodyMode::CloseDelimited) {
                    assert_eq!(mine.close, close, "closing after {name}");
                }
            }
        }
        (Err(ureq_proto::Error::HttpParseTooManyHeaders), Err(e)) => {
            assert_eq!(e, HeadError::TooManyFields, "{name}")
        }
        (Err(ureq_proto::Error::HeadersWith100), Ok((_, mine))) => {
            // Refused by the engine, which is given the 100 whole.
            assert!(engine(&mine.framing).is_err(), "{name}");
        }
        (Err(_), Err(HeadError::Invalid(_))) => {}
        (o, m) => panic!("{name}: the engine says {o:?}, the parse {m:?}"),
    }
}

/// A name of the fields that matter here and a few that do not, in any case.
fn any_name() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    const NAMES: [&str; 11] = [
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Content-Type",
        "ETag",
        "Last-Modified",
        "Location",
        "Retry-After",
        "Set-Cookie",
        "Server",
        "X-A",
    ];
    // The three framing fields half the time.
    let name = prop_oneof![
        proptest::sample::select(&NAMES[..3]),
        proptest::sample::select(&NAMES[..]),
    ];
    (name, any::<u64>()).prop_map(|(n, case)| {
        n.chars()
            .enumerate()
            .map(|(i, c)| {
                if case >> (i % 64) & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    })
}

/// A value: one that frames a body or not, or any bytes a field may hold (text, tabs, bytes
/// past ASCII).
fn any_value() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    const KNOWN: [&str; 19] = [
        "0",
        "5",
        "12",
        " 7 ",
        "-1",
        "abc",
        "2, 2",
        "chunked",
        "gzip, chunked",
        "gzip",
        "identity",
        "close",
        "keep-alive",
        "Keep-Alive",
        "Upgrade, close",
        "\"x\"",
        "text/html; charset=utf-8",
        "/next",
        "120",
    ];
    prop_oneof![
        3 => proptest::sample::select(&KNOWN[..]).prop_map(|v| v.as_bytes().to_vec()),
        1 => proptest::collection::vec(prop_oneof![Just(b'\t'), 0x20u8..0x7f, 0x80u8..=0xff], 0..12),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// Any head of those fields, any status and either version: the parse is the engine's
    /// (the kept head, the fields, the framing and the connection's reuse).
    #[test]
    fn any_head_is_the_engines_parse(
        http10 in proptest::prelude::any::<bool>(),
        code in proptest::prop_oneof![0u16..100, 200u16..1000],
        fields in proptest::collection::vec((any_name(), any_value()), 0..10),
        informational in proptest::option::of((100u16..200, proptest::prelude::any::<bool>())),
    ) {
        let mut input = Vec::new();
        if let Some((code, with_field)) = informational {
            input.extend_from_slice(format!("HTTP/1.1 {code} Info\r\n").as_bytes());
            if with_field {
                input.extend_from_slice(b"Link: </a.css>\r\n");
            }
            input.extend_from_slice(b"\r\n");
        }
        let version = if http10 { "HTTP/1.0" } else { "HTTP/1.1" };
        input.extend_from_slice(format!("{version} {code:03} Reason\r\n").as_bytes());
        for (n, v) in &fields {
            input.extend_from_slice(n.as_bytes());
            input.extend_from_slice(b": ");
            input.extend_from_slice(v);
            input.extend_from_slice(b"\r\n");
        }
        input.extend_from_slice(b"\r\n");
        same_as_the_engine(&input);
    }
}

/// The framing head holds the status and the three framing fields, and nothing else.
#[test]
fn the_framing_head_is_the_framing_fields() {
    let input: &[u8] = b"HTTP/1.0 404 Not Found\r\nServer: x\r\nContent-Length: 3\r\nX: y\r\n\
          connection: keep-alive\r\nTRANSFER-ENCODING: chunked\r\n\r\nabc";
    let r = Received::parse(input).unwrap().unwrap();
    assert_eq!(
        String::from_utf8(r.framing).unwrap(),
        "HTTP/1.0 404 R\r\nContent-Length: 3\r\nconnection: keep-alive\r\n\
         TRANSFER-ENCODING: chunked\r\n\r\n"
    );
    assert_eq!(r.len, input.len() - 3);
    assert!(Received::parse(b"HTTP/1.1 200 OK\r\nServer: x\r\n")
        .unwrap()
        .is_none());
}

/// A head past `DEFAULT_MAX_HEAD` keeps its bytes but not its parse (as `read_head`).
#[test]
fn a_head_past_the_parse_limit_is_not_parsed() {
    let mut h = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..4 {
        h.extend_from_slice(format!("X-{i}: {}\r\n", "v".repeat(DEFAULT_MAX_HEAD / 4)).as_bytes());
    }
    h.extend_from_slice(b"\r\n");
    let r = Received::parse(&h).unwrap().unwrap();
    assert!(r.bytes.len() > DEFAULT_MAX_HEAD);
    assert_eq!(r.head, None);
}
