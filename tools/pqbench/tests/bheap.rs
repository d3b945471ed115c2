//! The baseline binary heap agrees with a sorted reference, through a small frame cache, and
//! survives a commit and reopen.

use cachesim::policies::SplitMix64;
use dragnet::queue::pager::PagerOptions;
use dragnet::queue::{DiskQueue, Entry};
use pqbench::bheap::BHeap;

fn opts(cache: usize) -> PagerOptions {
    PagerOptions {
        page_size: 512,
        cache_pages: cache,
        durable: true,
    }
}

#[test]
fn agrees_with_a_sorted_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut q = BHeap::open(dir.path(), opts(3)).unwrap();
    let mut reference: Vec<Entry> = Vec::new();
    let mut rng = SplitMix64(7);
    let mut out = Vec::new();
    for round in 0..60 {
        let k = rng.below(200) as usize;
        // Few distinct keys, so ties (broken by fingerprint, then host) are exercised.
        let batch: Vec<Entry> = (0..k)
            .map(|_| Entry::new(rng.below(50), rng.below(4), rng.below(3)))
            .collect();
        q.insert_many(&batch).unwrap();
        reference.extend_from_slice(&batch);
        reference.sort();
        let r = rng.below(250) as usize;
        out.clear();
        q.extract_top(r, &mut out).unwrap();
        let take = r.min(reference.len());
        let want: Vec<Entry> = reference.drain(..take).collect();
        assert_eq!(out, want, "round {round}");
        assert_eq!(q.len(), reference.len() as u64);
    }
    let s = q.stats();
    assert!(
        s.comparisons > 0 && s.block_reads > 0 && s.block_writes > 0,
        "{s:?}"
    );
    q.reset_stats();
    assert_eq!(q.stats(), Default::default());
}

#[test]
fn commit_and_reopen_keep_the_heap() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<Entry> = (0..1000u64)
        .map(|i| Entry::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40, i, 0))
        .collect();
    {
        let mut q = BHeap::open(dir.path(), opts(4)).unwrap();
        q.insert_many(&items).unwrap();
        q.commit(42).unwrap();
        // Not committed: rolled back on reopen.
        let mut out = Vec::new();
        q.extract_top(500, &mut out).unwrap();
    }
    let mut q = BHeap::open(dir.path(), opts(4)).unwrap();
    assert_eq!(q.tag(), 42);
    assert_eq!(q.len(), 1000);
    let mut out = Vec::new();
    q.extract_top(2000, &mut out).unwrap();
    let mut want = items.clone();
    want.sort();
    assert_eq!(out, want);
    assert!(q.is_empty());
}
