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

use xxhash_rust::xxh3::xxh3_64;

use super::transpose::{self, LANES};

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

    /// Decodes and checks a header. Errors are (offset, reason) pairs for `Error::Corrupt`, or the
    /// unsupported version.
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Header, HeaderError> {
        if b[0..8] != MAGIC {
            return Err(HeaderError::Corrupt(
                0,
                "not a dragnet run file (bad magic)".into(),
            ));
        }
        if u64_at(b, 56) != xxh3_64(&b[..56]) {
            return Err(HeaderError::Corrupt(56, "header checksum mismatch".into()));
        }
        let version = u32_at(b, 8);
        if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(HeaderError::Version(version));
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
            return Err(HeaderError::Corrupt(
                16,
                format!("key length {} out of range", h.key_len),
            ));
        }
        Ok(h)
    }
}

/// Why a header was refused.
#[derive(Debug)]
pub enum HeaderError {
    /// Damaged: offset and reason.
    Corrupt(u64, String),
    /// A version this build does not read.
    Version(u32),
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

    /// Decodes and checks a trailer; the error is (offset within the trailer, reason).
    pub fn decode(b: &[u8; TRAILER_LEN]) -> Result<Trailer, (u64, String)> {
        if b[56..64] != END_MAGIC {
            return Err((
                56,
                "missing end marker: the file is truncated or was never finished".into(),
            ));
        }
        if u64_at(b, 48) != xxh3_64(&b[..48]) {
            return Err((48, "trailer checksum mismatch".into()));
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

/// Encodes one block of records into its raw (uncompressed) form.
///
/// Keys are split into a *major* part (the first `min(key_len, 8)` bytes, a big-endian integer) and
/// a *minor* part (the rest). Majors are delta-coded against the previous record of the block, and
/// both parts are stored byte-transposed ("shuffled" as in Blosc): column `j` holds byte `j` of every
/// record. Sorted random fingerprints then have long runs of zero bytes in the high columns, which
/// zstd removes almost for free, leaving close to the entropy of the gaps.
pub struct BlockEncoder {
    key_len: usize,
    payload: bool,
    /// Keys as given, `key_len` bytes each (keys of any width but 8).
    keys: Vec<u8>,
    /// Keys as big-endian integers (8-byte keys, the fingerprint runs).
    words: Vec<u64>,
    /// Scratch: the key deltas of the block being finished.
    deltas: Vec<u64>,
    lens: Vec<u8>,
    payloads: Vec<u8>,
    count: usize,
}

impl BlockEncoder {
    /// A new, empty encoder.
    pub fn new(key_len: usize, payload: bool) -> BlockEncoder {
        BlockEncoder {
            key_len,
            payload,
            keys: Vec::new(),
            words: Vec::new(),
            deltas: Vec::new(),
            lens: Vec::new(),
            payloads: Vec::new(),
            count: 0,
        }
    }

    /// Records buffered.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Uncompressed size so far.
    pub fn raw_len(&self) -> usize {
        self.count * self.key_len + self.lens.len() + self.payloads.len()
    }

    /// The first key buffered, if any.
    pub fn first_key(&self) -> Option<Vec<u8>> {
        if self.count == 0 {
            None
        } else if self.key_len == 8 {
            Some(self.words[0].to_be_bytes().to_vec())
        } else {
            Some(self.keys[..self.key_len].to_vec())
        }
    }

    /// Adds a record (order is the caller's business).
    pub fn push(&mut self, key: &[u8], payload: &[u8]) {
        debug_assert_eq!(key.len(), self.key_len);
        if self.key_len == 8 {
            self.words
                .push(u64::from_be_bytes(key.try_into().expect("8-byte key")));
        } else {
            self.keys.extend_from_slice(key);
        }
        if self.payload {
            put_varint(&mut self.lens, payload.len() as u64);
            self.payloads.extend_from_slice(payload);
        }
        self.count += 1;
    }

    /// Adds key-only records whose keys are 8-byte big-endian integers (a fingerprint run).
    pub fn push_u64s(&mut self, keys: &[u64]) {
        debug_assert!(self.key_len == 8 && !self.payload);
        self.words.extend_from_slice(keys);
        self.count += keys.len();
    }

    /// Writes the raw block into `out` (whatever it held is replaced) and resets the encoder.
    ///
    /// For keys of 8 bytes or more, sixteen records at a time through a byte transpose
    /// ([`super::transpose`]); column by column otherwise and for the last records.
    pub fn finish_into(&mut self, out: &mut Vec<u8>) {
        let k = self.key_len;
        let major = k.min(8);
        let n = self.count;
        // Every byte of the key section is written below, so a recycled buffer is not zeroed
        // again (that memset was 5% of the DRUM merge's thread).
        if out.len() < n * k {
            out.resize(n * k, 0);
        } else {
            out.truncate(n * k);
        }
        if k == 8 {
            // Deltas sixteen at a time straight into the transpose, each against its neighbour
            // (which vectorizes, where a running `prev` would not); the rest column by column.
            let fast = n / LANES * LANES;
            let mut last = 0u64;
            for (i, chunk) in self.words[..fast].chunks_exact(LANES).enumerate() {
                let chunk: &[u64; LANES] = chunk.try_into().expect("LANES words");
                let d: [u64; LANES] = std::array::from_fn(|l| {
                    chunk[l].wrapping_sub(if l == 0 { last } else { chunk[l - 1] })
                });
                last = chunk[LANES - 1];
                transpose::deltas_to_columns(&d, out, n, i * LANES);
            }
            for (i, &m) in self.words.iter().enumerate().skip(fast) {
                let d = m.wrapping_sub(last);
                last = m;
                for j in 0..8 {
                    out[j * n + i] = (d >> (8 * (7 - j))) as u8;
                }
            }
        } else {
            let mut prev = 0u64;
            let deltas = &mut self.deltas;
            deltas.clear();
            deltas.extend(self.keys.chunks_exact(k).map(|key| {
                let m = major_of(key, major);
                let d = m.wrapping_sub(prev);
                prev = m;
                d
            }));
            let fast = if major == 8 { n / LANES * LANES } else { 0 };
            for (i, d) in deltas[..fast].chunks_exact(LANES).enumerate() {
                let d: &[u64; LANES] = d.try_into().expect("LANES deltas");
                transpose::deltas_to_columns(d, out, n, i * LANES);
            }
            for j in 0..major {
                let shift = 8 * (major - 1 - j);
                for (o, d) in out[j * n + fast..(j + 1) * n]
                    .iter_mut()
                    .zip(&deltas[fast..])
                {
                    *o = (d >> shift) as u8;
                }
            }
        }
        for j in major..k {
            for (o, key) in out[j * n..(j + 1) * n]
                .iter_mut()
                .zip(self.keys.chunks_exact(k))
            {
                *o = key[j];
            }
        }
        out.extend_from_slice(&self.lens);
        out.extend_from_slice(&self.payloads);
        self.keys.clear();
        self.words.clear();
        self.lens.clear();
        self.payloads.clear();
        self.count = 0;
    }
}

/// A decoded block: keys contiguous, payloads addressed by offsets.
#[derive(Default)]
pub struct DecodedBlock {
    /// `count * key_len` key bytes.
    pub keys: Vec<u8>,
    /// The first `min(key_len, 8)` bytes of every key as a big-endian integer: for the 8-byte
    /// keys of fingerprint runs, the keys themselves.
    pub majors: Vec<u64>,
    /// `count + 1` offsets into `payloads` (empty when the file has no payloads).
    pub offsets: Vec<usize>,
    /// Payload bytes.
    pub payloads: Vec<u8>,
    /// Records in the block.
    pub count: usize,
    /// Width of the keys.
    key_len: usize,
    /// Whether `keys` holds this block's key bytes.
    keys_built: bool,
}

impl DecodedBlock {
    /// Decodes a raw block of `count` records and checks that its keys are in order
    /// (non-decreasing, or increasing when `unique`); the error is a reason for `Error::Corrupt`.
    pub fn decode_from(
        &mut self,
        raw: &[u8],
        count: usize,
        key_len: usize,
        payload: bool,
        unique: bool,
    ) -> Result<(), String> {
        let k = key_len;
        let major = k.min(8);
        let key_bytes = count.checked_mul(k).ok_or("record count overflows")?;
        if raw.len() < key_bytes {
            return Err(format!(
                "block holds {} bytes, {count} keys need {key_bytes}",
                raw.len()
            ));
        }
        // Undo the byte transposition and sum up the deltas: sixteen records at a time through a
        // byte transpose when keys have 8 or more bytes, column by column otherwise and for the
        // last records. Deltas are unsigned, so the majors cannot decrease; a sum that wraps is
        // damage, as is a major above the key width.
        let majors = &mut self.majors;
        majors.clear();
        majors.reserve(count);
        let mut prev = 0u64;
        let mut wrapped = false;
        let mut add = |d: u64| {
            let (sum, carry) = prev.overflowing_add(d);
            wrapped |= carry;
            prev = sum;
            sum
        };
        let fast = if major == 8 { count / LANES * LANES } else { 0 };
        for i in (0..fast).step_by(LANES) {
            let mut sums = transpose::columns_to_deltas(raw, count, i);
            for d in sums.iter_mut() {
                *d = add(*d);
            }
            majors.extend_from_slice(&sums);
        }
        for i in fast..count {
            let mut d = 0u64;
            for j in 0..major {
                d = (d << 8) | u64::from(raw[j * count + i]);
            }
            majors.push(add(d));
        }
        if wrapped || (major < 8 && prev >> (8 * major) != 0) {
            return Err("key delta overflows the key width".into());
        }
        // Keys of up to 8 bytes are their majors: equal ones are only wrong in unique runs, and
        // their bytes are built when a cursor first asks (`build_keys`), never for callers that
        // read integers. Longer keys are built now and ordered by their minor bytes where the
        // majors tie.
        self.keys.clear();
        self.keys_built = false;
        // Equal majors anywhere (a branch-free pass that vectorizes), only where it matters.
        let repeats = (unique || k > 8)
            && self
                .majors
                .windows(2)
                .fold(false, |any, w| any | (w[0] == w[1]));
        if k <= 8 {
            if repeats && unique {
                return Err("equal keys in a run of unique keys".into());
            }
        } else {
            self.keys.resize(key_bytes, 0);
            for (key, m) in self.keys.chunks_exact_mut(k).zip(self.majors.iter()) {
                key[..8].copy_from_slice(&m.to_be_bytes());
            }
            for j in 8..k {
                for (key, &b) in self
                    .keys
                    .chunks_exact_mut(k)
                    .zip(&raw[j * count..(j + 1) * count])
                {
                    key[j] = b;
                }
            }
            self.keys_built = true;
            if repeats {
                for i in 1..count {
                    if self.majors[i] == self.majors[i - 1] {
                        let order =
                            self.keys[i * k..(i + 1) * k].cmp(&self.keys[(i - 1) * k..i * k]);
                        if order.is_lt() || (unique && order.is_eq()) {
                            return Err(format!(
                                "records out of key order (record {i} of the block)"
                            ));
                        }
                    }
                }
            }
        }
        self.key_len = k;
        self.offsets.clear();
        self.payloads.clear();
        let mut rest = &raw[key_bytes..];
        if payload {
            self.offsets.reserve(count + 1);
            self.offsets.push(0);
            let mut total = 0usize;
            for _ in 0..count {
                let (len, used) = get_varint(rest).ok_or("bad payload length")?;
                rest = &rest[used..];
                total = total
                    .checked_add(len as usize)
                    .ok_or("payload lengths overflow")?;
                self.offsets.push(total);
            }
            if rest.len() != total {
                return Err(format!(
                    "payload section holds {} bytes, lengths say {total}",
                    rest.len()
                ));
            }
            self.payloads.extend_from_slice(rest);
        } else if !rest.is_empty() {
            return Err(format!(
                "{} stray bytes after the keys of a key-only block",
                rest.len()
            ));
        }
        self.count = count;
        Ok(())
    }

    /// Builds the key bytes of a block of keys of up to 8 bytes (the decoder leaves them to
    /// whoever needs them); [`DecodedBlock::key`] needs this first.
    pub fn build_keys(&mut self) {
        if self.keys_built {
            return;
        }
        let k = self.key_len;
        self.keys.clear();
        self.keys.reserve(self.count * k);
        for m in &self.majors[..self.count] {
            self.keys.extend_from_slice(&m.to_be_bytes()[8 - k..]);
        }
        self.keys_built = true;
    }

    /// Whether [`DecodedBlock::key`] can be called.
    pub fn keys_built(&self) -> bool {
        self.keys_built
    }

    /// Key of record `i` (after [`DecodedBlock::build_keys`]).
    pub fn key(&self, i: usize, key_len: usize) -> &[u8] {
        debug_assert!(self.keys_built, "build_keys() first");
        &self.keys[i * key_len..(i + 1) * key_len]
    }

    /// Key of record `i`, built or not: in `buf` when the block holds keys of up to 8 bytes.
    pub fn key_bytes<'a>(&'a self, i: usize, buf: &'a mut [u8; 8]) -> &'a [u8] {
        let k = self.key_len;
        if k <= 8 {
            *buf = self.majors[i].to_be_bytes();
            &buf[8 - k..]
        } else {
            &self.keys[i * k..(i + 1) * k]
        }
    }

    /// Payload of record `i` (empty without payloads).
    pub fn payload(&self, i: usize) -> &[u8] {
        if self.offsets.is_empty() {
            &[]
        } else {
            &self.payloads[self.offsets[i]..self.offsets[i + 1]]
        }
    }
}

fn major_of(key: &[u8], major: usize) -> u64 {
    let mut b = [0u8; 8];
    b[8 - major..].copy_from_slice(&key[..major]);
    u64::from_be_bytes(b)
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

    #[test]
    fn block_round_trip_composite_keys() {
        let mut enc = BlockEncoder::new(12, true);
        let recs: Vec<(Vec<u8>, Vec<u8>)> = (0u32..50)
            .map(|i| {
                let mut k = (u64::from(i / 7) << 40).to_be_bytes().to_vec();
                k.extend_from_slice(&(i * 3).to_be_bytes());
                (k, vec![i as u8; (i % 5) as usize])
            })
            .collect();
        for (k, p) in &recs {
            enc.push(k, p);
        }
        let mut raw = Vec::new();
        enc.finish_into(&mut raw);
        let mut dec = DecodedBlock::default();
        dec.decode_from(&raw, recs.len(), 12, true, false).unwrap();
        dec.build_keys();
        for (i, (k, p)) in recs.iter().enumerate() {
            assert_eq!(dec.key(i, 12), &k[..]);
            assert_eq!(dec.payload(i), &p[..]);
        }
    }

    /// The transposed fast path (sixteen records at a time) and the column loops for the tail
    /// agree with a record-at-a-time reference layout, for every count around a multiple of 8.
    #[test]
    fn fingerprint_blocks_match_the_reference_layout() {
        for n in [1usize, 7, 8, 15, 16, 17, 31, 32, 33, 64, 1001] {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut keys: Vec<u64> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    x >> (x % 40)
                })
                .collect();
            keys.sort_unstable();
            let mut enc = BlockEncoder::new(8, false);
            enc.push_u64s(&keys);
            let mut raw = Vec::new();
            enc.finish_into(&mut raw);
            let mut want = vec![0u8; 8 * n];
            let mut prev = 0u64;
            for (i, k) in keys.iter().enumerate() {
                for (j, b) in (k - prev).to_be_bytes().iter().enumerate() {
                    want[j * n + i] = *b;
                }
                prev = *k;
            }
            assert_eq!(raw, want, "{n} records");
            let mut dec = DecodedBlock::default();
            dec.decode_from(&raw, n, 8, false, false).unwrap();
            assert_eq!(dec.majors, keys, "{n} records");
            dec.build_keys();
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(dec.key(i, 8), k.to_be_bytes());
            }
        }
    }

