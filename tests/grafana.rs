//! `DIR/metrics.prom` as its readers see it (issue 33, point 4): the Grafana dashboard in
//! `tools/grafana/dragnet.json` queries only metric families a real crawl writes, and Prometheus'
//! own linter (`promtool check metrics`) finds nothing to say about any file a crawl writes,
//! after its first cycle, at its end, with a stale lock and with a failed partition.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

/// The dashboard, parsed.
fn dashboard() -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/grafana/dragnet.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A crawl of a small websim web, and the `metrics.prom` it wrote after its first cycle and
/// at its end (2+ cycles), each with a name saying when.
fn crawl_metrics() -> (common::Crawl, Vec<(&'static str, String)>) {
    let (web, _server) = common::small_web(33, 4, 8);
    let c = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(2, 4),
    );
    let read = || std::fs::read_to_string(dragnet::ops::metrics::metrics_path(&c.dir)).unwrap();
    let first = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(1)).unwrap();
    assert_eq!(first.cycles.len(), 1, "{first:?}");
    assert!(first.complete(), "{first:?}");
    let after_first = read();
    let rest = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(12)).unwrap();
    assert!(
        !rest.cycles.is_empty() && rest.complete(),
        "a crawl of one cycle: {rest:?}"
    );
    let at_end = read();
    (
        c,
        vec![("after cycle 1", after_first), ("at the end", at_end)],
    )
}

/// The metric families of a metrics file (its `# TYPE` lines).
fn families(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// Skips from `chars[i]`, an opening `open`, past its matching `close`, stepping over quoted
/// strings; returns the index after it.
fn skip_group(chars: &[char], mut i: usize, open: char, close: char) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        match chars[i] {
            '"' | '\'' | '`' => i = skip_string(chars, i) - 1,
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    panic!("unclosed {open}: {}", chars.iter().collect::<String>())
}

/// Skips the quoted string starting at `chars[i]`; returns the index after its closing quote.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    let quote = chars[i];
    i += 1;
    while i < chars.len() {
        match chars[i] {
            '\\' if quote != '`' => i += 1,
            c if c == quote => return i + 1,
            _ => {}
        }
        i += 1;
    }
    panic!("unclosed string: {}", chars.iter().collect::<String>())
}

