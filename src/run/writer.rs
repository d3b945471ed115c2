//! The streaming run-file writer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use super::format::{
    BlockEncoder, BlockHeader, Header, IndexEntry, Trailer, FLAG_PAYLOAD, FLAG_UNIQUE,
    FORMAT_VERSION, MAX_BLOCK_RAW,
};
use super::{LastKey, RecordSink, Schema};
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
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            block_size: 128 * 1024,
            level: 3,
            durable: true,
        }
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
    out: Out,
    schema: Schema,
    opts: WriterOptions,
    enc: BlockEncoder,
    raw: Vec<u8>,
    compressed: Vec<u8>,
    zstd: zstd::bulk::Compressor<'static>,
    index: Vec<u8>,
    last_key: LastKey,
    records: u64,
    blocks: u64,
    offset: u64,
    hasher: Xxh3,
}

impl RunWriter {
    /// Starts a run file at `path` with default options.
    pub fn create(path: &Path, schema: Schema) -> Result<RunWriter> {
        RunWriter::with_options(path, schema, WriterOptions::default())
    }

    /// Starts a run file at `path`.
    pub fn with_options(path: &Path, schema: Schema, opts: WriterOptions) -> Result<RunWriter> {
        if schema.key_len == 0 || usize::from(schema.key_len) > super::format::MAX_KEY_LEN {
            return Err(Error::Usage(format!(
                "schema {}: key length {} out of range",
                schema.name, schema.key_len
            )));
        }
        let out = if opts.durable {
            Out::Atomic(AtomicFile::create(path)?)
        } else {
            Out::Plain(BufWriter::with_capacity(
                1 << 20,
                File::create(path).ctx("create", path)?,
            ))
        };
        let zstd = zstd::bulk::Compressor::new(opts.level).ctx("start zstd for", path)?;
        let mut w = RunWriter {
            path: path.to_path_buf(),
            out,
            schema,
            opts,
            enc: BlockEncoder::new(usize::from(schema.key_len), schema.payload),
            raw: Vec::new(),
            compressed: Vec::new(),
            zstd,
            index: Vec::new(),
            last_key: LastKey::default(),
            records: 0,
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
        w.emit(&header.encode())?;
        Ok(w)
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

    fn flush_block(&mut self) -> Result<()> {
        let count = self.enc.count();
        if count == 0 {
            return Ok(());
        }
        let first_key = self.enc.first_key().expect("non-empty block").to_vec();
        self.enc.finish_into(&mut self.raw);
        self.compressed.clear();
        self.compressed
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.zstd
            .compress_to_buffer(&self.raw[..], &mut self.compressed)
            .ctx("compress block of", &self.path)?;
        let bh = BlockHeader {
            compressed_len: self.compressed.len() as u32,
            raw_len: self.raw.len() as u32,
            count: count as u32,
        };
        let head = bh.encode(&self.compressed);
        let entry = IndexEntry {
            first_key,
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

    /// Writes the last block, the footer and the trailer, and publishes the file.
    pub fn finish(mut self) -> Result<RunSummary> {
        self.flush_block()?;
        let footer_offset = self.offset;
        let footer = std::mem::take(&mut self.index);
        self.emit(&footer)?;
        let trailer = Trailer {
            footer_offset,
            footer_len: footer.len() as u64,
            blocks: self.blocks,
            records: self.records,
            footer_checksum: xxhash_rust::xxh3::xxh3_64(&footer),
            file_checksum: self.hasher.digest(),
        };
        let t = trailer.encode();
        match &mut self.out {
            Out::Atomic(f) => f.write_all_bytes(&t)?,
            Out::Plain(f) => f.write_all(&t).ctx("write", &self.path)?,
        }
        let bytes = self.offset + t.len() as u64;
        let path = self.path.clone();
        match self.out {
            Out::Atomic(f) => f.commit()?,
            Out::Plain(f) => {
                f.into_inner()
                    .map_err(|e| Error::io("write", &path, e.into_error()))?;
            }
        }
        Ok(RunSummary {
            path,
            records: self.records,
            blocks: self.blocks,
            bytes,
            checksum: trailer.file_checksum,
        })
    }
}

impl RecordSink for RunWriter {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        RunWriter::push(self, key, payload)
    }
}
