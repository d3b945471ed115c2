//! Tests of the CBT of R-blocks against a sorted in-memory reference.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::queue::pager::PagerOptions;

/// A tiny frame cache (4 pages of 512 bytes), far smaller than the queues in the tests.
fn opts(block: usize, slices: usize, durable: bool) -> CbtOptions {
    CbtOptions {
        block,
        slices,
        pager: PagerOptions {
            page_size: 512,
            cache_pages: 4,
            durable,
        },
    }
}

/// The reference: a multiset of entries.
#[derive(Debug, Clone, Default, PartialEq)]
struct Reference(BTreeMap<Entry, usize>);

impl Reference {
    fn insert(&mut self, items: &[Entry]) {
        for e in items {
            *self.0.entry(*e).or_default() += 1;
        }
    }

    fn extract(&mut self, r: usize) -> Vec<Entry> {
        let mut out = Vec::new();
        while out.len() < r {
            let Some(mut first) = self.0.first_entry() else {
                break;
            };
            out.push(*first.key());
            *first.get_mut() -= 1;
            if *first.get() == 0 {
                first.remove();
            }
        }
        out
    }

    fn len(&self) -> u64 {
        self.0.values().sum::<usize>() as u64
    }
}

/// Entries from a small domain, so whole-entry duplicates are common.
fn entry(x: u64) -> Entry {
    Entry::new(x % 23, (x / 23) % 7, x % 2)
}

fn entries(seed: u64, n: usize) -> Vec<Entry> {
    let mut z = seed;
    (0..n)
        .map(|_| {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            entry(z >> 33)
        })
        .collect()
}

fn check(q: &mut CbtQueue) {
    for s in &mut q.slices {
        s.check_invariants();
    }
}

fn extract(q: &mut CbtQueue, r: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    q.extract_top(r, &mut out).unwrap();
    out
}

/// Drains a queue and its reference and compares them.
fn drain_equal(q: &mut CbtQueue, reference: &mut Reference) {
    assert_eq!(q.len(), reference.len());
    let all = reference.len() as usize;
    assert_eq!(extract(q, all + 1), reference.extract(all + 1));
    assert!(q.is_empty());
}

use crate::queue::testkit::Op;

fn op(block: usize) -> impl Strategy<Value = Op> {
    let n = 3 * block + 4;
    prop_oneof![
        4 => prop::collection::vec(0u64..400, 0..n).prop_map(|v| Op::Insert(
            v.into_iter().map(entry).collect()
        )),
        3 => (0..n).prop_map(Op::Extract),
        1 => Just(Op::Commit),
        1 => Just(Op::Reopen),
        1 => Just(Op::Kill),
    ]
}

/// Runs `ops` on a queue and the reference; commits, clean reopens and kills included.
fn run_ops(dir: &Path, o: CbtOptions, ops: &[Op]) {
    let mut q = CbtQueue::open(dir, o).unwrap();
    let mut live = Reference::default();
    let mut committed = Reference::default();
    let mut tag = 0;
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Insert(v) => {
                q.insert_many(v).unwrap();
                live.insert(v);
            }
            Op::Extract(r) => {
                let got = extract(&mut q, *r);
                assert_eq!(got, live.extract(*r), "op {i}: extract {r}");
            }
            Op::Commit => {
                tag += 1;
                q.commit(tag).unwrap();
                committed = live.clone();
            }
            Op::Reopen => {
                q.commit(tag + 100).unwrap();
                tag += 100;
                committed = live.clone();
                drop(q);
                q = CbtQueue::open(dir, o).unwrap();
                assert_eq!(q.tag(), tag);
            }
            Op::Kill => {
                std::mem::forget(q);
                q = CbtQueue::open(dir, o).unwrap();
                live = committed.clone();
                assert_eq!(q.tag(), tag);
            }
        }
        assert_eq!(q.len(), live.len(), "op {i}");
    }
    check(&mut q);
    drain_equal(&mut q, &mut live);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_matches_the_sorted_reference(
        block in prop::sample::select(vec![1usize, 2, 3, 5, 64, 256]),
        slices in 1usize..=3,
        ops in prop::collection::vec(op(8), 1..40),
    ) {
        let dir = tempfile::tempdir().unwrap();
        // Op sizes are scaled by R so every R sees several blocks per operation.
        let scale = block.div_ceil(8);
        let ops: Vec<Op> = ops
            .into_iter()
            .map(|o| match o {
                Op::Insert(v) => Op::Insert(
                    (0..scale).flat_map(|k| v.iter().map(move |e| Entry { host: e.host + 2 * k as u64, ..*e })).collect(),
                ),
                Op::Extract(r) => Op::Extract(r * scale),
                o => o,
            })
            .collect();
        run_ops(dir.path(), opts(block, slices, true), &ops);
    }
}

