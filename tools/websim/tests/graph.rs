//! Kleinberg's web graphs (testdata/graphs) served as webs: every label read or counted, every
//! served page's links equal to the node's arcs, names and ports spelled consistently.
//!
//! Test data: the repository's `tests/data` (provenance and licenses in its README), or the
//! directory named by `DRAGNET_TESTDATA`.

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use websim::graph::{GraphOptions, GraphStats, GraphWeb};
use websim::site::{Body, Request, Site};

fn graphs_dir() -> PathBuf {
    let dir = match std::env::var_os("DRAGNET_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data"),
    };
    let g = dir.join("graphs");
    assert!(
        g.join("California.nodes.tsv").is_file(),
        "graph test data not found in {} (set DRAGNET_TESTDATA to the testdata directory)",
        g.display()
    );
    g
}

fn get(site: &dyn Site, host: &str, target: &str) -> (u16, String) {
    let any: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let req = Request {
        method: "GET".into(),
        target: target.into(),
        host: host.into(),
        headers: vec![],
        peer: any,
        local: any,
        conn: 1,
        tls: false,
    };
    let resp = site.respond(&req);
    let Body::Full(b) = resp.body else {
        panic!("a graph web only sends full bodies")
    };
    (resp.status, String::from_utf8(b).unwrap())
}

fn hrefs(html: &str) -> Vec<String> {
    html.split("<a href=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().replace("&amp;", "&"))
        .collect()
}

fn check(name: &str, expect: GraphStats) {
    let dir = graphs_dir();
    let g = GraphWeb::load(&dir, name, GraphOptions::default()).unwrap();
    let s = g.stats().clone();
    eprintln!("{name}: {s:?}");
    assert_eq!(s, expect, "{name}");
    assert_eq!(
        s.node_lines,
        s.nodes + s.duplicate + s.malformed + s.not_http + s.ip_host + s.other_port
    );
    assert_eq!(s.arc_lines, s.arcs + s.dangling_arcs);
    // Every node answers on its host with its arcs as absolute links, in file order.
    let urls: Vec<String> = g.urls().collect();
    assert_eq!(urls.iter().collect::<HashSet<_>>().len(), urls.len());
    let mut links = 0;
    for (n, url) in urls.iter().enumerate() {
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_at(rest.find('/').unwrap());
        assert!(
            path.is_ascii() && !path.contains(['"', '<', '>', ' ', '#', '\\']),
            "{url}"
        );
        if n % 7 != 0 {
            continue;
        }
        let (status, body) = get(&g, host, path);
        assert_eq!(status, 200, "{url}");
        let found = hrefs(&body);
        assert_eq!(found, g.links(n as u32), "{url}");
        links += found.len();
        assert_eq!(g.rewrite(url).as_deref(), Some(url.as_str()));
    }
    assert!(links > 0);
    let host = &g.hosts()[0].name;
    assert_eq!(
        get(&g, host, "/robots.txt"),
        (200, "User-agent: *\nDisallow:\n".into())
    );
    assert_eq!(get(&g, host, "/surely/not/a/page.html").0, 404);
    assert_eq!(get(&g, "unknown.example", "/").0, 404);
    assert!(!g.disallowed(host, "dragnet", "/anything"));
    // The hosts file names every host once, on 127.0.1.1-4.
    let hosts_file = g.hosts_file();
    let lines: Vec<&str> = hosts_file.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len() as u64, s.hosts);
    let mut names = HashSet::new();
    for l in lines {
        let (addr, name) = l.split_once('\t').unwrap();
        let addr: Ipv4Addr = addr.parse().unwrap();
        assert!(g.ips().contains(&addr.into()), "{l}");
        assert!(names.insert(name.to_string()), "{name} twice");
    }
    assert_eq!(g.ips().len(), 4);
    // BFS from the first 200 ids (the HITS root set) reaches a good part of the graph.
    let seeds: Vec<u32> = (1..=200).filter_map(|id| g.node_of_id(id)).collect();
    let reach = g.bfs(&seeds, 3);
    assert!(reach.len() > seeds.len() * 2, "{}", reach.len());
    assert!(reach.windows(2).all(|w| w[0].1 <= w[1].1), "BFS order");
}

