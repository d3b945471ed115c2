//! `dragnet warc convert` (issue 32, point 3): every record byte for byte the same once
//! decompressed, whichever way a file goes (.warc.gz <-> .warc.zst, with a warc-zstd
//! dictionary); a crawl converted in place keeps working (fetch results, CDXJ indexes,
//! markers, `dragnet check crawl`, exports); a conversion killed at any storage operation and
//! run again ends byte for byte where an uninterrupted one ends; bad input is named by file and
//! offset and changes nothing.

use crate::common;

use std::io::Read;
use std::os::unix::fs::FileExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use dragnet::warc::{Compression, ReaderOptions, WarcReader};

/// A crawl of a small web with the default configuration (2 partitions, 2 cycles).
fn crawl() -> common::Crawl {
    let (web, server) = common::small_web(61, 4, 10);
    let cfg = common::websim_config(2, 2);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let opts = common::cycles(2);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    server.stop();
    c
}

/// The dictionary of a `.warc.zst` file's dictionary frame, if it has one.
fn dictionary_of(path: &Path) -> Option<Vec<u8>> {
    let data = std::fs::read(path).unwrap();
    if data.len() < 8 || data[..4] != [0x5d, 0x2a, 0x4d, 0x18] {
        return None;
    }
    let n = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    let d = data[8..8 + n].to_vec();
    Some(if d.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::stream::decode_all(&d[..]).unwrap()
    } else {
        d
    })
}

/// Every record of a WARC file, decompressed from its own member or frame alone.
fn records(path: &Path) -> Vec<Vec<u8>> {
    let mut ends = Vec::new();
    let mut rd = WarcReader::open(path, ReaderOptions::default()).unwrap();
    let kind = rd.compression();
    while let Some(r) = rd.next_record().unwrap() {
        let e = r.finish().unwrap();
        ends.push((e.offset, e.length));
    }
    let dict = dictionary_of(path);
    let f = std::fs::File::open(path).unwrap();
    ends.iter()
        .map(|&(off, len)| {
            let mut raw = vec![0; len as usize];
            f.read_exact_at(&mut raw, off).unwrap();
            let mut out = Vec::new();
            match kind {
                Compression::Gzip => {
                    flate2::read::GzDecoder::new(&raw[..])
                        .read_to_end(&mut out)
                        .unwrap();
                }
                Compression::Zstd => {
                    let mut d = match &dict {
                        Some(d) => zstd::bulk::Decompressor::with_dictionary(d).unwrap(),
                        None => zstd::bulk::Decompressor::new().unwrap(),
                    };
                    out = d.decompress(&raw, 64 << 20).unwrap();
                }
                Compression::None => out = raw,
            }
            out
        })
        .collect()
}

/// The crawl's WARC files by cycle and name without its compression suffix, with their
/// records.
fn crawl_records(c: &common::Crawl) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    for cy in c.dir.cycles() {
        let Ok(rd) = std::fs::read_dir(c.dir.warc_dir(cy)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                !n.starts_with('.') && !n.contains(".wet") && Compression::from_name(&n).is_some()
            })
            .collect();
        files.sort();
        for f in files {
            let n = f.file_name().unwrap().to_string_lossy().into_owned();
            let stem = n.split(".warc").next().unwrap().to_string();
            out.push((format!("{cy:06}/{stem}"), records(&f)));
        }
    }
    out
}

