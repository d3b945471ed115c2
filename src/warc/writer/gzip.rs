//! The gzip members of a `.warc.gz` file, one per record: libdeflate, which compresses a whole
//! buffer at once (faster than a streaming zlib at every level for records compressed whole,
//! docs/BENCHMARKS.md, "WARC compression"), and at the default level the small records'
//! prebuilt code ([`super::small`]), which skips libdeflate's per-member set-up.
//!
//! libdeflate takes a record whole, so a record given in pieces (its header, the HTTP head, the
//! body, its end) is first copied into one buffer. A body read into a buffer with room in front
//! of it ([`Room`], which the fetch's bodies have) is not: the header and the HTTP head are
//! written into that room and the record is compressed where it lies. On the peer web that is
//! ~20 KB a page not copied, and not pulled through the cache a second time.
//!
//! libdeflate is built from `vendor/libdeflate-sys`, whose level-1 hash table is 16 KiB
//! instead of 128 KiB: libdeflate clears that table for every member, so at 128 KiB clearing it
//! was most of the memory a ~20 KB record's compression touched (vendor/README.md).

use super::small::{SmallGzip, SMALL_RECORD};
use super::KEEP_BUFFER;

/// Makes one gzip member per record, reusing its compressors and buffers.
pub struct GzipMembers {
    gz: libdeflater::Compressor,
    /// At the default level only: a level asked for is libdeflate's for every record.
    small: Option<SmallGzip>,
    /// A record's pieces one after the other, for libdeflate, which compresses whole buffers.
    plain: Vec<u8>,
    packed: Vec<u8>,
}

impl GzipMembers {
    /// Members at libdeflate's `level` (0..=12), `None` if there is no such level.
    /// [`super::GZIP_LEVEL`], the default, sends small records to the prebuilt code.
    pub fn new(level: i32) -> Option<GzipMembers> {
        let l = libdeflater::CompressionLvl::new(level).ok()?;
        Some(GzipMembers {
            gz: libdeflater::Compressor::new(l),
            small: (level == super::GZIP_LEVEL).then(SmallGzip::new),
            plain: Vec::new(),
            packed: Vec::new(),
        })
    }

    /// `pieces`, one after the other, as one gzip member. For libdeflate, which takes its
    /// input whole, the pieces are copied into one buffer first (a copy costs a small fraction
    /// of compressing it), and the member is made in a buffer that only grows (to the bound of
    /// the largest record), so it is not zeroed again for every record. A record of at most
    /// 2,048 bytes (`SMALL_RECORD`) goes to the prebuilt code, if it fits it.
    pub fn member(&mut self, pieces: &[&[u8]]) -> std::io::Result<&[u8]> {
        self.shrink();
        let plain = &mut self.plain;
        plain.clear();
        for p in pieces {
            plain.extend_from_slice(p);
        }
        compress(&mut self.gz, self.small.as_mut(), &mut self.packed, plain)
    }

    /// The record `front` pieces, `room`'s body, then `back`, as one gzip member, as
    /// [`GzipMembers::member`] makes it, compressed where the body lies: `front` is written
    /// into the room in front of the body and `back` after it. `None` if
    /// `front` does not fit in the room: the caller copies the pieces ([`GzipMembers::member`]).
    pub fn member_in_place(
        &mut self,
        front: [&[u8]; 2],
        room: &mut Room<'_>,
        back: &[u8],
    ) -> Option<std::io::Result<&[u8]>> {
        let [a, b] = front;
        let from = room.at.checked_sub(a.len() + b.len())?;
        self.shrink();
        let buf = &mut *room.buf;
        buf[from..from + a.len()].copy_from_slice(a);
        buf[from + a.len()..room.at].copy_from_slice(b);
        let to = room.end + back.len();
        if buf.len() < to {
            buf.resize(to, 0);
        }
        buf[room.end..to].copy_from_slice(back);
        let member = compress(
            &mut self.gz,
            self.small.as_mut(),
            &mut self.packed,
            &buf[from..to],
        );
        Some(member)
    }

    /// Gives back the memory of a record bigger than [`KEEP_BUFFER`].
    fn shrink(&mut self) {
        for buf in [&mut self.packed, &mut self.plain] {
            if buf.capacity() > KEEP_BUFFER {
                buf.clear();
                buf.shrink_to(KEEP_BUFFER);
            }
        }
    }
}

/// `whole` as one gzip member in `out`: by the prebuilt code if there is one (`small`) and the
/// record is small and fits it, else by libdeflate.
fn compress<'o>(
    gz: &mut libdeflater::Compressor,
    small: Option<&'o mut SmallGzip>,
    out: &'o mut Vec<u8>,
    whole: &[u8],
) -> std::io::Result<&'o [u8]> {
    if let Some(small) = small.filter(|_| whole.len() <= SMALL_RECORD) {
        if let Some(member) = small.member(whole) {
            return Ok(member);
        }
    }
    let bound = gz.gzip_compress_bound(whole.len());
    if out.len() < bound {
        out.resize(bound, 0);
    }
    let n = gz
        .gzip_compress(whole, out)
        .map_err(|e| std::io::Error::other(format!("libdeflate: {e:?}")))?;
    Ok(&out[..n])
}

