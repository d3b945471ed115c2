//! Tests of the quickheap against a sorted in-memory reference.

use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::queue::pager::Pager;

/// Small pages and a 4-frame cache, so the queue is far larger than the RAM budget.
fn small(initial_capacity: u64, seed: u64) -> QuickHeapOptions {
    QuickHeapOptions {
        pager: PagerOptions {
            page_size: 512,
            cache_pages: 4,
            durable: true,
        },
        seed,
        initial_capacity,
    }
}

/// A deterministic stream of entries with keys below `keys` (small: many duplicates).
fn entries(n: usize, keys: u64, seed: u64) -> Vec<Entry> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (s >> 33) % keys;
            Entry::new(k, (s >> 20) % 3, s % 2)
        })
        .collect()
}

/// The reference queue: a multiset kept sorted.
#[derive(Debug, Clone, Default)]
struct Reference(Vec<Entry>);

impl Reference {
    fn insert(&mut self, items: &[Entry]) {
        self.0.extend_from_slice(items);
        self.0.sort();
    }

    fn extract(&mut self, r: usize) -> Vec<Entry> {
        let n = r.min(self.0.len());
        self.0.drain(..n).collect()
    }
}

/// Reads the whole array and checks the quickheap invariant (tests only: loads everything).
fn check_invariant(h: &mut QuickHeap) {
    let mut all = Vec::new();
    h.read_range(h.idx, h.len(), &mut all).unwrap();
    let at = |pos: u64| all[(pos - h.idx) as usize];
    for p in &h.stack[1..] {
        assert_eq!(
            at(p.pos),
            p.val,
            "pivot at {} holds its recorded value",
            p.pos
        );
        for (i, e) in all.iter().enumerate() {
            let pos = h.idx + i as u64;
            if pos < p.pos {
                assert!(
                    *e <= p.val,
                    "{e:?} at {pos} left of pivot {:?} at {}",
                    p.val,
                    p.pos
                );
            } else {
                assert!(
                    *e >= p.val,
                    "{e:?} at {pos} right of pivot {:?} at {}",
                    p.val,
                    p.pos
                );
            }
        }
    }
    assert!(h.len() <= h.capacity());
}

fn extract(h: &mut QuickHeap, r: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    h.extract_top(r, &mut out).unwrap();
    out
}

#[test]
fn an_empty_heap_extracts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(1, 1)).unwrap();
    assert_eq!(h.len(), 0);
    assert!(h.is_empty());
    assert_eq!(
        h.capacity(),
        21,
        "rounded up to one 512-byte page of 24-byte slots"
    );
    assert!(extract(&mut h, 5).is_empty());
    assert_eq!(h.tag(), 0);
}

#[test]
fn extracts_ascending_at_tiny_and_large_r() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(21, 7)).unwrap();
    let mut reference = Reference::default();
    let items = entries(3000, 500, 1);
    h.insert_many(&items).unwrap();
    reference.insert(&items);
    for r in [1, 2, 3, 1, 700, 3, 2, 1, 50, 0, 1000] {
        assert_eq!(extract(&mut h, r), reference.extract(r), "r = {r}");
        check_invariant(&mut h);
    }
    assert_eq!(extract(&mut h, usize::MAX), reference.extract(usize::MAX));
    assert!(h.is_empty());
}

#[test]
fn appends_after_what_out_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(64, 3)).unwrap();
    h.insert_many(&[Entry::new(5, 0, 0), Entry::new(1, 0, 0)])
        .unwrap();
    let mut out = vec![Entry::new(99, 9, 9)];
    h.extract_top(10, &mut out).unwrap();
    assert_eq!(
        out,
        vec![
            Entry::new(99, 9, 9),
            Entry::new(1, 0, 0),
            Entry::new(5, 0, 0)
        ]
    );
}

#[test]
fn duplicates_and_ties_come_out_in_the_total_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(21, 9)).unwrap();
    let mut items = vec![Entry::new(4, 4, 4); 500];
    items.extend((0..500).map(|i| Entry::new(4, 4 - i % 3, i % 2)));
    let mut reference = Reference::default();
    h.insert_many(&items).unwrap();
    reference.insert(&items);
    while !h.is_empty() {
        assert_eq!(extract(&mut h, 37), reference.extract(37));
    }
    assert!(reference.0.is_empty());
    // All equal: partitions must still split evenly (Hoare stops on equal keys).
    h.reset_stats();
    h.insert_many(&vec![Entry::new(1, 1, 1); 4000]).unwrap();
    for _ in 0..40 {
        assert_eq!(extract(&mut h, 100), vec![Entry::new(1, 1, 1); 100]);
    }
    let c = h.stats().comparisons;
    assert!(c < 4000 * 40, "{c} comparisons for 4000 equal entries");
}

