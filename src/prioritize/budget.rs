//! The lifetime budgets of the selection: per host (`max_urls_per_host_total`, a merge-join
//! with `state/pNNNN/host_budget.C.run`) and per registered domain
//! (`max_urls_per_domain_total`, `state/pNNNN/domain_budget.C.run`), each written anew for the
//! next cycle.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::CrawlDir;
use crate::error::{Error, Result};
use crate::records::{next_budget, FetchItem, HostBudgets};
use crate::run::{self, Cursor, RunReader, RunWriter, Schema};

/// Selected URLs: (host key, fingerprint, the fetch list's item).
type Selection = Vec<(u64, u64, FetchItem)>;

/// The lifetime per-host budget (`max_urls_per_host_total`): a merge-join of this cycle's
/// selection, by host, with the counts so far (`state/pNNNN/host_budget.C.run`), which it writes
/// anew for the next cycle. A host's URLs beyond its budget are dropped, highest priority kept.
/// Returns the selection sorted by host key, then fingerprint.
pub(super) fn host_budget(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
    mut items: Selection,
    counts: &mut BTreeMap<String, u64>,
    read: &mut Vec<PathBuf>,
) -> Result<Selection> {
    let total = cfg.prioritize.max_urls_per_host_total;
    // By host, the listed URLs before the reserve's, highest priority first (the ones kept if
    // the budget cuts).
    items.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.2.reserve.cmp(&b.2.reserve))
            .then(b.2.priority.total_cmp(&a.2.priority))
            .then(a.1.cmp(&b.1))
    });
    if total > 0 {
        let old = crawl.latest_state(p, "host_budget", cycle);
        let mut spent = HostBudgets::open(old.as_ref().map(|(_, path)| path.as_path()))?;
        read.extend(old.iter().map(|(_, path)| path.clone()));
        let mut followed = Followed::open(crawl, cfg, cycle, p, read)?;
        let new_path = crawl.state_file(p, "host_budget", cycle + 1);
        let mut w = RunWriter::create(&new_path, Schema::HOST_BUDGET)?;
        let (kept, dropped) = cap_hosts(items, total, &mut spent, &mut followed, &mut w)?;
        spent.rest(|h, n| w.push(&run::fp_key(h), &n.to_le_bytes()))?;
        w.finish()?;
        items = kept;
        if dropped > 0 {
            crate::util::count(counts, "host_budget_spent", dropped);
        }
        let reserve = items.iter().filter(|i| i.2.reserve).count() as u64;
        counts.insert(counter::SELECTED.into(), items.len() as u64 - reserve);
        if reserve > 0 {
            counts.insert(counter::RESERVE.into(), reserve);
        } else {
            counts.remove(counter::RESERVE);
        }
    }
    items.sort_unstable_by_key(|&(h, fp, _)| (h, fp));
    Ok(items)
}

/// Keeps at most `total` URLs of each host of `items` (sorted by host, listed before reserve,
/// highest priority first) over its lifetime: what `spent` says it had and what the fetch
/// `followed` count against it. Each host's new count goes to `w` (with those of the hosts
/// `spent` lists before it). Reserve URLs are kept within what the listed ones leave but not
/// charged: most return to the frontier unfetched, and the fetch charges those it fetches (as
/// `followed`). Returns the URLs kept and how many were dropped.
fn cap_hosts(
    items: Selection,
    total: u64,
    spent: &mut HostBudgets,
    followed: &mut Followed,
    w: &mut RunWriter,
) -> Result<(Selection, u64)> {
    let mut kept = Vec::with_capacity(items.len());
    let mut dropped = 0u64;
    let mut it = items.into_iter().peekable();
    while let Some(first) = it.next() {
        let host = first.0;
        let spent = spent.of(host, |h, n| w.push(&run::fp_key(h), &n.to_le_bytes()))?;
        let mut left = total.saturating_sub(spent.saturating_add(followed.of(host)?));
        let mut taken = 0u64;
        for item in std::iter::once(first).chain(std::iter::from_fn(|| it.next_if(|x| x.0 == host)))
        {
            if left > 0 {
                left -= 1;
                taken += u64::from(!item.2.reserve);
                kept.push(item);
            } else {
                dropped += 1;
            }
        }
        w.push(&run::fp_key(host), &(spent + taken).to_le_bytes())?;
    }
    Ok((kept, dropped))
}

