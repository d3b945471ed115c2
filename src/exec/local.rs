//! `dragnet cycle`: the local executor (design: the cycle, executors).
//!
//! One cycle runs the five stages over every partition on this machine, in dependency order:
//!
//! 1. fetch -> parse -> split, per partition, `[cycle] fetch_partitions` partitions at a time
//!    (each fetch has its own `[fetch] threads` robots and politeness is per host, and a host
//!    lives in one partition, so partitions fetch side by side without sharing a host);
//! 2. merge of every partition (it needs every partition's split), on a rayon pool;
//! 3. prioritize of every partition, on the rayon pool, writing the next cycle's fetch lists;
//!    beside steps 2 and 3, once every partition has fetched, the cycle's CDXJ indexes are
//!    merged and the report's fetch results and page facts read (they need only the fetches,
//!    [`super::EarlyEnd`]).
//!
//! Every (stage, partition) whose `.done` marker exists is skipped, so a re-run after a crash or a
//! `kill -9` resumes where the work stopped and gives the same bytes (each stage's own commit
//! protocol makes a half-done stage invisible). A stage that fails for one partition leaves a
//! `.failed` marker with its error (`dragnet status` shows it) and stops only what depends on it:
//! the other partitions' fetch, parse and split go on; the merge waits for every split, so the
//! cycle ends there with exit code 4 ([`EXIT_CYCLE_INCOMPLETE`]), and the next `dragnet cycle`
//! retries what is missing.
//!
//! The crawl lock is held for the whole run: a second `dragnet cycle` on the same crawl fails at
//! once with "already running" (exit 5), and nothing it could touch is written. So does a
//! `dragnet cycle` on a crawl whose Slurm jobs are still queued ([`super::slurm`]).
//!
//! While it runs, [`CycleDisplay`] shows one live display for the whole cycle on a
//! terminal, or log lines otherwise.
//!
//! After each complete cycle, state versions older than the last `[cycle] keep_cycles` cycles
//! need are removed ([`crate::ops::prune`]), so the state directory holds a few copies of the
//! crawl's state, not one per cycle; so are the runs between the stages of older cycles.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::{after_cycle, fetch_list_size, CycleDisplay, EarlyEnd};
use crate::config::Config;
use crate::crawl::next_cycle;
use crate::crawl::{CrawlDir, CrawlLock, Stage};
use crate::error::{Result, EXIT_CYCLE_INCOMPLETE};
use crate::fetch::ipgate::IpGate;
use crate::fetch::window::CycleWindow;
use crate::fetch::{FetchOptions, ProgressMode};
use crate::ops::stage::run_stage;
use crate::util::plural;

/// How `dragnet cycle` runs.
#[derive(Debug, Clone)]
pub struct CycleOptions {
    /// Cycles to run (at least 1), unless `until_empty`.
    pub cycles: u32,
    /// Run until a cycle's fetch lists are empty (at most `max_cycles`).
    pub until_empty: bool,
    /// The bound on cycles for `until_empty`.
    pub max_cycles: u32,
    /// Progress display: one live display for the whole cycle (`Bar`, or `Auto` on a terminal),
    /// log lines (`Log`, or `Auto` otherwise: a line per stage and each fetch's periodic lines),
    /// or none.
    pub progress: ProgressMode,
    /// Print a log line per stage on stderr.
    pub log: bool,
}

impl Default for CycleOptions {
    fn default() -> Self {
        CycleOptions {
            cycles: 1,
            until_empty: false,
            max_cycles: 1000,
            progress: ProgressMode::Log,
            log: true,
        }
    }
}

/// A partition whose stage failed in a run.
#[derive(Debug, Clone, Serialize)]
pub struct FailedPartition {
    /// The partition.
    pub partition: u32,
    /// The error, with its causes.
    pub error: String,
    /// The exit code the error alone would give.
    pub exit_code: i32,
}

