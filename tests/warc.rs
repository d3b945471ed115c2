//! WARC files: reading third-party files record for record as their warcio manifests say,
//! write -> read round trips for every compression (revisits, truncated records, rotation),
//! warcio's digest algorithm, every truncation and byte flip of a small `.warc.zst` (an error
//! naming the file or a digest mismatch, never a panic or silent garbage), `dragnet check warc`,
//! and, when Python's warcio is installed, `warcio check` / `warcio index` on files we wrote.
//!
//! Test data: `tests/data` (provenance and licenses in its README), or the directory named by
//! `DRAGNET_TESTDATA`.

use crate::common;

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dragnet::warc::digest::Sha1Digest;
use dragnet::warc::{
    self, Compression, DigestCheck, Exchange, IdSource, ReaderOptions, RecordType, ResponseKind,
    Revisit, Room, Truncated, WarcReader, WarcWriter, WriterConfig,
};
use dragnet::Error;
use serde_json::Value;

fn testdata_dir() -> PathBuf {
    common::testdata_dir("warc", "warc/*.warc.gz and their manifests")
}

pub(crate) fn verify() -> ReaderOptions {
    ReaderOptions {
        verify_digests: true,
        ..ReaderOptions::default()
    }
}

/// Every record of a file: header, block bytes and end, read with digest verification.
pub(crate) fn read_all(
    path: &Path,
) -> dragnet::Result<Vec<(warc::WarcHeader, Vec<u8>, warc::RecordEnd)>> {
    let mut rd = WarcReader::open(path, verify())?;
    let mut out = Vec::new();
    while let Some(mut rec) = rd.next_record()? {
        let header = rec.header().clone();
        let mut block = Vec::new();
        if rec.read_to_end(&mut block).is_err() {
            // The typed error comes from finish().
            rec.finish()?;
            panic!("read failed but finish succeeded");
        }
        let end = rec.finish()?;
        out.push((header, block, end));
    }
    Ok(out)
}

#[test]
fn testdata_files_read_as_their_manifests_say() {
    let dir = testdata_dir().join("warc");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".warc.gz") {
            continue;
        }
        files += 1;
        let manifest = std::fs::read_to_string(dir.join(format!("{name}.manifest.jsonl"))).unwrap();
        let expected: Vec<Value> = manifest
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut rd = WarcReader::open(&path, verify()).unwrap();
        assert_eq!(rd.compression(), Compression::Gzip);
        let mut n = 0;
        while let Some(mut rec) = rd.next_record().unwrap() {
            let m = &expected[n];
            let h = rec.header().clone();
            let ctx = format!("{name} record {n}");
            let s = |k: &str| m[k].as_str().map(str::to_owned);
            assert_eq!(Some(rec.offset()), m["offset"].as_u64(), "{ctx}");
            assert_eq!(Some(h.version.clone()), s("warc_version"), "{ctx}");
            assert_eq!(
                Some(h.record_type().as_str().to_owned()),
                s("type"),
                "{ctx}"
            );
            assert_eq!(h.target_uri().map(str::to_owned), s("target_uri"), "{ctx}");
            assert_eq!(
                h.get("WARC-Payload-Digest").map(str::to_owned),
                s("payload_digest"),
                "{ctx}"
            );
            assert_eq!(
                h.get("WARC-Block-Digest").map(str::to_owned),
                s("block_digest"),
                "{ctx}"
            );
            assert_eq!(h.record_id().map(str::to_owned), s("record_id"), "{ctx}");
            assert_eq!(h.date().map(str::to_owned), s("date"), "{ctx}");
            assert_eq!(
                h.content_type().map(str::to_owned),
                s("content_type"),
                "{ctx}"
            );
            assert_eq!(h.content_length(), m["content_length"].as_u64(), "{ctx}");
            let status = if h.is_http()
                && matches!(h.record_type(), RecordType::Response | RecordType::Revisit)
            {
                rec.http_head()
                    .ok()
                    .and_then(|head| head.status())
                    .map(|s| s.to_string())
            } else {
                None
            };
            assert_eq!(status, s("http_status"), "{ctx}");
            let end = rec.finish().unwrap();
            assert_eq!(Some(end.length), m["length"].as_u64(), "{ctx}");
            let checks = [&end.block_digest, &end.payload_digest];
            match m["digest_verified_by_warcio"].as_bool() {
                Some(true) => {
                    assert!(checks.contains(&&DigestCheck::Ok), "{ctx}: {end:?}");
                    assert!(
                        checks
                            .iter()
                            .all(|c| matches!(c, DigestCheck::Ok | DigestCheck::Absent)),
                        "{ctx}: {end:?}"
                    );
                }
                _ => assert!(
                    checks
                        .iter()
                        .all(|c| matches!(c, DigestCheck::Absent | DigestCheck::Unchecked)),
                    "{ctx}: warcio had nothing to check, we found {end:?}"
                ),
            }
            n += 1;
        }
        assert_eq!(n, expected.len(), "{name}: record count");
    }
    assert_eq!(
        files,
        2,
        "expected whirlwind.warc.gz and iana.warc.gz in {}",
        dir.display()
    );
}

