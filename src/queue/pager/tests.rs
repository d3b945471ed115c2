//! The pager's tests: I/O counting, rollback, and damage to each of its files.

use super::*;

fn opts(cache: usize) -> PagerOptions {
    PagerOptions {
        page_size: 512,
        cache_pages: cache,
        durable: true,
    }
}

/// Bytes of data in a page of 512 bytes (the rest is its checksum).
const D: usize = 512 - PAGE_TRAILER;
const DU: u64 = D as u64;

/// A new pager file of `bytes` of data (pages of 512 bytes) behind a cache of `cache` pages.
fn grown(cache: usize, bytes: u64) -> (tempfile::TempDir, std::path::PathBuf, Pager) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let mut p = Pager::open(&path, opts(cache)).unwrap();
    p.grow(bytes).unwrap();
    (dir, path, p)
}

#[test]
fn read_back_through_a_small_cache_counts_io() {
    let (_dir, path, mut p) = grown(2, DU * 8);
    for i in 0..8u64 {
        p.write(i * DU + 3, &i.to_le_bytes()).unwrap();
    }
    let mut b = [0u8; 8];
    for i in 0..8u64 {
        p.read(i * DU + 3, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), i);
    }
    let s = p.stats();
    assert!(s.block_reads >= 8, "{s:?}");
    assert!(s.block_writes >= 6, "{s:?}");
    p.commit(b"m").unwrap();
    drop(p);
    let mut p = Pager::open(&path, opts(2)).unwrap();
    assert_eq!(p.meta(), b"m");
    assert_eq!(p.generation(), 1);
    p.read(7 * DU + 3, &mut b).unwrap();
    assert_eq!(u64::from_le_bytes(b), 7);
}

/// Pages 0..4 committed as 1, 2, 3, 4 (`b"one"`), then all overwritten with 0xEE through a
/// one-frame cache (so pages reach the file), not committed.
fn overwritten() -> (tempfile::TempDir, PathBuf, Pager) {
    let (dir, path, mut p) = grown(1, DU * 4);
    for i in 0..4u64 {
        p.write(i * DU, &[i as u8 + 1; D]).unwrap();
    }
    p.commit(b"one").unwrap();
    for i in 0..4u64 {
        p.write(i * DU, &[0xEE; D]).unwrap();
    }
    (dir, path, p)
}

#[test]
fn an_uncommitted_transaction_is_rolled_back_on_open() {
    // Overwritten, grown, and "crashed" without committing.
    let (_dir, path, mut p) = overwritten();
    p.grow(DU * 16).unwrap();
    p.write(10 * DU, &[0xAB; 16]).unwrap();
    p.flush().unwrap();
    std::mem::forget(p);
    let mut p = Pager::open(&path, opts(1)).unwrap();
    assert_eq!(p.meta(), b"one");
    assert_eq!(p.len(), DU * 4);
    let mut b = [0u8; D];
    for i in 0..4u64 {
        p.read(i * DU, &mut b).unwrap();
        assert_eq!(b, [i as u8 + 1; D], "page {i}");
    }
    assert!(!sibling(&path, "journal").exists());
}

#[test]
fn a_stale_journal_after_a_finished_commit_is_ignored() {
    let (_dir, path, mut p) = grown(4, DU);
    p.write(0, &[1; D]).unwrap();
    p.commit(b"a").unwrap();
    p.write(0, &[2; D]).unwrap();
    // Keep a copy of the journal as it was before the commit removed it.
    let journal = std::fs::read(sibling(&path, "journal")).unwrap();
    p.commit(b"b").unwrap();
    std::fs::write(sibling(&path, "journal"), journal).unwrap();
    drop(p);
    let mut p = Pager::open(&path, opts(4)).unwrap();
    assert_eq!(p.meta(), b"b");
    let mut b = [0u8; D];
    p.read(0, &mut b).unwrap();
    assert_eq!(b, [2; D]);
}

#[test]
fn a_corrupt_meta_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let mut p = Pager::open(&path, opts(4)).unwrap();
    p.commit(b"x").unwrap();
    drop(p);
    let mp = sibling(&path, "meta");
    let mut m = std::fs::read(&mp).unwrap();
    m[10] ^= 1;
    std::fs::write(&mp, m).unwrap();
    let e = Pager::open(&path, opts(4)).err().unwrap().to_string();
    assert!(e.contains("q.dat.meta") && e.contains("checksum"), "{e}");
}

#[test]
fn a_truncated_queue_file_is_an_error_not_an_empty_queue() {
    for keep in [0u64, 512 * 2 + 7] {
        let (_dir, path, mut p) = grown(4, DU * 4);
        p.write(0, &[7; D]).unwrap();
        p.commit(b"m").unwrap();
        drop(p);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(keep)
            .unwrap();
        let e = Pager::open(&path, opts(4)).err().expect("refused");
        assert_eq!(e.exit_code(), crate::error::EXIT_IO);
        let msg = e.to_string();
        assert!(
            msg.contains("q.dat") && msg.contains("truncated") && msg.contains(&format!("{keep}")),
            "{msg}"
        );
        // Nothing was zero-filled: the file is as the damage left it.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), keep);
    }
}

