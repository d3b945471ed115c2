//! The earlier cycles carried into NEWDIR: archive files hard-linked, stage markers for the new
//! partitions.

use super::*;
use crate::crawl::report::counter;

/// Hard-links (or copies) the archive of every cycle before `cycle`: WARC and WET files, CDXJ
/// indexes, the crawl's index, and makes `archive -> cycles`. Returns (linked, copied).
pub(super) fn history(crawl: &CrawlDir, out: &CrawlDir, m: u32, cycle: u32) -> Result<(u64, u64)> {
    let (mut linked, mut copied) = (0u64, 0u64);
    let mut carry = |from: &Path, to: &Path| -> Result<()> {
        storage::create_dir_all(parent_of(to))?;
        match std::fs::hard_link(from, to) {
            Ok(()) => linked += 1,
            Err(_) => {
                std::fs::copy(from, to).ctx("copy", from)?;
                std::fs::File::open(to)
                    .and_then(|f| f.sync_all())
                    .ctx("sync", to)?;
                copied += 1;
            }
        }
        Ok(())
    };
    for c in crawl.cycles().into_iter().filter(|&c| c < cycle) {
        for sub in ["warc", "cdxj"] {
            let dir = crawl.cycle_dir(c).join(sub);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<_> = entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name())
                .filter(|n| !storage::is_temp_name(&n.to_string_lossy()))
                .collect();
            names.sort();
            for n in names {
                carry(&dir.join(&n), &out.cycle_dir(c).join(sub).join(&n))?;
            }
            storage::sync_dir(&out.cycle_dir(c).join(sub))?;
        }
        let index = crawl.cycle_cdxj(c);
        if index.exists() {
            carry(&index, &out.cycle_cdxj(c))?;
        } else if crawl.done_everywhere(c, Stage::Fetch, m) {
            // A cycle whose end was not indexed: its index from the old partitions' (linked
            // above), as the executor would have made it.
            crate::ops::index::index_cycle(out, m, c)?;
        }
    }
    let indexes = crawl.indexes_dir();
    if let Ok(entries) = std::fs::read_dir(&indexes) {
        for e in entries.flatten() {
            let n = e.file_name();
            if e.file_type().is_ok_and(|t| t.is_file())
                && !storage::is_temp_name(&n.to_string_lossy())
            {
                carry(&e.path(), &out.indexes_dir().join(&n))?;
            }
        }
    }
    if crawl.archive_link().symlink_metadata().is_ok() {
        std::os::unix::fs::symlink("cycles", out.archive_link())
            .ctx("link", &out.archive_link())?;
    }
    Ok((linked, copied))
}

/// Adds `from`'s counts into `into` (cache hit rates recomputed, flags kept as flags).
pub(super) fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, &v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        if k == counter::INLINE || k == counter::RESUMED {
            *e = (*e).max(v);
        } else {
            *e = e.saturating_add(v);
        }
    }
    let (hits, misses) = (
        into.get(counter::CACHE_HITS).copied(),
        into.get(counter::CACHE_MISSES).copied(),
    );
    if let (Some(h), Some(mi)) = (hits, misses) {
        if into.contains_key(counter::CACHE_HIT_PERMILLE) {
            let n = h + mi;
            into.insert(
                counter::CACHE_HIT_PERMILLE.into(),
                (h * 1000).checked_div(n).unwrap_or(0),
            );
        }
    }
}

/// Writes every stage's marker of every cycle before `cycle` for the new partitions (see the
/// module docs). Returns how many.
pub(super) fn markers(
    crawl: &CrawlDir,
    out: &CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
    frontier: Option<&[u64]>,
) -> Result<u64> {
    let carry = Carry {
        crawl,
        out,
        m,
        m2,
        cycle,
        frontier,
    };
    let mut written = 0u64;
    let cycles: Vec<u32> = (0..=cycle).filter(|&c| c < cycle || c == 0).collect();
    for c in cycles {
        for stage in std::iter::once(Stage::Init).chain(Stage::CYCLE) {
            if stage == Stage::Init && c != 0 {
                continue;
            }
            if stage != Stage::Init && c >= cycle {
                continue;
            }
            if !crawl.stage_dir(c, stage).is_dir() {
                continue;
            }
            written += carry.stage(c, stage)?;
        }
    }
    Ok(written)
}

