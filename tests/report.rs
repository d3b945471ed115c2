//! `dragnet report` (issue 33, points 1 to 3): the HTML page and CSV files of a websim crawl,
//! their numbers against the fetch markers, a damaged marker named and skipped, and the report
//! a `dragnet cycle` refreshes.

use crate::common::{self, dragnet};

use std::path::Path;

use dragnet::crawl::{CrawlDir, DoneMarker, Stage};

/// The header and rows of a CSV file the report wrote (websim's names hold no comma).
fn csv(path: &Path) -> (String, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect::<Vec<_>>();
    for r in &rows {
        assert_eq!(
            r.len(),
            header.split(',').count(),
            "{}: {r:?}",
            path.display()
        );
    }
    (header, rows)
}

fn sum_col(rows: &[Vec<String>], i: usize) -> u64 {
    rows.iter().map(|r| r[i].parse::<u64>().unwrap()).sum()
}

/// `data-points` of the chart `id`, if the page has it.
fn points(html: &str, id: &str) -> Option<usize> {
    let at = html.find(&format!("<svg id=\"{id}\""))?;
    let head = &html[at..at + html[at..].find('>').unwrap()];
    let v = &head[head.find("data-points=\"").unwrap() + 13..];
    Some(v[..v.find('"').unwrap()].parse().unwrap())
}

/// Sum of one counter over every fetch marker of the crawl.
fn fetch_count(dir: &CrawlDir, m: u32, name: &str) -> u64 {
    let mut n = 0;
    for c in dir.cycles() {
        for p in 0..m {
            if let Some(mk) = DoneMarker::read(&dir.done_path(c, Stage::Fetch, p)).unwrap() {
                n += mk.counts.get(name).copied().unwrap_or(0);
            }
        }
    }
    n
}

#[test]
fn the_report_of_a_crawl_agrees_with_its_markers() {
    let (web, server) = common::small_web(33, 5, 10);
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0; // a cycle per link depth: several cycles to chart
    cfg.cycle.report = false;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(10)).unwrap();
    server.stop();
    let out_dir = c.dir.root().join("report");
    assert!(!out_dir.exists(), "[cycle] report = false writes none");

    common::ok(dragnet(&["report".as_ref(), c.dir.root().as_os_str()]));
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    check_the_page_is_self_contained(&html);
    let (_, cycles) = csv(&out_dir.join("cycles.csv"));
    check_the_charts(&c, &html, cycles.len());
    check_the_csv_totals(&c, &out_dir, &cycles, web.hosts.len());

    // Elsewhere with --out: links reach the crawl by its path.
    let t = tempfile::tempdir().unwrap();
    common::ok(dragnet(&[
        "report".as_ref(),
        "--out".as_ref(),
        t.path().join("r").as_os_str(),
        c.dir.root().as_os_str(),
    ]));
    let elsewhere = std::fs::read_to_string(t.path().join("r/index.html")).unwrap();
    let root = c.dir.root().canonicalize().unwrap();
    assert!(elsewhere.contains(&format!("href=\"{}/indexes/index.cdxj\"", root.display())));
}

/// Self-contained: nothing loaded from elsewhere, no script.
fn check_the_page_is_self_contained(html: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "<script",
        "<link",
        "url(http",
    ] {
        assert!(!html.contains(bad), "the page has {bad}");
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("id=\"skipped\""), "nothing skipped");
}

/// One point or bar per cycle in every per-cycle chart (`cycles_csv` rows in cycles.csv), every
/// chart with marks and tooltips, and links to the crawl's index and WARC files.
fn check_the_charts(c: &common::Crawl, html: &str, cycles_csv: usize) {
    let n = c.dir.cycles().len();
    assert!(n >= 3, "{n} cycles");
    assert_eq!(cycles_csv, n);
    for id in [
        "chart-fetched",
        "chart-new",
        "chart-frontier",
        "chart-listed",
        "chart-status",
        "chart-errors",
        "chart-revisits",
        "chart-bytes",
        "chart-rate",
        "chart-stage-max",
        "chart-stage-sum",
        "chart-politeness",
    ] {
        assert_eq!(points(html, id), Some(n), "{id}");
    }
    for id in [
        "chart-hosts-pages",
        "chart-hosts-bytes",
        "chart-robots",
        "chart-pages-per-host",
        "chart-mime",
        "chart-charsets",
        "chart-sizes",
    ] {
        assert!(points(html, id).unwrap() >= 1, "{id}");
    }
    // Every chart has marks, each with its tooltip.
    for svg in html.split("<svg ").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        if !svg.contains("data-points=\"0\"") {
            assert!(svg.contains("class=\"mark\""), "{svg}");
            assert!(svg.matches("<title>").count() >= 2, "{svg}");
        }
    }
    assert!(html.contains("href=\"../indexes/index.cdxj\""));
    assert!(html.contains("href=\"../cycles/000000/warc/"));
}

