//! `dragnet parse` over a websim crawl: the parse the fetch runs as pages arrive writes what
//! `dragnet parse` writes from the WARC, the links found equal websim's model of every fetched
//! page, OPIC cash is conserved, redirects and robots.txt sitemaps become links, and
//! `dragnet reparse` over the same WARCs (and over third-party WARCs) finds the same links.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use dragnet::config::{ByteSize, Config};

use dragnet::crawl::Stage;
use dragnet::fetch::{fetch_partition, FetchOptions, ProgressMode};
use dragnet::keys::Canonicalizer;
use dragnet::parse::{parse_partition, reparse};
use dragnet::records::{LinkKind, LinkRecord, PageRecord};
use dragnet::run::{Cursor, RunReader, Schema};
use websim::model::WebConfig;
use websim::server::{Server, ServerOptions};
use websim::truth::{truth, Outcome, Policy};

fn links_of(path: &std::path::Path) -> Vec<LinkRecord> {
    let mut r = RunReader::open_expect(path, Schema::LINKS).unwrap();
    let mut v = Vec::new();
    let mut last: Option<Vec<u8>> = None;
    while r.advance().unwrap() {
        let l = LinkRecord::decode(r.payload()).unwrap();
        let k = dragnet::keys::fingerprint(&l.url);
        assert_eq!(&r.key()[8..], &k.to_be_bytes(), "keyed by the target");
        if let Some(prev) = &last {
            assert!(prev.as_slice() <= r.key(), "sorted by target");
        }
        last = Some(r.key().to_vec());
        v.push(l);
    }
    v
}

/// Every (key, payload) of a run, in its order.
fn records(path: &std::path::Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut r = RunReader::open(path).unwrap();
    let mut v = Vec::new();
    while r.advance().unwrap() {
        v.push((r.key().to_vec(), r.payload().to_vec()));
    }
    v
}

fn pages_of(path: &std::path::Path) -> BTreeMap<String, PageRecord> {
    let mut r = RunReader::open_expect(path, Schema::PAGES).unwrap();
    let mut m = BTreeMap::new();
    while r.advance().unwrap() {
        let p = PageRecord::decode(r.payload()).unwrap();
        m.insert(p.url.clone(), p);
    }
    m
}

#[test]
fn parse_finds_the_model_links_and_conserves_cash() {
    let (web, server) = start_web();
    let t = truth(&web, &Policy::new(&web));
    let seeds: Vec<String> = t
        .fetched
        .iter()
        .filter(|f| !f.url.ends_with("/robots.txt") && !f.url.contains(".outside.test"))
        .map(|f| f.url.clone())
        .collect();
    let crawl = crawl_of(&web, &seeds);
    let (links, pages) = fetch_and_parse_both_ways(&crawl);
    server.stop();

    let canon = Canonicalizer::new(&crawl.cfg.canon);
    let mut by_source: BTreeMap<&str, Vec<&LinkRecord>> = BTreeMap::new();
    for l in &links {
        by_source.entry(l.source.as_str()).or_default().push(l);
    }
    check_links_follow_the_model(&t, &canon, &by_source, &pages);
    check_cash_is_conserved(&by_source);
    check_redirects_and_sitemaps_are_links(&web, &t, &canon, &by_source, &links);
    check_reparse_finds_the_same_pairs(&crawl, &links);
}

/// A websim web of 10 hosts with 12 pages each, served on loopback.
fn start_web() -> (std::sync::Arc<websim::model::Web>, Server) {
    Server::start_web(
        WebConfig {
            seed: 9,
            port: 0,
            listeners: 2,
            hosts: 10,
            pages: 12,
            hostile_every: 0,
            max_crawl_delay: Duration::from_millis(100),
            ..WebConfig::default()
        },
        ServerOptions::default(),
    )
    .unwrap()
}

/// A crawl of two partitions over `web` from `seeds`.
fn crawl_of(web: &websim::model::Web, seeds: &[String]) -> common::Crawl {
    let mut cfg = Config::default();
    cfg.crawl.partitions = 2;
    common::patient_loopback_fetch(&mut cfg.fetch);
    cfg.fetch.threads = 4;
    cfg.fetch.max_body = ByteSize(1 << 20);
    common::websim_crawl(web, seeds, cfg)
}

