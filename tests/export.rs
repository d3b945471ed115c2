//! `dragnet export` (issue 22, point 5): a websim crawl's pages and URL db as Parquet and JSON
//! Lines, checked against the run files row by row: read back with the `parquet` crate's own
//! reader here, and with DuckDB (`pip install duckdb`) in the ignored test `.ci/run` runs.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dragnet::ops::export::{export, Format, What};
use dragnet::records::{FetchResult, PageRecord, UrlRecord};
use dragnet::run::{Cursor, RunReader, Schema};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

/// A crawl of a small web, two cycles (one with recrawls, so revisits appear).
fn crawled() -> common::Crawl {
    let (web, server) = common::small_web(41, 5, 10);
    let mut cfg = common::websim_config(3, 2);
    cfg.fetch.follow_per_host = 0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(3)).unwrap();
    server.stop();
    c
}

/// Every row of a Parquet file as column name -> field.
fn parquet_rows(path: &Path) -> Vec<BTreeMap<String, Field>> {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(n, f)| (n.clone(), f.clone()))
                .collect()
        })
        .collect()
}

/// A Parquet field as the JSON Lines export writes the value (times aside: not compared).
fn json_of(f: &Field) -> serde_json::Value {
    match f {
        Field::Null => serde_json::Value::Null,
        Field::Bool(b) => (*b).into(),
        Field::Long(i) => (*i).into(),
        Field::Double(d) => (*d).into(),
        Field::Str(s) => s.clone().into(),
        Field::TimestampMillis(ms) => (*ms).into(),
        other => panic!("unexpected field {other:?}"),
    }
}