#[test]
fn a_missing_meta_with_pages_is_an_error_not_a_new_queue() {
    let (_dir, path, mut p) = grown(4, DU * 4);
    p.write(0, &[7; D]).unwrap();
    p.commit(b"m").unwrap();
    drop(p);
    std::fs::remove_file(sibling(&path, "meta")).unwrap();
    let e = Pager::open(&path, opts(4)).err().expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("q.dat.meta") && msg.contains("missing"),
        "{msg}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 512 * 4, "not cut");
    // A new queue cut off before its first commit is not damage: its meta came first.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let mut p = Pager::open(&path, opts(4)).unwrap();
    p.grow(DU * 2).unwrap();
    p.write(0, &[1; D]).unwrap();
    p.flush().unwrap();
    std::mem::forget(p);
    let p = Pager::open(&path, opts(4)).unwrap();
    assert_eq!((p.len(), p.generation()), (0, 0));
}

/// A transaction that overwrote pages 0..4 and was cut off (never committed): its journal
/// holds 4 records.
fn interrupted() -> (tempfile::TempDir, PathBuf) {
    let (dir, path, mut p) = overwritten();
    p.flush().unwrap();
    std::mem::forget(p);
    (dir, path)
}

#[test]
fn a_damaged_journal_is_an_error_and_a_torn_last_record_is_not() {
    let rec = 8 + 512 + 8;
    // A record with records behind it, and the header: damage, refused, journal kept.
    for at in [24 + 100, 3] {
        let (_dir, path) = interrupted();
        let jp = sibling(&path, "journal");
        let mut j = std::fs::read(&jp).unwrap();
        assert_eq!(j.len(), 24 + 4 * rec);
        j[at] ^= 0x40;
        std::fs::write(&jp, &j).unwrap();
        let e = Pager::open(&path, opts(1)).err().expect("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("q.dat.journal") && msg.contains("damaged"),
            "{msg}"
        );
        assert!(jp.exists(), "the journal is kept for a person or a repair");
    }
    // The last record torn (cut short, or whole but with a bad checksum): a crash while
    // appending it, whose page was never overwritten; the rest is rolled back.
    for damage in [0, 1] {
        let (_dir, path) = interrupted();
        let jp = sibling(&path, "journal");
        let mut j = std::fs::read(&jp).unwrap();
        if damage == 0 {
            j.truncate(24 + 3 * rec + 40);
        } else {
            let n = j.len();
            j[n - 3] ^= 1;
        }
        std::fs::write(&jp, &j).unwrap();
        let mut p = Pager::open(&path, opts(1)).unwrap();
        assert_eq!(p.meta(), b"one");
        let mut b = [0u8; D];
        for i in 0..3u64 {
            p.read(i * DU, &mut b).unwrap();
            assert_eq!(b, [i as u8 + 1; D], "page {i}");
        }
    }
}

#[test]
fn slots_never_straddle_pages() {
    let s = Slots::new(0, 512);
    assert_eq!(s.offset(20), 20 * 24);
    assert_eq!(s.offset(21), 512);
    assert_eq!(s.bytes_for(22), 1024);
}

#[test]
fn a_changed_byte_in_a_committed_page_is_an_error_naming_the_page() {
    let (_dir, path, mut p) = grown(1, DU * 4);
    for i in 0..4u64 {
        p.write(i * DU, &[i as u8 + 1; D]).unwrap();
    }
    p.commit(b"m").unwrap();
    drop(p);
    check_files(&path).unwrap();
    // Any byte of page 2, its checksum included.
    for at in [2 * 512, 2 * 512 + 100, 2 * 512 + 511] {
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let e = check_files(&path).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        assert!(
            e.to_string().contains("page 2") && e.to_string().contains("1024"),
            "{e}"
        );
        let mut p = Pager::open(&path, opts(1)).unwrap();
        let mut b = [0u8; D];
        p.read(DU, &mut b).unwrap();
        assert_eq!(b, [2; D], "the other pages read");
        let e = p.read(2 * DU, &mut b).unwrap_err();
        assert!(e.to_string().contains("page 2"), "{e}");
        drop(p);
        bytes[at] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
    }
    // Pages never written since the file grew read as zeros.
    let mut p = Pager::open(&path, opts(1)).unwrap();
    p.grow(DU * 6).unwrap();
    let mut b = [1u8; D];
    p.read(5 * DU, &mut b).unwrap();
    assert_eq!(b, [0; D]);
}

#[test]
fn a_queue_written_before_page_checksums_still_reads() {
    // Two 512-byte pages and a `DNQMETA1` meta, as the format was.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let data: Vec<u8> = (0..1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let mut body = Vec::new();
    body.extend_from_slice(META_MAGIC_V1);
    body.extend_from_slice(&1u64.to_le_bytes());
    body.extend_from_slice(&1024u64.to_le_bytes());
    body.extend_from_slice(&512u32.to_le_bytes());
    body.extend_from_slice(b"old");
    let sum = xxh3_64(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    std::fs::write(sibling(&path, "meta"), &body).unwrap();
    check_files(&path).unwrap();
    let mut p = Pager::open(&path, opts(1)).unwrap();
    assert_eq!((p.page_size(), p.len(), p.meta()), (512, 1024, &b"old"[..]));
    let mut b = vec![0u8; 1024];
    p.read(0, &mut b).unwrap();
    assert_eq!(b, data);
    // Written and committed again, it stays in its format.
    p.write(3, &[9; 4]).unwrap();
    p.commit(b"old2").unwrap();
    drop(p);
    let meta = std::fs::read(sibling(&path, "meta")).unwrap();
    assert_eq!(&meta[..8], META_MAGIC_V1);
    let mut p = Pager::open(&path, opts(1)).unwrap();
    p.read(0, &mut b).unwrap();
    assert_eq!(&b[3..7], &[9; 4]);
}
