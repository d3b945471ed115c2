//! Helpers shared by the integration tests (each test file that needs one says `mod common;`).

use std::path::PathBuf;

/// The third-party conformance data: `tests/data` in the repo (its README gives provenance and
/// licenses), or the directory named by `DRAGNET_TESTDATA`. Panics with how to fix it when `sub` (e.g. `"robots"`) is
/// missing there; `holds` says what that folder should contain.
#[allow(dead_code)]
pub fn testdata_dir(sub: &str, holds: &str) -> PathBuf {
    let dir = match std::env::var_os("DRAGNET_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    };
    assert!(
        dir.join(sub).is_dir(),
        "test data not found: {} has no {sub}/ directory. Set DRAGNET_TESTDATA to the testdata \
         directory (the one containing {holds}).",
        dir.display()
    );
    dir
}

/// Stops a test that needs `what` (a tool or a server) when `available` is false, saying how to
/// get it. Such tests are `#[ignore = "needs ..."]`, so a plain `cargo test` lists them as ignored
/// with the reason instead of passing them unchecked; `.ci/run` runs them with `--ignored` where
/// the tool is installed, and a failure here means it was not.
#[allow(dead_code)]
pub fn require(what: &str, available: bool, how: &str) {
    assert!(available, "this test needs {what}: {how}");
}

/// A crawl made by `dragnet init` from `seeds` with configuration `cfg`, resolving `web`'s hosts
/// through websim's hosts file: where the websim integration tests start. The temporary
/// directory lives as long as the value.
#[allow(dead_code)]
pub struct Crawl {
    /// Keeps the directory alive.
    pub tmp: tempfile::TempDir,
    /// The crawl directory.
    pub dir: dragnet::crawl::CrawlDir,
    /// Its configuration as `init` wrote it.
    pub cfg: dragnet::config::Config,
}

/// See [`Crawl`].
#[allow(dead_code)]
pub fn websim_crawl(
    web: &websim::model::Web,
    seeds: &[String],
    mut cfg: dragnet::config::Config,
) -> Crawl {
    let tmp = tempfile::tempdir().unwrap();
    let hosts = tmp.path().join("websim.hosts");
    std::fs::write(&hosts, websim::cli::hosts_file(web)).unwrap();
    cfg.resolve.hosts_files = vec![hosts];
    crawl_in(tmp, seeds, cfg)
}

/// As [`websim_crawl`], for a configuration that already resolves its hosts (a test's own
/// `Site` on loopback).
#[allow(dead_code)]
pub fn websim_crawl_with_hosts(seeds: &[String], cfg: dragnet::config::Config) -> Crawl {
    crawl_in(tempfile::tempdir().unwrap(), seeds, cfg)
}

fn crawl_in(tmp: tempfile::TempDir, seeds: &[String], mut cfg: dragnet::config::Config) -> Crawl {
    // Only the test's own names resolve: nothing is asked of the system's resolver.
    cfg.resolve.only = true;
    let config_path = tmp.path().join("config.toml");
    std::fs::write(&config_path, cfg.to_toml()).unwrap();
    let seed_file = tmp.path().join("seeds.txt");
    std::fs::write(&seed_file, seeds.join("\n")).unwrap();
    let root = tmp.path().join("crawl");
    let opts = dragnet::ops::InitOptions {
        seeds: seed_file,
        config: Some(config_path),
        partitions: None,
    };
    dragnet::ops::init(&root, &opts, &mut |b| panic!("bad seed {b:?}")).unwrap();
    let dir = dragnet::crawl::CrawlDir::new(&root);
    let cfg = dragnet::config::Config::load(&dir.config_path()).unwrap();
    Crawl { tmp, dir, cfg }
}

/// `[fetch]` for a websim web on loopback with patient timeouts: private (loopback) addresses
/// allowed, no delays of the crawler's own, and timeouts generous enough that a loaded machine
/// does not turn a slow answer into a failed fetch.
#[allow(dead_code)]
pub fn patient_loopback_fetch(f: &mut dragnet::config::FetchSection) {
    f.allow_private_addresses = true;
    f.default_delay_secs = 0.0;
    f.delay_factor = 0.0;
    f.read_timeout_secs = 10.0;
    f.total_timeout_secs = 30.0;
    quick_backoff(f);
}

/// Back-off on 429/5xx scaled to a test web: websim's 503 pages say `Retry-After: 120`, which a
/// crawl obeys up to `max_retry_after_secs`.
#[allow(dead_code)]
pub fn quick_backoff(f: &mut dragnet::config::FetchSection) {
    f.backoff_base_secs = 0.05;
    f.backoff_max_secs = 0.4;
    f.max_retry_after_secs = 0.2;
}

/// The configuration websim crawls in tests start from: `partitions`, `threads` robots,
/// private (loopback) addresses allowed, no delays of the crawler's own (websim's crawl-delays
/// still hold), short timeouts (a web may have a host whose robots.txt never answers: disallow
/// all, retried each cycle until its URLs are given up, each attempt costing a read timeout),
/// and websim's own hosts in scope, so links to `x*.outside.test` are never resolved.
#[allow(dead_code)]
pub fn websim_config(partitions: u32, threads: u32) -> dragnet::config::Config {
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = partitions;
    let f = &mut cfg.fetch;
    f.allow_private_addresses = true;
    f.threads = threads;
    f.default_delay_secs = 0.0;
    f.delay_factor = 0.0;
    f.read_timeout_secs = 2.0;
    f.total_timeout_secs = 5.0;
    quick_backoff(f);
    cfg.scope.allowed_domains = vec!["websim.test".into()];
    cfg
}

/// Every host's `/` of `web` (`http://` for a host that moves to HTTPS): the seeds of a
/// whole-web crawl.
#[allow(dead_code)]
pub fn websim_homes(web: &websim::model::Web) -> Vec<String> {
    (0..web.hosts.len() as u32)
        .map(|h| web.seed_url(h))
        .collect()
}

/// Runs fetch, parse and split of every partition of `cycle`, then every merge: a cycle by hand,
/// stage by stage, up to prioritize.
#[allow(dead_code)]
pub fn stages_until_merge(
    dir: &dragnet::crawl::CrawlDir,
    cfg: &dragnet::config::Config,
    cycle: u32,
) {
    let quiet = dragnet::fetch::FetchOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        ..dragnet::fetch::FetchOptions::default()
    };
    let m = cfg.crawl.partitions;
    for p in 0..m {
        dragnet::fetch::fetch_partition(dir, cfg, cycle, p, &quiet).unwrap();
        dragnet::parse::parse_partition(dir, cfg, cycle, p).unwrap();
        dragnet::split::split_partition(dir, cfg, cycle, p).unwrap();
    }
    for p in 0..m {
        dragnet::merge::merge_partition(dir, cfg, cycle, p).unwrap();
    }
}

