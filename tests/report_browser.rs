//! The crawl report as a person sees it (issue 33, point 5): `dragnet report` of a websim crawl
//! opened in headless Chromium from disk, with no console message, every chart drawn with its
//! marks, a screenshot kept under `target/` (CI's artifact), and the HTML checked by the Nu Html
//! Checker (vnu.jar, npm's `vnu-jar`). Both tools are installed by `.ci/setup-extras`; a plain
//! `cargo test` lists this test as ignored with what it needs, and it fails (never passes) when
//! run without them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium as Debian ships it.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// The Nu Html Checker: `DRAGNET_VNU_JAR`, or npm's global `vnu-jar` package.
fn vnu_jar() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DRAGNET_VNU_JAR") {
        return Some(PathBuf::from(p));
    }
    let out = Command::new("npm").args(["root", "-g"]).output().ok()?;
    let jar = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        .join("vnu-jar/build/dist/vnu.jar");
    jar.is_file().then_some(jar)
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, stderr).
fn headless(browser: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(args)
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium {args:?}: {}",
        common::out_text(&out)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every `<svg ...>...</svg>` of `dom` with its `data-points` and the marks (elements with a
/// `<title>` tooltip) inside it.
fn charts(dom: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").map_or(rest.len(), |e| i + e);
        let svg = &rest[i..end];
        let head = &svg[..svg.find('>').unwrap_or(svg.len())];
        let attr = |name: &str| {
            let key = format!("{name}=\"");
            head.find(&key).map(|a| {
                let v = &head[a + key.len()..];
                v[..v.find('"').unwrap_or(v.len())].to_string()
            })
        };
        let id = attr("id").unwrap_or_default();
        let points = attr("data-points")
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        out.push((id, points, svg.matches("<title>").count()));
        rest = &rest[end..];
    }
    out
}

/// Every `href="..."` and `src="..."` of `html`.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(key) {
            let v = &rest[i + key.len()..];
            let end = v.find('"').unwrap_or(v.len());
            out.push(v[..end].to_string());
            rest = &v[end..];
        }
    }
    out
}

#[test]
#[ignore = "needs chromium (apt-get install chromium) and the Nu Html Checker (npm install -g vnu-jar); .ci/run runs it where .ci/setup-extras installed them"]
fn a_browser_renders_the_report_with_every_chart_drawn() {
    let browser = chromium().expect("chromium is not installed: apt-get install chromium");
    let jar = vnu_jar().expect("vnu.jar is not installed: npm install -g vnu-jar");
    let (web, server) = common::small_web(33, 5, 10);
    let mut cfg = common::websim_config(2, 2);
    cfg.fetch.follow_per_host = 0; // a cycle per link depth: several cycles to chart
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(10)).unwrap();
    server.stop();
    assert!(r.cycles.len() >= 2, "{} cycles", r.cycles.len());
    // Every cycle directory, the last one's fetch lists (empty: the crawl's end) included.
    let cycles = c.dir.cycles().len();
    common::ok(
        Command::new(env!("CARGO_BIN_EXE_dragnet"))
            .arg("report")
            .arg(c.dir.root())
            .output()
            .unwrap(),
    );
    let page = c.dir.root().join("report/index.html");
    let html = std::fs::read_to_string(&page).unwrap();

    // Self-contained: no reference leaves the machine, and every local one is there.
    for r in references(&html) {
        assert!(
            !r.starts_with("http:") && !r.starts_with("https:") && !r.starts_with("//"),
            "the report references {r}"
        );
        if r.starts_with('#') || r.is_empty() {
            continue;
        }
        let target = page.parent().unwrap().join(r.split('#').next().unwrap());
        assert!(
            target.symlink_metadata().is_ok(),
            "the report links {r}, which is not there"
        );
    }

    // Loaded in the browser: no console message, every chart with its marks.
    let (dom, log) = headless(&browser, &page, &["--dump-dom"]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console: {console:#?}");
    let charts = charts(&dom);
    assert!(charts.len() >= 8, "{} charts: {charts:?}", charts.len());
    for (id, points, marks) in &charts {
        assert!(*marks >= 1, "chart {id} has no marks");
        assert!(
            marks >= points,
            "chart {id}: {marks} marks for {points} points"
        );
    }
    let per_cycle = charts.iter().filter(|(_, p, _)| *p == cycles).count();
    assert!(
        per_cycle >= 4,
        "{per_cycle} charts with one point per cycle ({cycles}): {charts:?}"
    );

    // A screenshot, kept as CI's artifact.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    std::fs::create_dir_all(&target).unwrap();
    let shot = target.join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &browser,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,3000",
            "--hide-scrollbars",
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot"
    );
    eprintln!("screenshot of the report: {}", shot.display());

    // Valid HTML by the Nu Html Checker.
    let out = Command::new("java")
        .args(["-jar"])
        .arg(&jar)
        .args(["--errors-only", "--format", "text"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "vnu: {}", common::out_text(&out));
}
