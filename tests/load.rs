//! Load (docs/RELIABILITY.md, campaign 7): 1,000 hosts that all stall at once (their robots.txt
//! answers, every page then drips one byte a second) do not hold a cycle past its fetch
//! deadline: each partition's fetch defers what it has not handed out when `deadline_secs`
//! passes, requests in flight end within `total_timeout_secs`, and the cycle commits.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

const HOSTS: u32 = 1000;

#[test]
fn a_thousand_stalling_hosts_do_not_hold_the_cycle_past_its_deadline() {
    let (server, port) = common::serve_site(Arc::new(common::Stalling));
    let scratch = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..HOSTS).map(|i| format!("h{i:04}.stall.test")).collect();
    let hosts = common::loopback_hosts(scratch.path(), &names);
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        names
            .iter()
            .flat_map(|n| {
                [
                    format!("http://{n}:{port}/"),
                    format!("http://{n}:{port}/p/1"),
                ]
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = 4;
    cfg.resolve.hosts_files = vec![hosts];
    cfg.resolve.only = true;
    common::patient_loopback_fetch(&mut cfg.fetch);
    let f = &mut cfg.fetch;
    f.threads = 16;
    f.per_ip_connections = 64;
    f.deadline_secs = 4.0;
    f.read_timeout_secs = 2.0;
    f.total_timeout_secs = 3.0;
    f.min_rate_grace_secs = 1.0;
    let config = scratch.path().join("crawl.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let root = scratch.path().join("crawl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["init", "--config"])
        .arg(&config)
        .arg("--seeds")
        .arg(&seeds)
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let t = Instant::now();
    let out = common::dragnet_on(
        &["cycle", "--max-cycles", "1", "--progress", "log", "--json"],
        &root,
    );
    let took = t.elapsed();
    server.stop();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fetch = &report["cycles"][0]["stages"]["fetch"]["counts"];
    let deferred = fetch["error_deferred"].as_u64().unwrap_or(0);
    let answered = fetch["results"].as_u64().unwrap_or(0);
    // Partitions fetch `fetch_partitions` at a time (default: all 4): each ends by its deadline
    // plus the requests in flight (bounded by the total timeout), then parse, split, merge and
    // prioritize of a few thousand URLs.
    let bound = Duration::from_secs_f64(4.0 + 3.0 + 6.0);
    eprintln!(
        "1,000 stalling hosts: cycle committed in {:.1}s (bound {:.0}s); {deferred} of {answered} \
         URLs deferred by the deadline",
        took.as_secs_f64(),
        bound.as_secs_f64()
    );
    assert!(took <= bound, "the cycle took {took:?}: {err}");
    assert!(deferred > 0, "the deadline deferred nothing: {fetch}");
    assert_eq!(answered, u64::from(2 * HOSTS), "every URL has a result");
    // The cycle committed: the next one's fetch lists hold the deferred URLs again.
    assert!(root.join("cycles/000001/fetchlist").is_dir(), "{err}");
}
