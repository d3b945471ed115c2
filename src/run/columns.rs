//! How the blocks of key-only runs are compressed: column by column, zstd where a column has
//! structure and a *stored* zstd frame where it looks random.
//!
//! A key-only block is `K` columns of `n` bytes (the transposed key deltas, see
//! [`super::block::BlockEncoder`]). For sorted fingerprints the high columns are zeros, one
//! column holds the few significant bits of the gap's top byte, and the low columns are uniform
//! random bytes. Compressed as one zstd frame, the random columns cost zstd's match search and
//! mix into the literal statistics of the structured one, so at fast levels (which store
//! literals raw) nothing is gained on it and at others little. Here each maximal group of
//! neighbouring columns that look random is written as a zstd frame of raw blocks (RFC 8878
//! §3.1.1.2, `Block_Type` 0: a copy, no search) and each group of the others goes through zstd
//! on its own, so its literals get a Huffman table of their own.
//!
//! The result is still a valid zstd stream: concatenated frames decompress into the block, so
//! readers (and earlier versions of dragnet) need no change. On 10^9 sorted fingerprints this
//! took the seen set from 4.91 to 4.46 bytes per fingerprint at about the same compression cost
//! (docs/BENCHMARKS.md, DRUM).
//!
//! "Looks random" is a test on the byte histogram: the collision entropy `-log2(sum p^2)`, a lower
//! bound of the Shannon entropy that needs only integer sums, is at least [`RANDOM_BITS`] bits
//! per byte, where an order-0 entropy coder could save at most ~1.5%. A column that passes but
//! would still shrink through repeats (a random 256-byte pattern repeated, say) is stored; that
//! costs size, never correctness.

use zstd::bulk::Compressor;

/// Collision entropy, in bits per byte, from which a column is stored rather than compressed.
/// A uniform random column of 16 Ki bytes (a 128 KiB block of fingerprints) measures ~7.98.
pub const RANDOM_BITS: f64 = 7.9;

/// Largest block in a zstd frame (RFC 8878 §3.1.1.2.4: `Block_Maximum_Size`, at most 128 KiB).
const MAX_STORED_BLOCK: usize = 128 * 1024;

/// Bytes of a column the test looks at, evenly spaced: a sixteenth of a 16 KiB column. On uniform
/// bytes the estimate below has a standard deviation of ~0.03 bits at this size, so the 0.1-bit
/// margin of [`RANDOM_BITS`] is about four of them.
const SAMPLE: usize = 1024;

/// Whether a column of bytes looks random (see the module docs).
pub fn looks_random(col: &[u8]) -> bool {
    if col.len() < SAMPLE {
        return false; // small blocks: zstd decides
    }
    let step = col.len() / SAMPLE;
    // Four histograms, so equal bytes in a row do not wait on each other's increment.
    let mut h = [[0u32; 256]; 4];
    for q in col.chunks_exact(4 * step).take(SAMPLE / 4) {
        h[0][usize::from(q[0])] += 1;
        h[1][usize::from(q[step])] += 1;
        h[2][usize::from(q[2 * step])] += 1;
        h[3][usize::from(q[3 * step])] += 1;
    }
    let sum_sq: u64 = (0..256)
        .map(|v| {
            let c = u64::from(h[0][v] + h[1][v] + h[2][v] + h[3][v]);
            c * c
        })
        .sum();
    // sum p^2 estimated without the bias of a finite sample, (sum c^2 - n) / (n^2 - n), and
    // compared in the log domain: -log2(sum p^2) >= RANDOM_BITS.
    let n = SAMPLE as f64;
    let collisions = (sum_sq as f64 - n) / (n * n - n);
    collisions * RANDOM_BITS.exp2() <= 1.0
}

