//! runbench: the run-file benchmark driver (external sort and k-way merge of fingerprints).
//!
//! Each phase is a separate process so that `tools/bench/sort_merge.sh` can measure the peak RSS of
//! every phase on its own with `/usr/bin/time -v`. Every phase prints one JSON line on stdout.
//!
//! ```text
//! runbench gen    --n N --seed S --out raw.u64 [--hex-out raw.hex]
//! runbench sort   --input raw.u64 --budget BYTES --out sorted.run --tmp DIR
//! runbench split  --input sorted.run --ways 16 --out-dir parts/
//! runbench merge  --inputs parts/ --out merged.run [--dedup] [--null-sink]
//! runbench read   --input sorted.run [--digest] [--raw-out sorted.u64]
//! runbench hexdigest --input sorted.hex
//! runbench evict  FILE_OR_DIR...
//! runbench gen-batch --seen-n S --seen-seed A --n B --new-frac F --seed C --out batch.u64
//! runbench drum   --seen seen.run --batch batch.run --out-seen seen2.run --out-new new.run
//! runbench digests [--pages 4000] [--body 20000] [--rounds 5]
//! ```
//!
//! Raw fingerprint files are little-endian 8-byte values. MB means 10^6 bytes throughout.
//! Digests: `multiset` is the wrapping sum of xxh3(value) (order-independent, so the generator and
//! the sorted output can be compared); `ordered` is xxh3 over the big-endian keys in file order
//! (so the sorted run, the merged run and GNU sort's output can be compared).

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};
use serde_json::json;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use dragnet::run::{
    fp_key, key_u64, merge, Cursor, KeepAll, KeepFirst, RecordSink, Reducer, RunReader, RunWriter,
    Schema, Sorter, WriterOptions,
};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
#[command(
    name = "runbench",
    about = "Benchmark driver for dragnet run files: external sort and k-way merge"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write N pseudo-random u64 (splitmix64 from SEED) as raw little-endian values.
    Gen {
        #[arg(long)]
        n: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
        /// Also write the same values as 16-digit lowercase hex lines (input for GNU sort).
        #[arg(long)]
        hex_out: Option<PathBuf>,
    },
    /// External sort of a raw u64 file into a FINGERPRINTS run (KeepAll).
    Sort {
        #[arg(long)]
        input: PathBuf,
        /// Sorter memory budget in bytes.
        #[arg(long)]
        budget: usize,
        #[arg(long)]
        out: PathBuf,
        /// Parent directory for spill files.
        #[arg(long)]
        tmp: PathBuf,
    },
    /// Sort a run file's records again, pushed in a scrambled order (a fixed stride through
    /// them), with the sorter's budget and raw-spill limit: the cost of a stage's sort of such
    /// records (a links run: the fetch stage's links sorter) without the stage around it.
    Resort {
        #[arg(long)]
        input: PathBuf,
        #[arg(long)]
        budget: usize,
        /// Raw spill bytes before spills are compressed run files (0: all compressed).
        #[arg(long, default_value_t = u64::MAX)]
        raw_limit: u64,
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        tmp: PathBuf,
    },
    /// Deal a sorted run round-robin into WAYS sorted runs (each spans the whole key space).
    Split {
        #[arg(long)]
        input: PathBuf,
        #[arg(long, default_value_t = 16)]
        ways: usize,
        #[arg(long)]
        out_dir: PathBuf,
    },
    /// k-way merge of every *.run file in a directory into one run.
    Merge {
        #[arg(long)]
        inputs: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Keep the first of equal keys and write a SEEN (strictly increasing) run.
        #[arg(long)]
        dedup: bool,
        /// Discard the merged records instead of writing a run (isolates read+merge cost).
        #[arg(long)]
        null_sink: bool,
    },
    /// Stream-read a run (decode throughput).
    Read {
        #[arg(long)]
        input: PathBuf,
        /// Compute the ordered and multiset digests and first/last keys.
        #[arg(long)]
        digest: bool,
        /// Also write the keys as raw little-endian u64 (reference input for the zstd CLI).
        #[arg(long)]
        raw_out: Option<PathBuf>,
    },
    /// Ordered digest of a file of hex lines (GNU sort's output), to compare with `read --digest`.
    Hexdigest {
        #[arg(long)]
        input: PathBuf,
    },
    /// fsync and drop files (or every file in directories) from the page cache.
    Evict { paths: Vec<PathBuf> },
    /// Write B incoming fingerprints: a fraction F fresh (seed C), the rest drawn uniformly, with
    /// repeats, from the S values `gen --n S --seed A` writes (splitmix64 is counter-based, so
    /// any of them can be computed directly).
    GenBatch {
        #[arg(long)]
        seen_n: u64,
        #[arg(long, default_value_t = 1)]
        seen_seed: u64,
        #[arg(long)]
        n: u64,
        #[arg(long, default_value_t = 0.2)]
        new_frac: f64,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// DRUM check+update: merge a seen run with a sorted batch run, writing the new seen set and
    /// the new fingerprints (`dragnet::merge::check_update`).
    Drum {
        #[arg(long)]
        seen: PathBuf,
        #[arg(long)]
        batch: PathBuf,
        #[arg(long)]
        out_seen: PathBuf,
        #[arg(long)]
        out_new: PathBuf,
    },
    /// A response record's two SHA-1 digests (block: head and body; payload: body) over PAGES
    /// synthetic responses of BODY bytes: one digest after the other (`Sha1Digest`, two passes)
    /// against `dragnet::warc::digest::block_and_payload` (one pass, two lanes where the CPU has
    /// the SHA extensions). Best of ROUNDS, MB/s of record bytes.
    Digests {
        #[arg(long, default_value_t = 4000)]
        pages: usize,
        #[arg(long, default_value_t = 20000)]
        body: usize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Gen {
            n,
            seed,
            out,
            hex_out,
        } => gen(n, seed, &out, hex_out.as_deref()),
        Cmd::Sort {
            input,
            budget,
            out,
            tmp,
        } => sort(&input, budget, &out, &tmp),
        Cmd::Resort {
            input,
            budget,
            raw_limit,
            out,
            tmp,
        } => resort(&input, budget, raw_limit, &out, &tmp),
        Cmd::Split {
            input,
            ways,
            out_dir,
        } => split(&input, ways, &out_dir),
        Cmd::Merge {
            inputs,
            out,
            dedup,
            null_sink,
        } => merge_cmd(&inputs, &out, dedup, null_sink),
        Cmd::Read {
            input,
            digest,
            raw_out,
        } => read(&input, digest, raw_out.as_deref()),
        Cmd::Digests {
            pages,
            body,
            rounds,
        } => digests(pages, body, rounds),
        Cmd::Hexdigest { input } => hexdigest(&input),
        Cmd::Evict { paths } => evict(&paths),
        Cmd::GenBatch {
            seen_n,
            seen_seed,
            n,
            new_frac,
            seed,
            out,
        } => gen_batch(seen_n, seen_seed, n, new_frac, seed, &out),
        Cmd::Drum {
            seen,
            batch,
            out_seen,
            out_new,
        } => drum(&seen, &batch, &out_seen, &out_new),
    };
    if let Err(e) = r {
        eprintln!("runbench: {e}");
        std::process::exit(1);
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn multiset_term(v: u64) -> u64 {
    xxh3_64(&v.to_le_bytes())
}

/// Peak RSS of this process so far, in KiB (getrusage).
fn max_rss_kb() -> i64 {
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) == 0 {
            ru.ru_maxrss
        } else {
            -1
        }
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn rate(x: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        x / secs
    } else {
        0.0
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn emit(v: serde_json::Value) {
    println!("{v}");
}

fn gen(n: u64, seed: u64, out: &Path, hex_out: Option<&Path>) -> Res<()> {
    let t = Instant::now();
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out)?);
    let mut hw = match hex_out {
        Some(p) => Some(BufWriter::with_capacity(1 << 20, File::create(p)?)),
        None => None,
    };
    let mut state = seed;
    let mut multiset = 0u64;
    let mut line = [b'\n'; 17];
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for _ in 0..n {
        let v = splitmix64(&mut state);
        w.write_all(&v.to_le_bytes())?;
        multiset = multiset.wrapping_add(multiset_term(v));
        if let Some(h) = &mut hw {
            for (i, c) in line[..16].iter_mut().enumerate() {
                *c = HEX[((v >> (60 - 4 * i)) & 0xf) as usize];
            }
            h.write_all(&line)?;
        }
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    if let Some(h) = hw {
        h.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    let secs = t.elapsed().as_secs_f64();
    emit(json!({
        "phase": "gen",
        "records": n,
        "seed": seed,
        "bytes": n * 8,
        "multiset": format!("{multiset:016x}"),
        "seconds": round3(secs),
    }));
    Ok(())
}

fn resort(input: &Path, budget: usize, raw_limit: u64, out: &Path, tmp: &Path) -> Res<()> {
    let mut r = RunReader::open(input)?;
    let schema = match r.header().schema_id {
        1 | 4 => Schema::FINGERPRINTS,
        5 => Schema::FETCHED,
        7 => Schema::LINKS,
        8 => Schema::PAGES,
        id => {
            return Err(format!(
                "{}: schema {id}: resort takes seen, fingerprints, fetched, links or pages runs",
                input.display()
            )
            .into())
        }
    };
    let mut recs = Vec::new();
    while r.advance()? {
        recs.push((r.key().to_vec(), r.payload().to_vec()));
    }
    let t = Instant::now();
    let mut sorter = Sorter::new(schema, budget, tmp)?.raw_spill_limit(raw_limit);
    // A stride coprime with the count visits every record once, far from key order.
    let n = recs.len().max(1);
    let stride = (0..)
        .map(|i| 7919 + i)
        .find(|s| gcd(*s, n) == 1)
        .unwrap_or(1);
    for i in 0..recs.len() {
        let (k, p) = &recs[i * stride % n];
        sorter.push(k, p)?;
    }
    let mut w = RunWriter::create(out, schema)?;
    let stats = sorter.finish(&mut KeepAll, &mut w)?;
    let summary = w.finish()?;
    emit(json!({
        "phase": "resort",
        "records": recs.len(),
        "budget": budget,
        "raw_limit": raw_limit,
        "spills": stats.spills,
        "spill_bytes": stats.spill_bytes,
        "out_bytes": summary.bytes,
        "secs": t.elapsed().as_secs_f64(),
    }));
    Ok(())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn sort(input: &Path, budget: usize, out: &Path, tmp: &Path) -> Res<()> {
    let t = Instant::now();
    let mut sorter = Sorter::new(Schema::FINGERPRINTS, budget, tmp)?;
    let mut r = BufReader::with_capacity(1 << 20, File::open(input)?);
    let mut buf = vec![0u8; 1 << 20];
    let mut records = 0u64;
    let mut carry = 0usize;
    loop {
        let got = r.read(&mut buf[carry..])?;
        if got == 0 {
            if carry != 0 {
                return Err(format!("{}: length is not a multiple of 8", input.display()).into());
            }
            break;
        }
        let have = carry + got;
        let whole = have / 8 * 8;
        for c in buf[..whole].chunks_exact(8) {
            let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            sorter.push(&fp_key(v), &[])?;
        }
        records += (whole / 8) as u64;
        buf.copy_within(whole..have, 0);
        carry = have - whole;
    }
    let push_secs = t.elapsed().as_secs_f64();
    let mut w = RunWriter::create(out, Schema::FINGERPRINTS)?;
    let stats = sorter.finish(&mut KeepAll, &mut w)?;
    let summary = w.finish()?;
    let secs = t.elapsed().as_secs_f64();
    if summary.records != records {
        return Err(format!("sorted {} records, wrote {}", records, summary.records).into());
    }
    emit(json!({
        "phase": "sort",
        "records": records,
        "budget": budget,
        "seconds": round3(secs),
        "push_seconds": round3(push_secs),
        "finish_seconds": round3(secs - push_secs),
        "records_per_s": rate(records as f64, secs).round(),
        "input_mb_per_s": round3(rate(mb(records * 8), secs)),
        "out_bytes": summary.bytes,
        "out_blocks": summary.blocks,
        "bytes_per_fp": round3(summary.bytes as f64 / records.max(1) as f64),
        "spills": stats.spills,
        "spill_bytes": stats.spill_bytes,
        "spill_bytes_per_fp": round3(stats.spill_bytes as f64 / records.max(1) as f64),
        "merge_passes": stats.merge_passes,
        "max_rss_kb": max_rss_kb(),
    }));
    Ok(())
}

fn split(input: &Path, ways: usize, out_dir: &Path) -> Res<()> {
    if ways == 0 {
        return Err("--ways must be at least 1".into());
    }
    let t = Instant::now();
    fs::create_dir_all(out_dir)?;
    let mut r = RunReader::open_expect(input, Schema::FINGERPRINTS)?;
    let mut ws = (0..ways)
        .map(|i| {
            RunWriter::create(
                &out_dir.join(format!("part-{i:03}.run")),
                Schema::FINGERPRINTS,
            )
        })
        .collect::<dragnet::Result<Vec<_>>>()?;
    let mut i = 0usize;
    let mut n = 0u64;
    while r.advance()? {
        ws[i].push(r.key(), &[])?;
        i += 1;
        if i == ways {
            i = 0;
        }
        n += 1;
    }
    let mut bytes = 0u64;
    for w in ws {
        bytes += w.finish()?.bytes;
    }
    let secs = t.elapsed().as_secs_f64();
    emit(json!({
        "phase": "split",
        "records": n,
        "ways": ways,
        "out_bytes": bytes,
        "bytes_per_fp": round3(bytes as f64 / n.max(1) as f64),
        "seconds": round3(secs),
        "max_rss_kb": max_rss_kb(),
    }));
    Ok(())
}

/// A sink that only counts (merge without the output writer).
struct NullSink {
    records: u64,
    xor: u64,
}

impl RecordSink for NullSink {
    fn push(&mut self, key: &[u8], _payload: &[u8]) -> dragnet::Result<()> {
        self.records += 1;
        self.xor ^= key_u64(key);
        Ok(())
    }
}

fn run_files(dir: &Path) -> Res<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "run") {
            v.push(p);
        }
    }
    v.sort();
    if v.is_empty() {
        return Err(format!("{}: no *.run files", dir.display()).into());
    }
    Ok(v)
}

fn merge_cmd(dir: &Path, out: &Path, dedup: bool, null_sink: bool) -> Res<()> {
    let files = run_files(dir)?;
    let in_bytes: u64 = files
        .iter()
        .map(|p| fs::metadata(p).map(|m| m.len()))
        .sum::<std::io::Result<u64>>()?;
    let t = Instant::now();
    let inputs = files
        .iter()
        .map(|p| RunReader::open_expect(p, Schema::FINGERPRINTS))
        .collect::<dragnet::Result<Vec<_>>>()?;
    let mut keep_all = KeepAll;
    let mut keep_first = KeepFirst;
    let reducer: &mut dyn Reducer = if dedup {
        &mut keep_first
    } else {
        &mut keep_all
    };
    let (records_in, records_out, out_bytes) = if null_sink {
        let mut sink = NullSink { records: 0, xor: 0 };
        let n = merge(inputs, reducer, &mut sink)?;
        std::hint::black_box(sink.xor);
        (n, sink.records, 0)
    } else {
        let schema = if dedup {
            Schema::SEEN
        } else {
            Schema::FINGERPRINTS
        };
        let mut w = RunWriter::create(out, schema)?;
        let n = merge(inputs, reducer, &mut w)?;
        let s = w.finish()?;
        (n, s.records, s.bytes)
    };
    let secs = t.elapsed().as_secs_f64();
    emit(json!({
        "phase": if null_sink { "merge-null" } else if dedup { "merge-dedup" } else { "merge" },
        "ways": files.len(),
        "records_in": records_in,
        "records_out": records_out,
        "seconds": round3(secs),
        "records_per_s": rate(records_in as f64, secs).round(),
        "in_bytes": in_bytes,
        "compressed_in_mb_per_s": round3(rate(mb(in_bytes), secs)),
        "raw_mb_per_s": round3(rate(mb(records_in * 8), secs)),
        "out_bytes": out_bytes,
        "bytes_per_fp": round3(out_bytes as f64 / records_out.max(1) as f64),
        "max_rss_kb": max_rss_kb(),
    }));
    Ok(())
}

fn read(input: &Path, digest: bool, raw_out: Option<&Path>) -> Res<()> {
    let bytes = fs::metadata(input)?.len();
    let t = Instant::now();
    let mut r = RunReader::open(input)?;
    let mut raw = match raw_out {
        Some(p) => Some(BufWriter::with_capacity(1 << 20, File::create(p)?)),
        None => None,
    };
    let mut n = 0u64;
    let mut ordered = Xxh3::new();
    let mut multiset = 0u64;
    let mut first = None;
    let mut last = 0u64;
    let mut xor = 0u64;
    while r.advance()? {
        let key = r.key();
        n += 1;
        let v = key_u64(key);
        xor ^= v;
        if digest {
            ordered.update(key);
            multiset = multiset.wrapping_add(multiset_term(v));
            first.get_or_insert(v);
            last = v;
        }
        if let Some(w) = &mut raw {
            w.write_all(&v.to_le_bytes())?;
        }
    }
    if let Some(w) = raw {
        w.into_inner().map_err(|e| e.into_error())?;
    }
    std::hint::black_box(xor);
    let secs = t.elapsed().as_secs_f64();
    let mut v = json!({
        "phase": "read",
        "records": n,
        "blocks": r.blocks(),
        "in_bytes": bytes,
        "bytes_per_fp": round3(bytes as f64 / n.max(1) as f64),
        "seconds": round3(secs),
        "records_per_s": rate(n as f64, secs).round(),
        "compressed_mb_per_s": round3(rate(mb(bytes), secs)),
        "raw_mb_per_s": round3(rate(mb(n * 8), secs)),
        "max_rss_kb": max_rss_kb(),
    });
    if digest {
        v["ordered"] = json!(format!("{:016x}", ordered.digest()));
        v["multiset"] = json!(format!("{multiset:016x}"));
        v["first"] = json!(format!("{:016x}", first.unwrap_or(0)));
        v["last"] = json!(format!("{last:016x}"));
    }
    emit(v);
    Ok(())
}

fn hexdigest(input: &Path) -> Res<()> {
    let t = Instant::now();
    let mut r = BufReader::with_capacity(1 << 20, File::open(input)?);
    let mut ordered = Xxh3::new();
    let mut n = 0u64;
    let mut prev: Option<u64> = None;
    let mut line = Vec::with_capacity(32);
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let s = std::str::from_utf8(line.strip_suffix(b"\n").unwrap_or(&line))?;
        let v = u64::from_str_radix(s, 16)?;
        if prev.is_some_and(|p| p > v) {
            return Err(format!("{}: line {} out of order", input.display(), n + 1).into());
        }
        prev = Some(v);
        ordered.update(&fp_key(v));
        n += 1;
    }
    emit(json!({
        "phase": "hexdigest",
        "records": n,
        "ordered": format!("{:016x}", ordered.digest()),
        "seconds": round3(t.elapsed().as_secs_f64()),
    }));
    Ok(())
}

