//! The record a [`WarcReader`] stands at: its header, its block through `Read`/`BufRead`
//! (bounded by `Content-Length` and the reader's body cap), and its end, read
//! ([`Record::finish`]) or, for a `.warc.zst` record, skipped by its frame's headers
//! ([`Record::skip`]).

use std::io::{self, BufRead, Read, Seek};

use super::{Current, Stream, WarcReader};
use crate::error::{Error, Result};
use crate::warc::digest::DigestCheck;
use crate::warc::http::{self, HttpHead};
use crate::warc::zstd_frame;
use crate::warc::{Compression, RecordEnd, WarcHeader};

impl<R: Read + Seek> WarcReader<R> {
    /// [`Record::skip`]: the current record's end from its zstd frame's headers, without
    /// decoding the rest of it; `None` (and the stream as it was) where that does not apply.
    fn skip_frame(&mut self) -> Result<Option<RecordEnd>> {
        if self.compression != Compression::Zstd || self.opts.verify_digests || self.stash.is_some()
        {
            return Ok(None);
        }
        let (Some(cur), Stream::Zstd(c)) = (self.cur.as_ref(), &mut self.stream) else {
            return Ok(None);
        };
        let Some(block) = cur.header.content_length() else {
            return Ok(None);
        };
        // One record, closed by CRLF CRLF, is exactly this long; anything else (bare LFs, a
        // frame holding more, a frame without a content size) is read as `finish` reads it.
        let one_record = cur
            .head_len
            .checked_add(block)
            .and_then(|n| n.checked_add(4));
        let (offset, decoded_to) = (cur.offset, c.offset);
        let io = |e| Error::io("seek", &self.path, e);
        c.seek(io::SeekFrom::Start(offset)).map_err(io)?;
        let frame = zstd_frame::frame_len(c, &self.path, offset)?;
        if frame.content_size.is_none() || frame.content_size != one_record {
            c.seek(io::SeekFrom::Start(decoded_to)).map_err(io)?;
            return Ok(None);
        }
        // The stream stands at the frame's end: between members.
        if let Stream::Zstd(c) = std::mem::replace(&mut self.stream, Stream::Gone) {
            self.stream = Stream::Idle(c);
        }
        let Some(cur) = self.cur.take() else {
            return Err(Error::corrupt(&self.path, offset, "record lost"));
        };
        let check = |name: &str| match cur.header.get(name) {
            None => DigestCheck::Absent,
            Some(_) => DigestCheck::Unchecked,
        };
        Ok(Some(RecordEnd {
            offset,
            length: frame.len,
            block_digest: check("WARC-Block-Digest"),
            payload_digest: check("WARC-Payload-Digest"),
        }))
    }
}

/// The record being read: its header, and its block through `Read`/`BufRead` (bounded by
/// `Content-Length` and the reader's body cap).
pub struct Record<'a, R> {
    pub(super) rd: &'a mut WarcReader<R>,
}

impl<R: Read> Record<'_, R> {
    fn cur(&self) -> &Current {
        self.rd
            .cur
            .as_ref()
            .expect("a Record exists only while its record is current")
    }

    /// The WARC header.
    pub fn header(&self) -> &WarcHeader {
        &self.cur().header
    }

    /// Offset of the record (its gzip member or zstd frame) in the file.
    pub fn offset(&self) -> u64 {
        self.cur().offset
    }

    /// `Content-Length` of the block.
    pub fn content_length(&self) -> u64 {
        self.cur().header.content_length().unwrap_or(0)
    }

    /// Whether the body cap hides part of this block.
    pub fn capped(&self) -> bool {
        self.rd
            .opts
            .body_cap
            .is_some_and(|cap| self.content_length() > cap)
    }

    /// Reads the HTTP header block at the start of the block (call before reading anything
    /// else). HTTP-level problems are `InvalidData` errors; see [`http::read_head`].
    pub fn http_head(&mut self) -> io::Result<HttpHead> {
        http::read_head(self, http::DEFAULT_MAX_HEAD)
    }

    /// The payload after `head`, with transfer and content codings undone, capped at `cap`
    /// decoded bytes; see [`http::payload_reader`].
    pub fn http_payload(&mut self, head: &HttpHead, cap: u64) -> io::Result<Box<dyn Read + '_>> {
        http::payload_reader(head, self, cap)
    }

    /// Skips what is left of the block, reads the record's end and returns its length in the
    /// file and its digest checks.
    pub fn finish(self) -> Result<RecordEnd> {
        self.rd.finish_current()
    }
}

impl<R: Read + Seek> Record<'_, R> {
    /// [`Record::finish`] without reading the rest of the record where its zstd frame's headers
    /// say where it ends and that it holds this one record (its `Frame_Content_Size` is the
    /// header's length, `Content-Length` and CRLF CRLF): the frame's blocks are walked by their
    /// headers ([`zstd_frame::frame_len`]), not decoded, so neither the rest of the block nor
    /// the trailer nor the frame's checksum is checked, and the digests are `Unchecked` (or
    /// `Absent`). Anything else (gzip, plain, no content size, digests verified) is `finish`.
    /// A truncated frame or a bad block header is still [`Error::Corrupt`].
    pub fn skip(self) -> Result<RecordEnd> {
        match self.rd.skip_frame() {
            Ok(Some(end)) => Ok(end),
            Ok(None) => self.rd.finish_current(),
            Err(e) => Err(self.rd.fail(e)),
        }
    }
}

impl<R: Read> BufRead for Record<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let rd = &mut *self.rd;
        let Some(cur) = rd.cur.as_ref() else {
            return Ok(&[]);
        };
        let (offset, limit) = (cur.offset, cur.remaining.min(cur.cap_left));
        if limit == 0 {
            return Ok(&[]);
        }
        let at = rd.here();
        let empty = match rd.fill() {
            Ok(b) => b.is_empty(),
            Err(e) => {
                let kind = e.kind();
                let err = rd.error(at, e);
                return Err(rd.stash_error(kind, err));
            }
        };
        if empty {
            let err = Error::corrupt(
                &rd.path,
                offset,
                format!(
                    "record block is truncated: {} bytes missing",
                    cur_remaining(rd)
                ),
            );
            return Err(rd.stash_error(io::ErrorKind::UnexpectedEof, err));
        }
        let buf: &[u8] = match &rd.stream {
            Stream::Plain(c) => c.buffered(),
            _ => &rd.dbuf[rd.dpos..rd.dlen],
        };
        let n = buf.len().min(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(&buf[..n])
    }

    fn consume(&mut self, n: usize) {
        self.rd.consume_block(n);
    }
}

fn cur_remaining<R>(rd: &WarcReader<R>) -> u64 {
    rd.cur.as_ref().map_or(0, |c| c.remaining)
}

impl<R: Read> Read for Record<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        crate::warc::read_buffered(self, out)
    }
}
