//! Run files: round trips, order enforcement, seek, external sort, k-way merge, corruption.

use std::path::Path;

use dragnet::run::{
    self, Cursor, KeepAll, KeepFirst, RunReader, RunWriter, Schema, Sorter, VecCursor,
    WriterOptions,
};
use dragnet::Error;
use proptest::prelude::*;

const PAYLOAD16: Schema = Schema {
    id: 900,
    name: "test16",
    key_len: 16,
    payload: true,
    unique: false,
    sort_key: "a64,b64",
};

fn write(
    path: &Path,
    schema: Schema,
    recs: &[(Vec<u8>, Vec<u8>)],
    block_size: usize,
) -> run::RunSummary {
    let opts = WriterOptions {
        block_size,
        ..WriterOptions::default()
    };
    let mut w = RunWriter::with_options(path, schema, opts).unwrap();
    for (k, p) in recs {
        w.push(k, p).unwrap();
    }
    w.finish().unwrap()
}

fn read_all(path: &Path) -> dragnet::Result<Vec<run::OwnedRecord>> {
    let mut r = RunReader::open(path)?;
    let mut out = Vec::new();
    while r.advance()? {
        out.push((r.key().to_vec(), r.payload().to_vec()));
    }
    Ok(out)
}

fn sorted_records(n: usize, seed: u64) -> Vec<run::OwnedRecord> {
    let mut x = seed | 1;
    let mut recs: Vec<run::OwnedRecord> = (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = run::host_fp_key(x % 50, x.rotate_left(17));
            (k.to_vec(), vec![(i % 251) as u8; (x % 40) as usize])
        })
        .collect();
    recs.sort_by(|a, b| a.0.cmp(&b.0));
    recs
}

#[test]
fn round_trip_many_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.run");
    let recs = sorted_records(5000, 7);
    let s = write(&p, PAYLOAD16, &recs, 1024);
    assert!(s.blocks > 10, "{s:?}");
    assert_eq!(s.records, 5000);
    assert_eq!(read_all(&p).unwrap(), recs);
    let info = run::verify(&p).unwrap();
    assert_eq!(info.records, 5000);
    assert_eq!(info.blocks, s.blocks);
    assert_eq!(info.bytes, s.bytes);
}

#[test]
fn empty_run_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("e.run");
    let s = write(&p, Schema::SEEN, &[], 1024);
    assert_eq!((s.records, s.blocks), (0, 0));
    assert!(read_all(&p).unwrap().is_empty());
    let mut r = RunReader::open(&p).unwrap();
    r.seek(&run::fp_key(5)).unwrap();
    assert!(!r.advance().unwrap());
}

#[test]
fn writer_refuses_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = RunWriter::create(&dir.path().join("o.run"), Schema::SEEN).unwrap();
    w.push_u64(10, &[]).unwrap();
    match w.push_u64(9, &[]) {
        Err(Error::OutOfOrder { previous, got }) => {
            assert_eq!(previous.to_string(), "000000000000000a");
            assert_eq!(got.to_string(), "0000000000000009");
        }
        other => panic!("expected OutOfOrder, got {other:?}"),
    }
    // Unique schemas refuse duplicates too; the writer stays usable.
    assert!(matches!(w.push_u64(10, &[]), Err(Error::OutOfOrder { .. })));
    w.push_u64(11, &[]).unwrap();
    assert_eq!(w.finish().unwrap().records, 2);
}

#[test]
fn schema_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.run");
    write(&p, Schema::SEEN, &[(run::fp_key(1).to_vec(), vec![])], 1024);
    assert!(RunReader::open_expect(&p, Schema::SEEN).is_ok());
    let err = RunReader::open_expect(&p, Schema::URLDB)
        .err()
        .expect("mismatch");
    assert!(matches!(err, Error::Schema { .. }), "{err}");
}

#[test]
fn seek_finds_first_key_at_or_after() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.run");
    // Keys 0, 2, 4, ... with each key repeated 3 times, so groups straddle blocks.
    let recs: Vec<run::OwnedRecord> = (0u64..3000)
        .map(|i| (run::fp_key(i / 3 * 2).to_vec(), vec![(i % 3) as u8]))
        .collect();
    write(
        &p,
        Schema {
            id: 901,
            name: "t",
            key_len: 8,
            payload: true,
            unique: false,
            sort_key: "fp64",
        },
        &recs,
        200,
    );
    let mut r = RunReader::open(&p).unwrap();
    for target in [0u64, 1, 2, 3, 100, 101, 1997, 1998, 1999, 5000] {
        r.seek(&run::fp_key(target)).unwrap();
        let want = recs
            .iter()
            .position(|(k, _)| k.as_slice() >= &run::fp_key(target)[..]);
        match want {
            Some(i) => {
                assert!(r.advance().unwrap(), "target {target}");
                assert_eq!(r.key(), &recs[i].0[..], "target {target}");
                assert_eq!(
                    r.payload(),
                    &recs[i].1[..],
                    "target {target}: first of the group"
                );
                // And it keeps streaming to the end in order.
                let mut n = 1;
                while r.advance().unwrap() {
                    n += 1;
                }
                assert_eq!(n, recs.len() - i, "target {target}");
            }
            None => assert!(!r.advance().unwrap()),
        }
    }
}

