//! The integration tests of websim.
//! Each file below is a module of one test binary (one link instead of one per file).

mod common;

mod determinism;
mod export;
mod graph;
mod hostile;
mod politeness;
mod requisites;
mod truth;