#[test]
fn tiny_blocks_match_the_reference_with_invariants_after_each_step() {
    for block in [1, 2, 3] {
        for slices in [1, 2] {
            let dir = tempfile::tempdir().unwrap();
            let mut q = CbtQueue::open(dir.path(), opts(block, slices, false)).unwrap();
            let mut reference = Reference::default();
            for step in 0..60u64 {
                let v = entries(step, (step as usize * 7) % 13);
                q.insert_many(&v).unwrap();
                reference.insert(&v);
                let r = (step as usize * 5) % 11;
                assert_eq!(
                    extract(&mut q, r),
                    reference.extract(r),
                    "R={block} step {step}"
                );
                check(&mut q);
            }
            drain_equal(&mut q, &mut reference);
        }
    }
}

#[test]
fn larger_blocks_and_many_slices_match_the_reference() {
    for (block, slices) in [(64, 1), (256, 1), (64, 4), (256, 3)] {
        let dir = tempfile::tempdir().unwrap();
        let mut q = CbtQueue::open(dir.path(), opts(block, slices, false)).unwrap();
        let mut reference = Reference::default();
        // Fill well past the cache (4 pages of 512 bytes), then interleave.
        let fill: Vec<Entry> = (0..6000u64).map(|x| entry(x * 7919 % 4001)).collect();
        q.insert_many(&fill).unwrap();
        reference.insert(&fill);
        for step in 0..40u64 {
            let r = [1, block / 2, block, 3 * block + 1][step as usize % 4];
            assert_eq!(
                extract(&mut q, r),
                reference.extract(r),
                "R={block} T={slices}"
            );
            let v = entries(step + 99, [block, 7, 2 * block + 3][step as usize % 3]);
            q.insert_many(&v).unwrap();
            reference.insert(&v);
        }
        check(&mut q);
        drain_equal(&mut q, &mut reference);
    }
}

#[test]
fn reopen_after_commit_gives_the_same_order() {
    for slices in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(16, slices, true);
        let mut q = CbtQueue::open(dir.path(), o).unwrap();
        let v = entries(5, 1000);
        q.insert_many(&v).unwrap();
        extract(&mut q, 37);
        q.commit(7).unwrap();
        drop(q);
        let mut q = CbtQueue::open(dir.path(), o).unwrap();
        assert_eq!(q.tag(), 7);
        assert_eq!(q.len(), 963);
        check(&mut q);
        let mut reference = Reference::default();
        reference.insert(&v);
        reference.extract(37);
        drain_equal(&mut q, &mut reference);
        let fresh = CbtQueue::open(&dir.path().join("fresh"), o).unwrap();
        assert!(fresh.is_empty() && fresh.tag() == 0);
    }
}

#[test]
fn a_kill_or_a_drop_without_commit_gives_the_committed_state() {
    for slices in [1, 2] {
        for forget in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let o = opts(8, slices, true);
            let mut q = CbtQueue::open(dir.path(), o).unwrap();
            let mut reference = Reference::default();
            let v = entries(1, 700);
            q.insert_many(&v).unwrap();
            reference.insert(&v);
            assert_eq!(extract(&mut q, 50), reference.extract(50));
            q.commit(1).unwrap();
            // Much more work, pushed through the tiny cache into the files, then a "crash".
            for step in 0..20 {
                extract(&mut q, 33);
                q.insert_many(&entries(100 + step, 41)).unwrap();
            }
            if forget {
                std::mem::forget(q);
            } else {
                drop(q);
            }
            let mut q = CbtQueue::open(dir.path(), o).unwrap();
            assert_eq!(q.tag(), 1);
            check(&mut q);
            drain_equal(&mut q, &mut reference);
        }
    }
}

