//! The top-hosts pass: pages per host over the newest cycle's fetch results.

use std::collections::HashMap;

use super::{HostCount, TopHosts, MAX_TRACKED_HOSTS, TOP_HOSTS};
use crate::crawl::CrawlDir;
use crate::error::{Error, Result};
use crate::records::FetchResult;
use crate::run::{RunReader, Schema};

/// Counts fetched pages (results with an HTTP answer) per host in the fetch results of `parts`
/// of cycle `c`, keeping at most [`MAX_TRACKED_HOSTS`] hosts.
pub(super) fn top_hosts(crawl: &CrawlDir, c: u32, parts: &[u32]) -> Result<TopHosts> {
    let mut counter = HostCounter::new(MAX_TRACKED_HOSTS);
    for &p in parts {
        let path = crawl.fetched(c, p);
        if !path.exists() {
            continue;
        }
        let mut r = RunReader::open_expect(&path, Schema::FETCHED)?;
        while let Some((_, payload)) = r.next_record()? {
            let fr = FetchResult::decode(payload)
                .map_err(|e| Error::corrupt(&path, 0, format!("fetch result: {e}")))?;
            if fr.status > 0 {
                counter.add(crate::keys::host_of(&fr.url));
            }
        }
    }
    Ok(counter.finish(c, parts.len() as u32, TOP_HOSTS))
}

/// Pages per host with bounded memory: exact up to `cap` hosts, then the Misra–Gries summary
/// (each new host past the cap takes one page off every tracked host, and hosts at 0 leave), so
/// a host's count is at most `rounds` below its truth and any host with more pages stays.
pub(super) struct HostCounter {
    pub(super) counts: HashMap<String, u64>,
    cap: usize,
    rounds: u64,
    pages: u64,
}

impl HostCounter {
    pub(super) fn new(cap: usize) -> HostCounter {
        HostCounter {
            counts: HashMap::new(),
            cap,
            rounds: 0,
            pages: 0,
        }
    }

    pub(super) fn add(&mut self, host: &str) {
        self.pages += 1;
        if let Some(n) = self.counts.get_mut(host) {
            *n += 1;
        } else if self.counts.len() < self.cap {
            self.counts.insert(host.to_owned(), 1);
        } else {
            self.rounds += 1;
            self.counts.retain(|_, n| {
                *n -= 1;
                *n > 0
            });
        }
    }

    pub(super) fn finish(self, cycle: u32, partitions: u32, k: usize) -> TopHosts {
        let approximate = self.rounds > 0;
        let distinct_hosts = (!approximate).then_some(self.counts.len() as u64);
        let mut hosts: Vec<HostCount> = self
            .counts
            .into_iter()
            .map(|(host, pages)| HostCount { host, pages })
            .collect();
        hosts.sort_unstable_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.host.cmp(&b.host)));
        hosts.truncate(k);
        TopHosts {
            cycle,
            partitions,
            pages: self.pages,
            distinct_hosts,
            approximate,
            error_bound: self.rounds,
            hosts,
        }
    }
}
