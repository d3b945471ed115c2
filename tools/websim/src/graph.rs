//! A real web graph served as a web: every node URL of a graph file answers on its own host
//! with an HTML page whose links are the node's out-arcs.
//!
//! Why: the synthetic web ([`crate::model`]) has the statistics of the real web, but a crawler
//! should also be run on a *measured* link structure, with real host names and real URL
//! spellings. Kleinberg's graphs (`testdata/graphs/NAME.nodes.tsv` + `NAME.edges.tsv`, header
//! `id\turl` and `src_id\tdst_id`) are such structures; [`GraphWeb`] serves one as a [`Site`].
//!
//! # Node URLs
//!
//! Labels are crawled-in-1997 URLs, some malformed. Each one is read by [`parse_node_url`]
//! (module `urls`), websim's own small parser (it shares no code with the crawler it tests), and
//! either becomes a canonical `http://host/path` or is skipped and counted in [`GraphStats`];
//! loading never panics on bad data. Canonical means a fixed point of WHATWG parsing and of RFC 3986 §6
//! normalization, so whatever URL library a crawler uses, it requests exactly the spelling the
//! page links to:
//!
//! - the fragment is dropped; the scheme must be `http` (`https:`, `ftp:` ... are `not_http`),
//!   followed by `//` (`http:/docs` is `malformed`); userinfo is `malformed`;
//! - the host is lower-cased and loses one trailing dot; it must be LDH labels (underscores
//!   allowed, as WHATWG allows them); an IP address is skipped (`ip_host`: a hosts file cannot
//!   send it to loopback); a port other than 80 is skipped (`other_port`: every host is served
//!   on one port);
//! - the path: `\` becomes `/` (as WHATWG does for http), percent-escapes of unreserved
//!   characters are decoded (`%7E` -> `~`), other escapes get upper-case hex, every byte outside
//!   RFC 3986's `pchar` is percent-encoded (`"` -> `%22`, `|` -> `%7C`), dot segments are
//!   removed, an empty path becomes `/`;
//! - two labels with the same canonical URL (California's `http://www.usa-` twice, fragments of
//!   one page) become one node whose out-arcs are the union, in file order (`duplicate`).
//!
//! Arcs to or from skipped nodes are dropped (`dangling_arcs`); unparsable lines are
//! `bad_lines`.
//!
//! # Serving
//!
//! Hosts are sorted by name and spread over loopback addresses 127.0.1.1 ... 127.0.1.L like the
//! synthetic web ([`GraphOptions::listeners`]); [`GraphWeb::hosts_file`] writes them in
//! `/etc/hosts` format, for dragnet's `[resolve] hosts_files` (or `unshare` + a bind mount for
//! other programs), so `www.caltech.edu` resolves to loopback without touching the system's
//! `/etc/hosts`. Requests are routed by their `Host` header. `/robots.txt` allows everything;
//! a node's path gives `200 text/html` with one `<a href>` per out-arc, written as an absolute
//! URL; anything else is 404. Request targets are canonicalized like labels before the lookup,
//! so `/%7Efoo/` finds `/~foo/`.
//!
//! # Ports
//!
//! Node URLs carry no port. With [`GraphOptions::port`] 80 (the default) the served URLs are
//! exactly the canonical labels. With any other port `P`, *every* URL websim hands out — the
//! page hrefs, [`GraphWeb::url`], [`GraphWeb::urls`], [`GraphWeb::rewrite`] — is
//! `http://host:P/path`, consistently, so a crawler started from those URLs never sees a
//! portless one. Bind first, then call [`GraphWeb::set_port`] with the port actually bound
//! (port 0 -> an ephemeral port), then serve: URLs are spelled at render time.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::Duration;

use crate::site::{Request, Response, Site};

mod urls;
pub use urls::{normalize_target, parse_node_url};

/// How a graph is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphOptions {
    /// Port in served URLs (80: no port in URLs).
    pub port: u16,
    /// Loopback addresses the hosts are spread over (127.0.1.1 ... 127.0.1.L).
    pub listeners: u8,
    /// Politeness delay every host expects ([`Site::min_delay`]).
    pub delay: Duration,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            port: 80,
            listeners: 4,
            delay: Duration::ZERO,
        }
    }
}

