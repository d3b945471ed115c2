//! The evaluation of Marin, Paredes & Bonacic, "High-performance priority queues for parallel
//! crawlers" (WIDM 2008; docs/design.md, References) redone on dragnet's two disk
//! priority queues, the quickheap and the CBT, against a binary heap on disk ([`bheap`]).
//!
//! The workload is the paper's bulk-synchronous superstep, extract-top-R then insert-many of R
//! new entries, on a queue holding N entries ([`run`]); the priorities come from OPIC crawls of
//! real web graphs or from a synthetic stream ([`workload`]). Three experiments:
//!
//! - Fig. 8, key comparisons versus N and versus R ([`experiments::fig8`]);
//! - Fig. 9, block I/Os with RAM = 10 % and 30 % of the queue ([`experiments::fig9`]);
//! - Table 1, load balance X/Y of the CBT's T slices ([`table1`]).
//!
//! Results and the comparison with the paper: `docs/pqbench.md`; command line: the README.

#![deny(missing_docs)]

pub mod bheap;
pub mod efficiency;
pub mod experiments;
pub mod queues;
pub mod run;
pub mod table1;
pub mod workload;
