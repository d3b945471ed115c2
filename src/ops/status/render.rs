//! The text report: `Display` for [`Status`] is the summary ([`super::summary`]); [`Verbose`]
//! adds the counter dump (`dragnet status --verbose`), written here.

use std::fmt::Write as _;

use super::{
    CacheSummary, CycleState, CycleStatus, FetchSummary, PartitionState, StageStatus, Status,
    TopHosts, MAX_TRACKED_HOSTS,
};
use crate::crawl::{CrawlDir, Stage};
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

type Out<'a, 'b> = &'a mut std::fmt::Formatter<'b>;

/// `dragnet status --verbose`: the summary, then [`Status::write_details`].
pub struct Verbose<'a>(&'a Status);

impl Status {
    /// The report with every stage's counters after the summary (`dragnet status --verbose`).
    pub fn verbose(&self) -> Verbose<'_> {
        Verbose(self)
    }

    /// The counter dump below the summary: sizes, cycles, fetch results, the CLOCK cache, the top
    /// hosts, stage times, then every cycle's stages per partition state with their counters.
    fn write_details(&self, f: Out) -> std::fmt::Result {
        self.write_sizes(f)?;
        self.write_cycles_line(f)?;
        self.write_fetch_and_cache(f)?;
        self.write_hosts(f)?;
        self.write_stage_times(f)?;
        for c in &self.cycles {
            self.write_cycle(f, c)?;
        }
        Ok(())
    }

    /// The newest Slurm submission, the seen, URL-db and frontier sizes.
    fn write_sizes(&self, f: Out) -> std::fmt::Result {
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
            ),
            None => writeln!(f, "frontier   unknown (no prioritize yet)"),
        }
    }

    /// Cycles complete, the current one, and the failed partition-stages.
    fn write_cycles_line(&self, f: Out) -> std::fmt::Result {
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
        } else if let Some(c) = self.current_cycle() {
            let stage = self.first_unfinished(c);
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
        Ok(())
    }

    /// Fetch results of the newest fetch cycle and of all, and the CLOCK cache hit rates.
    fn write_fetch_and_cache(&self, f: Out) -> std::fmt::Result {
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
        Ok(())
    }

    /// The top-hosts table, every host it holds.
    fn write_hosts(&self, f: Out) -> std::fmt::Result {
        let Some(t) = &self.top_hosts else {
            return Ok(());
        };
        if t.pages == 0 {
            return writeln!(f, "top hosts  cycle {:06}: no page fetched", t.cycle);
        }
        writeln!(f, "top hosts  {}:", hosts_heading(t))?;
        for h in &t.hosts {
            writeln!(f, "  {:>10}  {}", h.pages, h.host)?;
        }
        Ok(())
    }

    /// Stage times of the last complete cycle that did work.
    fn write_stage_times(&self, f: Out) -> std::fmt::Result {
        let Some(c) = self.last_working_cycle() else {
            return Ok(());
        };
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
        Ok(())
    }

    /// One cycle: its state, fetch list, and each stage.
    fn write_cycle(&self, f: Out, c: &CycleStatus) -> std::fmt::Result {
        if self.finished && Some(c.cycle) == self.current {
            return writeln!(
                f,
                "cycle {:06}: nothing to fetch (the crawl is done)",
                c.cycle
            );
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
            write_stage(f, s)?;
        }
        Ok(())
    }
}

/// One stage of a cycle: partitions by state, times, counters, then the running partitions, the
/// failures (at most [`SHOW_FAILED`]) and the damaged markers.
fn write_stage(f: Out, s: &StageStatus) -> std::fmt::Result {
    let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
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
    Ok(())
}

/// `cycle 000001, 4 pages (2 hosts)`, or with how approximate the counts are.
fn hosts_heading(t: &TopHosts) -> String {
    let how = if t.approximate {
        format!(
            "approximate: over {MAX_TRACKED_HOSTS} hosts, counts may be up to {} low",
            t.error_bound
        )
    } else {
        plural(t.distinct_hosts.unwrap_or(0), "host", "hosts")
    };
    format!(
        "cycle {:06}, {} ({how})",
        t.cycle,
        plural(t.pages, "page", "pages")
    )
}

/// `dragnet status`: the summary ([`super::summary`]).
impl std::fmt::Display for Status {
    fn fmt(&self, f: Out) -> std::fmt::Result {
        self.write_summary(f)
    }
}

impl std::fmt::Display for Verbose<'_> {
    fn fmt(&self, f: Out) -> std::fmt::Result {
        self.0.write_summary(f)?;
        writeln!(f)?;
        self.0.write_details(f)
    }
}
