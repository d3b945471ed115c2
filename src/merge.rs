//! `dragnet merge --cycle N --partition p DIR`: the dedup-merge (docs/design.md §1, §5), IRLbot's DRUM
//! check+update as one sequential pass.
//!
//! Inputs, all sorted by URL fingerprint and merged k-way ([`crate::run::Merger`]):
//!
//! 0. `state/pNNNN/seen.N.run`: every fingerprint the partition knows;
//! 1. `state/pNNNN/urldb.N.run`: their records;
//! 2. `cycles/N/fetched/pNNNN.run`: what the fetch of this cycle got;
//! 3. `cycles/N/split/to-pNNNN/from-*.run`: what every partition's split routed here.
//!
//! For each fingerprint the group of its records decides, with no lookup and nothing held but the
//! group: a fingerprint in no seen set but with a routed URL, or with a fetch result of a URL the
//! fetch followed within its run, is **new** (a URL record is created);
//! a known one takes the fetch result (status, time, validators, digest and change count; its
//! OPIC cash is spent, so its score restarts at 0) and the cash its in-links bring. Outputs:
//!
//! - `state/pNNNN/seen.(N+1).run` and `state/pNNNN/urldb.(N+1).run` (the versions cycle N+1
//!   starts from; the old ones stay, so a re-run reads the same inputs and writes the same bytes);
//! - `cycles/N/new/pNNNN.run` ([`FrontierUpdate`]): the URLs prioritize must (re)insert into the
//!   frontier: new ones, known unfetched ones whose cash grew, and those this cycle's fetch could
//!   not complete (deferred, retry);
//! - `cycles/N/merge/pNNNN.done`.
//!
//! Memory: the merge's cursors (one block per input), one group, and fixed queues: the seen set
//! and URL db are read ahead and their successors written behind in 1 MiB direct-I/O chunks
//! (`crate::direct`, a few per file), and the two big writers hold a few blocks in flight.
//! Nothing grows with the seen set or the batch.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage, StageReport};
use crate::error::{Error, Result};
use crate::records::FrontierUpdate;
use crate::records::SplitRecord;
use crate::records::{DecodeError, FetchResult, UrlRecord, UrlState};
use crate::run::{self, Merger, RunReader, RunWriter, Schema};

mod drum;

pub use drum::{check_update, CheckUpdate};

/// The split runs routed to partition `p` in `cycle` that exist: a split writes no run for an
/// owner it routed nothing to, and says so by not listing it in its `.done` marker; a run the
/// marker lists but the directory lacks is lost, an error.
fn split_runs(crawl: &CrawlDir, cycle: u32, p: u32, m: u32) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(m as usize);
    for q in 0..m {
        let path = crawl.split_run(cycle, p, q);
        if path.exists() {
            out.push(path);
            continue;
        }
        let marker_path = crawl.done_path(cycle, Stage::Split, q);
        let listed = DoneMarker::read(&marker_path)?.is_some_and(|mk| {
            let rel = crawl.relative(&path);
            mk.outputs.iter().any(|o| o.path == rel)
        });
        if listed {
            return Err(Error::corrupt(
                &path,
                0,
                format!(
                    "missing: the split of partition {q} wrote it ({} lists it); re-run that \
                     split (remove its .done marker) or restore the file",
                    marker_path.display()
                ),
            ));
        }
    }
    // Seeds `dragnet inject` added for this cycle, in the order they were injected.
    out.extend(crawl.inject_runs(cycle, p));
    Ok(out)
}

/// The records of one fingerprint, as the merge collects them.
#[derive(Default)]
struct Group {
    fp: u64,
    in_seen: bool,
    record: Option<UrlRecord>,
    fetched: Option<FetchResult>,
    url: String,
    cash: f64,
    depth: u32,
    routed: u32,
    credits: u32,
}

