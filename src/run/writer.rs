//! The streaming run-file writer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use super::block::BlockEncoder;
use super::format::{
    BlockHeader, Header, IndexEntry, Trailer, FLAG_PAYLOAD, FLAG_UNIQUE, FORMAT_VERSION,
    MAX_BLOCK_RAW,
};
use super::{key_u64, LastKey, RecordSink, Schema};
use crate::error::{Error, IoContext, KeyBytes, Result};
use crate::storage::AtomicFile;

/// Tuning for a [`RunWriter`].
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// Target uncompressed bytes per block (a block always holds at least one record).
    pub block_size: usize,
    /// zstd compression level.
    pub level: i32,
    /// Publish atomically with fsync (true), or write in place without syncing (sort spills).
    pub durable: bool,
    /// Compress, hash and write blocks on a thread of the writer's own, so the caller's thread
    /// only buffers and encodes records (about half the work each): for one big sequential pass
    /// such as the DRUM merge. Files are byte-identical either way.
    pub background: bool,
    /// Write a durable file with direct I/O ([`crate::direct`]), around the page cache: for big
    /// runs written once and read next much later (a merge's new seen set). Same bytes.
    pub direct: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            block_size: 128 * 1024,
            // Level -1: runs with payloads are mostly read once or twice (a cycle's links,
            // split, fetched and pages runs). On the peerbench crawl level 3 cost ~1.5x level
            // 1's compression CPU for runs a few percent smaller, and level -1 saves 1.2% of a
            // cycle's instructions (SHA-1 aside) against level 1 for links runs 8% and
            // fetch results 15% larger (-3: 1.5%, links 29% larger; docs/BENCHMARKS.md).
            level: -1,
            durable: true,
            background: false,
            direct: false,
        }
    }
}

impl WriterOptions {
    /// zstd level for runs without payloads, whose blocks are compressed column by column
    /// ([`super::columns`]): the columns that look random are stored, the others (zeros and the
    /// few significant bits of the gaps' top byte, for sorted fingerprints) need entropy coding,
    /// which zstd's negative levels leave out. On 10^9 sorted fingerprints: 4.46 bytes each
    /// (4.91 as one frame at level -1) at about the same cost (docs/BENCHMARKS.md, DRUM).
    pub const KEY_ONLY_LEVEL: i32 = 1;

    /// zstd's minimum match length for runs without payloads: shorter matches among the few
    /// values of a gap column cost search time and save nothing over its Huffman codes.
    pub const KEY_ONLY_MIN_MATCH: u32 = 7;

    /// The defaults for a schema: [`WriterOptions::KEY_ONLY_LEVEL`] for key-only runs.
    pub fn for_schema(schema: Schema) -> WriterOptions {
        let mut o = WriterOptions::default();
        if !schema.payload {
            o.level = WriterOptions::KEY_ONLY_LEVEL;
        }
        o
    }
}

/// What a finished writer produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// The published file.
    pub path: PathBuf,
    /// Records written.
    pub records: u64,
    /// Blocks written.
    pub blocks: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// xxh3-64 of the file before the trailer (the value stored in the trailer).
    pub checksum: u64,
}

enum Out {
    Atomic(AtomicFile),
    Plain(BufWriter<File>),
}

/// Writes records in non-decreasing key order into a run file.
///
/// The file becomes visible under its name only when [`RunWriter::finish`] returns; a writer that
/// is dropped (or a process that dies) leaves nothing under that name.
pub struct RunWriter {
    path: PathBuf,
    schema: Schema,
    opts: WriterOptions,
    /// The block being filled.
    enc: BlockEncoder,
    /// Where full blocks go: written here, or handed to the writer's thread.
    blocks_to: Blocks,
    last_key: LastKey,
    records: u64,
}

/// Turns full blocks into file bytes: everything after the encoder.
struct BlockSink {
    /// Key width of a key-only run, whose blocks are compressed column by column
    /// ([`super::columns`]); 0 for runs with payloads (one zstd frame per block).
    key_columns: usize,
    /// Scratch for the column groups' frames.
    scratch: Vec<u8>,
    path: PathBuf,
    out: Out,
    raw: Vec<u8>,
    compressed: Vec<u8>,
    zstd: zstd::bulk::Compressor<'static>,
    index: Vec<u8>,
    blocks: u64,
    offset: u64,
    hasher: Xxh3,
}

enum Blocks {
    Inline(Box<BlockSink>),
    Thread(BlockThread),
    /// After `finish` took the sink, or once the thread failed.
    Gone,
}

