//! Operations on a crawl: everything a user runs against a crawl directory besides the cycle
//! itself.
//!
//! They sit above the five stages and below the executors (docs/architecture.md, "Layers"):
//! - [`init()`], [`inject()`]: create a crawl from seeds; add seeds to one.
//! - [`stage`]: one stage for one partition, the envelope every executor and the operator use.
//! - [`status()`], [`metrics`]: what a crawl holds, for people and for Prometheus.
//! - [`check`], [`repair`]: verify every committed file; restore what damage took.
//! - [`index`]: the cycle's and the crawl's CDXJ indexes.
//! - [`prune`]: old state versions and the runs of finished cycles.
//! - [`repartition()`]: rewrite a crawl for another partition count, offline.
//! - [`convert`]: `dragnet warc convert`, between `.warc.gz` and `.warc.zst`.
//! - [`export`]: tables (CSV, JSON lines, Parquet), WET text and WACZ packages.
//! - [`report`]: `dragnet report`, the crawl as a static HTML page with CSV files.

pub mod check;
pub mod convert;
pub mod export;
pub mod index;
mod init;
mod inject;
pub mod metrics;
pub mod prune;
pub mod repair;
pub mod repartition;
pub mod report;
pub mod stage;
mod status;

pub use init::{init, BadSeed, InitOptions, InitReport};
pub use inject::{inject, InjectReport};
pub use repartition::{repartition, RepartitionReport};
pub(crate) use status::status_of;
pub use status::{
    status, status_with, CacheSummary, CycleState, CycleStatus, FetchSummary, HostCount, Parked,
    PartitionState, StageStatus, Status, StatusOptions, TopHosts, MAX_TRACKED_HOSTS, TOP_HOSTS,
};
