//! What each way of compressing WARC records costs, on real records: every record of the given
//! WARC files (any compression) compressed on its own, as the writer does, by zlib-rs (flate2),
//! libdeflate at several levels and the writer's own gzip members ([`GzipMembers`]), and by
//! zstd with and without a dictionary trained from the records of other files. CPU is this
//! thread's (getrusage), the best of `REPS` runs.
//!
//!   cargo run --release --example warc_codecs -- [--train FILES... --] FILES...
//!
//! `--train` names the files the dictionary is trained from (a partition's files of the cycle
//! before, as the fetch does); without it, the first records of FILES. `docs/BENCHMARKS.md`,
//! "WARC compression", has the numbers and the commands that made the inputs.

use std::io::Read;
use std::path::PathBuf;

use dragnet::warc::dictionary::{Dictionary, Samples, DICT_SIZE, SAMPLE_BUDGET};
use dragnet::warc::{GzipMembers, ReaderOptions, RecordType, WarcReader};

fn cpu() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// Every record of `files`, as the writer compresses it (header, block, CRLF CRLF), and how many
/// are responses (pages).
fn records(files: &[PathBuf], max: usize) -> (Vec<Vec<u8>>, usize) {
    let mut out = Vec::new();
    let (mut pages, mut total) = (0, 0);
    for f in files {
        let mut rd = WarcReader::open(f, ReaderOptions::default()).expect("open");
        while let Some(mut rec) = rd.next_record().expect("record") {
            let mut r = rec.header().to_bytes();
            if rec.header().record_type() == RecordType::Response {
                pages += 1;
            }
            rec.read_to_end(&mut r).expect("block");
            r.extend_from_slice(b"\r\n\r\n");
            total += r.len();
            out.push(r);
            if total >= max {
                return (out, pages);
            }
        }
    }
    (out, pages)
}

type Codec<'a> = Box<dyn FnMut(&[u8], &mut Vec<u8>) -> usize + 'a>;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut train = Vec::new();
    if args.first().map(String::as_str) == Some("--train") {
        let end = args
            .iter()
            .position(|a| a == "--")
            .expect("--train FILES... --");
        train = args[1..end].iter().map(PathBuf::from).collect();
        args.drain(..=end);
    }
    let files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let max: usize = std::env::var("MAX_MB")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(400)
        << 20;
    let (recs, pages) = records(&files, max);
    let input: usize = recs.iter().map(Vec::len).sum();
    let t0 = cpu();
    let mut samples = Samples::new(SAMPLE_BUDGET);
    let sample_recs = if train.is_empty() {
        recs.clone()
    } else {
        records(&train, SAMPLE_BUDGET * 64).0
    };
    for r in &sample_recs {
        let head = &r[..r.len().min(dragnet::warc::dictionary::SAMPLE_PER_RECORD)];
        if !samples.add(head) {
            break;
        }
    }
    let dict = Dictionary::train(&samples, DICT_SIZE).expect("a dictionary");
    let train_cpu = cpu() - t0;
    println!(
        "input: {} records, {pages} responses, {:.1} MB; {} files; dictionary {} bytes (frame {}), \
         trained from {} samples in {train_cpu:.3} CPU-s",
        recs.len(),
        input as f64 / 1e6,
        files.len(),
        dict.bytes().len(),
        dict.frame().len(),
        samples.len()
    );
    let mut codecs: Vec<(String, Codec)> = Vec::new();
    codecs.push((
        "gzip zlib-rs 6, new GzEncoder a record (before)".into(),
        Box::new(|r: &[u8], out: &mut Vec<u8>| {
            use std::io::Write;
            out.clear();
            let mut gz = flate2::GzBuilder::new().write(&mut *out, flate2::Compression::new(6));
            gz.write_all(r).unwrap();
            gz.finish().unwrap();
            out.len()
        }),
    ));
    for level in [1u32, 6] {
        let mut c = flate2::Compress::new_gzip(flate2::Compression::new(level), 15);
        codecs.push((
            format!("gzip zlib-rs {level}, one context reused"),
            Box::new(move |r: &[u8], out: &mut Vec<u8>| {
                c.reset();
                out.clear();
                out.reserve(r.len() + r.len() / 1000 + 64);
                let before = c.total_out();
                loop {
                    let st = c
                        .compress_vec(
                            &r[c.total_in() as usize..],
                            out,
                            flate2::FlushCompress::Finish,
                        )
                        .unwrap();
                    if st == flate2::Status::StreamEnd {
                        break;
                    }
                    out.reserve(out.capacity().max(4096));
                }
                (c.total_out() - before) as usize
            }),
        ));
    }
    for level in [1, 3, 6, 9] {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
        codecs.push((
            format!("gzip libdeflate {level}"),
            Box::new(move |r: &[u8], out: &mut Vec<u8>| {
                let b = c.gzip_compress_bound(r.len());
                if out.len() < b {
                    out.resize(b, 0);
                }
                c.gzip_compress(r, out).unwrap()
            }),
        ));
    }
    // What the writer does at its default level: small records through Huffman codes built
    // once, the rest through libdeflate 1.
    let mut members = GzipMembers::new(dragnet::warc::writer::GZIP_LEVEL).unwrap();
    codecs.push((
        "gzip libdeflate 1, small records' prebuilt code (the writer)".into(),
        Box::new(move |r: &[u8], _out: &mut Vec<u8>| members.member(&[r]).unwrap().len()),
    ));
    for (level, with) in [(1, false), (3, false), (1, true), (3, true)] {
        let d = if with { dict.bytes() } else { &[][..] };
        let mut c = zstd::bulk::Compressor::with_dictionary(level, d).unwrap();
        c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .unwrap();
        let name = if with {
            "with dictionary"
        } else {
            "no dictionary"
        };
        codecs.push((
            format!("zstd {level}, {name}"),
            Box::new(move |r: &[u8], out: &mut Vec<u8>| {
                out.clear();
                out.reserve(zstd::zstd_safe::compress_bound(r.len()));
                c.compress_to_buffer(r, out).unwrap()
            }),
        ));
    }
    println!(
        "| codec | MB out | input / output | bytes per page | CPU s | CPU ns per input byte | CPU ms per 1,000 pages |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut out = Vec::new();
    for (name, mut f) in codecs {
        let mut best = f64::MAX;
        let mut bytes = 0usize;
        for _ in 0..reps {
            let t = cpu();
            bytes = recs.iter().map(|r| f(r, &mut out)).sum();
            best = best.min(cpu() - t);
        }
        if name.contains("with dictionary") {
            bytes += dict.frame().len() * files.len();
        }
        println!(
            "| {name} | {:.1} | {:.2} | {:.0} | {best:.2} | {:.2} | {:.0} |",
            bytes as f64 / 1e6,
            input as f64 / bytes as f64,
            bytes as f64 / pages.max(1) as f64,
            best * 1e9 / input as f64,
            best * 1e6 / pages.max(1) as f64
        );
    }
}
