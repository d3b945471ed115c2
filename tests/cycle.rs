//! `dragnet cycle` end to end on websim webs: a crawl to completion fetches exactly the ground
//! truth's set with a clean politeness audit; `kill -9` at many moments followed by re-runs ends in
//! the same seen sets, URL dbs and fetched set as an uninterrupted run; two concurrent runs on one
//! crawl: one fails cleanly with "already running", nothing is corrupted.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dragnet::config::Config;

use dragnet::crawl::next_cycle;
use dragnet::crawl::CrawlDir;
use dragnet::exec::{run_cycles, CycleOptions};
use websim::model::Web;
use websim::server::Server;
use websim::truth::{truth, Policy};

const M: u32 = 3;

fn web(seed: u64, hosts: u32, pages: u32) -> (std::sync::Arc<Web>, Server) {
    common::small_web(seed, hosts, pages)
}

fn config(threads: u32) -> Config {
    let mut cfg = common::websim_config(M, threads);
    cfg.prioritize.block = 16;
    cfg
}

fn seeds(web: &Web) -> Vec<String> {
    common::websim_homes(web)
}

fn outcome(dir: &CrawlDir) -> common::Outcome {
    common::outcome(dir, M)
}

fn until_empty() -> CycleOptions {
    CycleOptions {
        until_empty: true,
        max_cycles: 40,
        progress: dragnet::fetch::ProgressMode::Quiet,
        log: false,
        ..CycleOptions::default()
    }
}

#[test]
fn a_crawl_to_completion_fetches_exactly_the_ground_truth() {
    let (web, server) = web(41, 12, 25);
    let c = common::websim_crawl(&web, &seeds(&web), config(4));
    let r = run_cycles(&c.dir, &c.cfg, &until_empty()).unwrap();
    assert!(r.complete(), "{r:?}");
    assert!(r.stopped.contains("empty"), "{}", r.stopped);
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);

    let t = truth(&web, &Policy::new(&web));
    let should = common::truth_fetched(&web);
    let got = outcome(&c.dir).fetched;
    // State retention (`[cycle] keep_cycles`, 2 by default): the seen set of the last two
    // cycles' inputs and the next cycle's, not one per cycle.
    assert!(
        r.cycles.len() >= 3,
        "too short a crawl to see pruning: {r:?}"
    );
    for p in 0..M {
        let versions = std::fs::read_dir(c.dir.state_dir(p))
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                let n = n.to_string_lossy();
                n.starts_with("seen.") && n.ends_with(".run")
            })
            .count();
        assert_eq!(versions, 3, "partition {p}");
        // The runs between the stages of cycles that can no longer be re-run are gone; the
        // cycle's record (fetch results, pages, WARCs) stays.
        let last = next_cycle(&c.dir, M) - 1;
        assert!(!c.dir.links(0, p).exists() && !c.dir.new_urls(0, p).exists());
        assert!(c.dir.fetched(0, p).exists() && c.dir.pages(0, p).exists());
        assert!(c.dir.links(last, p).exists() && c.dir.new_urls(last, p).exists());
    }
    assert!(!c.dir.split_run(0, 0, 0).parent().unwrap().exists());
    let missed: Vec<_> = should.difference(&got).collect();
    let extra: Vec<_> = got.difference(&should).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "missed {missed:?}\nextra {extra:?}"
    );
    let never: BTreeSet<&str> = t.never.iter().map(|(u, _)| u.as_str()).collect();
    assert!(got.iter().all(|u| !never.contains(u.as_str())));

    // Thread count does not change what is crawled.
    let (web2, server2) = self::web(41, 12, 25);
    let c2 = common::websim_crawl(&web2, &seeds(&web2), config(1));
    run_cycles(&c2.dir, &c2.cfg, &until_empty()).unwrap();
    server2.stop();
    let (a, b) = (outcome(&c.dir), outcome(&c2.dir));
    // The webs listen on other ports, so compare URLs with their origins cut.
    let strip = |s: &BTreeSet<String>| -> BTreeSet<String> {
        s.iter()
            .map(|u| {
                u.split_once("//")
                    .unwrap()
                    .1
                    .split_once(':')
                    .map_or(u.clone(), |(h, r)| {
                        format!("{h}{}", &r[r.find('/').unwrap_or(r.len())..])
                    })
            })
            .collect()
    };
    assert_eq!(strip(&a.fetched), strip(&b.fetched));
}

