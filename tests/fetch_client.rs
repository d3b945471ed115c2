//! `dragnet::fetch::client` against websim's web on loopback: every limit, bounded in time.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dragnet::config::ByteSize;
use dragnet::config::FetchSection;
use dragnet::fetch::client::{Cut, Fetcher, Validators};
use dragnet::resolve::Resolver;
use url::Url;
use websim::model::{Hostile, PageKind, PageRef, Web, WebConfig};
use websim::server::{Server, ServerOptions};

fn start() -> (Arc<Web>, Server, Arc<Resolver>) {
    let (web, server) = Server::start_web(
        WebConfig {
            port: 0,
            hosts: 30,
            pages: 10,
            listeners: 2,
            hostile_every: 2,
            drip_interval: Duration::from_millis(50),
            bomb_bytes: 4 << 20,
            ..WebConfig::default()
        },
        ServerOptions::default(),
    )
    .expect("websim starts");
    let mut resolver = Resolver::default();
    resolver
        .add_hosts_text(&websim::cli::hosts_file(&web), Path::new("websim.hosts"))
        .unwrap();
    (web, server, Arc::new(resolver))
}

/// Small limits so every test ends within a few seconds.
fn section() -> FetchSection {
    FetchSection {
        allow_private_addresses: true,
        connect_timeout_secs: 2.0,
        read_timeout_secs: 2.0,
        total_timeout_secs: 5.0,
        min_rate: 1024,
        min_rate_grace_secs: 0.5,
        max_body: ByteSize(1 << 20),
        max_header_bytes: ByteSize(64 << 10),
        ..FetchSection::default()
    }
}

fn host_with(web: &Web, hostile: Option<Hostile>) -> u32 {
    web.hosts
        .iter()
        .find(|h| h.hostile == hostile)
        .unwrap_or_else(|| panic!("a host with {hostile:?}"))
        .index
}

