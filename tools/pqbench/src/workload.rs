//! Priority sources: the entries the supersteps insert.
//!
//! A workload is a deterministic, endless stream of [`Entry`]s; an experiment takes the first N
//! to fill the queue and the next R for each superstep's insert-many. Every queue in a
//! comparison sees the same stream, and the stream does not depend on what the queue extracts.
//!
//! - [`Sample::Graph`]: a **web sample**. The priorities are the OPIC cash (Abiteboul, Preda &
//!   Cobena, WWW 2003; the paper's priority: "in our experiments we use OPIC") that a crawler
//!   like dragnet's prioritize stage queues its URLs with, while it crawls a web made of K copies
//!   of one of the testdata graphs (copy k > 0 puts `c<k>.` in front of every host name, so the
//!   copies are distinct sites with distinct fingerprints; K is fixed by the graph, see
//!   [`copies_for`]). As in OPIC, every page starts with the same cash (1). The crawler works in
//!   bulk-synchronous cycles: each fetches the [`BATCH`] unfetched pages with the most cash
//!   (OPIC's greedy policy, which is what taking the top of the queue does), and each fetched
//!   page splits its cash evenly among its out-links; every
//!   out-link to a page not fetched yet (re)queues that page with its grown cash: one entry, key
//!   [`Entry::key_for_score`] of the cash (more cash comes out first), fingerprint xxh3-64 of the
//!   page's URL, host key xxh3-64 of its host. The page's older entry stays behind, stale, as in
//!   dragnet's frontier. Cash given to fetched pages queues nothing (no recrawl); cash of pages
//!   without out-links is dropped. A page that has received cash always beats one that has not,
//!   so the crawler follows links; when no linked page is left it starts on an untouched page
//!   with out-links (a new seed), taken in a fixed pseudo-random order over all copies (OPIC's
//!   ties, broken at random), so the stream is a succession of crawls of the graph's link
//!   components from every copy, mixed. Pages without out-links are only fetched once linked.
//!   The stream does not depend on what the benchmarked queue extracts: every queue sees the
//!   same one.
//! - [`Sample::Synthetic`]: i.i.d. scores from a Pareto distribution (minimum 1, tail index
//!   `alpha`, 1.1 by default: the power-law tail of in-degree and PageRank), on fresh URLs
//!   `http://h<H>.synth.test/p<i>.html` with host H drawn log-uniformly (Zipf, exponent 1) from
//!   `hosts` hosts. For comparison-based queues any continuous i.i.d. distribution gives the same
//!   costs (only the relative order of keys matters), so this is the classic random-key "hold"
//!   workload; the web samples add what a crawl has and it lacks: time correlation and ties.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use cachesim::policies::SplitMix64;
use cachesim::streams::{authority, fingerprint};
use dragnet::queue::Entry;

/// Where the priorities come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// An OPIC crawl of the graph `NAME.nodes.tsv` / `NAME.edges.tsv` in `dir`.
    Graph {
        /// Folder of the graph files.
        dir: std::path::PathBuf,
        /// Graph name (`California`, `epa`).
        name: String,
    },
    /// i.i.d. Pareto scores on fresh URLs.
    Synthetic {
        /// Seed.
        seed: u64,
        /// Pareto tail index.
        alpha: f64,
        /// Hosts.
        hosts: u64,
    },
}

impl Sample {
    /// Short name for tables and file names.
    pub fn name(&self) -> String {
        match self {
            Sample::Graph { name, .. } => name.to_lowercase(),
            Sample::Synthetic { .. } => "synthetic".to_string(),
        }
    }

    /// The first `n` entries of the stream.
    pub fn entries(&self, n: usize) -> Result<Vec<Entry>, String> {
        let mut out = Vec::with_capacity(n);
        match self {
            Sample::Graph { dir, name } => {
                let g = Graph::load(dir, name)?;
                let mut c = OpicCrawl::new(&g, copies_for(&g));
                c.fill(&g, n, &mut out);
                if out.len() < n {
                    return Err(format!(
                        "{name}: the crawl of {} copies of the graph yields only {} entries, \
                         {n} needed",
                        c.copies(),
                        out.len()
                    ));
                }
            }
            Sample::Synthetic { seed, alpha, hosts } => {
                let mut s = Synthetic::new(*seed, *alpha, *hosts);
                for _ in 0..n {
                    out.push(s.next_entry());
                }
            }
        }
        Ok(out)
    }