#[test]
fn testdata_payload_decodes_and_plain_copy_reads_the_same() {
    let path = testdata_dir().join("warc/whirlwind.warc.gz");
    // The response's document, through the HTTP helpers.
    let mut rd = WarcReader::open(&path, ReaderOptions::default()).unwrap();
    let mut found = false;
    while let Some(mut rec) = rd.next_record().unwrap() {
        if rec.header().record_type() == RecordType::Response {
            let head = rec.http_head().unwrap();
            assert_eq!(head.status(), Some(200));
            let mut doc = Vec::new();
            rec.http_payload(&head, 1 << 24)
                .unwrap()
                .read_to_end(&mut doc)
                .unwrap();
            assert!(String::from_utf8_lossy(&doc).contains("Escopete"));
            found = true;
        }
    }
    assert!(found);

    // The same file decompressed to a plain .warc: same records, same digests.
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("whirlwind.warc");
    std::fs::write(&p, &plain).unwrap();
    let a = read_all(&path).unwrap();
    let b = read_all(&p).unwrap();
    assert_eq!(a.len(), b.len());
    let mut at = 0;
    for ((ha, ba, _), (hb, bb, eb)) in a.iter().zip(&b) {
        assert_eq!((ha, ba), (hb, bb));
        assert_eq!(eb.offset, at);
        assert_eq!(eb.block_digest, DigestCheck::Ok);
        at += eb.length;
    }
    assert_eq!(at, plain.len() as u64);

    // A body cap hides the rest of a block but the reader still moves on correctly.
    let opts = ReaderOptions {
        body_cap: Some(10),
        ..verify()
    };
    let mut rd = WarcReader::open(&path, opts).unwrap();
    let mut n = 0;
    while let Some(mut rec) = rd.next_record().unwrap() {
        let mut v = Vec::new();
        rec.read_to_end(&mut v).unwrap();
        assert_eq!(v.len() as u64, rec.content_length().min(10));
        assert_eq!(rec.capped(), rec.content_length() > 10);
        assert_eq!(rec.finish().unwrap().block_digest, DigestCheck::Ok);
        n += 1;
    }
    assert_eq!(n, 4);
}

fn t(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::new(secs, 250_000_000)
}

fn request(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: example.test\r\nUser-Agent: dragnet-test\r\nAccept-Encoding: gzip\r\n\r\n").into_bytes()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub(crate) struct Written {
    pub(crate) files: Vec<PathBuf>,
    /// Every record the writer reported, in order.
    pub(crate) records: Vec<WrittenRecord>,
}

/// (location, type, target, block) of a record the writer reported.
pub(crate) type WrittenRecord = (warc::RecordLocation, RecordType, String, Vec<u8>);