/// What one stage did over all partitions in one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageRun {
    /// Partitions the stage ran for now.
    pub ran: u32,
    /// Partitions already done before (skipped).
    pub skipped: u32,
    /// Partitions that failed, with the error and its exit code.
    pub failed: Vec<FailedPartition>,
    /// Seconds the stage took, summed over the partitions that ran (partitions run side by side,
    /// so the sum can exceed the wall-clock time; [`CycleRun::seconds`] is that).
    pub seconds: f64,
    /// Counts summed over the partitions that ran or were done.
    pub counts: BTreeMap<String, u64>,
}

/// Per-stage values keyed by [`Stage`]; serialized as a map keyed by the stage's name, in the
/// names' order (as a map keyed by the name string would be).
#[derive(Debug, Clone)]
pub struct ByStage<T>(BTreeMap<Stage, T>);

impl<T> Default for ByStage<T> {
    fn default() -> Self {
        ByStage(BTreeMap::new())
    }
}

impl<T> ByStage<T> {
    /// The value of `stage`.
    pub fn get(&self, stage: Stage) -> Option<&T> {
        self.0.get(&stage)
    }

    /// Sets the value of `stage`.
    pub fn insert(&mut self, stage: Stage, value: T) {
        self.0.insert(stage, value);
    }

    /// The stages with their values, in pipeline order.
    pub fn iter(&self) -> impl Iterator<Item = (Stage, &T)> {
        self.0.iter().map(|(&s, v)| (s, v))
    }

    /// The values, in pipeline order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.values()
    }
}

impl<T> std::ops::Index<Stage> for ByStage<T> {
    type Output = T;

    fn index(&self, stage: Stage) -> &T {
        &self.0[&stage]
    }
}

/// By the stage's name, as the JSON has it (`stages["fetch"]`); panics on a stage not there.
impl<T> std::ops::Index<&str> for ByStage<T> {
    type Output = T;

    fn index(&self, name: &str) -> &T {
        self.iter()
            .find(|(s, _)| s.name() == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no stage {name:?}"))
    }
}

impl<T: Serialize> Serialize for ByStage<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut by_name: Vec<(&str, &T)> = self.iter().map(|(k, v)| (k.name(), v)).collect();
        by_name.sort_unstable_by_key(|&(name, _)| name);
        s.collect_map(by_name)
    }
}

/// One cycle.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CycleRun {
    /// Cycle number.
    pub cycle: u32,
    /// Per stage.
    pub stages: ByStage<StageRun>,
    /// URLs in the next cycle's fetch lists (0 if the cycle did not finish).
    pub next_fetch_list: u64,
    /// Wall-clock seconds of the whole cycle.
    pub seconds: f64,
    /// Every partition finished every stage.
    pub complete: bool,
}

impl CycleRun {
    /// Whether a stage failed for a partition in this run (even one whose `.done` was committed
    /// before the error: the cycle may be complete and still have failed).
    pub fn failed(&self) -> bool {
        self.stages.values().any(|s| !s.failed.is_empty())
    }
}

/// The result of `dragnet cycle`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CycleReport {
    /// The cycles run, in order.
    pub cycles: Vec<CycleRun>,
    /// Why the run stopped.
    pub stopped: String,
}

impl CycleReport {
    /// Whether every cycle run completed, with no stage failed.
    pub fn complete(&self) -> bool {
        self.cycles.iter().all(|c| c.complete && !c.failed())
    }
}

/// Runs cycles as `opts` says, holding the crawl lock. The crawl's Slurm jobs are looked for
/// with the lock held, so a `dragnet slurm submit` (which holds it while it submits) is either
/// seen in the queue or refused.
pub fn run_cycles(crawl: &CrawlDir, cfg: &Config, opts: &CycleOptions) -> Result<CycleReport> {
    let lock = CrawlLock::acquire_with_lease(crawl.root(), "cycle", cfg.cycle.lock_lease())?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    crate::crawl::queued::check_no_jobs_queued(crawl, cfg)?;
    let display = CycleDisplay::new(opts.progress, opts.log);
    let r = run_cycles_shown(crawl, cfg, opts, &display);
    display.finish();
    r
}

