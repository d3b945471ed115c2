//! `.failed` markers: why the last attempt of one stage for one partition failed.
//!
//! The cycle runner writes `cycles/NNNNNN/<stage>/pNNNN.failed` when a stage fails for a
//! partition and removes it when the stage later succeeds, so `dragnet status` (and the metrics
//! file) can tell "failed, here is why" from "not run yet" without a log to dig through: the
//! cycle may have run under cron, or as a Slurm task on another node.
//!
//! A `.failed` marker is advice, not a commit: the `.done` marker alone decides whether a stage
//! is done. If both exist (a crash between the commit and the removal), the stage is done and the
//! stale `.failed` is ignored. Like every file dragnet writes it is published atomically and
//! carries a magic, a version and a checksum (xxh3-64 of its compact JSON with `checksum` empty).

use std::path::Path;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::layout::{CrawlDir, Stage};
use crate::error::{Error, Result};

const MAGIC: &str = "dragnet-failed";
const VERSION: u32 = 1;

/// The contents of a `.failed` marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedMarker {
    /// Always `dragnet-failed`.
    pub magic: String,
    /// Marker format version.
    pub version: u32,
    /// The stage that failed.
    pub stage: Stage,
    /// Cycle number.
    pub cycle: u32,
    /// Partition number.
    pub partition: u32,
    /// The error's message, followed by the causes of its `source()` chain it does not already
    /// say (`: caused by: ...`).
    pub error: String,
    /// The exit code the error maps to ([`Error::exit_code`]).
    pub exit_code: i32,
    /// When it failed, Unix seconds.
    pub at: u64,
    /// Host that ran the stage.
    pub host: String,
    /// Process id that ran the stage.
    pub pid: u32,
    /// xxh3-64 (hex) of the compact JSON of this marker with an empty checksum.
    #[serde(default)]
    pub checksum: String,
}

impl FailedMarker {
    fn body_checksum(&self) -> String {
        let mut m = self.clone();
        m.checksum.clear();
        let json = serde_json::to_string(&m).expect("marker serializes");
        format!("{:016x}", xxh3_64(json.as_bytes()))
    }
}

/// The error's message with its `source()` chain, on one line.
fn message(err: &Error) -> String {
    err.with_causes(": ")
}

/// Records that `stage` failed for partition `p` of `cycle` with `err`: publishes
/// `cycles/NNNNNN/<stage>/pNNNN.failed` atomically (creating the stage directory if needed),
/// replacing an older one.
pub fn write_failed(crawl: &CrawlDir, stage: Stage, cycle: u32, p: u32, err: &Error) -> Result<()> {
    let mut m = FailedMarker {
        magic: MAGIC.into(),
        version: VERSION,
        stage,
        cycle,
        partition: p,
        error: message(err),
        exit_code: err.exit_code(),
        at: crate::util::unix_now(),
        host: crate::util::hostname(),
        pid: std::process::id(),
        checksum: String::new(),
    };
    m.checksum = m.body_checksum();
    let mut text = serde_json::to_string_pretty(&m).expect("marker serializes");
    text.push('\n');
    crate::storage::create_dir_all(&crawl.stage_dir(cycle, stage))?;
    crate::storage::write_atomic(&crawl.failed_path(cycle, stage, p), text.as_bytes())
}

/// Removes the `.failed` marker of `stage` for partition `p` of `cycle`, if there is one (call it
/// once the stage's `.done` is committed).
pub fn clear_failed(crawl: &CrawlDir, stage: Stage, cycle: u32, p: u32) -> Result<()> {
    let path = crawl.failed_path(cycle, stage, p);
    match std::fs::remove_file(&path) {
        Ok(()) => crate::storage::sync_dir(&crawl.stage_dir(cycle, stage)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Reads and checks the `.failed` marker of `stage` for partition `p` of `cycle`; `Ok(None)` if
/// there is none.
pub fn read_failed(
    crawl: &CrawlDir,
    stage: Stage,
    cycle: u32,
    p: u32,
) -> Result<Option<FailedMarker>> {
    read(&crawl.failed_path(cycle, stage, p))
}

fn read(path: &Path) -> Result<Option<FailedMarker>> {
    super::done::read_marker(path)
}

super::done::impl_marker!(FailedMarker, "failed");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_clear() {
        let t = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(t.path());
        assert_eq!(read_failed(&crawl, Stage::Fetch, 3, 7).unwrap(), None);
        clear_failed(&crawl, Stage::Fetch, 3, 7).unwrap(); // nothing to clear is fine

        let err = Error::io(
            "open",
            "/x/y.run",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        write_failed(&crawl, Stage::Fetch, 3, 7, &err).unwrap();
        let path = crawl.failed_path(3, Stage::Fetch, 7);
        assert!(path.ends_with("cycles/000003/fetch/p0007.failed"));
        let m = read_failed(&crawl, Stage::Fetch, 3, 7).unwrap().unwrap();
        assert_eq!((m.stage, m.cycle, m.partition), (Stage::Fetch, 3, 7));
        assert_eq!(m.exit_code, crate::error::EXIT_IO);
        assert!(m.error.starts_with("open /x/y.run: "), "{}", m.error);
        // The OS error is said once: in the message, not again as a cause.
        assert_eq!(m.error.matches("No space left").count(), 1, "{}", m.error);
        assert!(m.at > 1_600_000_000);
        // The fields the brief names are plain JSON keys.
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for k in ["stage", "cycle", "partition", "error", "exit_code", "at"] {
            assert!(v.get(k).is_some(), "{k} missing: {v}");
        }
        assert_eq!(v["stage"], "fetch");

        // A second failure replaces the first.
        write_failed(&crawl, Stage::Fetch, 3, 7, &Error::Usage("bad".into())).unwrap();
        let m = read_failed(&crawl, Stage::Fetch, 3, 7).unwrap().unwrap();
        assert_eq!((m.error.as_str(), m.exit_code), ("bad", 2));

        // Tampering is detected.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"bad\"", "\"good\"");
        std::fs::write(&path, text).unwrap();
        let e = read_failed(&crawl, Stage::Fetch, 3, 7).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");

        clear_failed(&crawl, Stage::Fetch, 3, 7).unwrap();
        assert!(!path.exists());
        assert_eq!(read_failed(&crawl, Stage::Fetch, 3, 7).unwrap(), None);
    }
}
