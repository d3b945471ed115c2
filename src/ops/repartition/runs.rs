//! The runs keyed by host key (host table, budgets) and the injected seeds, routed to the new
//! partitions.

use super::*;

/// Copies the runs of `inputs` (old partition order; `None`: that partition has none), all keyed
/// by host key first, into one run per new partition, `out(q)`: old partitions are contiguous
/// ranges of host keys in order, so their records read one after the other are sorted, and cut
/// where the new partitions begin. Writes every new partition's run (empty ones too) if any old
/// one had one. Returns the records.
pub(super) fn restream(
    inputs: &[Option<PathBuf>],
    schema: Schema,
    m2: u32,
    out: &dyn Fn(u32) -> PathBuf,
) -> Result<u64> {
    if inputs.iter().all(Option::is_none) {
        return Ok(0);
    }
    let mut open: Option<(u32, RunWriter)> = None;
    let mut next = 0u32;
    let mut total = 0u64;
    let mut advance_to = |open: &mut Option<(u32, RunWriter)>, q: u32| -> Result<()> {
        while open.as_ref().is_none_or(|o| o.0 < q) {
            if let Some((_, w)) = open.take() {
                w.finish()?;
            }
            if next >= m2 || next > q {
                break;
            }
            let path = out(next);
            storage::create_dir_all(parent_of(&path))?;
            *open = Some((next, RunWriter::create(&path, schema)?));
            next += 1;
        }
        Ok(())
    };
    for path in inputs.iter().flatten() {
        let mut r = RunReader::open_expect(path, schema)?;
        while let Some((key, payload)) = r.next_record()? {
            let host = run::key_u64(&key[..8]);
            let q = partition_of(host, m2);
            if open.as_ref().is_some_and(|o| o.0 > q) {
                return Err(Error::corrupt(
                    path,
                    0,
                    format!(
                        "host key {host:016x} is out of order: it belongs before the partition \
                         this file stands for; run `dragnet check crawl`"
                    ),
                ));
            }
            advance_to(&mut open, q)?;
            open.as_mut().expect("opened").1.push(key, payload)?;
            total += 1;
        }
    }
    advance_to(&mut open, m2)?;
    if let Some((_, w)) = open.take() {
        w.finish()?;
    }
    Ok(total)
}

/// The domain budgets: new partition q counts, per domain, the sum of the old partitions'
/// counts whose host keys overlap its own (an upper bound on what its hosts have spent).
pub(super) fn domain_budgets(
    inputs: &[Option<PathBuf>],
    out: &CrawlDir,
    m: u32,
    m2: u32,
    cycle: u32,
) -> Result<()> {
    if inputs.iter().all(Option::is_none) {
        return Ok(());
    }
    struct Sum(u64);
    impl Reducer for Sum {
        fn record(
            &mut self,
            _: &[u8],
            _: usize,
            payload: &[u8],
            first: bool,
            _: &mut dyn RecordSink,
        ) -> Result<()> {
            let n = u64::from_le_bytes(
                payload
                    .try_into()
                    .map_err(|_| Error::Internal("domain budget count is not 8 bytes".into()))?,
            );
            self.0 = if first { n } else { self.0.saturating_add(n) };
            Ok(())
        }
        fn finish(&mut self, key: &[u8], out: &mut dyn RecordSink) -> Result<()> {
            out.push(key, &self.0.to_le_bytes())
        }
    }
    for q in 0..m2 {
        let readers = overlapping(q, m2, m)
            .filter_map(|p| inputs[p as usize].as_ref())
            .map(|path| RunReader::open_expect(path, Schema::DOMAIN_BUDGET))
            .collect::<Result<Vec<_>>>()?;
        let mut w = RunWriter::create(
            &out.state_file(q, "domain_budget", cycle),
            Schema::DOMAIN_BUDGET,
        )?;
        run::merge(readers, &mut Sum(0), &mut w)?;
        w.finish()?;
    }
    Ok(())
}

/// The seeds `dragnet inject` left for cycle `cycle`'s merge, routed to their new owners (one
/// run each; a seed injected twice is one record with the cash of both, as the merge would have
/// summed them). Returns the seeds.
pub(super) fn route_injected(rw: &Rewrite<'_>) -> Result<u64> {
    let (crawl, out, m, m2, cycle) = (rw.crawl, rw.out, rw.m, rw.m2, rw.cycle);
    let (budget, tmp) = (rw.budget, rw.tmp);
    let mut router = Router::new(m2, budget, tmp)?;
    let mut any = false;
    for p in 0..m {
        for f in crawl.inject_runs(cycle, p) {
            any = true;
            let mut r = RunReader::open_expect(&f, Schema::SPLIT)?;
            while let Some((key, payload)) = r.next_record()? {
                let fp = run::key_u64(key);
                let rec = SplitRecord::decode(payload)
                    .map_err(|e| Error::corrupt(&f, 0, format!("{fp:016x}: {e}")))?;
                router.push(host_key(host_of(&rec.url)), fp, payload)?;
            }
        }
    }
    if !any {
        return Ok(0);
    }
    /// Sums the cash of one URL's injected records, smallest depth.
    struct Combine(Option<SplitRecord>);
    impl Reducer for Combine {
        fn record(
            &mut self,
            _: &[u8],
            _: usize,
            payload: &[u8],
            first: bool,
            _: &mut dyn RecordSink,
        ) -> Result<()> {
            let r = SplitRecord::decode(payload).map_err(|e| Error::Internal(e.to_string()))?;
            match (&mut self.0, first) {
                (Some(acc), false) => {
                    acc.cash += r.cash;
                    acc.depth = acc.depth.min(r.depth);
                    acc.inlinks += r.inlinks;
                }
                _ => self.0 = Some(r),
            }
            Ok(())
        }
        fn finish(&mut self, key: &[u8], out: &mut dyn RecordSink) -> Result<()> {
            let r = self.0.take().expect("a group has a record");
            out.push(key, &r.encode())
        }
    }
    struct Sink<'a> {
        out: &'a CrawlDir,
        cycle: u32,
        open: Option<(u32, RunWriter)>,
        seeds: u64,
    }
    impl RecordSink for Sink<'_> {
        fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
            let (q, fp) = routed(key);
            if self.open.as_ref().map(|o| o.0) != Some(q) {
                if let Some((_, w)) = self.open.take() {
                    w.finish()?;
                }
                let path = self
                    .out
                    .inject_run(self.cycle, q, "000000000000000-repartition");
                storage::create_dir_all(&self.out.split_to_dir(self.cycle, q))?;
                self.open = Some((q, RunWriter::create(&path, Schema::SPLIT)?));
            }
            self.seeds += 1;
            self.open
                .as_mut()
                .expect("opened")
                .1
                .push(&run::fp_key(fp), payload)
        }
    }
    let mut sink = Sink {
        out,
        cycle,
        open: None,
        seeds: 0,
    };
    router.finish(&mut Combine(None), &mut sink)?;
    if let Some((_, w)) = sink.open.take() {
        w.finish()?;
    }
    Ok(sink.seeds)
}
