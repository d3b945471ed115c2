//! Where everything lives in a crawl directory (docs/design.md §2).
//!
//! ```text
//! crawl/
//!   crawl.toml                          configuration (partitions fixed at creation)
//!   lock                                held by the process running a cycle (pid, host)
//!   state/pNNNN/seen.CCCCCC.run         sorted fingerprints of every URL ever discovered
//!   state/pNNNN/urldb.CCCCCC.run        URL records sorted by fingerprint
//!   state/pNNNN/hosts.CCCCCC.run        host table (robots.txt per origin, counters)
//!   cycles/CCCCCC/fetchlist/pNNNN.run   what cycle C fetches in partition N
//!   cycles/CCCCCC/warc/pNNNN-SSSSSS.warc.zst   what the fetch of partition N received
//!   cycles/CCCCCC/fetched/pNNNN.run     what became of each URL of the fetch list
//!   cycles/CCCCCC/cdxj/pNNNN.cdxj       CDXJ index of the partition's WARC files (fetch)
//!   cycles/CCCCCC/index.cdxj            CDXJ index of the cycle's WARC files (end of cycle)
//!   indexes/index.cdxj                  CDXJ index of the whole crawl (end of cycle)
//!   archive -> cycles                   so that the crawl directory is a pywb collection
//!   cycles/CCCCCC/links/pNNNN.run       links found by parse (target host, fp)
//!   cycles/CCCCCC/pages/pNNNN.run       page facts from parse (fp)
//!   cycles/CCCCCC/split/to-pQQQQ/from-pPPPP.run   what split of P routes to owner Q (fp)
//!   cycles/CCCCCC/split/to-pQQQQ/inject-*.run     seeds `dragnet inject` added for Q (fp)
//!   state/pNNNN/cache.CCCCCC.clock      the split stage's CLOCK cache as cycle C starts
//!   cycles/CCCCCC/new/pNNNN.run         what the merge hands to prioritize (fp)
//!   cycles/CCCCCC/<stage>/pNNNN.done    commit marker of one stage for one partition
//!   cycles/CCCCCC/<stage>/pNNNN.failed  why its last attempt failed (until it succeeds)
//! ```
//!
//! State files are versioned by cycle: `seen.000007.run` is the seen set as cycle 7 starts. A
//! stage that updates state writes the next version beside the old one, so re-running a stage
//! whose `.done` is missing reads exactly the inputs the first attempt read; old versions are
//! removed only after the new ones are committed.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The stages of a cycle, plus `init` (which writes cycle 0's fetch lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// `dragnet init`: seeds into state and cycle 0's fetch lists.
    Init,
    /// Fetch the fetch list: WARC files and fetch results.
    Fetch,
    /// Parse WARC records: links and page facts.
    Parse,
    /// Route links to their owner partitions.
    Split,
    /// Dedup-merge against the seen set.
    Merge,
    /// Update the frontier and extract the next fetch list.
    Prioritize,
}

impl Stage {
    /// Every stage of a cycle, in order.
    pub const CYCLE: [Stage; 5] = [
        Stage::Fetch,
        Stage::Parse,
        Stage::Split,
        Stage::Merge,
        Stage::Prioritize,
    ];

    /// Directory name under `cycles/CCCCCC/`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Init => "init",
            Stage::Fetch => "fetch",
            Stage::Parse => "parse",
            Stage::Split => "split",
            Stage::Merge => "merge",
            Stage::Prioritize => "prioritize",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Paths inside one crawl directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlDir {
    root: PathBuf,
}

impl CrawlDir {
    /// The crawl rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> CrawlDir {
        CrawlDir { root: root.into() }
    }

