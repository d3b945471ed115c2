//! The replacement policies of the study: RANDOM, STATIC, LRU, CLOCK ([`crate::clock`]), MIN and
//! INFINITE. Every policy counts misses on a stream of 64-bit fingerprints; a cache of size `k`
//! holds at most `k` fingerprints.

use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::clock::{Clock, SlotIndex};

/// The policies, in the order tables and plots show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Policy {
    /// Random replacement.
    Random,
    /// The `k` most frequent fingerprints of the whole stream, preloaded, never changed.
    Static,
    /// The same fixed set as STATIC, but not preloaded: a fingerprint of the set is loaded the
    /// first time it is requested (a miss), so compulsory misses count as for the other policies.
    StaticCold,
    /// Least recently used.
    Lru,
    /// CLOCK (second chance).
    Clock,
    /// Belady's clairvoyant optimum.
    Min,
    /// An unbounded cache: compulsory misses only.
    Infinite,
}

impl Policy {
    /// All policies.
    pub const ALL: [Policy; 7] = [
        Policy::Random,
        Policy::Static,
        Policy::StaticCold,
        Policy::Lru,
        Policy::Clock,
        Policy::Min,
        Policy::Infinite,
    ];

    /// Upper-case name, as in the paper.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Random => "RANDOM",
            Policy::Static => "STATIC",
            Policy::StaticCold => "STATIC-COLD",
            Policy::Lru => "LRU",
            Policy::Clock => "CLOCK",
            Policy::Min => "MIN",
            Policy::Infinite => "INFINITE",
        }
    }
}

/// A hasher for keys that are already fingerprints: one multiply-and-fold.
#[derive(Default, Clone, Copy)]
pub struct FpHasher(u64);

impl Hasher for FpHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let m = (x ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = m ^ (m >> 29);
    }
}

/// A `HashMap` keyed by fingerprints.
pub type FpMap<V> = HashMap<u64, V, BuildHasherDefault<FpHasher>>;

/// An online cache: `access` returns `true` on a hit and inserts on a miss.
pub trait Cache {
    /// Looks `fp` up; inserts it on a miss (evicting if full). `true` on a hit.
    fn access(&mut self, fp: u64) -> bool;
}

impl Cache for Clock {
    #[inline]
    fn access(&mut self, fp: u64) -> bool {
        self.check_insert(fp)
    }
}

/// Misses of an online cache over `stream`.
pub fn count_misses<C: Cache>(cache: &mut C, stream: &[u64]) -> u64 {
    let mut misses = 0u64;
    for &fp in stream {
        if !cache.access(fp) {
            misses += 1;
        }
    }
    misses
}

const NIL: u32 = u32::MAX;

/// LRU: a doubly linked recency list over slots, plus the hash index.
#[derive(Debug, Clone)]
pub struct Lru {
    keys: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently used slot.
    head: u32,
    /// Least recently used slot.
    tail: u32,
    capacity: usize,
    index: SlotIndex,
}

impl Lru {
    /// An LRU cache of `capacity` (> 0) fingerprints.
    pub fn new(capacity: usize) -> Lru {
        assert!(capacity > 0 && capacity < NIL as usize);
        Lru {
            keys: Vec::with_capacity(capacity),
            prev: Vec::with_capacity(capacity),
            next: Vec::with_capacity(capacity),
            head: NIL,
            tail: NIL,
            capacity,
            index: SlotIndex::with_capacity(capacity),
        }
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// Cached fingerprints from most to least recently used.
    pub fn order(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.keys.len());
        let mut s = self.head;
        while s != NIL {
            out.push(self.keys[s as usize]);
            s = self.next[s as usize];
        }
        out
    }
}

impl Cache for Lru {
    #[inline]
    fn access(&mut self, fp: u64) -> bool {
        if let Some(s) = self.index.find(&self.keys, fp) {
            if s != self.head {
                self.unlink(s);
                self.push_front(s);
            }
            return true;
        }
        let s = if self.keys.len() < self.capacity {
            let s = self.keys.len() as u32;
            self.keys.push(fp);
            self.prev.push(NIL);
            self.next.push(NIL);
            s
        } else {
            let s = self.tail;
            self.index.remove(&self.keys, self.keys[s as usize]);
            self.unlink(s);
            self.keys[s as usize] = fp;
            s
        };
        self.push_front(s);
        self.index.insert(fp, s);
        false
    }
}

/// SplitMix64, the generator of every random choice in this crate.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-high; bias below 2^-32 for n < 2^32).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// RANDOM: on a miss with a full cache, a uniformly random slot is replaced.
#[derive(Debug, Clone)]
pub struct RandomCache {
    keys: Vec<u64>,
    capacity: usize,
    index: SlotIndex,
    rng: SplitMix64,
}

impl RandomCache {
    /// A RANDOM cache of `capacity` (> 0) fingerprints; `seed` picks the victims.
    pub fn new(capacity: usize, seed: u64) -> RandomCache {
        assert!(capacity > 0 && capacity < NIL as usize);
        RandomCache {
            keys: Vec::with_capacity(capacity),
            capacity,
            index: SlotIndex::with_capacity(capacity),
            rng: SplitMix64(seed),
        }
    }

    /// Whether `fp` is cached.
    pub fn contains(&self, fp: u64) -> bool {
        self.index.find(&self.keys, fp).is_some()
    }

