//! Gzip members of small records, without a compressor's per-member set-up.
//!
//! A `.warc.gz` file is one gzip member per record (WARC 1.1, annex D), and half of a crawl's
//! records are small: a request record is ~700 bytes. libdeflate spends ~9 µs on such a member
//! on the reference box (docs/BENCHMARKS.md, "2026-11-29 (third session)"), most of it set-up
//! that does not depend on the input: it clears its hash table (128 KiB then, 16 KiB as built
//! from `vendor/` now) and builds, sizes and compares Huffman codes for every member. At ~75
//! MB/s that is a third of its speed on a page's response record, and a few percent of a whole
//! crawl's CPU.
//!
//! A small record is compressed here instead, into one final deflate block (RFC 1951) whose
//! Huffman codes are **built once**: from the symbols of a sample of the records this path
//! takes ([`SAMPLE`]: a request record, a redirect's and an error page's response), every
//! symbol counted at least once so that any input can be coded. The block's header (the code
//! lengths, RLE-coded, §3.2.7) is the same for every member, so it is rendered once too and
//! copied. Matches are found greedily through a 2 KiB hash table, kept between members (its
//! slots are offset by a base that grows from member to member, so that what earlier members
//! left reads as empty: [`Positions`]); the gzip frame (RFC 1952) carries the CRC-32 from
//! `crc32fast`.
//! What comes out is an ordinary gzip member, read by every reader (zlib, warcio, pywb,
//! cdxj-indexer, our own) as libdeflate's are. On the peer web's small records it takes a
//! quarter of libdeflate's instructions (~21k against ~80k a record) and comes out 6% larger
//! (0.736 of the input against 0.697): +0.5% on the whole archive.
//!
//! A record this code does not fit (one that comes out no smaller than it went in: binary
//! data, another alphabet) is left to libdeflate ([`SmallGzip::member`] says `None`), as are
//! records longer than [`SMALL_RECORD`], whose own dynamic codes pay for their set-up.

use std::sync::OnceLock;

/// The longest record compressed here; longer ones go to libdeflate. Request records, redirects
/// and error pages are under it; a page's response record is far over it.
pub(super) const SMALL_RECORD: usize = 2048;

/// log2 of the hash table's size: 4,096 slots of two bytes, plenty for [`SMALL_RECORD`] bytes.
const HASH_BITS: u32 = 10;

/// The shortest match taken (a 4-byte hash and compare).
const MIN_MATCH: usize = 4;

/// The longest match deflate can say.
const MAX_MATCH: usize = 258;

/// Symbols of the literal/length alphabet coded (0..=285) and of the distance alphabet.
const LITLEN: usize = 286;
const DIST: usize = 30;

