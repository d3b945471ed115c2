//! WET files (`[parse] text = true`, `dragnet reparse --text`; issue 22 point 6): the visible
//! text of every HTML page a crawl fetched, as WARC `conversion` records beside its WARC files,
//! each referring to the response record it was read from, as Common Crawl's WET files do; the
//! same text whether the fetch parses inline, `dragnet parse` reads the WARC, or `dragnet
//! reparse --text` reads anyone's WARC files.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use dragnet::warc::reader::{ReaderOptions, WarcReader};
use dragnet::warc::RecordType;

/// (target URI -> (record ID, date, the decoded HTML body)) of the response records of `files`
/// whose Content-Type is HTML and status 2xx.
fn html_responses(files: &[PathBuf]) -> BTreeMap<String, (String, String, Vec<u8>, String)> {
    let mut out = BTreeMap::new();
    for f in files {
        let mut r = WarcReader::open(f, ReaderOptions::default()).unwrap();
        while let Some(mut rec) = r.next_record().unwrap() {
            let h = rec.header().clone();
            if h.record_type() != RecordType::Response {
                rec.finish().unwrap();
                continue;
            }
            let head = rec.http_head().unwrap();
            let ct = head.get("content-type").unwrap_or("").to_string();
            let html = ct.starts_with("text/html") || ct.starts_with("application/xhtml+xml");
            if !(html && (200..300).contains(&head.status().unwrap_or(0))) {
                rec.finish().unwrap();
                continue;
            }
            let mut body = Vec::new();
            let _ = rec
                .http_payload(&head, 64 << 20)
                .unwrap()
                .read_to_end(&mut body);
            out.insert(
                h.target_uri().unwrap().to_string(),
                (
                    h.record_id().unwrap().to_string(),
                    h.date().unwrap().to_string(),
                    body,
                    ct,
                ),
            );
        }
    }
    out
}

/// The conversion records of WET `files`: target URI -> (refers-to, date, text).
pub(crate) fn conversions(files: &[PathBuf]) -> BTreeMap<String, (String, String, String)> {
    let mut out = BTreeMap::new();
    let verify = ReaderOptions {
        verify_digests: true,
        ..ReaderOptions::default()
    };
    for f in files {
        let mut r = WarcReader::open(f, verify.clone()).unwrap();
        let mut first = true;
        while let Some(mut rec) = r.next_record().unwrap() {
            let h = rec.header().clone();
            if first {
                assert_eq!(h.record_type(), RecordType::Warcinfo, "{}", f.display());
                first = false;
                rec.finish().unwrap();
                continue;
            }
            assert_eq!(h.record_type(), RecordType::Conversion, "{}", f.display());
            assert_eq!(h.content_type(), Some("text/plain"));
            let mut text = String::new();
            rec.read_to_string(&mut text).unwrap();
            let end = rec.finish().unwrap();
            assert_eq!(
                end.block_digest,
                dragnet::warc::DigestCheck::Ok,
                "{}",
                f.display()
            );
            out.insert(
                h.target_uri().unwrap().to_string(),
                (
                    h.get("WARC-Refers-To").unwrap_or("").to_string(),
                    h.date().unwrap().to_string(),
                    text,
                ),
            );
        }
    }
    out
}

fn files_in(dir: &Path, wet: bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            !n.starts_with('.') && n.contains(".warc") && n.contains(".warc.wet") == wet
        })
        .collect();
    v.sort();
    v
}

/// A two-cycle crawl of `web` with `[parse] text`, parsing inline or not.
fn crawl(web: &websim::model::Web, inline: bool) -> common::Crawl {
    let mut cfg = common::websim_config(2, 2);
    cfg.parse.text = true;
    cfg.fetch.parse = inline;
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(2)).unwrap();
    c
}

#[test]
fn every_html_page_has_its_text_beside_its_warc_and_each_parse_writes_the_same() {
    let (web, server) = common::small_web(61, 4, 10);
    let mut texts = Vec::new();
    for inline in [true, false] {
        let c = crawl(&web, inline);
        let mut all = BTreeMap::new();
        let mut n_html = 0;
        for cycle in c.dir.cycles() {
            let dir = c.dir.warc_dir(cycle);
            if !dir.exists() {
                continue;
            }
            let responses = html_responses(&files_in(&dir, false));
            let wet = conversions(&files_in(&dir, true));
            n_html += responses.len();
            // One conversion per HTML page, referring to its response, dated as it, holding the
            // page's visible text.
            assert_eq!(
                wet.keys().collect::<Vec<_>>(),
                responses.keys().collect::<Vec<_>>(),
                "cycle {cycle}"
            );
            for (url, (refers, date, text)) in &wet {
                let (id, rdate, body, ct) = &responses[url];
                assert_eq!(refers, id, "{url}");
                assert_eq!(date, rdate, "{url}");
                let want = dragnet::parse::text::visible_text(body, Some(ct), 1 << 20);
                assert_eq!(text, &want, "{url}");
            }
            all.extend(wet.into_iter().map(|(u, (_, _, t))| (u, t)));
        }
        assert!(n_html >= 20, "{n_html} HTML pages");
        // The parse marker lists the WET files, and `check crawl` knows them.
        let check = dragnet::ops::check::check_crawl(&c.dir, Some(&c.cfg)).unwrap();
        assert!(check.ok() && check.unknown.is_empty(), "{check:?}");

        // `reparse --text` of the same WARC files: the same texts.
        let out = c.tmp.path().join("reparsed");
        let warcs: Vec<PathBuf> = c
            .dir
            .cycles()
            .into_iter()
            .filter(|&cy| c.dir.warc_dir(cy).exists())
            .flat_map(|cy| files_in(&c.dir.warc_dir(cy), false))
            .collect();
        dragnet::parse::stage::reparse_with(&warcs, &out, &c.cfg, true).unwrap();
        let re: BTreeMap<String, String> = conversions(&files_in(&out, true))
            .into_iter()
            .map(|(u, (_, _, t))| (u, t))
            .collect();
        assert_eq!(re, all, "reparse --text");
        texts.push(all);
    }
    server.stop();
    assert_eq!(texts[0], texts[1], "the inline parse and dragnet parse");
}
