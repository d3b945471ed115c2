//! The record of Slurm submissions in the crawl directory: `[slurm] log_dir/cCCCCCC/submitted.jsonl`
//! gets one JSON line per `dragnet slurm submit` ([`record_submission`], written by the Slurm
//! executor), and `dragnet status` shows the newest ([`last_submission`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::layout::CrawlDir;
use crate::config::Config;
use crate::error::{IoContext, Result};

/// Appends the submission to `LOG_DIR/submitted.jsonl`, for the operator.
pub fn record_submission(log_dir: &Path, sub: &impl Serialize) -> Result<()> {
    use std::io::Write;
    let path = log_dir.join("submitted.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ctx("open", &path)?;
    let line = serde_json::json!({
        "time": crate::util::rfc3339(crate::util::unix_now()),
        "host": crate::util::hostname(),
        "submission": sub,
    });
    writeln!(f, "{line}").ctx("write", &path)
}

/// `[slurm] log_dir` of the crawl at `root`.
pub fn log_root(root: &Path, cfg: &Config) -> PathBuf {
    root.join(&cfg.slurm.log_dir)
}

/// The newest submission recorded in the crawl's Slurm log directory, for `dragnet status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LastSubmission {
    /// The cycle submitted.
    pub cycle: u32,
    /// When (RFC 3339 UTC).
    pub time: String,
    /// From which host.
    pub host: String,
    /// (stage or `finish`, job id) in submission order.
    pub jobs: Vec<(String, String)>,
}

/// Reads the last line of the newest `cCCCCCC/submitted.jsonl` under `[slurm] log_dir`; `None`
/// if the crawl was never submitted (or the record cannot be read).
pub fn last_submission(crawl: &CrawlDir, cfg: &Config) -> Option<LastSubmission> {
    let newest = std::fs::read_dir(log_root(crawl.root(), cfg))
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let c: u32 = name.strip_prefix('c')?.parse().ok()?;
            e.path()
                .join("submitted.jsonl")
                .is_file()
                .then_some((c, e.path()))
        })
        .max()?;
    let text = std::fs::read_to_string(newest.1.join("submitted.jsonl")).ok()?;
    let v: serde_json::Value = serde_json::from_str(text.lines().last()?).ok()?;
    let sub = &v["submission"];
    Some(LastSubmission {
        cycle: u32::try_from(sub["cycle"].as_u64()?).ok()?,
        time: v["time"].as_str()?.to_owned(),
        host: v["host"].as_str()?.to_owned(),
        jobs: sub["jobs"]
            .as_array()?
            .iter()
            .filter_map(|j| Some((j["what"].as_str()?.to_owned(), j["id"].as_str()?.to_owned())))
            .collect(),
    })
}
