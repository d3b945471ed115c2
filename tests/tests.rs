//! The integration tests of dragnet, as one test binary (one link instead of one per file, as
//! ripgrep keeps its `tests/`): each file below is a module. `cargo test --test integration
//! MODULE::` runs one of them. Third-party conformance data lives in `tests/data/` (its README
//! gives provenance and licenses); `DRAGNET_TESTDATA` may name another copy.

mod common;

mod backoff;
mod cdxj;
mod check_crawl;
mod cli;
mod convert;
mod crash;
mod cron;
mod cycle;
mod depth;
mod domain_budget;
mod export;
mod fetch_client;
mod fetch_stage;
mod follow;
mod full_disk;
mod fuzz_replay;
mod golden;
mod grafana;
mod html_links;
mod http_wire;
mod identity;
mod kill_points;
mod load;
mod merge_stage;
mod one_writer;
mod operator_errors;
mod out_paths;
mod park;
mod parse_stage;
mod pipeline;
mod prioritize_stage;
mod pywb;
mod repair;
mod repartition;
mod report;
mod report_browser;
mod requisites;
mod revisit;
mod robots_conformance;
mod run_corruption;
mod run_files;
mod scope_inject;
mod signals;
mod sitemaps;
mod slurm;
mod split_stage;
mod storage_faults;
mod structure;
mod tls;
mod url_conformance;
mod wacz;
mod warc;
mod warc_zstd;
mod websim_resolve;
mod wet;
mod window;