/// The metric names a PromQL expression selects: its identifiers that are not functions
/// (followed by `(`), aggregation operators, keywords, or labels (inside `{..}`, and the label
/// lists of `by`, `without`, `on`, `ignoring`, `group_left`, `group_right`), skipping strings,
/// range and subquery durations (`[..]`), numbers and `$variables`.
fn metric_names(expr: &str) -> BTreeSet<String> {
    const LABEL_LISTS: &[&str] = &[
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    const KEYWORDS: &[&str] = &[
        "bool",
        "and",
        "or",
        "unless",
        "offset",
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
        "atan2",
        "inf",
        "nan",
    ];
    let chars: Vec<char> = expr.chars().collect();
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' | '`' => i = skip_string(&chars, i),
            '{' => i = skip_group(&chars, i, '{', '}'),
            '[' => i = skip_group(&chars, i, '[', ']'),
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '$' => {
                i += 1;
                while i < chars.len() && word_char(chars[i]) {
                    i += 1;
                }
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (word_char(chars[i]) || chars[i] == '.') {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == ':' => {
                let start = i;
                while i < chars.len() && word_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                let call = chars.get(j) == Some(&'(');
                let lower = word.to_ascii_lowercase();
                if LABEL_LISTS.contains(&lower.as_str()) {
                    if call {
                        i = skip_group(&chars, j, '(', ')');
                    }
                } else if !call && !KEYWORDS.contains(&lower.as_str()) {
                    names.insert(word);
                }
            }
            _ => i += 1,
        }
    }
    names
}

/// Every panel of the dashboard, rows' nested panels included.
fn panels(d: &serde_json::Value) -> Vec<&serde_json::Value> {
    fn walk<'a>(ps: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
        for p in ps.as_array().into_iter().flatten() {
            out.push(p);
            walk(&p["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&d["panels"], &mut out);
    out
}

/// Each query of the dashboard: where it is, and its PromQL (panel targets' `expr`, and the
/// metric of the template variables' `label_values(METRIC, label)`).
fn queries(d: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in panels(d) {
        for t in p["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("a target without expr: {t}"));
            out.push((format!("panel {}", p["title"]), expr.to_owned()));
        }
    }
    for v in d["templating"]["list"].as_array().into_iter().flatten() {
        let q = v["query"]["query"]
            .as_str()
            .or(v["query"].as_str())
            .unwrap_or("");
        let args = q
            .strip_prefix("label_values(")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("variable {}: {q}", v["name"]));
        let (metric, _label) = args.rsplit_once(',').unwrap_or_else(|| panic!("{q}"));
        out.push((format!("variable {}", v["name"]), metric.trim().to_owned()));
    }
    out
}

#[test]
fn the_metric_name_scan_finds_every_name_a_query_selects() {
    let names = |e: &str| metric_names(e).into_iter().collect::<Vec<_>>();
    assert_eq!(
        names(
            "sum by (crawl, status) (rate(dragnet_nope_total{crawl=~\"$crawl\",a=\"b}\"}[$__rate_interval] offset 5m)) \
             / ignoring (status) group_left sum without(x) (dragnet_a:b) > bool 1e3 and on(crawl) time() - \
             dragnet_c"
        ),
        ["dragnet_a:b", "dragnet_c", "dragnet_nope_total"]
    );
    assert_eq!(names("up"), ["up"]);
    assert!(names("time() - 3").is_empty());
}

#[test]
fn the_dashboard_queries_only_metrics_a_crawl_writes() {
    let d = dashboard();

    // Importable: a Prometheus datasource input every panel and target uses, the crawl
    // variable from the crawl label, panel ids unique, panels within the 24-column grid.
    let inputs = d["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs
            .iter()
            .any(|i| i["name"] == "DS_PROMETHEUS" && i["pluginId"] == "prometheus"),
        "{inputs:?}"
    );
    let ds = serde_json::json!({"type": "prometheus", "uid": "${DS_PROMETHEUS}"});
    let crawl_var = d["templating"]["list"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["name"] == "crawl"))
        .expect("a crawl variable");
    assert_eq!(crawl_var["datasource"], ds);
    assert!(
        crawl_var["definition"]
            .as_str()
            .is_some_and(|q| q.starts_with("label_values(") && q.ends_with(", crawl)")),
        "{crawl_var}"
    );
    let mut ids = BTreeSet::new();
    let mut titles = BTreeSet::new();
    for p in panels(&d) {
        assert!(ids.insert(p["id"].as_u64().expect("panel id")), "{p}");
        let g = &p["gridPos"];
        assert!(
            g["x"].as_u64().unwrap() + g["w"].as_u64().unwrap() <= 24,
            "{}",
            p["title"]
        );
        if p["type"] == "row" {
            continue;
        }
        titles.insert(p["title"].as_str().unwrap().to_owned());
        assert_eq!(p["datasource"], ds, "{}", p["title"]);
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{}", p["title"]);
        for t in targets {
            assert_eq!(t["datasource"], ds, "{}", p["title"]);
        }
    }
    for want in [
        "Cycles complete",
        "Current cycle",
        "Pages per second",
        "Fetched per cycle",
        "Frontier size",
        "Fetch errors by kind, newest fetch cycle",
        "Status classes, newest fetch cycle",
        "Slowest partition per stage",
        "Busy seconds per stage",
        "Running",
        "Stale lock",
        "Revisits",
    ] {
        assert!(titles.contains(want), "no panel {want:?}: {titles:?}");
    }

    // Every query names at least one metric, selects by the crawl variable, and names only
    // families the crawl's metrics.prom holds.
    let (_c, files) = crawl_metrics();
    let written: BTreeSet<String> = files.iter().flat_map(|(_, t)| families(t)).collect();
    assert!(
        written.contains("dragnet_pages_fetched_total"),
        "{written:?}"
    );
    let mut used = BTreeSet::new();
    for (at, expr) in queries(&d) {
        assert!(
            !expr.contains("__name__"),
            "{at}: select metrics by name: {expr}"
        );
        let names = metric_names(&expr);
        assert!(!names.is_empty(), "{at}: no metric in {expr}");
        for name in &names {
            assert!(
                written.contains(name),
                "{at} queries {name}, which dragnet does not write (it writes {written:?})"
            );
        }
        if at.starts_with("panel") {
            let selectors = expr.matches('{').count();
            assert!(
                selectors >= names.len().min(1)
                    && selectors == expr.matches("{crawl=~\"$crawl\"").count(),
                "{at}: every selector must start with crawl=~\"$crawl\": {expr}"
            );
        }
        used.extend(names);
    }
    let unshown: Vec<_> = written.difference(&used).collect();
    eprintln!("metric families no panel shows: {unshown:?}");
}

/// `promtool check metrics` on `text`: panics unless it succeeds with nothing to say.
fn promtool_check(at: &str, text: &str) {
    use std::io::Write as _;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = common::out_text(&out);
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics, {at}: {said}\n{text}"
    );
}

#[test]
#[ignore = "needs promtool (apt-get install prometheus)"]
fn promtool_accepts_every_metrics_file_a_crawl_writes() {
    let found = std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require(
        "promtool",
        found,
        "apt-get install prometheus (Debian ships promtool in it)",
    );
    let (c, files) = crawl_metrics();
    for (at, text) in &files {
        promtool_check(at, text);
    }

    // A stale lock: the record of a holder on this host that is gone (no OS lock held).
    let status = dragnet::ops::status(c.dir.root()).unwrap();
    let current = status.current.expect("a current cycle");
    let info = dragnet::crawl::LockInfo {
        pid: u32::MAX - 1,
        host: dragnet::util::hostname(),
        started: "2024-01-01T00:00:00Z".into(),
        command: "cycle".into(),
    };
    std::fs::write(c.dir.lock_path(), serde_json::to_vec(&info).unwrap()).unwrap();
    // A failed partition: fetch of the current cycle, partition 0.
    let err = dragnet::Error::config(c.dir.root(), "a failure made by the test");
    dragnet::crawl::failed::write_failed(&c.dir, dragnet::crawl::Stage::Fetch, current, 0, &err)
        .unwrap();
    dragnet::ops::metrics::write_metrics(&c.dir, &c.cfg).unwrap();
    let text = std::fs::read_to_string(dragnet::ops::metrics::metrics_path(&c.dir)).unwrap();
    let crawl = &c.cfg.crawl.name;
    for line in [
        format!("dragnet_lock_stale{{crawl=\"{crawl}\"}} 1"),
        format!("dragnet_failed_partitions{{crawl=\"{crawl}\",stage=\"fetch\"}} 1"),
    ] {
        assert!(text.lines().any(|l| l == line), "no {line}:\n{text}");
    }
    promtool_check("with a stale lock and a failed partition", &text);
}