/// Fetches both partitions of cycle 0 (which parses inline), checks that `dragnet parse` from
/// the WARC writes the same, and returns every link and page parsed.
fn fetch_and_parse_both_ways(
    crawl: &common::Crawl,
) -> (Vec<LinkRecord>, BTreeMap<String, PageRecord>) {
    let (dir, cfg) = (&crawl.dir, &crawl.cfg);
    let quiet = FetchOptions {
        progress: ProgressMode::Quiet,
        ..FetchOptions::default()
    };
    let mut links = Vec::new();
    let mut pages = BTreeMap::new();
    for p in 0..2 {
        assert!(
            parse_partition(dir, cfg, 0, p).is_err(),
            "parse needs the fetch"
        );
        fetch_partition(dir, cfg, 0, p, &quiet).unwrap();
        // The fetch parsed the pages as they came (`[fetch] parse`): the parse stage is done...
        let inline = parse_partition(dir, cfg, 0, p).unwrap();
        assert!(inline.skipped);
        assert_eq!(inline.count("inline"), 1);
        let (inline_links, inline_pages) = (records(&dir.links(0, p)), records(&dir.pages(0, p)));
        // ...with what `dragnet parse` writes from the WARC: the same pages in the same order,
        // the same links (those to one target in any order), the same counts.
        std::fs::remove_file(dir.done_path(0, Stage::Parse, p)).unwrap();
        let r = parse_partition(dir, cfg, 0, p).unwrap();
        assert!(!r.skipped);
        assert!(parse_partition(dir, cfg, 0, p).unwrap().skipped);
        assert_eq!(records(&dir.pages(0, p)), inline_pages, "pages of p{p}");
        let sorted = |mut v: Vec<(Vec<u8>, Vec<u8>)>| {
            v.sort();
            v
        };
        assert_eq!(
            sorted(records(&dir.links(0, p))),
            sorted(inline_links),
            "links of p{p}"
        );
        let mut counts = inline.counts.clone();
        counts.remove("inline");
        assert_eq!(counts, r.counts, "counts of p{p}");
        links.extend(links_of(&dir.links(0, p)));
        pages.extend(pages_of(&dir.pages(0, p)));
    }
    (links, pages)
}

/// `u` canonicalized as the crawl does.
fn canonical(canon: &Canonicalizer, u: &str) -> String {
    canon.canonicalize(u, None).unwrap().url
}

/// Every HTML page the model says was fetched has its links, followed exactly as the model
/// follows them, and (nearly always) a title.
fn check_links_follow_the_model(
    t: &websim::truth::Truth,
    canon: &Canonicalizer,
    by_source: &BTreeMap<&str, Vec<&LinkRecord>>,
    pages: &BTreeMap<String, PageRecord>,
) {
    let c = |u: &str| canonical(canon, u);
    let html: BTreeSet<&str> = t
        .fetched
        .iter()
        .filter(|f| f.outcome == Outcome::Html)
        .map(|f| f.url.as_str())
        .collect();
    let (mut checked, mut titled) = (0, 0);
    for page in t.pages.iter().filter(|p| html.contains(p.url.as_str())) {
        let src = c(&page.url);
        let got: BTreeSet<(String, bool)> = by_source
            .get(src.as_str())
            .map(|v| {
                v.iter()
                    .filter(|l| l.kind != LinkKind::Redirect)
                    .map(|l| (l.url.clone(), !l.nofollow))
                    .collect()
            })
            .unwrap_or_default();
        // One record per target: followed if any of its occurrences is.
        let mut per_target: BTreeMap<String, bool> = BTreeMap::new();
        for l in page.links.iter().filter(|l| l.url.starts_with("http")) {
            *per_target.entry(c(&l.url)).or_default() |=
                !l.nofollow && !page.meta_nofollow && !page.header_nofollow;
        }
        let want: BTreeSet<(String, bool)> = per_target.into_iter().collect();
        assert_eq!(got, want, "links of {}", page.url);
        let p = &pages[&src];
        assert_eq!(p.status, 200);
        titled += usize::from(!p.title.is_empty());
        checked += 1;
    }
    assert!(checked > 50, "{checked} pages checked");
    // Pages the model renders as real documents have titles (a few are bare or mislabeled).
    assert!(
        titled * 10 >= checked * 9,
        "{titled} of {checked} pages have a title"
    );
}

/// OPIC: a page's followed links carry its whole cash (1.0 for seeds), nofollow ones none.
fn check_cash_is_conserved(by_source: &BTreeMap<&str, Vec<&LinkRecord>>) {
    for (src, v) in by_source {
        let followed: f64 = v
            .iter()
            .filter(|l| l.kind != LinkKind::Redirect && l.kind != LinkKind::RobotsSitemap)
            .map(|l| l.cash)
            .sum();
        let n = v
            .iter()
            .filter(|l| !l.nofollow && l.kind != LinkKind::Redirect)
            .count();
        if n > 0 && !src.ends_with("/robots.txt") {
            assert!((followed - 1.0).abs() < 1e-9, "{src}: cash {followed}");
        }
        assert!(v.iter().filter(|l| l.nofollow).all(|l| l.cash == 0.0));
    }
}