fn page_url(web: &Web, host: u32, page: u32) -> Url {
    Url::parse(&web.url(PageRef::Page { host, page })).unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn normal_page_then_not_modified() {
    let (web, _server, resolver) = start();
    let f = Fetcher::new(&section(), resolver);
    let host = host_with(&web, None);
    let url = page_url(&web, host, 0);
    let got = f.fetch(&url, Validators::default()).unwrap();
    assert_eq!(got.status, 200);
    assert_eq!(got.content_type, "text/html");
    assert!(got.cut.is_none(), "{:?}", got.cut);
    assert!(!got.body.is_empty());
    assert_eq!(got.ip, std::net::IpAddr::V4(web.hosts[host as usize].addr));
    let head = text(&got.raw_response_head);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    assert!(!head.to_ascii_lowercase().contains("transfer-encoding"));
    let req = text(&got.raw_request);
    let name = &web.hosts[host as usize].name;
    assert!(req.starts_with("GET / HTTP/1.1\r\nHost: "), "{req}");
    assert!(req.contains(name.as_str()) && req.contains("User-Agent: dragnet/"));
    assert!(req.contains("Accept-Encoding: gzip, deflate, br\r\n") && req.ends_with("\r\n\r\n"));
    let block = got.response_block();
    assert_eq!(block.len(), got.raw_response_head.len() + got.body.len());
    let etag = got.etag.clone().expect("websim sends an ETag");
    assert!(got.last_modified.is_some());

    // Conditional GET with the validator: 304, no body.
    let again = f
        .fetch(
            &url,
            Validators {
                etag: Some(&etag),
                last_modified: got.last_modified.as_deref(),
            },
        )
        .unwrap();
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert!(text(&again.raw_request).contains(&format!("If-None-Match: {etag}\r\n")));
}

#[test]
fn redirect_is_returned_not_followed() {
    let (web, _server, resolver) = start();
    let f = Fetcher::new(&section(), resolver);
    let (host, page, status, to) = web
        .hosts
        .iter()
        .filter(|h| h.hostile.is_none())
        .flat_map(|h| (1..web.config.pages).map(move |p| (h.index, p)))
        .find_map(|(h, p)| match web.kind(h, p) {
            PageKind::Redirect { status, to } => Some((h, p, status, to)),
            _ => None,
        })
        .expect("a redirect page");
    let got = f
        .fetch(&page_url(&web, host, page), Validators::default())
        .unwrap();
    assert_eq!(got.status, status);
    let want = Url::parse(&web.url(to)).unwrap();
    assert_eq!(got.location.as_deref(), Some(want.as_str()));
}

#[test]
fn slow_drip_is_cut_by_min_rate_then_by_total_timeout() {
    let (web, _server, resolver) = start();
    let url = page_url(&web, host_with(&web, Some(Hostile::SlowDrip)), 0);

    let t = Instant::now();
    let got = Fetcher::new(&section(), resolver.clone())
        .fetch(&url, Validators::default())
        .unwrap();
    assert_eq!(got.cut, Some(Cut::TooSlow));
    assert_eq!(got.error_kind().map(|k| k.as_str()), Some("too_slow"));
    assert_eq!(got.truncated().map(|t| t.as_str()), Some("time"));
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    let cfg = FetchSection {
        min_rate: 0,
        total_timeout_secs: 1.0,
        ..section()
    };
    let t = Instant::now();
    let got = Fetcher::new(&cfg, resolver)
        .fetch(&url, Validators::default())
        .unwrap();
    assert_eq!(got.cut, Some(Cut::Timeout));
    assert_eq!(got.truncated().map(|t| t.as_str()), Some("time"));
    assert!(!got.body.is_empty());
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn endless_body_is_truncated_at_max_body() {
    let (web, _server, resolver) = start();
    let url = page_url(&web, host_with(&web, Some(Hostile::EndlessBody)), 0);
    let cfg = section();
    let got = Fetcher::new(&cfg, resolver)
        .fetch(&url, Validators::default())
        .unwrap();
    assert_eq!(got.status, 200);
    assert_eq!(got.cut, Some(Cut::Length));
    assert_eq!(got.truncated().map(|t| t.as_str()), Some("length"));
    assert_eq!(got.body.len() as u64, cfg.max_body.0);
    assert_eq!(got.error_kind(), None);
}

#[test]
fn huge_headers_are_refused() {
    let (web, _server, resolver) = start();
    let url = page_url(&web, host_with(&web, Some(Hostile::HugeHeaders)), 0);
    let err = Fetcher::new(&section(), resolver)
        .fetch(&url, Validators::default())
        .unwrap_err();
    assert_eq!(err.kind(), "headers_too_large", "{err}");
}

#[test]
fn gzip_bomb_is_kept_compressed_and_capped() {
    let (web, _server, resolver) = start();
    let url = page_url(&web, host_with(&web, Some(Hostile::GzipBomb)), 0);
    let cfg = FetchSection {
        max_body: ByteSize(2048),
        ..section()
    };
    let got = Fetcher::new(&cfg, resolver)
        .fetch(&url, Validators::default())
        .unwrap();
    assert_eq!(got.status, 200);
    assert!(got.body.starts_with(&[0x1f, 0x8b]), "still gzip");
    assert!(got.body.len() <= 2048);
    assert_eq!(
        got.cut,
        Some(Cut::Length),
        "4 MiB of zeros gzip to more than 2 KiB"
    );
    assert!(text(&got.raw_response_head)
        .to_ascii_lowercase()
        .contains("content-encoding: gzip\r\n"));
}

#[test]
fn reset_and_short_bodies_are_reported() {
    let (web, _server, resolver) = start();
    let f = Fetcher::new(&section(), resolver);
    for kind in [Hostile::ResetMidBody, Hostile::WrongContentLength] {
        let url = page_url(&web, host_with(&web, Some(kind)), 0);
        let got = f.fetch(&url, Validators::default()).unwrap();
        assert_eq!(got.status, 200, "{kind:?}");
        assert_eq!(got.cut, Some(Cut::Disconnect), "{kind:?}");
        assert_eq!(got.error_kind().map(|k| k.as_str()), Some("disconnect"));
        assert_eq!(got.truncated().map(|t| t.as_str()), Some("disconnect"));
    }
}

#[test]
fn loopback_is_refused_unless_allowed() {
    let (web, _server, resolver) = start();
    let url = page_url(&web, host_with(&web, None), 0);
    let cfg = FetchSection {
        allow_private_addresses: false,
        ..section()
    };
    let err = Fetcher::new(&cfg, resolver.clone())
        .fetch(&url, Validators::default())
        .unwrap_err();
    assert_eq!(err.kind(), "ssrf", "{err}");
    assert!(err.detail.contains("loopback"), "{err}");
    // An IP literal goes through the guard too.
    let port = url.port().unwrap();
    let literal = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let err = Fetcher::new(&cfg, resolver.clone())
        .fetch(&literal, Validators::default())
        .unwrap_err();
    assert_eq!(err.kind(), "ssrf");

    let got = Fetcher::new(&section(), resolver)
        .fetch(&url, Validators::default())
        .unwrap();
    assert_eq!(got.status, 200);
}

#[test]
fn unknown_names_and_closed_ports() {
    let (_web, _server, resolver) = start();
    let f = Fetcher::new(&section(), resolver);
    let err = f
        .fetch(
            &Url::parse("http://nowhere.invalid/").unwrap(),
            Validators::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), "dns", "{err}");
    let err = f
        .fetch(
            &Url::parse("ftp://127.0.0.1/").unwrap(),
            Validators::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), "url", "{err}");
    // A port nothing listens on (bound then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = f
        .fetch(
            &Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
            Validators::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), "connect", "{err}");
}

