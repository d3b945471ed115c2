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
//! that a previous access set). Nothing is allocated after [`Clock::new`].

/// Marker of an empty index cell.
const EMPTY: u32 = u32::MAX;
/// 2^64 / golden ratio, for Fibonacci hashing.
const FIB: u64 = 0x9E37_79B9_7F4A_7C15;

/// Open-addressing index from a 64-bit key to a slot number, the keys living in a separate
/// slice (`keys[slot]`). Shared by the CLOCK, LRU and RANDOM caches of this crate.
#[derive(Debug, Clone)]
pub(crate) struct SlotIndex {
    table: Vec<u32>,
    mask: usize,
    shift: u32,
}

impl SlotIndex {
    /// An index for up to `capacity` keys (table of `2 * capacity` cells rounded up to a power
    /// of two, at least 16).
    pub(crate) fn with_capacity(capacity: usize) -> SlotIndex {
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
    pub(crate) fn find(&self, keys: &[u64], key: u64) -> Option<u32> {
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
    pub(crate) fn insert(&mut self, key: u64, slot: u32) {
        let mut i = self.home(key);
        while self.table[i] != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.table[i] = slot;
    }

    /// Removes `key`, which must be present and still stored in `keys` at its slot.
    #[inline]
    pub(crate) fn remove(&mut self, keys: &[u64], key: u64) {
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

    /// Empties the index.
    pub(crate) fn clear(&mut self) {
        self.table.fill(EMPTY);
    }

    /// Bytes held by the table.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<u32>()
    }
}

/// A CLOCK cache of 64-bit fingerprints with a fixed capacity.
///
/// ```
/// use cachesim::clock::Clock;
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
            index: SlotIndex::with_capacity(capacity),
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
