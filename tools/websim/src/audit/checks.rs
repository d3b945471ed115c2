//! The audit's checks: the per-host walk (concurrent requests, delays, `Retry-After`, robots.txt
//! first, disallowed URLs) and the per-address one, over a [`Snapshot`], into a [`Report`]. The
//! definitions are in the module doc of [`crate::audit`].

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::{Report, Snapshot, Violation, ViolationCounts, MAX_EXAMPLES, ROBOTS};
use crate::site::Site;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn dur_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Collects examples, at most [`MAX_EXAMPLES`] per kind.
#[derive(Default)]
struct Found {
    counts: ViolationCounts,
    concurrent: Vec<Violation>,
    too_soon: Vec<Violation>,
    disallowed: Vec<Violation>,
    before_robots: Vec<Violation>,
    ignored_retry_after: Vec<Violation>,
    ip_concurrent: Vec<Violation>,
    ip_too_soon: Vec<Violation>,
}

fn keep(list: &mut Vec<Violation>, count: &mut u64, v: impl FnOnce() -> Violation) {
    *count += 1;
    if list.len() < MAX_EXAMPLES {
        list.push(v());
    }
}

/// The per-address checks (see the module docs): complete responses, grouped by the address of
/// the listener their connection came in on, in the order they started.
fn per_ip(snap: &Snapshot, limit: usize, delay: u64, found: &mut Found) {
    let ip_of: HashMap<u64, std::net::IpAddr> =
        snap.conns.iter().map(|c| (c.id, c.local.ip())).collect();
    let mut order: Vec<(std::net::IpAddr, usize)> = (0..snap.entries.len())
        .filter(|&i| snap.entries[i].complete)
        .filter_map(|i| ip_of.get(&snap.entries[i].conn).map(|&ip| (ip, i)))
        .collect();
    order.sort_by_key(|&(ip, i)| (ip, snap.entries[i].t_request, snap.entries[i].t_end));
    for run in order.chunk_by(|a, b| a.0 == b.0) {
        let ip = run[0].0.to_string();
        let mut active: Vec<usize> = Vec::new();
        let mut last_end: Option<u64> = None;
        for &(_, i) in run {
            let e = &snap.entries[i];
            active.retain(|&a| snap.entries[a].t_end > e.t_request);
            let what = || (snap.str(e.host).to_string(), snap.str(e.target).to_string());
            if active.len() >= limit {
                keep(
                    &mut found.ip_concurrent,
                    &mut found.counts.ip_concurrent,
                    || {
                        let (host, target) = what();
                        Violation::IpConcurrent {
                            ip: ip.clone(),
                            host,
                            target,
                            at_ms: ms(e.t_request),
                            in_flight: active.len() as u64,
                        }
                    },
                );
            } else if let Some(end) = last_end.filter(|_| active.is_empty()) {
                let gap = e.t_request.saturating_sub(end);
                if gap < delay {
                    keep(
                        &mut found.ip_too_soon,
                        &mut found.counts.ip_too_soon,
                        || {
                            let (host, target) = what();
                            Violation::IpTooSoon {
                                ip: ip.clone(),
                                host,
                                target,
                                at_ms: ms(e.t_request),
                                gap_ms: ms(gap),
                                delay_ms: ms(delay),
                            }
                        },
                    );
                }
            }
            active.push(i);
            last_end = Some(last_end.map_or(e.t_end, |t| t.max(e.t_end)));
        }
    }
}

/// Judges the requests in `snap` against `site`'s rules (see the module docs for definitions).
pub fn audit(snap: &Snapshot, site: &dyn Site) -> Report {
    let mut by_status = BTreeMap::new();
    let mut by_host_id: HashMap<u32, u64> = HashMap::new();
    let mut incomplete = 0;
    for e in &snap.entries {
        *by_status.entry(e.status).or_insert(0) += 1;
        *by_host_id.entry(e.host).or_insert(0) += 1;
        incomplete += u64::from(!e.complete);
    }
    let by_host = by_host_id
        .iter()
        .map(|(&h, &n)| (snap.str(h).to_string(), n))
        .collect();

    // Requests of each host in the order they started.
    let mut order: Vec<usize> = (0..snap.entries.len())
        .filter(|&i| snap.entries[i].host != 0)
        .collect();
    order.sort_by_key(|&i| {
        let e = &snap.entries[i];
        (e.host, e.t_request, e.t_end, e.conn)
    });

    let mut found = Found::default();
    let mut disallowed_cache: HashMap<(u32, u32, u32), bool> = HashMap::new();
    for run in order.chunk_by(|&a, &b| snap.entries[a].host == snap.entries[b].host) {
        per_host(snap, site, run, &mut found, &mut disallowed_cache);
    }

    if let Some((limit, delay)) = site.per_ip() {
        per_ip(snap, limit, dur_ns(delay), &mut found);
    }
    let counts = found.counts;
    let mut violations = found.concurrent;
    violations.extend(found.too_soon);
    violations.extend(found.disallowed);
    violations.extend(found.before_robots);
    violations.extend(found.ignored_retry_after);
    violations.extend(found.ip_concurrent);
    violations.extend(found.ip_too_soon);
    Report {
        elapsed_s: snap.elapsed_ns as f64 / 1e9,
        requests: snap.entries.len() as u64,
        incomplete,
        connections: snap.conns.len() as u64,
        rejected_connections: snap.rejected,
        by_status,
        by_host,
        polite: counts.total() == 0,
        counts,
        violations,
    }
}

