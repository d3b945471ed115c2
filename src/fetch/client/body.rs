//! Reading a response body under the limits of `[fetch]` (the client's module doc): up to
//! `max_body` (one byte more tells a longer body), ended once the total timeout is over or, after
//! the grace period, the rate falls below `min_rate`; a read error mid-body says how it ended.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use ureq_proto::client::{Call, RecvBodyResult};
use ureq_proto::BodyMode;

use super::{secs, Cut};
use crate::config::fetch::FetchSection;
use crate::fetch::conn::{Conn, Limits, READ_BLOCK};

/// A response body as it arrives over its connection, de-framed by the protocol engine
/// (`Content-Length`, chunked, or to the close): what [`read_body`] reads. It ends (`Ok(0)`)
/// where the framing says; a connection closed before that is an `UnexpectedEof` error.
pub(super) struct BodyStream<'a> {
    conn: &'a mut Conn,
    /// `None` once the body has ended.
    call: Option<Call<ureq_proto::client::state::RecvBody>>,
    limits: Limits,
    /// The server closed the connection (or reset it).
    closed: bool,
    /// The body ended as framed and the connection may take another request.
    keep: bool,
}

impl<'a> BodyStream<'a> {
    pub(super) fn new(
        conn: &'a mut Conn,
        mut call: Call<ureq_proto::client::state::RecvBody>,
        limits: Limits,
    ) -> BodyStream<'a> {
        // Each chunk is handed over before the next chunk's size line is read: a broken size
        // line after good chunks loses none of them.
        call.stop_on_chunk_boundary(true);
        BodyStream {
            conn,
            call: Some(call),
            limits,
            closed: false,
            keep: false,
        }
    }

    /// Whether the body ended as framed and its connection may be kept for another request.
    pub(super) fn keep(&self) -> bool {
        self.keep
    }

    /// The body is over (its framing says so, or the server closed): whether that is its end.
    fn end(&mut self) -> io::Result<()> {
        let Some(call) = self.call.take() else {
            return Ok(());
        };
        if !call.can_proceed() {
            if call.is_ended_chunked() {
                // The last chunk came and then the close, before the trailers' end: the body
                // is whole; the connection is not kept.
                return Ok(());
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection before the body ended",
            ));
        }
        let close = match call.proceed() {
            Some(RecvBodyResult::Redirect(c)) => c.must_close_connection(),
            Some(RecvBodyResult::Cleanup(c)) => c.must_close_connection(),
            None => true,
        };
        self.keep = !close && !self.closed;
        Ok(())
    }
}

