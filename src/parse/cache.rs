//! [`StrMap`]: the bounded string-keyed maps behind the extractor's caches
//! ([`super::extract`]), stored compactly.
//!
//! Why not a `HashMap<String, u32>`: the extractor looks a map up once or twice per link, and
//! with a `String` per key every lookup chased a pointer to a key allocated somewhere in the
//! heap (the profile showed `memcmp` on cold memory, and `malloc`/`free` for every key added,
//! cleared and dropped). Here the keys are appended to one arena, and the table is an array of
//! 16-byte slots (32 bits of the key's hash, the value, where the key is in the arena): a probe
//! reads one slot, and the arena is only compared when 32 bits of hash match, so in practice
//! once, for the key looked for. Clearing is a `memset` of the slots.
//!
//! The table doubles whenever it would be more than half full, from 1,024 slots: up to twice the
//! entries the owner allows before it clears the map (see [`StrMap::full`]), and further if the
//! owner goes on adding (a page's links are added whole); clearing keeps the table unless it
//! went past that size.

use std::hash::BuildHasher;

/// A string-keyed map to `u32` values with a fixed entry cap and a cap on the bytes of its keys;
/// see the module docs.
pub(super) struct StrMap {
    seed: u64,
    /// A power of two, at least twice `len`.
    slots: Vec<Slot>,
    /// The keys, one after the other.
    arena: String,
    len: usize,
    max_entries: usize,
    max_bytes: usize,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The high 32 bits of the key's hash with the lowest bit set; 0 for an empty slot.
    tag: u32,
    value: u32,
    /// The key: `arena[at..at + len]`.
    at: u32,
    len: u32,
}

/// A key's hash, computed once for a lookup and the insert that may follow it.
#[derive(Clone, Copy)]
pub(super) struct Hash(u64);

impl StrMap {
    /// A map that is [full](StrMap::full) at `max_entries` entries or `max_bytes` bytes of keys;
    /// hashes are seeded per process (the keys come from web pages).
    pub(super) fn new(max_entries: usize, max_bytes: usize) -> StrMap {
        let max_entries = max_entries.clamp(1, 1 << 30);
        StrMap {
            seed: std::collections::hash_map::RandomState::new().hash_one(0u64),
            slots: vec![Slot::default(); (2 * max_entries).next_power_of_two().min(1024)],
            arena: String::new(),
            len: 0,
            max_entries,
            max_bytes,
        }
    }

    /// The hash of `key` in this map.
    pub(super) fn hash(&self, key: &str) -> Hash {
        Hash(xxhash_rust::xxh3::xxh3_64_with_seed(
            key.as_bytes(),
            self.seed,
        ))
    }

    fn tag(h: Hash) -> u32 {
        ((h.0 >> 32) as u32) | 1
    }

    /// The value of `key`, whose hash is `h`.
    pub(super) fn get(&self, h: Hash, key: &str) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let tag = StrMap::tag(h);
        let mut i = h.0 as usize & mask;
        loop {
            let s = self.slots[i];
            if s.tag == 0 {
                return None;
            }
            if s.tag == tag && self.key(s.at, s.len) == key {
                return Some(s.value);
            }
            i = (i + 1) & mask;
        }
    }

    /// Reads the slot where a lookup of the key with hash `h` starts, so that the lookup finds
    /// it in the CPU's cache; returns what it read, for `std::hint::black_box`.
    pub(super) fn touch_slot(&self, h: Hash) -> u32 {
        self.slots[h.0 as usize & (self.slots.len() - 1)].at
    }

    /// Reads the first byte of the key in the slot where a lookup of `h` starts (whatever the
    /// slot holds: no branch on it), as [`StrMap::touch_slot`] does the slot.
    pub(super) fn touch_key(&self, h: Hash) -> u32 {
        let at = self.slots[h.0 as usize & (self.slots.len() - 1)].at as usize;
        let a = self.arena.as_bytes();
        u32::from(
            a.get(at.min(a.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0),
        )
    }

    /// Adds `key` (hash `h`, not in the map) with `value` and returns where its copy is (for
    /// [`StrMap::key`]). The caps are the owner's to keep, by clearing the map once it is
    /// [full](StrMap::full): `None`, and nothing added, only if the keys would pass 4 GiB.
    pub(super) fn insert(&mut self, h: Hash, key: &str, value: u32) -> Option<(u32, u32)> {
        let at = u32::try_from(self.arena.len()).ok()?;
        let len = u32::try_from(key.len()).ok()?;
        at.checked_add(len)?;
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        self.arena.push_str(key);
        self.place(
            Slot {
                tag: StrMap::tag(h),
                value,
                at,
                len,
            },
            h,
        );
        self.len += 1;
        Some((at, len))
    }

    fn place(&mut self, slot: Slot, h: Hash) {
        let mask = self.slots.len() - 1;
        let mut i = h.0 as usize & mask;
        while self.slots[i].tag != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// Doubles the table (the keys are hashed again from the arena).
    fn grow(&mut self) {
        let size = 2 * self.slots.len();
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        for s in old.into_iter().filter(|s| s.tag != 0) {
            let h = self.hash(self.key(s.at, s.len));
            self.place(s, h);
        }
    }

    /// A key added to the map, by what [`StrMap::insert`] returned.
    pub(super) fn key(&self, at: u32, len: u32) -> &str {
        &self.arena[at as usize..at as usize + len as usize]
    }

    /// Whether the map holds its cap of entries or of key bytes: the owner clears it when that
    /// suits it.
    pub(super) fn full(&self) -> bool {
        self.len >= self.max_entries || self.arena.len() >= self.max_bytes
    }

    /// Entries in the map.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Removes every entry; the memory is kept.
    pub(super) fn clear(&mut self) {
        let size = (2 * self.max_entries).next_power_of_two();
        if self.slots.len() > size {
            self.slots = vec![Slot::default(); size];
        } else if self.len > 0 {
            self.slots.fill(Slot::default());
        }
        self.arena.clear();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn behaves_like_a_hash_map_up_to_its_caps() {
        let mut m = StrMap::new(100, 10_000);
        let mut reference = HashMap::new();
        for round in 0..3 {
            for i in 0..150u32 {
                let k = format!("key {}", (i * 7919 + round) % 120);
                let h = m.hash(&k);
                match (m.get(h, &k), reference.get(&k)) {
                    (Some(v), Some(&r)) => assert_eq!(v, r),
                    (None, None) => {
                        let (at, len) = m.insert(h, &k, i).unwrap();
                        assert_eq!(m.key(at, len), k);
                        reference.insert(k, i);
                    }
                    other => panic!("{k}: {other:?}"),
                }
            }
            assert_eq!(m.len(), reference.len());
            assert!(m.full());
            m.clear();
            reference.clear();
        }
        // Past the entry cap the table grows.
        let mut m = StrMap::new(4, 1000);
        for i in 0..100u32 {
            let k = i.to_string();
            m.insert(m.hash(&k), &k, i).unwrap();
        }
        for i in 0..100u32 {
            let k = i.to_string();
            assert_eq!(m.get(m.hash(&k), &k), Some(i));
        }
        m.clear();
        assert_eq!(m.get(m.hash("1"), "1"), None);
        let mut m = StrMap::new(100, 64);
        let long = "x".repeat(65);
        assert!(!m.full());
        assert!(m.insert(m.hash(&long), &long, 1).is_some());
        assert!(m.full());
        assert_eq!(m.get(m.hash(&long), &long), Some(1));
        assert_eq!(m.get(m.hash("short"), "short"), None);
    }
}
