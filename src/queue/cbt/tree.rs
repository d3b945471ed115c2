//! One slice: a CBT of R-blocks over one pager, with Figs. 1 and 2 (see the module docs of
//! `cbt` for the structure, the invariant and how the scrape is read).

use std::path::{Path, PathBuf};

use super::state::{self, Header, State};
use crate::error::{Error, Result};
use crate::queue::pager::{Pager, PagerOptions};
use crate::queue::{Entry, IoStats};

/// Bytes of the pager's own header in front of the blob in `*.meta` (for error offsets).
const PAGER_META_HEAD: u64 = 28;

/// Where the node blocks live in the slice file: block `s` holds up to R entries, never
/// straddling more pages than it must.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// A block fits in a page: `per_page` blocks share each page.
    Packed {
        block_bytes: u64,
        page: u64,
        per_page: u64,
    },
    /// A block takes `pages` whole pages, starting on a page boundary.
    Spanning { page: u64, pages: u64 },
}

impl Layout {
    fn new(r: usize, page: usize) -> Layout {
        let block_bytes = (r * Entry::SIZE) as u64;
        let page = page as u64;
        if block_bytes <= page {
            Layout::Packed {
                block_bytes,
                page,
                per_page: page / block_bytes,
            }
        } else {
            Layout::Spanning {
                page,
                pages: block_bytes.div_ceil(page),
            }
        }
    }

    fn offset(&self, slot: u32) -> u64 {
        let s = u64::from(slot);
        match *self {
            Layout::Packed {
                block_bytes,
                page,
                per_page,
            } => (s / per_page) * page + (s % per_page) * block_bytes,
            Layout::Spanning { page, pages } => s * pages * page,
        }
    }

    fn bytes_for(&self, slots: u64) -> u64 {
        match *self {
            Layout::Packed { page, per_page, .. } => slots.div_ceil(per_page) * page,
            Layout::Spanning { page, pages } => slots * pages * page,
        }
    }

    fn slots_in(&self, bytes: u64) -> u64 {
        match *self {
            Layout::Packed { page, per_page, .. } => bytes / page * per_page,
            Layout::Spanning { page, pages } => bytes / page / pages,
        }
    }
}

/// Sorts `v` ascending, counting comparisons.
fn sort_counted(v: &mut [Entry], cmps: &mut u64) {
    v.sort_unstable_by(|a, b| {
        *cmps += 1;
        a.cmp(b)
    });
}

/// SELECT(a ∪ b, n) on sorted blocks, done as a merge: the `n` smallest of the union (the
/// paper's `x >= e` side) and the rest, both sorted. Counts comparisons.
fn select_merge(a: &[Entry], b: &[Entry], n: usize, cmps: &mut u64) -> (Vec<Entry>, Vec<Entry>) {
    let mut top = Vec::with_capacity(n);
    let mut rest = Vec::with_capacity(a.len() + b.len() - n);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let from_a = if i == a.len() {
            false
        } else if j == b.len() {
            true
        } else {
            *cmps += 1;
            a[i] <= b[j]
        };
        let e = if from_a {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if top.len() < n {
            top.push(e);
        } else {
            rest.push(e);
        }
    }
    (top, rest)
}

/// One CBT of R-blocks in its own file (one of the queue's T slices).
pub(super) struct Slice {
    pager: Pager,
    /// The slice file, for errors.
    path: PathBuf,
    index: usize,
    slices: usize,
    /// R: entries per block.
    r: usize,
    layout: Layout,
    /// Copy-on-write for blocks of the last queue-level commit (T > 1).
    shadow: bool,
    /// Run every SELECT of Figs. 1 and 2 as the paper's pseudo-code does, instead of skipping
    /// the ones the RAM summaries show would change nothing (`CbtQueue::set_paper_selects`).
    paper_selects: bool,
    /// The paper's CBT[]: `2N` values for N items (CBT[0] unused). Leaves are positions
    /// N..2N-1 and hold their item's block slot; internal nodes hold the winning slot.
    cbt: Vec<u32>,
    /// Per block slot: entries in the block (the paper's |Prio[i]|).
    count: Vec<u32>,
    /// Per block slot: its smallest entry.
    best: Vec<Entry>,
    /// Per block slot: its largest entry (the paper's MIN(Prio[i]), lowest priority).
    worst: Vec<Entry>,
    /// Per block slot: its leaf position (the paper's Leaf[]); 0 when the slot is not in use.
    leaf: Vec<u32>,
    /// Per block slot: part of the last queue-level commit (never overwritten; see `store`).
    pinned: Vec<bool>,
    /// Unused, unpinned slots (lowest on top).
    free: Vec<u32>,
    /// Fewer than R entries not yet in the tree, in RAM (persisted in the meta).
    pending: Vec<Entry>,
    pending_sorted: bool,
    len: u64,
    comparisons: u64,
    /// The state section of the last queue-level commit (the next commit's "previous"; T > 1).
    committed: Vec<u8>,
    /// The state section written by the last `commit`, adopted by `committed_all`.
    staged: Vec<u8>,
    bytes: Vec<u8>,
}

