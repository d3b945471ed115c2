//! Every policy against a brute-force reference on small random streams.

use std::collections::HashSet;

use cachesim::policies::{
    count_misses, infinite_misses, min_misses, misses, next_uses, static_misses, Cache, Lru,
    Policy, RandomCache,
};
use cachesim::Clock;
use proptest::prelude::*;

/// Naive LRU: a vector, most recent first.
fn naive_lru(stream: &[u64], k: usize) -> (u64, Vec<u64>) {
    let mut v: Vec<u64> = Vec::new();
    let mut m = 0;
    for &x in stream {
        if let Some(p) = v.iter().position(|&y| y == x) {
            v.remove(p);
        } else {
            m += 1;
            if v.len() == k {
                v.pop();
            }
        }
        v.insert(0, x);
    }
    (m, v)
}

/// Textbook CLOCK on plain vectors: the slots, their mark bits, the hand.
fn naive_clock(stream: &[u64], k: usize) -> (u64, Vec<(u64, bool)>, usize) {
    let mut slots: Vec<(u64, bool)> = Vec::new();
    let mut hand = 0;
    let mut m = 0;
    for &x in stream {
        if let Some(s) = slots.iter_mut().find(|s| s.0 == x) {
            s.1 = true;
            continue;
        }
        m += 1;
        if slots.len() < k {
            slots.push((x, true));
            continue;
        }
        while slots[hand].1 {
            slots[hand].1 = false;
            hand = (hand + 1) % k;
        }
        slots[hand] = (x, true);
        hand = (hand + 1) % k;
    }
    (m, slots, hand)
}

/// Belady's MIN with bypass, brute force: on a miss with a full cache, among the cached items
/// and the new one, drop the one whose next request is farthest (never = infinitely far).
fn naive_min(stream: &[u64], k: usize) -> u64 {
    let next_req = |i: usize, x: u64| {
        stream[i + 1..]
            .iter()
            .position(|&y| y == x)
            .map_or(usize::MAX, |p| p + i + 1)
    };
    let mut cache: Vec<u64> = Vec::new();
    let mut m = 0;
    for (i, &x) in stream.iter().enumerate() {
        if cache.contains(&x) {
            continue;
        }
        m += 1;
        if cache.len() < k {
            cache.push(x);
            continue;
        }
        let (far_idx, far) = cache
            .iter()
            .enumerate()
            .map(|(j, &y)| (j, next_req(i, y)))
            .max_by_key(|&(_, n)| n)
            .unwrap();
        if far > next_req(i, x) {
            cache[far_idx] = x;
        }
    }
    m
}

/// Optimal misses by exhaustive search over every eviction choice (tiny streams only).
fn exhaustive_opt(stream: &[u64], k: usize) -> u64 {
    fn go(stream: &[u64], k: usize, cache: &mut Vec<u64>) -> u64 {
        let Some((&x, rest)) = stream.split_first() else {
            return 0;
        };
        if cache.contains(&x) {
            return go(rest, k, cache);
        }
        // Bypass.
        let mut best = 1 + go(rest, k, &mut cache.clone());
        if cache.len() < k {
            let mut c = cache.clone();
            c.push(x);
            best = best.min(1 + go(rest, k, &mut c));
        } else {
            for j in 0..cache.len() {
                let mut c = cache.clone();
                c[j] = x;
                best = best.min(1 + go(rest, k, &mut c));
            }
        }
        best
    }
    go(stream, k, &mut Vec::new())
}

