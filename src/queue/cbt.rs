//! The CBT of R-blocks: a disk-resident priority queue with a logarithmic worst case.
//!
//! Marin, Paredes and Bonacic, "High-performance priority queues for parallel crawlers" (WIDM
//! 2008; docs/design.md, References), section "Priority queues: log worst case approach",
//! Fig. 1 (insertion update) and Fig. 2 (extraction update), and Table 1 (T slices).
//!
//! # Structure
//!
//! The paper's in-memory priority queue is a complete binary tree (CBT) whose leaves are the
//! items and whose internal nodes hold a continuous tournament: `CBT[v]` names the winning item
//! below `v`, `Leaf[i]` maps an item to its leaf and `Prio[i]` holds its priority. For secondary
//! memory every item's `Prio[i]` becomes a *set* of up to R priorities stored as one contiguous
//! block on disk, and an operation moves whole blocks along one root-to-leaf path.
//!
//! Here an item is a block slot of the slice file: up to R [`Entry`]s, kept sorted, read and
//! written with one [`Pager::read`](super::pager::Pager::read) /
//! [`Pager::write`](super::pager::Pager::write) each (small blocks share a page, large ones start
//! on a page boundary). `CBT[1 .. 2N]` (N items; leaves are positions N..2N-1 and hold their
//! slot, internal nodes hold the winning slot) and, per slot, the entry count, its smallest and
//! its largest entry and its leaf, are per-node metadata in RAM. Smaller entries have higher
//! priority (the paper's larger values): the paper's `x >= e` "top" side of a SELECT is our
//! smaller entries and the paper's `MIN(Prio[i])`, an item's lowest priority, is our *largest*
//! entry of the block. Order is [`Entry`]'s derived `Ord` (key, fingerprint, host).
//!
//! Invariant (checked in RAM on open and fully by the tests): for every internal node `v` with
//! winner `W = CBT[v]`, `W` is the winner of one of `v`'s children, and every entry below `v` that
//! is not in `W`'s block is `>=` the largest entry of `W`'s block. So the root winner's block
//! holds the slice's `|block|` smallest entries. Block sizes are free (1..=R) and preserved by
//! both figures; in practice every block is full except the root's after a partial extraction.
//!
//! # The figures, and how the garbled scrape is read
//!
//! - **Fig. 1, `insertion-update-cbt(i, S, k)`** (`tree.rs`, `insertion_update`). Insertion
//!   "appends a new rightmost leaf ... by expanding in two leaves the first leaf of the tree": the
//!   item at position N moves to 2N and the new item `i` takes `k = 2N + 1` (so `CBT[N]` keeps
//!   the old item, which is right: it ends up beating `i`). `h = ⌊lg k⌋` and
//!   `I_y[j] = CBT[k div 2^(h-j+1)]`, `j = 1..h`, are the winners from the root (j = 1) down to
//!   k's parent (j = h); `D_y` drops duplicates (an item wins a contiguous run of its path, so
//!   they are adjacent). For each `a` in `D_y`, top down: `e := SELECT(Prio[a] ∪ S, n)`, where
//!   the scrape leaves `n` undefined: it is `|Prio[a]|`, so that `a` keeps its size and S keeps
//!   `|S|` (the last line, `Prio[i] := S`, gives the new item what is left). The two set lines
//!   are a simultaneous assignment from the union taken *before* either (the scrape reads as if
//!   the second used the updated `Prio[a]`). S is the new block of R entries.
//! - **Fig. 2, `extraction-update-cbt(k)`** (`tree.rs`, `extraction_update`). For `j = h`
//!   down to 1 the node is `v = k div 2^(h-j+1)` (k's parent first, the root last) and `a = 2v`,
//!   `b = a + 1` are its children; `x`, `y` are the `MIN`s of the children's *winners*
//!   (`Prio[CBT[a]]`); "if x < y then swap(a, b)" makes `a` the child whose winner has the higher
//!   lowest priority (our smaller largest entry), and `CBT[v] := a` stands for
//!   `CBT[v] := CBT[a]` (CBT holds items, a is a position). SELECT over both winners' blocks
//!   gives the winner its own size of the top entries and the loser the rest (again
//!   simultaneously; `Prio[a]` stands for `Prio[CBT[a]]`). The `k` it starts from comes from the
//!   paper's deletion rule, "removing the child with lower priority between the children of the
//!   parent of the rightmost leaf, and exchanging it with the target leaf to be deleted": after
//!   the root winner's block has been extracted, the last two leaves collapse into their parent
//!   (which keeps the pair's winner), the pair's loser takes the emptied item's leaf `k`, and
//!   Fig. 2 runs from `k`.
//! - SELECT is a merge, since blocks are kept sorted: O(R) comparisons, like a linear-time
//!   selection, and extraction can then take a prefix. A SELECT that would change nothing (all of
//!   S above a winner's largest entry in Fig. 1; two blocks already apart in Fig. 2) is decided
//!   from the RAM summaries and skips the block I/O; the result is the same.
//!   [`CbtQueue::set_paper_selects`] turns the skipping off (pqbench's Table 1 measures both).
//!
//! # Cost
//!
//! Fig. 1 reads and writes each distinct winner on one path at most once, Fig. 2 reads at most one
//! new block per level (the winner is carried up) and writes two. A path has at most ⌈lg 2N⌉ nodes
//! for N items, about len/R, so an insert-many or extract-top of R entries costs O(log(N/R)) block
//! I/Os of ⌈24R / page⌉ pages each (plus what the pager's frame cache saves). [`IoStats`] counts
//! every key comparison: sorting each new block and the pending entries, the matches, the skip
//! tests and the merges (SELECT, and extraction merging the root block with pending entries).
//!
//! # Partial blocks, any r
//!
//! [`DiskQueue::insert_many`] fills a pending buffer of fewer than R entries in RAM (persisted in
//! the meta at commit); every R entries become a new item through Fig. 1. [`DiskQueue::extract_top`]
//! merges the root block with the (sorted) pending entries: a block used up is deleted (Fig. 2)
//! and the next root winner continues, a block partly used is written back shorter (its largest
//! entry, hence the tournament, is unchanged). So any r works, smaller or larger than R.
//!
//! # Slices
//!
//! The queue is T independent CBTs (`slice-000.dat`, `slice-001.dat`, ..., each behind its own
//! [`Pager`](super::pager::Pager) with [`CbtOptions::pager`]). An entry goes to slice
//! `⌊splitmix64(fp) · T / 2^64⌋`, so equal entries share a slice. [`DiskQueue::extract_top`] is
//! exact across slices: a T-way merge over the slices' smallest entries (known in RAM from the
//! root summaries and pending), fetching a run of `⌈remaining / nonempty slices⌉` entries from a
//! slice only when its next entry is the smallest; the unused tail of each run is given back to
//! its slice in front (into pending, else in front of the root block, else through Fig. 1), which
//! is valid because it is smaller than everything left in the slice. [`CbtQueue::superstep`] is
//! the paper's Table 1 instead: each slice, on its own thread, extracts its own top and inserts
//! its share, which is *not* the global top.
//!
//! # Crash safety
//!
//! From the pager (`pager.rs`): every committed page overwritten after a commit is journaled
//! first, and the meta blob is published atomically at commit; this queue's blob holds R, T, the
//! slice index, the commit tag and epoch, the tree, the block summaries and the pending entries
//! (`state.rs`), validated on open. Reopening after a drop without commit, or a kill at any
//! instant, rolls each slice file back to its last commit.
//!
//! With T > 1 a commit is T pager commits in a row, and a crash between two of them would leave
//! slices at different commits. So slices are copy-on-write between commits: a block that is part
//! of the last commit is never overwritten (its item moves to a free slot; the old slot is reused
//! only after the next commit of every slice), and each slice's blob also carries the state of
//! the commit before. On open, a slice one epoch ahead of the others falls back to that previous
//! state, whose blocks are intact. A single-slice queue writes in place.
//!
//! If an operation returns an error, the in-memory state may no longer match the files: drop the
//! queue and reopen it.
//!
//! Copy-on-write costs at most one move per block per commit interval and up to twice the file
//! space of the live blocks (freed slots wait for the next commit).
//!
//! Memory: per slice O(R) entries (pending, two blocks in flight), the pager's frames and the
//! per-node metadata: the block summaries and tree (about 65 bytes per block) and the committed
//! meta blob (about 60 bytes per block, twice with T > 1, once more in the pager); never the
//! whole queue.

