//! Link streams: the 64-bit fingerprints (xxh3-64 of the URL string) of the links a crawler
//! extracts, in the order it extracts them (pages in crawl order, each page's links in document
//! order, duplicates kept).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

use crate::policies::{FpMap, SplitMix64};

/// The fingerprint of a URL: xxh3-64 of its bytes.
#[inline]
pub fn fingerprint(url: &str) -> u64 {
    xxh3_64(url.as_bytes())
}

/// The authority (`host[:port]`) of an absolute URL, or the whole string if it has no `://`.
pub fn authority(url: &str) -> &str {
    match url.find("://") {
        Some(i) => {
            let rest = &url[i + 3..];
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            &rest[..end]
        }
        None => url,
    }
}

/// Statistics of a stream, to compare with the paper's trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamStats {
    /// Pages that contributed links (pages with no links are not counted).
    pub pages: u64,
    /// Links (stream length).
    pub links: u64,
    /// Distinct fingerprints.
    pub distinct: u64,
    /// Links whose host (authority) is the host of the page they are on.
    pub same_host_links: u64,
    /// Links that repeat an earlier link of the same page.
    pub repeats_in_page: u64,
}

impl StreamStats {
    /// Mean links per page.
    pub fn links_per_page(&self) -> f64 {
        self.links as f64 / self.pages.max(1) as f64
    }
    /// Fraction of links to the page's own host.
    pub fn same_host_fraction(&self) -> f64 {
        self.same_host_links as f64 / self.links.max(1) as f64
    }
    /// Fraction of links that repeat a link of the same page.
    pub fn repeat_fraction(&self) -> f64 {
        self.repeats_in_page as f64 / self.links.max(1) as f64
    }
    /// INFINITE's miss rate: distinct / links.
    pub fn compulsory_miss_rate(&self) -> f64 {
        self.distinct as f64 / self.links.max(1) as f64
    }
}

/// A link stream and its statistics.
#[derive(Debug, Clone)]
pub struct Stream {
    /// Short name (file names, tables).
    pub name: String,
    /// How it was made.
    pub description: String,
    /// The fingerprints, in crawl order.
    pub fps: Vec<u64>,
    /// Statistics.
    pub stats: StreamStats,
}

/// Builds a stream page by page and keeps the statistics.
#[derive(Default)]
pub struct StreamBuilder {
    fps: Vec<u64>,
    stats: StreamStats,
    on_page: FpMap<()>,
    page_open: bool,
    all: FpMap<()>,
}

impl StreamBuilder {
    /// An empty builder.
    pub fn new() -> StreamBuilder {
        StreamBuilder::default()
    }

    /// Starts a new page.
    pub fn page(&mut self) {
        self.on_page.clear();
        self.page_open = false;
    }

    /// Adds a link of the current page.
    #[inline]
    pub fn link(&mut self, fp: u64, same_host: bool) {
        if !self.page_open {
            self.page_open = true;
            self.stats.pages += 1;
        }
        self.fps.push(fp);
        self.stats.links += 1;
        if same_host {
            self.stats.same_host_links += 1;
        }
        if self.on_page.insert(fp, ()).is_some() {
            self.stats.repeats_in_page += 1;
        }
        self.all.insert(fp, ());
    }

    /// The finished stream.
    pub fn finish(self, name: &str, description: String) -> Stream {
        let mut stats = self.stats;
        stats.distinct = self.all.len() as u64;
        Stream {
            name: name.to_string(),
            description,
            fps: self.fps,
            stats,
        }
    }
}

/// The out-links of every HTML page of a websim web, pages in the truth's BFS crawl order
/// (depth, then URL byte order, the order `websim::truth` processes them), links in document
/// order with duplicates kept (followed or not: the URL-seen test sees every extracted link).
pub fn websim_stream(seed: u64, hosts: u32, pages: u32) -> Stream {
    use websim::model::{Web, WebConfig};
    use websim::truth::{truth, Policy};
    let web = Web::new(WebConfig {
        seed,
        hosts,
        pages,
        ..WebConfig::default()
    });
    let t = truth(&web, &Policy::new(&web));
    let mut order: Vec<&websim::truth::PageLinks> = t.pages.iter().collect();
    order.sort_by(|a, b| a.depth.cmp(&b.depth).then_with(|| a.url.cmp(&b.url)));
    let mut b = StreamBuilder::new();
    for p in order {
        b.page();
        let host = authority(&p.url);
        for l in &p.links {
            b.link(fingerprint(&l.url), authority(&l.url) == host);
        }
    }
    b.finish(
        "websim",
        format!(
            "websim web, seed {seed}, {hosts} hosts x {pages} pages (WebConfig defaults otherwise, \
             one host in 20 hostile); out-links of the {} HTML pages websim::truth fetches, in its \
             BFS order",
            t.pages.len()
        ),
    )
}

