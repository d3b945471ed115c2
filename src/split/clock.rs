//! CLOCK cache of 64-bit URL fingerprints (Broder, Najork & Wiener, WWW 2003, section 3.4).
//!
//! The algorithm, as in the textbook (Corbató's "second chance"):
//!
//! - `k` slots form a ring; every slot holds one fingerprint and one mark (reference) bit.
//! - A hit sets the mark bit of the fingerprint's slot.
//! - A miss while the ring is not yet full fills the next free slot (slot 0, 1, ...), marked.
//! - A miss on a full ring moves the hand around the ring, clearing every marked slot it passes,
//!   until it finds an unmarked slot. That slot's fingerprint is evicted, the new fingerprint
//!   takes its place (marked, since it has just been referenced), and the hand moves one slot on.
//!
//! A hash index maps a fingerprint to its slot: an open-addressing table of `u32` slot numbers
//! (linear probing, Fibonacci hashing, load factor at most 1/2, backward-shift deletion, so no
//! tombstones). The table stores only slot numbers: a probe compares the ring's key of the slot,
//! so memory is 8 bytes (key) + 1 bit (mark) per slot plus 4 bytes per table cell, that is about
//! 16 bytes per entry when the capacity is a power of two (see [`Clock::memory_bytes`]).
//! Every operation is O(1) expected; the hand's sweep is amortized O(1) (each step clears a mark
//! that a previous access set). The index grows with the cache (doubled and rebuilt from the
//! ring while it fills, amortized O(1) per insert), so a cache holds memory for the fingerprints
//! it holds, not for its capacity: a partition's split in a small crawl touches kilobytes, not
//! the 8 MiB table of a full default cache.
//!
//! The split stage keeps its cache between cycles: [`Clock::save`] writes the ring (keys, marks,
//! hand) to a state file with a magic, a version and a checksum, and [`Clock::load`] reads it
//! back, so a crawl's popular URLs stay cached from one cycle to the next. The sizing study that
//! chose the default capacity is `docs/cachesim.md` (`tools/cachesim`).

/// Fingerprints the index of a new cache has room for before it first grows.
const INITIAL_INDEX: usize = 1024;

/// Marker of an empty index cell.
const EMPTY: u32 = u32::MAX;
/// 2^64 / golden ratio, for Fibonacci hashing.
const FIB: u64 = 0x9E37_79B9_7F4A_7C15;
/// First bytes of a saved cache.
const MAGIC: &[u8; 8] = b"DNCLOCK\0";
/// Version of the saved-cache layout.
const FILE_VERSION: u64 = 1;

/// Open-addressing index from a 64-bit key to a slot number, the keys living in a separate
/// slice (`keys[slot]`). Shared by [`Clock`] and the LRU and RANDOM caches of `tools/cachesim`.
#[derive(Debug, Clone)]
pub struct SlotIndex {
    table: Vec<u32>,
    mask: usize,
    shift: u32,
}