/// A websim web of `hosts` x `pages` without hostile hosts (crawl-delays of at most 20 ms),
/// served on loopback: the web of the executor tests.
#[allow(dead_code)]
pub fn small_web(
    seed: u64,
    hosts: u32,
    pages: u32,
) -> (std::sync::Arc<websim::model::Web>, websim::server::Server) {
    websim::server::Server::start_web(
        websim::model::WebConfig {
            seed,
            port: 0,
            listeners: 2,
            hosts,
            pages,
            hostile_every: 0,
            max_crawl_delay: std::time::Duration::from_millis(20),
            ..websim::model::WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap()
}

/// What a crawl to completion of `web` must have fetched (its ground truth, robots.txt aside).
#[allow(dead_code)]
pub fn truth_fetched(web: &websim::model::Web) -> std::collections::BTreeSet<String> {
    truth_fetched_under(web, &websim::truth::Policy::new(web))
}

/// What a crawl of `web` to completion under `policy` (a depth limit, requisites) must have
/// fetched, robots.txt aside.
#[allow(dead_code)]
pub fn truth_fetched_under(
    web: &websim::model::Web,
    policy: &websim::truth::Policy,
) -> std::collections::BTreeSet<String> {
    use websim::truth::{truth, Outcome};
    truth(web, policy)
        .fetched
        .iter()
        .filter(|f| f.outcome != Outcome::Robots && f.status > 0)
        .map(|f| f.url.clone())
        .collect()
}

/// Every fetch result of the crawl's cycles before `cycles` (fetched or not), in cycle order.
#[allow(dead_code)]
pub fn fetch_results(
    dir: &dragnet::crawl::CrawlDir,
    partitions: u32,
    cycles: u32,
) -> Vec<dragnet::records::FetchResult> {
    use dragnet::run::{Cursor, RunReader, Schema};
    let mut out = Vec::new();
    for c in 0..cycles {
        for p in 0..partitions {
            let path = dir.fetched(c, p);
            if !path.exists() {
                continue;
            }
            let mut r = RunReader::open_expect(&path, Schema::FETCHED).unwrap();
            while r.advance().unwrap() {
                out.push(dragnet::records::FetchResult::decode(r.payload()).unwrap());
            }
        }
    }
    out
}

/// The URLs a crawl has fetched (an answer of any status), over every cycle before `cycles`.
#[allow(dead_code)]
pub fn fetched_urls(
    dir: &dragnet::crawl::CrawlDir,
    partitions: u32,
    cycles: u32,
) -> std::collections::BTreeSet<String> {
    fetch_results(dir, partitions, cycles)
        .into_iter()
        .filter(|f| f.status > 0)
        .map(|f| f.url)
        .collect()
}

/// Damages `path` by flipping its middle byte; returns the bytes it held, to repair it with.
#[allow(dead_code)]
pub fn flip_middle_byte(path: &std::path::Path) -> Vec<u8> {
    let good = std::fs::read(path).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    std::fs::write(path, &bad).unwrap();
    good
}

/// Copies the directory tree at `from` to `to` (a crawl directory, to damage the copy).
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), target).unwrap();
        } else if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A URL db record without its timestamps: url, state, depth, score bits, fetches, digest.