/// Runs the dedup-merge of partition `p` in `cycle` (see the module docs).
pub fn merge_partition(crawl: &CrawlDir, cfg: &Config, cycle: u32, p: u32) -> Result<StageReport> {
    if let Some(done) = crate::crawl::gate(crawl, cfg, Stage::Merge, cycle, p)? {
        return Ok(done);
    }
    let started = SystemTime::now();
    let paths = input_paths(crawl, cycle, p, cfg.crawl.partitions)?;
    let inputs = open_inputs(&paths)?;
    let mut out = Out::create(crawl, cfg, cycle, p, paths[1].clone())?;
    merge_groups(inputs, &paths, &mut out)?;
    let Out {
        seen,
        urldb,
        updates,
        mut counts,
        ..
    } = out;
    counts.insert("known_after".into(), seen.finish()?.records);
    urldb.finish()?;
    updates.finish()?;

    let mut marker = DoneMarker::new(Stage::Merge, cycle, p, started);
    for path in &paths {
        marker.inputs.push(FileDigest::of_run(crawl, path)?);
    }
    for path in output_paths(crawl, cycle, p) {
        marker.outputs.push(FileDigest::of_run(crawl, &path)?);
    }
    marker.counts = counts;
    let done_path = crawl.done_path(cycle, Stage::Merge, p);
    Ok(StageReport::ran(marker.commit(&done_path, started)?))
}

/// The merge's inputs in the order of their sources: the seen set, the URL db, the fetch
/// results, then the split runs ([`split_runs`]).
fn input_paths(crawl: &CrawlDir, cycle: u32, p: u32, m: u32) -> Result<Vec<PathBuf>> {
    let seen_path = state_input(crawl, cycle, p, "seen")?;
    let urldb_path = state_input(crawl, cycle, p, "urldb")?;
    let fetched_path = crawl.fetched(cycle, p);
    let splits = split_runs(crawl, cycle, p, m)?;
    Ok([seen_path, urldb_path, fetched_path]
        .into_iter()
        .chain(splits)
        .collect())
}

/// The `kind` state file of partition `p` that `cycle` reads: exactly that version (written by
/// `init` for cycle 0, by the merge of the cycle before otherwise), since an older one would
/// queue again what has been fetched since.
fn state_input(crawl: &CrawlDir, cycle: u32, p: u32, kind: &str) -> Result<PathBuf> {
    let path = crawl.state_file(p, kind, cycle);
    if path.exists() {
        return Ok(path);
    }
    Err(if cycle == 0 {
        Error::Usage(format!(
            "{}: no {kind} state of partition {p} for cycle 0; was the crawl made by `dragnet init`?",
            path.display()
        ))
    } else {
        Error::corrupt(
            &path,
            0,
            format!(
                "missing: the merge of cycle {} wrote it (its .done marker names it), and the \
                 merge of cycle {cycle} reads exactly it, never an older version",
                cycle - 1
            ),
        )
    })
}

/// Readers of the [`input_paths`], each checked against its schema.
fn open_inputs(paths: &[PathBuf]) -> Result<Vec<RunReader>> {
    // The seen set and the URL db are the inputs that grow with the crawl, each read once:
    // around the page cache (`crate::direct`), as their successors are written.
    let mut inputs = vec![
        RunReader::open_direct(&paths[0])?.expecting(Schema::SEEN)?,
        RunReader::open_direct(&paths[1])?.expecting(Schema::URLDB)?,
        RunReader::open_expect(&paths[2], Schema::FETCHED)?,
    ];
    for s in &paths[3..] {
        inputs.push(RunReader::open_expect(s, Schema::SPLIT)?);
    }
    Ok(inputs)
}

/// What the merge of partition `p` writes: the next seen set and URL db, the frontier updates.
fn output_paths(crawl: &CrawlDir, cycle: u32, p: u32) -> [PathBuf; 3] {
    [
        crawl.state_file(p, "seen", cycle + 1),
        crawl.state_file(p, "urldb", cycle + 1),
        crawl.new_urls(cycle, p),
    ]
}

/// The k-way merge of `inputs` (read from `paths`), one group of records per fingerprint
/// handed to `out`.
fn merge_groups(inputs: Vec<RunReader>, paths: &[PathBuf], out: &mut Out<'_>) -> Result<()> {
    let mut merger = Merger::new(inputs);
    let mut group: Option<Group> = None;
    while merger.advance()? {
        let fp = run::key_u64(merger.key());
        if group.as_ref().is_some_and(|g| g.fp != fp) {
            out.finish_group(group.take().expect("checked"))?;
        }
        let g = group.get_or_insert_with(|| Group {
            fp,
            depth: u32::MAX,
            ..Group::default()
        });
        let src = merger.source();
        let bad = |e: DecodeError| Error::corrupt(&paths[src], 0, format!("{fp:016x}: {e}"));
        g.add(src, merger.payload()).map_err(bad)?;
    }
    if let Some(g) = group.take() {
        out.finish_group(g)?;
    }
    Ok(())
}