use std::path::{Path, PathBuf};

use super::pager::PagerOptions;
use super::{DiskQueue, Entry, IoStats};
use crate::error::{Error, Result};

mod state;
mod tree;

#[cfg(test)]
mod tests;

use state::State;
use tree::Slice;

/// How a [`CbtQueue`] is set up. R and T are fixed when the queue is created.
#[derive(Debug, Clone, Copy)]
pub struct CbtOptions {
    /// R: entries per node block.
    pub block: usize,
    /// T: independent slices (trees), one file and one pager each.
    pub slices: usize,
    /// Pager options of each slice (its frame cache is per slice).
    pub pager: PagerOptions,
}

impl Default for CbtOptions {
    fn default() -> CbtOptions {
        CbtOptions {
            block: 1024,
            slices: 1,
            pager: PagerOptions::default(),
        }
    }
}

/// Entries routed per batch in [`DiskQueue::insert_many`] (bounds the copy with T > 1).
const ROUTE_BATCH: usize = 1 << 16;

/// The slice of an entry with fingerprint `fp`: splitmix64's finalizer, then multiply-shift onto
/// `0..slices`. Part of the on-disk format: it must never change.
fn route(fp: u64, slices: usize) -> usize {
    let mut z = fp.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((u128::from(z) * slices as u128) >> 64) as usize
}