fn run_cycles_shown(
    crawl: &CrawlDir,
    cfg: &Config,
    opts: &CycleOptions,
    display: &CycleDisplay,
) -> Result<CycleReport> {
    let m = cfg.crawl.partitions;
    let mut report = CycleReport::default();
    let limit = if opts.until_empty {
        opts.max_cycles
    } else {
        opts.cycles.max(1)
    };
    for _ in 0..limit {
        crate::interrupt::check()?;
        let cycle = next_cycle(crawl, m);
        let fetch_list = fetch_list_size(crawl, cycle, m)?;
        if opts.until_empty && fetch_list == 0 {
            report.stopped = format!(
                "the fetch lists of cycle {cycle} are empty{}",
                parked_note(crawl, cycle.checked_sub(1), m)
            );
            break;
        }
        let (run, early) = run_cycle(crawl, cfg, cycle, display)?;
        let complete = run.complete;
        let failed = run.failed();
        let next = run.next_fetch_list;
        report.cycles.push(run);
        after_cycle(crawl, cfg, cycle, complete, early, &|line| {
            display.log(line)
        });
        if !complete {
            report.stopped = format!("cycle {cycle} did not complete (see the failed partitions)");
            return Ok(report);
        }
        if failed {
            // Every stage committed, but one failed after its commit (a directory fsync after
            // its `.done`): said, and not gone past.
            report.stopped = format!(
                "cycle {cycle} completed, but a stage failed after committing (see the failed \
                 partitions)"
            );
            return Ok(report);
        }
        if opts.until_empty && next == 0 {
            report.stopped = format!(
                "the fetch lists of cycle {} are empty{}",
                cycle + 1,
                parked_note(crawl, Some(cycle), m)
            );
            return Ok(report);
        }
    }
    if report.stopped.is_empty() {
        report.stopped = if opts.until_empty {
            format!("reached --max-cycles {}", opts.max_cycles)
        } else {
            match report.cycles.len() {
                1 => "ran 1 cycle".to_owned(),
                n => format!("ran {n} cycles"),
            }
        };
    }
    Ok(report)
}

/// `; only parked hosts remain: ...` when the prioritize of `cycle` parked some, else nothing.
fn parked_note(crawl: &CrawlDir, cycle: Option<u32>, m: u32) -> String {
    match cycle.and_then(|c| crate::ops::Parked::of_cycle(crawl, c, m)) {
        Some(crate::ops::Parked {
            hosts,
            urls,
            first_cycle: first,
        }) => format!(
            "; only parked hosts remain: {} ({} held in the frontier), the first back in \
             cycle {first} (hosts that failed in run after run; each `dragnet cycle` counts \
             one cycle of their park)",
            plural(hosts, "host", "hosts"),
            plural(urls, "URL", "URLs"),
        ),
        None => String::new(),
    }
}

/// What every stage of one cycle shares: where, which cycle, the display, the per-IP limits.
struct CycleCtx<'a> {
    crawl: &'a CrawlDir,
    cycle: u32,
    display: &'a CycleDisplay,
    ip_gate: Arc<IpGate>,
    /// The cycle as a window (`crate::fetch::window`): fetches follow beyond their cap while
    /// another partition's list is unfinished.
    window: Arc<CycleWindow>,
}

