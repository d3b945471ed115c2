//! The pager's tests: I/O counting, rollback, and damage to each of its files.

use super::*;

fn opts(cache: usize) -> PagerOptions {
    PagerOptions {
        page_size: 512,
        cache_pages: cache,
        durable: true,
    }
}

/// A new pager file of `bytes` (pages of 512 bytes) behind a cache of `cache` pages.
fn grown(cache: usize, bytes: u64) -> (tempfile::TempDir, std::path::PathBuf, Pager) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let mut p = Pager::open(&path, opts(cache)).unwrap();
    p.grow(bytes).unwrap();
    (dir, path, p)
}

#[test]
fn read_back_through_a_small_cache_counts_io() {
    let (_dir, path, mut p) = grown(2, 512 * 8);
    for i in 0..8u64 {
        p.write(i * 512 + 3, &i.to_le_bytes()).unwrap();
    }
    let mut b = [0u8; 8];
    for i in 0..8u64 {
        p.read(i * 512 + 3, &mut b).unwrap();
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
    p.read(7 * 512 + 3, &mut b).unwrap();
    assert_eq!(u64::from_le_bytes(b), 7);
}

/// Pages 0..4 committed as 1, 2, 3, 4 (`b"one"`), then all overwritten with 0xEE through a
/// one-frame cache (so pages reach the file), not committed.
fn overwritten() -> (tempfile::TempDir, PathBuf, Pager) {
    let (dir, path, mut p) = grown(1, 512 * 4);
    for i in 0..4u64 {
        p.write(i * 512, &[i as u8 + 1; 512]).unwrap();
    }
    p.commit(b"one").unwrap();
    for i in 0..4u64 {
        p.write(i * 512, &[0xEE; 512]).unwrap();
    }
    (dir, path, p)
}

#[test]
fn an_uncommitted_transaction_is_rolled_back_on_open() {
    // Overwritten, grown, and "crashed" without committing.
    let (_dir, path, mut p) = overwritten();
    p.grow(512 * 16).unwrap();
    p.write(10 * 512, &[0xAB; 16]).unwrap();
    p.flush().unwrap();
    std::mem::forget(p);
    let mut p = Pager::open(&path, opts(1)).unwrap();
    assert_eq!(p.meta(), b"one");
    assert_eq!(p.len(), 512 * 4);
    let mut b = [0u8; 512];
    for i in 0..4u64 {
        p.read(i * 512, &mut b).unwrap();
        assert_eq!(b, [i as u8 + 1; 512], "page {i}");
    }
    assert!(!sibling(&path, "journal").exists());
}

#[test]
fn a_stale_journal_after_a_finished_commit_is_ignored() {
    let (_dir, path, mut p) = grown(4, 512);
    p.write(0, &[1; 512]).unwrap();
    p.commit(b"a").unwrap();
    p.write(0, &[2; 512]).unwrap();
    // Keep a copy of the journal as it was before the commit removed it.
    let journal = std::fs::read(sibling(&path, "journal")).unwrap();
    p.commit(b"b").unwrap();
    std::fs::write(sibling(&path, "journal"), journal).unwrap();
    drop(p);
    let mut p = Pager::open(&path, opts(4)).unwrap();
    assert_eq!(p.meta(), b"b");
    let mut b = [0u8; 512];
    p.read(0, &mut b).unwrap();
    assert_eq!(b, [2; 512]);
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
        let (_dir, path, mut p) = grown(4, 512 * 4);
        p.write(0, &[7; 512]).unwrap();
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
    let (_dir, path, mut p) = grown(4, 512 * 4);
    p.write(0, &[7; 512]).unwrap();
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
    p.grow(512 * 2).unwrap();
    p.write(0, &[1; 512]).unwrap();
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
        let mut b = [0u8; 512];
        for i in 0..3u64 {
            p.read(i * 512, &mut b).unwrap();
            assert_eq!(b, [i as u8 + 1; 512], "page {i}");
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
