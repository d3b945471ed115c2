//! The warc-zstd dictionary: trained from a crawl's own records, written as the dictionary frame
//! at the start of each `.warc.zst` file, and every record's frame compressed with it.
//!
//! The IIPC warc-zstd proposal lets a file start with a skippable frame of magic `0x184D2A5D`
//! holding one zstd dictionary (RFC 8878 section 5, magic `0xEC30A437`), stored as it is or
//! itself compressed as one zstd frame; every frame of the file is then decompressed with it, and
//! names it by its `Dictionary_ID`. A WARC record is mostly headers (WARC and HTTP) and markup
//! that the same site repeats page after page, and each record is compressed on its own so that
//! it can be read from its offset: without a dictionary every frame starts from nothing, with
//! one it starts from what the site's pages share.
//!
//! Which records a dictionary is trained from (per partition and cycle, from the partition's
//! records of the cycle before) is the fetch's choice (`fetch::codec::warc_codec`); this module
//! samples records, trains, loads a dictionary file given by hand (`dragnet warc convert
//! --dictionary`), and reads and writes the frame. Training is deterministic: the same
//! records give the same dictionary, so a fetch redone after a kill writes the same bytes.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::Arc;

use super::frame::{DICT_MAGIC, MAX_DICT, ZSTD_MAGIC};
use crate::error::{Error, IoContext, Result};

/// Magic of a zstd dictionary (RFC 8878 section 5: `0xEC30A437`, little-endian).
pub const ZDICT_MAGIC: [u8; 4] = [0x37, 0xA4, 0x30, 0xEC];

/// Largest dictionary trained: 64 KiB. Larger ones (the zstd tool's default is 110 KiB) gained
/// under 1% on crawl records (docs/BENCHMARKS.md) and cost every file their size.
pub const DICT_SIZE: usize = 64 << 10;

/// Bytes of records a dictionary is trained from (at most).
pub const SAMPLE_BUDGET: usize = 2 << 20;

/// The most of one record that goes into the samples: its start (WARC header, HTTP header, the
/// page's head), where what pages share is; a dictionary helps only the first window of a frame
/// anyway.
pub const SAMPLE_PER_RECORD: usize = 16 << 10;

/// Fewest records a dictionary is trained from: with fewer, training fails or the dictionary
/// costs more than it saves, and the files are written without one.
pub const MIN_SAMPLES: usize = 100;

/// A zstd dictionary, with the dictionary frame that carries it at the start of a file.
#[derive(Clone, PartialEq, Eq)]
pub struct Dictionary {
    id: u32,
    bytes: Vec<u8>,
    frame: Vec<u8>,
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dictionary")
            .field("id", &self.id)
            .field("bytes", &self.bytes.len())
            .field("frame", &self.frame.len())
            .finish()
    }
}

impl Dictionary {
    /// A dictionary: in zstd's format (its magic, then its ID), as the proposal asks and as we
    /// write, or raw content (no ID, 0 here), which zstd also takes and which readers meet in
    /// the wild; `path` names where it came from in errors. Its frame holds it zstd-compressed
    /// when that is smaller (at a high level: once per file, and small).
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Result<Dictionary> {
        let mut c = zstd::bulk::Compressor::new(19).ctx("start zstd for", path)?;
        for p in [
            zstd::zstd_safe::CParameter::ChecksumFlag(true),
            zstd::zstd_safe::CParameter::ContentSizeFlag(true),
        ] {
            c.set_parameter(p).ctx("configure zstd for", path)?;
        }
        let packed = c.compress(&bytes).ctx("compress the dictionary of", path)?;
        let frame = if packed.len() < bytes.len() {
            frame_of(&packed)
        } else {
            frame_of(&bytes)
        };
        Ok(Dictionary {
            id: id_of(&bytes),
            bytes,
            frame,
        })
    }