/// What the codes are built from: records of the kinds this path compresses.
const SAMPLE: &[&[u8]] = &[
    b"WARC/1.1\r\nWARC-Type: request\r\n\
    WARC-Record-ID: <urn:uuid:75326fde-098f-4eb3-a7ae-8a7550fa664e>\r\n\
    WARC-Date: 2026-11-29T07:54:24.448223Z\r\n\
    WARC-Target-URI: https://www.example.com/docs/guide/index.html?page=2\r\n\
    WARC-IP-Address: 93.184.215.14\r\n\
    WARC-Concurrent-To: <urn:uuid:654368b6-af6d-46a2-b936-25ece7b14151>\r\n\
    WARC-Warcinfo-ID: <urn:uuid:791c7bee-1794-483d-828a-ae41feadb4d6>\r\n\
    WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n\
    WARC-Block-Digest: sha1:QHXXESAR5QRD44QHYT55H6YJQ44ZQ32G\r\n\
    Content-Type: application/http;msgtype=request\r\nContent-Length: 163\r\n\r\n\
    GET /docs/guide/index.html?page=2 HTTP/1.1\r\nHost: www.example.com\r\n\
    User-Agent: dragnet/0.1 (+https://example.org/crawler)\r\nAccept: */*\r\n\
    Accept-Encoding: gzip, deflate, br\r\n\r\n\r\n\r\n",
    b"WARC/1.1\r\nWARC-Type: response\r\n\
    WARC-Record-ID: <urn:uuid:0b3c5f5e-8f1d-4c1e-9a43-2d0f6b1e7c88>\r\n\
    WARC-Date: 2026-11-29T07:54:25.013377Z\r\n\
    WARC-Target-URI: http://example.net/Old_Page\r\nWARC-IP-Address: 2001:db8::1\r\n\
    WARC-Warcinfo-ID: <urn:uuid:791c7bee-1794-483d-828a-ae41feadb4d6>\r\n\
    WARC-Payload-Digest: sha1:LYQ4KXFJ7G2B4UQWMZ5R6N3C2H7TDV6E\r\n\
    WARC-Block-Digest: sha1:P5A2QY7MZK4NBLR3XW6J2GDTHC5UF7OE\r\n\
    Content-Type: application/http;msgtype=response\r\nContent-Length: 412\r\n\r\n\
    HTTP/1.1 301 Moved Permanently\r\nserver: nginx/1.22.1\r\n\
    date: Sun, 29 Nov 2026 07:54:25 GMT\r\ncontent-type: text/html\r\n\
    content-length: 169\r\nlocation: https://example.net/New_Page\r\nconnection: keep-alive\r\n\r\n\
    <html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n\
    <center><h1>301 Moved Permanently</h1></center>\r\n<hr><center>nginx</center>\r\n\
    </body>\r\n</html>\r\n\r\n\r\n",
    b"HTTP/1.1 404 Not Found\r\nServer: Apache\r\nLast-Modified: Tue, 03 Mar 2026 10:21:07 GMT\r\n\
    ETag: \"5d-61f8a1c2b3e40\"\r\nVary: Accept-Encoding\r\nCache-Control: max-age=3600\r\n\
    Content-Type: text/plain; charset=UTF-8\r\nX-Frame-Options: SAMEORIGIN\r\n\r\n\
    User-agent: *\nDisallow: /search\nAllow: /\nSitemap: https://www.example.com/sitemap.xml\n\
    {\"error\":\"not found\",\"path\":\"/api/v1/items?id=42&sort=desc\"} 0123456789 \
    ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz ()[]<>{};:,.!?'_-+=#%&|~^$@`\t",
];

/// Base lengths of the length symbols 257..=285 and their extra bits (RFC 1951 §3.2.5).
const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];

/// Base distances of the distance symbols 0..=29 and their extra bits.
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// `code`'s low `len` bits in reverse order: Huffman codes are packed starting with their most
/// significant bit, into a stream that is filled from each byte's least significant bit.
const fn reverse(code: u16, len: u8) -> u16 {
    let mut r = 0;
    let mut i = 0;
    while i < len {
        r |= ((code >> i) & 1) << (len - 1 - i);
        i += 1;
    }
    r
}

/// Per match length 3..=258 (index = length), its length symbol's index into [`LEN_BASE`].
const LEN_INDEX: [u8; 259] = {
    let mut t = [0u8; 259];
    let mut i = 0;
    while i < 29 {
        let end = if i + 1 < 29 {
            LEN_BASE[i + 1] as usize
        } else {
            259
        };
        let mut l = LEN_BASE[i] as usize;
        while l < end {
            t[l] = i as u8;
            l += 1;
        }
        i += 1;
    }
    t
};

/// Bits packed least significant first into whole bytes.
struct Bits<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits<'_> {
    /// Appends the low `len` bits of `v` (at most 32 at once).
    #[inline]
    fn put(&mut self, v: u32, len: u32) {
        debug_assert!(len <= 32 && (len == 32 || v >> len == 0));
        self.acc |= u64::from(v) << self.n;
        self.n += len;
        if self.n >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.n -= 32;
        }
    }

    /// Pads the last byte with zero bits and writes what is left.
    fn finish(self) {
        let bytes = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

/// A Huffman code: per symbol its code, bit-reversed for the stream, and its length.
type Code<const N: usize> = [(u16, u8); N];

/// The block's codes and its header, built once from [`SAMPLE`].
struct Codes {
    litlen: Code<LITLEN>,
    dist: Code<DIST>,
    /// The block's first bits (BFINAL, BTYPE = dynamic, the code lengths): whole bytes, then
    /// the `tail_bits` bits of `tail` left over.
    head: Vec<u8>,
    tail: u64,
    tail_bits: u32,
}

fn codes() -> &'static Codes {
    static CODES: OnceLock<Codes> = OnceLock::new();
    CODES.get_or_init(Codes::build)
}

