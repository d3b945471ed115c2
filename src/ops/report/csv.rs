//! The report's numbers as CSV files, named and shaped after Heritrix 3's reports where one
//! exists (`docs/formats.md`, "Reports"): `crawl-report.csv`, `hosts-report.csv`,
//! `mimetype-report.csv`, `responsecode-report.csv`, `frontier-summary.csv`, and
//! `cycles.csv` (dragnet's own: one row per cycle). The header line names the columns as
//! Heritrix does (`#urls`, `#bytes`, ...), comma-separated; fields with a comma, a quote or a
//! line break are quoted (RFC 4180).

use std::fmt::Write as _;

use super::Report;

/// One CSV field.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn line(out: &mut String, fields: &[String]) {
    let v: Vec<String> = fields.iter().map(|f| field(f)).collect();
    out.push_str(&v.join(","));
    out.push('\n');
}

/// Every CSV file: (name, text).
pub fn all(r: &Report) -> Vec<(String, String)> {
    vec![
        ("crawl-report.csv".into(), crawl_report(r)),
        ("hosts-report.csv".into(), hosts_report(r)),
        ("mimetype-report.csv".into(), mimetype_report(r)),
        ("responsecode-report.csv".into(), responsecode_report(r)),
        ("frontier-summary.csv".into(), frontier_summary(r)),
        ("cycles.csv".into(), cycles(r)),
    ]
}

/// `crawl-report.csv`: `key,value` rows, the keys of Heritrix's crawl-report where one fits.
pub fn crawl_report(r: &Report) -> String {
    let mut o = String::from("key,value\n");
    let results: u64 = r.cycles.iter().map(|c| c.results).sum();
    let bytes: u64 = r.cycles.iter().map(|c| c.bytes).sum();
    let fetch_secs: f64 = r
        .cycles
        .iter()
        .flat_map(|c| c.stage_seconds.iter())
        .filter(|s| s.0 == "fetch")
        .map(|s| s.1)
        .sum();
    let status = if r.finished {
        "FINISHED"
    } else if r.current.is_some() {
        "RUNNING_OR_PAUSED"
    } else {
        "UNKNOWN"
    };
    let (fetched, listed) = r
        .last_cycle()
        .map_or((0, 0), |c| (c.urls.saturating_sub(c.deferred), c.listed));
    let rows: Vec<(&str, String)> = vec![
        ("Crawl Name", r.name.clone()),
        ("Crawl Status", status.into()),
        ("Partitions", r.partitions.to_string()),
        ("Cycles Complete", r.cycles_complete.to_string()),
        ("URIs Seen", r.seen.to_string()),
        ("URL DB Records", r.urldb.to_string()),
        ("Frontier URIs", r.frontier.unwrap_or(0).to_string()),
        ("URIs Processed", results.to_string()),
        ("Pages Fetched", r.pages().to_string()),
        (
            "Novel URIs",
            r.hosts
                .rows
                .iter()
                .map(|h| h.novel_urls)
                .sum::<u64>()
                .to_string(),
        ),
        (
            "Dup-by-hash URIs",
            r.cycles.iter().map(|c| c.revisits).sum::<u64>().to_string(),
        ),
        ("Total Crawled Bytes", bytes.to_string()),
        ("WARC Bytes", r.warc_bytes().to_string()),
        ("Fetch Seconds", format!("{fetch_secs:.3}")),
        (
            "URIs/sec",
            format!(
                "{:.2}",
                if fetch_secs > 0.0 {
                    results as f64 / fetch_secs
                } else {
                    0.0
                }
            ),
        ),
        (
            "KB/sec",
            format!(
                "{:.2}",
                if fetch_secs > 0.0 {
                    bytes as f64 / 1024.0 / fetch_secs
                } else {
                    0.0
                }
            ),
        ),
        ("Last Cycle Fetched", fetched.to_string()),
        ("Last Cycle Listed", listed.to_string()),
        ("Hosts Known", r.hosts.known.to_string()),
        ("Hosts Given Up", r.hosts.given_up.len().to_string()),
        ("Skipped", r.skipped.len().to_string()),
    ];
    for (k, v) in rows {
        line(&mut o, &[k.to_owned(), v]);
    }
    for (state, n) in &r.url_states {
        line(&mut o, &[format!("URL DB {state}"), n.to_string()]);
    }
    o
}

