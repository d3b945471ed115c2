//! A paged file for the disk queues: a memory map behind a bounded frame cache, with an undo
//! journal.
//!
//! The queue file is mapped with memmap2. Queues never touch the map directly: they read and write
//! byte ranges through [`Pager::read`] and [`Pager::write`], which go through at most
//! `cache_pages` page frames of `page_size` bytes held in RAM (CLOCK replacement). That frame cache
//! is the queue's RAM budget, enforced for real, and the place I/O is counted: bringing a page into
//! a frame is one block read, writing a dirty frame back into the file is one block write. (The
//! operating system may keep more of the mapped file in its page cache; that memory is clean,
//! shared and reclaimable, and is not what the paper's Fig. 9 counts.)
//!
//! # Crash safety
//!
//! Next to `queue.dat` sit `queue.dat.meta` (written atomically on every commit: a generation
//! number, the file length, the queue's own state as an opaque blob, a checksum) and, while a
//! transaction is open, `queue.dat.journal`: the pre-image of every page of the committed file that
//! the transaction has overwritten. The rules:
//!
//! 1. The first time a page that existed at the last commit is dirtied, its committed image is
//!    appended to the journal.
//! 2. No dirty frame is written into the map before the journal records covering it are fsynced.
//! 3. Commit: write back every dirty frame, msync the map, fsync the file, publish the new meta
//!    (generation + 1) atomically, then delete the journal.
//! 4. Open: if a journal exists whose base generation is the meta's generation, the transaction did
//!    not commit: every complete journal record is copied back and the file is cut to the
//!    committed length. A journal with an older base generation is left over from a commit that
//!    finished; it is deleted.
//!
//! So a `kill -9` at any instant, followed by a reopen, gives the state of the last commit.
//!
//! # Page checksums
//!
//! The last [`PAGE_TRAILER`] bytes of every page hold the xxh3 of the rest, set when a frame is
//! written back and checked when a page is brought into a frame (and by [`check_files`]), so a
//! byte changed on disk inside the committed pages is an error naming the file and the page's
//! offset, not a URL silently gone from the frontier. A page never written since the file grew
//! is all zeros, trailer included, and reads as zeros. The queues see pages of
//! [`Pager::page_size`] bytes, the page less its trailer, and offsets in that space
//! ([`Pager::len`], [`Pager::read`], [`Pager::write`], [`Pager::grow`]); the pager maps them to
//! the file's pages. Queues written before page checksums (meta `DNQMETA1`) are read and
//! written as they were, without them.
//! Without the journal (`durable: false`, used by benchmarks), a crash may leave garbage; the meta
//! is still only published at commit.

use crate::storage::fault::check as fault;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use memmap2::MmapMut;
use xxhash_rust::xxh3::xxh3_64;

use super::IoStats;
use crate::error::{Error, IoContext, Result};

/// The meta of a queue whose pages carry checksums.
const META_MAGIC: &[u8; 8] = b"DNQMETA2";
/// The meta of a queue written before page checksums.
const META_MAGIC_V1: &[u8; 8] = b"DNQMETA1";
/// Bytes at the end of every page for its checksum (module docs).
pub const PAGE_TRAILER: usize = 8;
const JOURNAL_MAGIC: &[u8; 8] = b"DNQJRNL1";

/// How a [`Pager`] is set up.
#[derive(Debug, Clone, Copy)]
pub struct PagerOptions {
    /// Bytes per page (block); a multiple of 512.
    pub page_size: usize,
    /// Frames in the cache: the RAM budget in pages (at least 1).
    pub cache_pages: usize,
    /// Keep the undo journal (crash safety). Benchmarks turn it off.
    pub durable: bool,
}

impl Default for PagerOptions {
    fn default() -> PagerOptions {
        PagerOptions {
            page_size: 4096,
            cache_pages: 4096,
            durable: true,
        }
    }
}

struct Frame {
    page: u64,
    data: Box<[u8]>,
    dirty: bool,
    referenced: bool,
}

/// A file of pages behind a bounded frame cache; see the module docs.
pub struct Pager {
    path: PathBuf,
    file: File,
    map: Option<MmapMut>,
    opts: PagerOptions,
    /// The pages carry checksums (every queue made since; module docs).
    sums: bool,
    /// Current length of the file in bytes (a multiple of the page size).
    len: u64,
    /// Length at the last commit.
    committed_len: u64,
    generation: u64,
    meta: Vec<u8>,
    frames: Vec<Frame>,
    index: HashMap<u64, usize>,
    hand: usize,
    /// The journal of the open transaction, with the pages it covers.
    journal: Option<File>,
    journaled: HashMap<u64, ()>,
    journal_unsynced: bool,
    stats: IoStats,
}

