//! The ZIP of a WACZ package, written here (no crate): every entry STORED (the WARC members
//! must stay addressable by offset inside the package), front to back with sizes and CRCs known
//! before each entry, ZIP64 fields where a size or offset reaches 4 GiB; and the CRC-32,
//! SHA-256 and size of what goes in, summed while it streams.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use sha2::Digest as _;

use crate::error::{Error, IoContext, Result};

/// A file's CRC-32, SHA-256 and size, computed while it streams.
#[derive(Clone)]
pub(super) struct Sums {
    crc: crc32fast::Hasher,
    sha: sha2::Sha256,
    size: u64,
}

impl Sums {
    pub(super) fn new() -> Sums {
        Sums {
            crc: crc32fast::Hasher::new(),
            sha: sha2::Sha256::new(),
            size: 0,
        }
    }
    pub(super) fn update(&mut self, b: &[u8]) {
        self.crc.update(b);
        self.sha.update(b);
        self.size += b.len() as u64;
    }
    pub(super) fn done(self) -> Done {
        Done {
            crc: self.crc.finalize(),
            sha256: hex(&self.sha.finalize()),
            size: self.size,
        }
    }
    pub(super) fn of_file(path: &Path) -> Result<Done> {
        let mut f = File::open(path).ctx("open", path)?;
        let mut s = Sums::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = f.read(&mut buf).ctx("read", path)?;
            if k == 0 {
                return Ok(s.done());
            }
            s.update(&buf[..k]);
        }
    }
}

#[derive(Clone)]
pub(super) struct Done {
    crc: u32,
    /// The SHA-256, hex.
    pub(super) sha256: String,
    /// Bytes.
    pub(super) size: u64,
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A `Write` to a file that sums what goes through.
pub(super) struct Summed<W> {
    pub(super) inner: W,
    pub(super) sums: Sums,
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.sums.update(&buf[..k]);
        Ok(k)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One entry of the ZIP, for its central directory and the datapackage.
pub(super) struct Entry {
    /// Its path in the ZIP.
    pub(super) name: String,
    offset: u64,
    /// Its sums and size.
    pub(super) sums: Done,
}

/// A ZIP of STORED entries written front to back (sizes and CRCs known before each entry).
pub(super) struct Zip<W: Write> {
    w: W,
    pos: u64,
    /// The entries so far.
    pub(super) entries: Vec<Entry>,
    time: (u16, u16),
    /// Entries of at least this size get ZIP64 fields (4 GiB - 1; lower only in tests).
    zip64_at: u64,
}

const U32_MAX: u64 = 0xffff_ffff;

impl<W: Write> Zip<W> {
    pub(super) fn new(w: W, now: u64) -> Zip<W> {
        // A debug build's DRAGNET_WACZ_ZIP64=1 writes every field ZIP64 (the test of that path).
        let zip64_at = if cfg!(debug_assertions) && std::env::var_os("DRAGNET_WACZ_ZIP64").is_some()
        {
            0
        } else {
            U32_MAX
        };
        Zip {
            w,
            pos: 0,
            entries: Vec::new(),
            time: dos_time(now),
            zip64_at,
        }
    }

