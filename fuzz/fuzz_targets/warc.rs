#![no_main]
// `dragnet::fuzz::warc` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::warc(data));