impl Codes {
    fn build() -> Codes {
        // Symbol counts of the sample as this module parses it: every length, distance and
        // text byte at least once; bytes that are not text ([`is_text`]) have no code.
        let mut lit = [1u32; LITLEN];
        for (b, l) in lit.iter_mut().enumerate().take(256) {
            *l = u32::from(is_text(b as u8));
        }
        let mut dist = [1u32; DIST];
        let mut table = Positions::new();
        for s in SAMPLE {
            let base = table.begin(s.len());
            parse(s, &mut table.slots[..], base, |t| match t {
                Token::Literal(b) => lit[b as usize] += 1,
                Token::Copy(len, d) => {
                    lit[257 + LEN_INDEX[len] as usize] += 1;
                    dist[dist_index(d)] += 1;
                }
            });
            lit[256] += 1;
        }
        let lit_lens = code_lengths_sparse(&lit, 15);
        let dist_lens = code_lengths(&dist, 15);

        // The code lengths, run-length coded (§3.2.7): runs of zeros by symbols 17 (3-10) and
        // 18 (11-138), a length repeated 3-6 times more by symbol 16.
        let all: Vec<u8> = lit_lens.iter().chain(&dist_lens).copied().collect();
        let mut rle: Vec<(u8, u8)> = Vec::new(); // (symbol, extra bits' value)
        let mut i = 0;
        while i < all.len() {
            let same = all[i..].iter().take_while(|&&l| l == all[i]).count();
            if all[i] == 0 && same >= 3 {
                let run = same.min(138);
                rle.push(if run >= 11 {
                    (18, (run - 11) as u8)
                } else {
                    (17, (run - 3) as u8)
                });
                i += run;
                continue;
            }
            rle.push((all[i], 0));
            let again = (same - 1).min(6);
            if all[i] != 0 && again >= 3 {
                rle.push((16, (again - 3) as u8));
                i += 1 + again;
            } else {
                i += 1;
            }
        }
        let mut cl_count = [0u32; 19];
        for &(sym, _) in &rle {
            cl_count[sym as usize] += 1;
        }
        let cl_lens = code_lengths_sparse(&cl_count, 7);
        let cl_code = canonical::<19>(&cl_lens);

        let mut head = Vec::new();
        let mut bits = Bits {
            out: &mut head,
            acc: 0,
            n: 0,
        };
        // BFINAL = 1, BTYPE = 10 (dynamic codes).
        bits.put(0b101, 3);
        bits.put((LITLEN - 257) as u32, 5);
        bits.put((DIST - 1) as u32, 5);
        const ORDER: [usize; 19] = [
            16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
        ];
        let hclen = ORDER
            .iter()
            .rposition(|&s| cl_lens[s] != 0)
            .map_or(4, |p| (p + 1).max(4));
        bits.put((hclen - 4) as u32, 4);
        for &s in &ORDER[..hclen] {
            bits.put(u32::from(cl_lens[s]), 3);
        }
        for &(sym, extra) in &rle {
            let (c, l) = cl_code[sym as usize];
            bits.put(u32::from(c), u32::from(l));
            match sym {
                16 => bits.put(u32::from(extra), 2),
                17 => bits.put(u32::from(extra), 3),
                18 => bits.put(u32::from(extra), 7),
                _ => {}
            }
        }
        let (tail, tail_bits) = (bits.acc, bits.n);
        Codes {
            litlen: canonical::<LITLEN>(&lit_lens),
            dist: canonical::<DIST>(&dist_lens),
            head,
            tail,
            tail_bits,
        }
    }
}

/// The bytes the literal code has codes for: printable ASCII, tab, CR and LF, the bytes of
/// WARC and HTTP headers and of most small bodies. A record with any other byte is
/// libdeflate's; leaving the rest out keeps the block's header (the code lengths) short.
fn is_text(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~')
}

