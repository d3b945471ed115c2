//! The same seed serves the same bytes, from two separately generated webs; another seed does
//! not. Both servers use one port, because URLs in pages carry it.

use crate::common;

use std::net::SocketAddr;

use websim::model::{Hostile, PageRef, Web, WebConfig};
use websim::robots::RobotsServe;
use websim::server::Server;
use websim::site::{Body, Request, Site};

use common::*;

/// A request: host index, target, extra headers.
type Sample = (u32, String, Vec<(&'static str, &'static str)>);

/// Requests that answer quickly and completely: not hostile pages (except the trap), not a
/// robots.txt that never answers.
fn sample(web: &Web) -> Vec<Sample> {
    let mut out = Vec::new();
    for h in web
        .hosts
        .iter()
        .filter(|h| h.hostile.is_none() || h.hostile == Some(Hostile::Trap))
        .step_by(9)
    {
        let i = h.index;
        if h.robots_serve != RobotsServe::Timeout {
            out.push((i, "/robots.txt".to_string(), vec![]));
        }
        for p in [0u32, 1, 17, 60, 119] {
            out.push((i, web.path(PageRef::Page { host: i, page: p }), vec![]));
        }
        out.push((
            i,
            "/".to_string(),
            vec![("Accept-Encoding", "gzip, deflate, br")],
        ));
        for s in web.sitemap_paths(i) {
            out.push((i, s.to_string(), vec![]));
        }
        out.push((i, "/no/such/page.html".to_string(), vec![]));
    }
    out
}

/// Every sampled response, raw bytes, fetched over keep-alive connections.
fn fetch_all(web: &Web, reqs: &[Sample]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut conn: Option<(u32, std::net::TcpStream)> = None;
    for (h, target, headers) in reqs {
        let host = &web.hosts[*h as usize];
        if conn.as_ref().is_none_or(|(c, _)| c != h) {
            conn = Some((*h, connect(web, host)));
        }
        let s = &mut conn.as_mut().unwrap().1;
        send(s, "GET", web, host, target, headers);
        let r = read_response(s, false).unwrap_or_else(|e| panic!("{}{target}: {e}", host.name));
        out.push(r.raw);
    }
    out
}

#[test]
fn same_seed_serves_identical_bytes_and_another_seed_differs() {
    let (web_a, server_a) = start(config());
    let port = web_a.config.port;
    let reqs = sample(&web_a);
    assert!(reqs.len() > 100, "{} requests", reqs.len());
    let a = fetch_all(&web_a, &reqs);
    let report = server_a.stop();
    assert_eq!(report.requests, reqs.len() as u64);
    assert_eq!(report.incomplete, 0);

    // A second web from the same seed, on the same port (the first server is gone).
    let same = WebConfig { port, ..config() };
    let (web_b, server_b) = Server::start_web(same, options()).expect("rebind the same port");
    assert_eq!(web_b.hosts, web_a.hosts);
    let b = fetch_all(&web_b, &reqs);
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            x == y,
            "response {i} ({:?}) differs between two webs of one seed",
            reqs[i]
        );
    }
    drop(server_b);

    let other = WebConfig {
        port,
        seed: 2,
        ..config()
    };
    let (web_c, server_c) = Server::start_web(other, options()).expect("rebind the same port");
    let homes: Vec<_> = reqs
        .iter()
        .filter(|r| r.1 == "/" && r.2.is_empty())
        .cloned()
        .collect();
    let c = fetch_all(&web_c, &homes);
    let a_homes: Vec<&Vec<u8>> = reqs
        .iter()
        .zip(&a)
        .filter(|(r, _)| r.1 == "/" && r.2.is_empty())
        .map(|(_, x)| x)
        .collect();
    for (i, (x, y)) in a_homes.iter().zip(&c).enumerate() {
        assert!(*x != y, "home page {i} is the same under seeds 1 and 2");
    }
    drop(server_c);
}

#[test]
fn served_bytes_are_what_the_site_answers() {
    // The server's answer cache must never change an answer: every response, first fetch and
    // repeat, carries the body `Site::respond` gives for the same request.
    let (web, server) = start(config());
    let reqs = sample(&web);
    let first = fetch_all(&web, &reqs);
    let again = fetch_all(&web, &reqs);
    assert_eq!(first, again);
    let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for ((h, target, headers), raw) in reqs.iter().zip(&first) {
        let host = &web.hosts[*h as usize];
        let mut hs = vec![("host".to_string(), host.name.clone())];
        hs.extend(
            headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string())),
        );
        let req = Request {
            method: "GET".into(),
            target: target.clone(),
            host: host.name.clone(),
            headers: hs,
            peer,
            local: peer,
            conn: 0,
            tls: false,
        };
        let want = web.respond(&req);
        let Body::Full(body) = want.body else {
            panic!("{target}: not a full body")
        };
        let i = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert_eq!(&raw[i..], &body[..], "{}{target}", host.name);
        assert!(raw.starts_with(format!("HTTP/1.1 {} ", want.status).as_bytes()));
    }
    let report = server.stop();
    assert_eq!(report.requests, 2 * reqs.len() as u64);
}