fn suffixes(c: &common::Crawl) -> Vec<String> {
    let mut v = Vec::new();
    for cy in c.dir.cycles() {
        for e in std::fs::read_dir(c.dir.warc_dir(cy)).into_iter().flatten() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if !n.contains(".wet") {
                v.push(n.split_once(".warc").unwrap().1.to_string());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

fn run(args: &[&str]) -> std::process::Output {
    common::dragnet(args)
}

/// Each fetch result with a record points at a record of its URL.
fn fetch_results_point_at_their_records(c: &common::Crawl) -> usize {
    let mut n = 0;
    for cy in c.dir.cycles() {
        for p in 0..2 {
            use dragnet::run::{Cursor, RunReader, Schema};
            let Ok(mut r) = RunReader::open_expect(&c.dir.fetched(cy, p), Schema::FETCHED) else {
                continue;
            };
            while r.advance().unwrap() {
                let fr = dragnet::records::FetchResult::decode(r.payload()).unwrap();
                if fr.warc_file.is_empty() {
                    continue;
                }
                let path = c.dir.warc_dir(cy).join(&fr.warc_file);
                let f = std::fs::File::open(&path).unwrap();
                let mut raw = vec![0; fr.warc_length as usize];
                f.read_exact_at(&mut raw, fr.warc_offset).unwrap();
                let dict = dictionary_of(&path);
                let mut bytes = dict.map(|d| {
                    let mut v = Vec::new();
                    v.extend_from_slice(&[0x5d, 0x2a, 0x4d, 0x18]);
                    v.extend_from_slice(&(d.len() as u32).to_le_bytes());
                    v.extend_from_slice(&d);
                    v
                });
                let one = match bytes.as_mut() {
                    Some(v) => {
                        v.extend_from_slice(&raw);
                        v.clone()
                    }
                    None => raw,
                };
                let mut rd = WarcReader::new(&one[..], &path, ReaderOptions::default()).unwrap();
                let rec = rd.next_record().unwrap().expect("a record at the offset");
                assert_eq!(rec.header().target_uri(), Some(fr.url.as_str()), "{path:?}");
                n += 1;
            }
        }
    }
    n
}

#[test]
fn a_crawl_converted_in_place_keeps_every_record_and_works() {
    let c = crawl();
    let root = c.dir.root().to_str().unwrap().to_string();
    let before = crawl_records(&c);
    assert!(before.len() >= 4, "{} WARC files", before.len());
    let pages = |tag: &str| {
        let out = c.tmp.path().join(format!("pages-{tag}.jsonl"));
        common::ok(run(&[
            "export",
            "--what",
            "pages",
            "--format",
            "jsonl",
            "--out",
            out.to_str().unwrap(),
            &root,
        ]));
        std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                for k in ["warc_file", "warc_offset", "warc_length"] {
                    v.as_object_mut().unwrap().remove(k);
                }
                v.to_string()
            })
            .collect::<Vec<_>>()
    };
    let pages_before = pages("before");
    let lines = |c: &common::Crawl| {
        std::fs::read_to_string(dragnet::ops::index::crawl_index(&c.dir))
            .unwrap()
            .lines()
            .count()
    };
    let index_lines = lines(&c);
    for (i, (to, suffix)) in [("zst", ".zst"), ("gz", ".gz"), ("zst", ".zst")]
        .into_iter()
        .enumerate()
    {
        common::ok(run(&["warc", "convert", "--crawl", &root, "--to", to]));
        assert_eq!(suffixes(&c), vec![suffix.to_string()], "after --to {to}");
        assert_eq!(crawl_records(&c), before, "records after --to {to}");
        let chk = common::ok(run(&["check", "crawl", &root]));
        let text = String::from_utf8_lossy(&chk.stdout).into_owned();
        assert!(!text.contains("unknown"), "{text}");
        assert!(fetch_results_point_at_their_records(&c) >= 20);
        assert_eq!(lines(&c), index_lines);
        // Every line of the crawl's index leads to a record of its URL.
        let index = std::fs::read_to_string(dragnet::ops::index::crawl_index(&c.dir)).unwrap();
        for l in index.lines() {
            let j: serde_json::Value = serde_json::from_str(&l[l.find(" {").unwrap()..]).unwrap();
            let path = c.dir.cycles_root().join(j["filename"].as_str().unwrap());
            assert!(path.exists(), "{l}");
            assert!(
                j["filename"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!(".warc{suffix}")),
                "{l}"
            );
        }
        assert_eq!(pages(&format!("{i}-{to}")), pages_before);
    }
    // Nothing left to do: a run again changes nothing.
    let snap = common::snapshot(c.dir.root());
    let o = common::ok(run(&["warc", "convert", "--crawl", &root, "--to", "zst"]));
    assert!(
        common::out_text(&o).contains("0 partitions converted"),
        "{}",
        common::out_text(&o)
    );
    assert_eq!(common::snapshot(c.dir.root()), snap);
}

/// The relative paths and bytes of a crawl directory (the lock aside).
fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    common::snapshot(root)
        .into_iter()
        .map(|(p, b)| (p.strip_prefix(root).unwrap().to_path_buf(), b))
        .filter(|(p, _)| p != Path::new("lock"))
        .collect()
}

