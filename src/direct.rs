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
//! [`CHUNK`] bytes per system call, on an I/O thread of their own with [`DEPTH`] chunks queued:
//! the kernel neither reads ahead nor writes behind for direct I/O, so without it the thread
//! that decodes or compresses would wait for the disk on every chunk. The writer pads the last chunk and cuts the file back to
//! its true length before it is synced. Where the file system refuses `O_DIRECT` (tmpfs, for
//! one), both fall back to plain buffered I/O, with the same bytes and the same errors.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Alignment of buffers, file offsets and lengths.
pub const ALIGN: usize = 4096;
/// Bytes per read or write call.
pub const CHUNK: usize = 1 << 20;
/// Chunks queued between a reader or writer and its I/O thread.
pub const DEPTH: usize = 4;

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

/// Reads a file in aligned chunks, bypassing the page cache, with the next chunks read ahead on
/// an I/O thread; `Read` and `Seek` like a `BufReader<File>`. A seek outside the chunks read
/// ahead restarts the read-ahead there.
pub struct DirectReader {
    file: File,
    buf: AlignedBuf,
    /// File offset of `buf[0]` (aligned).
    start: u64,
    /// Valid bytes in `buf`.
    valid: usize,
    /// Logical position.
    pos: u64,
    ahead: Option<ReadAhead>,
}

/// The I/O thread of a [`DirectReader`]: chunks from `next` on, in order.
struct ReadAhead {
    rx: Receiver<io::Result<(AlignedBuf, usize)>>,
    back: Sender<AlignedBuf>,
    /// File offset of the next chunk `rx` gives.
    next: u64,
}

impl ReadAhead {
    fn start(file: &File, from: u64) -> io::Result<ReadAhead> {
        let file = file.try_clone()?;
        let (tx, rx) = sync_channel(DEPTH);
        let (back, back_rx) = channel::<AlignedBuf>();
        std::thread::Builder::new()
            .name("direct-read".into())
            .spawn(move || {
                let mut at = from;
                loop {
                    let mut buf = back_rx
                        .try_recv()
                        .unwrap_or_else(|_| AlignedBuf::new(CHUNK));
                    let got = read_chunk(&file, &mut buf, at);
                    let end = !matches!(got, Ok(n) if n == CHUNK);
                    if tx.send(got.map(|n| (buf, n))).is_err() || end {
                        return; // the reader is gone, or the file (or an error) ended it
                    }
                    at += CHUNK as u64;
                }
            })?;
        Ok(ReadAhead {
            rx,
            back,
            next: from,
        })
    }
}

/// Reads the chunk at `at` (aligned) into `buf`: `CHUNK` bytes, or fewer where the file ends.
fn read_chunk(file: &File, buf: &mut AlignedBuf, at: u64) -> io::Result<usize> {
    let buf = buf.as_mut_slice();
    let mut got = 0;
    while got < CHUNK {
        match file.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if got % ALIGN != 0 {
            break; // only the end of the file gives an unaligned count
        }
    }
    Ok(got)
}

impl DirectReader {
    /// Opens `path` for direct reading; `None` where the file system refuses `O_DIRECT`.
    pub fn open(path: &Path) -> io::Result<Option<DirectReader>> {
        let (file, direct) = open_read(path)?;
        Ok(direct.then(|| DirectReader {
            file,
            buf: AlignedBuf::new(ALIGN),
            start: 0,
            valid: 0,
            pos: 0,
            ahead: None,
        }))
    }

