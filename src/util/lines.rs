//! Bounded line reading: the one way dragnet reads a line-oriented input (seed and inject files,
//! hosts files, CDXJ indexes, `check robots` on standard input).
//!
//! `BufRead::read_until` keeps a line in memory however long it is: a file without a newline
//! (`--seeds /dev/zero`, a binary file given by mistake) grows one buffer without bound. A
//! [`LineReader`] keeps at most `max` bytes of a line; the rest of an over-long line is read
//! through the reader's own buffer (`fill_buf`/`consume`) and dropped, so memory stays flat
//! whatever the input. The caller decides what an over-long line is (a bad seed reported and
//! skipped, a configuration or corruption error) from [`Line::too_long`], with the line's number
//! to name it. An input whose line does not end within `skip_max` bytes ([`Line::endless`]) is not
//! read further: no list of lines looks like that, and `/dev/zero` never ends.

use std::io::{self, BufRead};

/// The longest line of a URL list (seed and inject files): URLs are at most 2,048 bytes
/// (`[canon] max_url_len`), so a line four times that, with room for surrounding blanks and a
/// configured longer limit, is still one; a longer line is a bad line.
pub const MAX_URL_LINE: usize = 8 << 10;

/// How far the rest of an over-long line is read in search of its end before the input is
/// given up: a list of lines has its newlines long before that.
pub const MAX_SKIP: u64 = 64 << 20;

/// Reads lines of at most `max` bytes (without the newline) from a `BufRead`.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    max: usize,
    skip_max: u64,
    buf: Vec<u8>,
    number: u64,
}

/// One line read by [`LineReader::next_line`].
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line without its newline, or its first `max` bytes if it is longer.
    pub text: &'a [u8],
    /// The line's length without its newline (as far as it was read, for an endless one).
    pub len: u64,
    /// Bytes the line took in the input, newline included.
    pub bytes: u64,
    /// Whether a newline ended it (`false` for a last line without one, or an endless line).
    pub newline: bool,
    /// Whether the line did not end within the reader's `skip_max` bytes: the input was left
    /// in the middle of it and must not be read further.
    pub endless: bool,
}

impl Line<'_> {
    /// Whether the line is longer than the reader's `max` ([`Line::text`] holds its start).
    pub fn too_long(&self) -> bool {
        self.len > self.text.len() as u64
    }

    /// What to say about an over-long line: its number and length against the limit.
    pub fn too_long_message(&self, max: usize) -> String {
        if self.endless {
            format!(
                "line {} has no end of line in its first {} bytes (the limit is {max} bytes a \
                 line): not a text file of lines",
                self.number, self.len
            )
        } else {
            format!(
                "line {} is {} bytes long, over the limit of {max} bytes a line",
                self.number, self.len
            )
        }
    }
}

impl<R: BufRead> LineReader<R> {
    /// A reader of lines of at most `max` bytes, giving an input up after [`MAX_SKIP`] bytes of
    /// one line.
    pub fn new(inner: R, max: usize) -> Self {
        LineReader::with_skip_max(inner, max, MAX_SKIP)
    }

    /// [`LineReader::new`] with another limit for the search of an over-long line's end.
    pub fn with_skip_max(inner: R, max: usize, skip_max: u64) -> Self {
        LineReader {
            inner,
            max,
            skip_max: skip_max.max(max as u64),
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The most bytes of a line kept.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The next line, or `None` at the end of the input. `seen` is given every byte consumed,
    /// in order and newlines included (a digest of the whole input), also the dropped rest of
    /// an over-long line.
    pub fn next_line_seen(&mut self, seen: &mut dyn FnMut(&[u8])) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let (mut len, mut bytes, mut newline) = (0u64, 0u64, false);
        loop {
            let avail = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                break;
            }
            let (take, content) = match memchr::memchr(b'\n', avail) {
                Some(i) => {
                    newline = true;
                    (i + 1, i)
                }
                None => (avail.len(), avail.len()),
            };
            let room = self.max - self.buf.len();
            self.buf.extend_from_slice(&avail[..content.min(room)]);
            seen(&avail[..take]);
            self.inner.consume(take);
            len += content as u64;
            bytes += take as u64;
            if newline || len >= self.skip_max {
                break;
            }
        }
        if bytes == 0 {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some(Line {
            number: self.number,
            text: &self.buf,
            len,
            bytes,
            newline,
            endless: !newline && len >= self.skip_max && len > self.max as u64,
        }))
    }

