//! One WARC record held whole in memory (a decompressed gzip member or zstd frame), read without
//! a [`WarcReader`](super::WarcReader).
//!
//! Why: the parse stage reads each page's record with one `pread` and one decompression into a
//! buffer, and then streaming that buffer through a `WarcReader` (a zeroed 64 KiB buffer per
//! record, every byte copied through it, the body copied again into a growing `Vec`) cost about
//! a third as much as decompressing it. [`MemRecord`] parses the header in place (fields are
//! looked up in the header's text, without a `String` each) and exposes the block as a slice.
//!
//! It takes only the shape every writer produces (a `WARC/` version line the reader accepts,
//! well-formed header lines, a `Content-Length`) and returns `None` for anything else, so that
//! the caller reads such a record with a `WarcReader` and gets exactly what it gets now, errors
//! included. For the records it takes, [`Block`] hands out the bytes in the same pieces a
//! `WarcReader` over the same buffer would (its 64 KiB windows), so the HTTP helpers and
//! decoders over it see the same input, and a block shorter than its `Content-Length` fails
//! reads at its end the same way.

use std::borrow::Cow;
use std::io::{self, BufRead, Read};

use super::frame::BUF;
use super::reader::ReaderOptions;
use super::{RecordType, WarcHeader};

/// A WARC record in memory whose header has been parsed; see the module docs.
pub struct MemRecord<'a> {
    /// The version line, trimmed.
    version: &'a str,
    /// The header's field lines (each with a colon, none folded), through the last line end
    /// before the empty line: looked up in place, no `String` per field.
    fields: &'a str,
    /// The header, if a line is folded: then built as a `WarcReader` builds it.
    folded: Option<WarcHeader>,
    plain: &'a [u8],
    /// Where the block starts in `plain`.
    start: usize,
    /// Where the block ends in `plain` (at most `plain.len()`).
    end: usize,
    /// The block is shorter than its `Content-Length`.
    truncated: bool,
}

impl<'a> MemRecord<'a> {
    /// Parses the record at the start of `plain`, read with `opts`; `None` if it is not the plain
    /// well-formed shape this reads (then read it with a `WarcReader`). Digest checks and body
    /// caps are not done here: with either option set this returns `None`.
    pub fn parse(plain: &'a [u8], opts: &ReaderOptions) -> Option<MemRecord<'a>> {
        if opts.verify_digests || opts.body_cap.is_some() || !plain.starts_with(b"WARC/") {
            return None;
        }
        let max = opts.max_header_bytes;
        let mut at = 0;
        let version = line(plain, &mut at, max)?.trim_end();
        if !matches!(version, "WARC/1.0" | "WARC/1.1" | "WARC/0.18" | "WARC/0.17") {
            return None;
        }
        let fields_start = at;
        let mut fields_end = at;
        let mut folded = false;
        loop {
            let used = at - fields_start;
            let text = line(plain, &mut at, max.saturating_sub(used))?;
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                break;
            }
            if text.starts_with([' ', '\t']) {
                // A continuation of nothing is refused.
                if fields_end == fields_start {
                    return None;
                }
                folded = true;
            } else {
                match text.split_once(':') {
                    Some((name, _)) if !name.trim().is_empty() => {}
                    _ => return None,
                }
            }
            fields_end = at;
        }
        // Every line was checked to be UTF-8 and ends with a line end.
        let fields = std::str::from_utf8(&plain[fields_start..fields_end]).ok()?;
        let mut rec = MemRecord {
            version,
            fields,
            folded: None,
            plain,
            start: at,
            end: at,
            truncated: false,
        };
        if folded {
            rec.folded = Some(rec.build_header());
        }
        let length = usize::try_from(rec.content_length()?).ok()?;
        let end = at.saturating_add(length);
        rec.end = end.min(plain.len());
        rec.truncated = end > plain.len();
        Some(rec)
    }