#[test]
fn grows_while_wrapped_around_the_circular_array() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(21, 5)).unwrap();
    let mut reference = Reference::default();
    // Keep ~15 entries and cycle the head around the one-page array many times.
    let mut stream = entries(4000, 1 << 20, 2).into_iter();
    for round in 0..100 {
        let batch: Vec<Entry> = stream.by_ref().take(5).collect();
        h.insert_many(&batch).unwrap();
        reference.insert(&batch);
        if round >= 2 {
            assert_eq!(extract(&mut h, 5), reference.extract(5));
        }
    }
    assert_eq!(h.capacity(), 21);
    assert!(h.idx > 10 * 21, "the head went round the array");
    assert_ne!(h.idx % 21, 0);
    // Now grow twice from a wrapped layout.
    let batch: Vec<Entry> = stream.by_ref().take(60).collect();
    h.insert_many(&batch).unwrap();
    reference.insert(&batch);
    assert_eq!(h.capacity(), 84);
    check_invariant(&mut h);
    for r in [1, 3, 40, 1000] {
        assert_eq!(extract(&mut h, r), reference.extract(r));
        check_invariant(&mut h);
    }
}

#[test]
fn reopen_after_commit_gives_the_same_order_and_bytes() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let items = entries(2000, 300, 11);
    let run = |dir: &Path, reopen: bool| -> (Vec<Entry>, Vec<u8>) {
        let mut h = QuickHeap::open(dir, small(21, 42)).unwrap();
        h.insert_many(&items).unwrap();
        let mut out = extract(&mut h, 333);
        h.commit(7).unwrap();
        if reopen {
            drop(h);
            h = QuickHeap::open(dir, small(21, 999)).unwrap();
            assert_eq!(h.tag(), 7);
        }
        assert_eq!(h.len(), 2000 - 333);
        h.insert_many(&items[..500]).unwrap();
        for r in [1, 2, 3, 100, 5000] {
            out.extend(extract(&mut h, r));
        }
        h.commit(8).unwrap();
        (out, std::fs::read(dir.join("heap.dat")).unwrap())
    };
    let (out_a, bytes_a) = run(a.path(), false);
    let (out_b, bytes_b) = run(b.path(), true);
    assert_eq!(out_a, out_b);
    assert!(bytes_a == bytes_b, "reopening changed the file bytes");
    let mut reference = Reference::default();
    reference.insert(&items);
    let mut want = reference.extract(333);
    reference.insert(&items[..500]);
    want.extend(reference.extract(usize::MAX));
    assert_eq!(out_a, want);
}

#[test]
fn a_kill_before_commit_reopens_at_the_committed_state() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(21, 3)).unwrap();
    let mut reference = Reference::default();
    let items = entries(1500, 1000, 4);
    h.insert_many(&items[..1000]).unwrap();
    reference.insert(&items[..1000]);
    assert_eq!(extract(&mut h, 10), reference.extract(10));
    h.commit(1).unwrap();
    let committed = reference.clone();
    let (cap, pivots) = (h.capacity(), h.stack.clone());
    // Change a lot (growing the file), write it back through the small cache, then "kill".
    h.insert_many(&entries(3000, 50, 5)).unwrap();
    extract(&mut h, 700);
    h.pager.flush().unwrap();
    assert!(h.capacity() > cap);
    std::mem::forget(h);
    let mut h = QuickHeap::open(dir.path(), small(21, 3)).unwrap();
    assert_eq!((h.tag(), h.capacity(), h.len()), (1, cap, 990));
    assert_eq!(h.stack, pivots);
    check_invariant(&mut h);
    // A plain drop without commit rolls back too.
    h.insert_many(&items[1000..]).unwrap();
    drop(h);
    let mut h = QuickHeap::open(dir.path(), small(21, 3)).unwrap();
    assert_eq!(h.len(), 990);
    let mut reference = committed;
    assert_eq!(extract(&mut h, usize::MAX), reference.extract(usize::MAX));
}

#[test]
fn the_same_seed_and_operations_give_the_same_bytes() {
    let items = entries(2500, 100, 8);
    let run = |seed: u64| -> (Vec<u8>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let mut h = QuickHeap::open(dir.path(), small(21, seed)).unwrap();
        for chunk in items.chunks(300) {
            h.insert_many(chunk).unwrap();
            extract(&mut h, 101);
            extract(&mut h, 1);
        }
        h.commit(3).unwrap();
        let d = dir.path();
        (
            std::fs::read(d.join("heap.dat")).unwrap(),
            std::fs::read(d.join("heap.dat.meta")).unwrap(),
        )
    };
    assert!(run(17) == run(17), "same seed, same ops, different bytes");
    assert!(run(17).0 != run(18).0, "the seed has no effect");
}

