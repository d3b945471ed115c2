//! `.warc.zst` files (the IIPC warc-zstd layout: one frame a record, an optional dictionary
//! frame first): the dictionary frame is used, and `dragnet index`'s fast path that skips each
//! record's frame by its block headers ends where reading the record whole does.

use crate::warc::{read_all, verify, write_sample};

use std::path::Path;

use dragnet::warc::{self, Compression, DigestCheck, ReaderOptions, WarcReader};
use dragnet::Error;

#[test]
fn zstd_dictionary_frame_is_used() {
    // A file as the warc-zstd proposal allows: a dictionary in a skippable frame, then frames
    // compressed with it, plus an extension frame that readers skip.
    let dir = tempfile::tempdir().unwrap();
    let w = write_sample(dir.path(), Compression::None, u64::MAX, 6);
    let plain = std::fs::read(&w.files[0]).unwrap();
    let ours = read_all(&w.files[0]).unwrap();
    let dict: Vec<u8> =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nWARC-Type: response\r\nlorem ipsum "
            .repeat(20);
    for compressed_dict in [false, true] {
        let mut file = Vec::new();
        let stored = if compressed_dict {
            zstd::bulk::compress(&dict, 3).unwrap()
        } else {
            dict.clone()
        };
        file.extend_from_slice(&0x184D_2A5Du32.to_le_bytes());
        file.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        file.extend_from_slice(&stored);
        file.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
        file.extend_from_slice(&3u32.to_le_bytes());
        file.extend_from_slice(b"ext");
        let mut c = zstd::bulk::Compressor::with_dictionary(3, &dict).unwrap();
        for (_, _, end) in &ours {
            let rec = &plain[end.offset as usize..(end.offset + end.length) as usize];
            file.extend_from_slice(&c.compress(rec).unwrap());
        }
        let p = dir.path().join("dict.warc.zst");
        std::fs::write(&p, &file).unwrap();
        let rd = WarcReader::open(&p, verify()).unwrap();
        assert!(rd.has_dictionary());
        let got = read_all(&p).unwrap();
        assert_eq!(got.len(), ours.len());
        for (a, b) in got.iter().zip(&ours) {
            assert_eq!((&a.0, &a.1), (&b.0, &b.1));
            assert_eq!(a.2.block_digest, DigestCheck::Ok);
        }
        // `dragnet index`'s way: records skipped by their frame headers end where read ones do.
        let skipped = skip_all(&p).unwrap();
        assert_eq!(skipped.len(), got.len());
        for (a, b) in skipped.iter().zip(&got) {
            assert_eq!((a.1.offset, a.1.length), (b.2.offset, b.2.length));
        }
    }
}

/// Every record of a file read as `dragnet index` reads it: the header, the HTTP head of HTTP
/// records, then `Record::skip` (no digest verification).
fn skip_all(path: &Path) -> dragnet::Result<Vec<(warc::WarcHeader, warc::RecordEnd)>> {
    let mut rd = WarcReader::open(path, ReaderOptions::default())?;
    let mut out = Vec::new();
    while let Some(mut rec) = rd.next_record()? {
        let header = rec.header().clone();
        if header.is_http() {
            let _ = rec.http_head();
        }
        out.push((header, rec.skip()?));
    }
    Ok(out)
}

/// `frames` (one record each, or several) compressed with content size and checksum as asked.
fn zstd_file(frames: &[&[u8]], size: bool, checksum: bool) -> Vec<u8> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(3).unwrap();
    c.set_parameter(CParameter::ContentSizeFlag(size)).unwrap();
    c.set_parameter(CParameter::ChecksumFlag(checksum)).unwrap();
    frames.iter().flat_map(|f| c.compress(f).unwrap()).collect()
}

