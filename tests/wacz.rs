//! `dragnet export --what wacz` (issue 32, point 4): a WACZ 1.1.1 package of a crawl, read
//! back here with a small ZIP reader of the test's own: every entry STORED with the right
//! CRC-32, `datapackage.json` listing every file with its size and sha256 (and its own digest
//! in `datapackage-digest.json`), every index line leading to a gzip member in `archive/` that
//! holds a record of its URL, every record the crawl's once decompressed (`.warc.zst` files are
//! converted on the way), and every HTML capture in `pages/pages.jsonl` with its title.
//! `wacz validate` (py-wacz, `pip install wacz`) runs in `.ci/run`; pywb's replay of the
//! package is in `tests/pywb.rs`.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::Digest as _;

/// The crawl the tests package: a small web, default configuration, 2 cycles; its WARC files
/// converted to `zst` if `zst`.
pub(crate) fn crawl(zst: bool) -> common::Crawl {
    let (web, server) = common::small_web(62, 4, 10);
    let cfg = common::websim_config(2, 2);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let opts = common::cycles(2);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    server.stop();
    if zst {
        let root = c.dir.root().to_str().unwrap();
        common::ok(common::dragnet(&[
            "warc", "convert", "--crawl", root, "--to", "zst",
        ]));
    }
    c
}

/// `dragnet export --what wacz` of `c` into `out`.
pub(crate) fn export(c: &common::Crawl, out: &Path, env: &[(&str, &str)]) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dragnet"));
    cmd.args(["export", "--what", "wacz", "--out"])
        .arg(out)
        .arg(c.dir.root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::ok(cmd.output().unwrap());
}

/// A package's entries by name: (method, crc, data).
type Entries = BTreeMap<String, (u16, u32, Vec<u8>)>;

/// A ZIP's entries by name: (method, crc, data), from its central directory (ZIP64 too).
fn unzip(data: &[u8]) -> Entries {
    let u16at = |i: usize| u16::from_le_bytes(data[i..i + 2].try_into().unwrap());
    let u32at = |i: usize| u32::from_le_bytes(data[i..i + 4].try_into().unwrap());
    let u64at = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let eocd = data.len() - 22;
    assert_eq!(u32at(eocd), 0x0605_4b50, "end of central directory");
    let (mut n, mut start) = (u64::from(u16at(eocd + 10)), u64::from(u32at(eocd + 16)));
    if start == 0xffff_ffff || n == 0xffff {
        let loc = eocd - 20;
        assert_eq!(u32at(loc), 0x0706_4b50, "ZIP64 locator");
        let rec = u64at(loc + 8) as usize;
        assert_eq!(u32at(rec), 0x0606_4b50, "ZIP64 end record");
        n = u64at(rec + 32);
        start = u64at(rec + 48);
    }
    let mut out = BTreeMap::new();
    let mut at = start as usize;
    for _ in 0..n {
        assert_eq!(u32at(at), 0x0201_4b50, "central directory entry");
        let method = u16at(at + 10);
        let crc = u32at(at + 16);
        let mut size = u64::from(u32at(at + 24));
        let name_len = usize::from(u16at(at + 28));
        let extra_len = usize::from(u16at(at + 30));
        let mut offset = u64::from(u32at(at + 42));
        let name = String::from_utf8(data[at + 46..at + 46 + name_len].to_vec()).unwrap();
        let mut x = at + 46 + name_len;
        let end = x + extra_len;
        while x < end {
            let (id, len) = (u16at(x), usize::from(u16at(x + 2)));
            if id == 1 {
                let mut f = x + 4;
                if size == 0xffff_ffff {
                    size = u64at(f);
                    f += 16;
                }
                if offset == 0xffff_ffff {
                    offset = u64at(f);
                }
            }
            x += 4 + len;
        }
        let lh = offset as usize;
        assert_eq!(u32at(lh), 0x0403_4b50, "{name}: local header");
        let body = lh + 30 + usize::from(u16at(lh + 26)) + usize::from(u16at(lh + 28));
        out.insert(
            name,
            (method, crc, data[body..body + size as usize].to_vec()),
        );
        at = end + usize::from(u16at(at + 32));
    }
    out
}

