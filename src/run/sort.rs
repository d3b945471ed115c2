//! External sort with a memory budget in bytes.
//!
//! Records are buffered until the buffer would pass the budget, then sorted and spilled in a
//! private temporary directory (no fsync: spills are scratch): raw records for the first
//! [`RAW_SPILL_BYTES`] of a sort ([`super::spill`]: read back once, soon, from the page cache),
//! run files at a fast zstd level beyond, where the spills' size is the disk's work. At
//! [`Sorter::finish`] the spills and the last in-memory buffer are merged k-way into the caller's
//! sink through a [`Reducer`]; when there are more spills than [`Sorter::fanout`], groups of them
//! are first merged into larger spills, so open files stay bounded however large the input.
//!
//! The sort is stable: records with equal keys come out in the order they were pushed (buffers
//! are sorted with the arena offset as the last tie-breaker, spills are merged in creation order).
//!
//! Two buffer layouts: 8-byte keys without payloads (fingerprint sets, the common case) are kept
//! as a plain `Vec<u64>` at 8 bytes a record; anything else is kept in an arena (key, varint
//! length, payload) with a 24-byte index entry per record: the first 16 key bytes as two integers
//! and the record's offset, so keys of up to 16 bytes (links are host64 ++ fp64) sort without
//! touching the arena, whose reads in sorted order are cache misses. Both are allocated once at
//! the budget's size; pages never touched are never resident, so a small sort of a large budget
//! costs little.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::format::{get_varint, put_varint};
use super::spill::{RawSpillReader, RawSpillWriter, RAW_SPILL_BYTES};
use super::{
    merge, Cursor, KeepAll, RecordSink, Reducer, RunReader, RunWriter, Schema, WriterOptions,
};
use crate::error::{Error, IoContext, Result};

static SORTER_SEQ: AtomicU64 = AtomicU64::new(0);

/// Counters of one sort.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SortStats {
    /// Records pushed.
    pub records: u64,
    /// Spill files written (including intermediate merges).
    pub spills: u64,
    /// Bytes written to spill files.
    pub spill_bytes: u64,
    /// Intermediate merge passes (0 when all spills fit in one merge).
    pub merge_passes: u64,
}

enum Buffer {
    /// 8-byte keys, no payload.
    Keys(Vec<u64>),
    /// Arena of `key, varint(len), payload`; index of (key bytes 0..8 and 8..16 as BE u64s,
    /// zero-padded, arena offset).
    General {
        arena: Vec<u8>,
        index: Vec<(u64, u64, usize)>,
        arena_cap: usize,
        index_cap: usize,
    },
}

/// An external sorter: push records in any order, get them back sorted.
pub struct Sorter {
    schema: Schema,
    key_len: usize,
    buf: Buffer,
    /// The spill directory, made at the first spill: a sort that fits its budget touches no
    /// directory (a cycle with little to do ran hundreds of mkdir/rmdir pairs for nothing).
    dir: PathBuf,
    dir_made: bool,
    /// Removes the spill directory if a signal's stop is cut short ([`crate::interrupt`]).
    stop: Option<crate::interrupt::OnStop>,
    /// The spills in creation order, each raw or a run file.
    spills: Vec<Spill>,
    /// Bytes of raw spills written so far, and the most there may be ([`RAW_SPILL_BYTES`]).
    raw_bytes: u64,
    raw_limit: u64,
    stats: SortStats,
    fanout: usize,
}

impl Sorter {
    /// A sorter for `schema`'s records using at most about `budget` bytes of buffer, spilling into a
    /// private temporary directory under `tmp_parent` (made at the first spill, removed when the
    /// sorter is dropped).
    pub fn new(schema: Schema, budget: usize, tmp_parent: &Path) -> Result<Sorter> {
        let key_len = usize::from(schema.key_len);
        let budget = budget.max(64);
        let buf = if key_len == 8 && !schema.payload {
            Buffer::Keys(Vec::with_capacity(budget / 8))
        } else {
            let index_cap = (budget / 4 / INDEX_ENTRY).max(1);
            let arena_cap = budget.saturating_sub(index_cap * INDEX_ENTRY).max(1);
            Buffer::General {
                arena: Vec::with_capacity(arena_cap),
                index: Vec::with_capacity(index_cap),
                arena_cap,
                index_cap,
            }
        };
        let n = SORTER_SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = tmp_parent.join(format!(
            ".sort.tmp.{}.{n}",
            crate::storage::temp_writer_tag()
        ));
        Ok(Sorter {
            schema,
            key_len,
            buf,
            dir,
            dir_made: false,
            stop: None,
            spills: Vec::new(),
            raw_bytes: 0,
            raw_limit: RAW_SPILL_BYTES,
            stats: SortStats::default(),
            fanout: 64,
        })
    }

    /// Records pushed so far.
    pub fn len(&self) -> u64 {
        self.stats.records
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.stats.records == 0
    }

