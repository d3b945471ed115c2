//! The quickheap: a disk-resident priority queue built on incremental quicksort.
//!
//! Marin, Paredes and Bonacic, "High-performance priority queues for parallel crawlers" (WIDM
//! 2008; docs/design.md, References), section "Priority queues: amortized cost approach",
//! after Navarro and Paredes' quickheaps (incremental quicksort, IQS).
//!
//! # Layout
//!
//! The queue is a **circular array** of [`Entry`] slots in `DIR/heap.dat`, reached through a
//! [`Pager`] (slots never straddle a page: [`Slots`]), plus a **stack S of pivot positions in
//! memory**. Positions are logical (`u64`, never reduced): position `p` lives in slot
//! `p mod capacity`. The queue holds positions `idx .. S[0]`:
//!
//! - `S[0]` is the fictitious pivot `∞` at the tail: the first free position (so
//!   `len = S[0] - idx`). It holds no element and is never popped.
//! - `S[1] > S[2] > ... > S[top] >= idx` are real pivots, from the tail towards the head; the top
//!   of the stack is the pivot nearest the head (the smallest). Reading the array from right to
//!   left: a pivot, a chunk of elements no greater than it, the next pivot, and so on; the first
//!   chunk `idx .. S[top]` holds the smallest elements (in no particular order).
//! - Invariant: every element left of a pivot is `<=` it and every element right of it is `>=`
//!   it, in the total order of [`Entry`] (key, then fingerprint, then host), so equal entries are
//!   interchangeable and extraction is deterministic.
//!
//! Each stack element also keeps a copy of its pivot's value, so walking the pivots (insert) does
//! not read the file to compare; the copy is persisted with the stack and checked on open.
//!
//! # The figures
//!
//! [`DiskQueue::insert_many`] runs Fig. 4 (insert) per entry and [`DiskQueue::extract_top`] runs
//! Fig. 5 (extractR). The scrape of the paper is garbled; this is how it is read here:
//!
//! - **Fig. 4.** The `If`/`Else` is the body of the `While`. Each round moves pivot `S[pidx]` one
//!   cell right (`heap[S[pidx]+1] ← heap[S[pidx]]`, `S[pidx] += 1`), which frees the cell left of
//!   it. If there is no next pivot (`|S| = pidx + 1`) or the next pivot towards the head is `<= x`
//!   (`heap[S[pidx+1]] ≤ x`), `x` belongs to this chunk and takes the freed cell; otherwise the
//!   first element right of the next pivot (`heap[S[pidx+1]+1]`) takes the freed cell, and the
//!   next round moves that pivot into the cell it left. So pivots move one chunk at a time from
//!   the tail, one comparison per pivot passed. For `pidx = 0` (the `∞` sentinel) there is no
//!   element to copy: only `S[0]` is incremented, and no comparison is made with it (Navarro and
//!   Paredes: "we first move the fictitious pivot, updating its position in S, without comparing
//!   it with the new element"). The comparison `heap[S[pidx+1]] ≤ x` uses the pivot value kept in
//!   S; ties go right of the pivot, which keeps the invariant.
//! - **Fig. 5.** `R` is first clamped to `len` (any `r` works; `r > len` returns everything), so
//!   `finalPos = idx + R - 1 < S[0]` and the first loop never pops the sentinel. The first loop
//!   reports whole chunks plus their pivots while `finalPos >= S.top()`. If `idx = finalPos + 1`
//!   we are done; otherwise quickselect runs on `first = idx, last = S.top() - 1`. The scrape
//!   mixes up `pidx` (the random pivot's position before partitioning) and `pidx'` (where
//!   partitioning puts it): every use after `partition` is `pidx'`. If `pidx' < finalPos`,
//!   `first ← pidx' + 1` (that pivot is not pushed: its chunk is reported now); otherwise
//!   `pidx'` is pushed, and either it is `finalPos` (break) or `last ← pidx' - 1`. The closing
//!   lines report `idx ..= finalPos` and pop the pivot at `finalPos`; that push/pop pair cancels,
//!   so it is not pushed at all here.
//! - `partition` is a two-cursor Hoare partition that stops on elements equal to the pivot (so
//!   runs of duplicates split evenly): the pivot is swapped to `last`, the cursors meet, the
//!   pivot is swapped into the meeting cell. It runs in place through the pager, a page at a time
//!   (each cursor works on a copy of one page's slots, written back when it leaves the page), so
//!   it does one pager lookup per page rather than per slot.
//! - `random[first, last]` is a splitmix64 generator seeded from [`QuickHeapOptions::seed`] and
//!   persisted at commit, so the same operations from the same committed state write the same
//!   bytes into `heap.dat` (a re-run crawl stage is byte-reproducible).
//!
//! extractR reports the R smallest entries as a *set*: they are `idx ..= finalPos`, ordered
//! chunk by chunk but not inside a chunk. [`DiskQueue::extract_top`] promises ascending order, so
//! the stretches between known pivots are sorted in memory (O(R log R) at worst, usually much
//! less since the stretches are short). Those comparisons are counted too.
//!
//! # Cost
//!
//! Navarro and Paredes show O(log m) expected amortized comparisons per insert and per minimum
//! extracted (m = queue size), and that the pivot stack has O(log m) expected entries. It needs
//! few block I/Os because every access is local or sequential: partitioning is two sequential
//! scans that meet, touching each page of the segment once per pass, and the segments shrink
//! geometrically towards the head; extraction reads the head sequentially; an insert only touches
//! the cells next to the pivots it passes, and most entries stop in the last chunks at the tail,
//! whose pages stay in the frame cache. Navarro and Paredes bound this by O((1/B) log(m/M))
//! expected amortized block I/Os per operation with a RAM of M entries in blocks of B; the paper's
//! Fig. 9 finds it about 20% cheaper than the CBT of R-blocks. [`IoStats::comparisons`] counts
//! every comparison: one per pivot passed in insert, one per element a partition cursor examines,
//! and the output sort.
//!
//! Memory: the pivot stack, the pager's frames, two page copies while partitioning, and O(R) for
//! the output. The queue is never loaded whole.
//!
//! # Growth
//!
//! When an insert finds the array full, the capacity doubles. Because positions are logical, the
//! pivot stack stays valid: position `p` moves from slot `p mod C` to slot `p mod 2C`, which is
//! the same slot when `p div C` is even and slot `p mod C + C` when it is odd. The odd positions
//! of the full array form one contiguous run, copied page by page into the new upper half
//! (sequential I/O, at most C slots, so amortized O(1) per insert). The capacity never shrinks;
//! it is always a whole number of pages ([`QuickHeapOptions::initial_capacity`] is rounded up).
//!
//! # Crash safety
//!
//! Everything comes from the pager (see `pager.rs`): [`DiskQueue::commit`] writes the dirty
//! pages, fsyncs, and publishes the heap state (capacity, `idx`, `len`, the pivot stack, the RNG
//! state and the commit tag) as the pager's meta blob; every committed page overwritten after
//! that is journaled first. Reopening after a crash (or a drop without commit) rolls `heap.dat`
//! back to the last commit and restores the state from its meta, which is validated on open. If
//! an operation returns an error the in-memory state may no longer match the file: drop the
//! queue and reopen it.

