//! The `websim` command line, as a library function so that `dragnet websim ...` can run it too
//! ([`run`]); `src/main.rs` only calls it.
//!
//! One subcommand per job ([`Command`]). Options describing the web are shared ([`WebArgs`]), so
//! every subcommand given the same `--seed`, `--hosts`, ... talks about the same web: the server
//! serves exactly the hosts the hosts file names.
//!
//! Output discipline: `serve` writes what it is doing (addresses, control URL) to stderr, and
//! stdout carries only the JSON audit report when `--report` is not given, so
//! `websim serve ... > report.json` works. Exit codes follow dragnet's: 0 done, 2 usage or
//! configuration error, 3 I/O error (a port in use, an unwritable file).

use std::ffi::OsString;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};

use crate::model::{Web, WebConfig};
use crate::server::{Server, ServerError, ServerOptions};

/// Exit code: usage or configuration error.
const EXIT_USAGE: u8 = 2;
/// Exit code: I/O error.
const EXIT_IO: u8 = 3;

/// A deterministic synthetic web on loopback, for testing crawlers.
#[derive(Debug, Parser)]
#[command(name = "websim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a web on loopback addresses until Ctrl-C, SIGTERM or --duration, then print the
    /// politeness audit as JSON.
    Serve(ServeArgs),
    /// Write the web's hosts file (/etc/hosts format: one `ADDRESS NAME` line per host).
    Hosts(HostsArgs),
    /// Write the ground truth for a crawl policy: the URLs a perfect polite crawler fetches
    /// (fetch.txt/.tsv), those it must never fetch (never.txt/.tsv), each host's delay
    /// (delays.tsv), every page's expected links (links.jsonl) and a summary.json.
    Truth(TruthArgs),
    /// Write the web as static files plus an nginx.conf and a hosts file, so other crawlers can
    /// be measured on the same web (hostile behaviours that files cannot express are tamed; see
    /// EXPORT.md in the output).
    Export(ExportArgs),
}

/// `websim truth`.
#[derive(Debug, Clone, Args)]
pub struct TruthArgs {
    /// The web.
    #[command(flatten)]
    pub web: WebArgs,
    /// User agent of the crawler (its product token selects the robots.txt group).
    #[arg(long, default_value = "dragnet")]
    pub agent: String,
    /// Largest depth fetched (seeds are depth 0).
    #[arg(long, default_value_t = 100)]
    pub max_depth: u32,
    /// Fetches per host besides robots.txt (the crawler-trap budget) [default: pages + 100].
    #[arg(long)]
    pub max_pages_per_host: Option<u32>,
    /// Follow rel=nofollow links and the links of nofollow pages.
    #[arg(long)]
    pub follow_nofollow: bool,
    /// Archive mode: also fetch page requisites (images, scripts, stylesheets, srcset, CSS
    /// url() and @import) at the depth of the page that needs them (see --requisites-every).
    #[arg(long)]
    pub requisites: bool,
    /// Seed URLs (default: the `/` of every host).
    #[arg(long = "seed-url", value_name = "URL")]
    pub seed_urls: Vec<String>,
    /// Directory to write the files into (created if missing).
    #[arg(long, short)]
    pub out: PathBuf,
}

/// `websim export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The web (its --port is the port nginx listens on; 0 is refused).
    #[command(flatten)]
    pub web: WebArgs,
    /// Directory to write into (created if missing); run `nginx -p DIR -c nginx.conf` there.
    pub dir: PathBuf,
}

