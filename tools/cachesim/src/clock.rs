//! The CLOCK cache studied here is dragnet's own ([`dragnet::split::clock`]), the one the split
//! stage runs, so the study measures the production code; its `SlotIndex` also indexes this
//! crate's LRU and RANDOM caches.

pub use dragnet::split::clock::{Clock, SlotIndex};
