//! Sitemap conformance: every `expected_<file>.json` under `sitemaps/trafilatura/` and
//! `sitemaps/sitemap-crate/` (made with lxml; see the test data README, section sitemaps/) must
//! match what `dragnet::parse::sitemap::parse` reads from `<file>` (raw bytes, `.gz` included):
//! the root kind, `urls` and `sitemaps` in order, every field of `url_entries` (loc, lastmod,
//! changefreq, priority, alternates) and `sitemap_entries` (loc, lastmod), and whether the
//! document is well-formed (`error` is set exactly when lxml rejected it). `cargo test --test
//! sitemaps -- --nocapture` prints the counts that `docs/parse.md` records.
//!
//! Test data: `tests/data` (provenance and licenses in its README), or the directory named by
//! `DRAGNET_TESTDATA`.

use crate::common;

use std::path::{Path, PathBuf};

use dragnet::parse::sitemap::{self, Alternate, Kind, Limits, Sitemap, SitemapRef, UrlEntry};
use serde_json::Value;

fn sitemaps_dir() -> PathBuf {
    common::testdata_dir("sitemaps", "sitemaps/").join("sitemaps")
}

/// `(document, expected JSON)` pairs, sorted.
fn cases() -> Vec<(PathBuf, PathBuf)> {
    let mut cases = Vec::new();
    for sub in ["trafilatura", "sitemap-crate"] {
        let dir = sitemaps_dir().join(sub);
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(doc) = name
                .strip_prefix("expected_")
                .and_then(|n| n.strip_suffix(".json"))
            {
                cases.push((dir.join(doc), path));
            }
        }
    }
    cases.sort();
    cases
}

fn opt_str(v: &Value, key: &str) -> Option<String> {
    match v.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => panic!("{key}: not a string or null: {other}"),
    }
}

fn str_list(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key}: not a list"))
        .iter()
        .map(|s| s.as_str().expect("string").to_owned())
        .collect()
}

fn kind_of_root(root: &str) -> Kind {
    match root {
        "urlset" => Kind::Urlset,
        "sitemapindex" => Kind::SitemapIndex,
        "rss" | "RDF" => Kind::Rss,
        "feed" => Kind::Atom,
        _ => Kind::Unknown,
    }
}

/// The differences found in one document, described.
struct Diffs<'a> {
    doc: &'a Path,
    found: Vec<String>,
}

impl Diffs<'_> {
    /// Records `what` as a difference, with `detail`, unless `equal`.
    fn check(&mut self, what: String, equal: bool, detail: String) {
        if !equal {
            self.found
                .push(format!("{}: {what}: {detail}", self.doc.display()));
        }
    }
}

/// Every difference between `got` and `expected`, described; empty when they match.
fn compare(doc: &Path, got: &Sitemap, expected: &Value) -> Vec<String> {
    let mut d = Diffs {
        doc,
        found: Vec::new(),
    };
    compare_document(&mut d, got, expected);
    compare_url_entries(&mut d, &got.urls, expected);
    compare_sitemap_entries(&mut d, &got.sitemaps, expected);
    d.found
}

/// The root kind, whether it is well-formed, and the `urls` and `sitemaps` in order.
fn compare_document(d: &mut Diffs, got: &Sitemap, expected: &Value) {
    let roots = str_list(expected, "roots");
    let kind = kind_of_root(roots.first().map(String::as_str).unwrap_or(""));
    d.check(
        "kind".into(),
        got.kind == kind,
        format!("got {:?}, expected {kind:?}", got.kind),
    );
    let well_formed = expected["well_formed"].as_bool().expect("well_formed");
    d.check(
        "error".into(),
        got.error.is_some() != well_formed,
        format!("got {:?}, expected well_formed = {well_formed}", got.error),
    );
    d.check(
        "truncated".into(),
        !got.truncated,
        "got truncated = true".into(),
    );

    let urls: Vec<String> = got.urls.iter().map(|u| u.loc.clone()).collect();
    let want = str_list(expected, "urls");
    d.check(
        "urls".into(),
        urls == want,
        format!("got {urls:?}, expected {want:?}"),
    );
    let sitemaps: Vec<String> = got.sitemaps.iter().map(|s| s.loc.clone()).collect();
    let want = str_list(expected, "sitemaps");
    d.check(
        "sitemaps".into(),
        sitemaps == want,
        format!("got {sitemaps:?}, expected {want:?}"),
    );
}

