//! Reading WARC files one record at a time, with bounded memory, from any source.
//!
//! The parse stage and offline reprocessing read WARC files of any size and any origin (ours,
//! Common Crawl's, pywb's test files), so the reader holds one read buffer and one decoded buffer
//! (64 KiB each) and one record header, never a whole record: the block is exposed as a `Read`
//! bounded by `Content-Length`, optionally capped lower. Whatever of the block the caller does not
//! read is skipped (and still digested) when the next record is asked for.
//!
//! The framing is detected from the first bytes, not the file name: gzip members (`.warc.gz`,
//! WARC 1.1 Annex D), zstd frames (`.warc.zst`, the IIPC warc-zstd proposal: an optional
//! dictionary in a skippable frame with magic `0x184D2A5D` at the start, raw or itself
//! zstd-compressed, used for every frame; other skippable frames are skipped), or plain text.
//! Decoders are driven so they consume exactly one member or frame, which is how each record's
//! offset and compressed length in the file are known (CDXJ needs both). A member that holds more
//! than one record (a WARC gzipped as a whole) is refused, as warcio refuses it, since its records
//! cannot be addressed by offset.
//!
//! Anything malformed — bad magic, a bad checksum, a header line without a colon, a block shorter
//! than its `Content-Length`, a record not followed by CRLF CRLF — is an
//! [`Error::Corrupt`] naming the file and the offset of the record (or of the bad byte, in plain
//! files); the reader never panics on input, and after an error it stops rather than guess where
//! the next record begins.

mod record;

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use super::dictionary::Dictionary;
use super::digest::{self, DigestCheck, HeadScan, Streaming};
use super::frame::{is_skippable, zstd_read, Counted, BUF, DICT_MAGIC, ZSTD_MAGIC};
use super::zstd_frame;
use super::{Compression, RecordType, WarcHeader};
use crate::error::{Error, IoContext, Result};

pub use record::Record;

/// How a [`WarcReader`] reads.
#[derive(Clone, Debug)]
pub struct ReaderOptions {
    /// Compute SHA-1 block and payload digests and compare them with the headers (costs a SHA-1
    /// pass over every block).
    pub verify_digests: bool,
    /// Longest WARC header accepted, in bytes (default 1 MiB).
    pub max_header_bytes: usize,
    /// Expose at most this many bytes of each block through `Read` (the rest is skipped).
    pub body_cap: Option<u64>,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            verify_digests: false,
            max_header_bytes: 1 << 20,
            body_cap: None,
        }
    }
}

/// How a record ended: its place in the file and its digest checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordEnd {
    /// Offset of the record (its gzip member or zstd frame) in the file.
    pub offset: u64,
    /// Length of the record in the file (compressed, trailer included).
    pub length: u64,
    /// `WARC-Block-Digest` check.
    pub block_digest: DigestCheck,
    /// `WARC-Payload-Digest` check.
    pub payload_digest: DigestCheck,
}

enum Stream<R> {
    /// An uncompressed file.
    Plain(Counted<R>),
    /// A compressed file between members.
    Idle(Counted<R>),
    /// Inside a gzip member.
    Gzip(Box<flate2::bufread::GzDecoder<Counted<R>>>),
    /// Inside a zstd frame (decoded with `WarcReader::zdec`).
    Zstd(Counted<R>),
    /// After an error that lost the source.
    Gone,
}

struct Current {
    header: WarcHeader,
    offset: u64,
    /// Bytes of the version line and header fields, with the blank line after them.
    head_len: u64,
    remaining: u64,
    cap_left: u64,
    /// The block and payload digests being taken (those verified), side by side.
    digests: Streaming,
    scan: Option<HeadScan>,
}

impl Current {
    fn hash(&mut self, bytes: &[u8]) {
        let payload_from = match &mut self.scan {
            _ if !self.digests.has_payload() => None,
            Some(s) if !s.done() => s.feed(bytes),
            _ => Some(0),
        };
        self.digests.update(bytes, payload_from);
    }
}

