//! The meta blob of one slice: what a commit publishes through the pager, and its parsing.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! blob   = "DNCBTQ01" | R u64 | T u64 | slice index u64
//!          | cur_len u64 | state (cur_len bytes)
//!          | prev_len u64 | state (prev_len bytes; prev_len = u64::MAX: none)
//! state  = epoch u64 | tag u64 | len u64 | items N u64 | pending P u64
//!          | CBT[1 .. 2N] as u32 (2N - 1 values: the winners of the internal nodes, then the
//!            slot of every leaf in position order)
//!          | per leaf, in position order: count u32 | best entry | worst entry (24 bytes each)
//!          | P pending entries
//! ```
//!
//! `prev` is the state of the commit before (only with T > 1; see the module docs of `cbt`,
//! "Crash safety"). The pager checksums the whole blob; [`State::decode`] checks its structure and
//! `Slice::load` checks it against the file.

use super::super::Entry;

/// Magic at the head of a slice's meta blob.
const MAGIC: &[u8; 8] = b"DNCBTQ01";

/// A parsed state section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct State {
    /// Queue-level commit counter.
    pub epoch: u64,
    /// The commit tag.
    pub tag: u64,
    /// Entries in the slice (tree plus pending).
    pub len: u64,
    /// The tournament tree, CBT[0] unused: `2N` values (empty when N = 0).
    pub cbt: Vec<u32>,
    /// Per leaf in position order (positions N .. 2N-1): count, best, worst.
    pub leaves: Vec<(u32, Entry, Entry)>,
    /// The pending entries (fewer than R).
    pub pending: Vec<Entry>,
}

/// What heads a blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    /// Entries per block.
    pub block: u64,
    /// Slices of the queue.
    pub slices: u64,
    /// Which slice this blob belongs to.
    pub index: u64,
}

/// A parse failure: byte offset in the blob and what was wrong.
pub(super) type Bad = (usize, String);

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Bad> {
        if self.b.len() - self.at < n {
            return Err((self.at, format!("truncated {what}")));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Bad> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8"),
        ))
    }

    fn u32(&mut self, what: &str) -> Result<u32, Bad> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }

    fn entry(&mut self, what: &str) -> Result<Entry, Bad> {
        Ok(Entry::read_from(self.take(Entry::SIZE, what)?))
    }

    /// A count of `size`-byte things that must fit in what is left.
    fn count(&mut self, size: usize, what: &str) -> Result<usize, Bad> {
        let at = self.at;
        let n = self.u64(what)?;
        let left = (self.b.len() - self.at) as u64;
        if n.checked_mul(size as u64).is_none_or(|b| b > left) {
            return Err((at, format!("{what} {n} does not fit in the blob")));
        }
        Ok(n as usize)
    }
}

fn put_entry(out: &mut Vec<u8>, e: &Entry) {
    let mut b = [0u8; Entry::SIZE];
    e.write_to(&mut b);
    out.extend_from_slice(&b);
}

impl State {
    /// Appends the state section to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        for v in [
            self.epoch,
            self.tag,
            self.len,
            self.leaves.len() as u64,
            self.pending.len() as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for &c in self.cbt.iter().skip(1) {
            out.extend_from_slice(&c.to_le_bytes());
        }
        for (count, best, worst) in &self.leaves {
            out.extend_from_slice(&count.to_le_bytes());
            put_entry(out, best);
            put_entry(out, worst);
        }
        for e in &self.pending {
            put_entry(out, e);
        }
    }

    /// The state section on its own.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Parses a state section (structure only; `base` is its offset in the blob, for errors).
    pub fn decode(b: &[u8], base: usize) -> Result<State, Bad> {
        let mut r = Reader { b, at: 0 };
        let shift = |(at, why): Bad| (at + base, why);
        let epoch = r.u64("epoch").map_err(shift)?;
        let tag = r.u64("tag").map_err(shift)?;
        let len = r.u64("length").map_err(shift)?;
        // Each item takes 60 bytes (two tree words, a count, two entries), less 4 overall.
        let n = r.count(56, "item count").map_err(shift)?;
        let p = r.count(0, "pending count").map_err(shift)?;
        let mut cbt = Vec::with_capacity(2 * n);
        if n > 0 {
            cbt.push(0);
            for _ in 1..2 * n {
                cbt.push(r.u32("tree").map_err(shift)?);
            }
        }
        let mut leaves = Vec::with_capacity(n);
        for _ in 0..n {
            let c = r.u32("block count").map_err(shift)?;
            let best = r.entry("best entry").map_err(shift)?;
            let worst = r.entry("worst entry").map_err(shift)?;
            leaves.push((c, best, worst));
        }
        let left = b.len() - r.at;
        if p.checked_mul(Entry::SIZE) != Some(left) {
            return Err((
                base + r.at,
                format!("{p} pending entries but {left} bytes left in the state"),
            ));
        }
        let mut pending = Vec::with_capacity(p);
        for _ in 0..p {
            pending.push(r.entry("pending entry").map_err(shift)?);
        }
        Ok(State {
            epoch,
            tag,
            len,
            cbt,
            leaves,
            pending,
        })
    }
}

/// A whole blob: header, current state and (with T > 1) the previous commit's state.
pub(super) fn encode_blob(h: Header, cur: &[u8], prev: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(56 + cur.len() + prev.map_or(0, <[u8]>::len));
    out.extend_from_slice(MAGIC);
    for v in [h.block, h.slices, h.index, cur.len() as u64] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(cur);
    match prev {
        Some(p) => {
            out.extend_from_slice(&(p.len() as u64).to_le_bytes());
            out.extend_from_slice(p);
        }
        None => out.extend_from_slice(&u64::MAX.to_le_bytes()),
    }
    out
}

/// Parses the header of a blob.
pub(super) fn decode_header(b: &[u8]) -> Result<Header, Bad> {
    let mut r = Reader { b, at: 0 };
    if r.take(8, "magic")? != MAGIC {
        return Err((0, "not the meta of a CBT queue slice".into()));
    }
    Ok(Header {
        block: r.u64("block size")?,
        slices: r.u64("slice count")?,
        index: r.u64("slice index")?,
    })
}

/// Parses a whole blob: its current state and its previous one, if any.
pub(super) fn decode_blob(b: &[u8]) -> Result<(State, Option<State>), Bad> {
    decode_header(b)?;
    let mut r = Reader { b, at: 32 };
    let cur_len = r.count(1, "state length")?;
    let cur_at = r.at;
    let cur = State::decode(r.take(cur_len, "state")?, cur_at)?;
    let at = r.at;
    let prev_len = r.u64("previous state length")?;
    let prev = if prev_len == u64::MAX {
        None
    } else {
        let left = (b.len() - r.at) as u64;
        if prev_len > left {
            return Err((at, "previous state does not fit in the blob".into()));
        }
        let p_at = r.at;
        Some(State::decode(
            r.take(prev_len as usize, "previous state")?,
            p_at,
        )?)
    };
    if r.at != b.len() {
        return Err((r.at, "trailing bytes after the states".into()));
    }
    Ok((cur, prev))
}
