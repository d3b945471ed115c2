//! In-run following: same-origin links of the pages a run fetches, new to the crawl, fetched in
//! the same run (docs/design.md §7), so a chain of "next" links costs one run, not one cycle
//! per link, and a host whose site is deep is not held back by the cycle barrier.
//!
//! - **New to the crawl** is checked against a Bloom filter of the partition's seen set as the
//!   cycle starts (`state/pNNNN/seen.N.run`, exactly the version the cycle's merge reads; a
//!   filter, not the set: about 10 bits per URL, capped by the stage's share of `[sort]
//!   memory_budget`), and against the fingerprints this run has already queued. A false positive
//!   only leaves a URL for the next cycle; the merge still deduplicates every link exactly.
//! - **The same links the parse stage finds**: they are the links the parse of the page emits
//!   (`crate::parse::inline`: the parse stage's extraction, run by the fetch as the page
//!   arrives), so a followed URL has the canonical form and fingerprint the parse gives it, and
//!   the merge meets the parse's link with the followed URL's result.
//! - **Limits**: same origin as the page (its robots.txt is known and applies), followed links
//!   only (not nofollow), the crawl's scope and depth, at most `[fetch] follow_per_host` per host
//!   and run and what is left of the host's lifetime budget (`max_urls_per_host_total`, which
//!   counts followed URLs too: the host record carries them, prioritize adds them in).
//! - **Refused by robots.txt**: a same-origin link the page's own robots.txt refuses gets its
//!   result (`robots`, no request) in this run, as the next cycle's fetch would give it with
//!   the same rules, so a site's disallowed links do not cost the crawl a cycle of their own
//!   (at most `follow_per_host` of them per host and run; the rest wait for the next cycle
//!   as before).

use std::path::PathBuf;
use std::sync::Mutex;

use url::Url;

use super::lock;
use crate::config::Config;
use crate::crawl::CrawlDir;
use crate::error::Result;
use crate::fetch::client::Fetched;
use crate::records::{FetchErrorKind, LinkRecord, Policy};
use crate::run::{self, Cursor, RunReader, Schema};
use crate::util::FpSet;

/// Bits of the Bloom filter per fingerprint of the seen set: with [`PROBES`] probes, about 1%
/// false positives.
const BITS_PER_KEY: u64 = 10;
/// Probes per fingerprint.
const PROBES: u32 = 7;
/// The smallest filter, in bits.
const MIN_BITS: u64 = 1 << 16;

/// Bytes of link records [`Found`] first makes room for (a page's new same-host links are a
/// few dozen records of ~100 bytes).
const FOUND_BYTES: usize = 4096;

/// The links of one page that [`Follow::consider`] kept: (fingerprint, where its encoded
/// record is in `bytes`).
#[derive(Default)]
pub(super) struct Found {
    bytes: Vec<u8>,
    links: Vec<(u64, usize, usize)>,
}

thread_local! {
    /// A worker thread's [`Found`] between pages: its buffers are made once per thread, not
    /// once per page.
    static SPARE_FOUND: std::cell::Cell<Found> = std::cell::Cell::new(Found::default());
}

impl Found {
    /// An empty `Found`, with the buffers this thread's last page gave back ([`Found::recycle`]).
    pub(super) fn take() -> Found {
        SPARE_FOUND.with(|s| s.take())
    }

    /// Gives the buffers back for the thread's next page, emptied; a page's that grew past
    /// [`FOUND_BYTES`] times four is let go, so one page of links does not pin its size.
    pub(super) fn recycle(mut self) {
        if self.bytes.capacity() > 4 * FOUND_BYTES {
            return;
        }
        self.bytes.clear();
        self.links.clear();
        SPARE_FOUND.with(|s| s.set(self));
    }
}

/// A Bloom filter of 64-bit fingerprints (already uniform hashes: the probes are double
/// hashing of the fingerprint itself).
pub(super) struct Bloom {
    words: Vec<u64>,
    mask: u64,
}

