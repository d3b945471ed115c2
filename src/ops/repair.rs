//! `dragnet repair DIR`: what `dragnet check crawl` finds damaged, rebuilt from committed inputs
//! (docs/RELIABILITY.md, campaign 5).
//!
//! Every damaged file is placed by what made it, and the repair is the smallest that makes it
//! again from files that are whole. **Nothing committed is deleted**: what a repair takes out of
//! the crawl goes to `quarantine/<unix time>/`, at the same relative path.
//!
//! - **A frontier** (`state/pNNNN/frontier/`: a queue page, its meta or journal): rebuilt from the
//!   URL db the partition's last prioritize read (`urldb.T.run` for a frontier at tag T). Every URL
//!   the URL db says is waiting (unfetched, to retry, or fetched with a recrawl pending) goes in
//!   with the key of its present OPIC cash, exactly the entries prioritize takes as current; an
//!   entry the old frontier no longer held (its URL in the next fetch list, or over a host's
//!   lifetime budget) comes out stale or capped and is dropped as before, so the fetch lists
//!   that follow are the same. The damaged directory is moved to
//!   `quarantine/<unix time>/pNNNN-frontier/` for inspection (`check crawl` does not check it).
//! - **A derived file** (whatever parse, split, merge or prioritize wrote: links, pages and WET
//!   files, split runs, the seen set, the URL db, the merge's updates, CLOCK caches, host and
//!   domain budgets, fetch lists, and those stages' `.done` markers): **made again** by running
//!   the stage that wrote it in a sandbox of hard links ([`regen`]), and put in place only when
//!   its outputs prove equal to what the stage committed (its marker's checksums). Nothing else
//!   changes: no cycle is rolled back, no capture is touched.
//! - **A derived file no longer needed** that cannot be made again (a state version older than
//!   the one the current cycle reads, or a run of a complete cycle, whose stage's inputs were
//!   pruned): moved to quarantine; it is no reason to refuse for ever.
//! - **What only a rollback can repair** (what the fetch of the cycle in progress wrote, the host
//!   table the last fetch wrote, a derived file still needed whose inputs are gone): the crawl is
//!   **rolled back to the start of the earliest such cycle K**. Everything later is moved to
//!   quarantine (the cycles after K, K's outputs except its fetch lists, WARC files included,
//!   state versions after K; `--dry-run` lists them with their sizes), every frontier is rebuilt
//!   from `urldb.K` at tag K, and the next `dragnet cycle` runs K again from its committed
//!   inputs. This needs the versions K of every partition's seen set and URL db (`[cycle]
//!   keep_cycles` keeps the last two cycles'); a rollback further back is refused, with what is
//!   missing.
//! - **A CDXJ index** (a partition's, a cycle's, the crawl's, its list of cycles) or the
//!   `archive` link: made again, nothing rolled back. A partition's index from its WARC files
//!   (the same bytes its fetch wrote), then the cycle's and the crawl's from those
//!   ([`crate::ops::index::rebuild`]). A rollback removes the crawl's index too (it holds the
//!   captures of the cycles rolled back) and rebuilds it from the cycles left.
//! - **Not repairable here**, reported (exit 3): WARC files of cycles already complete (the crawl's
//!   state no longer needs them, but the archive cannot be made again without fetching again:
//!   restore them from a copy; the same for their fetch results and fetch markers), injected
//!   seeds (inject them again), the manifest and crawl.toml (settings: restore or rewrite them),
//!   init's own files (seen set and URL db version 0, the first fetch lists: run `dragnet init`
//!   again). A stale lock or a damaged metrics file is simply removed.
//!
//! `--dry-run` prints the plan and changes nothing (it proves regenerations in a sandbox it
//! removes). The repair holds the crawl lock, and checks
//! the crawl again when it is done.

mod quarantine;
mod regen;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, IoContext, Result};
use crate::ops::check::{check_crawl, kind_of, CrawlCheck, FileKind};
use crate::queue::Entry;
use crate::records::{UrlRecord, UrlState};
use crate::run::{self, Cursor, RunReader, Schema};