/// Runs one stage for one partition ([`run_stage`]), shows it on the display and adds its
/// outcome to `acc`.
fn one(ctx: &CycleCtx<'_>, cfg: &Config, stage: Stage, p: u32, acc: &Mutex<StageRun>) -> bool {
    let CycleCtx {
        crawl,
        cycle,
        display,
        ..
    } = *ctx;
    let fetch = FetchOptions {
        progress: display.fetch_mode(),
        counters: (stage == Stage::Fetch).then(|| display.fetch_counters()),
        ip_gate: Some(Arc::clone(&ctx.ip_gate)),
        window: cfg.cycle.window.then(|| Arc::clone(&ctx.window)),
        ..FetchOptions::default()
    };
    display.started(stage);
    if stage == Stage::Fetch {
        ctx.window.start(p);
    }
    let r = run_stage(crawl, cfg, stage, cycle, p, &fetch);
    if stage == Stage::Fetch {
        // However it ended (done before, failed, stopped): its list holds no one back.
        ctx.window.list_done(p);
    }
    display.ended(stage, r.is_ok());
    let mut a = acc.lock().expect("not poisoned");
    match r {
        // A signal stopped it: not a failure of the partition (the cycle returns the stop).
        Err(crate::error::Error::Interrupted { .. }) => false,
        Ok(r) => {
            if r.skipped {
                a.skipped += 1;
            } else {
                a.ran += 1;
                a.seconds += r.seconds;
            }
            for (k, v) in r.counts {
                *a.counts.entry(k).or_insert(0) += v;
            }
            true
        }
        Err(e) => {
            a.failed.push(FailedPartition {
                partition: p,
                error: e.with_causes(": "),
                exit_code: e.exit_code(),
            });
            false
        }
    }
}

/// Each stage's outcome over the partitions, as they run.
type Acc = BTreeMap<Stage, Mutex<StageRun>>;

/// Runs one cycle over every partition, showing it on `display`; with it, what of the cycle's
/// end was done beside its merge and prioritize.
fn run_cycle(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    display: &CycleDisplay,
) -> Result<(CycleRun, EarlyEnd)> {
    let m = cfg.crawl.partitions;
    let started = Instant::now();
    let urls = fetch_list_size(crawl, cycle, m)?;
    display.begin_cycle(cycle, m, urls);
    display.log(&format!(
        "cycle {cycle}: {} to fetch in {}",
        plural(urls, "URL", "URLs"),
        plural(m.into(), "partition", "partitions")
    ));
    let acc: Acc = Stage::CYCLE
        .iter()
        .map(|&s| (s, Mutex::new(StageRun::default())))
        .collect();
    let ctx = CycleCtx {
        crawl,
        cycle,
        display,
        ip_gate: IpGate::new(
            cfg.fetch.per_ip_connections,
            crate::fetch::stage::with_margin(std::time::Duration::from_secs_f64(
                cfg.fetch.per_ip_delay_secs,
            )),
        ),
        window: Arc::new(CycleWindow::new(m)),
    };
    fetch_parse_split(&ctx, cfg, &acc);
    let failed = |s: Stage| !acc[&s].lock().expect("not poisoned").failed.is_empty();
    let before_merge_failed = [Stage::Fetch, Stage::Parse, Stage::Split]
        .into_iter()
        .any(failed);
    log_stage(display, cycle, Stage::Fetch, &acc);
    log_stage(display, cycle, Stage::Parse, &acc);
    log_stage(display, cycle, Stage::Split, &acc);

    // A signal: the partitions stopped where they were, nothing more is started.
    crate::interrupt::check()?;
    let fetched = !before_merge_failed && crawl.done_everywhere(cycle, Stage::Fetch, m);
    // The cycle's CDXJ indexes and the report's bulk (fetch results, page facts) are made from
    // its fetches alone and touch none of the files the merge and prioritize do: made beside
    // them, the end of the cycle does not wait for them in turn (the merge's commits wait on
    // the disk, which leaves a core to them).
    let early = std::thread::scope(|s| {
        let indexes = fetched
            .then(|| s.spawn(|| super::end_indexes(crawl, cfg, cycle, &|line| display.log(line))));
        let fetches = (fetched && cfg.cycle.report)
            .then(|| s.spawn(|| crate::ops::report::Fetches::read_now(crawl, cfg)));
        let merged = match before_merge_failed {
            false => merge_prioritize(&ctx, cfg, &acc),
            true => Ok(()),
        };
        let early = EarlyEnd {
            indexed: indexes.is_some_and(|h| h.join().is_ok()),
            fetches: fetches.and_then(|h| h.join().ok()),
        };
        merged.map(|()| early)
    })?;

    let mut run = CycleRun {
        cycle,
        ..CycleRun::default()
    };
    run.complete = crawl.done_everywhere(cycle, Stage::Prioritize, m);
    if run.complete {
        run.next_fetch_list = fetch_list_size(crawl, cycle + 1, m)?;
    }
    for (stage, a) in acc {
        run.stages
            .insert(stage, a.into_inner().expect("not poisoned"));
    }
    run.seconds = started.elapsed().as_secs_f64();
    display.log(&format!(
        "cycle {cycle}: {} in {:.1}s; {} in the fetch lists of cycle {}",
        if run.complete {
            "complete"
        } else {
            "INCOMPLETE"
        },
        run.seconds,
        plural(run.next_fetch_list, "URL", "URLs"),
        cycle + 1
    ));
    Ok((run, early))
}

