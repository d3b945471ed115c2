//! What `dragnet cycle` shows while it runs: one live display for the whole cycle on a terminal
//! (cycle, stage, partitions done/running/failed, pages fetched, rate, ETA), drawn with
//! indicatif, or plain log lines otherwise (cron, Slurm, CI logs), or nothing.
//!
//! The stages only bump atomic counters: each fetch gets a [`Counters`] of its own that the
//! display sums, and [`CycleDisplay::started`] / [`CycleDisplay::ended`] count partitions per
//! stage. A ticker thread samples them, so no stage waits on a terminal. Log lines written while
//! the display is up go above it ([`CycleDisplay::log`]), never through it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::crawl::Stage;
use crate::fetch::progress::{Counters, Ticker};
use crate::fetch::ProgressMode;

/// Partitions of one stage: done (ran or were already done), running, failed.
#[derive(Debug, Default)]
struct StageCount {
    done: AtomicU32,
    running: AtomicU32,
    failed: AtomicU32,
}

/// The counts of the cycle being run, shared by the stages and the ticker.
#[derive(Debug, Default)]
struct Live {
    cycle: AtomicU32,
    partitions: AtomicU32,
    /// URLs in the cycle's fetch lists.
    urls: AtomicU64,
    /// Per stage of [`Stage::CYCLE`].
    stages: [StageCount; 5],
    /// The counters of every fetch of the cycle so far.
    fetches: Mutex<Vec<Arc<Counters>>>,
    /// When the cycle started.
    started: Mutex<Option<Instant>>,
}

fn index(stage: Stage) -> usize {
    Stage::CYCLE
        .iter()
        .position(|&s| s == stage)
        .expect("a stage of a cycle")
}

impl Live {
    /// URLs given a result and requests made, over every fetch of the cycle.
    fn fetched(&self) -> (u64, u64) {
        let f = self.fetches.lock().unwrap_or_else(|e| e.into_inner());
        f.iter().fold((0, 0), |(d, r), c| {
            (d + c.done.load(Relaxed), r + c.requests.load(Relaxed))
        })
    }

    /// The display's message: stages, pages, rate and ETA.
    fn message(&self, secs: f64) -> String {
        let m = self.partitions.load(Relaxed);
        let mut stages = Vec::new();
        let mut failed = 0;
        for (i, stage) in Stage::CYCLE.iter().enumerate() {
            let c = &self.stages[i];
            let (done, running) = (c.done.load(Relaxed), c.running.load(Relaxed));
            failed += c.failed.load(Relaxed);
            if done == 0 && running == 0 {
                continue;
            }
            let mut s = format!("{} {done}/{m}", stage.name());
            if running > 0 {
                s.push_str(&format!(" ({running} running)"));
            }
            stages.push(s);
        }
        let (done, _) = self.fetched();
        let total = self.urls.load(Relaxed);
        let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
        let eta = if done >= total {
            String::new()
        } else if rate > 0.0 {
            format!(", fetch ETA {}", clock((total - done) as f64 / rate))
        } else {
            ", fetch ETA -".to_owned()
        };
        format!(
            "{}; {failed} failed | {done}/{total} URLs, {rate:.0}/s{eta}",
            if stages.is_empty() {
                "starting".to_owned()
            } else {
                stages.join(", ")
            }
        )
    }
}

/// `h:mm:ss` or `m:ss`.
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match s / 3600 {
        0 => format!("{}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", (s / 60) % 60, s % 60),
    }
}

/// How the display shows itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One live display (indicatif) for the whole cycle.
    Bar,
    /// Log lines: a line per stage, and each fetch's own periodic lines.
    Log,
    /// No progress (the stage lines only if `log` is set).
    Quiet,
}

/// The progress of `dragnet cycle`; see the module docs.
pub struct CycleDisplay {
    kind: Kind,
    log: bool,
    live: Arc<Live>,
    ticker: Ticker,
}