/// Streams the records of one WARC file; see the module docs.
pub struct WarcReader<R> {
    path: PathBuf,
    opts: ReaderOptions,
    compression: Compression,
    /// The dictionary the file's dictionary frame holds.
    dictionary: Option<Dictionary>,
    stream: Stream<R>,
    zdec: Option<zstd::stream::raw::Decoder<'static>>,
    zdone: bool,
    dbuf: Box<[u8]>,
    dpos: usize,
    dlen: usize,
    /// Offset of the gzip member or zstd frame being decoded.
    member: u64,
    cur: Option<Current>,
    failed: Option<u64>,
    /// The typed error behind an `io::Error` a `Record` returned; `finish` returns it.
    stash: Option<Error>,
}

impl WarcReader<File> {
    /// Opens a WARC file (`.warc`, `.warc.gz` or `.warc.zst`; detected from its bytes).
    pub fn open(path: &Path, opts: ReaderOptions) -> Result<WarcReader<File>> {
        let f = File::open(path).ctx("open", path)?;
        WarcReader::new(f, path, opts)
    }
}

impl<R: Read> WarcReader<R> {
    /// Reads WARC records from `inner`; `path` names it in errors.
    pub fn new(inner: R, path: impl Into<PathBuf>, opts: ReaderOptions) -> Result<WarcReader<R>> {
        let path = path.into();
        let mut c = Counted::new(inner);
        let head = c.peek(8).ctx("read", &path)?.to_vec();
        let mut rd = WarcReader {
            path,
            opts,
            compression: Compression::None,
            dictionary: None,
            stream: Stream::Gone,
            zdec: None,
            zdone: false,
            dbuf: Box::new([]),
            dpos: 0,
            dlen: 0,
            member: 0,
            cur: None,
            failed: None,
            stash: None,
        };
        let skippable = is_skippable(&head);
        if head.starts_with(&[0x1f, 0x8b]) {
            rd.compression = Compression::Gzip;
        } else if head.starts_with(&ZSTD_MAGIC) || skippable {
            rd.compression = Compression::Zstd;
            if head.len() >= 4
                && u32::from_le_bytes([head[0], head[1], head[2], head[3]]) == DICT_MAGIC
            {
                rd.dictionary = Some(super::dictionary::read_dictionary(&mut c, &rd.path)?);
            }
            let dec = zstd::stream::raw::Decoder::with_dictionary(
                rd.dictionary.as_ref().map_or(&[][..], |d| d.bytes()),
            )
            .map_err(|e| Error::corrupt(&rd.path, 8, format!("zstd dictionary: {e}")))?;
            rd.zdec = Some(dec);
        } else if !(head.is_empty() || head.starts_with(b"WARC/") || head[0].is_ascii_whitespace())
        {
            return Err(Error::corrupt(
                &rd.path,
                0,
                format!(
                    "not a WARC file: it starts with {:02x?}, not WARC/, a gzip member or a zstd frame",
                    &head[..head.len().min(4)]
                ),
            ));
        }
        if rd.compression == Compression::None {
            rd.stream = Stream::Plain(c);
        } else {
            rd.stream = Stream::Idle(c);
            rd.dbuf = vec![0; BUF].into_boxed_slice();
        }
        Ok(rd)
    }

    /// The file's record framing.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Whether the file starts with a warc-zstd dictionary frame.
    pub fn has_dictionary(&self) -> bool {
        self.dictionary.is_some()
    }

    /// The ID of the dictionary the file's dictionary frame holds (0 for a raw-content
    /// dictionary), if it has one.
    pub fn dictionary_id(&self) -> Option<u32> {
        self.dictionary.as_ref().map(Dictionary::id)
    }

