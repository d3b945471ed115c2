//! One partition's fetch run from start to commit (see the parent module's docs): the setup
//! (what an uncommitted attempt left is redone, the outputs' directories, the workers' shared
//! state), the run loop (workers, DNS prefetch and feeder until the fetch list is done), and
//! the commit (writers finished, counts, the `.done` marker, then the inline parse's).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::feed::Prefetch;
use super::{follow, lock, secs, unix_ms, with_margin, FetchOptions, Sched, Shared};
use crate::config::Config;
use crate::crawl::report::counter;
use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage, StageReport};
use crate::error::{Error, IoContext, Result};
use crate::fetch::client::Fetcher;
use crate::fetch::progress::Reporter;
use crate::fetch::schedule::Scheduler;
use crate::parse::inline::InlineParse;
use crate::resolve::Resolver;
use crate::run::{self, Cursor, KeepFirst, RunReader, RunSummary, RunWriter, Schema, Sorter};
use crate::warc::writer::{WarcWriter, WriterConfig, WriterSummary};
use crate::warc::{Codec, Compression};

/// One partition's fetch run: what it reads and writes, decided before the workers start.
pub(super) struct PartitionRun<'a> {
    crawl: &'a CrawlDir,
    cfg: &'a Config,
    cycle: u32,
    p: u32,
    /// When the run started: the marker's start, and the run time robots.txt outcomes are
    /// trusted within.
    started: SystemTime,
    /// The same on the monotonic clock: the deadline counts from it.
    t0: Instant,
    /// `pNNNN`: the partition's WARC files are `pNNNN-SSSSSS.warc.*`.
    prefix: String,
    fetchlist: RunReader,
    fetchlist_path: PathBuf,
    fetched_path: PathBuf,
    warc_dir: PathBuf,
    stage_dir: PathBuf,
    /// The host table the run starts from (none in a new crawl) and the one it writes.
    old_hosts_path: Option<PathBuf>,
    new_hosts_path: PathBuf,
    /// What prioritize has listed of each host over the crawl, when in-run following needs it.
    budget_path: Option<PathBuf>,
    /// URLs in the fetch list.
    total: u64,
    /// Of them, the reserve's (fetched only in the cycle's window).
    reserve: u64,
}

/// What the setup made for the workers' shared state.
pub(super) struct Setup {
    resolver: Arc<Resolver>,
    tls: Arc<rustls::ClientConfig>,
    codec: Codec,
    /// Host name -> the last request of a killed attempt ([`unfinished_requests`]).
    restarted: HashMap<String, u64>,
    follow: Option<follow::Follow>,
}

/// What the run wrote, its writers finished.
struct Written {
    warc: WriterSummary,
    cdxj_path: PathBuf,
    cdxj_lines: u64,
    /// The index's length and xxh3, taken as it was written (`None` if this run wrote none).
    cdxj_sum: Option<crate::storage::Sum>,
    fetched: RunSummary,
    hosts: RunSummary,
}