impl Group {
    /// Adds a record of input `src` (in the order of [`input_paths`]).
    fn add(&mut self, src: usize, payload: &[u8]) -> std::result::Result<(), DecodeError> {
        match src {
            0 => self.in_seen = true,
            1 => self.record = Some(UrlRecord::decode(payload)?),
            2 => self.fetched = Some(FetchResult::decode(payload)?),
            _ => {
                let s = SplitRecord::decode(payload)?;
                self.cash += s.cash;
                self.depth = self.depth.min(s.depth);
                if s.url.is_empty() {
                    self.credits += 1;
                } else {
                    self.routed += 1;
                    if self.url.is_empty() {
                        self.url = s.url;
                    }
                }
            }
        }
        Ok(())
    }
}

fn big_output(schema: Schema) -> run::WriterOptions {
    run::WriterOptions {
        background: true,
        direct: true,
        ..run::WriterOptions::for_schema(schema)
    }
}

struct Out<'a> {
    cycle: u32,
    /// Unix seconds the recrawl decisions are made at.
    now: u64,
    recrawl: &'a crate::config::prioritize::PrioritizeSection,
    urldb_path: PathBuf,
    seen: RunWriter,
    urldb: RunWriter,
    updates: RunWriter,
    counts: BTreeMap<String, u64>,
}

impl<'a> Out<'a> {
    /// The merge's writers for partition `p` of `cycle` (see [`output_paths`]), after what a
    /// killed merge left is removed; `urldb_path` is the URL db read, named by its errors.
    fn create(
        crawl: &CrawlDir,
        cfg: &'a Config,
        cycle: u32,
        p: u32,
        urldb_path: PathBuf,
    ) -> Result<Out<'a>> {
        let [new_seen, new_urldb, updates_path] = output_paths(crawl, cycle, p);
        let updates_dir = updates_path.parent().expect("has a parent");
        crate::storage::create_dir_all(updates_dir)?;
        crate::storage::create_dir_all(&crawl.stage_dir(cycle, Stage::Merge))?;
        // What a killed merge left: its half-written seen set and URL db (the biggest
        // temporaries of a crawl) and frontier updates. Live writers' temporaries are spared.
        for d in [crawl.state_dir(p), updates_dir.to_path_buf()] {
            crate::storage::remove_temps(&d)?;
        }
        // The recrawl clock: when this partition's fetch of the cycle started, from its
        // committed marker, so a re-run of the merge decides exactly as the first run did.
        let now = DoneMarker::read(&crawl.done_path(cycle, Stage::Fetch, p))?
            .and_then(|m| crate::util::parse_rfc3339(&m.started))
            .unwrap_or(0);
        Ok(Out {
            cycle,
            now,
            recrawl: &cfg.prioritize,
            urldb_path,
            // The two outputs that grow with the crawl compress and write on threads of their
            // own while this one merges, around the page cache (same bytes either way).
            seen: RunWriter::with_options(&new_seen, Schema::SEEN, big_output(Schema::SEEN))?,
            urldb: RunWriter::with_options(&new_urldb, Schema::URLDB, big_output(Schema::URLDB))?,
            updates: RunWriter::create(&updates_path, Schema::NEW)?,
            counts: BTreeMap::new(),
        })
    }
}