/// What loading a graph kept and skipped. `node_lines = nodes + duplicate + malformed + not_http
/// + ip_host + other_port`; `arc_lines = arcs + dangling_arcs` (bad lines count in neither).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GraphStats {
    /// Node lines read (header excluded).
    pub node_lines: u64,
    /// Nodes served (distinct canonical URLs).
    pub nodes: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// Arc lines read (header excluded).
    pub arc_lines: u64,
    /// Arcs served (links on pages).
    pub arcs: u64,
    /// Labels that are not a URL (`http:/docs`, a `>` in the host, no host).
    pub malformed: u64,
    /// Labels with another scheme than `http`.
    pub not_http: u64,
    /// Labels whose host is an IP address.
    pub ip_host: u64,
    /// Labels with a port other than 80.
    pub other_port: u64,
    /// Labels merged into an earlier node with the same canonical URL.
    pub duplicate: u64,
    /// Arcs dropped because an end is a skipped or unknown node.
    pub dangling_arcs: u64,
    /// Lines (of either file) without two tab-separated fields, with a non-numeric id, or
    /// repeating a node id.
    pub bad_lines: u64,
}

/// Why a node label is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Not a URL.
    Malformed,
    /// A URL of another scheme.
    NotHttp,
    /// The host is an IP address.
    IpHost,
    /// A port other than 80.
    OtherPort,
}

/// A host of a graph web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphHost {
    /// Lower-case host name.
    pub name: String,
    /// Loopback address it is served on.
    pub addr: Ipv4Addr,
}

#[derive(Debug, Clone)]
struct Node {
    host: u32,
    path: String,
    out: Vec<u32>,
}

/// A web graph served as a web (see the module doc).
#[derive(Debug, Clone)]
pub struct GraphWeb {
    opts: GraphOptions,
    hosts: Vec<GraphHost>,
    by_name: HashMap<String, u32>,
    nodes: Vec<Node>,
    by_path: Vec<HashMap<String, u32>>,
    by_id: HashMap<u64, u32>,
    stats: GraphStats,
}

impl GraphWeb {
    /// Loads `DIR/NAME.nodes.tsv` and `DIR/NAME.edges.tsv`. Only I/O errors are errors.
    pub fn load(dir: &Path, name: &str, opts: GraphOptions) -> io::Result<GraphWeb> {
        let open = |suffix: &str| {
            let p = dir.join(format!("{name}.{suffix}.tsv"));
            std::fs::File::open(&p)
                .map(io::BufReader::new)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
        };
        GraphWeb::from_readers(open("nodes")?, open("edges")?, opts)
    }