/// The per-host checks (see the module docs) of `run`, one host's requests in the order they
/// started.
fn per_host(
    snap: &Snapshot,
    site: &dyn Site,
    run: &[usize],
    found: &mut Found,
    disallowed_cache: &mut HashMap<(u32, u32, u32), bool>,
) {
    let host = snap.str(snap.entries[run[0]].host);
    let mut walk = HostWalk {
        snap,
        host,
        min_delay: dur_ns(site.min_delay(host)),
        retry_after: site.retry_after(host).map(dur_ns),
        last_429: None,
        first_robots: run
            .iter()
            .map(|&i| &snap.entries[i])
            .find(|e| snap.str(e.target) == ROBOTS)
            .map(|e| e.t_request),
        active: Vec::new(),
        last: None,
    };
    for &i in run {
        walk.pace(i, found);
        if snap.str(snap.entries[i].target) == ROBOTS {
            continue;
        }
        walk.robots_rules(i, site, found, disallowed_cache);
    }
}

/// One host's requests walked in the order they started, with what the checks remember.
struct HostWalk<'s> {
    snap: &'s Snapshot,
    host: &'s str,
    min_delay: u64,
    retry_after: Option<u64>,
    /// The end of the latest 429 so far.
    last_429: Option<u64>,
    /// When the host's robots.txt was first requested.
    first_robots: Option<u64>,
    /// Requests still possibly in flight (indices), and the latest end so far.
    active: Vec<usize>,
    last: Option<usize>,
}

impl HostWalk<'_> {
    /// The pace checks of request `i` (concurrent requests, the host's delay, a `429`'s
    /// `Retry-After`), then counts it as started.
    fn pace(&mut self, i: usize, found: &mut Found) {
        let (snap, host) = (self.snap, self.host);
        let e = &snap.entries[i];
        let target = snap.str(e.target);
        self.active.retain(|&a| snap.entries[a].t_end > e.t_request);
        if let Some(&other) = self
            .active
            .iter()
            .find(|&&a| snap.entries[a].conn != e.conn)
        {
            let o = &snap.entries[other];
            keep(&mut found.concurrent, &mut found.counts.concurrent, || {
                Violation::Concurrent {
                    host: host.to_string(),
                    target: target.to_string(),
                    conn: e.conn,
                    at_ms: ms(e.t_request),
                    other_target: snap.str(o.target).to_string(),
                    other_conn: o.conn,
                }
            });
        } else if let Some(p) = self.last {
            let prev = &snap.entries[p];
            let gap = e.t_request.saturating_sub(prev.t_end);
            if self.active.is_empty() && gap < self.min_delay {
                keep(&mut found.too_soon, &mut found.counts.too_soon, || {
                    Violation::TooSoon {
                        host: host.to_string(),
                        target: target.to_string(),
                        conn: e.conn,
                        at_ms: ms(e.t_request),
                        previous_target: snap.str(prev.target).to_string(),
                        gap_ms: ms(gap),
                        min_delay_ms: ms(self.min_delay),
                    }
                });
            }
        }
        if let (Some(end), Some(ra)) = (self.last_429, self.retry_after) {
            let gap = e.t_request.saturating_sub(end);
            if e.t_request < end.saturating_add(ra) {
                keep(
                    &mut found.ignored_retry_after,
                    &mut found.counts.ignored_retry_after,
                    || Violation::IgnoredRetryAfter {
                        host: host.to_string(),
                        target: target.to_string(),
                        conn: e.conn,
                        at_ms: ms(e.t_request),
                        gap_ms: ms(gap),
                        retry_after_ms: ms(ra),
                    },
                );
            }
        }
        if e.status == 429 {
            self.last_429 = Some(self.last_429.map_or(e.t_end, |t| t.max(e.t_end)));
        }
        self.active.push(i);
        if self.last.is_none_or(|p| snap.entries[p].t_end <= e.t_end) {
            self.last = Some(i);
        }
    }

    /// The robots.txt checks of request `i` (not itself robots.txt): robots.txt requested
    /// before it, and it allowed for the request's agent.
    fn robots_rules(
        &self,
        i: usize,
        site: &dyn Site,
        found: &mut Found,
        disallowed_cache: &mut HashMap<(u32, u32, u32), bool>,
    ) {
        let (snap, host) = (self.snap, self.host);
        let e = &snap.entries[i];
        let target = snap.str(e.target);
        if self.first_robots.is_none_or(|r| e.t_request < r) {
            keep(
                &mut found.before_robots,
                &mut found.counts.before_robots,
                || Violation::BeforeRobots {
                    host: host.to_string(),
                    target: target.to_string(),
                    conn: e.conn,
                    at_ms: ms(e.t_request),
                },
            );
        }
        let agent = snap.str(e.agent);
        let disallowed = *disallowed_cache
            .entry((e.host, e.agent, e.target))
            .or_insert_with(|| site.disallowed(host, agent, target));
        if disallowed {
            keep(&mut found.disallowed, &mut found.counts.disallowed, || {
                Violation::Disallowed {
                    host: host.to_string(),
                    target: target.to_string(),
                    agent: agent.to_string(),
                    conn: e.conn,
                    at_ms: ms(e.t_request),
                }
            });
        }
    }
}
