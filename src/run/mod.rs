//! Run files: the one on-disk format the stages exchange (docs/design.md §4).
//!
//! A run file is a sequence of records sorted by a fixed-width key, each with an optional
//! variable-length payload, stored in zstd-compressed blocks behind a header and followed by a
//! footer index and a trailer with checksums. The byte layout is in `docs/formats.md` and in
//! [`format`](mod@format); this module gives the streaming API the stages are written against:
//!
//! - [`RunWriter`]: a streaming writer that refuses out-of-order keys
//!   ([`Error::OutOfOrder`](crate::Error::OutOfOrder), as fst's builder does) and publishes the file
//!   atomically through [`crate::storage`].
//! - [`RunReader`]: a streaming reader with bounded memory (one block at a time) that verifies
//!   every block checksum as it goes and the whole-file checksum at the end, and can
//!   [`seek`](RunReader::seek) to the first block that may hold a key.
//! - [`Sorter`]: an external sorter with a memory budget in bytes that spills sorted runs and
//!   merges them.
//! - [`merge`] and [`Merger`]: a k-way merge of any number of sorted inputs, with a caller-supplied
//!   [`Reducer`] for equal keys (tantivy's `merge_sstable` with its `ValueMerger` is the model).
//!
//! Keys are byte strings compared with `memcmp`; numeric keys are stored big-endian, so
//! [`fp_key`] and [`host_fp_key`] build the common ones.

pub mod block;
mod columns;
pub mod format;
mod merge;
mod reader;
mod sort;
mod spill;
mod transpose;
mod writer;

pub use format::Header;
pub use merge::{merge, KeepAll, KeepFirst, Merger, Reducer};
pub use reader::{verify, RunInfo, RunReader, U64Blocks};
pub use sort::{SortStats, Sorter};
pub use writer::{RunSummary, RunWriter, WriterOptions};

use crate::error::Result;

/// What a run file holds: its record schema, declared in the header and checked by readers.
///
/// The schema id identifies the payload encoding; readers that expect one schema refuse another
/// with [`Error::Schema`](crate::Error::Schema) instead of misreading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    /// Stable identifier written in the header.
    pub id: u32,
    /// Short name shown by `dragnet check run` (at most 16 bytes are stored).
    pub name: &'static str,
    /// Width of every key in bytes (1..=64).
    pub key_len: u16,
    /// Whether records carry a payload.
    pub payload: bool,
    /// Whether keys are strictly increasing (a set) rather than non-decreasing.
    pub unique: bool,
    /// How the key is built, for humans (at most 16 bytes are stored).
    pub sort_key: &'static str,
}

impl Schema {
    /// The seen set of a partition: every URL fingerprint ever discovered, strictly increasing.
    pub const SEEN: Schema = Schema {
        id: 1,
        name: "seen",
        key_len: 8,
        payload: false,
        unique: true,
        sort_key: "fp64",
    };
    /// A fetch list: key = host key ++ URL fingerprint, payload = [`crate::records::FetchItem`].
    pub const FETCHLIST: Schema = Schema {
        id: 2,
        name: "fetchlist",
        key_len: 16,
        payload: true,
        unique: true,
        sort_key: "host64,fp64",
    };
    /// The URL database of a partition: key = URL fingerprint, payload = [`crate::records::UrlRecord`].
    pub const URLDB: Schema = Schema {
        id: 3,
        name: "urldb",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "fp64",
    };
    /// A bag of fingerprints, duplicates allowed (sort input, benchmarks).
    pub const FINGERPRINTS: Schema = Schema {
        id: 4,
        name: "fingerprints",
        key_len: 8,
        payload: false,
        unique: false,
        sort_key: "fp64",
    };

    /// The fetch results of a partition: key = URL fingerprint, payload =
    /// [`crate::records::FetchResult`] (one per URL of the fetch list: fetched, failed or deferred).
    pub const FETCHED: Schema = Schema {
        id: 5,
        name: "fetched",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "fp64",
    };

