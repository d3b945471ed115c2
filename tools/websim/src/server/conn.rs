//! One client connection: read a request head, ask the site (or the control handler), send the
//! answer in whichever way the [`Body`] says, log it, repeat while keep-alive lasts.
//!
//! Blocking I/O on a thread of its own. Every read and write wakes at least every
//! `poll_interval` (socket timeouts), so the thread notices the server stopping, an idle
//! keep-alive connection expiring, or a client that stopped reading; every sleep of a slow
//! body is cut in slices of the same length. Nothing here can wait forever.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::http::{self, Framing, Head, HeadError};
use super::{Role, Shared};
use crate::audit::{Method, Record};
use crate::site::{Body, Request, Response};

/// The read buffer starts this big and doubles up to the head limit.
const INITIAL_BUFFER: usize = 4096;
/// A response head buffer that grew past this (a site's huge headers) is given back afterwards.
const KEEP_HEAD_BUFFER: usize = 64 * 1024;
/// Chunk size of an endless body.
const ENDLESS_CHUNK: usize = 16 * 1024;

/// A client connection: plain TCP, or TLS over it (a TLS host's listener).
pub(super) enum Stream {
    /// Plain HTTP.
    Plain(TcpStream),
    /// HTTPS; the handshake runs on the first read.
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Stream {
    /// The TCP socket (timeouts, shutdown, the descriptor).
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.sock,
        }
    }

    /// Tells a TLS client the connection ends (best effort, before the TCP shutdown).
    fn close_notify(&mut self) {
        if let Stream::Tls(t) = self {
            t.conn.send_close_notify();
            let _ = t.conn.write_tls(&mut t.sock);
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write_vectored(bufs),
            Stream::Tls(t) => t.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// Why a connection stops.
#[derive(Debug)]
enum Stop {
    /// The client closed or reset the connection, or the server is stopping.
    Gone,
    /// The client was too slow (read or write deadline).
    Timeout,
    /// The response said to close.
    Close,
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Stop::Timeout,
            _ => Stop::Gone,
        }
    }
}

pub(super) struct Conn {
    shared: Arc<Shared>,
    role: Role,
    stream: Stream,
    /// Read buffer: `buf[..filled]` holds received bytes; the current request starts at 0.
    buf: Vec<u8>,
    filled: usize,
    /// Where [`http::find_head_end`] resumes.
    scanned: usize,
    /// Response head buffer, reused.
    out: Vec<u8>,
    /// The request, reused (its strings keep their allocations).
    req: Request,
    /// [`Conn::reset`] armed `SO_LINGER` 0: close without shutdown().
    was_reset: bool,
    /// Cache key buffer, reused.
    key: Vec<u8>,
    /// When the last write call of the response began (the audit's log clock): the response's
    /// end as the audit records it ([`Conn::serve_one`]).
    write_began_ns: u64,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Before the socket closes (fields drop after this), so the registry never holds a
        // descriptor number that was closed and possibly reused.
        self.shared.unregister(self.req.conn);
    }
}

impl Conn {
    pub(super) fn new(shared: Arc<Shared>, role: Role, stream: Stream, req: Request) -> Conn {
        Conn {
            shared,
            role,
            stream,
            buf: vec![0; INITIAL_BUFFER],
            filled: 0,
            scanned: 0,
            out: Vec::with_capacity(512),
            req,
            was_reset: false,
            key: Vec::new(),
            write_began_ns: 0,
        }
    }

    fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Serves requests until the connection ends.
    pub(super) fn run(&mut self) {
        let _ = self.stream.tcp().set_nodelay(true);
        let tick = self.shared.opts.poll_interval;
        let _ = self.stream.tcp().set_read_timeout(Some(tick));
        let _ = self.stream.tcp().set_write_timeout(Some(tick));
        let mut first = true;
        let why = loop {
            let idle = if first {
                self.shared.opts.read_timeout
            } else {
                self.shared.opts.keepalive_timeout
            };
            first = false;
            if let Err(why) = self.serve_one(idle) {
                break why;
            }
        };
        if !self.was_reset {
            if matches!(why, Stop::Close) {
                self.linger();
            }
            self.stream.close_notify();
            let _ = self.stream.tcp().shutdown(Shutdown::Both);
        }
    }

    /// Closes our side, then reads and drops what the client still sends for a short while: a
    /// socket closed with unread bytes sends RST, which can destroy the response the client has
    /// not read yet (a 431 after a huge head, a 413, a `Connection: close` answer).
    fn linger(&mut self) {
        const LINGER: Duration = Duration::from_millis(500);
        const LINGER_BYTES: usize = 1 << 20;
        self.stream.close_notify();
        let _ = self.stream.tcp().shutdown(Shutdown::Write);
        self.discard_input(Instant::now() + LINGER, LINGER_BYTES);
    }