/// Writes a crawl-like sequence: plain 200s, a chunked+gzip 200, a truncated response, a 304
/// revisit, a response without request and metadata, rotating every `rotate` bytes.
pub(crate) fn write_sample(
    dir: &Path,
    codec: impl Into<warc::Codec>,
    rotate: u64,
    count: usize,
) -> Written {
    let mut cfg = WriterConfig::new(dir, "p0007", codec);
    cfg.rotate_bytes = rotate;
    cfg.ids = IdSource::Seeded(42);
    cfg.warcinfo = vec![("operator".into(), "tests".into())];
    let mut w = WarcWriter::new(cfg).unwrap();
    let mut records = Vec::new();
    for i in 0..count {
        write_sample_exchange(&mut w, i, &mut records);
    }
    let summary = w.finish().unwrap();
    Written {
        files: summary.files,
        records,
    }
}

/// The response of the sample's exchange `i` (of `uri`) and its kind, by `i % 4`: a plain 200,
/// a chunked+gzip 200, a truncated 200, a 304 revisit.
fn sample_response(i: usize, uri: &str) -> (Vec<u8>, ResponseKind<'_>) {
    let doc = format!(
        "<html><body>page {i} {}</body></html>",
        "lorem ipsum ".repeat(i * 7)
    );
    match i % 4 {
        0 => (
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{doc}",
                doc.len()
            )
            .into_bytes(),
            ResponseKind::Response { truncated: None },
        ),
        1 => {
            let z = gzip(doc.as_bytes());
            let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for c in z.chunks(64) {
                r.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                r.extend_from_slice(c);
                r.extend_from_slice(b"\r\n");
            }
            r.extend_from_slice(b"0\r\n\r\n");
            (r, ResponseKind::Response { truncated: None })
        }
        2 => {
            let full = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{doc}",
                doc.len() * 10
            );
            (
                full.into_bytes(),
                ResponseKind::Response {
                    truncated: Some(Truncated::Length),
                },
            )
        }
        _ => (
            b"HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\n\r\n".to_vec(),
            ResponseKind::NotModified(Revisit {
                refers_to_uri: Some(uri),
                refers_to_date: Some(t(1_700_000_000)),
                refers_to: None,
                payload_digest: Some("sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"),
            }),
        ),
    }
}

/// Writes the sample's exchange `i` (without its request when `i % 5 == 4`, with metadata when
/// `i % 3 == 0`) and pushes the records the writer reported onto `records`.
fn write_sample_exchange(w: &mut WarcWriter, i: usize, records: &mut Vec<WrittenRecord>) {
    let ip: IpAddr = "127.0.0.1".parse().unwrap();
    let uri = format!("http://example.test/page/{i}");
    let req = request(&format!("/page/{i}"));
    let (resp, kind) = sample_response(i, &uri);
    let with_request = i % 5 != 4;
    // The block in two pieces, split anywhere (in the head, at its end, in the body).
    let split = (i * 7) % (resp.len() + 1);
    // Every third response's rest lies in a buffer with room in front of it, too little for the
    // record's header or enough: written in place or copied, the record is the same.
    let room = [0, 40, 5_000][i % 9 / 3];
    let mut spare = vec![0x55; room];
    spare.extend_from_slice(&resp[split..]);
    let in_room = i.is_multiple_of(3);
    let date = t(1_800_000_000 + i as u64);
    let ex = Exchange {
        target_uri: &uri,
        date,
        ip: Some(ip),
        request: with_request.then_some(&req[..]),
        response: &resp[..split],
        response_rest: if in_room { &[] } else { &resp[split..] },
        response_room: in_room.then(|| Room::new(&mut spare, room, room + resp.len() - split)),
        response_head: None,
        kind: kind.clone(),
    };
    let loc = w.write_exchange(ex).unwrap();
    // The body is as it was.
    assert_eq!(&spare[room..room + resp.len() - split], &resp[split..]);
    if let Some(r) = loc.request.clone() {
        assert!(with_request);
        records.push((r, RecordType::Request, uri.clone(), req.clone()));
    }
    let rt = match kind {
        ResponseKind::Response { .. } => RecordType::Response,
        ResponseKind::NotModified(_) | ResponseKind::IdenticalPayload(_) => RecordType::Revisit,
    };
    records.push((loc.response.clone(), rt, uri.clone(), resp.clone()));
    if i.is_multiple_of(3) {
        let m = w
            .write_metadata(
                &uri,
                date,
                Some(&loc.response.record_id),
                &[("fetchTimeMs", "12"), ("outlinks", "3")],
            )
            .unwrap();
        records.push((
            m,
            RecordType::Metadata,
            uri.clone(),
            b"fetchTimeMs: 12\r\noutlinks: 3\r\n".to_vec(),
        ));
    }
}

