//! Where a zstd frame ends, from its headers alone (RFC 8878, section 3.1): the frame header,
//! then each block's 3-byte header, whose size says how far its payload goes, then the optional
//! checksum. Nothing is decompressed, so finding the end of a frame costs a few small reads and
//! seeks, whatever it holds. `dragnet index` uses it to skip a `.warc.zst` record's block once
//! the WARC and HTTP headers it needs are read ([`super::reader::Record::skip`]).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};

/// Magic of a zstd frame (`0xFD2FB528`, little-endian).
const MAGIC: u32 = 0xFD2F_B528;
/// The largest block: `Block_Maximum_Size` is at most 128 KiB.
const MAX_BLOCK: u64 = 128 << 10;

/// The longest zstd frame header: magic 4, descriptor 1, window 1, dictionary ID 4, content
/// size 8.
pub const MAX_HEADER: usize = 18;

/// The `Dictionary_ID` a zstd frame header names, from the frame's first bytes (`head`, at least
/// its header: [`MAX_HEADER`] bytes, or all the frame has): `Some(0)` when it names none, `None`
/// when `head` is not the start of a zstd frame or is cut inside the field.
pub fn dictionary_id(head: &[u8]) -> Option<u32> {
    if head.len() < 5 || u32::from_le_bytes([head[0], head[1], head[2], head[3]]) != MAGIC {
        return None;
    }
    let d = Descriptor::of(head[4]);
    let at = 5 + d.window_len;
    let field = head.get(at..at + d.dict_len)?;
    let mut v = [0u8; 4];
    v[..d.dict_len].copy_from_slice(field);
    Some(u32::from_le_bytes(v))
}

/// What a frame header's descriptor byte says of the fields after it (RFC 8878, 3.1.1.1.1).
struct Descriptor {
    /// Bytes of `Window_Descriptor` (none in a single-segment frame).
    window_len: usize,
    /// Bytes of `Dictionary_ID`.
    dict_len: usize,
    /// Bytes of `Frame_Content_Size`.
    fcs_len: usize,
    /// Whether the frame ends with a `Content_Checksum`.
    checksum: bool,
    /// The reserved bit, which must be 0.
    reserved: bool,
}

impl Descriptor {
    fn of(fhd: u8) -> Descriptor {
        let single_segment = fhd & 0x20 != 0;
        Descriptor {
            window_len: usize::from(!single_segment),
            dict_len: [0, 1, 2, 4][usize::from(fhd & 0x03)],
            fcs_len: match (fhd >> 6, single_segment) {
                (0, false) => 0,
                (0, true) => 1,
                (1, _) => 2,
                (2, _) => 4,
                _ => 8,
            },
            checksum: fhd & 0x04 != 0,
            reserved: fhd & 0x08 != 0,
        }
    }
}

/// What a frame's headers say about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Bytes of the frame in the file, from its magic to its end (checksum included).
    pub len: u64,
    /// `Frame_Content_Size`, the decompressed size, when the header has it (never for a
    /// skippable frame).
    pub content_size: Option<u64>,
    /// Whether the frame ends with a `Content_Checksum`.
    pub checksum: bool,
    /// A skippable frame (magic `0x184D2A50..=0x184D2A5F`): `len` is 8 plus its size.
    pub skippable: bool,
}

/// Reads the frame (zstd or skippable) that starts at the current position of `r`, which is
/// `offset` in `path` (both only for errors), through its headers, leaving `r` at its end.
/// A frame cut short, a bad magic, a reserved bit or block type and a block over 128 KiB are
/// [`Error::Corrupt`] naming `path` and `offset`.
pub fn frame_len<R: Read + Seek>(r: &mut R, path: &Path, offset: u64) -> Result<Frame> {
    let mut w = Walk { r, path, offset };
    let mut magic = [0; 4];
    w.read(&mut magic, "magic number")?;
    let magic = u32::from_le_bytes(magic);
    if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
        return w.skippable();
    }
    if magic != MAGIC {
        return Err(w.bad(format!(
            "not a zstd frame: magic {:02x?}",
            magic.to_le_bytes()
        )));
    }
    let (header_len, content_size, checksum) = w.header()?;
    let mut len = w.blocks(header_len)?;
    if checksum {
        w.read(&mut [0; 4], "checksum")?;
        len += 4;
    }
    Ok(Frame {
        len,
        content_size,
        checksum,
        skippable: false,
    })
}

/// A walk through one frame's headers in `r`; errors name `path` and the frame's `offset`.
struct Walk<'a, R> {
    r: &'a mut R,
    path: &'a Path,
    offset: u64,
}

