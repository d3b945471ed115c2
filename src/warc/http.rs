//! The HTTP message inside a request or response block: its start line and headers, and the
//! payload with the transfer and content codings undone.
//!
//! A response record holds the bytes as the server sent them (the WARC standard asks for that and
//! warcio's digests assume it), so a reader that wants the document has to undo
//! `Transfer-Encoding: chunked` and `Content-Encoding` itself. Every decoder is capped: a few
//! kilobytes of gzip or brotli can expand to gigabytes, and the parse stage promises "one document
//! at a time" memory (docs/design.md §1), so the decoded payload is cut off with a [`CapExceeded`] error
//! past the cap rather than trusted.
//!
//! These helpers work on any `BufRead` and report problems as `io::Error`s (`InvalidData`,
//! `UnexpectedEof`, `Unsupported`, or `Other` wrapping [`CapExceeded`]): they sit inside
//! `Read` chains, where that is the only error type there is. [`crate::warc::Record`] turns
//! them into errors naming the file and record offset.
//!
//! Supported codings: `chunked`, `identity`, `gzip`/`x-gzip`, `deflate` (zlib-wrapped as the
//! standard says, or raw as some servers send it), `br` and `zstd`.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};

/// Default cap on a decoded payload: 64 MiB.
pub const DEFAULT_DECODED_CAP: u64 = 64 << 20;

/// Default cap on an HTTP header block: 256 KiB.
pub const DEFAULT_MAX_HEAD: usize = 256 << 10;

/// The start line and headers of an HTTP/1.x message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpHead {
    /// The first line without its line end: `HTTP/1.1 200 OK` or `GET / HTTP/1.1`.
    pub start_line: String,
    /// The header fields' names and values, one after the other ([`HttpHead::headers`]): two
    /// allocations a head rather than two a field.
    text: String,
    /// Per field, in order: where its name ends and where its value ends in `text` (each
    /// starts where the one before ends).
    fields: Vec<(usize, usize)>,
    /// Bytes of the header block, blank line included: the payload starts here.
    pub len: u64,
}

impl HttpHead {
    /// A head of `start_line` and no fields yet, with room for `fields` fields of `bytes`
    /// bytes of names and values in all.
    pub fn with_capacity(start_line: String, fields: usize, bytes: usize) -> HttpHead {
        HttpHead {
            start_line,
            text: String::with_capacity(bytes),
            fields: Vec::with_capacity(fields),
            len: 0,
        }
    }

    /// Adds a header field (name as sent, value trimmed by the caller).
    pub fn push(&mut self, name: &str, value: &str) {
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.fields.push((name_end, self.text.len()));
    }

    /// Continues the last field's value (obsolete line folding); nothing without a field.
    fn continue_last(&mut self, more: &str) {
        if let Some(last) = self.fields.last_mut() {
            self.text.push(' ');
            self.text.push_str(more);
            last.1 = self.text.len();
        }
    }

    /// The header fields in order, names as sent; obsolete line folding is joined with a
    /// space.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut start = 0;
        self.fields.iter().map(move |&(n, v)| {
            let field = (&self.text[start..n], &self.text[n..v]);
            start = v;
            field
        })
    }

    /// The status code of a response (`HTTP/1.1 404 Not Found` gives 404).
    pub fn status(&self) -> Option<u16> {
        let mut parts = self.start_line.split_ascii_whitespace();
        let version = parts.next()?;
        if !version.get(..5)?.eq_ignore_ascii_case("HTTP/") {
            return None;
        }
        let code = parts.next()?;
        (code.len() == 3).then(|| code.parse().ok())?
    }

    /// The method of a request (`GET / HTTP/1.1` gives `GET`).
    pub fn method(&self) -> Option<&str> {
        let first = self.start_line.split_ascii_whitespace().next()?;
        (!first.to_ascii_uppercase().starts_with("HTTP/")).then_some(first)
    }

    /// The first value of a header, names compared case-insensitively.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every value of a header, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// The codings applied to the payload, in the order the sender applied them: every
    /// `Content-Encoding`, then every `Transfer-Encoding` (lower-cased, `identity` dropped).
    pub fn codings(&self) -> Vec<String> {
        let list = |name| {
            self.get_all(name)
                .flat_map(|v| v.split(','))
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty() && c != "identity")
                .collect::<Vec<_>>()
        };
        let mut all = list("Content-Encoding");
        all.extend(list("Transfer-Encoding"));
        all
    }
}

