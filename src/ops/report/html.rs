//! The report page, `index.html`: one self-contained file (inline CSS and SVG; no script, no
//! external resource). Every string from the crawl (host names, URLs, media types, error
//! messages) goes through [`esc`]: they are hostile input.

use std::fmt::Write as _;

use super::svg::{self, esc, Series};
use super::{CycleRow, Report, TOP};

/// WARC files listed per cycle at most (the rest are counted).
const MAX_WARC_LINKS: usize = 200;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1340px;\
color:#222;padding:0 1em}h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}\
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 10px;border-bottom:1px solid #eee;\
text-align:left}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
.charts{display:flex;flex-wrap:wrap;gap:10px}svg.chart{border:1px solid #ddd;background:#fff;\
max-width:100%;height:auto}.ct{font-weight:600;font-size:13px}.yl{font-size:10px;\
text-anchor:end;fill:#555}.xl{font-size:10px;text-anchor:middle;fill:#555}.lg{font-size:10px}\
.grid{stroke:#eee}.na{fill:#999}.skipped{background:#fff4e5;border:1px solid #e69f00;\
padding:.5em 1em}.note{color:#666}";

/// A byte count for people: `1.5 MiB`.
pub fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

fn row(o: &mut String, k: &str, v: &str) {
    let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
}

/// The whole page. `base` is how links reach the crawl directory (`../` or its path + `/`).
pub fn render(r: &Report, base: &str) -> String {
    let mut o = String::with_capacity(256 << 10);
    let title = format!("dragnet report: {}", r.name);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n\
         <p class=\"note\">{} &middot; made {} &middot; from the commit markers, state and \
         page facts (never the WARC files)</p>\n",
        esc(&title),
        esc(&title),
        esc(&r.dir.display().to_string()),
        esc(&crate::util::rfc3339(r.generated_at)),
    );
    skipped(&mut o, r);
    glance(&mut o, r);
    per_cycle(&mut o, r);
    hosts(&mut o, r);
    content(&mut o, r);
    links(&mut o, r, base);
    o.push_str("</body></html>\n");
    o
}

fn skipped(o: &mut String, r: &Report) {
    if r.skipped.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<div class=\"skipped\" id=\"skipped\"><h2>Skipped</h2><p>What could not be read and is \
         left out of the numbers below:</p><ul>"
    );
    for s in &r.skipped {
        let _ = writeln!(o, "<li>{}</li>", esc(s));
    }
    o.push_str("</ul></div>\n");
}

fn glance(o: &mut String, r: &Report) {
    o.push_str("<h2 id=\"glance\">The crawl at a glance</h2>\n<table>\n");
    row(o, "partitions", &r.partitions.to_string());
    row(o, "URLs seen", &r.seen.to_string());
    row(o, "URL db records", &r.urldb.to_string());
    let states: Vec<String> = r
        .url_states
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    row(o, "URL db states", &states.join(", "));
    row(
        o,
        "frontier",
        &r.frontier
            .map_or("(no prioritize yet)".into(), |f| f.to_string()),
    );
    row(o, "pages fetched", &r.pages().to_string());
    row(o, "WARC bytes", &bytes(r.warc_bytes()));
    match r.last_cycle() {
        Some(c) => {
            let fetched = c.urls.saturating_sub(c.deferred);
            let pct = if c.listed > 0 {
                format!(" ({:.1}%)", 100.0 * fetched as f64 / c.listed as f64)
            } else {
                String::new()
            };
            row(
                o,
                &format!("coverage of cycle {}'s fetch list", c.cycle),
                &format!("{fetched} fetched / {} listed{pct}", c.listed),
            );
        }
        None => row(o, "coverage of the last fetch list", "(no complete cycle)"),
    }
    row(o, "cycles complete", &r.cycles_complete.to_string());
    let state = if r.finished {
        "done: the fetch lists are empty".to_string()
    } else if let Some(c) = r.current {
        format!("not done: cycle {c} is next")
    } else {
        "unknown".to_string()
    };
    row(o, "crawl", &state);
    o.push_str("</table>\n");
}

fn labels(cycles: &[CycleRow]) -> Vec<String> {
    cycles
        .iter()
        .map(|c| format!("cycle {}", c.cycle))
        .collect()
}

fn col(cycles: &[CycleRow], f: impl Fn(&CycleRow) -> f64) -> Vec<f64> {
    cycles.iter().map(f).collect()
}

