//! Name resolution overrides: a crawl's own hosts table, like curl's `--resolve`.
//!
//! Tests, the demo and benchmarks crawl webs served on loopback addresses under made-up names
//! (`h0042.websim.test`). Instead of touching the system's `/etc/hosts` (which would affect every
//! program on the machine and needs root), a crawl names its overrides in `crawl.toml`:
//!
//! ```toml
//! [resolve]
//! hosts_files = ["websim.hosts"]          # /etc/hosts format, relative to the crawl directory
//! entries = ["h0001.websim.test:8480:127.0.1.2", "example.test:*:127.0.0.1"]
//! ```
//!
//! `entries` use curl's `HOST:PORT:ADDR` syntax (`*` for any port; IPv6 addresses in brackets;
//! a `HOST` of `*.example.test` covers every name under that domain, the nearest such entry
//! winning, for a test web whose trap mints subdomains);
//! they win over hosts files, and later lines win over earlier ones. Hosts not named fall through
//! to the system resolver, unless `only = true`: then the table is the only source of addresses,
//! a name it lacks fails as a DNS error (`dns`) without a lookup, and a crawl of a web on
//! loopback never asks the system's resolver, let alone a server off the machine, about the
//! names its pages link to (tests, the demo and the benchmarks set it). Answers of the system
//! resolver are cached per fetch run, failures included ([`DnsCache`]: `cache_ttl_secs`,
//! `negative_ttl_secs`), so a name costs one lookup per run, not one per URL. The fetch stage asks [`Resolver::lookup`] before DNS; the SSRF guard
//! still applies to the addresses it returns (private and loopback addresses are refused unless
//! the crawl allows them).

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};

/// The longest line of a hosts file (`[resolve] hosts_files`): an address and its names.
pub const MAX_HOSTS_LINE: usize = 64 << 10;

/// The `[resolve]` section of `crawl.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResolveConfig {
    /// Files in `/etc/hosts` format (`ADDR NAME [NAME...]`, `#` comments), relative to the crawl
    /// directory unless absolute.
    pub hosts_files: Vec<PathBuf>,
    /// `HOST:PORT:ADDR` entries (curl's `--resolve`); `PORT` may be `*`.
    pub entries: Vec<String>,
    /// The table is the only source of addresses: names it lacks do not resolve (no system DNS).
    pub only: bool,
    /// How long a fetch run keeps a system resolver answer (seconds): the system resolver does
    /// not say the record's TTL, so this is the cap on how stale an address may get.
    pub cache_ttl_secs: f64,
    /// How long a failed lookup is remembered (seconds): a name that does not resolve costs one
    /// lookup per run (per partition and cycle) and this interval, not one per URL.
    pub negative_ttl_secs: f64,
    /// Most names the cache holds; past it, expired answers are dropped, then everything.
    pub cache_entries: usize,
}

impl Default for ResolveConfig {
    fn default() -> Self {
        ResolveConfig {
            hosts_files: Vec::new(),
            entries: Vec::new(),
            only: false,
            cache_ttl_secs: 300.0,
            negative_ttl_secs: 60.0,
            cache_entries: 100_000,
        }
    }
}

/// Resolved overrides: host name (lower-case, no trailing dot) -> addresses, per port or any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolver {
    /// (host, Some(port)) or (host, None) for any port.
    table: HashMap<(String, Option<u16>), Vec<IpAddr>>,
    /// `[resolve] only`.
    only: bool,
    /// `[resolve] cache_ttl_secs`, `negative_ttl_secs` and `cache_entries`.
    cache: CacheLimits,
}

/// How the system resolver's answers are cached ([`DnsCache`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheLimits {
    /// Life of an answer.
    pub ttl: Duration,
    /// Life of a failure.
    pub negative_ttl: Duration,
    /// Most names held.
    pub entries: usize,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            ttl: Duration::from_secs(300),
            negative_ttl: Duration::from_secs(60),
            entries: 100_000,
        }
    }
}