    /// The error for a directory that is not a crawl (see [`CrawlDir::open`]).
    pub fn not_a_crawl(&self) -> Error {
        let what = if self.root.is_dir() {
            "is not a crawl directory (no crawl.toml)"
        } else {
            "does not exist, so it is not a crawl directory"
        };
        Error::Usage(format!(
            "{} {what}; create one with `dragnet init --seeds FILE {}`",
            self.root.display(),
            self.root.display()
        ))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `crawl.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("crawl.toml")
    }

    /// `manifest.json`: the settings fixed at creation ([`super::manifest`]).
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    /// The lock file.
    pub fn lock_path(&self) -> PathBuf {
        self.root.join("lock")
    }

    /// `pNNNN`.
    pub fn partition_name(p: u32) -> String {
        format!("p{p:04}")
    }

    /// `state/`.
    pub fn state_root(&self) -> PathBuf {
        self.root.join("state")
    }

    /// `state/pNNNN/`.
    pub fn state_dir(&self, p: u32) -> PathBuf {
        self.state_root().join(CrawlDir::partition_name(p))
    }

    /// `state/pNNNN/<kind>.CCCCCC.run`: version `cycle` of a state file.
    pub fn state_file(&self, p: u32, kind: &str, cycle: u32) -> PathBuf {
        self.state_dir(p).join(format!("{kind}.{cycle:06}.run"))
    }

    /// `state/pNNNN/<kind>.CCCCCC.<ext>`: version `cycle` of a state file that is not a run file
    /// (the split stage's CLOCK cache).
    pub fn state_file_ext(&self, p: u32, kind: &str, ext: &str, cycle: u32) -> PathBuf {
        self.state_dir(p).join(format!("{kind}.{cycle:06}.{ext}"))
    }

    /// The newest version of a state file that is at most `cycle`, if any.
    pub fn latest_state(&self, p: u32, kind: &str, cycle: u32) -> Option<(u32, PathBuf)> {
        self.latest_state_ext(p, kind, "run", cycle)
    }

    /// [`CrawlDir::latest_state`] for a state file with suffix `ext`.
    pub fn latest_state_ext(
        &self,
        p: u32,
        kind: &str,
        ext: &str,
        cycle: u32,
    ) -> Option<(u32, PathBuf)> {
        let dir = self.state_dir(p);
        let prefix = format!("{kind}.");
        let suffix = format!(".{ext}");
        let mut best: Option<u32> = None;
        for e in std::fs::read_dir(&dir).ok()?.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Some(v) = name
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(suffix.as_str()))
            else {
                continue;
            };
            if let Ok(v) = v.parse::<u32>() {
                if v <= cycle && best.is_none_or(|b| v > b) {
                    best = Some(v);
                }
            }
        }
        best.map(|v| (v, self.state_file_ext(p, kind, ext, v)))
    }

    /// `cycles/`.
    pub fn cycles_root(&self) -> PathBuf {
        self.root.join("cycles")
    }

    /// `cycles/CCCCCC/`.
    pub fn cycle_dir(&self, cycle: u32) -> PathBuf {
        self.cycles_root().join(format!("{cycle:06}"))
    }

    /// `cycles/CCCCCC/fetchlist/pNNNN.run`.
    pub fn fetchlist(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("fetchlist")
            .join(format!("{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/warc/`: the WARC files of every partition's fetch
    /// (`pNNNN-SSSSSS.warc.zst`).
    pub fn warc_dir(&self, cycle: u32) -> PathBuf {
        self.cycle_dir(cycle).join("warc")
    }

    /// `cycles/CCCCCC/cdxj/pNNNN.cdxj`: the CDXJ index of partition NNNN's WARC files, written by
    /// its fetch ([`crate::ops::index`]).
    pub fn partition_cdxj(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("cdxj")
            .join(format!("{}.cdxj", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/index.cdxj`: the CDXJ index of every WARC file of cycle C.
    pub fn cycle_cdxj(&self, cycle: u32) -> PathBuf {
        self.cycle_dir(cycle).join("index.cdxj")
    }

    /// `indexes/`: the crawl's CDXJ index, where pywb looks for one in a collection.
    pub fn indexes_dir(&self) -> PathBuf {
        self.root.join("indexes")
    }

    /// `archive`: a link to `cycles/`, where pywb looks for the files an index names.
    pub fn archive_link(&self) -> PathBuf {
        self.root.join("archive")
    }

    /// `cycles/CCCCCC/fetched/pNNNN.run`: what became of each URL of the fetch list.
    pub fn fetched(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("fetched")
            .join(format!("{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/links/pNNNN.run`: the links found by the parse of partition NNNN.
    pub fn links(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("links")
            .join(format!("{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/pages/pNNNN.run`: page facts from the parse of partition NNNN.
    pub fn pages(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("pages")
            .join(format!("{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/new/pNNNN.run`: the URLs the merge of partition NNNN hands to prioritize.
    pub fn new_urls(&self, cycle: u32, p: u32) -> PathBuf {
        self.cycle_dir(cycle)
            .join("new")
            .join(format!("{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/split/to-pQQQQ/`: what the splits route to owner q, and the seeds
    /// `dragnet inject` added for it.
    pub fn split_to_dir(&self, cycle: u32, q: u32) -> PathBuf {
        self.stage_dir(cycle, Stage::Split)
            .join(format!("to-{}", CrawlDir::partition_name(q)))
    }

    /// Whether `name` is the name of a directory [`CrawlDir::split_to_dir`] makes.
    pub fn is_split_to_dir(name: &str) -> bool {
        name.starts_with("to-")
    }

    /// `cycles/CCCCCC/split/to-pQQQQ/from-pPPPP.run`: what partition p's split routes to owner q.
    pub fn split_run(&self, cycle: u32, q: u32, p: u32) -> PathBuf {
        self.split_to_dir(cycle, q)
            .join(format!("from-{}.run", CrawlDir::partition_name(p)))
    }

    /// `cycles/CCCCCC/split/to-pQQQQ/inject-<stamp>.run`: seeds injected for owner q's merge;
    /// the merge reads them in the order of their names, so `stamp` orders them.
    pub fn inject_run(&self, cycle: u32, q: u32, stamp: &str) -> PathBuf {
        self.split_to_dir(cycle, q)
            .join(format!("inject-{stamp}.run"))
    }

    /// Whether `name` is the file name of an inject run ([`CrawlDir::inject_run`]).
    pub fn is_inject_run(name: &str) -> bool {
        name.starts_with("inject-") && name.ends_with(".run")
    }

    /// The inject runs for owner q's merge in `cycle`, in name order (the order they were
    /// injected); none where the directory cannot be read.
    pub fn inject_runs(&self, cycle: u32, q: u32) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.split_to_dir(cycle, q)) else {
            return Vec::new();
        };
        let mut runs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(CrawlDir::is_inject_run)
            })
            .collect();
        runs.sort();
        runs
    }

    /// `cycles/CCCCCC/<stage>/`.
    pub fn stage_dir(&self, cycle: u32, stage: Stage) -> PathBuf {
        self.cycle_dir(cycle).join(stage.name())
    }

    /// `cycles/CCCCCC/<stage>/pNNNN.done`.
    pub fn done_path(&self, cycle: u32, stage: Stage, p: u32) -> PathBuf {
        self.stage_dir(cycle, stage)
            .join(format!("{}.done", CrawlDir::partition_name(p)))
    }

    /// Whether `stage` of `cycle` has a `.done` marker for every one of the `m` partitions.
    pub fn done_everywhere(&self, cycle: u32, stage: Stage, m: u32) -> bool {
        (0..m).all(|p| self.done_path(cycle, stage, p).exists())
    }

    /// `cycles/CCCCCC/<stage>/pNNNN.failed`: why the last attempt of one stage for one partition
    /// failed (removed when the stage succeeds).
    pub fn failed_path(&self, cycle: u32, stage: Stage, p: u32) -> PathBuf {
        self.stage_dir(cycle, stage)
            .join(format!("{}.failed", CrawlDir::partition_name(p)))
    }

    /// Cycle numbers that have a directory, ascending.
    pub fn cycles(&self) -> Vec<u32> {
        let mut v: Vec<u32> = std::fs::read_dir(self.cycles_root())
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        (n.len() == 6).then(|| n.parse().ok()).flatten()
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// `path` relative to the root, for markers and messages.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

/// The cycle to run next: the first whose prioritize is not done for every partition (its fetch
/// lists exist: `init` writes cycle 0's, each prioritize the next one's).
pub fn next_cycle(crawl: &CrawlDir, m: u32) -> u32 {
    let mut c = 0;
    while crawl.done_everywhere(c, Stage::Prioritize, m) {
        c += 1;
    }
    c
}

/// The `filename` prefix of cycle `cycle`'s WARC files in the crawl's CDXJ indexes: their path
/// under `cycles/` (what `archive` links to).
pub fn warc_filename_prefix(cycle: u32) -> String {
    format!("{cycle:06}/warc/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let d = CrawlDir::new("/c");
        assert_eq!(
            d.state_file(3, "seen", 7),
            Path::new("/c/state/p0003/seen.000007.run")
        );
        assert_eq!(
            d.fetchlist(0, 12),
            Path::new("/c/cycles/000000/fetchlist/p0012.run")
        );
        assert_eq!(
            d.done_path(1, Stage::Merge, 2),
            Path::new("/c/cycles/000001/merge/p0002.done")
        );
    }

    #[test]
    fn latest_state_picks_newest_not_after_cycle() {
        let t = tempfile::tempdir().unwrap();
        let d = CrawlDir::new(t.path());
        std::fs::create_dir_all(d.state_dir(0)).unwrap();
        for v in [0u32, 2, 5] {
            std::fs::write(d.state_file(0, "seen", v), b"").unwrap();
        }
        std::fs::write(d.state_dir(0).join("seen.junk.run"), b"").unwrap();
        assert_eq!(d.latest_state(0, "seen", 4).unwrap().0, 2);
        assert_eq!(d.latest_state(0, "seen", 9).unwrap().0, 5);
        assert!(d.latest_state(0, "urldb", 9).is_none());
    }
}