#[test]
fn round_trip_all_compressions_with_rotation() {
    for compression in [Compression::Zstd, Compression::Gzip, Compression::None] {
        let dir = tempfile::tempdir().unwrap();
        let w = write_sample(dir.path(), compression, 6000, 24);
        check_rotation(dir.path(), &w, compression);
        let mut expected = w.records.iter();
        for f in &w.files {
            check_file_reads_back(f, compression, &mut expected);
        }
        assert!(expected.next().is_none(), "records missing from the files");
        check_truncation_and_gzip_payloads(&w.files[0], compression);
        check_every_record_reads_alone(dir.path(), &w);
    }
}

/// The sample rotated into several files, named in order, with no temporary file left.
fn check_rotation(dir: &Path, w: &Written, compression: Compression) {
    assert!(
        w.files.len() >= 3,
        "{compression}: expected rotation, got {:?}",
        w.files
    );
    for (i, f) in w.files.iter().enumerate() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name, warc::file_name("p0007", i as u32 + 1, compression));
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// The file `f` reads back as its warcinfo and then the next records of `expected`, each where
/// the writer said, with its header and block; requests and responses point at each other.
fn check_file_reads_back<'a>(
    f: &Path,
    compression: Compression,
    expected: &mut impl Iterator<Item = &'a WrittenRecord>,
) {
    let name = f.file_name().unwrap().to_string_lossy().into_owned();
    let records = read_all(f).unwrap();
    let (info, info_block, info_end) = &records[0];
    assert_eq!(info.record_type(), RecordType::Warcinfo);
    assert_eq!(info.get("WARC-Filename"), Some(name.as_str()));
    assert!(String::from_utf8_lossy(info_block).contains("operator: tests"));
    assert_eq!(info_end.block_digest, DigestCheck::Ok);
    let info_id = info.record_id().unwrap().to_owned();
    let mut ids = std::collections::HashMap::new();
    for (h, block, end) in &records[1..] {
        let (loc, rt, uri, want) = expected.next().expect("more records than written");
        let ctx = format!("{compression} {name} @{}", end.offset);
        assert_eq!(&loc.file, &name, "{ctx}");
        assert_eq!((loc.offset, loc.length), (end.offset, end.length), "{ctx}");
        assert_eq!(&h.record_type(), rt, "{ctx}");
        assert_eq!(h.version, "WARC/1.1");
        assert_eq!(h.target_uri(), Some(uri.as_str()), "{ctx}");
        assert_eq!(h.record_id(), Some(loc.record_id.as_str()));
        assert_eq!(h.get("WARC-Warcinfo-ID"), Some(info_id.as_str()));
        assert_eq!(block, want, "{ctx}");
        assert_eq!(end.block_digest, DigestCheck::Ok, "{ctx}");
        assert_eq!(h.get("WARC-Payload-Digest"), loc.payload_digest.as_deref());
        let date = h.date().unwrap();
        assert!(date.ends_with(".250000Z"), "{date}");
        assert!(warc::parse_warc_date(date).is_some());
        check_fields_of_its_type(h, end, rt, uri, &ctx);
        let pair = matches!(rt, RecordType::Request | RecordType::Response);
        if let (true, Some(c)) = (pair, h.get("WARC-Concurrent-To")) {
            ids.insert(h.record_id().unwrap().to_owned(), c.to_owned());
        }
    }
    // Request <-> response point at each other.
    for (id, other) in &ids {
        if let Some(back) = ids.get(other) {
            assert_eq!(back, id);
        }
    }
    assert!(!ids.is_empty());
}

