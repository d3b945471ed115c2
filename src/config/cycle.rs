//! `[cycle]` and `[slurm]` in crawl.toml: how the two executors run a cycle. A leaf, like
//! `fetch/config.rs`: the configuration (`crate::config::Config`) holds these sections, and the
//! executors read them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[cycle]` in crawl.toml: how the local executor runs a cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CycleSection {
    /// Partitions fetched (then parsed and split) at the same time; each runs `[fetch] threads`
    /// robots of its own.
    pub fetch_partitions: u32,
    /// State versions kept: enough to re-run the last this many cycles (0 keeps every version).
    /// Older ones are removed after each complete cycle ([`crate::ops::prune`]).
    pub keep_cycles: u32,
    /// Seconds after which the crawl lock of a `dragnet cycle` on *another host* is taken over
    /// if its holder has not refreshed it (it does every quarter of this); 0: never, such a lock
    /// waits for `dragnet unlock --force`. A dead holder on this host is always detected by its
    /// OS lock, lease or not ([`crate::crawl::lock`]).
    pub lock_lease_secs: u64,
    /// Rewrite the crawl's report (`report/`: `index.html` and the CSV files of `dragnet
    /// report`) after each complete cycle. It reads every cycle's fetch results and page facts
    /// and the newest URL db once: turn it off for a crawl where that pass costs too much.
    pub report: bool,
    /// The cycle as a window (`crate::fetch::window`): while another partition's fetch list is
    /// unfinished, a partition whose own list is done follows same-host links beyond `[fetch]
    /// follow_per_host` (within every other limit) instead of idling until the cycle ends.
    pub window: bool,
}

impl Default for CycleSection {
    fn default() -> Self {
        CycleSection {
            fetch_partitions: 4,
            keep_cycles: 2,
            lock_lease_secs: 0,
            report: true,
            window: true,
        }
    }
}

impl CycleSection {
    /// The lock lease, if one is set.
    pub fn lock_lease(&self) -> Option<std::time::Duration> {
        (self.lock_lease_secs > 0).then(|| std::time::Duration::from_secs(self.lock_lease_secs))
    }

    /// Checks values.
    pub fn validate(&self, path: &Path) -> Result<()> {
        if self.fetch_partitions == 0 || self.fetch_partitions > 1024 {
            return Err(Error::config(
                path,
                format!(
                    "cycle.fetch_partitions: {} must be between 1 and 1024 (default 4)",
                    self.fetch_partitions
                ),
            ));
        }
        if self.lock_lease_secs != 0 && self.lock_lease_secs < 60 {
            return Err(Error::config(
                path,
                format!(
                    "cycle.lock_lease_secs = {}: must be 0 (never take over another host's lock) \
                     or at least 60, well above the clock skew between hosts",
                    self.lock_lease_secs
                ),
            ));
        }
        Ok(())
    }
}

/// `[slurm]` in crawl.toml: how `dragnet slurm submit` calls `sbatch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlurmSection {
    /// The `sbatch` program: a name looked up on PATH, or a path.
    pub sbatch: String,
    /// Arguments for every job (partition, account, QOS, time limit, ...), e.g.
    /// `["--partition=crawl", "--time=04:00:00"]`.
    pub args: Vec<String>,
    /// Arguments for the fetch stage's arrays only, after `args` (e.g. `["--cpus-per-task=4"]`
    /// when `[fetch] threads` is large).
    pub fetch_args: Vec<String>,
    /// Tasks of one array that may run at once (`--array=...%K`); 0 leaves it to Slurm.
    pub parallel: u32,
    /// Most tasks in one array (Slurm's `MaxArraySize` is 1,001 by default); a stage with more
    /// partitions is submitted as several arrays.
    pub max_array: u32,
    /// Where the jobs write their logs, relative to the crawl directory (or absolute).
    pub log_dir: String,
    /// Times a task that failed for a transient reason (an I/O error, a killed process, a busy
    /// crawl) asks Slurm to run it again (`scontrol requeue`; `SLURM_RESTART_COUNT` counts the
    /// runs, node failures included) before it fails for good; 0 never asks. A permanent error
    /// (corrupt input, bad configuration) fails at once.
    pub max_retries: u32,
    /// Parse, split and prioritize of a partition start as soon as that partition's stage before
    /// them is done (`--dependency=aftercorr`), not when every partition's is; merge always
    /// waits for every split. false: each stage waits for the whole stage before (`afterok`).
    pub per_partition: bool,
}

impl Default for SlurmSection {
    fn default() -> Self {
        SlurmSection {
            sbatch: "sbatch".into(),
            args: Vec::new(),
            fetch_args: Vec::new(),
            parallel: 0,
            max_array: 1000,
            log_dir: "logs/slurm".into(),
            max_retries: 3,
            per_partition: true,
        }
    }
}

impl SlurmSection {
    /// Checks values.
    pub fn validate(&self, path: &Path) -> Result<()> {
        if self.max_array == 0 {
            return Err(Error::config(
                path,
                "slurm.max_array: must be at least 1 (default 1000, under Slurm's MaxArraySize)",
            ));
        }
        if self.sbatch.trim().is_empty() {
            return Err(Error::config(
                path,
                "slurm.sbatch: must name the sbatch program (default \"sbatch\")",
            ));
        }
        Ok(())
    }
}