/// Reads an HTTP header block: the start line, header lines and the blank line. Line ends may be
/// CRLF or LF; a line of only whitespace ends the block (as in warcio); the block may also end
/// with the input. At most `max` bytes are read.
pub fn read_head<R: BufRead + ?Sized>(r: &mut R, max: usize) -> io::Result<HttpHead> {
    let mut head = HttpHead::default();
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = read_line(r, &mut line, max.saturating_sub(head.len as usize))?;
        head.len += n as u64;
        if n == 0 {
            if first {
                return Err(invalid("empty HTTP message"));
            }
            return Ok(head); // the block ended without a blank line: no payload
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if first {
            if text.is_empty() {
                return Ok(head);
            }
            head.start_line = text.to_owned();
            first = false;
            continue;
        }
        if text.trim_start().is_empty() {
            return Ok(head);
        }
        if text.starts_with([' ', '\t']) {
            head.continue_last(text.trim());
            continue;
        }
        // Lines without a colon are dropped, as warcio and browsers do.
        if let Some((name, value)) = text.split_once(':') {
            head.push(name.trim_end(), value.trim());
        }
    }
}

/// How much of `buf` belongs to a line of which `n` bytes were read already, and whether that
/// ends it (`\n` included); `None` if the line would pass `max` bytes. The step of every bounded
/// line reader (here and in the WARC reader).
pub(crate) fn line_part(buf: &[u8], n: usize, max: usize) -> Option<(usize, bool)> {
    let (take, end) = match memchr::memchr(b'\n', buf) {
        Some(i) => (i + 1, true),
        None => (buf.len(), false),
    };
    (n + take <= max).then_some((take, end))
}

/// Reads one line (through `\n`) into `out`; returns its length, 0 at the end of input.
fn read_line<R: BufRead + ?Sized>(r: &mut R, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let mut n = 0;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(n);
        }
        let Some((take, end)) = line_part(buf, n, max) else {
            return Err(invalid(format!(
                "HTTP header block longer than {max} bytes"
            )));
        };
        out.extend_from_slice(&buf[..take]);
        r.consume(take);
        n += take;
        if end {
            return Ok(n);
        }
    }
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// The error a capped reader returns once the decoded payload exceeds its cap (wrapped in an
/// `io::Error` of kind `Other`; see [`is_cap_exceeded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapExceeded {
    /// The cap in bytes.
    pub cap: u64,
}

impl fmt::Display for CapExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decoded payload exceeds the decompression cap of {} bytes",
            self.cap
        )
    }
}

impl std::error::Error for CapExceeded {}

/// Whether an error is a [`CapExceeded`].
pub fn is_cap_exceeded(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<CapExceeded>().is_some())
}

/// A reader that yields at most `cap` bytes and fails with [`CapExceeded`] if there are more.
pub struct Capped<R> {
    inner: R,
    left: u64,
    cap: u64,
}

impl<R: Read> Capped<R> {
    /// Caps `inner` at `cap` bytes.
    pub fn new(inner: R, cap: u64) -> Capped<R> {
        Capped {
            inner,
            left: cap,
            cap,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(CapExceeded { cap: self.cap })),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Undoes `Transfer-Encoding: chunked`. Chunk extensions and trailers are skipped; a body that
/// ends inside a chunk (a truncated record) fails with `UnexpectedEof` after yielding what there
/// was.
pub struct Dechunk<R> {
    inner: R,
    /// Bytes left in the current chunk; `None` before a size line.
    left: Option<u64>,
    done: bool,
}

impl<R: BufRead> Dechunk<R> {
    /// De-chunks `inner`.
    pub fn new(inner: R) -> Dechunk<R> {
        Dechunk {
            inner,
            left: None,
            done: false,
        }
    }

    fn size_line(&mut self) -> io::Result<u64> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if read_line(&mut self.inner, &mut line, 4096)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "chunked body ends before its last chunk",
                ));
            }
            let text = String::from_utf8_lossy(&line);
            let size = text.split(';').next().unwrap_or("").trim();
            if size.is_empty() {
                continue; // the CRLF after a chunk's data, or a stray blank line
            }
            return u64::from_str_radix(size, 16)
                .map_err(|_| invalid(format!("bad chunk size line {:?}", text.trim_end())));
        }
    }
}