/// The fields a record of type `rt` (of `uri`) has, and whether its payload digest is checked.
fn check_fields_of_its_type(
    h: &warc::WarcHeader,
    end: &warc::RecordEnd,
    rt: &RecordType,
    uri: &str,
    ctx: &str,
) {
    match rt {
        RecordType::Request | RecordType::Response => {
            assert_eq!(h.get("WARC-IP-Address"), Some("127.0.0.1"));
            assert_eq!(
                h.content_type(),
                Some(if *rt == RecordType::Request {
                    "application/http;msgtype=request"
                } else {
                    "application/http;msgtype=response"
                })
            );
            assert_eq!(end.payload_digest, DigestCheck::Ok, "{ctx}");
        }
        RecordType::Revisit => {
            assert_eq!(
                h.get("WARC-Profile"),
                Some(warc::PROFILE_SERVER_NOT_MODIFIED)
            );
            assert_eq!(h.get("WARC-Refers-To-Target-URI"), Some(uri));
            assert_eq!(
                h.get("WARC-Refers-To-Date"),
                Some("2023-11-14T22:13:20.250000Z")
            );
            assert_eq!(
                end.payload_digest,
                DigestCheck::Unchecked,
                "a revisit's payload is elsewhere"
            );
        }
        RecordType::Metadata => {
            assert_eq!(h.content_type(), Some("application/warc-fields"));
            assert_eq!(end.payload_digest, DigestCheck::Ok);
        }
        other => panic!("unexpected {other}"),
    }
}

/// Truncated responses carry WARC-Truncated; chunked+gzip payloads decode.
fn check_truncation_and_gzip_payloads(f: &Path, compression: Compression) {
    let mut rd = WarcReader::open(f, ReaderOptions::default()).unwrap();
    let (mut truncated, mut decoded) = (0, 0);
    while let Some(mut rec) = rd.next_record().unwrap() {
        if rec.header().get("WARC-Truncated") == Some("length") {
            truncated += 1;
        }
        if rec.header().record_type() == RecordType::Response {
            let head = rec.http_head().unwrap();
            if head.get("Content-Encoding") == Some("gzip") {
                let mut doc = String::new();
                rec.http_payload(&head, 1 << 20)
                    .unwrap()
                    .read_to_string(&mut doc)
                    .unwrap();
                assert!(doc.starts_with("<html><body>page "), "{doc}");
                decoded += 1;
            }
        }
    }
    assert!(
        truncated > 0 && decoded > 0,
        "{compression}: {truncated} {decoded}"
    );
}

/// Every record can be read from its offset and length alone.
fn check_every_record_reads_alone(dir: &Path, w: &Written) {
    for (loc, rt, _, block) in &w.records {
        let bytes = std::fs::read(dir.join(&loc.file)).unwrap();
        let slice = &bytes[loc.offset as usize..(loc.offset + loc.length) as usize];
        let mut rd = WarcReader::new(slice, &loc.file, verify()).unwrap();
        let mut rec = rd.next_record().unwrap().unwrap();
        assert_eq!(&rec.header().record_type(), rt);
        let mut got = Vec::new();
        rec.read_to_end(&mut got).unwrap();
        assert_eq!(&got, block);
        assert_eq!(rec.finish().unwrap().length, loc.length);
        assert!(rd.next_record().unwrap().is_none());
    }
}

