//! The frontier: disk-resident priority queues (docs/design.md §6).
//!
//! Both queues of Marin, Paredes and Bonacic, "High-performance priority queues for parallel
//! crawlers" (WIDM 2008; docs/design.md, References), behind one interface, [`DiskQueue`]:
//!
//! - [`cbt::CbtQueue`]: a complete binary tree whose nodes each hold up to R priorities in one
//!   contiguous disk block; insertion-update (Fig. 1) and extraction-update (Fig. 2) move whole
//!   blocks along one root path, so an operation on R items costs O(log(N/R)) block I/Os. T
//!   independent slices serve T threads (Table 1).
//! - [`quickheap::QuickHeap`]: a circular array in a file with the pivot stack in memory; insert
//!   (Fig. 4) and extractR (Fig. 5), built on incremental quicksort. Amortized cost, the fewest
//!   block I/Os.
//!
//! Both keep their data in a file reached through a [`pager::Pager`]: a memory map of the file
//! (memmap2) behind a bounded cache of page frames of our own. The frame cache is the queue's RAM
//! budget and the place block I/Os are counted: a page brought into a frame is one block read, a
//! dirty frame written back is one block write. The pager also makes the queue crash-safe: it keeps
//! an undo journal of every committed page it overwrites, so a `kill -9` at any instant leaves the
//! queue as of its last [`DiskQueue::commit`] once it is reopened.
//!
//! Order: an [`Entry`] with a smaller [`Entry::key`] comes out first; ties are broken by
//! fingerprint, then host key, so extraction order is a total order and can be compared against a
//! sorted reference. [`Entry::key_for_score`] maps an OPIC score (higher is more urgent) onto a key.

use crate::error::Result;

pub mod cbt;
pub mod pager;
pub mod quickheap;
#[cfg(test)]
mod testkit;

/// One queued URL: its priority key, fingerprint and host key (24 bytes on disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Entry {
    /// Priority: smaller comes out first.
    pub key: u64,
    /// The URL's fingerprint (xxh3-64 of the canonical URL).
    pub fp: u64,
    /// The URL's host key (xxh3-64 of its host).
    pub host: u64,
}

impl Entry {
    /// Bytes of one entry on disk: key, fingerprint, host, each little-endian u64.
    pub const SIZE: usize = 24;

    /// An entry.
    pub fn new(key: u64, fp: u64, host: u64) -> Entry {
        Entry { key, fp, host }
    }

    /// The key of a score where a higher score is more urgent (OPIC cash): the score's bits
    /// mapped to an order-preserving u64, then inverted. NaN and negative scores sort last.
    pub fn key_for_score(score: f64) -> u64 {
        let s = if score.is_nan() || score < 0.0 {
            0.0
        } else {
            score
        };
        // For non-negative floats the IEEE bits order like the values.
        !s.to_bits()
    }

    /// The score a key was made from by [`Entry::key_for_score`].
    pub fn score_of_key(key: u64) -> f64 {
        f64::from_bits(!key)
    }

    /// Writes the entry into `out[..24]`.
    pub fn write_to(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.key.to_le_bytes());
        out[8..16].copy_from_slice(&self.fp.to_le_bytes());
        out[16..24].copy_from_slice(&self.host.to_le_bytes());
    }

    /// Reads an entry from `b[..24]`.
    pub fn read_from(b: &[u8]) -> Entry {
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Entry {
            key: u(0),
            fp: u(8),
            host: u(16),
        }
    }
}

/// What a queue has cost since it was opened (or since [`DiskQueue::reset_stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct IoStats {
    /// Pages brought from the file into the frame cache (block reads).
    pub block_reads: u64,
    /// Dirty pages written from the frame cache to the file (block writes).
    pub block_writes: u64,
    /// Bytes read from the file.
    pub bytes_read: u64,
    /// Bytes written to the file.
    pub bytes_written: u64,
    /// Key comparisons made by the queue's algorithm.
    pub comparisons: u64,
}

impl IoStats {
    /// Block reads plus block writes.
    pub fn block_ios(&self) -> u64 {
        self.block_reads + self.block_writes
    }

    /// The sum of two counters.
    pub fn add(&self, o: &IoStats) -> IoStats {
        IoStats {
            block_reads: self.block_reads + o.block_reads,
            block_writes: self.block_writes + o.block_writes,
            bytes_read: self.bytes_read + o.bytes_read,
            bytes_written: self.bytes_written + o.bytes_written,
            comparisons: self.comparisons + o.comparisons,
        }
    }
}

/// A disk-resident priority queue with the paper's bulk operations.
pub trait DiskQueue {
    /// Inserts every entry of `items` (insert-many). Duplicates are allowed and kept.
    fn insert_many(&mut self, items: &[Entry]) -> Result<()>;

    /// Removes the `r` smallest entries (fewer if the queue holds fewer) and appends them to
    /// `out` in ascending order (extract-top-R).
    fn extract_top(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()>;

    /// Entries in the queue.
    fn len(&self) -> u64;

    /// Whether the queue is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// I/O and comparison counters.
    fn stats(&self) -> IoStats;

    /// Zeroes the counters.
    fn reset_stats(&mut self);

    /// Makes every change so far durable: after it returns, a crash and reopen give this state.
    /// `tag` is stored with it (prioritize stores the cycle it has applied) and returned by
    /// [`DiskQueue::tag`].
    fn commit(&mut self, tag: u64) -> Result<()>;

    /// The tag of the last commit (0 for a new queue).
    fn tag(&self) -> u64;
}
