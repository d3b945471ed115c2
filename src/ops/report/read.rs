//! The report's reading ([`super::collect`]): the fetch results and page facts of the done
//! fetches and parses, and the newest URL db and host table of each partition, each run read
//! once, record by record.
//!
//! The fetch results and page facts are most of it, and a cycle's are final once its fetches
//! (which parse as pages arrive) are done: the local executor reads them beside the cycle's
//! merge and prioritize ([`Fetches::read_now`]), and the report at the cycle's end takes them
//! if the same fetches and parses are done then ([`super::collect_with`]), else reads them
//! itself.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::{svg, Content, GivenUp, HostRow, Report, MAX_HOSTS, OTHER_HOSTS};
use crate::config::Config;
use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, Result};
use crate::ops::{PartitionState, Status, StatusOptions};
use crate::records::{FetchErrorKind, FetchResult, HostRecord, PageRecord, UrlRecord, UrlState};
use crate::run::{RunReader, Schema};

/// The (cycle, partition) pairs whose fetch results and page facts the report reads: those with
/// a valid marker by the status, or (no status) every marker file that exists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Done {
    fetch: Vec<(u32, u32)>,
    parse: Vec<(u32, u32)>,
}

impl Done {
    pub(super) fn of(crawl: &CrawlDir, m: u32, status: Option<&Status>) -> Done {
        let mut done = Done::default();
        if let Some(s) = status {
            for c in &s.cycles {
                for st in &c.stages {
                    let list = match st.stage {
                        Stage::Fetch => &mut done.fetch,
                        Stage::Parse => &mut done.parse,
                        _ => continue,
                    };
                    list.extend(
                        (0..m)
                            .filter(|&p| st.state(p) == PartitionState::Done)
                            .map(|p| (c.cycle, p)),
                    );
                }
            }
        } else {
            for c in crawl.cycles() {
                for p in 0..m {
                    if crawl.done_path(c, Stage::Fetch, p).exists() {
                        done.fetch.push((c, p));
                    }
                    if crawl.done_path(c, Stage::Parse, p).exists() {
                        done.parse.push((c, p));
                    }
                }
            }
        }
        done
    }
}

/// What the report reads from the fetch results and page facts of the done fetches and parses.
pub struct Fetches {
    pub(super) done: Done,
    pub(super) status_codes: BTreeMap<u16, u64>,
    pub(super) mime_fetched: BTreeMap<String, (u64, u64)>,
    pub(super) robots_disallowed: u64,
    pub(super) content: Content,
    pub(super) hosts: HostTally,
    /// Runs that could not be read: fetch results, page facts.
    pub(super) skipped: [Vec<String>; 2],
}

impl Fetches {
    /// Reads the fetch results and page facts of the fetches and parses done now: what the
    /// local executor calls beside a cycle's merge, once every partition has fetched.
    pub fn read_now(crawl: &CrawlDir, cfg: &Config) -> Fetches {
        let status = crate::ops::status_of(crawl, cfg, &StatusOptions { top_hosts: false });
        Fetches::read(
            crawl,
            Done::of(crawl, cfg.crawl.partitions, status.ok().as_ref()),
        )
    }

    /// The fetches and parses whose runs it read.
    pub fn runs(&self) -> usize {
        self.done.fetch.len() + self.done.parse.len()
    }

    pub(super) fn read(crawl: &CrawlDir, done: Done) -> Fetches {
        let mut f = Fetches {
            done: Done::default(),
            status_codes: BTreeMap::new(),
            mime_fetched: BTreeMap::new(),
            robots_disallowed: 0,
            content: Content::default(),
            hosts: HostTally::default(),
            skipped: [Vec::new(), Vec::new()],
        };
        read_fetched(crawl, &done.fetch, &mut f);
        read_pages(crawl, &done.parse, &mut f);
        f.done = done;
        f
    }
}

/// Per-host numbers with bounded memory.
#[derive(Default)]
pub(super) struct HostTally {
    map: HashMap<String, HostRow>,
}

impl HostTally {
    pub(super) fn get(&mut self, host: &str) -> &mut HostRow {
        let key = if self.map.contains_key(host) || self.map.len() < MAX_HOSTS {
            host
        } else {
            OTHER_HOSTS
        };
        if !self.map.contains_key(key) {
            self.map.insert(
                key.to_owned(),
                HostRow {
                    host: key.to_owned(),
                    ..HostRow::default()
                },
            );
        }
        self.map.get_mut(key).expect("inserted")
    }

    pub(super) fn rows(self) -> Vec<HostRow> {
        let mut v: Vec<HostRow> = self.map.into_values().collect();
        v.sort_unstable_by(|a, b| a.host.cmp(&b.host));
        v
    }
}

/// Reads every record of a run of `schema` with `f`; a damaged run is named in `skipped` (what
/// was read before the damage is kept).
fn each_record(
    path: &Path,
    schema: Schema,
    skipped: &mut Vec<String>,
    f: &mut dyn FnMut(&[u8]) -> std::result::Result<(), String>,
) {
    let res = (|| -> Result<()> {
        let mut rd = RunReader::open_expect(path, schema)?;
        while let Some((_, payload)) = rd.next_record()? {
            f(payload).map_err(|e| Error::corrupt(path, 0, e))?;
        }
        Ok(())
    })();
    if let Err(e) = res {
        skipped.push(format!("{}: {e}", path.display()));
    }
}

