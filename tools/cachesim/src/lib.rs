//! URL-cache study after Broder, Najork & Wiener, "Efficient URL caching for World Wide Web
//! crawling" (WWW 2003): RANDOM, STATIC, LRU, CLOCK, MIN and INFINITE caches of 64-bit URL
//! fingerprints over crawl link streams. See the README for the command line.
//!
//! [`clock::Clock`] is dragnet's production cache (`dragnet::split::clock`, the one the split
//! stage runs), re-exported; the other policies exist to measure it against.

#![warn(missing_docs)]

pub mod clock;
pub mod plot;
pub mod png;
pub mod policies;
pub mod streams;
pub mod study;

pub use clock::Clock;
