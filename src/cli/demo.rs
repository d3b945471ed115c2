//! `dragnet demo` (a command of the binary, not the library): a real crawl of a synthetic web on loopback, end to end, in about a minute.
//!
//! It starts websim in this process (a few hundred hosts on 127.0.x.y addresses, some of them
//! hostile: slow drips, endless bodies, huge headers, gzip bombs, resets, a crawler trap), creates
//! a crawl directory whose `[resolve]` table points the web's host names at those addresses and
//! which allows private addresses (a real crawl refuses them), runs `dragnet cycle` until the
//! frontier is empty, and prints a summary checked against websim's ground truth: what a perfect,
//! polite crawler fetches from this web, and the server's own audit of politeness (requests too
//! soon, concurrent requests to one host, fetches before robots.txt or disallowed by it).

//!
//! This file starts the web and runs the crawl; [`summary`] holds what the demo found and prints.

mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dragnet::config::Config;
use dragnet::crawl::CrawlDir;
use dragnet::error::{Error, Result};
use dragnet::exec::{run_cycles, CycleOptions, CycleReport};
use dragnet::ops::InitOptions;
use websim::model::{Web, WebConfig};
use websim::server::{Server, ServerOptions};

pub use summary::{render, DemoSummary};

/// How the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Where the crawl goes (a new directory under the system's temp dir if `None`).
    pub dir: Option<PathBuf>,
    /// websim's seed.
    pub seed: u64,
    /// Hosts in the web.
    pub hosts: u32,
    /// Pages per host.
    pub pages: u32,
    /// One host in this many is hostile (0: none).
    pub hostile_every: u32,
    /// One host in this many is served over HTTPS, valid or not (0: none).
    pub tls_every: u32,
    /// Partitions of the crawl.
    pub partitions: u32,
    /// Largest depth crawled (seeds are 0).
    pub max_depth: u32,
    /// Print the cycle's log lines.
    pub log: bool,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            dir: None,
            seed: 2026,
            hosts: 300,
            pages: 15,
            hostile_every: 30,
            tls_every: 6,
            partitions: 8,
            max_depth: 12,
            log: true,
        }
    }
}

/// Requests in flight at once to one of the demo web's 4 addresses (each serves 75 hosts).
const DEMO_PER_IP: u32 = 8;

/// Runs the demo.
pub fn run_demo(opts: &DemoOptions) -> Result<DemoSummary> {
    let (web, server) = start_web(opts)?;
    let root = match &opts.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!(
            "dragnet-demo-{}-{}",
            std::process::id(),
            dragnet::util::unix_now()
        )),
    };
    let work = root.with_file_name(format!(
        "{}.setup",
        root.file_name().unwrap_or_default().to_string_lossy()
    ));
    dragnet::storage::create_dir_all(&work)?;
    let (crawl, cfg) = create_crawl(opts, &web, &server, &root, &work)?;
    if opts.log {
        eprintln!(
            "demo: websim serves {} hosts x {} pages on loopback ({} hostile, {} over HTTPS of \
             which {} with a bad certificate); crawl in {}",
            opts.hosts,
            opts.pages,
            web.hosts.iter().filter(|h| h.hostile.is_some()).count(),
            web.hosts.iter().filter(|h| h.tls.is_some()).count(),
            web.hosts
                .iter()
                .filter(|h| h.tls.is_some_and(|t| !t.trusted()))
                .count(),
            root.display()
        );
    }
    let started = Instant::now();
    let report = crawl_to_the_end(opts, &crawl, &cfg);
    let audit = server.stop();
    let report = report?;
    let seconds = started.elapsed().as_secs_f64();
    let s = summary::summary(
        &crawl,
        &report,
        cfg.crawl.partitions,
        seconds,
        &web,
        opts.max_depth,
        &audit,
    )?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(s)
}

/// websim's web for `opts`, served on loopback.
fn start_web(opts: &DemoOptions) -> Result<(Arc<Web>, Server)> {
    let web_cfg = WebConfig {
        seed: opts.seed,
        hosts: opts.hosts,
        pages: opts.pages,
        port: 0,
        listeners: 4,
        hostile_every: opts.hostile_every,
        tls_every: opts.tls_every,
        tls_port: 0,
        // A few hosts answer 429 (Retry-After: 1) when asked faster than one page a second
        // after a burst of 4; the audit checks the crawl waited.
        rate_limit_every: 25,
        // 75 virtual hosts share each of the 4 addresses: the audit checks the crawl kept its
        // per-address limit across the partitions it fetched at once.
        per_ip_connections: DEMO_PER_IP,
        max_crawl_delay: Duration::from_millis(100),
        // A dripping server notices a client that hung up at its next write or the one after:
        // within 0.5 s, well inside the 1 s back-off after an abandoned request.
        drip_interval: Duration::from_millis(250),
        bomb_bytes: 256 << 20,
        ..WebConfig::default()
    };
    // The crawl fetches each URL about once: websim's answer cache would only hold memory.
    let server_opts = ServerOptions {
        cache_bytes: 0,
        ..ServerOptions::default()
    };
    Server::start_web(web_cfg, server_opts).map_err(|e| Error::External {
        program: "websim".into(),
        message: format!("cannot start websim on loopback: {e}"),
    })
}

