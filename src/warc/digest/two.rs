//! Two SHA-1 digests in one pass: a response record's block digest (its HTTP head and body) and
//! its payload digest (the body alone), computed side by side.
//!
//! Every fetched byte is hashed twice, and one SHA-1 stream cannot keep the CPU's SHA units
//! busy: each `sha1rnds4` (four rounds) waits for the one before it. The two digests are
//! independent chains, so their rounds are interleaved instruction by instruction ([`compress2`],
//! the x86 SHA extensions' compression of `sha1`'s `compress/x86.rs` written for two lanes), and
//! one waits while the other computes. On the AMD EPYC box of docs/BENCHMARKS.md ("2026-11-30
//! (sixteenth session)") that is 1.6x the bytes a second of two digests taken one after the
//! other (`runbench digests`: 1,540 MB/s of records against 950). Without the extensions (or
//! off x86-64) the lanes are compressed one after the other by `sha1`'s own code, as before.
//!
//! The lanes read one buffer, which arrives in pieces ([`Streaming`]: a record's head and body
//! as the writer holds them, or what the WARC reader's digest checks, `dragnet check warc` and
//! `warc convert`, hand it as a record streams by): the block lane takes every piece, the
//! payload lane each piece from the payload's start on. 64-byte blocks are compressed where they
//! lie; only a block that straddles two pieces is copied, held by its lane between them. The
//! whole blocks both lanes have in a piece are compressed together, the rest of each lane's
//! alone; each lane's last partial block and its padding (FIPS 180-4 §5.1.1) alone.

use sha1::digest::generic_array::GenericArray;
use sha1::digest::typenum::U64;

/// SHA-1's initial state.
const INIT: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

/// The SHA-1 of `pieces` concatenated (lane A) and of the same bytes from `skip` on (lane B).
pub(super) fn digests(pieces: &[&[u8]], skip: usize) -> ([u8; 20], [u8; 20]) {
    digests_with(pieces, skip, two_lanes())
}

/// [`digests`], with both lanes at once (`two`, where [`two_lanes`] says the CPU can) or one
/// after the other: the pieces fed to [`Streaming`] in turn, the payload lane from `skip` on.
fn digests_with(pieces: &[&[u8]], skip: usize, two: bool) -> ([u8; 20], [u8; 20]) {
    let mut s = Streaming::new(true, true);
    s.two = two;
    let mut from = 0;
    for piece in pieces {
        let to = from + piece.len();
        s.update(piece, (to > skip).then(|| skip.saturating_sub(from)));
        from = to;
    }
    match s.finish() {
        (Some(block), Some(payload)) => (block, payload),
        _ => unreachable!("both lanes were asked for"),
    }
}

/// A record's block and payload digests over a block that arrives in pieces (see the module
/// docs).
pub(crate) struct Streaming {
    block: Option<Partial>,
    payload: Option<Partial>,
    two: bool,
}

/// A lane of [`Streaming`]: its state, the bytes it took (whole blocks), and what it holds of
/// a block not yet whole.
struct Partial {
    state: [u32; 5],
    len: u64,
    buf: [u8; 64],
    held: usize,
}

impl Partial {
    fn new() -> Partial {
        Partial {
            state: INIT,
            len: 0,
            buf: [0; 64],
            held: 0,
        }
    }

