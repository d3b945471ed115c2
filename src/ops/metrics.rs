//! `DIR/metrics.prom`: the crawl's numbers for Prometheus, through node_exporter's textfile
//! collector (docs/design.md §9).
//!
//! The file is the Prometheus text exposition format, version 0.0.4: for each metric family a
//! `# HELP` and a `# TYPE` line, then its samples, `name{label="value"} value`, one per line,
//! families never interleaved, no timestamps (the textfile collector refuses them; it exports
//! the file's mtime as `node_textfile_mtime_seconds` instead). Every sample carries a
//! `crawl="<crawl.name>"` label so several crawls can feed one collector directory (symlink or
//! copy each `metrics.prom` there under its own name). It is written atomically, so the collector
//! never reads half a file.
//!
//! Everything comes from a [`Status`] (markers and trailers, no data files), so writing it after
//! every cycle costs what `dragnet status` costs without its top-hosts pass. Values:
//!
//! - gauges `dragnet_cycle_*` describe the newest cycle whose fetch (or split) did work (had URLs
//!   or links; an empty cycle at the end of a crawl does not hide it), named by
//!   `dragnet_fetch_cycle`; counters `*_total` sum every cycle still in the directory (they drop
//!   if old cycles are pruned, which Prometheus treats as a counter reset);
//! - `dragnet_stage_seconds` is the slowest partition of each stage of the newest complete cycle
//!   (the stage's wall time when partitions run in parallel), `dragnet_stage_busy_seconds` the sum
//!   over its partitions;
//! - pages are fetch results by HTTP status class (`2xx` .. `5xx`, and `no_answer`): the fetch
//!   stage counts classes, not single codes.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use super::status::{status_of, Status, StatusOptions};
use crate::config::Config;
use crate::crawl::Holder;
use crate::crawl::{CrawlDir, Stage};
use crate::error::Result;

/// `DIR/metrics.prom`.
pub fn metrics_path(crawl: &CrawlDir) -> PathBuf {
    crawl.root().join("metrics.prom")
}

/// Reads the crawl's status (without the top-hosts pass) and writes `DIR/metrics.prom`
/// atomically; returns its path. What `dragnet cycle` calls after each cycle.
pub fn write_metrics(crawl: &CrawlDir, cfg: &Config) -> Result<PathBuf> {
    let status = status_of(crawl, cfg, &StatusOptions { top_hosts: false })?;
    write_status_metrics(crawl, &status)
}

/// Writes `DIR/metrics.prom` atomically from a status already read; returns its path.
pub fn write_status_metrics(crawl: &CrawlDir, status: &Status) -> Result<PathBuf> {
    let path = metrics_path(crawl);
    crate::storage::write_atomic(&path, render(status).as_bytes())?;
    Ok(path)
}

/// The metrics of `status` in the Prometheus text format.
pub fn render(s: &Status) -> String {
    let mut p = Prom::new(&s.name);
    crawl_families(&mut p, s);
    stage_families(&mut p, s);
    fetch_families(&mut p, s);
    cache_families(&mut p, s);
    p.out
}

/// A count as a sample value.
fn u(v: u64) -> f64 {
    v as f64
}

/// 1 or 0.
fn b(v: bool) -> f64 {
    f64::from(u8::from(v))
}

/// The crawl as a whole: partitions, URLs, frontier, cycles, the lock.
fn crawl_families(p: &mut Prom, s: &Status) {
    p.gauge("dragnet_partitions", "Logical partitions M of the crawl.")
        .one(u(s.partitions.into()));
    p.gauge(
        "dragnet_seen_urls",
        "URLs ever discovered (newest seen sets).",
    )
    .one(u(s.seen));
    p.gauge("dragnet_urldb_records", "Records in the newest URL dbs.")
        .one(u(s.urldb));
    if let Some(n) = s.frontier {
        p.gauge(
            "dragnet_frontier_urls",
            "URLs in the frontiers (newest prioritize marker of each partition).",
        )
        .one(u(n));
    }
    p.gauge(
        "dragnet_cycles_complete",
        "Cycles with every stage done for every partition.",
    )
    .one(u(s.cycles_complete.into()));
    if let Some(c) = s.last_complete_cycle() {
        p.gauge("dragnet_last_cycle", "The newest complete cycle.")
            .one(u(c.cycle.into()));
        if let Some(t) = c.completed_at {
            p.gauge(
                "dragnet_last_cycle_completion_timestamp_seconds",
                "When the newest complete cycle finished, Unix seconds.",
            )
            .one(u(t));
        }
    }
    if let Some(c) = s.current {
        p.gauge(
            "dragnet_current_cycle",
            "The oldest cycle that is not complete.",
        )
        .one(u(c.into()));
    }
    let holder = s.lock.as_ref().map(|(_, h)| *h);
    p.gauge(
        "dragnet_running",
        "1 if the crawl lock is held by a live process on this host.",
    )
    .one(b(holder == Some(Holder::Alive)));
    p.gauge(
        "dragnet_lock_stale",
        "1 if the crawl lock's holder is gone (clear it with dragnet unlock DIR).",
    )
    .one(b(holder == Some(Holder::Gone)));
}