/// What a repair did (or, dry, would do).
#[derive(Debug, Default, Clone, Serialize)]
pub struct RepairReport {
    /// The damaged files `check crawl` found, with why.
    pub damaged: Vec<(PathBuf, String)>,
    /// Damaged files made again by running the stage that wrote them (same bytes, proven by the
    /// stage's marker); the damaged copies went to `quarantine`.
    pub regenerated: Vec<PathBuf>,
    /// Rolled back to the start of this cycle.
    pub rolled_back_to: Option<u32>,
    /// Partitions whose frontier was rebuilt, with the entries put in.
    pub frontiers_rebuilt: Vec<(u32, u64)>,
    /// Files and directories moved to `quarantine` (never deleted), with their sizes in bytes.
    pub quarantined: Vec<(PathBuf, u64)>,
    /// Where they went (`quarantine/<unix time>/`, the same relative paths below it).
    pub quarantine: Option<PathBuf>,
    /// Files and directories removed: locks, metrics, temporaries, derived indexes made again.
    pub removed: Vec<PathBuf>,
    /// The manifest, lost and rebuilt from the crawl's files (with what was taken on trust).
    pub manifest_rebuilt: Option<crate::crawl::manifest::Rebuilt>,
    /// Damage left as it is, with what to do about it.
    pub unrepairable: Vec<(PathBuf, String)>,
    /// Only planned.
    pub dry_run: bool,
}

/// Where a damaged file came from (module docs).
enum Fix {
    /// Rebuild partition p's frontier.
    Frontier(u32),
    /// Run the stage that wrote it again ([`regen`]).
    Regen(Stage, u32, u32),
    /// Roll back to the start of this cycle.
    Rollback(u32),
    /// Move it to quarantine: derived, no longer needed, and not to be made again.
    Quarantine,
    /// Remove it (lock, metrics, logs, temporaries).
    Remove,
    /// A CDXJ index or the `archive` link: made again ([`crate::ops::index`]).
    Index,
    /// Leave it; the reason and the remedy.
    Cannot(String),
}

/// `TOP/NAME/...` -> (NAME, the rest), for a path with at least one component below NAME.
fn under(rel: &Path, top: &str) -> Option<(String, Vec<String>)> {
    let mut parts = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    if parts.next()? != top {
        return None;
    }
    let name = parts.next()?;
    let rest: Vec<String> = parts.collect();
    (!rest.is_empty()).then_some((name, rest))
}

/// `cycles/CCCCCC/...` -> (cycle, the rest).
fn cycle_of(rel: &Path) -> Option<(u32, Vec<String>)> {
    let (c, rest) = under(rel, "cycles")?;
    Some((c.parse().ok()?, rest))
}

/// `state/pNNNN/...` -> (partition, the rest).
fn state_of(rel: &Path) -> Option<(u32, Vec<String>)> {
    let (p, rest) = under(rel, "state")?;
    Some((p.strip_prefix('p')?.parse().ok()?, rest))
}

/// `<kind>.<six digits>.<ext>` -> the version.
fn version_of(name: &str) -> Option<u32> {
    let mut it = name.split('.');
    it.next()?;
    it.next()?.parse().ok()
}

