//! The HTTP/1.1 server: listeners on loopback addresses, one thread per connection, and a
//! control address that serves the politeness audit.
//!
//! Why threads and blocking I/O rather than an event loop: a crawler test needs a server whose
//! hostile answers (a body dripping one byte a second, a connection held silent, a reset after
//! half a body) are plain sequential code (`conn.rs`), and the load a crawl puts on one machine's
//! loopback (thousands of connections at most) is well within what threads handle. With
//! keep-alive, a thread costs one spawn per connection, not per request.
//!
//! Nothing waits forever. Accept loops `poll(2)` their listener with a timeout of
//! [`ServerOptions::poll_interval`]; connection sockets have read and write timeouts of the same
//! length. [`Server::stop`] (or dropping the [`Server`]) sets a flag, shuts every open connection
//! down to wake its thread at once, and joins every thread it started.
//!
//! Only loopback addresses (127.0.0.0/8 and ::1) are ever bound: websim serves hostile content
//! and must never be reachable from another machine, so any other address is refused before a
//! socket is made ([`ServerError::NotLoopback`]).
//!
//! Ports: a synthetic web's URLs carry its port ([`WebConfig::port`]), and every host of the web
//! is served on the same port of its own loopback address (127.0.1.x). [`Server::start_web`]
//! therefore binds all the web's addresses on *one* port; with port 0 it asks the kernel for an
//! ephemeral port on the first address and tries that port on the others, retrying a bounded
//! number of times ([`bind_common_port`]), and only then generates the web with the port found.
//!
//! Answers of a site that declares them pure ([`Site::cache_key_headers`], as the synthetic web
//! does) are kept in a bounded cache (`cache.rs`), so repeated requests measure the server and
//! not the page renderer.

mod cache;
mod conn;
mod http;
pub mod tls;

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::audit::{audit, ConnInfo, Log, Report};
use crate::model::{Web, WebConfig};
use crate::site::{Request, Response, Site};

/// Connections the control address accepts beyond [`ServerOptions::max_connections`], so the
/// report can be fetched from a server that is full.
const CONTROL_EXTRA: usize = 16;
/// How many ports [`bind_common_port`] tries before giving up.
const PORT_ATTEMPTS: usize = 64;

/// Limits and timeouts of a [`Server`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// How often every thread wakes to check for shutdown (accept loops, socket timeouts, slices
    /// of slow bodies). Also bounds how long [`Server::stop`] takes.
    pub poll_interval: Duration,
    /// Time a client has to send a whole request head (and body), from its first byte.
    pub read_timeout: Duration,
    /// How long an idle keep-alive connection is kept open.
    pub keepalive_timeout: Duration,
    /// How long a client may take no bytes of a response before the server gives up.
    pub write_timeout: Duration,
    /// Longest request line (414 beyond).
    pub max_request_line: usize,
    /// Largest request head (431 beyond).
    pub max_header_bytes: usize,
    /// Largest request body, read and dropped (413 beyond).
    pub max_request_body: usize,
    /// Most connections open at once over all site listeners; more are answered 503 and closed.
    pub max_connections: usize,
    /// Control address serving `/__websim/report` (must be loopback; port 0 picks one), or none.
    pub control: Option<SocketAddr>,
    /// Bytes of answers kept for repeated requests, if the site allows it
    /// ([`Site::cache_key_headers`]); 0 turns the cache off.
    pub cache_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            poll_interval: Duration::from_millis(50),
            read_timeout: Duration::from_secs(10),
            keepalive_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(10),
            max_request_line: 8 * 1024,
            max_header_bytes: 64 * 1024,
            max_request_body: 1 << 20,
            max_connections: 4096,
            control: Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)),
            cache_bytes: 128 << 20,
        }
    }
}