use std::path::{Path, PathBuf};

use super::pager::{Pager, PagerOptions, Slots};
use super::{DiskQueue, Entry, IoStats};
use crate::error::{Error, Result};

#[cfg(test)]
mod tests;

/// Magic (and format version) at the start of the heap's meta blob.
const META_MAGIC: &[u8; 8] = b"DNQHEAP1";
/// Bytes of the blob before the stack: magic, tag, capacity, idx, len, rng, stack length.
const META_HEAD: usize = 56;
/// Bytes per stack element in the blob: position and pivot value.
const META_PIVOT: usize = 8 + Entry::SIZE;
/// Where the pager puts our blob inside `heap.dat.meta` (its magic, generation, length and page
/// size come first); used only to report byte offsets of corruption.
const PAGER_META_HEAD: u64 = 28;

/// How a [`QuickHeap`] is set up.
#[derive(Debug, Clone, Copy)]
pub struct QuickHeapOptions {
    /// The pager under `heap.dat`: page size, frame cache (the RAM budget), journal.
    pub pager: PagerOptions,
    /// Seed of the pivot RNG of a new heap. An existing heap continues from the RNG state it
    /// committed, whatever this says.
    pub seed: u64,
    /// Slots of a new heap's circular array (rounded up to whole pages); it doubles when full.
    pub initial_capacity: u64,
}

impl Default for QuickHeapOptions {
    fn default() -> QuickHeapOptions {
        QuickHeapOptions {
            pager: PagerOptions::default(),
            seed: 0x5eed_d7a9_0f4e_2c11,
            initial_capacity: 1 << 16,
        }
    }
}

