//! `dragnet report`: a static, self-contained HTML report of a crawl (`index.html`) and the same
//! numbers as CSV files shaped after Heritrix 3's reports (`docs/formats.md`, "Reports").
//!
//! - this module collects the numbers ([`collect`]) and writes the files ([`write_report`]);
//! - [`svg`]: the charts, drawn as inline SVG by hand;
//! - [`html`]: the page; [`csv`]: the CSV files.
//!
//! **Where the numbers come from.** The commit markers, through [`crate::ops::status_of`]
//! (per-cycle, per-stage counts and times), the newest state of each partition (URL db records
//! for the URL states and each host's remaining URLs, host tables for robots.txt outcomes and
//! hosts given up), the fetch-result runs (per host and per status code, as `dragnet status`'s
//! top hosts) and the pages runs (content types, charsets, sizes). Never the WARC files: the
//! report costs one pass over the fetch results, page facts and newest URL db, not over the
//! archive. Memory grows with the number of distinct hosts (one small entry each, at most
//! [`MAX_HOSTS`]; past that the rest are counted as one row, `(other hosts)`).
//!
//! **Damage.** A damaged or missing marker, an unreadable run or host table is named in the
//! report's `skipped` list and left out; the rest is still reported. Only a crawl directory that
//! cannot be opened at all (no `crawl.toml`) and a report that cannot be written are errors.
//!
//! **Why hand-written SVG.** The charts are a few hundred lines of string formatting
//! ([`svg`]). A plotting crate would bring dozens of dependencies (font rasterizers, image
//! codecs) whose build takes minutes on the 2-core machines this project is built and tested
//! on, for four chart kinds that need no more than lines, rectangles and text. No script, no
//! CDN, no font: the page opens from the file system, offline, years later.
//!
//! The files are written one by one, each atomically ([`crate::storage::write_atomic`]):
//! a reader sees a whole old file or a whole new one, never half of one.

pub mod csv;
pub mod html;
mod read;
pub mod svg;

pub use read::Fetches;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, Stage};
use crate::error::Result;
use crate::ops::{CycleState, Status, StatusOptions};
use crate::records::FetchErrorKind;

/// Distinct hosts tracked one by one; the rest are summed into `(other hosts)`.
pub const MAX_HOSTS: usize = 1_000_000;
/// Hosts listed in each top-hosts table of the page.
pub const TOP: usize = 20;
/// The host row that sums hosts beyond [`MAX_HOSTS`].
pub const OTHER_HOSTS: &str = "(other hosts)";

/// The per-cycle numbers of one cycle.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CycleRow {
    /// Cycle number.
    pub cycle: u32,
    /// `complete`, `in_progress` or `not_started`.
    pub state: String,
    /// URLs in the cycle's fetch lists.
    pub listed: u64,
    /// Fetch partitions done / all.
    pub fetch_done: u32,
    /// URLs of the fetch lists given a result.
    pub urls: u64,
    /// Fetch results (the lists' and the URLs followed within the run).
    pub results: u64,
    /// URLs followed within the fetch runs.
    pub followed: u64,
    /// Listed URLs deferred (deadline, failing host): not fetched this cycle.
    pub deferred: u64,
    /// Results by status class: `2xx` .. `5xx`, `no_answer`.
    pub status: BTreeMap<String, u64>,
    /// Results with an error, by kind.
    pub errors: BTreeMap<String, u64>,
    /// Answers written as revisits of an identical payload.
    pub revisits: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// WARC bytes written.
    pub warc_bytes: u64,
    /// HTTP requests (robots.txt included).
    pub requests: u64,
    /// robots.txt requests.
    pub robots_requests: u64,
    /// Hosts slowed down (429/503 back-off).
    pub slowed_down: u64,
    /// New URLs the merge found.
    pub new_urls: u64,
    /// URLs in the frontier after prioritize.
    pub frontier: Option<u64>,
    /// URLs prioritize listed for the next cycle.
    pub selected: u64,
    /// Per stage: (name, slowest partition's seconds, sum of seconds).
    pub stage_seconds: Vec<(String, f64, f64)>,
    /// Results per second of the slowest fetch partition (the fetch's wall time when partitions
    /// run side by side).
    pub pages_per_sec: f64,
    /// The cycle's WARC files, relative to the crawl directory.
    pub warc_files: Vec<String>,
}

impl CycleRow {
    /// Answered results (any HTTP status).
    pub fn answered(&self) -> u64 {
        self.status
            .iter()
            .filter(|(k, _)| k.as_str() != counter::NO_ANSWER)
            .map(|(_, v)| v)
            .sum()
    }