/// Per stage: failed partitions, and the newest complete cycle's times.
fn stage_families(p: &mut Prom, s: &Status) {
    p.gauge(
        "dragnet_failed_partitions",
        "Partitions whose last attempt of a stage failed (a .failed marker, no .done), all cycles.",
    );
    for stage in Stage::CYCLE {
        let n: u32 = s
            .cycles
            .iter()
            .flat_map(|c| &c.stages)
            .filter(|st| st.stage == stage)
            .map(|st| st.failed)
            .sum();
        p.sample(&[("stage", stage.name())], u(n.into()));
    }

    if let Some(c) = s.last_complete_cycle() {
        let stages = || c.stages.iter().filter(|st| st.stage != Stage::Init);
        p.gauge(
            "dragnet_stage_seconds",
            "Wall seconds of the slowest partition of each stage in the newest complete cycle.",
        );
        for st in stages() {
            p.sample(&[("stage", st.stage.name())], st.max_seconds);
        }
        p.gauge(
            "dragnet_stage_busy_seconds",
            "Wall seconds summed over the partitions of each stage in the newest complete cycle.",
        );
        for st in stages() {
            p.sample(&[("stage", st.stage.name())], st.seconds);
        }
    }
}

/// The fetch: the newest cycle that fetched anything (gauges) and all cycles (counters).
fn fetch_families(p: &mut Prom, s: &Status) {
    if let Some(c) = s.fetch_cycle {
        let f = &s.fetch;
        p.gauge(
            "dragnet_fetch_cycle",
            "The cycle the dragnet_cycle_fetch* gauges describe.",
        )
        .one(u(c.into()));
        p.gauge(
            "dragnet_cycle_fetch_partitions",
            "Partitions whose fetch is done in that cycle.",
        )
        .one(u(f.partitions.into()));
        p.gauge(
            "dragnet_cycle_pages_fetched",
            "Fetch results of that cycle by HTTP status class.",
        );
        for (k, v) in &f.by_status {
            p.sample(&[("status", k)], u(*v));
        }
        p.gauge(
            "dragnet_cycle_fetch_errors",
            "Fetch results of that cycle with an error, by kind.",
        );
        for (k, v) in &f.errors {
            p.sample(&[("kind", k)], u(*v));
        }
        p.gauge(
            "dragnet_cycle_fetch_requests",
            "HTTP requests of that cycle (robots.txt included).",
        )
        .one(u(f.requests));
        p.gauge(
            "dragnet_cycle_fetched_bytes",
            "Response bytes received in that cycle.",
        )
        .one(u(f.bytes));
        p.gauge(
            "dragnet_cycle_fetch_revisits",
            "2xx answers of that cycle written as revisits of an identical payload.",
        )
        .one(u(f.revisits));
    }
    let t = &s.fetch_total;
    p.counter(
        "dragnet_pages_fetched_total",
        "Fetch results by HTTP status class, all cycles in the directory.",
    );
    for (k, v) in &t.by_status {
        p.sample(&[("status", k)], u(*v));
    }
    p.counter(
        "dragnet_fetch_errors_total",
        "Fetch results with an error by kind, all cycles in the directory.",
    );
    for (k, v) in &t.errors {
        p.sample(&[("kind", k)], u(*v));
    }
    p.counter(
        "dragnet_fetch_requests_total",
        "HTTP requests, all cycles in the directory.",
    )
    .one(u(t.requests));
    p.counter(
        "dragnet_fetched_bytes_total",
        "Response bytes received, all cycles in the directory.",
    )
    .one(u(t.bytes));
    p.counter(
        "dragnet_fetch_revisits_total",
        "2xx answers written as revisits of an identical payload, all cycles in the directory.",
    )
    .one(u(t.revisits));
}

