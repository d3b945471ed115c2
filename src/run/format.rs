//! The byte layout of a run file: header, blocks, footer index and trailer.
//!
//! All integers are little-endian; keys are byte strings compared with `memcmp` (numeric keys are
//! stored big-endian so that byte order is numeric order). The layout is documented with diagrams
//! in `docs/formats.md`; this module is the only code that knows the offsets.
//!
//! ```text
//! offset 0        64                                   footer_offset            len-64   len
//!        +--------+------------+------------+-- ... --+------------------------+--------+
//!        | header | block 0    | block 1    |         | footer: one entry/block| trailer|
//!        +--------+------------+------------+-- ... --+------------------------+--------+
//! ```

use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::Error;

/// First eight bytes of every run file.
pub const MAGIC: [u8; 8] = *b"DRAGNRUN";
/// Last eight bytes of every complete run file.
pub const END_MAGIC: [u8; 8] = *b"DRAGNEND";
/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 1;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// Size of the header in bytes.
pub const HEADER_LEN: usize = 64;
/// Size of the trailer in bytes.
pub const TRAILER_LEN: usize = 64;
/// Size of a block header in bytes.
pub const BLOCK_HEADER_LEN: usize = 24;
/// Longest key a run file may declare.
pub const MAX_KEY_LEN: usize = 64;
/// Largest uncompressed block; a block holds at least one record, so this also bounds payloads.
pub const MAX_BLOCK_RAW: usize = 1 << 30;

/// Header flag: every record carries a variable-length payload.
pub const FLAG_PAYLOAD: u16 = 1;
/// Header flag: keys are strictly increasing (no two records share a key).
pub const FLAG_UNIQUE: u16 = 2;

/// The decoded file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Format version of the file.
    pub version: u32,
    /// Record schema identifier (see [`super::Schema`]).
    pub schema_id: u32,
    /// Width of every key in bytes.
    pub key_len: u16,
    /// `FLAG_*` bits.
    pub flags: u16,
    /// Target uncompressed block size the writer used.
    pub block_size: u32,
    /// Schema name, for humans (`dragnet check run`).
    pub schema_name: String,
    /// Sort-key description, for humans ("fp64", "host64,fp64").
    pub sort_key: String,
}

impl Header {
    /// Whether records carry payloads.
    pub fn has_payload(&self) -> bool {
        self.flags & FLAG_PAYLOAD != 0
    }

    /// Whether keys are strictly increasing.
    pub fn unique(&self) -> bool {
        self.flags & FLAG_UNIQUE != 0
    }

    /// Encodes the header into its 64 bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12..16].copy_from_slice(&self.schema_id.to_le_bytes());
        b[16..18].copy_from_slice(&self.key_len.to_le_bytes());
        b[18..20].copy_from_slice(&self.flags.to_le_bytes());
        b[20..24].copy_from_slice(&self.block_size.to_le_bytes());
        put_name(&mut b[24..40], &self.schema_name);
        put_name(&mut b[40..56], &self.sort_key);
        let sum = xxh3_64(&b[..56]);
        b[56..64].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Decodes and checks a header; errors are at offsets within it.
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Header, DecodeError> {
        if b[0..8] != MAGIC {
            return Err(DecodeError::corrupt(
                0,
                "not a dragnet run file (bad magic)",
            ));
        }
        if u64_at(b, 56) != xxh3_64(&b[..56]) {
            return Err(DecodeError::corrupt(56, "header checksum mismatch"));
        }
        let version = u32_at(b, 8);
        if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(DecodeError::Version(version));
        }
        let h = Header {
            version,
            schema_id: u32_at(b, 12),
            key_len: u16::from_le_bytes([b[16], b[17]]),
            flags: u16::from_le_bytes([b[18], b[19]]),
            block_size: u32_at(b, 20),
            schema_name: get_name(&b[24..40]),
            sort_key: get_name(&b[40..56]),
        };
        if h.key_len == 0 || usize::from(h.key_len) > MAX_KEY_LEN {
            return Err(DecodeError::corrupt(
                16,
                format!("key length {} out of range", h.key_len),
            ));
        }
        Ok(h)
    }
}

/// Why the bytes of a run file did not decode: damage at an offset within the part decoded
/// (the header, the trailer, a block), or a format version this build does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Damaged bytes: where, from the start of the part decoded (a block's records are decoded
    /// from its decompressed bytes, which have no place in the file: their errors are at 0, the
    /// block's start), and what check failed.
    Corrupt {
        /// Offset within the part decoded.
        offset: u64,
        /// What check failed.
        why: String,
    },
    /// A format version this build does not read.
    Version(u32),
}

impl DecodeError {
    /// Damage at `offset` of the part decoded.
    pub fn corrupt(offset: u64, why: impl Into<String>) -> DecodeError {
        DecodeError::Corrupt {
            offset,
            why: why.into(),
        }
    }

