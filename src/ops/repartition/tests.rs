use super::*;

#[test]
fn the_router_stays_within_its_budget_and_sorts_by_new_partition() {
    let t = tempfile::tempdir().unwrap();
    let budget = 4096;
    let m2 = 7;
    let mut router = Router::new(m2, budget, t.path()).unwrap();
    let mut want = Vec::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..5_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let host = xxhash_rust::xxh3::xxh3_64(&(x % 300).to_le_bytes());
        let fp = x ^ (i << 1);
        let payload = vec![(i % 251) as u8; 40];
        router.push(host, fp, &payload).unwrap();
        assert!(
            router.max_buffered <= budget,
            "{} bytes buffered, budget {budget}",
            router.max_buffered
        );
        want.push((partition_of(host, m2), fp, payload));
    }
    let mut got: Vec<run::OwnedRecord> = Vec::new();
    let spills = router.finish(&mut run::KeepAll, &mut got).unwrap();
    // 5,000 records of ~60 bytes through a 4 KiB buffer: spilled many times.
    assert!(spills > 50, "{spills} spills");
    want.sort();
    let got: Vec<(u32, u64, Vec<u8>)> = got
        .into_iter()
        .map(|(k, v)| {
            let (q, fp) = routed(&k);
            (q, fp, v)
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn new_partitions_overlap_the_old_ones_that_share_their_keys() {
    for (m, m2) in [(3u32, 5u32), (5, 3), (3, 1), (1, 4), (256, 4096), (7, 7)] {
        for q in 0..m2 {
            let r = overlapping(q, m2, m);
            let lo = first_key(q, m2) as u64;
            let hi = (first_key(q + 1, m2) - 1) as u64;
            assert_eq!(partition_of(lo, m2), q);
            assert_eq!(partition_of(hi, m2), q);
            assert_eq!(*r.start(), partition_of(lo, m));
            assert_eq!(*r.end(), partition_of(hi, m));
        }
        assert_eq!(first_key(m2, m2), 1u128 << 64);
    }
}

#[test]
fn only_the_partitions_line_changes() {
    let text = "# head\n[crawl]\nname = \"x\"\npartitions = 3   # fixed\n\n[fetch]\nthreads = 4\n";
    assert_eq!(
        with_partitions(text, 5),
        "# head\n[crawl]\nname = \"x\"\npartitions = 5 # fixed\n\n[fetch]\nthreads = 4\n"
    );
    assert_eq!(
        with_partitions("[crawl]\nname = \"x\"\n[fetch]\n", 2),
        "[crawl]\nname = \"x\"\npartitions = 2\n[fetch]\n"
    );
    assert_eq!(
        with_partitions("[fetch]\nthreads = 1\n", 2),
        "[fetch]\nthreads = 1\n\n[crawl]\npartitions = 2\n"
    );
}