impl Pager {
    /// Opens (or creates) the paged file at `path`, recovering from an interrupted transaction.
    /// Returns the pager and the blob stored by the last commit (empty for a new file).
    pub fn open(path: &Path, opts: PagerOptions) -> Result<Pager> {
        if opts.page_size == 0 || !opts.page_size.is_multiple_of(512) {
            return Err(Error::Usage(format!(
                "queue page size {} is not a positive multiple of 512",
                opts.page_size
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .ctx("open", path)?;
        let mut p = Pager {
            path: path.to_path_buf(),
            file,
            map: None,
            opts,
            sums: true,
            len: 0,
            committed_len: 0,
            generation: 0,
            meta: Vec::new(),
            frames: Vec::new(),
            index: HashMap::new(),
            hand: 0,
            journal: None,
            journaled: HashMap::new(),
            journal_unsynced: false,
            stats: IoStats::default(),
        };
        let had_meta = p.load_meta()?;
        // A new file gets its meta (generation 0, empty) before anything is written to it, so a
        // file that holds pages without a meta was damaged, not cut off before its first
        // commit: starting it afresh (cut to 0 bytes) would silently empty the queue.
        let on_disk = p.file.metadata().ctx("stat", path)?.len();
        if !had_meta && on_disk == 0 {
            p.publish_meta(0, 0, &[])?;
        } else if !had_meta {
            return Err(Error::corrupt(
                p.meta_path(),
                0,
                format!(
                    "missing, but {} holds {on_disk} bytes of queue pages: without the meta (its \
                     length, generation and the queue's state) they cannot be read; restore the \
                     meta file, or remove the queue's directory to start the frontier over \
                     (its URLs are still in the URL db)",
                    path.display()
                ),
            ));
        }
        p.recover()?;
        // The file only grows within a transaction and is cut back to the committed length
        // here: shorter than that, it lost committed pages (truncated by something else), and
        // zero-filling it would silently empty the queue.
        let on_disk = p.file.metadata().ctx("stat", path)?.len();
        if on_disk < p.committed_len {
            return Err(Error::corrupt(
                path,
                on_disk,
                format!(
                    "the queue file is {on_disk} bytes but its last commit (generation {}) left \
                     {} bytes: it was truncated, and the queued URLs past this offset are lost",
                    p.generation, p.committed_len
                ),
            ));
        }
        p.file.set_len(p.committed_len).ctx("truncate", path)?;
        p.len = p.committed_len;
        p.remap()?;
        Ok(p)
    }

    fn meta_path(&self) -> PathBuf {
        sibling(&self.path, "meta")
    }

    fn journal_path(&self) -> PathBuf {
        sibling(&self.path, "journal")
    }

    /// Reads the meta file; `false` if there is none (a new file).
    fn load_meta(&mut self) -> Result<bool> {
        let mp = self.meta_path();
        let bytes = match std::fs::read(&mp) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io("read", &mp, e)),
        };
        let bad = |off: usize, why: &str| Error::corrupt(&mp, off as u64, why.to_string());
        if bytes.len() < 8 + 8 + 8 + 4 + 8
            || (&bytes[..8] != META_MAGIC && &bytes[..8] != META_MAGIC_V1)
        {
            return Err(bad(0, "not a dragnet queue meta file"));
        }
        self.sums = &bytes[..8] == META_MAGIC;
        let body = &bytes[..bytes.len() - 8];
        let sum = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8"));
        if xxh3_64(body) != sum {
            return Err(bad(bytes.len() - 8, "checksum mismatch"));
        }
        let u64_at = |i: usize| u64::from_le_bytes(body[i..i + 8].try_into().expect("8"));
        self.generation = u64_at(8);
        self.committed_len = u64_at(16);
        let page_size = u32::from_le_bytes(body[24..28].try_into().expect("4")) as usize;
        if page_size != self.opts.page_size {
            return Err(Error::Usage(format!(
                "{}: the queue was written with {page_size}-byte pages, not {}; keep the page \
                 size a queue was created with",
                self.path.display(),
                self.opts.page_size
            )));
        }
        self.meta = body[28..].to_vec();
        Ok(true)
    }

    /// Undoes an interrupted transaction (module docs, rule 4).
    fn recover(&mut self) -> Result<()> {
        let jp = self.journal_path();
        let mut f = match File::open(&jp) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("open", &jp, e)),
        };
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).ctx("read", &jp)?;
        let ps = self.opts.page_size;
        let rec = 8 + ps + 8;
        // The header is written and fsynced before any record (rule 2), so a journal holding
        // record bytes behind a header that is not ours was damaged, not torn: undoing nothing
        // would keep pages of the uncommitted transaction.
        if bytes.len() > 24 && &bytes[..8] != JOURNAL_MAGIC {
            return Err(Error::corrupt(
                &jp,
                0,
                "the undo journal's header is damaged: the interrupted transaction cannot be \
                 rolled back; the queue file may hold uncommitted pages",
            ));
        }
        if bytes.len() >= 24 && &bytes[..8] == JOURNAL_MAGIC {
            let base = u64::from_le_bytes(bytes[8..16].try_into().expect("8"));
            if base == self.generation {
                let mut off = 24;
                let file_len = self.file.metadata().ctx("stat", &self.path)?.len();
                while off + rec <= bytes.len() {
                    let r = &bytes[off..off + rec];
                    let sum = u64::from_le_bytes(r[8 + ps..].try_into().expect("8"));
                    if xxh3_64(&r[..8 + ps]) != sum {
                        // Records are appended one after the other, so only the last can be
                        // torn (its page was never overwritten, rule 2); a bad one with whole
                        // records behind it was damaged, and its page cannot be restored.
                        if off + 2 * rec <= bytes.len() {
                            return Err(Error::corrupt(
                                &jp,
                                off as u64,
                                "an undo journal record is damaged (checksum mismatch) with \
                                 records after it: the interrupted transaction cannot be rolled \
                                 back",
                            ));
                        }
                        break;
                    }
                    let page = u64::from_le_bytes(r[..8].try_into().expect("8"));
                    let at = page * ps as u64;
                    if at + ps as u64 <= file_len {
                        fault("write", &self.path)
                            .and_then(|()| write_at(&self.file, &r[8..8 + ps], at))
                            .ctx("write", &self.path)?;
                    }
                    off += rec;
                }
                fault("fsync", &self.path)
                    .and_then(|()| self.file.sync_all())
                    .ctx("fsync", &self.path)?;
            }
        }
        // A journal that is empty, torn in its header or from an older generation undoes nothing.
        std::fs::remove_file(&jp).ctx("remove", &jp)?;
        if let Some(dir) = self.path.parent() {
            crate::storage::sync_dir(dir)?;
        }
        Ok(())
    }

    fn remap(&mut self) -> Result<()> {
        self.map = None;
        if self.len > 0 {
            // SAFETY: the file is private to this crawl and open only through this pager; the
            // crawl lock keeps other processes out while a stage runs.
            let m = unsafe { MmapMut::map_mut(&self.file) }.ctx("mmap", &self.path)?;
            self.map = Some(m);
        }
        Ok(())
    }

    /// The blob stored by the last commit (empty for a new file).
    pub fn meta(&self) -> &[u8] {
        &self.meta
    }

    /// The generation of the last commit (0: never committed).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes of data per page: the page size less its checksum trailer (module docs). The
    /// queues lay their entries out in pages of this size.
    pub fn page_size(&self) -> usize {
        self.data_size()
    }

    fn data_size(&self) -> usize {
        if self.sums {
            self.opts.page_size - PAGE_TRAILER
        } else {
            self.opts.page_size
        }
    }

    /// Pages in the file.
    fn pages(&self) -> u64 {
        self.len / self.opts.page_size as u64
    }

    /// Frames in the cache.
    pub fn cache_pages(&self) -> usize {
        self.opts.cache_pages
    }

    /// Current length in bytes of data: pages x [`Pager::page_size`].
    pub fn len(&self) -> u64 {
        self.pages() * self.data_size() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The I/O counters (comparisons stay 0: the queues count those).
    pub fn stats(&self) -> IoStats {
        self.stats
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.stats = IoStats::default();
    }

    /// Grows the file to at least `bytes` of data (rounded up to whole pages). New pages read
    /// as zeros.
    pub fn grow(&mut self, bytes: u64) -> Result<()> {
        let ps = self.opts.page_size as u64;
        let want = bytes.div_ceil(self.data_size() as u64) * ps;
        if want <= self.len {
            return Ok(());
        }
        // Grow geometrically so a queue that grows by one page at a time does not remap each time.
        let target = want.max(self.len + self.len / 4);
        let target = target.div_ceil(ps) * ps;
        self.file.set_len(target).ctx("extend", &self.path)?;
        self.len = target;
        self.remap()
    }

    /// Copies `buf.len()` bytes at `off` out of the file (through the cache).
    pub fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<()> {
        self.check_range(off, buf.len())?;
        for (page, in_page, at, n) in pieces(self.data_size() as u64, off, buf.len()) {
            let f = self.frame(page, false)?;
            buf[at..at + n].copy_from_slice(&self.frames[f].data[in_page..in_page + n]);
        }
        Ok(())
    }

    /// Copies `buf` into the file at `off` (through the cache).
    pub fn write(&mut self, off: u64, buf: &[u8]) -> Result<()> {
        self.check_range(off, buf.len())?;
        let ds = self.data_size();
        for (page, in_page, at, n) in pieces(ds as u64, off, buf.len()) {
            let f = self.frame(page, n == ds)?;
            self.mark_dirty(f)?;
            self.frames[f].data[in_page..in_page + n].copy_from_slice(&buf[at..at + n]);
        }
        Ok(())
    }

    fn check_range(&self, off: u64, n: usize) -> Result<()> {
        if off + n as u64 > self.len() {
            return Err(Error::corrupt(
                &self.path,
                off,
                format!(
                    "access to bytes {off}..{} past the end of the queue's data ({} bytes)",
                    off + n as u64,
                    self.len()
                ),
            ));
        }
        Ok(())
    }

    /// The frame holding `page`, loading it (unless `overwrite`: the caller replaces it whole).
    fn frame(&mut self, page: u64, overwrite: bool) -> Result<usize> {
        if let Some(&f) = self.index.get(&page) {
            self.frames[f].referenced = true;
            return Ok(f);
        }
        let ps = self.opts.page_size;
        let f = if self.frames.len() < self.opts.cache_pages.max(1) {
            self.frames.push(Frame {
                page,
                data: vec![0u8; ps].into_boxed_slice(),
                dirty: false,
                referenced: true,
            });
            self.frames.len() - 1
        } else {
            let v = self.victim();
            self.write_back(v)?;
            self.index.remove(&self.frames[v].page);
            self.frames[v].page = page;
            self.frames[v].referenced = true;
            v
        };
        self.index.insert(page, f);
        if !overwrite {
            let at = (page * ps as u64) as usize;
            let map = self.map.as_ref().expect("a non-empty file is mapped");
            self.frames[f].data.copy_from_slice(&map[at..at + ps]);
            self.stats.block_reads += 1;
            self.stats.bytes_read += ps as u64;
            if self.sums && !page_sum_ok(&self.frames[f].data) {
                // Not kept: the frame is free again.
                self.index.remove(&page);
                self.frames[f].page = u64::MAX;
                return Err(page_damaged(&self.path, page, ps));
            }
        }
        Ok(f)
    }

    /// CLOCK: the first frame past the hand whose reference bit is clear.
    fn victim(&mut self) -> usize {
        loop {
            let h = self.hand;
            self.hand = (self.hand + 1) % self.frames.len();
            if self.frames[h].referenced {
                self.frames[h].referenced = false;
            } else {
                return h;
            }
        }
    }

    fn mark_dirty(&mut self, f: usize) -> Result<()> {
        if self.frames[f].dirty {
            return Ok(());
        }
        let page = self.frames[f].page;
        let ps = self.opts.page_size as u64;
        if self.opts.durable
            && (page + 1) * ps <= self.committed_len
            && !self.journaled.contains_key(&page)
        {
            // Rule 1: journal the committed image. The frame may have been dirtied and written
            // back before in this transaction; the map still holds the committed image only if
            // it was not, which is exactly when the page is not yet journaled.
            let at = (page * ps) as usize;
            let map = self.map.as_ref().expect("mapped");
            let image = map[at..at + ps as usize].to_vec();
            self.journal_append(page, &image)?;
        }
        self.frames[f].dirty = true;
        Ok(())
    }

    fn journal_append(&mut self, page: u64, image: &[u8]) -> Result<()> {
        let jp = self.journal_path();
        if self.journal.is_none() {
            let mut j = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&jp)
                .ctx("create", &jp)?;
            let mut head = Vec::with_capacity(24);
            head.extend_from_slice(JOURNAL_MAGIC);
            head.extend_from_slice(&self.generation.to_le_bytes());
            head.extend_from_slice(&self.committed_len.to_le_bytes());
            fault("write", &jp)
                .and_then(|()| j.write_all(&head))
                .ctx("write", &jp)?;
            self.journal = Some(j);
            if let Some(dir) = self.path.parent() {
                crate::storage::sync_dir(dir)?;
            }
        }
        let mut rec = Vec::with_capacity(16 + image.len());
        rec.extend_from_slice(&page.to_le_bytes());
        rec.extend_from_slice(image);
        let sum = xxh3_64(&rec);
        rec.extend_from_slice(&sum.to_le_bytes());
        let j = self.journal.as_mut().expect("open");
        fault("write", &jp)
            .and_then(|()| j.write_all(&rec))
            .ctx("write", &jp)?;
        self.journaled.insert(page, ());
        self.journal_unsynced = true;
        Ok(())
    }

    /// Writes a dirty frame into the map (rule 2 first).
    fn write_back(&mut self, f: usize) -> Result<()> {
        if !self.frames[f].dirty {
            return Ok(());
        }
        if self.journal_unsynced {
            let jp = self.journal_path();
            let j = self
                .journal
                .as_mut()
                .expect("unsynced records imply an open journal");
            fault("fsync", &jp)
                .and_then(|()| j.sync_data())
                .ctx("fsync", &jp)?;
            self.journal_unsynced = false;
        }
        let ps = self.opts.page_size;
        if self.sums {
            let data = &mut self.frames[f].data;
            let sum = xxh3_64(&data[..ps - PAGE_TRAILER]);
            data[ps - PAGE_TRAILER..].copy_from_slice(&sum.to_le_bytes());
        }
        let at = (self.frames[f].page * ps as u64) as usize;
        let map = self.map.as_mut().expect("mapped");
        map[at..at + ps].copy_from_slice(&self.frames[f].data);
        self.frames[f].dirty = false;
        self.stats.block_writes += 1;
        self.stats.bytes_written += ps as u64;
        Ok(())
    }

    /// Writes every dirty frame back into the map (no fsync).
    pub fn flush(&mut self) -> Result<()> {
        for f in 0..self.frames.len() {
            self.write_back(f)?;
        }
        Ok(())
    }

    /// Writes the meta file atomically: `generation`, the file's committed `len`, the page size
    /// and the queue's blob, checksummed.
    fn publish_meta(&self, generation: u64, len: u64, meta: &[u8]) -> Result<()> {
        let mut body = Vec::with_capacity(36 + meta.len());
        body.extend_from_slice(if self.sums { META_MAGIC } else { META_MAGIC_V1 });
        body.extend_from_slice(&generation.to_le_bytes());
        body.extend_from_slice(&len.to_le_bytes());
        body.extend_from_slice(&(self.opts.page_size as u32).to_le_bytes());
        body.extend_from_slice(meta);
        let sum = xxh3_64(&body);
        body.extend_from_slice(&sum.to_le_bytes());
        crate::storage::write_atomic(&self.meta_path(), &body)
    }

    /// Makes the file durable and publishes `meta` with it (module docs, rule 3).
    pub fn commit(&mut self, meta: &[u8]) -> Result<()> {
        self.flush()?;
        if let Some(m) = &self.map {
            fault("msync", &self.path)
                .and_then(|()| m.flush())
                .ctx("msync", &self.path)?;
        }
        fault("fsync", &self.path)
            .and_then(|()| self.file.sync_all())
            .ctx("fsync", &self.path)?;
        let generation = self.generation + 1;
        self.publish_meta(generation, self.len, meta)?;
        self.generation = generation;
        self.committed_len = self.len;
        self.meta = meta.to_vec();
        if self.journal.take().is_some() {
            let jp = self.journal_path();
            std::fs::remove_file(&jp).ctx("remove", &jp)?;
            if let Some(dir) = self.path.parent() {
                crate::storage::sync_dir(dir)?;
            }
        }
        self.journaled.clear();
        self.journal_unsynced = false;
        Ok(())
    }
}