impl Resolver {
    /// Builds the table from a configuration; `base` is the crawl directory for relative paths.
    pub fn from_config(cfg: &ResolveConfig, base: &Path, config_path: &Path) -> Result<Resolver> {
        for (key, v) in [
            ("cache_ttl_secs", cfg.cache_ttl_secs),
            ("negative_ttl_secs", cfg.negative_ttl_secs),
        ] {
            if !v.is_finite() || !(0.0..=1e9).contains(&v) {
                return Err(Error::config(
                    config_path,
                    format!("resolve.{key} = {v}: must be a number of seconds >= 0"),
                ));
            }
        }
        let mut r = Resolver {
            only: cfg.only,
            cache: CacheLimits {
                ttl: Duration::from_secs_f64(cfg.cache_ttl_secs),
                negative_ttl: Duration::from_secs_f64(cfg.negative_ttl_secs),
                entries: cfg.cache_entries.max(1),
            },
            ..Resolver::default()
        };
        for f in &cfg.hosts_files {
            let path = if f.is_absolute() {
                f.clone()
            } else {
                base.join(f)
            };
            r.add_hosts_file(&path)?;
        }
        for (i, e) in cfg.entries.iter().enumerate() {
            r.add_entry(e).map_err(|why| {
                Error::config(config_path, format!("resolve.entries[{i}] = {e:?}: {why}; write HOST:PORT:ADDR, e.g. \"a.test:80:127.0.0.1\""))
            })?;
        }
        Ok(r)
    }

    /// Adds the lines of an `/etc/hosts`-format text; `path` is named in errors.
    pub fn add_hosts_text(&mut self, text: &str, path: &Path) -> Result<()> {
        for (n, line) in text.lines().enumerate() {
            self.add_hosts_line(line, n as u64 + 1, path)?;
        }
        Ok(())
    }

    /// Adds the lines of the `/etc/hosts`-format file at `path`, read a line at a time: a line
    /// longer than [`MAX_HOSTS_LINE`] (or a file that is no text of lines, `/dev/zero`) is a
    /// configuration error naming the file and the line, after reading no more than that.
    pub fn add_hosts_file(&mut self, path: &Path) -> Result<()> {
        use crate::util::lines::LineReader;
        let f = std::fs::File::open(path).ctx("read hosts file", path)?;
        let mut rd = LineReader::new(io::BufReader::with_capacity(1 << 16, f), MAX_HOSTS_LINE);
        while let Some(l) = rd.next_line().ctx("read hosts file", path)? {
            if l.too_long() {
                return Err(Error::config(
                    path,
                    format!(
                        "{} (a hosts file has an address and its names on each line); split it",
                        l.too_long_message(MAX_HOSTS_LINE)
                    ),
                ));
            }
            let Ok(text) = std::str::from_utf8(l.text) else {
                return Err(Error::config(
                    path,
                    format!("line {}: not UTF-8 text", l.number),
                ));
            };
            self.add_hosts_line(text, l.number, path)?;
        }
        Ok(())
    }

