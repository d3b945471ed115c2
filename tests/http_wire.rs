//! `dragnet::fetch::client` against scripted servers on loopback: what goes on the wire, how
//! answers are framed, and when a connection is kept. Each server answers a fixed script of
//! raw responses and stops; every read has a timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dragnet::config::{ByteSize, FetchSection};
use dragnet::fetch::client::{Cut, Fetcher, Validators};
use dragnet::resolve::Resolver;
use url::Url;

/// One scripted answer: its bytes, and whether the server closes the connection after it.
struct Answer(&'static [u8], bool);

/// Each request's head as received, with the connection (0, 1, ...) it came on.
type Received = Vec<(usize, Vec<u8>)>;

/// A server answering requests with its script in order, one connection after another.
struct Scripted {
    addr: SocketAddr,
    requests: Arc<Mutex<Received>>,
    thread: Option<JoinHandle<()>>,
}

impl Scripted {
    fn start(script: Vec<Answer>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            listener.set_nonblocking(true).unwrap();
            let mut script = script.into_iter().peekable();
            let mut conn_no = 0;
            while script.peek().is_some() && Instant::now() < deadline {
                let mut sock = match listener.accept() {
                    Ok((s, _)) => s,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                };
                sock.set_nonblocking(false).unwrap();
                sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                while let Some(head) = read_head(&mut sock) {
                    seen.lock().unwrap().push((conn_no, head));
                    let Some(Answer(bytes, close)) = script.next() else {
                        return;
                    };
                    sock.write_all(bytes).unwrap();
                    if close {
                        break;
                    }
                }
                conn_no += 1;
            }
        });
        Scripted {
            addr,
            requests,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    /// The requests received, once the script is done.
    fn finish(mut self) -> Received {
        self.thread.take().unwrap().join().unwrap();
        self.requests.lock().unwrap().clone()
    }
}

/// A request head (through its blank line), or `None` at the end of the connection.
fn read_head(sock: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match sock.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return None,
        }
    }
    Some(head)
}

fn fetcher() -> Fetcher {
    let cfg = FetchSection {
        allow_private_addresses: true,
        connect_timeout_secs: 2.0,
        read_timeout_secs: 2.0,
        total_timeout_secs: 5.0,
        max_body: ByteSize(1 << 20),
        user_agent: "dragnet-test/1.0 (+https://example.org/bot)".into(),
        ..FetchSection::default()
    };
    Fetcher::new(&cfg, Arc::new(Resolver::default()))
}

/// The WARC's request record is the bytes the server received, byte for byte, conditional
/// headers included.
#[test]
fn the_request_record_is_what_went_on_the_wire() {
    let server = Scripted::start(vec![
        Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", false),
        Answer(b"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n", false),
    ]);
    let f = fetcher();
    let client = f.client();
    let first = f
        .fetch_with(
            &client,
            &server.url("/a/b?x=1&y=%20"),
            Validators::default(),
        )
        .unwrap();
    assert_eq!(first.body, b"hi");
    let validators = Validators {
        etag: Some("\"v1\""),
        last_modified: Some("Sun, 29 Nov 2026 10:00:00 GMT"),
    };
    let second = f
        .fetch_with(&client, &server.url("/a/b?x=1&y=%20"), validators)
        .unwrap();
    assert_eq!(second.status, 304);
    let got = server.finish();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1, first.raw_request);
    assert_eq!(got[1].1, second.raw_request);
    let text = String::from_utf8(second.raw_request).unwrap();
    assert!(
        text.starts_with("GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("\r\nIf-None-Match: \"v1\"\r\n"), "{text}");
    assert_eq!((got[0].0, got[1].0), (0, 0), "one connection kept alive");
}

/// A long URL (past any small rendering buffer: `[canon] max_url_len` allows 2,048 bytes and
/// more) goes out whole.
#[test]
fn a_long_url_is_sent_whole() {
    let server = Scripted::start(vec![Answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        true,
    )]);
    let path = format!("/{}?q={}", "p".repeat(3000), "v".repeat(3000));
    let got = fetcher()
        .fetch(&server.url(&path), Validators::default())
        .unwrap();
    assert_eq!(got.body, b"ok");
    let received = server.finish();
    assert_eq!(received[0].1, got.raw_request);
    assert!(
        String::from_utf8_lossy(&got.raw_request).starts_with(&format!("GET {path} HTTP/1.1\r\n"))
    );
}

