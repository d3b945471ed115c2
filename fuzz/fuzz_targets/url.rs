#![no_main]
// `dragnet::fuzz::url` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::url(data));
