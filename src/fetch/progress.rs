//! Progress of a fetch: an indicatif bar when stderr is a terminal, plain periodic log lines
//! otherwise (cron, Slurm, CI logs), nothing when asked to be quiet (docs/design.md §9).
//!
//! The workers only bump atomic counters ([`Counters`]); a reporter thread samples them, so a
//! worker never waits on a terminal or a log file.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a stage shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressMode {
    /// A bar if stderr is a terminal, log lines otherwise.
    #[default]
    Auto,
    /// Always a bar (indicatif hides it when stderr is not a terminal).
    Bar,
    /// Log lines every `interval`.
    Log,
    /// Nothing (tests, library callers).
    Quiet,
}

/// Counters the workers bump and the reporter reads.
#[derive(Debug, Default)]
pub struct Counters {
    /// URLs of the fetch list given a result (fetched, failed, refused or deferred).
    pub done: AtomicU64,
    /// HTTP requests made (pages and robots.txt).
    pub requests: AtomicU64,
    /// Body bytes received.
    pub bytes: AtomicU64,
    /// Requests that got no usable answer.
    pub errors: AtomicU64,
    /// Hosts with a back queue, and hosts waiting for one (set by the workers under the
    /// scheduler's lock).
    pub hosts_active: AtomicU64,
    /// See `hosts_active`.
    pub hosts_waiting: AtomicU64,
}

/// A sampling thread and the bar it draws, stopped together (a fetch's [`Reporter`] and the
/// cycle's display are both one).
pub(crate) struct Ticker {
    /// Set to stop the thread.
    pub(crate) stop: Arc<AtomicBool>,
    /// The thread, until joined.
    pub(crate) thread: Option<JoinHandle<()>>,
    /// The bar, if one is drawn.
    pub(crate) bar: Option<indicatif::ProgressBar>,
}

impl Ticker {
    /// Stops and joins the thread (waking it: it waits with `park_timeout`, so a stage's end is
    /// not held up to a tick, 200 ms per fetch of a partition with nothing to do), and clears
    /// the bar.
    pub(crate) fn finish(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// A running reporter; [`Reporter::finish`] stops it.
pub struct Reporter(Ticker);

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

impl Reporter {
    /// Starts reporting on `counters` for a stage named `label` with `total` URLs.
    pub fn start(
        mode: ProgressMode,
        label: String,
        total: u64,
        counters: Arc<Counters>,
        interval: Duration,
    ) -> Reporter {
        let bar_wanted = match mode {
            ProgressMode::Auto => std::io::stderr().is_terminal(),
            ProgressMode::Bar => true,
            ProgressMode::Log | ProgressMode::Quiet => false,
        };
        let stop = Arc::new(AtomicBool::new(false));
        if mode == ProgressMode::Quiet {
            return Reporter(Ticker {
                stop,
                thread: None,
                bar: None,
            });
        }
        let bar = bar_wanted.then(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg} ETA {eta}",
                )
                .expect("valid template"),
            );
            bar.set_prefix(label.clone());
            bar
        });
        let thread = {
            let stop = Arc::clone(&stop);
            let bar = bar.clone();
            // Wake often enough to stop promptly; draw a bar every tick, a log line every interval.
            let tick = if bar.is_some() {
                Duration::from_millis(200)
            } else {
                interval.min(Duration::from_millis(200))
            };
            let last = Mutex::new(Instant::now());
            std::thread::Builder::new()
                .name("fetch-progress".into())
                .spawn(move || {
                    let start = Instant::now();
                    while !stop.load(Relaxed) {
                        std::thread::park_timeout(tick);
                        let c = &counters;
                        let secs = start.elapsed().as_secs_f64();
                        let done = c.done.load(Relaxed);
                        let line = format!(
                            "{:.0} pages/s, {:.1} MiB, {} errors, hosts {} active / {} waiting",
                            rate(c.requests.load(Relaxed), secs),
                            mib(c.bytes.load(Relaxed)),
                            c.errors.load(Relaxed),
                            c.hosts_active.load(Relaxed),
                            c.hosts_waiting.load(Relaxed),
                        );
                        match &bar {
                            Some(b) => {
                                b.set_position(done);
                                b.set_message(line);
                            }
                            None => {
                                let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
                                if l.elapsed() >= interval {
                                    *l = Instant::now();
                                    eprintln!("{label}: {done}/{total} URLs, {line}");
                                }
                            }
                        }
                    }
                })
                .ok()
        };
        Reporter(Ticker { stop, thread, bar })
    }

    /// Stops the reporter and clears the bar.
    pub fn finish(mut self) {
        self.0.finish();
    }
}
