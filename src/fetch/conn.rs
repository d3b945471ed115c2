//! The fetch client's connections: TCP, or TLS over TCP, kept alive per host, read and written
//! under the client's timeouts (docs/design.md §7).
//!
//! The client (`client.rs`) speaks HTTP/1.1 through ureq's protocol engine (`ureq-proto`'s
//! `Call`: the response head, 1xx answers, the body's framing and whether the connection may be
//! kept; the request's head is the client's own), and does the I/O itself, here. ureq's agent,
//! which did that I/O before, ran each request through its middleware chain, timing table, pool
//! and transport chain with two 128 KiB buffers per connection (docs/BENCHMARKS.md, "2026-11-30
//! (ninth session)"); what is left of it is what the fetch needs:
//!
//! - **Connect** to the address the client resolved and checked (the SSRF guard's, so a name
//!   cannot resolve to another address for the connection), within the connect timeout and what
//!   is left of the total; `TCP_NODELAY`; then, for `https`, the TLS handshake within the same
//!   budget, verified for the URL's host (rustls, one configuration per stage: `tls.rs`).
//! - **Timeouts.** Each read waits at most the read timeout, and never past the exchange's total
//!   deadline; each write at most the read timeout. The socket's timeouts are set only when they
//!   change (a system call each), which is once a connection until the deadline comes within a
//!   read timeout. A timeout is `TimedOut`, whatever the socket said (`EAGAIN`).
//! - **Input** is read in blocks of [`READ_BLOCK`] into the connection's buffer, [`FRONT`] bytes
//!   into it, which the protocol engine parses in place; a head longer than the buffer grows it
//!   (the client stops at `max_header_bytes`). A body of known length is not copied out of it:
//!   the buffer becomes the body's ([`Conn::take_input`], with [`FRONT`] bytes and the head in
//!   front of the body for its WARC record's header), the connection takes another, and the rest
//!   of the body is read straight into it ([`Conn::read_direct`]).
//! - **Keep-alive.** A host's client keeps at most [`MAX_IDLE`] idle connections, for at most
//!   [`MAX_IDLE_AGE`]. A kept connection is probed once before it is reused, with one
//!   `recv(MSG_PEEK | MSG_DONTWAIT)`: bytes the server sent unasked, or its close, mean it is
//!   not reused.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

/// Bytes a connection reads at a time: a page and its head in one read, for nearly every page
/// (32 KiB took ~6% more reads on the peer web).
pub(super) const READ_BLOCK: usize = 64 << 10;
/// Where a connection's input starts in its buffer: room for a WARC record's header in front of
/// a body that stays where it was received (the client's `HEADROOM`, which is this).
pub(super) const FRONT: usize = 4 << 10;
/// Idle connections a host's client keeps: the host's own, and one for a robots.txt
/// redirect elsewhere.
const MAX_IDLE: usize = 2;
/// How long an idle connection is kept.
const MAX_IDLE_AGE: Duration = Duration::from_secs(30);

/// What a kept connection can be reused for: the address it goes to and, for TLS, the name
/// its certificate was verified for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ConnKey {
    pub(super) addr: SocketAddr,
    pub(super) tls_name: Option<String>,
}

/// The limits of one exchange's I/O.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// The longest a connect (with its TLS handshake) may take.
    pub(super) connect: Duration,
    /// The longest one read or write may wait.
    pub(super) per_io: Duration,
    /// When the whole exchange must be over.
    pub(super) deadline: Instant,
}

impl Limits {
    /// `most`, but never past the deadline; a `TimedOut` error once it has passed.
    fn within(&self, most: Duration) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the total timeout (total_timeout_secs) is over",
            ));
        }
        Ok(most.min(left))
    }
}

