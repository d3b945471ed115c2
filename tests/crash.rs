//! Crash tests that really crash (sled's habit): the test binary re-runs itself as a child that
//! writes run files and `.done` markers, the parent kills it with SIGKILL at random moments, and
//! then checks that every name is either absent or holds a complete, valid, committed file, and
//! that a marker never exists without its outputs. A second test kills `dragnet init` and checks
//! that re-running it gives the same run files, byte for byte, as an uninterrupted init.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dragnet::crawl::{self, CrawlDir, DoneMarker, Stage};

use dragnet::ops::{self, InitOptions};
use dragnet::run::{self, Cursor, RunReader, RunWriter, Schema};

const CHILD_ENV: &str = "DRAGNET_CRASH_CHILD_DIR";
const FILES: u64 = 6;
const RECORDS: u64 = 60_000;
const PARTITIONS: u32 = 16;

fn expected_key(file: u64, i: u64) -> u64 {
    (i * 2_654_435_761 + file) << 8
}

/// The child: writes FILES run files, each followed by its `.done` marker.
#[test]
#[ignore = "run by crash tests as a child process"]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::write(dir.join("started"), b"").unwrap();
    for f in 0..FILES {
        let started = std::time::SystemTime::now();
        let path = dir.join(format!("f{f}.run"));
        let mut w = RunWriter::create(&path, Schema::SEEN).unwrap();
        for i in 0..RECORDS {
            w.push_u64(expected_key(f, i), &[]).unwrap();
        }
        w.finish().unwrap();
        let mut m = DoneMarker::new(Stage::Merge, 0, f as u32, started);
        m.outputs
            .push(crawl::FileDigest::of_run(&CrawlDir::new(&dir), &path).unwrap());
        m.commit(&dir.join(format!("f{f}.done")), started).unwrap();
    }
}

fn spawn_child(test: &str, dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("crash::{test}"),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (bounded) until the child has created `dir/started`.
fn wait_started(child: &mut std::process::Child, dir: &Path) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join("started").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "child exited before starting"
        );
        assert!(Instant::now() < deadline, "child did not start within 30 s");
        std::thread::sleep(Duration::from_micros(200));
    }
    Instant::now()
}

/// Runs the writer child to completion once; returns how long its writing takes.
fn time_writer_child() -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_child("crash_child_writer", dir.path());
    let started = wait_started(&mut child, dir.path());
    assert!(
        child.wait().unwrap().success(),
        "the writer child failed on its own"
    );
    started.elapsed()
}

/// A small deterministic generator, so a failing kill point can be reproduced from the seed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

fn kill_at(test: &str, dir: &Path, after: Duration) {
    let mut child = spawn_child(test, dir);
    std::thread::sleep(after);
    let _ = child.kill(); // SIGKILL on Unix
    child.wait().unwrap();
}

/// Checks the directory after a kill; returns how many files were committed.
fn check_writer_dir(dir: &Path, what: &str) -> u64 {
    let mut committed = 0;
    for f in 0..FILES {
        let path = dir.join(format!("f{f}.run"));
        let done = dir.join(format!("f{f}.done"));
        let marker = DoneMarker::read(&done)
            .unwrap_or_else(|e| panic!("{what}: marker {f} is damaged: {e}"));
        if !path.exists() {
            assert!(
                marker.is_none(),
                "{what}: marker f{f}.done exists without its output"
            );
            continue;
        }
        // The file is visible: it must be complete and hold exactly the expected records.
        let mut r = RunReader::open(&path)
            .unwrap_or_else(|e| panic!("{what}: f{f}.run visible but bad: {e}"));
        let mut i = 0;
        while r
            .advance()
            .unwrap_or_else(|e| panic!("{what}: f{f}.run: {e}"))
        {
            assert_eq!(
                run::key_u64(r.key()),
                expected_key(f, i),
                "{what}: f{f}.run record {i}"
            );
            i += 1;
        }
        assert_eq!(i, RECORDS, "{what}: f{f}.run is incomplete");
        committed += 1;
        if let Some(m) = marker {
            assert_eq!(
                m.outputs[0].xxh3,
                format!("{:016x}", r.checksum()),
                "{what}: marker checksum"
            );
        }
    }
    // Anything else in the directory is a temporary file the next run sweeps away.
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(".run") || name.ends_with(".done") || name == "started";
        assert!(
            ours || dragnet::storage::is_temp_name(&name),
            "{what}: unexpected file {name}"
        );
    }
    dragnet::storage::remove_temps(dir).unwrap();
    committed
}

