//! The streaming run-file reader.
//!
//! Memory is one block (compressed and decoded) plus a read buffer, whatever the file's size.
//! Every block's checksum is verified before it is decompressed, keys are checked to be in order
//! across and within blocks, and when a forward scan reaches the footer the whole-file checksum and
//! the record and block counts are compared with the trailer. So a damaged file yields an
//! [`Error::Corrupt`] naming the file and offset, never wrong records.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use super::block::{BlockLayout, DecodedBlock};
use super::format::{
    footer_entry_len, BlockHeader, Header, IndexEntry, Trailer, BLOCK_HEADER_LEN, HEADER_LEN,
    MAX_BLOCK_RAW, TRAILER_LEN,
};
use super::{Cursor, LastKey, Schema};
use crate::error::{Error, IoContext, Result};

/// Where a reader's bytes come from: through the page cache, or around it.
enum Source {
    Buffered(BufReader<File>),
    Direct(crate::direct::DirectReader),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Buffered(r) => r.read(buf),
            Source::Direct(r) => r.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            Source::Buffered(r) => r.seek(to),
            Source::Direct(r) => r.seek(to),
        }
    }
}

/// Reads a run file forwards, one block at a time.
pub struct RunReader {
    path: PathBuf,
    file: Source,
    header: Header,
    trailer: Trailer,
    key_len: usize,
    /// Offset of the next block header.
    pos: u64,
    /// Offset of the header of the block in `block`.
    block_at: u64,
    block: DecodedBlock,
    /// Index of the current record in `block`; `None` before the first record of the block.
    cur: Option<usize>,
    compressed: Vec<u8>,
    raw: Vec<u8>,
    zstd: zstd::bulk::Decompressor<'static>,
    /// Whole-file hash of everything read so far; `None` once a seek skipped bytes.
    hasher: Option<Xxh3>,
    records_read: u64,
    blocks_read: u64,
    prev_key: LastKey,
    index: Option<Vec<IndexEntry>>,
    finished: bool,
}

impl RunReader {
    /// Opens any run file.
    pub fn open(path: &Path) -> Result<RunReader> {
        let file = File::open(path).ctx("open", path)?;
        let len = file.metadata().ctx("stat", path)?.len();
        let mut file = BufReader::with_capacity(256 * 1024, file);
        let corrupt = |off: u64, why: String| Error::corrupt(path, off, why);
        if len < (HEADER_LEN + TRAILER_LEN) as u64 {
            return Err(corrupt(
                len,
                format!("file of {len} bytes is too short to be a run file (truncated?)"),
            ));
        }
        let mut hb = [0u8; HEADER_LEN];
        file.read_exact(&mut hb).ctx("read", path)?;
        let header = Header::decode(&hb).map_err(|e| e.in_file(path, 0))?;
        let tpos = len - TRAILER_LEN as u64;
        file.seek(SeekFrom::Start(tpos)).ctx("seek", path)?;
        let mut tb = [0u8; TRAILER_LEN];
        file.read_exact(&mut tb).ctx("read", path)?;
        let trailer = Trailer::decode(&tb).map_err(|e| e.in_file(path, tpos))?;
        let key_len = usize::from(header.key_len);
        let expect_footer = trailer.blocks.checked_mul(footer_entry_len(key_len) as u64);
        if trailer.footer_offset < HEADER_LEN as u64
            || Some(trailer.footer_len) != expect_footer
            || trailer.footer_offset.checked_add(trailer.footer_len) != Some(tpos)
        {
            return Err(corrupt(
                tpos,
                "trailer does not match the file's length".into(),
            ));
        }
        file.seek(SeekFrom::Start(HEADER_LEN as u64))
            .ctx("seek", path)?;
        let mut hasher = Xxh3::new();
        hasher.update(&hb);
        Ok(RunReader {
            path: path.to_path_buf(),
            file: Source::Buffered(file),
            key_len,
            pos: HEADER_LEN as u64,
            block_at: HEADER_LEN as u64,
            block: DecodedBlock::default(),
            cur: None,
            compressed: Vec::new(),
            raw: Vec::new(),
            zstd: zstd::bulk::Decompressor::new().ctx("start zstd for", path)?,
            hasher: Some(hasher),
            records_read: 0,
            blocks_read: 0,
            prev_key: LastKey::default(),
            index: None,
            finished: false,
            header,
            trailer,
        })
    }