#[test]
fn digests_are_warcios_sha1_base32() {
    // python3 -c "import base64,hashlib; print(base64.b32encode(hashlib.sha1(b'hello world').digest()))"
    assert_eq!(
        Sha1Digest::of(b"hello world"),
        "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = WriterConfig::new(dir.path(), "d", Compression::None);
    cfg.ids = IdSource::Seeded(1);
    let mut w = WarcWriter::new(cfg).unwrap();
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world";
    let loc = w
        .write_exchange(Exchange {
            target_uri: "http://example.test/",
            date: t(1_800_000_000),
            ip: None,
            request: Some(b"GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"),
            response: resp,
            response_rest: &[],
            response_room: None,
            response_head: None,
            kind: ResponseKind::Response { truncated: None },
        })
        .unwrap();
    w.finish().unwrap();
    // Payload: the bytes after the HTTP header block; an empty request payload hashes to sha1("").
    assert_eq!(
        loc.response.payload_digest.as_deref(),
        Some("sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN")
    );
    assert_eq!(
        loc.request.unwrap().payload_digest.as_deref(),
        Some("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
    );
    let recs = read_all(&dir.path().join("d-000001.warc")).unwrap();
    assert_eq!(
        recs[2].0.get("WARC-Block-Digest"),
        Some(Sha1Digest::of(resp).as_str())
    );
}

/// Reads a damaged file; Ok(records) or the error. Panics propagate (and fail the test).
fn read_damaged(path: &Path) -> Result<Vec<(warc::WarcHeader, Vec<u8>, warc::RecordEnd)>, Error> {
    read_all(path)
}

#[test]
fn every_truncation_and_byte_flip_of_a_warc_zst_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_sample(dir.path(), Compression::Zstd, u64::MAX, 3);
    let path = &w.files[0];
    let good = std::fs::read(path).unwrap();
    let records = read_all(path).unwrap();
    let boundaries: Vec<u64> = records.iter().map(|r| r.2.offset + r.2.length).collect();
    let damaged = dir.path().join("damaged.warc.zst");
    let names_file = |e: &Error| e.to_string().contains("damaged.warc.zst");

    for len in 0..good.len() {
        std::fs::write(&damaged, &good[..len]).unwrap();
        match read_damaged(&damaged) {
            Ok(recs) => {
                assert!(
                    len == 0 || boundaries.contains(&(len as u64)),
                    "truncation to {len} read as valid"
                );
                assert_eq!(
                    recs.len(),
                    boundaries.iter().filter(|&&b| b <= len as u64).count()
                );
            }
            Err(e) => assert!(names_file(&e), "truncation to {len}: {e}"),
        }
    }
    // zstd has bits its decoder ignores (the frame header's unused bit, slack in some entropy
    // table descriptions): a flip there decodes to the very same bytes, with the same checksum.
    // What must never happen is different bytes read back without an error or a bad digest.
    let mut silent = Vec::new();
    for pos in 0..good.len() {
        for mask in [0xffu8, 0x01, 0x80] {
            let mut bad = good.clone();
            bad[pos] ^= mask;
            std::fs::write(&damaged, &bad).unwrap();
            match read_damaged(&damaged) {
                Err(e) => assert!(names_file(&e), "flip at {pos}: {e}"),
                Ok(recs) => {
                    let caught = recs.len() != records.len()
                        || recs
                            .iter()
                            .any(|r| r.2.block_digest.is_bad() || r.2.payload_digest.is_bad());
                    if !caught && recs != records {
                        silent.push((pos, mask));
                    }
                }
            }
        }
    }
    assert!(
        silent.is_empty(),
        "byte flips read back without an error or digest mismatch: {silent:?}"
    );
}

#[test]
fn garbage_and_odd_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.warc");
    let cases: &[&[u8]] = &[
        b"<html>not a warc</html>",
        b"WARC/1.1\r\nWARC-Type: response\r\n\r\n",
        b"WARC/9.9\r\nContent-Length: 0\r\n\r\n\r\n\r\n",
        b"WARC/1.1\r\nContent-Length: 5\r\n\r\nabc",
        b"WARC/1.1\r\nContent-Length: 3\r\n\r\nabcXXXX",
        b"WARC/1.1\r\nno colon here\r\n\r\n",
        b"WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        b"\x1f\x8b\x08\x00garbage",
        b"\x28\xb5\x2f\xfdgarbage",
        b"\x5d\x2a\x4d\x18\xff\xff\xff\x7f",
    ];
    for case in cases {
        std::fs::write(&p, case).unwrap();
        let e = read_all(&p).unwrap_err();
        assert!(e.to_string().contains("x.warc"), "{e}");
        assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
    }
    std::fs::write(&p, b"").unwrap();
    assert!(read_all(&p).unwrap().is_empty());

    // A WARC gzipped as a whole (one member, many records) is refused like warcio refuses it.
    let w = write_sample(dir.path(), Compression::None, u64::MAX, 2);
    let whole = gzip(&std::fs::read(&w.files[0]).unwrap());
    let gz = dir.path().join("whole.warc.gz");
    std::fs::write(&gz, whole).unwrap();
    let e = read_all(&gz).unwrap_err();
    assert!(e.to_string().contains("one per member"), "{e}");
}