fn per_cycle(o: &mut String, r: &Report) {
    let cs = &r.cycles;
    let l = labels(cs);
    o.push_str(
        "<h2 id=\"cycles\">Per cycle</h2>\n<p class=\"note\">One bar or point per cycle; hover \
         for the numbers. <a href=\"cycles.csv\">cycles.csv</a> has them all.</p>\n\
         <div class=\"charts\">\n",
    );
    let charts = progress_charts(cs, &l)
        .into_iter()
        .chain(answer_charts(cs, &l))
        .chain(time_charts(cs, &l));
    for c in charts {
        o.push_str(&c);
    }
    o.push_str("</div>\n");
}

/// What each cycle fetched, found and left: fetch results, new URLs, frontier, fetch list.
fn progress_charts(cs: &[CycleRow], l: &[String]) -> Vec<String> {
    vec![
        svg::bar_chart(
            "chart-fetched",
            "URLs fetched (fetch results)",
            l,
            &col(cs, |c| c.results as f64),
        ),
        svg::bar_chart(
            "chart-new",
            "new URLs found (merge)",
            l,
            &col(cs, |c| c.new_urls as f64),
        ),
        svg::line_chart(
            "chart-frontier",
            "frontier size (after prioritize)",
            l,
            &[Series::new(
                "frontier",
                col(cs, |c| c.frontier.unwrap_or(0) as f64),
            )],
        ),
        svg::line_chart(
            "chart-listed",
            "fetch list vs fetched",
            l,
            &[
                Series::new("listed", col(cs, |c| c.listed as f64)),
                Series::new(
                    "fetched",
                    col(cs, |c| c.urls.saturating_sub(c.deferred) as f64),
                ),
            ],
        ),
    ]
}

/// How the web answered: status classes, errors, revisits, bytes, rate.
fn answer_charts(cs: &[CycleRow], l: &[String]) -> Vec<String> {
    let mut charts = Vec::new();
    let classes = ["2xx", "3xx", "4xx", "5xx", "no_answer"];
    charts.push(svg::stacked_bars(
        "chart-status",
        "status codes",
        l,
        &classes
            .iter()
            .map(|k| {
                Series::new(
                    *k,
                    col(cs, |c| c.status.get(*k).copied().unwrap_or(0) as f64),
                )
            })
            .collect::<Vec<_>>(),
    ));
    let mut kinds: Vec<&String> = cs.iter().flat_map(|c| c.errors.keys()).collect();
    kinds.sort();
    kinds.dedup();
    charts.push(svg::stacked_bars(
        "chart-errors",
        "fetch errors by kind",
        l,
        &kinds
            .iter()
            .map(|k| {
                Series::new(
                    k.as_str(),
                    col(cs, |c| c.errors.get(*k).copied().unwrap_or(0) as f64),
                )
            })
            .collect::<Vec<_>>(),
    ));
    charts.push(svg::line_chart(
        "chart-revisits",
        "revisits (% of answers with a known payload)",
        l,
        &[Series::new("dedup %", col(cs, |c| 100.0 * c.dedup_ratio()))],
    ));
    charts.push(svg::line_chart(
        "chart-bytes",
        "bytes (body received, WARC written)",
        l,
        &[
            Series::new("body", col(cs, |c| c.bytes as f64)),
            Series::new("WARC", col(cs, |c| c.warc_bytes as f64)),
        ],
    ));
    charts.push(svg::line_chart(
        "chart-rate",
        "fetch results per second (slowest partition)",
        l,
        &[Series::new("per second", col(cs, |c| c.pages_per_sec))],
    ));
    charts
}

/// Where the time went: stage seconds and politeness waits.
fn time_charts(cs: &[CycleRow], l: &[String]) -> Vec<String> {
    let mut charts = Vec::new();
    let stages = ["fetch", "parse", "split", "merge", "prioritize"];
    for (id, what, sum) in [
        (
            "chart-stage-max",
            "stage seconds (slowest partition)",
            false,
        ),
        ("chart-stage-sum", "stage seconds (sum of partitions)", true),
    ] {
        charts.push(svg::stacked_bars(
            id,
            what,
            l,
            &stages
                .iter()
                .map(|st| {
                    Series::new(
                        *st,
                        col(cs, |c| {
                            c.stage_seconds
                                .iter()
                                .find(|s| s.0 == *st)
                                .map_or(0.0, |s| if sum { s.2 } else { s.1 })
                        }),
                    )
                })
                .collect::<Vec<_>>(),
        ));
    }
    charts.push(svg::line_chart(
        "chart-politeness",
        "politeness: robots.txt requests, hosts slowed down, URLs deferred",
        l,
        &[
            Series::new("robots.txt", col(cs, |c| c.robots_requests as f64)),
            Series::new("slowed down", col(cs, |c| c.slowed_down as f64)),
            Series::new("deferred", col(cs, |c| c.deferred as f64)),
        ],
    ));
    charts
}

