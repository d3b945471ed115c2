//! `WARC-Block-Digest` and `WARC-Payload-Digest` values: `sha1:` followed by the RFC 4648 base32
//! of the 20-byte SHA-1, as warcio, Heritrix and Common Crawl write them.
//!
//! What is hashed (warcio's rule, which we follow when writing and when verifying): the block
//! digest covers the whole record block; the payload digest covers the bytes after the HTTP
//! header block (the first line that is empty or only whitespace) for request, response and
//! revisit records with an http(s) target, and the whole block otherwise. The payload is hashed
//! as stored: still chunked and content-encoded if the server sent it so. Revisit payload digests
//! name the earlier capture's payload and are therefore never checked against the block.
//!
//! Reading, we accept what warcio accepts: base32 (any case), base16 (hex) and base64 digests;
//! algorithms other than SHA-1 are reported as unchecked rather than bad.

use std::fmt;

mod two;

pub(crate) use two::Streaming;

/// A running SHA-1 over a block or payload. RustCrypto's `sha1` uses the CPU's SHA extensions
/// when it has them (detected at run time): every fetched byte is hashed twice (block and
/// payload digest), and the portable `sha1_smol` was the largest item of the fetch stage's
/// profile (docs/BENCHMARKS.md).
#[derive(Clone, Default)]
pub struct Sha1Digest(sha1::Sha1);

impl Sha1Digest {
    /// A fresh digest.
    pub fn new() -> Sha1Digest {
        Sha1Digest(sha1::Sha1::default())
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        sha1::Digest::update(&mut self.0, bytes);
    }

    /// The raw 20 bytes.
    pub fn bytes(&self) -> [u8; 20] {
        sha1::Digest::finalize(self.0.clone()).into()
    }

    /// The header value: `sha1:` + base32.
    pub fn value(&self) -> String {
        value_of(&self.bytes())
    }

    /// The header value of the SHA-1 of `bytes`.
    pub fn of(bytes: &[u8]) -> String {
        let mut d = Sha1Digest::new();
        d.update(bytes);
        d.value()
    }
}

/// The header value of a SHA-1: `sha1:` + base32.
fn value_of(sha1: &[u8; 20]) -> String {
    let mut out = String::with_capacity(5 + 32);
    out.push_str("sha1:");
    push_base32(&mut out, sha1);
    out
}

impl fmt::Debug for Sha1Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.value())
    }
}

/// The outcome of checking one digest header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestCheck {
    /// The header is present and matches.
    Ok,
    /// The header is present and does not match.
    Bad {
        /// The header's value.
        expected: String,
        /// What the bytes hash to (`sha1:` base32).
        actual: String,
    },
    /// The record has no such header.
    Absent,
    /// Present but not checked: verification was off, the algorithm is not SHA-1, the value is
    /// not decodable, or it is a revisit's payload digest (which names another record's payload).
    Unchecked,
}

impl DigestCheck {
    /// `ok`, `bad`, `absent` or `unchecked`, for listings.
    pub fn as_str(&self) -> &'static str {
        match self {
            DigestCheck::Ok => "ok",
            DigestCheck::Bad { .. } => "bad",
            DigestCheck::Absent => "absent",
            DigestCheck::Unchecked => "unchecked",
        }
    }

    /// Whether this is a mismatch.
    pub fn is_bad(&self) -> bool {
        matches!(self, DigestCheck::Bad { .. })
    }
}

/// Compares a digest header value with the 20 bytes of a computed SHA-1.
pub fn check(header: &str, computed: &[u8; 20]) -> DigestCheck {
    match decode_sha1(header) {
        Some(expected) if expected == *computed => DigestCheck::Ok,
        Some(_) => DigestCheck::Bad {
            expected: header.trim().to_owned(),
            actual: value_of(computed),
        },
        None => DigestCheck::Unchecked,
    }
}

/// The 20 bytes of a `sha1:` digest value in base32, base16 or base64; `None` for another
/// algorithm or an undecodable value.
pub fn decode_sha1(value: &str) -> Option<[u8; 20]> {
    let (algo, v) = value.trim().split_once(':')?;
    if !algo.trim().eq_ignore_ascii_case("sha1") && !algo.trim().eq_ignore_ascii_case("sha-1") {
        return None;
    }
    let v = v.trim();
    let bytes = match v.len() {
        32 => unbase32(v)?,
        40 => unhex(v)?,
        27 | 28 => unbase64(v)?,
        _ => return None,
    };
    bytes.try_into().ok()
}

const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// RFC 4648 base32 with padding.
pub fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    push_base32(&mut out, bytes);
    out
}