    /// Builds a graph web from the two TSV streams (each with its header line).
    pub fn from_readers(
        nodes: impl BufRead,
        edges: impl BufRead,
        opts: GraphOptions,
    ) -> io::Result<GraphWeb> {
        let mut stats = GraphStats::default();
        // Pass 1: canonical URLs, in file order.
        let kept = read_nodes(nodes, &mut stats)?;
        let mut names: Vec<&str> = kept.iter().map(|(_, h, _)| h.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let listeners = u32::from(opts.listeners.max(1));
        let hosts: Vec<GraphHost> = names
            .iter()
            .enumerate()
            .map(|(i, n)| GraphHost {
                name: n.to_string(),
                addr: Ipv4Addr::new(127, 0, 1, (1 + i as u32 % listeners) as u8),
            })
            .collect();
        let by_name: HashMap<String, u32> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.clone(), i as u32))
            .collect();
        let mut by_path: Vec<HashMap<String, u32>> = vec![HashMap::new(); hosts.len()];
        let mut nodes: Vec<Node> = Vec::new();
        let mut by_id = HashMap::new();
        for (id, host, path) in kept {
            let h = by_name[&host];
            let paths = &mut by_path[h as usize];
            let n = match paths.get(&path) {
                Some(&n) => {
                    stats.duplicate += 1;
                    n
                }
                None => {
                    let n = nodes.len() as u32;
                    paths.insert(path.clone(), n);
                    nodes.push(Node {
                        host: h,
                        path,
                        out: Vec::new(),
                    });
                    n
                }
            };
            by_id.insert(id, n);
        }
        // Pass 2: arcs.
        read_arcs(edges, &by_id, &mut nodes, &mut stats)?;
        stats.nodes = nodes.len() as u64;
        stats.hosts = hosts.len() as u64;
        Ok(GraphWeb {
            opts,
            hosts,
            by_name,
            nodes,
            by_path,
            by_id,
            stats,
        })
    }

    /// What loading kept and skipped.
    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    /// The hosts, sorted by name.
    pub fn hosts(&self) -> &[GraphHost] {
        &self.hosts
    }

    /// The port in served URLs.
    pub fn port(&self) -> u16 {
        self.opts.port
    }

    /// Sets the port in served URLs (call it with the port actually bound, before serving).
    pub fn set_port(&mut self, port: u16) {
        self.opts.port = port;
    }

    /// The distinct loopback addresses the hosts are served on, ascending.
    pub fn ips(&self) -> Vec<IpAddr> {
        let n = self
            .hosts
            .len()
            .min(usize::from(self.opts.listeners.max(1)));
        (1..=n as u8)
            .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 1, i)))
            .collect()
    }

    /// The hosts in `/etc/hosts` format (see [`crate::export::hosts_file`]).
    pub fn hosts_file(&self) -> String {
        crate::export::hosts_file(self.hosts.iter().map(|h| (h.addr, h.name.as_str())))
    }

    /// Number of nodes served.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node survived loading.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// `http://host[:port]` of host `h`.
    fn origin(&self, h: u32) -> String {
        let name = &self.hosts[h as usize].name;
        if self.opts.port == 80 {
            format!("http://{name}")
        } else {
            format!("http://{name}:{}", self.opts.port)
        }
    }

    /// The served URL of node `n` (0-based, in file order after merging).
    pub fn url(&self, n: u32) -> String {
        let node = &self.nodes[n as usize];
        format!("{}{}", self.origin(node.host), node.path)
    }

    /// Served URLs of every node, in node order.
    pub fn urls(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.nodes.len() as u32).map(|n| self.url(n))
    }

    /// The node of an id of the nodes file (`None` if it was skipped).
    pub fn node_of_id(&self, id: u64) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    /// The node an URL names: an original label or a served URL (any port), canonicalized.
    pub fn node_of_url(&self, url: &str) -> Option<u32> {
        let (host, path) = match parse_node_url(url) {
            Ok(hp) => hp,
            // A served URL with a non-80 port: drop the port and read it again.
            Err(Skip::OtherPort) => {
                let rest = url.trim().get(7..)?;
                let end = rest.find(['/', '\\', '?']).unwrap_or(rest.len());
                let (auth, tail) = rest.split_at(end);
                let host = auth.rsplit_once(':').map_or(auth, |(h, _)| h);
                parse_node_url(&format!("http://{host}{tail}")).ok()?
            }
            Err(_) => return None,
        };
        let h = *self.by_name.get(&host)?;
        self.by_path[h as usize].get(&path).copied()
    }

    /// Rewrites an original label (or any spelling of a node URL) to its served URL, with the
    /// served port; `None` if it names no node.
    pub fn rewrite(&self, url: &str) -> Option<String> {
        self.node_of_url(url).map(|n| self.url(n))
    }

    /// Served URLs of node `n`'s out-arcs, in file order (what its page links to).
    pub fn links(&self, n: u32) -> Vec<String> {
        self.nodes[n as usize]
            .out
            .iter()
            .map(|&d| self.url(d))
            .collect()
    }

    /// Breadth-first search from `seeds`: every node within `max_depth` arcs, with its depth,
    /// in BFS order (the fetch set of a crawl of this web; robots.txt allows everything).
    pub fn bfs(&self, seeds: &[u32], max_depth: u32) -> Vec<(u32, u32)> {
        let mut depth = vec![u32::MAX; self.nodes.len()];
        let mut queue = VecDeque::new();
        let mut out = Vec::new();
        for &s in seeds {
            if (s as usize) < depth.len() && depth[s as usize] == u32::MAX {
                depth[s as usize] = 0;
                queue.push_back(s);
            }
        }
        while let Some(n) = queue.pop_front() {
            let d = depth[n as usize];
            out.push((n, d));
            if d == max_depth {
                continue;
            }
            for &m in &self.nodes[n as usize].out {
                if depth[m as usize] == u32::MAX {
                    depth[m as usize] = d + 1;
                    queue.push_back(m);
                }
            }
        }
        out
    }

    /// The HTML page of node `n`.
    pub fn page(&self, n: u32) -> Vec<u8> {
        let me = escape(&self.url(n));
        let mut s = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{me}</title></head>\n<body><h1>{me}</h1>\n<ul>\n"
        );
        for u in self.links(n) {
            let u = escape(&u);
            s.push_str(&format!("<li><a href=\"{u}\">{u}</a></li>\n"));
        }
        s.push_str("</ul></body></html>\n");
        s.into_bytes()
    }
}

