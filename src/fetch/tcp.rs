//! TCP for the fetch client: ureq's connector and transport, with a liveness probe of one
//! system call a request instead of six.
//!
//! ureq's pool probes a keep-alive connection twice a request: when the response is done and
//! the connection goes back to the pool, and again when the next request takes it out. ureq's
//! TCP transport probes by switching the socket to non-blocking (an `ioctl`), reading a byte
//! (which must fail with `EAGAIN`) and switching it back: three system calls a probe, six a
//! request, next to the request's own send and receive, and a `setsockopt` for the write
//! timeout, which ureq derives from what is left of the total (a new value each request; the
//! client now sets a per-write timeout, `client.rs`). On the peer web that was nine system calls
//! a page for one request where three do (docs/BENCHMARKS.md, "2026-11-29 (sixth session)").
//!
//! [`TcpTransport`] probes with one `recv(MSG_PEEK | MSG_DONTWAIT)`, and only when it matters:
//! the probe on the way back to the pool, right after the response was read, is answered
//! without a system call, because the probe before the next request sees everything that one
//! would (bytes the server sent past the body, or its close) and more (what happened while the
//! connection sat idle). What a probe concludes is ureq's: pending bytes or an end of stream
//! mean the connection is not reused.
//!
//! The rest is ureq's `TcpConnector` as it behaves for the fetch stage: the resolver's (pinned)
//! addresses tried in turn within the connect timeout, `TCP_NODELAY` as configured, the socket's
//! read and write timeouts set only when they change, a timeout reported as
//! `ureq::Error::Timeout` with ureq's reason, and the socket registered for the agent's
//! shutdown.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, ShutdownHandle,
    Transport,
};

/// Opens plain TCP connections (the first link of the fetch client's chain).
#[derive(Debug, Default)]
pub struct TcpConnector;

impl<In: Transport> Connector<In> for TcpConnector {
    type Out = Either<In, TcpTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        if chained.is_some() {
            return Ok(chained.map(Either::A));
        }
        let started = Instant::now();
        let budget = not_zero(details.timeout);
        let mut last = None;
        for addr in &details.addrs {
            let left = budget.map(|b| b.saturating_sub(started.elapsed()));
            let attempt = match left {
                Some(l) if l.is_zero() => {
                    last = Some(ureq::Error::Timeout(details.timeout.reason));
                    break;
                }
                Some(l) => TcpStream::connect_timeout(addr, l),
                None => TcpStream::connect(addr),
            };
            match attempt {
                Ok(stream) => {
                    if details.config.no_delay() {
                        stream.set_nodelay(true)?;
                    }
                    let stream = Arc::new(stream);
                    (details.register_shutdown)(
                        Arc::downgrade(&stream) as Weak<dyn ShutdownHandle>
                    )?;
                    let buffers = LazyBuffers::new(
                        details.config.input_buffer_size(),
                        details.config.output_buffer_size(),
                    );
                    return Ok(Some(Either::B(TcpTransport {
                        stream,
                        buffers,
                        read_timeout: None,
                        write_timeout: None,
                        fresh: false,
                    })));
                }
                Err(e) if is_timeout(&e) => {
                    last = Some(ureq::Error::Timeout(details.timeout.reason))
                }
                Err(e) => last = Some(ureq::Error::Io(e)),
            }
        }
        Err(last.unwrap_or_else(|| {
            ureq::Error::Io(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "no address to connect to",
            ))
        }))
    }
}

/// A TCP connection as a ureq transport (see the module doc).
pub struct TcpTransport {
    /// Shared (weakly) with the agent's shutdown, which may shut the socket down meanwhile.
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
    /// The socket's timeouts as last set, so that an unchanged one costs no system call.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// The connection was used since it was last probed: the probe of a connection going
    /// back to the pool, which the next request's probe makes again anyway.
    fresh: bool,
}

impl fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpTransport")
            .field("peer", &self.stream.peer_addr().ok())
            .finish_non_exhaustive()
    }
}

/// The remaining time of `t`, `None` if it never ends (a zero one is ureq's one second).
fn not_zero(t: NextTimeout) -> Option<Duration> {
    t.not_zero().map(|d| *d)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// Fails with ureq's timeout error when `t` is already over.
fn check(t: NextTimeout) -> Result<NextTimeout, ureq::Error> {
    if t.after.is_zero() {
        Err(ureq::Error::Timeout(t.reason))
    } else {
        Ok(t)
    }
}

/// Sets a socket timeout through `set` when it differs from `current`.
fn update(
    current: &mut Option<Duration>,
    want: Option<Duration>,
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
) -> io::Result<()> {
    if *current != want {
        set(want)?;
        *current = want;
    }
    Ok(())
}

impl Transport for TcpTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = check(timeout.for_write())?;
        let stream = &*self.stream;
        update(&mut self.write_timeout, not_zero(timeout), |t| {
            stream.set_write_timeout(t)
        })?;
        self.fresh = true;
        let output = &self.buffers.output()[..amount];
        match (&*self.stream).write_all(output) {
            Ok(()) => Ok(()),
            Err(e) if is_timeout(&e) => Err(ureq::Error::Timeout(timeout.reason)),
            Err(e) => Err(e.into()),
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = check(timeout.for_read())?;
        let want = not_zero(timeout);
        let stream = &*self.stream;
        update(&mut self.read_timeout, want, |t| stream.set_read_timeout(t))?;
        self.fresh = true;
        let started = Instant::now();
        let input = self.buffers.input_append_buf();
        let amount = loop {
            match (&*self.stream).read(input) {
                Ok(n) => break n,
                // A signal: read again for what is left of the timeout.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    let left = want.map(|w| w.saturating_sub(started.elapsed()));
                    if left.is_some_and(|l| l.is_zero()) {
                        return Err(ureq::Error::Timeout(timeout.reason));
                    }
                    update(&mut self.read_timeout, left, |t| stream.set_read_timeout(t))?;
                }
                Err(e) if is_timeout(&e) => return Err(ureq::Error::Timeout(timeout.reason)),
                Err(e) => return Err(e.into()),
            }
        };
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        if std::mem::take(&mut self.fresh) {
            return true;
        }
        probe(&self.stream)
    }
}

/// Whether an idle connection can take another request: nothing waiting to be read and no end
/// of stream, seen without reading or blocking.
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
}