/// The CSV totals in `out_dir` agree with the fetch markers (`cycles`: the rows of cycles.csv;
/// `hosts`: the web's hosts).
fn check_the_csv_totals(c: &common::Crawl, out_dir: &Path, cycles: &[Vec<String>], hosts: usize) {
    let m = c.cfg.crawl.partitions;
    let results = fetch_count(&c.dir, m, "results");
    let answered: u64 = ["2xx", "3xx", "4xx", "5xx"]
        .iter()
        .map(|k| fetch_count(&c.dir, m, &format!("status_{k}")))
        .sum();
    assert!(answered > 0);
    let (h, rows) = csv(&out_dir.join("responsecode-report.csv"));
    assert_eq!(h, "#urls,rescode");
    assert_eq!(sum_col(&rows, 0), results);
    let (h, rows) = csv(&out_dir.join("mimetype-report.csv"));
    assert_eq!(h, "#urls,#bytes,mimetype");
    assert_eq!(sum_col(&rows, 0), answered);
    // The markers' bytes also count the robots.txt bodies.
    let body = sum_col(&rows, 1);
    assert!(
        body > 0 && body <= fetch_count(&c.dir, m, "bytes"),
        "{body}"
    );
    let (h, rows) = csv(&out_dir.join("hosts-report.csv"));
    assert!(
        h.starts_with("#urls,#bytes,host,#robots,#remaining,"),
        "{h}"
    );
    assert_eq!(sum_col(&rows, 0), results);
    assert_eq!(rows.len(), hosts, "{rows:?}");
    assert_eq!(sum_col(cycles, 4), results, "cycles.csv results");
    let (_, rows) = csv(&out_dir.join("frontier-summary.csv"));
    assert_eq!(rows.len(), m as usize);
    let (h, rows) = csv(&out_dir.join("crawl-report.csv"));
    assert_eq!(h, "key,value");
    let get = |k: &str| rows.iter().find(|r| r[0] == k).unwrap()[1].clone();
    assert_eq!(get("URIs Processed"), results.to_string());
    assert_eq!(get("Pages Fetched"), answered.to_string());
    assert_eq!(get("Crawl Status"), "FINISHED");
}

#[test]
fn dragnet_cycle_refreshes_the_report_and_a_damaged_marker_is_skipped() {
    let (web, server) = common::small_web(34, 3, 6);
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let root = c.dir.root().as_os_str();
    let cycle = || {
        common::ok(dragnet(&[
            "cycle".as_ref(),
            "--cycles".as_ref(),
            "1".as_ref(),
            "--progress".as_ref(),
            "quiet".as_ref(),
            root,
        ]));
    };
    let complete = || -> Vec<String> {
        let (_, rows) = csv(&c.dir.root().join("report/cycles.csv"));
        rows.into_iter()
            .filter(|r| r[1] == "complete")
            .map(|r| r[0].clone())
            .collect()
    };
    cycle();
    assert_eq!(complete(), ["0"]);
    cycle();
    server.stop();
    assert_eq!(complete(), ["0", "1"], "the second cycle refreshed it");
    // The crawl's own check knows the report's files.
    let check = dragnet::ops::check::check_crawl(&c.dir, Some(&c.cfg)).unwrap();
    assert!(check.unknown.is_empty(), "{:?}", check.unknown);

    // A damaged fetch marker: still a report (exit 0), the marker named as skipped.
    let marker = c.dir.done_path(0, Stage::Fetch, 0);
    common::flip_middle_byte(&marker);
    let out = common::ok(dragnet(&["report".as_ref(), root]));
    assert!(
        common::out_text(&out).contains("skipped"),
        "{}",
        common::out_text(&out)
    );
    let html = std::fs::read_to_string(c.dir.root().join("report/index.html")).unwrap();
    assert!(html.contains("id=\"skipped\""));
    let skipped = &html[html.find("id=\"skipped\"").unwrap()..];
    let skipped = &skipped[..skipped.find("</div>").unwrap()];
    assert!(skipped.contains("fetch/p0000.done"), "{skipped}");
    assert!(html.contains("id=\"chart-fetched\""));

    // A damaged run too: named, the rest still reported.
    let fetched = c.dir.fetched(1, 1);
    common::flip_middle_byte(&fetched);
    common::ok(dragnet(&["report".as_ref(), root]));
    let html = std::fs::read_to_string(c.dir.root().join("report/index.html")).unwrap();
    assert!(
        html.contains("fetched/p0001.run"),
        "the damaged run is named"
    );
}

/// The report's fetch results and page facts read early (the local executor reads them beside a
/// cycle's merge) make the same report as reading them at the end; an early reading of other
/// fetches than those done at the end is not taken, but read again.
#[test]
fn the_report_read_early_is_the_report_read_at_the_end() {
    use dragnet::ops::report::{collect, collect_with, Fetches, Report};
    let (web, server) = common::small_web(35, 3, 6);
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0;
    cfg.cycle.report = false;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::cycles(1)).unwrap();
    let stale = Fetches::read_now(&c.dir, &c.cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::cycles(1)).unwrap();
    server.stop();
    let json = |r: Report| {
        let mut v = serde_json::to_value(r).unwrap();
        v["generated_at"] = 0.into();
        v
    };
    let whole = json(collect(&c.dir, &c.cfg));
    let fresh = Fetches::read_now(&c.dir, &c.cfg);
    assert!(
        stale.runs() < fresh.runs(),
        "{} {}",
        stale.runs(),
        fresh.runs()
    );
    assert!(whole["content"]["pages"].as_u64().unwrap() > 0);
    assert_eq!(json(collect_with(&c.dir, &c.cfg, Some(stale))), whole);
    assert_eq!(json(collect_with(&c.dir, &c.cfg, Some(fresh))), whole);
}