/// `dragnet ARGS DIR`; stderr goes to `DIR/../dragnet.log` (a pipe nobody reads while the child
/// runs would fill up and block it).
fn dragnet(args: &[&str], dir: &Path) -> Command {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.with_file_name("dragnet.log"))
        .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_dragnet"));
    c.args(args).arg(dir).stdout(Stdio::null()).stderr(log);
    c
}

fn log_tail(dir: &Path) -> String {
    let log = std::fs::read_to_string(dir.with_file_name("dragnet.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// xorshift64*: the kill delays (no clock-seeded randomness in tests).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[test]
#[ignore = "heavy (about 3 minutes): .ci/run runs it with --ignored"]
fn kill_9_at_random_moments_then_rerun_gives_the_same_crawl() {
    let (web, server) = web(43, 8, 12);
    let reference = common::websim_crawl(&web, &seeds(&web), config(4));
    let t = Instant::now();
    run_cycles(&reference.dir, &reference.cfg, &until_empty()).unwrap();
    // Kill within the time a whole crawl takes (and a process needs to start).
    let window = (t.elapsed().as_millis() as u64).max(300) + 100;
    eprintln!("reference crawl: {} ms", t.elapsed().as_millis());
    let want = outcome(&reference.dir);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut kills = 0;
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut crawls = 0;
    // Fresh crawls, each killed at random moments until a run completes it, until 20 kills.
    while kills < 20 {
        crawls += 1;
        let c = common::websim_crawl(&web, &seeds(&web), config(4));
        let mut runs = 0;
        loop {
            runs += 1;
            assert!(
                Instant::now() < deadline,
                "did not finish after {kills} kills: {}",
                log_tail(c.dir.root())
            );
            let mut child = dragnet(
                &["cycle", "--until-empty", "--progress", "quiet"],
                c.dir.root(),
            )
            .spawn()
            .unwrap();
            std::thread::sleep(Duration::from_millis(50 + rng.below(window)));
            if kills < 20 && child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
                eprintln!("crawl {crawls} run {runs}: killed ({kills} kills)");
                // No `dragnet unlock`: the next run takes over the dead run's lock by itself.
                continue;
            }
            let status = child.wait().unwrap();
            assert!(
                status.success(),
                "crawl {crawls} run {runs}: {}",
                log_tail(c.dir.root())
            );
            // A final run that was not killed: the crawl must be complete now.
            let again = dragnet(
                &["cycle", "--until-empty", "--progress", "quiet"],
                c.dir.root(),
            )
            .output()
            .unwrap();
            assert!(again.status.success(), "{}", log_tail(c.dir.root()));
            break;
        }
        assert_eq!(
            outcome(&c.dir),
            want,
            "crawl {crawls}: {kills} kills so far, {runs} runs"
        );
    }
    server.stop();
}

#[test]
fn two_concurrent_cycles_one_fails_cleanly() {
    let (web, server) = web(47, 6, 10);
    let c = common::websim_crawl(&web, &seeds(&web), config(2));
    let a = dragnet(
        &["cycle", "--until-empty", "--progress", "quiet"],
        c.dir.root(),
    )
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let b = dragnet(
        &["cycle", "--until-empty", "--progress", "quiet"],
        c.dir.root(),
    )
    .output()
    .unwrap();
    let a = a.wait_with_output().unwrap();
    let (ok, failed) = if a.status.success() { (a, b) } else { (b, a) };
    assert!(ok.status.success());
    assert_eq!(failed.status.code(), Some(5));
    let msg = std::fs::read_to_string(c.dir.root().with_file_name("dragnet.log")).unwrap();
    assert!(msg.contains("already running"), "{msg}");
    // The crawl is complete and readable.
    let o = outcome(&c.dir);
    assert!(!o.fetched.is_empty());
    server.stop();
}

#[test]
fn a_failed_partition_keeps_the_others_work_and_a_rerun_finishes() {
    let (web, server) = web(53, 6, 10);
    let c = common::websim_crawl(&web, &seeds(&web), config(2));
    // Damage partition 1's fetch list (keep a copy to repair it).
    let list = c.dir.fetchlist(0, 1);
    let good = common::flip_middle_byte(&list);
    let opts = CycleOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        log: false,
        ..CycleOptions::default()
    };
    let r = run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    assert!(!r.complete());
    let (msg, code) = dragnet::exec::failure(&c.dir, &r).unwrap();
    assert_eq!(code, dragnet::error::EXIT_CYCLE_INCOMPLETE, "{msg}");
    assert!(msg.contains("fetch of partition 1"), "{msg}");
    use dragnet::crawl::Stage;
    let failed = dragnet::crawl::failed::read_failed(&c.dir, Stage::Fetch, 0, 1)
        .unwrap()
        .unwrap();
    assert!(failed.error.contains("p0001.run"), "{}", failed.error);
    for p in [0, 2] {
        for s in [Stage::Fetch, Stage::Parse, Stage::Split] {
            assert!(c.dir.done_path(0, s, p).exists(), "{s:?} p{p} kept");
        }
    }
    assert!(!c.dir.done_path(0, Stage::Merge, 0).exists());
    // Repaired, the next run does only what is missing and the failure marker goes.
    std::fs::write(&list, &good).unwrap();
    let r = run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.cycles[0].stages["fetch"].ran, 1);
    assert_eq!(r.cycles[0].stages["fetch"].skipped, 2);
    assert!(
        dragnet::crawl::failed::read_failed(&c.dir, Stage::Fetch, 0, 1)
            .unwrap()
            .is_none()
    );
    server.stop();
}

