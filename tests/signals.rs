//! SIGTERM and SIGINT (issue 30, point 9): a `dragnet cycle` (or a stage run by hand) signalled
//! mid-fetch stops within 2 s, exits 143 (SIGTERM) or 130 (SIGINT), leaves no lock, no
//! temporary and no `.failed` marker, and the next `dragnet cycle` finishes the crawl to
//! websim's ground truth, with a clean politeness audit.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_dragnet");
const M: u32 = 2;

/// Every file and directory under `dir` whose name marks a temporary (`.NAME.tmp.PID@HOST`,
/// sort and index scratch directories), and every `.failed` marker.
fn debris(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut temps, mut failed) = (Vec::new(), Vec::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if name.contains(dragnet::storage::TEMP_MARK) {
                temps.push(path.display().to_string());
            } else if name.ends_with(".failed") {
                failed.push(path.display().to_string());
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    (temps, failed)
}

/// Starts `dragnet ARGS --progress log DIR`, its stderr to `log`.
fn spawn_logged<S: AsRef<std::ffi::OsStr>>(args: &[S], dir: &Path, log: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .args(["--progress", "log"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Waits until `child` is mid-fetch: a WARC file is being written in `warc` (its temporary
/// exists). Fails with `ended()` if the run ends first, and after 120 s.
fn wait_mid_fetch(child: &mut Child, warc: &Path, ended: &dyn Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_dir(warc).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| dragnet::storage::is_temp_name(&e.file_name().to_string_lossy()))
    }) {
        assert!(child.try_wait().unwrap().is_none(), "{}", ended());
        assert!(Instant::now() < deadline, "no fetch started within 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` to `child` and waits for it to end: its exit status and how long it took
/// after the signal. Bounded: a run still going 30 s later is killed and the test fails with
/// `stuck()`, so it never hangs.
fn signal_and_wait(
    child: &mut Child,
    signal: i32,
    stuck: &dyn Fn() -> String,
) -> (ExitStatus, Duration) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let sent = Instant::now();
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if sent.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{}", stuck());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    (status, sent.elapsed())
}

/// Starts `dragnet cycle` (or with `by_hand`, `dragnet fetch` of the partition with the most
/// URLs) on a crawl of a web slow enough to be fetching for seconds, sends `signal` once it is
/// mid-fetch (a WARC file is being written), and checks the stop (module docs); then crawls the
/// web to its end and compares with the truth.
fn stop_mid_fetch(seed: u64, by_hand: bool, signal: i32, code: i32) {
    // 4 hosts x 30 pages, a quarter second between two requests to a host, following on (the
    // default): each partition's first fetch takes about 8 s.
    let (web, server) = common::small_web(seed, 4, 30);
    let mut cfg = common::websim_config(M, 2);
    cfg.fetch.default_delay_secs = 0.25;
    cfg.fetch.read_timeout_secs = 10.0;
    cfg.fetch.total_timeout_secs = 30.0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let dir = c.dir.root().to_path_buf();
    let log = c.tmp.path().join("dragnet.log");
    let args: Vec<String> = if by_hand {
        let listed = |p| {
            dragnet::run::RunReader::open(&c.dir.fetchlist(0, p))
                .unwrap()
                .len()
        };
        let p = (0..M).max_by_key(|&p| listed(p)).unwrap();
        ["fetch", "--cycle", "0", "--partition", &p.to_string()]
            .map(str::to_owned)
            .to_vec()
    } else {
        ["cycle", "--until-empty"].map(str::to_owned).to_vec()
    };
    let mut child = spawn_logged(&args, &dir, &log);
    // Mid-fetch: a WARC file is being written (its temporary exists), a moment after.
    wait_mid_fetch(&mut child, &c.dir.warc_dir(0), &|| {
        format!(
            "the run ended before fetching: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the fetch ended too soon"
    );
    assert!(dir.join("lock").exists(), "the run holds the lock");

    let (status, took) = signal_and_wait(&mut child, signal, &|| {
        format!(
            "still running 30 s after the signal: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    });
    let text = std::fs::read_to_string(&log).unwrap();
    eprintln!("stopped in {took:?}:\n{text}");
    assert!(
        took < Duration::from_secs(2),
        "the stop took {took:?}: {text}"
    );
    assert_eq!(status.code(), Some(code), "{text}");
    let name = if signal == libc::SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    assert!(text.contains(&format!("stopped by {name}")), "{text}");
    assert!(!dir.join("lock").exists(), "the lock was released");
    let (temps, failed) = debris(&dir);
    assert!(temps.is_empty(), "temporaries left: {temps:?}");
    assert!(failed.is_empty(), "a stop is not a failure: {failed:?}");
    assert!(
        !c.dir.done_path(0, dragnet::crawl::Stage::Fetch, 0).exists()
            || !c.dir.done_path(0, dragnet::crawl::Stage::Fetch, 1).exists(),
        "the signal came after the fetch"
    );
    let check = dragnet::ops::check::check_crawl(&c.dir, Some(&c.cfg)).unwrap();
    assert!(
        check.ok() && check.temporaries.is_empty(),
        "{:?}",
        check.damaged
    );

    // The next run resumes as after a kill -9 and finishes the crawl.
    common::ok(
        Command::new(BIN)
            .args(["cycle", "--until-empty", "--progress", "quiet"])
            .arg(&dir)
            .output()
            .unwrap(),
    );
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);
    let got = common::outcome(&c.dir, M).fetched;
    let want = common::truth_fetched(&web);
    let missed: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "missed {missed:?}\nextra {extra:?}"
    );
}

#[test]
fn sigterm_mid_fetch_stops_a_cycle_within_2_s_cleanly_and_the_next_run_finishes_the_crawl() {
    stop_mid_fetch(71, false, libc::SIGTERM, 143);
}

#[test]
fn sigint_mid_fetch_stops_a_cycle_within_2_s_cleanly_and_the_next_run_finishes_the_crawl() {
    stop_mid_fetch(72, false, libc::SIGINT, 130);
}

#[test]
fn sigterm_stops_a_fetch_run_by_hand_the_same_way() {
    stop_mid_fetch(73, true, libc::SIGTERM, 143);
}

/// A stop that cannot end by itself (every worker waits on a server that drips a byte a
/// second): cut short by the watchdog, still within 2 s, still without temporaries or lock.
#[test]
fn a_stop_stuck_in_requests_is_cut_short_within_2_s_without_debris() {
    let (server, port) = common::serve_site(std::sync::Arc::new(common::Stalling));
    let scratch = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..4).map(|i| format!("h{i}.stall.test")).collect();
    let hosts = common::loopback_hosts(scratch.path(), &names);
    let seeds: Vec<String> = names
        .iter()
        .map(|n| format!("http://{n}:{port}/"))
        .collect();
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = 1;
    cfg.resolve.hosts_files = vec![hosts];
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.threads = 4;
    cfg.fetch.per_ip_connections = 8;
    cfg.fetch.read_timeout_secs = 60.0;
    cfg.fetch.total_timeout_secs = 120.0;
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let dir = c.dir.root().to_path_buf();
    let log = c.tmp.path().join("dragnet.log");
    let mut child = spawn_logged(&["cycle"], &dir, &log);
    // The robots.txt exchanges are in the WARC file being written; the pages are dripping.
    wait_mid_fetch(&mut child, &c.dir.warc_dir(0), &|| {
        "the run ended".to_string()
    });
    std::thread::sleep(Duration::from_millis(500));
    let (status, took) = signal_and_wait(&mut child, libc::SIGTERM, &|| {
        "still running 30 s after SIGTERM".to_string()
    });
    let text = std::fs::read_to_string(&log).unwrap();
    eprintln!("stopped in {took:?}:\n{text}");
    assert!(
        took < Duration::from_secs(2),
        "the stop took {took:?}: {text}"
    );
    assert_eq!(status.code(), Some(143), "{text}");
    assert!(text.contains("still stopping after"), "{text}");
    assert!(!dir.join("lock").exists(), "the lock was released");
    let (temps, failed) = debris(&dir);
    assert!(temps.is_empty(), "temporaries left: {temps:?}");
    assert!(failed.is_empty(), "a stop is not a failure: {failed:?}");
    server.stop();
}