/// `pNNNN.run`, `pNNNN.done`, `from-pNNNN.run`, `pNNNN-SSSSSS.warc.zst` -> NNNN.
fn partition_in(name: &str) -> Option<u32> {
    let name = name.strip_prefix("from-").unwrap_or(name);
    let digits: String = name
        .strip_prefix('p')?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The stage, cycle and partition that wrote a file of the crawl; `None` for what no stage of
/// a cycle writes (init's files, injected seeds, the frontier, files of no known place).
fn producer(rel: &Path) -> Option<(Stage, u32, u32)> {
    if let Some((p, rest)) = state_of(rel) {
        let name = rest.first()?;
        // Version V is what cycle V-1 wrote.
        let cycle = version_of(name)?.checked_sub(1)?;
        let stage = match name.split('.').next()? {
            "seen" | "urldb" => Stage::Merge,
            "cache" => Stage::Split,
            "host_budget" | "domain_budget" => Stage::Prioritize,
            "hosts" => Stage::Fetch,
            _ => return None,
        };
        return Some((stage, cycle, p));
    }
    let (c, rest) = cycle_of(rel)?;
    let name = rest.last()?;
    let p = partition_in(name)?;
    let stage = match rest.first()?.as_str() {
        // The fetch list of cycle C is what prioritize of cycle C-1 (or init) wrote.
        "fetchlist" => return Some((Stage::Prioritize, c.checked_sub(1)?, p)),
        "links" | "pages" => Stage::Parse,
        "split" if rest.len() == 3 && name.starts_with("from-") => Stage::Split,
        "new" => Stage::Merge,
        "warc" if name.contains(".warc.wet") => Stage::Parse,
        "warc" | "fetched" | "cdxj" => Stage::Fetch,
        dir => {
            let stage = Stage::CYCLE.into_iter().find(|s| s.name() == dir)?;
            if !name.ends_with(".done") {
                return None;
            }
            stage
        }
    };
    Some((stage, c, p))
}

/// Whether a file is derived and no longer needed by any stage still to run: a state version
/// older than the one the current cycle reads, or a derived run of a complete cycle. Taken out
/// (to quarantine) when it cannot be made again, never a reason to refuse the repair.
fn no_longer_needed(crawl: &CrawlDir, rel: &Path, current: u32) -> bool {
    if let Some((p, rest)) = state_of(rel) {
        let Some(name) = rest.first() else {
            return false;
        };
        let mut parts = name.splitn(3, '.');
        let (Some(kind), Some(v), Some(ext)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let Ok(v) = v.parse::<u32>() else {
            return false;
        };
        return crawl
            .latest_state_ext(p, kind, ext, current)
            .is_some_and(|(input, _)| v < input);
    }
    match (cycle_of(rel), producer(rel)) {
        (Some((c, rest)), Some((stage, _, _))) => {
            c < current
                && stage != Stage::Fetch
                && rest.first().map(String::as_str) != Some("fetchlist")
        }
        _ => false,
    }
}

/// What repairs a damaged file when its producer cannot simply run again.
fn fallback_for(crawl: &CrawlDir, rel: &Path, kind: FileKind, current: u32) -> Fix {
    if no_longer_needed(crawl, rel, current) {
        return Fix::Quarantine;
    }
    if let Some((_, rest)) = state_of(rel) {
        return match rest.first().and_then(|n| version_of(n)) {
            Some(0) => Fix::Cannot(
                "written by `dragnet init`: initialize the crawl again from its seeds".into(),
            ),
            Some(v) => Fix::Rollback(v - 1),
            None => Fix::Cannot("a state file of no known version".into()),
        };
    }
    if let Some((c, rest)) = cycle_of(rel) {
        if rest.first().map(String::as_str) == Some("fetchlist") {
            return match c {
                0 => Fix::Cannot(
                    "the first fetch list, written by `dragnet init`: initialize the crawl again"
                        .into(),
                ),
                c => Fix::Rollback(c - 1),
            };
        }
        if rest.first().map(String::as_str) == Some("split") && producer(rel).is_none() {
            return Fix::Cannot(
                "seeds `dragnet inject` added: inject them again (`dragnet inject --seeds FILE`) \
                 after moving this file away"
                    .into(),
            );
        }
        if c < current && matches!(producer(rel), Some((Stage::Fetch, ..))) {
            let what = if kind == FileKind::Warc {
                "a WARC file"
            } else {
                "a record of the fetch"
            };
            return Fix::Cannot(format!(
                "{what} of cycle {c}, which is complete: the crawl's state does not need it, \
                 but it cannot be made again without fetching again; restore it from a copy"
            ));
        }
        return Fix::Rollback(c);
    }
    Fix::Cannot("a file of no known place in the crawl".into())
}

fn fix_for(crawl: &CrawlDir, rel: &Path, kind: FileKind, current: u32) -> Fix {
    match kind {
        // A .failed marker only tells what went wrong; the stage runs again either way.
        FileKind::Lock
        | FileKind::Metrics
        | FileKind::Log
        | FileKind::Report
        | FileKind::Temporary
        | FileKind::FailedMarker => return Fix::Remove,
        FileKind::Cdxj | FileKind::ArchiveLink => return Fix::Index,
        FileKind::Manifest => {
            return Fix::Cannot(
                "the manifest holds the settings fixed at init: restore it from a copy (it must \
                 match crawl.toml's partitions, queue kind and [canon])"
                    .into(),
            )
        }
        FileKind::Config => {
            return Fix::Cannot(
                "crawl.toml does not load: correct it (the error says where)".into(),
            )
        }
        _ => {}
    }
    if let Some((p, rest)) = state_of(rel) {
        if rest.first().map(String::as_str) == Some("frontier") {
            return Fix::Frontier(p);
        }
    }
    match producer(rel) {
        Some((stage, c, p)) if stage != Stage::Fetch && c <= current => Fix::Regen(stage, c, p),
        _ => fallback_for(crawl, rel, kind, current),
    }
}

/// The repairs decided, by kind.
#[derive(Default)]
struct Plan {
    rollback: Option<u32>,
    frontiers: BTreeSet<u32>,
    remove: Vec<PathBuf>,
    indexes: Vec<PathBuf>,
    set_aside: Vec<PathBuf>,
    /// (cycle, stage, partition) -> the damaged files it wrote.
    regens: BTreeMap<(u32, Stage, u32), Vec<PathBuf>>,
}

impl Plan {
    fn add(&mut self, fix: Fix, rel: &Path, why: &str, r: &mut RepairReport) {
        match fix {
            Fix::Frontier(p) => {
                self.frontiers.insert(p);
            }
            Fix::Regen(stage, c, p) => self
                .regens
                .entry((c, stage, p))
                .or_default()
                .push(rel.into()),
            Fix::Rollback(k) => self.rollback = Some(self.rollback.map_or(k, |r| r.min(k))),
            Fix::Quarantine => self.set_aside.push(rel.into()),
            Fix::Remove => self.remove.push(rel.into()),
            Fix::Index => self.indexes.push(rel.into()),
            Fix::Cannot(what) => r.unrepairable.push((rel.into(), format!("{why}; {what}"))),
        }
    }
}

/// Repairs the crawl at `crawl` (see the module docs).
pub fn repair(crawl: &CrawlDir, cfg: &Config, dry_run: bool) -> Result<RepairReport> {
    let _lock = if dry_run {
        None
    } else {
        Some(crate::crawl::CrawlLock::acquire(crawl.root(), "repair")?)
    };
    let m = cfg.crawl.partitions;
    let current = crate::crawl::next_cycle(crawl, m);
    if !dry_run {
        regen::sweep(crawl)?;
    }
    let manifest_rebuilt =
        if !crawl.manifest_path().exists() && !crate::crawl::manifest::predates_manifests(crawl) {
            Some(crate::crawl::manifest::rebuild(crawl, cfg, dry_run)?)
        } else {
            None
        };
    let check = check_crawl(crawl, Some(cfg))?;
    let q = quarantine::dir_for_now(crawl);
    let mut r = RepairReport {
        manifest_rebuilt,
        damaged: check
            .damaged
            .iter()
            .map(|(p, w)| (p.clone(), w.clone()))
            .collect(),
        dry_run,
        ..RepairReport::default()
    };
    let ctx = Repair {
        crawl,
        cfg,
        current,
        quarantine: q,
        dry_run,
    };
    let plan = ctx.plan(&check, &mut r)?;
    if let Some(k) = plan.rollback {
        ctx.check_rollback(k, &check, &r)?;
    }
    ctx.carry_out(plan, &mut r)?;
    if !r.quarantined.is_empty() || !r.regenerated.is_empty() {
        r.quarantine = Some(PathBuf::from(crawl.relative(&ctx.quarantine)));
    }
    Ok(r)
}

/// One repair's crawl and settings.
struct Repair<'a> {
    crawl: &'a CrawlDir,
    cfg: &'a Config,
    /// The cycle the crawl is in (its next to run).
    current: u32,
    /// `quarantine/<unix time>/`.
    quarantine: PathBuf,
    dry_run: bool,
}

impl Repair<'_> {
    /// The repairs the damaged files of `check` call for, with the regenerations done (in a dry
    /// run, proven in a sandbox); a file its stage cannot make again gets the fix that remains.
    fn plan(&self, check: &CrawlCheck, r: &mut RepairReport) -> Result<Plan> {
        let (crawl, current) = (self.crawl, self.current);
        let mut plan = Plan::default();
        for (rel, why) in &check.damaged {
            plan.add(fix_for(crawl, rel, kind_of(rel), current), rel, why, r);
        }
        // Earlier cycles and stages first: a remade file may be the input of the next.
        for ((c, stage, p), files) in std::mem::take(&mut plan.regens) {
            let q = &self.quarantine;
            match regen::regenerate(crawl, self.cfg, stage, c, p, &files, q, self.dry_run)? {
                Ok(files) => r.regenerated.extend(files),
                Err(e) => {
                    eprintln!("cannot make {} again: {e}", files[0].display());
                    for rel in files {
                        let why = check
                            .damaged
                            .iter()
                            .find(|(d, _)| *d == rel)
                            .map_or("", |(_, w)| w.as_str());
                        let fix = fallback_for(crawl, &rel, kind_of(&rel), current);
                        plan.add(fix, &rel, why, r);
                    }
                }
            }
        }
        Ok(plan)
    }

    /// Refuses a rollback to cycle `k` unless every partition has whole versions K of its seen
    /// set and URL db.
    fn check_rollback(&self, k: u32, check: &CrawlCheck, r: &RepairReport) -> Result<()> {
        let crawl = self.crawl;
        for p in 0..self.cfg.crawl.partitions {
            for kind in ["seen", "urldb"] {
                let path = crawl.state_file(p, kind, k);
                let damaged = check
                    .damaged
                    .iter()
                    .any(|(d, _)| crawl.root().join(d) == path)
                    && !r.regenerated.iter().any(|d| crawl.root().join(d) == path);
                if !path.is_file() || damaged {
                    return Err(Error::corrupt(
                        &path,
                        0,
                        format!(
                            "a repair would roll the crawl back to cycle {k}, which needs this \
                             version ({}); it is gone (pruned: `[cycle] keep_cycles` keeps the \
                             last cycles' versions) or damaged. Restore the crawl from a copy",
                            if path.is_file() { "damaged" } else { "missing" }
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Does what `plan` says (in a dry run, only records it): removes, quarantines, removes
    /// indexes, rolls back, rebuilds frontiers and the indexes.
    fn carry_out(&self, plan: Plan, r: &mut RepairReport) -> Result<()> {
        let (crawl, dry_run, q) = (self.crawl, self.dry_run, &self.quarantine);
        let Plan {
            rollback,
            frontiers,
            remove,
            indexes,
            set_aside,
            ..
        } = plan;
        for rel in remove {
            let path = crawl.root().join(&rel);
            if !dry_run {
                std::fs::remove_file(&path).ctx("remove", &path)?;
            }
            r.removed.push(rel);
        }
        for rel in set_aside {
            r.quarantined
                .push((rel.clone(), quarantine::size_of(&crawl.root().join(&rel))));
            if !dry_run {
                quarantine::move_in(crawl, q, &rel)?;
            }
        }
        if !indexes.is_empty() {
            r.removed.extend(remove_indexes(crawl, &indexes, dry_run)?);
        }
        self.rebuild_frontiers(rollback, &frontiers, r)?;
        if (rollback.is_some() || !indexes.is_empty()) && !dry_run {
            // The indexes of the cycles left (a rolled-back cycle gets its own when it ends
            // again).
            crate::ops::index::rebuild(crawl, self.cfg.crawl.partitions)?;
        }
        Ok(())
    }

    /// Rolls back to cycle `rollback` (every frontier rebuilt at its tag) or, without one,
    /// rebuilds the damaged `frontiers` at the tags they had.
    fn rebuild_frontiers(
        &self,
        rollback: Option<u32>,
        frontiers: &BTreeSet<u32>,
        r: &mut RepairReport,
    ) -> Result<()> {
        let (crawl, cfg, dry_run) = (self.crawl, self.cfg, self.dry_run);
        let m = cfg.crawl.partitions;
        if let Some(k) = rollback {
            r.rolled_back_to = Some(k);
            r.quarantined
                .extend(roll_back(crawl, m, k, &self.quarantine, dry_run)?);
            for p in 0..m {
                let n = rebuild_frontier(crawl, cfg, p, k, frontiers.contains(&p), dry_run)?;
                r.frontiers_rebuilt.push((p, n));
            }
        } else {
            for &p in frontiers {
                // The tag the frontier had: one past the last cycle its prioritize ran in.
                let tag = (0..=self.current)
                    .rev()
                    .find(|&c| crawl.done_path(c, Stage::Prioritize, p).exists())
                    .map_or(0, |c| c + 1);
                let n = rebuild_frontier(crawl, cfg, p, tag, true, dry_run)?;
                r.frontiers_rebuilt.push((p, n));
            }
        }
        Ok(())
    }
}

/// Removes damaged indexes and what was merged from them: a partition's index is made again at
/// once from its WARC files (the same bytes its fetch wrote), a cycle's and the crawl's at the
/// end of the repair. Returns what was removed.
fn remove_indexes(crawl: &CrawlDir, damaged: &[PathBuf], dry_run: bool) -> Result<Vec<PathBuf>> {
    let mut doomed = vec![crawl.indexes_dir()];
    for rel in damaged {
        let path = crawl.root().join(rel);
        match cycle_of(rel) {
            Some((c, rest)) if rest.first().map(String::as_str) == Some("cdxj") => {
                let p = rest
                    .get(1)
                    .and_then(|n| n.strip_prefix('p'))
                    .and_then(|n| n.strip_suffix(".cdxj"))
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| Error::corrupt(&path, 0, "not a partition's index"))?;
                if !dry_run {
                    crate::ops::index::reindex_partition(crawl, c, p, &path)?;
                }
                doomed.push(crawl.cycle_cdxj(c));
            }
            _ => doomed.push(path),
        }
    }
    let mut removed = Vec::new();
    for path in doomed {
        if path.symlink_metadata().is_err() {
            continue;
        }
        if !dry_run {
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path).ctx("remove", &path)?;
            } else {
                std::fs::remove_file(&path).ctx("remove", &path)?;
            }
        }
        removed.push(PathBuf::from(crawl.relative(&path)));
    }
    Ok(removed)
}

/// Moves what the crawl made from the start of cycle `k` on to the quarantine `q` (module docs);
/// returns what, with sizes. Nothing is deleted: the captures of the cycles rolled back (WARC
/// files, fetch results) are kept there whole, for a person to inspect or put back.
fn roll_back(
    crawl: &CrawlDir,
    m: u32,
    k: u32,
    q: &Path,
    dry_run: bool,
) -> Result<Vec<(PathBuf, u64)>> {
    let mut moved = Vec::new();
    let mut rm = |path: PathBuf| -> Result<()> {
        let rel = PathBuf::from(crawl.relative(&path));
        moved.push((rel.clone(), quarantine::size_of(&path)));
        if !dry_run {
            quarantine::move_in(crawl, q, &rel)?;
        }
        Ok(())
    };
    // The crawl's index holds the captures of the cycles rolled back (rebuilt from the cycles
    // left at the end of the repair).
    if crawl.indexes_dir().exists() {
        rm(crawl.indexes_dir())?;
    }
    for c in crawl.cycles() {
        if c > k {
            rm(crawl.cycle_dir(c))?;
        } else if c == k {
            for e in std::fs::read_dir(crawl.cycle_dir(c)).ctx("list", &crawl.cycle_dir(c))? {
                let e = e.ctx("list", &crawl.cycle_dir(c))?;
                if e.file_name() != "fetchlist" {
                    rm(e.path())?;
                }
            }
        }
    }
    for p in 0..m {
        let dir = crawl.state_dir(p);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut doomed: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|path| {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                !name.starts_with('.') && version_of(&name).is_some_and(|v| v > k)
            })
            .collect();
        doomed.sort();
        for path in doomed {
            rm(path)?;
        }
    }
    Ok(moved)
}

/// Makes partition `p`'s frontier anew from `urldb.<tag>` and commits it with `tag`; returns the
/// entries put in. The old directory, if any, goes to `quarantine/<unix time>/pNNNN-frontier/`
/// when it was `damaged`, and is removed otherwise (a rollback's).
fn rebuild_frontier(
    crawl: &CrawlDir,
    cfg: &Config,
    p: u32,
    tag: u32,
    damaged: bool,
    dry_run: bool,
) -> Result<u64> {
    let urldb = crawl.state_file(p, "urldb", tag);
    let mut r = RunReader::open_expect(&urldb, Schema::URLDB)?;
    let mut entries = Vec::new();
    while r.advance()? {
        let u = UrlRecord::decode(r.payload())
            .map_err(|e| Error::corrupt(&urldb, r.block_offset(), format!("URL record: {e}")))?;
        let waiting = match u.state {
            UrlState::Unfetched | UrlState::Retry => true,
            UrlState::Fetched | UrlState::NotModified | UrlState::Redirected => {
                u.recrawl_queued != 0
            }
            UrlState::Gone => false,
        };
        if waiting {
            let host = crate::keys::host_key(crate::keys::host_of(&u.url));
            entries.push(Entry::new(
                Entry::key_for_score(u.score),
                run::key_u64(r.key()),
                host,
            ));
        }
    }
    let n = entries.len() as u64;
    if dry_run {
        return Ok(n);
    }
    let dir = crate::prioritize::frontier_dir(crawl, p);
    if dir.exists() && !damaged {
        std::fs::remove_dir_all(&dir).ctx("remove", &dir)?;
    } else if dir.exists() {
        let q = crawl
            .root()
            .join("quarantine")
            .join(crate::util::unix_now().to_string());
        crate::storage::create_dir_all(&q)?;
        let aside = q.join(format!("{}-frontier", CrawlDir::partition_name(p)));
        std::fs::rename(&dir, &aside).ctx("move aside", &dir)?;
    }
    let mut q = crate::prioritize::open_frontier(crawl, cfg, p)?;
    for chunk in entries.chunks(1 << 16) {
        q.insert_many(chunk)?;
    }
    q.commit(u64::from(tag))?;
    Ok(n)
}