    /// Adds line `n` of a hosts file: `ADDR NAME [NAME...]`, `#` starting a comment.
    fn add_hosts_line(&mut self, line: &str, n: u64, path: &Path) -> Result<()> {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            return Ok(());
        }
        let mut fields = line.split_whitespace();
        let addr = fields.next().expect("non-empty line");
        let ip: IpAddr = addr.parse().map_err(|_| {
            Error::config(
                path,
                format!("line {n}: {addr:?} is not an IP address (format: ADDR NAME [NAME...])"),
            )
        })?;
        let mut any = false;
        for name in fields {
            any = true;
            self.insert(name, None, ip);
        }
        if !any {
            return Err(Error::config(
                path,
                format!("line {n}: address {addr} without a host name"),
            ));
        }
        Ok(())
    }

    /// Adds one `HOST:PORT:ADDR` entry.
    pub fn add_entry(&mut self, entry: &str) -> std::result::Result<(), String> {
        let (host, rest) = entry.split_once(':').ok_or("missing ':'")?;
        let (port, addr) = rest.split_once(':').ok_or("missing the second ':'")?;
        if host.is_empty() {
            return Err("empty host".into());
        }
        let port = match port {
            "*" => None,
            p => Some(
                p.parse::<u16>()
                    .map_err(|_| format!("port {p:?} is not a number or *"))?,
            ),
        };
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        let ip: IpAddr = addr
            .parse()
            .map_err(|_| format!("{addr:?} is not an IP address"))?;
        // An entry replaces what hosts files said for the same key.
        self.table.remove(&(normalize(host), port));
        self.insert(host, port, ip);
        Ok(())
    }

    fn insert(&mut self, host: &str, port: Option<u16>, ip: IpAddr) {
        let v = self.table.entry((normalize(host), port)).or_default();
        if !v.contains(&ip) {
            v.push(ip);
        }
    }

    /// How the system resolver's answers are cached.
    pub fn cache_limits(&self) -> CacheLimits {
        self.cache
    }

    /// Whether the table is the only source of addresses (`[resolve] only`).
    pub fn only(&self) -> bool {
        self.only
    }

    /// The override addresses for `host` on `port`: an entry for that port wins over one for any
    /// port. `None` means "ask the system resolver" (unless [`Resolver::only`]).
    pub fn lookup(&self, host: &str, port: u16) -> Option<&[IpAddr]> {
        let h = normalize(host);
        let get = |name: &str| {
            self.table
                .get(&(name.to_string(), Some(port)))
                .or_else(|| self.table.get(&(name.to_string(), None)))
        };
        if let Some(a) = get(&h) {
            return Some(a.as_slice());
        }
        // `*.example.test` entries: any name under the domain (the nearest wins).
        let mut rest = h.as_str();
        while let Some((_, parent)) = rest.split_once('.') {
            if let Some(a) = get(&format!("*.{parent}")) {
                return Some(a.as_slice());
            }
            rest = parent;
        }
        None
    }

    /// Number of host names with overrides.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are no overrides.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// A source of addresses for names the crawl's table lacks: the system resolver, or a test's.
pub trait Lookup: Send + Sync + std::fmt::Debug {
    /// The addresses of `name` (`port` is passed through to the system resolver, which may
    /// use it; answers do not depend on it).
    fn lookup(&self, name: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The system resolver (`getaddrinfo(3)`: `/etc/hosts`, then DNS, as the machine is set up).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, name: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        Ok((name, port).to_socket_addrs()?.map(|s| s.ip()).collect())
    }
}

/// A name being looked up; dropped only if the lookup unwinds (see [`DnsCache::resolve`]).
struct InFlight<'a> {
    cache: &'a DnsCache,
    key: &'a str,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut map = self.cache.map.lock().unwrap_or_else(|e| e.into_inner());
        map.in_flight.remove(self.key);
        drop(map);
        self.cache.done.notify_all();
    }
}

/// A cached answer: the addresses, or why there are none.
type Answer = std::result::Result<Arc<[IpAddr]>, String>;

/// A cache of a [`Lookup`]'s answers, good and bad, shared by a fetch stage's threads.
///
/// The fetch stage looks names up ahead of its feeder, several at once (`prefetch_names`), and
/// the feeder resolves each host as it hands the host to the scheduler (for the per-IP limit),
/// so the workers find the answer here and never wait on DNS themselves unless it expired
/// mid-run. A name being looked up is looked up once: a second caller waits for that answer. A failure is cached too ([`CacheLimits::negative_ttl`]): a host
/// whose name does not resolve costs one lookup, not one per URL. Answers are cached by name
/// (A and AAAA records do not depend on the port). The system resolver does not report TTLs, so
/// the cache keeps an answer for [`CacheLimits::ttl`] at most; a process-wide resolver cache
/// (nscd, systemd-resolved) in front of it still honours the records' own.
pub struct DnsCache {
    lookup: Arc<dyn Lookup>,
    limits: CacheLimits,
    map: Mutex<Names>,
    /// Signalled when a lookup finishes (threads waiting for the same name).
    done: std::sync::Condvar,
    lookups: AtomicU64,
}

/// The cache's table and the names being looked up right now.
#[derive(Default)]
struct Names {
    answers: HashMap<String, (Answer, Instant)>,
    in_flight: std::collections::HashSet<String>,
}