    /// Makes `buf` the chunk holding `pos`, from the read-ahead (restarted if `pos` is not
    /// where it stands).
    fn refill(&mut self) -> io::Result<()> {
        let aligned = self.pos & !(CHUNK as u64 - 1);
        if self.ahead.as_ref().map(|a| a.next) != Some(aligned) {
            self.ahead = Some(ReadAhead::start(&self.file, aligned)?);
        }
        let ahead = self.ahead.as_mut().expect("started above");
        match ahead.rx.recv() {
            Ok(Ok((buf, n))) => {
                let old = std::mem::replace(&mut self.buf, buf);
                if old.len == CHUNK {
                    let _ = ahead.back.send(old);
                }
                self.start = aligned;
                self.valid = n;
                ahead.next = aligned + CHUNK as u64;
            }
            Ok(Err(e)) => {
                self.ahead = None;
                return Err(e);
            }
            Err(_) => {
                // The thread stopped at the end of the file: nothing more to read here.
                self.ahead = None;
                self.start = aligned;
                self.valid = 0;
            }
        }
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

/// Writes a new file in aligned chunks, bypassing the page cache, with full chunks written
/// behind on an I/O thread.
pub struct DirectWriter {
    buf: AlignedBuf,
    /// Bytes in `buf`.
    filled: usize,
    /// Bytes handed to the I/O thread before `buf`.
    flushed: u64,
    full: Option<SyncSender<AlignedBuf>>,
    empty: Receiver<AlignedBuf>,
    /// Buffers that may still be made before reusing returned ones.
    spare: usize,
    io: Option<JoinHandle<io::Result<File>>>,
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
        let mut file = match opened {
            Ok(file) => file,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(None),
            Err(e) => return Err(e),
        };
        let (full, full_rx) = sync_channel::<AlignedBuf>(DEPTH);
        let (empty_tx, empty) = channel();
        let io = std::thread::Builder::new()
            .name("direct-write".into())
            .spawn(move || {
                for buf in full_rx {
                    file.write_all(buf.as_slice())?;
                    let _ = empty_tx.send(buf);
                }
                Ok(file)
            })?;
        Ok(Some(DirectWriter {
            buf: AlignedBuf::new(CHUNK),
            filled: 0,
            flushed: 0,
            full: Some(full),
            empty,
            spare: DEPTH + 1,
            io: Some(io),
        }))
    }

    /// Waits for the I/O thread: the file, or the error that stopped it.
    fn join(&mut self) -> io::Result<File> {
        self.full = None;
        match self.io.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the direct-write thread panicked")),
            None => Err(io::Error::other("the direct writer failed earlier")),
        }
    }

    /// Writes the last bytes (padded to [`ALIGN`], then cut back to the true length) and returns
    /// the file, not yet synced.
    pub fn finish(mut self) -> io::Result<File> {
        let len = self.flushed + self.filled as u64;
        let mut file = self.join()?;
        if self.filled > 0 {
            let padded = self.filled.next_multiple_of(ALIGN);
            self.buf.as_mut_slice()[self.filled..padded].fill(0);
            file.write_all(&self.buf.as_slice()[..padded])?;
        }
        file.set_len(len)?;
        Ok(file)
    }
}

impl Write for DirectWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(CHUNK - self.filled);
        self.buf.as_mut_slice()[self.filled..self.filled + n].copy_from_slice(&data[..n]);
        self.filled += n;
        if self.filled == CHUNK {
            let next = if self.spare > 0 {
                self.spare -= 1;
                AlignedBuf::new(CHUNK)
            } else {
                match self.empty.recv() {
                    Ok(b) => b,
                    Err(_) => return Err(self.join().err().unwrap_or_else(stopped)),
                }
            };
            let full = std::mem::replace(&mut self.buf, next);
            let sent = self.full.as_ref().is_some_and(|tx| tx.send(full).is_ok());
            if !sent {
                return Err(self.join().err().unwrap_or_else(stopped));
            }
            self.flushed += CHUNK as u64;
            self.filled = 0;
        }
        Ok(n)
    }

    /// Whole chunks are on their way; the tail waits for [`DirectWriter::finish`], since a
    /// direct write must be a whole number of blocks.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for DirectWriter {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

fn stopped() -> io::Error {
    io::Error::other("the direct-write thread stopped early")
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
