//! Every hostile behaviour, status and robots variant really happens on the wire, as seen by a
//! raw `TcpStream` client with timeouts; the server's own limits hold; `stop` is prompt.

use crate::common;

use std::io::{self, Read};
use std::time::{Duration, Instant};

use websim::model::{Coding, Hostile, PageKind, PageRef, Web};
use websim::robots::RobotsServe;
use websim::server::{Server, ServerOptions};

use common::*;

/// Reads until EOF, an error, `cap` bytes or `within`; returns the bytes and the error, if any.
fn read_until_end(
    s: &mut std::net::TcpStream,
    cap: usize,
    within: Duration,
) -> (Vec<u8>, Option<io::Error>) {
    let mut out = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    let end = Instant::now() + within;
    while out.len() < cap && Instant::now() < end {
        match s.read(&mut chunk) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

fn content_length(headers: &[(String, String)]) -> usize {
    headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .expect("content-length")
        .1
        .parse()
        .unwrap()
}

/// Starts a GET of `/` on the first host of `kind`; returns the stream, head length and bytes read.
fn hostile_get(
    web: &Web,
    kind: Hostile,
    headers: &[(&str, &str)],
) -> (std::net::TcpStream, usize, Vec<u8>) {
    let host = hostile(web, kind);
    let mut s = connect(web, host);
    send(&mut s, "GET", web, host, "/", headers);
    let (head_len, buf) = read_head(&mut s, 8 << 20).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    (s, head_len, buf)
}

/// [`hostile_get`] of a host whose answer is a 200 with a Content-Length: the stream, the head's
/// length, what was read, and the declared length.
fn hostile_body(web: &Web, kind: Hostile) -> (std::net::TcpStream, usize, Vec<u8>, usize) {
    let (s, head_len, buf) = hostile_get(web, kind, &[]);
    let (status, headers) = parse_head(&buf[..head_len]);
    assert_eq!(status, 200, "{kind:?}");
    let declared = content_length(&headers);
    (s, head_len, buf, declared)
}

/// GET of page `p` of host `h`.
fn get_page(web: &Web, h: u32, p: u32) -> Resp {
    get(
        web,
        &web.hosts[h as usize],
        &web.path(PageRef::Page { host: h, page: p }),
        &[],
    )
}

#[test]
fn slow_drip_sends_a_byte_per_interval() {
    let (web, _server) = start(config());
    let (mut s, head_len, buf, declared) = hostile_body(&web, Hostile::SlowDrip);
    assert!(declared > 500, "{declared}");
    // Within 300 ms at one byte per 20 ms: about 15 bytes, never the page.
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let (more, _) = read_until_end(&mut s, declared, Duration::from_millis(300));
    let got = buf.len() - head_len + more.len();
    assert!(
        (3..=40).contains(&got),
        "{got} of {declared} bytes in 300 ms"
    );
}

#[test]
fn endless_body_never_ends() {
    let (web, _server) = start(config());
    let (mut s, head_len, buf) = hostile_get(&web, Hostile::EndlessBody, &[]);
    let (status, headers) = parse_head(&buf[..head_len]);
    assert_eq!(status, 200);
    assert!(headers.contains(&("transfer-encoding".into(), "chunked".into())));
    let (body, err) = read_until_end(&mut s, 8 << 20, Duration::from_secs(5));
    assert!(err.is_none(), "{err:?}");
    assert!(
        body.len() >= 8 << 20,
        "only {} bytes, then the body ended",
        body.len()
    );
}

#[test]
fn huge_headers_exceed_256_kib() {
    let (web, _server) = start(config());
    let (_s, head_len, buf) = hostile_get(&web, Hostile::HugeHeaders, &[]);
    let (status, headers) = parse_head(&buf[..head_len]);
    assert_eq!(status, 200);
    assert!(head_len > 256 << 10, "head of {head_len} bytes");
    assert!(headers.len() > 1000);
}

#[test]
fn gzip_bomb_inflates_a_hundredfold() {
    let (web, _server) = start(config());
    let (mut s, head_len, mut buf) =
        hostile_get(&web, Hostile::GzipBomb, &[("Accept-Encoding", "gzip")]);
    let (status, headers) = parse_head(&buf[..head_len]);
    assert_eq!(status, 200);
    assert!(headers.contains(&("content-encoding".into(), "gzip".into())));
    let len = content_length(&headers);
    while buf.len() < head_len + len {
        let (more, err) = read_until_end(&mut s, head_len + len - buf.len(), IO_TIMEOUT);
        assert!(err.is_none() && !more.is_empty(), "{err:?}");
        buf.extend_from_slice(&more);
    }
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(&buf[head_len..head_len + len])
        .take(64 << 20)
        .read_to_end(&mut inflated)
        .expect("a valid gzip stream");
    assert_eq!(inflated.len() as u64, web.config.bomb_bytes);
    assert!(
        inflated.len() >= 100 * len,
        "{len} bytes inflate to only {}",
        inflated.len()
    );
}

#[test]
fn reset_mid_body_cuts_the_connection() {
    let (web, _server) = start(config());
    let (mut s, head_len, buf, declared) = hostile_body(&web, Hostile::ResetMidBody);
    let (more, err) = read_until_end(&mut s, declared + 1, IO_TIMEOUT);
    let got = buf.len() - head_len + more.len();
    let reset = err
        .as_ref()
        .is_some_and(|e| e.kind() == io::ErrorKind::ConnectionReset);
    assert!(
        reset || got < declared,
        "{got} of {declared} bytes, error {err:?}"
    );
    assert!(got < declared, "the whole body arrived ({got} bytes)");
}

#[test]
fn wrong_content_length_sends_less_then_closes() {
    let (web, _server) = start(config());
    let (mut s, head_len, buf, declared) = hostile_body(&web, Hostile::WrongContentLength);
    let (more, err) = read_until_end(&mut s, declared + 1, IO_TIMEOUT);
    assert!(err.is_none(), "expected a clean close, got {err:?}");
    let got = buf.len() - head_len + more.len();
    assert!(
        got < declared,
        "{got} bytes under a Content-Length of {declared}"
    );
    assert!(got > 0);
}

/// The root-relative hrefs of a page starting with `prefix`.
fn hrefs(body: &[u8], prefix: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let pat = format!("href=\"{prefix}");
    text.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &text[i + 6..];
            rest[..rest.find('"').unwrap()].replace("&amp;", "&")
        })
        .collect()
}