/// One element of the pivot stack S: a position and the value of the pivot there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pivot {
    pos: u64,
    val: Entry,
}

/// The quickheap: a circular array of entries in a paged file and a pivot stack in memory; see
/// the module docs.
pub struct QuickHeap {
    /// `DIR/heap.dat`, for messages.
    path: PathBuf,
    pager: Pager,
    slots: Slots,
    /// Entry slots per page.
    per_page: u64,
    /// Slots in the circular array (a multiple of `per_page`).
    cap: u64,
    /// The head: position of the first element.
    idx: u64,
    /// S: `stack[0]` is the `∞` sentinel at the tail; the last element is the top.
    stack: Vec<Pivot>,
    /// splitmix64 state.
    rng: u64,
    /// Tag of the last commit.
    tag: u64,
    comparisons: u64,
}

impl std::fmt::Debug for QuickHeap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuickHeap")
            .field("path", &self.path)
            .field("capacity", &self.cap)
            .field("idx", &self.idx)
            .field("len", &self.len())
            .field("pivots", &self.pivots())
            .field("tag", &self.tag)
            .finish_non_exhaustive()
    }
}

impl QuickHeap {
    /// Opens the quickheap in `dir` (created if needed), rolling back to its last commit, or
    /// creates an empty one. The stored state is validated: a meta blob that is not a quickheap's,
    /// or that does not fit `heap.dat`, is an [`Error::Corrupt`]; a page size other than the one
    /// the heap was created with is an [`Error::Usage`].
    pub fn open(dir: &Path, opts: QuickHeapOptions) -> Result<QuickHeap> {
        crate::storage::create_dir_all(dir)?;
        let path = dir.join("heap.dat");
        let pager = Pager::open(&path, opts.pager)?;
        let ps = pager.page_size();
        let per_page = (ps / Entry::SIZE) as u64;
        let mut h = QuickHeap {
            path,
            pager,
            slots: Slots::new(0, ps),
            per_page,
            cap: 0,
            idx: 0,
            stack: vec![Pivot {
                pos: 0,
                val: Entry::default(),
            }],
            rng: opts.seed,
            tag: 0,
            comparisons: 0,
        };
        if h.pager.generation() == 0 && h.pager.meta().is_empty() {
            h.cap = opts.initial_capacity.max(1).div_ceil(per_page) * per_page;
            h.pager.grow(h.slots.bytes_for(h.cap))?;
        } else {
            h.load_meta()?;
        }
        Ok(h)
    }

