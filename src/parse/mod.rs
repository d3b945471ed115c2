//! The parse stage: turning fetched documents into outlinks.
//!
//! - [`stage`]: `dragnet parse` over a partition's fetch results and `dragnet reparse` over any
//!   WARC files ([`parse_partition`], [`reparse`]); OPIC cash shares.
//! - [`records`]: the link and page records of its run files.
//! - [`html`]: link extraction from HTML.
//!
//! The design names `tl` for parsing because
//! it is a fast, zero-copy, non-validating tokenizer: the crawler needs attributes of a handful of
//! tags, not a DOM, and must never panic on truncated or malformed pages.

pub mod html;
pub mod records;
pub mod sitemap;
pub mod stage;

pub use stage::{parse_partition, reparse, ParseReport};