    fn put(&mut self, b: &[u8], out: &Path) -> Result<()> {
        self.w.write_all(b).ctx("write", out)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// The local header of an entry of `sums`.
    fn begin(&mut self, name: &str, sums: &Done, out: &Path) -> Result<()> {
        let big = sums.size >= self.zip64_at;
        let mut h = Vec::with_capacity(30 + name.len() + 20);
        h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        h.extend_from_slice(&(if big { 45u16 } else { 20 }).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes()); // flags
        h.extend_from_slice(&0u16.to_le_bytes()); // STORED
        h.extend_from_slice(&self.time.0.to_le_bytes());
        h.extend_from_slice(&self.time.1.to_le_bytes());
        h.extend_from_slice(&sums.crc.to_le_bytes());
        let small = if big {
            U32_MAX as u32
        } else {
            sums.size as u32
        };
        h.extend_from_slice(&small.to_le_bytes());
        h.extend_from_slice(&small.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&(if big { 20u16 } else { 0 }).to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        if big {
            h.extend_from_slice(&1u16.to_le_bytes());
            h.extend_from_slice(&16u16.to_le_bytes());
            h.extend_from_slice(&sums.size.to_le_bytes());
            h.extend_from_slice(&sums.size.to_le_bytes());
        }
        self.entries.push(Entry {
            name: name.to_owned(),
            offset: self.pos,
            sums: sums.clone(),
        });
        self.put(&h, out)
    }

    /// Adds `bytes` as `name`.
    pub(super) fn add_bytes(&mut self, name: &str, bytes: &[u8], out: &Path) -> Result<()> {
        let mut s = Sums::new();
        s.update(bytes);
        self.begin(name, &s.done(), out)?;
        self.put(bytes, out)
    }

    /// Adds the file at `path` as `name`; `sums` if they are known, else read first.
    pub(super) fn add_file(
        &mut self,
        name: &str,
        path: &Path,
        sums: Option<Done>,
        out: &Path,
    ) -> Result<()> {
        let sums = match sums {
            Some(s) => s,
            None => Sums::of_file(path)?,
        };
        self.begin(name, &sums, out)?;
        let mut f = File::open(path).ctx("open", path)?;
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        loop {
            let k = f.read(&mut buf).ctx("read", path)?;
            if k == 0 {
                break;
            }
            n += k as u64;
            self.put(&buf[..k], out)?;
        }
        if n != sums.size {
            return Err(Error::io(
                "copy",
                path,
                std::io::Error::other(format!(
                    "it changed while it was packed ({} bytes, then {n})",
                    sums.size
                )),
            ));
        }
        Ok(())
    }

    /// The central directory and its end records.
    pub(super) fn finish(mut self, out: &Path) -> Result<W> {
        let start = self.pos;
        let entries = std::mem::take(&mut self.entries);
        for e in &entries {
            let big_size = e.sums.size >= self.zip64_at;
            let big_off = e.offset >= self.zip64_at.min(U32_MAX);
            let mut extra = Vec::new();
            if big_size {
                extra.extend_from_slice(&e.sums.size.to_le_bytes());
                extra.extend_from_slice(&e.sums.size.to_le_bytes());
            }
            if big_off {
                extra.extend_from_slice(&e.offset.to_le_bytes());
            }
            let mut h = Vec::with_capacity(46 + e.name.len() + 28);
            h.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            h.extend_from_slice(&(45u16 | (3 << 8)).to_le_bytes()); // made by: unix, 4.5
            h.extend_from_slice(&(if extra.is_empty() { 20u16 } else { 45 }).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&self.time.0.to_le_bytes());
            h.extend_from_slice(&self.time.1.to_le_bytes());
            h.extend_from_slice(&e.sums.crc.to_le_bytes());
            let small = if big_size {
                U32_MAX as u32
            } else {
                e.sums.size as u32
            };
            h.extend_from_slice(&small.to_le_bytes());
            h.extend_from_slice(&small.to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            let xlen = if extra.is_empty() { 0 } else { 4 + extra.len() };
            h.extend_from_slice(&(xlen as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // comment
            h.extend_from_slice(&0u16.to_le_bytes()); // disk
            h.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            h.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
            let off = if big_off {
                U32_MAX as u32
            } else {
                e.offset as u32
            };
            h.extend_from_slice(&off.to_le_bytes());
            h.extend_from_slice(e.name.as_bytes());
            if !extra.is_empty() {
                h.extend_from_slice(&1u16.to_le_bytes());
                h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
                h.extend_from_slice(&extra);
            }
            self.put(&h, out)?;
        }
        let size = self.pos - start;
        let n = entries.len() as u64;
        let big = n >= 0xffff || size >= U32_MAX || start >= self.zip64_at.min(U32_MAX);
        if big {
            let at = self.pos;
            let mut r = Vec::with_capacity(76);
            r.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            r.extend_from_slice(&44u64.to_le_bytes());
            r.extend_from_slice(&(45u16 | (3 << 8)).to_le_bytes());
            r.extend_from_slice(&45u16.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&size.to_le_bytes());
            r.extend_from_slice(&start.to_le_bytes());
            r.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&at.to_le_bytes());
            r.extend_from_slice(&1u32.to_le_bytes());
            self.put(&r, out)?;
        }
        let mut r = Vec::with_capacity(22);
        r.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        let n16 = if big { 0xffff } else { n as u16 };
        r.extend_from_slice(&n16.to_le_bytes());
        r.extend_from_slice(&n16.to_le_bytes());
        let (s32, o32) = if big {
            (U32_MAX as u32, U32_MAX as u32)
        } else {
            (size as u32, start as u32)
        };
        r.extend_from_slice(&s32.to_le_bytes());
        r.extend_from_slice(&o32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        self.put(&r, out)?;
        self.entries = entries;
        Ok(self.w)
    }
}

/// MS-DOS time and date of Unix time `secs` (UTC).
pub(super) fn dos_time(secs: u64) -> (u16, u16) {
    let t = crate::util::rfc3339(secs);
    let n = |r: std::ops::Range<usize>| t.get(r).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
    let (y, mo, d, h, mi, s) = (n(0..4), n(5..7), n(8..10), n(11..13), n(14..16), n(17..19));
    let time = (h << 11) | (mi << 5) | (s / 2);
    let date = (y.saturating_sub(1980) << 9) | (mo << 5) | d;
    (time, date)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dos_times() {
        // 2026-11-23T09:00:04Z
        let (t, d) = dos_time(1_795_424_404);
        assert_eq!((t >> 11, (t >> 5) & 63, (t & 31) * 2), (9, 0, 4));
        assert_eq!(((d >> 9) + 1980, (d >> 5) & 15, d & 31), (2026, 11, 23));
    }

    #[test]
    fn a_zip_of_stored_entries_ends_with_its_directory() {
        let mut z = Zip::new(Vec::new(), 0);
        z.add_bytes("a.txt", b"hello", Path::new("x")).unwrap();
        let out = z.finish(Path::new("x")).unwrap();
        assert_eq!(&out[..4], b"PK\x03\x04");
        assert_eq!(&out[30..35], b"a.txt");
        assert_eq!(&out[35..40], b"hello");
        let eocd = out.len() - 22;
        assert_eq!(&out[eocd..eocd + 4], b"PK\x05\x06");
        let crc = u32::from_le_bytes(out[14..18].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(b"hello"));
    }
}