/// Many hosts on few addresses, several partitions fetched at once by the local executor: the
/// per-IP limit and delay hold across partitions (websim's per-address audit), and without a
/// shared limit they would not (the same crawl allowed 4 connections per address trips the
/// audit's limit of 1).
#[test]
fn per_ip_limits_hold_across_partitions_fetched_at_once() {
    for (crawler_limit, polite) in [(1, true), (4, false)] {
        let (web, server) = websim::server::Server::start_web(
            websim::model::WebConfig {
                seed: 71,
                port: 0,
                listeners: 2,
                hosts: 24,
                pages: 8,
                hostile_every: 0,
                max_crawl_delay: Duration::from_millis(20),
                per_ip_connections: 1,
                per_ip_delay: Duration::from_millis(5),
                ..websim::model::WebConfig::default()
            },
            websim::server::ServerOptions::default(),
        )
        .unwrap();
        let mut cfg = common::websim_config(4, 4);
        cfg.cycle.fetch_partitions = 4;
        cfg.fetch.per_ip_connections = crawler_limit;
        cfg.fetch.per_ip_delay_secs = 0.005;
        let c = common::websim_crawl(&web, &seeds(&web), cfg);
        let r = run_cycles(&c.dir, &c.cfg, &until_empty()).unwrap();
        assert!(r.complete(), "{r:?}");
        let audit = server.stop();
        let ip = audit.counts.ip_concurrent + audit.counts.ip_too_soon;
        if polite {
            assert_eq!(audit.counts.total(), 0, "{:?}", audit.violations);
            assert_eq!(
                common::outcome(&c.dir, 4).fetched,
                common::truth_fetched(&web)
            );
        } else {
            assert!(
                ip > 0,
                "4 connections per address were never used: {:?}",
                audit.counts
            );
        }
    }
}