fn evict(paths: &[PathBuf]) -> Res<()> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            for e in fs::read_dir(p)? {
                let q = e?.path();
                if q.is_file() {
                    files.push(q);
                }
            }
        } else {
            files.push(p.clone());
        }
    }
    let mut bytes = 0u64;
    for p in &files {
        let f = File::open(p)?;
        f.sync_all()?;
        bytes += f.metadata()?.len();
        use std::os::unix::io::AsRawFd;
        // SAFETY: plain syscall on a descriptor we own.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(format!("{}: posix_fadvise failed ({rc})", p.display()).into());
        }
    }
    emit(json!({"phase": "evict", "files": files.len(), "bytes": bytes}));
    Ok(())
}

/// The `i`-th value (0-based) `gen` writes for `seed`.
fn splitmix_at(seed: u64, i: u64) -> u64 {
    let mut state = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    splitmix64(&mut state)
}

fn gen_batch(seen_n: u64, seen_seed: u64, n: u64, new_frac: f64, seed: u64, out: &Path) -> Res<()> {
    let t = Instant::now();
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out)?);
    let mut rng = seed ^ 0x5EED_5EED_5EED_5EED;
    let mut fresh = seed.wrapping_mul(0x1000_0000_0000_0001);
    let threshold = (new_frac.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let mut fresh_n = 0u64;
    for _ in 0..n {
        let v = if splitmix64(&mut rng) < threshold || seen_n == 0 {
            fresh_n += 1;
            splitmix64(&mut fresh)
        } else {
            splitmix_at(seen_seed, splitmix64(&mut rng) % seen_n)
        };
        w.write_all(&v.to_le_bytes())?;
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    emit(json!({
        "phase": "gen-batch",
        "records": n,
        "fresh": fresh_n,
        "seconds": round3(t.elapsed().as_secs_f64()),
    }));
    Ok(())
}

fn drum(seen: &Path, batch: &Path, out_seen: &Path, out_new: &Path) -> Res<()> {
    let t = Instant::now();
    let in_bytes = fs::metadata(seen)?.len() + fs::metadata(batch)?.len();
    // As `dragnet merge` does: the outputs are compressed and written on threads of their own
    // while this one merges, and all four files bypass the page cache.
    let mut opts = WriterOptions {
        background: true,
        direct: true,
        ..WriterOptions::for_schema(Schema::SEEN)
    };
    // For trying other zstd levels on the outputs (docs/BENCHMARKS.md, DRUM).
    if let Some(level) = std::env::var("DRUM_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        opts.level = level;
    }
    let mut os = RunWriter::with_options(out_seen, Schema::SEEN, opts)?;
    let mut on = RunWriter::with_options(out_new, Schema::SEEN, opts)?;
    let st = dragnet::merge::check_update(
        RunReader::open_direct(seen)?,
        RunReader::open_direct(batch)?,
        &mut os,
        &mut on,
    )?;
    let out_bytes = os.finish()?.bytes + on.finish()?.bytes;
    let secs = t.elapsed().as_secs_f64();
    emit(json!({
        "phase": "drum",
        "seen": st.seen,
        "incoming": st.incoming,
        "new": st.new,
        "seconds": round3(secs),
        "records_per_s": rate((st.seen + st.incoming) as f64, secs).round(),
        "ns_per_incoming": round3(secs * 1e9 / st.incoming.max(1) as f64),
        "in_mb_per_s": round3(rate(mb(in_bytes), secs)),
        "in_bytes": in_bytes,
        "out_bytes": out_bytes,
        "max_rss_kb": max_rss_kb(),
    }));
    Ok(())
}

fn digests(pages: usize, body: usize, rounds: usize) -> Res<()> {
    use dragnet::warc::digest::{block_and_payload, Sha1Digest};
    let head = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\n\
        Content-Length: 20000\r\nLast-Modified: Mon, 30 Nov 2026 12:00:00 GMT\r\n\
        Connection: keep-alive\r\nETag: \"6761a0c8-4e20\"\r\nAccept-Ranges: bytes\r\n\r\n";
    // Distinct bytes for every page (splitmix64), so no page is hashed from a warm copy alone.
    let mut x = 1u64;
    let bodies: Vec<Vec<u8>> = (0..pages)
        .map(|_| {
            (0..body)
                .map(|_| {
                    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                    (x >> 56) as u8
                })
                .collect()
        })
        .collect();
    let bytes = (pages * (head.len() + body)) as f64;
    let (mut two_passes, mut one_pass) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        for b in &bodies {
            let mut block = Sha1Digest::new();
            block.update(head);
            block.update(b);
            let mut payload = Sha1Digest::new();
            payload.update(b);
            std::hint::black_box((block.value(), payload.value()));
        }
        two_passes = two_passes.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for b in &bodies {
            std::hint::black_box(block_and_payload(&[head, b], true));
        }
        one_pass = one_pass.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        json!({
            "phase": "digests", "pages": pages, "body_bytes": body,
            "two_passes_mb_s": bytes / two_passes / 1e6,
            "one_pass_mb_s": bytes / one_pass / 1e6,
            "speedup": two_passes / one_pass,
        })
    );
    Ok(())
}
