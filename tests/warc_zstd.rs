//! `.warc.zst` files (the IIPC warc-zstd layout: one frame a record, an optional dictionary
//! frame first): the dictionary frame is used, `dragnet index`'s fast path that skips each
//! record's frame by its block headers ends where reading the record whole does, the writer's
//! trained dictionary is in every file and frame, a dictionary that does not match is an error
//! naming the file and offset, and the reference tools read what we write (the zstd command line
//! with the file's own dictionary, then warcio; warcat-rs where it is installed, though 0.3.4
//! stops at the end of every `.warc.zst`, its own included).

use crate::warc::{read_all, verify, write_sample};

use std::path::Path;
use std::sync::Arc;

use dragnet::warc::dictionary::{self, Codec, Dictionary};
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
    let records = sample_records(dir.path());
    let frames: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let ours = write_sample(&dir.path().join("zst"), Compression::Zstd, u64::MAX, 6);
    let mut files = vec![ours.files[0].clone()];
    for (size, checksum) in [(true, true), (true, false), (false, true), (false, false)] {
        let p = dir.path().join(format!("made-{size}-{checksum}.warc.zst"));
        std::fs::write(&p, zstd_file(&frames, size, checksum)).unwrap();
        files.push(p);
    }
    for p in &files {
        check_skipped_ends_where_read_ends(p);
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

    check_a_cut_file_is_named_or_ends_between_frames(dir.path(), &files[1]);
}

/// Records to frame: our writer's plain sample's, then a resource of 300 KiB of noise (raw
/// blocks) and one of 300 KiB of one byte (RLE blocks).
fn sample_records(dir: &Path) -> Vec<Vec<u8>> {
    let w = write_sample(dir, Compression::None, u64::MAX, 6);
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
    records
}