fn jsonl_rows(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (url, cycle) -> (page record, fetch result) of every page the crawl parsed.
fn expected_pages(c: &common::Crawl) -> BTreeMap<(String, u32), (PageRecord, FetchResult)> {
    let mut out = BTreeMap::new();
    for cycle in c.dir.cycles() {
        for p in 0..c.cfg.crawl.partitions {
            let Ok(mut pages) = RunReader::open_expect(&c.dir.pages(cycle, p), Schema::PAGES)
            else {
                continue;
            };
            let mut fetched = BTreeMap::new();
            let mut f = RunReader::open_expect(&c.dir.fetched(cycle, p), Schema::FETCHED).unwrap();
            while f.advance().unwrap() {
                fetched.insert(f.key().to_vec(), FetchResult::decode(f.payload()).unwrap());
            }
            while pages.advance().unwrap() {
                let page = PageRecord::decode(pages.payload()).unwrap();
                let fr = fetched[pages.key()].clone();
                out.insert((page.url.clone(), cycle), (page, fr));
            }
        }
    }
    out
}

fn out_path(c: &common::Crawl, name: &str) -> PathBuf {
    c.tmp.path().join(name)
}

#[test]
fn pages_and_urls_export_as_the_run_files_hold_them() {
    let c = crawled();
    let want = expected_pages(&c);
    assert!(want.len() >= 30, "{} pages", want.len());
    let m = c.cfg.crawl.partitions;
    for format in [Format::Parquet, Format::Jsonl] {
        let path = out_path(&c, &format!("pages-{format:?}"));
        let r = export(&c.dir, &c.cfg, What::Pages, format, &path, None).unwrap();
        assert_eq!(r.rows, want.len() as u64, "{format:?}");
        // Every row is the run files' page, with its fetch result.
        let rows: Vec<BTreeMap<String, serde_json::Value>> = match format {
            Format::Jsonl => jsonl_rows(&path)
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            Format::Parquet => parquet_rows(&path)
                .into_iter()
                .map(|row| row.into_iter().map(|(k, f)| (k, json_of(&f))).collect())
                .collect(),
        };
        assert_eq!(rows.len(), want.len());
        for row in &rows {
            let url = row["url"].as_str().unwrap().to_string();
            let cycle = row["cycle"].as_u64().unwrap() as u32;
            let (page, fr) = &want[&(url.clone(), cycle)];
            assert_eq!(
                row["status"].as_u64(),
                Some(u64::from(page.status)),
                "{url}"
            );
            let opt = |s: &str| (!s.is_empty()).then(|| serde_json::Value::from(s));
            assert_eq!(row["title"], opt(&page.title).unwrap_or_default(), "{url}");
            assert_eq!(
                row["mime"],
                opt(&page.content_type).unwrap_or_default(),
                "{url}"
            );
            assert_eq!(row["length"].as_u64(), Some(fr.length), "{url}");
            assert_eq!(row["warc_offset"].as_u64(), Some(fr.warc_offset), "{url}");
            assert_eq!(
                row["warc_file"]
                    .as_str()
                    .map(|f| f.rsplit('/').next().unwrap()),
                Some(fr.warc_file.as_str()),
                "{url}"
            );
            assert_eq!(
                row["payload_digest"],
                opt(&fr.payload_digest).unwrap_or_default(),
                "{url}"
            );
            assert!(!row["fetch_time"].is_null(), "{url}");
        }
    }

    // The URL db: one row per URL of every partition's newest version.
    let mut urls = BTreeMap::new();
    for p in 0..m {
        let (_, path) = c.dir.latest_state(p, "urldb", 1000).unwrap();
        let mut r = RunReader::open_expect(&path, Schema::URLDB).unwrap();
        while r.advance().unwrap() {
            let u = UrlRecord::decode(r.payload()).unwrap();
            urls.insert(u.url.clone(), u);
        }
    }
    let path = out_path(&c, "urls.parquet");
    let r = export(&c.dir, &c.cfg, What::Urls, Format::Parquet, &path, None).unwrap();
    assert_eq!(r.rows, urls.len() as u64);
    for row in parquet_rows(&path) {
        let url = match &row["url"] {
            Field::Str(s) => s.clone(),
            f => panic!("url {f:?}"),
        };
        let u = &urls[&url];
        assert_eq!(row["state"], Field::Str(u.state.name().into()));
        assert_eq!(row["fetches"], Field::Long(i64::from(u.fetches)));
        assert_eq!(row["priority"], Field::Double(u.score));
    }
}

#[test]
fn a_cycle_not_parsed_yet_is_refused_with_what_to_do() {
    let c = crawled();
    let e = export(
        &c.dir,
        &c.cfg,
        What::Pages,
        Format::Jsonl,
        &out_path(&c, "x.jsonl"),
        Some(99),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cycle 99") && e.contains("dragnet status"),
        "{e}"
    );
    assert!(!out_path(&c, "x.jsonl").exists());
}

#[test]
#[ignore = "needs DuckDB for Python (pip install duckdb); .ci/run runs it where it is installed"]
fn duckdb_reads_the_exported_parquet() {
    let has = std::process::Command::new("python3")
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    common::require("DuckDB for Python", has, "pip install duckdb");
    let c = crawled();
    let want = expected_pages(&c);
    let pages = out_path(&c, "pages.parquet");
    let urls = out_path(&c, "urls.parquet");
    export(&c.dir, &c.cfg, What::Pages, Format::Parquet, &pages, None).unwrap();
    let n_urls = export(&c.dir, &c.cfg, What::Urls, Format::Parquet, &urls, None)
        .unwrap()
        .rows;
    let script = format!(
        "import duckdb, json\n\
         con = duckdb.connect()\n\
         rows = con.execute(\"SELECT url, cycle, status, title, length, epoch_ms(fetch_time) FROM '{}' ORDER BY url, cycle\").fetchall()\n\
         n = con.execute(\"SELECT count(*) FROM '{}'\").fetchone()[0]\n\
         types = dict(con.execute(\"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{}')\").fetchall())\n\
         print(json.dumps({{'rows': rows, 'urls': n, 'types': types}}))\n",
        pages.display(),
        urls.display(),
        pages.display()
    );
    let out = common::ok(
        std::process::Command::new("python3")
            .args(["-c", &script])
            .output()
            .unwrap(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["urls"].as_u64(), Some(n_urls));
    assert_eq!(v["types"]["fetch_time"], "TIMESTAMP WITH TIME ZONE");
    assert_eq!(v["types"]["status"], "BIGINT");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    for r in rows {
        let url = r[0].as_str().unwrap().to_string();
        let cycle = r[1].as_u64().unwrap() as u32;
        let (page, fr) = &want[&(url.clone(), cycle)];
        assert_eq!(r[2].as_u64(), Some(u64::from(page.status)), "{url}");
        assert_eq!(r[3].as_str().unwrap_or(""), page.title, "{url}");
        assert_eq!(r[4].as_u64(), Some(fr.length), "{url}");
        assert_eq!(r[5].as_u64(), Some(fr.fetched_at_ms), "{url}");
    }
    eprintln!(
        "DuckDB read {} pages and {n_urls} URLs back, every value as the run files hold it",
        rows.len()
    );
}

#[test]
fn links_export_with_their_anchors_as_the_pages_hold_them() {
    let (web, server) = common::small_web(42, 4, 12);
    let mut cfg = common::websim_config(2, 2);
    cfg.parse.text = true;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(20)).unwrap();
    server.stop();

    // Every link of every page, in document order, as websim's model says the page has it.
    let path = out_path(&c, "links.jsonl");
    let r = export(&c.dir, &c.cfg, What::Links, Format::Jsonl, &path, None).unwrap();
    let mut got: BTreeMap<String, Vec<(String, String, bool, String)>> = BTreeMap::new();
    for row in jsonl_rows(&path) {
        got.entry(row["from"].as_str().unwrap().to_string())
            .or_default()
            .push((
                row["to"].as_str().unwrap().to_string(),
                row["tag"].as_str().unwrap().to_string(),
                row["nofollow"].as_bool().unwrap(),
                row["anchor"].as_str().unwrap_or("").to_string(),
            ));
    }
    assert_eq!(r.rows, got.values().map(Vec::len).sum::<usize>() as u64);
    let truth = websim::truth::truth(&web, &websim::truth::Policy::new(&web));
    let mut pages = 0;
    for page in &truth.pages {
        let Some(links) = got.get(&page.url) else {
            continue;
        };
        pages += 1;
        let want: Vec<(String, String, bool)> = page
            .links
            .iter()
            .map(|l| (l.url.clone(), l.tag.to_string(), l.nofollow))
            .collect();
        let have: Vec<(String, String, bool)> = links
            .iter()
            .map(|(u, t, n, _)| (u.clone(), t.clone(), *n))
            .collect();
        assert_eq!(have, want, "{}", page.url);
        // An <a> link has its anchor text; other tags none.
        for (u, tag, _, anchor) in links {
            assert_eq!(
                tag == "a",
                !anchor.is_empty(),
                "{} -> {u}: {anchor:?}",
                page.url
            );
        }
    }
    assert!(pages >= 20, "{pages} pages compared with the model");

    // The text of every HTML page: what the crawl's WET files hold.
    let path = out_path(&c, "text.parquet");
    let r = export(&c.dir, &c.cfg, What::Text, Format::Parquet, &path, None).unwrap();
    let mut wet = BTreeMap::new();
    for cycle in c.dir.cycles() {
        let dir = c.dir.warc_dir(cycle);
        if dir.exists() {
            let files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().contains(".warc.wet."))
                .collect();
            for (url, (_, _, text)) in crate::wet::conversions(&files) {
                wet.insert((url, cycle), text);
            }
        }
    }
    let rows = parquet_rows(&path);
    assert_eq!(r.rows as usize, rows.len());
    assert_eq!(rows.len(), wet.len());
    for row in rows {
        let (Field::Str(url), Field::Long(cycle), Field::Str(text)) =
            (&row["url"], &row["cycle"], &row["text"])
        else {
            panic!("{row:?}");
        };
        assert_eq!(Some(text), wet.get(&(url.clone(), *cycle as u32)), "{url}");
    }
}
