//! Revisits of identical payloads (`[fetch] dedup`, issue 22 point 3): a recrawled page whose
//! payload is byte for byte that of its last capture is written as a `revisit` record with the
//! identical-payload-digest profile, its HTTP headers and no body, referring to the capture
//! (URI, date, record ID, digest), as Heritrix writes them; a changed page is a `response`
//! again and becomes the capture later revisits refer to. Counted in the fetch marker, status
//! and metrics; indexed as `warc/revisit` in the CDXJ.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dragnet::warc::reader::{ReaderOptions, WarcReader};
use dragnet::warc::RecordType;
use websim::site::{Request, Response, Site};

/// `dedup.test`: `/` links to `/same` (the same bytes at every fetch) and `/changing` (new bytes
/// at every fetch). No `ETag` or `Last-Modified`: every recrawl is a full GET.
pub(crate) struct Pages {
    fetches: AtomicU64,
}

impl Site for Pages {
    fn respond(&self, req: &Request) -> Response {
        let html = |body: &str| {
            Response::new(
                200,
                "text/html",
                format!("<html><body>{body}</body></html>").into_bytes(),
            )
        };
        match req.target.as_str() {
            "/robots.txt" => {
                Response::new(200, "text/plain", b"User-agent: *\nAllow: /\n".to_vec())
            }
            "/" => html("<a href=\"/same\">same</a> <a href=\"/changing\">changing</a>"),
            "/same" => html(&"the same words ".repeat(200)),
            "/changing" => {
                let n = self.fetches.fetch_add(1, Ordering::Relaxed);
                html(&format!("fetch number {n}"))
            }
            _ => Response::new(404, "text/plain", b"no\n".to_vec()),
        }
    }

    fn min_delay(&self, _host: &str) -> Duration {
        Duration::ZERO
    }

    fn disallowed(&self, _host: &str, _agent: &str, _target: &str) -> bool {
        false
    }
}

/// One record of a WARC file: its header fields and its block's length.
pub(crate) struct Rec {
    kind: RecordType,
    fields: BTreeMap<String, String>,
}

fn records(crawl: &common::Crawl) -> Vec<Rec> {
    let mut out = Vec::new();
    for c in crawl.dir.cycles() {
        let Ok(rd) = std::fs::read_dir(crawl.dir.warc_dir(c)) else {
            continue;
        };
        let mut files: Vec<_> = rd.map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let mut r = WarcReader::open(&f, ReaderOptions::default()).unwrap();
            while let Some(rec) = r.next_record().unwrap() {
                let h = rec.header().clone();
                out.push(Rec {
                    kind: h.record_type(),
                    fields: h.fields.iter().cloned().collect(),
                });
                rec.finish().unwrap();
            }
        }
    }
    out
}

/// A crawl of `dedup.test`, every fetched page due again at once, until `/same` and
/// `/changing` have been answered three times each (at most 10 cycles: a page fetched more than
/// a second after its fetch started is due only at the merge after next, since the recrawl
/// clock is the fetch's start in seconds, so on a loaded machine four cycles were not always
/// enough).
pub(crate) fn crawl(dedup: bool, compression: &str) -> (common::Crawl, Vec<Rec>) {
    let site = Arc::new(Pages {
        fetches: AtomicU64::new(0),
    });
    let (server, port) = common::serve_site(site);
    let mut cfg = common::websim_config(2, 2);
    cfg.resolve.entries = vec![format!("dedup.test:{port}:127.0.0.1")];
    cfg.fetch.follow_per_host = 0;
    cfg.fetch.dedup = dedup;
    cfg.fetch.warc_compression = compression.into();
    cfg.scope.allowed_domains = vec!["dedup.test".into()];
    cfg.prioritize.recrawl_after_secs = 0;
    cfg.prioritize.recrawl_min_secs = 0;
    let c = common::websim_crawl_with_hosts(&[format!("http://dedup.test:{port}/")], cfg);
    let answered = |recs: &[Rec], path: &str| {
        recs.iter()
            .filter(|r| matches!(r.kind, RecordType::Response | RecordType::Revisit))
            .filter(|r| path_of(r) == path)
            .count()
    };
    let mut recs = Vec::new();
    for _ in 0..10 {
        dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::cycles(1)).unwrap();
        recs = records(&c);
        if answered(&recs, "/same") >= 3 && answered(&recs, "/changing") >= 3 {
            break;
        }
    }
    server.stop();
    (c, recs)
}