    /// Revisits / answered results.
    pub fn dedup_ratio(&self) -> f64 {
        let a = self.answered();
        if a == 0 {
            0.0
        } else {
            self.revisits as f64 / a as f64
        }
    }
}

/// What the crawl did for one host, over every cycle.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostRow {
    /// The host.
    pub host: String,
    /// Fetch results (answered or not).
    pub urls: u64,
    /// Answered results (pages).
    pub pages: u64,
    /// Body bytes.
    pub bytes: u64,
    /// Results refused by robots.txt.
    pub robots: u64,
    /// URLs in the URL db not fetched yet or waiting for a retry.
    pub remaining: u64,
    /// Answers with a new payload (not revisits, not 304).
    pub novel_urls: u64,
    /// Their bytes.
    pub novel_bytes: u64,
    /// Answers written as revisits of an identical payload.
    pub dup_urls: u64,
    /// Their bytes.
    pub dup_bytes: u64,
    /// 304 answers.
    pub not_modified_urls: u64,
    /// Their bytes.
    pub not_modified_bytes: u64,
    /// Results with an error other than robots.txt (no answer, cut bodies, deferrals).
    pub errors: u64,
}

/// A host the fetch gave up on, and why.
#[derive(Debug, Clone, Serialize)]
pub struct GivenUp {
    /// The host.
    pub host: String,
    /// Why.
    pub why: String,
}

/// The hosts section.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Hosts {
    /// Every host with a fetch result, by name (bounded by [`MAX_HOSTS`]).
    pub rows: Vec<HostRow>,
    /// Host tables read: hosts known.
    pub known: u64,
    /// Hosts given up (their failures in a row reached `[fetch] max_host_failures`, or every
    /// robots.txt of theirs is unreachable).
    pub given_up: Vec<GivenUp>,
    /// robots.txt outcomes by origin: `rules` (2xx), `none` (4xx: allow all), `unreachable`.
    pub robots: BTreeMap<String, u64>,
    /// URLs refused by robots.txt (fetch results `error = robots`).
    pub robots_disallowed: u64,
    /// Per-host page counts in power-of-two buckets (see [`svg::pow2_bucket`]).
    pub pages_per_host: Vec<u64>,
}

/// The content section (from the pages runs).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Content {
    /// Page facts read.
    pub pages: u64,
    /// Pages and bytes by media type.
    pub mime: BTreeMap<String, (u64, u64)>,
    /// Pages by charset (HTML only; `(none)` for other types).
    pub charsets: BTreeMap<String, u64>,
    /// Page sizes in power-of-two buckets.
    pub sizes: Vec<u64>,
    /// Pages saying noindex.
    pub noindex: u64,
}

/// Everything the report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `crawl.name`.
    pub name: String,
    /// The crawl directory.
    pub dir: PathBuf,
    /// Partitions.
    pub partitions: u32,
    /// When the report was made, Unix seconds.
    pub generated_at: u64,
    /// URLs ever discovered.
    pub seen: u64,
    /// Records in the newest URL dbs.
    pub urldb: u64,
    /// URL db records by state.
    pub url_states: BTreeMap<String, u64>,
    /// URLs in the frontiers.
    pub frontier: Option<u64>,
    /// Cycles complete.
    pub cycles_complete: u32,
    /// The crawl is done (nothing left to fetch).
    pub finished: bool,
    /// The cycle a `dragnet cycle` works on next.
    pub current: Option<u32>,
    /// Per cycle.
    pub cycles: Vec<CycleRow>,
    /// Fetch results by exact HTTP status (0: no answer), over every cycle.
    pub status_codes: BTreeMap<u16, u64>,
    /// Fetch results and bytes by media type, over every cycle.
    pub mime_fetched: BTreeMap<String, (u64, u64)>,
    /// Hosts.
    pub hosts: Hosts,
    /// Content.
    pub content: Content,
    /// Per partition: (frontier, next fetch list) from its newest prioritize marker.
    pub partition_frontier: Vec<(u32, Option<u64>, Option<u64>)>,
    /// Files linked from the page, relative to the crawl directory: the crawl's CDXJ index if
    /// it exists.
    pub cdxj: Option<String>,
    /// What could not be read, and why.
    pub skipped: Vec<String>,
}

impl Report {
    /// Pages (answered fetch results) over every cycle, from the markers.
    pub fn pages(&self) -> u64 {
        self.cycles.iter().map(CycleRow::answered).sum()
    }

    /// WARC bytes over every cycle, from the markers.
    pub fn warc_bytes(&self) -> u64 {
        self.cycles.iter().map(|c| c.warc_bytes).sum()
    }

