//! The audit catches each kind of impoliteness from a deliberately rude client, finds nothing
//! wrong with a polite one, and is served on the control address; non-loopback binds are refused.

use crate::common;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use websim::audit::{Report, Violation};
use websim::model::{HostSpec, Hostile, PageRef, Web};
use websim::robots::RobotsServe;
use websim::server::{is_loopback, Server, ServerError, ServerOptions};

use common::*;

const RUDE: &str = "rudebot/1.0";
const POLITE: &str = "dragnet/0.1 (websim test)";

/// A well-behaved host: not hostile, robots.txt served as text.
fn plain_hosts(web: &Web) -> impl Iterator<Item = &HostSpec> {
    web.hosts
        .iter()
        .filter(|h| h.hostile.is_none() && h.robots_serve == RobotsServe::Text)
}

/// Pages of `host` that exist, with their robots verdict for `agent`.
fn pages<'a>(
    web: &'a Web,
    host: &'a HostSpec,
    agent: &'a str,
) -> impl Iterator<Item = (String, bool)> + 'a {
    (0..web.config.pages).map(move |p| {
        let path = web.path(PageRef::Page {
            host: host.index,
            page: p,
        });
        let allowed = host.robots.allowed(agent, &path);
        (path, allowed)
    })
}

fn hosts_of<'a>(report: &'a Report, kind: &str) -> Vec<(&'a str, &'a str)> {
    report
        .examples(kind)
        .into_iter()
        .map(|v| match v {
            Violation::Concurrent { host, target, .. }
            | Violation::TooSoon { host, target, .. }
            | Violation::Disallowed { host, target, .. }
            | Violation::BeforeRobots { host, target, .. }
            | Violation::IgnoredRetryAfter { host, target, .. }
            | Violation::IpConcurrent { host, target, .. }
            | Violation::IpTooSoon { host, target, .. } => (host.as_str(), target.as_str()),
        })
        .collect()
}

#[test]
fn a_rude_client_is_caught() {
    let (web, server) = start(config());
    let ua = [("User-Agent", RUDE)];

    // Too soon, and before robots: a host with a crawl-delay, hit three times back to back,
    // robots.txt second.
    let slow = plain_hosts(&web)
        .max_by_key(|h| web.delay(h.index, "dragnet"))
        .unwrap();
    assert!(
        web.delay(slow.index, "dragnet") >= Duration::from_millis(100),
        "a host with a crawl-delay"
    );
    let mut s = connect(&web, slow);
    for target in ["/", "/robots.txt", "/"] {
        send(&mut s, "GET", &web, slow, target, &ua);
        read_response(&mut s, false).unwrap();
    }

    // Disallowed: robots.txt first, then a page it forbids to this agent.
    let (strict, forbidden) = plain_hosts(&web)
        .filter(|h| h.index != slow.index && web.delay(h.index, "dragnet") == Duration::ZERO)
        .find_map(|h| {
            pages(&web, h, RUDE)
                .find(|(_, allowed)| !allowed)
                .map(|(p, _)| (h, p))
        })
        .expect("a page robots.txt forbids");
    let mut s = connect(&web, strict);
    for target in ["/robots.txt", forbidden.as_str()] {
        send(&mut s, "GET", &web, strict, target, &ua);
        read_response(&mut s, false).unwrap();
    }

    // Concurrent: a second connection while a slow-drip page is still being sent on the first.
    let drip = hostile(&web, Hostile::SlowDrip);
    let mut first = connect(&web, drip);
    send(&mut first, "GET", &web, drip, "/", &ua);
    read_head(&mut first, 1 << 20).unwrap();
    let mut second = connect(&web, drip);
    send(&mut second, "GET", &web, drip, "/no/such/page.html", &ua);
    assert_eq!(read_response(&mut second, false).unwrap().status, 404);
    drop(first);

    let report = server.stop();
    assert!(!report.polite);
    let c = report.counts;
    assert!(
        c.too_soon >= 2 && c.before_robots >= 1 && c.disallowed >= 1 && c.concurrent >= 1,
        "{c:?}"
    );
    assert!(hosts_of(&report, "too_soon").contains(&(slow.name.as_str(), "/robots.txt")));
    assert!(hosts_of(&report, "before_robots").contains(&(slow.name.as_str(), "/")));
    assert!(hosts_of(&report, "disallowed").contains(&(strict.name.as_str(), forbidden.as_str())));
    assert!(hosts_of(&report, "concurrent").contains(&(drip.name.as_str(), "/no/such/page.html")));
    assert_eq!(report.requests, 3 + 2 + 2);
    assert_eq!(report.connections, 4);
}

/// Fetches robots.txt and then `n` allowed pages of `host` over one connection, waiting the
/// host's delay (plus a margin) after every response.
fn crawl_politely(web: &Web, host: &HostSpec, n: usize) -> usize {
    let delay = web.delay(host.index, POLITE) + Duration::from_millis(20);
    let ua = [("User-Agent", POLITE)];
    let mut s = connect(web, host);
    send(&mut s, "GET", web, host, "/robots.txt", &ua);
    read_response(&mut s, false).unwrap();
    let mut fetched = 1;
    for (path, _) in pages(web, host, POLITE)
        .filter(|(_, allowed)| *allowed)
        .take(n)
    {
        std::thread::sleep(delay);
        send(&mut s, "GET", web, host, &path, &ua);
        let r = read_response(&mut s, false).unwrap();
        assert!(r.header("connection") != Some("close"), "{path}");
        fetched += 1;
    }
    fetched
}

