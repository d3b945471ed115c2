//! Runs every policy at every cache size on a stream, and renders the results as a markdown
//! table and a PNG chart.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::clock::Clock;
use crate::plot::{chart, policy_color, Series};
use crate::policies::{
    count_misses, infinite_misses, min_misses, next_uses, static_misses, Lru, Policy, RandomCache,
};
use crate::streams::{Stream, StreamStats};

/// Results of one stream.
#[derive(Debug, Clone, Serialize)]
pub struct StreamResult {
    /// Stream name.
    pub name: String,
    /// How the stream was made.
    pub description: String,
    /// Its statistics.
    pub stats: StreamStats,
    /// log2 of each cache size.
    pub log2_sizes: Vec<u32>,
    /// Misses per policy, one per size.
    pub misses: BTreeMap<Policy, Vec<u64>>,
    /// Nanoseconds per `Clock::check_insert` call, one per size (wall time of the whole run over
    /// the stream divided by its length; other work may share the machine).
    pub clock_ns_per_access: Vec<f64>,
    /// Seconds spent simulating this stream.
    pub seconds: f64,
}

impl StreamResult {
    /// Miss rate of `policy` at size index `i`.
    pub fn miss_rate(&self, policy: Policy, i: usize) -> f64 {
        self.misses[&policy][i] as f64 / self.stats.links.max(1) as f64
    }
}

/// Simulates every policy on `stream` for caches of 2^lo ... 2^hi entries, on `threads` threads.
/// RANDOM uses `seed` for its victims.
pub fn run(stream: &Stream, lo: u32, hi: u32, threads: usize, seed: u64) -> StreamResult {
    let start = Instant::now();
    let fps = &stream.fps[..];
    let log2_sizes: Vec<u32> = (lo..=hi).collect();
    let sizes: Vec<usize> = log2_sizes.iter().map(|&l| 1usize << l).collect();
    let (next, distinct) = next_uses(fps);
    let mut misses: BTreeMap<Policy, Vec<u64>> = BTreeMap::new();
    let stat = static_misses(fps, &sizes);
    let inf = infinite_misses(fps);
    debug_assert_eq!(inf, distinct);
    let cold = stat
        .iter()
        .zip(&sizes)
        .map(|(&m, &k)| m + (k as u64).min(inf))
        .collect();
    misses.insert(Policy::Static, stat);
    misses.insert(Policy::StaticCold, cold);
    misses.insert(Policy::Infinite, vec![inf; sizes.len()]);
    let online = [Policy::Min, Policy::Random, Policy::Lru, Policy::Clock];
    let jobs: Vec<(Policy, usize)> = online
        .iter()
        .flat_map(|&p| (0..sizes.len()).rev().map(move |i| (p, i)))
        .collect();
    let done: Mutex<Vec<(Policy, usize, u64, f64)>> = Mutex::new(Vec::new());
    let cursor = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let j = cursor.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, i)) = jobs.get(j) else { break };
                let k = sizes[i];
                // Caches are built before the clock starts: the time is per access only.
                let (m, t) = match p {
                    Policy::Min => {
                        let t = Instant::now();
                        (min_misses(&next, k), t)
                    }
                    Policy::Random => {
                        let mut c = RandomCache::new(k, seed);
                        let t = Instant::now();
                        (count_misses(&mut c, fps), t)
                    }
                    Policy::Lru => {
                        let mut c = Lru::new(k);
                        let t = Instant::now();
                        (count_misses(&mut c, fps), t)
                    }
                    Policy::Clock => {
                        let mut c = Clock::new(k);
                        let t = Instant::now();
                        (count_misses(&mut c, fps), t)
                    }
                    _ => unreachable!(),
                };
                let ns = t.elapsed().as_nanos() as f64 / fps.len().max(1) as f64;
                done.lock().unwrap().push((p, i, m, ns));
            });
        }
    });
    let mut clock_ns = vec![0.0; sizes.len()];
    for (p, i, m, ns) in done.into_inner().unwrap() {
        misses.entry(p).or_insert_with(|| vec![0; sizes.len()])[i] = m;
        if p == Policy::Clock {
            clock_ns[i] = ns;
        }
    }
    StreamResult {
        name: stream.name.clone(),
        description: stream.description.clone(),
        stats: stream.stats.clone(),
        log2_sizes,
        misses,
        clock_ns_per_access: clock_ns,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The markdown section of one stream: a statistics line and the miss-rate table (percent).
pub fn markdown(r: &StreamResult) -> String {
    let s = &r.stats;
    let mut out = format!(
        "### {}\n\n{}.\n\n{} links on {} pages ({:.1} links/page), {} distinct URLs; \
         same-host links {:.1} %, links repeating an earlier link of their page {:.1} %; \
         INFINITE (compulsory) miss rate {:.2} %.\n\n",
        r.name,
        r.description,
        s.links,
        s.pages,
        s.links_per_page(),
        s.distinct,
        100.0 * s.same_host_fraction(),
        100.0 * s.repeat_fraction(),
        100.0 * s.compulsory_miss_rate(),
    );
    out.push_str("| cache size |");
    for p in Policy::ALL {
        out.push_str(&format!(" {} |", p.name()));
    }
    out.push_str(" CLOCK ns/link |\n|---:|");
    for _ in Policy::ALL {
        out.push_str("---:|");
    }
    out.push_str("---:|\n");
    for (i, l) in r.log2_sizes.iter().enumerate() {
        out.push_str(&format!("| 2^{l} ({}) |", 1u64 << l));
        for p in Policy::ALL {
            out.push_str(&format!(" {:.2} |", 100.0 * r.miss_rate(p, i)));
        }
        out.push_str(&format!(" {:.1} |\n", r.clock_ns_per_access[i]));
    }
    out.push('\n');
    out
}

/// The PNG chart of one stream.
pub fn png(r: &StreamResult) -> std::io::Result<Vec<u8>> {
    let series: Vec<Series> = Policy::ALL
        .iter()
        .map(|&p| Series {
            label: p.name().to_string(),
            color: policy_color(p),
            points: r
                .log2_sizes
                .iter()
                .enumerate()
                .map(|(i, &l)| (f64::from(l), r.miss_rate(p, i)))
                .collect(),
        })
        .collect();
    let title = format!(
        "{}: MISS RATE, {} LINKS, {} DISTINCT",
        r.name, r.stats.links, r.stats.distinct
    );
    let lo = *r.log2_sizes.first().unwrap_or(&0);
    let hi = *r.log2_sizes.last().unwrap_or(&0);
    chart(&title, lo, hi, &series).to_png()
}