fn top_table(o: &mut String, title: &str, rows: &[(String, u64)], unit: &dyn Fn(u64) -> String) {
    let _ = writeln!(
        o,
        "<table><tr><th>{}</th><th class=\"n\"></th></tr>",
        esc(title)
    );
    for (h, v) in rows {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
            esc(h),
            esc(&unit(*v))
        );
    }
    o.push_str("</table>\n");
}

fn hosts(o: &mut String, r: &Report) {
    let h = &r.hosts;
    let _ = writeln!(
        o,
        "<h2 id=\"hosts\">Hosts</h2>\n<p class=\"note\">{} hosts with fetch results, {} in the \
         host tables; <a href=\"hosts-report.csv\">hosts-report.csv</a> lists them all.</p>",
        h.rows.len(),
        h.known
    );
    let top = |f: &dyn Fn(&super::HostRow) -> u64| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = h
            .rows
            .iter()
            .map(|x| (x.host.clone(), f(x)))
            .filter(|x| x.1 > 0)
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(TOP);
        v
    };
    o.push_str("<div class=\"charts\">\n");
    let by_pages = top(&|x| x.pages);
    let by_bytes = top(&|x| x.bytes);
    let by_errors = top(&|x| x.errors + x.robots);
    for (id, title, rows) in [
        ("chart-hosts-pages", "top hosts by pages", &by_pages),
        ("chart-hosts-bytes", "top hosts by bytes", &by_bytes),
        (
            "chart-hosts-errors",
            "top hosts by errors (robots.txt included)",
            &by_errors,
        ),
    ] {
        let labels: Vec<String> = rows.iter().map(|x| x.0.clone()).collect();
        let values: Vec<f64> = rows.iter().map(|x| x.1 as f64).collect();
        o.push_str(&svg::bar_chart(id, title, &labels, &values));
    }
    let robots: Vec<String> = h.robots.keys().cloned().collect();
    let robots_n: Vec<f64> = h.robots.values().map(|&v| v as f64).collect();
    o.push_str(&svg::bar_chart(
        "chart-robots",
        "robots.txt outcomes (origins)",
        &robots,
        &robots_n,
    ));
    o.push_str(&svg::log_histogram(
        "chart-pages-per-host",
        "hosts by pages fetched (log scale)",
        &svg::pow2_buckets(&h.pages_per_host, ""),
    ));
    o.push_str("</div>\n<div class=\"charts\">\n");
    top_table(o, "host: pages", &by_pages, &|v| v.to_string());
    top_table(o, "host: bytes", &by_bytes, &bytes);
    top_table(o, "host: errors", &by_errors, &|v| v.to_string());
    o.push_str("</div>\n<table>\n");
    for (k, v) in &h.robots {
        row(o, &format!("robots.txt {k} (origins)"), &v.to_string());
    }
    row(
        o,
        "URLs disallowed by robots.txt",
        &h.robots_disallowed.to_string(),
    );
    o.push_str("</table>\n");
    let _ = writeln!(
        o,
        "<h3 id=\"given-up\">Hosts given up ({})</h3>",
        h.given_up.len()
    );
    if !h.given_up.is_empty() {
        o.push_str("<table><tr><th>host</th><th>why</th></tr>\n");
        for g in h.given_up.iter().take(200) {
            let _ = writeln!(
                o,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&g.host),
                esc(&g.why)
            );
        }
        if h.given_up.len() > 200 {
            let _ = writeln!(
                o,
                "<tr><td colspan=\"2\">and {} more</td></tr>",
                h.given_up.len() - 200
            );
        }
        o.push_str("</table>\n");
    }
}

