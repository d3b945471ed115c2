//! `manifest.json`: the settings fixed when a crawl is created, which `crawl.toml` must keep.
//!
//! Some settings shape what is already on disk: the number of partitions (which partition owns
//! each host, so where every seen URL lives), the frontier queue's kind, and the
//! canonicalization rules (what a URL's fingerprint is). Changed in `crawl.toml` after `init`,
//! they would silently drop or duplicate committed state. `init` writes them here, with a
//! magic, a version and a checksum like every marker; [`check`] compares `crawl.toml` with them
//! whenever a crawl is opened, and a difference is a configuration error (exit 2) naming the key,
//! before anything is written.
//!
//! The manifest is required: a crawl without one is refused (exit 3, naming it) unless its layout
//! proves it older than manifests (its init marker is dated before they came in,
//! [`MANIFESTS_SINCE`]); such a crawl is not checked. A lost manifest is rebuilt by `dragnet
//! repair` from what the crawl holds ([`rebuild`]): without it, a `crawl.toml` edited to another
//! partition count would silently strand every seen URL.

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

/// When manifests came in (RFC 3339, UTC): a crawl whose init marker is older may have none.
pub const MANIFESTS_SINCE: &str = "2026-11-25T20:26:35Z";

/// Whether the crawl's layout proves it older than manifests: its init marker (partition 0) is
/// dated before [`MANIFESTS_SINCE`].
pub fn predates_manifests(crawl: &CrawlDir) -> bool {
    use super::{DoneMarker, Stage};
    match DoneMarker::read(&crawl.done_path(0, Stage::Init, 0)) {
        Ok(Some(m)) => m.started.as_str() < MANIFESTS_SINCE,
        _ => false,
    }
}

/// The error for a crawl whose manifest is missing.
fn missing(crawl: &CrawlDir) -> Error {
    let path = crawl.manifest_path();
    Error::corrupt(
        &path,
        0,
        format!(
            "the manifest is missing, and the crawl is newer than manifests, so it was lost: it \
             holds the settings fixed at creation (partitions, queue kind, [canon]), without which \
             an edited crawl.toml would strand committed state. Restore it from a copy, or run \
             `dragnet repair {}` to rebuild it from the crawl's own files",
            crawl.root().display()
        ),
    )
}

/// What a manifest rebuilt from a crawl's files holds, and what it had to take on trust.
#[derive(Debug, Clone, Serialize)]
pub struct Rebuilt {
    /// Partitions: the `state/pNNNN` directories (and cycle 0's fetch lists).
    pub partitions: u32,
    /// The frontier queue's kind, from the frontiers' `kind` files (crawl.toml's if none).
    pub queue: String,
    /// Warnings: what was taken from crawl.toml without proof.
    pub warnings: Vec<String>,
}

/// Rebuilds a lost manifest from the crawl's own files: the partition count from `state/`, the
/// queue kind from the frontier directories, `[canon]` from `crawl.toml` (nothing on disk
/// records it, so it is taken with a warning). Writes it unless `dry_run`.
pub fn rebuild(crawl: &CrawlDir, cfg: &Config, dry_run: bool) -> Result<Rebuilt> {
    let state = crawl.state_root();
    let mut parts: Vec<u32> = std::fs::read_dir(&state)
        .map(|es| {
            es.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix('p')?.parse().ok()
                })
                .collect()
        })
        .unwrap_or_default();
    parts.sort_unstable();
    let lists = std::fs::read_dir(crawl.fetchlist(0, 0).parent().expect("has a parent"))
        .map(|es| es.flatten().count() as u32)
        .unwrap_or(0);
    let partitions = parts.last().map_or(lists, |&p| (p + 1).max(lists));
    if partitions == 0 || parts.len() as u32 != partitions {
        return Err(Error::corrupt(
            &state,
            0,
            format!(
                "cannot tell the crawl's partition count: state/ holds {} partition \
                 directories, numbered up to {:?}; restore manifest.json from a copy",
                parts.len(),
                parts.last()
            ),
        ));
    }
    let mut kinds = std::collections::BTreeSet::new();
    for p in 0..partitions {
        let kind = crawl.state_dir(p).join("frontier").join("kind");
        if let Ok(k) = std::fs::read_to_string(&kind) {
            kinds.insert(k.trim().to_string());
        }
    }
    let mut warnings = vec![String::from(
        "[canon] is taken from crawl.toml as it is now: nothing else on disk records it; if it \
         was changed since the crawl was created, put it back and run the repair again",
    )];
    let mut fixed = cfg.clone();
    fixed.crawl.partitions = partitions;
    let queue = match kinds.len() {
        0 => {
            warnings.push(format!(
                "no frontier records its queue kind yet: [prioritize] queue taken from \
                 crawl.toml ({})",
                cfg.prioritize.queue.name()
            ));
            cfg.prioritize.queue
        }
        1 => {
            let k = kinds.iter().next().expect("one");
            serde_json::from_value(serde_json::Value::String(k.clone())).map_err(|_| {
                Error::corrupt(&state, 0, format!("a frontier of unknown queue kind '{k}'"))
            })?
        }
        _ => {
            return Err(Error::corrupt(
                &state,
                0,
                format!("the frontiers are of different queue kinds ({kinds:?}); restore manifest.json from a copy"),
            ))
        }
    };
    fixed.prioritize.queue = queue;
    if !dry_run {
        write(crawl, &fixed)?;
    }
    Ok(Rebuilt {
        partitions,
        queue: queue.name().into(),
        warnings,
    })
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
        if predates_manifests(crawl) {
            return Ok(());
        }
        return Err(missing(crawl));
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