    #[test]
    fn decoding_refuses_disorder_and_overflow() {
        let mut dec = DecodedBlock::default();
        // Two equal 12-byte keys' majors, minors out of order.
        let mut enc = BlockEncoder::new(12, false);
        enc.push(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9], &[]);
        enc.push(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3], &[]);
        let mut raw = Vec::new();
        enc.finish_into(&mut raw);
        assert!(dec.decode_from(&raw, 2, 12, false, false).is_err());
        // Equal keys: fine unless the run is unique.
        let mut enc = BlockEncoder::new(8, false);
        enc.push_u64s(&[5, 5]);
        enc.finish_into(&mut raw);
        assert!(dec.decode_from(&raw, 2, 8, false, false).is_ok());
        assert!(dec.decode_from(&raw, 2, 8, false, true).is_err());
        // Deltas that wrap past 2^64.
        let mut raw = vec![0xff; 16];
        raw[0] = 0x80;
        raw[2] = 0x80;
        assert!(dec.decode_from(&raw, 2, 8, false, false).is_err());
    }

    #[test]
    fn short_keys_round_trip() {
        let mut enc = BlockEncoder::new(3, false);
        let keys: Vec<[u8; 3]> = vec![[0, 0, 1], [0, 0, 1], [0, 9, 0], [255, 255, 255]];
        for k in &keys {
            enc.push(k, &[]);
        }
        let mut raw = Vec::new();
        enc.finish_into(&mut raw);
        let mut dec = DecodedBlock::default();
        dec.decode_from(&raw, keys.len(), 3, false, false).unwrap();
        dec.build_keys();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(dec.key(i, 3), &k[..]);
        }
    }
}