#[test]
fn skipping_zstd_records_by_their_frame_headers_ends_where_reading_them_does() {
    let dir = tempfile::tempdir().unwrap();
    // Our writer's files, and frames made here: with and without content size and checksum, a
    // resource of 300 KiB of noise (raw blocks) and one of 300 KiB of one byte (RLE blocks).
    let w = write_sample(dir.path(), Compression::None, u64::MAX, 6);
    let plain = std::fs::read(&w.files[0]).unwrap();
    let ends: Vec<_> = read_all(&w.files[0])
        .unwrap()
        .into_iter()
        .map(|r| r.2)
        .collect();
    let mut records: Vec<Vec<u8>> = ends
        .iter()
        .map(|e| plain[e.offset as usize..(e.offset + e.length) as usize].to_vec())
        .collect();
    let mut x = 7u64;
    let noise: Vec<u8> = (0..300 << 10)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect();
    for body in [noise, vec![b'z'; 300 << 10]] {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://example.test/big\r\n\
             WARC-Date: 2026-01-01T00:00:00Z\r\nContent-Type: application/octet-stream\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(&body);
        r.extend_from_slice(b"\r\n\r\n");
        records.push(r);
    }
    let frames: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let ours = write_sample(&dir.path().join("zst"), Compression::Zstd, u64::MAX, 6);
    let mut files = vec![ours.files[0].clone()];
    for (size, checksum) in [(true, true), (true, false), (false, true), (false, false)] {
        let p = dir.path().join(format!("made-{size}-{checksum}.warc.zst"));
        std::fs::write(&p, zstd_file(&frames, size, checksum)).unwrap();
        files.push(p);
    }
    for p in &files {
        let read = read_all(p).unwrap();
        let skipped = skip_all(p).unwrap();
        assert_eq!(skipped.len(), read.len(), "{}", p.display());
        for ((h, end), (rh, _, rend)) in skipped.iter().zip(&read) {
            assert_eq!(h, rh);
            assert_eq!((end.offset, end.length), (rend.offset, rend.length));
            for (check, name) in [
                (&end.block_digest, "WARC-Block-Digest"),
                (&end.payload_digest, "WARC-Payload-Digest"),
            ] {
                // Skipped frames check nothing; frames read whole (no content size) check
                // nothing either, as digests are not asked for.
                let want = if h.get(name).is_some() {
                    DigestCheck::Unchecked
                } else {
                    DigestCheck::Absent
                };
                assert_eq!(*check, want, "{name} in {}", p.display());
            }
        }
    }

    // What is skipped is not read: a bad checksum in the last frame goes unseen where the
    // content size lets the frame be skipped, and is caught where it must be read whole.
    for (size, p) in [(true, &files[1]), (false, &files[3])] {
        let mut bad = std::fs::read(p).unwrap();
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        let q = dir.path().join("bad-checksum.warc.zst");
        std::fs::write(&q, bad).unwrap();
        assert!(read_all(&q).is_err());
        assert_eq!(skip_all(&q).is_ok(), size, "content size {size}");
    }

    // A frame holding two records is refused, as `finish` refuses it.
    let two = [records[0].clone(), records[1].clone()].concat();
    let p = dir.path().join("two.warc.zst");
    std::fs::write(&p, zstd_file(&[&two], true, true)).unwrap();
    let e = skip_all(&p).unwrap_err();
    assert!(e.to_string().contains("one per member"), "{e}");

    // A file cut anywhere is an error naming it, or (cut between frames) the records before.
    let good = std::fs::read(&files[1]).unwrap();
    let boundaries: Vec<u64> = skip_all(&files[1])
        .unwrap()
        .iter()
        .map(|r| r.1.offset + r.1.length)
        .collect();
    let cut = dir.path().join("cut.warc.zst");
    for len in (0..good.len())
        .step_by(97)
        .chain(good.len() - 5..good.len())
    {
        std::fs::write(&cut, &good[..len]).unwrap();
        match skip_all(&cut) {
            Ok(recs) => assert_eq!(
                recs.len(),
                boundaries.iter().filter(|&&b| b <= len as u64).count(),
                "cut at {len}"
            ),
            Err(e) => {
                assert!(e.to_string().contains("cut.warc.zst"), "cut at {len}: {e}");
                assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
            }
        }
        if !boundaries.contains(&(len as u64)) && len > 0 {
            assert!(skip_all(&cut).is_err(), "cut at {len} read as valid");
        }
    }
}