#[test]
fn crawler_trap_never_runs_out_of_pages() {
    let (web, _server) = start(config());
    let host = hostile(&web, Hostile::Trap);
    let home = get(&web, host, "/", &[]);
    assert_eq!(home.status, 200);
    let mut next = hrefs(&home.body, "/calendar/")
        .pop()
        .expect("a calendar link on the home page");
    let mut seen = std::collections::HashSet::new();
    let mut s = connect(&web, host);
    for _ in 0..40 {
        assert!(seen.insert(next.clone()), "{next} came back");
        send(&mut s, "GET", &web, host, &next, &[]);
        let r = read_response(&mut s, false).unwrap();
        assert_eq!(r.status, 200, "{next}");
        let links = hrefs(&r.body, "/calendar/");
        assert_eq!(links.len(), 2, "{next}: previous and next month");
        next = links.into_iter().max().unwrap(); // paths sort by date: the next month
    }
    let mut item = hrefs(&home.body, "/shop/item-")
        .pop()
        .expect("a session link on the home page");
    for _ in 0..20 {
        assert!(seen.insert(item.clone()), "{item} came back");
        send(&mut s, "GET", &web, host, &item, &[]);
        let r = read_response(&mut s, false).unwrap();
        assert_eq!(r.status, 200, "{item}");
        item = hrefs(&r.body, "/shop/item-")
            .pop()
            .expect("more session links");
    }
}

