//! websim: a deterministic synthetic web on loopback, for testing and benchmarking crawlers.
//!
//! A [`model::Web`] is generated from a seed: hosts with personalities (robots.txt variants,
//! sitemaps, charsets, content codings, and a hostile minority), and pages whose links follow the
//! statistics of the real web. Pages are pure functions of `(seed, host, page)` and are rendered
//! on demand ([`render`]), so any size of web costs no memory. The [`server`] serves it over
//! HTTP/1.1 on loopback addresses only, and its [`audit`] judges a crawler's politeness.
//!
//! websim deliberately shares no code with the crawler it tests: its robots matcher
//! ([`robots`]) and URL spelling are its own, so it can serve as an independent oracle.

#![deny(missing_docs)]

pub mod audit;
pub mod cli;
pub mod export;
pub mod graph;
pub mod model;
pub mod render;
pub mod rng;
pub mod robots;
pub mod server;
pub mod site;
pub mod truth;
