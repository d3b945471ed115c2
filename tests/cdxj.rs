//! CDXJ indexes (`dragnet index`, `dragnet::warc::cdxj`): the same lines `cdxj-indexer` writes,
//! byte for byte, on the test data's WARCs (its output is kept beside them); and on a crawl's own
//! WARCs (gzip and zstd) every line's offset and length cut out exactly its record.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};

use dragnet::warc::cdxj::{index_file, index_files};

fn sorted_index(files: &[PathBuf]) -> String {
    let mut out = Vec::new();
    index_files(files, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_test_warcs_index_as_cdxj_indexer_indexed_them() {
    let dir = common::testdata_dir("warc", "warc/iana.warc.gz").join("warc");
    for name in ["iana.warc.gz", "whirlwind.warc.gz"] {
        let ours = sorted_index(&[dir.join(name)]);
        let theirs = std::fs::read_to_string(dir.join(format!("{name}.cdxj"))).unwrap();
        assert_eq!(ours, theirs, "{name}");
    }
}

/// A websim fetch into WARCs of `compression`; the crawl and its WARC files.
fn crawl_warcs(compression: &str) -> (common::Crawl, Vec<PathBuf>) {
    let (web, server) = common::small_web(31, 4, 6);
    let mut cfg = common::websim_config(1, 2);
    cfg.fetch.warc_compression = compression.into();
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let quiet = dragnet::fetch::FetchOptions {
        progress: dragnet::fetch::ProgressMode::Quiet,
        ..Default::default()
    };
    dragnet::fetch::fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet).unwrap();
    server.stop();
    let mut files: Vec<PathBuf> = std::fs::read_dir(c.dir.warc_dir(0))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    (c, files)
}

/// The record at `offset`, `length` of `path`, decompressed (one gzip member or zstd frame).
fn record_at(path: &Path, offset: u64, length: u64) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let slice = &bytes[offset as usize..(offset + length) as usize];
    let mut out = Vec::new();
    if path.to_string_lossy().ends_with(".gz") {
        flate2::read::GzDecoder::new(slice)
            .read_to_end(&mut out)
            .unwrap();
    } else {
        zstd::stream::read::Decoder::new(slice)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
    }
    out
}

#[test]
fn every_line_of_a_crawls_index_cuts_out_its_record() {
    for compression in ["gzip", "zstd"] {
        let (_c, files) = crawl_warcs(compression);
        let mut lines = Vec::new();
        for f in &files {
            index_file(f, &mut lines).unwrap();
        }
        assert!(lines.len() >= 8, "{compression}: {} lines", lines.len());
        for l in &lines {
            let j: serde_json::Value = serde_json::from_str(&l.json).unwrap();
            let field = |k: &str| j[k].as_str().unwrap_or_default().to_string();
            let path = files
                .iter()
                .find(|f| f.file_name().unwrap().to_string_lossy() == field("filename"))
                .unwrap();
            let rec = record_at(
                path,
                field("offset").parse().unwrap(),
                field("length").parse().unwrap(),
            );
            let text = String::from_utf8_lossy(&rec);
            assert!(
                text.starts_with("WARC/1.1\r\n"),
                "{compression}: {}",
                l.text()
            );
            assert!(
                text.contains(&format!("WARC-Target-URI: {}\r\n", field("url"))),
                "{compression}: {}",
                l.text()
            );
            assert!(text.contains("WARC-Type: response") || text.contains("WARC-Type: revisit"));
            assert!(l.key.starts_with(&dragnet::keys::surt(&field("url"))));
        }
    }
}

#[test]
#[ignore = "needs cdxj-indexer (pip install cdxj-indexer==1.5.0); .ci/run runs it where it is installed"]
fn cdxj_indexer_agrees_on_a_crawls_gzip_warcs() {
    let has = std::process::Command::new("cdxj-indexer")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("cdxj-indexer", has, "pip install cdxj-indexer==1.5.0");
    let (_c, files) = crawl_warcs("gzip");
    let ours = sorted_index(&files);
    let out = std::process::Command::new("cdxj-indexer")
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::out_text(&out));
    let mut theirs: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    theirs.sort_unstable();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours, theirs);
}
