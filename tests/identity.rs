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
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = 1;
    cfg.resolve.hosts_files = vec![hosts];
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.user_agent = "dragnet/0.1 (+https://example.org/bot)".into();
    cfg.fetch.robots_token = "specialbot".into();
    cfg.fetch.from = "ops@example.org".into();
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let out = common::dragnet_on(&["cycle", "--progress", "quiet"], c.dir.root());
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
        .find(|p| dragnet::warc::Compression::from_name(&p.to_string_lossy()).is_some())
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

/// A site whose URLs come with credentials from every side: a robots.txt that redirects to a
/// `user:pw@` URL, a page linking to `user:pw@` spellings of another page, a redirect whose
/// `Location` carries credentials. Records each request's target and headers.
#[derive(Default)]
struct Keys {
    port: std::sync::OnceLock<u16>,
    seen: Mutex<Vec<Seen>>,
}

impl Site for Keys {
    fn respond(&self, req: &Request) -> Response {
        self.seen
            .lock()
            .unwrap()
            .push((req.target.clone(), req.headers.clone()));
        let port = self.port.get().copied().unwrap_or(0);
        let html = |body: String| Response::new(200, "text/html", body.into_bytes());
        match req.target.as_str() {
            "/robots.txt" => Response::new(302, "text/html", Vec::new()).with(
                "Location",
                format!("http://bot:robotsecret@keys.test:{port}/robots-real.txt"),
            ),
            "/robots-real.txt" => {
                Response::new(200, "text/plain", b"User-agent: *\nAllow: /\n".to_vec())
            }
            "/start" => html(format!(
                "<html><body><a href=\"http://user:linksecret@keys.test:{port}/linked\">a</a>\
                 <a href=\"//:pwsecret@keys.test:{port}/linked\">b</a>\
                 <a href=\"/moved\">c</a></body></html>"
            )),
            "/moved" => Response::new(301, "text/html", Vec::new()).with(
                "Location",
                format!("http://x:redirsecret@keys.test:{port}/target"),
            ),
            _ => html("<html><body>leaf</body></html>".into()),
        }
    }

    fn min_delay(&self, _host: &str) -> Duration {
        Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}

/// Issue 30, point 7: user information in seeds, links, redirects and robots.txt redirects is
/// removed when the URL enters the crawl. No request carries credentials; the spellings of a
/// page are one URL fetched once; no fetch result, URL db record, WARC-Target-URI, CDXJ line or
/// export holds them (only the archived server answers, as the server sent them, do).
#[test]
fn credentials_in_urls_are_stripped_everywhere() {
    let site = Arc::new(Keys::default());
    let (server, port) = common::serve_site(site.clone());
    site.port.set(port).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let c = crawl_with_credentials(scratch.path(), port);
    server.stop();
    check_no_request_carries_credentials(&site);
    check_results_and_the_url_db_hold_none(&c, port);
    check_warcs_and_cdxj_hold_none(&c);
    check_exports_hold_none(&c, scratch.path());
}

/// Seeds with and without user information, crawled to the end (at most 5 cycles) with
/// `keys.test` resolved through a hosts file in `scratch`.
fn crawl_with_credentials(scratch: &std::path::Path, port: u16) -> common::Crawl {
    let hosts = scratch.join("hosts");
    std::fs::write(&hosts, "127.0.0.1 keys.test\n").unwrap();
    let seeds = vec![
        format!("http://seeduser:seedsecret@keys.test:{port}/start"),
        format!("http://keys.test:{port}/start"),
        format!("http://:pw2secret@keys.test:{port}/start"),
    ];
    let mut cfg = dragnet::config::Config::default();
    cfg.crawl.partitions = 1;
    cfg.resolve.hosts_files = vec![hosts];
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.follow_redirects = 0;
    cfg.fetch.follow_per_host = 0;
    let c = common::websim_crawl_with_hosts(&seeds, cfg);
    let root = c.dir.root().to_str().unwrap().to_owned();
    common::ok(common::dragnet(&[
        "cycle",
        "--progress",
        "quiet",
        "--until-empty",
        "--max-cycles",
        "5",
        &root,
    ]));
    c
}

/// Each page requested once, whatever its spellings, and no request with credentials.
fn check_no_request_carries_credentials(site: &Keys) {
    let seen = site.seen.lock().unwrap().clone();
    let mut targets: Vec<&str> = seen.iter().map(|(t, _)| t.as_str()).collect();
    targets.sort_unstable();
    assert_eq!(
        targets,
        [
            "/linked",
            "/moved",
            "/robots-real.txt",
            "/robots.txt",
            "/start",
            "/target"
        ],
        "each page once, whatever its spellings: {seen:?}"
    );
    for (t, headers) in &seen {
        assert!(
            !headers
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("authorization") || v.contains("secret")),
            "{t}: {headers:?}"
        );
    }
}

/// `s` (`what`) holds no user information.
fn no_secret(what: &str, s: &str) {
    assert!(!s.contains("secret") && !s.contains('@'), "{what}: {s}");
}