/// Appends `data` to `out` as one zstd frame of raw (stored) blocks, with its content size.
pub fn stored_frame(data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&0xFD2F_B528u32.to_le_bytes());
    // Frame_Header_Descriptor: Frame_Content_Size_flag 3 (8 bytes), Single_Segment_flag (no
    // window descriptor), no checksum, no dictionary.
    out.push(0b1110_0000);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let mut chunks = data.chunks(MAX_STORED_BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0]); // one empty last raw block
    }
    while let Some(chunk) = chunks.next() {
        // Block_Header, 3 bytes little-endian: Last_Block, Block_Type 0 (raw), Block_Size.
        let last = u32::from(chunks.peek().is_none());
        let head = last | (chunk.len() as u32) << 3;
        out.extend_from_slice(&head.to_le_bytes()[..3]);
        out.extend_from_slice(chunk);
    }
}

/// Compresses the raw block of a key-only run, `k` columns of `n` bytes, into `out` (replacing
/// what it held); `scratch` is a reusable buffer.
pub fn compress_key_block(
    zstd: &mut Compressor<'static>,
    raw: &[u8],
    n: usize,
    k: usize,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> std::io::Result<()> {
    debug_assert_eq!(raw.len(), n * k);
    out.clear();
    // Keys are at most 64 bytes (`Schema::key_len`).
    let mut random = [false; 64];
    for (j, r) in random.iter_mut().enumerate().take(k) {
        *r = looks_random(&raw[j * n..(j + 1) * n]);
    }
    let mut j = 0;
    while j < k {
        let mut end = j + 1;
        while end < k && random[end] == random[j] {
            end += 1;
        }
        let group = &raw[j * n..end * n];
        if random[j] {
            stored_frame(group, out);
        } else {
            scratch.clear();
            scratch.reserve(zstd::zstd_safe::compress_bound(group.len()));
            zstd.compress_to_buffer(group, scratch)?;
            out.extend_from_slice(scratch);
        }
        j = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, mut x: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn random_and_structured_columns_are_told_apart() {
        assert!(looks_random(&noise(16 * 1024, 1)));
        assert!(!looks_random(&vec![0u8; 16 * 1024]));
        // The top byte of exponential gaps: a handful of small values.
        let small: Vec<u8> = noise(16 * 1024, 2).iter().map(|b| b % 12).collect();
        assert!(!looks_random(&small));
        // Too short to tell: left to zstd.
        assert!(!looks_random(&noise(SAMPLE - 1, 3)));
        assert!(looks_random(&noise(SAMPLE, 3)));
        // Uniform over half the byte values: 7 bits, worth coding.
        let half: Vec<u8> = noise(16 * 1024, 4).iter().map(|b| b & 0x7f).collect();
        assert!(!looks_random(&half));
        assert!(!looks_random(&[]));
    }

    #[test]
    fn stored_frames_are_zstd_frames() {
        for len in [
            0,
            1,
            255,
            256,
            70_000,
            MAX_STORED_BLOCK,
            3 * MAX_STORED_BLOCK + 7,
        ] {
            let data = noise(len, len as u64);
            let mut frame = Vec::new();
            stored_frame(&data, &mut frame);
            let back = zstd::bulk::decompress(&frame, len + 1).expect("a valid zstd frame");
            assert_eq!(back, data, "length {len}");
            let mut streamed = Vec::new();
            zstd::stream::copy_decode(&frame[..], &mut streamed).expect("streaming decoder");
            assert_eq!(streamed, data, "length {len}, streaming");
        }
    }

    #[test]
    fn key_blocks_round_trip_through_one_decompression() {
        let n = 5000;
        let mut raw = vec![0u8; 3 * n]; // three zero columns
        raw.extend(noise(n, 9).iter().map(|b| b % 5)); // structured
        raw.extend(noise(4 * n, 10)); // four random columns
        raw.extend(vec![7u8; n]); // structured again
        let k = raw.len() / n;
        let mut z = Compressor::new(1).expect("zstd");
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        compress_key_block(&mut z, &raw, n, k, &mut out, &mut scratch).expect("compress");
        assert!(
            out.len() < raw.len() * 6 / 10,
            "{} of {}",
            out.len(),
            raw.len()
        );
        let mut d = zstd::bulk::Decompressor::new().expect("zstd");
        let mut back = Vec::with_capacity(raw.len());
        d.decompress_to_buffer(&out[..], &mut back)
            .expect("concatenated frames");
        assert_eq!(back, raw);
    }
}