/// In which order the pages of a graph file are crawled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphOrder {
    /// Breadth-first from the source of the first arc, restarting from the smallest unvisited
    /// node id with out-arcs when the queue runs dry (so every arc is emitted once).
    Bfs,
    /// Arcs in file order.
    File,
}

/// The arcs of `NAME.nodes.tsv` / `NAME.edges.tsv` in `dir` (format of
/// `tests/data/README.md`) as a link stream: for each page in crawl order, the URLs of its
/// out-arcs in file order.
pub fn graph_stream(dir: &Path, name: &str, order: GraphOrder) -> io::Result<Stream> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let nodes = fs::read_to_string(dir.join(format!("{name}.nodes.tsv")))?;
    let mut urls: Vec<Option<String>> = Vec::new();
    for line in nodes.lines().skip(1) {
        let (id, url) = line
            .split_once('\t')
            .ok_or_else(|| bad(format!("bad node line {line:?}")))?;
        let id: usize = id.parse().map_err(|_| bad(format!("bad node id {id:?}")))?;
        if urls.len() <= id {
            urls.resize(id + 1, None);
        }
        urls[id] = Some(url.to_string());
    }
    let edges = fs::read_to_string(dir.join(format!("{name}.edges.tsv")))?;
    let mut arcs: Vec<(usize, usize)> = Vec::new();
    for line in edges.lines().skip(1) {
        let (s, d) = line
            .split_once('\t')
            .ok_or_else(|| bad(format!("bad edge line {line:?}")))?;
        let s: usize = s.parse().map_err(|_| bad(format!("bad src {s:?}")))?;
        let d: usize = d.parse().map_err(|_| bad(format!("bad dst {d:?}")))?;
        if urls.get(s).is_none_or(|u| u.is_none()) || urls.get(d).is_none_or(|u| u.is_none()) {
            return Err(bad(format!("arc {s}->{d} names an unknown node")));
        }
        arcs.push((s, d));
    }
    let url = |id: usize| urls[id].as_deref().unwrap();
    // Pages in crawl order, each with its arcs (in file order).
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); urls.len()];
    for &(s, d) in &arcs {
        out[s].push(d);
    }
    let mut b = StreamBuilder::new();
    let emit = |b: &mut StreamBuilder, s: usize, dsts: &[usize]| {
        b.page();
        let host = authority(url(s));
        for &d in dsts {
            b.link(fingerprint(url(d)), authority(url(d)) == host);
        }
    };
    let how = match order {
        GraphOrder::File => {
            let mut prev = usize::MAX;
            for &(s, d) in &arcs {
                if s != prev {
                    b.page();
                    prev = s;
                }
                b.link(fingerprint(url(d)), authority(url(d)) == authority(url(s)));
            }
            "arcs in file order"
        }
        GraphOrder::Bfs => {
            let mut seen = vec![false; urls.len()];
            let mut queue = std::collections::VecDeque::new();
            let starts = arcs.first().map(|a| a.0).into_iter().chain(1..urls.len());
            for start in starts {
                if seen[start] || out[start].is_empty() {
                    continue;
                }
                seen[start] = true;
                queue.push_back(start);
                while let Some(s) = queue.pop_front() {
                    emit(&mut b, s, &out[s]);
                    for &d in &out[s] {
                        if !seen[d] {
                            seen[d] = true;
                            queue.push_back(d);
                        }
                    }
                }
            }
            "pages in BFS order from the source of the first arc (restarting from the smallest \
             unvisited id with out-arcs), each page's arcs in file order"
        }
    };
    Ok(b.finish(
        name,
        format!(
            "Kleinberg's `{name}` graph ({} nodes, {} arcs), {how}",
            urls.iter().filter(|u| u.is_some()).count(),
            arcs.len()
        ),
    ))
}

/// Parameters of the synthetic stream.
#[derive(Debug, Clone, Serialize)]
pub struct SynthConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Stop after the page that brings the stream to at least this many links.
    pub links: u64,
    /// Host universe: hosts 0..hosts exist (rank = popularity).
    pub hosts: u64,
    /// Hosts crawled at the same time (pages are drawn from these at random).
    pub active_hosts: usize,
    /// Probability that a new (non-repeated) link points to the page's own host.
    pub same_host: f64,
    /// Probability that a link repeats an earlier link of the same page.
    pub repeat: f64,
    /// Median links per page (log-normal).
    pub median_links: f64,
    /// Sigma of ln(links per page).
    pub links_sigma: f64,
    /// Probability that a link to another host targets its root page.
    pub foreign_root: f64,
    /// Distinct URLs a host's pages link to, per page of the host (uncrawled URLs included).
    pub urls_per_page: u64,
    /// Smallest number of pages of a host (pages per host are Pareto, shape 1.1, from this).
    pub min_host_pages: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            seed: 1,
            links: 12_000_000,
            hosts: 1 << 20,
            active_hosts: 500,
            same_host: 0.815,
            repeat: 0.10,
            median_links: 23.0,
            links_sigma: 1.0,
            foreign_root: 0.5,
            urls_per_page: 8,
            min_host_pages: 10,
        }
    }
}

