//! Scope rules an operator sets (SURT prefixes, regexes, file extensions) hold for seeds, for
//! discovered links and, after a configuration change, for the URLs already in the frontier;
//! `dragnet inject` adds seeds between cycles, deduplicated by the normal merge.

use crate::common;

use std::collections::BTreeMap;

use dragnet::config::Config;
use dragnet::crawl::CrawlDir;
use dragnet::exec::{run_cycles, CycleOptions};

const M: u32 = 2;

fn until_empty() -> CycleOptions {
    common::until_empty(30)
}

fn one_cycle() -> CycleOptions {
    common::until_empty(1)
}

fn denied(url: &str) -> bool {
    url.ends_with(".pdf") || url.contains("/shop/") || url.contains("://h0001.websim.test")
}

fn save(c: &common::Crawl, cfg: &Config) {
    std::fs::write(c.dir.config_path(), cfg.to_toml()).unwrap();
}

#[test]
fn rules_hold_for_seeds_links_and_the_frontier_after_a_change() {
    let (web, server) = common::small_web(61, 6, 30);
    let c = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(M, 4),
    );
    // Cycle 0 with the scope of the crawl's start: its links fill the frontier.
    run_cycles(&c.dir, &c.cfg, &one_cycle()).unwrap();
    // The operator adds rules: a SURT prefix (pywb's form, any port), a regex, an extension.
    let mut cfg = Config::load(&c.dir.config_path()).unwrap();
    cfg.scope.deny_surt_prefixes = vec!["test,websim,h0001".into()];
    cfg.scope.deny_regex = vec!["/shop/".into()];
    cfg.scope.deny_extensions = vec!["PDF".into()];
    save(&c, &cfg);
    let cfg = Config::load(&c.dir.config_path()).unwrap();
    let r = run_cycles(&c.dir, &cfg, &until_empty()).unwrap();
    assert!(r.complete(), "{r:?}");
    assert_eq!(server.stop().counts.total(), 0);

    let cycles = dragnet::crawl::next_cycle(&c.dir, M);
    let mut refused = 0;
    for f in common::fetch_results(&c.dir, M, cycles)
        .into_iter()
        .filter(|f| !f.url.ends_with("/robots.txt"))
    {
        if f.error == "out_of_scope" {
            assert!(denied(&f.url), "{} refused", f.url);
            refused += 1;
        }
    }
    assert!(refused > 0, "the frontier held URLs the new rules refuse");
    // Nothing the rules deny was fetched after cycle 0.
    let before = common::fetched_urls(&c.dir, M, 1);
    let after = common::fetched_urls(&c.dir, M, cycles);
    let late: Vec<_> = after.difference(&before).filter(|u| denied(u)).collect();
    assert!(late.is_empty(), "{late:?}");

    // Seeds the rules deny are skipped at init, each with its reason.
    let tmp = tempfile::tempdir().unwrap();
    let seeds = tmp.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        "http://a.websim.test/shop/x\nhttp://a.websim.test/ok\n",
    )
    .unwrap();
    let conf = tmp.path().join("crawl.toml");
    std::fs::write(&conf, cfg.to_toml()).unwrap();
    let mut bad = Vec::new();
    let opts = dragnet::ops::InitOptions {
        seeds,
        config: Some(conf),
        partitions: None,
    };
    let rep =
        dragnet::ops::init(&tmp.path().join("c"), &opts, &mut |b| bad.push(b.clone())).unwrap();
    assert_eq!(rep.seeds, 1);
    assert_eq!(bad.len(), 1);
    assert!(bad[0].error.contains("denied_regex"), "{:?}", bad[0]);
}