    /// Opens any run file for one pass through it with direct I/O ([`crate::direct`]), where
    /// the file system allows it: for big files read once, whose bytes would only evict others
    /// from the page cache. Reads the same records with the same checks as [`RunReader::open`].
    pub fn open_direct(path: &Path) -> Result<RunReader> {
        let mut r = RunReader::open(path)?;
        if let Some(mut d) = crate::direct::DirectReader::open(path).ctx("open", path)? {
            d.seek(SeekFrom::Start(r.pos)).ctx("seek", path)?;
            r.file = Source::Direct(d);
        }
        Ok(r)
    }

    /// Opens a run file that must hold `schema`'s records.
    pub fn open_expect(path: &Path, schema: Schema) -> Result<RunReader> {
        RunReader::open(path)?.expecting(schema)
    }

    /// The reader, if its file holds `schema`'s records; else an error naming the file and
    /// both schemas.
    pub fn expecting(self, schema: Schema) -> Result<RunReader> {
        let h = &self.header;
        if h.schema_id != schema.id
            || h.key_len != schema.key_len
            || h.has_payload() != schema.payload
        {
            return Err(Error::Schema {
                path: self.path.clone(),
                what: format!(
                    "holds '{}' records (schema {}, {}-byte keys), expected '{}' (schema {}, {}-byte keys)",
                    h.schema_name, h.schema_id, h.key_len, schema.name, schema.id, schema.key_len
                ),
            });
        }
        Ok(self)
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Records in the file, from the trailer.
    pub fn len(&self) -> u64 {
        self.trailer.records
    }

    /// Whether the file holds no records.
    pub fn is_empty(&self) -> bool {
        self.trailer.records == 0
    }

    /// Blocks in the file, from the trailer.
    pub fn blocks(&self) -> u64 {
        self.trailer.blocks
    }

    /// The whole-file checksum stored in the trailer (what `.done` markers record).
    pub fn checksum(&self) -> u64 {
        self.trailer.file_checksum
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Offset of the block that holds the current record (its block header): where errors
    /// about the record (a payload that does not decode) are in the file.
    pub fn block_offset(&self) -> u64 {
        self.block_at
    }

    /// The next record as `(key, payload)`, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.advance()? {
            Ok(Some((self.key(), self.payload())))
        } else {
            Ok(None)
        }
    }

    /// The next records as 8-byte keys read as big-endian integers, a block (or the rest of the
    /// current one) at a time; `None` at the end. The records returned count as read, so
    /// [`Cursor::advance`] continues after them. For key-only merges of fingerprint runs, where
    /// record-at-a-time cursors cost more than the work (`merge::check_update`).
    pub fn next_u64s(&mut self) -> Result<Option<&[u64]>> {
        if self.key_len != 8 {
            return Err(Error::Usage(format!(
                "{}: next_u64s on a run of {}-byte keys",
                self.path.display(),
                self.key_len
            )));
        }
        let mut from = self.cur.map_or(0, |i| i + 1);
        if from >= self.block.count {
            if !self.load_block()? {
                self.block.count = 0;
                self.cur = None;
                return Ok(None);
            }
            from = 0;
        }
        let n = self.block.count;
        self.cur = Some(n - 1);
        self.records_read += (n - from) as u64;
        Ok(Some(&self.block.majors[from..n]))
    }

    /// Like [`RunReader::next_u64s`], but hands the block's integers over by value, taking
    /// `spare` as the buffer for the next block (no copy either way).
    fn take_u64s(&mut self, spare: Vec<u64>) -> Result<Option<Vec<u64>>> {
        let Some(n) = self.next_u64s()?.map(<[u64]>::len) else {
            return Ok(None);
        };
        let mut block = std::mem::replace(&mut self.block.majors, spare);
        block.truncate(self.block.count);
        if n < block.len() {
            block.drain(..block.len() - n); // the rest of a block begun with `advance`
        }
        // The block's integers are gone: the next call loads the next block.
        self.block.count = 0;
        self.cur = None;
        Ok(Some(block))
    }

