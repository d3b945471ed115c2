//! The storage seam: the one place where files become visible.
//!
//! Every file dragnet publishes goes through [`AtomicFile`]: it is written under a temporary name
//! in the same directory, flushed and fsynced, renamed over its final name, and then the directory
//! itself is fsynced so the rename survives a power cut. A reader can therefore never observe a
//! partially written file (tantivy's `Directory::atomic_write` makes the same promise), and a
//! `kill -9` at any instant leaves either the old state or the complete new file, plus at worst a
//! temporary file that [`remove_temps`] sweeps away on the next run.
//!
//! Temporary names are `.<final name>.tmp.<pid>@<host>`, hidden and recognisable, so a sweep never
//! touches anything else; the host (the short host name) tells a sweep whether it can judge the
//! writer by its pid (see [`remove_temps`]).
//!
//! Every write, fsync, rename, directory fsync and directory creation of a crawl passes
//! [`fault::check`] first (here, in the WARC writer through [`AtomicFile`], in the queue pager and
//! in the lock): in debug builds (the ones tests run) `DRAGNET_FAULT` can make the Nth of them
//! fail, the seam the storage fault campaign sweeps (docs/RELIABILITY.md, campaign 3).

pub mod fault;
pub mod out;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};

/// What marks a temporary file's name (after a leading dot): `.NAME.tmp.PID...`.
pub const TEMP_MARK: &str = ".tmp.";

/// A file being written that becomes visible under its final name only on [`AtomicFile::commit`].
///
/// Dropping it without committing removes the temporary file.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    out: Option<Sink>,
    written: u64,
    /// Removes the temporary file if a signal's stop is cut short ([`crate::interrupt`]).
    _stop: crate::interrupt::OnStop,
    guard: Option<Guard>,
    /// Where write-behind stands, if it is on ([`AtomicFile::drop_behind`]).
    behind: Option<Behind>,
    /// The xxh3 of the bytes written so far, if asked for ([`AtomicFile::summed`]).
    sum: Option<Box<xxhash_rust::xxh3::Xxh3>>,
}

/// The length and xxh3-64 of a file's bytes: what [`crate::util::file_digest`] reads back, taken
/// by [`AtomicFile::commit_summed`] from the bytes as they were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sum {
    /// xxh3-64 of the whole file.
    pub xxh3: u64,
    /// Its length in bytes.
    pub bytes: u64,
}

/// Write-behind of a file written once and not read back by the run that writes it
/// ([`AtomicFile::drop_behind`]): offsets up to which writeback was started, and up to which
/// the written pages were handed back.
#[derive(Default)]
struct Behind {
    started: u64,
    dropped: u64,
}

/// Bytes between two write-behind steps of [`AtomicFile::drop_behind`].
const BEHIND_STEP: u64 = 8 << 20;

/// Hands `len` bytes of `file`'s pages from `from` back to the kernel (`len` 0: to the end);
/// pages not yet written back stay. Advice: a failure changes nothing but the cache.
#[cfg(target_os = "linux")]
fn uncache(file: &File, from: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: a file descriptor we own and a byte range: only the page cache changes.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            from as libc::off64_t,
            len as libc::off64_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
}

/// How a file is renamed over its final name ([`AtomicFile::guard`], [`rename`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publish {
    /// Over whatever the final name is (a regular file is replaced).
    Replace,
    /// Only if the final name is free: if anything took it, the rename fails, atomically, and
    /// leaves it as it is.
    NoReplace,
}

/// What [`AtomicFile::commit`] asks just before its rename: how to publish, or an error that
/// stops the commit (the temporary file is removed, the final name untouched).
pub type Guard = Box<dyn Fn() -> Result<Publish> + Send + Sync>;

/// Where an [`AtomicFile`]'s bytes go: through the page cache, or around it.
enum Sink {
    Buffered(BufWriter<File>),
    Direct(crate::direct::DirectWriter),
}

