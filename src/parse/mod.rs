//! The parse stage: turning fetched documents into outlinks.
//!
//! - [`stage`]: `dragnet parse` over a partition's fetch results and `dragnet reparse` over any
//!   WARC files ([`parse_partition`], [`reparse`]); OPIC cash shares.
//! - the link and page records of its run files are [`crate::records::LinkRecord`] and
//!   [`crate::records::PageRecord`].
//! - [`html`]: link extraction from HTML; [`css`]: the URLs a stylesheet loads (archive mode).
//! - [`config`]: `[parse]` (archive mode's page requisites, WET files).
//! - [`text`]: the visible text of an HTML page; `wet`: WET files of it.
//! - `inline`: the same parse run by the fetch stage as pages arrive (`[fetch] parse`), which
//!   commits the partition's parse with the fetch.
//!
//! The design named the `tl` tokenizer for HTML; `html.rs` follows the HTML standard's tokenizer
//! and the parts of tree construction that decide what is a real element instead, because `tl`
//! takes `<a href>` inside scripts, templates and comments for links (98.33% precision on the
//! conformance pages; 100% now, and 8x faster). `docs/parse.md` has the details.

mod cache;
pub mod css;
mod extract;
pub mod html;
pub(crate) mod inline;
pub mod sitemap;
pub mod stage;
pub mod text;
pub(crate) mod wet;

pub use stage::{parse_partition, reparse, ReparseReport};