fn naive_static(stream: &[u64], k: usize) -> u64 {
    let mut counts: Vec<(u64, u64)> = Vec::new();
    for &x in stream {
        match counts.iter_mut().find(|c| c.0 == x) {
            Some(c) => c.1 += 1,
            None => counts.push((x, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let set: HashSet<u64> = counts.iter().take(k).map(|c| c.0).collect();
    stream.iter().filter(|x| !set.contains(x)).count() as u64
}

fn stream_strategy(max_len: usize, alphabet: u64) -> impl Strategy<Value = Vec<u64>> {
    // Small alphabets make hits likely; map values through a mixer so fingerprints look like
    // fingerprints (and include 0 and u64::MAX sometimes).
    prop::collection::vec(0..alphabet, 0..max_len).prop_map(|v| {
        v.into_iter()
            .map(|x| match x {
                0 => 0,
                1 => u64::MAX,
                _ => x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1234,
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn lru_equals_naive_lru(stream in stream_strategy(300, 40), k in 1usize..24) {
        let mut lru = Lru::new(k);
        let m = count_misses(&mut lru, &stream);
        let (nm, order) = naive_lru(&stream, k);
        prop_assert_eq!(m, nm);
        prop_assert_eq!(lru.order(), order);
    }

    #[test]
    fn clock_equals_textbook_clock(stream in stream_strategy(300, 40), k in 1usize..150) {
        let mut c = Clock::new(k);
        let mut m = 0;
        for &x in &stream {
            if !c.check_insert(x) { m += 1; }
        }
        let (nm, slots, hand) = naive_clock(&stream, k);
        prop_assert_eq!(m, nm);
        let (ring, h) = c.ring();
        prop_assert_eq!(ring, slots.clone());
        if slots.len() == k { prop_assert_eq!(h, hand); }
        for &(x, _) in &slots { prop_assert!(c.contains(x)); }
        prop_assert_eq!(c.len(), slots.len());
    }

    #[test]
    fn min_equals_brute_force_min(stream in stream_strategy(120, 20), k in 1usize..10) {
        let (next, _) = next_uses(&stream);
        prop_assert_eq!(min_misses(&next, k), naive_min(&stream, k));
    }

    #[test]
    fn min_is_optimal(stream in stream_strategy(12, 6), k in 1usize..4) {
        let (next, _) = next_uses(&stream);
        prop_assert_eq!(min_misses(&next, k), exhaustive_opt(&stream, k));
    }

    #[test]
    fn min_bounds_every_policy(stream in stream_strategy(400, 60), k in 1usize..40, seed: u64) {
        let (next, distinct) = next_uses(&stream);
        let min = min_misses(&next, k);
        prop_assert!(min >= distinct);
        for p in [Policy::Random, Policy::Lru, Policy::Clock, Policy::StaticCold] {
            let m = misses(p, &stream, k, Some(&next), seed);
            prop_assert!(min <= m, "{:?}: MIN {} > {}", p, min, m);
        }
    }

    #[test]
    fn infinite_is_distinct_count(stream in stream_strategy(400, 80)) {
        let distinct: HashSet<u64> = stream.iter().copied().collect();
        prop_assert_eq!(infinite_misses(&stream), distinct.len() as u64);
        prop_assert_eq!(next_uses(&stream).1, distinct.len() as u64);
        // A cache as large as the stream only takes compulsory misses.
        let k = stream.len().max(1);
        for p in [Policy::Random, Policy::Lru, Policy::Clock, Policy::Min, Policy::StaticCold] {
            prop_assert_eq!(misses(p, &stream, k, None, 1), distinct.len() as u64);
        }
        prop_assert_eq!(misses(Policy::Static, &stream, k, None, 1), 0);
    }

    #[test]
    fn static_equals_naive_static(stream in stream_strategy(300, 40), k in 1usize..50) {
        prop_assert_eq!(static_misses(&stream, &[k])[0], naive_static(&stream, k));
    }

    #[test]
    fn random_is_a_valid_cache(stream in stream_strategy(300, 40), k in 1usize..24, seed: u64) {
        // A reference RANDOM run with the same victim choices: replay the cache's contents.
        let mut c = RandomCache::new(k, seed);
        let mut model: HashSet<u64> = HashSet::new();
        for &x in &stream {
            let hit = c.access(x);
            prop_assert_eq!(hit, model.contains(&x));
            if !hit {
                if model.len() == k {
                    // Exactly one cached item was evicted.
                    let gone: Vec<u64> = model.iter().copied().filter(|&y| !c.contains(y)).collect();
                    prop_assert_eq!(gone.len(), 1);
                    model.remove(&gone[0]);
                }
                model.insert(x);
            }
            prop_assert_eq!(c.len(), model.len());
            prop_assert!(c.contains(x));
        }
    }
}

/// CLOCK on a hand-computed trace (capacity 3; marks set on insert and on hit; the hand moves
/// one slot past the slot it fills; slots numbered from 0). `*` is a set mark:
///
/// ```text
/// req  result  slots after   hand  why
/// 1    miss    1* .  .       0     fill slot 0
/// 2    miss    1* 2* .       0     fill slot 1
/// 3    miss    1* 2* 3*      0     fill slot 2
/// 4    miss    4* 2  3       1     hand clears 1, 2, 3, wraps, evicts 1 (slot 0)
/// 1    miss    4* 1* 3       2     slot 1 (2) unmarked: evict 2
/// 2    miss    4* 1* 2*      0     slot 2 (3) unmarked: evict 3
/// 5    miss    5* 1  2       1     clears 4, 1, 2, wraps, evicts 4 (slot 0)
/// 1    hit     5* 1* 2       1
/// 2    hit     5* 1* 2*      1
/// 3    miss    5  3* 2       2     clears 1, 2, 5, wraps, evicts 1 (slot 1)
/// 4    miss    5  3* 4*      0     slot 2 (2) unmarked: evict 2
/// 5    hit     5* 3* 4*      0
/// ```
#[test]
fn clock_hand_computed_trace() {
    let trace = [1u64, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];
    let expect = [
        false, false, false, false, false, false, false, true, true, false, false, true,
    ];
    let mut c = Clock::new(3);
    let got: Vec<bool> = trace.iter().map(|&x| c.check_insert(x)).collect();
    assert_eq!(got, expect);
    let (ring, hand) = c.ring();
    assert_eq!(ring, vec![(5, true), (3, true), (4, true)]);
    assert_eq!(hand, 0);
    // Snapshot after the fourth request.
    let mut c = Clock::new(3);
    for &x in &trace[..4] {
        c.check_insert(x);
    }
    assert_eq!(c.ring(), (vec![(4, true), (2, false), (3, false)], 1));
    // LRU on the same trace for contrast: 10 misses (LRU keeps 2,1 and loses 5 before its reuse).
    assert_eq!(count_misses(&mut Lru::new(3), &trace), 10);
}

#[test]
fn clock_large_random_stream_matches_naive() {
    // A longer run that wraps the ring many times and crosses 64-slot words.
    let mut s = 12345u64;
    let stream: Vec<u64> = (0..20_000)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % 700
        })
        .collect();
    for k in [1, 63, 64, 65, 130, 500] {
        let mut c = Clock::new(k);
        let m = stream.iter().filter(|&&x| !c.check_insert(x)).count() as u64;
        let (nm, slots, hand) = naive_clock(&stream, k);
        assert_eq!(m, nm, "k = {k}");
        assert_eq!(c.ring(), (slots, hand), "k = {k}");
    }
}

#[test]
fn clock_clear_and_memory() {
    let mut c = Clock::new(1000);
    for x in 0..2000 {
        c.check_insert(x);
    }
    assert_eq!(c.len(), 1000);
    assert!(c.memory_bytes() >= 1000 * 8);
    assert!(c.memory_bytes() <= 1000 * 8 + 2048 * 4 + 1024);
    c.clear();
    assert!(c.is_empty());
    assert!(!c.contains(1999));
    assert!(!c.check_insert(1999));
    assert_eq!(c.capacity(), 1000);
}
