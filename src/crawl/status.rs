//! `dragnet status`: what a crawl directory holds.
//!
//! Everything here is read from the directory (markers, run-file trailers, the lock), never from a
//! running process, so status works the same from cron, from another node of the cluster, or after
//! a crash. Reading a run file's size costs one trailer read, so status stays fast at any crawl
//! size.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::config::Config;
use super::done::DoneMarker;
use super::layout::{CrawlDir, Stage};
use super::lock::{read_lock, Holder, LockInfo};
use crate::error::{Error, Result};
use crate::run::RunReader;

/// The state of one stage of one cycle over all partitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageStatus {
    /// The stage.
    pub stage: Stage,
    /// Partitions with a valid `.done` marker.
    pub done: u32,
    /// Partitions without one.
    pub pending: u32,
    /// Partitions whose marker is damaged (the stage must be re-run for them).
    pub damaged: Vec<String>,
    /// Sum of the stage's wall-clock seconds over its done partitions.
    pub seconds: f64,
    /// Sum of each counter over the done partitions.
    pub counts: std::collections::BTreeMap<String, u64>,
}

/// One cycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleStatus {
    /// Cycle number.
    pub cycle: u32,
    /// URLs in this cycle's fetch lists (0 if none yet).
    pub fetchlist_urls: u64,
    /// Stages that have at least one marker or are expected next.
    pub stages: Vec<StageStatus>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// Crawl directory.
    pub dir: PathBuf,
    /// `crawl.name`.
    pub name: String,
    /// Partitions M.
    pub partitions: u32,
    /// The lock, if held, and whether its holder runs.
    pub lock: Option<(LockInfo, Holder)>,
    /// URLs ever discovered (sum of the newest seen sets).
    pub seen: u64,
    /// Records in the newest URL dbs.
    pub urldb: u64,
    /// Cycles with a directory.
    pub cycles: Vec<CycleStatus>,
}

/// Reads the status of the crawl at `dir`.
pub fn status(dir: &Path) -> Result<Status> {
    let crawl = CrawlDir::new(dir);
    let config_path = crawl.config_path();
    if !config_path.exists() {
        return Err(Error::Usage(format!(
            "{} is not a crawl directory (no crawl.toml); create one with `dragnet init --seeds FILE {}`",
            dir.display(),
            dir.display()
        )));
    }
    let config = Config::load(&config_path)?;
    let m = config.crawl.partitions;
    let lock = read_lock(dir)?.map(|l| {
        let h = l.holder();
        (l, h)
    });
    let mut seen = 0;
    let mut urldb = 0;
    for p in 0..m {
        for (kind, total) in [("seen", &mut seen), ("urldb", &mut urldb)] {
            if let Some((_, path)) = crawl.latest_state(p, kind, u32::MAX) {
                *total += RunReader::open(&path)?.len();
            }
        }
    }
    let mut cycles = Vec::new();
    for c in crawl.cycles() {
        let mut fetchlist_urls = 0;
        for p in 0..m {
            let path = crawl.fetchlist(c, p);
            if path.exists() {
                fetchlist_urls += RunReader::open(&path)?.len();
            }
        }
        let mut stages = Vec::new();
        let all = std::iter::once(Stage::Init).chain(Stage::CYCLE);
        for stage in all {
            if !crawl.stage_dir(c, stage).is_dir() {
                continue;
            }
            let mut s = StageStatus {
                stage,
                done: 0,
                pending: 0,
                damaged: Vec::new(),
                seconds: 0.0,
                counts: Default::default(),
            };
            for p in 0..m {
                match DoneMarker::read(&crawl.done_path(c, stage, p)) {
                    Ok(Some(mk)) => {
                        s.done += 1;
                        s.seconds += mk.seconds;
                        for (k, v) in mk.counts {
                            *s.counts.entry(k).or_default() += v;
                        }
                    }
                    Ok(None) => s.pending += 1,
                    Err(e) => {
                        s.pending += 1;
                        s.damaged.push(e.to_string());
                    }
                }
            }
            stages.push(s);
        }
        cycles.push(CycleStatus {
            cycle: c,
            fetchlist_urls,
            stages,
        });
    }
    Ok(Status {
        dir: dir.to_path_buf(),
        name: config.crawl.name,
        partitions: m,
        lock,
        seen,
        urldb,
        cycles,
    })
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "crawl     {} ({})", self.name, self.dir.display())?;
        writeln!(f, "partitions {}", self.partitions)?;
        match &self.lock {
            None => writeln!(f, "lock      free")?,
            Some((l, h)) => {
                let state = match h {
                    Holder::Alive => "running",
                    Holder::Gone => "STALE: holder is gone, clear with `dragnet unlock DIR`",
                    Holder::Unknown => "held from another host",
                };
                writeln!(
                    f,
                    "lock      pid {} on {} since {} ({}): {state}",
                    l.pid, l.host, l.started, l.command
                )?
            }
        }
        writeln!(f, "seen      {} URLs", self.seen)?;
        writeln!(f, "urldb     {} records", self.urldb)?;
        for c in &self.cycles {
            writeln!(
                f,
                "cycle {:06}: fetch list {} URLs",
                c.cycle, c.fetchlist_urls
            )?;
            for s in &c.stages {
                let counts: Vec<String> =
                    s.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                writeln!(
                    f,
                    "  {:<10} {:>5} done {:>5} pending  {:>8.2}s  {}",
                    s.stage.name(),
                    s.done,
                    s.pending,
                    s.seconds,
                    counts.join(" ")
                )?;
                for d in &s.damaged {
                    writeln!(f, "    damaged marker: {d}")?;
                }
            }
        }
        Ok(())
    }
}
