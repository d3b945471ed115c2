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
//! The window is open while some partition of the cycle still has its *own work* to do (URLs of
//! its fetch list, and URLs followed within `follow_per_host`, without a result), and no
//! partition waits for a fetch worker to start it (extending then would keep the waiting one
//! from starting). When it closes, the URLs followed beyond the cap and not
//! yet fetched are recorded `deferred`: the merge puts them in the frontier like any new URL, so
//! nothing is lost and nothing waits for them.
//!
//! `dragnet cycle` shares one window between the fetches of a cycle; a fetch run alone (`dragnet
//! fetch`, a Slurm task) has none and keeps to `follow_per_host`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};

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
    fn a_partition_done_before_it_started_counts_as_started() {
        let w = CycleWindow::new(2);
        w.start(0);
        w.list_done(1); // found committed already: never "started" a fetch
        assert!(w.open(), "partition 0's list is unfinished");
        w.list_done(0);
        assert!(!w.open());
    }
}