impl std::fmt::Debug for DnsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DnsCache")
            .field("limits", &self.limits)
            .field("lookups", &self.lookups())
            .finish_non_exhaustive()
    }
}

impl DnsCache {
    /// A cache in front of `lookup`.
    pub fn new(lookup: Arc<dyn Lookup>, limits: CacheLimits) -> DnsCache {
        DnsCache {
            lookup,
            limits,
            map: Mutex::new(Names::default()),
            done: std::sync::Condvar::new(),
            lookups: AtomicU64::new(0),
        }
    }

    /// The addresses of `name`, from the cache or one lookup; `Err` is the failure's message.
    pub fn resolve(&self, name: &str, port: u16) -> Answer {
        let key = normalize(name);
        {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some((answer, until)) = map.answers.get(&key) {
                    if *until > Instant::now() {
                        return answer.clone();
                    }
                }
                // Another thread is asking for this name (the prefetch, usually): its answer.
                if !map.in_flight.contains(&key) {
                    break;
                }
                map = self
                    .done
                    .wait_timeout(map, Duration::from_millis(100))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            map.in_flight.insert(key.clone());
        }
        // Outside the lock: a slow lookup holds no other name up.
        self.lookups.fetch_add(1, Ordering::Relaxed);
        // Should the lookup panic, the name must not stay "in flight" (its waiters would wait
        // for ever): the guard takes it out and wakes them as the panic unwinds.
        let guard = InFlight {
            cache: self,
            key: &key,
        };
        let answer = match self.lookup.lookup(&key, port) {
            Ok(a) if !a.is_empty() => Ok(Arc::from(a)),
            Ok(_) => Err(format!("{name}: no address")),
            Err(e) => Err(format!("{name}: {e}")),
        };
        let life = if answer.is_ok() {
            self.limits.ttl
        } else {
            self.limits.negative_ttl
        };
        std::mem::forget(guard);
        let now = Instant::now();
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.in_flight.remove(&key);
        let answers = &mut map.answers;
        if answers.len() >= self.limits.entries {
            answers.retain(|_, (_, until)| *until > now);
            if answers.len() >= self.limits.entries {
                answers.clear();
            }
        }
        if !life.is_zero() {
            answers.insert(key, (answer.clone(), now + life));
        }
        drop(map);
        self.done.notify_all();
        answer
    }

    /// Lookups made so far (cache misses).
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }
}