/// The writer's own thread: receives full encoders, writes them in order, hands them back
/// emptied for reuse (so at most a few blocks are ever in flight).
struct BlockThread {
    full: Option<std::sync::mpsc::SyncSender<RawBlock>>,
    empty: std::sync::mpsc::Receiver<RawBlock>,
    spare: usize,
    handle: std::thread::JoinHandle<Result<BlockSink>>,
}

/// A block encoded (by the writer's caller) and not yet compressed (by its thread): the two
/// halves of the work, so each thread takes about half.
#[derive(Default)]
struct RawBlock {
    raw: Vec<u8>,
    count: usize,
    first_key: Vec<u8>,
}

/// Raw blocks circulating between a writer and its thread: queued or being written (enough to
/// ride out the thread's waits on the disk).
const IN_FLIGHT: usize = 6;

impl RunWriter {
    /// Starts a run file at `path` with the schema's default options
    /// ([`WriterOptions::for_schema`]).
    pub fn create(path: &Path, schema: Schema) -> Result<RunWriter> {
        RunWriter::with_options(path, schema, WriterOptions::for_schema(schema))
    }

    /// Starts a run file at `path`.
    pub fn with_options(path: &Path, schema: Schema, opts: WriterOptions) -> Result<RunWriter> {
        if schema.key_len == 0 || usize::from(schema.key_len) > super::format::MAX_KEY_LEN {
            return Err(Error::Usage(format!(
                "schema {}: key length {} out of range",
                schema.name, schema.key_len
            )));
        }
        let out = if opts.durable && opts.direct {
            Out::Atomic(AtomicFile::create_direct(path)?)
        } else if opts.durable {
            Out::Atomic(AtomicFile::create(path)?)
        } else {
            Out::Plain(BufWriter::with_capacity(
                1 << 20,
                File::create(path).ctx("create", path)?,
            ))
        };
        let mut zstd = zstd::bulk::Compressor::new(opts.level).ctx("start zstd for", path)?;
        if !schema.payload {
            zstd.set_parameter(zstd::zstd_safe::CParameter::MinMatch(
                WriterOptions::KEY_ONLY_MIN_MATCH,
            ))
            .ctx("set up zstd for", path)?;
        }
        let mut sink = BlockSink {
            key_columns: if schema.payload {
                0
            } else {
                usize::from(schema.key_len)
            },
            scratch: Vec::new(),
            path: path.to_path_buf(),
            out,
            raw: Vec::new(),
            compressed: Vec::new(),
            zstd,
            index: Vec::new(),
            blocks: 0,
            offset: 0,
            hasher: Xxh3::new(),
        };
        let header = Header {
            version: FORMAT_VERSION,
            schema_id: schema.id,
            key_len: schema.key_len,
            flags: if schema.payload { FLAG_PAYLOAD } else { 0 }
                | if schema.unique { FLAG_UNIQUE } else { 0 },
            block_size: opts.block_size as u32,
            schema_name: schema.name.to_string(),
            sort_key: schema.sort_key.to_string(),
        };
        sink.emit(&header.encode())?;
        let new_encoder = || BlockEncoder::new(usize::from(schema.key_len), schema.payload);
        let blocks_to = if opts.background {
            let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<RawBlock>(IN_FLIGHT);
            let (empty_tx, empty_rx) = std::sync::mpsc::channel();
            let handle = std::thread::Builder::new()
                .name("run-writer".into())
                .spawn(move || {
                    for block in full_rx {
                        sink.write_raw(&block)?;
                        let _ = empty_tx.send(block);
                    }
                    Ok(sink)
                })
                .ctx("start a writer thread for", path)?;
            Blocks::Thread(BlockThread {
                full: Some(full_tx),
                empty: empty_rx,
                spare: IN_FLIGHT - 1,
                handle,
            })
        } else {
            Blocks::Inline(Box::new(sink))
        };
        Ok(RunWriter {
            path: path.to_path_buf(),
            schema,
            opts,
            enc: new_encoder(),
            blocks_to,
            last_key: LastKey::default(),
            records: 0,
        })
    }

    /// The schema being written.
    pub fn schema(&self) -> Schema {
        self.schema
    }

