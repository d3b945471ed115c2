//! k-way merge of sorted inputs.
//!
//! [`Merger`] interleaves any number of [`Cursor`]s in key order with a binary heap of source
//! indices; records with equal keys come out in source order (input 0 first), and within one
//! source in their stored order, so the merge is stable. [`merge`] drives a merger into a
//! [`RecordSink`] and hands each group of equal keys to a [`Reducer`], which decides what comes out:
//! the first record ([`KeepFirst`], de-duplication), all of them ([`KeepAll`]), or any
//! combination the caller writes (summing OPIC cash, for instance). A reducer sees a group one
//! record at a time, so a key repeated a billion times costs no memory.

use super::{key_u64, Cursor, LastKey, RecordSink};
use crate::error::Result;

/// Merges sorted cursors into one sorted stream.
///
/// The heap holds, next to each input's index, the first eight bytes of its current key as a
/// big-endian `u64`: most comparisons (all of them for the 8-byte fingerprint keys of seen sets)
/// are then one integer compare on a contiguous array instead of two calls through the cursors and
/// a `memcmp`. Only equal prefixes fall back to comparing whole keys. The 16-way merge of the
/// sort benchmark spends most of its non-zstd time here (docs/BENCHMARKS.md).
pub struct Merger<C: Cursor> {
    inputs: Vec<C>,
    /// Heap of inputs that have a current record, smallest (key, index) on top.
    heap: Vec<Slot>,
    /// The input holding the current record, once `advance` returned true.
    top: Option<usize>,
    started: bool,
}

/// A heap entry: an input and the prefix of its current key.
#[derive(Clone, Copy)]
struct Slot {
    prefix: u64,
    input: usize,
}

impl<C: Cursor> Merger<C> {
    /// A merger over `inputs` (each positioned before its first record).
    pub fn new(inputs: Vec<C>) -> Merger<C> {
        Merger {
            heap: Vec::with_capacity(inputs.len()),
            inputs,
            top: None,
            started: false,
        }
    }

    /// Moves to the next record in merged order; `Ok(false)` when every input is exhausted.
    pub fn advance(&mut self) -> Result<bool> {
        if !self.started {
            self.started = true;
            for i in 0..self.inputs.len() {
                if self.inputs[i].advance()? {
                    let prefix = key_u64(self.inputs[i].key());
                    self.heap.push(Slot { prefix, input: i });
                    self.sift_up(self.heap.len() - 1);
                }
            }
        } else if let Some(t) = self.top {
            debug_assert_eq!(self.heap.first().map(|s| s.input), Some(t));
            if self.inputs[t].advance()? {
                self.heap[0].prefix = key_u64(self.inputs[t].key());
                self.sift_down(0);
            } else {
                let last = self.heap.pop().expect("top is in the heap");
                if !self.heap.is_empty() {
                    self.heap[0] = last;
                    self.sift_down(0);
                }
            }
        }
        self.top = self.heap.first().map(|s| s.input);
        Ok(self.top.is_some())
    }

    /// Index of the input the current record comes from.
    pub fn source(&self) -> usize {
        self.top.expect("advance() first")
    }

    /// Key of the current record.
    pub fn key(&self) -> &[u8] {
        self.inputs[self.source()].key()
    }

    /// Payload of the current record.
    pub fn payload(&self) -> &[u8] {
        self.inputs[self.source()].payload()
    }

    /// Gives the inputs back (to inspect them after the merge).
    pub fn into_inputs(self) -> Vec<C> {
        self.inputs
    }

