//! Raw spills: a sorter's scratch runs as plain records, neither block-coded nor compressed.
//!
//! A spill is written once and read once, soon after, while it is most likely still in the
//! page cache; compressing it costs CPU twice (zstd on the way out, again on the way in) to
//! save disk bytes that often never reach the disk. On the peer web's fetch stage the links
//! sorter's spills were ~2% of the crawl's CPU (docs/BENCHMARKS.md, "2026-11-29 (sixth
//! session)"). A very large sort is different: there the spills do reach the disk, and their
//! size is the I/O. So [`super::Sorter`] spills raw only up to [`RAW_SPILL_BYTES`] of a sort,
//! and compressed run files beyond (docs/formats.md, "Sort spills").
//!
//! A record is the key (the schema's fixed length), a varint payload length and the payload;
//! key-only schemas write just the keys. No checksum: a spill lives for one sort, in a private
//! directory, and a short read is an error ([`RawSpillReader`]), never a silent end.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::format::{get_varint, put_varint};
use super::Cursor;
use crate::error::{Error, IoContext, Result};

/// Raw spill bytes a sort writes before its further spills are compressed run files.
pub const RAW_SPILL_BYTES: u64 = 256 << 20;

/// Bytes read or written at once.
const CHUNK: usize = 256 << 10;

/// Writes a raw spill.
pub struct RawSpillWriter {
    out: BufWriter<File>,
    path: PathBuf,
    payload: bool,
    len: Vec<u8>,
    bytes: u64,
}

impl RawSpillWriter {
    /// Creates `path` for records with (or, `payload` false, without) payloads.
    pub fn create(path: &Path, payload: bool) -> Result<RawSpillWriter> {
        let f = File::create(path).ctx("create", path)?;
        Ok(RawSpillWriter {
            out: BufWriter::with_capacity(CHUNK, f),
            path: path.to_path_buf(),
            payload,
            len: Vec::with_capacity(10),
            bytes: 0,
        })
    }

    /// Appends one record.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        self.out.write_all(key).ctx("write", &self.path)?;
        self.bytes += key.len() as u64;
        if self.payload {
            self.len.clear();
            put_varint(&mut self.len, payload.len() as u64);
            self.out.write_all(&self.len).ctx("write", &self.path)?;
            self.out.write_all(payload).ctx("write", &self.path)?;
            self.bytes += (self.len.len() + payload.len()) as u64;
        }
        Ok(())
    }

    /// Flushes the file (no fsync: a spill is scratch); returns the bytes written.
    pub fn finish(mut self) -> Result<u64> {
        self.out.flush().ctx("write", &self.path)?;
        Ok(self.bytes)
    }
}

/// Reads a raw spill back, record by record, as a [`Cursor`].
pub struct RawSpillReader {
    file: File,
    path: PathBuf,
    key_len: usize,
    payload: bool,
    buf: Vec<u8>,
    /// The current record's key at `buf[at..]`, its payload at `buf[p.0..p.1]`.
    at: usize,
    p: (usize, usize),
    /// Where the next record starts, and where the bytes read so far end.
    next: usize,
    end: usize,
    /// The file offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl RawSpillReader {
    /// Opens a spill of `key_len`-byte keys, with or without payloads.
    pub fn open(path: &Path, key_len: usize, payload: bool) -> Result<RawSpillReader> {
        let file = File::open(path).ctx("open", path)?;
        Ok(RawSpillReader {
            file,
            path: path.to_path_buf(),
            key_len,
            payload,
            buf: vec![0; CHUNK],
            at: 0,
            p: (0, 0),
            next: 0,
            end: 0,
            base: 0,
            eof: false,
        })
    }

    /// Makes at least `want` bytes from `next` available (fewer only at the end of the file).
    fn fill(&mut self, want: usize) -> Result<()> {
        if self.end - self.next >= want || self.eof {
            return Ok(());
        }
        self.buf.copy_within(self.next..self.end, 0);
        self.base += self.next as u64;
        self.end -= self.next;
        self.next = 0;
        if self.buf.len() < want {
            self.buf.resize(want.max(CHUNK), 0);
        }
        while self.end < want {
            let n = self
                .file
                .read(&mut self.buf[self.end..])
                .ctx("read", &self.path)?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.end += n;
        }
        Ok(())
    }

    fn truncated(&self) -> Error {
        Error::corrupt(
            &self.path,
            self.base + self.next as u64,
            "a sort spill ends inside a record (the scratch file was changed while in use)",
        )
    }
}

impl Cursor for RawSpillReader {
    fn advance(&mut self) -> Result<bool> {
        // The key and the longest varint, then the payload once its length is known.
        self.fill(self.key_len + 10)?;
        if self.next == self.end {
            return Ok(false);
        }
        if self.end - self.next < self.key_len {
            return Err(self.truncated());
        }
        let mut start = self.next + self.key_len;
        let mut len = 0;
        if self.payload {
            let (l, used) =
                get_varint(&self.buf[start..self.end]).ok_or_else(|| self.truncated())?;
            len = usize::try_from(l).map_err(|_| self.truncated())?;
            let head = self.key_len + used;
            self.fill(head + len)?;
            if self.end - self.next < head + len {
                return Err(self.truncated());
            }
            start = self.next + head;
        }
        self.at = self.next;
        self.p = (start, start + len);
        self.next = start + len;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        &self.buf[self.at..self.at + self.key_len]
    }

    fn payload(&self) -> &[u8] {
        &self.buf[self.p.0..self.p.1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of every size (empty payloads, payloads longer than a read) come back as they
    /// went in, and a spill cut inside a record is an error naming it, not a short sort.
    #[test]
    fn records_come_back_and_a_cut_spill_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill");
        let recs: Vec<(Vec<u8>, Vec<u8>)> = (0u32..2000)
            .map(|i| {
                let n = match i % 7 {
                    0 => 0,
                    1 => CHUNK + 3,
                    _ => (i as usize * 37) % 300,
                };
                (
                    (u64::from(i) << 8).to_be_bytes().repeat(2),
                    vec![(i % 251) as u8; n],
                )
            })
            .collect();
        let mut w = RawSpillWriter::create(&path, true).unwrap();
        for (k, v) in &recs {
            w.push(k, v).unwrap();
        }
        let bytes = w.finish().unwrap();
        assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
        let mut r = RawSpillReader::open(&path, 16, true).unwrap();
        let mut back = Vec::new();
        while r.advance().unwrap() {
            back.push((r.key().to_vec(), r.payload().to_vec()));
        }
        assert_eq!(back, recs);

        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(bytes - 1).unwrap();
        let mut r = RawSpillReader::open(&path, 16, true).unwrap();
        let err = loop {
            match r.advance() {
                Ok(true) => {}
                Ok(false) => panic!("a cut spill read to its end"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(
            err.contains("spill") && err.contains(&*path.to_string_lossy()),
            "{err}"
        );

        // Key-only: just the keys.
        let mut w = RawSpillWriter::create(&path, false).unwrap();
        for k in [1u64, 5, 9] {
            w.push(&k.to_be_bytes(), &[]).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 24);
        let mut r = RawSpillReader::open(&path, 8, false).unwrap();
        let mut keys = Vec::new();
        while r.advance().unwrap() {
            assert!(r.payload().is_empty());
            keys.push(u64::from_be_bytes(r.key().try_into().unwrap()));
        }
        assert_eq!(keys, [1, 5, 9]);
    }
}