/// What the parse finds: a byte, or a copy of `len` bytes `dist` back.
#[derive(Clone, Copy)]
enum Token {
    Literal(u8),
    Copy(usize, usize),
}

/// The hash table of [`parse`], kept between members. A slot holds `base + position + 1` for
/// the member being parsed, where `base` is at least every value earlier members wrote: so
/// what they left reads as empty (a slot at most `base`), and the table is cleared only when
/// the next member's values would pass `u16::MAX` (every ~30 members of [`SMALL_RECORD`]
/// bytes, ~90 request records), not for every member: clearing it (8 KiB then) was a third of
/// the instructions of a request record's member.
struct Positions {
    slots: Box<[u16; 1 << HASH_BITS]>,
    /// The base of the next member.
    next: u16,
}

impl Positions {
    fn new() -> Positions {
        Positions {
            slots: Box::new([0; 1 << HASH_BITS]),
            next: 0,
        }
    }

    /// The base for a member of `n` bytes (at most [`SMALL_RECORD`]): its values are
    /// `base + 1 ..= base + n`, and the next member's base is `base + n`.
    fn begin(&mut self, n: usize) -> u16 {
        assert!(n <= SMALL_RECORD, "a small record only");
        if usize::from(self.next) + n > usize::from(u16::MAX) {
            self.slots.fill(0);
            self.next = 0;
        }
        let base = self.next;
        self.next += n as u16;
        base
    }
}

/// Greedy LZ77 over `data` through `table`, whose slots are empty at most `base` (the member's
/// [`Positions::begin`]): each position's 4 bytes are hashed, the last position with the same
/// hash is tried, and a match of at least [`MIN_MATCH`] bytes is taken as long as it goes.
#[inline(always)]
fn parse(data: &[u8], table: &mut [u16], base: u16, mut emit: impl FnMut(Token)) {
    let n = data.len();
    let mut i = 0;
    while i + MIN_MATCH <= n {
        let word = read_u32(data, i);
        let h = hash(word);
        // Slots hold `base` + a position + 1; at most `base` is empty.
        let cand = usize::from(table[h].saturating_sub(base));
        table[h] = base + (i + 1) as u16;
        if cand != 0 && read_u32(data, cand - 1) == word {
            let from = cand - 1;
            let most = MAX_MATCH.min(n - i);
            let mut len = MIN_MATCH;
            while len < most && data[from + len] == data[i + len] {
                len += 1;
            }
            emit(Token::Copy(len, i - from));
            // The matched positions go into the table too, for later matches.
            let end = (i + len).min(n + 1 - MIN_MATCH);
            for j in i + 1..end {
                table[hash(read_u32(data, j))] = base + (j + 1) as u16;
            }
            i += len;
        } else {
            emit(Token::Literal(data[i]));
            i += 1;
        }
    }
    for &b in &data[i..] {
        emit(Token::Literal(b));
    }
}

/// The distance symbol of `dist` (1..=32768).
#[inline]
fn dist_index(dist: usize) -> usize {
    DIST_BASE.partition_point(|&b| usize::from(b) <= dist) - 1
}

/// Huffman code lengths for `counts` (all positive), none longer than `limit`: a Huffman tree's
/// depths, with the counts halved (and kept positive) until the deepest leaf fits. A tree's
/// leaves make a complete code, as zlib requires.
fn code_lengths(counts: &[u32], limit: u8) -> Vec<u8> {
    // With all weights down to 1 the tree is as flat as it gets: it must fit then, or the
    // halving below would never end.
    assert!(
        counts.len() <= 1 << limit,
        "{} symbols in {limit} bits",
        counts.len()
    );
    let mut w: Vec<u64> = counts.iter().map(|&c| u64::from(c.max(1))).collect();
    loop {
        let depths = huffman_depths(&w);
        if depths.iter().all(|&d| d <= limit) {
            return depths;
        }
        for x in &mut w {
            *x = (*x).div_ceil(2);
        }
    }
}