#[test]
fn california_graph_loads_with_counts() {
    // 53 malformed: the `http:/cacb/...` labels; 60 merged: `host` and `host/`, `:80`,
    // fragments, `%7E` and `~`, and the two `http://www.usa-`.
    check(
        "California",
        GraphStats {
            node_lines: 9664,
            nodes: 9472,
            hosts: 5777,
            arc_lines: 16150,
            arcs: 15824,
            malformed: 53,
            not_http: 0,
            ip_host: 16,
            other_port: 63,
            duplicate: 60,
            dangling_arcs: 326,
            bad_lines: 0,
        },
    );
}

#[test]
fn epa_graph_loads_with_counts() {
    // The label "that is not http" is `http:/listings.htm` (malformed here), with two hosts
    // ending in `>`; no label has another scheme.
    check(
        "epa",
        GraphStats {
            node_lines: 4772,
            nodes: 4495,
            hosts: 3119,
            arc_lines: 8965,
            arcs: 8552,
            malformed: 3,
            not_http: 0,
            ip_host: 66,
            other_port: 84,
            duplicate: 124,
            dangling_arcs: 413,
            bad_lines: 0,
        },
    );
}

#[test]
fn known_oddities_of_california() {
    let dir = graphs_dir();
    let g = GraphWeb::load(&dir, "California", GraphOptions::default()).unwrap();
    // Two nodes share http://www.usa- (ids 3295 and 3296): one page.
    assert_eq!(g.node_of_id(3295), g.node_of_id(3296));
    assert!(g.node_of_id(3295).is_some());
    // `http:/docs` style labels are skipped.
    assert_eq!(g.node_of_id(7047), None);
    // A label with a quote is served, percent-encoded.
    let n = g.node_of_id(1279).unwrap();
    assert_eq!(
        g.url(n),
        "http://www.yahoo.com/new/*%22http://gocalif.ca.gov/movies/"
    );
    // An escaped tilde is served as a tilde, and found by either spelling.
    let tilde = g
        .rewrite("http://www.value.net/%7Emarkwelch/famlaw.htm")
        .unwrap();
    assert_eq!(tilde, "http://www.value.net/~markwelch/famlaw.htm");
    assert_eq!(get(&g, "www.value.net", "/%7emarkwelch/famlaw.htm").0, 200);
}

#[test]
fn ports_are_rewritten_consistently() {
    let dir = graphs_dir();
    let mut g = GraphWeb::load(&dir, "epa", GraphOptions::default()).unwrap();
    g.set_port(18080);
    assert!(g.urls().all(|u| {
        let rest = u.strip_prefix("http://").unwrap();
        rest.split('/').next().unwrap().ends_with(":18080")
    }));
    let n = g.node_of_id(1).unwrap();
    assert_eq!(g.url(n), "http://laedu.lalc.k12.ca.us:18080/");
    assert_eq!(
        g.rewrite("http://laedu.lalc.k12.ca.us/").as_deref(),
        Some("http://laedu.lalc.k12.ca.us:18080/")
    );
    let host = g.hosts()[0].name.clone();
    let page = g
        .urls()
        .find(|u| u.contains(&format!("//{host}:")))
        .unwrap();
    let path = &page[page.find(":18080").unwrap() + 6..];
    let (_, body) = get(&g, &host, path);
    assert!(hrefs(&body).iter().all(|h| h.contains(":18080/")));
}

#[test]
fn graph_web_is_served_over_http() {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use websim::server::{bind_common_port, Server, ServerOptions};

    let dir = graphs_dir();
    let mut g = GraphWeb::load(&dir, "epa", GraphOptions::default()).unwrap();
    let (port, listeners) = bind_common_port(&g.ips(), 0).unwrap();
    g.set_port(port);
    let n = g.node_of_id(1).unwrap();
    let url = g.url(n);
    let want = g.page(n);
    let host = g
        .hosts()
        .iter()
        .find(|h| url.contains(&format!("//{}:", h.name)))
        .unwrap()
        .clone();
    let server = Server::from_listeners(Arc::new(g), listeners, ServerOptions::default()).unwrap();
    let mut s = std::net::TcpStream::connect(SocketAddr::new(host.addr.into(), port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let path = &url[url.find(&format!(":{port}")).unwrap() + 1 + port.to_string().len()..];
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {}:{port}\r\nConnection: close\r\n\r\n",
        host.name
    )
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    assert!(
        buf.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..end])
    );
    assert!(
        buf[end + 4..] == want[..],
        "body differs from GraphWeb::page"
    );
    let report = server.stop();
    assert_eq!(report.requests, 1);
}