fn path_of(r: &Rec) -> String {
    let u = &r.fields["WARC-Target-URI"];
    url::Url::parse(u).unwrap().path().to_string()
}

#[test]
fn an_unchanged_page_is_a_revisit_of_its_capture_and_a_changed_one_a_response() {
    let (c, recs) = crawl(true, "zstd");
    let answers: Vec<&Rec> = recs
        .iter()
        .filter(|r| matches!(r.kind, RecordType::Response | RecordType::Revisit))
        .filter(|r| path_of(r) != "/robots.txt")
        .collect();
    let of = |path: &str| -> Vec<&Rec> {
        answers
            .iter()
            .copied()
            .filter(|r| path_of(r) == path)
            .collect()
    };
    // `/` in cycles 0..4, the others from cycle 1: each fetched at least three times.
    let same = of("/same");
    let changing = of("/changing");
    assert!(
        same.len() >= 3 && changing.len() >= 3,
        "{} {}",
        same.len(),
        changing.len()
    );
    // The first capture of an unchanged page is a response; every later one a revisit of it.
    let original = same[0];
    assert_eq!(original.kind, RecordType::Response);
    for r in &same[1..] {
        assert_eq!(r.kind, RecordType::Revisit);
        let f = &r.fields;
        assert_eq!(
            f["WARC-Profile"],
            "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
        );
        assert_eq!(f["WARC-Refers-To-Target-URI"], f["WARC-Target-URI"]);
        assert_eq!(f["WARC-Refers-To-Date"], original.fields["WARC-Date"]);
        assert_eq!(f["WARC-Refers-To"], original.fields["WARC-Record-ID"]);
        assert_eq!(
            f["WARC-Payload-Digest"],
            original.fields["WARC-Payload-Digest"]
        );
        assert_eq!(f["WARC-Truncated"], "length");
        // The block is the status line and headers only.
        let len: usize = f["Content-Length"].parse().unwrap();
        assert!(len < 400, "a revisit block of {len} bytes");
    }
    // A page that changes is a response every time.
    assert!(changing.iter().all(|r| r.kind == RecordType::Response));
    let root = of("/");
    assert_eq!(root[0].kind, RecordType::Response);
    assert!(root[1..].iter().all(|r| r.kind == RecordType::Revisit));

    // Counted: fetch markers, status, metrics.
    let revisits = (same.len() - 1 + root.len() - 1) as u64;
    let status = dragnet::ops::status(c.dir.root()).unwrap();
    assert_eq!(status.fetch_total.revisits, revisits);
    let metrics = std::fs::read_to_string(c.dir.root().join("metrics.prom")).unwrap();
    assert!(
        metrics.contains(&format!(
            "dragnet_fetch_revisits_total{{crawl=\"{}\"}} {revisits}",
            c.cfg.crawl.name
        )),
        "{metrics}"
    );
    // Indexed as revisits.
    let index = std::fs::read_to_string(dragnet::ops::index::crawl_index(&c.dir)).unwrap();
    let revisit_lines = index
        .lines()
        .filter(|l| l.contains("\"mime\": \"warc/revisit\""))
        .count() as u64;
    assert_eq!(revisit_lines, revisits);

    // Without dedup every answer is a response.
    let (_c, recs) = crawl(false, "zstd");
    assert!(!recs.iter().any(|r| r.kind == RecordType::Revisit));
}