impl CycleDisplay {
    /// A display as `mode` says (`Auto`: the live display on a terminal, log lines otherwise);
    /// `log` prints the stages' summary lines.
    pub fn new(mode: ProgressMode, log: bool) -> CycleDisplay {
        let kind = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => Kind::Bar,
            ProgressMode::Auto | ProgressMode::Log => Kind::Log,
            ProgressMode::Bar => Kind::Bar,
            ProgressMode::Quiet => Kind::Quiet,
        };
        let live = Arc::new(Live::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (bar, thread) = if kind == Kind::Bar {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {bar:24} {msg}",
                )
                .expect("valid template"),
            );
            let thread = {
                let (bar, live, stop) = (bar.clone(), Arc::clone(&live), Arc::clone(&stop));
                std::thread::Builder::new()
                    .name("cycle-progress".into())
                    .spawn(move || {
                        while !stop.load(Relaxed) {
                            std::thread::park_timeout(Duration::from_millis(200));
                            let started = *live.started.lock().unwrap_or_else(|e| e.into_inner());
                            let Some(started) = started else { continue };
                            let secs = started.elapsed().as_secs_f64();
                            bar.set_length(live.urls.load(Relaxed));
                            bar.set_position(live.fetched().0);
                            bar.set_message(live.message(secs));
                        }
                    })
                    .ok()
            };
            (Some(bar), thread)
        } else {
            (None, None)
        };
        CycleDisplay {
            kind,
            log,
            live,
            ticker: Ticker { stop, thread, bar },
        }
    }

    /// The progress mode of each fetch: quiet under the live display (it shows their counters),
    /// log lines when logging.
    pub fn fetch_mode(&self) -> ProgressMode {
        match self.kind {
            Kind::Log => ProgressMode::Log,
            Kind::Bar | Kind::Quiet => ProgressMode::Quiet,
        }
    }

    /// Starts showing `cycle`: `partitions` partitions, `urls` URLs to fetch.
    pub fn begin_cycle(&self, cycle: u32, partitions: u32, urls: u64) {
        let l = &self.live;
        l.cycle.store(cycle, Relaxed);
        l.partitions.store(partitions, Relaxed);
        l.urls.store(urls, Relaxed);
        for s in &l.stages {
            s.done.store(0, Relaxed);
            s.running.store(0, Relaxed);
            s.failed.store(0, Relaxed);
        }
        l.fetches.lock().unwrap_or_else(|e| e.into_inner()).clear();
        *l.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        if let Some(b) = &self.ticker.bar {
            b.set_prefix(format!("cycle {cycle}"));
            b.reset_elapsed();
            b.set_length(urls);
            b.set_position(0);
            b.set_message(l.message(0.0));
        }
    }

    /// Counters for a fetch about to start; the display sums them.
    pub fn fetch_counters(&self) -> Arc<Counters> {
        let c = Arc::new(Counters::default());
        self.live
            .fetches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::clone(&c));
        c
    }

    /// A partition's `stage` starts.
    pub fn started(&self, stage: Stage) {
        self.live.stages[index(stage)].running.fetch_add(1, Relaxed);
    }

    /// A partition's `stage` ended, successfully or not.
    pub fn ended(&self, stage: Stage, ok: bool) {
        let c = &self.live.stages[index(stage)];
        c.running.fetch_sub(1, Relaxed);
        if ok {
            c.done.fetch_add(1, Relaxed);
        } else {
            c.failed.fetch_add(1, Relaxed);
        }
    }

    /// Prints a line of the cycle's log (if logging is on), above the live display if it is up.
    pub fn log(&self, line: &str) {
        if !self.log {
            return;
        }
        match &self.ticker.bar {
            Some(b) => b.suspend(|| eprintln!("cycle: {line}")),
            None => eprintln!("cycle: {line}"),
        }
    }

    /// Stops the ticker and clears the live display.
    pub fn finish(mut self) {
        self.ticker.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_counts_stages_and_fetches() {
        let d = CycleDisplay::new(ProgressMode::Quiet, false);
        d.begin_cycle(3, 4, 100);
        let c = d.fetch_counters();
        c.done.store(40, Relaxed);
        d.started(Stage::Fetch);
        d.started(Stage::Fetch);
        d.ended(Stage::Fetch, true);
        d.started(Stage::Parse);
        d.ended(Stage::Parse, false);
        let m = d.live.message(10.0);
        assert_eq!(
            m,
            "fetch 1/4 (1 running); 1 failed | 40/100 URLs, 4/s, fetch ETA 0:15"
        );
        c.done.store(100, Relaxed);
        assert!(d.live.message(10.0).ends_with("100/100 URLs, 10/s"));
        d.finish();
    }

    #[test]
    fn clock_formats() {
        assert_eq!(clock(5.0), "0:05");
        assert_eq!(clock(125.0), "2:05");
        assert_eq!(clock(3725.0), "1:02:05");
    }
}
