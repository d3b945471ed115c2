//! `crawl.toml`: the configuration of one crawl, every section of it.
//!
//! The configuration sits below the crawl directory and the stages (docs/architecture.md,
//! "Layers"): no stage owns a section, so any layer above can read any section, and a value is
//! parsed and checked once, here, and kept parsed.
//!
//! - [`Config`] is the whole file; [`CrawlSection`] and [`SortSection`] are its own small sections.
//! - [`fetch`]: `[fetch]`: politeness, limits against hostile servers, WARC output.
//! - [`parse`]: `[parse]`: what the parse takes from pages besides links.
//! - [`scope`]: `[scope]` (which discovered URLs the crawl keeps, with its compiled rules) and
//!   `[split]` (the CLOCK cache).
//! - [`prioritize`]: `[prioritize]`: the frontier queue, fetch budget, host caps, recrawl.
//! - [`cycle`]: `[cycle]` and `[slurm]`: how the executors run a cycle.
//! - [`bytesize`]: sizes written as `"64 MiB"`.
//!
//! Every section has defaults, unknown keys are refused (a typo must not silently fall back to a
//! default), and values are checked when the file is loaded, with messages that name the file and
//! the key. `pipeline/crawl.toml` is the commented example with every option.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub mod bytesize;
pub mod cycle;
pub mod fetch;
pub mod parse;
pub mod prioritize;
pub mod scope;

pub use bytesize::ByteSize;
pub use cycle::{CycleSection, SlurmSection};
pub use fetch::FetchSection;
pub use parse::ParseSection;
pub use prioritize::{PrioritizeSection, QueueKind};
pub use scope::{ScopeSection, SplitSection};

use crate::error::{Error, IoContext, Result};
use crate::keys::CanonConfig;
use crate::resolve::{ResolveConfig, Resolver};

/// Most partitions a crawl may have (partition directories are named `p0000`..`p9999`).
pub const MAX_PARTITIONS: u32 = 10_000;

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[crawl]`: identity and partitioning.
    #[serde(default)]
    pub crawl: CrawlSection,
    /// `[canon]`: URL canonicalization rules.
    #[serde(default)]
    pub canon: CanonConfig,
    /// `[sort]`: memory for external sorts.
    #[serde(default)]
    pub sort: SortSection,
    /// `[resolve]`: host name overrides (hosts files, `HOST:PORT:ADDR` entries).
    #[serde(default)]
    pub resolve: ResolveConfig,
    /// `[fetch]`: politeness, limits, the SSRF guard, WARC output.
    #[serde(default)]
    pub fetch: FetchSection,
    /// `[parse]`: what the parse takes from pages besides links (archive mode's requisites).
    #[serde(default)]
    pub parse: ParseSection,
    /// `[scope]`: which discovered URLs the crawl keeps; crawler-trap defences.
    #[serde(default)]
    pub scope: ScopeSection,
    /// `[split]`: the split stage's CLOCK cache.
    #[serde(default)]
    pub split: SplitSection,
    /// `[prioritize]`: the frontier queue, fetch budget, host cap, recrawl policy.
    #[serde(default)]
    pub prioritize: PrioritizeSection,
    /// `[cycle]`: how `dragnet cycle` runs the stages on this machine.
    #[serde(default)]
    pub cycle: CycleSection,
    /// `[slurm]`: how `dragnet slurm submit` runs cycles as Slurm job arrays.
    #[serde(default)]
    pub slurm: SlurmSection,
}

/// `[crawl]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlSection {
    /// A name for logs and metrics.
    pub name: String,
    /// Logical partitions M, fixed when the crawl is created (host key -> partition).
    pub partitions: u32,
}

impl Default for CrawlSection {
    fn default() -> Self {
        CrawlSection {
            name: "crawl".into(),
            partitions: 256,
        }
    }
}

/// The largest configuration file read (`crawl.toml`, `--config`); a real one is a few KiB, and
/// even one listing thousands of `[resolve] entries` or scope rules stays far below this.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The smallest sort budget [`Config::share`] gives a stage.
pub const MIN_SHARE: u64 = 4 << 20;

/// `[sort]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SortSection {
    /// Buffer memory the sorts of one process may use before they spill to disk: a stage run
    /// alone (`dragnet parse`, a Slurm task) has all of it; the local executor divides it among
    /// the stages it runs at once ([`Config::share`]).
    pub memory_budget: ByteSize,
}

impl Default for SortSection {
    fn default() -> Self {
        SortSection {
            memory_budget: ByteSize(256 << 20),
        }
    }
}

impl Config {
    /// The configuration for one of `tasks` stages that run side by side in one process: each
    /// gets an equal share of `[sort] memory_budget` (at least [`MIN_SHARE`]), so the process's
    /// sort buffers stay within the budget whatever `[cycle] fetch_partitions` is.
    pub fn share(&self, tasks: usize) -> Config {
        let mut c = self.clone();
        let tasks = u64::try_from(tasks.max(1)).unwrap_or(u64::MAX);
        c.sort.memory_budget = ByteSize((self.sort.memory_budget.0 / tasks).max(MIN_SHARE));
        c
    }

    /// Reads and checks a configuration file (at most [`MAX_CONFIG_BYTES`] of it: a larger
    /// file, or `/dev/zero`, is a configuration error, not a process filling memory).
    pub fn load(path: &Path) -> Result<Config> {
        use std::io::Read;
        let f = std::fs::File::open(path).ctx("read", path)?;
        let mut text = String::new();
        f.take(MAX_CONFIG_BYTES + 1)
            .read_to_string(&mut text)
            .ctx("read", path)?;
        if text.len() as u64 > MAX_CONFIG_BYTES {
            return Err(Error::config(
                path,
                format!(
                    "larger than {}: not a configuration file (see pipeline/crawl.toml)",
                    ByteSize(MAX_CONFIG_BYTES)
                ),
            ));
        }
        Config::parse(&text, path)
    }