impl<'a> PartitionRun<'a> {
    /// Sets the run up: the configuration's resolver table, TLS roots and WARC codec, then
    /// what an earlier attempt that never committed left is redone from scratch (the requests
    /// its WARC files record still count for politeness: a killed run asked its hosts moments
    /// ago, and its host table was never written), and the inputs are opened.
    pub(super) fn prepare(
        crawl: &'a CrawlDir,
        cfg: &'a Config,
        cycle: u32,
        p: u32,
    ) -> Result<(PartitionRun<'a>, Setup)> {
        let fetchlist_path = crawl.fetchlist(cycle, p);
        let started = SystemTime::now();
        let t0 = Instant::now();
        let resolver = Arc::new(Resolver::from_config(
            &cfg.resolve,
            crawl.root(),
            &crawl.config_path(),
        )?);
        let tls = crate::fetch::tls::client_config(
            cfg.fetch.tls_roots,
            &cfg.fetch.extra_ca_files,
            crawl.root(),
            &crawl.config_path(),
        )?;
        let codec = crate::fetch::codec::warc_codec(&cfg.fetch, crawl, cycle, p)?;

        let warc_dir = crawl.warc_dir(cycle);
        let prefix = CrawlDir::partition_name(p);
        let restarted = unfinished_requests(&warc_dir, &prefix);
        remove_partition_warcs(&warc_dir, &prefix)?;
        // And the WET file an inline parse of that attempt wrote.
        crate::parse::wet::remove_wet(&warc_dir, &prefix)?;
        let fetched_path = crawl.fetched(cycle, p);
        let stage_dir = crawl.stage_dir(cycle, Stage::Fetch);
        for d in [
            &warc_dir,
            &stage_dir,
            &fetched_path.parent().expect("has a parent").to_path_buf(),
        ] {
            crate::storage::create_dir_all(d)?;
            crate::storage::remove_temps(d)?;
        }
        crate::storage::create_dir_all(&crawl.state_dir(p))?;

        let fetchlist = RunReader::open_expect(&fetchlist_path, Schema::FETCHLIST)?;
        let total = fetchlist.len();
        let reserve = count_reserve(&fetchlist_path)?;
        let old_hosts_path = crawl.latest_state(p, "hosts", cycle).map(|(_, path)| path);
        let new_hosts_path = crawl.state_file(p, "hosts", cycle + 1);
        // Nothing to fetch, nothing to follow: no filter to build from the seen set.
        let follow = if total > 0 {
            follow::Follow::load(crawl, cfg, cycle, p)?
        } else {
            None
        };
        // What prioritize has listed of each host over the crawl (its lifetime budget), for the
        // room in-run following has left.
        let budget_path = (follow.is_some() && cfg.prioritize.max_urls_per_host_total > 0)
            .then(|| {
                crawl
                    .latest_state(p, "host_budget", cycle)
                    .map(|(_, path)| path)
            })
            .flatten();
        let run = PartitionRun {
            crawl,
            cfg,
            cycle,
            p,
            started,
            t0,
            prefix,
            fetchlist,
            fetchlist_path,
            fetched_path,
            warc_dir,
            stage_dir,
            old_hosts_path,
            new_hosts_path,
            budget_path,
            total,
            reserve,
        };
        let setup = Setup {
            resolver,
            tls,
            codec,
            restarted,
            follow,
        };
        Ok((run, setup))
    }

    /// The WARC writer's configuration: the partition's files, rotation, level, `warcinfo`
    /// fields, and the CDXJ index it keeps as it writes (`crate::ops::index`).
    fn warc_config(&self, codec: Codec, budget: usize) -> WriterConfig {
        let (cfg, cycle, p) = (self.cfg, self.cycle, self.p);
        let mut wcfg = WriterConfig::new(&self.warc_dir, &self.prefix, codec);
        wcfg.rotate_bytes = cfg.fetch.warc_rotate.0;
        wcfg.level = cfg.fetch.warc_level();
        wcfg.warcinfo = vec![
            ("isPartOf".into(), cfg.crawl.name.clone()),
            (
                "http-header-user-agent".into(),
                cfg.fetch.user_agent.clone(),
            ),
            ("robots".into(), "classic".into()),
            (
                "description".into(),
                format!("dragnet fetch: cycle {cycle}, partition {p}"),
            ),
        ];
        wcfg.index = Some(crate::warc::writer::WriterIndex {
            filename_prefix: crate::crawl::warc_filename_prefix(cycle),
            budget,
            tmp_dir: self.stage_dir.clone(),
        });
        wcfg
    }

    /// The parse run as pages arrive, when the fetch writes the parse stage's outputs
    /// (`[fetch] parse`) or only extracts links for in-run following (`follows`).
    fn inline_parse(&self, follows: bool) -> Result<Option<InlineParse>> {
        let f = &self.cfg.fetch;
        (f.parse || follows)
            .then(|| {
                InlineParse::new(
                    self.cfg,
                    &self.stage_dir,
                    f.parse,
                    (
                        &self.warc_dir,
                        &self.prefix,
                        format!(
                            "dragnet fetch: text of cycle {}, partition {}",
                            self.cycle, self.p
                        ),
                    ),
                )
            })
            .transpose()
    }

