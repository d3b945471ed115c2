//! The fetch stage (docs/design.md §7): per-host back queues, the worker pool, politeness, WARC output
//! and the fetch-results run.
//!
//! - [`stage`]: `dragnet fetch` itself, joining the pieces below ([`fetch_partition`]).
//! - the host table (robots.txt per origin with its fetch time, counters) is
//!   [`crate::records::HostRecord`], read and written here.
//! - [`progress`]: a progress bar on a terminal, log lines otherwise.
//! - [`robots`]: robots.txt (RFC 9309) parsing and matching, with Google's parser as the
//!   reference, and the policy for robots.txt fetch outcomes (4xx allows all, 5xx and network
//!   errors disallow all).
//! - [`config`]: the `[fetch]` section of `crawl.toml`: politeness, limits against hostile
//!   servers, WARC output settings.
//! - [`guard`]: the SSRF guard on resolved addresses.
//! - [`ipgate`]: the per-IP limit and delay shared by every fetch of a process.
//! - [`client`]: fetching one URL (ureq) with every limit, SSRF guard and pinned resolution.
//! - [`tls`]: the TLS configuration (trusted roots, extra CA files) and connector.
//! - [`window`]: the cycle as a window: while another partition's list is unfinished, a
//!   partition follows links beyond `follow_per_host`.
//! - [`schedule`]: Mercator back queues, the heap of next-allowed times, the per-IP limit and
//!   the deadline, as a data structure driven with explicit times.

pub mod client;
pub mod config;
pub mod guard;
pub mod ipgate;
pub mod progress;
pub mod robots;
pub mod schedule;
pub mod stage;
pub mod tls;
pub mod window;

pub use config::FetchSection;
pub use progress::ProgressMode;
pub use stage::{fetch_partition, FetchOptions};