#[test]
fn inject_adds_seeds_between_cycles_and_the_merge_deduplicates_them() {
    let (web, server) = common::small_web(62, 8, 10);
    let homes = common::websim_homes(&web);
    let mut cfg = common::websim_config(M, 4);
    // Each host a world of its own: only seeds and injections reach the others.
    cfg.scope.allow_regex = homes.iter().map(|h| regex_prefix(h)).take(3).collect();
    let c = common::websim_crawl(&web, &homes[..3], cfg);
    run_cycles(&c.dir, &c.cfg, &one_cycle()).unwrap();

    // Widen the scope to every host, then inject homes of hosts 3.. and one known URL again.
    let mut cfg = Config::load(&c.dir.config_path()).unwrap();
    cfg.scope.allow_regex.clear();
    save(&c, &cfg);
    let seeds = c.tmp.path().join("more.txt");
    let mut lines: Vec<String> = homes[3..].to_vec();
    lines.push(homes[0].clone());
    lines.push("not a url".into());
    std::fs::write(&seeds, lines.join("\n")).unwrap();
    let mut bad = 0;
    let r = dragnet::ops::inject(c.dir.root(), &seeds, 2.0, &mut |_| bad += 1).unwrap();
    assert_eq!(
        (r.cycle, r.seeds, r.bad, bad),
        (1, homes.len() as u64 - 2, 1, 1)
    );
    assert!(!r.files.is_empty());

    let cfg = Config::load(&c.dir.config_path()).unwrap();
    run_cycles(&c.dir, &cfg, &one_cycle()).unwrap();
    // The merge of cycle 1 read the injected runs.
    let inputs: Vec<String> = (0..M)
        .flat_map(|p| {
            dragnet::crawl::DoneMarker::read(&c.dir.done_path(1, dragnet::crawl::Stage::Merge, p))
                .unwrap()
                .unwrap()
                .inputs
                .into_iter()
                .map(|i| i.path)
        })
        .collect();
    assert!(inputs.iter().any(|i| i.contains("inject-")), "{inputs:?}");
    let done = run_cycles(&c.dir, &cfg, &until_empty()).unwrap();
    assert!(done.complete(), "{done:?}");
    assert_eq!(server.stop().counts.total(), 0);
    // Every host was crawled to the truth of the whole web, and the known home only once.
    let cycles = dragnet::crawl::next_cycle(&c.dir, M);
    assert_eq!(
        common::fetched_urls(&c.dir, M, cycles),
        common::truth_fetched(&web)
    );
    let mut times: BTreeMap<String, u32> = BTreeMap::new();
    for f in common::fetch_results(&c.dir, M, cycles)
        .into_iter()
        .filter(|f| f.status > 0)
    {
        *times.entry(f.url).or_default() += 1;
    }
    assert_eq!(times[&homes[0]], 1);
    assert_eq!(times[&homes[5]], 1);
    // Injected runs are files like any other of the crawl: `check crawl` finds nothing wrong.
    let check = dragnet::ops::check::check_crawl(&c.dir, Some(&cfg)).unwrap();
    assert!(check.ok(), "{check:?}");
}

/// A regex matching the URLs of `home`'s host.
fn regex_prefix(home: &str) -> String {
    let origin = home.trim_end_matches('/');
    format!("^{}/", origin.replace('.', r"\."))
}