/// The split's CLOCK cache: the newest cycle that split anything (gauges) and all cycles.
fn cache_families(p: &mut Prom, s: &Status) {
    if s.cache_cycle.is_some() {
        p.gauge(
            "dragnet_cycle_cache_hits",
            "CLOCK cache hits in the newest cycle's splits.",
        )
        .one(u(s.cache.hits));
        p.gauge(
            "dragnet_cycle_cache_lookups",
            "CLOCK cache lookups in the newest cycle's splits.",
        )
        .one(u(s.cache.lookups));
    }
    p.counter(
        "dragnet_cache_hits_total",
        "CLOCK cache hits, all cycles in the directory.",
    )
    .one(u(s.cache_total.hits));
    p.counter(
        "dragnet_cache_lookups_total",
        "CLOCK cache lookups, all cycles in the directory.",
    )
    .one(u(s.cache_total.lookups));
}

/// Writes families and samples; every sample gets the `crawl` label.
struct Prom {
    out: String,
    crawl: String,
    family: String,
    seen: BTreeSet<String>,
}

impl Prom {
    fn new(crawl: &str) -> Prom {
        Prom {
            out: String::new(),
            crawl: crawl.to_owned(),
            family: String::new(),
            seen: BTreeSet::new(),
        }
    }

    fn gauge(&mut self, name: &str, help: &str) -> &mut Prom {
        self.family(name, "gauge", help)
    }

    fn counter(&mut self, name: &str, help: &str) -> &mut Prom {
        debug_assert!(name.ends_with("_total"), "{name}");
        self.family(name, "counter", help)
    }

    fn family(&mut self, name: &str, kind: &str, help: &str) -> &mut Prom {
        debug_assert!(
            valid_name(name) && self.seen.insert(name.to_owned()),
            "{name}"
        );
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        self.family = name.to_owned();
        self
    }

    fn one(&mut self, value: f64) {
        self.sample(&[], value);
    }

    fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        let _ = write!(
            self.out,
            "{}{{crawl=\"{}\"",
            self.family,
            escape(&self.crawl)
        );
        for (k, v) in labels {
            let _ = write!(self.out, ",{k}=\"{}\"", escape(v));
        }
        let _ = writeln!(self.out, "}} {}", number(value));
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn valid_name(name: &str) -> bool {
    let mut cs = name.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::status::tests::fixture;
    use std::collections::{BTreeMap, HashMap};

    /// One sample: family name, labels, value.
    type Sample = (String, BTreeMap<String, String>, f64);

    /// Fails the check with a message naming the line.
    macro_rules! ensure {
        ($cond:expr, $($msg:tt)+) => {
            if !$cond {
                return Err(format!($($msg)+));
            }
        };
    }

    /// Parses a label set `a="x",b="y"` (escapes undone), checking the grammar.
    fn labels(mut s: &str, line: &str) -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        while !s.is_empty() {
            let (name, rest) = s.split_once("=\"").ok_or(format!("label: {line}"))?;
            ensure!(
                valid_name(name) && !name.contains(':') && !name.starts_with("__"),
                "label name {name:?}: {line}"
            );
            let mut value = String::new();
            let mut chars = rest.char_indices();
            let end = loop {
                match chars.next() {
                    Some((_, '\\')) => match chars.next() {
                        Some((_, '\\')) => value.push('\\'),
                        Some((_, '"')) => value.push('"'),
                        Some((_, 'n')) => value.push('\n'),
                        other => return Err(format!("bad escape {other:?}: {line}")),
                    },
                    Some((i, '"')) => break i,
                    Some((_, c)) => value.push(c),
                    None => return Err(format!("unterminated label value: {line}")),
                }
            };
            ensure!(
                out.insert(name.to_owned(), value).is_none(),
                "repeated label: {line}"
            );
            s = &rest[end + 1..];
            match s.strip_prefix(',') {
                Some(r) => s = r,
                None => ensure!(s.is_empty(), "junk after a label: {line}"),
            }
        }
        Ok(out)
    }