    /// Parses and checks configuration text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let c: Config = toml::from_str(text).map_err(|e| Error::config(path, e.to_string()))?;
        c.validate(path)?;
        Ok(c)
    }

    /// Checks values; errors name the key and the allowed range.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let p = self.crawl.partitions;
        if p == 0 || p > MAX_PARTITIONS {
            return Err(Error::config(
                path,
                format!("crawl.partitions = {p}: must be between 1 and {MAX_PARTITIONS}"),
            ));
        }
        if self.sort.memory_budget.0 < 1 << 20 {
            return Err(Error::config(
                path,
                format!(
                    "sort.memory_budget = {}: must be at least 1 MiB",
                    self.sort.memory_budget
                ),
            ));
        }
        // Sort buffers are allocated up front: a budget past the machine's memory would abort
        // the process (leaving its lock behind) instead of being refused here.
        if let Some(ram) = crate::util::physical_memory() {
            if self.sort.memory_budget.0 > ram {
                return Err(Error::config(
                    path,
                    format!(
                        "sort.memory_budget = {}: more than this machine's {} of memory; \
                         give at most a fraction of it (default 256 MiB)",
                        self.sort.memory_budget,
                        ByteSize(ram)
                    ),
                ));
            }
        }
        let mut r = Resolver::default();
        for (i, e) in self.resolve.entries.iter().enumerate() {
            r.add_entry(e).map_err(|why| {
                Error::config(path, format!("resolve.entries[{i}] = {e:?}: {why}; write HOST:PORT:ADDR, e.g. \"a.test:80:127.0.0.1\""))
            })?;
        }
        self.fetch.validate(path)?;
        self.scope.validate(path)?;
        self.split.validate(path)?;
        self.prioritize.validate(path)?;
        self.cycle.validate(path)?;
        self.slurm.validate(path)?;
        if self.canon.max_url_len < 16 {
            return Err(Error::config(
                path,
                "canon.max_url_len must be at least 16".to_string(),
            ));
        }
        Ok(())
    }

    /// The configuration as TOML, as `dragnet init` writes it into the crawl directory.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(ByteSize::parse("256 MiB"), Some(ByteSize(256 << 20)));
        assert_eq!(ByteSize::parse("1GiB"), Some(ByteSize(1 << 30)));
        assert_eq!(ByteSize::parse("64k"), Some(ByteSize(64 << 10)));
        assert_eq!(ByteSize::parse("12"), Some(ByteSize(12)));
        assert_eq!(ByteSize::parse("3 parsecs"), None);
        assert_eq!(ByteSize(256 << 20).to_string(), "256 MiB");
    }

    #[test]
    fn defaults_round_trip_and_typos_fail() {
        let c = Config::default();
        let back = Config::parse(&c.to_toml(), Path::new("x.toml")).unwrap();
        assert_eq!(back, c);
        let err = Config::parse("[crawl]\npartitons = 4\n", Path::new("crawl.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("crawl.toml") && msg.contains("partitons"),
            "{msg}"
        );
        let err = Config::parse("[crawl]\npartitions = 0\n", Path::new("crawl.toml")).unwrap_err();
        assert!(err.to_string().contains("between 1 and"), "{err}");
        let err =
            Config::parse("[fetch]\nmax_redirects = 2\n", Path::new("crawl.toml")).unwrap_err();
        assert!(err.to_string().contains("fetch.max_redirects"), "{err}");
        let err =
            Config::parse("[fetch]\nuser_agent = \"\"\n", Path::new("crawl.toml")).unwrap_err();
        assert!(err.to_string().contains("fetch.user_agent"), "{err}");
        let c = Config::parse("[sort]\nmemory_budget = \"64 MiB\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.sort.memory_budget, ByteSize(64 << 20));
        for bad in ["-0.5", "17.0", "nan"] {
            let toml = format!("[prioritize]\nreserve_factor = {bad}\n");
            let err = Config::parse(&toml, Path::new("crawl.toml")).unwrap_err();
            assert!(err.to_string().contains("reserve_factor"), "{bad}: {err}");
        }
    }

    /// A sort budget past the machine's memory is a configuration error, not an abort.
    #[test]
    fn stages_run_side_by_side_share_the_sort_budget() {
        let c = Config::default();
        assert_eq!(c.share(1).sort.memory_budget, c.sort.memory_budget);
        assert_eq!(c.share(8).sort.memory_budget, ByteSize(32 << 20));
        assert_eq!(c.share(0).sort.memory_budget, c.sort.memory_budget);
        assert_eq!(c.share(1000).sort.memory_budget, ByteSize(MIN_SHARE));
        assert_eq!(c.share(8).fetch, c.fetch, "only the budget changes");
    }

    /// A configuration file is read only up to its limit: `/dev/zero` is refused at once.
    #[test]
    fn an_endless_configuration_file_is_refused() {
        if !Path::new("/dev/zero").exists() {
            return;
        }
        let e = Config::load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("larger than 16 MiB"), "{e}");
    }

    #[test]
    fn a_memory_budget_past_the_machine_is_refused() {
        let e =
            Config::parse("[sort]\nmemory_budget = \"64 TiB\"\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("sort.memory_budget = 64 TiB"), "{e}");
        assert!(e.to_string().contains("machine's"), "{e}");
    }
}
