//! The crawler's identity (issue 21, point 9): a `From:` header on every request and a robots.txt
//! product token of its own, separate from the User-Agent string. The server records each
//! request's headers; the WARC's request records carry the same.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use websim::site::{Request, Response, Site};

/// A request as the server saw it: its target and headers.
type Seen = (String, Vec<(String, String)>);

/// robots.txt lets `specialbot` in (but not into /private) and keeps everyone else out.
#[derive(Default)]
struct Gate {
    seen: Mutex<Vec<Seen>>,
}

impl Site for Gate {
    fn respond(&self, req: &Request) -> Response {
        self.seen
            .lock()
            .unwrap()
            .push((req.target.clone(), req.headers.clone()));
        if req.target == "/robots.txt" {
            let body = "User-agent: specialbot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n";
            return Response::new(200, "text/plain", body.as_bytes().to_vec());
        }
        Response::new(200, "text/html", b"<html><body>hi</body></html>".to_vec())
    }

    fn min_delay(&self, _host: &str) -> Duration {
        Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, target: &str) -> bool {
        target.starts_with("/private")
    }
}

#[test]
fn the_from_header_and_the_robots_token_are_the_configured_ones() {
    let site = Arc::new(Gate::default());
    let (server, port) = common::serve_site(site.clone());
    let scratch = tempfile::tempdir().unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1 gate.test\n").unwrap();
    let seeds = vec![
        format!("http://gate.test:{port}/public"),
        format!("http://gate.test:{port}/private/x"),
    ];
    let mut cfg = dragnet::crawl::Config::default();
    cfg.crawl.partitions = 1;
    cfg.resolve.hosts_files = vec![hosts];
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.user_agent = "dragnet/0.1 (+https://example.org/bot)".into();
    cfg.fetch.robots_token = "specialbot".into();
    cfg.fetch.from = "ops@example.org".into();
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["cycle", "--progress", "quiet"])
        .arg(c.dir.root())
        .output()
        .unwrap();
    server.stop();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = site.seen.lock().unwrap().clone();
    let targets: Vec<&str> = seen.iter().map(|(t, _)| t.as_str()).collect();
    // Read for `specialbot`: /public is allowed, /private is not (`*` would refuse both).
    assert_eq!(targets, ["/robots.txt", "/public"], "{seen:?}");
    for (t, headers) in &seen {
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("from"), Some("ops@example.org"), "{t}");
        assert_eq!(
            get("user-agent"),
            Some("dragnet/0.1 (+https://example.org/bot)"),
            "{t}"
        );
    }
    // The WARC's request records say so too.
    let warc = std::fs::read_dir(c.dir.warc_dir(0))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".warc.zst"))
        .unwrap();
    let mut rd = dragnet::warc::reader::WarcReader::open(&warc, Default::default()).unwrap();
    let mut requests = 0;
    while let Some(mut rec) = rd.next_record().unwrap() {
        if rec.header().record_type() == dragnet::warc::RecordType::Request {
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut rec, &mut b).unwrap();
            assert!(
                String::from_utf8_lossy(&b).contains("\r\nFrom: ops@example.org\r\n"),
                "{}",
                String::from_utf8_lossy(&b)
            );
            requests += 1;
        }
    }
    assert_eq!(requests, 2);
}
