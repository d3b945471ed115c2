//! Shared by the server tests: a small web, a server for it on loopback, and a raw HTTP/1.1 client
//! over `TcpStream` with timeouts everywhere, so a test fails rather than hangs.

#![allow(dead_code)] // each test binary uses part of this

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use websim::model::{HostSpec, Hostile, Web, WebConfig};
use websim::server::{Server, ServerOptions};

/// Longest a test client waits for any one read or write.
pub const IO_TIMEOUT: Duration = Duration::from_secs(3);

/// The web the tests use: every hostile kind and every robots variant occur (seed 1, 200 hosts),
/// small enough delays and bombs to test in a few seconds.
pub fn config() -> WebConfig {
    WebConfig {
        seed: 1,
        hosts: 200,
        pages: 120,
        listeners: 4,
        port: 0,
        hostile_every: 5,
        default_delay: Duration::ZERO,
        max_crawl_delay: Duration::from_millis(400),
        drip_interval: Duration::from_millis(20),
        bomb_bytes: 4 << 20,
        ..WebConfig::default()
    }
}

/// Server options for tests: quick to stop.
pub fn options() -> ServerOptions {
    ServerOptions {
        poll_interval: Duration::from_millis(20),
        ..ServerOptions::default()
    }
}

/// Serves `config` on a free port.
pub fn start(config: WebConfig) -> (Arc<Web>, Server) {
    Server::start_web(config, options()).expect("start websim on loopback")
}

/// The first host with hostile kind `kind`.
pub fn hostile(web: &Web, kind: Hostile) -> &HostSpec {
    web.hosts
        .iter()
        .find(|h| h.hostile == Some(kind))
        .unwrap_or_else(|| panic!("no {kind:?} host"))
}

/// Where `host` is served.
pub fn addr(web: &Web, host: &HostSpec) -> SocketAddr {
    SocketAddr::new(host.addr.into(), web.config.port)
}

/// A connection to `host` with read and write timeouts.
pub fn connect(web: &Web, host: &HostSpec) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr(web, host), IO_TIMEOUT).expect("connect");
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

/// Sends `GET target` (or another method) with a Host header and `headers`.
pub fn send(
    s: &mut TcpStream,
    method: &str,
    web: &Web,
    host: &HostSpec,
    target: &str,
    headers: &[(&str, &str)],
) {
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {}:{}\r\n",
        host.name, web.config.port
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("send request");
}

/// A parsed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body (as framed by Content-Length; empty for HEAD, 304, ...).
    pub body: Vec<u8>,
    /// Every byte of the response as received.
    pub raw: Vec<u8>,
}

impl Resp {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads a response head (up to `limit` bytes): returns the head's length and the bytes read,
/// which may include the start of the body.
pub fn read_head(s: &mut TcpStream, limit: usize) -> io::Result<(usize, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok((i + 4, buf));
        }
        if buf.len() > limit || Instant::now() > deadline {
            return Err(io::Error::other(format!(
                "no end of head in {} bytes",
                buf.len()
            )));
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed before the head ended",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Parses a head: status and headers.
pub fn parse_head(head: &[u8]) -> (u16, Vec<(String, String)>) {
    let text = std::str::from_utf8(head).expect("UTF-8 head");
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').expect("header line");
            (n.to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    (status, headers)
}

/// Reads one whole response framed by Content-Length (`head_only`: a HEAD request's).
pub fn read_response(s: &mut TcpStream, head_only: bool) -> io::Result<Resp> {
    let (head_len, mut raw) = read_head(s, 1 << 20)?;
    let (status, headers) = parse_head(&raw[..head_len]);
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
    let want = if head_only || status == 304 || status == 204 {
        0
    } else {
        len
    };
    let mut chunk = [0u8; 64 * 1024];
    while raw.len() < head_len + want {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed before the body ended",
            ));
        }
        raw.extend_from_slice(&chunk[..n]);
    }
    let body = raw[head_len..head_len + want].to_vec();
    Ok(Resp {
        status,
        headers,
        body,
        raw,
    })
}

/// One request on a new connection.
pub fn get(web: &Web, host: &HostSpec, target: &str, headers: &[(&str, &str)]) -> Resp {
    let mut s = connect(web, host);
    send(&mut s, "GET", web, host, target, headers);
    read_response(&mut s, false).unwrap_or_else(|e| panic!("GET {}{target}: {e}", host.name))
}