impl Out<'_> {
    fn bump(&mut self, name: &str) {
        crate::util::count(&mut self.counts, name, 1);
    }

    fn finish_group(&mut self, g: Group) -> Result<()> {
        let key = run::fp_key(g.fp);
        if g.in_seen != g.record.is_some() {
            return Err(Error::corrupt(
                &self.urldb_path,
                0,
                format!(
                    "fingerprint {:016x} is in {} but not in {}: the seen set and the URL db disagree",
                    g.fp,
                    if g.in_seen { "the seen set" } else { "the URL db" },
                    if g.in_seen { "the URL db" } else { "the seen set" },
                ),
            ));
        }
        let known = g.record.is_some();
        if known {
            self.bump("known_before");
        }
        let (mut rec, new) = match (g.record, &g.fetched) {
            (Some(r), _) => (r, false),
            (None, _) if !g.url.is_empty() => (
                UrlRecord::discovered(g.url.clone(), g.depth, 0.0, self.cycle),
                true,
            ),
            // Followed within the fetch run (a same-origin link of a page it fetched): the
            // result carries the URL and its depth; no link routed it (yet).
            (None, Some(f)) if !f.url.is_empty() => {
                self.bump("followed_unrouted");
                (
                    UrlRecord::discovered(f.url.clone(), f.depth, 0.0, self.cycle),
                    true,
                )
            }
            (None, _) => {
                // Only cash credits (or a fetch result) for a URL this partition never knew:
                // nothing to attach them to.
                if g.fetched.is_some() {
                    self.bump("orphan_fetch_results");
                }
                if g.credits > 0 {
                    self.bump("orphan_credits");
                }
                return Ok(());
            }
        };
        if new {
            self.bump(counter::NEW);
        }
        let mut requeue = false;
        if let Some(f) = &g.fetched {
            self.bump("fetch_results");
            requeue = apply_fetch(&mut rec, f, self.recrawl.max_attempts);
        }
        if g.routed + g.credits > 0 {
            rec.score += g.cash;
            rec.depth = rec.depth.min(g.depth);
            if known {
                self.bump("links_to_known");
            }
            if g.credits > 0 {
                self.bump("credits");
            }
        }
        let waiting = matches!(rec.state, UrlState::Unfetched | UrlState::Retry);
        let recrawl = self.recrawl_due(&rec);
        if recrawl {
            rec.recrawl_queued = self.cycle + 1;
            self.bump("recrawls_due");
        }
        // A new URL already fetched (followed within the fetch run) is not queued.
        if (new && waiting) || requeue || recrawl || (waiting && g.cash > 0.0) {
            self.bump("updates");
            let u = FrontierUpdate {
                url: rec.url.clone(),
                score: rec.score,
                depth: rec.depth,
                new,
                recrawl,
            };
            self.updates.push(&key, &u.encode())?;
        }
        self.bump(&format!("state_{}", rec.state.name()));
        self.seen.push(&key, &[])?;
        self.urldb.push(&key, &rec.encode())
    }
}

impl Out<'_> {
    /// Whether a fetched URL is due for a recrawl now and has none pending: its last fetch is
    /// older than the interval its change history earns (`[prioritize]` recrawl settings).
    fn recrawl_due(&self, r: &UrlRecord) -> bool {
        let c = self.recrawl;
        c.recrawl
            && r.recrawl_queued == 0
            && r.fetched_at > 0
            && matches!(
                r.state,
                UrlState::Fetched | UrlState::NotModified | UrlState::Redirected
            )
            && self.now >= r.fetched_at + c.recrawl_interval(r.fetches, r.changes)
    }
}

