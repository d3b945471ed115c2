//! Fuzz targets (docs/RELIABILITY.md, campaign 6): one function for each parser that reads bytes
//! dragnet does not control, each taking any byte string. The cargo-fuzz targets in `fuzz/`
//! call them (`tools/faults/fuzz.sh` runs them on the nightly toolchain), and
//! `tests/fuzz_replay.rs` replays the kept corpora (`fuzz/corpus/<target>/`) through them in
//! every `cargo test` on stable, so an input that once crashed stays fixed.
//!
//! Each returns for every input without a panic, bounded in time and memory by the limits the
//! crawler runs with, and checks what its parser promises (a canonical URL canonicalizes to
//! itself; an HTTP head that parses has a status line; ...). A broken promise panics: that is
//! what the fuzzer reports.

use std::io::Read;
use std::path::{Path, PathBuf};

/// A fuzz target: any bytes in, a panic only for a bug.
pub type Target = fn(&[u8]);

/// The fuzz targets by name (`fuzz/fuzz_targets/<name>.rs`, `fuzz/corpus/<name>/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("run_file", run_file),
    ("warc", warc),
    ("http_head", http_head),
    ("robots", robots),
    ("sitemap", sitemap),
    ("html", html),
    ("url", url),
    ("config", config),
];

/// A scratch file of this process and thread holding `data` (the run-file and WARC readers read
/// files), named with `suffix`.
fn scratch(data: &[u8], suffix: &str) -> PathBuf {
    let dir = std::env::temp_dir();
    let id = format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>();
    let path = dir.join(format!("dragnet-fuzz-{}-{id}{suffix}", std::process::id()));
    std::fs::write(&path, data).expect("write a scratch file");
    path
}

/// Run files of any schema: open, walk every record, seek; also with the key-only and
/// general layouts' checks the reader makes on open.
pub fn run_file(data: &[u8]) {
    use crate::run::{Cursor, RunReader};
    let path = scratch(data, ".run");
    if let Ok(mut r) = RunReader::open(&path) {
        let n = r.len();
        let mut seen = 0u64;
        let mut last: Option<Vec<u8>> = None;
        while let Ok(true) = r.advance() {
            let k = r.key().to_vec();
            if let Some(prev) = &last {
                // A run the reader accepts is sorted (its blocks' checksums and order are checked).
                assert!(prev <= &k, "a run the reader accepted is out of order");
            }
            let _ = r.payload();
            last = Some(k);
            seen += 1;
            assert!(seen <= n, "more records than the header says");
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// WARC files as plain, gzip and zstd (the reader detects the compression from the bytes): every
/// record read to the end, HTTP heads and payloads decoded with caps.
pub fn warc(data: &[u8]) {
    use crate::warc::reader::{ReaderOptions, WarcReader};
    for suffix in [".warc", ".warc.gz", ".warc.zst"] {
        let path = scratch(data, suffix);
        let opts = ReaderOptions {
            verify_digests: true,
            max_header_bytes: 64 << 10,
            body_cap: Some(1 << 20),
        };
        if let Ok(mut rd) = WarcReader::open(&path, opts) {
            for _ in 0..1000 {
                let Ok(Some(mut rec)) = rd.next_record() else {
                    break;
                };
                if rec.header().is_http() {
                    if let Ok(head) = rec.http_head() {
                        if let Ok(mut r) = rec.http_payload(&head, 1 << 20) {
                            let _ = std::io::copy(&mut r, &mut std::io::sink());
                        }
                    }
                } else {
                    let _ = std::io::copy(&mut rec, &mut std::io::sink());
                }
            }
        }
        let _ = std::fs::remove_file(&path);
        if !matches!(data.first(), Some(0x1f | 0x28)) {
            break; // neither gzip nor zstd magic: one pass is enough
        }
    }
}

/// HTTP response heads and what follows: the head parser, its header lookups, and the payload
/// decoder (chunked, gzip, deflate, br) capped at 1 MiB, as the fetch and parse use them.
pub fn http_head(data: &[u8]) {
    use crate::warc::http;
    let mut rest = data;
    let Ok(head) = http::read_head(&mut rest, http::DEFAULT_MAX_HEAD) else {
        return;
    };
    let _ = head.status();
    let _ = head.get("content-type");
    let _ = head.get_all("x-robots-tag").count();
    let _ = head.codings();
    if let Ok(mut r) = http::payload_reader(&head, rest, 1 << 20) {
        let mut out = Vec::new();
        let _ = r.by_ref().take((1 << 20) + 1).read_to_end(&mut out);
        assert!(out.len() <= 1 << 20, "the decoded payload passed its cap");
    }
}

/// robots.txt files: parsed, asked about a few paths and agents.
pub fn robots(data: &[u8]) {
    use crate::robots::{Robots, RobotsStatus};
    let r = Robots::parse(data);
    for agent in ["dragnet", "Googlebot", "*"] {
        for path in ["/", "/a/b?c=d", "/%2F%20x", "/index.html$"] {
            let _ = r.allowed(agent, path);
        }
        let _ = r.crawl_delay(agent);
        let _ = r.for_agent(agent).len();
    }
    let _ = r.sitemaps().len();
    let _ = r.stats();
    let _ = RobotsStatus::from_response(200, data);
}

/// Sitemaps, sitemap indexes and feeds (gzip'd or not), with small limits.
pub fn sitemap(data: &[u8]) {
    use crate::parse::sitemap::{parse, Limits};
    let limits = Limits {
        max_urls: 1000,
        max_bytes: 4 << 20,
    };
    let s = parse(data, &limits);
    assert!(
        s.urls.len() <= limits.max_urls,
        "sitemap URLs passed the cap"
    );
    assert!(
        s.sitemaps.len() <= limits.max_urls,
        "sitemap refs passed the cap"
    );
}

/// HTML pages: charset detection, decoding and link extraction against a base URL.
pub fn html(data: &[u8]) {
    use crate::parse::html::extract_links;
    let base = url::Url::parse("http://fuzz.test/dir/page.html").expect("a valid URL");
    let _ = extract_links(data, &base, Some("text/html"));
    let _ = extract_links(data, &base, Some("text/html; charset=shift_jis"));
}

/// URLs: canonicalization is idempotent, and a canonical URL is accepted again; relative
/// references against a base too.
pub fn url(data: &[u8]) {
    use crate::keys::{CanonConfig, Canonicalizer};
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let base = url::Url::parse("http://fuzz.test/a/b?q=1").expect("a valid URL");
    for sort_query in [false, true] {
        let c = Canonicalizer::new(&CanonConfig {
            sort_query,
            ..CanonConfig::default()
        });
        for b in [None, Some(&base)] {
            if let Ok(k) = c.canonicalize(s, b) {
                let again = c
                    .canonicalize(&k.url, None)
                    .unwrap_or_else(|e| panic!("canonical {:?} refused: {e}", k.url));
                assert_eq!(again, k, "canonicalization of {s:?} is not idempotent");
                let _ = crate::keys::surt(&k.url);
            }
        }
    }
}

/// crawl.toml: parsed and validated; never a panic, whatever the text.
pub fn config(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = crate::config::Config::parse(s, Path::new("crawl.toml")) {
        // What parses writes back out and parses again to the same.
        let text = cfg.to_toml();
        let again = crate::config::Config::parse(&text, Path::new("crawl.toml"))
            .unwrap_or_else(|e| panic!("a written config does not parse: {e}\n{text}"));
        assert_eq!(again.to_toml(), text, "config round trip");
    }
}