    /// Bytes of records buffered in memory now (at most the budget, unless one record alone
    /// is larger): what `dragnet repartition`'s tests watch.
    pub fn buffered_bytes(&self) -> usize {
        match &self.buf {
            Buffer::Keys(v) => v.len() * 8,
            Buffer::General { arena, index, .. } => arena.len() + index.len() * INDEX_ENTRY,
        }
    }

    /// The most spill files merged at once (default 64; at least 2).
    pub fn fanout(mut self, fanout: usize) -> Sorter {
        self.fanout = fanout.max(2);
        self
    }

    /// Spill raw records until `bytes` of them are written, run files after (default
    /// [`RAW_SPILL_BYTES`]; 0: every spill a run file).
    pub fn raw_spill_limit(mut self, bytes: u64) -> Sorter {
        self.raw_limit = bytes;
        self
    }

    /// Adds a record.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        crate::interrupt::check()?;
        if key.len() != self.key_len {
            return Err(Error::Usage(format!(
                "sort: key of {} bytes for {}-byte keys",
                key.len(),
                self.key_len
            )));
        }
        if !self.schema.payload && !payload.is_empty() {
            return Err(Error::Usage(
                "sort: payload given for a key-only schema".into(),
            ));
        }
        if self.is_full(payload.len()) {
            self.spill()?;
        }
        match &mut self.buf {
            Buffer::Keys(v) => v.push(u64::from_be_bytes(key.try_into().expect("8-byte key"))),
            Buffer::General { arena, index, .. } => {
                index.push((
                    prefix(key),
                    prefix(key.get(8..).unwrap_or(&[])),
                    arena.len(),
                ));
                arena.extend_from_slice(key);
                put_varint(arena, payload.len() as u64);
                arena.extend_from_slice(payload);
            }
        }
        self.stats.records += 1;
        Ok(())
    }

    fn is_full(&self, payload_len: usize) -> bool {
        match &self.buf {
            Buffer::Keys(v) => v.len() == v.capacity(),
            Buffer::General {
                arena,
                index,
                arena_cap,
                index_cap,
            } => {
                !index.is_empty()
                    && (index.len() >= *index_cap
                        || arena.len() + self.key_len + 10 + payload_len > *arena_cap)
            }
        }
    }

    fn sort_buffer(&mut self) {
        let k = self.key_len;
        match &mut self.buf {
            Buffer::Keys(v) => v.sort_unstable(),
            Buffer::General { arena, index, .. } => {
                let arena = &*arena;
                if k <= 16 {
                    // The prefixes are the whole key; offsets are unique, so the order is total
                    // and the unstable sort stable.
                    index.sort_unstable();
                } else {
                    index.sort_unstable_by(|a, b| {
                        (a.0, a.1)
                            .cmp(&(b.0, b.1))
                            .then_with(|| arena[a.2 + 16..a.2 + k].cmp(&arena[b.2 + 16..b.2 + k]))
                            .then(a.2.cmp(&b.2))
                    });
                }
            }
        }
    }

    fn spill_schema(&self) -> Schema {
        Schema {
            unique: false,
            ..self.schema
        }
    }

    fn spill_opts(&self) -> WriterOptions {
        WriterOptions {
            level: if self.schema.payload {
                1
            } else {
                WriterOptions::KEY_ONLY_LEVEL
            },
            durable: false,
            ..WriterOptions::default()
        }
    }

    fn new_spill_path(&mut self) -> Result<PathBuf> {
        if !self.dir_made {
            self.stop = Some(crate::interrupt::remove_on_stop(&self.dir));
            fs::create_dir_all(&self.dir).ctx("create directory", &self.dir)?;
            self.dir_made = true;
        }
        let p = self.dir.join(format!("spill-{:06}.run", self.stats.spills));
        self.stats.spills += 1;
        Ok(p)
    }

    /// A new spill file, raw while the sort's raw spills are under their limit.
    fn new_spill(&mut self) -> Result<SpillWriter> {
        let path = self.new_spill_path()?;
        Ok(if self.raw_bytes < self.raw_limit {
            SpillWriter::Raw(RawSpillWriter::create(&path, self.schema.payload)?, path)
        } else {
            let w = RunWriter::with_options(&path, self.spill_schema(), self.spill_opts())?;
            SpillWriter::Run(Box::new(w), path)
        })
    }

    /// Closes a spill written by [`Sorter::new_spill`] and lists it.
    fn end_spill(&mut self, w: SpillWriter) -> Result<()> {
        let spill = match w {
            SpillWriter::Raw(w, path) => {
                let n = w.finish()?;
                self.raw_bytes += n;
                self.stats.spill_bytes += n;
                Spill { path, raw: true }
            }
            SpillWriter::Run(w, path) => {
                self.stats.spill_bytes += w.finish()?.bytes;
                Spill { path, raw: false }
            }
        };
        self.spills.push(spill);
        Ok(())
    }

    /// A spill to read back.
    fn open_spill(&self, s: &Spill) -> Result<Box<dyn Cursor>> {
        Ok(if s.raw {
            Box::new(RawSpillReader::open(
                &s.path,
                self.key_len,
                self.schema.payload,
            )?)
        } else {
            Box::new(RunReader::open(&s.path)?)
        })
    }

    fn spill(&mut self) -> Result<()> {
        self.sort_buffer();
        let mut w = self.new_spill()?;
        let mut mem = MemCursor::new(&self.buf, self.key_len);
        while mem.advance()? {
            w.push(mem.key(), mem.payload())?;
        }
        self.end_spill(w)?;
        match &mut self.buf {
            Buffer::Keys(v) => v.clear(),
            Buffer::General { arena, index, .. } => {
                arena.clear();
                index.clear();
            }
        }
        Ok(())
    }

    /// Sorts everything pushed and feeds it through `reducer` into `out`.
    pub fn finish(
        mut self,
        reducer: &mut dyn Reducer,
        out: &mut dyn RecordSink,
    ) -> Result<SortStats> {
        // Merge spills in consecutive groups until one final merge can take them all (plus the
        // memory buffer); consecutive groups keep the merge stable.
        while self.spills.len() + 1 > self.fanout {
            self.stats.merge_passes += 1;
            let old = std::mem::take(&mut self.spills);
            for group in old.chunks(self.fanout) {
                let inputs = group
                    .iter()
                    .map(|s| self.open_spill(s))
                    .collect::<Result<Vec<_>>>()?;
                let mut w = self.new_spill()?;
                merge(inputs, &mut KeepAll, &mut w)?;
                self.end_spill(w)?;
                for s in group {
                    fs::remove_file(&s.path).ctx("remove", &s.path)?;
                }
            }
        }
        self.sort_buffer();
        let mut inputs: Vec<Box<dyn Cursor + '_>> = Vec::with_capacity(self.spills.len() + 1);
        for s in &self.spills {
            inputs.push(self.open_spill(s)?);
        }
        inputs.push(Box::new(MemCursor::new(&self.buf, self.key_len)));
        merge(inputs, reducer, out)?;
        Ok(self.stats)
    }
}

