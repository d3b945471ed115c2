//! dragnet: an out-of-core, batch web-crawl pipeline.
//!
//! A crawl is a directory on disk. Each cycle runs five staged batch jobs (fetch, parse, split,
//! dedup-merge, prioritize) over host-hash partitions, and the stages exchange only sorted,
//! zstd-compressed run files. See `docs/architecture.md` and the design contract (`docs/design.md`)
//! for the whole picture; this crate is the library every stage and the `dragnet` binary are built from.
//!
//! Modules, by what a reader looks for (`docs/architecture.md` has the map):
//! - [`run`]: the run-file format, external sorter and k-way merge every stage exchanges data with.
//! - [`records`]: every payload that crosses a stage boundary, with its codec and schema.
//! - [`keys`]: URL canonicalization, SURT, fingerprints, host keys and partitions.
//! - [`storage`], [`direct`]: files published atomically; direct I/O for big sequential files.
//! - [`resolve`]: the crawl's own hosts table (`[resolve]` in crawl.toml), like curl's `--resolve`.
//! - [`crawl`]: the crawl directory: `crawl.toml`, `dragnet init`, `.done` and `.failed` markers,
//!   the stage report and gate, the lock, `dragnet status` and `metrics.prom`.
//! - The five stages, side by side: [`fetch`] (robots.txt first, Mercator back queues, WARC),
//!   [`parse`] (links, page facts, sitemaps; offline reprocessing), [`split`] (scope and trap
//!   rules, the CLOCK cache, routing to owner partitions), [`merge`] (the seen set and URL db in
//!   one sequential pass), [`prioritize`] (the frontier and the next fetch list).
//! - [`queue`]: the frontier's disk-resident priority queues (quickheap and CBT of R-blocks).
//! - [`exec`]: the executors that run the stages over the partitions: `dragnet cycle` (local) and
//!   `dragnet slurm` (job arrays on a cluster).
//! - [`report`]: `dragnet report`, the crawl as a static HTML page with inline SVG charts and
//!   CSV files shaped after Heritrix's reports.
//! - [`warc`]: WARC 1.1 files: writer, streaming reader, HTTP helpers for record blocks.
//! - [`error`], [`util`]: the one error type and exit codes; small helpers.
//! - `fuzz`: the fuzz targets (`fuzz/`, replayed over their corpora by `cargo test`).

#![deny(missing_docs)]

pub mod crawl;
pub mod direct;
pub mod error;
pub mod exec;
pub mod export;
pub mod fetch;
#[doc(hidden)]
pub mod fuzz;
pub mod interrupt;
pub mod keys;
pub mod merge;
pub mod parse;
pub mod prioritize;
pub mod queue;
pub mod records;
pub mod report;
pub mod resolve;
pub mod run;
pub mod split;
pub mod storage;
pub mod util;
pub mod warc;

pub use error::{Error, Result};
