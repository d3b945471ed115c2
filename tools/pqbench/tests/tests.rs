//! The integration tests of pqbench.
//! Each file below is a module of one test binary (one link instead of one per file).

mod bheap;
mod experiments;
mod workload;