#[test]
fn a_polite_client_has_no_violations() {
    let (web, server) = start(config());
    let delayed = plain_hosts(&web)
        .find(|h| web.delay(h.index, POLITE) > Duration::ZERO)
        .unwrap();
    let free: Vec<&HostSpec> = plain_hosts(&web)
        .filter(|h| web.delay(h.index, POLITE).is_zero())
        .take(3)
        .collect();
    let mut all = vec![delayed];
    all.extend(free);
    // One thread per host, all at once: parallel across hosts is polite.
    let fetched: usize = std::thread::scope(|sc| {
        let handles: Vec<_> = all
            .iter()
            .map(|h| sc.spawn(|| crawl_politely(&web, h, 4)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });

    // The report from the control address matches the server's own.
    let control = server.control_addr().expect("a control address");
    let mut s = std::net::TcpStream::connect(control).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    std::io::Write::write_all(
        &mut s,
        b"GET /__websim/report HTTP/1.1\r\nHost: control\r\n\r\n",
    )
    .unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.status, 200);
    let served: Report = serde_json::from_slice(&r.body).expect("JSON report");

    let report = server.stop();
    assert_eq!(report.requests, fetched as u64);
    assert_eq!(served.requests, report.requests);
    assert!(report.polite, "{:#?}", report.violations);
    assert_eq!(report.counts.total(), 0);
}

#[test]
fn non_loopback_addresses_are_refused() {
    let web: Arc<Web> = Arc::new(Web::new(config()));
    for bad in [
        "0.0.0.0:0",
        "10.1.2.3:8480",
        "[::]:0",
        "192.168.1.1:80",
        "[::ffff:10.0.0.1]:80",
    ] {
        let addr: SocketAddr = bad.parse().unwrap();
        let err = Server::start(web.clone(), &[addr], options()).expect_err(bad);
        assert!(
            matches!(err, ServerError::NotLoopback(a) if a == addr),
            "{bad}: {err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&addr.to_string()) && msg.contains("loopback"),
            "{msg}"
        );
    }
    // The control address too.
    let opts = ServerOptions {
        control: Some("0.0.0.0:0".parse().unwrap()),
        ..options()
    };
    let err =
        Server::start(web.clone(), &["127.0.0.1:0".parse().unwrap()], opts).expect_err("control");
    assert!(matches!(err, ServerError::NotLoopback(_)), "{err}");
    for ok in ["127.0.0.1", "127.200.3.4", "::1", "::ffff:127.0.0.1"] {
        assert!(is_loopback(ok.parse::<IpAddr>().unwrap()), "{ok}");
    }
    // A loopback address other than 127.0.0.1 binds, on port 0.
    let server = Server::start(web, &["127.0.2.7:0".parse().unwrap()], options()).unwrap();
    assert_eq!(server.addrs()[0].ip().to_string(), "127.0.2.7");
    assert_ne!(server.addrs()[0].port(), 0);
}

/// A rate-limited host answers a burst, then 429 with `Retry-After: 1`; a client that asks
/// again at once is flagged, one that waits the second is not.
#[test]
fn a_rate_limited_host_is_obeyed_or_the_audit_says_so() {
    let (web, server) = start(websim::model::WebConfig {
        rate_limit_every: 4,
        ..config()
    });
    let host = web
        .hosts
        .iter()
        .find(|h| h.rate_limited && h.robots_serve == RobotsServe::NotFound)
        .or_else(|| web.hosts.iter().find(|h| h.rate_limited))
        .expect("a rate-limited host");
    let ua = [("User-Agent", RUDE)];
    let mut s = connect(&web, host);
    send(&mut s, "GET", &web, host, "/robots.txt", &ua);
    read_response(&mut s, false).unwrap();
    let mut statuses = Vec::new();
    for _ in 0..6 {
        send(&mut s, "GET", &web, host, "/", &ua);
        let r = read_response(&mut s, false).unwrap();
        if r.status == 429 {
            assert_eq!(r.header("retry-after"), Some("1"));
        }
        statuses.push(r.status);
    }
    // A burst of 4, then refused (the 4 came faster than a token a second).
    assert_eq!(&statuses[..4], &[200; 4], "{statuses:?}");
    assert_eq!(&statuses[4..], &[429, 429], "{statuses:?}");
    // The server logs a request once its answer is out: wait (bounded) for all 7 to be logged.
    let mut report = server.report();
    for _ in 0..200 {
        if report.requests >= 7 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        report = server.report();
    }
    assert_eq!(report.counts.ignored_retry_after, 1, "{:?}", report.counts);
    assert!(hosts_of(&report, "ignored_retry_after").contains(&(host.name.as_str(), "/")));
    // Waiting the Retry-After is obeying it: answered, and nothing more flagged.
    std::thread::sleep(Duration::from_millis(1100));
    send(&mut s, "GET", &web, host, "/", &ua);
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    let report = server.stop();
    assert_eq!(report.counts.ignored_retry_after, 1, "{:?}", report.counts);
}