/// Why a server could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The address is not a loopback address; websim never binds anything else.
    NotLoopback(SocketAddr),
    /// Binding (or configuring) a listener failed.
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: io::Error,
    },
    /// No port was free on all of the web's addresses at once.
    NoCommonPort {
        /// The addresses.
        ips: Vec<IpAddr>,
    },
    /// A thread could not be started.
    Spawn(io::Error),
    /// Nothing to listen on.
    NoListeners,
    /// The TLS hosts' CA or certificates could not be made.
    Tls(tls::TlsError),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::NotLoopback(a) => write!(
                f,
                "refusing to bind {a}: websim serves loopback addresses only (127.0.0.0/8 or ::1)"
            ),
            ServerError::Bind { addr, source } => {
                write!(f, "cannot listen on {addr}: {source}")?;
                if source.kind() == io::ErrorKind::AddrInUse {
                    write!(f, " (choose another port, or port 0 for a free one)")?;
                }
                Ok(())
            }
            ServerError::NoCommonPort { ips } => write!(
                f,
                "no port was free on all of {} addresses ({:?} ...) after {PORT_ATTEMPTS} tries; \
                 choose a port with --port",
                ips.len(),
                ips.first()
            ),
            ServerError::Spawn(e) => write!(f, "cannot start a server thread: {e}"),
            ServerError::NoListeners => write!(f, "no address to listen on"),
            ServerError::Tls(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Bind { source, .. } | ServerError::Spawn(source) => Some(source),
            _ => None,
        }
    }
}

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The site.
    Site,
    /// The audit report.
    Control,
}

/// State every thread of one server shares.
struct Shared {
    opts: ServerOptions,
    site: Arc<dyn Site>,
    log: Log,
    cache: Option<cache::Cache>,
    stop: AtomicBool,
    next_conn: AtomicU64,
    /// The TLS listeners' configuration (a web with TLS hosts).
    tls: Option<Arc<rustls::ServerConfig>>,
    /// Open connections: id -> socket. [`Server::stop`] shuts them down; a connection
    /// unregisters itself before its socket closes, so a descriptor here is always open.
    open: Mutex<HashMap<u64, RawFd>>,
}

impl Shared {
    fn open(&self) -> MutexGuard<'_, HashMap<u64, RawFd>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets a connection (called by the connection before its socket closes).
    fn unregister(&self, conn: u64) {
        self.open().remove(&conn);
    }

    /// Registers a new connection if there is room for it (`false`: over the cap).
    fn register(&self, conn: u64, fd: RawFd, role: Role) -> bool {
        let mut open = self.open();
        let cap = match role {
            Role::Site => self.opts.max_connections,
            Role::Control => self.opts.max_connections + CONTROL_EXTRA,
        };
        if open.len() >= cap {
            return false;
        }
        open.insert(conn, fd);
        true
    }

    /// The site's answer to `req`, from the cache if allowed and there; `key` is scratch space.
    fn answer(&self, req: &Request, key: &mut Vec<u8>) -> Arc<Response> {
        if let Some(r) = self.site.gate(req) {
            return Arc::new(r);
        }
        let ask = || {
            catch_unwind(AssertUnwindSafe(|| self.site.respond(req))).map_err(|_| {
                Arc::new(Response::new(
                    500,
                    "text/plain",
                    b"websim: the site panicked\n".to_vec(),
                ))
            })
        };
        let Some(cache) = &self.cache else {
            return ask().map_or_else(|e| e, Arc::new);
        };
        let hash = cache.key(req, key);
        if let Some(r) = cache.get(hash, key) {
            return r;
        }
        match ask() {
            Ok(r) => {
                let r = Arc::new(r);
                cache.put(hash, key, &r);
                r
            }
            Err(e) => e,
        }
    }

    /// The audit of everything logged so far.
    fn report(&self) -> Report {
        audit(&self.log.snapshot(), &*self.site)
    }
}

/// A running server. Stops (and joins its threads) when dropped.
pub struct Server {
    shared: Arc<Shared>,
    addrs: Vec<SocketAddr>,
    tls_addrs: Vec<SocketAddr>,
    ca_pem: Option<String>,
    control: Option<SocketAddr>,
    threads: Vec<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("addrs", &self.addrs)
            .field("control", &self.control)
            .finish_non_exhaustive()
    }
}