    /// Restores and validates the state committed in the pager's meta blob.
    fn load_meta(&mut self) -> Result<()> {
        let mut mp = self.path.clone().into_os_string();
        mp.push(".meta");
        let mp = PathBuf::from(mp);
        let m = self.pager.meta().to_vec();
        let bad = |off: usize, why: String| Error::corrupt(&mp, PAGER_META_HEAD + off as u64, why);
        if m.len() < META_HEAD || &m[..8] != META_MAGIC {
            return Err(bad(0, "not the meta of a dragnet quickheap".into()));
        }
        let u = |i: usize| u64::from_le_bytes(m[i..i + 8].try_into().expect("8 bytes"));
        let (tag, cap, idx, len, rng, n) = (u(8), u(16), u(24), u(32), u(40), u(48));
        if n == 0 || n > (m.len() as u64) || m.len() != META_HEAD + n as usize * META_PIVOT {
            return Err(bad(
                48,
                format!(
                    "a pivot stack of {n} entries does not fit a {}-byte meta",
                    m.len()
                ),
            ));
        }
        if cap == 0 || cap % self.per_page != 0 || len > cap {
            return Err(bad(
                16,
                format!(
                    "capacity {cap} with {len} entries is not a positive whole number of \
                     {}-slot pages holding them",
                    self.per_page
                ),
            ));
        }
        let mut stack = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let at = META_HEAD + i * META_PIVOT;
            let pos = u(at);
            let val = Entry::read_from(&m[at + 8..at + META_PIVOT]);
            let ok = match i {
                0 => pos.checked_sub(idx) == Some(len),
                _ => pos < stack.last().map_or(0, |p: &Pivot| p.pos) && pos >= idx,
            };
            if !ok {
                return Err(bad(
                    at,
                    format!(
                        "pivot {i} at position {pos} is out of order (head {idx}, {len} entries)"
                    ),
                ));
            }
            stack.push(Pivot { pos, val });
        }
        if self.pager.len() < self.slots.bytes_for(cap) {
            return Err(Error::corrupt(
                &self.path,
                self.pager.len(),
                format!("the file is shorter than the {cap} slots its meta records"),
            ));
        }
        self.cap = cap;
        for p in &stack[1..] {
            let phys = p.pos % cap;
            if self.slots.get(&mut self.pager, phys)? != p.val {
                return Err(Error::corrupt(
                    &self.path,
                    self.slots.offset(phys),
                    format!(
                        "the pivot at position {} does not hold the value its meta records",
                        p.pos
                    ),
                ));
            }
        }
        (self.tag, self.idx, self.rng, self.stack) = (tag, idx, rng, stack);
        Ok(())
    }

    /// The state published at commit (the module docs list it).
    fn encode_meta(&self, tag: u64) -> Vec<u8> {
        let mut m = Vec::with_capacity(META_HEAD + self.stack.len() * META_PIVOT);
        m.extend_from_slice(META_MAGIC);
        for v in [tag, self.cap, self.idx, self.len(), self.rng] {
            m.extend_from_slice(&v.to_le_bytes());
        }
        m.extend_from_slice(&(self.stack.len() as u64).to_le_bytes());
        let mut b = [0u8; Entry::SIZE];
        for p in &self.stack {
            m.extend_from_slice(&p.pos.to_le_bytes());
            p.val.write_to(&mut b);
            m.extend_from_slice(&b);
        }
        m
    }

    /// Slots in the circular array.
    pub fn capacity(&self) -> u64 {
        self.cap
    }

    /// Real pivots on the stack S (the `∞` sentinel not counted).
    pub fn pivots(&self) -> usize {
        self.stack.len() - 1
    }

    /// The next value of the splitmix64 pivot generator.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `random[first, last]` of Fig. 5.
    fn random_in(&mut self, first: u64, last: u64) -> u64 {
        let n = (last - first + 1) as u128;
        first + ((self.next_random() as u128 * n) >> 64) as u64
    }

    /// The element at position `pos`.
    fn fetch(&mut self, pos: u64) -> Result<Entry> {
        self.slots.get(&mut self.pager, pos % self.cap)
    }

    /// Stores `e` at position `pos`.
    fn put(&mut self, pos: u64, e: Entry) -> Result<()> {
        self.slots.set(&mut self.pager, pos % self.cap, e)
    }

    /// Fig. 4: inserts `x`, moving pivots one chunk at a time from the tail until the chunk `x`
    /// belongs to is found (module docs: how the figure is read). Grows the array first if full.
    fn insert_one(&mut self, x: Entry) -> Result<()> {
        if self.len() == self.cap {
            self.grow()?;
        }
        let mut p = 0;
        loop {
            // Move pivot S[p] one cell right (the sentinel S[0] has no cell to copy).
            if p > 0 {
                let pv = self.stack[p];
                self.put(pv.pos + 1, pv.val)?;
            }
            self.stack[p].pos += 1;
            let free = self.stack[p].pos - 1;
            let found = p + 1 == self.stack.len() || {
                self.comparisons += 1;
                self.stack[p + 1].val <= x
            };
            if found {
                return self.put(free, x);
            }
            // The first element right of the next pivot fills the free cell; the next round
            // moves that pivot into the cell it leaves.
            let from = self.stack[p + 1].pos + 1;
            if from != free {
                let e = self.fetch(from)?;
                self.put(free, e)?;
            }
            p += 1;
        }
    }

    /// Doubles the capacity of the full array (module docs, "Growth").
    fn grow(&mut self) -> Result<()> {
        let old = self.cap;
        debug_assert_eq!(self.len(), old);
        self.pager.grow(self.slots.bytes_for(2 * old))?;
        let (start, end) = (self.idx, self.stack[0].pos);
        // The full array spans at most two multiples of `old`: [start, b) and [b, end).
        let b = (start / old + 1) * old;
        let (from, to) = if (start / old) % 2 == 1 {
            (start, b.min(end))
        } else {
            (b.min(end), end)
        };
        let mut bytes = vec![0u8; self.per_page as usize * Entry::SIZE];
        let mut pos = from;
        while pos < to {
            let phys = pos % old;
            let k = (to - pos).min(self.per_page - phys % self.per_page);
            let buf = &mut bytes[..k as usize * Entry::SIZE];
            self.pager.read(self.slots.offset(phys), buf)?;
            self.pager.write(self.slots.offset(phys + old), buf)?;
            pos += k;
        }
        self.cap = 2 * old;
        Ok(())
    }

    /// Appends the `n` elements from position `from` to `out`, a page run at a time.
    fn read_range(&mut self, from: u64, n: u64, out: &mut Vec<Entry>) -> Result<()> {
        let mut bytes = vec![0u8; self.per_page as usize * Entry::SIZE];
        let (mut pos, end) = (from, from + n);
        while pos < end {
            let phys = pos % self.cap;
            let k = (end - pos).min(self.per_page - phys % self.per_page);
            let buf = &mut bytes[..k as usize * Entry::SIZE];
            self.pager.read(self.slots.offset(phys), buf)?;
            out.extend(buf.chunks_exact(Entry::SIZE).map(Entry::read_from));
            pos += k;
        }
        Ok(())
    }

    /// Fig. 5: extractR. Removes the `r` smallest entries (all if `r >= len`) and appends them
    /// to `out` in ascending order (module docs: how the figure is read, and the sort).
    fn extract_r(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        let n = (r as u64).min(self.len());
        if n == 0 {
            return Ok(());
        }
        let final_pos = self.idx + n - 1;
        // Pivots at or before finalPos, ascending: the stretches between them are ordered.
        let mut cuts = Vec::new();
        // Whole chunks and their pivots (S[0] is never reached: finalPos < S[0]).
        while self.stack.len() > 1 && final_pos >= self.stack[self.stack.len() - 1].pos {
            cuts.push(self.stack.pop().expect("a real pivot").pos);
        }
        if cuts.last() != Some(&final_pos) {
            // Quickselect finalPos, pushing the pivots that land right of it.
            let mut first = cuts.last().map_or(self.idx, |c| c + 1);
            let mut last = self.stack[self.stack.len() - 1].pos - 1;
            loop {
                let pidx = self.random_in(first, last);
                let (q, val) = self.partition(first, last, pidx)?;
                if q < final_pos {
                    cuts.push(q);
                    first = q + 1;
                } else if q == final_pos {
                    cuts.push(q);
                    break;
                } else {
                    self.stack.push(Pivot { pos: q, val });
                    last = q - 1;
                }
            }
        }
        let base = out.len();
        self.read_range(self.idx, n, out)?;
        let mut lo = self.idx;
        let mut cmp = 0u64;
        for &c in &cuts {
            let s = &mut out[base + (lo - self.idx) as usize..base + (c - self.idx) as usize];
            s.sort_unstable_by(|a, b| {
                cmp += 1;
                a.cmp(b)
            });
            lo = c + 1;
        }
        self.comparisons += cmp;
        self.idx = final_pos + 1;
        Ok(())
    }

    /// `partition(heap, heap[pidx], first, last)` of Fig. 5: rearranges positions
    /// `first ..= last` around the element at `pidx` and returns where it lands (`pidx'`) and
    /// its value. In place through the pager, a page at a time (module docs).
    fn partition(&mut self, first: u64, last: u64, pidx: u64) -> Result<(u64, Entry)> {
        let mut w = Windows::new(self.per_page, self.cap, self.pager.page_size());
        let r = self.partition_in(&mut w, first, last, pidx);
        let flushed = w.flush(&mut self.pager);
        let r = r?;
        flushed?;
        Ok(r)
    }

    fn partition_in(
        &mut self,
        w: &mut Windows,
        first: u64,
        last: u64,
        pidx: u64,
    ) -> Result<(u64, Entry)> {
        let pg = &mut self.pager;
        let pv = w.get(pg, 0, pidx)?;
        if first == last {
            return Ok((first, pv));
        }
        if pidx != last {
            let lv = w.get(pg, 1, last)?;
            w.set(pg, 0, pidx, lv)?;
            w.set(pg, 1, last, pv)?;
        }
        // Hoare: [first, i) <= pv, [hi, last) >= pv; cursor 0 walks up, cursor 1 down.
        let (mut i, mut hi) = (first, last);
        let mut cmp = 0u64;
        loop {
            while i < hi {
                cmp += 1;
                if w.get(pg, 0, i)? < pv {
                    i += 1;
                } else {
                    break;
                }
            }
            while i < hi {
                cmp += 1;
                if w.get(pg, 1, hi - 1)? > pv {
                    hi -= 1;
                } else {
                    break;
                }
            }
            if i + 1 >= hi {
                // Crossed, or met on an element equal to the pivot.
                break;
            }
            let (a, b) = (w.get(pg, 0, i)?, w.get(pg, 1, hi - 1)?);
            w.set(pg, 0, i, b)?;
            w.set(pg, 1, hi - 1, a)?;
            i += 1;
            hi -= 1;
        }
        if i != last {
            // heap[i] >= pv: it goes to the end, the pivot into its final cell.
            let a = w.get(pg, 0, i)?;
            w.set(pg, 0, i, pv)?;
            w.set(pg, 1, last, a)?;
        }
        self.comparisons += cmp;
        Ok((i, pv))
    }
}

