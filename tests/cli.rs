//! The `dragnet` binary: commands, messages and exit codes as an operator or cron sees them.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{self, dragnet};

fn dragnet_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dragnet");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin).expect("write stdin");
    drop(pipe);
    child.wait_with_output().expect("wait for dragnet")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write_seeds(dir: &Path) -> String {
    let p = dir.join("seeds.txt");
    std::fs::write(
        &p,
        "# seeds\nhttps://a.example/\n\nhttps://b.example/x?utm_source=mail\nexample.org/page\nhttps://A.EXAMPLE:443/\nmailto:x@y.z\n",
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn init_reports_bad_lines_with_numbers_and_exit_1() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("crawl");
    let out = dragnet(&[
        "init",
        "--seeds",
        &seeds,
        "--partitions",
        "8",
        dir.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("seeds.txt:5:") && err.contains("https://example.org/page"),
        "hint with line number: {err}"
    );
    assert!(
        err.contains("seeds.txt:7:") && err.contains("mailto"),
        "{err}"
    );
    assert!(
        err.contains("2 seeds from 7 lines (1 duplicates, 2 bad)"),
        "{err}"
    );
    assert!(dir.join("crawl.toml").exists());

    // A second init over it is a usage error and changes nothing.
    let out = dragnet(&["init", "--seeds", &seeds, dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already a crawl"));

    // status --json reads what init committed.
    let out = dragnet(&["status", "--json", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partitions"], 8);
    assert_eq!(v["seen"], 2);
    assert_eq!(v["cycles"][0]["fetchlist_urls"], 2);
    assert_eq!(v["cycles"][0]["stages"][0]["stage"], "init");
    assert_eq!(v["cycles"][0]["stages"][0]["done"], 8);
    assert_eq!(v["cycles"][0]["stages"][0]["counts"]["seeds"], 2);
}

#[test]
fn check_url_prints_json_lines() {
    let out = dragnet(&[
        "check",
        "url",
        "--partitions",
        "16",
        "HTTP://WWW.Example.COM:80/a/./b/../c?utm_source=x&q=1#top",
        "not a url",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bad URL is a per-item failure"
    );
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let a = &lines[0];
    assert_eq!(a["url"], "http://www.example.com/a/c?q=1");
    assert_eq!(a["surt"], "com,example)/a/c?q=1");
    assert_eq!(a["host"], "www.example.com");
    let fp = u64::from_str_radix(a["fingerprint"].as_str().unwrap(), 16).unwrap();
    assert_eq!(
        fp,
        dragnet::keys::fingerprint("http://www.example.com/a/c?q=1")
    );
    let hk = u64::from_str_radix(a["host_key"].as_str().unwrap(), 16).unwrap();
    assert_eq!(a["partition"], dragnet::keys::partition_of(hk, 16));
    assert!(lines[1]["error"].as_str().unwrap().contains("not a url"));
}

#[test]
fn check_run_validates_and_reports_corruption_with_exit_3() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("x.run");
    let mut w = dragnet::run::RunWriter::create(&p, dragnet::run::Schema::SEEN).unwrap();
    for i in 0..1000u64 {
        w.push_u64(i * 3, &[]).unwrap();
    }
    w.finish().unwrap();
    let out = dragnet(&["check", "run", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(
        s.contains("ok") && s.contains("1000 records") && s.contains("schema 1 'seen'"),
        "{s}"
    );

    let mut bytes = std::fs::read(&p).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&p, bytes).unwrap();
    let out = dragnet(&["check", "run", "--json", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.contains(p.to_str().unwrap()) && err.contains("offset 64"),
        "{err}"
    );

    let out = dragnet(&[
        "check",
        "run",
        t.path().join("missing.run").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("missing.run"));
}

#[test]
fn config_errors_exit_2_and_name_the_key() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let cfg = t.path().join("crawl.toml");
    std::fs::write(
        &cfg,
        "[crawl]\npartitions = 16\n[sort]\nmemory_budjet = \"1 GiB\"\n",
    )
    .unwrap();
    let dir = t.path().join("c");
    let out = dragnet(&[
        "init",
        "--config",
        cfg.to_str().unwrap(),
        "--seeds",
        &seeds,
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("crawl.toml") && err.contains("memory_budjet"),
        "{err}"
    );
    assert!(!dir.exists(), "a config error changes nothing");

    let out = dragnet(&[
        "init",
        "--partitions",
        "0",
        "--seeds",
        &seeds,
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = dragnet(&[
        "init",
        "--seeds",
        "/nonexistent/seeds.txt",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/seeds.txt"));
}

#[test]
fn pipeline_example_config_is_valid_and_complete() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline/crawl.toml");
    let c = dragnet::config::Config::load(&path).unwrap();
    // The example documents the defaults: loading it gives exactly the default configuration.
    assert_eq!(c, dragnet::config::Config::default());
}

#[test]
fn a_killed_inits_lock_is_taken_over_by_the_next_init() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("c");
    std::fs::create_dir(&dir).unwrap();
    // What a killed init leaves: its lock file, without the OS lock its live holder kept.
    let host = dragnet::util::hostname();
    std::fs::write(
        dir.join("lock"),
        format!(r#"{{"pid": 4194311, "host": "{host}", "started": "2026-11-22T01:17:00Z", "command": "init"}}"#),
    )
    .unwrap();
    let out = dragnet(&["init", "--seeds", &seeds, dir.to_str().unwrap()]);
    let err = text(&out.stderr);
    // 1: the seed file has bad lines (recorded), the crawl is made.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("took over the lock") && err.contains("pid 4194311"),
        "{err}"
    );
    assert!(!dir.join("lock").exists());
    assert!(dir.join("crawl.toml").exists());
    // `dragnet unlock` stays for the rare case; with no lock it says so.
    let out = dragnet(&["unlock", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn check_robots_adds_verdicts_and_numbers_bad_lines() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("robots.txt");
    // Raw bytes: a BOM, CRLF, Latin-1 in a comment.
    std::fs::write(
        &file,
        b"\xEF\xBB\xBFUser-agent: dragnet\r\nDisallow: /private # caf\xE9\r\nAllow: /private/ok\r\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let input = format!(
        "{}\n{}\n{}\n\n{}\n{}\n{}\n",
        serde_json::json!({"robots_file": f, "agent": "dragnet/0.1", "url": "https://h/private/x", "id": 1}),
        serde_json::json!({"robots_file": f, "agent": "dragnet", "url": "/private/ok/y"}),
        serde_json::json!({"robots": "User-agent: *\nDisallow: /", "agent": "other", "url": "http://h/a"}),
        "{not json",
        serde_json::json!({"robots_file": t.path().join("missing").to_str().unwrap(), "agent": "a", "url": "/"}),
        serde_json::json!({"robots": "", "url": "/"}),
    );
    let out = dragnet_with_stdin(&["check", "robots"], input.as_bytes());
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "bad lines are per-item failures: {err}"
    );
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        6,
        "one output line per input line (blank lines skipped)"
    );
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(lines[0]["id"], 1, "other fields are kept");
    assert_eq!(lines[0]["url"], "https://h/private/x");
    assert_eq!(lines[1]["allowed"], true);
    assert_eq!(lines[2]["allowed"], false);
    assert_eq!(lines[3]["line"], 5);
    assert!(lines[3]["error"].as_str().unwrap().contains("not JSON"));
    assert!(lines[4]["error"].as_str().unwrap().contains("missing"));
    assert!(lines[5]["error"].as_str().unwrap().contains("\"agent\""));
    assert!(lines[..3].iter().all(|l| l.get("error").is_none()));
    assert!(
        err.contains("line 5:") && err.contains("line 6:") && err.contains("line 7:"),
        "{err}"
    );
    assert!(err.contains("3 of 6 lines could not be checked"), "{err}");

    let ok = dragnet_with_stdin(
        &["check", "robots"],
        lines_of_first_three(&input).as_bytes(),
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
}

/// Every command that works on a crawl refuses a directory that is not one with exit 2 and the
/// same message, whether the directory is missing or holds no crawl.toml; `init` with a missing
/// seed file exits 2 and creates nothing; an I/O error is said once, not again as its cause.
#[test]
fn wrong_directories_and_missing_seeds_are_usage_errors() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("no-such-crawl");
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (dir, says) in [(&missing, "does not exist"), (&empty, "no crawl.toml")] {
        let d = dir.to_str().unwrap();
        let commands: [&[&str]; 6] = [
            &["cycle", d],
            &["status", d],
            &["unlock", d],
            &["fetch", "--cycle", "0", "--partition", "0", d],
            &["merge", "--cycle", "0", "--partition", "0", d],
            &["slurm", "submit", "--dry-run", d],
        ];
        for args in commands {
            let out = dragnet(args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("not a crawl directory") && err.contains(says),
                "{args:?}: {err}"
            );
            assert!(err.contains("dragnet init --seeds FILE"), "{args:?}: {err}");
            assert!(!err.contains("caused by"), "{args:?}: {err}");
        }
    }
    assert!(!missing.exists(), "a refused command created the directory");

    let crawl = t.path().join("crawl");
    let seeds = t.path().join("no-seeds.txt");
    let out = dragnet(&[
        "init",
        "--seeds",
        seeds.to_str().unwrap(),
        crawl.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no-seeds.txt") && err.contains("No such file"),
        "{err}"
    );
    assert!(!crawl.exists(), "init left a half-made crawl directory");

    // An I/O error names its file and OS error once.
    let run = t.path().join("dir.run");
    std::fs::create_dir(&run).unwrap();
    let out = dragnet(&["check", "run", run.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("dir.run"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let mut unique = lines.clone();
    unique.dedup();
    assert_eq!(lines, unique, "{err}");
    assert!(!err.contains("caused by"), "{err}");
}

/// A stage run by hand goes through the executors' envelope: a failure leaves the same
/// `.failed` marker `dragnet status` shows, while a stage asked for before its input exists is
/// refused (exit 2) and leaves none.
#[test]
fn a_stage_run_by_hand_records_its_failure_like_the_executors() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("crawl");
    let d = dir.to_str().unwrap();
    dragnet(&["init", "--seeds", &seeds, "--partitions", "1", d]);
    let out = dragnet(&["parse", "--cycle", "0", "--partition", "0", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!dir.join("cycles/000000/parse/p0000.failed").exists());

    common::flip_middle_byte(&dir.join("cycles/000000/fetchlist/p0000.run"));
    let out = dragnet(&[
        "fetch",
        "--cycle",
        "0",
        "--partition",
        "0",
        "--progress",
        "quiet",
        d,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("corrupt"), "{err}");
    assert!(dir.join("cycles/000000/fetch/p0000.failed").exists());
    let status = text(&dragnet(&["status", d]).stdout);
    assert!(status.contains("p0000 FAILED at "), "{status}");
    // The summary: one screen, the retry to run; `--verbose` adds every stage's counters.
    assert!(status.lines().count() <= 25, "{status}");
    assert!(status.lines().all(|l| l.len() <= 100), "{status}");
    assert!(
        status.contains(&format!("next       dragnet cycle {d} ")),
        "{status}"
    );
    assert!(!status.contains("  fetch  "), "{status}");
    let verbose = text(&dragnet(&["status", "--verbose", d]).stdout);
    assert!(verbose.starts_with(&status), "{verbose}");
    assert!(
        verbose.contains("  fetch          0 done     1 failed"),
        "{verbose}"
    );
    assert!(verbose.contains("    p0000 FAILED at "), "{verbose}");
}

/// A reader that stops early (`| head`) ends dragnet quietly with exit 0, not a panic: the
/// output here (thousands of lines) is far larger than a pipe's buffer, so writes after the
/// reader has gone fail with EPIPE.
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("crawl");
    dragnet(&[
        "init",
        "--seeds",
        &seeds,
        "--partitions",
        "1",
        dir.to_str().unwrap(),
    ]);
    let run = dir.join("cycles/000000/fetchlist/p0000.run");
    let run = run.to_str().unwrap();
    let mut args = vec!["check", "run"];
    args.extend(std::iter::repeat_n(run, 5000));
    let mut child = Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    let n = child.stdout.as_mut().unwrap().read(&mut first).unwrap();
    assert!(n > 0);
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `check robots` reads only the first 500 KiB of a robots file, as a crawler does: a path to an
/// endless file (/dev/zero) answers at once instead of reading forever (bounded at 60 s here).
#[test]
fn check_robots_reads_no_more_of_a_file_than_counts() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["check", "robots"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = r#"{"agent":"dragnet","url":"http://a.test/x","robots_file":"/dev/zero"}"#;
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{line}").unwrap();
    drop(stdin);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("check robots still reading /dev/zero after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(r#""allowed":true"#),
        "{}",
        text(&out.stdout)
    );
}

/// `check robots` reads its JSON lines with a bounded reader (issue 30, point 5): a 5 MiB line
/// is a bad line named by number and skipped, the lines around it are checked.
#[test]
fn check_robots_skips_an_over_long_line() {
    let good =
        r#"{"agent":"dragnet","url":"http://a.test/x","robots":"User-agent: *\nDisallow: /x\n"}"#;
    let mut input = format!("{good}\n").into_bytes();
    input.resize(input.len() + (5 << 20), b'x');
    input.extend_from_slice(format!("\n{good}\n").as_bytes());
    let out = dragnet_with_stdin(&["check", "robots"], &input);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("line 2: 5242880 bytes long, over the limit of 4194304 bytes"),
        "{err}"
    );
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].contains(r#""allowed":false"#) && lines[2].contains(r#""allowed":false"#));
    assert!(lines[1].contains(r#""line":2"#), "{}", lines[1]);
}

/// A sort budget past the machine's memory is refused (exit 2) before anything is written.
#[test]
fn init_refuses_a_memory_budget_past_the_machine() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let config = t.path().join("crawl.toml");
    std::fs::write(&config, "[sort]\nmemory_budget = \"64 TiB\"\n").unwrap();
    let dir = t.path().join("crawl");
    let out = dragnet(&[
        "init",
        "--config",
        config.to_str().unwrap(),
        "--seeds",
        &seeds,
        dir.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("memory_budget"), "{err}");
    assert!(!dir.exists(), "init made a directory");
}

/// Changing a setting fixed at creation (here the partition count, 4 -> 2) in crawl.toml is
/// refused (exit 2, naming the key) before anything runs: no stage starts, no `.failed` marker.
/// Putting it back makes the crawl work again.
#[test]
fn a_changed_partition_count_is_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("crawl");
    let d = dir.to_str().unwrap();
    dragnet(&["init", "--seeds", &seeds, "--partitions", "4", d]);
    let toml = dir.join("crawl.toml");
    let original = std::fs::read_to_string(&toml).unwrap();
    assert!(original.contains("partitions = 4"), "{original}");
    std::fs::write(&toml, original.replace("partitions = 4", "partitions = 2")).unwrap();
    let before: Vec<_> = std::fs::read_dir(dir.join("cycles/000000"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    for args in [
        vec!["cycle", "--progress", "quiet", d],
        vec!["fetch", "--cycle", "0", "--partition", "0", d],
        vec!["status", d],
    ] {
        let out = dragnet(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("crawl.partitions is 2") && err.contains("put back 4"),
            "{args:?}: {err}"
        );
    }
    let after: Vec<_> = std::fs::read_dir(dir.join("cycles/000000"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "something was written");
    std::fs::write(&toml, original).unwrap();
    let out = dragnet(&["status", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn lines_of_first_three(input: &str) -> String {
    input.lines().take(3).map(|l| format!("{l}\n")).collect()
}

#[test]
fn fetch_and_parse_explain_what_is_missing_with_exit_2() {
    let t = tempfile::tempdir().unwrap();
    let seeds = write_seeds(t.path());
    let dir = t.path().join("crawl");
    let d = dir.to_str().unwrap();
    dragnet(&["init", "--seeds", &seeds, "--partitions", "2", d]);
    let out = dragnet(&["fetch", "--cycle", "3", "--partition", "0", d]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fetchlist/p0000.run") && err.contains("prioritize"),
        "{err}"
    );
    let out = dragnet(&["fetch", "--cycle", "0", "--partition", "9", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("partitions 0..2"),
        "{}",
        text(&out.stderr)
    );
    let out = dragnet(&["parse", "--cycle", "0", "--partition", "0", d]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("dragnet fetch --cycle 0 --partition 0"),
        "{err}"
    );
}

#[test]
fn reparse_reads_a_warc_and_exits_1_on_a_damaged_one() {
    let t = tempfile::tempdir().unwrap();
    let warc = common::testdata_dir("warc", "warc/iana.warc.gz").join("warc/iana.warc.gz");
    let out_dir = t.path().join("out");
    let out = dragnet(&[
        "reparse",
        "--warc",
        warc.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["counts"]["links"].as_u64().unwrap() > 0, "{v}");
    let out = dragnet(&["check", "run", out_dir.join("links.run").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("'links'"),
        "{}",
        text(&out.stdout)
    );

    let bad = t.path().join("bad.warc.gz");
    let bytes = std::fs::read(&warc).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let out = dragnet(&[
        "reparse",
        "--warc",
        bad.to_str().unwrap(),
        "--out",
        t.path().join("out2").to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.warc.gz"), "{err}");
}