fn sha256(b: &[u8]) -> String {
    format!(
        "sha256:{}",
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    )
}

/// Every record of a `.warc.gz`/`.warc.zst` file's bytes, decompressed: the concatenation.
fn plain(path: &Path) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    if path.to_string_lossy().ends_with(".zst") {
        out = zstd::stream::decode_all(&data[..]).unwrap();
    } else {
        flate2::read::MultiGzDecoder::new(&data[..])
            .read_to_end(&mut out)
            .unwrap();
    }
    out
}

/// Reads back the package `wacz` of the crawl `c`, entry by entry.
fn check_package(c: &common::Crawl, wacz: &Path) {
    let data = std::fs::read(wacz).unwrap();
    let entries = unzip(&data);
    for (name, (method, crc, body)) in &entries {
        assert_eq!(*method, 0, "{name} is STORED");
        assert_eq!(*crc, crc32fast::hash(body), "{name}: CRC-32");
    }
    check_datapackage(&entries);
    check_archive(c, &entries);
    let index = check_index(&entries);
    check_pages(c, &entries, &index);
}

/// datapackage.json: every other file, with its size and hash; its own digest.
fn check_datapackage(entries: &Entries) {
    let dp = &entries["datapackage.json"].2;
    let pkg: serde_json::Value = serde_json::from_slice(dp).unwrap();
    assert_eq!(pkg["profile"], "data-package");
    assert_eq!(pkg["wacz_version"], "1.1.1");
    let listed: BTreeMap<String, (u64, String)> = pkg["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                (
                    r["bytes"].as_u64().unwrap(),
                    r["hash"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    for (name, (_, _, body)) in entries {
        if name.starts_with("datapackage") {
            continue;
        }
        assert_eq!(listed[name], (body.len() as u64, sha256(body)), "{name}");
    }
    assert_eq!(listed.len(), entries.len() - 2);
    let digest: serde_json::Value =
        serde_json::from_slice(&entries["datapackage-digest.json"].2).unwrap();
    assert_eq!(digest["path"], "datapackage.json");
    assert_eq!(digest["hash"], sha256(dp));
}

/// archive/: every WARC file of the crawl, as .warc.gz, records the same.
fn check_archive(c: &common::Crawl, entries: &Entries) {
    let mut crawl_files: Vec<(String, PathBuf)> = Vec::new();
    for cy in c.dir.cycles() {
        for e in std::fs::read_dir(c.dir.warc_dir(cy)).into_iter().flatten() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            if n.contains(".wet") || n.starts_with('.') {
                continue;
            }
            let stem = n.split(".warc").next().unwrap();
            crawl_files.push((format!("archive/{cy:06}-{stem}.warc.gz"), p));
        }
    }
    let archived: Vec<&String> = entries
        .keys()
        .filter(|k| k.starts_with("archive/"))
        .collect();
    assert_eq!(archived.len(), crawl_files.len(), "{archived:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (name, path) in &crawl_files {
        let body = &entries
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .2;
        let t = tmp.path().join("x.warc.gz");
        std::fs::write(&t, body).unwrap();
        assert!(
            plain(&t) == plain(path),
            "{name}: records differ from {path:?}"
        );
    }
}

/// indexes/index.cdx: sorted, each line at a member holding a record of its URL. Returns it.
fn check_index(entries: &Entries) -> String {
    let index = String::from_utf8(entries["indexes/index.cdx"].2.clone()).unwrap();
    let lines: Vec<&str> = index.lines().collect();
    assert!(lines.len() >= 20, "{} lines", lines.len());
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "sorted");
    for l in &lines {
        let j: serde_json::Value = serde_json::from_str(&l[l.find(" {").unwrap()..]).unwrap();
        let file = format!("archive/{}", j["filename"].as_str().unwrap());
        let body = &entries
            .get(&file)
            .unwrap_or_else(|| panic!("{l}: no {file}"))
            .2;
        let off: usize = j["offset"].as_str().unwrap().parse().unwrap();
        let len: usize = j["length"].as_str().unwrap().parse().unwrap();
        let member = &body[off..off + len];
        let mut rd = dragnet::warc::WarcReader::new(member, &file, Default::default()).unwrap();
        let rec = rd.next_record().unwrap().expect("a record");
        assert_eq!(rec.header().target_uri(), j["url"].as_str(), "{l}");
    }
    index
}