/// URLs the fetch followed within its runs count against the budget too: the host table this
/// cycle's fetch wrote carries them per host (sorted by host key as well).
struct Followed {
    /// The host table and whether it sits on a record; `None` without in-run following.
    hosts: Option<(RunReader, bool)>,
}

impl Followed {
    /// The host table of partition `p` that the fetch of `cycle` wrote, if the fetch follows
    /// links (`[fetch] follow_per_host`); added to `read`.
    fn open(
        crawl: &CrawlDir,
        cfg: &Config,
        cycle: u32,
        p: u32,
        read: &mut Vec<PathBuf>,
    ) -> Result<Followed> {
        let hosts_path = crawl.state_file(p, "hosts", cycle + 1);
        let hosts = if cfg.fetch.follow_per_host > 0 && hosts_path.exists() {
            if !read.contains(&hosts_path) {
                read.push(hosts_path.clone());
            }
            let mut r = RunReader::open_expect(&hosts_path, Schema::HOSTS)?;
            let valid = r.advance()?;
            Some((r, valid))
        } else {
            None
        };
        Ok(Followed { hosts })
    }

    /// The URLs the fetch followed on `host` (hosts asked for in ascending order).
    fn of(&mut self, host: u64) -> Result<u64> {
        let Some((r, valid)) = self.hosts.as_mut() else {
            return Ok(0);
        };
        while *valid {
            let k = run::key_u64(r.key());
            if k > host {
                break;
            }
            let n = if k == host {
                crate::records::HostRecord::decode(r.payload())
                    .map_err(|e| Error::corrupt(r.path(), 0, format!("host record {k:016x}: {e}")))?
                    .followed
            } else {
                0
            };
            *valid = r.advance()?;
            if k == host {
                return Ok(n);
            }
        }
        Ok(0)
    }
}

/// The lifetime per-domain budget (`max_urls_per_domain_total`), per partition: the counts so
/// far (`state/pNNNN/domain_budget.C.run`, one entry per registered domain this partition has
/// listed URLs of, read whole: 16 bytes a domain) less this cycle's selection, highest priority
/// kept; written anew for the next cycle. `items` come and go sorted by host key, then
/// fingerprint.
pub(super) fn domain_budget(
    crawl: &CrawlDir,
    cfg: &Config,
    cycle: u32,
    p: u32,
    items: Selection,
    counts: &mut BTreeMap<String, u64>,
    read: &mut Vec<PathBuf>,
) -> Result<Selection> {
    let total = cfg.prioritize.max_urls_per_domain_total;
    if total == 0 {
        return Ok(items);
    }
    let mut spent: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    if let Some((_, path)) = crawl.latest_state(p, "domain_budget", cycle) {
        let mut r = Some(RunReader::open_expect(&path, Schema::DOMAIN_BUDGET)?);
        while let Some((d, n)) = next_budget(r.as_mut())? {
            spent.insert(d, n);
        }
        read.push(path);
    }
    let mut by_domain: Vec<(u64, (u64, u64, FetchItem))> = items
        .into_iter()
        .map(|it| (crate::keys::domain_key(crate::keys::host_of(&it.2.url)), it))
        .collect();
    // By domain, highest priority first within one.
    by_domain.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1 .2.priority.total_cmp(&a.1 .2.priority))
            .then((a.1 .0, a.1 .1).cmp(&(b.1 .0, b.1 .1)))
    });
    let mut kept = Vec::with_capacity(by_domain.len());
    let mut dropped = 0u64;
    for (d, item) in by_domain {
        let n = spent.entry(d).or_insert(0);
        if *n < total {
            *n += 1;
            kept.push(item);
        } else {
            dropped += 1;
        }
    }
    let mut w = RunWriter::create(
        &crawl.state_file(p, "domain_budget", cycle + 1),
        Schema::DOMAIN_BUDGET,
    )?;
    let mut all: Vec<(u64, u64)> = spent.into_iter().collect();
    all.sort_unstable();
    for (d, n) in all {
        w.push(&run::fp_key(d), &n.to_le_bytes())?;
    }
    w.finish()?;
    if dropped > 0 {
        crate::util::count(counts, "domain_budget_spent", dropped);
    }
    counts.insert(counter::SELECTED.into(), kept.len() as u64);
    kept.sort_unstable_by_key(|&(h, fp, _)| (h, fp));
    Ok(kept)
}