impl Drop for Sorter {
    fn drop(&mut self) {
        if self.dir_made {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// A spill file: raw records or a run file.
struct Spill {
    path: PathBuf,
    raw: bool,
}

/// A spill being written.
enum SpillWriter {
    Raw(RawSpillWriter, PathBuf),
    Run(Box<RunWriter>, PathBuf),
}

impl RecordSink for SpillWriter {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        match self {
            SpillWriter::Raw(w, _) => w.push(key, payload),
            SpillWriter::Run(w, _) => w.push(key, payload),
        }
    }
}

/// How many records ahead [`MemCursor`] prefetches.
const PREFETCH_AHEAD: usize = 8;

/// A hint to the CPU that the cache line at `p` will be read soon (nothing on other targets).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults and reads nothing the program sees.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Bytes of one index entry of [`Buffer::General`].
const INDEX_ENTRY: usize = std::mem::size_of::<(u64, u64, usize)>();

/// The first 8 bytes of `key` (zero-padded) as a big-endian integer.
fn prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// A cursor over a sorted in-memory buffer.
struct MemCursor<'a> {
    buf: &'a Buffer,
    key_len: usize,
    next: usize,
    key: [u8; 8],
    payload: (usize, usize),
}

impl<'a> MemCursor<'a> {
    fn new(buf: &'a Buffer, key_len: usize) -> MemCursor<'a> {
        MemCursor {
            buf,
            key_len,
            next: 0,
            key: [0; 8],
            payload: (0, 0),
        }
    }
}

impl Cursor for MemCursor<'_> {
    fn advance(&mut self) -> Result<bool> {
        match self.buf {
            Buffer::Keys(v) => {
                let Some(&k) = v.get(self.next) else {
                    return Ok(false);
                };
                self.key = k.to_be_bytes();
            }
            Buffer::General { arena, index, .. } => {
                let Some(&(_, _, off)) = index.get(self.next) else {
                    return Ok(false);
                };
                // Records come out of the arena in key order, which is random order in memory:
                // ask for the one a few steps ahead now, so it is in cache when its turn comes.
                if let Some(&(_, _, ahead)) = index.get(self.next + PREFETCH_AHEAD) {
                    prefetch(arena[ahead..].as_ptr());
                }
                let at = off + self.key_len;
                let (len, used) = get_varint(&arena[at..]).expect("arena varint written by push");
                self.payload = (at + used, at + used + len as usize);
            }
        }
        self.next += 1;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        match self.buf {
            Buffer::Keys(_) => &self.key,
            Buffer::General { arena, index, .. } => {
                let off = index[self.next - 1].2;
                &arena[off..off + self.key_len]
            }
        }
    }

    fn payload(&self) -> &[u8] {
        match self.buf {
            Buffer::Keys(_) => &[],
            Buffer::General { arena, .. } => &arena[self.payload.0..self.payload.1],
        }
    }
}