/// Checks a queue data file against its meta without opening (or changing) it, as
/// `dragnet check crawl` does: the meta's magic and checksum, a data file at least as long as
/// the last commit left it, and every committed page against its checksum (queues made before
/// page checksums have none to check); pages without a meta are damage.
pub fn check_files(path: &Path) -> Result<()> {
    let mp = sibling(path, "meta");
    let len = std::fs::metadata(path).ctx("stat", path)?.len();
    let bytes = match std::fs::read(&mp) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && len == 0 => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::corrupt(
                &mp,
                0,
                format!(
                    "missing, but {} holds {len} bytes of queue pages",
                    path.display()
                ),
            ))
        }
        Err(e) => return Err(Error::io("read", &mp, e)),
    };
    if bytes.len() < 8 + 8 + 8 + 4 + 8
        || (&bytes[..8] != META_MAGIC && &bytes[..8] != META_MAGIC_V1)
    {
        return Err(Error::corrupt(&mp, 0, "not a dragnet queue meta file"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if xxh3_64(body).to_le_bytes() != sum {
        return Err(Error::corrupt(&mp, body.len() as u64, "checksum mismatch"));
    }
    let committed = u64::from_le_bytes(body[16..24].try_into().expect("8"));
    if len < committed {
        return Err(Error::corrupt(
            path,
            len,
            format!(
                "the queue file is {len} bytes but its last commit left {committed}: truncated"
            ),
        ));
    }
    if &bytes[..8] == META_MAGIC {
        let ps = u32::from_le_bytes(body[24..28].try_into().expect("4")) as usize;
        if ps <= PAGE_TRAILER || committed % ps as u64 != 0 {
            return Err(Error::corrupt(
                &mp,
                24,
                format!("page size {ps} does not divide the committed length {committed}"),
            ));
        }
        let mut f = File::open(path).ctx("open", path)?;
        let mut page = vec![0u8; ps];
        for p in 0..committed / ps as u64 {
            f.read_exact(&mut page).ctx("read", path)?;
            if !page_sum_ok(&page) {
                return Err(page_damaged(path, p, ps));
            }
        }
    }
    Ok(())
}

/// Whether a whole page (data and trailer) holds its checksum, or is a page never written (all
/// zeros).
fn page_sum_ok(page: &[u8]) -> bool {
    let (data, trailer) = page.split_at(page.len() - PAGE_TRAILER);
    xxh3_64(data).to_le_bytes() == trailer || page.iter().all(|&b| b == 0)
}

fn page_damaged(path: &Path, page: u64, ps: usize) -> Error {
    Error::corrupt(
        path,
        page * ps as u64,
        format!(
            "page {page} of the queue file fails its checksum: bytes of it changed on disk, and              the URLs it held cannot be trusted; `dragnet repair` rebuilds the frontier from the              URL db"
        ),
    )
}

fn sibling(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(ext);
    path.with_file_name(name)
}

fn write_at(f: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    f.write_all_at(buf, at)
}

/// Fixed-size [`super::Entry`] slots over a pager, never straddling a page: slot `i` lives in
/// page `i / per_page` at `(i % per_page) * 24`, after `base` bytes of the file.
#[derive(Debug, Clone, Copy)]
pub struct Slots {
    base: u64,
    per_page: u64,
    page_size: u64,
}

impl Slots {
    /// Slots starting at byte `base` (a page boundary) of a pager with `page_size`-byte pages.
    pub fn new(base: u64, page_size: usize) -> Slots {
        Slots {
            base,
            per_page: (page_size / super::Entry::SIZE) as u64,
            page_size: page_size as u64,
        }
    }

    /// Bytes of file that `n` slots need.
    pub fn bytes_for(&self, n: u64) -> u64 {
        n.div_ceil(self.per_page) * self.page_size
    }

    /// Byte offset of slot `i`.
    pub fn offset(&self, i: u64) -> u64 {
        self.base
            + (i / self.per_page) * self.page_size
            + (i % self.per_page) * super::Entry::SIZE as u64
    }

    /// Reads slot `i`.
    pub fn get(&self, p: &mut Pager, i: u64) -> Result<super::Entry> {
        let mut b = [0u8; super::Entry::SIZE];
        p.read(self.offset(i), &mut b)?;
        Ok(super::Entry::read_from(&b))
    }

    /// Writes slot `i`.
    pub fn set(&self, p: &mut Pager, i: u64, e: super::Entry) -> Result<()> {
        let mut b = [0u8; super::Entry::SIZE];
        e.write_to(&mut b);
        p.write(self.offset(i), &b)
    }
}

/// The pieces of the `len` bytes at `off` that each lie in one page of `ps` bytes: (page, offset
/// in the page, offset in the caller's buffer, length).
fn pieces(ps: u64, off: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        if at == len {
            return None;
        }
        let pos = off + at as u64;
        let in_page = (pos % ps) as usize;
        let n = (len - at).min(ps as usize - in_page);
        let piece = (pos / ps, in_page, at, n);
        at += n;
        Some(piece)
    })
}

#[cfg(test)]
mod tests;
