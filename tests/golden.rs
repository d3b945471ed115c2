//! Golden files: run files written by earlier builds, checked in under `data/golden/`, must read
//! back forever (until a format version is retired on purpose, with a note in docs/formats.md).
//!
//! The files were written once with `DRAGNET_BLESS=1 cargo test --test golden`; blessing only
//! writes files that do not exist yet, so old versions are never overwritten. Their contents are
//! generated here from fixed formulas, so the test knows exactly what each must hold.

use std::path::{Path, PathBuf};

use dragnet::records::{FetchItem, FetchResult, UrlRecord, UrlState};
use dragnet::run::{self, Cursor, RunReader, RunWriter, Schema, WriterOptions};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/golden")
}

type Records = Vec<run::OwnedRecord>;

/// A seen set of the fingerprints `f(i)` for `i` in 0..5000, sorted and distinct.
fn seen_set(f: impl Fn(u64) -> u64) -> Records {
    let mut fps: Vec<u64> = (0u64..5000).map(f).collect();
    fps.sort_unstable();
    fps.dedup();
    fps.into_iter()
        .map(|f| (run::fp_key(f).to_vec(), Vec::new()))
        .collect()
}

fn seen_records() -> Records {
    seen_set(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 3))
}

/// 5,000 splitmix64 fingerprints: gaps with uniform low bytes, as real fingerprints have (the
/// multiplicative formula of [`seen_records`] gives only a few distinct gaps).
fn seen_random_records() -> Records {
    seen_set(|i| {
        let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

fn fetchlist_records() -> Records {
    let mut v: Records = (0u64..300)
        .map(|i| {
            let item = FetchItem {
                url: format!("http://h{}.golden.test/p/{i}?q=ü", i % 17),
                depth: (i % 5) as u32,
                priority: 1.0 / (i + 1) as f64,
                ..FetchItem::default()
            };
            (
                run::host_fp_key(i % 17 * 0x1111_1111_1111, i * 7919).to_vec(),
                item.encode(),
            )
        })
        .collect();
    v.sort();
    v
}

fn urldb_records() -> Records {
    (0u64..200)
        .map(|i| {
            let mut r = UrlRecord::discovered(
                format!("https://golden.test/{i}"),
                (i % 3) as u32,
                i as f64 / 7.0,
                0,
            );
            if i % 4 == 1 {
                r.state = UrlState::Fetched;
                r.fetched_at = 1_795_000_000 + i;
                r.http_status = 200;
                r.etag = format!("\"e{i}\"");
                r.last_modified = "Mon, 23 Nov 2026 09:00:00 GMT".into();
                r.digest = i.wrapping_mul(31);
                r.fetches = 2;
                r.changes = 1;
            }
            (run::fp_key(i * 1_000_003).to_vec(), r.encode())
        })
        .collect()
}

fn fetched_records() -> Records {
    let mut v: Records = (0u64..150)
        .map(|i| {
            let url = format!("https://golden.test/f/{i}?q=\u{e9}");
            let mut r = FetchResult {
                url: url.clone(),
                fetched_at_ms: 1_795_000_000_000 + i * 17,
                duration_ms: (i * 13 % 900) as u32,
                ..FetchResult::default()
            };
            match i % 5 {
                0 => r.error = "timeout".into(),
                1 => {
                    r.status = 301;
                    r.redirect = format!("https://golden.test/moved/{i}");
                }
                _ => {
                    r.status = 200;
                    r.content_type = "text/html".into();
                    r.length = 1000 + i * 37;
                    r.truncated = i % 7 == 0;
                    r.digest = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    r.warc_file = "p0003-000001.warc.zst".into();
                    r.warc_offset = i * 4096;
                    r.warc_length = 900 + i;
                    r.etag = format!("\"g{i}\"");
                    r.last_modified = "Mon, 23 Nov 2026 09:00:00 GMT".into();
                }
            }
            (
                run::fp_key(dragnet::keys::fingerprint(&url)).to_vec(),
                r.encode(),
            )
        })
        .collect();
    v.sort();
    v
}

struct Golden {
    file: &'static str,
    schema: Schema,
    records: fn() -> Records,
    block_size: usize,
}

const GOLDEN: &[Golden] = &[
    Golden {
        file: "seen-v1.run",
        schema: Schema::SEEN,
        records: seen_records,
        block_size: 4096,
    },
    Golden {
        file: "fetchlist-v1.run",
        schema: Schema::FETCHLIST,
        records: fetchlist_records,
        block_size: 2048,
    },
    Golden {
        file: "urldb-v1.run",
        schema: Schema::URLDB,
        records: urldb_records,
        block_size: 4096,
    },
    Golden {
        file: "fetched-v1.run",
        schema: Schema::FETCHED,
        records: fetched_records,
        block_size: 4096,
    },
    // A seen set as written since 2026-11-24: key-only blocks as column groups, the random
    // columns in stored zstd frames (blocks of 2,048 keys, so the columns are long enough to be
    // told random).
    Golden {
        file: "seen-columns-v1.run",
        schema: Schema::SEEN,
        records: seen_random_records,
        block_size: 16384,
    },
    Golden {
        file: "empty-v1.run",
        schema: Schema::SEEN,
        records: Vec::new,
        block_size: 4096,
    },
];

fn bless(g: &Golden, path: &Path) {
    let mut w = RunWriter::with_options(
        path,
        g.schema,
        WriterOptions {
            block_size: g.block_size,
            ..WriterOptions::for_schema(g.schema)
        },
    )
    .unwrap();
    for (k, p) in (g.records)() {
        w.push(&k, &p).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn golden_files_read_back() {
    let blessing = std::env::var_os("DRAGNET_BLESS").is_some();
    for g in GOLDEN {
        let path = golden_dir().join(g.file);
        if !path.exists() {
            assert!(
                blessing,
                "{} is missing; golden files are checked in (DRAGNET_BLESS=1 writes new ones)",
                path.display()
            );
            bless(g, &path);
        }
        let info = run::verify(&path).unwrap_or_else(|e| panic!("{}: {e}", g.file));
        assert_eq!(info.version, 1, "{}", g.file);
        let mut r = RunReader::open_expect(&path, g.schema).unwrap();
        let mut got = Vec::new();
        while r.advance().unwrap() {
            got.push((r.key().to_vec(), r.payload().to_vec()));
        }
        let want = (g.records)();
        assert_eq!(got.len(), want.len(), "{}", g.file);
        assert!(got == want, "{}: records differ from the formula", g.file);
        // Payloads decode with today's record codecs.
        for (_, p) in &got {
            match g.schema.id {
                id if id == Schema::FETCHLIST.id => drop(FetchItem::decode(p).unwrap()),
                id if id == Schema::URLDB.id => drop(UrlRecord::decode(p).unwrap()),
                id if id == Schema::FETCHED.id => drop(FetchResult::decode(p).unwrap()),
                _ => assert!(p.is_empty()),
            }
        }
        if g.file.starts_with("seen-columns") {
            // A stored frame's start: zstd magic, then a descriptor with an 8-byte content size
            // and a single segment, which zstd itself only writes for 4 GiB and more.
            let bytes = std::fs::read(&path).unwrap();
            let stored = [0x28, 0xB5, 0x2F, 0xFD, 0xE0];
            assert!(
                bytes.windows(stored.len()).any(|w| w == stored),
                "{}: holds stored zstd frames",
                g.file
            );
        }
        if g.schema.id == Schema::SEEN.id && !want.is_empty() {
            assert!(
                info.blocks > 1,
                "{}: golden seen set spans several blocks",
                g.file
            );
        }
    }
}