    /// A dictionary file given by hand (`dragnet warc convert --dictionary`): as `zstd --train`
    /// writes it, or itself one zstd frame. It must be in zstd's format, at most [`MAX_DICT`]
    /// bytes, and one zstd takes: else a usage error naming the file (a frame that does not
    /// decompress is corrupt). Its frame holds it as it is.
    pub fn load(path: &Path) -> Result<Dictionary> {
        let mut bytes = std::fs::read(path).ctx("read", path)?;
        if bytes.starts_with(&ZSTD_MAGIC) {
            bytes = zstd::bulk::decompress(&bytes, MAX_DICT)
                .map_err(|e| Error::corrupt(path, 0, format!("compressed zstd dictionary: {e}")))?;
        }
        if !bytes.starts_with(&ZDICT_MAGIC) || bytes.len() < 8 {
            return Err(Error::Usage(format!(
                "{}: not a zstd dictionary (it should start with the bytes 37 a4 30 ec; `zstd \
                 --train FILES -o DICT` makes one)",
                path.display()
            )));
        }
        if bytes.len() > MAX_DICT {
            return Err(Error::Usage(format!(
                "{}: a dictionary of {} bytes is over the {} MiB readers accept",
                path.display(),
                bytes.len(),
                MAX_DICT >> 20
            )));
        }
        zstd::bulk::Compressor::with_dictionary(3, &bytes).map_err(|e| {
            Error::Usage(format!(
                "{}: not a usable zstd dictionary: {e}",
                path.display()
            ))
        })?;
        let frame = frame_of(&bytes);
        Ok(Dictionary {
            id: id_of(&bytes),
            bytes,
            frame,
        })
    }

    /// The dictionary's ID, which every frame compressed with it names (0 for raw content).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The dictionary, in zstd's format.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The dictionary frame that starts a file (magic `0x184D2A5D`, size, then the dictionary:
    /// as a zstd frame with content size and checksum when [`Dictionary::from_bytes`] found that
    /// smaller, as it is from [`Dictionary::load`], as the file had it when read from one).
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// Trains a dictionary of at most `max_size` bytes from `samples` (zstd's trainer: the
    /// same samples give the same dictionary, and its ID is derived from its content); `None`
    /// when there are fewer than [`MIN_SAMPLES`] or zstd finds nothing worth a dictionary.
    pub fn train(samples: &Samples, max_size: usize) -> Option<Dictionary> {
        if samples.sizes.len() < MIN_SAMPLES {
            return None;
        }
        let mut out = Vec::with_capacity(max_size);
        zstd::zstd_safe::train_from_buffer(&mut out, &samples.data, &samples.sizes).ok()?;
        Dictionary::from_bytes(out, Path::new("<trained dictionary>")).ok()
    }
}

/// Records sampled for training: their bytes one after the other, and each one's length.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    data: Vec<u8>,
    sizes: Vec<usize>,
    budget: usize,
}

impl Samples {
    /// Room for `budget` bytes of samples.
    pub fn new(budget: usize) -> Samples {
        Samples {
            data: Vec::new(),
            sizes: Vec::new(),
            budget,
        }
    }

    /// Adds a sample (its first [`SAMPLE_PER_RECORD`] bytes); false once the budget is spent.
    pub fn add(&mut self, sample: &[u8]) -> bool {
        let sample = &sample[..sample.len().min(SAMPLE_PER_RECORD)];
        if self.data.len() + sample.len() > self.budget {
            return false;
        }
        if !sample.is_empty() {
            self.data.extend_from_slice(sample);
            self.sizes.push(sample.len());
        }
        true
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}

/// The dictionary a `.warc.zst` file starts with, read from `file` (at its start, whatever its
/// position; `path` names it in errors): `None` when it has none. For reading records at their
/// offsets (the parse stage's random access), which must decompress every frame with it.
pub fn of_file(file: &File, path: &Path) -> Result<Option<Dictionary>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 8];
    let mut got = 0;
    while got < head.len() {
        match file.read_at(&mut head[got..], got as u64) {
            Ok(0) => return Ok(None),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("read", path, e)),
        }
    }
    if u32::from_le_bytes([head[0], head[1], head[2], head[3]]) != DICT_MAGIC {
        return Ok(None);
    }
    let size = frame_size(&head, path)?;
    let mut data = vec![0; size];
    file.read_exact_at(&mut data, 8)
        .map_err(|e| data_error(e, size, path))?;
    decode_frame_data(data, path).map(Some)
}