/// Options that define a web; the same values give the same web in every subcommand.
#[derive(Debug, Clone, Args)]
pub struct WebArgs {
    /// Seed everything derives from.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of hosts.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub hosts: u32,
    /// Pages per host (page 0 is `/`).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub pages: u32,
    /// Port of every host (0: a free one, chosen when serving; 80: no port in URLs).
    #[arg(long, default_value_t = 8480)]
    pub port: u16,
    /// Loopback addresses the hosts are spread over (127.0.1.1 ... 127.0.1.K).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..))]
    pub listeners: u8,
    /// One host in N is hostile (0: none).
    #[arg(long, default_value_t = 20)]
    pub hostile_every: u32,
    /// Delay (ms) every host expects between requests when robots.txt sets no crawl-delay.
    #[arg(long, default_value_t = 0)]
    pub default_delay_ms: u64,
    /// Largest crawl-delay (ms) a host's robots.txt asks for.
    #[arg(long, default_value_t = 2000)]
    pub max_crawl_delay_ms: u64,
    /// Interval (ms) between the bytes of a slow-drip response.
    #[arg(long, default_value_t = 1000)]
    pub drip_ms: u64,
    /// Decompressed size (MiB) of the gzip bomb.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub bomb_mib: u64,
    /// One host in N is served over HTTPS (valid, expired, wrong-name and self-signed
    /// certificates; 0: none).
    #[arg(long, default_value_t = 0)]
    pub tls_every: u32,
    /// Port of the HTTPS hosts (0: a free one, chosen when serving; 443: no port in URLs).
    #[arg(long, default_value_t = 8443)]
    pub tls_port: u16,
    /// One host in N rate-limits its pages: after a burst of 4, one a second; faster requests
    /// get 429 with Retry-After: 1, and the audit flags a crawler that comes back sooner (0: none).
    #[arg(long, default_value_t = 0)]
    pub rate_limit_every: u32,
    /// The audit's per-address limit: requests in flight at once to one listener address, over
    /// all its hosts (0: not checked).
    #[arg(long, default_value_t = 0)]
    pub per_ip_connections: u32,
    /// The audit's per-address delay (ms) between requests to one listener address.
    #[arg(long, default_value_t = 0)]
    pub per_ip_delay_ms: u64,
    /// The trap host also links into an endless tree of subdomains of another registered
    /// domain (s0.trap-subs.test, s1, ...), served by the trap host's address: resolve
    /// `*.trap-subs.test` there.
    #[arg(long)]
    pub subdomain_trap: bool,
    /// One host in N (never a hostile one) has page requisites: its HTML pages load
    /// stylesheets, a script, images and a font from /static/ (0: none).
    #[arg(long, default_value_t = 0)]
    pub requisites_every: u32,
}

impl WebArgs {
    /// The web configuration these options describe.
    pub fn config(&self) -> WebConfig {
        WebConfig {
            seed: self.seed,
            hosts: self.hosts,
            pages: self.pages,
            listeners: self.listeners,
            port: self.port,
            hostile_every: self.hostile_every,
            default_delay: Duration::from_millis(self.default_delay_ms),
            max_crawl_delay: Duration::from_millis(self.max_crawl_delay_ms),
            drip_interval: Duration::from_millis(self.drip_ms),
            bomb_bytes: self.bomb_mib << 20,
            tls_every: self.tls_every,
            tls_port: self.tls_port,
            rate_limit_every: self.rate_limit_every,
            per_ip_connections: self.per_ip_connections,
            per_ip_delay: Duration::from_millis(self.per_ip_delay_ms),
            subdomain_trap: self.subdomain_trap,
            requisites_every: self.requisites_every,
            ..WebConfig::default()
        }
    }
}

/// `websim serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The web.
    #[command(flatten)]
    pub web: WebArgs,
    /// Write the hosts file here (for the crawler's resolver).
    #[arg(long, value_name = "PATH")]
    pub hosts_file: Option<PathBuf>,
    /// Write the test CA's certificate (PEM) here, for the crawler to trust (`--tls-every`).
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Write the JSON audit report here when done (default: stdout).
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Stop after this many seconds (default: until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub duration: Option<Duration>,
    /// Control address serving GET /__websim/report (default: 127.0.0.1 on the web's port).
    #[arg(long, value_name = "ADDR")]
    pub control: Option<SocketAddr>,
    /// Most client connections open at once; more are answered 503.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// MiB of answers kept for repeated requests (0: render every answer afresh).
    #[arg(long, default_value_t = 128)]
    pub cache_mib: usize,
}

/// `websim hosts`.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    /// The web.
    #[command(flatten)]
    pub web: WebArgs,
    /// Write here (default: stdout).
    #[arg(long, short, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("'{s}' is not a duration (seconds >= 0)"))
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn io(what: &str, path: &Path, e: &std::io::Error) -> Failure {
        Failure {
            code: EXIT_IO,
            message: format!("cannot {what} {}: {e}", path.display()),
        }
    }
}