/// The first (host, page) of a non-hostile host whose kind satisfies `want`.
fn find_page(web: &Web, want: impl Fn(&PageKind) -> bool) -> Option<(u32, u32, PageKind)> {
    for h in web.hosts.iter().filter(|h| h.hostile.is_none()) {
        for p in 1..web.config.pages {
            let k = web.kind(h.index, p);
            if want(&k) {
                return Some((h.index, p, k));
            }
        }
    }
    None
}

#[test]
fn redirects_and_error_statuses() {
    let (web, _server) = start(config());
    for want in [301u16, 302, 307, 308] {
        let (h, p, kind) = find_page(
            &web,
            |k| matches!(k, PageKind::Redirect { status, .. } if *status == want),
        )
        .unwrap_or_else(|| panic!("no {want} redirect"));
        let PageKind::Redirect { to, .. } = kind else {
            unreachable!()
        };
        let r = get_page(&web, h, p);
        assert_eq!(r.status, want);
        assert_eq!(r.header("location"), Some(web.url(to).as_str()));
    }
    for want in [404u16, 410, 500, 503] {
        let (h, p, _) = find_page(&web, |k| *k == PageKind::Error { status: want })
            .unwrap_or_else(|| panic!("no {want}"));
        let r = get_page(&web, h, p);
        assert_eq!(r.status, want);
        assert_eq!(
            r.header("retry-after").is_some(),
            want == 503,
            "Retry-After on {want}"
        );
    }
    let r = get(&web, &web.hosts[0], "/no/such/page.html", &[]);
    assert_eq!(r.status, 404);
}

#[test]
fn conditional_get_answers_304() {
    let (web, _server) = start(config());
    let host = web.hosts.iter().find(|h| h.hostile.is_none()).unwrap();
    let mut s = connect(&web, host);
    send(&mut s, "GET", &web, host, "/", &[]);
    let first = read_response(&mut s, false).unwrap();
    assert_eq!(first.status, 200);
    let etag = first.header("etag").expect("ETag").to_string();
    let lm = first
        .header("last-modified")
        .expect("Last-Modified")
        .to_string();
    for (name, value, want) in [
        ("If-None-Match", etag.as_str(), 304),
        ("If-Modified-Since", lm.as_str(), 304),
        ("If-None-Match", "\"something-else\"", 200),
        ("If-Modified-Since", "Thu, 01 Jan 2015 00:00:00 GMT", 200),
    ] {
        send(&mut s, "GET", &web, host, "/", &[(name, value)]);
        let r = read_response(&mut s, false).unwrap();
        assert_eq!(r.status, want, "{name}: {value}");
        if want == 304 {
            assert!(r.body.is_empty() && r.header("content-length").is_none());
            assert_eq!(r.header("etag"), Some(etag.as_str()));
        }
    }
}

#[test]
fn content_codings_decode_to_the_plain_page() {
    let (web, _server) = start(config());
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli] {
        let host = web
            .hosts
            .iter()
            .find(|h| h.hostile.is_none() && h.coding == Some(coding))
            .unwrap();
        let plain = get(&web, host, "/", &[]);
        let coded = get(&web, host, "/", &[("Accept-Encoding", coding.token())]);
        assert_eq!(coded.header("content-encoding"), Some(coding.token()));
        let mut decoded = Vec::new();
        match coding {
            Coding::Gzip => flate2::read::GzDecoder::new(&coded.body[..]).read_to_end(&mut decoded),
            Coding::Deflate => {
                flate2::read::ZlibDecoder::new(&coded.body[..]).read_to_end(&mut decoded)
            }
            Coding::Brotli => {
                brotli::Decompressor::new(&coded.body[..], 4096).read_to_end(&mut decoded)
            }
        }
        .unwrap();
        assert_eq!(decoded, plain.body, "{coding:?}");
    }
}