/// What one `dragnet` run did: its exit code, its stderr, and its own peak resident memory in
/// KiB (`wait4`'s rusage of that child alone, not of the other tests' children). A run still
/// going after `limit` is killed (no exit code).
fn run_measured(
    args: &[&std::ffi::OsStr],
    limit: std::time::Duration,
) -> (Option<i32>, String, i64) {
    use std::io::Read;
    // Reaped by `wait4` below, which gives its rusage (std's `wait` does not).
    #[allow(clippy::zombie_processes)]
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(limit).is_err() {
            // SAFETY: `pid` is our child, not yet reaped (the waiter has not said so).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for the child it reaps.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let _ = done.send(());
    watchdog.join().unwrap();
    assert_eq!(reaped, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, err, usage.ru_maxrss)
}

/// Issue 30, point 5: seed and inject files are read with a bounded line reader. A line of
/// 50 MB without a newline is a bad line named by file and number, skipped (exit 1) with the
/// lines around it read, in the memory of a normal seed file; `/dev/zero` given to `inject`
/// ends at once with an error naming the line (exit 2), injecting nothing; a normal seed file
/// still works.
#[test]
fn seed_and_inject_files_are_read_in_bounded_memory() {
    let t = tempfile::tempdir().unwrap();
    let small = t.path().join("small.txt");
    std::fs::write(&small, "http://a.example/\nhttp://b.example/\n").unwrap();
    let big = t.path().join("big.txt");
    write_a_50_mb_line(&big);
    let (code, err, small_rss) = init_measured(&small, &t.path().join("a"));
    assert_eq!(code, Some(0), "{err}");
    let dir = dragnet::crawl::CrawlDir::new(t.path().join("b"));
    check_init_skips_the_long_line(&big, &dir, small_rss);
    check_inject_of_dev_zero_gives_up_at_once(&dir, small_rss);
    // The same file given to inject: the two good seeds, the long line reported.
    let (code, err, _) = run_measured(
        &[
            &os("inject"),
            &os("--seeds"),
            big.as_os_str(),
            dir.root().as_os_str(),
        ],
        LIMIT,
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("big.txt:2: skipped seed"), "{err}");
}

/// How long a measured run may take.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

fn os(s: &str) -> std::ffi::OsString {
    std::ffi::OsString::from(s)
}

/// A seed file at `path`: a good seed, a line of 50 MB without a newline until its end, and
/// another good seed.
fn write_a_50_mb_line(path: &std::path::Path) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"http://a.example/\n").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..50 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\nhttp://b.example/\n").unwrap();
    f.flush().unwrap();
}

/// `dragnet init --partitions 1 --seeds SEEDS DIR`, measured.
fn init_measured(seeds: &std::path::Path, dir: &std::path::Path) -> (Option<i32>, String, i64) {
    run_measured(
        &[
            &os("init"),
            &os("--partitions"),
            &os("1"),
            &os("--seeds"),
            seeds.as_os_str(),
            dir.as_os_str(),
        ],
        LIMIT,
    )
}

/// `init` of the crawl `dir` from `big` skips its long line, naming it, lists the good seeds
/// around it, and peaks in about the memory (`small_rss`) of a normal seed file.
fn check_init_skips_the_long_line(big: &std::path::Path, dir: &CrawlDir, small_rss: i64) {
    let (code, err, big_rss) = init_measured(big, dir.root());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("big.txt:2: skipped seed")
            && err.contains("52428800 bytes long, over the limit of 8192 bytes a line"),
        "{err}"
    );
    let seeds = {
        use dragnet::run::{Cursor, RunReader, Schema};
        let mut r = RunReader::open_expect(&dir.fetchlist(0, 0), Schema::FETCHLIST).unwrap();
        let mut urls = Vec::new();
        while r.advance().unwrap() {
            urls.push(
                dragnet::records::FetchItem::decode(r.payload())
                    .unwrap()
                    .url,
            );
        }
        urls.sort();
        urls
    };
    assert_eq!(seeds, ["http://a.example/", "http://b.example/"]);
    // Without the bound, the line alone costs 50 MB or more on top.
    assert!(
        big_rss < small_rss + (16 << 10),
        "peak {big_rss} KiB with the 50 MB line, {small_rss} KiB without"
    );
}

/// Every file under `root` with its bytes, sorted.
fn files(root: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for p in std::fs::read_dir(&d).unwrap().flatten().map(|e| e.path()) {
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// /dev/zero: no line ends; inject into the crawl `dir` gives up at once, says where, peaks in
/// about the memory (`small_rss`) of a normal init, and adds nothing.
fn check_inject_of_dev_zero_gives_up_at_once(dir: &CrawlDir, small_rss: i64) {
    let before = files(dir.root());
    let started = std::time::Instant::now();
    let (code, err, zero_rss) = run_measured(
        &[
            &os("inject"),
            &os("--seeds"),
            &os("/dev/zero"),
            dir.root().as_os_str(),
        ],
        LIMIT,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("line 1 has no end of line"),
        "{err}"
    );
    assert!(started.elapsed() < LIMIT);
    assert!(
        zero_rss < small_rss + (16 << 10),
        "peak {zero_rss} KiB reading /dev/zero, {small_rss} KiB for a normal init"
    );
    assert!(
        before == files(dir.root()),
        "inject of /dev/zero changed the crawl"
    );
}
