//! The demo's summary ([`DemoSummary`]): what the crawl did (from its cycle report and fetch
//! results), checked against websim's ground truth and its politeness audit, and the text the
//! demo prints ([`render`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use dragnet::crawl::report::counter;
use dragnet::crawl::{CrawlDir, Stage};
use dragnet::error::{Error, Result};
use dragnet::exec::CycleReport;
use dragnet::records::{FetchErrorKind as K, FetchResult};
use dragnet::run::{Cursor, RunReader, Schema};
use dragnet::util::plural;
use websim::audit::Report as Audit;
use websim::model::Web;

/// What the demo found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DemoSummary {
    /// The crawl directory.
    pub dir: PathBuf,
    /// Where the WARC files are.
    pub warc_dirs: Vec<PathBuf>,
    /// Cycles run.
    pub cycles: u32,
    /// Fetches: results of URLs a request went out for (robots.txt excluded), in every cycle (a
    /// URL retried in a later cycle counts again).
    pub fetches: u64,
    /// The fetches by HTTP status class (`2xx` .. `5xx`), and `no_answer` for those that got no
    /// HTTP answer (timeouts, resets, cut-off bodies): they add up to `fetches`.
    pub pages_by_status: BTreeMap<String, u64>,
    /// Fetch-list URLs no request went out for, by reason (`robots`, `deferred`, ...).
    pub not_fetched: BTreeMap<String, u64>,
    /// New URLs discovered per cycle.
    pub new_per_cycle: Vec<u64>,
    /// Fetches per cycle (as `fetches`, which they add up to).
    pub fetched_per_cycle: Vec<u64>,
    /// CLOCK cache hits / lookups over all cycles.
    pub cache_hit_rate: f64,
    /// Seconds per stage in pipeline order, summed over cycles and over partitions (partitions
    /// run at the same time, so a sum can exceed the wall-clock time).
    pub stage_seconds: Vec<(String, f64)>,
    /// Wall-clock seconds of all cycles.
    pub seconds: f64,
    /// `fetches` per second of wall-clock time over the whole run.
    pub pages_per_second: f64,
    /// URLs the ground truth says a perfect crawler fetches (robots.txt excluded).
    pub should_fetch: u64,
    /// Of those, fetched.
    pub fetched_of_should: u64,
    /// URLs fetched that the truth does not fetch (robots.txt excluded).
    pub fetched_not_in_truth: u64,
    /// A few of those, for a look.
    pub examples_not_in_truth: Vec<String>,
    /// A few should-fetch URLs that were not fetched.
    pub examples_missed: Vec<String>,
    /// Of the missed URLs, those on hostile hosts (cut off by `[fetch] max_host_failures`
    /// failures in a row, where the ground truth tries every URL once).
    pub missed_on_hostile: u64,
    /// Missed URLs per host (the hosts with the most).
    pub missed_by_host: Vec<(String, u64)>,
    /// URLs beyond the truth per host (the hosts with the most).
    pub beyond_by_host: Vec<(String, u64)>,
    /// Fetches of URLs robots.txt disallows (websim's audit).
    pub disallowed_fetched: u64,
    /// All politeness violations websim saw (too soon, concurrent, before robots, disallowed).
    pub politeness_violations: u64,
    /// A few of them.
    pub violation_examples: Vec<String>,
    /// The same, by kind.
    pub violations_by_kind: BTreeMap<String, u64>,
    /// Why the run stopped.
    pub stopped: String,
}

/// The summary of a finished crawl of `web`: `report` is what its cycles did in `seconds`, `m`
/// its partitions, `audit` websim's audit of the crawl, `max_depth` the depth the truth
/// follows to.
pub(super) fn summary(
    crawl: &CrawlDir,
    report: &CycleReport,
    m: u32,
    seconds: f64,
    web: &Web,
    max_depth: u32,
    audit: &Audit,
) -> Result<DemoSummary> {
    let mut s = summarize(crawl, report)?;
    let fetched = tally_fetches(crawl, &mut s, m)?;
    s.seconds = seconds;
    s.pages_per_second = s.fetches as f64 / seconds.max(1e-9);
    against_truth(&mut s, web, max_depth, &fetched);
    add_audit(&mut s, audit);
    Ok(s)
}