/// The crawl at `root`, made with `dragnet init` from a configuration and seeds written in
/// `work`: every host of `web` a seed, resolved through websim's hosts file.
fn create_crawl(
    opts: &DemoOptions,
    web: &Web,
    server: &Server,
    root: &Path,
    work: &Path,
) -> Result<(CrawlDir, Config)> {
    let config_path = work.join("crawl.toml");
    let cfg = demo_config(opts, web, server, work)?;
    std::fs::write(&config_path, cfg.to_toml()).map_err(|e| Error::io("write", &config_path, e))?;
    let seeds: Vec<String> = (0..web.hosts.len() as u32)
        .map(|h| web.seed_url(h))
        .collect();
    let seeds_path = work.join("seeds.txt");
    std::fs::write(&seeds_path, seeds.join("\n"))
        .map_err(|e| Error::io("write", &seeds_path, e))?;
    dragnet::ops::init(
        root,
        &InitOptions {
            seeds: seeds_path,
            config: Some(config_path),
            partitions: None,
        },
        &mut |b| eprintln!("demo: bad seed {b:?}"),
    )?;
    let crawl = CrawlDir::new(root);
    let cfg = Config::load(&crawl.config_path())?;
    Ok((crawl, cfg))
}

/// The demo crawl's configuration (websim's hosts file and CA written in `work`): loopback
/// addresses allowed, short timeouts and back-offs, the web's own domain in scope.
fn demo_config(opts: &DemoOptions, web: &Web, server: &Server, work: &Path) -> Result<Config> {
    let hosts_path = work.join("websim.hosts");
    std::fs::write(&hosts_path, websim::cli::hosts_file(web))
        .map_err(|e| Error::io("write", &hosts_path, e))?;
    let mut cfg = Config::default();
    // The TLS hosts' certificates come from a CA websim made just now: trust it, and only it
    // besides Mozilla's roots (the expired, wrong-name and self-signed hosts must still fail).
    if let Some(pem) = server.ca_pem() {
        let ca_path = work.join("websim-ca.pem");
        std::fs::write(&ca_path, pem).map_err(|e| Error::io("write", &ca_path, e))?;
        cfg.fetch.extra_ca_files = vec![ca_path];
    }
    cfg.crawl.name = "demo".into();
    cfg.crawl.partitions = opts.partitions;
    cfg.resolve.hosts_files = vec![hosts_path];
    // The web's pages link to `*.outside.test`: never ask the system's resolver about them.
    cfg.resolve.only = true;
    let f = &mut cfg.fetch;
    f.allow_private_addresses = true;
    f.threads = 8;
    f.per_ip_connections = DEMO_PER_IP;
    f.default_delay_secs = 0.0;
    f.delay_factor = 0.0;
    f.connect_timeout_secs = 2.0;
    f.read_timeout_secs = 2.0;
    // Pages render in milliseconds on loopback; what takes longer is a hostile host (slow drip,
    // stall), and each of its failures costs the timeout plus a second's back-off.
    f.total_timeout_secs = 3.0;
    // websim's 503 pages say `Retry-After: 120`; the demo obeys at most a second of it (all of
    // the rate-limited hosts' `Retry-After: 1`), and backs off a host answering 5xx in a row
    // from 0.1 s.
    f.backoff_base_secs = 0.1;
    f.backoff_max_secs = 1.0;
    f.max_retry_after_secs = 1.0;
    cfg.scope.max_depth = opts.max_depth;
    // The web's own hosts: its links to hosts outside it are never resolved or fetched.
    cfg.scope.allowed_domains = vec!["websim.test".into()];
    // The budget websim's ground truth gives every host (pages + 100): what bounds its trap.
    cfg.prioritize.max_urls_per_host_total = u64::from(opts.pages) + 100;
    // Every partition fetches at once: the demo's time is spent waiting on its slow and
    // hostile hosts, not on the CPU (websim serves from this process, on the same cores).
    cfg.cycle.fetch_partitions = opts.partitions.max(1);
    Ok(cfg)
}

/// `dragnet cycle --until-empty` (at most 100 cycles), with the live display on a terminal.
fn crawl_to_the_end(opts: &DemoOptions, crawl: &CrawlDir, cfg: &Config) -> Result<CycleReport> {
    run_cycles(
        crawl,
        cfg,
        &CycleOptions {
            until_empty: true,
            max_cycles: 100,
            // The live display on a terminal; only the stage lines in a log.
            progress: if opts.log && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                dragnet::fetch::ProgressMode::Bar
            } else {
                dragnet::fetch::ProgressMode::Quiet
            },
            log: opts.log,
            ..CycleOptions::default()
        },
    )
}

/// `dragnet demo`: runs the demo and prints its summary (and JSON on stdout if asked).
pub(crate) fn command(
    dir: Option<PathBuf>,
    hosts: u32,
    pages: u32,
    seed: u64,
    tls_every: u32,
    json: bool,
) -> Result<i32> {
    let opts = DemoOptions {
        dir,
        hosts,
        pages,
        seed,
        tls_every,
        ..Default::default()
    };
    let s = run_demo(&opts)?;
    if json {
        outln!("{}", serde_json::to_string(&s).expect("summary serializes"));
    }
    eprint!("{}", render(&s));
    Ok(dragnet::error::EXIT_OK)
}