#[allow(dead_code)]
pub type Decided = (String, u8, u32, u64, u32, u64);

/// Everything a crawl decided, without timestamps: per partition the seen set and the URL db
/// ([`Decided`] by fingerprint), and the set of fetched URLs. Two crawls of one websim web that
/// end here made the same decisions, whatever was killed or failed on the way.
#[allow(dead_code)]
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub seen: Vec<std::collections::BTreeSet<u64>>,
    pub urldb: Vec<std::collections::BTreeMap<u64, Decided>>,
    pub fetched: std::collections::BTreeSet<String>,
}

/// The [`Outcome`] of the crawl in `dir` (`partitions` partitions) as of its latest cycle.
#[allow(dead_code)]
pub fn outcome(dir: &dragnet::crawl::CrawlDir, partitions: u32) -> Outcome {
    use dragnet::run::{self, Cursor, RunReader, Schema};
    let last = dragnet::crawl::next_cycle(dir, partitions);
    let mut o = Outcome {
        seen: Vec::new(),
        urldb: Vec::new(),
        fetched: std::collections::BTreeSet::new(),
    };
    for p in 0..partitions {
        let (_, seen) = dir.latest_state(p, "seen", last + 1).unwrap();
        let mut r = RunReader::open_expect(&seen, Schema::SEEN).unwrap();
        let mut s = std::collections::BTreeSet::new();
        while r.advance().unwrap() {
            s.insert(run::key_u64(r.key()));
        }
        o.seen.push(s);
        let (_, db) = dir.latest_state(p, "urldb", last + 1).unwrap();
        let mut r = RunReader::open_expect(&db, Schema::URLDB).unwrap();
        let mut m = std::collections::BTreeMap::new();
        while r.advance().unwrap() {
            let u = dragnet::records::UrlRecord::decode(r.payload()).unwrap();
            m.insert(
                run::key_u64(r.key()),
                (
                    u.url,
                    u.state as u8,
                    u.depth,
                    u.score.to_bits(),
                    u.fetches,
                    u.digest,
                ),
            );
        }
        o.urldb.push(m);
    }
    o.fetched = fetched_urls(dir, partitions, last);
    o
}