#[test]
fn io_and_comparisons_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(dir.path(), small(21, 6)).unwrap();
    let n = 20_000;
    h.insert_many(&entries(n, 1 << 40, 12)).unwrap();
    let mut got = 0;
    while !h.is_empty() {
        let out = extract(&mut h, 100);
        assert!(out.windows(2).all(|w| w[0] <= w[1]));
        got += out.len();
    }
    assert_eq!(got, n);
    let s = h.stats();
    assert!(s.block_reads > 0 && s.block_writes > 0, "{s:?}");
    assert_eq!(s.bytes_read, s.block_reads * 512);
    // O(log n) comparisons per element, amortized (log2 20000 ≈ 14.3).
    let per = s.comparisons as f64 / n as f64;
    assert!((3.0..60.0).contains(&per), "{per} comparisons per entry");
    h.reset_stats();
    assert_eq!(h.stats(), IoStats::default());
}

#[test]
fn a_bad_meta_is_reported_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heap.dat");
    let opts = small(21, 1);
    let mut p = Pager::open(&path, opts.pager).unwrap();
    p.commit(b"not a heap").unwrap();
    drop(p);
    let e = QuickHeap::open(dir.path(), opts).err().unwrap().to_string();
    assert!(
        e.contains("heap.dat.meta") && e.contains("quickheap"),
        "{e}"
    );

    // A well-formed blob whose pivot lies outside the queue.
    let scratch = tempfile::tempdir().unwrap();
    let mut h = QuickHeap::open(scratch.path(), opts).unwrap();
    h.insert_many(&entries(100, 10, 1)).unwrap();
    h.stack.push(Pivot {
        pos: h.idx + 500,
        val: Entry::default(),
    });
    let meta = h.encode_meta(1);
    let mut p = Pager::open(&path, opts.pager).unwrap();
    p.grow(512).unwrap();
    p.commit(&meta).unwrap();
    drop(p);
    let e = QuickHeap::open(dir.path(), opts).err().unwrap().to_string();
    assert!(e.contains("heap.dat") && e.contains("out of order"), "{e}");

    // The page size is fixed at creation.
    let other = QuickHeapOptions {
        pager: PagerOptions {
            page_size: 1024,
            ..opts.pager
        },
        ..opts
    };
    let e = QuickHeap::open(dir.path(), other).err().unwrap();
    assert!(matches!(e, Error::Usage(_)), "{e}");
}

use crate::queue::testkit::Op;

fn op() -> impl Strategy<Value = Op> {
    let entry = prop_oneof![
        (0u64..12, 0u64..2, 0u64..2).prop_map(|(k, f, h)| Entry::new(k, f, h)),
        any::<u64>().prop_map(|k| Entry::new(k, 0, 0)),
    ];
    prop_oneof![
        6 => proptest::collection::vec(entry, 0..70).prop_map(Op::Insert),
        4 => (1usize..=3).prop_map(Op::Extract),
        2 => (0usize..120).prop_map(Op::Extract),
        1 => Just(Op::Extract(usize::MAX)),
        1 => Just(Op::Commit),
        1 => Just(Op::Reopen),
        1 => Just(Op::Kill),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_matches_a_sorted_reference(
        ops in proptest::collection::vec(op(), 1..50),
        seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let opts = small(21, seed);
        let mut h = QuickHeap::open(dir.path(), opts).unwrap();
        let (mut live, mut committed) = (Reference::default(), Reference::default());
        let mut tag = 0;
        for op in ops {
            match op {
                Op::Insert(items) => {
                    h.insert_many(&items).unwrap();
                    live.insert(&items);
                }
                Op::Extract(r) => {
                    prop_assert_eq!(extract(&mut h, r), live.extract(r));
                }
                Op::Commit => {
                    tag += 1;
                    h.commit(tag).unwrap();
                    committed = live.clone();
                }
                Op::Reopen | Op::Kill => {
                    if matches!(op, Op::Kill) {
                        std::mem::forget(h);
                    } else {
                        drop(h);
                    }
                    h = QuickHeap::open(dir.path(), opts).unwrap();
                    prop_assert_eq!(h.tag(), tag);
                    live = committed.clone();
                }
            }
            prop_assert_eq!(h.len(), live.0.len() as u64);
            check_invariant(&mut h);
        }
        prop_assert_eq!(extract(&mut h, usize::MAX), live.extract(usize::MAX));
    }
}