    /// One line saying how the stream is made.
    pub fn describe(&self) -> String {
        match self {
            Sample::Graph { dir, name } => {
                let copies = Graph::load(dir, name)
                    .map(|g| {
                        format!(
                            "{} copies of it ({} pages, {} links each)",
                            copies_for(&g),
                            g.nodes(),
                            g.arcs()
                        )
                    })
                    .unwrap_or_else(|e| e);
                format!(
                    "OPIC cash with which a greedy OPIC crawler queues the pages it discovers \
                     (one entry per link to an unfetched page) in a web made of Kleinberg's \
                     `{name}` graph, {copies}"
                )
            }
            Sample::Synthetic { seed, alpha, hosts } => format!(
                "i.i.d. Pareto(1, {alpha}) scores on fresh URLs over {hosts} Zipf hosts, seed {seed}"
            ),
        }
    }
}

/// A web graph: URL fingerprints and host keys per page, out-links in compressed rows.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Each page's URL.
    pub urls: Vec<String>,
    /// xxh3-64 of each page's URL.
    pub fp: Vec<u64>,
    /// xxh3-64 of each page's authority (host[:port]).
    pub host: Vec<u64>,
    /// Out-links of page `v`: `targets[offsets[v]..offsets[v + 1]]`.
    pub offsets: Vec<usize>,
    /// Targets of all out-links, page by page (file order within a page).
    pub targets: Vec<u32>,
}

impl Graph {
    /// Reads `NAME.nodes.tsv` and `NAME.edges.tsv` (format of `tests/data/README.md`).
    pub fn load(dir: &Path, name: &str) -> Result<Graph, String> {
        let read = |f: String| {
            let p = dir.join(&f);
            std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
        };
        let nodes = read(format!("{name}.nodes.tsv"))?;
        let edges = read(format!("{name}.edges.tsv"))?;
        let mut urls: Vec<(usize, String)> = Vec::new();
        for line in nodes.lines().skip(1) {
            let (id, url) = line
                .split_once('\t')
                .ok_or_else(|| format!("{name}: bad node line {line:?}"))?;
            let id: usize = id
                .parse()
                .map_err(|_| format!("{name}: bad node id {id:?}"))?;
            urls.push((id, url.to_string()));
        }
        let mut index = std::collections::HashMap::with_capacity(urls.len());
        for (i, (id, _)) in urls.iter().enumerate() {
            index.insert(*id, i as u32);
        }
        let mut arcs: Vec<(u32, u32)> = Vec::new();
        for line in edges.lines().skip(1) {
            let (s, d) = line
                .split_once('\t')
                .ok_or_else(|| format!("{name}: bad edge line {line:?}"))?;
            let look = |t: &str| -> Result<u32, String> {
                let id: usize = t.parse().map_err(|_| format!("{name}: bad node {t:?}"))?;
                index
                    .get(&id)
                    .copied()
                    .ok_or_else(|| format!("{name}: arc names unknown node {id}"))
            };
            arcs.push((look(s)?, look(d)?));
        }
        Ok(Graph::from_arcs(
            urls.iter()
                .map(|(_, u)| u.as_str())
                .collect::<Vec<_>>()
                .as_slice(),
            &arcs,
        ))
    }