impl SlotIndex {
    /// An index for up to `capacity` keys (table of `2 * capacity` cells rounded up to a power
    /// of two, at least 16).
    pub fn with_capacity(capacity: usize) -> SlotIndex {
        let size = capacity
            .checked_mul(2)
            .expect("capacity overflow")
            .next_power_of_two()
            .max(16);
        SlotIndex {
            table: vec![EMPTY; size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(FIB) >> self.shift) as usize
    }

    /// The slot of `key`, if present.
    #[inline]
    pub fn find(&self, keys: &[u64], key: u64) -> Option<u32> {
        let mut i = self.home(key);
        loop {
            let s = self.table[i];
            if s == EMPTY {
                return None;
            }
            if keys[s as usize] == key {
                return Some(s);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Records `key -> slot`; `key` must be absent.
    #[inline]
    pub fn insert(&mut self, key: u64, slot: u32) {
        let mut i = self.home(key);
        while self.table[i] != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.table[i] = slot;
    }

    /// Removes `key`, which must be present and still stored in `keys` at its slot.
    #[inline]
    pub fn remove(&mut self, keys: &[u64], key: u64) {
        let mut i = self.home(key);
        loop {
            let s = self.table[i];
            debug_assert!(s != EMPTY, "removing an absent key");
            if keys[s as usize] == key {
                break;
            }
            i = (i + 1) & self.mask;
        }
        // Backward-shift deletion: pull later entries of the probe run into the hole when their
        // home position allows it.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = self.table[j];
            if s == EMPTY {
                break;
            }
            let h = self.home(keys[s as usize]);
            if (j.wrapping_sub(h) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.table[hole] = s;
                hole = j;
            }
        }
        self.table[hole] = EMPTY;
    }

    /// Cells in the table (a power of two; at most half of them used).
    pub fn cells(&self) -> usize {
        self.table.len()
    }

    /// Empties the index.
    pub fn clear(&mut self) {
        self.table.fill(EMPTY);
    }

    /// Bytes held by the table.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<u32>()
    }
}

/// A CLOCK cache of 64-bit fingerprints with a fixed capacity.
///
/// ```
/// use dragnet::split::clock::Clock;
/// let mut c = Clock::new(2);
/// assert!(!c.check_insert(7)); // miss: 7 is now cached
/// assert!(c.check_insert(7)); // hit
/// ```
#[derive(Debug, Clone)]
pub struct Clock {
    /// Fingerprint of each used slot (`keys.len()` slots are in use).
    keys: Vec<u64>,
    /// Mark bits, one per slot, 64 to a word.
    marks: Vec<u64>,
    /// Slot the hand points at.
    hand: usize,
    capacity: usize,
    index: SlotIndex,
}

impl Clock {
    /// A cache of `capacity` fingerprints.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 or not below `u32::MAX`.
    pub fn new(capacity: usize) -> Clock {
        assert!(capacity > 0, "a CLOCK cache needs at least one slot");
        assert!(
            capacity < EMPTY as usize,
            "CLOCK capacity must be below 2^32 - 1"
        );
        Clock {
            keys: Vec::with_capacity(capacity),
            marks: vec![0; capacity.div_ceil(64)],
            hand: 0,
            capacity,
            index: SlotIndex::with_capacity(capacity.min(INITIAL_INDEX)),
        }
    }

    /// Makes room in the index for one more fingerprint while the ring fills: doubles the table
    /// (up to what `capacity` needs) and re-inserts the ring's keys.
    #[inline]
    fn reserve_one(&mut self) {
        if (self.keys.len() + 1) * 2 <= self.index.cells() {
            return;
        }
        let want = (self.keys.len() + 1).saturating_mul(2).min(self.capacity);
        self.index = SlotIndex::with_capacity(want);
        for (s, &k) in self.keys.iter().enumerate() {
            self.index.insert(k, s as u32);
        }
    }

    /// Looks `fp` up and returns `true` on a hit (and marks it). On a miss `fp` is inserted,
    /// evicting the first unmarked fingerprint at or after the hand if the cache is full, and
    /// `false` is returned.
    #[inline]
    pub fn check_insert(&mut self, fp: u64) -> bool {
        if let Some(s) = self.index.find(&self.keys, fp) {
            self.set_mark(s as usize);
            return true;
        }
        if self.keys.len() < self.capacity {
            self.reserve_one();
            let s = self.keys.len();
            self.keys.push(fp);
            self.set_mark(s);
            self.index.insert(fp, s as u32);
            return false;
        }
        let victim = self.advance_to_unmarked();
        self.index.remove(&self.keys, self.keys[victim]);
        self.keys[victim] = fp;
        self.set_mark(victim);
        self.index.insert(fp, victim as u32);
        self.hand = if victim + 1 == self.capacity {
            0
        } else {
            victim + 1
        };
        false
    }

    /// Whether `fp` is cached; changes nothing (no mark is set).
    #[inline]
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

    /// The capacity given to [`Clock::new`].
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets every fingerprint (the capacity and memory stay).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.marks.fill(0);
        self.hand = 0;
        self.index.clear();
    }

    /// Heap bytes the cache holds (ring keys, mark bits and index table).
    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.marks.len() * 8 + self.index.memory_bytes()
    }