/// Whether websim may bind `ip`: 127.0.0.0/8, ::1, or ::ffff:127.x.y.z.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

fn check_loopback(addr: SocketAddr) -> Result<(), ServerError> {
    if is_loopback(addr.ip()) {
        Ok(())
    } else {
        Err(ServerError::NotLoopback(addr))
    }
}

fn bind(addr: SocketAddr) -> Result<TcpListener, ServerError> {
    check_loopback(addr)?;
    TcpListener::bind(addr).map_err(|source| ServerError::Bind { addr, source })
}

/// The loopback addresses a web's hosts are spread over (127.0.1.1 ... 127.0.1.L).
pub fn web_ips(config: &WebConfig) -> Vec<IpAddr> {
    (1..=config.listeners.max(1))
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 1, i)))
        .collect()
}

/// Binds every address of `ips` on one port: `port`, or if it is 0, a port free on all of them
/// (an ephemeral port of the first address, tried on the others; at most 64 tries).
pub fn bind_common_port(ips: &[IpAddr], port: u16) -> Result<(u16, Vec<TcpListener>), ServerError> {
    let first = *ips.first().ok_or(ServerError::NoListeners)?;
    for &ip in ips {
        check_loopback(SocketAddr::new(ip, port))?;
    }
    if port != 0 {
        let listeners = ips
            .iter()
            .map(|&ip| bind(SocketAddr::new(ip, port)))
            .collect::<Result<_, _>>()?;
        return Ok((port, listeners));
    }
    for _ in 0..PORT_ATTEMPTS {
        let l0 = bind(SocketAddr::new(first, 0))?;
        let p = l0
            .local_addr()
            .map_err(|source| ServerError::Bind {
                addr: SocketAddr::new(first, 0),
                source,
            })?
            .port();
        let mut listeners = vec![l0];
        for &ip in &ips[1..] {
            match TcpListener::bind(SocketAddr::new(ip, p)) {
                Ok(l) => listeners.push(l),
                Err(e) if e.kind() == io::ErrorKind::AddrInUse => break,
                Err(source) => {
                    return Err(ServerError::Bind {
                        addr: SocketAddr::new(ip, p),
                        source,
                    })
                }
            }
        }
        if listeners.len() == ips.len() {
            return Ok((p, listeners));
        }
    }
    Err(ServerError::NoCommonPort { ips: ips.to_vec() })
}

impl Server {
    /// Serves `site` on each of `addrs` (all loopback; port 0 gives each its own free port).
    pub fn start(
        site: Arc<dyn Site>,
        addrs: &[SocketAddr],
        opts: ServerOptions,
    ) -> Result<Server, ServerError> {
        for &a in addrs {
            check_loopback(a)?;
        }
        if let Some(c) = opts.control {
            check_loopback(c)?;
        }
        let listeners = addrs
            .iter()
            .map(|&a| bind(a))
            .collect::<Result<Vec<_>, _>>()?;
        Server::from_listeners(site, listeners, opts)
    }

    /// Serves `site` on listeners already bound (to loopback addresses).
    pub fn from_listeners(
        site: Arc<dyn Site>,
        listeners: Vec<TcpListener>,
        opts: ServerOptions,
    ) -> Result<Server, ServerError> {
        Server::with_tls(site, listeners, Vec::new(), None, opts)
    }

