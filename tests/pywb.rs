//! Replay in pywb (issue 22, point 2; issue 32, points 4 and 5): a websim crawl's directory is
//! a pywb collection as it stands (`indexes/index.cdxj` beside `archive/`), and pywb serves its
//! pages, revisits and requisites back byte for byte. The crawls are made with the default
//! configuration (no `warc_compression` given: what a user who changes nothing gets). pywb
//! (warcio) has no zstd decoder: a copy converted to `.warc.zst` in place (`dragnet warc
//! convert --crawl`) is indexed alike but not replayed (the test says what pywb answers), and
//! converted back to `.warc.gz` it replays again. A WACZ package (`dragnet export --what wacz`)
//! replays once `wb-manager add --unpack-wacz` has put its WARC files and index into a
//! collection (pywb 2.10 does not serve a `.wacz` as it is).
//!
//! pywb is installed by `.ci/setup-extras` (`pip install pywb==2.10.0`); the tests are ignored
//! in a plain `cargo test` and run by `.ci/run`. They talk only to the websim server and to the
//! pywb they start, both on 127.0.0.1, with a bounded number of requests, each with a timeout.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `wayback` process, killed when dropped.
struct Wayback {
    child: Child,
    port: u16,
}

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts pywb's `wayback` in `root` (which holds `collections/`) on 127.0.0.1 and waits until
/// it answers: at most two minutes (a Python server starting beside the rest of `.ci/run`'s
/// peer tests on two busy cores has taken over one). A `wayback` that exits first (its port,
/// free when picked, taken by another test's server meanwhile) is started again on another
/// port, up to three times; its standard error is kept in `root/wayback-PORT.log` and shown if
/// it never answers.
fn wayback(root: &Path) -> Wayback {
    for attempt in 1..=3 {
        let port = free_port();
        let log_path = root.join(format!("wayback-{port}.log"));
        let log = std::fs::File::create(&log_path).expect("wayback log");
        let child = Command::new("wayback")
            .args(["-b", "127.0.0.1", "-p", &port.to_string(), "-t", "2"])
            .current_dir(root)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start wayback");
        let mut w = Wayback { child, port };
        let t0 = Instant::now();
        let exited = loop {
            if get(port, "/").is_ok_and(|(status, _, _)| status == 200) {
                return w;
            }
            if let Ok(Some(status)) = w.child.try_wait() {
                break Some(status);
            }
            if t0.elapsed() >= Duration::from_secs(120) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        if exited.is_some() && attempt < 3 {
            continue;
        }
        let why = match exited {
            Some(status) => format!("wayback on port {port} exited ({status})"),
            None => format!("wayback did not answer on 127.0.0.1:{port} within two minutes"),
        };
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!("{why}; its log ends:\n{}", tail.join("\n"));
    }
    unreachable!("the third attempt returns or panics")
}

/// An answer: status, headers (names lowercased), body.
type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// `GET path` from 127.0.0.1:port over HTTP/1.0.
fn get(port: u16, path: &str) -> std::io::Result<Answer> {
    let mut s = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(5),
    )?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut all = Vec::new();
    s.take(64 << 20).read_to_end(&mut all)?;
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status"))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Ok((status, headers, all[end + 4..].to_vec()))
}