impl Bloom {
    /// A filter for `keys` fingerprints at [`BITS_PER_KEY`] bits each, but at most `max_bytes`
    /// (a power of two of bits, at least [`MIN_BITS`]).
    pub(super) fn new(keys: u64, max_bytes: u64) -> Bloom {
        let want = keys.saturating_mul(BITS_PER_KEY).max(MIN_BITS);
        let cap = max_bytes.saturating_mul(8).max(MIN_BITS);
        let bits = want.min(cap).next_power_of_two();
        let bits = if bits > cap { bits / 2 } else { bits }.max(MIN_BITS);
        Bloom {
            words: vec![0; (bits / 64) as usize],
            mask: bits - 1,
        }
    }

    fn probes(fp: u64) -> impl Iterator<Item = u64> {
        let step = fp.rotate_left(32) | 1;
        (0..PROBES).map(move |i| fp.wrapping_add(step.wrapping_mul(u64::from(i))))
    }

    pub(super) fn insert(&mut self, fp: u64) {
        for h in Bloom::probes(fp) {
            let i = h & self.mask;
            self.words[(i >> 6) as usize] |= 1 << (i & 63);
        }
    }

    pub(super) fn contains(&self, fp: u64) -> bool {
        Bloom::probes(fp).all(|h| {
            let i = h & self.mask;
            self.words[(i >> 6) as usize] & (1 << (i & 63)) != 0
        })
    }

    /// Bytes of bits.
    pub(super) fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// A link worth fetching in this run.
pub(super) struct Candidate {
    pub(super) fp: u64,
    pub(super) url: String,
    pub(super) depth: u32,
}

/// The fetch stage's in-run following (see the module docs).
pub(super) struct Follow {
    seen: Bloom,
    /// Fingerprints queued in this run.
    queued: Mutex<FpSet>,
    /// The seen set the filter was built from (an input of the stage).
    pub(super) seen_path: PathBuf,
}

impl Follow {
    /// The partition's follower for `cycle`, or `None` when following is off or the cycle's seen
    /// set is missing (a crawl made by hand: nothing is followed).
    pub(super) fn load(
        crawl: &CrawlDir,
        cfg: &Config,
        cycle: u32,
        p: u32,
    ) -> Result<Option<Follow>> {
        if cfg.fetch.follow_per_host == 0 {
            return Ok(None);
        }
        let seen_path = crawl.state_file(p, "seen", cycle);
        if !seen_path.exists() {
            return Ok(None);
        }
        let mut r = RunReader::open_expect(&seen_path, Schema::SEEN)?;
        let mut seen = Bloom::new(r.len(), cfg.sort.memory_budget.0 / 8);
        while r.advance()? {
            seen.insert(run::key_u64(r.key()));
        }
        Ok(Some(Follow {
            seen,
            queued: Mutex::new(FpSet::default()),
            seen_path,
        }))
    }

    /// Marks fingerprints as queued in this run (the fetch list's), so they are never followed.
    pub(super) fn queue(&self, fps: impl Iterator<Item = u64>) {
        lock(&self.queued).extend(fps);
    }

    /// Bytes the filter holds.
    pub(super) fn filter_bytes(&self) -> usize {
        self.seen.bytes()
    }

    /// Whether the page `got` answered is read for links to follow, with `room` URLs left to
    /// follow on its host: an HTML page of a 2xx answer, whole, or a redirect with a target
    /// (when `redirect_hops_left`: `[fetch] follow_redirects` bounds a chain).
    pub(super) fn reads(&self, got: &Fetched, room: u64, redirect_hops_left: bool) -> bool {
        if room == 0 || got.cut.is_some() {
            return false;
        }
        if (300..400).contains(&got.status) {
            return redirect_hops_left && got.location.is_some();
        }
        if !(200..300).contains(&got.status) {
            return false;
        }
        let ct = got.content_type.as_bytes();
        let is = |t: &str| ct.len() >= t.len() && ct[..t.len()].eq_ignore_ascii_case(t.as_bytes());
        is("text/html") || is("application/xhtml+xml")
    }

