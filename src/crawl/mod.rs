//! The crawl directory's primitives: layout, commit markers, the manifest, the lock, the stage
//! report and gate.
//!
//! A crawl is a directory on disk (docs/design.md §2). [`CrawlDir`] knows where every file lives;
//! [`DoneMarker`] is the commit record of one stage for one partition, [`failed`] its failure
//! record; [`manifest`] fixes what the crawl was created with; [`CrawlLock`] keeps two cycles from
//! running over each other, and [`queued`] keeps a local run from running beside the crawl's
//! Slurm jobs; [`report`] is a stage's [`StageReport`], its [`gate`] and the counter names;
//! [`submissions`] records Slurm submissions. This layer sits under the stages and the
//! operations on a crawl ([`crate::ops`]: init, inject, status, check, ...); see
//! docs/architecture.md, "Layers".

pub(crate) mod done;
pub mod failed;
mod layout;
mod lock;
pub mod manifest;
pub mod queued;
pub mod report;
pub mod submissions;

pub(crate) use done::read_marker;
pub use done::{DoneMarker, FileDigest};
pub use layout::{next_cycle, warc_filename_prefix, CrawlDir, Stage};
pub use lock::{probe_lock, read_lock, unlock, CrawlLock, Holder, LockInfo};
pub use report::{gate, StageReport};