/// The body with its content coding undone.
fn decoded(headers: &[(String, String)], body: Vec<u8>) -> Vec<u8> {
    let coding = headers
        .iter()
        .find(|(n, _)| n == "content-encoding")
        .map(|(_, v)| v.to_ascii_lowercase());
    let mut out = Vec::new();
    match coding.as_deref() {
        Some("gzip") | Some("x-gzip") => {
            flate2::read::MultiGzDecoder::new(&body[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("deflate") => {
            flate2::read::ZlibDecoder::new(&body[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(&body[..], 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        _ => out = body,
    }
    out
}

/// A crawl of `web` with the default configuration (the WARC compression left to the
/// default), two cycles.
fn crawl(web: &websim::model::Web) -> common::Crawl {
    let cfg = common::websim_config(2, 2);
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg);
    let opts = dragnet::exec::CycleOptions {
        max_cycles: 2,
        ..common::until_empty(2)
    };
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    c
}

/// The suffixes of the crawl's WARC files (`.gz`, `.zst`).
fn suffixes(c: &common::Crawl) -> Vec<String> {
    let mut v = Vec::new();
    for cy in c.dir.cycles() {
        for e in std::fs::read_dir(c.dir.warc_dir(cy)).into_iter().flatten() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if !n.contains(".wet") && !n.starts_with('.') {
                v.push(n.split_once(".warc").unwrap().1.to_string());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

/// `dragnet warc convert --crawl DIR --to TO`.
fn convert(dir: &Path, to: &str) {
    common::ok(common::dragnet(&[
        "warc",
        "convert",
        "--crawl",
        dir.to_str().unwrap(),
        "--to",
        to,
    ]));
}

/// Whether pywb's `wayback` runs here (the test stops, saying how to get it, if not).
fn require_pywb() {
    let has = Command::new("wayback")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("pywb", has, "pip install pywb==2.10.0");
}

/// The captures of the crawl's index with status 200: (timestamp, url).
fn captures(c: &common::Crawl) -> Vec<(String, String)> {
    captures_in(c.dir.root())
}

/// The captures with status 200 of the index of the collection or crawl at `root`.
fn captures_in(root: &Path) -> Vec<(String, String)> {
    let index = std::fs::read_to_string(root.join("indexes/index.cdxj")).unwrap();
    index
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (_, ts, json) = (parts.next()?, parts.next()?, parts.next()?);
            let j: serde_json::Value = serde_json::from_str(json).ok()?;
            let url = j["url"].as_str()?.to_string();
            (j["status"] == "200").then(|| (ts.to_string(), url))
        })
        .collect()
}

/// What websim serves at `url` (before content coding).
fn served(web: &websim::model::Web, url: &str) -> Vec<u8> {
    let u = url::Url::parse(url).unwrap();
    let host = web.host_index(u.host_str().unwrap()).unwrap();
    let path = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_string(),
    };
    if path == "/robots.txt" {
        return web.render_robots(host).unwrap().body;
    }
    let at = web.resolve(host, &path).unwrap();
    web.render(at).body
}

/// `dedup.test`: `/` links to `/same` (the same bytes at every fetch) and `/changing` (new
/// bytes at every fetch), as in `tests/revisit.rs`: recrawled, `/same` becomes revisits.
struct Dedup(std::sync::atomic::AtomicU64);

impl websim::site::Site for Dedup {
    fn respond(&self, req: &websim::site::Request) -> websim::site::Response {
        let html = |body: &str| {
            websim::site::Response::new(
                200,
                "text/html",
                format!("<html><body>{body}</body></html>").into_bytes(),
            )
        };
        match req.target.as_str() {
            "/robots.txt" => websim::site::Response::new(
                200,
                "text/plain",
                b"User-agent: *\nAllow: /\n".to_vec(),
            ),
            "/" => html("<a href=\"/same\">same</a> <a href=\"/changing\">changing</a>"),
            "/same" => html(&"the same words ".repeat(200)),
            "/changing" => {
                let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                html(&format!("fetch number {n}"))
            }
            _ => websim::site::Response::new(404, "text/plain", b"no\n".to_vec()),
        }
    }

    fn min_delay(&self, _host: &str) -> Duration {
        Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}

/// Cycles of `dedup.test` with the default configuration (dedup on), every fetched page due
/// again at once, until `/same` has two revisits in the crawl's index (at most 10 cycles). A
/// page fetched more than a second after its fetch started is due only at the merge after next
/// (the recrawl clock is the fetch's start, in seconds), which a loaded machine makes common:
/// a fixed count of cycles gave one revisit there.
fn dedup_crawl() -> common::Crawl {
    let (server, port) = common::serve_site(std::sync::Arc::new(Dedup(
        std::sync::atomic::AtomicU64::new(0),
    )));
    let mut cfg = common::websim_config(2, 2);
    cfg.resolve.entries = vec![format!("dedup.test:{port}:127.0.0.1")];
    cfg.fetch.follow_per_host = 0;
    cfg.scope.allowed_domains = vec!["dedup.test".into()];
    cfg.prioritize.recrawl_after_secs = 0;
    cfg.prioritize.recrawl_min_secs = 0;
    let c = common::websim_crawl_with_hosts(&[format!("http://dedup.test:{port}/")], cfg);
    let revisits = || {
        std::fs::read_to_string(dragnet::ops::index::crawl_index(&c.dir))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("/same\"") && l.contains("warc/revisit"))
            .count()
    };
    for _ in 0..10 {
        dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::cycles(1)).unwrap();
        if revisits() >= 2 {
            break;
        }
    }
    server.stop();
    c
}

/// Replays `count` of `pages` (every `step`-th) from collection `coll`, each byte for byte
/// what websim served; returns how many did.
fn replay(
    w: &Wayback,
    coll: &str,
    web: &websim::model::Web,
    pages: &[(String, String)],
    step: usize,
    count: usize,
) -> usize {
    let mut checked = 0;
    for (ts, url) in pages.iter().step_by(step).take(count) {
        let (status, headers, body) = get(w.port, &format!("/{coll}/{ts}id_/{url}")).unwrap();
        assert_eq!(status, 200, "{coll}: {url} at {ts}");
        let body = decoded(&headers, body);
        assert!(
            body == served(web, url),
            "{coll}: {url}: pywb replayed {} bytes that differ from the {} websim served",
            body.len(),
            served(web, url).len()
        );
        checked += 1;
    }
    checked
}

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_default_crawl_from_its_own_index() {
    require_pywb();
    let (web, server) = common::small_web(33, 5, 12);
    let c = crawl(&web);
    server.stop();
    eprintln!("the default crawl wrote WARC files {:?}", suffixes(&c));
    // A copy converted to .warc.zst in place, and one converted there and back.
    let scratch = tempfile::tempdir().unwrap();
    let (zst, back) = (scratch.path().join("zst"), scratch.path().join("back"));
    common::copy_dir(c.dir.root(), &zst);
    convert(&zst, "zst");
    common::copy_dir(&zst, &back);
    convert(&back, "gz");

    let root = tempfile::tempdir().unwrap();
    let colls = root.path().join("collections");
    std::fs::create_dir_all(&colls).unwrap();
    std::os::unix::fs::symlink(c.dir.root(), colls.join("dflt")).unwrap();
    std::os::unix::fs::symlink(&zst, colls.join("zst")).unwrap();
    std::os::unix::fs::symlink(&back, colls.join("back")).unwrap();
    let w = wayback(root.path());

    let pages = captures(&c);
    assert!(pages.len() >= 30, "{} captures", pages.len());
    let checked = replay(&w, "dflt", &web, &pages, 2, 40);
    assert!(checked >= 15, "{checked} pages checked");
    // Rewritten replay (what a person browsing sees) answers too.
    let (ts, url) = &pages[0];
    let (status, _, _) = get(w.port, &format!("/dflt/{ts}/{url}")).unwrap();
    assert_eq!(status, 200, "{url} rewritten");
    // Converted to .zst and back: the same pages, byte for byte.
    let back_pages = captures_in(&back);
    assert_eq!(back_pages, pages);
    let back_checked = replay(&w, "back", &web, &back_pages, 2, 40);

    // pywb (warcio) has no zstd decoder: say what it answers for the .warc.zst copy.
    let zpages = captures_in(&zst);
    let mut zstd_ok = 0;
    for (ts, url) in zpages.iter().step_by(4).take(10) {
        let (status, headers, body) = get(w.port, &format!("/zst/{ts}id_/{url}")).unwrap();
        zstd_ok += usize::from(status == 200 && decoded(&headers, body) == served(&web, url));
    }
    eprintln!(
        "pywb replayed {checked} pages of a default crawl byte for byte, {back_checked} of its \
         copy converted to .warc.zst and back, and {zstd_ok} of 10 of the .warc.zst copy"
    );
}

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_wacz_package_unpacked_into_a_collection() {
    require_pywb();
    let (web, server) = common::small_web(34, 4, 12);
    let c = crawl(&web);
    server.stop();
    // In .warc.zst, so the package converts on the way.
    convert(c.dir.root(), "zst");
    let scratch = tempfile::tempdir().unwrap();
    let wacz = scratch.path().join("crawl.wacz");
    common::ok(common::dragnet(&[
        "export",
        "--what",
        "wacz",
        "--out",
        wacz.to_str().unwrap(),
        c.dir.root().to_str().unwrap(),
    ]));
    let root = scratch.path().join("pywb");
    std::fs::create_dir_all(&root).unwrap();
    for args in [
        vec!["init".to_string(), "pkg".into()],
        vec![
            "add".into(),
            "--unpack-wacz".into(),
            "pkg".into(),
            wacz.display().to_string(),
        ],
    ] {
        let o = Command::new("wb-manager")
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "wb-manager {args:?}: {}",
            common::out_text(&o)
        );
    }
    let w = wayback(&root);
    // The package's own page list: replayed at its timestamps.
    let list = {
        let o = Command::new("unzip")
            .args(["-p"])
            .arg(&wacz)
            .arg("pages/pages.jsonl")
            .output();
        match o {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            _ => String::new(),
        }
    };
    let mut pages: Vec<(String, String)> = list
        .lines()
        .skip(1)
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            let ts: String = v["ts"]
                .as_str()?
                .chars()
                .filter(char::is_ascii_digit)
                .take(14)
                .collect();
            Some((ts, v["url"].as_str()?.to_string()))
        })
        .collect();
    if pages.is_empty() {
        // No unzip: the collection's index lists the same captures.
        pages = captures_in(&root.join("collections/pkg"))
            .into_iter()
            .filter(|(_, u)| u.ends_with('/') || u.ends_with(".html"))
            .collect();
    }
    assert!(pages.len() >= 10, "{} pages", pages.len());
    let checked = replay(&w, "pkg", &web, &pages, 1, 30);
    eprintln!(
        "pywb replayed {checked} pages of a WACZ package (unpacked by wb-manager) byte for byte"
    );
}

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_revisit_with_its_captures_body() {
    require_pywb();
    let c = dedup_crawl();
    let root = tempfile::tempdir().unwrap();
    let colls = root.path().join("collections");
    std::fs::create_dir_all(&colls).unwrap();
    std::os::unix::fs::symlink(c.dir.root(), colls.join("dedup")).unwrap();
    let w = wayback(root.path());
    let index = std::fs::read_to_string(dragnet::ops::index::crawl_index(&c.dir)).unwrap();
    let mut replayed = 0;
    for l in index.lines().filter(|l| l.contains("/same\"")) {
        let ts = l.split(' ').nth(1).unwrap();
        let j: serde_json::Value = serde_json::from_str(&l[l.find(" {").unwrap()..]).unwrap();
        let url = j["url"].as_str().unwrap();
        let (status, headers, body) = get(w.port, &format!("/dedup/{ts}id_/{url}")).unwrap();
        assert_eq!(status, 200, "{l}");
        let body = decoded(&headers, body);
        let want = format!(
            "<html><body>{}</body></html>",
            "the same words ".repeat(200)
        );
        assert_eq!(String::from_utf8_lossy(&body), want, "{l}");
        replayed += usize::from(j["mime"] == "warc/revisit");
    }
    assert!(replayed >= 2, "{replayed} revisits replayed");
    eprintln!("pywb replayed {replayed} revisits of /same with the body of their capture");
}

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_page_with_its_requisites() {
    require_pywb();
    let (web, server) = websim::server::Server::start_web(
        websim::model::WebConfig {
            seed: 72,
            port: 0,
            listeners: 2,
            hosts: 4,
            pages: 8,
            hostile_every: 0,
            requisites_every: 2,
            max_crawl_delay: Duration::from_millis(20),
            ..websim::model::WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap();
    let mut cfg = common::websim_config(2, 2);
    cfg.parse.requisites = true;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(20)).unwrap();
    server.stop();
    let root = tempfile::tempdir().unwrap();
    let colls = root.path().join("collections");
    std::fs::create_dir_all(&colls).unwrap();
    std::os::unix::fs::symlink(c.dir.root(), colls.join("arch")).unwrap();
    let w = wayback(root.path());
    // Every asset the crawl archived comes back, byte for byte, as the page loads it.
    let assets: Vec<(String, String)> = captures(&c)
        .into_iter()
        .filter(|(_, u)| u.contains("/static/"))
        .collect();
    assert!(assets.len() >= 8, "{} assets", assets.len());
    for (ts, url) in &assets {
        let (status, headers, body) = get(w.port, &format!("/arch/{ts}id_/{url}")).unwrap();
        assert_eq!(status, 200, "{url}");
        assert!(decoded(&headers, body) == served(&web, url), "{url}");
    }
    eprintln!("pywb replayed {} requisites byte for byte", assets.len());
}