#[test]
fn robots_variants() {
    let (web, _server) = start(config());
    let host_of = |kind: RobotsServe| {
        web.hosts
            .iter()
            .find(|h| h.robots_serve == kind)
            .unwrap_or_else(|| panic!("{kind:?}"))
    };
    let r = get(&web, host_of(RobotsServe::Text), "/robots.txt", &[]);
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("text/plain"))
    );
    assert!(String::from_utf8_lossy(&r.body).contains("User-agent:"));
    assert_eq!(
        get(&web, host_of(RobotsServe::NotFound), "/robots.txt", &[]).status,
        404
    );
    assert!(get(&web, host_of(RobotsServe::ServerError), "/robots.txt", &[]).status >= 500);
    let r = get(&web, host_of(RobotsServe::Html), "/robots.txt", &[]);
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("text/html"))
    );
    let r = get(&web, host_of(RobotsServe::Huge), "/robots.txt", &[]);
    assert_eq!(r.status, 200);
    assert!(r.body.len() > 500 << 10, "{} bytes", r.body.len());

    // Timeout: the connection stays silent.
    let host = host_of(RobotsServe::Timeout);
    let mut s = connect(&web, host);
    send(&mut s, "GET", &web, host, "/robots.txt", &[]);
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut b = [0u8; 1];
    let e = s
        .read(&mut b)
        .expect_err("a stalled robots.txt sends nothing");
    assert!(
        matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
        "{e:?}"
    );
}

#[test]
fn malformed_requests_are_refused() {
    let (web, _server) = start(config());
    let host = &web.hosts[0];
    let big = "x".repeat(100 << 10);
    for (raw, want) in [
        ("GET / HTTP/1.1\r\n\r\n".to_string(), 400), // no Host
        (
            format!(
                "GET / HTTP/1.1\r\nHost: {}\r\nX-Big: {big}\r\n\r\n",
                host.name
            ),
            431,
        ),
        (
            format!("BREW / HTTP/1.1\r\nHost: {}\r\n\r\n", host.name),
            405,
        ),
        (
            format!("GET / HTTP/3.0\r\nHost: {}\r\n\r\n", host.name),
            505,
        ),
    ] {
        let mut s = connect(&web, host);
        std::io::Write::write_all(&mut s, raw.as_bytes()).unwrap();
        let r = read_response(&mut s, false).unwrap();
        assert_eq!(r.status, want, "{}", &raw[..raw.len().min(40)]);
    }
}

#[test]
fn connections_over_the_cap_get_503() {
    let opts = ServerOptions {
        max_connections: 2,
        ..options()
    };
    let (web, server) = Server::start_web(config(), opts).unwrap();
    let host = web.hosts.iter().find(|h| h.hostile.is_none()).unwrap();
    let mut kept = Vec::new();
    for _ in 0..2 {
        let mut s = connect(&web, host);
        send(&mut s, "GET", &web, host, "/robots.txt", &[]);
        read_response(&mut s, false).unwrap();
        kept.push(s); // open, idle, keep-alive
    }
    let mut s = connect(&web, host);
    let r = read_response(&mut s, false).unwrap();
    assert_eq!((r.status, r.header("connection")), (503, Some("close")));
    drop(kept);
    let report = server.stop();
    assert_eq!(report.rejected_connections, 1);
    assert_eq!(report.connections, 2);
}

#[test]
fn stop_is_prompt_with_hostile_responses_in_flight() {
    let (web, server) = start(config());
    let mut streams = Vec::new();
    for kind in [Hostile::SlowDrip, Hostile::EndlessBody] {
        streams.push(hostile_get(&web, kind, &[]).0);
    }
    let stalled = web
        .hosts
        .iter()
        .find(|h| h.robots_serve == RobotsServe::Timeout)
        .unwrap();
    let mut s = connect(&web, stalled);
    send(&mut s, "GET", &web, stalled, "/robots.txt", &[]);
    streams.push(s);
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    let report = server.stop();
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "stop took {:?}",
        t.elapsed()
    );
    assert_eq!(report.requests, 3);
    // The drip and the endless body were cut short; a stall sends nothing by design.
    assert_eq!(report.incomplete, 2);
    for mut s in streams {
        let (_, _) = read_until_end(&mut s, usize::MAX, IO_TIMEOUT); // ends: EOF or reset
    }
}