impl<R: Read + Seek> Walk<'_, R> {
    fn bad(&self, reason: String) -> Error {
        Error::corrupt(self.path, self.offset, reason)
    }

    /// Fills `buf`: an I/O error from the OS stays one; an end of input is a truncated frame.
    fn read(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        self.r.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                self.bad(format!("zstd frame is truncated (in its {what})"))
            } else {
                Error::io("read", self.path, e)
            }
        })
    }

    /// Skips `n` payload bytes, reading the last so that a payload cut short is seen.
    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let back = i64::try_from(n - 1).map_err(|_| self.bad(format!("{what} of {n} bytes")))?;
        if back > 0 {
            self.r
                .seek(SeekFrom::Current(back))
                .map_err(|e| Error::io("seek", self.path, e))?;
        }
        self.read(&mut [0], what)
    }

    /// The rest of a skippable frame, after its magic: its size, then that many bytes.
    fn skippable(&mut self) -> Result<Frame> {
        let mut size = [0; 4];
        self.read(&mut size, "skippable frame size")?;
        let size = u64::from(u32::from_le_bytes(size));
        self.skip(size, "skippable frame")?;
        Ok(Frame {
            len: 8 + size,
            content_size: None,
            checksum: false,
            skippable: true,
        })
    }

    /// The rest of a zstd frame's header, after its magic: the header's length (magic
    /// included), its `Frame_Content_Size` if it has one, and whether the frame has a checksum.
    fn header(&mut self) -> Result<(u64, Option<u64>, bool)> {
        let mut fhd = [0];
        self.read(&mut fhd, "frame header")?;
        let d = Descriptor::of(fhd[0]);
        if d.reserved {
            return Err(self.bad("zstd frame header has its reserved bit set".into()));
        }
        let mut rest = [0u8; 13];
        let rest = &mut rest[..d.window_len + d.dict_len + d.fcs_len];
        self.read(rest, "frame header")?;
        let fcs = &rest[d.window_len + d.dict_len..];
        let content_size = (d.fcs_len > 0).then(|| {
            let mut v = [0u8; 8];
            v[..fcs.len()].copy_from_slice(fcs);
            // A 2-byte size is stored less 256.
            u64::from_le_bytes(v) + if d.fcs_len == 2 { 256 } else { 0 }
        });
        Ok((5 + rest.len() as u64, content_size, d.checksum))
    }

    /// Walks the blocks, from their block headers, to the last one's end; `len` is the frame
    /// offset of the first block header. Returns the frame offset after the last block.
    fn blocks(&mut self, mut len: u64) -> Result<u64> {
        for block in 0u64.. {
            let mut bh = [0; 3];
            self.read(&mut bh, "block header")?;
            let bh = u32::from_le_bytes([bh[0], bh[1], bh[2], 0]);
            let last = bh & 1 != 0;
            let size = u64::from(bh >> 3);
            let payload = match (bh >> 1) & 3 {
                0 => size,
                1 => 1,
                2 => size,
                _ => {
                    return Err(self.bad(format!(
                        "zstd block {block} at frame offset {len} has the reserved block type"
                    )))
                }
            };
            if size > MAX_BLOCK {
                return Err(self.bad(format!(
                    "zstd block {block} at frame offset {len} claims {size} bytes, over 128 KiB"
                )));
            }
            self.skip(payload, "block")?;
            len += 3 + payload;
            if last {
                break;
            }
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// `data` compressed as one frame, with or without content size and checksum.
    fn compress(data: &[u8], level: i32, size: bool, checksum: bool) -> Vec<u8> {
        use zstd::zstd_safe::CParameter;
        let mut c = zstd::bulk::Compressor::new(level).unwrap();
        c.set_parameter(CParameter::ContentSizeFlag(size)).unwrap();
        c.set_parameter(CParameter::ChecksumFlag(checksum)).unwrap();
        c.compress(data).unwrap()
    }

    /// The same data streamed (content size unknown to the encoder).
    fn stream(data: &[u8], checksum: bool) -> Vec<u8> {
        let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
        e.include_checksum(checksum).unwrap();
        std::io::Write::write_all(&mut e, data).unwrap();
        e.finish().unwrap()
    }

    fn random(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// The frame, with bytes after it, gives its length, leaves the reader at its end and
    /// decompresses to `data`; its content size is one of `size`.
    fn check(frame: &[u8], data: &[u8], size: &[Option<u64>], checksum: bool) -> Frame {
        let mut file = frame.to_vec();
        file.extend_from_slice(b"next frame");
        let mut r = Cursor::new(file);
        let f = frame_len(&mut r, Path::new("t.warc.zst"), 0).unwrap();
        assert_eq!(f.len, frame.len() as u64);
        assert_eq!(r.position(), frame.len() as u64);
        assert!(size.contains(&f.content_size), "{f:?}");
        assert_eq!(f.checksum, checksum);
        assert!(!f.skippable);
        assert_eq!(zstd::decode_all(frame).unwrap(), data);
        f
    }

    /// The block types of a frame, read from its block headers.
    fn block_types(frame: &[u8]) -> Vec<u32> {
        let fhd = frame[4];
        let single = fhd & 0x20 != 0;
        let mut p = 5
            + usize::from(!single)
            + [0, 1, 2, 4][usize::from(fhd & 3)]
            + match (fhd >> 6, single) {
                (0, false) => 0,
                (0, true) => 1,
                (1, _) => 2,
                (2, _) => 4,
                _ => 8,
            };
        let mut types = Vec::new();
        loop {
            let bh = u32::from_le_bytes([frame[p], frame[p + 1], frame[p + 2], 0]);
            let t = (bh >> 1) & 3;
            types.push(t);
            p += 3 + if t == 1 { 1 } else { (bh >> 3) as usize };
            if bh & 1 != 0 {
                break;
            }
        }
        assert_eq!(p + 4 * usize::from(fhd & 4 != 0), frame.len());
        types
    }

    #[test]
    fn frames_of_every_shape_end_where_their_headers_say() {
        let run = vec![b'a'; 300 << 10];
        let noise = random(300 << 10, 9);
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("line {i} of some text\n").into_bytes())
            .collect();
        for data in [
            &b""[..],
            b"x",
            b"WARC/1.1\r\n\r\n",
            &run[..1000],
            &run,
            &noise[..100],
            &noise,
            &text,
        ] {
            let n = data.len() as u64;
            for checksum in [false, true] {
                check(
                    &compress(data, 3, true, checksum),
                    data,
                    &[Some(n)],
                    checksum,
                );
                check(
                    &compress(data, 19, true, checksum),
                    data,
                    &[Some(n)],
                    checksum,
                );
                check(&compress(data, 3, false, checksum), data, &[None], checksum);
                // A stream ended at its first write may know its size.
                check(&stream(data, checksum), data, &[None, Some(n)], checksum);
            }
        }
        // Multi-block frames: over 128 KiB of one byte (RLE blocks), of noise (raw blocks), of
        // text (compressed blocks).
        let types = block_types(&compress(&run, 3, true, true));
        assert!(types.len() >= 3 && types.contains(&1), "{types:?}");
        let types = block_types(&compress(&noise, 3, true, false));
        assert!(
            types.len() >= 3 && types.iter().all(|t| *t == 0),
            "{types:?}"
        );
        let types = block_types(&stream(&text, true));
        assert!(types.len() >= 2 && types.contains(&2), "{types:?}");
        // Content sizes of every width (1, 2, 4 and 8 bytes are chosen by size).
        for n in [0usize, 255, 256, 65_791, 65_792, 70_000] {
            let data = &text[..n];
            check(
                &compress(data, 1, true, true),
                data,
                &[Some(n as u64)],
                true,
            );
        }
    }

    #[test]
    fn skippable_frames_are_skipped_whole() {
        let mut frame = 0x184D_2A5Du32.to_le_bytes().to_vec();
        frame.extend_from_slice(&5u32.to_le_bytes());
        frame.extend_from_slice(b"dict!");
        frame.extend_from_slice(&compress(b"after", 3, true, true));
        let mut r = Cursor::new(&frame);
        let f = frame_len(&mut r, Path::new("t"), 0).unwrap();
        assert_eq!((f.len, f.skippable, r.position()), (13, true, 13));
        let f = frame_len(&mut r, Path::new("t"), 13).unwrap();
        assert_eq!(f.content_size, Some(5));
        assert_eq!(r.position(), frame.len() as u64);
    }

    fn error(bytes: &[u8], offset: u64) -> String {
        frame_len(&mut Cursor::new(bytes), Path::new("f.warc.zst"), offset)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_truncated_frame_a_bad_magic_and_a_reserved_block_type_are_errors_naming_the_place() {
        let frame = compress(&random(200 << 10, 3), 3, true, true);
        // Cut in every part: magic, header, a block header, a block, the checksum.
        for cut in [2, 6, 12, 1000, frame.len() - 2, frame.len() - 1] {
            let e = error(&frame[..cut], 1234);
            assert!(
                e.contains("f.warc.zst") && e.contains("1234") && e.contains("truncated"),
                "{cut}: {e}"
            );
        }
        let e = error(b"WARC/1.1\r\n", 77);
        assert!(
            e.contains("f.warc.zst") && e.contains("77") && e.contains("not a zstd frame"),
            "{e}"
        );
        // The first block made reserved (type 3).
        let mut bad = compress(b"some bytes to compress", 3, true, false);
        let head = 6; // magic, descriptor, 1-byte content size (single segment)
        bad[head] |= 0b110;
        let e = error(&bad, 5);
        assert!(
            e.contains("f.warc.zst") && e.contains("reserved block type"),
            "{e}"
        );
        let mut bad = compress(b"some bytes", 3, true, false);
        bad[4] |= 0x08;
        assert!(error(&bad, 0).contains("reserved bit"));
    }
}
