//! The records inside a run file's block: how a block of keys and payloads is encoded into its
//! raw (uncompressed) bytes ([`BlockEncoder`]), and decoded and checked back
//! ([`DecodedBlock`]). Around it, the block's header and zstd frame, and everything else in the
//! file, are [`super::format`]'s.

use super::format::{get_varint, put_varint, DecodeError, Header};
use super::transpose::{self, LANES};

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

/// What a block's raw bytes hold, from its file's header and its block header: what
/// [`DecodedBlock::decode_from`] reads them as and checks them against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLayout {
    /// Records in the block.
    pub count: usize,
    /// Width of every key in bytes.
    pub key_len: usize,
    /// Whether every record carries a payload.
    pub payload: bool,
    /// Whether keys are strictly increasing (else non-decreasing).
    pub unique: bool,
}

impl BlockLayout {
    /// The layout of a block of `count` records of the file whose header is `h`.
    pub fn of(h: &Header, count: usize) -> BlockLayout {
        BlockLayout {
            count,
            key_len: usize::from(h.key_len),
            payload: h.has_payload(),
            unique: h.unique(),
        }
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
    /// Decodes a raw block laid out as `layout` says and checks that its keys are in order
    /// (non-decreasing, or increasing when unique); errors are at the block's start (offset 0).
    pub fn decode_from(&mut self, raw: &[u8], layout: BlockLayout) -> Result<(), DecodeError> {
        let bad = |why: String| DecodeError::corrupt(0, why);
        let BlockLayout { count, key_len, .. } = layout;
        let key_bytes = count
            .checked_mul(key_len)
            .ok_or_else(|| bad("record count overflows".into()))?;
        if raw.len() < key_bytes {
            return Err(bad(format!(
                "block holds {} bytes, {count} keys need {key_bytes}",
                raw.len()
            )));
        }
        self.decode_majors(raw, count, key_len).map_err(bad)?;
        self.decode_keys(raw, layout).map_err(bad)?;
        self.key_len = key_len;
        self.decode_payloads(&raw[key_bytes..], layout)
            .map_err(bad)?;
        self.count = count;
        Ok(())
    }

    /// The majors of the block's `count` keys of `key_len` bytes, from the transposed deltas at
    /// the start of `raw`.
    ///
    /// Undoes the byte transposition and sums up the deltas: sixteen records at a time through
    /// a byte transpose when keys have 8 or more bytes, column by column otherwise and for the
    /// last records. Deltas are unsigned, so the majors cannot decrease; a sum that wraps is
    /// damage, as is a major above the key width.
    fn decode_majors(&mut self, raw: &[u8], count: usize, key_len: usize) -> Result<(), String> {
        let major = key_len.min(8);
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
        Ok(())
    }

    /// The keys' order checked, and the key bytes of keys over 8 bytes built.
    ///
    /// Keys of up to 8 bytes are their majors: equal ones are only wrong in unique runs, and
    /// their bytes are built when a cursor first asks ([`DecodedBlock::build_keys`]), never for
    /// callers that read integers. Longer keys are built now and ordered by their minor bytes
    /// where the majors tie.
    fn decode_keys(&mut self, raw: &[u8], layout: BlockLayout) -> Result<(), String> {
        let BlockLayout {
            count,
            key_len: k,
            unique,
            ..
        } = layout;
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
            return Ok(());
        }
        self.keys.resize(count * k, 0);
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
                    let order = self.keys[i * k..(i + 1) * k].cmp(&self.keys[(i - 1) * k..i * k]);
                    if order.is_lt() || (unique && order.is_eq()) {
                        return Err(format!(
                            "records out of key order (record {i} of the block)"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The payloads from `rest`, the bytes after the keys: every record's length (a varint),
    /// then the payloads one after the other; nothing at all in a key-only block.
    fn decode_payloads(&mut self, mut rest: &[u8], layout: BlockLayout) -> Result<(), String> {
        self.offsets.clear();
        self.payloads.clear();
        if !layout.payload {
            if !rest.is_empty() {
                return Err(format!(
                    "{} stray bytes after the keys of a key-only block",
                    rest.len()
                ));
            }
            return Ok(());
        }
        self.offsets.reserve(layout.count + 1);
        self.offsets.push(0);
        let mut total = 0usize;
        for _ in 0..layout.count {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` key-only records of `key_len` bytes, keys non-decreasing.
    fn key_only(count: usize, key_len: usize) -> BlockLayout {
        BlockLayout {
            count,
            key_len,
            payload: false,
            unique: false,
        }
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
        dec.decode_from(
            &raw,
            BlockLayout {
                payload: true,
                ..key_only(recs.len(), 12)
            },
        )
        .unwrap();
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
            dec.decode_from(&raw, key_only(n, 8)).unwrap();
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
        assert!(dec.decode_from(&raw, key_only(2, 12)).is_err());
        // Equal keys: fine unless the run is unique.
        let mut enc = BlockEncoder::new(8, false);
        enc.push_u64s(&[5, 5]);
        enc.finish_into(&mut raw);
        assert!(dec.decode_from(&raw, key_only(2, 8)).is_ok());
        assert!(dec
            .decode_from(
                &raw,
                BlockLayout {
                    unique: true,
                    ..key_only(2, 8)
                }
            )
            .is_err());
        // Deltas that wrap past 2^64.
        let mut raw = vec![0xff; 16];
        raw[0] = 0x80;
        raw[2] = 0x80;
        assert!(dec.decode_from(&raw, key_only(2, 8)).is_err());
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
        dec.decode_from(&raw, key_only(keys.len(), 3)).unwrap();
        dec.build_keys();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(dec.key(i, 3), &k[..]);
        }
    }
}