#[test]
fn check_warc_cli_lists_records_and_exits_3_on_damage() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_sample(dir.path(), Compression::Zstd, u64::MAX, 4);
    let f = w.files[0].to_str().unwrap().to_owned();
    let out = common::dragnet(&["check", "warc", &f]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("revisit   304"), "{stdout}");
    assert!(stdout.contains("response  200"), "{stdout}");
    assert!(stdout.contains("(truncated: length)"), "{stdout}");
    assert!(stdout.contains("ok (zstd)"), "{stdout}");

    let json = common::dragnet(&["check", "warc", "--json", &f]);
    let lines: Vec<Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), w.records.len() + 1);
    assert_eq!(lines[1]["offset"].as_u64(), Some(w.records[0].0.offset));

    // A flipped byte in the middle of the second record's frame.
    let mut bytes = std::fs::read(&w.files[0]).unwrap();
    let second = &w.records[1].0;
    bytes[(second.offset + second.length / 2) as usize] ^= 0x55;
    let bad = dir.path().join("bad.warc.zst");
    std::fs::write(&bad, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dragnet"))
        .args(["check", "warc", bad.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("bad.warc.zst") && stderr.contains(&format!("offset {}", second.offset)),
        "{stderr}"
    );
}

fn warcio_available() -> bool {
    Command::new("python3")
        .args(["-c", "import warcio"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
#[ignore = "needs warcio (pip install warcio==1.8.1); .ci/run runs it where warcio is installed"]
fn warcio_accepts_what_we_write() {
    common::require("warcio", warcio_available(), "pip install warcio==1.8.1");
    // warcio 1.8.1 reads .warc and .warc.gz (not .warc.zst).
    for compression in [Compression::Gzip, Compression::None] {
        let dir = tempfile::tempdir().unwrap();
        let w = write_sample(dir.path(), compression, 8000, 16);
        for f in &w.files {
            let out = Command::new("python3")
                .args(["-m", "warcio.cli", "check", "-v", f.to_str().unwrap()])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "warcio check {}: {text}{}",
                f.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("failed"), "{text}");
            let passes = text.matches("digest pass").count();
            assert!(passes > 0, "{text}");

            let out = Command::new("python3")
                .args([
                    "-m",
                    "warcio.cli",
                    "index",
                    "-f",
                    "offset,length,warc-type,warc-target-uri",
                    f.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            // For plain files warcio's length stops before the record's closing CRLF CRLF; ours
            // includes it (offset + length = next offset), so compare offsets only there.
            let plain = compression == Compression::None;
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let ours: Vec<(u64, u64)> = w
                .records
                .iter()
                .filter(|r| r.0.file == name)
                .map(|r| (r.0.offset, if plain { 0 } else { r.0.length }))
                .collect();
            let theirs: Vec<(u64, u64)> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|v| v["warc-type"] != "warcinfo")
                .map(|v| {
                    let n = |k: &str| {
                        v[k].as_str()
                            .map_or_else(|| v[k].as_u64().unwrap(), |s| s.parse().unwrap())
                    };
                    (n("offset"), if plain { 0 } else { n("length") })
                })
                .collect();
            assert_eq!(ours, theirs, "{}", f.display());
        }
    }
}
