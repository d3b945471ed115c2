//! The parse stage: turning fetched documents into outlinks.
//!
//! - [`stage`]: `dragnet parse` over a partition's fetch results and `dragnet reparse` over any
//!   WARC files ([`parse_partition`], [`reparse`]); OPIC cash shares.
//! - the link and page records of its run files are [`crate::records::LinkRecord`] and
//!   [`crate::records::PageRecord`].
//! - [`html`]: link extraction from HTML.
//!
//! The design named the `tl` tokenizer for HTML; `html.rs` follows the HTML standard's tokenizer
//! and the parts of tree construction that decide what is a real element instead, because `tl`
//! takes `<a href>` inside scripts, templates and comments for links (98.33% precision on the
//! conformance pages; 100% now, and 8x faster). `docs/parse.md` has the details.

mod cache;
mod extract;
pub mod html;
pub mod sitemap;
pub mod stage;

pub use stage::{parse_partition, reparse, ReparseReport};

/// The parse stage's link extraction for one page at a time, for the fetch stage's in-run
/// following (`crate::fetch`): the same tokenizer, base resolution, canonicalization, meta
/// robots and `rel=nofollow` as `dragnet parse`, so a URL followed in the run has the canonical
/// form and fingerprint the parse of the same page gives it.
pub(crate) struct PageLinker(extract::Extractor);

impl PageLinker {
    /// A linker whose caches take at most a quarter of `cfg`'s sort budget.
    pub(crate) fn new(cfg: &crate::crawl::Config) -> PageLinker {
        PageLinker(extract::Extractor::new(cfg))
    }

    /// Calls `each(key, record)` for every link of the answered page at `url` (head, and its
    /// decoded body) with its 16-byte (host key, fingerprint) key and encoded
    /// [`crate::records::LinkRecord`]; nothing for pages that are not HTML, sitemaps or feeds.
    pub(crate) fn each(
        &mut self,
        url: &str,
        status: u16,
        head: &crate::warc::http::HttpHead,
        body: &[u8],
        depth: u32,
        each: &mut dyn FnMut(&[u8], &[u8]),
    ) -> crate::Result<()> {
        let mut out = |k: &[u8], v: &[u8]| -> crate::Result<()> {
            each(k, v);
            Ok(())
        };
        self.0
            .page(url, status, Some(head), body, depth, 0.0, &mut out)
            .map(drop)
    }
}