    /// The state the workers and the feeder share.
    pub(super) fn shared(&self, setup: Setup, opts: &FetchOptions) -> Result<Shared<'a>> {
        let (cfg, f) = (self.cfg, &self.cfg.fetch);
        // The results are small (~200 bytes a URL) and spills are cheap: a fixed slice of the
        // sort budget keeps the stage's memory from growing with the fetch list.
        let budget = usize::try_from(cfg.sort.memory_budget.0 / 16)
            .unwrap_or(usize::MAX)
            .clamp(1 << 20, 16 << 20);
        let wcfg = self.warc_config(setup.codec, budget);
        let parse = self.inline_parse(setup.follow.is_some())?;
        let parse_writes = parse.as_ref().is_some_and(InlineParse::writes);
        let max_active = (f.threads as usize) * (f.queues_per_thread as usize);
        let ip_gate = opts.ip_gate.clone().unwrap_or_else(|| {
            crate::fetch::ipgate::IpGate::new(
                f.per_ip_connections,
                with_margin(Duration::from_secs_f64(f.per_ip_delay_secs)),
            )
        });
        let fetcher = Fetcher::new(f, setup.resolver).with_tls(setup.tls);
        Ok(Shared {
            cfg,
            ip_gate,
            agent: f.robots_agent().to_owned(),
            fetcher: match &opts.lookup {
                Some(l) => fetcher.with_lookup(Arc::clone(l)),
                None => fetcher,
            },
            sched: Mutex::new(Sched {
                sched: Scheduler::new(max_active, f.per_ip_connections),
                feeding: true,
                deferred: false,
            }),
            wake: Condvar::new(),
            room: Condvar::new(),
            hosts: Mutex::new(HashMap::new()),
            warc: Mutex::new(WarcWriter::new(wcfg)?),
            results: Mutex::new(Sorter::new(Schema::FETCHED, budget, &self.stage_dir)?),
            host_out: Mutex::new(Sorter::new(Schema::HOSTS, budget, &self.stage_dir)?),
            counters: opts.counters.clone().unwrap_or_default(),
            tally: Mutex::new(BTreeMap::new()),
            failure: Mutex::new(None),
            deadline: self.t0 + secs(f.deadline_secs),
            hosts_fed: AtomicU64::new(0),
            feed_done: std::sync::atomic::AtomicBool::new(false),
            run_ms: unix_ms(self.started),
            cycle: self.cycle,
            partition: self.p,
            base_left: AtomicU64::new(self.total - self.reserve),
            window: match &opts.window {
                Some(w) => Some(crate::fetch::window::Window::Cycle(Arc::clone(w))),
                None if opts.window_from_lists && cfg.cycle.window => {
                    let m = cfg.crawl.partitions;
                    crate::fetch::window::Window::from_lists(self.crawl, self.cycle, m, self.t0)
                }
                None => None,
            },
            extended: AtomicU64::new(0),
            extended_deferred: AtomicU64::new(0),
            extra_queued: AtomicU64::new(0),
            reserve_tried: AtomicU64::new(0),
            robots_requests: AtomicU64::new(0),
            follow: setup.follow,
            parse: parse.map(Mutex::new),
            parse_writes,
            followed: AtomicU64::new(0),
            followed_refused: AtomicU64::new(0),
            restarted: setup.restarted,
        })
    }

    /// The run loop: `threads` workers, the DNS prefetch and the feeder (this thread) until
    /// every URL has a result, with the progress display. The feeder's error, else the first a
    /// worker met.
    pub(super) fn fetch(&mut self, shared: &Shared<'_>, opts: &FetchOptions) -> Result<()> {
        let reporter = Reporter::start(
            opts.progress,
            format!("fetch c{} {}", self.cycle, self.prefix),
            self.total,
            Arc::clone(&shared.counters),
            opts.log_interval,
        );
        // A list of reserve URLs only (made by hand: prioritize lists the budget first) has no
        // own work to wait for: the window hears so now, not at the commit, or this run's
        // reserve would keep every partition's window open.
        if self.total == self.reserve {
            if let Some(w) = &shared.window {
                w.list_done(self.p);
            }
        }
        let (old_hosts, budget) = (self.old_hosts_path.as_deref(), self.budget_path.as_deref());
        let (fetchlist, fetchlist_path) = (&mut self.fetchlist, &self.fetchlist_path);
        let fed = std::thread::scope(|s| {
            let mut spawned = Ok(());
            for i in 0..self.cfg.fetch.threads {
                if let Err(e) = std::thread::Builder::new()
                    .name(format!("fetch-{i}"))
                    .spawn_scoped(s, move || shared.work())
                {
                    spawned = Err(Error::io("spawn a fetch worker for", fetchlist_path, e));
                    break;
                }
            }
            // Names the crawl's table lacks are looked up ahead of the feeder, several at a
            // time.
            let _ = std::thread::Builder::new()
                .name("fetch-dns".into())
                .spawn_scoped(s, move || {
                    shared.prefetch_names(fetchlist_path, Prefetch::Listed, &shared.feed_done)
                });
            let fed =
                spawned.and_then(|()| shared.feed(fetchlist, fetchlist_path, old_hosts, budget));
            shared.feed_done.store(true, Relaxed);
            let mut st = lock(&shared.sched);
            st.feeding = false;
            if fed.is_err() {
                // Stop the workers: nothing more is handed out.
                st.deferred = true;
                let _ = st.sched.defer_all();
            }
            drop(st);
            shared.wake.notify_all();
            fed
        });
        reporter.finish();
        match fed.err().or_else(|| lock(&shared.failure).take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Commits a run whose every URL has a result: the hosts still in the table go out as they
    /// are, the writers finish, the marker records inputs, outputs and counts, and the parse
    /// the fetch ran commits after it (killed in between, the parse stage runs from the WARC).
    pub(super) fn commit(self, shared: Shared<'_>) -> Result<StageReport> {
        for (hk, mut h) in lock(&shared.hosts).drain() {
            h.settle_park(self.cycle, &self.cfg.fetch);
            lock(&shared.host_out).push(&run::fp_key(hk), &h.record.encode())?;
        }
        if let Some(w) = &shared.window {
            w.list_done(self.p);
        }
        let mut counts = self.run_counts(&shared);
        let followed = shared.followed.load(Relaxed);
        let Shared {
            warc,
            results,
            host_out,
            follow,
            parse,
            ..
        } = shared;
        let written = self.write_outputs(warc, results, host_out)?;
        counts.insert(counter::RESULTS.into(), written.fetched.records);
        counts.insert("hosts_in_table".into(), written.hosts.records);
        counts.insert(counter::WARC_FILES.into(), written.warc.files.len() as u64);
        counts.insert("warc_records".into(), written.warc.records);
        counts.insert(counter::WARC_BYTES.into(), written.warc.bytes);
        counts.insert("cdxj_lines".into(), written.cdxj_lines);
        if written.fetched.records != self.total + followed {
            return Err(Error::corrupt(
                &self.fetchlist_path,
                0,
                format!(
                    "{} URLs in the fetch list and {followed} followed but {} results: the fetch \
                     list repeats a fingerprint",
                    self.total, written.fetched.records
                ),
            ));
        }
        let mut m = self.marker(&written, follow.as_ref())?;
        m.counts = counts;
        let done_path = self.crawl.done_path(self.cycle, Stage::Fetch, self.p);
        let fetched = m.commit(&done_path, self.started)?;
        if let Some(parse) = parse {
            let parse = parse.into_inner().unwrap_or_else(|e| e.into_inner());
            let parse_started = SystemTime::now();
            let (crawl, cycle, p) = (self.crawl, self.cycle, self.p);
            if let Some(m) = parse.finish(crawl, cycle, p, &self.fetched_path, parse_started)? {
                m.commit(&crawl.done_path(cycle, Stage::Parse, p), parse_started)?;
            }
        }
        Ok(StageReport::ran(fetched))
    }

    /// The counts the workers kept (results by status and error kind, ...) and the run's
    /// totals but those of its outputs.
    fn run_counts(&self, shared: &Shared<'_>) -> BTreeMap<String, u64> {
        let mut counts = std::mem::take(&mut *lock(&shared.tally));
        let c = &shared.counters;
        counts.insert(counter::URLS.into(), self.total);
        counts.insert(counter::REQUESTS.into(), c.requests.load(Relaxed));
        let robots_requests = shared.robots_requests.load(Relaxed);
        counts.insert(counter::ROBOTS_REQUESTS.into(), robots_requests);
        counts.insert(counter::BYTES.into(), c.bytes.load(Relaxed));
        // Names the crawl's resolve table lacks, looked up once each per run (`resolve.rs`).
        counts.insert("dns_lookups".into(), shared.fetcher.dns_lookups());
        let extended = shared.extended.load(Relaxed);
        if extended > 0 {
            counts.insert("followed_in_window".into(), extended);
            let deferred = shared.extended_deferred.load(Relaxed);
            counts.insert("window_deferred".into(), deferred);
        }
        if self.reserve > 0 {
            counts.insert(counter::RESERVE.into(), self.reserve);
            let tried = shared.reserve_tried.load(Relaxed);
            counts.insert(counter::RESERVE_TRIED.into(), tried);
        }
        if let Some(f) = &shared.follow {
            counts.insert(counter::FOLLOWED.into(), shared.followed.load(Relaxed));
            let refused = shared.followed_refused.load(Relaxed);
            counts.insert(counter::FOLLOWED_REFUSED.into(), refused);
            counts.insert("follow_filter_bytes".into(), f.filter_bytes() as u64);
        }
        counts
    }

    /// Finishes the writers: the WARC files and their CDXJ index, the fetch results, the new
    /// host table.
    fn write_outputs(
        &self,
        warc: Mutex<WarcWriter>,
        results: Mutex<Sorter>,
        host_out: Mutex<Sorter>,
    ) -> Result<Written> {
        let mut warc = warc.into_inner().unwrap_or_else(|e| e.into_inner());
        let index = warc.take_index();
        let warc = warc.finish()?;
        let cdxj_path = self.crawl.partition_cdxj(self.cycle, self.p);
        let (cdxj_lines, cdxj_sum) = match index {
            Some(sorter) => {
                crate::storage::create_dir_all(cdxj_path.parent().expect("has a parent"))?;
                let (n, sum) = crate::warc::cdxj::write_sorted(sorter, &cdxj_path)?;
                (n, Some(sum))
            }
            None => (0, None),
        };
        let mut w = RunWriter::create(&self.fetched_path, Schema::FETCHED)?;
        results
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .finish(&mut KeepFirst, &mut w)?;
        let fetched = w.finish()?;
        let mut w = RunWriter::create(&self.new_hosts_path, Schema::HOSTS)?;
        host_out
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .finish(&mut KeepFirst, &mut w)?;
        let hosts = w.finish()?;
        Ok(Written {
            warc,
            cdxj_path,
            cdxj_lines,
            cdxj_sum,
            fetched,
            hosts,
        })
    }

    /// The `.done` marker's inputs and outputs.
    fn marker(&self, written: &Written, follow: Option<&follow::Follow>) -> Result<DoneMarker> {
        let crawl = self.crawl;
        let mut m = DoneMarker::new(Stage::Fetch, self.cycle, self.p, self.started);
        m.inputs
            .push(FileDigest::of_run(crawl, &self.fetchlist_path)?);
        if let Some(path) = &self.old_hosts_path {
            m.inputs.push(FileDigest::of_run(crawl, path)?);
        }
        if let Some(f) = follow {
            m.inputs.push(FileDigest::of_run(crawl, &f.seen_path)?);
        }
        if let Some(path) = &self.budget_path {
            m.inputs.push(FileDigest::of_run(crawl, path)?);
        }
        m.outputs
            .push(FileDigest::of_run(crawl, &self.fetched_path)?);
        m.outputs
            .push(FileDigest::of_run(crawl, &self.new_hosts_path)?);
        // Summed as they were written: a gigabyte WARC file is not read again to be digested.
        for (file, sum) in written.warc.files.iter().zip(&written.warc.sums) {
            m.outputs.push(FileDigest::of_sum(crawl, file, *sum));
        }
        m.outputs.push(match written.cdxj_sum {
            Some(sum) => FileDigest::of_sum(crawl, &written.cdxj_path, sum),
            None => FileDigest::of_file(crawl, &written.cdxj_path)?,
        });
        Ok(m)
    }
}

/// A run that failed or was stopped commits nothing. Stopped by SIGINT or SIGTERM, the WARC
/// file being written is published as it is (still no `.done`), so the next run knows when
/// this one last asked each host ([`unfinished_requests`]) and keeps their delays.
pub(super) fn abandon(shared: Shared<'_>, e: Error) -> Error {
    if crate::interrupt::requested().is_some() {
        let warc = shared.warc.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Err(w) = warc.publish_unfinished() {
            eprintln!("fetch: cannot keep the unfinished WARC file: {w}");
        }
    }
    e
}

/// The WARC files of partition `prefix` an uncommitted attempt left (published ones, and with
/// `temps` the temporaries of its writers too).
fn partition_warcs(dir: &Path, prefix: &str, temps: bool) -> Result<Vec<std::path::PathBuf>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mine = format!("{prefix}-");
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.ctx("list", dir)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let bare = name.trim_start_matches('.');
        let (base, temp) = match bare.split_once(crate::storage::TEMP_MARK) {
            Some((base, _)) => (base, true),
            None => (bare, false),
        };
        if base.starts_with(&mine) && Compression::from_name(base).is_some() && (temps || !temp) {
            out.push(entry.path());
        }
    }
    Ok(out)
}