    #[inline]
    fn set_mark(&mut self, s: usize) {
        self.marks[s >> 6] |= 1u64 << (s & 63);
    }

    /// Moves the hand, clearing marks, to the first unmarked slot and returns it.
    #[inline]
    fn advance_to_unmarked(&mut self) -> usize {
        let mut h = self.hand;
        loop {
            let w = h >> 6;
            let b = h & 63;
            let word = self.marks[w];
            // Marked slots from bit b to the end of this word (or of the ring).
            let end = (self.capacity - (w << 6)).min(64);
            let upto = if end == 64 { !0u64 } else { (1u64 << end) - 1 };
            let above = upto & (!0u64 << b);
            let unmarked = !word & above;
            if unmarked != 0 {
                let t = unmarked.trailing_zeros() as usize;
                // Clear the marks the hand passed over (bits b..t).
                let passed = (!0u64 << b) & ((1u64 << t) - 1);
                self.marks[w] = word & !passed;
                return (w << 6) + t;
            }
            // Every slot from b to the end of the word is marked: clear them all, move on.
            self.marks[w] = word & !above;
            h = (w << 6) + end;
            if h >= self.capacity {
                h = 0;
            }
        }
    }

    /// Writes the cache to `path` atomically: magic `DNCLOCK\0`, version, capacity, length, hand,
    /// the keys and the mark words (all little-endian u64), then the xxh3-64 of everything
    /// before it.
    pub fn save(&self, path: &std::path::Path) -> crate::Result<()> {
        let mut b = Vec::with_capacity(48 + self.keys.len() * 8 + self.marks.len() * 8);
        b.extend_from_slice(MAGIC);
        for v in [
            FILE_VERSION,
            self.capacity as u64,
            self.keys.len() as u64,
            self.hand as u64,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for k in &self.keys {
            b.extend_from_slice(&k.to_le_bytes());
        }
        for m in &self.marks {
            b.extend_from_slice(&m.to_le_bytes());
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        crate::storage::write_atomic(path, &b)
    }

    /// Reads a cache [`Clock::save`] wrote. If it was saved with another capacity, the keys are
    /// re-inserted in ring order into a cache of `capacity` (marks and hand start afresh). A
    /// damaged file is an error naming it.
    pub fn load(path: &std::path::Path, capacity: usize) -> crate::Result<Clock> {
        use crate::error::IoContext;
        let b = std::fs::read(path).ctx("read", path)?;
        let bad = |off: usize, why: &str| crate::Error::corrupt(path, off as u64, why.to_owned());
        if b.len() < 48 || &b[..8] != MAGIC {
            return Err(bad(0, "not a CLOCK cache file (bad magic or too short)"));
        }
        let (body, sum) = b.split_at(b.len() - 8);
        if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
            return Err(bad(
                body.len(),
                "checksum mismatch: the cache file is damaged",
            ));
        }
        let word = |i: usize| u64::from_le_bytes(body[i..i + 8].try_into().expect("8 bytes"));
        if word(8) != FILE_VERSION {
            return Err(bad(8, "unsupported CLOCK cache file version"));
        }
        let (cap, len, hand) = (word(16) as usize, word(24) as usize, word(32) as usize);
        let words = cap.div_ceil(64);
        if cap == 0 || len > cap || hand >= cap.max(1) || body.len() != 40 + len * 8 + words * 8 {
            return Err(bad(16, "inconsistent sizes in the CLOCK cache header"));
        }
        let keys = (0..len).map(|i| word(40 + i * 8));
        if cap != capacity {
            let mut c = Clock::new(capacity);
            for k in keys.take(capacity) {
                c.check_insert(k);
            }
            return Ok(c);
        }
        let mut c = Clock::new(capacity);
        for (s, k) in keys.enumerate() {
            if c.index.find(&c.keys, k).is_some() {
                return Err(bad(
                    40 + s * 8,
                    "a fingerprint appears twice in the CLOCK cache",
                ));
            }
            c.reserve_one();
            c.keys.push(k);
            c.index.insert(k, s as u32);
        }
        for (w, m) in c.marks.iter_mut().enumerate() {
            *m = word(40 + len * 8 + w * 8);
        }
        c.hand = hand;
        Ok(c)
    }

    /// Slot contents and mark bits in ring order, and the hand: for tests and debugging.
    pub fn ring(&self) -> (Vec<(u64, bool)>, usize) {
        let ring = (0..self.keys.len())
            .map(|s| (self.keys[s], self.marks[s >> 6] >> (s & 63) & 1 == 1))
            .collect();
        (ring, self.hand)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_then_evicts() {
        let mut c = Clock::new(3);
        assert!(!c.check_insert(1));
        assert!(!c.check_insert(2));
        assert!(!c.check_insert(3));
        assert_eq!(c.len(), 3);
        assert!(!c.check_insert(4));
        assert_eq!(c.len(), 3);
        assert!(!c.contains(1));
        assert!(c.contains(4));
    }

    #[test]
    fn zero_fingerprint_is_an_ordinary_key() {
        let mut c = Clock::new(1);
        assert!(!c.check_insert(0));
        assert!(c.check_insert(0));
        assert!(!c.check_insert(u64::MAX));
        assert!(!c.contains(0));
    }

    #[test]
    fn save_and_load_keep_the_ring_and_refuse_damage() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("cache");
        let mut c = Clock::new(100);
        for fp in [5u64, 9, 5, 0, u64::MAX, 77] {
            c.check_insert(fp);
        }
        for fp in 1000..1150 {
            c.check_insert(fp);
        }
        c.save(&p).unwrap();
        let d = Clock::load(&p, 100).unwrap();
        assert_eq!(d.ring(), c.ring());
        let mut e = c.clone();
        let mut f = d.clone();
        for fp in (0..400).map(|i| i * 7 % 300) {
            assert_eq!(e.check_insert(fp), f.check_insert(fp));
        }
        // Another capacity: the keys carry over.
        let small = Clock::load(&p, 10).unwrap();
        assert_eq!(small.len(), 10);
        // Damage anywhere is refused.
        let bytes = std::fs::read(&p).unwrap();
        for i in [0, 9, 20, 50, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[i] ^= 1;
            std::fs::write(&p, &b).unwrap();
            assert!(Clock::load(&p, 100).is_err(), "byte {i}");
        }
    }

    #[test]
    fn the_index_grows_with_the_entries_not_the_capacity() {
        let mut c = Clock::new(1 << 20);
        for k in 0..10u64 {
            assert!(!c.check_insert(k * 7919));
        }
        // A few entries: the index is the initial one, not the 8 MiB of a full cache.
        assert_eq!(c.index.cells(), 2 * INITIAL_INDEX);
        for k in 10..100_000u64 {
            assert!(!c.check_insert(k * 7919));
        }
        // Through every doubling, each key is still found, and the load stays at most 1/2.
        assert!((0..100_000u64).all(|k| c.contains(k * 7919)));
        assert!(c.index.cells() >= 2 * c.len() && c.index.cells() <= 8 * c.len());
        // Saved and loaded, the same.
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("c.clock");
        c.save(&path).unwrap();
        let d = Clock::load(&path, 1 << 20).unwrap();
        assert!((0..100_000u64).all(|k| d.contains(k * 7919)));
        assert_eq!(d.len(), 100_000);
    }

    #[test]
    fn sweeps_across_words() {
        // 130 slots, all marked: the hand must clear all of them and come back to slot 0.
        let mut c = Clock::new(130);
        for fp in 0..130 {
            c.check_insert(fp);
        }
        assert!(!c.check_insert(1000));
        let (ring, hand) = c.ring();
        assert_eq!(ring[0], (1000, true));
        assert!(ring[1..].iter().all(|&(_, m)| !m));
        assert_eq!(hand, 1);
    }
}