    /// The dictionary the file's dictionary frame holds, if it has one: every zstd frame of the
    /// file decompresses with it.
    pub fn dictionary(&self) -> Option<&Dictionary> {
        self.dictionary.as_ref()
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next record, `None` at the end of the file. Finishes the previous record first (its
    /// unread block is skipped); use [`Record::finish`] to see its length and digest checks.
    pub fn next_record(&mut self) -> Result<Option<Record<'_, R>>> {
        if self.cur.is_some() {
            self.finish_current()?;
        }
        if let Some(at) = self.failed {
            return Err(Error::corrupt(
                &self.path,
                at,
                "reading stopped at an earlier error",
            ));
        }
        match self.start_record() {
            Ok(true) => Ok(Some(Record { rd: self })),
            Ok(false) => Ok(None),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        let at = match &e {
            Error::Corrupt { offset, .. } => *offset,
            _ => self.cur.as_ref().map_or(0, |c| c.offset),
        };
        self.failed = Some(at);
        self.cur = None;
        e
    }

    /// The error for a failed read at `offset`: I/O errors from the OS stay I/O errors, anything
    /// a decoder reports (bad checksum, bad block, truncation) is corruption.
    fn error(&self, offset: u64, e: io::Error) -> Error {
        if e.raw_os_error().is_some() {
            return Error::io("read", &self.path, e);
        }
        let what = match self.stream {
            Stream::Gzip(_) => "in the gzip member: ",
            Stream::Zstd(_) => "in the zstd frame: ",
            _ => "",
        };
        Error::corrupt(&self.path, offset, format!("{what}{e}"))
    }

    /// Where errors are reported: the record's member for compressed files, the byte reached for
    /// plain ones.
    fn here(&self) -> u64 {
        match &self.stream {
            Stream::Plain(c) | Stream::Idle(c) => c.offset,
            _ => self.member,
        }
    }

    /// Positions at the next record and reads its header; false at the end of the file.
    fn start_record(&mut self) -> Result<bool> {
        loop {
            let offset = match self.begin_member()? {
                Some(o) => o,
                None => return Ok(false),
            };
            let mut line = Vec::new();
            let n = self.read_line(&mut line, self.opts.max_header_bytes)?;
            if n == 0 {
                if self.compression == Compression::None {
                    return Ok(false);
                }
                self.end_member(offset)?; // an empty member holds no record: skip it
                continue;
            }
            let version = String::from_utf8_lossy(&line).trim_end().to_owned();
            if !version.starts_with("WARC/") {
                return Err(Error::corrupt(
                    &self.path,
                    offset,
                    format!("expected a WARC/ version line, found {:?}", trunc(&version)),
                ));
            }
            if !matches!(
                version.as_str(),
                "WARC/1.0" | "WARC/1.1" | "WARC/0.18" | "WARC/0.17"
            ) {
                return Err(Error::corrupt(
                    &self.path,
                    offset,
                    format!(
                        "unsupported version {:?} (this build reads WARC/1.0, 1.1 and the 0.17/0.18 drafts)",
                        trunc(&version)
                    ),
                ));
            }
            let (header, fields_len) = self.read_fields(version, offset)?;
            let length = header.content_length().ok_or_else(|| {
                Error::corrupt(&self.path, offset, "record has no valid Content-Length")
            })?;
            let verify = self.opts.verify_digests;
            let http = header.is_http() && length > 0;
            let has = |n| verify && header.get(n).is_some();
            let (block, payload) = (has("WARC-Block-Digest"), has("WARC-Payload-Digest"));
            let revisit = header.record_type() == RecordType::Revisit;
            self.cur = Some(Current {
                offset,
                head_len: (n + fields_len) as u64,
                remaining: length,
                cap_left: self.opts.body_cap.unwrap_or(u64::MAX),
                digests: Streaming::new(block, payload && !revisit),
                scan: http.then(HeadScan::new),
                header,
            });
            return Ok(true);
        }
    }

    /// The header fields after the version line, and the bytes they took (blank line included).
    fn read_fields(&mut self, version: String, offset: u64) -> Result<(WarcHeader, usize)> {
        let mut header = WarcHeader {
            version,
            fields: Vec::new(),
        };
        let mut used = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let max = self.opts.max_header_bytes.saturating_sub(used);
            let n = self.read_line(&mut line, max)?;
            used += n;
            if n == 0 {
                return Err(Error::corrupt(
                    &self.path,
                    offset,
                    "record header is truncated",
                ));
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                return Ok((header, used));
            }
            if text.starts_with([' ', '\t']) {
                match header.fields.last_mut() {
                    Some((_, v)) => {
                        v.push(' ');
                        v.push_str(text.trim());
                        continue;
                    }
                    None => {
                        return Err(Error::corrupt(
                            &self.path,
                            offset,
                            "header starts with a continuation line",
                        ))
                    }
                }
            }
            match text.split_once(':') {
                Some((name, value)) if !name.trim().is_empty() => header
                    .fields
                    .push((name.trim().to_owned(), value.trim().to_owned())),
                _ => {
                    return Err(Error::corrupt(
                        &self.path,
                        offset,
                        format!("malformed header line {:?}", trunc(text)),
                    ))
                }
            }
        }
    }

    /// Starts the next member (compressed) or skips blank lines (plain); the record's offset, or
    /// `None` at the end of the file.
    fn begin_member(&mut self) -> Result<Option<u64>> {
        let stream = std::mem::replace(&mut self.stream, Stream::Gone);
        let mut c = match stream {
            Stream::Plain(mut c) => {
                let r = self.skip_blank(&mut c);
                let at = c.offset;
                self.stream = Stream::Plain(c);
                return r.map(|more| more.then_some(at));
            }
            Stream::Idle(c) => c,
            other => {
                self.stream = other;
                return Err(Error::corrupt(
                    &self.path,
                    self.here(),
                    "record started inside a member",
                ));
            }
        };
        loop {
            let at = c.offset;
            let head = match c.peek(8) {
                Ok(h) => h,
                Err(e) => return Err(self.error(at, e)),
            };
            if head.is_empty() {
                self.stream = Stream::Idle(c);
                return Ok(None);
            }
            match self.compression {
                Compression::Gzip if head.starts_with(&[0x1f, 0x8b]) => {
                    self.stream = Stream::Gzip(Box::new(flate2::bufread::GzDecoder::new(c)));
                }
                Compression::Zstd if head.starts_with(&ZSTD_MAGIC) => {
                    let head = match c.peek(zstd_frame::MAX_HEADER) {
                        Ok(h) => h,
                        Err(e) => return Err(self.error(at, e)),
                    };
                    if let Some(why) = dictionary_mismatch(head, self.dictionary_id()) {
                        return Err(Error::corrupt(&self.path, at, why));
                    }
                    let r = match self.zdec.as_mut() {
                        Some(d) => zstd::stream::raw::Operation::reinit(d),
                        None => Ok(()),
                    };
                    r.map_err(|e| self.error(at, e))?;
                    self.zdone = false;
                    self.stream = Stream::Zstd(c);
                }
                Compression::Zstd if head.len() == 8 && is_skippable(head) => {
                    // A skippable frame (a dictionary already read, or an extension): skip it.
                    let size = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
                    c.consume(8);
                    let skipped = io::copy(&mut (&mut c).take(size), &mut io::sink())
                        .map_err(|e| self.error(at, e))?;
                    if skipped < size {
                        return Err(Error::corrupt(
                            &self.path,
                            at,
                            "skippable zstd frame is truncated",
                        ));
                    }
                    continue;
                }
                _ => {
                    let what = if self.compression == Compression::Gzip {
                        "a gzip member"
                    } else {
                        "a zstd frame"
                    };
                    return Err(Error::corrupt(
                        &self.path,
                        at,
                        format!(
                            "expected {what}, found bytes {:02x?}",
                            &head[..head.len().min(4)]
                        ),
                    ));
                }
            }
            self.dpos = 0;
            self.dlen = 0;
            self.member = at;
            return Ok(Some(at));
        }
    }

    /// Skips line ends between plain records; false at the end of input.
    fn skip_blank(&self, c: &mut Counted<R>) -> Result<bool> {
        loop {
            let at = c.offset;
            let buf = c.fill_buf().map_err(|e| self.error(at, e))?;
            if buf.is_empty() {
                return Ok(false);
            }
            let n = buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            let stop = n < buf.len();
            c.consume(n);
            if stop {
                return Ok(true);
            }
        }
    }

    /// After a member's record: the member must end (only line ends may remain); returns the
    /// file offset after it and leaves the stream between members.
    fn end_member(&mut self, offset: u64) -> Result<u64> {
        if self.compression == Compression::None {
            return Ok(self.here());
        }
        loop {
            let buf = match self.fill() {
                Ok(b) => b,
                Err(e) => return Err(self.error(offset, e)),
            };
            if buf.is_empty() {
                break;
            }
            if !buf.iter().all(|b| matches!(b, b'\r' | b'\n')) {
                let what = if self.compression == Compression::Gzip {
                    "gzip member"
                } else {
                    "zstd frame"
                };
                return Err(Error::corrupt(
                    &self.path,
                    offset,
                    format!(
                        "the {what} continues beyond a single record: records must be compressed \
                         one per member (recompress the file, e.g. with `warcio recompress`)"
                    ),
                ));
            }
            let n = buf.len();
            self.consume(n);
        }
        let c = match std::mem::replace(&mut self.stream, Stream::Gone) {
            Stream::Gzip(g) => g.into_inner(),
            Stream::Zstd(c) | Stream::Idle(c) | Stream::Plain(c) => c,
            Stream::Gone => return Err(Error::corrupt(&self.path, offset, "stream lost")),
        };
        let end = c.offset;
        self.stream = Stream::Idle(c);
        Ok(end)
    }

    /// Decoded bytes (raw bytes for plain files); empty at the end of the member or file.
    fn fill(&mut self) -> io::Result<&[u8]> {
        if self.compression == Compression::None {
            return match &mut self.stream {
                Stream::Plain(c) => c.fill_buf(),
                _ => Ok(&[]),
            };
        }
        if self.dpos == self.dlen {
            self.dpos = 0;
            self.dlen = match &mut self.stream {
                Stream::Gzip(g) => loop {
                    match g.read(&mut self.dbuf) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        r => break r?,
                    }
                },
                Stream::Zstd(c) => match self.zdec.as_mut() {
                    Some(d) => zstd_read(c, d, &mut self.zdone, &mut self.dbuf)?,
                    None => 0,
                },
                _ => 0,
            };
        }
        Ok(&self.dbuf[self.dpos..self.dlen])
    }

