//! CDXJ indexes (`dragnet index`, `dragnet::warc::cdxj`): the same lines `cdxj-indexer` writes,
//! byte for byte, on the test data's WARCs (its output is kept beside them); and on a crawl's own
//! WARCs (gzip and zstd) every line's offset and length cut out exactly its record.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};

use dragnet::warc::cdxj::index_files;

fn sorted_index(files: &[PathBuf]) -> String {
    let mut out = Vec::new();
    index_files(files, &mut out, 1 << 20, &std::env::temp_dir()).unwrap();
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
        let (c, files) = crawl_warcs(compression);
        let index = sorted_index(&files);
        let lines: Vec<&str> = index.lines().collect();
        assert!(lines.len() >= 8, "{compression}: {} lines", lines.len());
        for l in &lines {
            let (key, json) = l.split_at(l.find(" {").unwrap());
            let j: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
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
            assert!(text.starts_with("WARC/1.1\r\n"), "{compression}: {l}");
            assert!(
                text.contains(&format!("WARC-Target-URI: {}\r\n", field("url"))),
                "{compression}: {l}"
            );
            assert!(text.contains("WARC-Type: response") || text.contains("WARC-Type: revisit"));
            assert!(key.starts_with(&dragnet::keys::surt(&field("url"))));
        }
        // The fetch indexed the same records as it wrote them: the same lines, with the files'
        // paths under cycles/.
        let fetched = std::fs::read_to_string(c.dir.partition_cdxj(0, 0)).unwrap();
        let renamed: String = index
            .lines()
            .map(|l| {
                l.replace(
                    "\"filename\": \"p0000-",
                    "\"filename\": \"000000/warc/p0000-",
                ) + "\n"
            })
            .collect();
        assert_eq!(fetched, renamed, "{compression}");
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
    let out = common::ok(
        std::process::Command::new("cdxj-indexer")
            .args(&files)
            .output()
            .unwrap(),
    );
    let mut theirs: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    theirs.sort_unstable();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours, theirs);
}

/// The lines of a CDXJ file.
fn cdxj_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_crawl_keeps_a_pywb_collection_the_cycles_index_merged_into_the_crawls() {
    let (web, server) = common::small_web(32, 6, 8);
    let mut cfg = common::websim_config(3, 2);
    cfg.fetch.warc_compression = "gzip".into();
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(8)).unwrap();
    server.stop();
    assert!(r.cycles.len() >= 2, "{} cycles", r.cycles.len());
    // The last cycle directory holds the empty fetch lists the crawl stopped at.
    let cycles: Vec<u32> = c.dir.cycles()[..r.cycles.len()].to_vec();
    let mut union = Vec::new();
    for &cycle in &cycles {
        union.extend(check_the_cycles_index(&c.dir, cycle));
    }
    union.sort();
    let whole = dragnet::ops::index::crawl_index(&c.dir);
    assert_eq!(cdxj_lines(&whole), union);
    assert_eq!(dragnet::ops::index::indexed_cycles(&c.dir), cycles);
    // Every line's file is found through `archive/`, as pywb looks for it.
    for l in union.iter().step_by(7) {
        let j: serde_json::Value = serde_json::from_str(&l[l.find(" {").unwrap()..]).unwrap();
        let file = c.dir.archive_link().join(j["filename"].as_str().unwrap());
        let rec = record_at(
            &file,
            j["offset"].as_str().unwrap().parse().unwrap(),
            j["length"].as_str().unwrap().parse().unwrap(),
        );
        let want = format!("WARC-Target-URI: {}\r\n", j["url"].as_str().unwrap());
        assert!(String::from_utf8_lossy(&rec).contains(&want), "{l}");
    }
    check_the_index_is_made_again(&c.dir, &cycles, &union);
}