#[test]
fn a_conversion_killed_anywhere_and_run_again_ends_as_one_never_killed() {
    let c = crawl();
    let scratch = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let to = scratch.path().join(name);
        common::copy_dir(c.dir.root(), &to);
        to
    };
    let convert = |dir: &Path, env: &[(&str, String)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dragnet"));
        cmd.args(["warc", "convert", "--to", "zst", "--crawl"])
            .arg(dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let whole = copy("whole");
    let log = scratch.path().join("ops.log");
    common::ok(convert(
        &whole,
        &[("DRAGNET_FAULT_LOG", log.display().to_string())],
    ));
    let want = tree(&whole);
    let ops = std::fs::read_to_string(&log).unwrap().lines().count() as u64;
    assert!(ops > 20, "{ops} storage operations");
    // Spread over the run, and the operations around the first journal.
    let journal = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .position(|l| l.contains("p0000.convert"))
        .map_or(ops / 2, |i| i as u64 + 1);
    let mut points: Vec<u64> = (1..=6).map(|k| k * ops / 7).collect();
    points.extend([
        journal.saturating_sub(1),
        journal,
        journal + 1,
        journal + 3,
        ops,
    ]);
    points.sort_unstable();
    points.dedup();
    let original = crawl_records(&c);
    let mut killed = 0;
    for n in points {
        let dir = copy(&format!("kill-{n}"));
        let o = convert(&dir, &[("DRAGNET_FAULT", format!("{n}:kill"))]);
        if o.status.signal() == Some(9) {
            killed += 1;
        }
        let again = convert(&dir, &[]);
        assert!(
            again.status.success(),
            "kill at {n}: {}",
            common::out_text(&again)
        );
        assert!(tree(&dir) == want, "killed at operation {n} of {ops}, then run again: not the crawl an uninterrupted conversion makes");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(killed >= 5, "{killed} kills landed");
    // And the original crawl is as it was (its records, now in .zst, the same).
    let back = common::Crawl {
        tmp: tempfile::tempdir().unwrap(),
        dir: dragnet::crawl::CrawlDir::new(&whole),
        cfg: c.cfg.clone(),
    };
    assert_eq!(crawl_records(&back), original);
}

#[test]
fn files_convert_both_ways_and_with_a_dictionary_record_for_record() {
    let c = crawl();
    let dir = tempfile::tempdir().unwrap();
    let inputs = cycle_one_warcs(&c);
    let want = records_of(&inputs);
    let (gz, z) = check_gz_and_zst_convert_both_ways(dir.path(), &inputs, &want);
    check_an_output_dir_is_refused(&c, &gz, &z);

    // With a dictionary (zstd --train on the records themselves).
    let has = Command::new("zstd")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        eprintln!("zstd (the program) is missing: the dictionary conversion is not tried");
        return;
    }
    let (d1, d2) = train_dictionaries(dir.path(), &want);
    let zdf = check_a_dictionary_conversion_keeps_every_record(dir.path(), &inputs, &want, &d1);
    check_a_wrong_dictionary_is_named(dir.path(), &inputs, &zdf[0], &d2);
}

/// The WARC files (not WET) of cycle 1 of the crawl, sorted.
fn cycle_one_warcs(c: &common::Crawl) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = Vec::new();
    for cy in c.dir.cycles() {
        for e in std::fs::read_dir(c.dir.warc_dir(cy)).into_iter().flatten() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            if !n.contains(".wet") && cy == 1 {
                inputs.push(p);
            }
        }
    }
    inputs.sort();
    assert!(!inputs.is_empty());
    inputs
}

/// The records of each file.
fn records_of(files: &[PathBuf]) -> Vec<Vec<Vec<u8>>> {
    files.iter().map(|p| records(p)).collect()
}

/// The arguments of `dragnet warc convert --to TO [EXTRA] --out OUT FILES`.
fn convert_args(to: &str, out: &Path, files: &[PathBuf], extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec!["warc".into(), "convert".into(), "--to".into(), to.into()];
    a.extend(extra.iter().map(|s| s.to_string()));
    a.push("--out".into());
    a.push(out.display().to_string());
    a.extend(files.iter().map(|f| f.display().to_string()));
    a
}

/// The files of the output directory `d`, sorted, each of which ends with `suffix`.
fn outputs(d: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    assert!(
        v.iter().all(|p| p.to_string_lossy().ends_with(suffix)),
        "{v:?}"
    );
    v
}

/// gz -> zst -> gz keeps every record, and `dragnet check warc` verifies both. Returns the gzip
/// output directory and the zstd files.
fn check_gz_and_zst_convert_both_ways(
    dir: &Path,
    inputs: &[PathBuf],
    want: &[Vec<Vec<u8>>],
) -> (PathBuf, Vec<PathBuf>) {
    let zst = dir.join("zst");
    common::ok(common::dragnet(&convert_args("zst", &zst, inputs, &[])));
    let z = outputs(&zst, ".warc.zst");
    assert_eq!(records_of(&z), want);
    let gz = dir.join("gz");
    common::ok(common::dragnet(&convert_args("gz", &gz, &z, &[])));
    let g = outputs(&gz, ".warc.gz");
    assert_eq!(records_of(&g), want);
    // Every record dragnet check warc verifies (digests) in both.
    common::ok(common::dragnet(
        &[
            &["check", "warc"][..],
            &z.iter()
                .chain(&g)
                .map(|p| p.to_str().unwrap())
                .collect::<Vec<_>>()[..],
        ]
        .concat(),
    ));
    (gz, z)
}