/// Every record of `p` skipped by its frame headers has the header and ends where reading it
/// whole does, and checks no digest.
fn check_skipped_ends_where_read_ends(p: &Path) {
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

/// `file` cut anywhere is an error naming it, or (cut between frames) the records before.
fn check_a_cut_file_is_named_or_ends_between_frames(dir: &Path, file: &Path) {
    let good = std::fs::read(file).unwrap();
    let boundaries: Vec<u64> = skip_all(file)
        .unwrap()
        .iter()
        .map(|r| r.1.offset + r.1.length)
        .collect();
    let cut = dir.join("cut.warc.zst");
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

/// A dictionary trained from a plain sample file of `count` exchanges.
fn trained(dir: &Path, count: usize) -> Arc<Dictionary> {
    let w = write_sample(&dir.join("train"), Compression::None, u64::MAX, count);
    Arc::new(
        dragnet::warc::train::from_warcs(&w.files)
            .unwrap()
            .expect("enough records for a dictionary"),
    )
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[test]
fn the_writer_starts_each_file_with_the_dictionary_frame_and_compresses_every_record_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let dict = trained(dir.path(), 150);
    // Trained twice from the same records: the same dictionary, byte for byte.
    assert_eq!(*trained(&dir.path().join("again"), 150), *dict);
    assert_ne!(dict.id(), 0);
    assert_eq!(&dict.bytes()[..4], &dictionary::ZDICT_MAGIC);
    let codec = Codec {
        compression: Compression::Zstd,
        dictionary: Some(dict.clone()),
    };
    let w = write_sample(&dir.path().join("dict"), codec, 6_000, 40);
    let plain = write_sample(&dir.path().join("plain"), Compression::Zstd, 6_000, 40);
    assert!(!w.files.is_empty());
    let size = |files: &[std::path::PathBuf]| -> u64 {
        files.iter().map(|f| f.metadata().unwrap().len()).sum()
    };
    for f in &w.files {
        let bytes = std::fs::read(f).unwrap();
        // The dictionary frame first (the dictionary stored zstd-compressed), as the proposal has it.
        assert_eq!(le32(&bytes), 0x184D_2A5D, "{}", f.display());
        assert_eq!(&bytes[8..8 + dict.frame().len() - 8], &dict.frame()[8..]);
        let rd = WarcReader::open(f, verify()).unwrap();
        assert_eq!(rd.dictionary_id(), Some(dict.id()));
        let got = read_all(f).unwrap();
        assert!(!got.is_empty());
        for (h, _, end) in &got {
            assert_eq!(end.block_digest, DigestCheck::Ok, "{h:?}");
            // Every frame names the dictionary.
            let head = &bytes[end.offset as usize..];
            assert_eq!(
                warc::zstd_frame::dictionary_id(head),
                Some(dict.id()),
                "frame at {}",
                end.offset
            );
        }
        // Skipping by frame headers ends where reading does.
        let skipped = skip_all(f).unwrap();
        assert_eq!(skipped.len(), got.len());
        for (a, b) in skipped.iter().zip(&got) {
            assert_eq!((a.1.offset, a.1.length), (b.2.offset, b.2.length));
        }
    }
    // Read at their offsets (the parse stage's way): the file's dictionary, then one frame.
    let mut n = 0;
    for (loc, _, uri, block) in &w.records {
        let path = dir.path().join("dict").join(&loc.file);
        let file = std::fs::File::open(&path).unwrap();
        let d = dictionary::of_file(&file, &path).unwrap().unwrap();
        assert_eq!(d.id(), dict.id());
        let mut z = dictionary::decompressor(Some(&d)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let frame = &bytes[loc.offset as usize..(loc.offset + loc.length) as usize];
        let record = z.decompress(frame, 1 << 20).unwrap();
        assert!(record.ends_with(b"\r\n\r\n"));
        let text = String::from_utf8_lossy(&record);
        assert!(text.contains(&format!("WARC-Target-URI: {uri}")), "{text}");
        assert!(record.windows(block.len().max(1)).any(|w| w == &block[..]) || block.is_empty());
        n += 1;
    }
    assert!(n > 50);
    // Same records: the dictionary made their frames smaller (the dictionary frame, once per
    // file, pays off over a real file's thousands of records, not over these few).
    let records = |w: &crate::warc::Written| -> u64 { w.records.iter().map(|r| r.0.length).sum() };
    assert!(
        records(&w) < records(&plain),
        "{} vs {}",
        records(&w),
        records(&plain)
    );
    assert!(size(&w.files) > records(&w) && size(&plain.files) >= records(&plain));
    // A file without a dictionary frame has none to give.
    let f = std::fs::File::open(&plain.files[0]).unwrap();
    assert!(dictionary::of_file(&f, &plain.files[0]).unwrap().is_none());
}

#[test]
fn too_few_records_train_no_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_sample(dir.path(), Compression::Gzip, u64::MAX, 10);
    assert!(dragnet::warc::train::from_warcs(&w.files)
        .unwrap()
        .is_none());
    assert!(dragnet::warc::train::from_warcs(&[]).unwrap().is_none());
    // Nothing to train from: the writer writes plain frames.
    let w = write_sample(&dir.path().join("z"), Compression::Zstd, u64::MAX, 4);
    let rd = WarcReader::open(&w.files[0], verify()).unwrap();
    assert!(!rd.has_dictionary());
}

#[test]
fn a_dictionary_that_does_not_match_or_is_cut_is_an_error_naming_the_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let a = trained(&dir.path().join("a"), 150);
    // Another dictionary: trained from other records.
    let b = {
        let mut s = dictionary::Samples::new(dictionary::SAMPLE_BUDGET);
        for i in 0..400 {
            s.add(
                format!(
                    "other {i} {}",
                    "payload text of another kind ".repeat(i % 9 + 3)
                )
                .as_bytes(),
            );
        }
        Arc::new(Dictionary::train(&s, 8 << 10).expect("a dictionary"))
    };
    assert_ne!(a.id(), b.id());
    let codec = |d: &Arc<Dictionary>| Codec {
        compression: Compression::Zstd,
        dictionary: Some(d.clone()),
    };
    let w = write_sample(&dir.path().join("w"), codec(&a), u64::MAX, 8);
    let good = std::fs::read(&w.files[0]).unwrap();
    let first = a.frame().len();
    let check = |name: &str, bytes: &[u8], offset: u64, says: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = read_all(&p).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Corrupt { .. }), "{name}: {e:?}");
        assert!(msg.contains(name), "{name}: {msg}");
        assert!(msg.contains(&format!("offset {offset}")), "{name}: {msg}");
        assert!(msg.contains(says), "{name}: {msg}");
    };
    // The frames of dictionary a behind the frame of dictionary b.
    let swapped = [b.frame(), &good[first..]].concat();
    check(
        "swapped.warc.zst",
        &swapped,
        b.frame().len() as u64,
        "does not match",
    );
    // The dictionary frame taken away.
    check("bare.warc.zst", &good[first..], 0, "no dictionary frame");
    // The dictionary frame cut short.
    check("cut.warc.zst", &good[..first / 2], 0, "dictionary frame");
    // A dictionary frame whose compressed dictionary is damaged.
    let mut bad = good.clone();
    bad[first - 6] ^= 0x55;
    check("damaged.warc.zst", &bad, 8, "compressed zstd dictionary");
    // Not gzip, zstd or WARC at all.
    check(
        "neither.warc.zst",
        b"PK\x03\x04 a zip file",
        0,
        "not a WARC file",
    );
}