    /// [`Server::from_listeners`], and HTTPS on `tls_listeners` with `tls`'s certificates.
    pub fn with_tls(
        site: Arc<dyn Site>,
        listeners: Vec<TcpListener>,
        tls_listeners: Vec<TcpListener>,
        tls: Option<tls::TlsSetup>,
        opts: ServerOptions,
    ) -> Result<Server, ServerError> {
        if listeners.is_empty() {
            return Err(ServerError::NoListeners);
        }
        let mut roles = Vec::with_capacity(listeners.len() + tls_listeners.len() + 1);
        let mut addrs = Vec::with_capacity(listeners.len());
        let mut tls_addrs = Vec::with_capacity(tls_listeners.len());
        let with_tls = tls_listeners.into_iter().map(|l| (l, true));
        for (l, is_tls) in listeners.into_iter().map(|l| (l, false)).chain(with_tls) {
            let addr = l.local_addr().map_err(|source| ServerError::Bind {
                addr: unspecified(),
                source,
            })?;
            check_loopback(addr)?;
            if is_tls {
                tls_addrs.push(addr);
            } else {
                addrs.push(addr);
            }
            roles.push((l, addr, Role::Site, is_tls));
        }
        if !tls_addrs.is_empty() && tls.is_none() {
            return Err(ServerError::Tls(tls::TlsError::new(
                "TLS listeners without certificates",
            )));
        }
        let mut control = None;
        if let Some(c) = opts.control {
            let l = bind(c)?;
            let addr = l
                .local_addr()
                .map_err(|source| ServerError::Bind { addr: c, source })?;
            control = Some(addr);
            roles.push((l, addr, Role::Control, false));
        }
        let cache = match site.cache_key_headers() {
            Some(headers) if opts.cache_bytes > 0 => {
                Some(cache::Cache::new(opts.cache_bytes, headers))
            }
            _ => None,
        };
        let shared = Arc::new(Shared {
            opts,
            site,
            log: Log::new(),
            cache,
            stop: AtomicBool::new(false),
            next_conn: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
            tls: tls.as_ref().map(|t| t.config.clone()),
        });
        let mut server = Server {
            shared: shared.clone(),
            addrs,
            tls_addrs,
            ca_pem: tls.map(|t| t.ca_pem),
            control,
            threads: Vec::new(),
        };
        for (listener, addr, role, is_tls) in roles {
            listener
                .set_nonblocking(true)
                .map_err(|source| ServerError::Bind { addr, source })?;
            let shared = shared.clone();
            let name = format!("websim-accept-{addr}");
            // On error, `server` drops here and stops the threads already started.
            let handle = std::thread::Builder::new()
                .name(name)
                .spawn(move || accept_loop(&shared, &listener, role, is_tls))
                .map_err(ServerError::Spawn)?;
            server.threads.push(handle);
        }
        Ok(server)
    }

    /// Generates the web of `config` and serves it on its loopback addresses (one port for all;
    /// `config.port` 0 picks a free one, and the web's URLs carry the port actually bound). A web
    /// with TLS hosts ([`WebConfig::tls_every`]) is also served over HTTPS on `config.tls_port`
    /// (0: a free one), with certificates from a CA made now ([`Server::ca_pem`]).
    pub fn start_web(
        mut config: WebConfig,
        opts: ServerOptions,
    ) -> Result<(Arc<Web>, Server), ServerError> {
        let ips = web_ips(&config);
        if let Some(c) = opts.control {
            check_loopback(c)?;
        }
        let (port, listeners) = bind_common_port(&ips, config.port)?;
        config.port = port;
        let mut tls_listeners = Vec::new();
        if config.tls_every > 0 && config.hosts > 0 {
            let (tls_port, l) = bind_common_port(&ips, config.tls_port)?;
            config.tls_port = tls_port;
            tls_listeners = l;
        }
        let web = Arc::new(Web::new(config));
        let tls = if web.has_tls() {
            Some(tls::setup(&web).map_err(ServerError::Tls)?)
        } else {
            tls_listeners.clear();
            None
        };
        let server = Server::with_tls(web.clone(), listeners, tls_listeners, tls, opts)?;
        Ok((web, server))
    }

    /// The CA certificate (PEM) that signed the valid TLS hosts' certificates, if any.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The TLS listeners' addresses.
    pub fn tls_addrs(&self) -> &[SocketAddr] {
        &self.tls_addrs
    }