    /// The newest complete cycle that had URLs to fetch (failing that, the newest complete
    /// one), for the coverage headline.
    pub fn last_cycle(&self) -> Option<&CycleRow> {
        let complete = || self.cycles.iter().rev().filter(|c| c.state == "complete");
        complete()
            .find(|c| c.listed > 0)
            .or_else(|| complete().next())
    }
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// The report directory.
    pub dir: PathBuf,
    /// The files written, in it.
    pub files: Vec<String>,
    /// What was skipped.
    pub skipped: Vec<String>,
}

/// `dragnet report DIR [--out OUT]`: opens the crawl and writes its report into `out`
/// (default `DIR/report`).
pub fn report(dir: &Path, out: Option<&Path>) -> Result<Written> {
    let (crawl, cfg) = CrawlDir::open(dir)?;
    let out = out.map_or_else(|| default_dir(&crawl), Path::to_path_buf);
    write_report(&crawl, &cfg, &out)
}

/// The report's default directory: `DIR/report`.
pub fn default_dir(crawl: &CrawlDir) -> PathBuf {
    crawl.root().join("report")
}

/// Collects the numbers and writes `index.html` and the CSV files into `out`.
pub fn write_report(crawl: &CrawlDir, cfg: &Config, out: &Path) -> Result<Written> {
    write_collected(crawl, collect(crawl, cfg), out)
}

/// [`write_report`] of a report [`collect`] made (the end of a cycle collects while the CDXJ
/// indexes are merged, then writes: whether the crawl's index exists is looked at again here).
pub fn write_collected(crawl: &CrawlDir, mut r: Report, out: &Path) -> Result<Written> {
    let index = crate::ops::index::crawl_index(crawl);
    r.cdxj = index.exists().then(|| crawl.relative(&index));
    crate::storage::create_dir_all(out)?;
    let mut files = Vec::new();
    let link_base = link_base(crawl, out);
    let page = html::render(&r, &link_base);
    for (name, text) in std::iter::once(("index.html".to_string(), page)).chain(csv::all(&r)) {
        crate::storage::write_atomic(&out.join(&name), text.as_bytes())?;
        files.push(name);
    }
    Ok(Written {
        dir: out.to_path_buf(),
        files,
        skipped: r.skipped,
    })
}

/// How the page links to files of the crawl: relative (`../`) when the report is the crawl's
/// own `report/`, else the crawl directory's absolute path.
fn link_base(crawl: &CrawlDir, out: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = abs(crawl.root());
    if abs(out).parent() == Some(root.as_path()) {
        "../".into()
    } else {
        format!("{}/", root.display())
    }
}

/// Collects every number of the report; what cannot be read is named in `skipped`.
pub fn collect(crawl: &CrawlDir, cfg: &Config) -> Report {
    collect_with(crawl, cfg, None)
}

/// [`collect`], taking the fetch results and page facts from `early` ([`Fetches::read_now`])
/// if it read those of the fetches and parses done now.
pub fn collect_with(crawl: &CrawlDir, cfg: &Config, early: Option<Fetches>) -> Report {
    let m = cfg.crawl.partitions;
    let mut skipped = Vec::new();
    let status = match crate::ops::status_of(crawl, cfg, &StatusOptions { top_hosts: false }) {
        Ok(s) => Some(s),
        Err(e) => {
            skipped.push(format!(
                "the per-cycle counts (markers and run trailers): {e}"
            ));
            None
        }
    };
    let mut r = Report {
        name: cfg.crawl.name.clone(),
        dir: crawl.root().to_path_buf(),
        partitions: m,
        generated_at: crate::util::unix_now(),
        seen: 0,
        urldb: 0,
        url_states: BTreeMap::new(),
        frontier: None,
        cycles_complete: 0,
        finished: false,
        current: None,
        cycles: Vec::new(),
        status_codes: BTreeMap::new(),
        mime_fetched: BTreeMap::new(),
        hosts: Hosts::default(),
        content: Content::default(),
        partition_frontier: Vec::new(),
        cdxj: None,
        skipped: Vec::new(),
    };
    if let Some(s) = &status {
        fill_from_status(crawl, s, &mut r, &mut skipped);
    }
    let done = read::Done::of(crawl, m, status.as_ref());
    let fetches = match early {
        Some(f) if f.done == done => f,
        _ => Fetches::read(crawl, done),
    };
    let Fetches {
        status_codes,
        mime_fetched,
        robots_disallowed,
        content,
        mut hosts,
        skipped: [skipped_fetched, skipped_pages],
        ..
    } = fetches;
    r.status_codes = status_codes;
    r.mime_fetched = mime_fetched;
    r.hosts.robots_disallowed = robots_disallowed;
    r.content = content;
    skipped.extend(skipped_fetched);
    read::read_urldb(crawl, m, &mut r, &mut hosts, &mut skipped);
    read::read_host_tables(crawl, cfg, &mut r, &mut skipped);
    skipped.extend(skipped_pages);
    r.hosts.rows = hosts.rows();
    let mut per_host = vec![0u64; 65];
    for h in &r.hosts.rows {
        if h.urls > 0 {
            per_host[svg::pow2_bucket(h.pages)] += 1;
        }
    }
    r.hosts.pages_per_host = per_host;
    r.partition_frontier = partition_frontier(crawl, m);
    let index = crate::ops::index::crawl_index(crawl);
    if index.exists() {
        r.cdxj = Some(crawl.relative(&index));
    }
    r.skipped = skipped;
    r
}

