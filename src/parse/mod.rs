//! The parse stage: turning fetched documents into outlinks.
//!
//! Today this holds [`html`], link extraction from HTML. The design names `tl` for parsing because
//! it is a fast, zero-copy, non-validating tokenizer: the crawler needs attributes of a handful of
//! tags, not a DOM, and must never panic on truncated or malformed pages.

pub mod html;