impl Slice {
    /// Opens the pager of slice `index` in `dir` (the state is loaded by [`Slice::load`]).
    pub fn open(
        dir: &Path,
        index: usize,
        slices: usize,
        r: usize,
        opts: PagerOptions,
    ) -> Result<Slice> {
        let path = dir.join(format!("slice-{index:03}.dat"));
        let pager = Pager::open(&path, opts)?;
        Ok(Slice {
            layout: Layout::new(r, pager.page_size()),
            pager,
            path,
            index,
            slices,
            r,
            shadow: slices > 1,
            paper_selects: false,
            cbt: Vec::new(),
            count: Vec::new(),
            best: Vec::new(),
            worst: Vec::new(),
            leaf: Vec::new(),
            pinned: Vec::new(),
            free: Vec::new(),
            pending: Vec::new(),
            pending_sorted: true,
            len: 0,
            comparisons: 0,
            committed: Vec::new(),
            staged: Vec::new(),
            bytes: Vec::new(),
        })
    }

    fn meta_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".meta");
        self.path.with_file_name(name)
    }

    fn corrupt(&self, at: u64, why: impl Into<String>) -> Error {
        Error::corrupt(self.meta_path(), PAGER_META_HEAD + at, why)
    }

    /// The committed states in the pager's meta (none for a slice never committed): the current
    /// one and, with T > 1, the one before. Checks R and T against `dir`'s options.
    pub fn meta_states(&self, dir: &Path) -> Result<Option<(State, Option<State>)>> {
        let blob = self.pager.meta();
        if blob.is_empty() {
            if self.pager.generation() > 0 {
                return Err(self.corrupt(0, "empty state in a committed slice"));
            }
            return Ok(None);
        }
        let bad = |(at, why): state::Bad| self.corrupt(at as u64, why);
        let h = state::decode_header(blob).map_err(bad)?;
        if h.block != self.r as u64 || h.slices != self.slices as u64 {
            return Err(Error::Usage(format!(
                "{}: this CBT queue was created with block = {} entries and slices = {}, but is \
                 opened with block = {} and slices = {}; open it with the options it was \
                 created with (they cannot change in place)",
                dir.display(),
                h.block,
                h.slices,
                self.r,
                self.slices
            )));
        }
        if h.index != self.index as u64 {
            return Err(self.corrupt(24, format!("meta of slice {} found", h.index)));
        }
        state::decode_blob(blob).map(Some).map_err(bad)
    }

    /// Adopts `st` as the slice's state, checked against the file.
    pub fn load(&mut self, st: State) -> Result<()> {
        let cap = self.layout.slots_in(self.pager.len());
        if cap > u64::from(u32::MAX) {
            return Err(self.corrupt(0, "slice file too large"));
        }
        let cap = cap as usize;
        let n = st.leaves.len();
        if st.cbt.len() != 2 * n {
            return Err(self.corrupt(0, "tree size does not match the item count"));
        }
        self.count = vec![0; cap];
        self.best = vec![Entry::default(); cap];
        self.worst = vec![Entry::default(); cap];
        self.leaf = vec![0; cap];
        let mut sum = 0u64;
        for (i, &(c, best, worst)) in st.leaves.iter().enumerate() {
            let (pos, slot) = (n + i, st.cbt[n + i] as usize);
            if slot >= cap || self.leaf[slot] != 0 {
                return Err(self.corrupt(0, format!("leaf {pos}: bad block slot {slot}")));
            }
            if c == 0 || c as usize > self.r || best > worst {
                return Err(self.corrupt(0, format!("leaf {pos}: bad block summary")));
            }
            self.leaf[slot] = pos as u32;
            (self.count[slot], self.best[slot], self.worst[slot]) = (c, best, worst);
            sum += u64::from(c);
        }
        for p in 1..n {
            let (w, a, b) = (st.cbt[p], st.cbt[2 * p], st.cbt[2 * p + 1]);
            let lose = if w == a { b } else { a };
            if (w != a && w != b) || self.worst[w as usize] > self.best[lose as usize] {
                return Err(self.corrupt(0, format!("node {p}: not a tournament winner")));
            }
        }
        if st.pending.len() >= self.r || st.len != sum + st.pending.len() as u64 {
            return Err(self.corrupt(0, "entry counts do not add up"));
        }
        if self.shadow {
            self.committed = st.encode();
        }
        self.cbt = st.cbt;
        self.pending = st.pending;
        self.pending_sorted = false;
        self.len = st.len;
        self.pinned = vec![false; cap];
        self.reset_slots();
        Ok(())
    }

    /// Recomputes the free list and (with T > 1) the pinned set from the slots in use.
    fn reset_slots(&mut self) {
        if self.shadow {
            for (p, &l) in self.pinned.iter_mut().zip(&self.leaf) {
                *p = l != 0;
            }
        }
        self.free = (0..self.leaf.len() as u32)
            .rev()
            .filter(|&s| self.leaf[s as usize] == 0)
            .collect();
    }

    /// The state to commit.
    fn state(&self, epoch: u64, tag: u64) -> State {
        let n = self.cbt.len() / 2;
        State {
            epoch,
            tag,
            len: self.len,
            cbt: self.cbt.clone(),
            leaves: (n..2 * n)
                .map(|p| {
                    let s = self.cbt[p] as usize;
                    (self.count[s], self.best[s], self.worst[s])
                })
                .collect(),
            pending: self.pending.clone(),
        }
    }

    /// Commits the slice's file and state (the queue-level commit `epoch`).
    pub fn commit(&mut self, epoch: u64, tag: u64) -> Result<()> {
        let cur = self.state(epoch, tag).encode();
        let h = Header {
            block: self.r as u64,
            slices: self.slices as u64,
            index: self.index as u64,
        };
        let prev = self.shadow.then_some(&self.committed[..]);
        self.pager.commit(&state::encode_blob(h, &cur, prev))?;
        self.staged = cur;
        Ok(())
    }

    /// Every slice has committed: this commit becomes the one to protect and fall back to.
    pub fn committed_all(&mut self) {
        if self.shadow {
            self.committed = std::mem::take(&mut self.staged);
            self.reset_slots();
        }
    }

    /// Runs every SELECT of Figs. 1 and 2 (`on`) or skips the ones that would change nothing
    /// (the default). The queue's contents are the same either way; only the work differs.
    pub fn set_paper_selects(&mut self, on: bool) {
        self.paper_selects = on;
    }

    /// Entries in the slice.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Pager counters plus this slice's comparisons.
    pub fn stats(&self) -> IoStats {
        IoStats {
            comparisons: self.comparisons,
            ..self.pager.stats()
        }
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.pager.reset_stats();
        self.comparisons = 0;
    }

    fn less(&mut self, a: Entry, b: Entry) -> bool {
        self.comparisons += 1;
        a < b
    }

    fn sort_pending(&mut self) {
        if !self.pending_sorted {
            sort_counted(&mut self.pending, &mut self.comparisons);
            self.pending_sorted = true;
        }
    }

    /// The smallest entry of the slice, from RAM (root summary and pending).
    pub fn peek(&mut self) -> Option<Entry> {
        self.sort_pending();
        let t = self.cbt.get(1).map(|&w| self.best[w as usize]);
        match (t, self.pending.first().copied()) {
            (Some(a), Some(b)) => Some(if self.less(b, a) { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// A free slot, growing the file when there is none.
    fn alloc(&mut self) -> Result<u32> {
        if let Some(s) = self.free.pop() {
            return Ok(s);
        }
        let cap = self.leaf.len() as u64;
        self.pager.grow(self.layout.bytes_for(cap + 1))?;
        let new_cap = self.layout.slots_in(self.pager.len());
        if new_cap > u64::from(u32::MAX) {
            return Err(Error::Usage(format!(
                "{}: the CBT slice would exceed 2^32 blocks; use a larger block size",
                self.path.display()
            )));
        }
        let new_cap = new_cap as usize;
        self.count.resize(new_cap, 0);
        self.best.resize(new_cap, Entry::default());
        self.worst.resize(new_cap, Entry::default());
        self.leaf.resize(new_cap, 0);
        self.pinned.resize(new_cap, false);
        self.free.extend((cap as u32 + 1..new_cap as u32).rev());
        Ok(cap as u32)
    }

    /// The slot leaves the tree.
    fn release(&mut self, slot: u32) {
        self.leaf[slot as usize] = 0;
        if !self.pinned[slot as usize] {
            self.free.push(slot);
        }
    }

    /// Reads the block of `slot` (one pager read).
    fn read_block(&mut self, slot: u32) -> Result<Vec<Entry>> {
        let n = self.count[slot as usize] as usize * Entry::SIZE;
        self.bytes.resize(n, 0);
        self.pager
            .read(self.layout.offset(slot), &mut self.bytes[..n])?;
        Ok(self.bytes[..n]
            .chunks_exact(Entry::SIZE)
            .map(Entry::read_from)
            .collect())
    }

    /// Writes `entries` (sorted, 1..=R) as the block of the item in `slot` (one pager write) and
    /// returns the slot it is now in: a pinned block (part of the last commit, T > 1) is not
    /// overwritten but moved to a free slot, and the tree renamed along its winning run.
    fn store(&mut self, slot: u32, entries: &[Entry]) -> Result<u32> {
        debug_assert!(!entries.is_empty() && entries.len() <= self.r);
        debug_assert!(entries.windows(2).all(|w| w[0] <= w[1]));
        let mut s = slot;
        if self.pinned[slot as usize] {
            s = self.alloc()?;
            let pos = self.leaf[slot as usize] as usize;
            self.leaf[s as usize] = pos as u32;
            self.leaf[slot as usize] = 0; // stays pinned, so out of the free list until commit
            let mut p = pos;
            while p >= 1 && self.cbt[p] == slot {
                self.cbt[p] = s;
                p /= 2;
            }
        }
        self.bytes.clear();
        for e in entries {
            let mut b = [0u8; Entry::SIZE];
            e.write_to(&mut b);
            self.bytes.extend_from_slice(&b);
        }
        self.pager.write(self.layout.offset(s), &self.bytes)?;
        let i = s as usize;
        self.count[i] = entries.len() as u32;
        self.best[i] = entries[0];
        self.worst[i] = entries[entries.len() - 1];
        Ok(s)
    }

    /// insert-many: fills pending; every R entries become a new item through Fig. 1.
    pub fn insert(&mut self, items: &[Entry]) -> Result<()> {
        self.len += items.len() as u64;
        let r = self.r;
        let mut rest = items;
        if self.pending.len() + rest.len() >= r && !self.pending.is_empty() {
            let take = r - self.pending.len();
            let mut block = std::mem::take(&mut self.pending);
            block.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            self.insert_block(block)?;
        }
        while rest.len() >= r {
            self.insert_block(rest[..r].to_vec())?;
            rest = &rest[r..];
        }
        self.pending.extend_from_slice(rest);
        self.pending_sorted = (self.pending_sorted && rest.is_empty()) || self.pending.len() <= 1;
        Ok(())
    }

    fn insert_block(&mut self, mut s: Vec<Entry>) -> Result<()> {
        sort_counted(&mut s, &mut self.comparisons);
        self.insertion_update(s)
    }

    /// Fig. 1, `insertion-update-cbt(i, S, k)`: appends a leaf for a new item `i` by splitting
    /// the first leaf (position N: its item moves to 2N, `i` takes k = 2N+1), then walks the
    /// distinct winners D_y of k's ancestors from the root down; each keeps its own size of the
    /// smallest of `Prio[a] ∪ S` (SELECT) and passes the rest on as S; `i` gets the final S.
    /// A winner whose largest entry is below S's smallest keeps its block as it is (SELECT would
    /// change nothing), decided in RAM without reading it (unless `paper_selects`). `s` is
    /// sorted, 1..=R entries.
    fn insertion_update(&mut self, mut s: Vec<Entry>) -> Result<()> {
        let i = self.alloc()?;
        let n = self.cbt.len() / 2;
        if n == 0 {
            self.cbt = vec![0, i];
            self.leaf[i as usize] = 1;
            self.store(i, &s)?;
            return Ok(());
        }
        let o = self.cbt[n];
        self.cbt.push(o);
        self.cbt.push(i);
        self.leaf[o as usize] = (2 * n) as u32;
        let k = 2 * n + 1;
        self.leaf[i as usize] = k as u32;
        let h = (usize::BITS - 1 - k.leading_zeros()) as usize;
        // I_y[j] = CBT[k div 2^(h-j+1)], j = 1..h: the winners from the root down to k's parent.
        let mut dy: Vec<u32> = (1..=h).map(|j| self.cbt[k >> (h - j + 1)]).collect();
        // An item wins a contiguous run of the path, so duplicates are adjacent.
        dy.dedup();
        for a in dy {
            let (first, worst) = (s[0], self.worst[a as usize]);
            if !self.paper_selects && !self.less(first, worst) {
                continue;
            }
            let block = self.read_block(a)?;
            let (top, rest) = select_merge(&block, &s, block.len(), &mut self.comparisons);
            self.store(a, &top)?;
            s = rest;
        }
        self.store(i, &s)?;
        Ok(())
    }

    /// Deletes the root winner's (emptied) item by the CBT deletion rule, then runs Fig. 2: the
    /// last two leaves (children of N-1) collapse into their parent, which keeps the pair's
    /// winner; the pair's loser takes the deleted item's leaf k; extraction-update(k) restores
    /// the tournament along k's path.
    fn delete_root(&mut self) -> Result<()> {
        let w = self.cbt[1];
        let n = self.cbt.len() / 2;
        if n == 1 {
            self.cbt.clear();
            self.release(w);
            return Ok(());
        }
        let p = n - 1;
        let (u, v) = (self.cbt[2 * n - 2], self.cbt[2 * n - 1]);
        let win = self.cbt[p];
        let lose = if win == u { v } else { u };
        self.cbt.truncate(2 * n - 2);
        self.leaf[win as usize] = p as u32;
        // w wins everywhere on its path, so it is never the pair's loser.
        let k = self.leaf[w as usize] as usize;
        self.cbt[k] = lose;
        self.leaf[lose as usize] = k as u32;
        // w's slot is released last: the path above k still names it until Fig. 2 rewrites it.
        self.extraction_update(k)?;
        self.release(w);
        Ok(())
    }

    /// Fig. 2, `extraction-update-cbt(k)`: from k's parent up to the root, the winners of the two
    /// children play a match: the one whose largest entry is smaller (the paper's larger MIN)
    /// wins and becomes CBT[v]; SELECT over both blocks gives the winner its own size of the
    /// smallest entries and the loser the rest. Blocks that are already apart (winner's largest
    /// <= loser's smallest) are left alone, decided in RAM (unless `paper_selects`). The
    /// winner's block is carried to the next level, so each level reads at most one new block
    /// and writes two.
    fn extraction_update(&mut self, k: usize) -> Result<()> {
        let mut carry: Option<(u32, Vec<Entry>)> = None;
        let mut pos = k;
        while pos > 1 {
            let v = pos / 2;
            let (a, b) = (self.cbt[2 * v], self.cbt[2 * v + 1]);
            let (wa, wb) = (self.worst[a as usize], self.worst[b as usize]);
            let (win, lose) = if self.less(wb, wa) { (b, a) } else { (a, b) };
            self.cbt[v] = win;
            let (ww, lb) = (self.worst[win as usize], self.best[lose as usize]);
            if !self.paper_selects && !self.less(lb, ww) {
                carry = carry.filter(|(s, _)| *s == win);
            } else {
                let (mut wblk, mut lblk) = (None, None);
                match carry.take() {
                    Some((s, blk)) if s == win => wblk = Some(blk),
                    Some((s, blk)) if s == lose => lblk = Some(blk),
                    _ => {}
                }
                let wblk = match wblk {
                    Some(x) => x,
                    None => self.read_block(win)?,
                };
                let lblk = match lblk {
                    Some(x) => x,
                    None => self.read_block(lose)?,
                };
                let (top, rest) = select_merge(&wblk, &lblk, wblk.len(), &mut self.comparisons);
                let w2 = self.store(win, &top)?;
                self.store(lose, &rest)?;
                carry = Some((w2, top));
            }
            pos = v;
        }
        Ok(())
    }

    /// extract-top(r) of this slice: merges the root winner's block (the slice's smallest
    /// entries) with the sorted pending entries; a block used up is deleted (Fig. 2) and the next
    /// root winner continues; a block partly used is written back shorter (its largest entry,
    /// hence the tournament, is unchanged).
    pub fn extract(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        self.sort_pending();
        let start = out.len();
        let mut need = r;
        let mut pi = 0;
        while need > 0 {
            let Some(&w) = self.cbt.get(1) else {
                let t = need.min(self.pending.len() - pi);
                out.extend_from_slice(&self.pending[pi..pi + t]);
                pi += t;
                break;
            };
            // Pending entries below the root's smallest need no block read.
            while need > 0 && pi < self.pending.len() {
                let (x, b) = (self.pending[pi], self.best[w as usize]);
                if !self.less(x, b) {
                    break;
                }
                out.push(x);
                pi += 1;
                need -= 1;
            }
            if need == 0 {
                break;
            }
            let block = self.read_block(w)?;
            let mut bi = 0;
            while need > 0 && bi < block.len() {
                let from_pending = pi < self.pending.len() && {
                    let x = self.pending[pi];
                    self.less(x, block[bi])
                };
                if from_pending {
                    out.push(self.pending[pi]);
                    pi += 1;
                } else {
                    out.push(block[bi]);
                    bi += 1;
                }
                need -= 1;
            }
            if bi == block.len() {
                self.delete_root()?;
            } else {
                self.store(w, &block[bi..])?;
            }
        }
        self.pending.drain(..pi);
        self.len -= (out.len() - start) as u64;
        Ok(())
    }

    /// Gives back `back` (ascending, each `<=` every entry of the slice: the unused tail of an
    /// extraction): into pending while it has room (in front, so it stays sorted), else in front
    /// of the root's block if it fits (the root then still holds the slice's smallest), else as
    /// new items through Fig. 1.
    pub fn unextract(&mut self, back: &[Entry]) -> Result<()> {
        self.len += back.len() as u64;
        let room = (self.r - 1)
            .saturating_sub(self.pending.len())
            .min(back.len());
        if self.pending_sorted {
            self.pending.splice(0..0, back[..room].iter().copied());
        } else {
            self.pending.extend_from_slice(&back[..room]);
        }
        let rest = &back[room..];
        if rest.is_empty() {
            return Ok(());
        }
        if let Some(&w) = self.cbt.get(1) {
            if self.count[w as usize] as usize + rest.len() <= self.r {
                debug_assert!(rest[rest.len() - 1] <= self.best[w as usize]);
                let mut blk = rest.to_vec();
                blk.extend(self.read_block(w)?);
                self.store(w, &blk)?;
                return Ok(());
            }
        }
        for chunk in rest.chunks(self.r) {
            self.insertion_update(chunk.to_vec())?;
        }
        Ok(())
    }

    /// Test support: reads every block and checks the summaries, the tournament and the heap
    /// invariant (every entry below a node, outside its winner's block, is >= the winner's
    /// largest).
    #[cfg(test)]
    pub fn check_invariants(&mut self) {
        let n = self.cbt.len() / 2;
        let mut total = self.pending.len() as u64;
        let mut mins = std::collections::HashMap::new();
        for p in n..2 * n {
            let s = self.cbt[p];
            assert_eq!(self.leaf[s as usize] as usize, p);
            let b = self.read_block(s).unwrap();
            assert!(!b.is_empty() && b.len() <= self.r);
            assert!(b.windows(2).all(|w| w[0] <= w[1]), "block {s} unsorted");
            assert_eq!(b[0], self.best[s as usize]);
            assert_eq!(b[b.len() - 1], self.worst[s as usize]);
            total += b.len() as u64;
            mins.insert(s, b[0]);
        }
        assert_eq!(total, self.len);
        for p in n..2 * n {
            let s = self.cbt[p];
            let mut v = p / 2;
            while v >= 1 {
                let w = self.cbt[v];
                assert!(w == self.cbt[2 * v] || w == self.cbt[2 * v + 1]);
                if w != s {
                    assert!(mins[&s] >= self.worst[w as usize], "heap order at node {v}");
                }
                v /= 2;
            }
        }
    }
}