    /// Completes the block it holds from the front of `bytes` (compressing it when whole) and
    /// gives the rest of `bytes`, which starts on a block edge of the lane.
    fn top_up<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        if self.held == 0 {
            return bytes;
        }
        let take = bytes.len().min(64 - self.held);
        self.buf[self.held..self.held + take].copy_from_slice(&bytes[..take]);
        self.held += take;
        if self.held == 64 {
            compress(&mut self.state, std::slice::from_ref(&self.buf));
            self.len += 64;
            self.held = 0;
        }
        &bytes[take..]
    }

    /// Compresses `bytes`' whole blocks and holds the rest: what [`Partial::top_up`] left,
    /// which is empty while it still holds part of a block.
    fn take(&mut self, bytes: &[u8]) {
        if self.held > 0 {
            debug_assert!(bytes.is_empty());
            return;
        }
        let (blocks, rest) = bytes.as_chunks::<64>();
        compress(&mut self.state, blocks);
        self.len += 64 * blocks.len() as u64;
        self.buf[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    /// The digest: the held bytes and their padding (FIPS 180-4 §5.1.1) compressed, the
    /// state read out.
    fn finish(mut self) -> [u8; 20] {
        let mut block = [0u8; 128];
        let n = self.held;
        block[..n].copy_from_slice(&self.buf[..n]);
        block[n] = 0x80;
        let end = if n < 56 { 64 } else { 128 };
        block[end - 8..end].copy_from_slice(&((self.len + n as u64) * 8).to_be_bytes());
        compress(&mut self.state, block[..end].as_chunks::<64>().0);
        let mut out = [0u8; 20];
        for (o, s) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&s.to_be_bytes());
        }
        out
    }
}

impl Streaming {
    /// Digests for the block, the payload, both or neither.
    pub(crate) fn new(block: bool, payload: bool) -> Streaming {
        Streaming {
            block: block.then(Partial::new),
            payload: payload.then(Partial::new),
            two: two_lanes(),
        }
    }

    /// Whether it digests the payload.
    pub(crate) fn has_payload(&self) -> bool {
        self.payload.is_some()
    }

    /// The block's next bytes; the payload's are `bytes[from..]` (`None`: none of them).
    pub(crate) fn update(&mut self, bytes: &[u8], payload_from: Option<usize>) {
        let mut a = self.block.as_mut().map(|l| (l.top_up(bytes), l));
        let mut b = match (self.payload.as_mut(), payload_from) {
            (Some(l), Some(from)) => Some((l.top_up(&bytes[from..]), l)),
            _ => None,
        };
        if let (Some((ra, la)), Some((rb, lb)), true) = (&mut a, &mut b, self.two) {
            let n = (ra.len() / 64).min(rb.len() / 64);
            if n > 0 {
                let (ba, bb) = (&ra.as_chunks::<64>().0[..n], &rb.as_chunks::<64>().0[..n]);
                compress2(&mut la.state, ba, &mut lb.state, bb);
                la.len += 64 * n as u64;
                lb.len += 64 * n as u64;
                let (sa, sb): (&[u8], &[u8]) = (ra, rb);
                (*ra, *rb) = (&sa[64 * n..], &sb[64 * n..]);
            }
        }
        for (rest, lane) in a.into_iter().chain(b) {
            lane.take(rest);
        }
    }

    /// The block's and the payload's digests (those it was asked for).
    pub(crate) fn finish(self) -> (Option<[u8; 20]>, Option<[u8; 20]>) {
        (
            self.block.map(Partial::finish),
            self.payload.map(Partial::finish),
        )
    }
}

/// One lane's blocks, by `sha1`'s compression (the SHA extensions where the CPU has them).
fn compress(state: &mut [u32; 5], blocks: &[[u8; 64]]) {
    // SAFETY: `GenericArray<u8, U64>` is a `[u8; 64]` (`sha1::compress` casts the other way).
    let blocks: &[GenericArray<u8, U64>] =
        unsafe { std::slice::from_raw_parts(blocks.as_ptr().cast(), blocks.len()) };
    sha1::compress(state, blocks);
}

/// Whether [`compress2`] runs both lanes at once here.
fn two_lanes() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("sha")
            && std::is_x86_feature_detected!("sse2")
            && std::is_x86_feature_detected!("ssse3")
            && std::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Two lanes' blocks (`a` and `b`, the same count) compressed together; only called where
