//! `dragnet init`: a new crawl from a seed list.
//!
//! Seeds are read line by line (blank lines and `#` comments skipped), canonicalized, and bad
//! lines are reported with their line number and skipped; they never abort the init silently or
//! otherwise. The accepted seeds go through an external sort keyed by (host key, fingerprint), so
//! a seed list of any size initializes in bounded memory, and duplicates collapse. Because the
//! partition of a host is a monotone function of its host key (see [`crate::keys::partition_of`]),
//! the sorted stream visits partitions in order, and each partition's files are written and
//! committed before the next is opened:
//!
//! - `state/pNNNN/seen.000000.run` and `state/pNNNN/urldb.000000.run` (sorted by fingerprint,
//!   through a second, per-partition sort),
//! - `cycles/000000/fetchlist/pNNNN.run` (sorted by host, then fingerprint),
//! - `cycles/000000/init/pNNNN.done`, the partition's commit marker.
//!
//! Every partition gets its files, empty or not, so later stages never guess. `crawl.toml` is
//! written last: it is the crawl's commit point. An init that was killed leaves a directory
//! without `crawl.toml`, and running the same `dragnet init` again redoes it.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use xxhash_rust::xxh3::Xxh3;

use crate::config::Config;
use crate::crawl::CrawlLock;
use crate::crawl::{CrawlDir, Stage};
use crate::crawl::{DoneMarker, FileDigest};
use crate::error::{Error, IoContext, Result};
use crate::keys::{partition_of, Canonicalizer};
use crate::records::{FetchItem, UrlRecord};
use crate::run::{self, KeepFirst, RecordSink, RunWriter, Schema, Sorter};
use crate::storage;
use crate::util::lines::{LineReader, MAX_URL_LINE};

/// Options of `dragnet init`.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The seed list: one URL per line.
    pub seeds: PathBuf,
    /// A configuration file to start from (defaults otherwise).
    pub config: Option<PathBuf>,
    /// Overrides `crawl.partitions`.
    pub partitions: Option<u32>,
}