/// Redirects, sitemap documents and robots.txt sitemaps become links.
fn check_redirects_and_sitemaps_are_links(
    web: &websim::model::Web,
    t: &websim::truth::Truth,
    canon: &Canonicalizer,
    by_source: &BTreeMap<&str, Vec<&LinkRecord>>,
    links: &[LinkRecord],
) {
    let c = |u: &str| canonical(canon, u);
    // Redirects are links with the whole cash.
    for f in t.fetched.iter().filter(|f| f.outcome == Outcome::Redirect) {
        let target = c(f.location.as_ref().unwrap());
        assert!(
            links
                .iter()
                .any(|l| l.kind == LinkKind::Redirect && l.url == target && l.cash == 1.0),
            "redirect {} -> {target}",
            f.url
        );
    }
    // Sitemap documents (urlset, index, gzip'd) give their <loc>s as links.
    let sitemap_docs: Vec<&str> = t
        .fetched
        .iter()
        .filter(|f| f.outcome == Outcome::Sitemap && f.status == 200)
        .map(|f| f.url.as_str())
        .collect();
    assert!(!sitemap_docs.is_empty(), "the web has sitemaps");
    for doc in &sitemap_docs {
        let n = by_source.get(c(doc).as_str()).map_or(0, |v| {
            v.iter().filter(|l| l.kind == LinkKind::Sitemap).count()
        });
        assert!(n > 0, "sitemap {doc} gave no links");
    }
    // robots.txt sitemaps become links.
    let sitemap_hosts = web.hosts.iter().filter(|h| h.sitemap.is_some()).count();
    let robots_sitemaps = links
        .iter()
        .filter(|l| l.kind == LinkKind::RobotsSitemap)
        .count();
    assert!(
        sitemap_hosts == 0 || robots_sitemaps > 0,
        "{sitemap_hosts} hosts list sitemaps"
    );
}

/// reparse over the crawl's own WARCs finds the same (source, target) pairs.
fn check_reparse_finds_the_same_pairs(crawl: &common::Crawl, links: &[LinkRecord]) {
    let warcs: Vec<_> = std::fs::read_dir(crawl.dir.warc_dir(0))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let out = crawl.tmp.path().join("reparse");
    let r = reparse(&warcs, &out, &crawl.cfg).unwrap();
    assert!(r.failed_files.is_empty(), "{:?}", r.failed_files);
    let pairs = |v: &[LinkRecord]| -> BTreeSet<(String, String)> {
        v.iter()
            .filter(|l| !matches!(l.kind, LinkKind::Redirect | LinkKind::RobotsSitemap))
            .map(|l| (l.source.clone(), l.url.clone()))
            .collect()
    };
    assert_eq!(pairs(&links_of(&out.join("links.run"))), pairs(links));
}

#[test]
fn reparse_reads_third_party_warcs() {
    let dir = common::testdata_dir("warc", "warc/*.warc.gz").join("warc");
    let tmp = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["iana.warc.gz", "whirlwind.warc.gz"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    // Regression: iana.warc.gz keeps `Transfer-Encoding: chunked` on bodies stored de-chunked
    // (as wget and warcio's capture do); they used to decode to nothing.
    let iana = reparse(&files[..1], &tmp.path().join("iana"), &Config::default()).unwrap();
    assert!(
        iana.count("bytes") > 0 && iana.count("links") > 0,
        "{iana:?}"
    );
    let r = reparse(&files, tmp.path(), &Config::default()).unwrap();
    assert!(r.failed_files.is_empty(), "{:?}", r.failed_files);
    assert!(r.count("html_pages") > 0 && r.count("links") > 0, "{r:?}");
    let pages = pages_of(&tmp.path().join("pages.run"));
    assert_eq!(pages.len() as u64, r.count("pages_unique"));
    assert!(tmp.path().join("reparse.json").exists());

    // A damaged file is reported, and what it held before the damage is kept.
    let bad = tmp.path().join("bad.warc.gz");
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let cut = bytes.len() * 2 / 3;
    bytes.truncate(cut);
    std::fs::write(&bad, bytes).unwrap();
    let out = tmp.path().join("out2");
    let r = reparse(&[bad], &out, &Config::default()).unwrap();
    assert_eq!(r.failed_files.len(), 1);
    assert!(
        r.failed_files[0].contains("bad.warc.gz"),
        "{:?}",
        r.failed_files
    );
    assert!(r.count("pages") > 0);
}

/// A WARC cut short after the fetch: the parse names the file and the record's offset, says the
/// file was truncated, and exits 3 with a `.failed` marker, never a bare "failed to fill whole
/// buffer".
#[test]
fn a_truncated_warc_is_named_with_the_offset_of_the_missing_record() {
    let (web, server) = common::small_web(31, 3, 6);
    let mut cfg = common::websim_config(1, 2);
    cfg.fetch.warc_compression = "zstd".into();
    // The parse reads the WARC (it does not run inside the fetch).
    cfg.fetch.parse = false;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let quiet = FetchOptions {
        progress: ProgressMode::Quiet,
        ..FetchOptions::default()
    };
    fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet).unwrap();
    server.stop();
    let warc = std::fs::read_dir(c.dir.warc_dir(0))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".warc.zst"))
        .expect("a WARC file");
    let len = std::fs::metadata(&warc).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&warc).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let e = dragnet::ops::stage::run_stage(&c.dir, &c.cfg, Stage::Parse, 0, 0, &quiet).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.exit_code(), dragnet::error::EXIT_IO, "{msg}");
    assert!(msg.contains(&warc.display().to_string()), "{msg}");
    assert!(
        msg.contains("at byte offset") && msg.contains("truncated"),
        "{msg}"
    );
    assert!(c.dir.failed_path(0, Stage::Parse, 0).exists());
}