impl Read for BodyStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(call) = self.call.as_mut() else {
                return Ok(0);
            };
            let framed_end = match call.body_mode() {
                BodyMode::LengthDelimited(_) | BodyMode::Chunked => call.can_proceed(),
                BodyMode::NoBody => true,
                BodyMode::CloseDelimited => false,
            };
            if framed_end {
                self.end()?;
                return Ok(0);
            }
            if !self.conn.input().is_empty() {
                let (used, out) = call
                    .read(self.conn.input(), buf)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                self.conn.consume(used);
                if out > 0 {
                    return Ok(out);
                }
                if used > 0 {
                    continue;
                }
                // The engine waits for a line end (a chunk's size, a trailer) that a hostile
                // server need never send: past a read block of it, the body is broken, not
                // more memory.
                if self.conn.input().len() >= READ_BLOCK {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a chunk size or trailer line longer than 64 KiB",
                    ));
                }
            }
            if self.closed {
                self.end()?;
                return Ok(0);
            }
            match self.conn.fill(self.limits) {
                Ok(0) => self.closed = true,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    self.closed = true
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Bytes a body read by [`read_body`] has free in front of it, for the header of its WARC
/// record ([`Body::room`]): a WARC header and the HTTP head of a typical answer fit. A record
/// whose header does not fit is copied behind it, as every record once was.
pub const HEADROOM: usize = crate::fetch::conn::FRONT;

/// The bytes a record has after its block (`\r\n\r\n`): a body has room for them too.
const TAIL: usize = 4;

/// A response body as received: de-chunked, still content-encoded. It dereferences to its
/// bytes. In front of them its buffer has at least [`HEADROOM`] bytes free (when [`read_body`]
/// or [`read_known_length`] made it), so the WARC writer can write the record's header before
/// the body and compress the whole record where it lies ([`crate::warc::writer::Room`]),
/// instead of copying ~20 KB a page into a buffer of its own. The buffer keeps its whole
/// length (initialized bytes past the body's end): given back ([`recycle`]) to read the next
/// body, or a connection's input, it is not zeroed again.
#[derive(Clone, Default)]
pub struct Body {
    buf: Vec<u8>,
    /// The body is `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Body {
    /// The body, and the room in front of it, for the WARC writer.
    pub fn room(&mut self) -> crate::warc::writer::Room<'_> {
        crate::warc::writer::Room::new(&mut self.buf, self.start, self.end)
    }

    /// The body's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for Body {
    fn from(buf: Vec<u8>) -> Body {
        Body {
            end: buf.len(),
            buf,
            start: 0,
        }
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Body {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == &other[..]
    }
}

/// Reads a body up to `max` bytes, checking the rate and the total time after each read: a
/// chunked body, one that ends with the connection, or none (a body of known length is
/// [`read_known_length`]'s).
///
/// The body is read straight into its own buffer, not through a scratch buffer: one copy from
/// the client's buffer, by the protocol engine, which removes the chunks' framing. The buffer
/// is this thread's last body given back ([`recycle`]) when there is one, and only the bytes it
/// never held are zeroed: a fetch thread reads page after page into the same memory, with no
/// allocation a page, and zeroing only for a body longer than the buffer has held. The body
/// starts [`HEADROOM`] bytes into the buffer (see [`Body`]).
pub(super) fn read_body(
    cfg: &FetchSection,
    r: impl Read,
    start: Instant,
    max: usize,
    hint: usize,
) -> (Body, Option<Cut>) {
    let mut paced = Paced::new(cfg, r, start, 0);
    // Without an announced length, room for a typical page: no run of small reads.
    let first = if hint > 0 { hint } else { BODY_CHUNK.min(max) };
    // At the cap, one more byte tells a body of exactly `max` from a longer one.
    let limit = max.saturating_add(1);
    let mut buf = SPARE.with_borrow_mut(std::mem::take);
    let (read, got) = read_into(&mut paced, &mut buf, HEADROOM, first, limit);
    let cut = if got > max {
        Some(Cut::Length)
    } else {
        match (read, paced.stop) {
            (Ok(()), _) => None,
            (Err(_), Some(cut)) => Some(cut),
            (Err(e), None) => Some(read_error_cut(&e)),
        }
    };
    let end = HEADROOM + got.min(max);
    let body = Body {
        buf,
        start: HEADROOM,
        end,
    };
    (body, cut)
}

/// Reads a body of `n` bytes (its `Content-Length`) from `conn` without the protocol engine,
/// under the same limits as [`read_body`], up to `max` bytes (a longer one is cut there,
/// [`Cut::Length`]). What came with the head is not copied: the connection's buffer becomes the
/// body's ([`Conn::take_input`], this thread's spare buffer going to the connection), and the
/// rest of the body is read straight into it. `close` is the head's say on the connection
/// ([`super::head::Received::close`], as the engine decides it); the third value is whether the
/// connection may take another request: the whole body read, nothing more received, no close.
pub(super) fn read_known_length(
    cfg: &FetchSection,
    conn: &mut Conn,
    limits: Limits,
    start: Instant,
    (n, max): (u64, usize),
    close: bool,
) -> (Body, Option<Cut>, bool) {
    let want = usize::try_from(n).map_or(max, |n| n.min(max));
    let spare = SPARE.with_borrow_mut(std::mem::take);
    let (mut buf, at, have) = conn.take_input(want, spare);
    let mut paced = Paced::new(cfg, Direct { conn, limits }, start, have);
    // The rest, straight into the buffer (grown, and its growth zeroed, only for a body longer
    // than it), with room for the record's end.
    if buf.len() < at + want + TAIL {
        buf.resize(at + want + TAIL, 0);
    }
    let mut end = at + have;
    let read = loop {
        if end == at + want {
            break Ok(());
        }
        match paced.read(&mut buf[end..at + want]) {
            Ok(0) => break Ok(()),
            Ok(n) => end += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let got = end - at;
    let cut = match (read, paced.stop) {
        _ if got == want && (want as u64) < n => Some(Cut::Length),
        _ if got == want => None,
        // The server closed before the body ended.
        (Ok(()), _) => Some(Cut::Disconnect),
        (Err(_), Some(cut)) => Some(cut),
        (Err(e), None) => Some(read_error_cut(&e)),
    };
    let keep = !close && cut.is_none() && paced.inner.conn.input().is_empty();
    (
        Body {
            buf,
            start: at,
            end,
        },
        cut,
        keep,
    )
}

/// A connection's socket as a reader, once its input is used ([`Conn::read_direct`]).
struct Direct<'a> {
    conn: &'a mut Conn,
    limits: Limits,
}

impl Read for Direct<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.conn.read_direct(buf, self.limits)
    }
}

