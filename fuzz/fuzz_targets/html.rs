#![no_main]
// `dragnet::fuzz::html` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::html(data));