    /// The host table of a partition: key = host key, payload =
    /// [`crate::records::HostRecord`] (robots.txt per origin with its fetch time, counters).
    pub const HOSTS: Schema = Schema {
        id: 6,
        name: "hosts",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "host64",
    };

    /// The links a partition's pages hold: key = the target's host key ++ fingerprint (so the
    /// split stage routes contiguous ranges), payload = [`crate::records::LinkRecord`];
    /// one record per (page, target) (several pages may link one target: split sums their cash).
    pub const LINKS: Schema = Schema {
        id: 7,
        name: "links",
        key_len: 16,
        payload: true,
        unique: false,
        sort_key: "host64,fp64",
    };

    /// What the parse stage learned about each fetched page: key = URL fingerprint, payload =
    /// [`crate::records::PageRecord`].
    pub const PAGES: Schema = Schema {
        id: 8,
        name: "pages",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "fp64",
    };

    /// What one partition's split routes to an owner partition: key = URL fingerprint, payload
    /// = [`crate::records::SplitRecord`] (one per URL: the in-links collapsed, cash summed).
    pub const SPLIT: Schema = Schema {
        id: 9,
        name: "split",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "fp64",
    };

    /// What the dedup-merge hands to prioritize: key = URL fingerprint, payload =
    /// [`crate::records::FrontierUpdate`] (new URLs, known ones whose cash grew, retries).
    pub const NEW: Schema = Schema {
        id: 10,
        name: "new",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "fp64",
    };

    /// URLs each host has had put into fetch lists over the whole crawl (prioritize's lifetime
    /// per-host budget): key = host key, payload = the count, u64 little-endian.
    pub const HOST_BUDGET: Schema = Schema {
        id: 11,
        name: "host_budget",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "host64",
    };

    /// URLs each registered domain has had put into one partition's fetch lists over the whole
    /// crawl (prioritize's lifetime per-domain budget): key = domain key, payload = the count,
    /// u64 little-endian.
    pub const DOMAIN_BUDGET: Schema = Schema {
        id: 12,
        name: "domain_budget",
        key_len: 8,
        payload: true,
        unique: true,
        sort_key: "domain64",
    };

    /// Every schema this build knows, for `dragnet check run`.
    pub const KNOWN: &'static [Schema] = &[
        Schema::SEEN,
        Schema::FETCHLIST,
        Schema::URLDB,
        Schema::FINGERPRINTS,
        Schema::FETCHED,
        Schema::HOSTS,
        Schema::LINKS,
        Schema::PAGES,
        Schema::SPLIT,
        Schema::NEW,
        Schema::HOST_BUDGET,
        Schema::DOMAIN_BUDGET,
    ];
}

/// A 64-bit fingerprint as an 8-byte key (big-endian, so byte order is numeric order).
pub fn fp_key(fp: u64) -> [u8; 8] {
    fp.to_be_bytes()
}

/// A host key and URL fingerprint as a 16-byte key: records group by host, then by URL.
pub fn host_fp_key(host_key: u64, fp: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&host_key.to_be_bytes());
    k[8..].copy_from_slice(&fp.to_be_bytes());
    k
}