impl<R: BufRead> Read for Dechunk<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.left {
                None | Some(0) => {
                    let size = self.size_line()?;
                    if size == 0 {
                        self.done = true;
                        // Trailer fields up to the blank line; a body cut here is still whole.
                        let mut line = Vec::new();
                        while read_line(&mut self.inner, &mut line, 64 << 10)? > 0
                            && !line.iter().all(u8::is_ascii_whitespace)
                        {
                            line.clear();
                        }
                        return Ok(0);
                    }
                    self.left = Some(size);
                }
                Some(left) => {
                    let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let n = self.inner.read(&mut buf[..want])?;
                    if n == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "chunked body ends inside a chunk",
                        ));
                    }
                    self.left = Some(left - n as u64);
                    return Ok(n);
                }
            }
        }
    }
}

/// Whether `head` (the first bytes of a body) starts with a chunk-size line: hex digits, then
/// optional whitespace or a `;` extension, then CRLF or LF. An empty body counts as chunked.
fn looks_chunked(head: &[u8]) -> bool {
    let digits = head.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if head.is_empty() {
        return true;
    }
    if digits == 0 || digits > 16 {
        return false;
    }
    match head.get(digits) {
        None => true, // the buffer ends inside the size: cannot tell, assume the header is right
        Some(b'\r' | b'\n' | b';' | b' ' | b'\t') => true,
        Some(_) => false,
    }
}

/// Reads the payload of `body` ([`payload_reader`]: codings undone, at most `cap` bytes) into
/// `out`: what decodes before an error (a truncated member, a wrong coding) is the payload.
/// Returns `true` if the cap cut it. The parse's decoding of a page; the fetch's streaming one
/// (`fetch::stage::payload`) is tested against it.
pub fn read_payload<R: BufRead>(head: &HttpHead, body: R, cap: u64, out: &mut Vec<u8>) -> bool {
    match payload_reader(head, body, cap) {
        Ok(mut reader) => reader.read_to_end(out).is_err_and(|e| is_cap_exceeded(&e)),
        Err(_) => false,
    }
}