    /// [`LineReader::next_line_seen`] without looking at the bytes.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.next_line_seen(&mut |_| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of `len` bytes of `fill` with no newline, made as it is read: a file of any size
    /// without a disk or memory of that size.
    struct Endless {
        left: u64,
        buf: Vec<u8>,
    }

    impl io::Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = (out.len() as u64).min(self.left) as usize;
            out[..n].fill(b'x');
            self.left -= n as u64;
            Ok(n)
        }
    }

    impl BufRead for Endless {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            let n = (self.buf.len() as u64).min(self.left) as usize;
            Ok(&self.buf[..n])
        }
        fn consume(&mut self, n: usize) {
            self.left -= n as u64;
        }
    }

    fn all(input: &[u8], max: usize) -> Vec<(u64, String, u64, bool, bool)> {
        let mut r = LineReader::new(io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((
                l.number,
                String::from_utf8_lossy(l.text).into_owned(),
                l.len,
                l.newline,
                l.too_long(),
            ));
        }
        out
    }

    #[test]
    fn lines_are_read_whole_up_to_the_limit() {
        assert_eq!(all(b"", 8), []);
        assert_eq!(
            all(b"ab\n\ncdefgh\nlast", 8),
            [
                (1, "ab".into(), 2, true, false),
                (2, "".into(), 0, true, false),
                (3, "cdefgh".into(), 6, true, false),
                (4, "last".into(), 4, false, false),
            ]
        );
        // Exactly the limit is whole; one more byte is too long, its rest skipped, and the
        // next line is read as usual (across the reader's small buffer).
        assert_eq!(
            all(b"12345678\n123456789\r\nok\n", 8),
            [
                (1, "12345678".into(), 8, true, false),
                (2, "12345678".into(), 10, true, true),
                (3, "ok".into(), 2, true, false),
            ]
        );
    }

    #[test]
    fn every_byte_is_seen_in_order() {
        let input = b"short\nthis line is far too long for the limit\r\nend";
        let mut r = LineReader::new(io::BufReader::with_capacity(5, &input[..]), 6);
        let mut seen = Vec::new();
        let mut bytes = 0;
        while let Some(l) = r
            .next_line_seen(&mut |b| seen.extend_from_slice(b))
            .unwrap()
        {
            bytes += l.bytes;
        }
        assert_eq!(seen, input);
        assert_eq!(bytes, input.len() as u64);
    }

    /// 50 MB without a newline cost the reader's buffer and `max`, not 50 MB; an input longer
    /// than `skip_max` without a newline is given up there.
    #[test]
    fn a_line_without_end_costs_no_memory() {
        let big = 50_000_000u64;
        let rd = Endless {
            left: big,
            buf: vec![b'x'; 64 << 10],
        };
        let mut r = LineReader::new(rd, MAX_URL_LINE);
        let l = r.next_line().unwrap().unwrap();
        assert_eq!((l.number, l.len, l.text.len()), (1, big, MAX_URL_LINE));
        assert!(l.too_long() && !l.newline && !l.endless);
        assert!(l
            .too_long_message(MAX_URL_LINE)
            .contains("line 1 is 50000000 bytes"));
        assert!(r.next_line().unwrap().is_none());
        assert!(r.buf.capacity() <= 2 * MAX_URL_LINE);

        let rd = Endless {
            left: u64::MAX,
            buf: vec![b'x'; 64 << 10],
        };
        let mut r = LineReader::with_skip_max(rd, 100, 1 << 20);
        let l = r.next_line().unwrap().unwrap();
        assert!(l.endless && l.too_long() && l.len >= 1 << 20, "{l:?}");
        assert!(l.too_long_message(100).contains("no end of line"));
    }
}
