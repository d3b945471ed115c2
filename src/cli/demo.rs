//! `dragnet demo` (a command of the binary, not the library): a real crawl of a synthetic web on loopback, end to end, in about a minute.
//!
//! It starts websim in this process (a few hundred hosts on 127.0.x.y addresses, some of them
//! hostile: slow drips, endless bodies, huge headers, gzip bombs, resets, a crawler trap), creates
//! a crawl directory whose `[resolve]` table points the web's host names at those addresses and
//! which allows private addresses (a real crawl refuses them), runs `dragnet cycle` until the
//! frontier is empty, and prints a summary checked against websim's ground truth: what a perfect,
//! polite crawler fetches from this web, and the server's own audit of politeness (requests too
//! soon, concurrent requests to one host, fetches before robots.txt or disallowed by it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use dragnet::config::Config;
use dragnet::crawl::report::counter;
use dragnet::crawl::{CrawlDir, Stage};
use dragnet::error::{Error, Result};
use dragnet::exec::{run_cycles, CycleOptions, CycleReport};
use dragnet::ops::InitOptions;
use dragnet::records::FetchResult;
use dragnet::run::{Cursor, RunReader, Schema};
use dragnet::util::plural;

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

/// What the demo found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DemoSummary {
    /// The crawl directory.
    pub dir: PathBuf,
    /// Where the WARC files are.
    pub warc_dirs: Vec<PathBuf>,
    /// Cycles run.
    pub cycles: u32,
    /// Fetches: results of URLs a request went out for (robots.txt excluded), in every cycle (a
    /// URL retried in a later cycle counts again).
    pub fetches: u64,
    /// The fetches by HTTP status class (`2xx` .. `5xx`), and `no_answer` for those that got no
    /// HTTP answer (timeouts, resets, cut-off bodies): they add up to `fetches`.
    pub pages_by_status: BTreeMap<String, u64>,
    /// Fetch-list URLs no request went out for, by reason (`robots`, `deferred`, ...).
    pub not_fetched: BTreeMap<String, u64>,
    /// New URLs discovered per cycle.
    pub new_per_cycle: Vec<u64>,
    /// Fetches per cycle (as `fetches`, which they add up to).
    pub fetched_per_cycle: Vec<u64>,
    /// CLOCK cache hits / lookups over all cycles.
    pub cache_hit_rate: f64,
    /// Seconds per stage in pipeline order, summed over cycles and over partitions (partitions
    /// run at the same time, so a sum can exceed the wall-clock time).
    pub stage_seconds: Vec<(String, f64)>,
    /// Wall-clock seconds of all cycles.
    pub seconds: f64,
    /// `fetches` per second of wall-clock time over the whole run.
    pub pages_per_second: f64,
    /// URLs the ground truth says a perfect crawler fetches (robots.txt excluded).
    pub should_fetch: u64,
    /// Of those, fetched.
    pub fetched_of_should: u64,
    /// URLs fetched that the truth does not fetch (robots.txt excluded).
    pub fetched_not_in_truth: u64,
    /// A few of those, for a look.
    pub examples_not_in_truth: Vec<String>,
    /// A few should-fetch URLs that were not fetched.
    pub examples_missed: Vec<String>,
    /// Of the missed URLs, those on hostile hosts (cut off by `[fetch] max_host_failures`
    /// failures in a row, where the ground truth tries every URL once).
    pub missed_on_hostile: u64,
    /// Missed URLs per host (the hosts with the most).
    pub missed_by_host: Vec<(String, u64)>,
    /// URLs beyond the truth per host (the hosts with the most).
    pub beyond_by_host: Vec<(String, u64)>,
    /// Fetches of URLs robots.txt disallows (websim's audit).
    pub disallowed_fetched: u64,
    /// All politeness violations websim saw (too soon, concurrent, before robots, disallowed).
    pub politeness_violations: u64,
    /// A few of them.
    pub violation_examples: Vec<String>,
    /// The same, by kind.
    pub violations_by_kind: BTreeMap<String, u64>,
    /// Why the run stopped.
    pub stopped: String,
}

/// Requests in flight at once to one of the demo web's 4 addresses (each serves 75 hosts).
const DEMO_PER_IP: u32 = 8;