/// [`code_lengths`] of the symbols with a count; the others get length 0 (unused).
fn code_lengths_sparse(counts: &[u32], limit: u8) -> Vec<u8> {
    let used: Vec<usize> = (0..counts.len()).filter(|&s| counts[s] > 0).collect();
    let mut lens = vec![0u8; counts.len()];
    let sub: Vec<u32> = used.iter().map(|&s| counts[s]).collect();
    for (&s, l) in used.iter().zip(code_lengths(&sub, limit)) {
        lens[s] = l;
    }
    lens
}

/// Depths of the leaves of a Huffman tree over weights `w` (at least two), ties broken by
/// order so the result is the same on every run.
fn huffman_depths(w: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    assert!(w.len() >= 2, "a code of at least two symbols");
    let mut parent = vec![usize::MAX; 2 * w.len() - 1];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = w
        .iter()
        .enumerate()
        .map(|(i, &x)| Reverse((x, i)))
        .collect();
    let mut next = w.len();
    while heap.len() > 1 {
        let Reverse((a, i)) = heap.pop().expect("two nodes");
        let Reverse((b, j)) = heap.pop().expect("two nodes");
        parent[i] = next;
        parent[j] = next;
        heap.push(Reverse((a + b, next)));
        next += 1;
    }
    (0..w.len())
        .map(|mut i| {
            let mut d = 0u8;
            while parent[i] != usize::MAX {
                i = parent[i];
                d += 1;
            }
            d
        })
        .collect()
}

/// The canonical code of RFC 1951 §3.2.2 for `lens`, bit-reversed for the stream.
fn canonical<const N: usize>(lens: &[u8]) -> Code<N> {
    let mut count = [0u16; 16];
    for &l in lens {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    let mut out = [(0u16, 0u8); N];
    for (s, &l) in lens.iter().enumerate() {
        if l != 0 {
            out[s] = (reverse(next[l as usize], l), l);
            next[l as usize] += 1;
        }
    }
    out
}

/// A reusable small-record compressor: its hash table and output buffer, kept between members.
pub(super) struct SmallGzip {
    table: Positions,
    out: Vec<u8>,
    codes: &'static Codes,
}

impl SmallGzip {
    pub(super) fn new() -> SmallGzip {
        SmallGzip {
            table: Positions::new(),
            out: Vec::new(),
            codes: codes(),
        }
    }

    /// `data` (at most [`SMALL_RECORD`] bytes) as one gzip member, or `None` if the code does
    /// not fit it: a byte without a code (not text), or the coded bytes longer than `data`
    /// (beyond the few bits of the block's end).
    /// libdeflate, which can also store a member, has those.
    pub(super) fn member(&mut self, data: &[u8]) -> Option<&[u8]> {
        assert!(data.len() <= SMALL_RECORD, "a small record only");
        let c = self.codes;
        let out = &mut self.out;
        out.clear();
        // RFC 1952 §2.3: ID1 ID2, CM = deflate, no flags, no mtime, XFL = fastest, OS unknown
        // (the header libdeflate writes at its fastest levels).
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);
        out.extend_from_slice(&c.head);
        let start = out.len();
        let mut bits = Bits {
            out,
            acc: c.tail,
            n: c.tail_bits,
        };
        let mut uncoded = false;
        let base = self.table.begin(data.len());
        parse(
            data,
            &mut self.table.slots[..],
            base,
            #[inline(always)]
            |t| match t {
                Token::Literal(b) => {
                    let (code, len) = c.litlen[b as usize];
                    uncoded |= len == 0;
                    bits.put(u32::from(code), u32::from(len));
                }
                Token::Copy(len, dist) => {
                    let li = LEN_INDEX[len] as usize;
                    let (code, clen) = c.litlen[257 + li];
                    let extra = len as u32 - u32::from(LEN_BASE[li]);
                    bits.put(
                        u32::from(code) | (extra << clen),
                        u32::from(clen) + u32::from(LEN_EXTRA[li]),
                    );
                    let di = dist_index(dist);
                    let (code, dlen) = c.dist[di];
                    let extra = dist as u32 - u32::from(DIST_BASE[di]);
                    bits.put(
                        u32::from(code) | (extra << dlen),
                        u32::from(dlen) + u32::from(DIST_EXTRA[di]),
                    );
                }
            },
        );
        // End of block.
        let (code, len) = c.litlen[256];
        bits.put(u32::from(code), u32::from(len));
        bits.finish();
        // (The header's last bits and the end of block are a few bytes more than any data.)
        if uncoded || out.len() - start > data.len() + 8 {
            return None;
        }
        out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        Some(&out[..])
    }
}