/// The fetch results (their URLs and redirects) and the URL db hold no user information.
fn check_results_and_the_url_db_hold_none(c: &common::Crawl, port: u16) {
    let cycles = dragnet::crawl::next_cycle(&c.dir, 1);
    let results = common::fetch_results(&c.dir, 1, cycles);
    assert_eq!(results.len(), 4, "{results:?}");
    for r in &results {
        no_secret("fetch result url", &r.url);
        no_secret("fetch result redirect", &r.redirect);
    }
    assert!(results
        .iter()
        .any(|r| r.redirect == format!("http://keys.test:{port}/target")));
    let o = common::outcome(&c.dir, 1);
    assert_eq!(o.urldb[0].len(), 4, "{:?}", o.urldb);
    for (url, ..) in o.urldb[0].values() {
        no_secret("URL db", url);
    }
}

/// Every WARC record's target and every CDXJ line hold no user information.
fn check_warcs_and_cdxj_hold_none(c: &common::Crawl) {
    let cycles = dragnet::crawl::next_cycle(&c.dir, 1);
    let mut warcs = 0;
    for cycle in 0..cycles {
        let Ok(dir) = std::fs::read_dir(c.dir.warc_dir(cycle)) else {
            continue;
        };
        for p in dir.flatten().map(|e| e.path()) {
            if !p.to_string_lossy().contains(".warc") {
                continue;
            }
            warcs += 1;
            let mut rd = dragnet::warc::reader::WarcReader::open(&p, Default::default()).unwrap();
            while let Some(rec) = rd.next_record().unwrap() {
                if let Some(t) = rec.header().target_uri() {
                    no_secret("WARC-Target-URI", t);
                }
            }
        }
    }
    assert!(warcs > 0);
    let mut cdxj = 0;
    let mut stack = vec![c.dir.root().to_path_buf()];
    while let Some(d) = stack.pop() {
        for p in std::fs::read_dir(&d).unwrap().flatten().map(|e| e.path()) {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "cdxj") {
                cdxj += 1;
                let text = std::fs::read_to_string(&p).unwrap();
                assert!(!text.contains("secret"), "{}: {text}", p.display());
            }
        }
    }
    assert!(cdxj > 0);
}

/// Every exported table (urls, pages, links, written into `scratch`) holds no user information.
fn check_exports_hold_none(c: &common::Crawl, scratch: &std::path::Path) {
    let root = c.dir.root().to_str().unwrap().to_owned();
    for what in ["urls", "pages", "links"] {
        let out = scratch.join(format!("{what}.jsonl"));
        let out_s = out.to_str().unwrap();
        common::ok(common::dragnet(&[
            "export", "--what", what, "--format", "jsonl", "--out", out_s, &root,
        ]));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(!text.is_empty(), "{what}");
        assert!(!text.contains("secret"), "{what}: {text}");
    }
}

/// Issue 30, point 6: a CR, LF or other control character in a header value of the
/// configuration (`user_agent`, `from`) is a configuration error naming the key, exit 2: at
/// `dragnet init` (nothing created), and at every later load of crawl.toml, here by `dragnet
/// cycle` and `dragnet fetch` after crawl.toml was edited (nothing changed). Before, a CR/LF in
/// `user_agent` was accepted and every host became `robots_unreachable`.
#[test]
fn control_characters_in_header_values_are_a_configuration_error() {
    let scratch = tempfile::tempdir().unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, "http://a.example/\n").unwrap();
    let dragnet = |args: &[&std::ffi::OsStr]| common::dragnet(args);
    for (key, value) in [
        ("user_agent", r#""dragnet/0.1\r\nX-Evil: 1""#),
        ("user_agent", r#""dragnet/0.1\n""#),
        ("from", r#""ops@example.org\r\nX-Evil: 1""#),
        ("from", r#""ops@example.org\u007f""#),
    ] {
        let config = scratch.path().join("bad.toml");
        std::fs::write(&config, format!("[fetch]\n{key} = {value}\n")).unwrap();
        let dir = scratch.path().join("crawl");
        let out = dragnet(&[
            "init".as_ref(),
            "--seeds".as_ref(),
            seeds.as_os_str(),
            "--partitions".as_ref(),
            "1".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            dir.as_os_str(),
        ]);
        let text = common::out_text(&out);
        assert_eq!(out.status.code(), Some(2), "{key} = {value}: {text}");
        assert!(text.contains(&format!("fetch.{key}")), "{text}");
        assert!(text.contains("one line"), "{text}");
        assert!(!dir.join("crawl.toml").exists(), "{text}");
    }

    // A good crawl, whose crawl.toml is edited afterwards.
    let dir = scratch.path().join("good");
    common::ok(dragnet(&[
        "init".as_ref(),
        "--seeds".as_ref(),
        seeds.as_os_str(),
        "--partitions".as_ref(),
        "1".as_ref(),
        dir.as_os_str(),
    ]));
    let toml = dir.join("crawl.toml");
    let good = std::fs::read_to_string(&toml).unwrap();
    let line = good
        .lines()
        .find(|l| l.starts_with("user_agent = "))
        .unwrap()
        .to_owned();
    let edited = good.replace(&line, r#"user_agent = "dragnet/0.1\r\nX-Evil: 1""#);
    assert_ne!(edited, good);
    std::fs::write(&toml, &edited).unwrap();
    let before = common::snapshot(&dir);
    for args in [
        vec!["cycle", "--progress", "quiet"],
        vec!["fetch", "--cycle", "0", "--partition", "0"],
    ] {
        let mut args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        args.push(dir.as_os_str());
        let out = dragnet(&args);
        let text = common::out_text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("fetch.user_agent") && text.contains("carriage return"),
            "{text}"
        );
        assert_eq!(
            common::snapshot(&dir),
            before,
            "{args:?} changed the crawl: {text}"
        );
    }
}
