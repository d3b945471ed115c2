//! The baseline: a plain binary heap on disk.
//!
//! An implicit binary min-heap (slot 0 is the root, the children of slot `i` are `2i + 1` and
//! `2i + 2`) of [`Entry`] slots in one file, read and written slot by slot through a
//! [`Pager`], so its RAM is the pager's frame cache and its block I/Os are counted the same way
//! as the real queues'. insert-many inserts one entry at a time (append, sift up); extract-top-R
//! removes the root R times (move the last entry to the root, sift down). Every comparison of two
//! entries counts as one key comparison: sift-up makes one per level climbed, sift-down two per
//! level (pick the smaller child, compare it with the entry being placed).
//!
//! It is the paper's BHeap. It is not crash-safe beyond what the pager gives: [`DiskQueue::commit`]
//! commits the pager with the heap's length and tag as the meta blob.

use std::path::Path;

use dragnet::error::{Error, Result};
use dragnet::queue::pager::{Pager, PagerOptions, Slots};
use dragnet::queue::{DiskQueue, Entry, IoStats};

/// File name of the heap inside its directory.
pub const FILE: &str = "bheap.dat";

/// A binary min-heap of entries in a paged file; see the module docs.
pub struct BHeap {
    pager: Pager,
    slots: Slots,
    len: u64,
    tag: u64,
    comparisons: u64,
}

impl BHeap {
    /// Opens (or creates) the heap in `dir` (file [`FILE`]), restoring the last commit.
    pub fn open(dir: &Path, opts: PagerOptions) -> Result<BHeap> {
        let pager = Pager::open(&dir.join(FILE), opts)?;
        let (len, tag) = match pager.meta() {
            [] => (0, 0),
            m if m.len() == 16 => (
                u64::from_le_bytes(m[..8].try_into().expect("8")),
                u64::from_le_bytes(m[8..].try_into().expect("8")),
            ),
            m => {
                return Err(Error::corrupt(
                    dir.join(FILE),
                    0,
                    format!("binary-heap meta of {} bytes, expected 16", m.len()),
                ))
            }
        };
        let slots = Slots::new(0, opts.page_size);
        Ok(BHeap {
            pager,
            slots,
            len,
            tag,
            comparisons: 0,
        })
    }

    #[inline]
    fn less(&mut self, a: &Entry, b: &Entry) -> bool {
        self.comparisons += 1;
        a < b
    }

    fn sift_up(&mut self, mut i: u64, x: Entry) -> Result<()> {
        while i > 0 {
            let p = (i - 1) / 2;
            let pe = self.slots.get(&mut self.pager, p)?;
            if self.less(&x, &pe) {
                self.slots.set(&mut self.pager, i, pe)?;
                i = p;
            } else {
                break;
            }
        }
        self.slots.set(&mut self.pager, i, x)
    }

    fn sift_down(&mut self, mut i: u64, x: Entry) -> Result<()> {
        let n = self.len;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut child = l;
            let mut ce = self.slots.get(&mut self.pager, l)?;
            if l + 1 < n {
                let re = self.slots.get(&mut self.pager, l + 1)?;
                if self.less(&re, &ce) {
                    child = l + 1;
                    ce = re;
                }
            }
            if self.less(&ce, &x) {
                self.slots.set(&mut self.pager, i, ce)?;
                i = child;
            } else {
                break;
            }
        }
        self.slots.set(&mut self.pager, i, x)
    }
}

impl DiskQueue for BHeap {
    fn insert_many(&mut self, items: &[Entry]) -> Result<()> {
        let need = self.slots.bytes_for(self.len + items.len() as u64);
        self.pager.grow(need)?;
        for &x in items {
            let i = self.len;
            self.len += 1;
            self.sift_up(i, x)?;
        }
        Ok(())
    }

    fn extract_top(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        for _ in 0..r {
            if self.len == 0 {
                break;
            }
            let top = self.slots.get(&mut self.pager, 0)?;
            self.len -= 1;
            if self.len > 0 {
                let last = self.slots.get(&mut self.pager, self.len)?;
                self.sift_down(0, last)?;
            }
            out.push(top);
        }
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn stats(&self) -> IoStats {
        IoStats {
            comparisons: self.comparisons,
            ..self.pager.stats()
        }
    }

    fn reset_stats(&mut self) {
        self.pager.reset_stats();
        self.comparisons = 0;
    }

    fn commit(&mut self, tag: u64) -> Result<()> {
        let mut meta = Vec::with_capacity(16);
        meta.extend_from_slice(&self.len.to_le_bytes());
        meta.extend_from_slice(&tag.to_le_bytes());
        self.pager.commit(&meta)?;
        self.tag = tag;
        Ok(())
    }

    fn tag(&self) -> u64 {
        self.tag
    }
}