    /// A link the page's parse found (its 16-byte key and encoded record): kept in `found` if
    /// it is on the page's host (`host_key`) and not in the seen set's filter. Most of a
    /// page's links are known (menus, the site's other pages): they are asked about by key,
    /// and only the rest are decoded, after [`Follow::unqueued`].
    pub(super) fn consider(&self, host_key: u64, k: &[u8], v: &[u8], found: &mut Found) {
        if k.len() != 16 || run::key_u64(&k[..8]) != host_key {
            return;
        }
        let fp = run::key_u64(&k[8..]);
        if self.seen.contains(fp) {
            return;
        }
        if found.bytes.capacity() == 0 {
            // Room for a page's worth of candidates at once: not a regrowth every few links.
            found.bytes.reserve(FOUND_BYTES);
            found.links.reserve(FOUND_BYTES / 128);
        }
        let at = found.bytes.len();
        found.bytes.extend_from_slice(v);
        found.links.push((fp, at, found.bytes.len()));
    }

    /// The links of `found` this run has not queued, decoded. The queue, a lock the
    /// partition's workers share, is taken once for a page's links rather than once a link,
    /// and records are decoded after it is released.
    pub(super) fn unqueued(&self, found: &Found) -> Vec<(u64, LinkRecord)> {
        let fresh: Vec<usize> = {
            let queued = lock(&self.queued);
            (0..found.links.len())
                .filter(|&i| !queued.contains(&found.links[i].0))
                .collect()
        };
        fresh
            .into_iter()
            .filter_map(|i| {
                let (fp, from, to) = found.links[i];
                let l = LinkRecord::decode(&found.bytes[from..to]).ok()?;
                Some((fp, l))
            })
            .collect()
    }

