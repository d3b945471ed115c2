//! `[prioritize]` in `crawl.toml`: the frontier queue, the per-cycle fetch budget and host cap,
//! and the recrawl policy.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::queue::pager::PagerOptions;

/// Which disk queue holds a partition's frontier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    /// The quickheap (Figs. 4 and 5 of the seed paper): amortized, the fewest block I/Os.
    Quickheap,
    /// The CBT of R-blocks (Figs. 1 and 2): O(log(N/R)) block I/Os per R items, worst case.
    Cbt,
}

impl QueueKind {
    /// The name used in crawl.toml and in the frontier directory's `kind` file.
    pub fn name(self) -> &'static str {
        match self {
            QueueKind::Quickheap => "quickheap",
            QueueKind::Cbt => "cbt",
        }
    }
}

/// `[prioritize]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrioritizeSection {
    /// The frontier queue. Fixed once a partition's frontier exists.
    pub queue: QueueKind,
    /// R: entries per CBT node block, and entries extracted per step of prioritize.
    pub block: u32,
    /// T: independent CBT slices per partition (the paper's Table 1).
    pub slices: u32,
    /// RAM for each partition's queue frames, in MiB (its "in-memory head").
    pub queue_memory_mib: u32,
    /// URLs each partition may put into one cycle's fetch list.
    pub fetch_budget: u64,
    /// URLs one host may have in one cycle's fetch list (the rest wait in the frontier);
    /// the reserve's URLs count too.
    pub max_urls_per_host: u64,
    /// The reserve, as a multiple of `fetch_budget`: URLs listed beyond the budget (the next
    /// ones of the frontier, within `max_urls_per_host`), fetched only while the cycle's window
    /// is open and returned to the frontier if it closes first (`crate::fetch::window`). 0
    /// turns it off; so does `max_urls_per_domain_total` (a returned URL would be charged to its
    /// domain's budget twice).
    pub reserve_factor: f64,
    /// URLs one host may have in fetch lists over the whole crawl (0: no limit). The last
    /// defence against a crawler trap that mints URLs faster than the other rules catch them:
    /// once a host has spent it, its URLs are dropped from the frontier as they surface.
    pub max_urls_per_host_total: u64,
    /// The same per registered domain (Public Suffix List), counted per partition (0: none).
    /// A domain's hosts may live in several partitions (hosts, not domains, are partitioned),
    /// so the crawl as a whole puts at most `partitions` times this many of a domain's URLs in
    /// its fetch lists; what it bounds is a trap minting subdomains without end.
    pub max_urls_per_domain_total: u64,
    /// Attempts in a row without a usable answer (5xx, timeouts, robots.txt unreachable, the
    /// host failing) after which a URL is given up.
    pub max_attempts: u32,
    /// Recrawl fetched pages at all.
    pub recrawl: bool,
    /// Base recrawl interval in seconds for a page that changed at every fetch; a page that
    /// rarely changes waits longer (interval = base / observed change rate), within the bounds
    /// below.
    pub recrawl_after_secs: u64,
    /// Shortest recrawl interval, seconds.
    pub recrawl_min_secs: u64,
    /// Longest recrawl interval, seconds.
    pub recrawl_max_secs: u64,
}

impl Default for PrioritizeSection {
    fn default() -> Self {
        PrioritizeSection {
            queue: QueueKind::Quickheap,
            block: 1024,
            slices: 1,
            queue_memory_mib: 64,
            fetch_budget: 100_000,
            max_urls_per_host: 5_000,
            reserve_factor: 0.5,
            max_urls_per_host_total: 1_000_000,
            max_urls_per_domain_total: 0,
            max_attempts: 3,
            recrawl: true,
            recrawl_after_secs: 7 * 86_400,
            recrawl_min_secs: 86_400,
            recrawl_max_secs: 60 * 86_400,
        }
    }
}

impl PrioritizeSection {
    /// Checks values.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let bad = |what: String| Err(Error::config(path, what));
        if self.block == 0 || self.block > 1 << 20 {
            return bad(format!(
                "prioritize.block: {} must be between 1 and 1048576 (default 1024)",
                self.block
            ));
        }
        if self.slices == 0 || self.slices > 64 {
            return bad(format!(
                "prioritize.slices: {} must be between 1 and 64 (default 1)",
                self.slices
            ));
        }
        if self.queue_memory_mib == 0 {
            return bad("prioritize.queue_memory_mib must be at least 1 (default 64)".into());
        }
        if self.fetch_budget == 0 || self.max_urls_per_host == 0 {
            return bad(
                "prioritize.fetch_budget and prioritize.max_urls_per_host must be at least 1"
                    .into(),
            );
        }
        if !(0.0..=16.0).contains(&self.reserve_factor) {
            return bad(format!(
                "prioritize.reserve_factor: {} must be between 0 and 16 (default 0.5; 0 turns \
                 the reserve off)",
                self.reserve_factor
            ));
        }
        if self.max_attempts == 0 {
            return bad("prioritize.max_attempts must be at least 1 (default 3)".into());
        }
        if self.recrawl_min_secs > self.recrawl_max_secs {
            return bad(format!(
                "prioritize.recrawl_min_secs ({}) is larger than recrawl_max_secs ({})",
                self.recrawl_min_secs, self.recrawl_max_secs
            ));
        }
        Ok(())
    }

    /// URLs the reserve may list beyond `fetch_budget` (`reserve_factor`; none with a domain
    /// budget).
    pub fn reserve(&self) -> u64 {
        if self.max_urls_per_domain_total > 0 {
            return 0;
        }
        (self.fetch_budget as f64 * self.reserve_factor).ceil() as u64
    }

    /// The pager set-up for one queue file (or one CBT slice).
    pub fn pager(&self) -> PagerOptions {
        let page_size = 4096;
        let bytes = u64::from(self.queue_memory_mib) << 20;
        let per = bytes / u64::from(self.slices) / page_size as u64;
        PagerOptions {
            page_size,
            cache_pages: usize::try_from(per.max(16)).unwrap_or(usize::MAX),
            durable: true,
        }
    }

    /// Seconds until a page fetched `fetches` times, `changes` of them found changed, is due
    /// again: the base interval divided by the observed change rate (Laplace-smoothed, so a new
    /// page starts at the base), clamped to the bounds.
    pub fn recrawl_interval(&self, fetches: u32, changes: u32) -> u64 {
        let rate = (f64::from(changes) + 1.0) / (f64::from(fetches) + 1.0);
        let secs = (self.recrawl_after_secs as f64 / rate.min(1.0)).round() as u64;
        secs.clamp(self.recrawl_min_secs, self.recrawl_max_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_pages_wait_longer_within_bounds() {
        let s = PrioritizeSection::default();
        assert_eq!(s.recrawl_interval(0, 0), 7 * 86_400);
        assert_eq!(s.recrawl_interval(3, 3), 7 * 86_400);
        assert_eq!(s.recrawl_interval(3, 0), 28 * 86_400);
        assert_eq!(s.recrawl_interval(100, 0), 60 * 86_400);
        let fast = PrioritizeSection {
            recrawl_after_secs: 10,
            recrawl_min_secs: 20,
            ..PrioritizeSection::default()
        };
        assert_eq!(fast.recrawl_interval(1, 1), 20);
    }
}