/// `now - before`, counter by counter.
fn delta(now: IoStats, before: IoStats) -> IoStats {
    IoStats {
        block_reads: now.block_reads - before.block_reads,
        block_writes: now.block_writes - before.block_writes,
        bytes_read: now.bytes_read - before.bytes_read,
        bytes_written: now.bytes_written - before.bytes_written,
        comparisons: now.comparisons - before.comparisons,
    }
}

/// The CBT of R-blocks in T slices; see the module docs.
pub struct CbtQueue {
    dir: PathBuf,
    slices: Vec<Slice>,
    /// Queue-level commits so far.
    epoch: u64,
    tag: u64,
    /// Comparisons of the cross-slice merge in [`DiskQueue::extract_top`].
    merge_comparisons: u64,
}

impl CbtQueue {
    /// Opens the queue in `dir` (created if needed), or creates it, with `T = opts.slices` slice
    /// files. A queue created with another R or T is an [`Error::Usage`] naming `dir`; a damaged
    /// meta is [`Error::Corrupt`]. Rolls back to the last commit (module docs, "Crash safety").
    pub fn open(dir: &Path, opts: CbtOptions) -> Result<CbtQueue> {
        if opts.block == 0 || opts.block > (u32::MAX as usize) / Entry::SIZE {
            return Err(Error::Usage(format!(
                "{}: CBT block size {} is out of range (1 ..= {} entries)",
                dir.display(),
                opts.block,
                u32::MAX as usize / Entry::SIZE
            )));
        }
        if opts.slices == 0 || opts.slices > 1000 {
            return Err(Error::Usage(format!(
                "{}: CBT slice count {} is out of range (1 ..= 1000)",
                dir.display(),
                opts.slices
            )));
        }
        crate::storage::create_dir_all(dir)?;
        let t_n = opts.slices;
        let mut slices = Vec::with_capacity(t_n);
        let mut metas = Vec::with_capacity(t_n);
        for t in 0..t_n {
            let s = Slice::open(dir, t, t_n, opts.block, opts.pager)?;
            metas.push(s.meta_states(dir)?);
            slices.push(s);
        }
        // Every slice at the same epoch, or (a crash inside a commit) some one epoch ahead,
        // carrying the state of the epoch the others are at.
        let epoch = metas
            .iter()
            .map(|m| m.as_ref().map_or(0, |(cur, _)| cur.epoch))
            .min()
            .unwrap_or(0);
        let mut states = Vec::with_capacity(t_n);
        for (t, m) in metas.into_iter().enumerate() {
            let st = match m {
                None => State::default(),
                Some((cur, _)) if cur.epoch == epoch => cur,
                Some((cur, Some(prev))) if cur.epoch == epoch + 1 && prev.epoch == epoch => prev,
                Some((cur, _)) => {
                    return Err(Error::corrupt(
                        dir.join(format!("slice-{t:03}.dat.meta")),
                        0,
                        format!(
                            "slice {t} is at commit {} but another slice is at commit {epoch}",
                            cur.epoch
                        ),
                    ))
                }
            };
            states.push(st);
        }
        let tag = states.first().map_or(0, |s| s.tag);
        if let Some(t) = states.iter().position(|s| s.tag != tag) {
            return Err(Error::corrupt(
                dir.join(format!("slice-{t:03}.dat.meta")),
                0,
                format!(
                    "commit {epoch} has tag {} here and {tag} in slice 0",
                    states[t].tag
                ),
            ));
        }
        for (s, st) in slices.iter_mut().zip(states) {
            s.load(st)?;
        }
        Ok(CbtQueue {
            dir: dir.to_path_buf(),
            slices,
            epoch,
            tag,
            merge_comparisons: 0,
        })
    }