#[test]
fn a_crash_between_slice_commits_falls_back_to_the_previous_commit() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(4, 3, true);
    let mut q = CbtQueue::open(dir.path(), o).unwrap();
    let mut reference = Reference::default();
    // The very first commit interrupted: back to the empty queue.
    q.insert_many(&entries(3, 100)).unwrap();
    q.commit_slices(1, 1).unwrap();
    std::mem::forget(q);
    let mut q = CbtQueue::open(dir.path(), o).unwrap();
    assert!(q.is_empty() && q.tag() == 0);
    let v = entries(4, 500);
    q.insert_many(&v).unwrap();
    reference.insert(&v);
    assert_eq!(extract(&mut q, 30), reference.extract(30));
    q.commit(2).unwrap();
    for step in 0..3 {
        // Later commits interrupted after one or two of the three slices.
        for k in 0..10 {
            extract(&mut q, 9);
            q.insert_many(&entries(50 + k, 13)).unwrap();
        }
        q.commit_slices(3 + step, 1 + step as usize % 2).unwrap();
        std::mem::forget(q);
        q = CbtQueue::open(dir.path(), o).unwrap();
        assert_eq!(q.tag(), 2);
        assert_eq!(q.len(), reference.len());
        check(&mut q);
    }
    // A complete commit after the fall-backs sticks.
    let w = entries(9, 77);
    q.insert_many(&w).unwrap();
    reference.insert(&w);
    q.commit(10).unwrap();
    drop(q);
    let mut q = CbtQueue::open(dir.path(), o).unwrap();
    assert_eq!(q.tag(), 10);
    drain_equal(&mut q, &mut reference);
}

#[test]
fn other_block_or_slices_is_a_usage_error_naming_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut q = CbtQueue::open(dir.path(), opts(8, 2, true)).unwrap();
    q.insert_many(&entries(1, 20)).unwrap();
    q.commit(1).unwrap();
    drop(q);
    for (b, t) in [(16, 2), (8, 1), (8, 3)] {
        let e = CbtQueue::open(dir.path(), opts(b, t, true)).err().unwrap();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        let m = e.to_string();
        assert!(
            m.contains(&dir.path().display().to_string()) && m.contains("block = 8"),
            "{m}"
        );
    }
    let e = CbtQueue::open(dir.path(), opts(0, 1, true)).err().unwrap();
    assert!(matches!(e, Error::Usage(_)));
    assert_eq!(
        CbtQueue::open(dir.path(), opts(8, 2, true)).unwrap().len(),
        20
    );
}

#[test]
fn a_damaged_state_is_a_corrupt_error_naming_the_meta() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(8, 1, true);
    CbtQueue::open(dir.path(), o).unwrap().commit(1).unwrap();
    let mut p =
        crate::queue::pager::Pager::open(&dir.path().join("slice-000.dat"), o.pager).unwrap();
    p.commit(b"DNCBTQ01garbage").unwrap();
    drop(p);
    let e = CbtQueue::open(dir.path(), o).err().unwrap();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("slice-000.dat.meta"), "{e}");
}

#[test]
fn an_operation_on_r_items_costs_logarithmic_block_ios() {
    let block = 64; // 1536-byte blocks: 4 pages of 504 bytes of data (512 less the checksum)
    let dir = tempfile::tempdir().unwrap();
    let mut q = CbtQueue::open(dir.path(), opts(block, 1, false)).unwrap();
    let n_items = 512u64;
    let fill: Vec<Entry> = (0..n_items * block as u64)
        .map(|x| Entry::new(x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20, x, 0))
        .collect();
    q.insert_many(&fill).unwrap();
    let levels = 64 - (2 * n_items).leading_zeros() as u64; // ⌊lg 2N⌋ + 1
    let pages = 4;
    let mut out = Vec::new();
    for step in 0..20u64 {
        q.reset_stats();
        out.clear();
        q.extract_top(block, &mut out).unwrap();
        let e = q.stats();
        q.reset_stats();
        let v: Vec<Entry> = (0..block as u64)
            .map(|x| {
                Entry::new(
                    (x + step * 977).wrapping_mul(0xD1B5_4A32_D192_ED03) >> 20,
                    x,
                    1,
                )
            })
            .collect();
        q.insert_many(&v).unwrap();
        let i = q.stats();
        // Fig. 2: at most one new block read and two written per level; Fig. 1: one read and one
        // write per winner on the path; each block is `pages` pages (plus evictions of the cache).
        assert!(
            e.block_ios() <= 3 * pages * levels + 8,
            "extract {e:?}, {levels} levels"
        );
        assert!(
            i.block_ios() <= 2 * pages * levels + 8,
            "insert {i:?}, {levels} levels"
        );
        assert!(e.comparisons <= 2 * (block as u64 + 2) * levels, "{e:?}");
    }
    assert_eq!(q.len(), n_items * block as u64);
}

