//! Quickheap (seeds/001, Figs. 4 and 5). Being written.