    /// Reads and drops what the client sends until `end`, `max_bytes`, the client hanging up or
    /// the server stopping (reads wake every poll interval, so the time bound holds).
    fn discard_input(&mut self, end: Instant, max_bytes: usize) {
        let mut drained = 0;
        while drained < max_bytes && Instant::now() < end && !self.stopping() {
            match self.stream.read(&mut self.buf) {
                Ok(0) => return,
                Ok(n) => drained += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => return,
            }
        }
    }

    /// Reads more bytes into the buffer; `Ok(0)` at end of stream. Fails at `deadline` or when
    /// the server stops.
    fn fill(&mut self, deadline: Instant) -> Result<usize, Stop> {
        if self.filled == self.buf.len() {
            let limit = self.shared.opts.max_header_bytes + 1;
            let grown = (self.buf.len() * 2).clamp(INITIAL_BUFFER, limit.max(self.filled + 1));
            self.buf.resize(grown, 0);
        }
        loop {
            if self.stopping() {
                return Err(Stop::Gone);
            }
            match self.stream.read(&mut self.buf[self.filled..]) {
                Ok(n) => {
                    self.filled += n;
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if Instant::now() >= deadline {
                        return Err(Stop::Timeout);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(Stop::Gone),
            }
        }
    }

    /// Drops the first `n` buffered bytes (a request just handled), keeping pipelined ones.
    fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.filled, 0);
        self.filled -= n;
        self.scanned = 0;
        if self.buf.len() > 4 * INITIAL_BUFFER && self.filled <= INITIAL_BUFFER {
            self.buf.truncate(INITIAL_BUFFER);
            self.buf.shrink_to_fit();
        }
    }

    /// Reads one request head and answers it.
    fn serve_one(&mut self, idle: Duration) -> Result<(), Stop> {
        let opts = &self.shared.opts;
        let (max_line, max_head) = (opts.max_request_line, opts.max_header_bytes);
        let mut deadline = Instant::now() + idle;
        let mut started = self.filled > 0;
        let head_len = loop {
            match http::find_head_end(
                &self.buf[..self.filled],
                &mut self.scanned,
                max_line,
                max_head,
            ) {
                Ok(Some(n)) => break n,
                Ok(None) => {}
                Err(e) => return self.refuse(e),
            }
            if self.fill(deadline)? == 0 {
                return Err(Stop::Gone);
            }
            if !started {
                // The first byte of a request: from now on the client has `read_timeout` for the
                // whole head, however long it was idle before.
                started = true;
                deadline = Instant::now() + self.shared.opts.read_timeout;
            }
        };
        let t_request = self.shared.log.now_ns();
        let head = match http::parse_head(&self.buf[..head_len], &mut self.req) {
            Ok(h) => h,
            Err(e) => return self.refuse(e),
        };
        if head.transfer_encoding {
            return self.refuse_with(
                501,
                "request bodies with Transfer-Encoding are not supported",
                t_request,
            );
        }
        if head.body_len > self.shared.opts.max_request_body as u64 {
            return self.refuse_with(413, "request body too large", t_request);
        }
        let body_end = self.skip_body(head_len, head.body_len as usize)?;

        let method = Method::of(&self.req.method);
        let response = self.answer(method);
        let keep_alive = head.keep_alive && method != Method::Other && !self.stopping();
        let t_start = self.shared.log.now_ns();
        let sent = self.send(&head, method == Method::Head, &response, keep_alive);
        // The end is when the write that handed the response's last bytes to the kernel began,
        // not when it returned: the client may read those bytes, wait its delay and send its next
        // request while this thread has not run again (a loaded machine), and a time taken after
        // the write would then make a client that waited look concurrent or too soon. So the
        // audit's gap is never shorter than the client's (docs of `audit`).
        let t_end = if sent.is_ok() {
            self.write_began_ns
        } else {
            self.shared.log.now_ns()
        };
        if self.role == Role::Site {
            // A stalled response sends nothing: it starts when it ends.
            let t_start = if matches!(response.body, Body::Stall { .. }) {
                t_end
            } else {
                t_start
            };
            self.record(
                method,
                response.status,
                sent.is_ok(),
                t_request,
                t_start,
                t_end,
            );
        }
        let close = sent?;
        self.consume(body_end);
        if close {
            Err(Stop::Close)
        } else {
            Ok(())
        }
    }

    /// Reads and drops the request body (rare on GET) that follows a head of `head_len` bytes;
    /// returns where the body ends in the buffer.
    fn skip_body(&mut self, head_len: usize, body_len: usize) -> Result<usize, Stop> {
        let mut body_end = head_len + body_len;
        let body_deadline = Instant::now() + self.shared.opts.read_timeout;
        while self.filled < body_end {
            if self.filled == self.buf.len() {
                // Discard what is buffered of the body so far.
                body_end -= self.filled - head_len;
                self.filled = head_len;
            }
            if self.fill(body_deadline)? == 0 {
                return Err(Stop::Gone);
            }
        }
        Ok(body_end)
    }