/// Step 1 of a cycle: fetch -> parse -> split per partition, `[cycle] fetch_partitions`
/// partitions at a time, sharing the per-IP limits (hosts of one address in different
/// partitions are one server), the longest first ([`fetch_order`]). A partition's stage runs
/// only if the one before it succeeded.
fn fetch_parse_split(ctx: &CycleCtx<'_>, cfg: &Config, acc: &Acc) {
    let m = cfg.crawl.partitions;
    let workers = (cfg.cycle.fetch_partitions as usize).clamp(1, m as usize);
    let task_cfg = cfg.share(workers);
    let order = fetch_order(ctx.crawl, ctx.cycle, m);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= order.len() || crate::interrupt::requested().is_some() {
                    return;
                }
                let p = order[i];
                // Each stage only if the one before it succeeded for this partition.
                let _ = [Stage::Fetch, Stage::Parse, Stage::Split]
                    .into_iter()
                    .all(|st| one(ctx, &task_cfg, st, p, &acc[&st]));
            });
        }
    });
}

/// The partitions of `cycle` in the order their fetches start: the longest first, as a
/// scheduler of jobs on a few machines does (longest processing time first), so the cycle does
/// not end with one long fetch on one core after the others are done. A fetch's length is
/// guessed from what the cycle before's prioritize knew: its politeness bound (the slowest
/// host's delays times its URLs), then the URLs of its list (cycle 0's lists, which `init`
/// wrote, have no bound: their seeds, one a host). Ties keep partition order.
pub(crate) fn fetch_order(crawl: &CrawlDir, cycle: u32, m: u32) -> Vec<u32> {
    let bound = |p| crate::fetch::window::politeness_bound(crawl, cycle, p);
    let listed =
        |p: u32| crate::run::RunReader::open(&crawl.fetchlist(cycle, p)).map_or(0, |r| r.len());
    let mut order: Vec<(std::cmp::Reverse<(u64, u64)>, u32)> = (0..m)
        .map(|p| (std::cmp::Reverse((bound(p).unwrap_or(0), listed(p))), p))
        .collect();
    order.sort();
    order.into_iter().map(|(_, p)| p).collect()
}

/// Steps 2 and 3: merge, then prioritize, every partition on the rayon pool; prioritize only
/// if every merge succeeded.
fn merge_prioritize(ctx: &CycleCtx<'_>, cfg: &Config, acc: &Acc) -> Result<()> {
    let m = cfg.crawl.partitions;
    let task_cfg = cfg.share(rayon::current_num_threads().min(m as usize));
    for stage in [Stage::Merge, Stage::Prioritize] {
        rayon_each(m, |p| {
            if crate::interrupt::requested().is_none() {
                one(ctx, &task_cfg, stage, p, &acc[&stage]);
            }
        });
        crate::interrupt::check()?;
        log_stage(ctx.display, ctx.cycle, stage, acc);
        if !acc[&stage].lock().expect("not poisoned").failed.is_empty() {
            break;
        }
    }
    Ok(())
}

fn rayon_each(m: u32, f: impl Fn(u32) + Sync + Send) {
    use rayon::prelude::*;
    (0..m).into_par_iter().for_each(f);
}

