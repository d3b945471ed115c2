//! The text report: `Display` for [`Status`].

use std::fmt::Write as _;

use super::{CacheSummary, CycleState, FetchSummary, PartitionState, Status, MAX_TRACKED_HOSTS};
use crate::crawl::layout::{CrawlDir, Stage};
use crate::crawl::lock::Holder;
use crate::util::plural;

/// Partition numbers as ranges: `p0000-p0003, p0007`, at most `max` ranges.
pub(super) fn ranges(parts: impl Iterator<Item = u32>, max: usize) -> String {
    let mut rs: Vec<(u32, u32)> = Vec::new();
    for p in parts {
        match rs.last_mut() {
            Some((_, hi)) if *hi + 1 == p => *hi = p,
            _ => rs.push((p, p)),
        }
    }
    let mut out: Vec<String> = rs
        .iter()
        .take(max)
        .map(|&(lo, hi)| match lo == hi {
            true => CrawlDir::partition_name(lo),
            false => format!(
                "{}-{}",
                CrawlDir::partition_name(lo),
                CrawlDir::partition_name(hi)
            ),
        })
        .collect();
    if rs.len() > max {
        out.push(format!("... ({} more ranges)", rs.len() - max));
    }
    out.join(", ")
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn fetch_line(f: &FetchSummary) -> String {
    let mut line = format!(
        "{}, {}, {:.1} MiB;",
        plural(f.urls, "URL", "URLs"),
        plural(f.requests, "request", "requests"),
        mib(f.bytes)
    );
    for (k, v) in &f.by_status {
        let _ = write!(line, " {k} {v}");
    }
    if f.revisits > 0 {
        let _ = write!(line, " ({} unchanged: revisits)", f.revisits);
    }
    if !f.errors.is_empty() {
        let errs: Vec<String> = f.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(line, "; errors: {}", errs.join(", "));
    }
    line
}

fn rate(c: &CacheSummary) -> String {
    match c.hit_rate() {
        Some(r) => format!(
            "{:.1}% hits ({} of {} lookups)",
            r * 100.0,
            c.hits,
            c.lookups
        ),
        None => "no lookups".into(),
    }
}

/// Failed partitions listed per stage in the text report (JSON lists all).
const SHOW_FAILED: usize = 10;

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "crawl      {} ({})", self.name, self.dir.display())?;
        writeln!(f, "partitions {}", self.partitions)?;
        match &self.lock {
            None => writeln!(f, "lock       free")?,
            Some((l, h)) => {
                let state = match h {
                    Holder::Alive => "running".to_owned(),
                    Holder::Gone => format!(
                        "STALE: holder is gone; the next `dragnet cycle` takes it over (or clear \
                         it with `dragnet unlock {}`)",
                        self.dir.display()
                    ),
                    Holder::Unknown => "held from another host".to_owned(),
                };
                writeln!(
                    f,
                    "lock       pid {} on {} since {} ({}): {state}",
                    l.pid, l.host, l.started, l.command
                )?
            }
        }
        if let Some(sl) = &self.slurm {
            let jobs: Vec<String> = sl.jobs.iter().map(|(w, id)| format!("{w} {id}")).collect();
            writeln!(
                f,
                "slurm      cycle {} submitted {} from {}: {} (`squeue` shows what still runs)",
                sl.cycle,
                sl.time,
                sl.host,
                jobs.join(", ")
            )?;
        }
        writeln!(f, "seen       {} URLs", self.seen)?;
        writeln!(f, "urldb      {} records", self.urldb)?;
        match self.frontier {
            Some(n) => writeln!(
                f,
                "frontier   {n} URLs ({} of {} partitions prioritized)",
                self.frontier_partitions, self.partitions
            )?,
            None => writeln!(f, "frontier   unknown (no prioritize yet)")?,
        }
        let mut cycles = format!("cycles     {} complete", self.cycles_complete);
        if let Some(c) = self.last_complete_cycle() {
            let _ = write!(cycles, " (last {:06}", c.cycle);
            if let Some(t) = c.completed_at {
                let _ = write!(cycles, ", finished {}", crate::util::rfc3339(t));
            }
            cycles.push(')');
        }
        if let (true, Some(c)) = (self.finished, self.current) {
            let _ = write!(
                cycles,
                "; the crawl is done: the fetch lists of cycle {c:06} are empty"
            );
        } else if let Some(c) = self.cycles.iter().find(|c| Some(c.cycle) == self.current) {
            let stage = c
                .stages
                .iter()
                .find(|st| st.stage != Stage::Init && st.done < self.partitions);
            let _ = write!(
                cycles,
                "; current {:06}: {}",
                c.cycle,
                match (c.state, stage) {
                    (CycleState::NotStarted, _) => "not started".to_owned(),
                    (_, Some(st)) => format!("in progress at {}", st.stage),
                    _ => "in progress".to_owned(),
                }
            );
        }
        writeln!(f, "{cycles}")?;
        if self.failed > 0 {
            writeln!(
                f,
                "failed     {} failed; see their cycles below",
                plural(self.failed.into(), "partition-stage", "partition-stages"),
            )?;
        }
        if let Some(c) = self.fetch_cycle {
            writeln!(
                f,
                "fetched    cycle {c:06} ({} of {} partitions): {}",
                self.fetch.partitions,
                self.partitions,
                fetch_line(&self.fetch)
            )?;
            writeln!(
                f,
                "           all cycles: {}",
                fetch_line(&self.fetch_total)
            )?;
        }
        if let Some(c) = self.cache_cycle {
            writeln!(
                f,
                "cache      cycle {c:06}: {}; all cycles: {}",
                rate(&self.cache),
                rate(&self.cache_total)
            )?;
        }
        if let Some(t) = self.top_hosts.as_ref().filter(|t| t.pages == 0) {
            writeln!(f, "top hosts  cycle {:06}: no page fetched", t.cycle)?;
        } else if let Some(t) = &self.top_hosts {
            let how = if t.approximate {
                format!(
                    "approximate: over {MAX_TRACKED_HOSTS} hosts, counts may be up to {} low",
                    t.error_bound
                )
            } else {
                plural(t.distinct_hosts.unwrap_or(0), "host", "hosts")
            };
            writeln!(
                f,
                "top hosts  cycle {:06}, {} ({how}):",
                t.cycle,
                plural(t.pages, "page", "pages")
            )?;
            for h in &t.hosts {
                writeln!(f, "  {:>10}  {}", h.pages, h.host)?;
            }
        }
        if let Some(c) = self.last_working_cycle() {
            writeln!(
                f,
                "last cycle {:06} stage times (slowest partition / sum over partitions):",
                c.cycle
            )?;
            for st in c.stages.iter().filter(|st| st.stage != Stage::Init) {
                writeln!(
                    f,
                    "  {:<10} {:>9.1}s {:>10.1}s",
                    st.stage.name(),
                    st.max_seconds,
                    st.seconds
                )?;
            }
        }
        for c in &self.cycles {
            if self.finished && Some(c.cycle) == self.current {
                writeln!(
                    f,
                    "cycle {:06}: nothing to fetch (the crawl is done)",
                    c.cycle
                )?;
                continue;
            }
            let state = match c.state {
                CycleState::Complete => "complete",
                CycleState::InProgress => "in progress",
                CycleState::NotStarted => "not started",
            };
            writeln!(
                f,
                "cycle {:06}: {state}, fetch list {}",
                c.cycle,
                plural(c.fetchlist_urls, "URL", "URLs")
            )?;
            for s in &c.stages {
                let counts: Vec<String> =
                    s.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let mut states = format!("{:>5} done", s.done);
                for (n, what) in [(s.running, "running"), (s.failed, "failed")] {
                    if n > 0 {
                        let _ = write!(states, " {n:>5} {what}");
                    }
                }
                let line = format!(
                    "  {:<10} {states} {:>5} pending  {:>8.2}s (max {:.2}s)  {}",
                    s.stage.name(),
                    s.pending,
                    s.seconds,
                    s.max_seconds,
                    counts.join(" ")
                );
                writeln!(f, "{}", line.trim_end())?;
                if s.running > 0 {
                    let running = s
                        .partitions
                        .iter()
                        .enumerate()
                        .filter(|(_, st)| **st == PartitionState::Running)
                        .map(|(p, _)| p as u32);
                    writeln!(f, "    running: {}", ranges(running, 8))?;
                }
                for fm in s.failures.iter().take(SHOW_FAILED) {
                    writeln!(
                        f,
                        "    {} FAILED at {} (exit {}): {}",
                        CrawlDir::partition_name(fm.partition),
                        crate::util::rfc3339(fm.at),
                        fm.exit_code,
                        fm.error
                    )?;
                }
                if s.failures.len() > SHOW_FAILED {
                    writeln!(
                        f,
                        "    ... and {} more failed partitions (`dragnet status --json` lists all)",
                        s.failures.len() - SHOW_FAILED
                    )?;
                }
                for d in &s.damaged {
                    writeln!(f, "    damaged marker: {d}")?;
                }
            }
        }
        Ok(())
    }
}