#[test]
fn sorter_with_payloads_is_stable_and_spills() {
    // Raw spills, run files, and raw spills then run files (intermediate merges mix them).
    let mut bytes = Vec::new();
    for raw in [u64::MAX, 0, 20_000] {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(PAYLOAD16, 2000, dir.path())
            .unwrap()
            .fanout(3)
            .raw_spill_limit(raw);
        let mut input = Vec::new();
        for i in 0u64..3000 {
            let k = run::host_fp_key(i % 7, (i * 7919) % 13);
            let p = i.to_le_bytes().to_vec();
            s.push(&k, &p).unwrap();
            input.push((k.to_vec(), p));
        }
        let mut out: Vec<run::OwnedRecord> = Vec::new();
        let stats = s.finish(&mut KeepAll, &mut out).unwrap();
        assert!(stats.spills > 3 && stats.merge_passes > 0, "{stats:?}");
        input.sort_by(|a, b| a.0.cmp(&b.0)); // stable: pushes of equal keys keep their order
        assert_eq!(out, input, "raw spill limit {raw}");
        // The scratch directory is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        bytes.push(stats.spill_bytes);
    }
    // Raw spills are larger than compressed ones; the mixed sort lies between.
    assert!(bytes[0] > bytes[2] && bytes[2] > bytes[1], "{bytes:?}");
}

#[test]
fn a_sort_within_its_budget_touches_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Sorter::new(PAYLOAD16, 1 << 20, dir.path()).unwrap();
    for i in 0u64..100 {
        s.push(&run::host_fp_key(i % 7, i), b"x").unwrap();
        // No spill directory while everything fits (a cycle with little to do made hundreds).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
    let mut out: Vec<run::OwnedRecord> = Vec::new();
    let stats = s.finish(&mut KeepAll, &mut out).unwrap();
    assert_eq!((stats.spills, out.len()), (0, 100));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Sorts whose spills are all run files, raw ones then run files, or all raw.
fn raw_limits() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![0u64, 1000, u64::MAX])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Merging runs equals sorting and de-duplicating their concatenation.
    #[test]
    fn merge_equals_sort_dedup(runs in prop::collection::vec(prop::collection::vec(any::<u16>(), 0..300), 0..9)) {
        let dir = tempfile::tempdir().unwrap();
        let mut readers = Vec::new();
        let mut all = Vec::new();
        for (i, keys) in runs.iter().enumerate() {
            let mut keys: Vec<u64> = keys.iter().map(|&k| u64::from(k) << 40 | u64::from(k % 3)).collect();
            keys.sort_unstable();
            all.extend_from_slice(&keys);
            let p = dir.path().join(format!("{i}.run"));
            let recs: Vec<_> = keys.iter().map(|k| (run::fp_key(*k).to_vec(), vec![])).collect();
            write(&p, Schema::FINGERPRINTS, &recs, 256);
            readers.push(RunReader::open(&p).unwrap());
        }
        all.sort_unstable();
        all.dedup();
        let out_path = dir.path().join("merged.run");
        let mut w = RunWriter::create(&out_path, Schema::SEEN).unwrap();
        run::merge(readers, &mut KeepFirst, &mut w).unwrap();
        w.finish().unwrap();
        let got: Vec<u64> = read_all(&out_path).unwrap().iter().map(|(k, _)| run::key_u64(k)).collect();
        prop_assert_eq!(got, all);
    }

    /// External sort with a tiny budget equals an in-memory sort.
    #[test]
    fn tiny_budget_sort_equals_memory_sort(keys in prop::collection::vec(any::<u64>(), 0..2000), budget in 64usize..600, raw in raw_limits()) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(Schema::FINGERPRINTS, budget, dir.path()).unwrap().fanout(4).raw_spill_limit(raw);
        for k in &keys {
            s.push(&run::fp_key(*k), &[]).unwrap();
        }
        let mut out: Vec<run::OwnedRecord> = Vec::new();
        s.finish(&mut KeepAll, &mut out).unwrap();
        let mut want = keys.clone();
        want.sort_unstable();
        let got: Vec<u64> = out.iter().map(|(k, _)| run::key_u64(k)).collect();
        prop_assert_eq!(got, want);
    }

    /// External sort of records with payloads, for keys shorter than, as long as and longer
    /// than the 16 bytes the sorter's index holds, equals a stable in-memory sort. Keys take few
    /// distinct values in every byte, so ties at each position are common.
    #[test]
    fn sort_with_payloads_equals_stable_sort(
        key_len in prop::sample::select(vec![3u16, 8, 12, 16, 17, 24]),
        seeds in prop::collection::vec(any::<u64>(), 0..600),
        budget in 200usize..4000,
        raw in raw_limits(),
    ) {
        let schema = Schema { id: 901, name: "anylen", key_len, payload: true, unique: false, sort_key: "bytes" };
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(schema, budget, dir.path()).unwrap().fanout(3).raw_spill_limit(raw);
        let mut input = Vec::new();
        for (i, seed) in seeds.iter().enumerate() {
            let key: Vec<u8> = (0..usize::from(key_len)).map(|j| ((seed >> (j % 60)) & 3) as u8).collect();
            let payload = (i as u32).to_le_bytes().to_vec();
            s.push(&key, &payload).unwrap();
            input.push((key, payload));
        }
        let mut out: Vec<run::OwnedRecord> = Vec::new();
        s.finish(&mut KeepAll, &mut out).unwrap();
        input.sort_by(|a, b| a.0.cmp(&b.0));
        prop_assert_eq!(out, input);
    }

    /// Any records survive a write/read round trip, whatever the block size.
    #[test]
    fn round_trip_any(mut recs in prop::collection::vec((any::<[u8; 16]>(), prop::collection::vec(any::<u8>(), 0..70)), 0..200), block in 1usize..3000) {
        recs.sort_by_key(|r| r.0);
        let recs: Vec<run::OwnedRecord> = recs.into_iter().map(|(k, p)| (k.to_vec(), p)).collect();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.run");
        write(&p, PAYLOAD16, &recs, block);
        prop_assert_eq!(read_all(&p).unwrap(), recs);
    }
}

