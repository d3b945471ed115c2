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
pub mod svg;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, Result};
use crate::ops::{CycleState, PartitionState, Status, StatusOptions};
use crate::records::{FetchErrorKind, FetchResult, HostRecord, PageRecord, UrlRecord, UrlState};
use crate::run::{RunReader, Schema};

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
    // Which (cycle, partition) fetch and parse outputs to read: those with a valid marker.
    let mut fetch_done: Vec<(u32, u32)> = Vec::new();
    let mut parse_done: Vec<(u32, u32)> = Vec::new();
    if let Some(s) = &status {
        fill_from_status(crawl, s, &mut r, &mut skipped);
        for c in &s.cycles {
            for st in &c.stages {
                let list = match st.stage {
                    Stage::Fetch => &mut fetch_done,
                    Stage::Parse => &mut parse_done,
                    _ => continue,
                };
                list.extend(
                    (0..m)
                        .filter(|&p| st.state(p) == PartitionState::Done)
                        .map(|p| (c.cycle, p)),
                );
            }
        }
    } else {
        // No status: every partition whose marker file exists.
        for c in crawl.cycles() {
            for p in 0..m {
                if crawl.done_path(c, Stage::Fetch, p).exists() {
                    fetch_done.push((c, p));
                }
                if crawl.done_path(c, Stage::Parse, p).exists() {
                    parse_done.push((c, p));
                }
            }
        }
    }
    let mut hosts = HostTally::default();
    read_fetched(crawl, &fetch_done, &mut r, &mut hosts, &mut skipped);
    read_urldb(crawl, m, &mut r, &mut hosts, &mut skipped);
    read_host_tables(crawl, cfg, &mut r, &mut skipped);
    read_pages(crawl, &parse_done, &mut r, &mut skipped);
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

/// Per-host numbers with bounded memory.
#[derive(Default)]
struct HostTally {
    map: HashMap<String, HostRow>,
}

impl HostTally {
    fn get(&mut self, host: &str) -> &mut HostRow {
        let key = if self.map.contains_key(host) || self.map.len() < MAX_HOSTS {
            host
        } else {
            OTHER_HOSTS
        };
        if !self.map.contains_key(key) {
            self.map.insert(
                key.to_owned(),
                HostRow {
                    host: key.to_owned(),
                    ..HostRow::default()
                },
            );
        }
        self.map.get_mut(key).expect("inserted")
    }

    fn rows(self) -> Vec<HostRow> {
        let mut v: Vec<HostRow> = self.map.into_values().collect();
        v.sort_unstable_by(|a, b| a.host.cmp(&b.host));
        v
    }
}

/// Reads every record of a run of `schema` with `f`; a damaged run is named in `skipped` (what
/// was read before the damage is kept).
fn each_record(
    path: &Path,
    schema: Schema,
    skipped: &mut Vec<String>,
    f: &mut dyn FnMut(&[u8]) -> std::result::Result<(), String>,
) {
    let res = (|| -> Result<()> {
        let mut rd = RunReader::open_expect(path, schema)?;
        while let Some((_, payload)) = rd.next_record()? {
            f(payload).map_err(|e| Error::corrupt(path, 0, e))?;
        }
        Ok(())
    })();
    if let Err(e) = res {
        skipped.push(format!("{}: {e}", path.display()));
    }
}

/// Per host and per status code, from the fetch results of the done fetches.
fn read_fetched(
    crawl: &CrawlDir,
    done: &[(u32, u32)],
    r: &mut Report,
    hosts: &mut HostTally,
    skipped: &mut Vec<String>,
) {
    for &(c, p) in done {
        let path = crawl.fetched(c, p);
        if !path.exists() {
            skipped.push(format!(
                "{}: missing (the fetch marker says it was written)",
                crawl.relative(&path)
            ));
            continue;
        }
        each_record(&path, Schema::FETCHED, skipped, &mut |payload| {
            let fr = FetchResult::decode(payload).map_err(|e| format!("fetch result: {e}"))?;
            *r.status_codes.entry(fr.status).or_default() += 1;
            let h = hosts.get(crate::keys::host_of(&fr.url));
            h.urls += 1;
            if fr.error_kind() == Some(FetchErrorKind::Robots) {
                h.robots += 1;
                r.hosts.robots_disallowed += 1;
            } else if !fr.error.is_empty() {
                h.errors += 1;
            }
            if fr.status > 0 {
                let mime = if fr.content_type.is_empty() {
                    "(none)"
                } else {
                    fr.content_type.as_str()
                };
                let e = r.mime_fetched.entry(mime.to_owned()).or_default();
                e.0 += 1;
                e.1 += fr.length;
                h.pages += 1;
                h.bytes += fr.length;
                if fr.revisit {
                    h.dup_urls += 1;
                    h.dup_bytes += fr.length;
                } else if fr.status == 304 {
                    h.not_modified_urls += 1;
                    h.not_modified_bytes += fr.length;
                } else {
                    h.novel_urls += 1;
                    h.novel_bytes += fr.length;
                }
            }
            Ok(())
        });
    }
}