/// An existing output directory (`gz`) is refused without --force (nothing written), replaced
/// with; one inside a crawl is refused.
fn check_an_output_dir_is_refused(c: &common::Crawl, gz: &Path, z: &[PathBuf]) {
    let o = common::dragnet(&convert_args("gz", gz, z, &[]));
    assert_eq!(o.status.code(), Some(2), "{}", common::out_text(&o));
    common::ok(common::dragnet(&convert_args("gz", gz, z, &["--force"])));
    // Inside a crawl: refused.
    let inside = c.dir.root().join("converted");
    let o = common::dragnet(&convert_args("gz", &inside, z, &[]));
    assert_eq!(o.status.code(), Some(2), "{}", common::out_text(&o));
    assert!(!inside.exists());
}

/// Two zstd dictionaries (IDs 7001 and 7002) trained on the records of `want`.
fn train_dictionaries(dir: &Path, want: &[Vec<Vec<u8>>]) -> (PathBuf, PathBuf) {
    let samples = dir.join("samples");
    std::fs::create_dir_all(&samples).unwrap();
    let mut k = 0;
    for f in want {
        for r in f {
            std::fs::write(samples.join(format!("{k:05}")), r).unwrap();
            k += 1;
        }
    }
    let train = |id: &str| {
        let out = dir.join(format!("dict-{id}"));
        let o = Command::new("zstd")
            .args(["-q", "--train", "--maxdict=16384", "--dictID", id, "-r"])
            .arg(&samples)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    (train("7001"), train("7002"))
}

/// gz -> zst with the dictionary `d1` -> gz keeps every record. Returns the zstd files.
fn check_a_dictionary_conversion_keeps_every_record(
    dir: &Path,
    inputs: &[PathBuf],
    want: &[Vec<Vec<u8>>],
    d1: &Path,
) -> Vec<PathBuf> {
    let zd = dir.join("zd");
    common::ok(common::dragnet(&convert_args(
        "zst",
        &zd,
        inputs,
        &["--dictionary", d1.to_str().unwrap()],
    )));
    let zdf = outputs(&zd, ".warc.zst");
    assert_eq!(records_of(&zdf), want);
    assert!(dictionary_of(&zdf[0]).is_some());
    // And back to gzip, records the same.
    let back = dir.join("back");
    common::ok(common::dragnet(&convert_args("gz", &back, &zdf, &[])));
    assert_eq!(records_of(&outputs(&back, ".warc.gz")), want);
    zdf
}

/// A file (`with_dict` with its dictionary frame replaced by `d2`) whose dictionary frame is
/// another dictionary: named, with the frame's offset. A dictionary that is not one: refused.
fn check_a_wrong_dictionary_is_named(dir: &Path, inputs: &[PathBuf], with_dict: &Path, d2: &Path) {
    let data = std::fs::read(with_dict).unwrap();
    let n = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    let other = std::fs::read(d2).unwrap();
    let mut wrong = Vec::new();
    wrong.extend_from_slice(&data[..4]);
    wrong.extend_from_slice(&(other.len() as u32).to_le_bytes());
    wrong.extend_from_slice(&other);
    wrong.extend_from_slice(&data[8 + n..]);
    let bad = dir.join("wrong-dict.warc.zst");
    std::fs::write(&bad, &wrong).unwrap();
    let out = dir.join("never");
    let o = common::dragnet(&convert_args("gz", &out, std::slice::from_ref(&bad), &[]));
    assert_eq!(o.status.code(), Some(3), "{}", common::out_text(&o));
    let text = common::out_text(&o);
    assert!(text.contains("wrong-dict.warc.zst"), "{text}");
    assert!(
        text.contains(&format!("offset {}", 8 + other.len())),
        "{text}"
    );
    assert!(
        !out.exists(),
        "a failed conversion leaves no output directory"
    );
    // Not a zstd dictionary at all.
    let o = common::dragnet(&convert_args(
        "zst",
        &out,
        inputs,
        &["--dictionary", inputs[0].to_str().unwrap()],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", common::out_text(&o));
}

#[test]
fn bad_input_is_named_by_file_and_offset_and_changes_nothing() {
    let c = crawl();
    let dir = tempfile::tempdir().unwrap();
    let warc = c.dir.warc_dir(1);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&warc)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().contains(".wet"))
        .collect();
    files.sort();
    let src = &files[0];
    // Offsets of its records.
    let mut ends = Vec::new();
    let mut rd = WarcReader::open(src, ReaderOptions::default()).unwrap();
    while let Some(r) = rd.next_record().unwrap() {
        let e = r.finish().unwrap();
        ends.push((e.offset, e.length));
    }
    assert!(ends.len() >= 3);
    let data = std::fs::read(src).unwrap();
    check_bad_files_are_named(dir.path(), src, &data, &ends);
    check_a_damaged_crawl_stops_the_conversion(&c, src, &data, &ends);
}

/// A file that is no WARC and one cut in the middle of its third record (`src`, of bytes `data`
/// and records at `ends`): each named with the offset, no output, the input untouched.
fn check_bad_files_are_named(dir: &Path, src: &Path, data: &[u8], ends: &[(u64, u64)]) {
    let name = src.file_name().unwrap().to_string_lossy().into_owned();
    let cases: Vec<(&str, Vec<u8>, u64)> = vec![
        (
            "not-a-warc",
            b"hello, this is not a WARC file\n".to_vec(),
            0,
        ),
        // Cut in the middle of the third record's member or frame.
        (
            "truncated",
            data[..(ends[2].0 + ends[2].1 / 2) as usize].to_vec(),
            ends[2].0,
        ),
    ];
    for (tag, bytes, offset) in cases {
        let input = dir.join(format!("{tag}-{name}"));
        std::fs::write(&input, &bytes).unwrap();
        let out = dir.join(format!("out-{tag}"));
        let o = common::dragnet(&[
            "warc",
            "convert",
            "--to",
            "gz",
            "--out",
            out.to_str().unwrap(),
            input.to_str().unwrap(),
        ]);
        let text = common::out_text(&o);
        assert_eq!(o.status.code(), Some(3), "{tag}: {text}");
        assert!(text.contains(&input.display().to_string()), "{tag}: {text}");
        assert!(text.contains(&format!("offset {offset}")), "{tag}: {text}");
        assert!(!out.exists(), "{tag}");
        assert_eq!(
            std::fs::read(&input).unwrap(),
            bytes,
            "{tag}: the input is untouched"
        );
    }
}

/// In a crawl: a damaged WARC file (`src` cut in its second record) stops the conversion, and
/// the crawl is as it was.
fn check_a_damaged_crawl_stops_the_conversion(
    c: &common::Crawl,
    src: &Path,
    data: &[u8],
    ends: &[(u64, u64)],
) {
    let name = src.file_name().unwrap().to_string_lossy().into_owned();
    let root = c.dir.root().to_str().unwrap().to_string();
    let mut bad = data.to_vec();
    let at = (ends[1].0 + ends[1].1 / 2) as usize;
    bad.truncate(at);
    std::fs::write(src, &bad).unwrap();
    let snap = common::snapshot(c.dir.root());
    let o = common::dragnet(&["warc", "convert", "--crawl", &root, "--to", "zst"]);
    let text = common::out_text(&o);
    assert_eq!(o.status.code(), Some(3), "{text}");
    assert!(
        text.contains(&name) && text.contains(&format!("offset {}", ends[1].0)),
        "{text}"
    );
    let after: Vec<_> = common::snapshot(c.dir.root())
        .into_iter()
        .filter(|(p, _)| !p.ends_with("lock"))
        .collect();
    // Partitions converted before the damaged one are committed (each is whole); the damaged
    // partition's files are as they were.
    let unchanged = |p: &Path| -> bool {
        let before = snap.iter().find(|(q, _)| q == p).map(|(_, b)| b);
        let now = after.iter().find(|(q, _)| q == p).map(|(_, b)| b);
        before == now
    };
    assert!(unchanged(src));
    assert!(unchanged(&c.dir.fetched(1, 0)) || !src.to_string_lossy().contains("p0000"));
    let left: Vec<_> = after
        .iter()
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".convert"))
        .collect();
    assert!(
        left.is_empty(),
        "staged files and journals are gone after a failed conversion: {left:?}"
    );
    // Partitions committed before the failure were finished: the crawl checks clean.
    let chk = common::dragnet(&["check", "crawl", &root]);
    let text = String::from_utf8_lossy(&chk.stdout).into_owned();
    assert!(!text.contains("unknown"), "{text}");
}