/// Lines without their `\n` or `\r\n`, bytes that are not UTF-8 replaced (a stray byte in a
/// label must not make the whole file unreadable).
/// The node lines that give a canonical URL, `(id, host, path)` in file order; the others
/// counted in `stats`.
fn read_nodes(
    nodes: impl BufRead,
    stats: &mut GraphStats,
) -> io::Result<Vec<(u64, String, String)>> {
    let mut kept: Vec<(u64, String, String)> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, line) in lines(nodes).enumerate() {
        let line = line?;
        if i == 0 || line.is_empty() {
            continue; // header
        }
        let Some((id, url)) = line.split_once('\t').and_then(|(id, u)| {
            let id: u64 = id.trim().parse().ok()?;
            ids.insert(id).then_some((id, u))
        }) else {
            stats.bad_lines += 1;
            continue;
        };
        stats.node_lines += 1;
        match parse_node_url(url) {
            Ok((host, path)) => kept.push((id, host, path)),
            Err(Skip::Malformed) => stats.malformed += 1,
            Err(Skip::NotHttp) => stats.not_http += 1,
            Err(Skip::IpHost) => stats.ip_host += 1,
            Err(Skip::OtherPort) => stats.other_port += 1,
        }
    }
    Ok(kept)
}

/// The arcs between kept nodes, appended to their sources' out-arcs in file order; the others
/// counted in `stats`.
fn read_arcs(
    edges: impl BufRead,
    by_id: &HashMap<u64, u32>,
    nodes: &mut [Node],
    stats: &mut GraphStats,
) -> io::Result<()> {
    for (i, line) in lines(edges).enumerate() {
        let line = line?;
        if i == 0 || line.is_empty() {
            continue;
        }
        let ends = line.split_once('\t').and_then(|(a, b)| {
            Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?))
        });
        let Some((a, b)) = ends else {
            stats.bad_lines += 1;
            continue;
        };
        stats.arc_lines += 1;
        match (by_id.get(&a), by_id.get(&b)) {
            (Some(&s), Some(&d)) => {
                nodes[s as usize].out.push(d);
                stats.arcs += 1;
            }
            _ => stats.dangling_arcs += 1,
        }
    }
    Ok(())
}

fn lines(r: impl BufRead) -> impl Iterator<Item = io::Result<String>> {
    r.split(b'\n').map(|l| {
        l.map(|mut b| {
            if b.last() == Some(&b'\r') {
                b.pop();
            }
            String::from_utf8_lossy(&b).into_owned()
        })
    })
}

/// The robots.txt every host of a graph web serves.
pub const ALLOW_ALL: &str = "User-agent: *\nDisallow:\n";

