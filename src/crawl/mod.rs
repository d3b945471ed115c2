//! The crawl directory: configuration, layout, commit markers, the lock, and `dragnet init`.
//!
//! A crawl is a directory on disk (docs/design.md §2). [`CrawlDir`] knows where every file lives;
//! [`Config`] is `crawl.toml`; [`DoneMarker`] is the commit record of one stage for one
//! partition; [`CrawlLock`] keeps two cycles from running over each other; [`init()`] creates a
//! crawl from seeds; [`status()`] reports what a crawl holds; [`repartition()`] rewrites a crawl
//! for another partition count, offline.

pub mod bytesize;
pub mod check;
mod config;
mod done;
pub mod failed;
pub mod index;
mod init;
mod inject;
mod layout;
mod lock;
pub mod manifest;
pub mod metrics;
pub mod prune;
pub mod repartition;
pub mod report;
mod status;
pub mod submissions;

pub use bytesize::ByteSize;
pub use config::{Config, CrawlSection, SortSection, MAX_PARTITIONS};
pub use done::{DoneMarker, FileDigest};
pub use init::{init, BadSeed, InitOptions, InitReport};
pub use inject::{inject, InjectReport};
pub use layout::{CrawlDir, Stage};
pub use lock::{probe_lock, read_lock, unlock, CrawlLock, Holder, LockInfo};
pub use repartition::{repartition, RepartitionReport};
pub use report::{gate, StageReport};
pub(crate) use status::status_of;
pub use status::{
    status, status_with, CacheSummary, CycleState, CycleStatus, FetchSummary, HostCount, Parked,
    PartitionState, StageStatus, Status, StatusOptions, TopHosts, MAX_TRACKED_HOSTS, TOP_HOSTS,
};