/// The headline and per-cycle rows from the status.
fn fill_from_status(crawl: &CrawlDir, s: &Status, r: &mut Report, skipped: &mut Vec<String>) {
    r.seen = s.seen;
    r.urldb = s.urldb;
    r.frontier = s.frontier;
    r.cycles_complete = s.cycles_complete;
    r.finished = s.finished;
    r.current = s.current;
    for c in &s.cycles {
        let mut row = CycleRow {
            cycle: c.cycle,
            state: match c.state {
                CycleState::Complete => "complete",
                CycleState::InProgress => "in_progress",
                CycleState::NotStarted => "not_started",
            }
            .into(),
            listed: c.fetchlist_urls,
            ..CycleRow::default()
        };
        for st in &c.stages {
            for d in &st.damaged {
                skipped.push(format!(
                    "cycle {} {}: a damaged marker, its counts left out: {d}",
                    c.cycle, st.stage
                ));
            }
            if st.stage == Stage::Init {
                continue;
            }
            row.stage_seconds
                .push((st.stage.name().into(), st.max_seconds, st.seconds));
            let get = |k: &str| st.counts.get(k).copied().unwrap_or(0);
            match st.stage {
                Stage::Fetch => {
                    row.fetch_done = st.done;
                    row.urls = get(counter::URLS);
                    row.results = get(counter::RESULTS);
                    row.followed = get(counter::FOLLOWED);
                    row.revisits = get(counter::REVISITS);
                    row.bytes = get(counter::BYTES);
                    row.warc_bytes = get(counter::WARC_BYTES);
                    row.requests = get(counter::REQUESTS);
                    row.robots_requests = get(counter::ROBOTS_REQUESTS);
                    row.slowed_down = get(counter::SLOWED_DOWN);
                    for (k, &v) in &st.counts {
                        if k == counter::NO_ANSWER {
                            *row.status.entry(k.clone()).or_default() += v;
                        } else if let Some(class) = k.strip_prefix(counter::STATUS_PREFIX) {
                            *row.status.entry(class.to_owned()).or_default() += v;
                        } else if let Some(kind) = k.strip_prefix(counter::ERROR_PREFIX) {
                            *row.errors.entry(kind.to_owned()).or_default() += v;
                        }
                    }
                    row.deferred = row
                        .errors
                        .get(FetchErrorKind::Deferred.as_str())
                        .copied()
                        .unwrap_or(0);
                    if st.max_seconds > 0.0 {
                        row.pages_per_sec = row.results as f64 / st.max_seconds;
                    }
                }
                Stage::Merge => row.new_urls = get(counter::NEW),
                Stage::Prioritize => {
                    if st.done > 0 {
                        row.frontier = st.counts.get(counter::FRONTIER).copied();
                    }
                    row.selected = get(counter::SELECTED);
                }
                _ => {}
            }
        }
        row.warc_files = list_dir(&crawl.warc_dir(c.cycle))
            .into_iter()
            .map(|p| crawl.relative(&p))
            .collect();
        r.cycles.push(row);
    }
}

/// The files of `dir`, sorted (none if it cannot be read), temporaries left out.
fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| !crate::storage::is_temp_name(&e.file_name().to_string_lossy()))
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Per partition: the frontier and next fetch list of its newest prioritize marker.
fn partition_frontier(crawl: &CrawlDir, m: u32) -> Vec<(u32, Option<u64>, Option<u64>)> {
    let cycles = crawl.cycles();
    (0..m)
        .map(|p| {
            let mk = cycles.iter().rev().find_map(|&c| {
                crate::crawl::DoneMarker::read(&crawl.done_path(c, Stage::Prioritize, p))
                    .ok()
                    .flatten()
            });
            match mk {
                Some(mk) => (
                    p,
                    mk.counts.get(counter::FRONTIER).copied(),
                    mk.counts.get(counter::SELECTED).copied(),
                ),
                None => (p, None, None),
            }
        })
        .collect()
}