/// Cycles until the fetch lists are empty (at most `max_cycles`), quietly: how the websim tests
/// crawl a web to its end.
#[allow(dead_code)]
pub fn until_empty(max_cycles: u32) -> dragnet::exec::CycleOptions {
    dragnet::exec::CycleOptions {
        until_empty: true,
        max_cycles,
        progress: dragnet::fetch::ProgressMode::Quiet,
        log: false,
        ..dragnet::exec::CycleOptions::default()
    }
}

/// Exactly `n` cycles, quietly.
#[allow(dead_code)]
pub fn cycles(n: u32) -> dragnet::exec::CycleOptions {
    dragnet::exec::CycleOptions {
        cycles: n,
        until_empty: false,
        ..until_empty(n)
    }
}

/// Runs the `dragnet` binary with `args` to its end: its exit status, stdout and stderr.
#[allow(dead_code)]
pub fn dragnet<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .output()
        .expect("run dragnet")
}

/// [`dragnet`] with `args`, then the crawl directory `dir`.
#[allow(dead_code)]
pub fn dragnet_on(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .arg(dir)
        .output()
        .expect("run dragnet")
}

/// `o` after asserting that its run succeeded (exit 0), with what it said if not.
#[allow(dead_code)]
#[track_caller]
pub fn ok(o: std::process::Output) -> std::process::Output {
    assert!(o.status.success(), "{}", out_text(&o));
    o
}

/// What a finished `dragnet` run said: its exit status, stdout and stderr, for assertion messages.
#[allow(dead_code)]
pub fn out_text(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Serves `site` (a test's own websim `Site`) on 127.0.0.1 at a free port; returns the server
/// and the port.
#[allow(dead_code)]
pub fn serve_site(site: std::sync::Arc<dyn websim::site::Site>) -> (websim::server::Server, u16) {
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server =
        websim::server::Server::start(site, &[any], websim::server::ServerOptions::default())
            .unwrap();
    let port = server.addrs()[0].port();
    (server, port)
}

/// Every file under `dir` with its bytes (a symlink as its target, not followed), sorted: what
/// the tests compare to say a command left a crawl byte for byte as it was.
#[allow(dead_code)]
pub fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let to = std::fs::read_link(e.path()).unwrap();
                out.push((e.path(), to.to_string_lossy().as_bytes().to_vec()));
            } else if ft.is_dir() {
                dirs.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Writes `dir/hosts`, a hosts file that resolves every name of `names` to 127.0.0.1, and
/// returns its path.
#[allow(dead_code)]
pub fn loopback_hosts(dir: &std::path::Path, names: &[String]) -> PathBuf {
    let hosts = dir.join("hosts");
    std::fs::write(
        &hosts,
        names
            .iter()
            .map(|n| format!("127.0.0.1 {n}\n"))
            .collect::<String>(),
    )
    .unwrap();
    hosts
}

/// A websim site where every host's robots.txt allows all and every page starts a 100 KB body
/// and sends one byte a second: a request that will not end for a long time.
#[allow(dead_code)]
pub struct Stalling;

impl websim::site::Site for Stalling {
    fn respond(&self, req: &websim::site::Request) -> websim::site::Response {
        use websim::site::{Body, Response};
        if req.target == "/robots.txt" {
            return Response::new(200, "text/plain", b"User-agent: *\nAllow: /\n".to_vec());
        }
        let mut r = Response::new(200, "text/html", Vec::new());
        r.body = Body::Drip {
            bytes: vec![b'x'; 100_000],
            interval: std::time::Duration::from_secs(1),
        };
        r
    }

    fn min_delay(&self, _host: &str) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}