    /// The site listeners' addresses (actual ports).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The control address (`GET /__websim/report`), if any.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control
    }

    /// The request log.
    pub fn log(&self) -> &Log {
        &self.shared.log
    }

    /// The audit of every request answered so far.
    pub fn report(&self) -> Report {
        self.shared.report()
    }

    /// Stops accepting, ends every connection, joins all threads, and returns the final report.
    pub fn stop(mut self) -> Report {
        self.halt();
        self.shared.report()
    }

    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for &fd in self.shared.open().values() {
            // SAFETY: a registered descriptor is open: a connection unregisters before its socket
            // closes, under this same lock. shutdown() only wakes the thread blocked on it.
            unsafe {
                libc::shutdown(fd, libc::SHUT_RDWR);
            }
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

fn unspecified() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)
}

/// Accepts connections on `listener` until the server stops, one thread each; then joins them.
fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener, role: Role, tls: bool) {
    let tick = shared.opts.poll_interval;
    let tick_ms = libc::c_int::try_from(tick.as_millis())
        .unwrap_or(libc::c_int::MAX)
        .max(1);
    let mut conns: Vec<JoinHandle<()>> = Vec::new();
    let mut prune_at = 64;
    while !shared.stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; the listener outlives the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, tick_ms) };
        if ready <= 0 {
            continue; // timeout or EINTR
        }
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            match listener.accept() {
                Ok((stream, peer)) => {
                    if let Some(h) = admit(shared, stream, peer, role, tls) {
                        conns.push(h);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of descriptors or memory: let connections finish before trying again.
                    std::thread::sleep(tick.min(Duration::from_millis(10)));
                    break;
                }
            }
        }
        if conns.len() >= prune_at {
            conns.retain(|h| !h.is_finished());
            prune_at = (conns.len() * 2).max(64);
        }
    }
    for h in conns {
        let _ = h.join();
    }
}

/// Registers an accepted connection and starts its thread, or refuses it if the server is full.
fn admit(
    shared: &Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    role: Role,
    tls: bool,
) -> Option<JoinHandle<()>> {
    let local = stream.local_addr().unwrap_or_else(|_| unspecified());
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    if !shared.register(id, stream.as_raw_fd(), role) {
        if role == Role::Site {
            shared.log.rejected();
        }
        refuse_full(stream);
        return None;
    }
    // Accepted sockets do not inherit O_NONBLOCK on Linux, but say so rather than rely on it.
    if stream.set_nonblocking(false).is_err() {
        shared.unregister(id);
        return None;
    }
    if role == Role::Site {
        shared.log.connection(ConnInfo {
            id,
            peer,
            local,
            opened: shared.log.now_ns(),
        });
    }
    let req = Request {
        method: String::new(),
        target: String::new(),
        host: String::new(),
        headers: Vec::new(),
        peer,
        local,
        conn: id,
        tls,
    };
    let stream = match (&shared.tls, tls) {
        (Some(config), true) => match rustls::ServerConnection::new(config.clone()) {
            Ok(c) => conn::Stream::Tls(Box::new(rustls::StreamOwned::new(c, stream))),
            Err(_) => {
                shared.unregister(id);
                return None;
            }
        },
        _ => conn::Stream::Plain(stream),
    };
    // From here the connection unregisters itself when dropped, even if the spawn fails.
    let mut c = conn::Conn::new(shared.clone(), role, stream, req);
    std::thread::Builder::new()
        .name(format!("websim-conn-{id}"))
        .spawn(move || c.run())
        .ok()
}

/// Tells a client the server is full (503) and closes, without waiting on it.
fn refuse_full(mut stream: TcpStream) {
    const FULL: &[u8] =
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
Content-Length: 26\r\nConnection: close\r\n\r\nwebsim: too many clients\r\n";
    if stream.set_nonblocking(true).is_ok() {
        let _ = stream.write(FULL);
        let _ = stream.shutdown(Shutdown::Write);
        // Drain what the client already sent, so the close is a FIN rather than a reset.
        let mut sink = [0u8; 4096];
        while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
    }
}