    /// The response to the parsed request.
    fn answer(&mut self, method: Method) -> Arc<Response> {
        match (self.role, method) {
            (Role::Control, _) => Arc::new(self.control()),
            (Role::Site, Method::Other) => Arc::new(
                Response::new(
                    405,
                    "text/plain",
                    b"websim serves GET and HEAD only\n".to_vec(),
                )
                .with("Allow", "GET, HEAD"),
            ),
            (Role::Site, _) => self.shared.answer(&self.req, &mut self.key),
        }
    }

    /// Logs the parsed request for the audit, with its request, start and end times.
    fn record(
        &self,
        method: Method,
        status: u16,
        complete: bool,
        t_request: u64,
        t_start: u64,
        t_end: u64,
    ) {
        let req = &self.req;
        self.shared.log.record(&Record {
            conn: req.conn,
            host: &req.host,
            target: &req.target,
            agent: req.header("user-agent").unwrap_or(""),
            method,
            status,
            complete,
            t_request,
            t_start,
            t_end,
        });
    }

    /// Answers a head the server cannot use, then closes.
    fn refuse(&mut self, e: HeadError) -> Result<(), Stop> {
        let t = self.shared.log.now_ns();
        self.refuse_with(e.status(), e.message(), t)
    }

    fn refuse_with(&mut self, status: u16, message: &str, t_request: u64) -> Result<(), Stop> {
        let body = format!("{message}\n");
        http::simple(&mut self.out, status, "text/plain", body.as_bytes(), true);
        let t_start = self.shared.log.now_ns();
        let out = std::mem::take(&mut self.out);
        let sent = self.write_all(&mut [IoSlice::new(&out)]);
        self.out = out;
        if self.role == Role::Site {
            // The head may not have been parsed: log what is known.
            let parsed = status != 400 && status != 414 && status != 431 && status != 505;
            let (host, target) = if parsed {
                (self.req.host.as_str(), self.req.target.as_str())
            } else {
                ("", "")
            };
            self.shared.log.record(&Record {
                conn: self.req.conn,
                host,
                target,
                agent: if parsed {
                    self.req.header("user-agent").unwrap_or("")
                } else {
                    ""
                },
                method: if parsed {
                    Method::of(&self.req.method)
                } else {
                    Method::Other
                },
                status,
                complete: sent.is_ok(),
                t_request,
                t_start,
                t_end: self.shared.log.now_ns(),
            });
        }
        Err(Stop::Close)
    }

    /// The control address: the audit report as JSON.
    fn control(&self) -> Response {
        match self.req.target.as_str() {
            "/__websim/report" => {
                let report = self.shared.report();
                let mut json = serde_json::to_vec_pretty(&report).unwrap_or_default();
                json.push(b'\n');
                Response::new(200, "application/json", json).with("Cache-Control", "no-store")
            }
            _ => Response::new(
                404,
                "text/plain",
                b"websim control: try /__websim/report\n".to_vec(),
            ),
        }
    }

    /// Sends `resp`; `Ok(true)` if the connection must close afterwards.
    fn send(
        &mut self,
        head: &Head,
        head_only: bool,
        resp: &Response,
        keep_alive: bool,
    ) -> Result<bool, Stop> {
        // An HTTP/1.0 client only keeps the connection if told so.
        let conn_header = |close: bool| {
            if close {
                Some("close")
            } else if !head.http11 {
                Some("keep-alive")
            } else {
                None
            }
        };
        let no_body = head_only || http::bodiless(resp.status);
        match &resp.body {
            Body::Full(bytes) => {
                let framing = if http::bodiless(resp.status) {
                    Framing::None
                } else {
                    Framing::Length(bytes.len() as u64)
                };
                self.head(resp, framing, conn_header(!keep_alive));
                let body: &[u8] = if no_body { &[] } else { bytes };
                self.write_head_and(body)?;
                Ok(!keep_alive)
            }
            Body::Drip { bytes, interval } => {
                let framing = Framing::Length(bytes.len() as u64);
                self.head(resp, framing, conn_header(!keep_alive));
                self.write_head_and(&[])?;
                if !no_body {
                    self.drip(bytes, *interval)?;
                }
                Ok(!keep_alive)
            }
            Body::Endless => {
                self.head(resp, Framing::Chunked, conn_header(true));
                self.write_head_and(&[])?;
                if !no_body {
                    let chunk = endless_chunk();
                    loop {
                        self.write_all(&mut [IoSlice::new(chunk)])?;
                    }
                }
                Ok(true)
            }
            Body::ResetAfter { bytes, after } => {
                self.head(resp, Framing::Length(bytes.len() as u64), None);
                let part = &bytes[..(*after).min(bytes.len())];
                self.write_head_and(if no_body { &[] } else { part })?;
                if !no_body {
                    self.reset();
                }
                Ok(true)
            }
            Body::WrongLength { bytes, declared } => {
                self.head(resp, Framing::Length(*declared), conn_header(true));
                self.write_head_and(if no_body { &[] } else { bytes })?;
                Ok(true)
            }
            Body::Stall { hold } => {
                self.stall(*hold);
                Ok(true)
            }
        }
    }