enum Stream {
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Tcp(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

/// One open connection and what it has received but not yet used.
pub(super) struct Conn {
    key: ConnKey,
    stream: Stream,
    /// The socket's timeouts as last set, so that an unchanged one costs no system call.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// Received bytes: `buf[start..end]` are not yet used; `buf` is initialized throughout.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// When the connection was last given back idle.
    idle_since: Instant,
}

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A `WouldBlock` from a socket with a timeout is its timeout.
fn timed_out(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        io::Error::new(io::ErrorKind::TimedOut, "timed out waiting for the server")
    } else {
        e
    }
}

/// Sets a socket timeout through `set` when it differs from `current`.
fn update(
    current: &mut Option<Duration>,
    want: Duration,
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
) -> io::Result<()> {
    if *current != Some(want) {
        set(Some(want))?;
        *current = Some(want);
    }
    Ok(())
}

impl Conn {
    /// Opens a connection to `key.addr`, with a TLS handshake for `key.tls_name` under `tls`.
    /// A rustls failure comes back inside the `io::Error` (`get_ref` downcasts to
    /// `rustls::Error`), as rustls itself reports it.
    pub(super) fn open(key: ConnKey, tls: &Arc<ClientConfig>, limits: Limits) -> io::Result<Conn> {
        let started = Instant::now();
        let budget = limits.within(limits.connect)?;
        let sock = TcpStream::connect_timeout(&key.addr, budget).map_err(timed_out)?;
        sock.set_nodelay(true)?;
        let mut read_timeout = None;
        let mut write_timeout = None;
        let stream = match &key.tls_name {
            None => Stream::Tcp(sock),
            Some(name) => {
                let server = ServerName::try_from(name.clone()).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{name}: not a valid TLS server name"),
                    )
                })?;
                let conn = ClientConnection::new(tls.clone(), server).map_err(io::Error::other)?;
                // The handshake shares the connect's budget.
                let left = limits.within(budget.saturating_sub(started.elapsed()))?;
                let left = left.max(Duration::from_millis(1));
                sock.set_read_timeout(Some(left))?;
                sock.set_write_timeout(Some(left))?;
                (read_timeout, write_timeout) = (Some(left), Some(left));
                let mut s = StreamOwned::new(conn, sock);
                while s.conn.is_handshaking() {
                    s.conn.complete_io(&mut s.sock).map_err(timed_out)?;
                }
                Stream::Tls(Box::new(s))
            }
        };
        Ok(Conn {
            key,
            stream,
            read_timeout,
            write_timeout,
            buf: vec![0; FRONT],
            start: FRONT,
            end: FRONT,
            idle_since: Instant::now(),
        })
    }

    /// Sends `bytes` whole.
    pub(super) fn send(&mut self, bytes: &[u8], limits: Limits) -> io::Result<()> {
        let want = limits.within(limits.per_io)?;
        let sock = self.stream.tcp();
        update(&mut self.write_timeout, want, |t| sock.set_write_timeout(t))?;
        let r = match &mut self.stream {
            Stream::Tcp(s) => s.write_all(bytes),
            Stream::Tls(s) => s.write_all(bytes).and_then(|()| s.flush()),
        };
        r.map_err(timed_out)
    }

    /// The received bytes not yet used.
    pub(super) fn input(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Marks the first `n` bytes of [`Conn::input`] used.
    pub(super) fn consume(&mut self, n: usize) {
        self.start += n;
        debug_assert!(self.start <= self.end);
        if self.start == self.end {
            self.start = FRONT;
            self.end = FRONT;
        }
    }

    /// Reads once more from the server, appending to [`Conn::input`]: the bytes read, 0 at the
    /// end of the stream.
    pub(super) fn fill(&mut self, limits: Limits) -> io::Result<usize> {
        if self.end + READ_BLOCK > self.buf.len() {
            if self.start > FRONT {
                self.buf.copy_within(self.start..self.end, FRONT);
                self.end -= self.start - FRONT;
                self.start = FRONT;
            }
            if self.end + READ_BLOCK > self.buf.len() {
                // Zeroed once: the buffer is reused read after read (and, given to a body, comes
                // back as another connection's, [`Conn::take_input`]).
                self.buf.resize(self.end + READ_BLOCK, 0);
            }
        }
        let n = recv(
            &mut self.stream,
            &mut self.read_timeout,
            &mut self.buf[self.end..],
            limits,
        )?;
        self.end += n;
        Ok(n)
    }

    /// Reads once from the server straight into `into`, past [`Conn::input`] (which must be
    /// empty: the bytes would come out of order): the bytes read, 0 at the end of the stream.
    pub(super) fn read_direct(&mut self, into: &mut [u8], limits: Limits) -> io::Result<usize> {
        debug_assert_eq!(self.start, self.end, "input read first");
        recv(&mut self.stream, &mut self.read_timeout, into, limits)
    }

    /// The first `n` bytes of [`Conn::input`] (fewer if fewer came) in the buffer they were
    /// received into, which the connection gives up for `spare` (whole: a buffer that held as
    /// much is not zeroed again): that buffer, where they start in it (at least [`FRONT`]) and
    /// how many they are. Input past them stays the connection's, copied into `spare`.
    pub(super) fn take_input(&mut self, n: usize, spare: Vec<u8>) -> (Vec<u8>, usize, usize) {
        let taken = std::mem::replace(&mut self.buf, spare);
        let (at, end) = (self.start, self.start + n.min(self.end - self.start));
        let rest = self.end - end;
        if self.buf.len() < FRONT + rest {
            self.buf.resize(FRONT + rest, 0);
        }
        self.buf[FRONT..FRONT + rest].copy_from_slice(&taken[end..self.end]);
        (self.start, self.end) = (FRONT, FRONT + rest);
        (taken, at, end - at)
    }

    /// Whether an idle connection can take another request: nothing waiting to be read and no
    /// end of stream, seen without reading or blocking.
    fn is_open(&self) -> bool {
        self.start == self.end && probe(self.stream.tcp())
    }
}

