//! What the property tests of both queues share: the steps they interleave.

use super::Entry;

/// One step of a queue's property test, run on the queue and on an in-memory reference.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// Insert these entries.
    Insert(Vec<Entry>),
    /// Extract the top this many.
    Extract(usize),
    /// Commit (a new tag).
    Commit,
    /// Drop cleanly (the CBT commits first; the quickheap does not) and reopen.
    Reopen,
    /// `mem::forget` (a simulated kill) and reopen: back to the last commit.
    Kill,
}