/// The index of `cycle` is its partitions' merged, and each partition's is what `dragnet
/// index` makes of its WARC files (with their paths under cycles/). Returns its lines.
fn check_the_cycles_index(dir: &dragnet::crawl::CrawlDir, cycle: u32) -> Vec<String> {
    let mut parts = Vec::new();
    for p in 0..3 {
        parts.extend(cdxj_lines(&dir.partition_cdxj(cycle, p)));
    }
    parts.sort();
    assert_eq!(cdxj_lines(&dir.cycle_cdxj(cycle)), parts, "cycle {cycle}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.warc_dir(cycle))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let renamed: Vec<String> = sorted_index(&files)
        .lines()
        .map(|l| {
            l.replace(
                "\"filename\": \"p",
                &format!("\"filename\": \"{cycle:06}/warc/p"),
            )
        })
        .collect();
    assert_eq!(parts, renamed, "cycle {cycle}");
    parts
}

/// The crawl's index (of `union`, over `cycles`) is made again when a cycle ends: nothing added
/// to a whole one, rebuilt the same when missing, redone after a kill, healed when damaged, and
/// a lost partition index made again from the WARC files.
fn check_the_index_is_made_again(dir: &dragnet::crawl::CrawlDir, cycles: &[u32], union: &[String]) {
    let whole = dragnet::ops::index::crawl_index(dir);
    // Ending a cycle again adds nothing; without indexes/ it is rebuilt the same.
    let last = *cycles.last().unwrap();
    let again = dragnet::ops::index::after_cycle(dir, 3, last).unwrap();
    assert!(again.cycles_added.is_empty(), "{again:?}");
    std::fs::remove_dir_all(dir.indexes_dir()).unwrap();
    let rebuilt = dragnet::ops::index::after_cycle(dir, 3, last).unwrap();
    assert_eq!(rebuilt.cycles_added, cycles);
    assert_eq!(cdxj_lines(&whole), union);
    // A merge killed after the index was written but before its list of cycles: redone, the
    // index holds each line once.
    std::fs::write(dir.indexes_dir().join("index.cycles"), "0\n").unwrap();
    dragnet::ops::index::after_cycle(dir, 3, last).unwrap();
    assert_eq!(cdxj_lines(&whole), union);
    check_a_damaged_index_is_healed(dir, cycles, union);
    // A partition index lost (a crawl older than them) is made again from the WARC files.
    std::fs::remove_file(dir.partition_cdxj(0, 1)).unwrap();
    let cycle_index = cdxj_lines(&dir.cycle_cdxj(0));
    dragnet::ops::index::index_cycle(dir, 3, 0).unwrap();
    assert_eq!(cdxj_lines(&dir.cycle_cdxj(0)), cycle_index);
}

/// A damaged crawl index (a line that does not parse, lines out of order, a cut last line) or a
/// damaged cycle index is derived data: the next cycle's end makes it again, says so, and no bad
/// line is carried on.
fn check_a_damaged_index_is_healed(
    dir: &dragnet::crawl::CrawlDir,
    cycles: &[u32],
    union: &[String],
) {
    let whole = dragnet::ops::index::crawl_index(dir);
    let last = *cycles.last().unwrap();
    let good = std::fs::read(&whole).unwrap();
    let damages: [fn(&mut Vec<u8>); 3] = [
        |b| {
            let i = b.len() / 2;
            let at = i + b[i..].iter().position(|&c| c == b'\n').unwrap() + 1;
            b.splice(at..at, b"not a line of cdxj\n".iter().copied());
        },
        |b| {
            // The first and last lines swapped: out of order (a byte swap could land inside one
            // JSON value and go unseen).
            let text = String::from_utf8(b.clone()).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            let last = lines.len() - 1;
            lines.swap(0, last);
            *b = (lines.join("\n") + "\n").into_bytes();
        },
        |b| b.truncate(b.len() - 5),
    ];
    for damage in damages {
        let mut b = good.clone();
        damage(&mut b);
        std::fs::write(&whole, &b).unwrap();
        let healed = dragnet::ops::index::after_cycle(dir, 3, last).unwrap();
        assert_eq!(healed.healed.len(), 1, "{healed:?}");
        assert_eq!(healed.cycles_added, cycles);
        assert_eq!(cdxj_lines(&whole), union);
    }
    let cycle0 = std::fs::read(dir.cycle_cdxj(0)).unwrap();
    let mut b = cycle0.clone();
    b.truncate(b.len() - 3);
    std::fs::write(dir.cycle_cdxj(0), &b).unwrap();
    std::fs::remove_dir_all(dir.indexes_dir()).unwrap();
    let healed = dragnet::ops::index::after_cycle(dir, 3, last).unwrap();
    assert_eq!(healed.healed.len(), 1, "{healed:?}");
    assert_eq!(std::fs::read(dir.cycle_cdxj(0)).unwrap(), cycle0);
    assert_eq!(cdxj_lines(&whole), union);
}

/// The end of a cycle writes the crawl's index only when it changes: the first captures are the
/// cycle's index under a second name (a hard link: nothing copied), a cycle that captured
/// nothing leaves it as it is, and the next cycle with captures writes a new file, leaving the
/// first cycle's index as it was.
#[test]
fn the_crawls_index_is_written_only_when_a_cycle_adds_to_it() {
    use std::os::unix::fs::MetadataExt;
    let (web, server) = common::small_web(33, 1, 2);
    server.stop(); // nothing is fetched: the cycles' partition indexes are written here
    let c = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(3, 1),
    );
    let dir = &c.dir;
    let line = |host: &str, n: u32| {
        format!(
            "test,{host})/{n} 20260101000000 {{\"url\": \"http://{host}.test/{n}\", \"offset\": \"{n}\", \"length\": \"1\", \"filename\": \"x.warc.gz\"}}"
        )
    };
    // Cycle `cycle`'s partitions index `lines` (partition p the lines of host `hp`), and
    // every partition has fetched.
    let end_cycle = |cycle: u32, per_partition: &[Vec<String>]| {
        for (p, lines) in per_partition.iter().enumerate() {
            let p = p as u32;
            let path = dir.partition_cdxj(cycle, p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&path, text).unwrap();
            let done = dir.done_path(cycle, dragnet::crawl::Stage::Fetch, p);
            std::fs::create_dir_all(done.parent().unwrap()).unwrap();
            std::fs::write(done, "").unwrap();
        }
        dragnet::ops::index::after_cycle(dir, 3, cycle).unwrap()
    };
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    let whole = dragnet::ops::index::crawl_index(dir);

    let first = vec![vec![line("a", 1), line("a", 2)], vec![], vec![line("c", 1)]];
    let r = end_cycle(0, &first);
    assert_eq!((r.cycle_lines, r.crawl_lines), (Some(3), Some(3)), "{r:?}");
    assert_eq!(
        ino(&whole),
        ino(&dir.cycle_cdxj(0)),
        "the first captures: one file"
    );
    assert_eq!(cdxj_lines(&whole), cdxj_lines(&dir.cycle_cdxj(0)));

    let r = end_cycle(1, &[vec![], vec![], vec![]]);
    assert_eq!((r.cycle_lines, r.crawl_lines), (Some(0), None), "{r:?}");
    assert_eq!(r.cycles_added, [1]);
    assert_eq!(
        ino(&whole),
        ino(&dir.cycle_cdxj(0)),
        "nothing added: left as it was"
    );
    assert_eq!(dragnet::ops::index::indexed_cycles(dir), [0, 1]);
    // Made again at the end of the empty cycle: cycle 0's lines, counted as such.
    std::fs::remove_dir_all(dir.indexes_dir()).unwrap();
    let r = dragnet::ops::index::after_cycle(dir, 3, 1).unwrap();
    assert_eq!((r.cycle_lines, r.crawl_lines), (Some(0), Some(3)), "{r:?}");
    assert_eq!(cdxj_lines(&whole), cdxj_lines(&dir.cycle_cdxj(0)));

    let r = end_cycle(2, &[vec![line("a", 3)], vec![line("b", 1)], vec![]]);
    assert_eq!((r.cycle_lines, r.crawl_lines), (Some(2), Some(5)), "{r:?}");
    assert_ne!(ino(&whole), ino(&dir.cycle_cdxj(0)), "a new file");
    let mut want: Vec<String> = first.concat();
    want.extend([line("a", 3), line("b", 1)]);
    want.sort();
    assert_eq!(cdxj_lines(&whole), want);
    let mut cycle0 = first.concat();
    cycle0.sort();
    assert_eq!(
        cdxj_lines(&dir.cycle_cdxj(0)),
        cycle0,
        "the cycle's index as it was"
    );
    assert_eq!(dragnet::ops::index::indexed_cycles(dir), [0, 1, 2]);
    // Ending the last cycle again changes nothing; without indexes/ all is made again.
    assert!(dragnet::ops::index::after_cycle(dir, 3, 2)
        .unwrap()
        .cycles_added
        .is_empty());
    std::fs::remove_dir_all(dir.indexes_dir()).unwrap();
    let r = dragnet::ops::index::after_cycle(dir, 3, 2).unwrap();
    assert_eq!(r.cycles_added, [0, 1, 2]);
    assert_eq!(cdxj_lines(&whole), want);
}
