//! The static export: files hold exactly the bytes websim serves, nginx.conf names every host,
//! the hostile hosts are exported as EXPORT.md says, and (when an `nginx` binary is installed)
//! nginx serves the export as websim would.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use websim::export::{export, file_of};
use websim::model::{HostSpec, Hostile, PageKind, PageRef, Web, WebConfig};
use websim::robots::RobotsServe;
use websim::site::{Body, Request, Site};

fn small_web(port: u16) -> Web {
    Web::new(WebConfig {
        drip_interval: Duration::from_micros(10), // limit_rate 100000: a page in well under 1 s
        seed: 5,
        hosts: 24,
        pages: 30,
        hostile_every: 3, // hosts 2, 5, ..., 20: every hostile kind once
        bomb_bytes: 1 << 20,
        port,
        ..WebConfig::default()
    })
}

/// What websim's own server sends for `target` on host `h` (no content coding asked for).
fn served(web: &Web, h: u32, target: &str) -> (u16, Vec<u8>) {
    let any: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let resp = web.respond(&Request {
        method: "GET".into(),
        target: target.into(),
        host: web.hosts[h as usize].name.clone(),
        headers: vec![],
        peer: any,
        local: any,
        conn: 1,
        tls: false,
    });
    let body = match resp.body {
        Body::Full(b) | Body::Drip { bytes: b, .. } => b,
        other => panic!("unexpected body {other:?}"),
    };
    (resp.status, body)
}

#[test]
fn export_files_equal_what_websim_serves() {
    let web = small_web(8480);
    let dir = tempfile::tempdir().unwrap();
    let stats = export(&web, dir.path()).unwrap();
    eprintln!("{stats:?}");
    let mut checked = 0;
    for (h, spec) in web.hosts.iter().enumerate() {
        let h = h as u32;
        let root = dir.path().join("sites").join(&spec.name);
        let exported_as_is = matches!(
            spec.hostile,
            None | Some(Hostile::Trap | Hostile::SlowDrip | Hostile::HugeHeaders)
        );
        if matches!(
            spec.robots_serve,
            RobotsServe::Text | RobotsServe::Huge | RobotsServe::Html
        ) {
            let file = std::fs::read(root.join("robots.txt")).unwrap();
            assert!(
                file == served(&web, h, "/robots.txt").1,
                "{} robots.txt differs",
                spec.name
            );
        }
        for p in web.sitemap_paths(h) {
            let file = std::fs::read(root.join(file_of(p))).unwrap();
            assert!(file == served(&web, h, p).1, "{} {p} differs", spec.name);
            checked += 1;
        }
        for page in 0..web.config.pages {
            let at = PageRef::Page { host: h, page };
            let path = web.path(at);
            let file = root.join(file_of(&path));
            match (spec.hostile, web.kind(h, page)) {
                (Some(Hostile::GzipBomb), _) => {
                    let link = std::fs::read_link(&file).unwrap();
                    assert!(link.ends_with("bomb.gz"), "{link:?}");
                    let mut n = 0u64;
                    let mut d = flate2::read::GzDecoder::new(std::fs::File::open(&file).unwrap());
                    let mut buf = vec![0u8; 1 << 16];
                    loop {
                        let k = d.read(&mut buf).unwrap();
                        if k == 0 {
                            break;
                        }
                        n += k as u64;
                    }
                    assert_eq!(n, web.config.bomb_bytes);
                }
                (_, PageKind::Redirect { .. } | PageKind::Error { .. }) => {
                    assert!(!file.exists(), "{path}: a location, not a file");
                }
                _ if !exported_as_is => assert!(!file.exists(), "{path}: host answers 444"),
                _ => {
                    let bytes = std::fs::read(&file).unwrap();
                    assert!(
                        bytes == served(&web, h, &path).1,
                        "{}{path}: bytes differ",
                        spec.name
                    );
                    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
                    let lm = web.page(at).last_modified;
                    assert_eq!(mtime, SystemTime::UNIX_EPOCH + Duration::from_secs(lm));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "{checked}");
    // The trap's calendar window is exported, its sessions are not.
    let trap = web
        .hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::Trap))
        .unwrap();
    let root = dir.path().join("sites").join(&trap.name);
    let cal = PageRef::Calendar {
        host: trap.index,
        month: 10,
    };
    let bytes = std::fs::read(root.join(file_of(&web.path(cal)))).unwrap();
    assert!(
        bytes == served(&web, trap.index, &web.path(cal)).1,
        "calendar bytes differ"
    );
    assert!(!root.join("shop/item-1").exists());
}

#[test]
fn nginx_conf_hosts_and_notes_cover_every_host() {
    let web = small_web(8480);
    let dir = tempfile::tempdir().unwrap();
    export(&web, dir.path()).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let conf = read("nginx.conf");
    for must in [
        "worker_processes 2;",
        "gzip off;",
        "access_log off;",
        "http {",
    ] {
        assert!(conf.contains(must), "nginx.conf lacks {must}");
    }
    assert_eq!(conf.matches('{').count(), conf.matches('}').count());
    for spec in &web.hosts {
        assert!(
            conf.contains(&format!("server_name {};", spec.name)),
            "{}",
            spec.name
        );
        assert!(
            conf.contains(&format!("listen {}:8480;", spec.addr)),
            "{}",
            spec.name
        );
        assert!(
            conf.contains(&format!("root sites/{};", spec.name)),
            "{}",
            spec.name
        );
    }
    // Redirects and errors are locations.
    let mut locations = 0;
    for h in 0..web.config.hosts {
        if web.hosts[h as usize]
            .hostile
            .is_some_and(|k| k != Hostile::Trap)
        {
            continue;
        }
        for page in 0..web.config.pages {
            let path = web.path(PageRef::Page { host: h, page });
            let want = match web.kind(h, page) {
                PageKind::Redirect { status, to } => format!("return {status} {};", web.url(to)),
                PageKind::Error { status } => format!("return {status};"),
                _ => continue,
            };
            assert!(
                conf.contains(&format!("location = {path} {{")) && conf.contains(&want),
                "{path} {want}"
            );
            locations += 1;
        }
    }
    assert!(locations > 5);
    let hosts = read("hosts");
    let lines: Vec<&str> = hosts.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), web.hosts.len());
    assert_eq!(
        lines[0],
        format!("{}\t{}", web.hosts[0].addr, web.hosts[0].name)
    );
    let notes = read("EXPORT.md");
    for spec in &web.hosts {
        if spec.hostile.is_some() || spec.robots_serve == RobotsServe::Timeout {
            assert!(
                notes.contains(&format!("| {} |", spec.name)),
                "{} missing",
                spec.name
            );
        }
    }
    // A second export into the same directory gives the same bytes.
    let conf1 = conf.clone();
    export(&web, dir.path()).unwrap();
    assert_eq!(read("nginx.conf"), conf1);
}