    /// A graph of pages `urls` (page `i` has URL `urls[i]`) and arcs `(source, target)`.
    pub fn from_arcs(urls: &[&str], arcs: &[(u32, u32)]) -> Graph {
        let n = urls.len();
        let mut offsets = vec![0usize; n + 1];
        for &(s, _) in arcs {
            offsets[s as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; arcs.len()];
        for &(s, d) in arcs {
            targets[fill[s as usize]] = d;
            fill[s as usize] += 1;
        }
        Graph {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            fp: urls.iter().map(|u| fingerprint(u)).collect(),
            host: urls.iter().map(|u| fingerprint(authority(u))).collect(),
            offsets,
            targets,
        }
    }

    /// Pages.
    pub fn nodes(&self) -> usize {
        self.fp.len()
    }

    /// Arcs.
    pub fn arcs(&self) -> usize {
        self.targets.len()
    }

    /// Out-links of page `v`.
    pub fn out(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// Copies of graph `g` in a web sample: every page with in-links is queued at least once when
/// the crawl reaches it, so this many copies yield at least about 4.5 million entries (at least
/// 1 copy).
pub fn copies_for(g: &Graph) -> u32 {
    let mut linked = vec![false; g.nodes()];
    for &t in &g.targets {
        linked[t as usize] = true;
    }
    let targets = linked.iter().filter(|&&l| l).count();
    4_500_000usize.div_ceil(targets.max(1)).max(1) as u32
}

/// The URL of page `url` in copy `k`: unchanged for copy 0, else `c<k>.` in front of the host
/// (in front of the whole string if it has no `://`).
pub fn copy_url(url: &str, k: u32) -> String {
    if k == 0 {
        return url.to_string();
    }
    match url.find("://") {
        Some(i) => format!("{}c{k}.{}", &url[..i + 3], &url[i + 3..]),
        None => format!("c{k}.{url}"),
    }
}

/// Cash in the max-heap of [`OpicCrawl`] (total order on f64), with the page.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cash(f64, u32);

impl Eq for Cash {}

impl PartialOrd for Cash {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Cash {
    fn cmp(&self, o: &Self) -> Ordering {
        // Equal cash: the smaller page id first (the max-heap pops the greatest).
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

/// Pages the crawler of a web sample fetches per cycle.
pub const BATCH: usize = 1000;

/// The greedy OPIC crawl of K copies of a [`Graph`] (see the module docs). Page `k * n + v` is
/// page `v` of copy `k`.
#[derive(Debug, Clone)]
pub struct OpicCrawl {
    urls: Vec<String>,
    n: usize,
    copies: u32,
    cash: Vec<f64>,
    fetched: Vec<bool>,
    /// Pages that have received cash, by cash (stale entries are skipped).
    heap: BinaryHeap<Cash>,
    /// Pages in the current or a past batch.
    scheduled: Vec<bool>,
    /// The rest of the current cycle's fetches.
    batch: VecDeque<usize>,
    /// Entries made but not handed out yet.
    pending: VecDeque<Entry>,
    /// Whether page `v` of the graph has out-links (only those are taken as new seeds).
    has_links: Vec<bool>,
    /// Untouched pages are taken in the order `(step * i + 1) mod total`, i = 0, 1, ...
    step: u64,
    next: u64,
    /// Pages fetched so far.
    pub fetches: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl OpicCrawl {
    /// `copies` copies of `g`, every page with cash 1, nothing fetched.
    pub fn new(g: &Graph, copies: u32) -> OpicCrawl {
        let n = g.nodes();
        let total = (n * copies as usize) as u64;
        // A multiplier coprime with the page count walks every page once, in scrambled order.
        let mut step = (0x9E37_79B9u64 % total.max(1)) | 1;
        while total > 1 && gcd(step, total) != 1 {
            step += 2;
        }
        OpicCrawl {
            urls: g.urls.clone(),
            has_links: (0..n).map(|v| !g.out(v).is_empty()).collect(),
            n,
            copies,
            cash: vec![1.0; total as usize],
            fetched: vec![false; total as usize],
            heap: BinaryHeap::new(),
            scheduled: vec![false; total as usize],
            batch: VecDeque::new(),
            pending: VecDeque::new(),
            step,
            next: 0,
            fetches: 0,
        }
    }

    /// The cash of page `id`.
    pub fn cash(&self, id: usize) -> f64 {
        self.cash[id]
    }

    /// Copies crawled.
    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// Crawls until `out` has grown by `n` entries (entries of a fetch beyond that are kept
    /// for the next call, so the stream is the same however it is cut). Stops early if every
    /// page has been fetched.
    pub fn fill(&mut self, g: &Graph, n: usize, out: &mut Vec<Entry>) {
        let want = out.len() + n;
        loop {
            let take = self.pending.len().min(want - out.len());
            out.extend(self.pending.drain(..take));
            if out.len() >= want {
                return;
            }
            if self.batch.is_empty() && !self.next_batch() {
                return;
            }
            let id = self.batch.pop_front().expect("a batch");
            self.fetch(g, id);
        }
    }

    /// The next cycle's fetches: the [`BATCH`] unfetched pages with the most cash, topped up
    /// with new seeds if fewer have received cash. False when every page has been fetched.
    fn next_batch(&mut self) -> bool {
        while self.batch.len() < BATCH {
            let Some(Cash(c, id)) = self.heap.pop() else {
                break;
            };
            let id = id as usize;
            if !self.fetched[id] && !self.scheduled[id] && c == self.cash[id] {
                self.scheduled[id] = true;
                self.batch.push_back(id);
            }
        }
        let total = self.fetched.len() as u64;
        while self.batch.len() < BATCH && self.next < total {
            let id =
                ((u128::from(self.step) * u128::from(self.next) + 1) % u128::from(total)) as usize;
            self.next += 1;
            if !self.fetched[id] && !self.scheduled[id] && self.has_links[id % self.n] {
                self.scheduled[id] = true;
                self.batch.push_back(id);
            }
        }
        !self.batch.is_empty()
    }

    fn fetch(&mut self, g: &Graph, id: usize) {
        self.fetched[id] = true;
        self.fetches += 1;
        let (k, v) = (id / self.n, id % self.n);
        let c = std::mem::take(&mut self.cash[id]);
        let links = g.out(v);
        if links.is_empty() {
            return;
        }
        let share = c / links.len() as f64;
        for &w in links {
            let wid = k * self.n + w as usize;
            self.cash[wid] += share;
            if self.fetched[wid] {
                continue;
            }
            if !self.scheduled[wid] {
                self.heap.push(Cash(self.cash[wid], wid as u32));
            }
            let (fp, host) = if k == 0 {
                (g.fp[w as usize], g.host[w as usize])
            } else {
                let u = copy_url(&self.urls[w as usize], k as u32);
                (fingerprint(&u), fingerprint(authority(&u)))
            };
            self.pending
                .push_back(Entry::new(Entry::key_for_score(self.cash[wid]), fp, host));
        }
        // Drop stale heap entries now and then.
        if self.heap.len() > 2 * self.fetched.len() + 1024 {
            let live: Vec<Cash> = self
                .heap
                .drain()
                .filter(|&Cash(c, id)| !self.scheduled[id as usize] && c == self.cash[id as usize])
                .collect();
            self.heap = live.into();
        }
    }
}

/// The synthetic stream (module docs).
#[derive(Debug, Clone)]
pub struct Synthetic {
    rng: SplitMix64,
    alpha: f64,
    hosts: u64,
    next: u64,
    url: String,
}

impl Synthetic {
    /// A stream with this seed, Pareto tail index and host count.
    pub fn new(seed: u64, alpha: f64, hosts: u64) -> Synthetic {
        Synthetic {
            rng: SplitMix64(seed),
            alpha,
            hosts: hosts.max(1),
            next: 0,
            url: String::new(),
        }
    }

    /// The next entry.
    pub fn next_entry(&mut self) -> Entry {
        let u = 1.0 - self.rng.unit(); // (0, 1]
        let score = u.powf(-1.0 / self.alpha);
        let x = ((self.hosts as f64 + 1.0).ln() * self.rng.unit()).exp() as u64;
        let h = x.saturating_sub(1).min(self.hosts - 1);
        self.url.clear();
        write!(self.url, "http://h{h}.synth.test/p{}.html", self.next).expect("string");
        self.next += 1;
        Entry::new(
            Entry::key_for_score(score),
            fingerprint(&self.url),
            fingerprint(authority(&self.url)),
        )
    }
}