/// The markers of DIR (`m` partitions) carried into NEWDIR (`m2`), which the crawl continues
/// from at `cycle`; `frontier`: the new queues' lengths.
struct Carry<'a> {
    crawl: &'a CrawlDir,
    out: &'a CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
    frontier: Option<&'a [u64]>,
}

impl Carry<'_> {
    /// The markers of `stage` in cycle `c` for every new partition; returns how many.
    fn stage(&self, c: u32, stage: Stage) -> Result<u64> {
        let (crawl, m, m2) = (self.crawl, self.m, self.m2);
        storage::create_dir_all(&self.out.stage_dir(c, stage))?;
        // Old partitions in order; each goes to new partition p * m2 / m.
        let home = |p: u32| (u64::from(p) * u64::from(m2) / u64::from(m)) as u32;
        let mut written = 0;
        let mut p = 0u32;
        for q in 0..m2 {
            let mut group: Vec<DoneMarker> = Vec::new();
            while p < m && home(p) == q {
                if let Some(mk) = DoneMarker::read(&crawl.done_path(c, stage, p))? {
                    group.push(mk);
                }
                p += 1;
            }
            let Some(mut mk) = self.merged(c, stage, q, &group)? else {
                continue;
            };
            self.produced(c, stage, q, &mut mk)?;
            mk.publish(&self.out.done_path(c, stage, q))?;
            written += 1;
        }
        Ok(written)
    }

    /// New partition `q`'s marker of `stage` in cycle `c` from the markers of the old
    /// partitions told to it (`group`): their counts added up, their history outputs that
    /// NEWDIR holds. Times from the old partition holding the new one's first hosts if none is
    /// its; `None` if that has no marker either.
    fn merged(
        &self,
        c: u32,
        stage: Stage,
        q: u32,
        group: &[DoneMarker],
    ) -> Result<Option<DoneMarker>> {
        let rep = match group.first() {
            Some(mk) => mk.clone(),
            None => {
                let at = partition_of(first_key(q, self.m2) as u64, self.m);
                match DoneMarker::read(&self.crawl.done_path(c, stage, at))? {
                    Some(mk) => mk,
                    None => return Ok(None),
                }
            }
        };
        let mut mk = DoneMarker {
            partition: q,
            inputs: Vec::new(),
            outputs: Vec::new(),
            counts: BTreeMap::new(),
            checksum: String::new(),
            ..rep
        };
        for g in group {
            add_counts(&mut mk.counts, &g.counts);
            mk.started = mk.started.clone().min(g.started.clone());
            mk.finished = mk.finished.clone().max(g.finished.clone());
            mk.seconds = mk.seconds.max(g.seconds);
            for o in &g.outputs {
                let path = self.out.root().join(&o.path);
                if path.is_file() && o.records.is_none() {
                    mk.outputs.push(o.clone());
                }
            }
        }
        mk.counts
            .insert(counter::REPARTITIONED_FROM.into(), u64::from(self.m));
        Ok(Some(mk))
    }

    /// Adds to `mk` (new partition `q`'s marker of `stage` in cycle `c`) the files written here
    /// that this stage of this cycle made, and the counts that describe them.
    fn produced(&self, c: u32, stage: Stage, q: u32, mk: &mut DoneMarker) -> Result<()> {
        let (out, cycle) = (self.out, self.cycle);
        let last = cycle.checked_sub(1);
        let produced: Vec<PathBuf> = match stage {
            Stage::Init if cycle == 0 => vec![
                out.state_file(q, "seen", 0),
                out.state_file(q, "urldb", 0),
                out.fetchlist(0, q),
            ],
            Stage::Merge if Some(c) == last => vec![
                out.state_file(q, "seen", cycle),
                out.state_file(q, "urldb", cycle),
            ],
            Stage::Prioritize if Some(c) == last => vec![out.fetchlist(cycle, q)],
            _ => Vec::new(),
        };
        for path in &produced {
            mk.outputs.push(FileDigest::of_run(out, path)?);
        }
        if Stage::Prioritize == stage && Some(c) == last {
            let listed = RunReader::open(&out.fetchlist(cycle, q))?.len();
            mk.counts.insert(counter::SELECTED.into(), listed);
            if let Some(f) = self.frontier {
                mk.counts.insert(counter::FRONTIER.into(), f[q as usize]);
            }
        }
        if stage == Stage::Init && cycle == 0 {
            let n = RunReader::open(&out.fetchlist(0, q))?.len();
            mk.counts.insert(counter::SEEDS.into(), n);
        }
        Ok(())
    }
}