/// [`base32`] of `bytes`, appended to `out`.
fn push_base32(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(B32[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

fn unbase32(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 5 / 8);
    let (mut acc, mut bits) = (0u64, 0u32);
    for c in s.bytes() {
        let v = B32.iter().position(|&b| b == c.to_ascii_uppercase())? as u64;
        acc = (acc << 5) | v;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn unbase64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Finds where the payload starts in a block that begins with an HTTP header block, fed in
/// pieces: the end of the first line that is empty or only whitespace (warcio strips lines
/// before testing them for emptiness).
#[derive(Clone, Debug, Default)]
pub struct HeadScan {
    line_blank: bool,
    in_line: bool,
    done: bool,
}

impl HeadScan {
    /// A scanner at the start of a block.
    pub fn new() -> HeadScan {
        HeadScan::default()
    }

    /// Whether the header block has ended.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Feeds the next bytes; returns the index just past the header block's last line end if it
    /// ends within `bytes`.
    pub fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        if self.done {
            return Some(0);
        }
        // Line by line (`memchr`), each line looked at up to its first byte that is not
        // whitespace: a header line's first.
        let mut at = 0;
        while at < bytes.len() {
            if !self.in_line {
                self.in_line = true;
                self.line_blank = true;
            }
            let end = memchr::memchr(b'\n', &bytes[at..]).map(|i| at + i);
            let line = &bytes[at..end.unwrap_or(bytes.len())];
            if self.line_blank
                && !line
                    .iter()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c'))
            {
                self.line_blank = false;
            }
            let end = end?;
            if self.line_blank {
                self.done = true;
                return Some(end + 1);
            }
            self.in_line = false;
            at = end + 1;
        }
        None
    }
}

/// The block and payload digests of a whole block held in memory, in pieces that follow one
/// another (`http`: the block starts with an HTTP header block, see the module docs). The
/// payload digest is `None` when `http` is set and the header block never ends. Both are taken
/// in one pass over the bytes ([`two`]).
pub fn block_and_payload(block: &[&[u8]], http: bool) -> (String, Option<String>) {
    let start = http.then(|| {
        let mut scan = HeadScan::new();
        let mut offset = 0;
        block.iter().find_map(|piece| {
            let end = scan.feed(piece).map(|i| offset + i);
            offset += piece.len();
            end
        })
    });
    match start.flatten() {
        Some(start) => {
            let (whole, payload) = two::digests(block, start);
            (value_of(&whole), Some(value_of(&payload)))
        }
        None => {
            let mut whole = Sha1Digest::new();
            for piece in block {
                whole.update(piece);
            }
            let whole = whole.value();
            // Not an HTTP block: the payload is the block.
            let payload = (!http).then(|| whole.clone());
            (whole, payload)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_python() {
        // python3 -c "import base64,hashlib; print(base64.b32encode(hashlib.sha1(b'').digest()))"
        assert_eq!(Sha1Digest::of(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(base32(b"f"), "MY======");
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI======");
    }

    #[test]
    fn decodes_all_encodings() {
        let d = Sha1Digest::of(b"abc");
        let raw = {
            let mut s = Sha1Digest::new();
            s.update(b"abc");
            s.bytes()
        };
        assert_eq!(decode_sha1(&d), Some(raw));
        assert_eq!(
            decode_sha1("sha1:a9993e364706816aba3e25717850c26c9cd0d89d"),
            Some(raw)
        );
        assert_eq!(decode_sha1("sha1:qZk+NkcGgWq6PiVxeFDCbJzQ2J0="), Some(raw));
        assert_eq!(decode_sha1(&d.to_lowercase()), Some(raw));
        assert_eq!(decode_sha1("md5:xyz"), None);
        assert_eq!(decode_sha1("sha1:!!"), None);
        let mut s = Sha1Digest::new();
        s.update(b"abc");
        assert_eq!(check(&d, &s.bytes()), DigestCheck::Ok);
        assert!(check(&Sha1Digest::of(b"x"), &s.bytes()).is_bad());
    }

    #[test]
    fn head_scan_finds_blank_line_in_pieces() {
        let block = b"HTTP/1.1 200 OK\r\nA: b\r\n \r\nbody";
        for split in 0..block.len() {
            let mut s = HeadScan::new();
            let at = s
                .feed(&block[..split])
                .or_else(|| s.feed(&block[split..]).map(|i| i + split));
            assert_eq!(at, Some(block.len() - 4), "split {split}");
        }
        assert_eq!(HeadScan::new().feed(b"\r\nx"), Some(2));
        assert_eq!(HeadScan::new().feed(b"HTTP/1.1 200\nA: b\n\nx"), Some(19));
        assert_eq!(HeadScan::new().feed(b"HTTP/1.1 200\r\nA: b\r\n"), None);
    }

    /// warcio's rule byte by byte: the end of the first line that is empty or only whitespace.
    fn header_end(block: &[u8]) -> Option<usize> {
        let mut blank = true;
        for (i, &b) in block.iter().enumerate() {
            if b == b'\n' {
                if blank {
                    return Some(i + 1);
                }
                blank = true;
            } else if !matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c') {
                blank = false;
            }
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn head_scan_in_pieces_finds_what_a_byte_by_byte_scan_finds(
            block in proptest::collection::vec(
                proptest::sample::select(b"a \t\r\n\x0b".to_vec()), 0..120),
            cut_a in 0usize..121,
            cut_b in 0usize..121,
        ) {
            let (a, b) = (cut_a.min(block.len()), cut_b.min(block.len()));
            let (a, b) = (a.min(b), a.max(b));
            let mut scan = HeadScan::new();
            let mut found = None;
            for (from, to) in [(0, a), (a, b), (b, block.len())] {
                if let Some(i) = scan.feed(&block[from..to]) {
                    found = Some(from + i);
                    break;
                }
            }
            proptest::prop_assert_eq!(found, header_end(&block));
        }
    }
}