/// Per host and per status code, from the fetch results of the done fetches.
fn read_fetched(crawl: &CrawlDir, done: &[(u32, u32)], f: &mut Fetches) {
    let (hosts, skipped) = (&mut f.hosts, &mut f.skipped[0]);
    for &(c, p) in done {
        let path = crawl.fetched(c, p);
        if !path.exists() {
            skipped.push(format!(
                "{}: missing (the fetch marker says it was written)",
                crawl.relative(&path)
            ));
            continue;
        }
        each_record(&path, Schema::FETCHED, skipped, &mut |payload| {
            let fr = FetchResult::decode(payload).map_err(|e| format!("fetch result: {e}"))?;
            *f.status_codes.entry(fr.status).or_default() += 1;
            let h = hosts.get(crate::keys::host_of(&fr.url));
            h.urls += 1;
            if fr.error_kind() == Some(FetchErrorKind::Robots) {
                h.robots += 1;
                f.robots_disallowed += 1;
            } else if !fr.error.is_empty() {
                h.errors += 1;
            }
            if fr.status > 0 {
                let mime = if fr.content_type.is_empty() {
                    "(none)"
                } else {
                    fr.content_type.as_str()
                };
                let e = f.mime_fetched.entry(mime.to_owned()).or_default();
                e.0 += 1;
                e.1 += fr.length;
                h.pages += 1;
                h.bytes += fr.length;
                if fr.revisit {
                    h.dup_urls += 1;
                    h.dup_bytes += fr.length;
                } else if fr.status == 304 {
                    h.not_modified_urls += 1;
                    h.not_modified_bytes += fr.length;
                } else {
                    h.novel_urls += 1;
                    h.novel_bytes += fr.length;
                }
            }
            Ok(())
        });
    }
}

/// URL states and each host's remaining URLs, from the newest URL db of each partition.
pub(super) fn read_urldb(
    crawl: &CrawlDir,
    m: u32,
    r: &mut Report,
    hosts: &mut HostTally,
    skipped: &mut Vec<String>,
) {
    for p in 0..m {
        let Some((_, path)) = crawl.latest_state(p, "urldb", u32::MAX) else {
            continue;
        };
        each_record(&path, Schema::URLDB, skipped, &mut |payload| {
            let u = UrlRecord::decode(payload).map_err(|e| format!("URL record: {e}"))?;
            *r.url_states.entry(u.state.name().to_owned()).or_default() += 1;
            if matches!(u.state, UrlState::Unfetched | UrlState::Retry) {
                hosts.get(crate::keys::host_of(&u.url)).remaining += 1;
            }
            Ok(())
        });
    }
}

/// robots.txt outcomes and hosts given up, from the newest host table of each partition.
pub(super) fn read_host_tables(
    crawl: &CrawlDir,
    cfg: &Config,
    r: &mut Report,
    skipped: &mut Vec<String>,
) {
    let max_failures = cfg.fetch.max_host_failures;
    for p in 0..cfg.crawl.partitions {
        let Some((next, path)) = crawl.latest_state(p, "hosts", u32::MAX) else {
            continue;
        };
        let h = &mut r.hosts;
        each_record(&path, Schema::HOSTS, skipped, &mut |payload| {
            let rec = HostRecord::decode(payload).map_err(|e| format!("host record: {e}"))?;
            h.known += 1;
            let mut unreachable = 0;
            for o in &rec.robots {
                let kind = match o.status {
                    200..=299 => "rules",
                    429 => "unreachable",
                    400..=499 => "none",
                    0 | 500..=599 => "unreachable",
                    _ => "other",
                };
                unreachable += usize::from(kind == "unreachable");
                *h.robots.entry(kind.into()).or_default() += 1;
            }
            if rec.parked_until > next {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: format!(
                        "parked until cycle {}: no answer in {} fetch runs in a row ([fetch] \
                         park_after_failed_runs); its URLs wait in the frontier",
                        rec.parked_until, rec.failed_runs
                    ),
                });
            } else if max_failures > 0 && rec.consecutive_failures >= max_failures {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: format!(
                        "{} failed requests in a row ([fetch] max_host_failures = {max_failures}; \
                         {} of {} requests failed)",
                        rec.consecutive_failures, rec.failures, rec.requests
                    ),
                });
            } else if !rec.robots.is_empty() && unreachable == rec.robots.len() {
                h.given_up.push(GivenUp {
                    host: rec.host.clone(),
                    why: "robots.txt unreachable (disallow all until it answers)".into(),
                });
            }
            Ok(())
        });
    }
    r.hosts.given_up.sort_by(|a, b| a.host.cmp(&b.host));
}

/// Content types, charsets and sizes from the page facts of the done parses.
fn read_pages(crawl: &CrawlDir, done: &[(u32, u32)], f: &mut Fetches) {
    let (c, skipped) = (&mut f.content, &mut f.skipped[1]);
    c.sizes = vec![0; 65];
    for &(cy, p) in done {
        let path = crawl.pages(cy, p);
        if !path.exists() {
            continue; // a parse with nothing to parse writes no pages run
        }
        each_record(&path, Schema::PAGES, skipped, &mut |payload| {
            let pg = PageRecord::decode(payload).map_err(|e| format!("page: {e}"))?;
            c.pages += 1;
            let mime = if pg.content_type.is_empty() {
                "(none)".to_owned()
            } else {
                pg.content_type.clone()
            };
            let e = c.mime.entry(mime).or_default();
            e.0 += 1;
            e.1 += pg.length;
            let cs = if pg.charset.is_empty() {
                "(none)".to_owned()
            } else {
                pg.charset.to_ascii_lowercase()
            };
            *c.charsets.entry(cs).or_default() += 1;
            c.sizes[svg::pow2_bucket(pg.length)] += 1;
            c.noindex += u64::from(pg.noindex);
            Ok(())
        });
    }
}
