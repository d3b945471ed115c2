#![no_main]
// `dragnet::fuzz::sitemap` (src/fuzz.rs) under libFuzzer.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dragnet::fuzz::sitemap(data));