/// A seed line that was skipped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BadSeed {
    /// 1-based line number in the seed file.
    pub line: u64,
    /// The line as read (lossily decoded, cut to 200 bytes).
    pub text: String,
    /// Why it was skipped.
    pub error: String,
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InitReport {
    /// The crawl directory.
    pub dir: PathBuf,
    /// Partitions created.
    pub partitions: u32,
    /// Lines in the seed file.
    pub lines: u64,
    /// Seeds accepted (distinct canonical URLs).
    pub seeds: u64,
    /// Lines whose URL duplicated an earlier one after canonicalization.
    pub duplicates: u64,
    /// Lines skipped as bad.
    pub bad: u64,
    /// Partitions that received at least one seed.
    pub partitions_with_seeds: u32,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Creates a crawl at `dir` from the seed list. `on_bad` is called for each skipped line, as it
/// is found (the CLI prints it).
pub fn init(
    dir: &Path,
    opts: &InitOptions,
    on_bad: &mut dyn FnMut(&BadSeed),
) -> Result<InitReport> {
    let started = SystemTime::now();
    let mut config = match &opts.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    if let Some(m) = opts.partitions {
        config.crawl.partitions = m;
        config.validate(Path::new("--partitions"))?;
    }
    // The seed file is opened before anything is created, so a wrong path leaves nothing behind.
    let seeds_file = std::fs::File::open(&opts.seeds).map_err(|e| {
        Error::Usage(format!(
            "cannot read the seed file {}: {e}; give a text file of URLs, one per line, with --seeds",
            opts.seeds.display()
        ))
    })?;
    let crawl = CrawlDir::new(dir);
    prepare_dir(&crawl)?;
    let lock = CrawlLock::acquire(dir, "init")?;
    if let Some(note) = lock.took_over() {
        eprintln!("dragnet: {note}");
    }
    storage::remove_temps(dir)?;
    for d in [
        crawl.state_root(),
        crawl.cycle_dir(0).join("fetchlist"),
        crawl.stage_dir(0, Stage::Init),
    ] {
        storage::create_dir_all(&d)?;
        storage::remove_temps(&d)?;
    }

    let budget = (config.sort.memory_budget.0 / 2) as usize;
    let mut sorter = Sorter::new(Schema::FETCHLIST, budget, dir)?;
    let read = read_seeds(seeds_file, &opts.seeds, &config, on_bad, &mut |key| {
        let item = FetchItem {
            url: key.url,
            depth: 0,
            priority: 1.0,
            ..FetchItem::default()
        };
        sorter.push(
            &run::host_fp_key(key.host_key, key.fingerprint),
            &item.encode(),
        )
    })?;
    let (lines, pushed, bad) = (read.lines, read.pushed, read.bad);
    let seeds_digest = read.digest;

    let mut router = PartitionRouter {
        crawl: &crawl,
        partitions: config.crawl.partitions,
        budget,
        seeds: seeds_digest,
        current: None,
        next: 0,
        accepted: 0,
        with_seeds: 0,
    };
    sorter.finish(&mut KeepFirst, &mut router)?;
    router.close_through(config.crawl.partitions)?;

    let mut text = format!(
        "# crawl.toml written by `dragnet init` on {}.\n# Every option is explained in pipeline/crawl.toml. \
         crawl.partitions is fixed for the life of the crawl.\n\n",
        crate::util::rfc3339(crate::util::unix_now())
    );
    text.push_str(&config.to_toml());
    // The manifest before crawl.toml: a directory with crawl.toml (a crawl) always has it.
    crate::crawl::manifest::write(&crawl, &config)?;
    storage::write_atomic(&crawl.config_path(), text.as_bytes())?;

    Ok(InitReport {
        dir: dir.to_path_buf(),
        partitions: config.crawl.partitions,
        lines,
        seeds: router.accepted,
        duplicates: pushed - router.accepted,
        bad,
        partitions_with_seeds: router.with_seeds,
        seconds: started.elapsed().map_or(0.0, |d| d.as_secs_f64()),
    })
}

/// What [`read_seeds`] read.
pub(crate) struct SeedsRead {
    /// Lines in the file.
    pub lines: u64,
    /// Seeds handed on (canonical, in scope; duplicates not yet removed).
    pub pushed: u64,
    /// Lines skipped as bad (reported through `on_bad`).
    pub bad: u64,
    /// The file's digest, an input of the markers that consume it.
    pub digest: FileDigest,
}

/// Reads a seed file (`path` names `file` in messages): each line canonicalized with
/// `config.canon` and checked against `config.scope` at depth 0, then handed to `push`; bad and
/// out-of-scope lines go to `on_bad` with their line number. Shared by `init` and `inject`.
pub(crate) fn read_seeds(
    file: std::fs::File,
    path: &Path,
    config: &Config,
    on_bad: &mut dyn FnMut(&BadSeed),
    push: &mut dyn FnMut(crate::keys::UrlKey) -> Result<()>,
) -> Result<SeedsRead> {
    let canon = Canonicalizer::new(&config.canon);
    let max = seed_line_max(config);
    let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, file), max);
    let mut hasher = Xxh3::new();
    let mut seed_bytes = 0u64;
    let (mut lines, mut pushed, mut bad) = (0u64, 0u64, 0u64);
    while let Some(l) = reader
        .next_line_seen(&mut |b| hasher.update(b))
        .ctx("read seed file", path)?
    {
        seed_bytes += l.bytes;
        lines += 1;
        if l.endless {
            return Err(Error::Usage(format!(
                "the seed file {}: {}; give a text file of URLs, one per line",
                path.display(),
                l.too_long_message(max)
            )));
        }
        let line = l.text;
        let mut report = |error: String, raw: &[u8]| {
            bad += 1;
            let cut = &raw[..raw.len().min(200)];
            on_bad(&BadSeed {
                line: lines,
                text: String::from_utf8_lossy(cut).trim_end().to_string(),
                error,
            });
        };
        if l.too_long() {
            report(
                format!(
                    "{} bytes long, over the limit of {max} bytes a line (URLs are at most \
                     canon.max_url_len = {} bytes); not read further",
                    l.len, config.canon.max_url_len
                ),
                line,
            );
            continue;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            report("not valid UTF-8; save the seed file as UTF-8".into(), line);
            continue;
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        match canon.canonicalize(text, None) {
            Ok(key) => {
                if let Some(why) = config.scope.refusal(&key.url, &key.host, 0) {
                    report(
                        format!(
                            "out of the crawl's scope ({why}); see [scope] in the configuration"
                        ),
                        text.as_bytes(),
                    );
                    continue;
                }
                push(key)?;
                pushed += 1;
            }
            Err(e) => report(seed_hint(text, &e.to_string()), text.as_bytes()),
        }
    }
    Ok(SeedsRead {
        lines,
        pushed,
        bad,
        digest: FileDigest {
            path: path.to_string_lossy().into_owned(),
            bytes: seed_bytes,
            xxh3: format!("{:016x}", hasher.digest()),
            records: Some(lines),
        },
    })
}

/// The longest line of a seed file read: [`crate::util::lines::MAX_URL_LINE`] (8 KiB), or
/// twice `[canon] max_url_len` when that is set higher. A longer line is a bad line, and only
/// its first `max` bytes are ever in memory.
pub(crate) fn seed_line_max(config: &Config) -> usize {
    MAX_URL_LINE.max(config.canon.max_url_len.saturating_mul(2))
}

