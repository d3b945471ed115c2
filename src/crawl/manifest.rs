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
//! It also records the WARC compression the crawl was created with (`[fetch] warc_compression`).
//! That one is not fixed (a crawl may switch: every WARC file says what it is by its name and
//! first bytes), but when crawl.toml does not set it, the manifest's value is used, so a change
//! of the default in a newer build does not change an existing crawl's files. A crawl whose
//! manifest predates the field (or that predates manifests) was created when `zstd` was the
//! default, and keeps `zstd` unless crawl.toml says otherwise ([`warc_compression`]).
//!
//! The manifest is required: a crawl without one is refused (exit 3, naming it) unless its layout
//! proves it older than manifests (its init marker is dated before they came in,
//! [`MANIFESTS_SINCE`]); such a crawl is not checked. A lost manifest is rebuilt by `dragnet
//! repair` from what the crawl holds ([`rebuild`]): without it, a `crawl.toml` edited to another
//! partition count would silently strand every seen URL.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::layout::CrawlDir;
use crate::config::Config;
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
    /// `[fetch] warc_compression` at creation; absent in manifests written before it was
    /// recorded (those crawls were made with `zstd`, [`WARC_BEFORE_RECORDED`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_compression: Option<String>,
    checksum: String,
}

/// The WARC compression of a crawl whose manifest does not record one: the default of the builds
/// that wrote such manifests (and of crawls older than manifests).
pub const WARC_BEFORE_RECORDED: &str = "zstd";

impl Manifest {
    /// The fixed settings of `cfg`.
    pub fn of(cfg: &Config) -> Manifest {
        let mut m = Manifest {
            magic: MAGIC.into(),
            version: VERSION,
            partitions: cfg.crawl.partitions,
            queue: serde_json::to_value(cfg.prioritize.queue).expect("queue kind serializes"),
            canon: serde_json::to_value(&cfg.canon).expect("[canon] serializes"),
            warc_compression: Some(cfg.fetch.warc_compression.as_str().to_owned()),
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
        let mut cfg = Config::load(&path)?;
        let fixed = check_manifest(&crawl, &cfg, &path)?;
        if !cfg.fetch.warc_compression.is_explicit() {
            cfg.fetch.warc_compression = warc_compression(fixed.as_ref());
        }
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
    if !cfg.fetch.warc_compression.is_explicit() {
        // Not in crawl.toml: what the crawl's newest WARC files are, else the old default.
        let newest = crawl.cycles().into_iter().rev().find_map(|c| {
            std::fs::read_dir(crawl.warc_dir(c))
                .ok()?
                .flatten()
                .find_map(|e| crate::warc::Compression::from_name(&e.file_name().to_string_lossy()))
        });
        let name = newest.map_or(WARC_BEFORE_RECORDED, |c| c.name());
        warnings.push(format!(
            "[fetch] warc_compression is not in crawl.toml: recorded as {name} ({})",
            if newest.is_some() {
                "what the newest WARC files are"
            } else {
                "no WARC file tells; the default of crawls made before it was recorded"
            }
        ));
        fixed.fetch.warc_compression = crate::config::fetch::WarcCompression::implied(name);
    }
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

/// The WARC compression of a crawl whose crawl.toml does not set one, from its manifest
/// (`None`: a crawl older than manifests): what the manifest recorded at `init`, or
/// [`WARC_BEFORE_RECORDED`] when it predates the field.
pub fn warc_compression(manifest: Option<&Manifest>) -> crate::config::fetch::WarcCompression {
    let name = manifest
        .and_then(|m| m.warc_compression.as_deref())
        .unwrap_or(WARC_BEFORE_RECORDED);
    crate::config::fetch::WarcCompression::implied(name)
}

/// Checks `cfg` (read from `config_path`) against the crawl's manifest, if it has one.
pub fn check(crawl: &CrawlDir, cfg: &Config, config_path: &Path) -> Result<()> {
    check_manifest(crawl, cfg, config_path).map(drop)
}

/// [`check`], returning the manifest (`None` for a crawl older than manifests).
fn check_manifest(crawl: &CrawlDir, cfg: &Config, config_path: &Path) -> Result<Option<Manifest>> {
    let path = crawl.manifest_path();
    let Some(fixed) = super::done::read_marker::<Manifest>(&path)? else {
        if predates_manifests(crawl) {
            return Ok(None);
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
    Ok(Some(fixed))
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
            crate::config::prioritize::QueueKind::Cbt => {
                crate::config::prioritize::QueueKind::Quickheap
            }
            crate::config::prioritize::QueueKind::Quickheap => {
                crate::config::prioritize::QueueKind::Cbt
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

    /// A crawl directory with a manifest of `cfg` (as `init` writes it, or as builds before the
    /// WARC compression was recorded wrote it) and a crawl.toml of `toml`.
    fn crawl_with(t: &Path, cfg: &Config, recorded: bool, toml: &str) -> PathBuf {
        let crawl = CrawlDir::new(t);
        let mut m = Manifest::of(cfg);
        if !recorded {
            m.warc_compression = None;
            m.checksum = m.body_checksum();
        }
        let text = serde_json::to_string_pretty(&m).unwrap();
        std::fs::write(crawl.manifest_path(), text).unwrap();
        std::fs::write(crawl.config_path(), toml).unwrap();
        t.to_path_buf()
    }

    #[test]
    fn a_crawl_keeps_the_warc_compression_it_was_created_with() {
        let base = "[crawl]\npartitions = 4\n";
        let mut cfg = Config::default();
        cfg.crawl.partitions = 4;
        // New crawls default to gzip, and their manifest says so.
        assert_eq!(cfg.fetch.warc_compression.as_str(), "gzip");
        assert_eq!(Manifest::of(&cfg).warc_compression.as_deref(), Some("gzip"));
        let open = |dir: &Path| CrawlDir::open(dir).unwrap().1.fetch.warc_compression;
        for (recorded, made_with, toml, want) in [
            // A manifest that predates the field: the old default, zstd...
            (false, "zstd", String::new(), "zstd"),
            // ... unless crawl.toml says otherwise.
            (
                false,
                "zstd",
                "[fetch]\nwarc_compression = \"gzip\"\n".into(),
                "gzip",
            ),
            // A recorded one is kept whatever the default is now.
            (true, "zstd", String::new(), "zstd"),
            (true, "gzip", String::new(), "gzip"),
            (true, "none", String::new(), "none"),
            // crawl.toml may still switch a crawl (files say what they are).
            (
                true,
                "gzip",
                "[fetch]\nwarc_compression = \"zstd\"\n".into(),
                "zstd",
            ),
        ] {
            let t = tempfile::tempdir().unwrap();
            let mut c = cfg.clone();
            c.fetch.warc_compression = made_with.into();
            let dir = crawl_with(t.path(), &c, recorded, &format!("{base}{toml}"));
            assert_eq!(
                open(&dir).as_str(),
                want,
                "recorded {recorded}, made with {made_with}, crawl.toml {toml:?}"
            );
        }
        // An old manifest still passes its checksum (the field is left out, not null).
        let t = tempfile::tempdir().unwrap();
        let dir = crawl_with(t.path(), &cfg, false, base);
        let text = std::fs::read_to_string(CrawlDir::new(&dir).manifest_path()).unwrap();
        assert!(!text.contains("warc_compression"), "{text}");
        // And crawl.toml as init writes it (every key) is explicit.
        let parsed = Config::parse(&cfg.to_toml(), Path::new("crawl.toml")).unwrap();
        assert!(parsed.fetch.warc_compression.is_explicit());
        assert!(!Config::default().fetch.warc_compression.is_explicit());
    }
}