/// Folds one fetch result into a URL record; returns whether the URL must go back into the
/// frontier (it was not fetched, or failed in a way worth retrying). A URL that failed
/// `max_attempts` times in a row is given up (`Gone`).
fn apply_fetch(r: &mut UrlRecord, f: &FetchResult, max_attempts: u32) -> bool {
    let give_up = |r: &mut UrlRecord| {
        r.failures = r.failures.saturating_add(1);
        if r.failures >= max_attempts {
            r.state = UrlState::Gone;
            false
        } else {
            if r.state != UrlState::Unfetched {
                r.state = UrlState::Retry;
            }
            true
        }
    };
    use crate::records::FetchErrorKind as K;
    match f.error_kind() {
        // Not attempted this cycle (the deadline or the end of the cycle's window came first,
        // or its host is parked): back to the frontier as it was, no attempt counted. A fetched
        // URL keeps its state and its pending recrawl (the reserve defers recrawls routinely;
        // they are not failures to retry).
        Some(K::Deferred | K::Parked) => return true,
        // Not attempted because of its host: an attempt all the same, or a dead host would
        // come back every cycle.
        // A TLS failure (of robots.txt, then refusing the host's URLs, or of the URL itself):
        // a certificate may be fixed, so retried like an unreachable robots.txt.
        Some(k) if matches!(k, K::RobotsUnreachable | K::HostFailing) || k.is_tls() => {
            r.recrawl_queued = 0;
            return give_up(r);
        }
        Some(K::Robots | K::Ssrf | K::Url | K::OutOfScope) => {
            r.state = UrlState::Gone;
            return false;
        }
        _ => {}
    }
    r.recrawl_queued = 0;
    r.fetches = r.fetches.saturating_add(1);
    r.fetched_at = f.fetched_at_ms / 1000;
    r.http_status = f.status;
    if f.status > 0 {
        // OPIC: the page's cash went to its out-links when it was parsed.
        r.score = 0.0;
    }
    let usable = f.usable();
    r.state = match f.status {
        200..=299 if usable => UrlState::Fetched,
        304 => UrlState::NotModified,
        300..=399 => UrlState::Redirected,
        400..=499 if f.status != 408 && f.status != 429 => UrlState::Gone,
        _ => UrlState::Retry,
    };
    if r.state == UrlState::Retry {
        return give_up(r);
    }
    r.failures = 0;
    if (200..300).contains(&f.status) && usable {
        if f.digest != 0 && r.digest != 0 && f.digest != r.digest {
            r.changes = r.changes.saturating_add(1);
        }
        r.digest = f.digest;
        r.etag = f.etag.clone();
        r.last_modified = f.last_modified.clone();
        // A new payload, whole, is what the next revisit of an identical one refers to; a revisit
        // keeps referring to the capture it did.
        if !f.revisit && !f.payload_digest.is_empty() && !f.truncated {
            r.capture = crate::records::Capture {
                payload_digest: f.payload_digest.clone(),
                date_us: f.warc_date_us,
                record_id: f.record_id.clone(),
            };
        }
    }
    false
}

