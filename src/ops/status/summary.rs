//! The summary `dragnet status` prints: where the crawl is (progress), whether it is healthy, and
//! what to do next, in at most [`MAX_LINES`] lines of at most [`WIDTH`] columns whatever the
//! crawl's size. Free text that could be long (the crawl's name, an error, a host name) is cut to
//! fit; a line that names the crawl's directory is as long as the path (a command is printed
//! whole, to be copied). `dragnet status --verbose` adds the counter dump ([`super::render`]).

use std::fmt::Write as _;

use super::{CycleState, CycleStatus, StageStatus, Status, MAX_TRACKED_HOSTS};
use crate::crawl::report::counter;
use crate::crawl::Holder;
use crate::crawl::{CrawlDir, Stage};
use crate::records::FetchErrorKind;
use crate::util::plural;

/// Columns a summary line takes at most (but for the crawl's path, printed whole).
pub const WIDTH: usize = 100;
/// Lines the summary takes at most.
pub const MAX_LINES: usize = 25;
/// Failures the summary shows (two lines each); `--verbose` shows ten per stage, `--json` all.
const SHOW_FAILED: usize = 2;
/// Hosts the summary lists under its heading.
const SHOW_HOSTS: usize = 4;
/// Error kinds named on the errors line.
const SHOW_ERRORS: usize = 3;
/// Lines of the "next" section.
const SHOW_NEXT: usize = 3;
/// The fetch error kind of URLs the deadline left for a later cycle.
const DEFERRED: &str = FetchErrorKind::Deferred.as_str();

