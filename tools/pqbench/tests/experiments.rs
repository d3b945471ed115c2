//! Tiny end-to-end runs of Fig. 8, Fig. 9 and Table 1: every queue, both kinds of workload,
//! tables with the expected rows, valid PNG files.

use pqbench::efficiency::efficiency;
use pqbench::experiments::{self, Common, Fig8Config, Fig9Config};
use pqbench::queues::{open_sliced, QueueKind};
use pqbench::run::Schedule;
use pqbench::table1::{self, Selects, Shares, Table1Config};
use pqbench::workload::Sample;

/// A small web graph in a temporary folder: 60 pages on 6 hosts, each linking to a few others.
fn graph_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = String::from("id\turl\n");
    let mut edges = String::from("src_id\tdst_id\n");
    for i in 1..=60u32 {
        nodes.push_str(&format!("{i}\thttp://h{}.test/p{i}\n", i % 6));
        for d in [i * 7 % 60 + 1, i * 13 % 60 + 1, (i + 1) % 60 + 1] {
            if d != i && i % 10 != 0 {
                edges.push_str(&format!("{i}\t{d}\n"));
            }
        }
    }
    std::fs::write(dir.path().join("web.nodes.tsv"), nodes).unwrap();
    std::fs::write(dir.path().join("web.edges.tsv"), edges).unwrap();
    dir
}

fn common(graphs: &std::path::Path, work: &std::path::Path) -> Common {
    Common {
        samples: vec![
            Sample::Graph {
                dir: graphs.to_path_buf(),
                name: "web".into(),
            },
            Sample::Synthetic {
                seed: 1,
                alpha: 1.1,
                hosts: 50,
            },
        ],
        queues: QueueKind::ALL.to_vec(),
        page_size: 512,
        seed: 1,
        sched: Schedule {
            warmup: 1,
            min_supersteps: 3,
            turnover: 0.0,
            verify: true,
        },
        jobs: 2,
        work: work.to_path_buf(),
    }
}

fn rows_starting(md: &str, prefix: &str) -> usize {
    md.lines().filter(|l| l.starts_with(prefix)).count()
}

fn is_png(b: &[u8]) -> bool {
    b.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A])
}

#[test]
fn fig8_tables_and_charts() {
    let g = graph_dir();
    let work = tempfile::tempdir().unwrap();
    let c = common(g.path(), work.path());
    let cfg = Fig8Config {
        n_values: vec![300, 1000],
        r: 50,
        r_values: vec![20, 100],
        n: 600,
    };
    let f = experiments::fig8(&c, &cfg).unwrap();
    assert_eq!(f.by_n.len(), 2 * 2 * 3);
    assert_eq!(f.by_r.len(), 2 * 2 * 3);
    for r in f.by_n.iter().chain(&f.by_r) {
        assert!(r.total().comparisons > 0, "{r:?}");
        assert_eq!(r.operations(), 2 * r.r as u64 * 3);
    }
    let md = experiments::fig8_markdown(&f, &c);
    assert!(
        md.contains("### web") && md.contains("### synthetic"),
        "{md}"
    );
    assert!(
        md.contains("| N | QHEAP | CBT | BHEAP | QHEAP / BHEAP | QHEAP / CBT |"),
        "{md}"
    );
    // Per sample: 2 N rows and 2 R rows in the pivots; 24 detail rows.
    assert_eq!(
        rows_starting(&md, "| 300 |") + rows_starting(&md, "| 1000 |"),
        4,
        "{md}"
    );
    assert_eq!(
        rows_starting(&md, "| 20 |") + rows_starting(&md, "| 100 |"),
        4,
        "{md}"
    );
    assert_eq!(
        rows_starting(&md, "| web |") + rows_starting(&md, "| synthetic |"),
        24
    );
    let pngs = experiments::fig8_pngs(&f).unwrap();
    let names: Vec<&str> = pngs.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "pqbench-fig8-web-n.png",
            "pqbench-fig8-synthetic-n.png",
            "pqbench-fig8-web-r.png",
            "pqbench-fig8-synthetic-r.png"
        ]
    );
    assert!(pngs.iter().all(|p| is_png(&p.1)));
}

#[test]
fn fig9_tables_and_charts() {
    let g = graph_dir();
    let work = tempfile::tempdir().unwrap();
    let c = common(g.path(), work.path());
    let cfg = Fig9Config {
        n: 2000,
        r_values: vec![40, 200],
        ram_percents: vec![10.0, 30.0],
        page_per_r: false,
    };
    let f = experiments::fig9(&c, &cfg).unwrap();
    assert_eq!(f.runs.len(), 2 * 2 * 2 * 3);
    // 2000 entries of 24 B in 512 B pages (21 each): 96 pages; 10 % and 30 %.
    let caches: Vec<usize> = f.runs.iter().map(|r| r.cache_pages).collect();
    assert!(caches.iter().all(|&p| p == 10 || p == 29), "{caches:?}");
    assert!(f.runs.iter().all(|r| r.total().block_ios() > 0));
    let md = experiments::fig9_markdown(&f, &c);
    assert_eq!(
        rows_starting(&md, "Block I/Os per superstep versus R"),
        4,
        "{md}"
    );
    assert_eq!(
        rows_starting(&md, "| 40 |") + rows_starting(&md, "| 200 |"),
        8,
        "{md}"
    );
    assert_eq!(
        rows_starting(&md, "| web |") + rows_starting(&md, "| synthetic |"),
        24
    );
    let pngs = experiments::fig9_pngs(&f).unwrap();
    assert_eq!(pngs.len(), 2);
    assert!(pngs.iter().all(|p| is_png(&p.1)));
}

