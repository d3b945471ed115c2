//! `manifest.json`: the settings fixed when a crawl is created, which `crawl.toml` must keep.
//!
//! Some settings shape what is already on disk: the number of partitions (which partition owns
//! each host, so where every seen URL lives), the frontier queue's kind, and the
//! canonicalization rules (what a URL's fingerprint is). Changed in `crawl.toml` after `init`,
//! they would silently drop or duplicate committed state. `init` writes them here, with a
//! magic, a version and a checksum like every marker; [`check`] compares `crawl.toml` with them
//! whenever a crawl is opened, and a difference is a configuration error (exit 2) naming the key,
//! before anything is written. A crawl made before manifests existed has none and is not checked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::config::Config;
use super::layout::CrawlDir;
use crate::error::{Error, Result};

const MAGIC: &str = "dragnet-manifest";
const VERSION: u32 = 1;

/// The settings fixed at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    magic: String,
    version: u32,
    /// `[crawl] partitions`.
    pub partitions: u32,
    /// `[prioritize] queue`.
    pub queue: serde_json::Value,
    /// `[canon]`, whole.
    pub canon: serde_json::Value,
    checksum: String,
}

impl Manifest {
    /// The fixed settings of `cfg`.
    pub fn of(cfg: &Config) -> Manifest {
        let mut m = Manifest {
            magic: MAGIC.into(),
            version: VERSION,
            partitions: cfg.crawl.partitions,
            queue: serde_json::to_value(cfg.prioritize.queue).expect("queue kind serializes"),
            canon: serde_json::to_value(&cfg.canon).expect("[canon] serializes"),
            checksum: String::new(),
        };
        m.checksum = m.body_checksum();
        m
    }

    fn body_checksum(&self) -> String {
        let mut m = self.clone();
        m.checksum.clear();
        let json = serde_json::to_string(&m).expect("manifest serializes");
        format!("{:016x}", xxh3_64(json.as_bytes()))
    }
}

super::done::impl_marker!(Manifest, "manifest");

impl CrawlDir {
    /// An existing crawl at `root` and its configuration: a usage error (exit 2) that says how to
    /// make one when `root` is missing or has no `crawl.toml`, so every command that works on a
    /// crawl refuses a wrong directory the same way; a configuration error when `crawl.toml`
    /// changed a setting fixed at creation ([`check`]).
    pub fn open(root: impl Into<PathBuf>) -> Result<(CrawlDir, Config)> {
        let crawl = CrawlDir::new(root);
        let path = crawl.config_path();
        if !path.is_file() {
            return Err(crawl.not_a_crawl());
        }
        let cfg = Config::load(&path)?;
        check(&crawl, &cfg, &path)?;
        Ok((crawl, cfg))
    }
}

/// Writes the manifest of a crawl being created with `cfg`.
pub fn write(crawl: &CrawlDir, cfg: &Config) -> Result<()> {
    let mut text = serde_json::to_string_pretty(&Manifest::of(cfg)).expect("manifest serializes");
    text.push('\n');
    crate::storage::write_atomic(&crawl.manifest_path(), text.as_bytes())
}

/// Checks `cfg` (read from `config_path`) against the crawl's manifest, if it has one.
pub fn check(crawl: &CrawlDir, cfg: &Config, config_path: &Path) -> Result<()> {
    let path = crawl.manifest_path();
    let Some(fixed) = super::done::read_marker::<Manifest>(&path)? else {
        return Ok(());
    };
    let now = Manifest::of(cfg);
    let differs = |key: &str, was: String, is: String| {
        Error::config(
            config_path,
            format!(
                "{key} is {is}, but the crawl was created with {was} ({}): it is fixed for the \
                 life of the crawl, because what is on disk depends on it; put back {was}",
                path.display()
            ),
        )
    };
    if now.partitions != fixed.partitions {
        return Err(differs(
            "crawl.partitions",
            fixed.partitions.to_string(),
            now.partitions.to_string(),
        ));
    }
    if now.queue != fixed.queue {
        return Err(differs(
            "prioritize.queue",
            fixed.queue.to_string(),
            now.queue.to_string(),
        ));
    }
    if now.canon != fixed.canon {
        return Err(differs(
            "[canon]",
            fixed.canon.to_string(),
            now.canon.to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_fixed_setting_is_refused_and_a_damaged_manifest_is_corrupt() {
        let t = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(t.path());
        let mut cfg = Config::default();
        cfg.crawl.partitions = 4;
        write(&crawl, &cfg).unwrap();
        let toml = t.path().join("crawl.toml");
        check(&crawl, &cfg, &toml).unwrap();
        // Settings that are not fixed may change.
        let mut other = cfg.clone();
        other.fetch.threads += 1;
        check(&crawl, &other, &toml).unwrap();
        other.crawl.partitions = 2;
        let e = check(&crawl, &other, &toml).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        let msg = e.to_string();
        assert!(
            msg.contains("crawl.partitions is 2") && msg.contains("put back 4"),
            "{msg}"
        );
        let mut q = cfg.clone();
        q.prioritize.queue = match cfg.prioritize.queue {
            crate::prioritize::config::QueueKind::Cbt => {
                crate::prioritize::config::QueueKind::Quickheap
            }
            crate::prioritize::config::QueueKind::Quickheap => {
                crate::prioritize::config::QueueKind::Cbt
            }
        };
        let e = check(&crawl, &q, &toml).unwrap_err();
        assert!(e.to_string().contains("prioritize.queue"), "{e}");
        // A flipped byte is caught by the checksum.
        let path = crawl.manifest_path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("\"partitions\": 4", "\"partitions\": 5"),
        )
        .unwrap();
        let e = check(&crawl, &cfg, &toml).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_IO, "{e}");
    }
}
