//! The frontier queues, drained from the old partitions and refilled in the new ones.

use super::*;

/// Moves every old frontier's entries into the new partitions' queues, committed at `cycle`
/// (what prioritize of cycle - 1 leaves). Each old queue is copied to scratch (DIR is only read)
/// and drained [`BATCH`] entries at a time into one sort by (new partition, fingerprint); each
/// new queue is then filled in batches of [`BATCH`] and committed before the next is opened.
/// Returns the new queues' lengths.
pub(super) fn frontiers(
    crawl: &CrawlDir,
    cfg: &Config,
    out: &CrawlDir,
    new_cfg: &Config,
    cycle: u32,
    budget: usize,
    tmp: &Path,
) -> Result<Vec<u64>> {
    let m = cfg.crawl.partitions;
    let m2 = new_cfg.crawl.partitions;
    let scratch = CrawlDir::new(tmp.join(format!(".scratch{}0", storage::TEMP_MARK)));
    let mut router = Router::new(m2, budget, tmp)?;
    let mut moved = 0u64;
    for p in 0..m {
        moved += drain(crawl, cfg, &scratch, cycle, p, &mut router)?;
    }
    let _ = std::fs::remove_dir_all(scratch.root());
    let mut sink = Sink {
        out,
        cfg: new_cfg,
        cycle,
        open: None,
        next: 0,
        batch: Vec::with_capacity(BATCH),
        lens: vec![0; m2 as usize],
    };
    router.finish(&mut run::KeepAll, &mut sink)?;
    sink.close_through(m2)?;
    let total: u64 = sink.lens.iter().sum();
    if total != moved {
        return Err(Error::Internal(format!(
            "repartition: {moved} frontier entries read, {total} written"
        )));
    }
    Ok(sink.lens)
}

/// Drains old partition `p`'s frontier, committed at `cycle`, into `router`, from a copy in
/// `scratch` (the crawl's own queue is only read); returns the entries moved.
fn drain(
    crawl: &CrawlDir,
    cfg: &Config,
    scratch: &CrawlDir,
    cycle: u32,
    p: u32,
    router: &mut Router,
) -> Result<u64> {
    let from = frontier_dir(crawl, p);
    if !from.join("kind").exists() {
        return Err(Error::corrupt(
            &from,
            0,
            format!(
                "missing: the frontier of partition {p}, which the prioritize of cycle {} \
                 committed; run `dragnet repair {}`",
                cycle - 1,
                crawl.root().display()
            ),
        ));
    }
    let copy = frontier_dir(scratch, p);
    storage::create_dir_all(&copy)?;
    for e in std::fs::read_dir(&from).ctx("list", &from)? {
        let e = e.ctx("list", &from)?;
        if e.file_type().ctx("stat", &e.path())?.is_file() {
            std::fs::copy(e.path(), copy.join(e.file_name())).ctx("copy", &e.path())?;
        }
    }
    let mut moved = 0;
    {
        let mut q = open_frontier(scratch, cfg, p)?;
        if q.tag() != u64::from(cycle) {
            return Err(Error::corrupt(
                &from,
                0,
                format!(
                    "the frontier of partition {p} is committed at cycle {} but the crawl is \
                     between cycles {} and {cycle}; run `dragnet repair {}`",
                    q.tag(),
                    cycle - 1,
                    crawl.root().display()
                ),
            ));
        }
        let mut chunk = Vec::with_capacity(BATCH);
        let mut buf = [0u8; Entry::SIZE];
        while !q.is_empty() {
            chunk.clear();
            q.extract_top(BATCH, &mut chunk)?;
            for e in &chunk {
                e.write_to(&mut buf);
                router.push(e.host, e.fp, &buf)?;
                moved += 1;
            }
        }
    }
    std::fs::remove_dir_all(&copy).ctx("remove", &copy)?;
    Ok(moved)
}

/// The new partitions' queues, filled from the router's sorted output one partition at a time
/// (each committed at `cycle` before the next is opened).
struct Sink<'a> {
    out: &'a CrawlDir,
    cfg: &'a Config,
    cycle: u32,
    /// The queue being filled, and its partition.
    open: Option<(u32, Box<dyn DiskQueue>)>,
    /// The partition opened next.
    next: u32,
    batch: Vec<Entry>,
    /// Each new queue's length once committed.
    lens: Vec<u64>,
}

impl Sink<'_> {
    fn flush(&mut self) -> Result<()> {
        if let Some((_, q)) = self.open.as_mut() {
            q.insert_many(&self.batch)?;
        }
        self.batch.clear();
        Ok(())
    }

    /// Commits the open queue and every queue before `end` (those empty too).
    fn close_through(&mut self, end: u32) -> Result<()> {
        loop {
            self.flush()?;
            if let Some((q, mut queue)) = self.open.take() {
                queue.commit(u64::from(self.cycle))?;
                self.lens[q as usize] = queue.len();
            }
            if self.next >= end.min(self.lens.len() as u32) {
                return Ok(());
            }
            let q = self.next;
            self.open = Some((q, open_frontier(self.out, self.cfg, q)?));
            self.next = q + 1;
        }
    }
}

impl RecordSink for Sink<'_> {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        let (q, _) = routed(key);
        if self.open.as_ref().map(|o| o.0) != Some(q) {
            self.close_through(q)?;
            self.open = Some((q, open_frontier(self.out, self.cfg, q)?));
            self.next = q + 1;
        }
        self.batch.push(Entry::read_from(payload));
        if self.batch.len() == BATCH {
            self.flush()?;
        }
        Ok(())
    }
}