    /// Checks `text` against the rules of the text exposition format (and ours: a TYPE for
    /// every family, counters named `_total`) and returns its samples.
    fn parse(text: &str) -> Result<Vec<Sample>, String> {
        ensure!(
            text.ends_with('\n'),
            "the last line must end with a newline"
        );
        let mut types: HashMap<String, String> = HashMap::new();
        let mut helps: BTreeSet<String> = BTreeSet::new();
        let mut finished: BTreeSet<String> = BTreeSet::new();
        let mut current = String::new();
        let mut samples: Vec<Sample> = Vec::new();
        let mut series = BTreeSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# ") {
                let mut parts = rest.splitn(3, ' ');
                let kw = parts.next().unwrap_or("");
                let name = parts.next().unwrap_or("");
                let arg = parts.next().unwrap_or("");
                ensure!(valid_name(name), "metric name {name:?}: {line}");
                ensure!(
                    !finished.contains(name) && current != name,
                    "{name} described after its samples"
                );
                match kw {
                    "HELP" => {
                        ensure!(helps.insert(name.to_owned()), "second HELP: {line}");
                        ensure!(!arg.is_empty(), "empty HELP: {line}");
                        let bad_escape = arg.split("\\\\").any(|part| {
                            part.match_indices('\\')
                                .any(|(i, _)| !part[i + 1..].starts_with('n'))
                        });
                        ensure!(!bad_escape, "bad escape in HELP: {line}");
                    }
                    "TYPE" => {
                        let kinds = ["counter", "gauge", "histogram", "summary", "untyped"];
                        ensure!(kinds.contains(&arg), "type: {line}");
                        ensure!(
                            types.insert(name.to_owned(), arg.to_owned()).is_none(),
                            "second TYPE for {name}"
                        );
                        ensure!(
                            arg != "counter" || name.ends_with("_total"),
                            "counter without _total: {name}"
                        );
                    }
                    _ => return Err(format!("unknown comment keyword: {line}")),
                }
                continue;
            }
            ensure!(!line.is_empty() && !line.starts_with('#'), "line {line:?}");
            let (series_part, value) = line.rsplit_once(' ').ok_or(format!("no value: {line}"))?;
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().map_err(|_| format!("value: {line}"))?,
            };
            let (name, lbls) = match series_part.split_once('{') {
                Some((n, l)) => {
                    let l = l
                        .strip_suffix('}')
                        .ok_or(format!("no closing brace: {line}"))?;
                    (n, labels(l, line)?)
                }
                None => (series_part, BTreeMap::new()),
            };
            ensure!(valid_name(name), "metric name {name:?}: {line}");
            ensure!(types.contains_key(name), "sample before its TYPE: {line}");
            if name != current {
                ensure!(!finished.contains(name), "{name}: samples not contiguous");
                if !current.is_empty() {
                    finished.insert(std::mem::take(&mut current));
                }
                current = name.to_owned();
            }
            ensure!(
                series.insert(series_part.to_owned()),
                "duplicate series: {line}"
            );
            samples.push((name.to_owned(), lbls, value));
        }
        Ok(samples)
    }

    fn get(samples: &[Sample], name: &str, label: Option<(&str, &str)>) -> f64 {
        samples
            .iter()
            .find(|(n, l, _)| {
                n == name && label.is_none_or(|(k, v)| l.get(k).map(String::as_str) == Some(v))
            })
            .unwrap_or_else(|| panic!("no {name} {label:?}"))
            .2
    }

    #[test]
    fn the_metrics_file_follows_the_text_format_and_holds_the_crawls_numbers() {
        let (_t, crawl) = fixture();
        let cfg = Config::load(&crawl.config_path()).unwrap();
        let path = write_metrics(&crawl, &cfg).unwrap();
        assert_eq!(path, crawl.root().join("metrics.prom"));
        let text = std::fs::read_to_string(&path).unwrap();
        let samples = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));

        // The crawl's name has a quote, a backslash and a newline: escaped, and read back.
        for (name, l, _) in &samples {
            assert_eq!(l["crawl"], "te\"st\\\nx", "{name}");
        }
        let g = |name: &str| get(&samples, name, None);
        let l = |name: &str, k: &str, v: &str| get(&samples, name, Some((k, v)));
        assert_eq!(g("dragnet_partitions"), 2.0);
        assert_eq!(g("dragnet_seen_urls"), 7.0);
        assert_eq!(g("dragnet_frontier_urls"), 30.0);
        assert_eq!(g("dragnet_cycles_complete"), 1.0);
        assert_eq!(g("dragnet_last_cycle"), 0.0);
        assert_eq!(g("dragnet_current_cycle"), 1.0);
        let done_at = g("dragnet_last_cycle_completion_timestamp_seconds");
        assert!(
            (done_at - crate::util::unix_now() as f64).abs() < 120.0,
            "{done_at}"
        );
        assert_eq!(g("dragnet_running"), 0.0);
        assert_eq!(g("dragnet_lock_stale"), 0.0);
        assert_eq!(l("dragnet_failed_partitions", "stage", "fetch"), 1.0);
        assert_eq!(l("dragnet_failed_partitions", "stage", "merge"), 0.0);
        // Stage times of the complete cycle 0: partitions took ~2 s and ~4 s.
        let fetch_max = l("dragnet_stage_seconds", "stage", "fetch");
        let fetch_sum = l("dragnet_stage_busy_seconds", "stage", "fetch");
        assert!((4.0..5.0).contains(&fetch_max), "{fetch_max}");
        assert!((6.0..7.0).contains(&fetch_sum), "{fetch_sum}");
        // The newest fetch (cycle 1: partition 0 done, partition 1 failed).
        assert_eq!(g("dragnet_fetch_cycle"), 1.0);
        assert_eq!(g("dragnet_cycle_fetch_partitions"), 1.0);
        assert_eq!(l("dragnet_cycle_pages_fetched", "status", "2xx"), 4.0);
        assert_eq!(l("dragnet_cycle_pages_fetched", "status", "no_answer"), 1.0);
        assert_eq!(l("dragnet_cycle_fetch_errors", "kind", "robots"), 1.0);
        assert_eq!(g("dragnet_cycle_fetched_bytes"), 500.0);
        // Cumulative: cycle 0's two fetches (3 + 3 2xx) and cycle 1's (4).
        assert_eq!(l("dragnet_pages_fetched_total", "status", "2xx"), 10.0);
        assert_eq!(l("dragnet_pages_fetched_total", "status", "4xx"), 2.0);
        assert_eq!(g("dragnet_fetched_bytes_total"), 2500.0);
        assert_eq!(g("dragnet_fetch_requests_total"), 16.0);
        assert_eq!(g("dragnet_cycle_cache_hits"), 4.0);
        assert_eq!(g("dragnet_cycle_cache_lookups"), 16.0);
        assert_eq!(g("dragnet_cache_hits_total"), 4.0);
    }

    #[test]
    fn names_values_and_escapes() {
        assert!(valid_name("dragnet_a:b_1") && !valid_name("1a") && !valid_name("a-b"));
        assert!(!valid_name(""));
        assert_eq!(escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(1e21), "1000000000000000000000");
    }

    #[test]
    fn the_validator_catches_what_it_should() {
        let bad = [
            "x 1\n",                                                    // no TYPE
            "# TYPE x gauge\n# TYPE x gauge\nx 1\n",                    // two TYPEs
            "# TYPE x gauge\n# TYPE y gauge\nx 1\ny 1\nx{a=\"b\"} 2\n", // not contiguous
            "# TYPE x gauge\nx{a=\"b\\q\"} 1\n",                        // bad escape
            "# TYPE x-y gauge\nx-y 1\n",                                // bad name
            "# TYPE x counter\nx 1\n",                                  // counter without _total
            "# TYPE x gauge\nx 1",                                      // no final newline
            "# TYPE x gauge\nx 1\n# HELP x late\n",                     // HELP after samples
            "# HELP x a\\q\n# TYPE x gauge\nx 1\n",                     // bad escape in HELP
        ];
        for text in bad {
            assert!(parse(text).is_err(), "accepted {text:?}");
        }
        let good = "# HELP x a\\\\b\\n\n# TYPE x gauge\nx{a=\"\\\"\\n\"} 1\n# TYPE y_total counter\ny_total 2\n";
        let samples = parse(good).unwrap();
        assert_eq!(samples[0].1["a"], "\"\n");
        assert_eq!(samples[1].2, 2.0);
    }
}