impl Sink {
    fn get(&mut self) -> &mut dyn Write {
        match self {
            Sink::Buffered(w) => w,
            Sink::Direct(w) => w,
        }
    }
}

impl AtomicFile {
    /// Starts writing `dest` (its directory must exist).
    pub fn create(dest: &Path) -> Result<AtomicFile> {
        crate::interrupt::check()?;
        let tmp = temp_path(dest)?;
        let stop = crate::interrupt::remove_on_stop(&tmp);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .ctx("create", &tmp)?;
        Ok(AtomicFile {
            tmp,
            dest: dest.to_path_buf(),
            out: Some(Sink::Buffered(BufWriter::with_capacity(1 << 20, file))),
            written: 0,
            _stop: stop,
            guard: None,
            behind: None,
            sum: None,
        })
    }

    /// Like [`AtomicFile::create`], but written with direct I/O ([`crate::direct`]) where the
    /// file system allows it: for big files written once and not read again soon.
    pub fn create_direct(dest: &Path) -> Result<AtomicFile> {
        crate::interrupt::check()?;
        let tmp = temp_path(dest)?;
        let stop = crate::interrupt::remove_on_stop(&tmp);
        match crate::direct::DirectWriter::create(&tmp).ctx("create", &tmp)? {
            Some(w) => Ok(AtomicFile {
                tmp,
                dest: dest.to_path_buf(),
                out: Some(Sink::Direct(w)),
                written: 0,
                _stop: stop,
                guard: None,
                behind: None,
                sum: None,
            }),
            None => AtomicFile::create(dest),
        }
    }

    /// Checks `guard` just before the commit's rename, and publishes as it says: how an output
    /// whose final name a user chose ([`crate::storage::out`]) is published without replacing what
    /// appeared there meanwhile.
    pub fn guard(mut self, guard: Guard) -> AtomicFile {
        self.guard = Some(guard);
        self
    }

    /// Writes behind and drops what was written from the page cache, for a big file written
    /// once that nobody reads while it is written (a WARC file: the fetch keeps what it needs,
    /// a later `dragnet parse` reads it again from disk). Every [`BEHIND_STEP`] bytes the kernel
    /// is asked to start writing the new bytes back (`sync_file_range`), and the step before,
    /// written back by then, is handed back (`posix_fadvise(DONTNEED)`); after the commit's
    /// fsync the rest is. So the file holds at most a few steps of the page cache instead of
    /// its whole size, pushes out nothing a stage still reads, and its next pages reuse the
    /// ones just freed, warm: on a virtual machine that hands freed memory back to its host,
    /// writing into pages never touched cost ~3 s of system time per GB against ~0.5-1 s
    /// (docs/BENCHMARKS.md). The bytes, the fsync and the rename are those of any file;
    /// where the calls are missing (not Linux) or fail, nothing changes but the cache.
    pub fn drop_behind(mut self) -> AtomicFile {
        if matches!(self.out, Some(Sink::Buffered(_))) {
            self.behind = Some(Behind::default());
        }
        self
    }

    /// Keeps the xxh3 of every byte written, for [`AtomicFile::commit_summed`]: a `.done`
    /// marker's digest of a big output without reading the file back (the fetch stage's WARC
    /// files, ~1 GB each, were read again whole at every commit: 3.6% of a crawl's CPU).
    pub fn summed(mut self) -> AtomicFile {
        self.sum = Some(Box::default());
        self
    }