    /// Records accepted so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends a record. Keys must be non-decreasing (strictly increasing for unique schemas);
    /// otherwise the record is refused with [`Error::OutOfOrder`] and the writer stays usable.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        crate::interrupt::check()?;
        if key.len() != usize::from(self.schema.key_len) {
            return Err(Error::Usage(format!(
                "{}: key of {} bytes given to a {}-byte-key run ({})",
                self.path.display(),
                key.len(),
                self.schema.key_len,
                self.schema.name
            )));
        }
        if !self.schema.payload && !payload.is_empty() {
            return Err(Error::Usage(format!(
                "{}: payload given to key-only run ({})",
                self.path.display(),
                self.schema.name
            )));
        }
        if payload.len() > MAX_BLOCK_RAW / 2 {
            return Err(Error::Usage(format!(
                "{}: payload of {} bytes is too large",
                self.path.display(),
                payload.len()
            )));
        }
        if let Some(order) = self.last_key.cmp(key) {
            let bad = if self.schema.unique {
                order.is_le()
            } else {
                order.is_lt()
            };
            if bad {
                return Err(Error::OutOfOrder {
                    previous: KeyBytes(self.last_key.as_slice().to_vec()),
                    got: KeyBytes(key.to_vec()),
                });
            }
        }
        self.last_key.set(key);
        if self.enc.count() > 0
            && self.enc.raw_len() + key.len() + payload.len() + 10 > self.opts.block_size
        {
            self.flush_block()?;
        }
        self.enc.push(key, payload);
        self.records += 1;
        Ok(())
    }

    /// Appends a record whose key is a big-endian `u64` (fingerprint runs).
    pub fn push_u64(&mut self, key: u64, payload: &[u8]) -> Result<()> {
        self.push(&key.to_be_bytes(), payload)
    }

    /// Appends key-only records with 8-byte keys given as integers (fingerprint runs), a slice
    /// at a time: the same file, byte for byte, as pushing them one by one, for a fraction of
    /// the per-record work. The whole slice is checked before any of it is taken, so a slice out
    /// of order is refused with [`Error::OutOfOrder`] and the writer stays usable.
    pub fn push_u64s(&mut self, keys: &[u64]) -> Result<()> {
        crate::interrupt::check()?;
        if self.schema.key_len != 8 || self.schema.payload {
            return Err(Error::Usage(format!(
                "{}: push_u64s needs a key-only run of 8-byte keys, not {}",
                self.path.display(),
                self.schema.name
            )));
        }
        let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else {
            return Ok(());
        };
        let unique = self.schema.unique;
        let refused = |previous: u64, got: u64| Error::OutOfOrder {
            previous: KeyBytes(previous.to_be_bytes().to_vec()),
            got: KeyBytes(got.to_be_bytes().to_vec()),
        };
        if let Some(order) = self.last_key.cmp(&first.to_be_bytes()) {
            if order.is_lt() || (unique && order.is_eq()) {
                return Err(refused(key_u64(self.last_key.as_slice()), first));
            }
        }
        // Branch-free over the slice (it vectorizes); the position only when something is wrong.
        let bad_pair = |w: &[u64]| (w[1] < w[0]) | (unique & (w[1] == w[0]));
        if keys.windows(2).fold(false, |bad, w| bad | bad_pair(w)) {
            let i = keys.windows(2).position(bad_pair).expect("found above");
            return Err(refused(keys[i], keys[i + 1]));
        }
        // `push` flushes before a record when count > 0 and 8 * count + 18 > block_size: so a
        // block takes at most this many records.
        let cap = self.opts.block_size.saturating_sub(18) / 8 + 1;
        let mut rest = keys;
        while !rest.is_empty() {
            let count = self.enc.count();
            if count >= cap {
                self.flush_block()?;
                continue;
            }
            let take = (cap - count).min(rest.len());
            self.enc.push_u64s(&rest[..take]);
            rest = &rest[take..];
        }
        self.records += keys.len() as u64;
        self.last_key.set(&last.to_be_bytes());
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.enc.count() == 0 {
            return Ok(());
        }
        match &mut self.blocks_to {
            Blocks::Inline(sink) => sink.write_block(&mut self.enc),
            Blocks::Thread(t) => {
                let mut block = if t.spare > 0 {
                    t.spare -= 1;
                    RawBlock::default()
                } else {
                    match t.empty.recv() {
                        Ok(block) => block,
                        Err(_) => return Err(self.thread_failed()),
                    }
                };
                block.count = self.enc.count();
                block.first_key = self.enc.first_key().expect("non-empty block");
                self.enc.finish_into(&mut block.raw);
                let sent = t.full.as_ref().map(|tx| tx.send(block).is_ok());
                if sent != Some(true) {
                    return Err(self.thread_failed());
                }
                Ok(())
            }
            Blocks::Gone => Err(self.failed_before()),
        }
    }

    /// What a writer whose thread already failed says when asked to go on.
    fn failed_before(&self) -> Error {
        Error::Usage(format!(
            "{}: the writer failed earlier and cannot go on",
            self.path.display()
        ))
    }

    /// The error that stopped the writer's thread (it hung up early only on an error).
    fn thread_failed(&mut self) -> Error {
        match self.join_thread() {
            Err(e) => e,
            Ok(()) => Error::Usage(format!(
                "{}: the writer thread stopped early",
                self.path.display()
            )),
        }
    }

    /// Waits for the writer's thread to write everything sent and takes the sink back.
    fn join_thread(&mut self) -> Result<()> {
        if let Blocks::Thread(_) = self.blocks_to {
            let Blocks::Thread(mut t) = std::mem::replace(&mut self.blocks_to, Blocks::Gone) else {
                unreachable!()
            };
            t.full = None; // hang up: the thread drains what is queued and returns
            let sink = t.handle.join().map_err(|_| {
                Error::Usage(format!(
                    "{}: the writer thread panicked",
                    self.path.display()
                ))
            })??;
            self.blocks_to = Blocks::Inline(Box::new(sink));
        }
        Ok(())
    }

    /// Writes the last block, the footer and the trailer, and publishes the file.
    pub fn finish(mut self) -> Result<RunSummary> {
        self.flush_block()?;
        self.join_thread()?;
        let Blocks::Inline(mut sink) = std::mem::replace(&mut self.blocks_to, Blocks::Gone) else {
            return Err(self.failed_before());
        };
        let footer_offset = sink.offset;
        let footer = std::mem::take(&mut sink.index);
        sink.emit(&footer)?;
        let trailer = Trailer {
            footer_offset,
            footer_len: footer.len() as u64,
            blocks: sink.blocks,
            records: self.records,
            footer_checksum: xxhash_rust::xxh3::xxh3_64(&footer),
            file_checksum: sink.hasher.digest(),
        };
        let t = trailer.encode();
        match &mut sink.out {
            Out::Atomic(f) => f.write_all_bytes(&t)?,
            Out::Plain(f) => f.write_all(&t).ctx("write", &self.path)?,
        }
        let bytes = sink.offset + t.len() as u64;
        let path = self.path.clone();
        match sink.out {
            Out::Atomic(f) => f.commit()?,
            Out::Plain(f) => {
                f.into_inner()
                    .map_err(|e| Error::io("write", &path, e.into_error()))?;
            }
        }
        Ok(RunSummary {
            path,
            records: self.records,
            blocks: sink.blocks,
            bytes,
            checksum: trailer.file_checksum,
        })
    }
}

