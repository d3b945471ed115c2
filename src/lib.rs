//! dragnet: an out-of-core, batch web-crawl pipeline.
//!
//! A crawl is a directory on disk. Each cycle runs five staged batch jobs (fetch, parse, split,
//! dedup-merge, prioritize) over host-hash partitions, and the stages exchange only sorted,
//! zstd-compressed run files. See `docs/architecture.md` and the design contract for the whole
//! picture; this crate is the library every stage and the `dragnet` binary are built from.
//!
//! Modules, by what a reader looks for:
//! - [`run`]: the run-file format, external sorter and k-way merge every stage exchanges data with.
//! - [`keys`]: URL canonicalization, SURT, fingerprints, host keys and partitions.
//! - [`storage`]: the one place files are published atomically (write-temp, fsync, rename, fsync-dir).
//! - [`resolve`]: the crawl's own hosts table (`[resolve]` in crawl.toml), like curl's `--resolve`.
//! - [`crawl`]: the crawl directory, `crawl.toml`, `dragnet init`, `.done` markers and the lock.
//! - [`cycle`]: `dragnet cycle`, the local executor that runs every stage over every partition.
//! - [`slurm`]: `dragnet slurm`, the executor that runs a cycle as Slurm job arrays on a cluster.
//! - [`demo`]: `dragnet demo`, a whole crawl of websim's synthetic web on loopback, checked
//!   against its ground truth.
//! - [`parse`]: the parse stage; today HTML link extraction and charset detection.
//! - [`fetch`]: the fetch stage; today robots.txt parsing and matching ([`fetch::robots`]).
//! - [`merge`]: the dedup-merge: the seen set and URL db updated in one sequential pass.
//! - [`prioritize`]: the prioritize stage: the frontier queue of each partition and the next
//!   cycle's fetch list (budget, host cap, stale entries, recrawls).
//! - [`queue`]: the frontier's disk-resident priority queues (quickheap and CBT of R-blocks) and
//!   the journaled pager under them.
//! - [`split`]: the split stage: scope and trap rules, the CLOCK cache, routing links to the
//!   partitions that own their hosts.
//! - [`warc`]: WARC 1.1 files: the writer the fetch stage uses, the streaming reader the parse
//!   stage and offline reprocessing use, and the HTTP helpers for record blocks.

#![deny(missing_docs)]

pub mod crawl;
pub mod direct;
pub mod error;
pub mod exec;
pub mod fetch;
pub mod keys;
pub mod merge;
pub mod parse;
pub mod prioritize;
pub mod queue;
pub mod records;
pub mod resolve;
pub mod run;
pub mod split;
pub mod storage;
pub mod util;
pub mod warc;

pub use error::{Error, Result};