    /// One write-behind step, if [`BEHIND_STEP`] more bytes reached the kernel since the last.
    fn write_behind(&mut self) {
        let (Some(b), Some(Sink::Buffered(w))) = (self.behind.as_mut(), self.out.as_ref()) else {
            return;
        };
        let in_kernel = self.written - w.buffer().len() as u64;
        if in_kernel < b.started + BEHIND_STEP {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = w.get_ref().as_raw_fd();
            let (from, len) = (
                b.started as libc::off64_t,
                (in_kernel - b.started) as libc::off64_t,
            );
            // SAFETY: a file descriptor we own and a byte range: only the page cache changes.
            unsafe { libc::sync_file_range(fd, from, len, libc::SYNC_FILE_RANGE_WRITE) };
            if b.dropped < b.started {
                uncache(w.get_ref(), b.dropped, b.started - b.dropped);
            }
        }
        b.dropped = b.started;
        b.started = in_kernel;
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes all of `buf`, naming the temporary file on error.
    pub fn write_all_bytes(&mut self, buf: &[u8]) -> Result<()> {
        crate::interrupt::check()?;
        let out = self.out.as_mut().expect("AtomicFile used after commit");
        fault::check("write", &self.tmp)
            .and_then(|()| out.get().write_all(buf))
            .ctx("write", &self.tmp)?;
        self.accepted(buf);
        Ok(())
    }

    /// What follows bytes the sink took, on either way in: the count, the sum, write-behind.
    fn accepted(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        if let Some(h) = &mut self.sum {
            h.update(bytes);
        }
        self.write_behind();
    }

    /// [`AtomicFile::commit`], returning the length and xxh3 of the bytes committed; the file
    /// must have been made [`AtomicFile::summed`] before anything was written.
    pub fn commit_summed(mut self) -> Result<Sum> {
        let Some(h) = self.sum.take() else {
            return Err(Error::Internal(format!(
                "{}: a digest asked of a file written without one",
                self.tmp.display()
            )));
        };
        let sum = Sum {
            xxh3: h.digest(),
            bytes: self.written,
        };
        self.commit()?;
        Ok(sum)
    }

    /// Flushes, fsyncs, renames over the final name and fsyncs the directory.
    pub fn commit(mut self) -> Result<()> {
        let file = match self.out.take().expect("AtomicFile committed twice") {
            Sink::Buffered(out) => out
                .into_inner()
                .map_err(|e| Error::io("write", &self.tmp, e.into_error()))?,
            Sink::Direct(out) => out.finish().ctx("write", &self.tmp)?,
        };
        fault::check("fsync", &self.tmp)
            .and_then(|()| file.sync_all())
            .ctx("fsync", &self.tmp)?;
        #[cfg(target_os = "linux")]
        if self.behind.is_some() {
            // Length 0: to the end of the file.
            uncache(&file, 0, 0);
        }
        drop(file);
        match self.guard.take() {
            None => fault::check("rename", &self.tmp)
                .and_then(|()| fs::rename(&self.tmp, &self.dest))
                .ctx("rename", &self.tmp)?,
            Some(guard) => {
                if let Err(e) = guard().and_then(|how| rename(&self.tmp, &self.dest, how)) {
                    let _ = fs::remove_file(&self.tmp);
                    return Err(e);
                }
            }
        }
        sync_dir(parent_of(&self.dest))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        fault::check("write", &self.tmp)?;
        let n = self
            .out
            .as_mut()
            .expect("AtomicFile used after commit")
            .get()
            .write(buf)?;
        self.accepted(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out
            .as_mut()
            .expect("AtomicFile used after commit")
            .get()
            .flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Publishes `bytes` as `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all_bytes(bytes)?;
    f.commit()
}

/// Publishes the committed file `src` under a second name `dest` as well, atomically: a hard link
/// made under a temporary name beside `dest`, renamed over it, the directory synced. The two
/// names are one file until either is replaced (every writer of a crawl replaces, never edits).
/// Fails (nothing published) where the file system has no hard links or the two names are on
/// different file systems: the caller writes a copy instead.
pub fn link_atomic(src: &Path, dest: &Path) -> Result<()> {
    let tmp = temp_path(dest)?;
    fault::check("link", &tmp)
        .and_then(|()| fs::hard_link(src, &tmp))
        .ctx("link", &tmp)?;
    if let Err(e) = fs::rename(&tmp, dest) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io("rename", &tmp, e));
    }
    sync_dir(parent_of(dest))
}

/// Renames `from` to `to` as `how` says. [`Publish::NoReplace`] is one `renameat2` with
/// `RENAME_NOREPLACE` where the file system has it, else a hard link and an unlink for a file (a
/// link never replaces), else (a directory on such a file system) a look just before the rename.
/// A taken name is a usage error (exit 2) that says it was left as it is.
pub fn rename(from: &Path, to: &Path, how: Publish) -> Result<()> {
    fault::check("rename", from).ctx("rename", from)?;
    let taken = || {
        Error::Usage(format!(
            "{} appeared while dragnet wrote it: it was left as it is, and nothing was written \
             there",
            to.display()
        ))
    };
    match how {
        Publish::Replace => fs::rename(from, to).ctx("rename", from),
        Publish::NoReplace => match rename_noreplace(from, to) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(taken()),
            Err(e) => Err(Error::io("rename", from, e)),
        },
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths that live across the call; no memory is shared.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => link_noreplace(from, to),
        _ => Err(e),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    link_noreplace(from, to)
}

/// Without `RENAME_NOREPLACE`: a hard link (never replaces) and an unlink; a directory (or a
/// file system without hard links) by a look just before a plain rename.
fn link_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    if !fs::symlink_metadata(from)?.is_dir() {
        match fs::hard_link(from, to) {
            Ok(()) => return fs::remove_file(from),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
            Err(_) => {}
        }
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    fs::rename(from, to)
}

/// Creates `dir` and its parents, fsyncing each directory that gained an entry, so the new
/// directories survive a power cut.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match fault::check("create directory", dir).and_then(|()| fs::create_dir(dir)) {
        Ok(()) => sync_dir(parent_of(dir)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(Error::io("create directory", dir, e)),
    }
}

/// fsyncs a directory so renames and creations inside it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    fault::check("fsync directory", dir)
        .and_then(|()| File::open(dir))
        .and_then(|d| d.sync_all())
        .ctx("fsync directory", dir)
}

/// A temporary file of another host whose writer has not touched it for this long is debris (a
/// task killed with its node, or requeued elsewhere): no stage writes a file or a sort scratch
/// directory without touching it for a day.
pub const FOREIGN_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes temporary files (and sort scratch directories) left in `dir` by writers that were
/// killed. Returns how many.
///
/// Partitions of one stage write side by side in the same directories (the local executor runs
/// them in one process, on threads; the Slurm executor on several hosts over a shared
/// filesystem), so a temporary name is removed only when its writer is surely gone: written on
/// this host by a pid that no longer runs, or written on another host (whose pids cannot be seen
/// from here) and untouched for [`FOREIGN_TEMP_AGE`]. Names without a host (older versions) are
/// taken as this host's.
pub fn remove_temps(dir: &Path) -> Result<usize> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mut n = 0;
    for entry in entries {
        let entry = entry.ctx("list", dir)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !is_temp_name(&name) {
            continue;
        }
        let debris = match temp_writer(&name) {
            Some((_, Some(host))) if host != host_tag() => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= FOREIGN_TEMP_AGE),
            Some((pid, _)) => !crate::util::pid_alive(pid),
            None => true,
        };
        if debris {
            let p = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let removed = if is_dir {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            match removed {
                Ok(()) => n += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove", p, e)),
            }
        }
    }
    Ok(n)
}

/// This host in temporary names: the short host name, reduced to `[A-Za-z0-9_-]`.
pub fn host_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        let h = crate::util::hostname();
        let short = h.split('.').next().unwrap_or("");
        let tag: String = short
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if tag.is_empty() {
            "unknown".into()
        } else {
            tag
        }
    })
}

/// The writer part of a temporary name: `<pid>@<host>` (see [`host_tag`]).
pub fn temp_writer_tag() -> String {
    format!("{}@{}", std::process::id(), host_tag())
}

/// The writer of a temporary name (`.x.run.tmp.PID@HOST`, `.sort.tmp.PID@HOST.N`; older names
/// have no `@HOST`): its pid and host.
fn temp_writer(name: &str) -> Option<(u32, Option<&str>)> {
    let after = &name[name.find(TEMP_MARK)? + TEMP_MARK.len()..];
    let tag = after.split('.').next()?;
    let (pid, host) = match tag.split_once('@') {
        Some((pid, host)) => (pid, Some(host)),
        None => (tag, None),
    };
    Some((pid.parse().ok()?, host))
}

/// Whether a file name is one of [`AtomicFile`]'s temporary names.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARK)
}

fn temp_path(dest: &Path) -> Result<PathBuf> {
    let name = dest
        .file_name()
        .ok_or_else(|| Error::Usage(format!("{} is not a file path", dest.display())))?;
    let tmp = format!(
        ".{}{TEMP_MARK}{}",
        name.to_string_lossy(),
        temp_writer_tag()
    );
    Ok(dest.with_file_name(tmp))
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `path` in the page cache, and its pages in all (`mincore` over a mapping).
    #[cfg(target_os = "linux")]
    fn resident(path: &Path) -> (usize, usize) {
        let file = File::open(path).unwrap();
        // SAFETY: the file is not changed while it is mapped (the test wrote and closed it).
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let pages = map.len().div_ceil(page);
        let mut v = vec![0u8; pages];
        // SAFETY: `map` is a live mapping of `map.len()` bytes and `v` has a byte per page.
        let rc = unsafe { libc::mincore(map.as_ptr() as *mut _, map.len(), v.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", io::Error::last_os_error());
        (v.iter().filter(|&&b| b & 1 == 1).count(), pages)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn drop_behind_keeps_the_bytes_and_leaves_the_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        // Not a multiple of anything, and several write-behind steps long.
        let chunk: Vec<u8> = (0..65_537u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let n = (3 * BEHIND_STEP as usize) / chunk.len() + 5;
        let write = |name: &str, behind: bool| {
            let dest = dir.path().join(name);
            let mut f = AtomicFile::create(&dest).unwrap();
            if behind {
                f = f.drop_behind();
            }
            for _ in 0..n {
                f.write_all_bytes(&chunk).unwrap();
            }
            f.commit().unwrap();
            dest
        };
        let plain = write("plain.bin", false);
        let behind = write("behind.bin", true);
        let same = || {
            // Reading brings the pages back: checked after the cache is.
            assert_eq!(fs::read(&plain).unwrap(), fs::read(&behind).unwrap());
            assert_eq!(
                fs::metadata(&behind).unwrap().len(),
                (n * chunk.len()) as u64
            );
        };
        let (left, pages) = resident(&behind);
        // Where the file system keeps written pages whatever is asked (tmpfs), the check
        // cannot run: say so.
        let (kept, all) = resident(&plain);
        uncache(&File::open(&plain).unwrap(), 0, 0);
        if resident(&plain).0 * 2 > kept.max(1) {
            eprintln!(
                "SKIPPED the page-cache check of drop_behind: {} keeps written pages \
                 however asked ({kept} of {all} stayed); the bytes were checked",
                dir.path().display()
            );
            return same();
        }
        assert!(
            left * 10 <= pages,
            "{left} of {pages} pages of a drop-behind file stayed in the page cache"
        );
        same();
    }

    #[test]
    fn commit_publishes_and_drop_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.bin");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all_bytes(b"hello").unwrap();
        assert!(!dest.exists(), "not visible before commit");
        f.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"hello");

        let other = dir.path().join("b.bin");
        let mut g = AtomicFile::create(&other).unwrap();
        g.write_all_bytes(b"x").unwrap();
        drop(g);
        assert!(!other.exists());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temp removed on drop"
        );
    }

    #[test]
    fn a_summed_commit_gives_the_digest_of_the_file_it_publishes() {
        let dir = tempfile::tempdir().unwrap();
        // Both ways in (whole buffers and `Write`), pieces past the 1 MiB buffer, write-behind
        // and direct I/O: the sum is that of the bytes on disk, read back.
        let pieces: Vec<Vec<u8>> = (0..40u32)
            .map(|i| (0..(i * 97_013 % 300_000)).map(|j| (j ^ i) as u8).collect())
            .collect();
        for (k, direct) in [(0, false), (1, true), (2, false)] {
            let dest = dir.path().join(format!("f{k}.bin"));
            let f = if direct {
                AtomicFile::create_direct(&dest).unwrap()
            } else {
                AtomicFile::create(&dest).unwrap()
            };
            let mut f = if k == 2 { f.drop_behind() } else { f }.summed();
            for (i, p) in pieces.iter().enumerate() {
                if i % 2 == 0 {
                    f.write_all_bytes(p).unwrap();
                } else {
                    f.write_all(p).unwrap();
                }
            }
            let sum = f.commit_summed().unwrap();
            let (xxh3, bytes) = crate::util::file_digest(&dest).unwrap();
            assert_eq!(sum, Sum { xxh3, bytes }, "file {k}");
            assert_eq!(bytes, pieces.iter().map(|p| p.len() as u64).sum::<u64>());
        }
        // Without `summed` there is nothing to give: an error, and nothing published.
        let dest = dir.path().join("plain.bin");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all_bytes(b"x").unwrap();
        assert!(f.commit_summed().is_err());
        assert!(!dest.exists());
    }

    #[test]
    fn remove_temps_sweeps_only_temps() {
        let dir = tempfile::tempdir().unwrap();
        let me = host_tag();
        // A pid no process can have: its writer is gone (old and new names).
        fs::write(dir.path().join(".x.run.tmp.4000000000"), b"junk").unwrap();
        fs::write(
            dir.path().join(format!(".z.run.tmp.4000000000@{me}")),
            b"junk",
        )
        .unwrap();
        fs::create_dir(dir.path().join(format!(".sort.tmp.4000000000@{me}.3"))).unwrap();
        // A live writer's (ours: another partition being written by another thread).
        let live = format!(".y.run.tmp.{}", temp_writer_tag());
        fs::write(dir.path().join(&live), b"in the making").unwrap();
        // Another host's, fresh: its writer may run there (a Slurm task on a shared filesystem).
        let other = ".w.run.tmp.4000000000@another-node";
        fs::write(dir.path().join(other), b"in the making elsewhere").unwrap();
        fs::write(dir.path().join("x.run"), b"keep").unwrap();
        fs::write(dir.path().join(".hidden"), b"keep").unwrap();
        assert_eq!(remove_temps(dir.path()).unwrap(), 3);
        assert!(dir.path().join("x.run").exists());
        assert!(dir.path().join(".hidden").exists());
        assert!(dir.path().join(&live).exists());
        assert!(dir.path().join(other).exists());
        // Untouched for a day, another host's temp is debris.
        let f = fs::File::options()
            .write(true)
            .open(dir.path().join(other))
            .unwrap();
        f.set_modified(std::time::SystemTime::now() - FOREIGN_TEMP_AGE)
            .unwrap();
        drop(f);
        assert_eq!(remove_temps(dir.path()).unwrap(), 1);
        assert!(!dir.path().join(other).exists());
    }

    #[test]
    fn temp_names_carry_pid_and_host() {
        let t = temp_path(Path::new("/d/links/p0003.run")).unwrap();
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_temp_name(&name), "{name}");
        assert_eq!(
            temp_writer(&name),
            Some((std::process::id(), Some(host_tag())))
        );
        assert_eq!(temp_writer(".a.tmp.12.3"), Some((12, None)));
        assert_eq!(temp_writer(".a.tmp.x"), None);
    }
}
