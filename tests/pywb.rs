//! Replay in pywb (issue 22, point 2): a websim crawl's directory is a pywb collection as it
//! stands (`indexes/index.cdxj` beside `archive/`), and pywb serves its pages back: status 200
//! and the body the server sent, for `.warc.gz`. pywb (warcio) has no zstd decoder, so a crawl
//! with `.warc.zst` files is indexed alike but not replayed; the test shows what pywb answers.
//!
//! pywb is installed by `.ci/setup-extras` (`pip install pywb==2.10.0`); the test is ignored in a
//! plain `cargo test` and run by `.ci/run`. It talks only to the websim server and to the pywb it
//! starts, both on 127.0.0.1, with a bounded number of requests, each with a timeout.

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

/// Starts pywb's `wayback` in `root` (which holds `collections/`) on 127.0.0.1 and waits (at most
/// a minute) until it answers.
fn wayback(root: &Path) -> Wayback {
    let port = free_port();
    let child = Command::new("wayback")
        .args(["-b", "127.0.0.1", "-p", &port.to_string(), "-t", "2"])
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wayback");
    let w = Wayback { child, port };
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if get(port, "/").is_ok_and(|(status, _, _)| status == 200) {
            return w;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("wayback did not answer on 127.0.0.1:{port} within a minute");
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

/// A crawl of `web` with WARCs of `compression`, two cycles.
fn crawl(web: &websim::model::Web, compression: &str) -> common::Crawl {
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.warc_compression = compression.into();
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg);
    let opts = dragnet::exec::CycleOptions {
        max_cycles: 2,
        ..common::until_empty(2)
    };
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    c
}

/// The captures of the crawl's index with status 200: (timestamp, url).
fn captures(c: &common::Crawl) -> Vec<(String, String)> {
    let index = std::fs::read_to_string(dragnet::crawl::index::crawl_index(&c.dir)).unwrap();
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

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_crawl_from_its_own_index() {
    let has = Command::new("wayback")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("pywb", has, "pip install pywb==2.10.0");
    let (web, server) = common::small_web(33, 5, 12);
    let gz = crawl(&web, "gzip");
    let zst = crawl(&web, "zstd");
    server.stop();

    let root = tempfile::tempdir().unwrap();
    let colls = root.path().join("collections");
    std::fs::create_dir_all(&colls).unwrap();
    std::os::unix::fs::symlink(gz.dir.root(), colls.join("gz")).unwrap();
    std::os::unix::fs::symlink(zst.dir.root(), colls.join("zst")).unwrap();
    let w = wayback(root.path());

    let pages = captures(&gz);
    assert!(pages.len() >= 30, "{} captures", pages.len());
    let mut checked = 0;
    for (ts, url) in pages.iter().step_by(2).take(40) {
        let (status, headers, body) = get(w.port, &format!("/gz/{ts}id_/{url}")).unwrap();
        assert_eq!(status, 200, "{url} at {ts}");
        let body = decoded(&headers, body);
        assert!(
            body == served(&web, url),
            "{url}: pywb replayed {} bytes that differ from the {} websim served",
            body.len(),
            served(&web, url).len()
        );
        checked += 1;
    }
    assert!(checked >= 15, "{checked} pages checked");
    // Rewritten replay (what a person browsing sees) answers too.
    let (ts, url) = &pages[0];
    let (status, _, _) = get(w.port, &format!("/gz/{ts}/{url}")).unwrap();
    assert_eq!(status, 200, "{url} rewritten");

    // pywb (warcio) has no zstd decoder: say what it answers for a .warc.zst crawl.
    let zpages = captures(&zst);
    let mut zstd_ok = 0;
    for (ts, url) in zpages.iter().step_by(4).take(10) {
        let (status, headers, body) = get(w.port, &format!("/zst/{ts}id_/{url}")).unwrap();
        zstd_ok += usize::from(status == 200 && decoded(&headers, body) == served(&web, url));
    }
    eprintln!(
        "pywb replayed {checked} pages of a .warc.gz crawl byte for byte, and {zstd_ok} of 10 \
         of a .warc.zst crawl"
    );
}

#[test]
#[ignore = "needs pywb (pip install pywb==2.10.0); .ci/run runs it where it is installed"]
fn pywb_replays_a_revisit_with_its_captures_body() {
    let has = Command::new("wayback")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("pywb", has, "pip install pywb==2.10.0");
    let (c, _) = crate::revisit::crawl(true, "gzip");
    let root = tempfile::tempdir().unwrap();
    let colls = root.path().join("collections");
    std::fs::create_dir_all(&colls).unwrap();
    std::os::unix::fs::symlink(c.dir.root(), colls.join("dedup")).unwrap();
    let w = wayback(root.path());
    let index = std::fs::read_to_string(dragnet::crawl::index::crawl_index(&c.dir)).unwrap();
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
    let has = Command::new("wayback")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("pywb", has, "pip install pywb==2.10.0");
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
    cfg.fetch.warc_compression = "gzip".into();
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