/// Compares the URLs `fetched` with what websim's ground truth fetches from `web`: coverage,
/// URLs beyond it, misses (on hostile hosts, by host) and a few examples.
fn against_truth(s: &mut DemoSummary, web: &Web, max_depth: u32, fetched: &BTreeSet<String>) {
    let mut policy = websim::truth::Policy::new(web);
    policy.max_depth = max_depth;
    let truth = websim::truth::truth(web, &policy);
    let should: BTreeSet<&str> = truth
        .fetched
        .iter()
        .filter(|f| f.outcome != websim::truth::Outcome::Robots)
        .map(|f| f.url.as_str())
        .collect();
    s.should_fetch = should.len() as u64;
    s.fetched_of_should = should.iter().filter(|u| fetched.contains(**u)).count() as u64;
    let extra: Vec<&String> = fetched
        .iter()
        .filter(|u| !should.contains(u.as_str()))
        .collect();
    s.fetched_not_in_truth = extra.len() as u64;
    s.examples_not_in_truth = extra.iter().take(5).map(|u| u.to_string()).collect();
    s.examples_missed = should
        .iter()
        .filter(|u| !fetched.contains(**u))
        .take(5)
        .map(|u| u.to_string())
        .collect();
    let hostile: BTreeSet<&str> = web
        .hosts
        .iter()
        .filter(|h| h.hostile.is_some())
        .map(|h| h.name.as_str())
        .collect();
    s.missed_on_hostile = should
        .iter()
        .filter(|u| !fetched.contains(**u) && hostile.contains(dragnet::keys::host_of(u)))
        .count() as u64;
    s.missed_by_host = by_host(should.iter().copied().filter(|u| !fetched.contains(*u)));
    s.beyond_by_host = by_host(extra.iter().map(|u| u.as_str()));
}

/// websim's politeness audit: disallowed fetches, violations by kind, a few examples.
fn add_audit(s: &mut DemoSummary, audit: &Audit) {
    s.disallowed_fetched = audit.counts.disallowed;
    s.politeness_violations = audit.counts.total();
    let v = &audit.counts;
    for (k, n) in [
        ("too_soon", v.too_soon),
        ("concurrent", v.concurrent),
        ("before_robots", v.before_robots),
        ("disallowed", v.disallowed),
        ("ignored_retry_after", v.ignored_retry_after),
        ("ip_concurrent", v.ip_concurrent),
        ("ip_too_soon", v.ip_too_soon),
    ] {
        s.violations_by_kind.insert(k.into(), n);
    }
    for e in audit.violations.iter().take(5) {
        s.violation_examples.push(format!("{e:?}"));
    }
}