/// What a merge did, in one line.
pub fn summary(r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    format!(
        "{} URLs known before, {} new, {} after; {} fetch results folded in, {} links to known URLs ({} cash credits), {} frontier updates in {:.1}s",
        n("known_before"),
        n(counter::NEW),
        n("known_after"),
        n("fetch_results"),
        n("links_to_known"),
        n("credits"),
        n("updates"),
        r.seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_url_goes_back_as_it_was() {
        let deferred = FetchResult {
            error: crate::records::FetchErrorKind::Deferred.as_str().to_owned(),
            ..FetchResult::default()
        };
        let mut fresh = UrlRecord::discovered("http://a.test/".into(), 1, 0.5, 7);
        let before = fresh.clone();
        assert!(apply_fetch(&mut fresh, &deferred, 3));
        assert_eq!(fresh, before, "unfetched: untouched, no attempt counted");
        // A recrawl deferred (the reserve, the deadline) stays a fetched URL with its recrawl
        // pending, which keeps its frontier entry current.
        let mut fetched = before.clone();
        fetched.state = UrlState::Fetched;
        fetched.fetches = 1;
        fetched.fetched_at = 1_700_000_000;
        fetched.recrawl_queued = 4;
        let was = fetched.clone();
        let parked = FetchResult {
            error: crate::records::FetchErrorKind::Parked.as_str().to_owned(),
            ..FetchResult::default()
        };
        for r in [&deferred, &parked] {
            let mut rec = was.clone();
            assert!(apply_fetch(&mut rec, r, 3));
            assert_eq!(rec, was);
        }
    }

    #[test]
    fn check_update_finds_exactly_the_unseen() {
        let t = tempfile::tempdir().unwrap();
        let write = |name: &str, schema: Schema, keys: &[u64]| {
            let p = t.path().join(name);
            let mut w = RunWriter::create(&p, schema).unwrap();
            for k in keys {
                w.push(&run::fp_key(*k), &[]).unwrap();
            }
            w.finish().unwrap();
            p
        };
        let seen = write("seen", Schema::SEEN, &[2, 4, 6, 8]);
        let batch = write("batch", Schema::FINGERPRINTS, &[1, 1, 4, 5, 8, 9, 9]);
        let mut os = RunWriter::create(&t.path().join("s2"), Schema::SEEN).unwrap();
        let mut on = RunWriter::create(&t.path().join("n"), Schema::SEEN).unwrap();
        let st = check_update(
            RunReader::open(&seen).unwrap(),
            RunReader::open(&batch).unwrap(),
            &mut os,
            &mut on,
        )
        .unwrap();
        os.finish().unwrap();
        on.finish().unwrap();
        assert_eq!(
            st,
            CheckUpdate {
                seen: 4,
                incoming: 7,
                new: 3
            }
        );
        let keys = |name: &str| {
            let mut r = RunReader::open(&t.path().join(name)).unwrap();
            let mut v = Vec::new();
            while crate::run::Cursor::advance(&mut r).unwrap() {
                v.push(run::key_u64(crate::run::Cursor::key(&r)));
            }
            v
        };
        assert_eq!(keys("s2"), vec![1, 2, 4, 5, 6, 8, 9]);
        assert_eq!(keys("n"), vec![1, 5, 9]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The block-at-a-time merge equals an in-memory set, whatever the block sizes of the
        /// inputs and outputs (tiny blocks make every refill and flush path run), with keys from
        /// a small range so that batches repeat keys and overlap the set.
        #[test]
        fn check_update_equals_a_set(
            seen in proptest::collection::btree_set(0u64..400, 0..300),
            batch in proptest::collection::vec(0u64..400, 0..300),
            block in 9usize..100,
            out_background in proptest::bool::ANY,
            direct in proptest::bool::ANY,
        ) {
            use crate::run::WriterOptions;
            let t = tempfile::tempdir().unwrap();
            let opts = WriterOptions { block_size: block, ..WriterOptions::for_schema(Schema::SEEN) };
            let write = |name: &str, schema: Schema, keys: &[u64]| {
                let p = t.path().join(name);
                let mut w = RunWriter::with_options(&p, schema, opts).unwrap();
                for k in keys {
                    w.push_u64(*k, &[]).unwrap();
                }
                w.finish().unwrap();
                p
            };
            let seen_v: Vec<u64> = seen.iter().copied().collect();
            let mut batch_v = batch.clone();
            batch_v.sort_unstable();
            let seen_p = write("seen", Schema::SEEN, &seen_v);
            let batch_p = write("batch", Schema::FINGERPRINTS, &batch_v);
            let out_opts = WriterOptions { background: out_background, direct, ..opts };
            let open = |p: &std::path::Path| {
                if direct { RunReader::open_direct(p) } else { RunReader::open(p) }.unwrap()
            };
            let mut os = RunWriter::with_options(&t.path().join("s2"), Schema::SEEN, out_opts).unwrap();
            let mut on = RunWriter::with_options(&t.path().join("n"), Schema::SEEN, out_opts).unwrap();
            let st = check_update(
                open(&seen_p),
                open(&batch_p),
                &mut os,
                &mut on,
            )
            .unwrap();
            os.finish().unwrap();
            on.finish().unwrap();
            let new: std::collections::BTreeSet<u64> =
                batch.iter().copied().filter(|k| !seen.contains(k)).collect();
            let all: Vec<u64> = seen.union(&new).copied().collect();
            let keys = |name: &str| {
                let mut r = RunReader::open(&t.path().join(name)).unwrap();
                let mut v = Vec::new();
                while crate::run::Cursor::advance(&mut r).unwrap() {
                    v.push(run::key_u64(crate::run::Cursor::key(&r)));
                }
                v
            };
            proptest::prop_assert_eq!(keys("s2"), all);
            proptest::prop_assert_eq!(keys("n"), new.iter().copied().collect::<Vec<_>>());
            proptest::prop_assert_eq!(st, CheckUpdate {
                seen: seen.len() as u64,
                incoming: batch.len() as u64,
                new: new.len() as u64,
            });
        }
    }

    #[test]
    fn update_round_trip() {
        for recrawl in [false, true] {
            let u = FrontierUpdate {
                url: "http://a.test/".into(),
                score: 1.5,
                depth: 2,
                new: !recrawl,
                recrawl,
            };
            let b = u.encode();
            assert_eq!(b[0], if recrawl { 2 } else { 1 }, "version");
            assert_eq!(FrontierUpdate::decode(&b).unwrap(), u);
            for n in 0..b.len() {
                assert!(FrontierUpdate::decode(&b[..n]).is_err());
            }
        }
    }
}