    fn consume(&mut self, n: usize) {
        if let Stream::Plain(c) = &mut self.stream {
            c.consume(n);
        } else {
            self.dpos = (self.dpos + n).min(self.dlen);
        }
    }

    /// Consumes `n` block bytes (already filled), digesting them.
    fn consume_block(&mut self, n: usize) {
        let bytes: &[u8] = match &self.stream {
            Stream::Plain(c) => c.buffered(),
            _ => &self.dbuf[self.dpos..self.dlen],
        };
        let mut n = n.min(bytes.len());
        if let Some(cur) = self.cur.as_mut() {
            n = n.min(usize::try_from(cur.remaining).unwrap_or(usize::MAX));
            cur.hash(&bytes[..n]);
            cur.remaining -= n as u64;
            cur.cap_left = cur.cap_left.saturating_sub(n as u64);
        }
        self.consume(n);
    }

    fn read_line(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize> {
        let mut n = 0;
        loop {
            let at = self.here();
            let buf = match self.fill() {
                Ok(b) => b,
                Err(e) => return Err(self.error(at, e)),
            };
            if buf.is_empty() {
                return Ok(n);
            }
            let Some((take, end)) = super::http::line_part(buf, n, max) else {
                return Err(Error::corrupt(
                    &self.path,
                    self.here(),
                    format!("header line longer than {max} bytes"),
                ));
            };
            out.extend_from_slice(&buf[..take]);
            self.consume(take);
            n += take;
            if end {
                return Ok(n);
            }
        }
    }

    fn finish_current(&mut self) -> Result<RecordEnd> {
        let r = self.finish_inner();
        r.map_err(|e| self.fail(e))
    }

    fn finish_inner(&mut self) -> Result<RecordEnd> {
        if let Some(e) = self.stash.take() {
            return Err(e);
        }
        let Some(offset) = self.cur.as_ref().map(|c| c.offset) else {
            return Err(Error::corrupt(
                &self.path,
                self.here(),
                "no record to finish",
            ));
        };
        while self.cur.as_ref().is_some_and(|c| c.remaining > 0) {
            let at = self.here();
            let n = match self.fill() {
                Ok(b) => b.len(),
                Err(e) => return Err(self.error(at, e)),
            };
            if n == 0 {
                let left = self.cur.as_ref().map_or(0, |c| c.remaining);
                return Err(Error::corrupt(
                    &self.path,
                    offset,
                    format!(
                        "record block is truncated: {left} bytes of its Content-Length missing"
                    ),
                ));
            }
            self.consume_block(n);
        }
        // Two line ends close the record (CRLF CRLF; bare LFs are tolerated).
        for _ in 0..2 {
            let mut line = Vec::new();
            self.read_line(&mut line, 2)
                .map_err(|_| self.trailer_error(offset))?;
            if line != b"\r\n" && line != b"\n" {
                return Err(self.trailer_error(offset));
            }
        }
        let end = self.end_member(offset)?;
        let Some(cur) = self.cur.take() else {
            return Err(Error::corrupt(&self.path, offset, "record lost"));
        };
        let check = |name: &str, d: Option<[u8; 20]>| match (cur.header.get(name), d) {
            (None, _) => DigestCheck::Absent,
            (Some(v), Some(d)) => digest::check(v, &d),
            (Some(_), None) => DigestCheck::Unchecked,
        };
        let (block, payload) = cur.digests.finish();
        Ok(RecordEnd {
            offset,
            length: end - offset,
            block_digest: check("WARC-Block-Digest", block),
            payload_digest: check("WARC-Payload-Digest", payload),
        })
    }

    /// Keeps `err` for `finish` and returns an `io::Error` with its message for `Read` callers.
    fn stash_error(&mut self, kind: io::ErrorKind, err: Error) -> io::Error {
        let e = io::Error::new(kind, err.to_string());
        self.stash.get_or_insert(err);
        e
    }

    fn trailer_error(&self, offset: u64) -> Error {
        Error::corrupt(
            &self.path,
            offset,
            "record block is not followed by CRLF CRLF (is its Content-Length right?)",
        )
    }
}

/// Why a zstd frame whose header starts `head` cannot be decoded with the file's dictionary
/// (`dict`: its ID, if the file has one), or `None` when it can: a frame that names a dictionary
/// needs that one (the warc-zstd proposal: every frame names the file's dictionary).
fn dictionary_mismatch(head: &[u8], dict: Option<u32>) -> Option<String> {
    let wants = zstd_frame::dictionary_id(head).filter(|&id| id != 0)?;
    match dict {
        Some(has) if has == wants => None,
        Some(0) => Some(format!(
            "the zstd frame was compressed with dictionary {wants}, and the file's dictionary \
             frame holds a raw-content dictionary (no ID)"
        )),
        Some(has) => Some(format!(
            "the zstd frame was compressed with dictionary {wants}, but the file's dictionary \
             frame holds dictionary {has}: the dictionary does not match"
        )),
        None => Some(format!(
            "the zstd frame was compressed with dictionary {wants}, and the file has no \
             dictionary frame (the warc-zstd proposal puts it first)"
        )),
    }
}

fn trunc(s: &str) -> String {
    s.chars().take(80).collect()
}
