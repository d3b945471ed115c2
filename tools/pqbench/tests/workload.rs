//! The priority sources: deterministic, prefix-stable, and (OPIC) cash-conserving.

use dragnet::queue::Entry;
use pqbench::workload::{copy_url, Graph, OpicCrawl, Sample};

fn tiny_graph() -> Graph {
    let urls = [
        "http://a.test/",
        "http://a.test/x",
        "http://b.test/",
        "http://c.test/y",
        "http://d.test/dangling",
    ];
    let arcs = [(0, 1), (0, 2), (1, 0), (2, 3), (3, 0), (3, 4), (2, 4)];
    Graph::from_arcs(&urls, &arcs)
}

#[test]
fn opic_crawl_queues_unfetched_pages_with_their_cash() {
    let g = tiny_graph();
    assert_eq!((g.nodes(), g.arcs()), (5, 7));
    let mut c = OpicCrawl::new(&g, 3);
    let mut out = Vec::new();
    c.fill(&g, 1000, &mut out);
    // Every page of every copy is fetched once; each link to a page not yet fetched queues it.
    assert_eq!(c.fetches, 15);
    assert!(
        out.len() < 3 * g.arcs() && out.len() >= 3 * 4,
        "{}",
        out.len()
    );
    let copy1: Vec<u64> = g
        .urls
        .iter()
        .map(|u| xxhash_rust::xxh3::xxh3_64(copy_url(u, 1).as_bytes()))
        .collect();
    assert_eq!(copy_url("http://a.test/x", 2), "http://c2.a.test/x");
    assert_eq!(copy_url("http:/odd", 2), "c2.http:/odd");
    for e in &out {
        let s = Entry::score_of_key(e.key);
        assert!(s > 1.0 && s <= 15.0, "{s}");
        assert!(g.fp.contains(&e.fp) || copy1.contains(&e.fp) || !g.fp.contains(&e.fp));
    }
    assert!(out.iter().any(|e| g.fp.contains(&e.fp)));
    assert!(out.iter().any(|e| copy1.contains(&e.fp)));
    // Copy 0 keeps the graph's own fingerprints and host keys.
    for e in out.iter().filter(|e| g.fp.contains(&e.fp)) {
        assert_eq!(
            g.host[g.fp.iter().position(|&f| f == e.fp).unwrap()],
            e.host
        );
    }
}

#[test]
fn streams_are_deterministic_and_prefix_stable() {
    let s = Sample::Synthetic {
        seed: 3,
        alpha: 1.1,
        hosts: 100,
    };
    let a = s.entries(500).unwrap();
    let b = s.entries(800).unwrap();
    assert_eq!(a[..], b[..500]);
    assert_eq!(a, s.entries(500).unwrap());
    let mut fps: Vec<u64> = b.iter().map(|e| e.fp).collect();
    fps.sort();
    fps.dedup();
    assert_eq!(fps.len(), 800, "synthetic URLs are fresh");
    let g = tiny_graph();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    OpicCrawl::new(&g, 400).fill(&g, 333, &mut x);
    let mut c = OpicCrawl::new(&g, 400);
    c.fill(&g, 100, &mut y);
    c.fill(&g, 400, &mut y);
    assert_eq!(x[..], y[..333]);
}

#[test]
fn graph_files_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.nodes.tsv"),
        "id\turl\n1\thttp://a.test/\n2\thttp://b.test/\n7\thttp://c.test/\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.edges.tsv"),
        "src_id\tdst_id\n1\t2\n2\t7\n7\t1\n1\t7\n",
    )
    .unwrap();
    let g = Graph::load(dir.path(), "t").unwrap();
    assert_eq!((g.nodes(), g.arcs()), (3, 4));
    let s = Sample::Graph {
        dir: dir.path().to_path_buf(),
        name: "t".into(),
    };
    assert_eq!(s.name(), "t");
    assert_eq!(s.entries(50).unwrap().len(), 50);
    std::fs::write(
        dir.path().join("u.nodes.tsv"),
        "id\turl\n1\thttp://a.test/\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("u.edges.tsv"), "src_id\tdst_id\n1\t9\n").unwrap();
    let e = Graph::load(dir.path(), "u").unwrap_err();
    assert!(e.contains("unknown node 9"), "{e}");
}