    /// Number of cached fingerprints.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Cache for RandomCache {
    #[inline]
    fn access(&mut self, fp: u64) -> bool {
        if self.index.find(&self.keys, fp).is_some() {
            return true;
        }
        if self.keys.len() < self.capacity {
            let s = self.keys.len() as u32;
            self.keys.push(fp);
            self.index.insert(fp, s);
        } else {
            let s = self.rng.below(self.capacity as u64) as usize;
            self.index.remove(&self.keys, self.keys[s]);
            self.keys[s] = fp;
            self.index.insert(fp, s as u32);
        }
        false
    }
}

/// "Never requested again" in [`next_uses`].
pub const NEVER: u32 = u32::MAX;

/// For every position `i`, the position of the next request for `stream[i]`, or [`NEVER`]
/// (one backward pass). Also returns the number of distinct fingerprints.
///
/// # Panics
///
/// If the stream has `u32::MAX` or more entries.
pub fn next_uses(stream: &[u64]) -> (Vec<u32>, u64) {
    assert!(
        stream.len() < NEVER as usize,
        "stream too long for 32-bit positions"
    );
    let mut last: FpMap<u32> = FpMap::default();
    let mut next = vec![NEVER; stream.len()];
    for i in (0..stream.len()).rev() {
        if let Some(p) = last.insert(stream[i], i as u32) {
            next[i] = p;
        }
    }
    (next, last.len() as u64)
}

/// Misses of Belady's MIN with a cache of `k` (> 0) entries, given `next` from [`next_uses`].
///
/// On a miss the cache may also decline to keep the missed fingerprint (as the paper's
/// definition of a cache allows): it keeps it only if its next request comes before that of
/// some cached fingerprint, which it then evicts (the one requested farthest in the future).
/// This is optimal among all policies, so MIN's misses bound every other policy's from below.
///
/// Implementation: a cached fingerprint is represented by the position of its next request,
/// which is unique. A request at position `i` hits iff `i` is in the cached set. The set is a
/// bit per position plus a max-heap of positions with lazy deletion.
pub fn min_misses(next: &[u32], k: usize) -> u64 {
    assert!(k > 0);
    let n = next.len();
    let mut live = vec![0u64; n.div_ceil(64)];
    let is_live = |live: &[u64], p: u32| live[p as usize >> 6] >> (p & 63) & 1 == 1;
    let mut heap: BinaryHeap<u32> = BinaryHeap::with_capacity(2 * k + 1024);
    let mut count = 0usize;
    let mut misses = 0u64;
    for (i, &nx) in next.iter().enumerate() {
        let pos = i as u32;
        if is_live(&live, pos) {
            live[i >> 6] &= !(1u64 << (i & 63));
            count -= 1;
        } else {
            misses += 1;
        }
        if nx == NEVER {
            continue;
        }
        if count == k {
            // Farthest next request among the cached fingerprints.
            let far = loop {
                let top = *heap.peek().expect("a full cache has live entries");
                if is_live(&live, top) {
                    break top;
                }
                heap.pop();
            };
            if far < nx {
                continue; // keeping nx would be worse: bypass
            }
            heap.pop();
            live[far as usize >> 6] &= !(1u64 << (far & 63));
            count -= 1;
        }
        live[nx as usize >> 6] |= 1u64 << (nx & 63);
        heap.push(nx);
        count += 1;
        if heap.len() > 4 * k + 4096 {
            heap.retain(|&p| is_live(&live, p));
        }
    }
    misses
}

/// Misses of STATIC for every size in `sizes`: the cache is preloaded with the `k` most frequent
/// fingerprints of the whole stream and never changes, so a request misses iff its fingerprint
/// is not among them (the paper's simulation: a first pass counts, then the cache is preloaded).
/// Ties in frequency do not matter: the miss count depends only on the sorted frequencies.
pub fn static_misses(stream: &[u64], sizes: &[usize]) -> Vec<u64> {
    let mut counts: FpMap<u64> = FpMap::default();
    for &fp in stream {
        *counts.entry(fp).or_insert(0) += 1;
    }
    let mut freq: Vec<u64> = counts.into_values().collect();
    freq.sort_unstable_by(|a, b| b.cmp(a));
    let total = stream.len() as u64;
    sizes
        .iter()
        .map(|&k| total - freq.iter().take(k).sum::<u64>())
        .collect()
}

/// Misses of INFINITE: the number of distinct fingerprints (compulsory misses).
pub fn infinite_misses(stream: &[u64]) -> u64 {
    let mut seen: FpMap<()> = FpMap::default();
    for &fp in stream {
        seen.insert(fp, ());
    }
    seen.len() as u64
}

/// Misses of one policy with a cache of `k` entries. `next` is needed for MIN only (computed
/// here when `None`). RANDOM uses `seed` for its victims.
pub fn misses(policy: Policy, stream: &[u64], k: usize, next: Option<&[u32]>, seed: u64) -> u64 {
    match policy {
        Policy::Random => count_misses(&mut RandomCache::new(k, seed), stream),
        Policy::Static => static_misses(stream, &[k])[0],
        Policy::StaticCold => {
            static_misses(stream, &[k])[0] + (k as u64).min(infinite_misses(stream))
        }
        Policy::Lru => count_misses(&mut Lru::new(k), stream),
        Policy::Clock => count_misses(&mut Clock::new(k), stream),
        Policy::Min => match next {
            Some(n) => min_misses(n, k),
            None => min_misses(&next_uses(stream).0, k),
        },
        Policy::Infinite => infinite_misses(stream),
    }
}
