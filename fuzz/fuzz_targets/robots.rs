#![no_main]
// `dragnet::fuzz::robots` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::robots(data));