/// Reads the first 8 bytes of a key as a big-endian `u64` (the fingerprint of an `fp64` key).
#[inline]
pub fn key_u64(key: &[u8]) -> u64 {
    if let Ok(b) = <[u8; 8]>::try_from(key) {
        return u64::from_be_bytes(b);
    }
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// The previous key of a sorted stream, kept to check order (reader, writer) and to find groups of
/// equal keys (merge).
///
/// Keys of up to 8 bytes, the fingerprints almost every run holds, are kept and compared as one
/// big-endian `u64`, which is what the profile of the merge benchmark asked for: a `memcmp` call
/// and a `memmove` per record were a quarter of its time. Longer keys use a reused buffer.
#[derive(Debug, Default, Clone)]
pub(crate) struct LastKey {
    /// `None` before the first key.
    len: Option<usize>,
    /// The key as a zero-padded big-endian integer (keys of up to 8 bytes).
    word: u64,
    /// The same key's bytes, zero-padded (keys of up to 8 bytes).
    short: [u8; 8],
    /// The key's bytes (keys longer than 8 bytes only).
    long: Vec<u8>,
}

impl LastKey {
    /// How `key` compares with the previous key; `None` before the first.
    #[inline]
    pub(crate) fn cmp(&self, key: &[u8]) -> Option<std::cmp::Ordering> {
        let len = self.len?;
        Some(if len <= 8 && key.len() <= 8 {
            key_u64(key).cmp(&self.word).then(key.len().cmp(&len))
        } else {
            key.cmp(self.as_slice())
        })
    }

    /// Remembers `key` as the previous key.
    #[inline]
    pub(crate) fn set(&mut self, key: &[u8]) {
        self.len = Some(key.len());
        if key.len() <= 8 {
            self.word = key_u64(key);
            self.short = self.word.to_be_bytes();
        } else {
            self.long.clear();
            self.long.extend_from_slice(key);
        }
    }

    /// Forgets the previous key.
    pub(crate) fn clear(&mut self) {
        self.len = None;
    }

    /// Whether a key was set since the last clear.
    pub(crate) fn is_set(&self) -> bool {
        self.len.is_some()
    }

    /// The previous key's bytes, empty before the first.
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self.len {
            None => &[],
            Some(len) if len <= 8 => &self.short[..len],
            Some(_) => &self.long,
        }
    }
}

/// A sorted source of records positioned *before* its first record; [`Cursor::advance`] moves to
/// the next one. Run readers, the sorter's memory buffer and test vectors implement it, so the
/// merge works over any of them.
pub trait Cursor {
    /// Moves to the next record; `Ok(false)` at the end.
    fn advance(&mut self) -> Result<bool>;
    /// Key of the current record (valid after `advance` returned true).
    fn key(&self) -> &[u8];
    /// Payload of the current record (empty for key-only files).
    fn payload(&self) -> &[u8];
}

/// A record held in memory: (key, payload).
pub type OwnedRecord = (Vec<u8>, Vec<u8>);

/// Where sorted records go: a [`RunWriter`], or a `Vec` in tests.
pub trait RecordSink {
    /// Appends one record.
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()>;
}

impl RecordSink for Vec<OwnedRecord> {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        Vec::push(self, (key.to_vec(), payload.to_vec()));
        Ok(())
    }
}

/// A [`Cursor`] over records held in memory, already sorted (tests, small inputs).
pub struct VecCursor {
    records: Vec<OwnedRecord>,
    next: usize,
}

impl VecCursor {
    /// Wraps sorted records.
    pub fn new(records: Vec<OwnedRecord>) -> VecCursor {
        VecCursor { records, next: 0 }
    }
}

impl Cursor for VecCursor {
    fn advance(&mut self) -> Result<bool> {
        if self.next < self.records.len() {
            self.next += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn key(&self) -> &[u8] {
        &self.records[self.next - 1].0
    }

    fn payload(&self) -> &[u8] {
        &self.records[self.next - 1].1
    }
}

impl<C: Cursor + ?Sized> Cursor for Box<C> {
    fn advance(&mut self) -> Result<bool> {
        (**self).advance()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn payload(&self) -> &[u8] {
        (**self).payload()
    }
}

#[cfg(test)]
mod last_key_tests {
    use super::LastKey;
    use proptest::prelude::*;

    proptest! {
        /// `LastKey` orders keys exactly as `memcmp` does, whatever their lengths.
        #[test]
        fn orders_like_memcmp(a in proptest::collection::vec(0u8..4, 0..12),
                              b in proptest::collection::vec(0u8..4, 0..12)) {
            let mut k = LastKey::default();
            prop_assert_eq!(k.cmp(&b), None);
            k.set(&a);
            prop_assert_eq!(k.cmp(&b), Some(b.as_slice().cmp(a.as_slice())));
            prop_assert_eq!(k.as_slice(), a.as_slice());
        }
    }
}