/// 1xx answers before the final one are skipped; the final answer and its body are read.
#[test]
fn informational_answers_are_skipped() {
    let server = Scripted::start(vec![Answer(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
        true,
    )]);
    let got = fetcher()
        .fetch(&server.url("/"), Validators::default())
        .unwrap();
    assert_eq!(got.status, 200);
    assert_eq!(got.body, b"hello");
    assert_eq!(got.cut, None);
    let head = String::from_utf8(got.raw_response_head.clone()).unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(!head.contains("Early"), "{head}");
    server.finish();
}

/// A connection is kept after a chunked body and after a sized one (however many reads it
/// takes, and HTTP/1.0 with `keep-alive`), not after `Connection: close` nor after a body that
/// ends with the connection (HTTP/1.0); chunked framing is removed, and `Transfer-Encoding` is
/// not in the kept head.
#[test]
fn connections_are_kept_only_when_the_answer_allows() {
    let big: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut sized = b"HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n".to_vec();
    sized.extend_from_slice(&big);
    let server = Scripted::start(vec![
        Answer(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\nTrailer: t\r\n\r\n",
            false,
        ),
        Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz", false),
        Answer(Vec::leak(sized), false),
        Answer(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi",
            false,
        ),
        Answer(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true),
        Answer(b"HTTP/1.0 200 OK\r\n\r\nto the close", true),
        Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast", true),
    ]);
    let f = fetcher();
    let client = f.client();
    let bodies: Vec<Vec<u8>> = (0..7)
        .map(|i| {
            let got = f
                .fetch_with(
                    &client,
                    &server.url(&format!("/{i}")),
                    Validators::default(),
                )
                .unwrap();
            assert_eq!(got.cut, None, "answer {i}");
            if i == 0 {
                let head = String::from_utf8_lossy(&got.raw_response_head).to_lowercase();
                assert!(!head.contains("transfer-encoding"), "{head}");
            }
            got.body.to_vec()
        })
        .collect();
    assert_eq!(
        bodies,
        [
            &b"abcdefg"[..],
            b"xyz",
            &big,
            b"hi",
            b"ok",
            b"to the close",
            b"last"
        ]
    );
    let conns: Vec<usize> = server.finish().into_iter().map(|(c, _)| c).collect();
    assert_eq!(conns, [0, 0, 0, 0, 0, 1, 2]);
}

/// A chunk size line that never ends is a broken body once it passes 64 KiB: the chunks before
/// it are kept, and the client neither waits for the total timeout nor buffers the line.
#[test]
fn an_endless_chunk_size_line_is_cut_at_once() {
    let mut answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n".to_vec();
    answer.resize(answer.len() + (200 << 10), b'1');
    let server = Scripted::start(vec![Answer(Vec::leak(answer), false)]);
    let started = Instant::now();
    let got = fetcher()
        .fetch(&server.url("/"), Validators::default())
        .unwrap();
    assert_eq!(got.body, b"abc");
    assert_eq!(got.cut, Some(Cut::Disconnect));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "cut before the 5 s total timeout: {:?}",
        started.elapsed()
    );
    server.finish();
}

/// A body cut short by the close, or with broken chunk framing, is kept as far as it came and
/// marked a disconnect; a head cut short is a protocol error; none of these connections is
/// reused.
#[test]
fn broken_answers_are_cut_or_refused() {
    let server = Scripted::start(vec![
        Answer(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", true),
        Answer(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n",
            true,
        ),
        Answer(b"HTTP/1.1 200 OK\r\nContent-Le", true),
    ]);
    let f = fetcher();
    let client = f.client();
    let short = f
        .fetch_with(&client, &server.url("/short"), Validators::default())
        .unwrap();
    assert_eq!(
        (short.body.as_slice(), short.cut),
        (&b"short"[..], Some(Cut::Disconnect))
    );
    let chunked = f
        .fetch_with(&client, &server.url("/chunked"), Validators::default())
        .unwrap();
    assert_eq!(chunked.body, b"abc");
    assert_eq!(chunked.cut, Some(Cut::Disconnect));
    let err = f
        .fetch_with(&client, &server.url("/head"), Validators::default())
        .unwrap_err();
    assert_eq!(err.kind().as_str(), "protocol", "{err}");
    let conns: Vec<usize> = server.finish().into_iter().map(|(c, _)| c).collect();
    assert_eq!(conns, [0, 1, 2]);
}
