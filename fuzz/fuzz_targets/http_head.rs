#![no_main]
// `dragnet::fuzz::http_head` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::http_head(data));