/// URL states and each host's remaining URLs, from the newest URL db of each partition.
fn read_urldb(
    crawl: &CrawlDir,
    m: u32,
    r: &mut Report,
    hosts: &mut HostTally,
    skipped: &mut Vec<String>,
) {
    for p in 0..m {
        let Some((_, path)) = crawl.latest_state(p, "urldb", u32::MAX) else {
            continue;
        };
        each_record(&path, Schema::URLDB, skipped, &mut |payload| {
            let u = UrlRecord::decode(payload).map_err(|e| format!("URL record: {e}"))?;
            *r.url_states.entry(u.state.name().to_owned()).or_default() += 1;
            if matches!(u.state, UrlState::Unfetched | UrlState::Retry) {
                hosts.get(crate::keys::host_of(&u.url)).remaining += 1;
            }
            Ok(())
        });
    }
}

/// robots.txt outcomes and hosts given up, from the newest host table of each partition.
fn read_host_tables(crawl: &CrawlDir, cfg: &Config, r: &mut Report, skipped: &mut Vec<String>) {
    let max_failures = cfg.fetch.max_host_failures;
    for p in 0..cfg.crawl.partitions {
        let Some((next, path)) = crawl.latest_state(p, "hosts", u32::MAX) else {
            continue;
        };
        let h = &mut r.hosts;
        each_record(&path, Schema::HOSTS, skipped, &mut |payload| {
            let rec = HostRecord::decode(payload).map_err(|e| format!("host record: {e}"))?;
            h.known += 1;
            let mut unreachable = 0;
            for o in &rec.robots {
                let kind = match o.status {
                    200..=299 => "rules",
                    429 => "unreachable",
                    400..=499 => "none",
                    0 | 500..=599 => "unreachable",
                    _ => "other",
                };
                unreachable += usize::from(kind == "unreachable");
                *h.robots.entry(kind.into()).or_default() += 1;
            }
            if rec.parked_until > next {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: format!(
                        "parked until cycle {}: no answer in {} fetch runs in a row ([fetch] \
                         park_after_failed_runs); its URLs wait in the frontier",
                        rec.parked_until, rec.failed_runs
                    ),
                });
            } else if max_failures > 0 && rec.consecutive_failures >= max_failures {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: format!(
                        "{} failed requests in a row ([fetch] max_host_failures = {max_failures}; \
                         {} of {} requests failed)",
                        rec.consecutive_failures, rec.failures, rec.requests
                    ),
                });
            } else if !rec.robots.is_empty() && unreachable == rec.robots.len() {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: "robots.txt unreachable (disallow all until it answers)".into(),
                });
            }
            Ok(())
        });
    }
    r.hosts.given_up.sort_by(|a, b| a.host.cmp(&b.host));
}

/// Content types, charsets and sizes from the page facts of the done parses.
fn read_pages(crawl: &CrawlDir, done: &[(u32, u32)], r: &mut Report, skipped: &mut Vec<String>) {
    let c = &mut r.content;
    c.sizes = vec![0; 65];
    for &(cy, p) in done {
        let path = crawl.pages(cy, p);
        if !path.exists() {
            continue; // a parse with nothing to parse writes no pages run
        }
        each_record(&path, Schema::PAGES, skipped, &mut |payload| {
            let pg = PageRecord::decode(payload).map_err(|e| format!("page: {e}"))?;
            c.pages += 1;
            let mime = if pg.content_type.is_empty() {
                "(none)".to_owned()
            } else {
                pg.content_type.clone()
            };
            let e = c.mime.entry(mime).or_default();
            e.0 += 1;
            e.1 += pg.length;
            let cs = if pg.charset.is_empty() {
                "(none)".to_owned()
            } else {
                pg.charset.to_ascii_lowercase()
            };
            *c.charsets.entry(cs).or_default() += 1;
            c.sizes[svg::pow2_bucket(pg.length)] += 1;
            c.noindex += u64::from(pg.noindex);
            Ok(())
        });
    }
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
