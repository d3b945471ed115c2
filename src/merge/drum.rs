//! DRUM's check+update on fingerprints alone ([`check_update`]): the heart of the merge without
//! the URL records, for the scale benchmark (`tools/bench/drum.sh`) and for tools that only need
//! the set.

use crate::error::Result;
use crate::run::{RunReader, RunWriter, U64Blocks};

/// What [`check_update`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CheckUpdate {
    /// Fingerprints in the old seen set.
    pub seen: u64,
    /// Incoming fingerprints (duplicates counted).
    pub incoming: u64,
    /// Incoming fingerprints not in the old seen set (each counted once).
    pub new: u64,
}

/// Keys held before they are written out.
const FLUSH: usize = 1 << 13;

/// DRUM's check+update on fingerprints alone: merges the sorted `seen` set with a sorted batch
/// of `incoming` fingerprints (duplicates allowed) in one sequential pass, writing the new seen
/// set to `out_seen` and the fingerprints that were not seen, once each, to `out_new`. This is
/// the heart of [`super::merge_partition`] without the URL records, for the scale benchmark
/// (`tools/bench/drum.sh`) and for tools that only need the set.
pub fn check_update(
    seen: RunReader,
    incoming: RunReader,
    out_seen: &mut RunWriter,
    out_new: &mut RunWriter,
) -> Result<CheckUpdate> {
    // A two-way merge over whole decoded blocks of integers, in place in the blocks: the seen
    // set is copied through in slices between incoming keys (a batch is usually much smaller
    // than the set), and output goes out in slices too. Each input is read, decompressed and
    // decoded a block ahead on a thread of its own (`U64Blocks`), so on two cores reading,
    // merging and (with a background writer) compressing overlap. Neither input is held beyond
    // a few blocks.
    let mut stats = CheckUpdate::default();
    let mut seen = U64Blocks::spawn(seen)?;
    let mut incoming = U64Blocks::spawn(incoming)?;
    let mut out = Out {
        seen: out_seen,
        new: out_new,
        s_out: Vec::with_capacity(FLUSH + 1),
        n_out: Vec::with_capacity(FLUSH + 1),
        last_in: None,
    };
    // Positions in the current blocks; `None` once an input is exhausted.
    let mut s_pos = Some(0);
    let mut b_pos = Some(0);
    loop {
        refill(&mut seen, &mut s_pos, &mut stats.seen)?;
        refill(&mut incoming, &mut b_pos, &mut stats.incoming)?;
        out.flush_full()?;
        match (s_pos, b_pos) {
            (None, None) => break,
            (Some(sp), None) => {
                // The batch is over: the rest of the set goes through unchanged.
                let s = &seen.current()[sp..];
                out.s_out.extend_from_slice(s);
                s_pos = Some(sp + s.len());
            }
            (None, Some(bp)) => {
                // The set is over: every remaining distinct incoming key is new.
                let b = &incoming.current()[bp..];
                out.all_new(b);
                b_pos = Some(bp + b.len());
            }
            (Some(sp), Some(bp)) => {
                let (i, j) = out.merge(&seen.current()[sp..], &incoming.current()[bp..]);
                s_pos = Some(sp + i);
                b_pos = Some(bp + j);
            }
        }
    }
    stats.new = out.finish()?;
    Ok(stats)
}

/// Moves `r` to its next block when the current one is used up (at `pos`), counting its keys;
/// `pos` becomes `None` at the end.
fn refill(r: &mut U64Blocks, pos: &mut Option<usize>, count: &mut u64) -> Result<()> {
    if let Some(p) = *pos {
        if p == r.current().len() {
            *pos = r.next_block()?.map(|keys| {
                *count += keys.len() as u64;
                0
            });
        }
    }
    Ok(())
}

/// The output side of [`check_update`]: the next seen set and the new keys, in slices.
struct Out<'a> {
    seen: &'a mut RunWriter,
    new: &'a mut RunWriter,
    s_out: Vec<u64>,
    n_out: Vec<u64>,
    /// The last incoming key handled, so its duplicates are skipped.
    last_in: Option<u64>,
}

impl Out<'_> {
    /// Writes out a slice that has reached [`FLUSH`] keys.
    fn flush_full(&mut self) -> Result<()> {
        if self.s_out.len() >= FLUSH {
            self.seen.push_u64s(&self.s_out)?;
            self.s_out.clear();
        }
        if self.n_out.len() >= FLUSH {
            self.new.push_u64s(&self.n_out)?;
            self.n_out.clear();
        }
        Ok(())
    }

    /// The incoming keys `b` once the seen set is over: each distinct one is new.
    fn all_new(&mut self, b: &[u64]) {
        for &x in b {
            if self.last_in != Some(x) {
                self.last_in = Some(x);
                self.s_out.push(x);
                self.n_out.push(x);
            }
        }
    }

    /// Merges the seen keys `s` with the incoming keys `b` until either runs out: every seen key
    /// below the next incoming one goes through; the incoming key is new if the seen set does
    /// not hold it. Returns how many of `s` and of `b` were used.
    fn merge(&mut self, s: &[u64], b: &[u64]) -> (usize, usize) {
        let mut i = 0;
        let mut j = 0;
        while i < s.len() && j < b.len() {
            let x = b[j];
            if self.last_in == Some(x) {
                j += 1;
                continue;
            }
            let below = below(&s[i..], x);
            self.s_out.extend_from_slice(&s[i..i + below]);
            i += below;
            if i == s.len() {
                break; // refill the seen block, keep x
            }
            self.last_in = Some(x);
            j += 1;
            if s[i] != x {
                self.s_out.push(x);
                self.n_out.push(x);
            }
        }
        (i, j)
    }

    /// Writes what is held; returns the new keys written in all.
    fn finish(self) -> Result<u64> {
        let new = self.n_out.len() as u64 + self.new.records();
        self.seen.push_u64s(&self.s_out)?;
        self.new.push_u64s(&self.n_out)?;
        Ok(new)
    }
}

/// How many keys at the start of the sorted `s` are below `x`: counted eight at a time without
/// a branch per key (a gap is a few keys; a branch per key mispredicts once per incoming key).
fn below(s: &[u64], x: u64) -> usize {
    let mut below = 0;
    loop {
        let w = &s[below..(below + 8).min(s.len())];
        let c: usize = w.iter().map(|&v| usize::from(v < x)).sum();
        below += c;
        if c < w.len() || w.is_empty() {
            break;
        }
    }
    below
}