fn content(o: &mut String, r: &Report) {
    let c = &r.content;
    let _ = writeln!(
        o,
        "<h2 id=\"content\">Content</h2>\n<p class=\"note\">From {} page facts (the parse \
         stage's pages runs); {} say noindex. Languages: not known (the page facts do not \
         record a language). <a href=\"mimetype-report.csv\">mimetype-report.csv</a> counts \
         every answered fetch.</p>\n<div class=\"charts\">",
        c.pages, c.noindex
    );
    let mut mime: Vec<(&String, &(u64, u64))> = c.mime.iter().collect();
    mime.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
    mime.truncate(TOP);
    o.push_str(&svg::bar_chart(
        "chart-mime",
        "pages by media type",
        &mime.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        &mime.iter().map(|m| m.1 .0 as f64).collect::<Vec<_>>(),
    ));
    let mut cs: Vec<(&String, &u64)> = c.charsets.iter().collect();
    cs.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    cs.truncate(TOP);
    o.push_str(&svg::bar_chart(
        "chart-charsets",
        "pages by charset",
        &cs.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        &cs.iter().map(|m| *m.1 as f64).collect::<Vec<_>>(),
    ));
    o.push_str(&svg::log_histogram(
        "chart-sizes",
        "page sizes, bytes (log scale)",
        &svg::pow2_buckets(&c.sizes, ""),
    ));
    o.push_str("</div>\n<table><tr><th>media type</th><th class=\"n\">pages</th><th class=\"n\">bytes</th></tr>\n");
    for (m, (n, b)) in &mime {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{}</td></tr>",
            esc(m),
            esc(&bytes(*b))
        );
    }
    o.push_str("</table>\n");
}

fn href(base: &str, rel: &str) -> String {
    esc(&format!("{base}{rel}"))
}

fn links(o: &mut String, r: &Report, base: &str) {
    o.push_str("<h2 id=\"files\">Files</h2>\n<ul>\n");
    match &r.cdxj {
        Some(rel) => {
            let _ = writeln!(
                o,
                "<li>CDXJ index of the crawl: <a id=\"cdxj\" href=\"{}\">{}</a></li>",
                href(base, rel),
                esc(rel)
            );
        }
        None => o.push_str("<li>no CDXJ index yet (it is made after each complete cycle)</li>\n"),
    }
    for name in [
        "crawl-report.csv",
        "hosts-report.csv",
        "mimetype-report.csv",
        "responsecode-report.csv",
        "frontier-summary.csv",
        "cycles.csv",
    ] {
        let _ = writeln!(o, "<li><a href=\"{name}\">{name}</a></li>");
    }
    let exports = super::list_dir(&r.dir.join("exports"));
    for e in &exports {
        let rel = e
            .strip_prefix(&r.dir)
            .unwrap_or(e)
            .to_string_lossy()
            .into_owned();
        let _ = writeln!(
            o,
            "<li>export: <a href=\"{}\">{}</a></li>",
            href(base, &rel),
            esc(&rel)
        );
    }
    o.push_str("</ul>\n<h3>WARC files by cycle</h3>\n<table>\n");
    for c in &r.cycles {
        if c.warc_files.is_empty() {
            continue;
        }
        let _ = write!(o, "<tr><th>cycle {}</th><td>", c.cycle);
        for f in c.warc_files.iter().take(MAX_WARC_LINKS) {
            let name = f.rsplit('/').next().unwrap_or(f);
            let _ = write!(o, "<a href=\"{}\">{}</a> ", href(base, f), esc(name));
        }
        if c.warc_files.len() > MAX_WARC_LINKS {
            let _ = write!(o, "and {} more", c.warc_files.len() - MAX_WARC_LINKS);
        }
        o.push_str("</td></tr>\n");
    }
    o.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::report::{HostRow, Hosts};

    #[test]
    fn hostile_strings_are_escaped_on_the_page() {
        let evil = "<script>alert(1)</script>.test";
        let r = Report {
            name: "<b>crawl</b>".into(),
            dir: "/tmp/<x>".into(),
            partitions: 1,
            generated_at: 0,
            seen: 1,
            urldb: 1,
            url_states: Default::default(),
            frontier: None,
            cycles_complete: 0,
            finished: false,
            current: Some(0),
            cycles: vec![CycleRow {
                warc_files: vec!["cycles/000000/warc/\"><script>.warc.zst".into()],
                ..CycleRow::default()
            }],
            status_codes: Default::default(),
            mime_fetched: Default::default(),
            hosts: Hosts {
                rows: vec![HostRow {
                    host: evil.into(),
                    urls: 3,
                    pages: 3,
                    bytes: 10,
                    ..HostRow::default()
                }],
                given_up: vec![super::super::GivenUp {
                    host: evil.into(),
                    why: "<img src=x>".into(),
                }],
                ..Hosts::default()
            },
            content: Default::default(),
            partition_frontier: Vec::new(),
            cdxj: None,
            skipped: vec!["<iframe>".into()],
        };
        let page = render(&r, "../");
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img") && !page.contains("<iframe") && !page.contains("<b>"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;.test"));
        assert!(page.contains("id=\"chart-hosts-pages\" class=\"chart\" data-points=\"1\""));
    }
}