/// One read from `stream` into `into`, within the read timeout and the exchange's deadline (the
/// socket's timeout set through `read_timeout` when it changes): the bytes read, 0 at the end
/// of the stream.
fn recv(
    stream: &mut Stream,
    read_timeout: &mut Option<Duration>,
    into: &mut [u8],
    limits: Limits,
) -> io::Result<usize> {
    let want = limits.within(limits.per_io)?;
    let sock = stream.tcp();
    update(read_timeout, want, |t| sock.set_read_timeout(t))?;
    let started = Instant::now();
    loop {
        let r = match stream {
            Stream::Tcp(s) => s.read(into),
            Stream::Tls(s) => s.read(into),
        };
        match r {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                // A signal: read again for what is left of this read's timeout, so that
                // signals do not stretch it.
                let left = want.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "timed out waiting for the server",
                    ));
                }
                let left = limits.within(left)?;
                let sock = stream.tcp();
                update(read_timeout, left, |t| sock.set_read_timeout(t))?;
            }
            Err(e) => return Err(timed_out(e)),
        }
    }
}

/// Whether an idle socket is open with nothing to read: one `recv(MSG_PEEK | MSG_DONTWAIT)`.
fn probe(stream: &TcpStream) -> bool {
    let mut byte = 0u8;
    // SAFETY: `recv` writes at most 1 byte into `byte`, which lives across the call; the file
    // descriptor is the stream's own, open while `stream` is borrowed.
    let n = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
}

/// A keep-alive client for one host: the idle connections its fetches leave (see the module
/// doc). The fetch stage's scheduler never has two requests to one host in flight, so
/// whichever worker takes the host next reuses its connection; the lock is never waited on.
#[derive(Debug, Default)]
pub struct HostClient {
    idle: Mutex<Vec<Conn>>,
}