#[test]
fn fig9_with_pages_of_r_entries() {
    assert_eq!(experiments::page_for_r(1000), 24_064);
    assert_eq!(experiments::page_for_r(8000), 192_512);
    assert_eq!(experiments::page_for_r(1), 512);
    let g = graph_dir();
    let work = tempfile::tempdir().unwrap();
    let mut c = common(g.path(), work.path());
    c.queues = vec![QueueKind::Qheap, QueueKind::Cbt];
    let cfg = Fig9Config {
        n: 2000,
        r_values: vec![40, 200],
        ram_percents: vec![10.0],
        page_per_r: true,
    };
    let f = experiments::fig9(&c, &cfg).unwrap();
    assert_eq!(f.runs.len(), 2 * 2 * 2);
    for r in &f.runs {
        // 2000 entries in pages of about R: 48 pages at R = 40 (1024-byte pages of 42 entries),
        // 10 at R = 200 (5120-byte pages of 213 entries); 10 % of that.
        let (pages, cache) = if r.r == 40 { (48, 5) } else { (10, 1) };
        assert_eq!((r.queue_pages, r.cache_pages), (pages, cache), "{r:?}");
    }
    let md = experiments::fig9_markdown(&f, &c);
    assert!(md.contains("pages of R entries"), "{md}");
}

#[test]
fn table1_rows_for_each_t() {
    let g = graph_dir();
    let work = tempfile::tempdir().unwrap();
    let c = common(g.path(), work.path());
    let cfg = Table1Config {
        sample: c.samples[0].clone(),
        n: 4000,
        r: 400,
        threads: vec![1, 2, 4, 8],
        ram_percent: 30.0,
        shares: vec![Shares::Symmetric, Shares::Equal, Shares::Hashed],
        selects: vec![Selects::Skip, Selects::Paper],
    };
    let rows = table1::table1(&c, &cfg, &open_sliced).unwrap();
    let ts: Vec<(Selects, Shares, usize, usize)> = rows
        .iter()
        .map(|r| (r.selects, r.shares, r.t, r.per_slice))
        .collect();
    let mut want = Vec::new();
    for sel in [Selects::Skip, Selects::Paper] {
        for s in [Shares::Symmetric, Shares::Equal, Shares::Hashed] {
            for (t, rt) in [(1, 400), (2, 200), (4, 100), (8, 50)] {
                want.push((sel, s, t, rt));
            }
        }
    }
    assert_eq!(ts, want);
    // The SELECT setting reaches the queue: same rows, other work.
    assert!(rows[..12]
        .iter()
        .zip(&rows[12..])
        .all(|(skip, paper)| (skip.t, skip.shares) == (paper.t, paper.shares)));
    assert!(rows[..12]
        .iter()
        .zip(&rows[12..])
        .any(|(skip, paper)| skip.ios_per_superstep != paper.ios_per_superstep));
    assert_eq!(rows[0].extract_cmp, 1.0);
    assert_eq!(rows[4].insert_io, 1.0);
    for r in &rows {
        for e in [
            r.extract_cmp,
            r.insert_cmp,
            r.extract_io,
            r.insert_io,
            r.superstep_cmp,
        ] {
            assert!(e > 0.0 && e <= 1.0, "{r:?}");
        }
        assert!(r.comparisons_per_superstep > 0.0);
    }
    let md = table1::table1_markdown(&rows, &c, &cfg);
    assert!(md.contains("### Inserts: equal shares") && md.contains("### Inserts: hashed shares"));
    assert!(md.contains("every SELECT run") && md.contains("SELECTs skipped"));
    assert!(md.contains("### Inserts: symmetric") && md.contains("| W = 10 |"));
    for r in &rows {
        assert_eq!(r.windows.len(), table1::WINDOWS.len());
        assert!(r
            .windows
            .iter()
            .all(|w| w.extract_cmp > 0.0 && w.extract_cmp <= 1.0));
    }
    for (t, rt, pe, pi) in [(1, 400, "1.00", "1.00"), (8, 50, "0.95", "0.93")] {
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with(&format!("| {t} | {rt} |")))
            .collect();
        assert_eq!(rows.len(), 6, "{md}");
        assert!(
            rows.iter()
                .all(|row| row.contains(&format!("| {pe} | {pi} |"))),
            "{rows:?}"
        );
    }
    assert!(is_png(&table1::table1_png(&rows).unwrap()));
}

#[test]
fn efficiency_is_mean_over_max() {
    assert_eq!(
        efficiency(&[vec![1, 3], vec![2, 2]]),
        (2.0 + 2.0) / (3.0 + 2.0)
    );
}