    /// Positions the reader so that the next record returned is the first with a key `>= key`.
    ///
    /// Uses the footer index (loaded and verified on first use) to jump to the first block that
    /// may hold the key, then scans within it. The whole-file checksum is not checked after a
    /// seek; block checksums still are.
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        if key.len() != self.key_len {
            return Err(Error::Usage(format!(
                "{}: seek with a {}-byte key in a {}-byte-key run",
                self.path.display(),
                key.len(),
                self.key_len
            )));
        }
        self.load_index()?;
        let index = self.index.as_ref().expect("loaded");
        // The last block whose first key is < key: equal keys may begin in the block before one
        // that starts with `key`.
        let b = index
            .partition_point(|e| e.first_key.as_slice() < key)
            .saturating_sub(1);
        self.hasher = None;
        self.finished = false;
        self.cur = None;
        self.block.count = 0;
        self.prev_key.clear();
        match index.get(b) {
            Some(e) => {
                self.pos = e.offset;
                self.blocks_read = b as u64;
                self.records_read = index[..b].iter().map(|e| u64::from(e.count)).sum();
            }
            None => {
                self.pos = self.trailer.footer_offset;
                self.blocks_read = 0;
                self.records_read = 0;
            }
        }
        self.file
            .seek(SeekFrom::Start(self.pos))
            .ctx("seek", &self.path)?;
        // Step to the first record >= key, then step back one so `advance` returns it.
        loop {
            if !self.advance()? {
                return Ok(());
            }
            if self.key() >= key {
                let i = self.cur.expect("positioned");
                self.cur = i.checked_sub(1);
                self.records_read -= 1;
                return Ok(());
            }
        }
    }

    /// Reads and verifies the footer index.
    pub fn index(&mut self) -> Result<&[IndexEntry]> {
        self.load_index()?;
        Ok(self.index.as_deref().expect("loaded"))
    }

    fn load_index(&mut self) -> Result<()> {
        if self.index.is_some() {
            return Ok(());
        }
        let mut f = File::open(&self.path).ctx("open", &self.path)?;
        f.seek(SeekFrom::Start(self.trailer.footer_offset))
            .ctx("seek", &self.path)?;
        let mut footer = vec![0u8; self.trailer.footer_len as usize];
        f.read_exact(&mut footer).ctx("read", &self.path)?;
        if xxh3_64(&footer) != self.trailer.footer_checksum {
            return Err(Error::corrupt(
                &self.path,
                self.trailer.footer_offset,
                "footer index checksum mismatch",
            ));
        }
        let n = footer_entry_len(self.key_len);
        let entries: Vec<IndexEntry> = footer
            .chunks_exact(n)
            .map(|c| IndexEntry::decode(c, self.key_len))
            .collect();
        let mut expect = HEADER_LEN as u64;
        for (i, e) in entries.iter().enumerate() {
            if e.offset != expect || e.count == 0 {
                return Err(Error::corrupt(
                    &self.path,
                    self.trailer.footer_offset + (i * n) as u64,
                    "footer index entry does not match the block layout",
                ));
            }
            expect += u64::from(e.len);
        }
        if expect != self.trailer.footer_offset {
            return Err(Error::corrupt(
                &self.path,
                self.trailer.footer_offset,
                "footer index does not cover the data",
            ));
        }
        self.index = Some(entries);
        Ok(())
    }

    /// Reads the next block; `Ok(false)` when the footer is reached (after the end checks).
    fn load_block(&mut self) -> Result<bool> {
        let end = self.trailer.footer_offset;
        if self.pos >= end {
            self.finish_checks()?;
            return Ok(false);
        }
        let at = self.pos;
        if end - at < BLOCK_HEADER_LEN as u64 {
            return Err(Error::corrupt(
                &self.path,
                at,
                "block header runs into the footer",
            ));
        }
        let mut hb = [0u8; BLOCK_HEADER_LEN];
        self.file.read_exact(&mut hb).ctx("read", &self.path)?;
        let bh = BlockHeader::decode(&hb);
        let body_at = at + BLOCK_HEADER_LEN as u64;
        if u64::from(bh.compressed_len) > end - body_at {
            return Err(Error::corrupt(
                &self.path,
                at,
                "block length runs past the data region",
            ));
        }
        // Not cleared first: only bytes beyond the last block's length get zeroed.
        self.compressed.resize(bh.compressed_len as usize, 0);
        self.file
            .read_exact(&mut self.compressed)
            .ctx("read", &self.path)?;
        if !BlockHeader::verify(&hb, &self.compressed) {
            return Err(Error::corrupt(&self.path, at, "block checksum mismatch"));
        }
        if bh.count == 0 || bh.raw_len as usize > MAX_BLOCK_RAW {
            return Err(Error::corrupt(&self.path, at, "block header out of range"));
        }
        self.raw.clear();
        self.raw.reserve(bh.raw_len as usize);
        let n = self
            .zstd
            .decompress_to_buffer(&self.compressed[..], &mut self.raw)
            .map_err(|e| Error::corrupt(&self.path, body_at, format!("zstd: {e}")))?;
        if n != bh.raw_len as usize {
            return Err(Error::corrupt(
                &self.path,
                body_at,
                "block decompressed to the wrong length",
            ));
        }
        let layout = BlockLayout::of(&self.header, bh.count as usize);
        self.block
            .decode_from(&self.raw, layout)
            .map_err(|e| e.in_file(&self.path, body_at))?;
        self.block_at = at;
        // The block checked its own order; here the seam with the block before it.
        let mut buf = [0u8; 8];
        let first = self.block.key_bytes(0, &mut buf);
        if let Some(order) = self.prev_key.cmp(first) {
            if order.is_lt() || (layout.unique && order.is_eq()) {
                return Err(Error::corrupt(
                    &self.path,
                    at,
                    "records out of key order (across blocks)",
                ));
            }
        }
        let last = self.block.key_bytes(self.block.count - 1, &mut buf);
        self.prev_key.set(last);
        if let Some(h) = &mut self.hasher {
            h.update(&hb);
            h.update(&self.compressed);
        }
        self.pos = body_at + u64::from(bh.compressed_len);
        self.blocks_read += 1;
        self.cur = None;
        Ok(true)
    }

    fn finish_checks(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let end = self.trailer.footer_offset;
        if self.blocks_read != self.trailer.blocks || self.records_read != self.trailer.records {
            return Err(Error::corrupt(
                &self.path,
                end,
                format!(
                    "read {} records in {} blocks, trailer says {} in {}",
                    self.records_read, self.blocks_read, self.trailer.records, self.trailer.blocks
                ),
            ));
        }
        if let Some(mut h) = self.hasher.take() {
            // Hash the footer in bounded chunks.
            let mut left = self.trailer.footer_len;
            let mut footer_hash = Xxh3::new();
            let mut buf = vec![0u8; 64 * 1024];
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                self.file
                    .read_exact(&mut buf[..n])
                    .ctx("read", &self.path)?;
                h.update(&buf[..n]);
                footer_hash.update(&buf[..n]);
                left -= n as u64;
            }
            if footer_hash.digest() != self.trailer.footer_checksum {
                return Err(Error::corrupt(
                    &self.path,
                    end,
                    "footer index checksum mismatch",
                ));
            }
            if h.digest() != self.trailer.file_checksum {
                return Err(Error::corrupt(
                    &self.path,
                    0,
                    "whole-file checksum mismatch",
                ));
            }
        }
        Ok(())
    }
}