    #[inline]
    fn less(&self, a: Slot, b: Slot) -> bool {
        if a.prefix != b.prefix {
            return a.prefix < b.prefix;
        }
        match self.inputs[a.input].key().cmp(self.inputs[b.input].key()) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => a.input < b.input,
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.less(self.heap[i], self.heap[parent]) {
                self.heap.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.less(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if self.less(self.heap[c], self.heap[i]) {
                self.heap.swap(c, i);
                i = c;
            } else {
                break;
            }
        }
    }
}

impl<C: Cursor> Cursor for Merger<C> {
    fn advance(&mut self) -> Result<bool> {
        Merger::advance(self)
    }
    fn key(&self) -> &[u8] {
        Merger::key(self)
    }
    fn payload(&self) -> &[u8] {
        Merger::payload(self)
    }
}

/// Decides what a group of records with equal keys becomes.
///
/// For each distinct key, [`Reducer::record`] is called once per record in merged (stable) order,
/// with `first` true for the first of the group, then [`Reducer::finish`] once. Either may write
/// records to `out`; records written must keep the output sorted (normally: the group's key).
pub trait Reducer {
    /// One record of the current group.
    fn record(
        &mut self,
        key: &[u8],
        source: usize,
        payload: &[u8],
        first: bool,
        out: &mut dyn RecordSink,
    ) -> Result<()>;

    /// The group of `key` is complete.
    fn finish(&mut self, key: &[u8], out: &mut dyn RecordSink) -> Result<()> {
        let _ = (key, out);
        Ok(())
    }
}

/// Keeps the first record of every key (the one from the lowest-numbered input): de-duplication.
pub struct KeepFirst;

impl Reducer for KeepFirst {
    fn record(
        &mut self,
        key: &[u8],
        _: usize,
        payload: &[u8],
        first: bool,
        out: &mut dyn RecordSink,
    ) -> Result<()> {
        if first {
            out.push(key, payload)?;
        }
        Ok(())
    }
}

/// Keeps every record.
pub struct KeepAll;

impl Reducer for KeepAll {
    fn record(
        &mut self,
        key: &[u8],
        _: usize,
        payload: &[u8],
        _: bool,
        out: &mut dyn RecordSink,
    ) -> Result<()> {
        out.push(key, payload)
    }
}

/// Merges `inputs` into `out`, letting `reducer` decide each group of equal keys.
/// Returns the number of records read.
pub fn merge<C: Cursor>(
    inputs: Vec<C>,
    reducer: &mut dyn Reducer,
    out: &mut dyn RecordSink,
) -> Result<u64> {
    let mut m = Merger::new(inputs);
    let mut group = LastKey::default();
    let mut n = 0u64;
    while m.advance()? {
        n += 1;
        let order = group.cmp(m.key());
        let first = order != Some(std::cmp::Ordering::Equal);
        if first {
            if order.is_some() {
                reducer.finish(group.as_slice(), out)?;
            }
            group.set(m.key());
        }
        reducer.record(m.key(), m.source(), m.payload(), first, out)?;
    }
    if group.is_set() {
        reducer.finish(group.as_slice(), out)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::VecCursor;

    fn recs(keys: &[u8], tag: u8) -> Vec<crate::run::OwnedRecord> {
        keys.iter().map(|&k| (vec![k], vec![tag])).collect()
    }

    #[test]
    fn stable_and_grouped() {
        let a = VecCursor::new(recs(&[1, 3, 3, 5], b'a'));
        let b = VecCursor::new(recs(&[3, 4], b'b'));
        let c = VecCursor::new(recs(&[], b'c'));
        let mut out: Vec<crate::run::OwnedRecord> = Vec::new();
        let n = merge(vec![a, b, c], &mut KeepAll, &mut out).unwrap();
        assert_eq!(n, 6);
        let got: Vec<(u8, u8)> = out.iter().map(|(k, p)| (k[0], p[0])).collect();
        assert_eq!(
            got,
            vec![
                (1, b'a'),
                (3, b'a'),
                (3, b'a'),
                (3, b'b'),
                (4, b'b'),
                (5, b'a')
            ]
        );

        let a = VecCursor::new(recs(&[1, 3, 3, 5], b'a'));
        let b = VecCursor::new(recs(&[3, 4], b'b'));
        let mut out: Vec<crate::run::OwnedRecord> = Vec::new();
        merge(vec![b, a], &mut KeepFirst, &mut out).unwrap();
        let got: Vec<(u8, u8)> = out.iter().map(|(k, p)| (k[0], p[0])).collect();
        assert_eq!(got, vec![(1, b'a'), (3, b'b'), (4, b'b'), (5, b'a')]);
    }
}