    /// The error for the file at `path`, whose decoded part starts at file offset `base`:
    /// [`Error::Corrupt`] at the damage's offset in the file, or [`Error::Version`].
    pub fn in_file(self, path: &Path, base: u64) -> Error {
        match self {
            DecodeError::Corrupt { offset, why } => Error::corrupt(path, base + offset, why),
            DecodeError::Version(found) => Error::Version {
                path: path.to_path_buf(),
                found,
                oldest: OLDEST_VERSION,
                newest: FORMAT_VERSION,
            },
        }
    }
}

/// The decoded trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the footer index.
    pub footer_offset: u64,
    /// Length of the footer index in bytes.
    pub footer_len: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// Number of records.
    pub records: u64,
    /// xxh3-64 of the footer bytes.
    pub footer_checksum: u64,
    /// xxh3-64 of every byte before the trailer (header, blocks, footer).
    pub file_checksum: u64,
}

impl Trailer {
    /// Encodes the trailer into its 64 bytes.
    pub fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut b = [0u8; TRAILER_LEN];
        b[0..8].copy_from_slice(&self.footer_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.footer_len.to_le_bytes());
        b[16..24].copy_from_slice(&self.blocks.to_le_bytes());
        b[24..32].copy_from_slice(&self.records.to_le_bytes());
        b[32..40].copy_from_slice(&self.footer_checksum.to_le_bytes());
        b[40..48].copy_from_slice(&self.file_checksum.to_le_bytes());
        let sum = xxh3_64(&b[..48]);
        b[48..56].copy_from_slice(&sum.to_le_bytes());
        b[56..64].copy_from_slice(&END_MAGIC);
        b
    }

    /// Decodes and checks a trailer; errors are at offsets within it.
    pub fn decode(b: &[u8; TRAILER_LEN]) -> Result<Trailer, DecodeError> {
        if b[56..64] != END_MAGIC {
            return Err(DecodeError::corrupt(
                56,
                "missing end marker: the file is truncated or was never finished",
            ));
        }
        if u64_at(b, 48) != xxh3_64(&b[..48]) {
            return Err(DecodeError::corrupt(48, "trailer checksum mismatch"));
        }
        Ok(Trailer {
            footer_offset: u64_at(b, 0),
            footer_len: u64_at(b, 8),
            blocks: u64_at(b, 16),
            records: u64_at(b, 24),
            footer_checksum: u64_at(b, 32),
            file_checksum: u64_at(b, 40),
        })
    }
}

/// The fixed-size header in front of every block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Length of the zstd frame that follows.
    pub compressed_len: u32,
    /// Length of the block once decompressed.
    pub raw_len: u32,
    /// Records in the block (at least one).
    pub count: u32,
}

impl BlockHeader {
    /// Encodes the header; `checksum` covers bytes 0..16 and the compressed bytes.
    pub fn encode(&self, compressed: &[u8]) -> [u8; BLOCK_HEADER_LEN] {
        let mut b = [0u8; BLOCK_HEADER_LEN];
        b[0..4].copy_from_slice(&self.compressed_len.to_le_bytes());
        b[4..8].copy_from_slice(&self.raw_len.to_le_bytes());
        b[8..12].copy_from_slice(&self.count.to_le_bytes());
        let sum = block_checksum(&b[..16], compressed);
        b[16..24].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Decodes the length fields (not yet trusted: check [`BlockHeader::verify`] before use).
    pub fn decode(b: &[u8; BLOCK_HEADER_LEN]) -> BlockHeader {
        BlockHeader {
            compressed_len: u32_at(b, 0),
            raw_len: u32_at(b, 4),
            count: u32_at(b, 8),
        }
    }

    /// Whether the stored checksum matches the header and the compressed bytes.
    pub fn verify(b: &[u8; BLOCK_HEADER_LEN], compressed: &[u8]) -> bool {
        u64_at(b, 16) == block_checksum(&b[..16], compressed)
    }
}

fn block_checksum(head: &[u8], compressed: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(head);
    h.update(compressed);
    h.digest()
}

/// Size of one footer entry for keys of `key_len` bytes: first key, offset (u64), count (u32),
/// block length including its header (u32).
pub fn footer_entry_len(key_len: usize) -> usize {
    key_len + 16
}

/// One footer entry: where a block starts and the first key it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// First key of the block.
    pub first_key: Vec<u8>,
    /// Offset of the block header in the file.
    pub offset: u64,
    /// Records in the block.
    pub count: u32,
    /// Bytes of the block, header included.
    pub len: u32,
}

impl IndexEntry {
    /// Appends the encoded entry to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.first_key);
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
    }

    /// Decodes one entry of `footer_entry_len(key_len)` bytes.
    pub fn decode(b: &[u8], key_len: usize) -> IndexEntry {
        IndexEntry {
            first_key: b[..key_len].to_vec(),
            offset: u64_at(b, key_len),
            count: u32_at(b, key_len + 8),
            len: u32_at(b, key_len + 12),
        }
    }
}

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint; `None` if truncated or longer than 10 bytes.
pub fn get_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn put_name(dst: &mut [u8], name: &str) {
    let n = name.len().min(dst.len());
    dst[..n].copy_from_slice(&name.as_bytes()[..n]);
}

fn get_name(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(get_varint(&b), Some((v, b.len())));
        }
        assert_eq!(get_varint(&[0x80, 0x80]), None);
    }
}
