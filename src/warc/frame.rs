//! The byte framing under WARC records: a buffered reader that knows file offsets and can look
//! ahead for magic numbers, and the zstd frame decoder driven one frame at a time (the warc-zstd
//! dictionary frame is read by `dictionary.rs`). Split from `reader.rs`, which deals in records.
//!
//! Why drive the decoders by hand: the offset and compressed length of every record are only
//! known if each decoder consumes exactly its own gzip member or zstd frame and not one byte of
//! the next. flate2's `bufread::GzDecoder` already does (it is what `MultiGzDecoder` is built
//! on); for zstd, `zstd_read` feeds the raw streaming decoder from the buffer and stops when it
//! reports the end of the frame.

use std::io::{self, BufRead, Read};

pub(crate) const BUF: usize = 64 << 10;
pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
pub(crate) const DICT_MAGIC: u32 = 0x184D_2A5D;
pub(crate) const MAX_DICT: usize = 64 << 20;

/// Whether `head` starts with a zstd skippable frame magic (`0x184D2A50..=0x184D2A5F`, LE).
pub(super) fn is_skippable(head: &[u8]) -> bool {
    head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
}

/// A `BufRead` over the file that knows the file offset of the next byte, and can look ahead a
/// few bytes across refills (for magic numbers).
pub(super) struct Counted<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// File offset of the next byte `BufRead` hands out.
    pub(super) offset: u64,
}

impl<R: Read> Counted<R> {
    pub(super) fn new(inner: R) -> Counted<R> {
        Counted {
            inner,
            buf: vec![0; BUF].into_boxed_slice(),
            pos: 0,
            len: 0,
            offset: 0,
        }
    }

    /// Up to `n` (<= 64 KiB) bytes ahead without consuming them; fewer only at end of input.
    pub(super) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.len - self.pos < n {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.len, 0);
                self.len -= self.pos;
                self.pos = 0;
            }
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => break,
                Ok(k) => self.len += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(&self.buf[self.pos..self.len.min(self.pos + n)])
    }

    pub(super) fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }
}

impl<R: Read> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.len {
            self.pos = 0;
            self.len = 0;
            loop {
                match self.inner.read(&mut self.buf) {
                    Ok(k) => {
                        self.len = k;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.pos..self.len])
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.len - self.pos);
        self.pos += n;
        self.offset += n as u64;
    }
}

/// Seeking within the buffered bytes moves in the buffer; beyond them, the source seeks
/// (relative to where it stands, so the source need not have started at offset 0) and the
/// buffer is dropped. Positions are those of [`Counted::offset`]; `SeekFrom::End` is refused.
impl<R: Read + io::Seek> io::Seek for Counted<R> {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let target = match to {
            io::SeekFrom::Start(n) => Some(n),
            io::SeekFrom::Current(d) => self.offset.checked_add_signed(d),
            io::SeekFrom::End(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "seek from the end of a WARC stream",
                ))
            }
        };
        let target = target
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        let start = self.offset - self.pos as u64;
        let end = self.offset + (self.len - self.pos) as u64;
        if (start..=end).contains(&target) {
            self.pos = (target - start) as usize;
        } else {
            let d = i64::try_from(i128::from(target) - i128::from(end))
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seek too far"))?;
            self.inner.seek(io::SeekFrom::Current(d))?;
            self.pos = 0;
            self.len = 0;
        }
        self.offset = target;
        Ok(target)
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        super::read_buffered(self, out)
    }
}

/// Decodes from the current zstd frame into `out`; 0 once the frame has ended.
pub(super) fn zstd_read<R: Read>(
    c: &mut Counted<R>,
    dec: &mut zstd::stream::raw::Decoder<'static>,
    done: &mut bool,
    out: &mut [u8],
) -> io::Result<usize> {
    use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
    let mut idle = 0;
    while !*done {
        let input = c.fill_buf()?;
        if input.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "zstd frame is truncated",
            ));
        }
        let mut inb = InBuffer::around(input);
        let mut outb = OutBuffer::around(out);
        let hint = dec.run(&mut inb, &mut outb)?;
        let (used, made) = (inb.pos(), outb.pos());
        c.consume(used);
        if hint == 0 {
            *done = true;
        }
        if made > 0 {
            return Ok(made);
        }
        idle = if used == 0 { idle + 1 } else { 0 };
        if idle > 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "zstd decoder makes no progress",
            ));
        }
    }
    Ok(0)
}