#[test]
fn vec_cursor_merges_with_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.run");
    write(
        &p,
        Schema::FINGERPRINTS,
        &[(run::fp_key(2).to_vec(), vec![])],
        1024,
    );
    let file: Box<dyn Cursor> = Box::new(RunReader::open(&p).unwrap());
    let mem: Box<dyn Cursor> = Box::new(VecCursor::new(vec![
        (run::fp_key(1).to_vec(), vec![]),
        (run::fp_key(3).to_vec(), vec![]),
    ]));
    let mut out: Vec<run::OwnedRecord> = Vec::new();
    assert_eq!(
        run::merge(vec![file, mem], &mut KeepAll, &mut out).unwrap(),
        3
    );
    let got: Vec<u64> = out.iter().map(|(k, _)| run::key_u64(k)).collect();
    assert_eq!(got, vec![1, 2, 3]);
}

/// A writer with a background thread writes the same bytes as one without, for keys with
/// payloads and for fingerprint slices; one dropped unfinished leaves nothing behind.
#[test]
fn background_writers_write_the_same_bytes() {
    let t = tempfile::tempdir().unwrap();
    let recs = sorted_records(3000, 42);
    let write_with = |name: &str, background: bool| {
        let p = t.path().join(name);
        let opts = WriterOptions {
            block_size: 700,
            background,
            ..WriterOptions::default()
        };
        let mut w = RunWriter::with_options(&p, PAYLOAD16, opts).unwrap();
        for (k, v) in &recs {
            w.push(k, v).unwrap();
        }
        w.finish().unwrap();
        std::fs::read(p).unwrap()
    };
    assert_eq!(
        write_with("inline.run", false),
        write_with("thread.run", true)
    );

    let mut keys: Vec<u64> = (0..20_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    keys.sort_unstable();
    let fps_with = |name: &str, background: bool, by_slice: bool| {
        let p = t.path().join(name);
        let opts = WriterOptions {
            block_size: 4096,
            background,
            ..WriterOptions::for_schema(Schema::SEEN)
        };
        let mut w = RunWriter::with_options(&p, Schema::SEEN, opts).unwrap();
        if by_slice {
            for chunk in keys.chunks(777) {
                w.push_u64s(chunk).unwrap();
            }
        } else {
            for k in &keys {
                w.push_u64(*k, &[]).unwrap();
            }
        }
        w.finish().unwrap();
        std::fs::read(p).unwrap()
    };
    let one_by_one = fps_with("a.run", false, false);
    assert_eq!(one_by_one, fps_with("b.run", true, true));
    assert_eq!(one_by_one, fps_with("c.run", false, true));

    // A slice out of order is refused whole, and the writer stays usable.
    let p = t.path().join("refused.run");
    let mut w = RunWriter::create(&p, Schema::SEEN).unwrap();
    w.push_u64s(&[1, 5, 9]).unwrap();
    assert!(matches!(
        w.push_u64s(&[10, 12, 11]),
        Err(Error::OutOfOrder { .. })
    ));
    assert!(
        matches!(w.push_u64s(&[9]), Err(Error::OutOfOrder { .. })),
        "unique run"
    );
    w.push_u64s(&[10, 11]).unwrap();
    assert_eq!(w.finish().unwrap().records, 5);

    let p = t.path().join("dropped.run");
    let mut w = RunWriter::with_options(
        &p,
        Schema::SEEN,
        WriterOptions {
            block_size: 64,
            background: true,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    w.push_u64s(&keys).unwrap();
    drop(w);
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("dropped"))
        .collect();
    assert!(left.is_empty(), "a dropped writer left {left:?}");
}