/// The size of the data a dictionary frame's first 8 bytes (`head`) announce; an error naming
/// `path` and the size field's offset when it is over [`MAX_DICT`].
fn frame_size(head: &[u8], path: &Path) -> Result<usize> {
    let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if size > MAX_DICT {
        return Err(Error::corrupt(
            path,
            4,
            format!("zstd dictionary frame of {size} bytes"),
        ));
    }
    Ok(size)
}

/// The error for a failed read of a dictionary frame's `size` bytes of data: the frame (at
/// offset 0) is truncated, or the OS's I/O error.
fn data_error(e: std::io::Error, size: usize, path: &Path) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        Error::corrupt(
            path,
            0,
            format!("zstd dictionary frame of {size} bytes is truncated"),
        )
    } else {
        Error::io("read", path, e)
    }
}

/// The dictionary a dictionary frame's data holds: as it is, or decompressed when it is a zstd
/// frame (errors name `path` and the data's offset, 8). Its frame is the one read.
pub(super) fn decode_frame_data(data: Vec<u8>, path: &Path) -> Result<Dictionary> {
    let frame = frame_of(&data);
    let bytes = if data.starts_with(&ZSTD_MAGIC) {
        zstd::bulk::decompress(&data, MAX_DICT)
            .map_err(|e| Error::corrupt(path, 8, format!("compressed zstd dictionary: {e}")))?
    } else {
        data
    };
    Ok(Dictionary {
        id: id_of(&bytes),
        bytes,
        frame,
    })
}

/// A dictionary's ID: bytes 4..8 of one in zstd's format, 0 for raw content.
fn id_of(bytes: &[u8]) -> u32 {
    if bytes.len() >= 8 && bytes[..4] == ZDICT_MAGIC {
        u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]])
    } else {
        0
    }
}

/// The dictionary frame holding `data` (the dictionary, or it compressed): magic, size, data.
fn frame_of(data: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(8 + data.len());
    frame.extend_from_slice(&DICT_MAGIC.to_le_bytes());
    frame.extend_from_slice(&(data.len() as u32).to_le_bytes());
    frame.extend_from_slice(data);
    frame
}

/// A bulk decompressor for the frames of a file that starts with `dict` (or has none).
pub fn decompressor(
    dict: Option<&Dictionary>,
) -> std::io::Result<zstd::bulk::Decompressor<'static>> {
    match dict {
        Some(d) => zstd::bulk::Decompressor::with_dictionary(d.bytes()),
        None => zstd::bulk::Decompressor::new(),
    }
}

/// How a writer compresses records: the compression, and for zstd the dictionary its files start
/// with (none: plain frames).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codec {
    /// Record compression; also decides the file suffix.
    pub compression: super::Compression,
    /// The zstd dictionary (ignored for other compressions).
    pub dictionary: Option<Arc<Dictionary>>,
}

impl From<super::Compression> for Codec {
    fn from(compression: super::Compression) -> Codec {
        Codec {
            compression,
            dictionary: None,
        }
    }
}

/// Reads the warc-zstd dictionary frame at the start of a file (the caller has seen its magic):
/// the dictionary itself, decompressed if it was stored as a zstd frame. A frame cut short, or
/// one that holds no zstd dictionary, is an error naming `path` and the offset.
pub(super) fn read_dictionary<R: Read>(
    c: &mut super::frame::Counted<R>,
    path: &Path,
) -> Result<Dictionary> {
    let head = c.peek(8).ctx("read", path)?;
    if head.len() < 8 {
        return Err(Error::corrupt(
            path,
            0,
            "zstd dictionary frame is truncated",
        ));
    }
    let size = frame_size(head, path)?;
    c.consume(8);
    let mut data = vec![0; size];
    c.read_exact(&mut data)
        .map_err(|e| data_error(e, size, path))?;
    decode_frame_data(data, path)
}
