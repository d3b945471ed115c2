//! The queues under test, opened by kind.

use std::path::Path;

use dragnet::queue::cbt::{CbtOptions, CbtQueue};
use dragnet::queue::pager::PagerOptions;
use dragnet::queue::quickheap::{QuickHeap, QuickHeapOptions};
use dragnet::queue::{DiskQueue, Entry, IoStats};

use crate::bheap::BHeap;
use crate::table1::{SliceSetup, SlicedQueue};

/// A queue implementation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, clap::ValueEnum,
)]
pub enum QueueKind {
    /// `dragnet::queue::quickheap::QuickHeap` (the paper's QHeap).
    Qheap,
    /// `dragnet::queue::cbt::CbtQueue` with one slice (the paper's CBT).
    Cbt,
    /// [`BHeap`], the baseline binary heap (the paper's BHeap).
    Bheap,
}

impl QueueKind {
    /// All kinds, in table order.
    pub const ALL: [QueueKind; 3] = [QueueKind::Qheap, QueueKind::Cbt, QueueKind::Bheap];

    /// Name in tables and plots.
    pub fn label(self) -> &'static str {
        match self {
            QueueKind::Qheap => "QHEAP",
            QueueKind::Cbt => "CBT",
            QueueKind::Bheap => "BHEAP",
        }
    }

    /// Name on the command line and in file names.
    pub fn cli_name(self) -> &'static str {
        match self {
            QueueKind::Qheap => "qheap",
            QueueKind::Cbt => "cbt",
            QueueKind::Bheap => "bheap",
        }
    }
}

/// How to open a queue for one run.
#[derive(Debug, Clone, Copy)]
pub struct QueueSetup {
    /// Which queue.
    pub kind: QueueKind,
    /// Entries it is filled with (N).
    pub n: u64,
    /// Entries per extract-top and insert-many (R); the CBT's block size.
    pub r: usize,
    /// Pager options (the RAM budget).
    pub pager: PagerOptions,
    /// Seed of the quickheap's pivot choices.
    pub seed: u64,
}

/// Opens a new, empty queue of `setup.kind` in the empty directory `dir`: the quickheap with
/// an initial capacity of N + R slots, the CBT with one slice and blocks of R entries, the binary
/// heap.
pub fn open(dir: &Path, setup: &QueueSetup) -> Result<Box<dyn DiskQueue>, String> {
    let err = |e: dragnet::error::Error| format!("{}: {e}", setup.kind.label());
    Ok(match setup.kind {
        QueueKind::Bheap => Box::new(BHeap::open(dir, setup.pager).map_err(err)?),
        QueueKind::Qheap => Box::new(
            QuickHeap::open(
                dir,
                QuickHeapOptions {
                    pager: setup.pager,
                    seed: setup.seed,
                    initial_capacity: setup.n + setup.r as u64,
                },
            )
            .map_err(err)?,
        ),
        QueueKind::Cbt => Box::new(
            CbtQueue::open(
                dir,
                CbtOptions {
                    block: setup.r.max(1),
                    slices: 1,
                    pager: setup.pager,
                },
            )
            .map_err(err)?,
        ),
    })
}

impl SlicedQueue for CbtQueue {
    fn slice_count(&self) -> usize {
        self.slices()
    }

    fn slice_of(&self, e: &Entry) -> usize {
        CbtQueue::slice_of(self, e)
    }

    fn parallel_superstep(
        &mut self,
        per_slice_extract: usize,
        inserts: &[Entry],
        out: &mut Vec<Entry>,
    ) -> dragnet::error::Result<Vec<IoStats>> {
        self.superstep(per_slice_extract, inserts, out)
    }
}

/// Opens a new CBT of `setup.slices` slices for Table 1 in the empty directory `dir`: blocks of
/// R/T entries, the RAM budget split evenly between the slices (each has its own pager), every
/// SELECT run if `setup.paper_selects`.
pub fn open_sliced(dir: &Path, setup: &SliceSetup) -> Result<Box<dyn SlicedQueue>, String> {
    let t = setup.slices.max(1);
    let mut q = CbtQueue::open(
        dir,
        CbtOptions {
            block: setup.per_slice.max(1),
            slices: t,
            pager: PagerOptions {
                cache_pages: (setup.pager.cache_pages / t).max(1),
                ..setup.pager
            },
        },
    )
    .map_err(|e| format!("CBT: {e}"))?;
    q.set_paper_selects(setup.paper_selects);
    Ok(Box::new(q))
}