impl Drop for RunWriter {
    /// A writer dropped unfinished stops its thread (after the at most [`IN_FLIGHT`] blocks
    /// queued) before the temporary file goes away with the sink.
    fn drop(&mut self) {
        let _ = self.join_thread();
    }
}

impl BlockSink {
    /// Encodes, compresses and writes the encoder's block, and empties the encoder.
    fn write_block(&mut self, enc: &mut BlockEncoder) -> Result<()> {
        let mut block = RawBlock {
            raw: std::mem::take(&mut self.raw),
            count: enc.count(),
            first_key: enc.first_key().expect("non-empty block"),
        };
        enc.finish_into(&mut block.raw);
        let r = self.write_raw(&block);
        self.raw = block.raw;
        r
    }

    /// Compresses and writes an encoded block.
    fn write_raw(&mut self, block: &RawBlock) -> Result<()> {
        let (raw, count) = (&block.raw, block.count);
        if self.key_columns > 0 {
            super::columns::compress_key_block(
                &mut self.zstd,
                raw,
                count,
                self.key_columns,
                &mut self.compressed,
                &mut self.scratch,
            )
        } else {
            self.compressed.clear();
            self.compressed
                .reserve(zstd::zstd_safe::compress_bound(raw.len()));
            self.zstd
                .compress_to_buffer(&raw[..], &mut self.compressed)
                .map(|_| ())
        }
        .ctx("compress block of", &self.path)?;
        let bh = BlockHeader {
            compressed_len: self.compressed.len() as u32,
            raw_len: raw.len() as u32,
            count: count as u32,
        };
        let head = bh.encode(&self.compressed);
        let entry = IndexEntry {
            first_key: block.first_key.clone(),
            offset: self.offset,
            count: count as u32,
            len: (head.len() + self.compressed.len()) as u32,
        };
        entry.encode_into(&mut self.index);
        self.emit(&head)?;
        let body = std::mem::take(&mut self.compressed);
        let r = self.emit(&body);
        self.compressed = body;
        r?;
        self.blocks += 1;
        Ok(())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.hasher.update(bytes);
        self.offset += bytes.len() as u64;
        match &mut self.out {
            Out::Atomic(f) => f.write_all_bytes(bytes),
            Out::Plain(f) => f.write_all(bytes).ctx("write", &self.path),
        }
    }
}

impl RecordSink for RunWriter {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        RunWriter::push(self, key, payload)
    }
}