#[inline]
fn read_u32(data: &[u8], i: usize) -> u32 {
    let w: [u8; 4] = data[i..i + 4].try_into().expect("four bytes");
    u32::from_le_bytes(w)
}

#[inline]
fn hash(word: u32) -> usize {
    (word.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut d = flate2::read::GzDecoder::new(member);
        let mut out = Vec::new();
        d.read_to_end(&mut out).expect("a valid gzip member");
        // One member, nothing after it.
        assert!(d.into_inner().is_empty(), "trailing bytes after the member");
        out
    }

    /// The member of `data`, read back; its length, or `None` if it was not made.
    fn round_trip(data: &[u8]) -> Option<usize> {
        let mut z = SmallGzip::new();
        let out = z.member(data)?;
        assert_eq!(gunzip(out), data, "{} bytes", data.len());
        Some(out.len())
    }

    /// A request record as the fetch stage writes it (not the sample's).
    const REQUEST: &[u8] = b"WARC/1.1\r\nWARC-Type: request\r\n\
        WARC-Record-ID: <urn:uuid:1e0a3c6f-2b7d-4f4e-b1a9-5c2d8e7f9a10>\r\n\
        WARC-Date: 2026-11-30T01:02:03.000004Z\r\n\
        WARC-Target-URI: http://h0003.peer.test:8081/robots.txt\r\n\
        WARC-IP-Address: 127.0.1.4\r\n\
        WARC-Concurrent-To: <urn:uuid:654368b6-af6d-46a2-b936-25ece7b14151>\r\n\
        Content-Type: application/http;msgtype=request\r\nContent-Length: 130\r\n\r\n\
        GET /robots.txt HTTP/1.1\r\nHost: h0003.peer.test:8081\r\nUser-Agent: dragnet/0.1\r\n\
        Accept: */*\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n\r\n\r\n";

    /// The codes are complete (Kraft's sum is exactly 1, as zlib requires of every code but a
    /// one-symbol distance code), within deflate's limits, and cover every text byte, the end
    /// of block, every length and every distance; bytes that are not text have no code.
    #[test]
    fn the_codes_are_complete_and_cover_every_symbol() {
        let c = codes();
        fn kraft(lens: impl Iterator<Item = u8>) -> f64 {
            lens.filter(|&l| l > 0)
                .map(|l| 0.5f64.powi(i32::from(l)))
                .sum()
        }
        let lit: Vec<u8> = c.litlen.iter().map(|x| x.1).collect();
        for (s, &l) in lit.iter().enumerate() {
            let coded = s > 255 || is_text(s as u8);
            assert_eq!(coded, (1..=15).contains(&l), "symbol {s}: length {l}");
        }
        let dist: Vec<u8> = c.dist.iter().map(|x| x.1).collect();
        assert!(dist.iter().all(|&l| (1..=15).contains(&l)), "{dist:?}");
        assert_eq!(kraft(lit.into_iter()), 1.0);
        assert_eq!(kraft(dist.into_iter()), 1.0);
        assert!(huffman_depths(&[1, 1]) == [1, 1]);
        // Counts so skewed that the tree is deeper than the limit are flattened into it.
        let fib: Vec<u32> = (0..30)
            .scan((1u32, 1u32), |s, _| {
                *s = (s.1, s.0 + s.1);
                Some(s.0)
            })
            .collect();
        let lens = code_lengths(&fib, 7);
        assert!(lens.iter().all(|&l| (1..=7).contains(&l)), "{lens:?}");
        assert_eq!(kraft(lens.into_iter()), 1.0);
    }

    #[test]
    fn members_read_back_with_zlib() {
        for data in [
            &b""[..],
            b"a",
            b"abc",
            b"abcd",
            b"abcdabcd",
            &[b' '; 300],
            &[b'~'; SMALL_RECORD],
            REQUEST,
        ] {
            assert!(round_trip(data).is_some(), "{data:?}");
        }
        // A byte that is not text: refused.
        assert_eq!(round_trip(b"caf\xc3\xa9"), None);
        assert_eq!(round_trip(&[0u8; 300]), None);
        let text: Vec<u8> = (0..=255).filter(|&b| is_text(b)).collect();
        assert!(round_trip(&text).is_some());
        // Matches of every length up to the longest and past it, at many distances.
        let mut v = Vec::new();
        for len in 3..300 {
            v.clear();
            v.extend((0..len).map(|i| b'a' + (i % 26) as u8));
            v.extend_from_within(..);
            v.truncate(SMALL_RECORD);
            assert!(round_trip(&v).is_some(), "{len}");
        }
        // Far matches, up to the longest record.
        let mut v: Vec<u8> = (0..SMALL_RECORD / 2)
            .map(|i| b'0' + (i * 7 % 75) as u8)
            .collect();
        v.extend_from_within(..SMALL_RECORD / 2);
        assert!(round_trip(&v).is_some());
    }

    /// The table kept between members does not leak positions of one member into the next.
    #[test]
    fn a_reused_compressor_starts_each_member_afresh() {
        let mut z = SmallGzip::new();
        let first = z.member(REQUEST).unwrap().to_vec();
        let other = &REQUEST[..REQUEST.len() / 2];
        let second = z.member(other).unwrap().to_vec();
        assert_eq!(gunzip(&second), other);
        assert_eq!(Some(&second[..]), SmallGzip::new().member(other));
        assert_eq!(z.member(REQUEST), Some(&first[..]));
    }

    /// Members past the point where the table's base wraps (and the table is cleared) come
    /// out as a fresh compressor makes them.
    #[test]
    fn members_across_the_tables_wrap_are_made_afresh() {
        let mut z = SmallGzip::new();
        let long: Vec<u8> = (0..SMALL_RECORD)
            .map(|i| b'a' + (i * 13 % 26) as u8)
            .collect();
        let inputs: [&[u8]; 3] = [REQUEST, &long, &REQUEST[..REQUEST.len() / 3]];
        let mut cleared = 0;
        for k in 0..200 {
            let data = inputs[k % 3];
            let before = z.table.next;
            let got = z.member(data).map(<[u8]>::to_vec);
            cleared += usize::from(z.table.next < before);
            assert_eq!(got.as_deref(), SmallGzip::new().member(data), "member {k}");
        }
        assert!(cleared >= 2, "the base wrapped {cleared} times");
    }

    /// About as small as libdeflate's own dynamic codes make a request record.
    #[test]
    fn a_request_record_compresses_about_as_well_as_libdeflate() {
        let n = round_trip(REQUEST).unwrap();
        let mut gz = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).unwrap());
        let mut out = vec![0; gz.gzip_compress_bound(REQUEST.len())];
        let theirs = gz.gzip_compress(REQUEST, &mut out).unwrap();
        assert!(
            n * 100 <= theirs * 110,
            "{n} bytes against libdeflate's {theirs}"
        );
    }

    /// `data` made into a member that reads back, or refused for a reason: a byte that is not
    /// text, or coded longer than it is.
    fn made_or_rightly_refused(data: &[u8]) -> bool {
        if round_trip(data).is_some() {
            return true;
        }
        let mut z = SmallGzip::new();
        let _ = z.member(data);
        !data.iter().all(|&b| is_text(b)) || z.out.len() > data.len()
    }

    proptest::proptest! {
        #[test]
        fn any_small_input_reads_back_or_is_rightly_refused(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..SMALL_RECORD),
            alphabet in 1u8..=95,
        ) {
            proptest::prop_assert!(made_or_rightly_refused(&data));
            // Text over narrow alphabets (many matches) and wide ones.
            let text: Vec<u8> = data.iter().map(|b| b' ' + b % alphabet).collect();
            proptest::prop_assert!(made_or_rightly_refused(&text));
        }
    }
}
