//! `pipeline/dragnet-cron.sh`, the cron wrapper: run with bash against the built binary.
//!
//! What cron relies on: the default command is one cycle; exit codes pass through; a second run
//! while one holds the lock exits 5 with an "already running" line; after a run is killed
//! (kill -9), the next one takes over its lock and resumes the crawl, with no person involved.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dragnet::crawl::LockInfo;

const BIN: &str = env!("CARGO_BIN_EXE_dragnet");

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline/dragnet-cron.sh")
}

/// Runs the wrapper on `dir` with `args` (the wrapped subcommand).
fn wrapper(dir: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .arg(dir)
        .args(args)
        .env("DRAGNET", BIN)
        .output()
        .expect("bash runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The wrapper's own log lines.
fn log_lines(out: &Output) -> Vec<String> {
    text(out)
        .lines()
        .filter(|l| l.contains(" dragnet-cron["))
        .map(str::to_owned)
        .collect()
}

/// A crawl made with `dragnet init` (2 seeds, 4 partitions) in a new temporary directory.
fn crawl() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let seeds = t.path().join("seeds.txt");
    std::fs::write(&seeds, "http://a.example/\nhttp://b.example/\n").unwrap();
    let dir = t.path().join("crawl");
    let out = Command::new(BIN)
        .args(["init", "--partitions", "4", "--seeds"])
        .arg(&seeds)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    (t, dir)
}

/// Writes the lock file a run that died on this host leaves: its record, no OS lock.
fn dead_lock(dir: &Path, pid: u32) {
    let info = LockInfo {
        pid,
        host: dragnet::util::hostname(),
        started: "2026-01-01T00:00:00Z".into(),
        command: "cycle".into(),
    };
    std::fs::write(dir.join("lock"), serde_json::to_vec(&info).unwrap()).unwrap();
}

#[test]
fn the_default_command_is_one_cycle() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("no-such-crawl");
    let out = wrapper(&dir, &[]);
    let lines = log_lines(&out);
    let want = format!("start: {BIN} cycle {}", dir.display());
    assert!(lines[0].ends_with(&want), "{lines:?}");
    // No crawl there: dragnet's exit code passes through, explained on the last line.
    let code = out.status.code().unwrap();
    assert!(code == 2 || code == 3, "{}", text(&out));
    assert!(
        lines.last().unwrap().contains(&format!("(exit {code})")),
        "{lines:?}"
    );
}

#[test]
fn success_passes_through_with_the_output() {
    let (_t, dir) = crawl();
    let out = wrapper(&dir, &["status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // stdout is dragnet's (the JSON), the log lines are on stdout too, after it.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"partitions\": 4"), "{stdout}");
    let lines = log_lines(&out);
    assert!(lines.last().unwrap().ends_with(": done"), "{lines:?}");
}

#[test]
fn a_run_while_another_holds_the_lock_says_already_running() {
    let (_t, dir) = crawl();
    // This test process holds the lock, as a running cycle does.
    let held = dragnet::crawl::CrawlLock::acquire(&dir, "cycle").unwrap();
    let out = wrapper(&dir, &[]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let lines = log_lines(&out);
    let last = lines.last().unwrap();
    assert!(last.contains("busy (exit 5)"), "{lines:?}");
    assert!(text(&out).contains("already running"), "{}", text(&out));
    assert!(last.contains(&dir.display().to_string()), "{last}");
    // dragnet's own message (who holds it) is in the log too, and the lock is untouched.
    assert!(text(&out).contains(&format!("pid {}", std::process::id())));
    assert_eq!(
        dragnet::crawl::read_lock(&dir).unwrap().as_ref(),
        Some(held.info())
    );
}

#[test]
fn a_dead_runs_lock_is_reported_as_taken_over_by_the_next_run() {
    let (_t, dir) = crawl();
    // Whatever the dead run's pid is now: gone, or reused by a live process (this one).
    for pid in [4_194_304 + 7, std::process::id()] {
        dead_lock(&dir, pid);
        let out = wrapper(&dir, &["status"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains("takes it over"), "{}", text(&out));
        assert!(dir.join("lock").exists(), "status only reports");
        // The next run that needs the lock takes it over (the library call `cycle` makes).
        let l = dragnet::crawl::CrawlLock::acquire(&dir, "cycle").unwrap();
        assert!(l.took_over().unwrap().contains(&format!("pid {pid}")));
    }
}

#[test]
fn after_kill_9_the_cron_wrapper_resumes_the_crawl_by_itself() {
    let (web, _server) = crate::common::small_web(31, 6, 20);
    let cfg = crate::common::websim_config(3, 2);
    let c = crate::common::websim_crawl(&web, &crate::common::websim_homes(&web), cfg);
    let dir = c.dir.root().to_path_buf();
    // Kill -9 a cycle as soon as it holds the lock (the lock file appears only complete and
    // locked: it is hard-linked into place), so the kill always lands mid-run however fast the
    // machine crawls this web.
    let mut killed = 0;
    for _attempt in 0..3 {
        let mut child = Command::new(BIN)
            .args(["cycle", "--until-empty", "--progress", "quiet"])
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !dir.join("lock").exists()
            && child.try_wait().unwrap().is_none()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL: no destructor runs, the lock file stays
            child.wait().unwrap();
            if dir.join("lock").exists() {
                killed += 1;
                break;
            }
        }
    }
    assert_eq!(killed, 1, "no run was killed while holding the lock");
    // The nightly job, as cron runs it: no unlock, no person. It takes the lock over and goes on.
    let out = wrapper(&dir, &["cycle", "--until-empty", "--progress", "log"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("took over the lock"), "{}", text(&out));
    assert!(!dir.join("lock").exists());
    // And the crawl is finished: nothing left to fetch.
    let out = wrapper(&dir, &["cycle", "--until-empty"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("empty"), "{}", text(&out));
}
