//! `dragnet inject --seeds FILE DIR`: new seeds for a crawl that already runs, between cycles.
//!
//! An operator adds URLs (a new site, a list from elsewhere) without starting over. The seeds go
//! the way every discovered link goes: they are canonicalized and checked against `[scope]`,
//! then written as split runs of the cycle that runs next, one per owning partition,
//! `cycles/N/split/to-pQQQQ/inject-<stamp>.run` ([`SplitRecord`]s at depth 0 carrying
//! `--priority` as OPIC cash). The merge of cycle N reads them with the split's runs: a seed
//! the crawl has never seen becomes a new URL of the frontier with that priority; one it knows
//! is not queued twice, its cash is only added to the URL's score (the normal deduplication,
//! no special case).
//!
//! Injecting takes the crawl's lock (not while a cycle runs) and refuses a cycle whose merge has
//! already begun in some partition (its seeds would reach some partitions and not others):
//! finish that cycle first (`dragnet cycle`). Each run file is published atomically; an inject
//! killed half-way leaves some partitions' files, and running it again adds the rest (the
//! merge deduplicates the seeds that were already there).

use std::path::{Path, PathBuf};

use super::init::{read_seeds, BadSeed};
use crate::config::Config;
use crate::crawl::CrawlLock;
use crate::crawl::{CrawlDir, Stage};
use crate::error::{Error, Result};
use crate::keys::partition_of;
use crate::records::SplitRecord;
use crate::run::{self, KeepFirst, RecordSink, RunWriter, Schema, Sorter};

/// What `inject` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InjectReport {
    /// The cycle whose merge reads the seeds.
    pub cycle: u32,
    /// Lines in the seed file.
    pub lines: u64,
    /// Distinct seeds written.
    pub seeds: u64,
    /// Lines skipped as bad or out of scope.
    pub bad: u64,
    /// Run files written (one per partition that owns a seed).
    pub files: Vec<PathBuf>,
}

/// The stamp of an injected split run ([`CrawlDir::inject_run`]): `<unix ms>-<pid>`, unique and
/// in time order.
fn stamp() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{ms:015}-{}", std::process::id())
}

/// Adds the seeds of `seeds` to the crawl at `dir` with OPIC cash `priority` (see the module
/// docs); `on_bad` hears of every skipped line.
pub fn inject(
    dir: &Path,
    seeds: &Path,
    priority: f64,
    on_bad: &mut dyn FnMut(&BadSeed),
) -> Result<InjectReport> {
    if !priority.is_finite() || priority <= 0.0 {
        return Err(Error::Usage(format!(
            "--priority {priority}: must be a number > 0 (a seed of `dragnet init` has 1)"
        )));
    }
    let crawl = CrawlDir::new(dir);
    let config = Config::load(&crawl.config_path())?;
    let file = std::fs::File::open(seeds).map_err(|e| {
        Error::Usage(format!(
            "cannot read the seed file {}: {e}; give a text file of URLs, one per line, with --seeds",
            seeds.display()
        ))
    })?;
    let _lock = CrawlLock::acquire(dir, "inject")?;
    let m = config.crawl.partitions;
    let cycle = crate::crawl::next_cycle(&crawl, m);
    if let Some(p) = (0..m).find(|&p| crawl.done_path(cycle, Stage::Merge, p).exists()) {
        return Err(Error::Usage(format!(
            "cycle {cycle} is being merged (partition {p} is done): its seeds would reach some \
             partitions and not others; finish the cycle (`dragnet cycle {}`) and inject again",
            dir.display()
        )));
    }
    let budget = (config.sort.memory_budget.0 / 2) as usize;
    let mut sorter = Sorter::new(Schema::FETCHLIST, budget, dir)?;
    let read = read_seeds(file, seeds, &config, on_bad, &mut |key| {
        let rec = SplitRecord {
            url: key.url,
            cash: priority,
            depth: 0,
            inlinks: 0,
        };
        sorter.push(
            &run::host_fp_key(key.host_key, key.fingerprint),
            &rec.encode(),
        )
    })?;
    let mut router = Router {
        crawl: &crawl,
        cycle,
        partitions: m,
        budget,
        stamp: stamp(),
        open: None,
        files: Vec::new(),
        seeds: 0,
    };
    sorter.finish(&mut KeepFirst, &mut router)?;
    router.close()?;
    Ok(InjectReport {
        cycle,
        lines: read.lines,
        seeds: router.seeds,
        bad: read.bad,
        files: router.files,
    })
}

/// Routes the (host, fingerprint)-sorted seeds to their partitions, each sorted again by
/// fingerprint into its run (partitions come in order: a partition is a monotone function of
/// the host key).
struct Router<'a> {
    crawl: &'a CrawlDir,
    cycle: u32,
    partitions: u32,
    budget: usize,
    stamp: String,
    open: Option<(u32, Sorter)>,
    files: Vec<PathBuf>,
    seeds: u64,
}

impl Router<'_> {
    fn close(&mut self) -> Result<()> {
        let Some((p, sorter)) = self.open.take() else {
            return Ok(());
        };
        let dir = self.crawl.split_to_dir(self.cycle, p);
        crate::storage::create_dir_all(&dir)?;
        let path = self.crawl.inject_run(self.cycle, p, &self.stamp);
        let mut w = RunWriter::create(&path, Schema::SPLIT)?;
        sorter.finish(&mut KeepFirst, &mut w)?;
        w.finish()?;
        crate::storage::sync_dir(&dir)?;
        self.files.push(path);
        Ok(())
    }
}

impl RecordSink for Router<'_> {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        let p = partition_of(run::key_u64(&key[..8]), self.partitions);
        if self.open.as_ref().map(|o| o.0) != Some(p) {
            self.close()?;
            self.open = Some((
                p,
                Sorter::new(Schema::SPLIT, self.budget, self.crawl.root())?,
            ));
        }
        let (_, sorter) = self.open.as_mut().expect("opened above");
        sorter.push(&key[8..16], payload)?;
        self.seeds += 1;
        Ok(())
    }
}
