//! Every single-byte flip and every truncation of a small run file is reported as corruption
//! naming the file: no panic, and no wrong record is ever returned before the error.

use std::path::Path;

use dragnet::run::{self, Cursor, RunReader, RunWriter, Schema, WriterOptions};
use dragnet::Error;

const SCHEMA: Schema = Schema {
    id: 902,
    name: "corrupt",
    key_len: 16,
    payload: true,
    unique: true,
    sort_key: "a64,b64",
};

fn small_file(path: &Path) -> Vec<run::OwnedRecord> {
    let recs: Vec<run::OwnedRecord> = (0u64..40)
        .map(|i| {
            (
                run::host_fp_key(i / 10, i * 1_000_003).to_vec(),
                format!("payload {i}").into_bytes(),
            )
        })
        .collect();
    let mut w = RunWriter::with_options(
        path,
        SCHEMA,
        WriterOptions {
            block_size: 200,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    for (k, p) in &recs {
        w.push(k, p).unwrap();
    }
    let s = w.finish().unwrap();
    assert!(s.blocks >= 3, "the file should have several blocks: {s:?}");
    recs
}

/// Reads `path` to the end; returns the records before the first error and the error.
fn read_until_error(path: &Path) -> (Vec<run::OwnedRecord>, Option<Error>) {
    let mut got = Vec::new();
    let mut r = match RunReader::open(path) {
        Ok(r) => r,
        Err(e) => return (got, Some(e)),
    };
    loop {
        match r.advance() {
            Ok(true) => got.push((r.key().to_vec(), r.payload().to_vec())),
            Ok(false) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
    }
}

fn assert_corrupt_named(path: &Path, bytes: &[u8], what: &str, want: &[(Vec<u8>, Vec<u8>)]) {
    std::fs::write(path, bytes).unwrap();
    let (got, err) = read_until_error(path);
    let err = err.unwrap_or_else(|| panic!("{what}: damage went unnoticed"));
    match &err {
        Error::Corrupt { path: p, .. } => assert_eq!(p, path, "{what}: error must name the file"),
        other => panic!("{what}: expected Corrupt, got {other}"),
    }
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{what}: message names the file: {err}"
    );
    assert!(
        got.len() <= want.len() && got[..] == want[..got.len()],
        "{what}: wrong data returned before the error"
    );
    assert!(run::verify(path).is_err(), "{what}: verify must fail too");
}

#[test]
fn every_byte_flip_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.run");
    let want = small_file(&good);
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("bad.run");
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            assert_corrupt_named(
                &bad,
                &b,
                &format!("flip {mask:#04x} at byte {i} of {}", bytes.len()),
                &want,
            );
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.run");
    let want = small_file(&good);
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("bad.run");
    for len in 0..bytes.len() {
        assert_corrupt_named(
            &bad,
            &bytes[..len],
            &format!("truncated to {len} of {}", bytes.len()),
            &want,
        );
    }
    // Appended garbage is damage too.
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"junk");
    assert_corrupt_named(&bad, &longer, "4 bytes appended", &want);
}

#[test]
fn intact_file_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.run");
    let want = small_file(&good);
    let (got, err) = read_until_error(&good);
    assert!(err.is_none());
    assert_eq!(got, want);
}

/// Fingerprint runs read a block at a time on a reader thread (`U64Blocks`, the DRUM merge's
/// path, with its SSE2 block decoding): every byte flip is still an error naming the file, and
/// no wrong key comes out before it.
#[test]
fn every_byte_flip_is_detected_by_block_readers() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("fps.run");
    let keys: Vec<u64> = (1u64..=70).map(|i| i * 0x0123_4567_89ab).collect();
    let mut w = RunWriter::with_options(
        &path,
        Schema::SEEN,
        WriterOptions {
            block_size: 200, // 23 keys a block: the 16-key fast path and the tail both run
            ..WriterOptions::for_schema(Schema::SEEN)
        },
    )
    .unwrap();
    w.push_u64s(&keys).unwrap();
    assert!(w.finish().unwrap().blocks >= 3);
    let good = std::fs::read(&path).unwrap();
    let read = |p: &Path| -> (Vec<u64>, Option<Error>) {
        let mut got = Vec::new();
        let r = match RunReader::open(p) {
            Ok(r) => r,
            Err(e) => return (got, Some(e)),
        };
        let mut blocks = run::U64Blocks::spawn(r).unwrap();
        loop {
            match blocks.next_block() {
                Ok(Some(b)) => got.extend_from_slice(b),
                Ok(None) => return (got, None),
                Err(e) => return (got, Some(e)),
            }
        }
    };
    let (all, err) = read(&path);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(all, keys);
    let damaged = t.path().join("damaged.run");
    for at in 0..good.len() {
        let mut bytes = good.clone();
        bytes[at] ^= 0x10;
        std::fs::write(&damaged, &bytes).unwrap();
        let (got, err) = read(&damaged);
        let err = err.unwrap_or_else(|| panic!("flip at {at}: damage went unnoticed"));
        assert!(
            matches!(&err, Error::Corrupt { path: p, .. } if p == &damaged),
            "flip at {at}: {err}"
        );
        assert!(
            got.len() <= keys.len() && got[..] == keys[..got.len()],
            "flip at {at}: wrong keys before the error"
        );
    }
}