    /// Writes the head of `resp` into `self.out`, with its framing and `Connection` header.
    fn head(&mut self, resp: &Response, framing: Framing, connection: Option<&str>) {
        http::write_head(
            &mut self.out,
            resp.status,
            &resp.headers,
            framing,
            connection,
        );
    }

    /// Sends `bytes` one at a time, `interval` apart (a slow drip).
    fn drip(&mut self, bytes: &[u8], interval: Duration) -> Result<(), Stop> {
        for i in 0..bytes.len() {
            if i > 0 {
                self.sleep(interval)?;
            }
            self.write_all(&mut [IoSlice::new(&bytes[i..=i])])?;
        }
        Ok(())
    }

    /// Writes the response head in `self.out` followed by `body`, in one system call when the
    /// kernel takes it all.
    fn write_head_and(&mut self, body: &[u8]) -> Result<(), Stop> {
        let out = std::mem::take(&mut self.out);
        let r = self.write_all(&mut [IoSlice::new(&out), IoSlice::new(body)]);
        self.out = out;
        if self.out.capacity() > KEEP_HEAD_BUFFER {
            self.out = Vec::with_capacity(512);
        }
        r
    }

    /// Writes everything, waking every `poll_interval` to check for shutdown; fails if the
    /// client takes no bytes for `write_timeout`.
    fn write_all(&mut self, mut bufs: &mut [IoSlice<'_>]) -> Result<(), Stop> {
        IoSlice::advance_slices(&mut bufs, 0);
        let mut progress = Instant::now();
        while !bufs.is_empty() {
            self.write_began_ns = self.shared.log.now_ns();
            match self.stream.write_vectored(bufs) {
                Ok(0) => return Err(Stop::Gone),
                Ok(n) => {
                    IoSlice::advance_slices(&mut bufs, n);
                    progress = Instant::now();
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if self.stopping() {
                        return Err(Stop::Gone);
                    }
                    if progress.elapsed() >= self.shared.opts.write_timeout {
                        return Err(Stop::Timeout);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Sleeps `d` in slices, failing early if the server stops.
    fn sleep(&self, d: Duration) -> Result<(), Stop> {
        let end = Instant::now() + d;
        loop {
            if self.stopping() {
                return Err(Stop::Gone);
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(self.shared.opts.poll_interval));
        }
    }

    /// Holds the connection without a word for `hold`, or until the client hangs up or the server
    /// stops; bytes the client sends meanwhile are read and dropped.
    fn stall(&mut self, hold: Duration) {
        self.discard_input(Instant::now() + hold, usize::MAX);
    }

    /// Resets the connection: waits (briefly) until the bytes written so far have left, then
    /// closes with `SO_LINGER` 0, which sends RST instead of FIN.
    fn reset(&mut self) {
        let fd = self.stream.tcp().as_raw_fd();
        let give_up = Instant::now() + Duration::from_secs(1);
        while Instant::now() < give_up && !self.stopping() {
            let mut unsent: libc::c_int = 0;
            // SAFETY: `fd` is an open socket owned by `self.stream`; TIOCOUTQ writes one int.
            let r = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut unsent) };
            if r != 0 || unsent == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: `fd` is an open socket; the option value is a `linger` of the given size.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
        // The close at the end of `run` now sends RST; it must not shutdown() first (FIN).
        self.was_reset = true;
    }
}

/// One chunk of an endless chunked body: a chunk-size line, 16 KiB of HTML-ish filler, CRLF.
fn endless_chunk() -> &'static [u8] {
    static CHUNK: OnceLock<Vec<u8>> = OnceLock::new();
    CHUNK.get_or_init(|| {
        let line = b"<p>websim: this body never ends.</p>\n";
        let mut data = Vec::with_capacity(ENDLESS_CHUNK + 16);
        data.extend_from_slice(format!("{ENDLESS_CHUNK:x}\r\n").as_bytes());
        let start = data.len();
        while data.len() - start < ENDLESS_CHUNK {
            let take = line.len().min(ENDLESS_CHUNK - (data.len() - start));
            data.extend_from_slice(&line[..take]);
        }
        data.extend_from_slice(b"\r\n");
        data
    })
}