impl Cursor for RunReader {
    fn advance(&mut self) -> Result<bool> {
        let next = self.cur.map_or(0, |i| i + 1);
        let i = if next < self.block.count {
            next
        } else {
            if !self.load_block()? {
                self.block.count = 0;
                self.cur = None;
                return Ok(false);
            }
            0
        };
        self.cur = Some(i);
        self.records_read += 1;
        if !self.block.keys_built() {
            self.block.build_keys();
        }
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        self.block
            .key(self.cur.expect("advance() first"), self.key_len)
    }

    fn payload(&self) -> &[u8] {
        self.block.payload(self.cur.expect("advance() first"))
    }
}

/// A run of 8-byte keys read ahead on a thread of its own: the thread reads, verifies,
/// decompresses and decodes blocks ([`RunReader::next_u64s`]) while the caller works on the
/// previous one. At most [`U64Blocks::AHEAD`] blocks wait decoded, so memory stays a few blocks.
/// Errors (a damaged file) arrive in order, where the damage is.
pub struct U64Blocks {
    rx: std::sync::mpsc::Receiver<Result<Vec<u64>>>,
    back: std::sync::mpsc::Sender<Vec<u64>>,
    current: Vec<u64>,
    done: bool,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl U64Blocks {
    /// Decoded blocks that may wait for the caller.
    pub const AHEAD: usize = 8;

    /// Starts reading `reader` from where it stands.
    pub fn spawn(mut reader: RunReader) -> Result<U64Blocks> {
        let path = reader.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::sync_channel(U64Blocks::AHEAD);
        let (back, back_rx) = std::sync::mpsc::channel::<Vec<u64>>();
        let handle = std::thread::Builder::new()
            .name("run-reader".into())
            .spawn(move || loop {
                let spare = back_rx.try_recv().unwrap_or_default();
                let next = reader.take_u64s(spare);
                let stop = !matches!(next, Ok(Some(_)));
                let next = next.transpose();
                if let Some(item) = next {
                    if tx.send(item).is_err() {
                        return; // the caller stopped listening
                    }
                }
                if stop {
                    return;
                }
            })
            .ctx("start a reader thread for", &path)?;
        Ok(U64Blocks {
            rx,
            back,
            current: Vec::new(),
            done: false,
            handle: Some(handle),
        })
    }

    /// The next block's keys; `None` at the end (after the reader's end-of-file checks).
    pub fn next_block(&mut self) -> Result<Option<&[u64]>> {
        if self.done {
            return Ok(None);
        }
        let old = std::mem::take(&mut self.current);
        let _ = self.back.send(old);
        match self.rx.recv() {
            Ok(Ok(block)) => {
                self.current = block;
                Ok(Some(&self.current))
            }
            Ok(Err(e)) => {
                self.done = true;
                Err(e)
            }
            Err(_) => {
                self.done = true;
                if let Some(h) = self.handle.take() {
                    if h.join().is_err() {
                        return Err(Error::Usage("a run reader thread panicked".into()));
                    }
                }
                Ok(None)
            }
        }
    }

    /// The block [`U64Blocks::next_block`] returned last (empty before the first and at the end).
    pub fn current(&self) -> &[u64] {
        if self.done {
            &[]
        } else {
            &self.current
        }
    }
}

/// What [`verify`] found in a healthy run file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunInfo {
    /// The file.
    pub path: PathBuf,
    /// Format version.
    pub version: u32,
    /// Schema id.
    pub schema_id: u32,
    /// Schema name.
    pub schema: String,
    /// Sort key description.
    pub sort_key: String,
    /// Key width in bytes.
    pub key_len: u16,
    /// Whether records carry payloads.
    pub payload: bool,
    /// Whether keys are unique.
    pub unique: bool,
    /// Blocks.
    pub blocks: u64,
    /// Records.
    pub records: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// Payload bytes in all records.
    pub payload_bytes: u64,
    /// Whole-file xxh3-64, hex.
    pub checksum: String,
    /// First key, hex (absent when empty).
    pub first_key: Option<String>,
    /// Last key, hex (absent when empty).
    pub last_key: Option<String>,
}

