//! `pipeline/dragnet-cron.sh`, the cron wrapper: run with bash against the built binary.
//!
//! What cron relies on: the default command is one cycle; exit codes pass through; a second run
//! while one holds the lock exits 2 with an "already running" line; a stale lock is reported with
//! the command that clears it and is left in place.

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

/// Writes the crawl's lock as held by `pid` on this host.
fn hold_lock(dir: &Path, pid: u32) {
    let info = LockInfo {
        pid,
        host: dragnet::util::hostname(),
        started: "2026-01-01T00:00:00Z".into(),
        command: "cycle".into(),
    };
    std::fs::write(dir.join("lock"), serde_json::to_vec(&info).unwrap()).unwrap();
}

/// A subcommand that takes the crawl lock: the default (`cycle`) once the binary has it, else
/// `init` (which takes the lock of a directory that holds nothing but a lock file).
fn locking_run(t: &Path, dir: &Path) -> Vec<String> {
    let has_cycle = Command::new(BIN)
        .args(["cycle", "--help"])
        .output()
        .unwrap()
        .status
        .success();
    if has_cycle {
        return Vec::new();
    }
    // init needs an empty directory (a lock file is allowed: an interrupted init leaves one).
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "lock" {
            let p = e.path();
            if p.is_dir() {
                std::fs::remove_dir_all(p).unwrap();
            } else {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
    let seeds = t.join("seeds.txt");
    vec!["init".into(), "--seeds".into(), seeds.display().to_string()]
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
    let (t, dir) = crawl();
    hold_lock(&dir, std::process::id()); // this test process: alive
    let args = locking_run(t.path(), &dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = wrapper(&dir, &args);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let lines = log_lines(&out);
    let last = lines.last().unwrap();
    assert!(last.contains("busy (exit 5)"), "{lines:?}");
    assert!(text(&out).contains("already running"), "{}", text(&out));
    assert!(last.contains(&dir.display().to_string()), "{last}");
    // dragnet's own message (who holds it) is in the log too, and the lock is untouched.
    assert!(text(&out).contains(&format!("pid {}", std::process::id())));
    assert!(dir.join("lock").exists());
}

#[test]
fn a_stale_lock_is_reported_with_the_unlock_command_and_kept() {
    let (t, dir) = crawl();
    hold_lock(&dir, 4_194_304 + 7); // above any pid_max: not running
    let args = locking_run(t.path(), &dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = wrapper(&dir, &args);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    let lines = log_lines(&out);
    let last = lines.last().unwrap();
    assert!(last.contains("stale lock"), "{lines:?}");
    let unlock = format!("dragnet unlock {}", dir.display());
    assert!(last.contains(&unlock), "{last}");
    assert!(dir.join("lock").exists(), "the wrapper never clears a lock");
    // The command it names works.
    let out = Command::new(BIN).arg("unlock").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!dir.join("lock").exists());
}