fn normalize(host: &str) -> String {
    host.trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lookup that panics the first time it is asked.
    #[derive(Debug, Default)]
    struct PanicsOnce(std::sync::atomic::AtomicBool);

    impl Lookup for PanicsOnce {
        fn lookup(&self, _name: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
            if !self.0.swap(true, Ordering::SeqCst) {
                panic!("resolver bug");
            }
            Ok(vec!["127.0.0.1".parse().unwrap()])
        }
    }

    #[test]
    fn a_lookup_that_panics_leaves_no_name_in_flight() {
        let cache = DnsCache::new(Arc::new(PanicsOnce::default()), CacheLimits::default());
        let first =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cache.resolve("a.test", 80)));
        assert!(first.is_err());
        // Not stuck waiting for the lookup that died: asked again, and answered.
        assert_eq!(cache.resolve("a.test", 80).unwrap().len(), 1);
        assert_eq!(cache.lookups(), 2);
    }

    #[test]
    fn wildcard_entries_cover_a_domain() {
        let mut r = Resolver::default();
        r.add_entry("*.subs.test:*:127.0.1.4").unwrap();
        r.add_entry("*.deep.subs.test:*:127.0.1.5").unwrap();
        r.add_entry("exact.subs.test:80:127.0.1.6").unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(r.lookup("s7.subs.test", 80), Some(&[ip("127.0.1.4")][..]));
        assert_eq!(r.lookup("a.b.subs.test", 80), Some(&[ip("127.0.1.4")][..]));
        assert_eq!(
            r.lookup("x.deep.subs.test", 80),
            Some(&[ip("127.0.1.5")][..])
        );
        assert_eq!(
            r.lookup("exact.subs.test", 80),
            Some(&[ip("127.0.1.6")][..])
        );
        assert_eq!(r.lookup("subs.test", 80), None);
        assert_eq!(r.lookup("other.test", 80), None);
    }

    #[test]
    fn hosts_file_and_entries() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("web.hosts"),
            "# websim\n127.0.1.1 h0000.websim.test h0004.websim.test\n127.0.1.2\th0001.websim.test # trailing\n::1 six.test\n",
        )
        .unwrap();
        let cfg = ResolveConfig {
            hosts_files: vec!["web.hosts".into()],
            entries: vec![
                "H0001.websim.test:8480:127.0.0.9".into(),
                "v6.test:*:[::1]".into(),
            ],
            ..ResolveConfig::default()
        };
        let r = Resolver::from_config(&cfg, t.path(), Path::new("crawl.toml")).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            r.lookup("h0004.websim.test", 80),
            Some(&[ip("127.0.1.1")][..])
        );
        assert_eq!(
            r.lookup("h0001.websim.test.", 8480),
            Some(&[ip("127.0.0.9")][..]),
            "port entry wins"
        );
        assert_eq!(
            r.lookup("h0001.websim.test", 80),
            Some(&[ip("127.0.1.2")][..])
        );
        assert_eq!(r.lookup("v6.test", 1), Some(&[ip("::1")][..]));
        assert_eq!(r.lookup("six.test", 1), Some(&[ip("::1")][..]));
        assert_eq!(r.lookup("example.com", 80), None);
    }

    #[test]
    fn bad_input_names_the_place() {
        let mut r = Resolver::default();
        let err = r
            .add_hosts_text("127.0.0.1 ok.test\nnot-an-ip name\n", Path::new("x.hosts"))
            .unwrap_err();
        assert!(
            err.to_string().contains("x.hosts") && err.to_string().contains("line 2"),
            "{err}"
        );
        let cfg = ResolveConfig {
            hosts_files: vec![],
            entries: vec!["a.test:eighty:127.0.0.1".into()],
            ..ResolveConfig::default()
        };
        let err = Resolver::from_config(&cfg, Path::new("."), Path::new("crawl.toml")).unwrap_err();
        assert!(
            err.to_string().contains("resolve.entries[0]") && err.to_string().contains("eighty"),
            "{err}"
        );
        let cfg = ResolveConfig {
            hosts_files: vec!["missing.hosts".into()],
            ..ResolveConfig::default()
        };
        let err = Resolver::from_config(&cfg, Path::new("/nonexistent"), Path::new("crawl.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("missing.hosts"), "{err}");
    }

    /// A hosts file is read a line at a time with a cap: an over-long line (here 3 MB with no
    /// newline after a good line) is a configuration error naming the file and the line, and
    /// `/dev/zero` is refused instead of filling memory.
    #[test]
    fn an_over_long_hosts_line_is_an_error_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("big.hosts");
        let mut text = b"127.0.0.1 ok.test\n127.0.0.2 ".to_vec();
        text.resize(3_000_000, b'x');
        std::fs::write(&path, text).unwrap();
        let mut r = Resolver::default();
        let err = r.add_hosts_file(&path).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::EXIT_USAGE, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("big.hosts") && msg.contains("line 2 is 2999982 bytes"),
            "{msg}"
        );
        if Path::new("/dev/zero").exists() {
            let err = r.add_hosts_file(Path::new("/dev/zero")).unwrap_err();
            assert!(err.to_string().contains("no end of line"), "{err}");
        }
        // A file read this way says the same as its text.
        let path = t.path().join("ok.hosts");
        std::fs::write(&path, "# c\r\n127.0.0.3 three.test\r\n\n::1 six.test").unwrap();
        let mut r = Resolver::default();
        r.add_hosts_file(&path).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(r.lookup("three.test", 80), Some(&[ip("127.0.0.3")][..]));
        assert_eq!(r.lookup("six.test", 80), Some(&[ip("::1")][..]));
    }
}