/// Reads a whole run file, checking everything: header, every block, key order, footer index,
/// counts and whole-file checksum. Used by `dragnet check run`.
pub fn verify(path: &Path) -> Result<RunInfo> {
    let mut r = RunReader::open(path)?;
    r.load_index()?;
    let hex = |k: &[u8]| crate::error::KeyBytes(k.to_vec()).to_string();
    let mut first = None;
    let mut last = Vec::new();
    let mut payload_bytes = 0u64;
    let mut block_firsts = r.index.clone().unwrap_or_default().into_iter();
    let mut blocks_seen = 0u64;
    while r.advance()? {
        if r.cur == Some(0) {
            let e = block_firsts.next().ok_or_else(|| {
                Error::corrupt(path, r.block_at, "more blocks than the index lists")
            })?;
            if e.first_key != r.key() {
                return Err(Error::corrupt(
                    path,
                    e.offset,
                    "index first key differs from the block's",
                ));
            }
            blocks_seen += 1;
        }
        if first.is_none() {
            first = Some(hex(r.key()));
        }
        last.clear();
        last.extend_from_slice(r.key());
        payload_bytes += r.payload().len() as u64;
    }
    debug_assert_eq!(blocks_seen, r.trailer.blocks);
    let bytes = std::fs::metadata(path).ctx("stat", path)?.len();
    let h = &r.header;
    Ok(RunInfo {
        path: path.to_path_buf(),
        version: h.version,
        schema_id: h.schema_id,
        schema: h.schema_name.clone(),
        sort_key: h.sort_key.clone(),
        key_len: h.key_len,
        payload: h.has_payload(),
        unique: h.unique(),
        blocks: r.trailer.blocks,
        records: r.trailer.records,
        bytes,
        payload_bytes,
        checksum: format!("{:016x}", r.trailer.file_checksum),
        last_key: first.as_ref().map(|_| hex(&last)),
        first_key: first,
    })
}