    /// The queue's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// T, the number of slices.
    pub fn slices(&self) -> usize {
        self.slices.len()
    }

    /// The counters of slice `t` (its pager's block I/O and its comparisons). Panics if
    /// `t >= self.slices()`.
    pub fn slice_stats(&self, t: usize) -> IoStats {
        self.slices[t].stats()
    }

    /// Entries in slice `t`. Panics if `t >= self.slices()`.
    pub fn slice_len(&self, t: usize) -> u64 {
        self.slices[t].len()
    }

    /// With `on`, every slice runs each SELECT of Figs. 1 and 2 along its path, as the paper's
    /// pseudo-code does, instead of skipping (by the RAM summaries) the ones that would change
    /// nothing; the default is off. The queue's contents and results are the same either way,
    /// only the work (comparisons, block I/Os) differs: on, every level of a path costs a merge
    /// and a block write, so the work of an operation depends on the path's length and hardly on
    /// the keys. Not persisted (a reopened queue skips again). For pqbench's Table 1.
    pub fn set_paper_selects(&mut self, on: bool) {
        for s in &mut self.slices {
            s.set_paper_selects(on);
        }
    }

    /// The slice an entry goes to (by its fingerprint).
    pub fn slice_of(&self, e: &Entry) -> usize {
        route(e.fp, self.slices.len())
    }