    /// The links of `found` ([`Follow::consider`]) of the page at `url` to fetch in this run, at
    /// most `room`, each marked queued: same origin, followed, in scope, allowed by `policy`,
    /// and not queued before. For a `redirect`, the target may be on another origin of the same
    /// host (`http` to `https`, another port): its own robots.txt is fetched first when its turn
    /// comes, like any URL of an origin the run has not asked yet.
    ///
    /// Second, at most `refuse_room` same-origin links that `policy` (the robots.txt the page
    /// was fetched under) refuses, each marked queued: the run records them as refused at once,
    /// as the next cycle's fetch would with the same rules, without a request, so they never
    /// cost a cycle of their own.
    pub(super) fn select(
        &self,
        cfg: &Config,
        url: &Url,
        found: Vec<(u64, LinkRecord)>,
        policy: &Policy,
        (room, refuse_room): (u64, u64),
        redirect: bool,
    ) -> (Vec<Candidate>, Vec<Candidate>) {
        let origin = crate::keys::origin(url);
        let mut out = Vec::new();
        let mut refused = Vec::new();
        let mut queued = lock(&self.queued);
        for (fp, l) in found {
            if out.len() as u64 >= room && refused.len() as u64 >= refuse_room {
                break;
            }
            let same_origin = l
                .url
                .strip_prefix(&*origin)
                .is_some_and(|rest| rest.starts_with('/'));
            // (`consider` kept only links of the page's host.)
            let web = l.url.starts_with("http://") || l.url.starts_with("https://");
            if l.nofollow || !(same_origin || redirect && web) || queued.contains(&fp) {
                continue;
            }
            let host = crate::keys::host_of(&l.url);
            if cfg.scope.refusal(&l.url, host, l.depth).is_some() {
                continue;
            }
            let to = match same_origin.then(|| policy.refusal(&l.url)).flatten() {
                None if (out.len() as u64) < room => &mut out,
                Some(FetchErrorKind::Robots) if (refused.len() as u64) < refuse_room => {
                    &mut refused
                }
                _ => continue,
            };
            queued.insert(fp);
            to.push(Candidate {
                fp,
                url: l.url,
                depth: l.depth,
            });
        }
        (out, refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Follow` with nothing seen or queued.
    fn empty_follow() -> Follow {
        Follow {
            seen: Bloom::new(1, 1 << 16),
            queued: Mutex::new(FpSet::default()),
            seen_path: PathBuf::new(),
        }
    }

    /// A thread's `Found` comes back empty with its buffers, page after page; one that grew
    /// past four times the first room is let go; and another thread has its own.
    #[test]
    fn found_buffers_are_reused_by_their_thread() {
        let follow = empty_follow();
        let key = |fp: u64| {
            run::fp_key(7)
                .into_iter()
                .chain(fp.to_be_bytes())
                .collect::<Vec<u8>>()
        };
        let mut f = Found::take();
        follow.consider(7, &key(1), b"record", &mut f);
        follow.consider(8, &key(2), b"another host", &mut f);
        assert_eq!(f.links.len(), 1);
        let at = f.bytes.as_ptr();
        f.recycle();
        let f = Found::take();
        assert!(f.bytes.is_empty() && f.links.is_empty());
        assert_eq!(f.bytes.as_ptr(), at);
        assert!(f.bytes.capacity() >= FOUND_BYTES);
        std::thread::spawn(|| assert_eq!(Found::take().bytes.capacity(), 0))
            .join()
            .unwrap();
        let mut big = f;
        big.bytes.reserve(8 * FOUND_BYTES);
        big.recycle();
        assert_eq!(Found::take().bytes.capacity(), 0);
    }

    #[test]
    fn links_robots_txt_refuses_are_selected_apart_within_their_own_bound() {
        let follow = empty_follow();
        let rules = crate::robots::RobotsStatus::from_response(
            200,
            b"User-agent: *\nDisallow: /private/\n",
        );
        let policy = Policy::new(&rules, "dragnet");
        let page = Url::parse("http://a.test/").unwrap();
        let link = |i: u64, path: &str| {
            let l = LinkRecord {
                url: format!("http://a.test{path}"),
                source: "http://a.test/".into(),
                kind: crate::records::LinkKind::A,
                nofollow: false,
                cash: 0.0,
                depth: 1,
            };
            (i, l)
        };
        let found = || {
            vec![
                link(1, "/p/1"),
                link(2, "/private/1"),
                link(3, "/p/2"),
                link(4, "/private/2"),
                link(5, "/private/3"),
                link(6, "/p/3"),
            ]
        };
        let cfg = Config::default();
        let (out, refused) = follow.select(&cfg, &page, found(), &policy, (2, 2), false);
        let urls = |v: &[Candidate]| v.iter().map(|c| c.url.clone()).collect::<Vec<_>>();
        assert_eq!(urls(&out), ["http://a.test/p/1", "http://a.test/p/2"]);
        assert_eq!(
            urls(&refused),
            ["http://a.test/private/1", "http://a.test/private/2"]
        );
        // What was selected is queued, so never selected again; the rest is still there.
        let (out, refused) = follow.select(&cfg, &page, found(), &policy, (5, 5), false);
        assert_eq!(urls(&out), ["http://a.test/p/3"]);
        assert_eq!(urls(&refused), ["http://a.test/private/3"]);
        let (out, refused) = follow.select(&cfg, &page, found(), &policy, (5, 5), false);
        assert!(out.is_empty() && refused.is_empty());
    }

    #[test]
    fn the_filter_has_no_false_negatives_and_few_false_positives() {
        let mut b = Bloom::new(10_000, 1 << 20);
        let fp = |i: u64| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes());
        for i in 0..10_000 {
            b.insert(fp(i));
        }
        assert!((0..10_000).all(|i| b.contains(fp(i))));
        let false_pos = (10_000..110_000).filter(|&i| b.contains(fp(i))).count();
        assert!(false_pos < 2_000, "{false_pos} false positives in 100,000");
        // Capped: smaller, still no false negatives.
        let mut small = Bloom::new(1_000_000, 64 << 10);
        assert!(small.bytes() <= 64 << 10);
        for i in 0..10_000 {
            small.insert(fp(i));
        }
        assert!((0..10_000).all(|i| small.contains(fp(i))));
    }
}