/// [`two_lanes`] is true.
fn compress2(sa: &mut [u32; 5], a: &[[u8; 64]], sb: &mut [u32; 5], b: &[[u8; 64]]) {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller checked the CPU's features (`two_lanes`).
    unsafe {
        x86::compress2(sa, a, sb, b)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        compress(sa, a);
        compress(sb, b);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Four rounds: `sha1`'s `rounds4!`.
    macro_rules! rounds4 {
        ($h0:expr, $h1:expr, $wk:expr, $i:expr) => {
            _mm_sha1rnds4_epu32($h0, _mm_sha1nexte_epu32($h1, $wk), $i)
        };
    }

    /// The message schedule's next four words: `sha1`'s `schedule!`.
    macro_rules! schedule {
        ($v0:expr, $v1:expr, $v2:expr, $v3:expr) => {
            _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32($v0, $v1), $v2), $v3)
        };
    }

    /// A lane's state in registers: ABCD, and E in the top lane.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    unsafe fn load(s: &[u32; 5]) -> (__m128i, __m128i) {
        let abcd = _mm_set_epi32(s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32);
        (abcd, _mm_set_epi32(s[4] as i32, 0, 0, 0))
    }

    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    unsafe fn store(s: &mut [u32; 5], abcd: __m128i, e: __m128i) {
        s[0] = _mm_extract_epi32(abcd, 3) as u32;
        s[1] = _mm_extract_epi32(abcd, 2) as u32;
        s[2] = _mm_extract_epi32(abcd, 1) as u32;
        s[3] = _mm_extract_epi32(abcd, 0) as u32;
        s[4] = _mm_extract_epi32(e, 3) as u32;
    }

    /// A block's 16 words, big-endian, as four vectors (and a fifth for the schedule).
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    unsafe fn words(block: &[u8; 64]) -> [__m128i; 5] {
        let mask = _mm_set_epi64x(0x0001_0203_0405_0607, 0x0809_0A0B_0C0D_0E0F);
        let p = block.as_ptr().cast::<__m128i>();
        [
            _mm_shuffle_epi8(_mm_loadu_si128(p), mask),
            _mm_shuffle_epi8(_mm_loadu_si128(p.add(1)), mask),
            _mm_shuffle_epi8(_mm_loadu_si128(p.add(2)), mask),
            _mm_shuffle_epi8(_mm_loadu_si128(p.add(3)), mask),
            _mm_setzero_si128(),
        ]
    }

    /// `sha1`'s `digest_blocks` for two lanes, each step done for lane A (`w`, `h`) and then
    /// for lane B (`v`, `g`).
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub(super) unsafe fn compress2(
        sa: &mut [u32; 5],
        a: &[[u8; 64]],
        sb: &mut [u32; 5],
        b: &[[u8; 64]],
    ) {
        let (mut abcd_a, mut e_a) = load(sa);
        let (mut abcd_b, mut e_b) = load(sb);
        for (ba, bb) in a.iter().zip(b) {
            let mut w = words(ba);
            let mut v = words(bb);
            let mut h = [abcd_a, _mm_add_epi32(e_a, w[0])];
            let mut g = [abcd_b, _mm_add_epi32(e_b, v[0])];
            // Rounds 0..16: the block's own words.
            h[1] = _mm_sha1rnds4_epu32(h[0], h[1], 0);
            g[1] = _mm_sha1rnds4_epu32(g[0], g[1], 0);
            h[0] = rounds4!(h[1], h[0], w[1], 0);
            g[0] = rounds4!(g[1], g[0], v[1], 0);
            h[1] = rounds4!(h[0], h[1], w[2], 0);
            g[1] = rounds4!(g[0], g[1], v[2], 0);
            h[0] = rounds4!(h[1], h[0], w[3], 0);
            g[0] = rounds4!(g[1], g[0], v[3], 0);
            // Rounds 16..80, four at a time: step `s` makes the schedule's words into
            // `w[s % 5]` from the four before it, and runs rounds 4s..4s+4 with function `$i`.
            macro_rules! step {
                ($s:expr, $i:expr) => {{
                    const S: usize = $s;
                    let (x, y) = if S % 2 == 0 { (0, 1) } else { (1, 0) };
                    w[S % 5] = schedule!(
                        w[(S + 1) % 5],
                        w[(S + 2) % 5],
                        w[(S + 3) % 5],
                        w[(S + 4) % 5]
                    );
                    v[S % 5] = schedule!(
                        v[(S + 1) % 5],
                        v[(S + 2) % 5],
                        v[(S + 3) % 5],
                        v[(S + 4) % 5]
                    );
                    h[y] = rounds4!(h[x], h[y], w[S % 5], $i);
                    g[y] = rounds4!(g[x], g[y], v[S % 5], $i);
                }};
            }
            step!(4, 0);
            step!(5, 1);
            step!(6, 1);
            step!(7, 1);
            step!(8, 1);
            step!(9, 1);
            step!(10, 2);
            step!(11, 2);
            step!(12, 2);
            step!(13, 2);
            step!(14, 2);
            step!(15, 3);
            step!(16, 3);
            step!(17, 3);
            step!(18, 3);
            step!(19, 3);
            abcd_a = _mm_add_epi32(abcd_a, h[0]);
            e_a = _mm_sha1nexte_epu32(h[1], e_a);
            abcd_b = _mm_add_epi32(abcd_b, g[0]);
            e_b = _mm_sha1nexte_epu32(g[1], e_b);
        }
        store(sa, abcd_a, e_a);
        store(sb, abcd_b, e_b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(bytes: &[u8]) -> [u8; 20] {
        sha1::Digest::finalize(<sha1::Sha1 as sha1::Digest>::new_with_prefix(bytes)).into()
    }

    /// `data` cut at `cuts` into pieces, both digests (with both lanes at once and one after the
    /// other) against `sha1`'s of the concatenation.
    fn check(data: &[u8], cuts: &[usize], skip: usize) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut from = 0;
        for c in cuts.into_iter().chain([data.len()]) {
            pieces.push(&data[from..c]);
            from = c;
        }
        let skip = skip % (data.len() + 1);
        let want = (reference(data), reference(&data[skip..]));
        for two in [false, two_lanes()] {
            let got = digests_with(&pieces, skip, two);
            assert_eq!(
                got,
                want,
                "two lanes {two}, len {}, {pieces:?}, skip {skip}",
                data.len()
            );
        }
        // The block alone, as the reader takes it when a record has no payload digest.
        let mut only = Streaming::new(true, false);
        for piece in &pieces {
            only.update(piece, Some(0));
        }
        assert_eq!(only.finish(), (Some(want.0), None));
    }

    #[test]
    fn every_length_and_offset_around_the_block_edges() {
        let data: Vec<u8> = (0..700u32).map(|i| (i * 131 + i / 7) as u8).collect();
        for len in [
            0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 129, 191, 192, 200, 513, 700,
        ] {
            for skip in [0, 1, 55, 56, 63, 64, 65, 127, 128, 200, 699, 700] {
                check(&data[..len], &[], skip);
                check(&data[..len], &[3, 64, 130], skip);
                check(&data[..len], &[0, 0, 1, 63], skip);
                check(&data[..len], &[1, 2, 64, 64, 190, 400], skip);
                check(&data[..len], &[63, 127, 191, 255], skip);
            }
        }
    }

    #[test]
    fn the_sha_extensions_are_used_where_the_cpu_has_them() {
        // On a CPU with them (the CI's and the benchmark box's), the tests above check the
        // two-lane code; elsewhere they check the fallback only, and say so.
        if !two_lanes() {
            eprintln!("NOTE: no SHA extensions on this CPU: only the one-lane fallback is tested");
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(two_lanes(), std::is_x86_feature_detected!("sha"));
    }

    #[test]
    fn known_answers() {
        // FIPS 180-2's examples: "abc", and the 56-byte message that pads into a second block.
        let (a, b) = digests(&[b"xyabc"], 2);
        assert_eq!(a, reference(b"xyabc"));
        let hex = |d: [u8; 20]| d.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(hex(b), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let m = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let (a, _) = digests(&[&m[..10], &m[10..]], 0);
        assert_eq!(hex(a), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    }

    proptest! {
        #[test]
        fn two_lanes_give_what_two_digests_give(
            data in proptest::collection::vec(any::<u8>(), 0..5000),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
            skip in any::<usize>(),
        ) {
            check(&data, &cuts, skip);
        }
    }
}
