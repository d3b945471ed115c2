//! The fuzz corpora, replayed (docs/RELIABILITY.md, campaign 6): every input `tools/faults/fuzz.sh`
//! kept in `fuzz/corpus/<target>/` (what libFuzzer found interesting, and every input that once
//! crashed a target, fixed since) goes through the same function the cargo-fuzz target calls
//! (`dragnet::fuzz`), on the stable toolchain, in every `cargo test`.

use std::path::Path;

#[test]
fn every_kept_fuzz_input_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut total = 0;
    for (name, target) in dragnet::fuzz::TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (every target keeps a corpus)", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let run = std::panic::catch_unwind(|| target(&data));
            assert!(run.is_ok(), "fuzz target {name} panics on {}", f.display());
        }
        eprintln!("fuzz target {name}: {} inputs replayed", files.len());
        total += files.len();
    }
    assert!(total > 0);
}

#[test]
fn every_fuzz_target_has_a_cargo_fuzz_binary() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
    for (name, _) in dragnet::fuzz::TARGETS {
        let src = fuzz.join(format!("fuzz_targets/{name}.rs"));
        let text =
            std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        assert!(
            text.contains(&format!("dragnet::fuzz::{name}(")),
            "{}",
            src.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml lacks {name}"
        );
    }
}