/// Every field of every `url_entries` item.
fn compare_url_entries(d: &mut Diffs, got: &[UrlEntry], expected: &Value) {
    let url_entries = expected["url_entries"].as_array().expect("url_entries");
    d.check(
        "url_entries length".into(),
        got.len() == url_entries.len(),
        format!("got {}, expected {}", got.len(), url_entries.len()),
    );
    for (i, (g, e)) in got.iter().zip(url_entries).enumerate() {
        let loc = opt_str(e, "loc");
        d.check(
            format!("url_entries[{i}].loc"),
            Some(&g.loc) == loc.as_ref(),
            format!("got {:?}, expected {loc:?}", g.loc),
        );
        let lastmod = opt_str(e, "lastmod");
        d.check(
            format!("url_entries[{i}].lastmod"),
            g.lastmod == lastmod,
            format!("got {:?}, expected {lastmod:?}", g.lastmod),
        );
        let changefreq = opt_str(e, "changefreq");
        d.check(
            format!("url_entries[{i}].changefreq"),
            g.changefreq == changefreq,
            format!("got {:?}, expected {changefreq:?}", g.changefreq),
        );
        // The reference records the stripped text; ours is that text read as a number.
        let priority = opt_str(e, "priority");
        let want = priority.as_deref().map(|p| {
            p.parse::<f64>()
                .unwrap_or_else(|_| panic!("priority {p:?} is not a number"))
        });
        d.check(
            format!("url_entries[{i}].priority"),
            g.priority == want,
            format!("got {:?}, expected {priority:?}", g.priority),
        );
        // `alternates` is absent when the file has no `xhtml:link`s.
        let want: Vec<Alternate> = e
            .get("alternates")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter(|a| a["rel"].as_str() == Some("alternate"))
                    .map(|a| Alternate {
                        hreflang: a["hreflang"].as_str().expect("hreflang").to_owned(),
                        href: a["href"].as_str().expect("href").to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        d.check(
            format!("url_entries[{i}].alternates"),
            g.alternates == want,
            format!("got {:?}, expected {want:?}", g.alternates),
        );
    }
}

/// Every field of every `sitemap_entries` item.
fn compare_sitemap_entries(d: &mut Diffs, got: &[SitemapRef], expected: &Value) {
    let sitemap_entries = expected["sitemap_entries"]
        .as_array()
        .expect("sitemap_entries");
    d.check(
        "sitemap_entries length".into(),
        got.len() == sitemap_entries.len(),
        format!("got {}, expected {}", got.len(), sitemap_entries.len()),
    );
    for (i, (g, e)) in got.iter().zip(sitemap_entries).enumerate() {
        let loc = opt_str(e, "loc");
        d.check(
            format!("sitemap_entries[{i}].loc"),
            Some(&g.loc) == loc.as_ref(),
            format!("got {:?}, expected {loc:?}", g.loc),
        );
        let lastmod = opt_str(e, "lastmod");
        d.check(
            format!("sitemap_entries[{i}].lastmod"),
            g.lastmod == lastmod,
            format!("got {:?}, expected {lastmod:?}", g.lastmod),
        );
    }
}

#[test]
fn expected_json_matches() {
    let cases = cases();
    assert!(
        cases.len() >= 5,
        "expected at least 5 cases under {}, found {}",
        sitemaps_dir().display(),
        cases.len()
    );
    let mut failures = Vec::new();
    let (mut urls, mut sitemaps) = (0, 0);
    for (doc, json) in &cases {
        let bytes = std::fs::read(doc).unwrap_or_else(|e| panic!("read {}: {e}", doc.display()));
        let text = std::fs::read_to_string(json)
            .unwrap_or_else(|e| panic!("read {}: {e}", json.display()));
        let expected: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", json.display()));
        let got = sitemap::parse(&bytes, &Limits::default());
        urls += got.urls.len();
        sitemaps += got.sitemaps.len();
        failures.extend(compare(doc, &got, &expected));
    }
    println!(
        "sitemaps conformance: {} documents, {urls} URLs and {sitemaps} sitemaps, {} mismatches",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The gzipped and plain copies of trafilatura's sitemap read the same.
#[test]
fn gzip_matches_plain() {
    let dir = sitemaps_dir().join("trafilatura");
    let plain = std::fs::read(dir.join("sitemap.xml")).unwrap();
    let gz = std::fs::read(dir.join("sitemap.xml.gz")).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let limits = Limits::default();
    let a = sitemap::parse(&plain, &limits);
    assert_eq!(a.urls.len(), 84);
    assert_eq!(a, sitemap::parse(&gz, &limits));
}

/// Every prefix of every test document parses without panicking, reports the damage, and keeps a
/// prefix of the full document's entries.
#[test]
fn prefixes_keep_a_prefix_of_the_entries() {
    let limits = Limits::default();
    for (doc, _) in cases() {
        let bytes = std::fs::read(&doc).unwrap();
        let full = sitemap::parse(&bytes, &limits);
        for cut in 0..bytes.len() {
            let got = sitemap::parse(&bytes[..cut], &limits);
            // Only a prefix that ends with a complete root element reads without error.
            let prefix = bytes[..cut].trim_ascii_end();
            assert!(
                got.error.is_some()
                    || prefix.ends_with(b"</urlset>")
                    || prefix.ends_with(b"</sitemapindex>"),
                "{} cut at {cut}: no error",
                doc.display()
            );
            assert!(
                got.urls.len() <= full.urls.len() && got.urls[..] == full.urls[..got.urls.len()],
                "{} cut at {cut}",
                doc.display()
            );
            assert!(
                got.sitemaps.len() <= full.sitemaps.len()
                    && got.sitemaps[..] == full.sitemaps[..got.sitemaps.len()],
                "{} cut at {cut}",
                doc.display()
            );
        }
    }
}