impl DiskQueue for QuickHeap {
    /// Fig. 4 (insert) for each entry in turn.
    fn insert_many(&mut self, items: &[Entry]) -> Result<()> {
        for &x in items {
            self.insert_one(x)?;
        }
        Ok(())
    }

    /// Fig. 5 (extractR) with `R = r`, the reported set sorted in memory.
    fn extract_top(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        self.extract_r(r, out)
    }

    fn len(&self) -> u64 {
        self.stack[0].pos - self.idx
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
        let meta = self.encode_meta(tag);
        self.pager.commit(&meta)?;
        self.tag = tag;
        Ok(())
    }

    fn tag(&self) -> u64 {
        self.tag
    }
}

/// A copy of one page's slots, so a partition cursor touches the pager once per page.
struct Window {
    /// Physical page number (`u64::MAX`: none).
    page: u64,
    buf: Vec<Entry>,
    dirty: bool,
}

/// The two page windows of a partition, one per cursor. A cursor that reaches the page the
/// other holds shares it, so the copies never disagree.
struct Windows {
    w: [Window; 2],
    per_page: u64,
    cap: u64,
    page_size: u64,
    bytes: Vec<u8>,
}

impl Windows {
    fn new(per_page: u64, cap: u64, page_size: usize) -> Windows {
        let win = || Window {
            page: u64::MAX,
            buf: Vec::with_capacity(per_page as usize),
            dirty: false,
        };
        Windows {
            w: [win(), win()],
            per_page,
            cap,
            page_size: page_size as u64,
            bytes: vec![0u8; per_page as usize * Entry::SIZE],
        }
    }