/// A `.warc.zst` sample (rotating into several files) written with a dictionary trained on
/// 150 records, in `dir/w`: what the third-party readers are given.
fn dictionary_sample(dir: &Path) -> crate::warc::Written {
    let codec = Codec {
        compression: Compression::Zstd,
        dictionary: Some(trained(dir, 150)),
    };
    write_sample(&dir.join("w"), codec, 30_000, 60)
}

/// Whether `cmd --version` runs and succeeds.
fn runs(cmd: &std::ffi::OsStr) -> bool {
    std::process::Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn warcat() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo/bin/warcat"));
    [Some(std::path::PathBuf::from("warcat")), home]
        .into_iter()
        .flatten()
        .find(|p| runs(p.as_os_str()))
}

#[test]
#[ignore = "needs warcat (cargo install warcat --features bin); .ci/run runs it where it is installed"]
fn warcat_reads_every_record_of_a_dictionary_warc_zst() {
    let warcat = warcat();
    crate::common::require(
        "warcat",
        warcat.is_some(),
        "cargo install warcat --locked --features bin",
    );
    let warcat = warcat.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let w = dictionary_sample(dir.path());
    for f in &w.files {
        let ours = read_all(f).unwrap();
        let out = std::process::Command::new(&warcat)
            .args(["--quiet", "list", "--format", "jsonl", "--input"])
            .arg(f)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "warcat list {}: {text}{}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let ids: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| v["WARC-Record-ID"].as_str().unwrap_or_default().to_owned())
            .collect();
        let want: Vec<String> = ours
            .iter()
            .map(|r| r.0.record_id().unwrap().to_owned())
            .collect();
        assert_eq!(ids, want, "{}: {text}", f.display());
        // And every block decodes to the bytes whose digests it checks.
        let out = std::process::Command::new(&warcat)
            .args(["--quiet", "verify", "--format", "jsonl", "--input"])
            .arg(f)
            .output()
            .unwrap();
        let problems = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !problems.contains("digest"),
            "warcat verify {}: {problems}{}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// warcat 0.3.4 cannot be the third-party check: it stops at the end of every `.warc.zst` file,
/// the ones it writes itself included ("unexpected compressed data position <file size>"). So
/// the reference tools do it: the `zstd` command line decompresses every frame of a dictionary
/// file with the dictionary taken from the file's own dictionary frame (as the warc-zstd
/// proposal tells a reader to), and warcio parses and checks every record of the result.
#[test]
#[ignore = "needs the zstd command line and warcio (pip install warcio==1.8.1); .ci/run runs it"]
fn zstd_cli_and_warcio_read_every_record_of_a_dictionary_warc_zst() {
    let have = |cmd: &str| runs(cmd.as_ref());
    crate::common::require("zstd", have("zstd"), "apt-get install zstd");
    crate::common::require("warcio", have("warcio"), "pip install warcio==1.8.1");
    let dir = tempfile::tempdir().unwrap();
    let w = dictionary_sample(dir.path());
    assert!(!w.files.is_empty());
    for f in &w.files {
        let ours = read_all(f).unwrap();
        // The dictionary frame: magic, size, the dictionary (itself a zstd frame here).
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(le32(&bytes), 0x184D_2A5D, "{}", f.display());
        let size = le32(&bytes[4..]) as usize;
        let stored = dir.path().join("stored.dict.zst");
        std::fs::write(&stored, &bytes[8..8 + size]).unwrap();
        let dict_path = dir.path().join("dict");
        let run = |args: &[&std::ffi::OsStr]| {
            let o = std::process::Command::new(args[0])
                .args(&args[1..])
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            o.stdout
        };
        let dict = run(&[
            "zstd".as_ref(),
            "-d".as_ref(),
            "-c".as_ref(),
            stored.as_os_str(),
        ]);
        std::fs::write(&dict_path, dict).unwrap();
        // Every record's frame with that dictionary (the dictionary frame is skippable).
        let plain = run(&[
            "zstd".as_ref(),
            "-d".as_ref(),
            "-c".as_ref(),
            "-D".as_ref(),
            dict_path.as_os_str(),
            f.as_os_str(),
        ]);
        let plain_path = dir.path().join("plain.warc");
        std::fs::write(&plain_path, plain).unwrap();
        let index = run(&["warcio".as_ref(), "index".as_ref(), plain_path.as_os_str()]);
        let index = String::from_utf8_lossy(&index);
        assert_eq!(
            index.lines().count(),
            ours.len(),
            "{}: {index}",
            f.display()
        );
        let want: Vec<String> = ours
            .iter()
            .map(|r| r.0.record_id().unwrap().to_owned())
            .collect();
        let types: Vec<String> = index
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| v["warc-type"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(types.len(), want.len());
        // And warcio checks every digest of it.
        run(&[
            "warcio".as_ref(),
            "check".as_ref(),
            "-v".as_ref(),
            plain_path.as_os_str(),
        ]);
    }
}