    /// One bulk-synchronous superstep of the paper's Table 1: every slice, on its own thread,
    /// runs extract-top(`per_slice_extract`) on its own tree and then insert-many of its share of
    /// `inserts` (the entries routed to it). The extracted entries are appended to `out` slice by
    /// slice, each slice's ascending. This is **not** the global top: each slice gives its own
    /// smallest (that is the paper's design; [`DiskQueue::extract_top`] is the exact one).
    /// Returns each slice's counter deltas for this superstep, in slice order.
    pub fn superstep(
        &mut self,
        per_slice_extract: usize,
        inserts: &[Entry],
        out: &mut Vec<Entry>,
    ) -> Result<Vec<IoStats>> {
        let t_n = self.slices.len();
        let mut parts = vec![Vec::new(); t_n];
        for e in inserts {
            parts[route(e.fp, t_n)].push(*e);
        }
        let results: Vec<Result<(Vec<Entry>, IoStats)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .slices
                .iter_mut()
                .zip(parts)
                .map(|(slice, part)| {
                    scope.spawn(move || {
                        let before = slice.stats();
                        let mut got = Vec::with_capacity(per_slice_extract.min(1 << 20));
                        slice.extract(per_slice_extract, &mut got)?;
                        slice.insert(&part)?;
                        Ok((got, delta(slice.stats(), before)))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let results = results.into_iter().collect::<Result<Vec<_>>>()?;
        let mut deltas = Vec::with_capacity(t_n);
        for (got, d) in results {
            out.extend_from_slice(&got);
            deltas.push(d);
        }
        Ok(deltas)
    }

    /// Commits slices `0..upto` as commit `epoch + 1`; with every slice, the commit is done.
    fn commit_slices(&mut self, tag: u64, upto: usize) -> Result<()> {
        let epoch = self.epoch + 1;
        for s in &mut self.slices[..upto] {
            s.commit(epoch, tag)?;
        }
        if upto == self.slices.len() {
            for s in &mut self.slices {
                s.committed_all();
            }
            self.epoch = epoch;
            self.tag = tag;
        }
        Ok(())
    }

    /// The exact extract-top across T > 1 slices (module docs, "Slices").
    fn extract_merged(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        let t_n = self.slices.len();
        let mut runs: Vec<std::collections::VecDeque<Entry>> = vec![Default::default(); t_n];
        let mut remaining = r.min(usize::try_from(self.len()).unwrap_or(usize::MAX));
        let mut fetched = Vec::new();
        let mut cmps = 0u64;
        while remaining > 0 {
            let mut best: Option<(usize, Entry)> = None;
            for (t, run) in runs.iter().enumerate() {
                let head = match run.front() {
                    Some(e) => Some(*e),
                    None => self.slices[t].peek(),
                };
                if let Some(h) = head {
                    if best.is_none_or(|(_, b)| {
                        cmps += 1;
                        h < b
                    }) {
                        best = Some((t, h));
                    }
                }
            }
            let Some((t, _)) = best else { break };
            if runs[t].is_empty() {
                let active = (0..t_n)
                    .filter(|&u| !runs[u].is_empty() || self.slices[u].len() > 0)
                    .count();
                fetched.clear();
                self.slices[t].extract(remaining.div_ceil(active.max(1)), &mut fetched)?;
                runs[t].extend(fetched.iter().copied());
            }
            out.push(
                runs[t]
                    .pop_front()
                    .expect("a slice with a next entry gives one"),
            );
            remaining -= 1;
        }
        self.merge_comparisons += cmps;
        for (t, run) in runs.iter_mut().enumerate() {
            if !run.is_empty() {
                self.slices[t].unextract(run.make_contiguous())?;
            }
        }
        Ok(())
    }
}

impl DiskQueue for CbtQueue {
    fn insert_many(&mut self, items: &[Entry]) -> Result<()> {
        let t_n = self.slices.len();
        if t_n == 1 {
            return self.slices[0].insert(items);
        }
        let mut parts = vec![Vec::new(); t_n];
        for batch in items.chunks(ROUTE_BATCH) {
            for e in batch {
                parts[route(e.fp, t_n)].push(*e);
            }
            for (s, part) in self.slices.iter_mut().zip(&mut parts) {
                s.insert(part)?;
                part.clear();
            }
        }
        Ok(())
    }

    fn extract_top(&mut self, r: usize, out: &mut Vec<Entry>) -> Result<()> {
        if self.slices.len() == 1 {
            self.slices[0].extract(r, out)
        } else {
            self.extract_merged(r, out)
        }
    }

    fn len(&self) -> u64 {
        self.slices.iter().map(Slice::len).sum()
    }

    fn stats(&self) -> IoStats {
        let merge = IoStats {
            comparisons: self.merge_comparisons,
            ..IoStats::default()
        };
        self.slices.iter().fold(merge, |acc, s| acc.add(&s.stats()))
    }

    fn reset_stats(&mut self) {
        self.merge_comparisons = 0;
        for s in &mut self.slices {
            s.reset_stats();
        }
    }

    fn commit(&mut self, tag: u64) -> Result<()> {
        self.commit_slices(tag, self.slices.len())
    }

    fn tag(&self) -> u64 {
        self.tag
    }
}
