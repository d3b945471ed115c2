//! `[parse]` in crawl.toml: what the parse stage (or the fetch's inline parse) takes from a page
//! besides its links. A leaf, like `fetch/config.rs`.

use serde::{Deserialize, Serialize};

/// `[parse]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ParseSection {
    /// Archive mode: a page's requisites (images, scripts, stylesheets, `srcset` candidates,
    /// media, CSS `url()` and `@import`, in `<style>`, `style=""` and fetched stylesheets) are
    /// followed as links of kind `requisite`, at the page's own depth (so depth limits do not
    /// cut a page from its assets), with robots.txt and the scope applying as to any URL. A
    /// requisite shared by many pages is fetched once, like any URL.
    pub requisites: bool,
    /// Write the visible text of every HTML page as a WET file beside the WARC files
    /// (`pNNNN-SSSSSS.warc.wet.zst`: WARC `conversion` records, as Common Crawl's WET files;
    /// [`super::wet`]).
    pub text: bool,
}