/// Runs the demo.
pub fn run_demo(opts: &DemoOptions) -> Result<DemoSummary> {
    use websim::model::WebConfig;
    use websim::server::{Server, ServerOptions};
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
        drip_interval: Duration::from_millis(500),
        bomb_bytes: 256 << 20,
        ..WebConfig::default()
    };
    // The crawl fetches each URL about once: websim's answer cache would only hold memory.
    let server_opts = ServerOptions {
        cache_bytes: 0,
        ..ServerOptions::default()
    };
    let (web, server) = Server::start_web(web_cfg, server_opts).map_err(|e| Error::External {
        program: "websim".into(),
        message: format!("cannot start websim on loopback: {e}"),
    })?;

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
    let hosts_path = work.join("websim.hosts");
    std::fs::write(&hosts_path, websim::cli::hosts_file(&web))
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
    // stall), and each of its failures costs the timeout plus as long again in back-off.
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
    // Half the partitions fetch at a time: websim serves from this process, on the same cores.
    cfg.cycle.fetch_partitions = (opts.partitions / 2).max(1);
    let config_path = work.join("crawl.toml");
    std::fs::write(&config_path, cfg.to_toml()).map_err(|e| Error::io("write", &config_path, e))?;
    let seeds: Vec<String> = (0..web.hosts.len() as u32)
        .map(|h| web.seed_url(h))
        .collect();
    let seeds_path = work.join("seeds.txt");
    std::fs::write(&seeds_path, seeds.join("\n"))
        .map_err(|e| Error::io("write", &seeds_path, e))?;
    dragnet::ops::init(
        &root,
        &InitOptions {
            seeds: seeds_path,
            config: Some(config_path),
            partitions: None,
        },
        &mut |b| eprintln!("demo: bad seed {b:?}"),
    )?;
    let crawl = CrawlDir::new(&root);
    let cfg = Config::load(&crawl.config_path())?;
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
    let report = run_cycles(
        &crawl,
        &cfg,
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
    );
    let audit = server.stop();
    let report = report?;
    let seconds = started.elapsed().as_secs_f64();

    let mut policy = websim::truth::Policy::new(&web);
    policy.max_depth = opts.max_depth;
    let truth = websim::truth::truth(&web, &policy);
    let should: BTreeSet<&str> = truth
        .fetched
        .iter()
        .filter(|f| f.outcome != websim::truth::Outcome::Robots)
        .map(|f| f.url.as_str())
        .collect();
    let mut s = summarize(&crawl, &report)?;
    let fetched = tally_fetches(&crawl, &mut s, cfg.crawl.partitions)?;
    s.seconds = seconds;
    s.pages_per_second = s.fetches as f64 / seconds.max(1e-9);
    s.should_fetch = should.len() as u64;
    s.fetched_of_should = should.iter().filter(|u| fetched.contains(**u)).count() as u64;
    let extra: Vec<&String> = fetched
        .iter()
        .filter(|u| !should.contains(u.as_str()))
        .collect();
    s.fetched_not_in_truth = extra.len() as u64;
    s.examples_not_in_truth = extra.iter().take(5).map(|u| u.to_string()).collect();
    s.examples_missed = should
        .iter()
        .filter(|u| !fetched.contains(**u))
        .take(5)
        .map(|u| u.to_string())
        .collect();
    let hostile: BTreeSet<&str> = web
        .hosts
        .iter()
        .filter(|h| h.hostile.is_some())
        .map(|h| h.name.as_str())
        .collect();
    s.missed_on_hostile = should
        .iter()
        .filter(|u| !fetched.contains(**u) && hostile.contains(dragnet::keys::host_of(u)))
        .count() as u64;
    s.missed_by_host = by_host(should.iter().copied().filter(|u| !fetched.contains(*u)));
    s.beyond_by_host = by_host(extra.iter().map(|u| u.as_str()));
    s.disallowed_fetched = audit.counts.disallowed;
    s.politeness_violations = audit.counts.total();
    let v = &audit.counts;
    for (k, n) in [
        ("too_soon", v.too_soon),
        ("concurrent", v.concurrent),
        ("before_robots", v.before_robots),
        ("disallowed", v.disallowed),
        ("ignored_retry_after", v.ignored_retry_after),
        ("ip_concurrent", v.ip_concurrent),
        ("ip_too_soon", v.ip_too_soon),
    ] {
        s.violations_by_kind.insert(k.into(), n);
    }
    for e in audit.violations.iter().take(5) {
        s.violation_examples.push(format!("{e:?}"));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(s)
}