/// The payload of an HTTP message whose header block `head` has been read from `body`: codings
/// undone (last applied, first undone) and the result capped at `cap` bytes.
pub fn payload_reader<'a, R: BufRead + 'a>(
    head: &HttpHead,
    body: R,
    cap: u64,
) -> io::Result<Box<dyn Read + 'a>> {
    let mut r: Box<dyn BufRead + 'a> = Box::new(body);
    for coding in head.codings().iter().rev() {
        let next: Box<dyn Read + 'a> = match coding.as_str() {
            // Many capture tools (wget, warcio's capture, some proxies) store the body
            // de-chunked but keep the `Transfer-Encoding: chunked` header; warcio reads such a
            // body as it is. A body that does not start with a chunk-size line is taken as
            // already de-chunked.
            "chunked" => {
                if looks_chunked(r.fill_buf()?) {
                    Box::new(Dechunk::new(r))
                } else {
                    continue;
                }
            }
            "gzip" | "x-gzip" => Box::new(flate2::bufread::MultiGzDecoder::new(r)),
            "deflate" => {
                let zlib = {
                    let head = r.fill_buf()?;
                    head.len() >= 2
                        && head[0] & 0x0f == 8
                        && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0
                };
                if zlib {
                    Box::new(flate2::bufread::ZlibDecoder::new(r))
                } else {
                    Box::new(flate2::bufread::DeflateDecoder::new(r))
                }
            }
            "br" => Box::new(brotli_decompressor::Decompressor::new(r, 32 << 10)),
            "zstd" => Box::new(zstd::stream::read::Decoder::with_buffer(r)?),
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("unsupported content coding {other:?}"),
                ))
            }
        };
        r = Box::new(BufReader::with_capacity(32 << 10, next));
    }
    Ok(Box::new(Capped::new(r, cap)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn decode(raw: &[u8], cap: u64) -> io::Result<Vec<u8>> {
        let mut r = raw;
        let head = read_head(&mut r, DEFAULT_MAX_HEAD)?;
        let mut out = Vec::new();
        payload_reader(&head, r, cap)?.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn head_parsing() {
        let raw = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nX-Long: a\r\n  b\r\nbogus\r\n\r\nbody";
        let mut r = &raw[..];
        let h = read_head(&mut r, 1000).unwrap();
        assert_eq!(h.status(), Some(404));
        assert_eq!(h.get("content-type"), Some("text/html"));
        assert_eq!(h.get("x-long"), Some("a b"));
        assert_eq!(h.len as usize, raw.len() - 4);
        assert_eq!(r, b"body");
        let mut q = &b"GET /x HTTP/1.1\nHost: a\n\n"[..];
        let h = read_head(&mut q, 1000).unwrap();
        assert_eq!((h.method(), h.status()), (Some("GET"), None));
        assert!(read_head(&mut &b"HTTP/1.1 200 OK\r\nA: b\r\n"[..], 10).is_err());
        assert!(read_head(&mut &b""[..], 10).is_err());
    }

    #[test]
    fn chunked_gzip_brotli_deflate_zstd() {
        let doc = b"<html>hello hello hello</html>".repeat(50);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&doc).unwrap();
        let gz = gz.finish().unwrap();
        let mut chunked = Vec::new();
        for c in gz.chunks(100) {
            write!(chunked, "{:x};ext=1\r\n", c.len()).unwrap();
            chunked.extend_from_slice(c);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\nTrailer: x\r\n\r\n");
        let mut raw =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
                .to_vec();
        raw.extend_from_slice(&chunked);
        assert_eq!(decode(&raw, 1 << 20).unwrap(), doc);
        let e = decode(&raw, 100).unwrap_err();
        assert!(is_cap_exceeded(&e), "{e}");
        assert_eq!(decode(&raw, doc.len() as u64).unwrap(), doc);
        // Truncated inside a chunk.
        let cut = &raw[..raw.len() - 40];
        assert_eq!(
            decode(cut, 1 << 20).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );

        for (name, body) in [
            ("deflate", {
                let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
                z.write_all(&doc).unwrap();
                z.finish().unwrap()
            }),
            ("deflate", {
                let mut z = flate2::write::DeflateEncoder::new(Vec::new(), Default::default());
                z.write_all(&doc).unwrap();
                z.finish().unwrap()
            }),
            ("zstd", zstd::bulk::compress(&doc, 3).unwrap()),
        ] {
            let mut raw =
                format!("HTTP/1.1 200 OK\r\nContent-Encoding: {name}\r\n\r\n").into_bytes();
            raw.extend_from_slice(&body);
            assert_eq!(decode(&raw, 1 << 20).unwrap(), doc, "{name}");
        }
        let raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\n\r\nxx";
        assert_eq!(
            decode(raw, 100).unwrap_err().kind(),
            io::ErrorKind::Unsupported
        );
    }

    #[test]
    fn brotli() {
        let doc = b"<p>brotli brotli brotli</p>".repeat(40);
        let mut br = Vec::new();
        {
            let mut w = ::brotli::CompressorWriter::new(&mut br, 4096, 5, 22);
            w.write_all(&doc).unwrap();
        }
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n".to_vec();
        raw.extend_from_slice(&br);
        assert_eq!(decode(&raw, 1 << 20).unwrap(), doc);
        raw.truncate(raw.len() - 3);
        assert!(decode(&raw, 1 << 20).is_err());
    }
}