/// `hosts-report.csv`: Heritrix's columns, plus `#errors`; most URLs first.
pub fn hosts_report(r: &Report) -> String {
    let mut o = String::from(
        "#urls,#bytes,host,#robots,#remaining,#novel-urls,#novel-bytes,#dup-by-hash-urls,\
         #dup-by-hash-bytes,#not-modified-urls,#not-modified-bytes,#errors\n",
    );
    let mut rows: Vec<&super::HostRow> = r.hosts.rows.iter().collect();
    rows.sort_by(|a, b| b.urls.cmp(&a.urls).then_with(|| a.host.cmp(&b.host)));
    for h in rows {
        let n = |v: u64| v.to_string();
        line(
            &mut o,
            &[
                n(h.urls),
                n(h.bytes),
                h.host.clone(),
                n(h.robots),
                n(h.remaining),
                n(h.novel_urls),
                n(h.novel_bytes),
                n(h.dup_urls),
                n(h.dup_bytes),
                n(h.not_modified_urls),
                n(h.not_modified_bytes),
                n(h.errors),
            ],
        );
    }
    o
}

/// `mimetype-report.csv`: answered fetch results by media type, most first.
pub fn mimetype_report(r: &Report) -> String {
    let mut o = String::from("#urls,#bytes,mimetype\n");
    let mut rows: Vec<_> = r.mime_fetched.iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
    for (mime, (n, bytes)) in rows {
        line(&mut o, &[n.to_string(), bytes.to_string(), mime.clone()]);
    }
    o
}

/// `responsecode-report.csv`: fetch results by HTTP status, most first; `0` is no answer.
pub fn responsecode_report(r: &Report) -> String {
    let mut o = String::from("#urls,rescode\n");
    let mut rows: Vec<_> = r.status_codes.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    for (code, n) in rows {
        let _ = writeln!(o, "{n},{code}");
    }
    o
}

/// `frontier-summary.csv`: per partition, its frontier and next fetch list.
pub fn frontier_summary(r: &Report) -> String {
    let mut o = String::from("partition,#queued,#next-fetchlist\n");
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    for &(p, q, s) in &r.partition_frontier {
        let _ = writeln!(o, "{p},{},{}", opt(q), opt(s));
    }
    o
}

/// `cycles.csv`: one row per cycle, every per-cycle number of the page.
pub fn cycles(r: &Report) -> String {
    let mut o = String::from(
        "cycle,state,listed,urls,results,followed,deferred,2xx,3xx,4xx,5xx,no_answer,errors,\
         revisits,bytes,warc_bytes,requests,robots_requests,slowed_down,new_urls,frontier,\
         selected,pages_per_sec,fetch_max_secs,fetch_sum_secs,parse_max_secs,split_max_secs,\
         merge_max_secs,prioritize_max_secs\n",
    );
    for c in &r.cycles {
        let st = |k: &str| c.status.get(k).copied().unwrap_or(0).to_string();
        let secs = |name: &str, sum: bool| {
            c.stage_seconds
                .iter()
                .find(|s| s.0 == name)
                .map_or(String::new(), |s| {
                    format!("{:.3}", if sum { s.2 } else { s.1 })
                })
        };
        line(
            &mut o,
            &[
                c.cycle.to_string(),
                c.state.clone(),
                c.listed.to_string(),
                c.urls.to_string(),
                c.results.to_string(),
                c.followed.to_string(),
                c.deferred.to_string(),
                st("2xx"),
                st("3xx"),
                st("4xx"),
                st("5xx"),
                st("no_answer"),
                c.errors.values().sum::<u64>().to_string(),
                c.revisits.to_string(),
                c.bytes.to_string(),
                c.warc_bytes.to_string(),
                c.requests.to_string(),
                c.robots_requests.to_string(),
                c.slowed_down.to_string(),
                c.new_urls.to_string(),
                c.frontier.map_or(String::new(), |v| v.to_string()),
                c.selected.to_string(),
                format!("{:.2}", c.pages_per_sec),
                secs("fetch", false),
                secs("fetch", true),
                secs("parse", false),
                secs("split", false),
                secs("merge", false),
                secs("prioritize", false),
            ],
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("plain"), "plain");
    }
}