/// Counts per host, the five hosts with the most first.
fn by_host<'a>(urls: impl Iterator<Item = &'a str>) -> Vec<(String, u64)> {
    let mut m: BTreeMap<&str, u64> = BTreeMap::new();
    for u in urls {
        *m.entry(dragnet::keys::host_of(u)).or_insert(0) += 1;
    }
    let mut v: Vec<(String, u64)> = m.into_iter().map(|(h, n)| (h.to_owned(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(5);
    v
}

/// Reads the fetch results of cycles `0..s.cycles` into `s` (fetches, by status, not fetched)
/// and returns the URLs fetched (robots.txt excluded).
fn tally_fetches(crawl: &CrawlDir, s: &mut DemoSummary, m: u32) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    s.fetched_per_cycle = vec![0; s.cycles as usize];
    for c in 0..s.cycles {
        for p in 0..m {
            let path = crawl.fetched(c, p);
            if !path.exists() {
                continue;
            }
            let mut r = RunReader::open_expect(&path, Schema::FETCHED)?;
            while r.advance()? {
                let f = FetchResult::decode(r.payload())
                    .map_err(|e| Error::corrupt(&path, 0, e.to_string()))?;
                // Attempted: a request went out (not refused by robots or the guard, not left
                // for a later cycle, not refused because the origin's certificate failed when
                // its robots.txt was fetched: a TLS kind without a fetch time).
                let refused = matches!(
                    f.error.as_str(),
                    "deferred"
                        | "robots"
                        | "ssrf"
                        | "url"
                        | "robots_unreachable"
                        | "host_failing"
                        | "out_of_scope"
                ) || (f.fetched_at_ms == 0
                    && dragnet::records::is_tls_kind(&f.error));
                let attempted = !refused;
                if attempted {
                    s.fetches += 1;
                    s.fetched_per_cycle[c as usize] += 1;
                    let class = match f.status {
                        0 => counter::NO_ANSWER.to_owned(),
                        st => format!("{}xx", st / 100),
                    };
                    *s.pages_by_status.entry(class).or_insert(0) += 1;
                    out.insert(f.url);
                } else {
                    *s.not_fetched.entry(f.error).or_insert(0) += 1;
                }
            }
        }
    }
    Ok(out)
}

fn summarize(crawl: &CrawlDir, report: &CycleReport) -> Result<DemoSummary> {
    let mut s = DemoSummary {
        dir: crawl.root().to_path_buf(),
        stopped: report.stopped.clone(),
        ..DemoSummary::default()
    };
    let (mut hits, mut lookups) = (0u64, 0u64);
    for c in &report.cycles {
        s.cycles = s.cycles.max(c.cycle + 1);
        let count = |stage: &str, k: &str| {
            c.stages
                .get(stage)
                .and_then(|r| r.counts.get(k))
                .copied()
                .unwrap_or(0)
        };
        s.new_per_cycle.push(count("merge", counter::NEW));
        hits += count("split", counter::CACHE_HITS);
        lookups += count("split", counter::CACHE_HITS) + count("split", counter::CACHE_MISSES);
        for stage in Stage::CYCLE {
            let secs = c.stages.get(stage.name()).map_or(0.0, |r| r.seconds);
            match s.stage_seconds.iter_mut().find(|(n, _)| n == stage.name()) {
                Some((_, t)) => *t += secs,
                None => s.stage_seconds.push((stage.name().to_owned(), secs)),
            }
        }
        let warcs = crawl.warc_dir(c.cycle);
        if warcs.exists() {
            s.warc_dirs.push(warcs);
        }
    }
    s.cache_hit_rate = hits as f64 / lookups.max(1) as f64;
    Ok(s)
}

/// `name n` pairs joined with commas.
fn pairs<'a>(v: impl IntoIterator<Item = (&'a String, &'a u64)>) -> String {
    v.into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary as the demo prints it.
pub fn render(s: &DemoSummary) -> String {
    let mut o = String::new();
    let mut line = |t: String| {
        o.push_str(&t);
        o.push('\n');
    };
    line(format!(
        "\ndragnet demo: {} in {:.1}s ({})",
        plural(s.cycles.into(), "cycle", "cycles"),
        s.seconds,
        s.stopped
    ));
    line(format!(
        "  fetched      {} (requests sent, robots.txt excluded), {:.0} per second over the whole crawl",
        plural(s.fetches, "URL", "URLs"),
        s.pages_per_second
    ));
    line(format!("  by status    {}", pairs(&s.pages_by_status)));
    if !s.not_fetched.is_empty() {
        line(format!(
            "  not fetched  {} (no request sent: refused by robots.txt or a limit, or left for a later cycle)",
            pairs(&s.not_fetched)
        ));
    }
    line(format!("  per cycle    fetched {:?}", s.fetched_per_cycle));
    line(format!("               new URLs {:?}", s.new_per_cycle));
    line(format!(
        "  cache        {:.1}% of link targets were hits in the CLOCK cache",
        100.0 * s.cache_hit_rate
    ));
    line(format!(
        "  stage times  {} (summed over cycles and partitions, which run side by side)",
        s.stage_seconds
            .iter()
            .map(|(k, v)| format!("{k} {v:.1}s"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    line(format!(
        "  coverage     {} of the {} URLs websim's ground truth fetches ({:.1}%); {} fetched beyond it",
        s.fetched_of_should,
        s.should_fetch,
        100.0 * s.fetched_of_should as f64 / s.should_fetch.max(1) as f64,
        s.fetched_not_in_truth
    ));
    let hosts = |v: &[(String, u64)]| {
        v.iter()
            .map(|(h, n)| format!("{h} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missed = s.should_fetch - s.fetched_of_should;
    if missed > 0 {
        line(format!(
            "               {} of the {missed} missed {} on hostile hosts, which dragnet stops \
             trying after [fetch] max_host_failures failures in a row (the truth tries every URL)",
            s.missed_on_hostile,
            if s.missed_on_hostile == 1 {
                "is"
            } else {
                "are"
            }
        ));
    }
    if !s.missed_by_host.is_empty() {
        line(format!(
            "               missed, by host: {}",
            hosts(&s.missed_by_host)
        ));
    }
    if !s.beyond_by_host.is_empty() {
        line(format!(
            "               beyond, by host: {}",
            hosts(&s.beyond_by_host)
        ));
    }
    if let Some(m) = s.examples_missed.first() {
        line(format!("               e.g. missed {m}"));
    }
    if let Some(b) = s.examples_not_in_truth.first() {
        line(format!("               e.g. beyond {b}"));
    }
    line(format!(
        "  politeness   {} fetched, {} in websim's audit",
        plural(s.disallowed_fetched, "disallowed URL", "disallowed URLs"),
        plural(s.politeness_violations, "violation", "violations")
    ));
    if s.politeness_violations > 0 {
        line(format!(
            "               by kind: {}",
            pairs(s.violations_by_kind.iter().filter(|(_, n)| **n > 0))
        ));
        for e in &s.violation_examples {
            line(format!("               {e}"));
        }
    }
    line(format!("  crawl        {}", s.dir.display()));
    if let (Some(first), Some(last)) = (s.warc_dirs.first(), s.warc_dirs.last()) {
        line(format!(
            "  WARC files   {} .. {}",
            first.display(),
            last.display()
        ));
    }
    let index = dragnet::ops::index::crawl_index(&dragnet::crawl::CrawlDir::new(&s.dir));
    if index.exists() {
        line(format!(
            "  CDXJ index   {} (with archive/: a pywb collection)",
            index.display()
        ));
    }
    let report = dragnet::ops::report::default_dir(&dragnet::crawl::CrawlDir::new(&s.dir))
        .join("index.html");
    if report.exists() {
        line(format!(
            "  report       {} (charts and CSV files; dragnet report remakes it)",
            report.display()
        ));
    }
    line(format!("  next         dragnet status {}", s.dir.display()));
    o
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