#[test]
fn sigkill_while_writing_runs_and_markers() {
    // The first, timed run can be slower than later ones (cold page cache, a busy machine), so
    // a kill that lands after the child finished shrinks the window for the next round. The
    // loop runs until enough kills landed mid-write, bounded in rounds.
    let mut span = time_writer_child();
    let mut rng = Rng(0x5eed);
    let mut outcomes = Vec::new();
    let mut mid_write = 0;
    for round in 0..80 {
        if mid_write >= 16 {
            break;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn_child("crash_child_writer", dir.path());
        wait_started(&mut child, dir.path());
        let after = Duration::from_micros(rng.below(span.as_micros() as u64 + 1));
        std::thread::sleep(after);
        let _ = child.kill(); // SIGKILL on Unix
        child.wait().unwrap();
        let what = format!("round {round}, killed {after:?} into {span:?} of writing");
        let committed = check_writer_dir(dir.path(), &what);
        if committed < FILES {
            mid_write += 1;
        } else {
            span = span.mul_f64(0.8);
        }
        outcomes.push(committed);
    }
    eprintln!("files committed when killed (of {FILES}): {outcomes:?}");
    // The kills must land while files are being written, or this test proves nothing.
    assert!(mid_write >= 16, "kills landed too late: {outcomes:?}");
}

fn seeds_file(dir: &Path) -> PathBuf {
    let p = dir.join("seeds.txt");
    let mut s = String::from("# crash-test seeds\n");
    for i in 0..4000 {
        s.push_str(&format!(
            "http://h{}.example.test/page/{i}?b=2&a=1\n",
            i % 97
        ));
    }
    s.push_str("not a url\n");
    std::fs::write(&p, s).unwrap();
    p
}

/// The child: a plain `dragnet init` of the seed file beside the directory.
#[test]
#[ignore = "run by crash tests as a child process"]
fn crash_child_init() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let opts = InitOptions {
        seeds: dir.parent().unwrap().join("seeds.txt"),
        config: None,
        partitions: Some(PARTITIONS),
    };
    ops::init(&dir, &opts, &mut |_| {}).unwrap();
}

/// Every run file under the crawl, relative path -> bytes.
fn run_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "run") {
                out.push((
                    p.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    let mut v = Vec::new();
    walk(root, root, &mut v);
    v.sort();
    v
}

#[test]
fn sigkill_during_init_then_rerun_gives_the_same_bytes() {
    let base = tempfile::tempdir().unwrap();
    seeds_file(base.path());
    let reference = base.path().join("reference");
    let full = {
        let t = Instant::now();
        let st = spawn_child("crash_child_init", &reference).wait().unwrap();
        assert!(st.success());
        t.elapsed()
    };
    let want = run_files(&reference);
    assert_eq!(want.len(), PARTITIONS as usize * 3);
    let mut rng = Rng(0xdead_beef);
    for round in 0..10 {
        let dir = base.path().join(format!("c{round}"));
        let after = Duration::from_micros(rng.below(full.as_micros() as u64 + 1));
        kill_at("crash_child_init", &dir, after);
        let what = format!("round {round}, killed after {after:?} of {full:?}");
        // Whatever is committed is consistent: each marker's outputs exist with its checksums.
        let crawl_dir = CrawlDir::new(&dir);
        for p in 0..PARTITIONS {
            if let Some(m) = DoneMarker::read(&crawl_dir.done_path(0, Stage::Init, p)).unwrap() {
                for o in &m.outputs {
                    let r = RunReader::open(&dir.join(&o.path))
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(
                        format!("{:016x}", r.checksum()),
                        o.xxh3,
                        "{what}: {}",
                        o.path
                    );
                }
            }
        }
        if dir.join("crawl.toml").exists() {
            assert_eq!(
                run_files(&dir),
                want,
                "{what}: a committed crawl must be complete"
            );
            continue;
        }
        // The lock of the killed init is stale; clear it as an operator would, then re-run.
        let _ = crawl::unlock(&dir, false);
        let st = spawn_child("crash_child_init", &dir).wait().unwrap();
        assert!(st.success(), "{what}: re-run failed");
        assert_eq!(
            run_files(&dir),
            want,
            "{what}: re-run differs from an uninterrupted init"
        );
    }
}