/// `[resolve] only = true`: a name the crawl's table lacks is a DNS error without asking the
/// system's resolver (`localhost`, which the system resolves, proves it), and the table's names
/// still resolve.
#[test]
fn with_resolve_only_the_table_is_the_only_source_of_addresses() {
    let (web, server, _) = start();
    let table = |only: bool| {
        let cfg = dragnet::resolve::ResolveConfig {
            entries: vec![format!("named.test:*:{}", web.hosts[0].addr)],
            only,
            ..Default::default()
        };
        Arc::new(Resolver::from_config(&cfg, Path::new("."), Path::new("crawl.toml")).unwrap())
    };
    let port = page_url(&web, 0, 0).port().unwrap();
    let local = Url::parse(&format!("http://localhost:{port}/robots.txt")).unwrap();
    let named = Url::parse(&format!("http://named.test:{port}/robots.txt")).unwrap();
    let e = Fetcher::new(&section(), table(true))
        .fetch(&local, Validators::default())
        .unwrap_err();
    assert_eq!(e.kind(), "dns", "{e}");
    assert!(e.to_string().contains("resolve table"), "{e}");
    // Without `only`, the system resolves localhost (from /etc/hosts: nothing leaves the
    // machine); nothing may listen there, but the name resolved.
    let got = Fetcher::new(&section(), table(false)).fetch(&local, Validators::default());
    assert!(
        got.as_ref().err().is_none_or(|e| e.kind() != "dns"),
        "{:?}",
        got.err()
    );
    let got = Fetcher::new(&section(), table(true)).fetch(&named, Validators::default());
    assert!(got.is_ok(), "{:?}", got.err());
    server.stop();
}

/// A [`dragnet::resolve::Lookup`] that counts its calls: one web host's name resolves, any
/// other fails.
#[derive(Debug)]
struct Counting {
    name: String,
    addr: std::net::IpAddr,
    calls: std::sync::Mutex<Vec<String>>,
}

impl dragnet::resolve::Lookup for Counting {
    fn lookup(&self, name: &str, _port: u16) -> std::io::Result<Vec<std::net::IpAddr>> {
        self.calls.lock().unwrap().push(name.to_string());
        if name == self.name {
            Ok(vec![self.addr])
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such name",
            ))
        }
    }
}

/// DNS answers are cached, good and bad: a host costs one lookup however many URLs it has, and
/// a name that does not resolve costs one too; with no cache life, every fetch asks again.
#[test]
fn dns_answers_and_failures_are_cached_per_run() {
    let (web, _server, _) = start();
    let host = host_with(&web, None);
    let name = web.hosts[host as usize].name.clone();
    let counting = |ttl: f64| {
        let cfg = dragnet::resolve::ResolveConfig {
            cache_ttl_secs: ttl,
            negative_ttl_secs: ttl,
            ..Default::default()
        };
        let resolver =
            Resolver::from_config(&cfg, Path::new("."), Path::new("crawl.toml")).unwrap();
        let lookup = Arc::new(Counting {
            name: name.clone(),
            addr: std::net::IpAddr::V4(web.hosts[host as usize].addr),
            calls: Default::default(),
        });
        let f = Fetcher::new(&section(), Arc::new(resolver)).with_lookup(lookup.clone());
        (f, lookup)
    };
    let port = page_url(&web, host, 0).port().unwrap();
    let gone = |i: u32| Url::parse(&format!("http://gone.websim.test:{port}/p{i}")).unwrap();

    let (f, lookup) = counting(300.0);
    for page in 0..5 {
        let got = f
            .fetch(&page_url(&web, host, page), Validators::default())
            .unwrap();
        assert!(got.status > 0);
    }
    for i in 0..5 {
        let e = f.fetch(&gone(i), Validators::default()).unwrap_err();
        assert_eq!(e.kind(), "dns", "{e}");
    }
    assert_eq!(f.dns_lookups(), 2);
    assert_eq!(
        *lookup.calls.lock().unwrap(),
        vec![name.clone(), "gone.websim.test".to_string()]
    );

    let (f, _) = counting(0.0);
    for page in 0..3 {
        f.fetch(&page_url(&web, host, page), Validators::default())
            .unwrap();
        let _ = f.fetch(&gone(page), Validators::default());
    }
    assert_eq!(f.dns_lookups(), 6);
}