/// `s` on one line (control characters escaped), cut to `width` characters.
fn clip(s: &str, width: usize) -> String {
    let one_line: String = s
        .chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect();
    if one_line.chars().count() <= width {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(width.saturating_sub(3)).collect();
    cut.push_str("...");
    cut
}

/// `1234567` as `1,234,567`.
fn n(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Bytes in B, KiB, MiB, GiB or TiB.
fn bytes(b: u64) -> String {
    let units = [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in units {
        if b >= size {
            return format!("{:.1} {unit}", b as f64 / size as f64);
        }
    }
    format!("{b} B")
}

/// `part` of `all` in percent, one decimal.
fn pct(part: u64, all: u64) -> String {
    match all {
        0 => "0%".into(),
        _ => format!("{:.1}%", part as f64 * 100.0 / all as f64),
    }
}

/// The summary's lines, each a label column and its text.
#[derive(Default)]
struct Lines(Vec<String>);

impl Lines {
    /// A line under `label` (empty: a continuation), the text cut to fit [`WIDTH`].
    fn add(&mut self, label: &str, text: &str) {
        self.0
            .push(format!("{label:<10} {}", clip(text, WIDTH - 11)));
    }

    /// A line that names the crawl's directory: not cut.
    fn add_whole(&mut self, label: &str, text: String) {
        self.0.push(format!("{label:<10} {text}"));
    }
}

impl Status {
    /// The oldest cycle that is not complete, if it has a directory.
    pub(super) fn current_cycle(&self) -> Option<&CycleStatus> {
        self.cycles.iter().find(|c| Some(c.cycle) == self.current)
    }

    /// The first stage of cycle `c` that is not done for every partition.
    pub(super) fn first_unfinished<'a>(&self, c: &'a CycleStatus) -> Option<&'a StageStatus> {
        c.stages
            .iter()
            .find(|st| st.stage != Stage::Init && st.done < self.partitions)
    }

    /// `dragnet status`: progress, health, top hosts and what to do next.
    pub(super) fn write_summary(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut l = Lines::default();
        self.progress(&mut l);
        self.health(&mut l);
        self.top_hosts_summary(&mut l);
        self.next_steps(&mut l);
        debug_assert!(l.0.len() <= MAX_LINES, "{}", l.0.join("\n"));
        for line in &l.0 {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }

    /// Whether a live run holds the lock.
    fn alive(&self) -> bool {
        matches!(self.lock, Some((_, Holder::Alive)))
    }

    /// The crawl, where its cycles are, its URLs, the last fetch's coverage, the WARC bytes.
    fn progress(&self, l: &mut Lines) {
        l.add_whole(
            "crawl",
            format!(
                "{} in {}, {}",
                clip(&self.name, 40),
                self.dir.display(),
                plural(self.partitions.into(), "partition", "partitions")
            ),
        );
        l.add("progress", &self.state_line());
        let mut done = match self.cycles_complete {
            0 => "no cycle complete yet".to_owned(),
            k => plural(k.into(), "cycle", "cycles") + " complete",
        };
        if let Some(c) = self.last_complete_cycle() {
            let _ = write!(done, " (last {:06}", c.cycle);
            if let Some(t) = c.completed_at {
                let _ = write!(done, ", finished {}", crate::util::rfc3339(t));
            }
            done.push(')');
        }
        l.add("", &done);
        let fetched: u64 = self
            .fetch_total
            .by_status
            .iter()
            .filter(|(k, _)| k.as_str() != counter::NO_ANSWER)
            .map(|(_, v)| v)
            .sum();
        let waiting = match self.frontier {
            Some(w) => format!("{} waiting in the frontier", n(w)),
            None => "no frontier yet (no prioritize has run)".to_owned(),
        };
        l.add(
            "URLs",
            &format!("{} seen, {} fetched, {waiting}", n(self.seen), n(fetched)),
        );
        if let Some(line) = self.coverage_line() {
            l.add("fetch list", &line);
        }
        l.add("WARC", &self.warc_line());
    }

    /// Where the current cycle stands: not started, running, failed, stopped; or the crawl done.
    fn state_line(&self) -> String {
        if let (true, Some(c)) = (self.finished, self.current) {
            return format!("the crawl is done: the fetch lists of cycle {c:06} are empty");
        }
        let Some(c) = self.current_cycle() else {
            return "no cycle to run: no fetch lists after the last complete cycle".to_owned();
        };
        let cycle = format!("cycle {:06}", c.cycle);
        if c.state == CycleState::NotStarted {
            let fresh = match self.cycles_complete {
                0 => "a fresh crawl; ",
                _ => "",
            };
            return format!(
                "{cycle} not started ({fresh}{} in its fetch lists)",
                plural(c.fetchlist_urls, "URL", "URLs")
            );
        }
        let failed: u32 = c.stages.iter().map(|st| st.failed).sum();
        let how = if self.alive() {
            "running"
        } else if failed > 0 {
            "FAILED"
        } else if self.slurm.as_ref().is_some_and(|s| s.cycle == c.cycle) {
            "submitted to Slurm, in progress"
        } else {
            "stopped"
        };
        let Some(st) = self.first_unfinished(c) else {
            return format!("{cycle} {how}");
        };
        let mut line = format!(
            "{cycle} {how}, at {}: {} of {} partitions done",
            st.stage, st.done, self.partitions
        );
        for (k, what) in [(st.running, "running"), (st.failed, "failed")] {
            if k > 0 {
                let _ = write!(line, ", {k} {what}");
            }
        }
        line
    }

    /// How much of the newest fetch cycle's fetch list was tried.
    pub(super) fn coverage_line(&self) -> Option<String> {
        let fc = self.fetch_cycle?;
        let f = &self.fetch;
        // The reserve is counted apart: fetched only in the cycle's window, what the window
        // left is deferred back to the frontier by design, not by the deadline.
        let reserve_back = f.reserve.saturating_sub(f.reserve_tried);
        let deferred = f
            .errors
            .get(DEFERRED)
            .copied()
            .unwrap_or(0)
            .saturating_sub(reserve_back);
        let tried = f.urls.saturating_sub(f.reserve).saturating_sub(deferred);
        let listed = self
            .cycles
            .iter()
            .find(|c| c.cycle == fc)
            .map_or(0, |c| c.fetchlist_urls)
            .max(f.urls)
            .saturating_sub(f.reserve);
        let mut line = format!(
            "cycle {fc:06}: {} of {} URLs tried ({})",
            n(tried),
            n(listed),
            pct(tried, listed)
        );
        if deferred > 0 {
            let _ = write!(line, ", {} deferred by the deadline", n(deferred));
        }
        if f.partitions < self.partitions {
            let _ = write!(
                line,
                "; {} of {} partitions fetched",
                f.partitions, self.partitions
            );
        }
        if f.reserve > 0 {
            // What the window left of the reserve went back to the frontier.
            let _ = write!(
                line,
                "; reserve: {} of {} tried",
                n(f.reserve_tried),
                n(f.reserve)
            );
        }
        Some(line)
    }

    /// WARC bytes and files over every cycle's fetch markers, and in the newest fetch cycle.
    fn warc_line(&self) -> String {
        let (mut total, mut files, mut last) = (0, 0, 0);
        for c in &self.cycles {
            for st in c.stages.iter().filter(|st| st.stage == Stage::Fetch) {
                let get = |k: &str| st.counts.get(k).copied().unwrap_or(0);
                total += get(counter::WARC_BYTES);
                files += get(counter::WARC_FILES);
                if Some(c.cycle) == self.fetch_cycle {
                    last = get(counter::WARC_BYTES);
                }
            }
        }
        if files == 0 {
            return "none written yet".to_owned();
        }
        let mut line = format!(
            "{} in {} (all cycles)",
            bytes(total),
            plural(files, "file", "files")
        );
        if let Some(c) = self.fetch_cycle {
            let _ = write!(line, "; {} in cycle {c:06}", bytes(last));
        }
        line
    }

    /// The lock, the Slurm submission, the newest fetch's answers and errors, failed
    /// partitions and damaged markers.
    fn health(&self, l: &mut Lines) {
        match &self.lock {
            None => l.add("lock", "free"),
            Some((info, h)) => {
                let state = match h {
                    Holder::Alive => "running",
                    Holder::Gone => "STALE: its holder is gone",
                    Holder::Unknown => "held from another host (whether it runs is unknown here)",
                };
                let line = format!(
                    "pid {} on {} since {} ({}): {state}",
                    info.pid, info.host, info.started, info.command
                );
                l.add("lock", &line);
            }
        }
        if let Some(sl) = &self.slurm {
            let line = format!(
                "cycle {:06} submitted {} from {}: {} (`squeue` shows which still run)",
                sl.cycle,
                sl.time,
                sl.host,
                plural(sl.jobs.len() as u64, "job", "jobs")
            );
            l.add("slurm", &line);
        }
        if let Some(fc) = self.fetch_cycle {
            let f = &self.fetch;
            let results: u64 = f.by_status.values().sum();
            let classes: Vec<String> = f
                .by_status
                .iter()
                .map(|(k, v)| format!("{} {}", k.replace('_', " "), pct(*v, results)))
                .collect();
            let mut line = format!("cycle {fc:06}: {}", classes.join(", "));
            if results == 0 {
                line = format!("cycle {fc:06}: no result");
            }
            l.add("answers", &line);
            let errors: u64 = f.errors.values().sum();
            let mut kinds: Vec<(&String, &u64)> = f.errors.iter().collect();
            kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let mut line = format!("{} of {} results", pct(errors, f.urls), n(f.urls));
            let named: Vec<String> = kinds
                .iter()
                .take(SHOW_ERRORS)
                .map(|(k, v)| format!("{k} {}", n(**v)))
                .collect();
            if !named.is_empty() {
                let _ = write!(line, ": {}", named.join(", "));
            }
            if kinds.len() > SHOW_ERRORS {
                let _ = write!(line, ", {} more kinds", kinds.len() - SHOW_ERRORS);
            }
            let ok = f.by_status.get("2xx").copied().unwrap_or(0);
            if f.revisits > 0 {
                let _ = write!(line, "; revisits {} of 2xx", pct(f.revisits, ok));
            }
            l.add("errors", &line);
        }
        if let Some(pk) = &self.parked {
            let line = format!(
                "{} failed run after run: {} wait in the frontier, the first back in cycle {}",
                plural(pk.hosts, "host", "hosts"),
                plural(pk.urls, "URL", "URLs"),
                pk.first_cycle
            );
            l.add("parked", &line);
        }
        self.failures_summary(l);
        let damaged: Vec<(u32, Stage, &String)> = self
            .cycles
            .iter()
            .flat_map(|c| c.stages.iter().map(move |st| (c.cycle, st)))
            .flat_map(|(c, st)| st.damaged.iter().map(move |d| (c, st.stage, d)))
            .collect();
        if let Some((c, stage, first)) = damaged.first() {
            let line = format!(
                "{}, first cycle {c:06} {stage}: {first}",
                plural(damaged.len() as u64, "damaged marker", "damaged markers")
            );
            l.add("damaged", &line);
        }
    }

    /// The first [`SHOW_FAILED`] failed partitions with the first line of their error.
    fn failures_summary(&self, l: &mut Lines) {
        let failures = self.cycles.iter().flat_map(|c| {
            c.stages
                .iter()
                .flat_map(move |st| st.failures.iter().map(move |fm| (c.cycle, fm)))
        });
        let mut label = "failed";
        let mut shown = 0;
        for (c, fm) in failures.take(SHOW_FAILED) {
            let line = format!(
                "cycle {c:06} {}: {} FAILED at {} (exit {}):",
                fm.stage,
                CrawlDir::partition_name(fm.partition),
                crate::util::rfc3339(fm.at),
                fm.exit_code
            );
            l.add(label, &line);
            // The first line, paths in the crawl relative to it.
            let error = fm.error.lines().next().unwrap_or("");
            let error = error.replace(&format!("{}/", self.dir.display()), "");
            l.add("", &format!("  {error}"));
            label = "";
            shown += 1;
        }
        let total = u64::from(self.failed);
        if total > shown {
            l.add_whole(
                "",
                format!(
                    "... {} more failed (`dragnet status --verbose {}`)",
                    n(total - shown),
                    self.dir.display()
                ),
            );
        }
    }

    /// The newest fetch cycle's hosts with the most pages, at most [`SHOW_HOSTS`].
    fn top_hosts_summary(&self, l: &mut Lines) {
        let Some(t) = &self.top_hosts else {
            return;
        };
        if t.pages == 0 {
            return l.add(
                "top hosts",
                &format!("cycle {:06}: no page fetched", t.cycle),
            );
        }
        let how = match t.approximate {
            true => format!(
                "over {MAX_TRACKED_HOSTS} hosts: up to {} low",
                n(t.error_bound)
            ),
            false => plural(t.distinct_hosts.unwrap_or(0), "host", "hosts"),
        };
        let heading = format!(
            "cycle {:06}, {} ({how}):",
            t.cycle,
            plural(t.pages, "page", "pages")
        );
        l.add("top hosts", &heading);
        for h in t.hosts.iter().take(SHOW_HOSTS) {
            l.add("", &format!("{:>10}  {}", n(h.pages), h.host));
        }
    }

    /// One to three commands to run next, each with why.
    fn next_steps(&self, l: &mut Lines) {
        let dir = self.dir.display();
        let mut next: Vec<(String, String)> = Vec::new();
        let mut add = |cmd: String, why: &str| next.push((cmd, why.to_owned()));
        let damaged = self
            .cycles
            .iter()
            .flat_map(|c| &c.stages)
            .any(|st| !st.damaged.is_empty());
        if damaged {
            add(
                format!("dragnet repair {dir}"),
                "remakes damaged files (--dry-run first)",
            );
        }
        // On a cluster the crawl goes on with `slurm submit`, on one machine with `cycle`.
        let go_on = match &self.slurm {
            Some(_) => format!("dragnet slurm submit {dir}"),
            None => format!("dragnet cycle {dir}"),
        };
        let current = self.current_cycle();
        match &self.lock {
            Some((info, Holder::Alive)) => add(
                format!("dragnet status {dir}"),
                &format!("later: pid {} is at work on it", info.pid),
            ),
            Some((_, Holder::Gone)) => {
                add(go_on.clone(), "takes it over (holder gone), resumes");
                add(
                    format!("dragnet unlock {dir}"),
                    "or only clears the stale lock",
                );
            }
            Some((info, Holder::Unknown)) => add(
                format!("dragnet unlock --force {dir}"),
                &format!("once the run on {} is over", clip(&info.host, 20)),
            ),
            None if self.finished => add(
                format!("dragnet inject --seeds FILE {dir}"),
                "more seeds to go on",
            ),
            None => {
                if let Some(sl) = self
                    .slurm
                    .as_ref()
                    .filter(|s| Some(s.cycle) == self.current)
                {
                    let ids: Vec<&str> = sl.jobs.iter().map(|(_, id)| id.as_str()).collect();
                    add(
                        format!("squeue -j {}", ids.join(",")),
                        "the cycle's jobs still queued",
                    );
                }
                let why = match current {
                    _ if self.failed > 0 => "retries the failed partitions".into(),
                    Some(c) if c.state == CycleState::NotStarted => {
                        format!("runs cycle {:06}", c.cycle)
                    }
                    Some(c) => format!("resumes cycle {:06}", c.cycle),
                    None => "runs the next cycle".into(),
                };
                add(go_on, &why);
            }
        }
        add(
            format!("dragnet status --verbose {dir}"),
            "every stage's counters",
        );
        next.truncate(SHOW_NEXT);
        let width = next.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
        let mut label = "next";
        for (cmd, why) in next {
            // The command whole (it names the crawl's path), its reason after it.
            l.add_whole(label, format!("{cmd:<width$}  # {why}"));
            label = "";
        }
    }
}