    /// The WARC header as a `WarcReader` gives it.
    pub fn header(&self) -> Cow<'_, WarcHeader> {
        match &self.folded {
            Some(h) => Cow::Borrowed(h),
            None => Cow::Owned(self.build_header()),
        }
    }

    fn build_header(&self) -> WarcHeader {
        let mut header = WarcHeader {
            version: self.version.to_owned(),
            fields: Vec::with_capacity(16),
        };
        for text in self.lines() {
            if text.starts_with([' ', '\t']) {
                if let Some((_, v)) = header.fields.last_mut() {
                    v.push(' ');
                    v.push_str(text.trim());
                }
            } else if let Some((name, value)) = text.split_once(':') {
                header
                    .fields
                    .push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        header
    }

    fn lines(&self) -> impl Iterator<Item = &'a str> {
        self.fields
            .split_inclusive('\n')
            .map(|l| l.trim_end_matches(['\r', '\n']))
    }

    /// The first value of a header field, names compared case-insensitively, as
    /// [`WarcHeader::get`].
    pub fn get(&self, name: &str) -> Option<&str> {
        if let Some(h) = &self.folded {
            return h.get(name);
        }
        self.lines().find_map(|text| {
            let (n, v) = text.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// [`WarcHeader::record_type`].
    pub fn record_type(&self) -> RecordType {
        RecordType::parse(self.get("WARC-Type").unwrap_or(""))
    }

    /// [`WarcHeader::is_http`].
    pub fn is_http(&self) -> bool {
        super::is_http(
            &self.record_type(),
            self.get("WARC-Target-URI").map(super::unbracket),
        )
    }

    /// [`WarcHeader::content_length`].
    fn content_length(&self) -> Option<u64> {
        self.get("Content-Length")?.trim().parse().ok()
    }

    /// The block, from its start.
    pub fn block(&self) -> Block<'a> {
        Block {
            plain: self.plain,
            pos: self.start,
            end: self.end,
            truncated: self.truncated,
        }
    }
}

/// One line of `plain` from `*at` through its `\n`, as text; `None` if there is no `\n`, the line
/// is longer than `max` bytes or is not UTF-8 (the cases a `WarcReader` reads differently or
/// refuses).
fn line<'a>(plain: &'a [u8], at: &mut usize, max: usize) -> Option<&'a str> {
    let rest = &plain[*at..];
    let n = rest.iter().position(|&b| b == b'\n')? + 1;
    if n > max {
        return None;
    }
    *at += n;
    std::str::from_utf8(&rest[..n]).ok()
}

/// The block of a [`MemRecord`] as a `BufRead`: the same pieces, and the same error at the end
/// of a truncated block, as a `WarcReader`'s record over the same buffer.
pub struct Block<'a> {
    plain: &'a [u8],
    pos: usize,
    end: usize,
    truncated: bool,
}

impl<'a> Block<'a> {
    /// The bytes not read yet, to the end of the block (or of the buffer, if it is truncated).
    pub fn rest(&self) -> &'a [u8] {
        &self.plain[self.pos..self.end]
    }
}

impl BufRead for Block<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            if self.truncated {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "record block is truncated",
                ));
            }
            return Ok(&[]);
        }
        // A WarcReader over the buffer reads it in BUF-sized windows from its start.
        let window_end = (self.pos / BUF + 1) * BUF;
        Ok(&self.plain[self.pos..self.end.min(window_end)])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.end);
    }
}