impl HostClient {
    /// An idle connection for `key` that is still open, if there is one.
    pub(super) fn take(&self, key: &ConnKey) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.retain(|c| c.idle_since.elapsed() <= MAX_IDLE_AGE);
        let i = idle.iter().position(|c| c.key == *key)?;
        let conn = idle.swap_remove(i);
        drop(idle);
        conn.is_open().then_some(conn)
    }

    /// Keeps `conn` for the next fetch (the oldest idle one goes if there are too many).
    pub(super) fn give(&self, mut conn: Conn) {
        conn.idle_since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() >= MAX_IDLE {
            idle.remove(0);
        }
        idle.push(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// The probe tells an idle open connection from one with bytes waiting and from one the
    /// server closed, without consuming anything.
    #[test]
    fn probe_tells_idle_from_pending_and_closed() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(probe(&client), "an idle connection is open");
        server.write_all(b"x").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 1];
        // Wait until the byte has arrived (a blocking peek), then probe.
        assert_eq!(client.peek(&mut b).unwrap(), 1);
        assert!(!probe(&client), "bytes the server sent unasked");
        assert_eq!(
            (&client).read(&mut b).unwrap(),
            1,
            "the probe consumed nothing"
        );
        assert!(probe(&client), "open again once read");
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(5);
        while probe(&client) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(!probe(&client), "the server closed it");
    }

    fn limits(per_io: Duration, total: Duration) -> Limits {
        Limits {
            connect: Duration::from_secs(5),
            per_io,
            deadline: Instant::now() + total,
        }
    }

    /// A connection to a listener on loopback, the server's end of it, and limits of 5 s a
    /// read and 30 s in all.
    fn connected() -> (Conn, TcpStream, Limits) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let key = ConnKey {
            addr: listener.local_addr().unwrap(),
            tls_name: None,
        };
        let tls = crate::fetch::tls::default_config();
        let l = limits(Duration::from_secs(5), Duration::from_secs(30));
        let conn = Conn::open(key, &tls, l).unwrap();
        let (server, _) = listener.accept().unwrap();
        (conn, server, l)
    }

    /// Input comes in as sent, across reads that wrap the buffer; a silent server is a
    /// `TimedOut` after the read timeout, and after the total one when that comes first; the
    /// end of the stream reads 0.
    #[test]
    fn reads_keep_order_and_time_out() {
        let (mut conn, mut server, l) = connected();
        let data: Vec<u8> = (0..3 * READ_BLOCK as u32)
            .map(|i| (i % 253) as u8)
            .collect();
        let mut got = Vec::new();
        let writer = {
            let data = data.clone();
            let mut s = server.try_clone().unwrap();
            std::thread::spawn(move || s.write_all(&data).unwrap())
        };
        while got.len() < data.len() {
            // Read more while some is left unused (the buffer moves it down), until all came.
            if got.len() + conn.input().len() < data.len() {
                assert!(conn.fill(l).unwrap() > 0);
            }
            // Use an odd amount, leaving the rest for the next round.
            let take = conn.input().len().min(1_000 + got.len() % 7);
            got.extend_from_slice(&conn.input()[..take]);
            conn.consume(take);
        }
        writer.join().unwrap();
        assert_eq!(got, data);
        assert!(conn.input().is_empty());

        let quick = limits(Duration::from_millis(50), Duration::from_secs(30));
        let e = conn.fill(quick).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        let over = limits(Duration::from_secs(5), Duration::from_millis(50));
        let t = Instant::now();
        let e = conn.fill(over).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(t.elapsed() < Duration::from_secs(4), "the total came first");

        server.write_all(b"tail").unwrap();
        drop(server);
        assert_eq!(conn.fill(l).unwrap(), 4);
        assert_eq!(conn.fill(l).unwrap(), 0, "the end of the stream");
    }

    /// Input given up with its buffer: the bytes asked for, in the buffer they came in, with
    /// at least `FRONT` bytes before them; what came after them stays the connection's input,
    /// in order; the connection reads on into the buffer it was given, and straight into the
    /// caller's.
    #[test]
    fn input_is_given_up_with_its_buffer() {
        let (mut conn, mut server, l) = connected();
        server.write_all(b"HEAD|body1234rest").unwrap();
        while conn.input().len() < 17 {
            assert!(conn.fill(l).unwrap() > 0);
        }
        conn.consume(5);
        for (spare, ask) in [(Vec::new(), 8), (vec![7; 100_000], 4), (vec![1; 3], 99)] {
            let before = conn.input().to_vec();
            let (taken, at, n) = conn.take_input(ask, spare);
            assert!(at >= FRONT);
            assert_eq!(n, ask.min(before.len()));
            assert_eq!(&taken[at..at + n], &before[..n]);
            assert_eq!(conn.input(), &before[n..]);
        }
        assert!(conn.input().is_empty());
        server.write_all(b"more").unwrap();
        let mut into = [0u8; 16];
        let mut got = 0;
        while got < 4 {
            got += conn.read_direct(&mut into[got..], l).unwrap();
        }
        assert_eq!(&into[..4], b"more");
        server.write_all(b"again").unwrap();
        while conn.input().len() < 5 {
            assert!(conn.fill(l).unwrap() > 0);
        }
        assert_eq!(conn.input(), b"again");
    }

    /// A host's client gives back an open idle connection for its key only, never one the
    /// server closed or one with unread bytes, and keeps at most two.
    #[test]
    fn idle_connections_are_kept_per_key_and_probed() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let key = ConnKey {
            addr,
            tls_name: None,
        };
        let other = ConnKey {
            addr,
            tls_name: Some("example.test".into()),
        };
        let tls = crate::fetch::tls::default_config();
        let l = limits(Duration::from_secs(5), Duration::from_secs(30));
        let client = HostClient::default();
        let conn = Conn::open(key.clone(), &tls, l).unwrap();
        let (server, _) = listener.accept().unwrap();
        client.give(conn);
        assert!(client.take(&other).is_none(), "another key");
        let conn = client.take(&key).expect("kept and open");
        client.give(conn);
        drop(server);
        std::thread::sleep(Duration::from_millis(50));
        assert!(client.take(&key).is_none(), "closed by the server");

        for _ in 0..3 {
            let c = Conn::open(key.clone(), &tls, l).unwrap();
            let _ = listener.accept().unwrap();
            client.give(c);
        }
        assert_eq!(client.idle.lock().unwrap().len(), MAX_IDLE);
    }
}