impl From<ServerError> for Failure {
    fn from(e: ServerError) -> Failure {
        let code = match e {
            ServerError::NotLoopback(_) | ServerError::NoListeners => EXIT_USAGE,
            _ => EXIT_IO,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// Runs the command line `args` (the first item is the program name, as in `std::env::args_os`)
/// and returns the exit code (0 done, 2 usage, 3 I/O);
/// `dragnet websim serve ...` passes `["dragnet websim", "serve", ...]`.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE);
        }
    };
    let result = match cli.command {
        Command::Serve(a) => serve(&a),
        Command::Hosts(a) => hosts(&a),
        Command::Truth(a) => truth(&a),
        Command::Export(a) => export(&a),
    };
    match result {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("websim: error: {}", f.message);
            f.code
        }
    }
}

/// The hosts file of a web: a comment line, then `ADDRESS<TAB>NAME` per host.
pub fn hosts_file(web: &Web) -> String {
    let c = &web.config;
    let mut s = format!(
        "# websim: seed {}, {} hosts, {} listeners; serve with `websim serve --seed {} --hosts {} --listeners {}`\n",
        c.seed, c.hosts, c.listeners, c.seed, c.hosts, c.listeners
    );
    for h in &web.hosts {
        s.push_str(&format!("{}\t{}\n", h.addr, h.name));
    }
    s
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half.
fn write_file(path: &Path, text: &[u8]) -> Result<(), Failure> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| Failure::io("write", &tmp, &e))?;
    std::fs::rename(&tmp, path).map_err(|e| Failure::io("rename to", path, &e))
}

fn hosts(a: &HostsArgs) -> Result<(), Failure> {
    let web = Web::new(a.web.config());
    let text = hosts_file(&web);
    match &a.out {
        Some(p) => write_file(p, text.as_bytes()),
        None => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Ok(())
        }
    }
}

fn truth(a: &TruthArgs) -> Result<(), Failure> {
    let web = Web::new(a.web.config());
    let mut policy = crate::truth::Policy::new(&web);
    policy.agent = a.agent.clone();
    policy.max_depth = a.max_depth;
    policy.follow_nofollow = a.follow_nofollow;
    policy.requisites = a.requisites;
    if let Some(n) = a.max_pages_per_host {
        policy.max_pages_per_host = n;
    }
    if !a.seed_urls.is_empty() {
        policy.seeds = Some(a.seed_urls.clone());
    }
    let t = crate::truth::truth(&web, &policy);
    t.write_files(&web, &a.out)
        .map_err(|e| Failure::io("write the truth into", &a.out, &e))?;
    eprintln!(
        "websim: truth for {} hosts x {} pages: {} URLs to fetch, {} never to fetch, in {}",
        web.config.hosts,
        web.config.pages,
        t.fetched.len(),
        t.never.len(),
        a.out.display()
    );
    Ok(())
}

fn export(a: &ExportArgs) -> Result<(), Failure> {
    if a.web.port == 0 {
        return Err(Failure {
            code: EXIT_USAGE,
            message: "export needs a fixed --port (the exported pages' URLs carry it), not 0"
                .into(),
        });
    }
    let web = Web::new(a.web.config());
    let stats =
        crate::export::export(&web, &a.dir).map_err(|e| Failure::io("export into", &a.dir, &e))?;
    eprintln!(
        "websim: exported {} hosts, {} files ({} bytes) into {}; run: nginx -p {} -c nginx.conf",
        stats.hosts,
        stats.files,
        stats.bytes,
        a.dir.display(),
        a.dir.display()
    );
    Ok(())
}

/// Set by SIGINT or SIGTERM.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT and SIGTERM set [`SIGNALLED`] instead of killing the process, so the report is
/// still written.
fn catch_signals() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic (async-signal-safe); the sigaction struct is
    // zero-initialised (a valid state) and filled before use.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