#[test]
fn superstep_gives_each_slices_own_top_and_its_counter_deltas() {
    let (block, slices) = (32, 4);
    let dir = tempfile::tempdir().unwrap();
    let mut q = CbtQueue::open(dir.path(), opts(block, slices, false)).unwrap();
    let mut per_slice = vec![Reference::default(); slices];
    let fill = entries(11, 3000);
    q.insert_many(&fill).unwrap();
    for e in &fill {
        per_slice[q.slice_of(e)].insert(&[*e]);
    }
    let mut work = 0;
    for step in 0..10 {
        let ins = entries(200 + step, block);
        let before: Vec<IoStats> = (0..slices).map(|t| q.slice_stats(t)).collect();
        let mut out = Vec::new();
        let deltas = q.superstep(block / slices, &ins, &mut out).unwrap();
        let mut expect = Vec::new();
        for (t, r) in per_slice.iter_mut().enumerate() {
            expect.extend(r.extract(block / slices));
            assert_eq!(deltas[t], delta(q.slice_stats(t), before[t]));
            work += deltas[t].comparisons + deltas[t].block_ios();
        }
        assert_eq!(out, expect, "step {step}");
        for e in &ins {
            per_slice[q.slice_of(e)].insert(&[*e]);
        }
        for (t, r) in per_slice.iter().enumerate() {
            assert_eq!(q.slice_len(t), r.len());
        }
    }
    assert!(work > 0);
    check(&mut q);
    let mut all = Reference::default();
    for r in &per_slice {
        all.0.extend(r.0.iter().map(|(e, c)| (*e, *c)));
    }
    drain_equal(&mut q, &mut all);
}

#[test]
fn stats_sum_the_slices_and_reset() {
    let dir = tempfile::tempdir().unwrap();
    let mut q = CbtQueue::open(dir.path(), opts(4, 3, false)).unwrap();
    q.insert_many(&entries(2, 400)).unwrap();
    extract(&mut q, 100);
    let s = q.stats();
    assert!(
        s.block_reads > 0 && s.block_writes > 0 && s.comparisons > 0,
        "{s:?}"
    );
    let sum = (0..3).fold(IoStats::default(), |a, t| a.add(&q.slice_stats(t)));
    assert_eq!(s.block_ios(), sum.block_ios());
    assert!(s.comparisons >= sum.comparisons);
    q.reset_stats();
    assert_eq!(q.stats(), IoStats::default());
}

#[test]
fn paper_selects_give_the_same_order_with_every_select_run() {
    for (block, slices) in [(1, 1), (3, 2), (64, 1), (64, 3)] {
        let run = |paper: bool| {
            let dir = tempfile::tempdir().unwrap();
            let mut q = CbtQueue::open(dir.path(), opts(block, slices, false)).unwrap();
            q.set_paper_selects(paper);
            let mut reference = Reference::default();
            let fill: Vec<Entry> = (0..3000u64).map(|x| entry(x * 7919 % 4001)).collect();
            q.insert_many(&fill).unwrap();
            reference.insert(&fill);
            let mut got = Vec::new();
            for step in 0..30u64 {
                let r = [1, block, 2 * block + 1][step as usize % 3];
                let out = extract(&mut q, r);
                assert_eq!(out, reference.extract(r), "R={block} T={slices}");
                got.extend(out);
                let v = entries(step + 7, [block, 5, 3 * block][step as usize % 3]);
                q.insert_many(&v).unwrap();
                reference.insert(&v);
                check(&mut q);
            }
            (got, q.stats())
        };
        let (fast, fast_stats) = run(false);
        let (paper, paper_stats) = run(true);
        assert_eq!(fast, paper, "R={block} T={slices}");
        // Every SELECT runs and writes its blocks back, unchanged or not.
        assert!(
            paper_stats.block_writes > fast_stats.block_writes,
            "R={block} T={slices}: {paper_stats:?} vs {fast_stats:?}"
        );
    }
}