/// Reads `r` to its end, or to `limit` bytes, into `buf` from index `at` on, and says how
/// many it read (`filled`: the body is `buf[at..at + filled]`). `buf`'s bytes (all of its
/// length) are initialized: those from `at` on are overwritten, those before `at` and after
/// the body are left as they were (a shorter `buf` grows with zeroes; its length never
/// shrinks, so a buffer read into again is not zeroed again). It is first given `first` bytes
/// (and room for [`TAIL`] more); when they fill, a small read tells whether the body has ended
/// before it grows (as `read_to_end` does), so a body of the announced length is read without
/// growth.
fn read_into(
    r: &mut impl Read,
    buf: &mut Vec<u8>,
    at: usize,
    first: usize,
    limit: usize,
) -> (io::Result<()>, usize) {
    let want = at + first.min(limit) + TAIL;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    let result = loop {
        // Room for the record's end stays free behind the body.
        if at + filled + TAIL >= buf.len() {
            if filled >= limit {
                break Ok(());
            }
            let mut probe = [0u8; 32];
            let want = probe.len().min(limit - filled);
            match r.read(&mut probe[..want]) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    let grow = (filled + n).max(BODY_CHUNK).min(limit - filled - n);
                    buf.resize(at + filled + n + grow + TAIL, 0);
                    buf[at + filled..at + filled + n].copy_from_slice(&probe[..n]);
                    filled += n;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            }
        }
        if filled >= limit {
            break Ok(());
        }
        let end = (buf.len() - TAIL).min(at.saturating_add(limit));
        match r.read(&mut buf[at + filled..end]) {
            Ok(0) => break Ok(()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    (result, filled)
}

thread_local! {
    /// The body buffer this thread gets back once a page is done ([`recycle`]).
    static SPARE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A body buffer at most this big is kept for the thread's next body; a bigger one is freed
/// (128 fetch threads keep at most 8 MiB).
const KEEP_SPARE: usize = 64 << 10;

/// Gives a body ([`super::Fetched::body`]) back once its page is done with, for the next body
/// this thread reads ([`read_body`]).
pub fn recycle(body: Body) {
    let body = body.buf;
    if body.capacity() <= KEEP_SPARE + HEADROOM + TAIL {
        SPARE.with_borrow_mut(|spare| {
            if body.capacity() > spare.capacity() {
                *spare = body;
            }
        });
    }
}

/// Bytes a body without an announced length is first given room for.
const BODY_CHUNK: usize = 16 << 10;

/// A body reader that ends the body once the total time is over or, after the grace period,
/// the average rate falls below `min_rate`: checked after each read that returned bytes; the
/// next read then fails, and `stop` says why.
struct Paced<R> {
    inner: R,
    start: Instant,
    grace: Duration,
    total: Duration,
    min_rate: f64,
    got: usize,
    stop: Option<Cut>,
}

impl<R> Paced<R> {
    /// `inner` under `cfg`'s total timeout and minimum rate, from `start`, `got` bytes in.
    fn new(cfg: &FetchSection, inner: R, start: Instant, got: usize) -> Paced<R> {
        Paced {
            inner,
            start,
            grace: secs(cfg.min_rate_grace_secs),
            total: secs(cfg.total_timeout_secs),
            min_rate: cfg.min_rate as f64,
            got,
            stop: None,
        }
    }
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(cut) = self.stop {
            return Err(io::Error::other(format!("body ended: {cut:?}")));
        }
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.got += n;
            let elapsed = self.start.elapsed();
            if elapsed >= self.total {
                self.stop = Some(Cut::Timeout);
            } else if elapsed > self.grace
                && (self.got as f64) < self.min_rate * elapsed.as_secs_f64()
            {
                self.stop = Some(Cut::TooSlow);
            }
        }
        Ok(n)
    }
}

/// How a read error mid-body ends the body.
fn read_error_cut(e: &io::Error) -> Cut {
    if e.kind() == io::ErrorKind::TimedOut {
        return Cut::Timeout;
    }
    Cut::Disconnect
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes `step` at a time, with an `Interrupted` error before each read.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
        interrupt: bool,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// Whatever the buffer held before (longer, shorter, none) and however the body arrives,
    /// it ends as the body's bytes, up to the limit.
    #[test]
    fn a_recycled_buffer_reads_exactly_the_body() {
        let body: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        for len in [0, 1, 31, 32, 33, 5_000, BODY_CHUNK, 70_000] {
            for old in [0, 7, 5_000, 100_000] {
                for first in [0, len, len / 2 + 1, 100_000] {
                    for step in [1 << 20, 4_096, 33] {
                        for (limit, at) in [usize::MAX, len + 1, len, len / 2]
                            .into_iter()
                            .zip([0, 3, HEADROOM, 6_000])
                        {
                            let mut buf = vec![0xAA; old];
                            let mut r = Dribble {
                                data: &body[..len],
                                step,
                                interrupt: false,
                            };
                            let (read, filled) = read_into(&mut r, &mut buf, at, first, limit);
                            read.unwrap();
                            let msg = format!("{len} {old} {first} {step} {limit} {at}");
                            assert_eq!(&buf[at..at + filled], &body[..len.min(limit)], "{msg}");
                            // Room for the record's end, and the buffer never shorter.
                            assert!(buf.len() >= (at + filled + TAIL).max(old), "{msg}");
                            // What was in front stays; a shorter buffer grew with zeroes.
                            let kept = old.min(at);
                            assert!(buf[..kept].iter().all(|&b| b == 0xAA), "{msg}");
                            assert!(buf[kept..at].iter().all(|&b| b == 0), "{msg}");
                        }
                    }
                }
            }
        }
    }

    /// A read error ends the body with what came before it.
    #[test]
    fn a_read_error_keeps_what_was_read() {
        let mut r = (&b"abc"[..]).chain(Failing);
        let mut buf = vec![1; 10];
        let (read, filled) = read_into(&mut r, &mut buf, 0, 2, usize::MAX);
        assert_eq!(read.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(&buf[..filled], b"abc");
    }

    struct Failing;

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::ConnectionReset.into())
        }
    }

    /// Only buffers up to `KEEP_SPARE` are kept, the biggest of them.
    #[test]
    fn recycling_keeps_the_biggest_small_buffer() {
        std::thread::spawn(|| {
            let body = |n| Body::from(Vec::with_capacity(n));
            recycle(body(KEEP_SPARE + HEADROOM + TAIL + 1));
            assert_eq!(SPARE.with_borrow(Vec::capacity), 0);
            recycle(body(1_000));
            recycle(body(10));
            assert!(SPARE.with_borrow(Vec::capacity) >= 1_000);
        })
        .join()
        .unwrap();
    }
}