fn serve(a: &ServeArgs) -> Result<(), Failure> {
    let config = a.web.config();
    let control = a
        .control
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], config.port)));
    let opts = ServerOptions {
        control: Some(control),
        max_connections: usize::try_from(a.max_connections).unwrap_or(usize::MAX),
        cache_bytes: a.cache_mib.saturating_mul(1 << 20),
        ..ServerOptions::default()
    };
    catch_signals();
    let (web, server) = Server::start_web(config, opts)?;
    let c = &web.config;
    let hostile = web.hosts.iter().filter(|h| h.hostile.is_some()).count();
    let addrs: Vec<String> = server.addrs().iter().map(ToString::to_string).collect();
    eprintln!(
        "websim: seed {}, {} hosts x {} pages ({hostile} hostile), port {}",
        c.seed, c.hosts, c.pages, c.port
    );
    let requisite_hosts = web.requisite_hosts().len();
    if requisite_hosts > 0 {
        eprintln!("websim: {requisite_hosts} hosts with page requisites under /static/");
    }
    eprintln!("websim: listening on {}", addrs.join(" "));
    if let Some(ctl) = server.control_addr() {
        eprintln!("websim: control http://{ctl}/__websim/report");
    }
    eprintln!(
        "websim: try curl --resolve {}:{}:{} {}/",
        web.hosts[0].name,
        c.port,
        web.hosts[0].addr,
        web.origin(0)
    );
    if let Some(p) = &a.hosts_file {
        write_file(p, hosts_file(&web).as_bytes())?;
        eprintln!("websim: hosts file {}", p.display());
    }
    match (&a.ca_file, server.ca_pem()) {
        (Some(p), Some(pem)) => {
            write_file(p, pem.as_bytes())?;
            eprintln!(
                "websim: TLS hosts on port {}, CA certificate {}",
                c.tls_port,
                p.display()
            );
        }
        (None, Some(_)) => eprintln!(
            "websim: TLS hosts on port {} (pass --ca-file to get the CA a client must trust)",
            c.tls_port
        ),
        _ => {}
    }
    match a.duration {
        Some(d) => eprintln!(
            "websim: serving for {:.1} s (or until Ctrl-C)",
            d.as_secs_f64()
        ),
        None => eprintln!("websim: serving until Ctrl-C"),
    }
    let started = Instant::now();
    while !SIGNALLED.load(Ordering::SeqCst) && a.duration.is_none_or(|d| started.elapsed() < d) {
        let left = a
            .duration
            .map_or(Duration::MAX, |d| d.saturating_sub(started.elapsed()));
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    let report = server.stop();
    let mut json = serde_json::to_vec_pretty(&report).map_err(|e| Failure {
        code: EXIT_IO,
        message: e.to_string(),
    })?;
    json.push(b'\n');
    eprintln!(
        "websim: {} requests, {} connections, {} violations",
        report.requests,
        report.connections,
        report.counts.total()
    );
    match &a.report {
        Some(p) => write_file(p, &json),
        None => {
            // A closed stdout (`| head`) is not an error worth a non-zero exit.
            let _ = std::io::stdout().lock().write_all(&json);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_file_lists_every_host_once() {
        let cli =
            Cli::try_parse_from(["websim", "hosts", "--hosts", "7", "--listeners", "3"]).unwrap();
        let Command::Hosts(a) = cli.command else {
            panic!("hosts")
        };
        let text = hosts_file(&Web::new(a.web.config()));
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[0], "127.0.1.1\th0000.websim.test");
        assert_eq!(lines[4], "127.0.1.2\th0004.websim.test");
    }

    #[test]
    fn serve_options_parse() {
        let cli = Cli::try_parse_from([
            "websim",
            "serve",
            "--seed",
            "9",
            "--port",
            "0",
            "--duration",
            "0.5",
        ])
        .unwrap();
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
        assert_eq!(a.web.config().seed, 9);
        assert_eq!(a.duration, Some(Duration::from_millis(500)));
        assert!(Cli::try_parse_from(["websim", "serve", "--duration", "-1"]).is_err());
        assert!(Cli::try_parse_from(["websim", "serve", "--hosts", "0"]).is_err());
    }

    #[test]
    fn requisite_options_parse() {
        let cli = Cli::try_parse_from([
            "websim",
            "truth",
            "--requisites-every",
            "3",
            "--requisites",
            "--out",
            "x",
        ])
        .unwrap();
        let Command::Truth(a) = cli.command else {
            panic!("truth")
        };
        assert_eq!(a.web.config().requisites_every, 3);
        assert!(a.requisites);
        let cli = Cli::try_parse_from(["websim", "serve", "--requisites-every", "2"]).unwrap();
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
        assert_eq!(a.web.config().requisites_every, 2);
        let cli = Cli::try_parse_from(["websim", "hosts"]).unwrap();
        let Command::Hosts(a) = cli.command else {
            panic!("hosts")
        };
        assert_eq!(a.web.config().requisites_every, 0);
    }
}