/// Counts per host, the five hosts with the most first.
fn by_host<'a>(urls: impl Iterator<Item = &'a str>) -> Vec<(String, u64)> {
    let mut m: BTreeMap<&str, u64> = BTreeMap::new();
    for u in urls {
        *m.entry(dragnet::keys::host_of(u)).or_insert(0) += 1;
    }
    let mut v: Vec<(String, u64)> = m.into_iter().map(|(h, n)| (h.to_owned(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(5);
    v
}

/// Reads the fetch results of cycles `0..s.cycles` into `s` (fetches, by status, not fetched)
/// and returns the URLs fetched (robots.txt excluded).
fn tally_fetches(crawl: &CrawlDir, s: &mut DemoSummary, m: u32) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    s.fetched_per_cycle = vec![0; s.cycles as usize];
    for c in 0..s.cycles {
        for p in 0..m {
            let path = crawl.fetched(c, p);
            if !path.exists() {
                continue;
            }
            let mut r = RunReader::open_expect(&path, Schema::FETCHED)?;
            while r.advance()? {
                let f = FetchResult::decode(r.payload())
                    .map_err(|e| Error::corrupt(&path, r.block_offset(), e.to_string()))?;
                // Attempted: a request went out (not refused by robots or the guard, not left
                // for a later cycle, not refused because the origin's certificate failed when
                // its robots.txt was fetched: a TLS kind without a fetch time).
                let refused = match f.error_kind() {
                    Some(
                        K::Deferred
                        | K::Robots
                        | K::Ssrf
                        | K::Url
                        | K::RobotsUnreachable
                        | K::HostFailing
                        | K::OutOfScope,
                    ) => true,
                    Some(k) => k.is_tls() && f.fetched_at_ms == 0,
                    None => false,
                };
                let attempted = !refused;
                if attempted {
                    s.fetches += 1;
                    s.fetched_per_cycle[c as usize] += 1;
                    let class = match f.status {
                        0 => counter::NO_ANSWER.to_owned(),
                        st => format!("{}xx", st / 100),
                    };
                    *s.pages_by_status.entry(class).or_insert(0) += 1;
                    out.insert(f.url);
                } else {
                    *s.not_fetched.entry(f.error).or_insert(0) += 1;
                }
            }
        }
    }
    Ok(out)
}

fn summarize(crawl: &CrawlDir, report: &CycleReport) -> Result<DemoSummary> {
    let mut s = DemoSummary {
        dir: crawl.root().to_path_buf(),
        stopped: report.stopped.clone(),
        ..DemoSummary::default()
    };
    let (mut hits, mut lookups) = (0u64, 0u64);
    for c in &report.cycles {
        s.cycles = s.cycles.max(c.cycle + 1);
        let count = |stage: Stage, k: &str| {
            c.stages
                .get(stage)
                .and_then(|r| r.counts.get(k))
                .copied()
                .unwrap_or(0)
        };
        s.new_per_cycle.push(count(Stage::Merge, counter::NEW));
        hits += count(Stage::Split, counter::CACHE_HITS);
        lookups +=
            count(Stage::Split, counter::CACHE_HITS) + count(Stage::Split, counter::CACHE_MISSES);
        for stage in Stage::CYCLE {
            let secs = c.stages.get(stage).map_or(0.0, |r| r.seconds);
            match s.stage_seconds.iter_mut().find(|(n, _)| n == stage.name()) {
                Some((_, t)) => *t += secs,
                None => s.stage_seconds.push((stage.name().to_owned(), secs)),
            }
        }
        let warcs = crawl.warc_dir(c.cycle);
        if warcs.exists() {
            s.warc_dirs.push(warcs);
        }
    }
    s.cache_hit_rate = hits as f64 / lookups.max(1) as f64;
    Ok(s)
}

/// `name n` pairs joined with commas.
fn pairs<'a>(v: impl IntoIterator<Item = (&'a String, &'a u64)>) -> String {
    v.into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary as the demo prints it.
pub fn render(s: &DemoSummary) -> String {
    let mut lines = Vec::new();
    crawl_lines(s, &mut lines);
    truth_lines(s, &mut lines);
    politeness_lines(s, &mut lines);
    path_lines(s, &mut lines);
    lines.into_iter().map(|l| l + "\n").collect()
}

/// What the crawl did: fetches by status and cycle, new URLs, the cache, the stages' times.
fn crawl_lines(s: &DemoSummary, out: &mut Vec<String>) {
    out.push(format!(
        "\ndragnet demo: {} in {:.1}s ({})",
        plural(s.cycles.into(), "cycle", "cycles"),
        s.seconds,
        s.stopped
    ));
    out.push(format!(
        "  fetched      {} (requests sent, robots.txt excluded), {:.0} per second over the whole crawl",
        plural(s.fetches, "URL", "URLs"),
        s.pages_per_second
    ));
    out.push(format!("  by status    {}", pairs(&s.pages_by_status)));
    if !s.not_fetched.is_empty() {
        out.push(format!(
            "  not fetched  {} (no request sent: refused by robots.txt or a limit, or left for a later cycle)",
            pairs(&s.not_fetched)
        ));
    }
    out.push(format!("  per cycle    fetched {:?}", s.fetched_per_cycle));
    out.push(format!("               new URLs {:?}", s.new_per_cycle));
    out.push(format!(
        "  cache        {:.1}% of link targets were hits in the CLOCK cache",
        100.0 * s.cache_hit_rate
    ));
    out.push(format!(
        "  stage times  {} (summed over cycles and partitions, which run side by side)",
        s.stage_seconds
            .iter()
            .map(|(k, v)| format!("{k} {v:.1}s"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
}

/// The crawl against websim's ground truth: coverage, what was missed and what went beyond.
fn truth_lines(s: &DemoSummary, out: &mut Vec<String>) {
    out.push(format!(
        "  coverage     {} of the {} URLs websim's ground truth fetches ({:.1}%); {} fetched beyond it",
        s.fetched_of_should,
        s.should_fetch,
        100.0 * s.fetched_of_should as f64 / s.should_fetch.max(1) as f64,
        s.fetched_not_in_truth
    ));
    let hosts = |v: &[(String, u64)]| {
        v.iter()
            .map(|(h, n)| format!("{h} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missed = s.should_fetch - s.fetched_of_should;
    if missed > 0 {
        out.push(format!(
            "               {} of the {missed} missed {} on hostile hosts, which dragnet stops \
             trying after [fetch] max_host_failures failures in a row (the truth tries every URL)",
            s.missed_on_hostile,
            if s.missed_on_hostile == 1 {
                "is"
            } else {
                "are"
            }
        ));
    }
    if !s.missed_by_host.is_empty() {
        out.push(format!(
            "               missed, by host: {}",
            hosts(&s.missed_by_host)
        ));
    }
    if !s.beyond_by_host.is_empty() {
        out.push(format!(
            "               beyond, by host: {}",
            hosts(&s.beyond_by_host)
        ));
    }
    if let Some(m) = s.examples_missed.first() {
        out.push(format!("               e.g. missed {m}"));
    }
    if let Some(b) = s.examples_not_in_truth.first() {
        out.push(format!("               e.g. beyond {b}"));
    }
}

/// websim's politeness audit.
fn politeness_lines(s: &DemoSummary, out: &mut Vec<String>) {
    out.push(format!(
        "  politeness   {} fetched, {} in websim's audit",
        plural(s.disallowed_fetched, "disallowed URL", "disallowed URLs"),
        plural(s.politeness_violations, "violation", "violations")
    ));
    if s.politeness_violations > 0 {
        out.push(format!(
            "               by kind: {}",
            pairs(s.violations_by_kind.iter().filter(|(_, n)| **n > 0))
        ));
        for e in &s.violation_examples {
            out.push(format!("               {e}"));
        }
    }
}

/// Where to look next: the crawl, its WARC files, index and report, and `dragnet status`.
fn path_lines(s: &DemoSummary, out: &mut Vec<String>) {
    out.push(format!("  crawl        {}", s.dir.display()));
    if let (Some(first), Some(last)) = (s.warc_dirs.first(), s.warc_dirs.last()) {
        out.push(format!(
            "  WARC files   {} .. {}",
            first.display(),
            last.display()
        ));
    }
    let index = dragnet::ops::index::crawl_index(&CrawlDir::new(&s.dir));
    if index.exists() {
        out.push(format!(
            "  CDXJ index   {} (with archive/: a pywb collection)",
            index.display()
        ));
    }
    let report = dragnet::ops::report::default_dir(&CrawlDir::new(&s.dir)).join("index.html");
    if report.exists() {
        out.push(format!(
            "  report       {} (charts and CSV files; dragnet report remakes it)",
            report.display()
        ));
    }
    out.push(format!("  next         dragnet status {}", s.dir.display()));
}
