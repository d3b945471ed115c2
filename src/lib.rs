//! dragnet: an out-of-core, batch web-crawl pipeline.
//!
//! A crawl is a directory on disk. Each cycle runs five staged batch jobs (fetch, parse, split,
//! dedup-merge, prioritize) over host-hash partitions, and the stages exchange only sorted,
//! zstd-compressed run files. See `docs/architecture.md` and the design contract (`docs/design.md`)
//! for the whole picture; this crate is the library every stage and the `dragnet` binary are built from.
//!
//! Modules, bottom layer first: a module imports only modules above it in this list
//! (docs/architecture.md, "Layers"; `tests/structure.rs` checks it):
//! - [`error`], [`interrupt`], [`util`]: the one error type and exit codes; signals; small helpers.
//! - [`direct`], [`storage`]: direct I/O for big sequential files; files published atomically,
//!   and output paths a user chose ([`storage::out`]).
//! - [`keys`], [`resolve`], [`robots`]: URL canonicalization, SURT, fingerprints, host keys and
//!   partitions; the crawl's own hosts table; robots.txt (RFC 9309) parsing and matching.
//! - [`run`], [`records`]: the run-file format, external sorter and k-way merge every stage
//!   exchanges data with; every payload that crosses a stage boundary.
//! - [`warc`]: WARC 1.1 files: writer, streaming reader, HTTP helpers, CDXJ, dictionaries.
//! - [`queue`]: the frontier's disk-resident priority queues (quickheap and CBT of R-blocks).
//! - [`config`]: `crawl.toml`, every section of it.
//! - [`crawl`]: the crawl directory's primitives: layout, markers, manifest, lock, stage report.
//! - The five stages: [`parse`] (links, page facts, sitemaps), [`split`] (scope and trap rules,
//!   the CLOCK cache, routing to owner partitions), [`merge`] (the seen set and URL db in one
//!   sequential pass), [`prioritize`] (the frontier and the next fetch list), [`fetch`] (robots.txt
//!   first, Mercator back queues, WARC; above parse, whose extractor it runs inline).
//! - [`ops`]: operations on a crawl: init, inject, one stage by hand, status, metrics, check,
//!   repair, index, prune, repartition, convert, export, report.
//! - [`exec`]: the executors that run the stages over the partitions: `dragnet cycle` (local) and
//!   `dragnet slurm` (job arrays on a cluster).
//! - `fuzz`: the fuzz targets (`fuzz/`, replayed over their corpora by `cargo test`); the
//!   `dragnet` binary (`src/cli`) is on top.

#![deny(missing_docs)]

pub mod config;
pub mod crawl;
pub mod direct;
pub mod error;
pub mod exec;
pub mod fetch;
#[doc(hidden)]
pub mod fuzz;
pub mod interrupt;
pub mod keys;
pub mod merge;
pub mod ops;
pub mod parse;
pub mod prioritize;
pub mod queue;
pub mod records;
pub mod resolve;
pub mod robots;
pub mod run;
pub mod split;
pub mod storage;
pub mod util;
pub mod warc;

pub use error::{Error, Result};
