//! Direct I/O (`O_DIRECT`) for the big sequential passes over run files.
//!
//! Why: on the benchmark machine (docs/BENCHMARKS.md, DRUM) the page cache was what bounded the
//! URL-seen merge at 10^9 fingerprints. Copying each byte into and out of the cache took a third
//! of the reader thread's time, and writing through it ran at about 390 MB/s where the disk
//! takes 1.3 GB/s directly. A merge reads a seen set once and writes the next one once, so
//! caching either only evicts something else. Dragnet asks for this only where it reads or
//! writes a whole big run once ([`crate::merge::check_update`] and the merge's seen set);
//! everything else goes through the cache as before.
//!
//! `O_DIRECT` wants buffers, offsets and lengths aligned to the device's logical block. Both
//! types here align to [`ALIGN`] (4 KiB, a multiple of every common block size). They move
//! [`CHUNK`] bytes per system call. The writer pads the last chunk and cuts the file back to
//! its true length before it is synced. Where the file system refuses `O_DIRECT` (tmpfs, for
//! one), both fall back to plain buffered I/O, with the same bytes and the same errors.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Alignment of buffers, file offsets and lengths.
pub const ALIGN: usize = 4096;
/// Bytes per read or write call.
pub const CHUNK: usize = 1 << 20;

/// A heap buffer aligned to [`ALIGN`].
struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is uniquely owned heap memory, like a `Vec<u8>`.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len, ALIGN).expect("valid layout");
        // SAFETY: `len` is non-zero (a constant multiple of ALIGN).
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialized (zeroed, then written) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("valid layout");
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

/// Opens `path` for reading with `O_DIRECT`, or plainly where that is refused; the flag says
/// which.
fn open_read(path: &Path) -> io::Result<(File, bool)> {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(f) => Ok((f, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok((File::open(path)?, false)),
        Err(e) => Err(e),
    }
}

/// Reads a file through one aligned chunk buffer, bypassing the page cache; `Read` and `Seek`
/// like a `BufReader<File>`.
pub struct DirectReader {
    file: File,
    buf: AlignedBuf,
    /// File offset of `buf[0]` (aligned).
    start: u64,
    /// Valid bytes in `buf`.
    valid: usize,
    /// Logical position.
    pos: u64,
}

impl DirectReader {
    /// Opens `path` for direct reading; `None` where the file system refuses `O_DIRECT`.
    pub fn open(path: &Path) -> io::Result<Option<DirectReader>> {
        let (file, direct) = open_read(path)?;
        Ok(direct.then(|| DirectReader {
            file,
            buf: AlignedBuf::new(CHUNK),
            start: 0,
            valid: 0,
            pos: 0,
        }))
    }

    fn refill(&mut self) -> io::Result<()> {
        let aligned = self.pos & !(ALIGN as u64 - 1);
        let mut got = 0;
        let buf = self.buf.as_mut_slice();
        // Fill the chunk unless the file ends first (a short read at the end of the file).
        while got < CHUNK {
            match self.file.read_at(&mut buf[got..], aligned + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if got % ALIGN != 0 {
                break; // only the end of the file gives an unaligned count
            }
        }
        self.start = aligned;
        self.valid = got;
        Ok(())
    }
}

impl Read for DirectReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let in_buf = |r: &DirectReader| r.pos >= r.start && r.pos < r.start + r.valid as u64;
        if !in_buf(self) {
            self.refill()?;
            if !in_buf(self) {
                return Ok(0); // end of file
            }
        }
        let at = (self.pos - self.start) as usize;
        let n = out.len().min(self.valid - at);
        out[..n].copy_from_slice(&self.buf.as_slice()[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for DirectReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(d) => self.pos.checked_add_signed(d).ok_or_else(bad_seek)?,
            SeekFrom::End(d) => self
                .file
                .metadata()?
                .len()
                .checked_add_signed(d)
                .ok_or_else(bad_seek)?,
        };
        Ok(self.pos)
    }
}

fn bad_seek() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "seek before the start of the file",
    )
}

/// Writes a new file through one aligned chunk buffer, bypassing the page cache.
pub struct DirectWriter {
    file: File,
    buf: AlignedBuf,
    /// Bytes in `buf`.
    filled: usize,
    /// Bytes written to the file before `buf`.
    flushed: u64,
}

impl DirectWriter {
    /// Creates (truncating) `path` for direct writing; `None` where the file system refuses
    /// `O_DIRECT`.
    pub fn create(path: &Path) -> io::Result<Option<DirectWriter>> {
        let opened = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(path);
        match opened {
            Ok(file) => Ok(Some(DirectWriter {
                file,
                buf: AlignedBuf::new(CHUNK),
                filled: 0,
                flushed: 0,
            })),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the last bytes (padded to [`ALIGN`], then cut back to the true length) and returns
    /// the file, not yet synced.
    pub fn finish(mut self) -> io::Result<File> {
        let len = self.flushed + self.filled as u64;
        if self.filled > 0 {
            let padded = self.filled.next_multiple_of(ALIGN);
            self.buf.as_mut_slice()[self.filled..padded].fill(0);
            self.file.write_all(&self.buf.as_slice()[..padded])?;
        }
        self.file.set_len(len)?;
        Ok(self.file)
    }
}

impl Write for DirectWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(CHUNK - self.filled);
        self.buf.as_mut_slice()[self.filled..self.filled + n].copy_from_slice(&data[..n]);
        self.filled += n;
        if self.filled == CHUNK {
            self.file.write_all(self.buf.as_slice())?;
            self.flushed += CHUNK as u64;
            self.filled = 0;
        }
        Ok(n)
    }

    /// Whole chunks are already written; the tail waits for [`DirectWriter::finish`], since a
    /// direct write must be a whole number of blocks.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_every_awkward_length_and_seek() {
        let t = tempfile::tempdir().unwrap();
        for len in [
            0usize,
            1,
            ALIGN - 1,
            ALIGN,
            ALIGN + 1,
            CHUNK - 3,
            CHUNK,
            2 * CHUNK + 777,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let p = t.path().join(format!("f{len}"));
            match DirectWriter::create(&p).unwrap() {
                Some(mut w) => {
                    // Uneven pieces, so chunks fill across calls.
                    for piece in data.chunks(3000) {
                        w.write_all(piece).unwrap();
                    }
                    w.finish().unwrap().sync_all().unwrap();
                }
                None => std::fs::write(&p, &data).unwrap(), // no O_DIRECT here
            }
            assert_eq!(std::fs::read(&p).unwrap(), data, "length {len}");
            let Some(mut r) = DirectReader::open(&p).unwrap() else {
                continue;
            };
            let mut back = Vec::new();
            r.read_to_end(&mut back).unwrap();
            assert_eq!(back, data, "length {len}");
            if len > 10 {
                let at = len as u64 / 3;
                r.seek(SeekFrom::Start(at)).unwrap();
                let mut b = [0u8; 5];
                let n = r.read(&mut b).unwrap();
                assert!(n > 0);
                assert_eq!(&b[..n], &data[at as usize..at as usize + n]);
                r.seek(SeekFrom::End(-3)).unwrap();
                let mut tail = Vec::new();
                r.read_to_end(&mut tail).unwrap();
                assert_eq!(tail, data[len - 3..]);
            }
        }
    }
}
