//! CBT of R-blocks (seeds/001, Figs. 1 and 2). Being written.
