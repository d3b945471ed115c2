//! The cycle as a window in which no partition idles (docs/design.md §1, freedom (d)).
//!
//! A cycle lasts as long as its slowest partition: one host with a crawl-delay of a second and a
//! few hundred listed URLs holds every partition of the cycle for minutes, while a partition of
//! fast hosts finished its list in seconds. The merge must wait for the slow one anyway, so the
//! fast ones may go on fetching until it ends: a partition whose hosts have links to follow
//! beyond `[fetch] follow_per_host` follows them while the window is open, within every other
//! limit (`[scope] max_new_urls_per_host`, the lifetime budget `max_urls_per_host_total`,
//! robots.txt, the host's delay and the per-IP limits).
//!
//! It also fetches its *reserve*: prioritize lists up to `[prioritize] reserve_factor` x
//! `fetch_budget` URLs of the frontier beyond the budget (the next in priority, within
//! `max_urls_per_host`), flagged `reserve`. A host with listed URLs has its reserve behind them
//! in its queue; hosts with reserve URLs only enter rotation once the partition's own work is
//! done (the feeder's second pass). A reserve URL taken while the window is open is fetched like
//! any other and charged to its host's lifetime budget then; once the window has closed the rest
//! are recorded `deferred`, and the merge puts them back in the frontier unchanged. The
//! politeness bound below counts listed URLs only.
//!
//! The window is open while some partition of the cycle still has its *own work* to do (URLs of
//! its fetch list, and URLs followed within `follow_per_host`, without a result), and no
//! partition waits for a fetch worker to start it (extending then would keep the waiting one
//! from starting). When it closes, the URLs followed beyond the cap and not
//! yet fetched are recorded `deferred`: the merge puts them in the frontier like any new URL, so
//! nothing is lost and nothing waits for them.
//!
//! `dragnet cycle` shares one [`CycleWindow`] between the fetches of a cycle. A fetch run alone
//! (`dragnet fetch`, a Slurm task) cannot see the others' progress; its window comes from the
//! fetch lists alone ([`Window::Until`]): each prioritize writes its list's *politeness bound*
//! (`politeness_bound_ms` in its marker: per host, the URLs listed times the host's delay, the
//! largest over the hosts), and the fetch keeps the window open until the largest bound of the
//! cycle's partitions has passed since it started. That is a lower bound on how long the slowest
//! partition takes, so the window never makes the cycle longer.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The window a fetch works in.
#[derive(Debug, Clone)]
pub enum Window {
    /// Shared by the fetches of a local cycle, which tell it when their own work is done.
    Cycle(Arc<CycleWindow>),
    /// Until a time known from the fetch lists (a fetch run alone).
    Until(Instant),
}

impl Window {
    /// Whether a partition may work beyond its caps now.
    pub fn open(&self) -> bool {
        match self {
            Window::Cycle(w) => w.open(),
            Window::Until(t) => Instant::now() < *t,
        }
    }

    /// Partition `p`'s own work is done (heard by a shared window only).
    pub fn list_done(&self, p: u32) {
        if let Window::Cycle(w) = self {
            w.list_done(p);
        }
    }

    /// The window of a fetch of `cycle` run alone, started at `t0`: until the largest
    /// `politeness_bound_ms` the prioritize markers of the cycle before give has passed; `None`
    /// without one (cycle 0, whose lists `init` wrote, or lists with no delay to wait for).
    pub fn from_lists(
        crawl: &crate::crawl::CrawlDir,
        cycle: u32,
        m: u32,
        t0: Instant,
    ) -> Option<Window> {
        let bound = (0..m)
            .filter_map(|p| politeness_bound(crawl, cycle, p))
            .max()
            .filter(|&ms| ms > 0)?;
        Some(Window::Until(t0 + Duration::from_millis(bound)))
    }
}

/// The politeness bound of partition `p`'s fetch list of `cycle`, milliseconds: what the
/// prioritize of the cycle before wrote it made (`politeness_bound_ms` in its marker); `None`
/// for cycle 0 (whose lists `init` wrote) or without the marker.
pub fn politeness_bound(crawl: &crate::crawl::CrawlDir, cycle: u32, p: u32) -> Option<u64> {
    let before = cycle.checked_sub(1)?;
    let path = crawl.done_path(before, crate::crawl::Stage::Prioritize, p);
    let marker = crate::crawl::DoneMarker::read(&path).ok().flatten()?;
    marker
        .counts
        .get(crate::crawl::report::counter::POLITENESS_BOUND)
        .copied()
}

/// See the module docs.
#[derive(Debug)]
pub struct CycleWindow {
    /// Partitions whose own work (fetch list, following within the cap) is unfinished, started
    /// or not.
    busy: AtomicU32,
    /// Partitions whose fetch has not started.
    unstarted: AtomicU32,
    /// Per partition: its fetch started / its list is done (each counted once).
    started: Vec<AtomicBool>,
    listed: Vec<AtomicBool>,
}

impl CycleWindow {
    /// A window over the `m` partitions of a cycle, none started.
    pub fn new(m: u32) -> CycleWindow {
        CycleWindow {
            busy: AtomicU32::new(m),
            unstarted: AtomicU32::new(m),
            started: (0..m).map(|_| AtomicBool::new(false)).collect(),
            listed: (0..m).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Partition `p`'s fetch starts (or is found done already).
    pub fn start(&self, p: u32) {
        if let Some(s) = self.started.get(p as usize) {
            if !s.swap(true, SeqCst) {
                self.unstarted.fetch_sub(1, SeqCst);
            }
        }
    }

    /// Partition `p`'s own work is done: every URL of its fetch list and every URL it followed
    /// within the cap has a result (or its fetch ended, whichever way).
    pub fn list_done(&self, p: u32) {
        self.start(p);
        if let Some(l) = self.listed.get(p as usize) {
            if !l.swap(true, SeqCst) {
                self.busy.fetch_sub(1, SeqCst);
            }
        }
    }

    /// Whether a partition may work beyond its caps now.
    pub fn open(&self) -> bool {
        self.unstarted.load(SeqCst) == 0 && self.busy.load(SeqCst) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_while_a_list_is_unfinished_and_every_partition_has_started() {
        let w = CycleWindow::new(3);
        assert!(!w.open(), "partitions wait to start");
        w.start(0);
        w.start(1);
        assert!(!w.open(), "partition 2 waits to start");
        w.start(2);
        assert!(w.open());
        w.list_done(0);
        w.list_done(0); // counted once
        w.list_done(1);
        assert!(w.open(), "partition 2's list is not done");
        w.list_done(2);
        assert!(!w.open());
        // A partition number out of range (a crawl repartitioned under a running cycle) is
        // ignored rather than panicking.
        w.list_done(9);
        assert!(!w.open());
    }

    #[test]
    fn a_window_until_a_time_is_open_before_it() {
        let w = Window::Until(Instant::now() + Duration::from_secs(3600));
        assert!(w.open());
        w.list_done(0); // nothing to hear
        assert!(w.open());
        assert!(!Window::Until(Instant::now()).open());
    }

    #[test]
    fn a_partition_done_before_it_started_counts_as_started() {
        let w = CycleWindow::new(2);
        w.start(0);
        w.list_done(1); // found committed already: never "started" a fetch
        assert!(w.open(), "partition 0's list is unfinished");
        w.list_done(0);
        assert!(!w.open());
    }
}