impl Read for Block<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        super::read_buffered(self, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::http;
    use crate::warc::WarcReader;

    /// What a WarcReader makes of the record in `plain`: header fields, HTTP head and payload.
    fn via_reader(plain: &[u8]) -> (Vec<(String, String)>, Option<http::HttpHead>, Vec<u8>) {
        let mut rd = WarcReader::new(plain, "mem", ReaderOptions::default()).unwrap();
        let mut rec = rd.next_record().unwrap().unwrap();
        let fields = rec.header().fields.clone();
        let Ok(head) = rec.http_head() else {
            return (fields, None, Vec::new());
        };
        let mut body = Vec::new();
        if let Ok(mut r) = rec.http_payload(&head, 1 << 20) {
            let _ = r.read_to_end(&mut body);
        }
        (fields, Some(head), body)
    }

    fn via_memory(plain: &[u8]) -> (Vec<(String, String)>, Option<http::HttpHead>, Vec<u8>) {
        let rec = MemRecord::parse(plain, &ReaderOptions::default()).unwrap();
        let fields = rec.header().fields.clone();
        let mut block = rec.block();
        let Ok(head) = http::read_head(&mut block, http::DEFAULT_MAX_HEAD) else {
            return (fields, None, Vec::new());
        };
        let mut body = Vec::new();
        if let Ok(mut r) = http::payload_reader(&head, block, 1 << 20) {
            let _ = r.read_to_end(&mut body);
        }
        (fields, Some(head), body)
    }

    fn record(http: &[u8], content_length: usize) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.test/\r\nX-Folded: a\r\n  b\r\nContent-Length: {content_length}\r\n\r\n"
        )
        .into_bytes();
        r.extend_from_slice(http);
        r
    }

    #[test]
    fn fields_are_looked_up_as_a_warc_header_does() {
        for head in [
            "WARC/1.1\r\nwarc-type:  Response \r\nWARC-Target-URI: <HTTPS://a.test/>\r\nContent-Length: 0\r\n\r\n",
            "WARC/1.0\nWARC-Type: request\nX: a\n\tb\nWARC-Target-URI: ftp://a.test/\ncontent-length:0\n\n",
            "WARC/1.1\r\nWARC-Type: metadata\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n",
        ] {
            let rec = MemRecord::parse(head.as_bytes(), &ReaderOptions::default()).unwrap();
            let mut rd = WarcReader::new(head.as_bytes(), "mem", ReaderOptions::default()).unwrap();
            let want = rd.next_record().unwrap().unwrap().header().clone();
            assert_eq!(*rec.header(), want);
            assert_eq!(rec.record_type(), want.record_type(), "{head}");
            assert_eq!(rec.is_http(), want.is_http(), "{head}");
            for name in ["warc-type", "X", "Content-Length", "missing"] {
                assert_eq!(rec.get(name), want.get(name), "{head} {name}");
            }
        }
    }

    #[test]
    fn reads_what_a_warc_reader_reads() {
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let big = vec![b'x'; 150_000];
        chunked.extend_from_slice(format!("{:x}\r\n", big.len()).as_bytes());
        chunked.extend_from_slice(&big);
        chunked.extend_from_slice(b"\r\n0\r\n\r\n");
        let plain = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<a href=x>".to_vec();
        for http in [plain, chunked] {
            // Whole, truncated in the body (across a 64 KiB window, too), in the HTTP head.
            for cut in [0, 1, 7, 5_000, 100_000, http.len() - 20] {
                if cut > http.len() - 20 {
                    continue;
                }
                let whole = record(&http, http.len());
                let rec = &whole[..whole.len() - cut];
                assert_eq!(via_memory(rec), via_reader(rec), "cut {cut}");
            }
        }
    }

    #[test]
    fn leaves_other_shapes_to_the_reader() {
        let opts = ReaderOptions::default();
        for bad in [
            &b"\r\nWARC/1.1\r\nContent-Length: 0\r\n\r\n"[..],
            b"WARC/2.0\r\nContent-Length: 0\r\n\r\n",
            b"WARC/1.1\r\nno colon\r\nContent-Length: 0\r\n\r\n",
            b"WARC/1.1\r\nContent-Length: x\r\n\r\n",
            b"WARC/1.1\r\nContent-Length: 0\r\n",
            b"WARC/1.1\r\n Folded: first\r\nContent-Length: 0\r\n\r\n",
            b"WARC/1.1\r\nA: \xff\r\nContent-Length: 0\r\n\r\n",
        ] {
            assert!(MemRecord::parse(bad, &opts).is_none(), "{bad:?}");
        }
        let ok = b"WARC/1.0\nContent-Length: 2\n\nab\r\n\r\n";
        let rec = MemRecord::parse(ok, &opts).unwrap();
        assert_eq!(rec.block().rest(), b"ab");
        let capped = ReaderOptions {
            body_cap: Some(1),
            ..ReaderOptions::default()
        };
        assert!(MemRecord::parse(ok, &capped).is_none());
    }
}
