#![no_main]
// `dragnet::fuzz::config` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::config(data));