    /// The window (cursor `c`'s, unless the other one holds the page) and index of `pos`.
    fn locate(&mut self, pager: &mut Pager, c: usize, pos: u64) -> Result<(usize, usize)> {
        let phys = pos % self.cap;
        let (page, off) = (phys / self.per_page, (phys % self.per_page) as usize);
        if self.w[c].page == page {
            return Ok((c, off));
        }
        if self.w[1 - c].page == page {
            return Ok((1 - c, off));
        }
        self.write_back(pager, c)?;
        pager.read(page * self.page_size, &mut self.bytes)?;
        let win = &mut self.w[c];
        win.buf.clear();
        win.buf
            .extend(self.bytes.chunks_exact(Entry::SIZE).map(Entry::read_from));
        win.page = page;
        Ok((c, off))
    }

    fn get(&mut self, pager: &mut Pager, c: usize, pos: u64) -> Result<Entry> {
        let (k, off) = self.locate(pager, c, pos)?;
        Ok(self.w[k].buf[off])
    }

    fn set(&mut self, pager: &mut Pager, c: usize, pos: u64, e: Entry) -> Result<()> {
        let (k, off) = self.locate(pager, c, pos)?;
        self.w[k].buf[off] = e;
        self.w[k].dirty = true;
        Ok(())
    }

    fn write_back(&mut self, pager: &mut Pager, k: usize) -> Result<()> {
        let win = &mut self.w[k];
        if !win.dirty {
            return Ok(());
        }
        for (e, b) in win.buf.iter().zip(self.bytes.chunks_exact_mut(Entry::SIZE)) {
            e.write_to(b);
        }
        pager.write(win.page * self.page_size, &self.bytes)?;
        win.dirty = false;
        Ok(())
    }

    /// Writes both windows back into the pager.
    fn flush(&mut self, pager: &mut Pager) -> Result<()> {
        self.write_back(pager, 0)?;
        self.write_back(pager, 1)
    }
}
