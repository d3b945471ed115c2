//! State retention: removing the versions of `state/pNNNN/<kind>.CCCCCC.<ext>` that no re-run
//! can need any more.
//!
//! Each cycle writes a new version of every state file (seen set, URL db, host table, CLOCK
//! cache, host budget) and keeps the old ones, so a stage of a past cycle can be re-run and
//! gives the same bytes. Kept forever, that is one full copy of the crawl's state per cycle: a
//! nightly crawl would hold 365 copies of its seen set and URL db after a year. `dragnet cycle`
//! therefore keeps only what the last `[cycle] keep_cycles` cycles need (their inputs and
//! everything newer) and removes older versions after each complete cycle. WARC files, fetch
//! results and `.done` markers in `cycles/` are the crawl's record and are never removed here.
//!
//! The same goes for the runs that pass between the stages of a cycle (the links runs of parse,
//! the split runs, the merge's frontier updates): once a cycle's state is gone its stages cannot
//! be re-run, and those runs are only their inputs, so [`prune_cycles`] removes them for the
//! same cycles (they can be made again from the WARC files with `dragnet reparse`). What a cycle
//! leaves as its record stays: WARC files, fetch lists, fetch results, pages runs, markers.
//!
//! A kind is not necessarily written every cycle, so "the input of cycle C" is the newest
//! version at most C ([`CrawlDir::latest_state_ext`]); that one is kept with everything after
//! it. Removal is file by file, each one independent: a kill in the middle leaves a crawl that
//! works and a later prune finishes the job.

use std::collections::BTreeMap;

use crate::crawl::CrawlDir;
use crate::error::{IoContext, Result};

/// Removes, in every partition's state directory, each state version older than the one cycle
/// `oldest` reads. Returns how many files were removed.
pub fn prune_state(crawl: &CrawlDir, partitions: u32, oldest: u32) -> Result<u64> {
    let mut removed = 0;
    for p in 0..partitions {
        let dir = crawl.state_dir(p);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        // (kind, ext) -> versions present.
        let mut versions: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some((kind, v, ext)) = parse_state_name(&name) {
                versions
                    .entry((kind.to_string(), ext.to_string()))
                    .or_default()
                    .push(v);
            }
        }
        for ((kind, ext), vs) in versions {
            let Some(base) = vs.iter().copied().filter(|&v| v <= oldest).max() else {
                continue;
            };
            for v in vs.into_iter().filter(|&v| v < base) {
                let path = crawl.state_file_ext(p, &kind, &ext, v);
                crate::storage::fault::check("remove", &path)
                    .and_then(|()| std::fs::remove_file(&path))
                    .ctx("remove", &path)?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// Removes the intermediate runs of every cycle before `oldest` (see the module docs): the
/// directories `links/`, `new/` and `split/to-*/` of `cycles/CCCCCC/`. Returns how many files
/// were removed.
pub fn prune_cycles(crawl: &CrawlDir, oldest: u32) -> Result<u64> {
    let mut removed = 0;
    for c in crawl.cycles().into_iter().filter(|&c| c < oldest) {
        let dir = crawl.cycle_dir(c);
        let mut doomed = vec![dir.join("links"), dir.join("new")];
        if let Ok(entries) = std::fs::read_dir(dir.join("split")) {
            doomed.extend(
                entries
                    .flatten()
                    .filter(|e| CrawlDir::is_split_to_dir(&e.file_name().to_string_lossy()))
                    .map(|e| e.path()),
            );
        }
        for d in doomed {
            let Ok(files) = std::fs::read_dir(&d) else {
                continue;
            };
            removed += files.count() as u64;
            match crate::storage::fault::check("remove", &d)
                .and_then(|()| std::fs::remove_dir_all(&d))
            {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(crate::error::Error::io("remove", d, e)),
            }
        }
    }
    Ok(removed)
}

/// `<kind>.<six digits>.<ext>` -> (kind, version, ext); `None` for anything else (temporary
/// files start with a dot, the frontier is a directory).
fn parse_state_name(name: &str) -> Option<(&str, u32, &str)> {
    if name.starts_with('.') {
        return None;
    }
    let mut parts = name.splitn(3, '.');
    let (kind, v, ext) = (parts.next()?, parts.next()?, parts.next()?);
    if kind.is_empty() || ext.is_empty() || v.len() != 6 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((kind, v.parse().ok()?, ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_kinds_input_of_the_oldest_cycle_and_everything_newer() {
        let t = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(t.path());
        let dir = crawl.state_dir(0);
        std::fs::create_dir_all(dir.join("frontier")).unwrap();
        let names = [
            "seen.000000.run",
            "seen.000001.run",
            "seen.000002.run",
            "seen.000003.run",
            "urldb.000003.run",
            "hosts.000000.run", // not rewritten since cycle 0: still the input of cycle 2
            "cache.000001.clock",
            "cache.000002.clock",
            ".seen.000000.run.tmp.123",
            "notes.txt",
        ];
        for n in names {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
        assert_eq!(prune_state(&crawl, 1, 2).unwrap(), 3);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".seen.000000.run.tmp.123",
                "cache.000002.clock",
                "frontier",
                "hosts.000000.run",
                "notes.txt",
                "seen.000002.run",
                "seen.000003.run",
                "urldb.000003.run",
            ]
        );
        // Idempotent, and a missing partition directory is no error.
        assert_eq!(prune_state(&crawl, 3, 2).unwrap(), 0);
    }

    #[test]
    fn removes_the_runs_between_stages_of_old_cycles_and_keeps_their_record() {
        let t = tempfile::tempdir().unwrap();
        let crawl = CrawlDir::new(t.path());
        let files = |c: u32| {
            vec![
                crawl.links(c, 0),
                crawl.links(c, 1),
                crawl.new_urls(c, 0),
                crawl.split_run(c, 0, 1),
                crawl.split_run(c, 1, 1),
                crawl.done_path(c, crate::crawl::Stage::Split, 1),
                crawl.fetched(c, 0),
                crawl.pages(c, 0),
                crawl.fetchlist(c, 0),
                crawl.warc_dir(c).join("p0000-000001.warc.zst"),
            ]
        };
        for c in 0..3 {
            for f in files(c) {
                std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                std::fs::write(&f, b"x").unwrap();
            }
        }
        assert_eq!(prune_cycles(&crawl, 2).unwrap(), 2 * 5);
        for c in 0..3 {
            for (i, f) in files(c).into_iter().enumerate() {
                assert_eq!(f.exists(), c >= 2 || i >= 5, "cycle {c}: {}", f.display());
            }
        }
        assert!(!crawl.cycle_dir(0).join("split/to-p0000").exists());
        assert_eq!(prune_cycles(&crawl, 2).unwrap(), 0);
    }
}
