//! The integration tests of cachesim.
//! Each file below is a module of one test binary (one link instead of one per file).

mod png;
mod policies;