/// Pages a host has (deterministic in the host id): Pareto with minimum `min` and shape 1.1,
/// capped at 20,000.
fn host_pages(seed: u64, host: u64, min: u64) -> u64 {
    let mut r = SplitMix64(seed ^ host.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let u = 1.0 - r.unit(); // (0, 1]
    ((min.max(1) as f64 / u.powf(1.0 / 1.1)) as u64).clamp(min.max(1), 20_000)
}

/// Distinct URLs a host's pages link to: `per_page` times its pages (pages not crawled
/// included).
fn host_urls(cfg: &SynthConfig, host: u64) -> u64 {
    cfg.urls_per_page.max(1) * host_pages(cfg.seed, host, cfg.min_host_pages)
}

/// A rank in `0..m` with P(r) about proportional to 1/(r+1) (log-uniform; Zipf, exponent 1).
#[inline]
fn zipf1(r: &mut SplitMix64, m: u64) -> u64 {
    let x = ((m as f64 + 1.0).ln() * r.unit()).exp() as u64;
    x.saturating_sub(1).min(m - 1)
}

/// A synthetic crawl with the paper's statistics (see [`SynthConfig`] and the README):
/// hosts are crawled in order of popularity, `active_hosts` at a time, each page from a random
/// active host; a page has a log-normal number of links; each link repeats an earlier link of
/// the page with probability `repeat`, else points to its own host with probability
/// `same_host` (a Zipf-ranked URL of the host), else to another host (Zipf over the host
/// universe; its root with probability `foreign_root`, else a Zipf-ranked URL of it).
pub fn synthetic_stream(cfg: &SynthConfig) -> Stream {
    let mut rng = SplitMix64(cfg.seed);
    let mut b = StreamBuilder::new();
    let mut next_host = 0u64;
    let mut active: Vec<(u64, u64)> = Vec::with_capacity(cfg.active_hosts); // (host, pages left)
    let mut url = String::with_capacity(64);
    let mut page: Vec<(u64, bool)> = Vec::new();
    let make = |url: &mut String, host: u64, rank: u64| -> u64 {
        url.clear();
        if rank == 0 {
            write!(url, "http://h{host}.synth.test/").unwrap();
        } else {
            write!(url, "http://h{host}.synth.test/p{rank}.html").unwrap();
        }
        fingerprint(url)
    };
    while b.stats.links < cfg.links {
        while active.len() < cfg.active_hosts {
            active.push((
                next_host,
                host_pages(cfg.seed, next_host, cfg.min_host_pages),
            ));
            next_host = (next_host + 1) % cfg.hosts;
        }
        let a = rng.below(active.len() as u64) as usize;
        let host = active[a].0;
        active[a].1 -= 1;
        if active[a].1 == 0 {
            active.swap_remove(a);
        }
        // Links on this page: log-normal (Box-Muller), at least 1, at most 2,000.
        let z = (-2.0 * (1.0 - rng.unit()).ln()).sqrt()
            * (2.0 * std::f64::consts::PI * rng.unit()).cos();
        let n = ((cfg.median_links.ln() + cfg.links_sigma * z).exp() as usize).clamp(1, 2000);
        let own_urls = host_urls(cfg, host);
        page.clear();
        b.page();
        for _ in 0..n {
            let link = if !page.is_empty() && rng.unit() < cfg.repeat {
                page[rng.below(page.len() as u64) as usize]
            } else if rng.unit() < cfg.same_host {
                (make(&mut url, host, zipf1(&mut rng, own_urls)), true)
            } else {
                let mut h = zipf1(&mut rng, cfg.hosts);
                if h == host {
                    h = (h + 1) % cfg.hosts;
                }
                let rank = if rng.unit() < cfg.foreign_root {
                    0
                } else {
                    zipf1(&mut rng, host_urls(cfg, h))
                };
                (make(&mut url, h, rank), false)
            };
            page.push(link);
            b.link(link.0, link.1);
        }
    }
    b.finish(
        "synthetic",
        format!(
            "synthetic crawl, seed {}, >= {} links, {} hosts ({} crawled at a time), \
             P(repeat on page) = {}, P(same host | new link) = {}, median {} links/page",
            cfg.seed,
            cfg.links,
            cfg.hosts,
            cfg.active_hosts,
            cfg.repeat,
            cfg.same_host,
            cfg.median_links
        ),
    )
}