/// Refuses to init over an existing crawl or a directory holding anything else.
fn prepare_dir(crawl: &CrawlDir) -> Result<()> {
    let dir = crawl.root();
    // Nor inside another crawl: its files would land among that crawl's (found by `check crawl`
    // as unknown, swept by nothing), or a repair of it would take them for its own.
    let absolute = std::path::absolute(dir).ctx("resolve", dir)?;
    for up in absolute.ancestors().skip(1) {
        let real = std::fs::canonicalize(up).unwrap_or_else(|_| up.to_path_buf());
        if let Some(why) = crate::storage::out::crawl_root(&real) {
            return Err(Error::Usage(format!(
                "{} is inside the crawl {} (it has {why}); choose a directory outside it",
                dir.display(),
                real.display()
            )));
        }
    }
    if crawl.config_path().exists() {
        return Err(Error::Usage(format!(
            "{} is already a crawl (it has crawl.toml); choose a new directory, or remove it to start over",
            dir.display()
        )));
    }
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for e in entries {
                let e = e.ctx("list", dir)?;
                let name = e.file_name();
                let name = name.to_string_lossy();
                // What an interrupted init leaves behind may be redone; anything else is not ours.
                if !(name == "state"
                    || name == "cycles"
                    || name == "lock"
                    || name == "manifest.json"
                    || storage::is_temp_name(&name))
                {
                    return Err(Error::Usage(format!(
                        "{} is not empty (it holds '{name}'); dragnet init needs a new or empty directory",
                        dir.display()
                    )));
                }
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => storage::create_dir_all(dir),
        Err(e) => Err(Error::io("list", dir, e)),
    }
}

fn seed_hint(text: &str, error: &str) -> String {
    let looks_like_host = text.contains('.') && !text.contains(char::is_whitespace);
    if !text.contains("://") && looks_like_host {
        format!("{error} (write the full URL, e.g. https://{text})")
    } else {
        error.to_string()
    }
}

/// One partition being written.
struct OpenPartition {
    p: u32,
    fetchlist: RunWriter,
    by_fp: Sorter,
    count: u64,
}

/// Receives seeds sorted by (host key, fingerprint) and writes each partition in turn.
struct PartitionRouter<'a> {
    crawl: &'a CrawlDir,
    partitions: u32,
    budget: usize,
    seeds: FileDigest,
    current: Option<OpenPartition>,
    /// The next partition that has not been opened yet.
    next: u32,
    accepted: u64,
    with_seeds: u32,
}

impl PartitionRouter<'_> {
    fn open(&mut self, p: u32) -> Result<()> {
        storage::create_dir_all(&self.crawl.state_dir(p))?;
        storage::remove_temps(&self.crawl.state_dir(p))?;
        self.current = Some(OpenPartition {
            p,
            fetchlist: RunWriter::create(&self.crawl.fetchlist(0, p), Schema::FETCHLIST)?,
            by_fp: Sorter::new(Schema::URLDB, self.budget, self.crawl.root())?,
            count: 0,
        });
        self.next = p + 1;
        Ok(())
    }

    /// Commits the open partition, and creates (empty) every partition before `end`.
    fn close_through(&mut self, end: u32) -> Result<()> {
        if let Some(open) = self.current.take() {
            self.commit(open)?;
        }
        while self.next < end {
            let p = self.next;
            self.open(p)?;
            let open = self.current.take().expect("just opened");
            self.commit(open)?;
        }
        Ok(())
    }

    fn commit(&mut self, open: OpenPartition) -> Result<()> {
        let started = SystemTime::now();
        let p = open.p;
        let crawl = self.crawl;
        let seen_path = crawl.state_file(p, "seen", 0);
        let urldb_path = crawl.state_file(p, "urldb", 0);
        let mut out = StateWriter {
            seen: RunWriter::create(&seen_path, Schema::SEEN)?,
            urldb: RunWriter::create(&urldb_path, Schema::URLDB)?,
        };
        open.by_fp.finish(&mut KeepFirst, &mut out)?;
        out.seen.finish()?;
        out.urldb.finish()?;
        open.fetchlist.finish()?;
        if open.count > 0 {
            self.with_seeds += 1;
        }
        let mut m = DoneMarker::new(Stage::Init, 0, p, started);
        m.inputs.push(self.seeds.clone());
        for path in [&seen_path, &urldb_path, &crawl.fetchlist(0, p)] {
            m.outputs.push(FileDigest::of_run(crawl, path)?);
        }
        m.counts
            .insert(crate::crawl::report::counter::SEEDS.into(), open.count);
        m.commit(&crawl.done_path(0, Stage::Init, p), started)?;
        Ok(())
    }
}

impl RecordSink for PartitionRouter<'_> {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        let host_key = run::key_u64(&key[..8]);
        let fp = run::key_u64(&key[8..]);
        let p = partition_of(host_key, self.partitions);
        if self.current.as_ref().map(|o| o.p) != Some(p) {
            self.close_through(p)?;
            self.open(p)?;
        }
        let open = self.current.as_mut().expect("opened above");
        open.fetchlist.push(key, payload)?;
        let item = FetchItem::decode(payload).map_err(|e| Error::Internal(e.to_string()))?;
        let rec = UrlRecord::discovered(item.url, item.depth, item.priority, 0);
        open.by_fp.push(&run::fp_key(fp), &rec.encode())?;
        open.count += 1;
        self.accepted += 1;
        Ok(())
    }
}

/// Writes the seen set and the URL db from one fingerprint-sorted stream.
struct StateWriter {
    seen: RunWriter,
    urldb: RunWriter,
}

impl RecordSink for StateWriter {
    fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        self.seen.push(key, &[])?;
        self.urldb.push(key, payload)
    }
}