/// A record's body where it lies: `buf[at..end]`, with `at` bytes before it that the writer
/// may overwrite (the header and the HTTP head of the record go there) and the bytes after it
/// too (the record's end; `buf` grows if it has fewer than four). The body itself is left as
/// it was. The fetch's bodies come this way (`crate::fetch::client::Body`).
pub struct Room<'a> {
    buf: &'a mut Vec<u8>,
    at: usize,
    end: usize,
}

impl std::fmt::Debug for Room<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room")
            .field("room", &self.at)
            .field("body", &self.body().len())
            .finish()
    }
}

impl<'a> Room<'a> {
    /// The body `buf[at..end]`, with the rest of `buf` free to overwrite.
    ///
    /// # Panics
    /// If `at..end` is not inside `buf`.
    pub fn new(buf: &'a mut Vec<u8>, at: usize, end: usize) -> Room<'a> {
        assert!(
            at <= end && end <= buf.len(),
            "a body lies inside its buffer"
        );
        Room { buf, at, end }
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.buf[self.at..self.end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::path::Path;

    /// The libdeflate built is vendor/libdeflate-sys, whose level-1 hash table has 2^12
    /// buckets, not 2^15 (vendor/README.md): the lock file takes the crate from there (cargo
    /// ignores a `[patch]` whose version no longer matches the dependency, with only a
    /// warning), and the header there says 12.
    #[test]
    fn libdeflate_is_the_vendored_copy_with_the_small_table() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
        let entry = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"libdeflate-sys\""))
            .expect("libdeflate-sys in Cargo.lock");
        assert!(
            !entry.contains("source ="),
            "libdeflate-sys comes from a registry, not vendor/ (update the vendored copy to \
             the version libdeflater wants, vendor/README.md):{entry}"
        );
        let header = root.join("vendor/libdeflate-sys/libdeflate/lib/ht_matchfinder.h");
        let header = std::fs::read_to_string(header).unwrap();
        assert!(
            header
                .lines()
                .any(|l| l.trim_end() == "#define HT_MATCHFINDER_HASH_ORDER\t12"),
            "the vendored ht_matchfinder.h lost its patch (vendor/README.md)"
        );
    }

    /// Small and large records, text or not, at the default level and another: each member
    /// reads back, and only the default level's small text records skip libdeflate.
    #[test]
    fn every_member_reads_back_whatever_took_it() {
        let text =
            b"WARC/1.1\r\nWARC-Type: request\r\nContent-Length: 0\r\n\r\n\r\n\r\n".repeat(60);
        let binary: Vec<u8> = (0..SMALL_RECORD as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        for level in [super::super::GZIP_LEVEL, 6] {
            let mut g = GzipMembers::new(level).unwrap();
            for (data, small) in [
                (&text[..200], true),
                (&text[..], false),
                (&binary[..], false),
                (&b""[..], true),
            ] {
                let member = g
                    .member(&[&data[..data.len() / 2], &data[data.len() / 2..]])
                    .unwrap()
                    .to_vec();
                let mut back = Vec::new();
                flate2::read::GzDecoder::new(&member[..])
                    .read_to_end(&mut back)
                    .unwrap();
                assert_eq!(back, data);
                let prebuilt = (data.len() <= SMALL_RECORD)
                    .then(|| SmallGzip::new().member(data).map(<[u8]>::to_vec))
                    .flatten();
                let default = level == super::super::GZIP_LEVEL;
                assert_eq!(
                    prebuilt.as_ref() == Some(&member),
                    small && default,
                    "{level} {}",
                    data.len()
                );
            }
        }
        assert!(GzipMembers::new(13).is_none());
    }

    /// A record compressed where its body lies is the member its pieces make, and the body's
    /// buffer ends as it was; a room too small for the front is left alone (`None`).
    #[test]
    fn in_place_is_the_member_of_the_pieces() {
        let head = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99\r\n\r\n";
        let http = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n";
        let front = head.len() + http.len();
        for body_len in [0, 100, SMALL_RECORD, 30_000] {
            let body: Vec<u8> = (0..body_len).map(|i| b"<p>page text "[i % 13]).collect();
            for level in [super::super::GZIP_LEVEL, 6] {
                let mut g = GzipMembers::new(level).unwrap();
                let want = g
                    .member(&[head, http, &body, b"\r\n\r\n"])
                    .unwrap()
                    .to_vec();
                for (room, after) in [
                    (0, 0),
                    (front - 1, 9),
                    (front, 0),
                    (front + 7, 2),
                    (front, 50),
                ] {
                    let mut buf = vec![0xEE; room];
                    buf.extend_from_slice(&body);
                    buf.resize(room + body_len + after, 0xDD);
                    let mut r = Room::new(&mut buf, room, room + body_len);
                    let got = g
                        .member_in_place([head, http], &mut r, b"\r\n\r\n")
                        .map(|m| m.unwrap().to_vec());
                    assert_eq!(r.body(), &body[..]);
                    if room < front {
                        assert_eq!(got, None, "{body_len} {room}");
                        assert!(buf[..room].iter().all(|&b| b == 0xEE));
                    } else {
                        assert_eq!(got.as_ref(), Some(&want), "{body_len} {level} {room}");
                        assert_eq!(buf.len(), room + body_len + after.max(4));
                    }
                }
            }
        }
    }
}
