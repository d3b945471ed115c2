//! The fetch stage (docs/design.md §7): per-host back queues, the worker pool, politeness, WARC output
//! and the fetch-results run.
//!
//! - [`stage`]: `dragnet fetch` itself, joining the pieces below ([`fetch_partition`]).
//! - the host table (robots.txt per origin with its fetch time, counters) is
//!   [`crate::records::HostRecord`], read and written here.
//! - [`progress`]: a progress bar on a terminal, log lines otherwise.
//! - robots.txt parsing and matching is [`crate::robots`]; the `[fetch]` section is
//!   [`crate::config::FetchSection`].
//! - [`guard`]: the SSRF guard on resolved addresses.
//! - [`ipgate`]: the per-IP limit and delay shared by every fetch of a process.
//! - [`client`]: fetching one URL with every limit and the SSRF guard (HTTP/1.1 by ureq's
//!   protocol engine); [`conn`]: its connections (TCP, TLS), timeouts and keep-alive.
//! - [`tls`]: the TLS configuration (trusted roots, extra CA files).
//! - [`window`]: the cycle as a window: while another partition's list is unfinished, a
//!   partition follows links beyond `follow_per_host`.
//! - [`schedule`]: Mercator back queues, the heap of next-allowed times, the per-IP limit and
//!   the deadline, as a data structure driven with explicit times.

pub mod client;
mod codec;
pub mod conn;
pub mod guard;
pub mod ipgate;
pub mod progress;
pub mod schedule;
pub mod stage;
pub mod tls;
pub mod window;

pub use progress::ProgressMode;
pub use stage::{fetch_partition, FetchOptions};
