#![no_main]
// `dragnet::fuzz::run_file` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::run_file(data));