/// pages/pages.jsonl: the header, then one line per HTML 2xx page of the pages runs (each also
/// in `index`).
fn check_pages(c: &common::Crawl, entries: &Entries, index: &str) {
    let pages = String::from_utf8(entries["pages/pages.jsonl"].2.clone()).unwrap();
    let mut it = pages.lines();
    let head: serde_json::Value = serde_json::from_str(it.next().unwrap()).unwrap();
    assert_eq!(head["format"], "json-pages-1.0");
    let got: BTreeMap<String, String> = it
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["ts"].as_str().unwrap().ends_with('Z'), "{l}");
            assert!(!v["id"].as_str().unwrap().is_empty(), "{l}");
            (
                format!(
                    "{}|{}",
                    v["url"].as_str().unwrap(),
                    v["ts"].as_str().unwrap()
                ),
                v["title"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pages.jsonl");
    common::ok(common::dragnet(&[
        "export",
        "--what",
        "pages",
        "--format",
        "jsonl",
        "--out",
        out.to_str().unwrap(),
        c.dir.root().to_str().unwrap(),
    ]));
    let mut want = 0;
    for l in std::fs::read_to_string(&out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let status = v["status"].as_i64().unwrap();
        let html = v["mime"].as_str().unwrap_or("").contains("html");
        if !(html && (200..300).contains(&status)) || v["warc_file"].is_null() {
            continue;
        }
        want += 1;
        let url = v["url"].as_str().unwrap();
        let title = v["title"].as_str().unwrap_or("");
        assert!(
            got.iter()
                .any(|(k, t)| k.starts_with(&format!("{url}|")) && t == title),
            "{url} ({title}) is not in pages.jsonl"
        );
        // Every capture's line is in the index.
        assert!(index.contains(&format!("\"url\": {}", serde_json::to_string(url).unwrap())));
    }
    assert_eq!(got.len(), want);
    assert!(want >= 10, "{want} HTML pages");
}

#[test]
fn a_crawl_exports_as_a_wacz_package_read_back_file_by_file() {
    let c = crawl(false);
    let out = c.tmp.path().join("gz.wacz");
    export(&c, &out, &[]);
    check_package(&c, &out);
    // Its .warc.zst twin packs the same records (converted to .warc.gz on the way).
    let z = crawl(true);
    let out = z.tmp.path().join("zst.wacz");
    export(&z, &out, &[]);
    check_package(&z, &out);
    // ZIP64 fields throughout (what a package over 4 GiB needs): read back the same.
    let out64 = z.tmp.path().join("zip64.wacz");
    export(&z, &out64, &[("DRAGNET_WACZ_ZIP64", "1")]);
    check_package(&z, &out64);
    // No file left beside the output.
    let left: Vec<_> = std::fs::read_dir(z.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
#[ignore = "needs wacz (pip install wacz); .ci/run runs it where it is installed"]
fn wacz_validate_passes_on_the_package() {
    let has = Command::new("wacz")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("py-wacz", has, "pip install wacz");
    let z = crawl(true);
    for (name, env) in [
        ("plain.wacz", vec![]),
        ("zip64.wacz", vec![("DRAGNET_WACZ_ZIP64", "1")]),
    ] {
        let out = z.tmp.path().join(name);
        export(&z, &out, &env);
        let o = Command::new("wacz")
            .args(["validate", "-f"])
            .arg(&out)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{name}: {text}");
        assert!(text.contains("Validation succeeded"), "{name}: {text}");
        eprintln!(
            "wacz validate: {name}: {}",
            text.trim().lines().last().unwrap_or("")
        );
    }
}