fn log_stage(display: &CycleDisplay, cycle: u32, stage: Stage, acc: &Acc) {
    let a = acc[&stage].lock().expect("not poisoned");
    // Parses committed by their fetch (`[fetch] parse`) are found done, and say so.
    let by_fetch = match a.counts.get(crate::crawl::report::counter::INLINE) {
        Some(&n) if n > 0 => format!(" ({n} parsed by their fetch as pages arrived)"),
        _ => String::new(),
    };
    let mut line = format!(
        "cycle {cycle}: {}: {} run, {} already done{by_fetch}, {:.1}s summed over partitions",
        stage.name(),
        plural(a.ran.into(), "partition", "partitions"),
        a.skipped,
        a.seconds
    );
    for f in &a.failed {
        line.push_str(&format!(
            "\n  FAILED partition {}: {}",
            f.partition, f.error
        ));
    }
    display.log(&line);
}

/// The first failure of a report with a failed partition: a message pointing to `dragnet status`,
/// and the exit code of a cycle that finished with failed partitions,
/// [`EXIT_CYCLE_INCOMPLETE`] (whatever the failed stage's error was: its `.failed` marker
/// keeps that error and its own code). A cycle complete by its markers whose stage still
/// failed (after its commit) counts: a failed partition never exits 0.
pub fn failure(crawl: &CrawlDir, report: &CycleReport) -> Option<(String, i32)> {
    let c = report.cycles.iter().find(|c| !c.complete || c.failed())?;
    let what = c
        .stages
        .iter()
        .find_map(|(s, r)| {
            r.failed
                .first()
                .map(|f| format!("{s} of partition {} failed: {}", f.partition, f.error))
        })
        .unwrap_or_else(|| "not every partition finished its stages".to_owned());
    Some((
        format!(
            "cycle {} stopped: {what}; the other partitions' work is kept; `dragnet status {}` \
             lists every failure, and `dragnet cycle` again retries what is missing",
            c.cycle,
            crawl.root().display()
        ),
        EXIT_CYCLE_INCOMPLETE,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fetches start longest first: the cycle before's politeness bound, then the list's URLs,
    /// then partition order.
    #[test]
    fn fetches_start_longest_first() {
        use crate::crawl::DoneMarker;
        use crate::run::{RunWriter, Schema};
        let dir = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(dir.path());
        let list = |cycle: u32, p: u32, n: u64| {
            let path = crawl.fetchlist(cycle, p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let mut w = RunWriter::create(&path, Schema::FETCHLIST).unwrap();
            for i in 0..n {
                let mut key = [0u8; 16];
                key[8..].copy_from_slice(&i.to_be_bytes());
                w.push(&key, b"").unwrap();
            }
            w.finish().unwrap();
        };
        // Cycle 0: the lists alone (partition 3 has none).
        for (p, n) in [(0, 2), (1, 5), (2, 2)] {
            list(0, p, n);
        }
        assert_eq!(fetch_order(&crawl, 0, 4), [1, 0, 2, 3]);
        // Cycle 1: the politeness bounds prioritize gave first, then the lists.
        for (p, n, bound) in [(0, 9, 0), (1, 1, 500), (2, 3, 0), (3, 1, 2000)] {
            list(1, p, n);
            let mut m = DoneMarker::new(Stage::Prioritize, 0, p, std::time::SystemTime::now());
            m.counts.insert(
                crate::crawl::report::counter::POLITENESS_BOUND.into(),
                bound,
            );
            let path = crawl.done_path(0, Stage::Prioritize, p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            m.commit(&path, std::time::SystemTime::now()).unwrap();
        }
        assert_eq!(fetch_order(&crawl, 1, 4), [3, 1, 0, 2]);
    }

    #[test]
    fn stages_serialize_by_name_in_name_order() {
        let mut stages = ByStage::default();
        for (i, s) in Stage::CYCLE.into_iter().enumerate() {
            stages.insert(s, i);
        }
        assert_eq!(
            serde_json::to_string(&stages).unwrap(),
            r#"{"fetch":0,"merge":3,"parse":1,"prioritize":4,"split":2}"#
        );
        assert_eq!(stages["merge"], 3);
        assert_eq!(stages[Stage::Split], 2);
        assert_eq!(stages.get(Stage::Init), None);
    }
}
