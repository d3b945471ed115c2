//! Small helpers with no better home: time formatting, host name, file digests; [`out`], the
//! check every output path of the `dragnet` command goes through.

use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{IoContext, Result};

pub mod lines;

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Formats Unix seconds as an RFC 3339 UTC timestamp (`2026-11-23T09:14:00Z`).
pub fn rfc3339(secs: u64) -> String {
    let mut s = String::with_capacity(27);
    push_rfc3339(&mut s, secs);
    s.push('Z');
    s
}

/// Appends [`rfc3339`] of `secs` without its closing `Z` (a fraction may follow): digits put
/// in place, as two records per fetched page each carry a date (`format!` cost more than the
/// calendar arithmetic).
pub fn push_rfc3339(out: &mut String, secs: u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    match u64::try_from(y) {
        Ok(y) if y <= 9999 => push_digits(out, y, 4),
        // Past year 9999: as `{y:04}` writes it.
        _ => {
            use std::fmt::Write;
            write!(out, "{y:04}").expect("writing to a String cannot fail");
        }
    }
    out.push('-');
    push_digits(out, m as u64, 2);
    out.push('-');
    push_digits(out, d as u64, 2);
    out.push('T');
    push_digits(out, rem / 3600, 2);
    out.push(':');
    push_digits(out, rem % 3600 / 60, 2);
    out.push(':');
    push_digits(out, rem % 60, 2);
}

/// Appends the last `width` decimal digits of `v`, zero-padded (`v` must fit them).
pub fn push_digits(out: &mut String, v: u64, width: u32) {
    debug_assert!(v < 10u64.pow(width));
    for i in (0..width).rev() {
        out.push(char::from(b'0' + (v / 10u64.pow(i) % 10) as u8));
    }
}

/// Parses what [`rfc3339`] writes (`2026-11-23T09:14:00Z`, no fraction) back into Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    if s.len() != 20 {
        return None;
    }
    parse_rfc3339_nanos(s).map(|(secs, _)| secs)
}

/// Parses an RFC 3339 UTC timestamp with an optional fraction (`YYYY-MM-DDThh:mm:ss[.fraction]Z`,
/// as WARC-Date and [`rfc3339`] write it) into seconds and nanoseconds since the Unix epoch.
pub fn parse_rfc3339_nanos(s: &str) -> Option<(u64, u32)> {
    let b = s.trim().as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = std::str::from_utf8(&b[r]).ok()?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut nanos = 0u32;
    let rest = &b[19..b.len() - 1];
    if !rest.is_empty() {
        let frac = rest.strip_prefix(b".")?;
        if frac.is_empty() || frac.len() > 9 || !frac.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let digits: u32 = std::str::from_utf8(frac).ok()?.parse().ok()?;
        nanos = digits * 10u32.pow(9 - frac.len() as u32);
    }
    // Days-from-civil (H. Hinnant's algorithm), the inverse of the one in [`rfc3339`].
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec;
    Some((u64::try_from(secs).ok()?, nanos))
}

/// Parses an HTTP date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the form
/// servers send) into Unix seconds. The obsolete RFC 850 and asctime forms give `None`.
pub fn parse_http_date(s: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (_, rest) = s.trim().split_once(", ")?;
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    if f.len() != 5 || f[4] != "GMT" || f[0].len() != 2 || f[2].len() != 4 || f[3].len() != 8 {
        return None;
    }
    let m = MONTHS.iter().position(|m| *m == f[1])? + 1;
    parse_rfc3339(&format!("{}-{m:02}-{}T{}Z", f[2], f[0], f[3]))
}

/// Whether a process with this pid runs on this host (it may belong to another user).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks for the process's existence.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// This machine's host name.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// xxh3-64 and length of a whole file, streamed.
pub fn file_digest(path: &Path) -> Result<(u64, u64)> {
    let mut f = std::fs::File::open(path).ctx("open", path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).ctx("read", path)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((h.digest(), n))
}

/// Allocations at least this big get pages of their own from the OS (glibc's `M_MMAP_THRESHOLD`).
pub const MMAP_THRESHOLD: usize = 256 << 10;

/// Keeps a long-running process's resident memory near what it uses. glibc's malloc raises its
/// mmap threshold each time a large block is freed (up to 32 MiB), after which sort buffers,
/// response bodies and WARC blocks come from per-thread arenas that keep their pages after
/// `free`: a crawl of the peerbench web peaked at 379 MB resident for ~265 MB of live heap. A
/// fixed threshold ([`MMAP_THRESHOLD`]) returns every large block to the OS when freed, and a
/// 1 MiB trim threshold returns arena tops (peak 261 MB on the same crawl, same speed; see
/// docs/BENCHMARKS.md). A no-op on other C libraries. The binary calls this first thing.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
}

/// This machine's physical memory in bytes, if the OS says.
pub fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && size > 0).then(|| pages as u64 * size as u64)
}

/// `n` and the noun, singular when `n` is 1: `plural(1, "URL", "URLs")` is "1 URL".
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Adds `n` to the counter `name` of a stage's counts (the map its `.done` marker carries),
/// allocating the name only the first time.
pub fn count(counts: &mut std::collections::BTreeMap<String, u64>, name: &str, n: u64) {
    match counts.get_mut(name) {
        Some(v) => *v += n,
        None => {
            counts.insert(name.to_owned(), n);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_known_values() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_424_040), "2026-11-23T08:54:00Z");
        // Past year 9999 the year takes the digits it needs, as `{y:04}` gives them.
        assert_eq!(super::rfc3339(253_402_300_800), "10000-01-01T00:00:00Z");
    }

    /// The digits put in place: the time of day as `format!` writes it, the date as the parser
    /// (its own calendar arithmetic) reads it back, over four centuries of seconds.
    #[test]
    fn rfc3339_agrees_with_format() {
        let reference = |secs: u64| {
            let rem = secs % 86_400;
            let t = crate::util::rfc3339(secs - rem);
            format!(
                "{}T{:02}:{:02}:{:02}Z",
                &t[..t.len() - 10],
                rem / 3600,
                rem % 3600 / 60,
                rem % 60
            )
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let secs = if i < 100 {
                i * 3_599
            } else {
                x % 12_622_780_800
            };
            let got = super::rfc3339(secs);
            assert_eq!(got, reference(secs), "{secs}");
            assert_eq!(super::parse_rfc3339(&got), Some(secs), "{secs}");
        }
    }

    #[test]
    fn rfc3339_parses_back() {
        for t in [
            0,
            951_782_400,
            1_795_424_040,
            4_102_444_799,
            1_709_164_800 + 86_399,
        ] {
            assert_eq!(super::parse_rfc3339(&super::rfc3339(t)), Some(t), "{t}");
        }
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-11-23 08:54:00Z",
            "2026-11-23T08:54:00",
        ] {
            assert_eq!(super::parse_rfc3339(bad), None, "{bad}");
        }
    }
}

/// A [`std::hash::Hasher`] for keys that are already uniform 64-bit hashes (URL fingerprints,
/// host keys): the key is its own hash. SipHash, the standard one, cost more than the probe it
/// feeds in the fetch's per-link checks.
#[derive(Default, Clone, Copy)]
pub struct FpHasher(u64);

impl std::hash::Hasher for FpHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not the intended use (only `u64` keys): fold the bytes in.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A set of fingerprints hashed by [`FpHasher`].
pub type FpSet = std::collections::HashSet<u64, std::hash::BuildHasherDefault<FpHasher>>;