/// When an attempt of this fetch that never committed (killed) last sent each host a request,
/// Unix milliseconds, from the request records of the WARC files it left (read up to the first
/// damaged or cut-off record; unreadable files give nothing).
fn unfinished_requests(dir: &Path, prefix: &str) -> HashMap<String, u64> {
    use crate::warc::{reader::ReaderOptions, reader::WarcReader, RecordType};
    let mut last: HashMap<String, u64> = HashMap::new();
    for path in partition_warcs(dir, prefix, true).unwrap_or_default() {
        let Ok(mut rd) = WarcReader::open(&path, ReaderOptions::default()) else {
            continue;
        };
        while let Ok(Some(rec)) = rd.next_record() {
            let h = rec.header();
            if h.record_type() != RecordType::Request {
                continue;
            }
            let host = h
                .target_uri()
                .and_then(|u| url::Url::parse(u).ok())
                .and_then(|u| u.host_str().map(str::to_owned));
            let at = h
                .date()
                .and_then(crate::warc::parse_warc_date)
                .map(|(s, ns)| s * 1000 + u64::from(ns / 1_000_000));
            if let (Some(host), Some(at)) = (host, at) {
                let e = last.entry(host).or_default();
                *e = (*e).max(at);
            }
        }
    }
    last
}

/// Removes the `prefix-*.warc*` files an uncommitted attempt published.
fn remove_partition_warcs(dir: &Path, prefix: &str) -> Result<()> {
    // A dead writer's temporary goes with `remove_temps`, which spares a live one's.
    for path in partition_warcs(dir, prefix, false)? {
        std::fs::remove_file(&path).ctx("remove", &path)?;
    }
    Ok(())
}

/// The reserve URLs of the fetch list at `path` (`FetchItem::reserve`; only a version 4 item
/// can be one, so the others are not decoded).
fn count_reserve(path: &Path) -> Result<u64> {
    let mut r = RunReader::open_expect(path, Schema::FETCHLIST)?;
    let mut n = 0;
    while r.advance()? {
        if r.payload().first() == Some(&4) {
            let item = crate::records::FetchItem::decode(r.payload()).map_err(|e| {
                Error::corrupt(path, r.block_offset(), format!("fetch list record: {e}"))
            })?;
            n += u64::from(item.reserve);
        }
    }
    Ok(n)
}