// ---- nginx itself, when installed ----

struct Nginx(Child);

impl Drop for Nginx {
    /// SIGTERM: nginx's fast shutdown, in which the master stops its workers (SIGKILL would
    /// orphan them). SIGKILL only if it has not exited within 5 s.
    fn drop(&mut self) {
        let pid = self.0.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The nginx binary; panics with how to install it when there is none (the test that needs it
/// is `#[ignore]`d in a plain `cargo test`, and `.ci/run` runs it where nginx is installed).
fn nginx_binary() -> &'static str {
    let ok = Command::new("nginx")
        .arg("-v")
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        ok,
        "this test needs nginx (apt-get install nginx-light), and there is no nginx binary"
    );
    "nginx"
}

fn http_get(addr: SocketAddr, host: &str, target: &str) -> (u16, HashMap<String, String>, Vec<u8>) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {target} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf); // 444: closed without a byte
    if buf.is_empty() {
        return (0, HashMap::new(), buf);
    }
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, buf[end + 4..].to_vec())
}

fn free_port() -> u16 {
    for _ in 0..20 {
        let l = TcpListener::bind("127.0.1.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        drop(l);
        if (2..=4).all(|i| TcpListener::bind(format!("127.0.1.{i}:{p}")).is_ok()) {
            return p;
        }
    }
    panic!("no free port on 127.0.1.1-4");
}

fn chmod_world_readable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
#[ignore = "needs nginx (apt-get install nginx-light); .ci/run runs it where nginx is installed"]
fn nginx_serves_the_export_like_websim() {
    let bin = nginx_binary();
    let port = free_port();
    let web = small_web(port);
    let dir = tempfile::tempdir().unwrap();
    chmod_world_readable(dir.path()); // workers of a root master run as nobody
    export(&web, dir.path()).unwrap();
    let first = SocketAddr::new(web.hosts[0].addr.into(), port);
    let _nginx = start_nginx(bin, dir.path(), first);
    let mut seen = HashMap::new();
    for (h, spec) in web.hosts.iter().enumerate() {
        let h = h as u32;
        let addr = SocketAddr::new(spec.addr.into(), port);
        let (status, _, body) = http_get(addr, &spec.name, "/robots.txt");
        let (want_status, want_body) = served(&web, h, "/robots.txt");
        match spec.robots_serve {
            RobotsServe::Timeout => assert_eq!(status, 0, "{}", spec.name),
            RobotsServe::NotFound | RobotsServe::ServerError => assert_eq!(status, want_status),
            _ => assert!(
                (status, body) == (want_status, want_body),
                "{} robots.txt",
                spec.name
            ),
        }
        for p in web.sitemap_paths(h) {
            let (status, _, body) = http_get(addr, &spec.name, p);
            assert!((status, body) == served(&web, h, p), "{}{p}", spec.name);
            *seen.entry("sitemap").or_insert(0) += 1;
        }
        // A dripping host costs time: a few pages show it.
        let pages = if spec.hostile == Some(Hostile::SlowDrip) {
            4
        } else {
            web.config.pages
        };
        for page in 0..pages {
            let key = check_page(&web, spec, page, addr);
            *seen.entry(key).or_insert(0) += 1;
        }
    }
    eprintln!("nginx answered like websim: {seen:?}");
    for k in ["closed", "bomb", "redirect", "error", "page", "sitemap"] {
        assert!(seen.contains_key(k), "{k} not exercised");
    }
    // Unknown hosts get 404 from the default server.
    assert_eq!(http_get(first, "nobody.websim.test", "/").0, 404);
}

/// Checks the export in `dir` with `nginx -t`, then starts nginx on it and waits until `first`
/// accepts connections.
fn start_nginx(bin: &str, dir: &Path, first: SocketAddr) -> Nginx {
    let test = Command::new(bin)
        .args(["-t", "-p"])
        .arg(dir)
        .args(["-c", "nginx.conf"])
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "nginx -t: {}",
        String::from_utf8_lossy(&test.stderr)
    );
    let nginx = Nginx(
        Command::new(bin)
            .arg("-p")
            .arg(dir)
            .args(["-c", "nginx.conf", "-g", "daemon off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while TcpStream::connect(first).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "nginx did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nginx
}

/// Page `page` of host `spec` as nginx serves it at `addr`, against what websim serves; what it
/// exercised (`closed`, `bomb`, `redirect`, `error` or `page`).
fn check_page(web: &Web, spec: &HostSpec, page: u32, addr: SocketAddr) -> &'static str {
    let h = spec.index;
    let at = PageRef::Page { host: h, page };
    let path = web.path(at);
    let (status, headers, body) = http_get(addr, &spec.name, &path);
    let kind = web.kind(h, page);
    match spec.hostile {
        Some(Hostile::EndlessBody | Hostile::ResetMidBody | Hostile::WrongContentLength) => {
            assert_eq!(status, 0, "{}{path}", spec.name);
            "closed"
        }
        Some(Hostile::GzipBomb) => {
            assert_eq!(status, 200);
            assert_eq!(
                headers.get("content-encoding").map(String::as_str),
                Some("gzip")
            );
            "bomb"
        }
        _ => {
            let r = web.render(at);
            assert_eq!(status, r.status, "{}{path}", spec.name);
            match kind {
                PageKind::Redirect { to, .. } => {
                    assert_eq!(headers.get("location"), Some(&web.url(to)));
                    "redirect"
                }
                PageKind::Error { .. } => "error",
                _ => {
                    assert!(
                        body == r.body,
                        "{}{path}: {} bytes, want {}",
                        spec.name,
                        body.len(),
                        r.body.len()
                    );
                    assert_eq!(
                        headers.get("content-type"),
                        Some(&r.content_type),
                        "{}{path}",
                        spec.name
                    );
                    for (n, v) in &r.headers {
                        assert_eq!(
                            headers.get(&n.to_ascii_lowercase()),
                            Some(v),
                            "{}{path}",
                            spec.name
                        );
                    }
                    if spec.hostile == Some(Hostile::HugeHeaders) {
                        assert!(headers.contains_key("x-filler-1099"));
                    }
                    "page"
                }
            }
        }
    }
}