impl Site for GraphWeb {
    fn respond(&self, req: &Request) -> Response {
        let host = req.host.trim_end_matches('.');
        let Some(&h) = self.by_name.get(host) else {
            return Response::unknown_host(req);
        };
        if req.method != "GET" && req.method != "HEAD" {
            return Response::method_not_allowed();
        }
        if req.target == "/robots.txt" {
            return Response::new(200, "text/plain", ALLOW_ALL.as_bytes().to_vec());
        }
        match self.by_path[h as usize].get(&normalize_target(&req.target)) {
            Some(&n) => Response::new(200, "text/html; charset=utf-8", self.page(n)),
            None => Response::new(
                404,
                "text/html",
                b"<html><body>not found</body></html>\n".to_vec(),
            ),
        }
    }

    fn min_delay(&self, _host: &str) -> Duration {
        self.opts.delay
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }

    /// Answers depend on method, host and target only (the port is fixed before serving).
    fn cache_key_headers(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "id\turl\r\n1\thttp://a.test/\n2\thttp://b.test/x\n3\thttp:/bad\n4\thttp://A.test\n5\thttp://b.test/y#f\nzz\n";
    const EDGES: &str = "src_id\tdst_id\n1\t2\n2\t1\n4\t5\n3\t1\n1\t9\nx\ty\n";

    fn small(port: u16) -> GraphWeb {
        GraphWeb::from_readers(
            NODES.as_bytes(),
            EDGES.as_bytes(),
            GraphOptions {
                port,
                ..GraphOptions::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn loads_merges_and_counts() {
        let g = small(80);
        let s = g.stats();
        assert_eq!(
            (
                s.node_lines,
                s.nodes,
                s.hosts,
                s.malformed,
                s.duplicate,
                s.bad_lines
            ),
            (5, 3, 2, 1, 1, 2)
        );
        assert_eq!((s.arc_lines, s.arcs, s.dangling_arcs), (5, 3, 2));
        let a = g.node_of_id(1).unwrap();
        assert_eq!(g.node_of_id(4), Some(a), "merged duplicate");
        assert_eq!(
            g.links(a),
            vec!["http://b.test/x".to_string(), "http://b.test/y".to_string()]
        );
        assert_eq!(g.bfs(&[a], 0), vec![(a, 0)]);
        assert_eq!(g.bfs(&[a], 5).len(), 3);
        assert_eq!(
            g.hosts_file()
                .lines()
                .filter(|l| !l.starts_with('#'))
                .count(),
            2
        );
    }

    #[test]
    fn garbage_is_counted_never_fatal() {
        let nodes: &[u8] = b"id\turl\n1\thttp://a.test/\xff\n2\t\n\t\n3\thttp://\n4\thttp://a..b/\n5\thttp://[::1]/\n6\thttp://a.test:/x\n7\thttp://xn--a.test/%\n";
        let edges: &[u8] = b"src_id\tdst_id\n1\n1\t1\n99999999999999999999\t1\n";
        let g = GraphWeb::from_readers(nodes, edges, GraphOptions::default()).unwrap();
        let s = g.stats();
        assert_eq!((s.nodes, s.malformed, s.bad_lines), (3, 4, 3), "{s:?}");
        assert_eq!(g.url(0), "http://a.test/%EF%BF%BD");
        assert_eq!(g.url(2), "http://xn--a.test/%25");
        assert_eq!(g.links(0), vec!["http://a.test/%EF%BF%BD".to_string()]);
    }

    #[test]
    fn ports_are_rewritten_everywhere() {
        let g = small(8480);
        let a = g.node_of_id(1).unwrap();
        assert_eq!(g.url(a), "http://a.test:8480/");
        assert_eq!(
            g.rewrite("http://A.test"),
            Some("http://a.test:8480/".into())
        );
        assert_eq!(
            g.rewrite("http://a.test:8480/"),
            Some("http://a.test:8480/".into())
        );
        assert_eq!(g.rewrite("http://a.test/nope"), None);
        let page = String::from_utf8(g.page(a)).unwrap();
        assert!(page.contains("href=\"http://b.test:8480/x\""), "{page}");
        assert!(!page.contains("http://b.test/"), "{page}");
    }
}
