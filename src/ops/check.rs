//! `dragnet check crawl DIR`: every file of a crawl directory, by kind, checked the way the stage
//! that reads it checks it, without changing anything (issue 20's corruption campaign).
//!
//! Each file is classified by its name ([`kind_of`]) and checked: run files end to end (every
//! block's checksum, the footer and the trailer), WARC files record by record with their digests,
//! stage markers and the manifest against their checksums, CLOCK caches against theirs, the
//! frontier's queue files against their meta (magic, checksum, length), `crawl.toml` by loading
//! it, the lock by parsing it. What is damaged is listed with the error the stage would give
//! (the file and, where known, the offset); temporaries of writers that died are listed apart
//! (the next stage that writes there sweeps them). A file of a kind this module does not know is
//! reported as such, so a new kind of file cannot go unchecked unnoticed (the test that damages
//! every kind of file of a real crawl fails on it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::crawl::failed::FailedMarker;
use crate::crawl::manifest::Manifest;
use crate::crawl::read_marker;
use crate::crawl::{CrawlDir, DoneMarker};
use crate::error::{IoContext, Result};

/// The kinds of files a crawl directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// `crawl.toml`.
    Config,
    /// `manifest.json`.
    Manifest,
    /// `lock`.
    Lock,
    /// `metrics.prom` (rewritten after every cycle; not checked).
    Metrics,
    /// A stage's `.done` marker.
    DoneMarker,
    /// A stage's `.failed` marker.
    FailedMarker,
    /// A run file (`*.run`).
    Run,
    /// A WARC file (`.warc`, `.warc.gz`, `.warc.zst`).
    Warc,
    /// A CDXJ index (`*.cdxj`) or the list of cycles the crawl's index holds
    /// (`indexes/index.cycles`).
    Cdxj,
    /// `archive`: the link to `cycles/` that makes the crawl a pywb collection.
    ArchiveLink,
    /// A split stage's CLOCK cache (`*.clock`).
    ClockCache,
    /// A frontier queue's data file (`*.dat`), checked with its meta.
    QueueData,
    /// A frontier queue's meta (`*.dat.meta`; checked with its data file).
    QueueMeta,
    /// A frontier queue's undo journal (an interrupted transaction; the next open rolls it back).
    QueueJournal,
    /// The frontier's `kind` file.
    QueueKind,
    /// A temporary a writer left (swept by the next writer in its directory).
    Temporary,
    /// Slurm job logs and submissions (`logs/`, `slurm/`): not crawl data.
    Log,
    /// `report/`: what `dragnet report` wrote (remade from the rest; not checked).
    Report,
    /// What `dragnet repair` set aside (`quarantine/`): kept for inspection, not crawl data.
    Quarantine,
    /// Anything else.
    Unknown,
}

/// What [`check_crawl`] found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CrawlCheck {
    /// Files checked, by kind.
    pub files: BTreeMap<String, u64>,
    /// Damaged files: path (relative to the crawl) and the error.
    pub damaged: Vec<(PathBuf, String)>,
    /// Temporaries writers left behind.
    pub temporaries: Vec<PathBuf>,
    /// Files of no known kind.
    pub unknown: Vec<PathBuf>,
}

impl CrawlCheck {
    /// Whether nothing is damaged.
    pub fn ok(&self) -> bool {
        self.damaged.is_empty()
    }
}

/// The kind of the file at `rel` (a path relative to the crawl directory).
pub fn kind_of(rel: &Path) -> FileKind {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let top = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    if crate::storage::is_temp_name(&name) {
        return FileKind::Temporary;
    }
    match name.as_str() {
        "crawl.toml" if rel.parent() == Some(Path::new("")) => return FileKind::Config,
        "manifest.json" => return FileKind::Manifest,
        "lock" => return FileKind::Lock,
        "metrics.prom" => return FileKind::Metrics,
        "kind" if rel.parent().and_then(Path::file_name) == Some("frontier".as_ref()) => {
            return FileKind::QueueKind
        }
        _ => {}
    }
    if rel == Path::new("archive") {
        return FileKind::ArchiveLink;
    }
    if top == "logs" || top == "slurm" {
        return FileKind::Log;
    }
    if top == "report" {
        return FileKind::Report;
    }
    if top == "quarantine" {
        return FileKind::Quarantine;
    }
    if name.ends_with(".done") {
        FileKind::DoneMarker
    } else if name.ends_with(".failed") {
        FileKind::FailedMarker
    } else if name.ends_with(".run") {
        FileKind::Run
    } else if crate::warc::Compression::from_name(&name.replacen(".warc.wet", ".warc", 1)).is_some()
    {
        FileKind::Warc
    } else if name.ends_with(".cdxj") || (top == "indexes" && name == "index.cycles") {
        FileKind::Cdxj
    } else if name.ends_with(".clock") {
        FileKind::ClockCache
    } else if name.ends_with(".dat") {
        FileKind::QueueData
    } else if name.ends_with(".dat.meta") {
        FileKind::QueueMeta
    } else if name.ends_with(".dat.journal") {
        FileKind::QueueJournal
    } else {
        FileKind::Unknown
    }
}

/// Every file under `root`, relative to it, sorted.
fn files_under(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        let dir = root.join(&rel);
        for e in std::fs::read_dir(&dir).ctx("list", &dir)? {
            let e = e.ctx("list", &dir)?;
            let r = rel.join(e.file_name());
            if e.file_type().ctx("stat", &e.path())?.is_dir() {
                // A temporary directory (a repair's sandbox) is one temporary, not crawl data.
                if crate::storage::is_temp_name(&e.file_name().to_string_lossy()) {
                    out.push(r);
                    continue;
                }
                dirs.push(r);
            } else {
                out.push(r);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Checks every file of the crawl at `crawl` (see the module docs). `cfg` is its configuration,
/// if it loads (the CLOCK caches are checked against its capacity).
pub fn check_crawl(crawl: &CrawlDir, cfg: Option<&Config>) -> Result<CrawlCheck> {
    let root = crawl.root();
    let mut out = CrawlCheck::default();
    let files = files_under(root)?;
    // What the stages' markers say they wrote, for the files that carry no checksum of their
    // own (WARC files: their digests cover record blocks, not the file; a file cut at a record
    // boundary, or emptied, would still read).
    let mut written: std::collections::HashMap<PathBuf, crate::crawl::FileDigest> =
        std::collections::HashMap::new();
    for rel in files.iter().filter(|r| kind_of(r) == FileKind::DoneMarker) {
        if let Ok(Some(m)) = DoneMarker::read(&root.join(rel)) {
            for d in m.outputs.into_iter().filter(|d| d.records.is_none()) {
                written.insert(PathBuf::from(&d.path), d);
            }
        }
    }
    for rel in files {
        let path = root.join(&rel);
        let kind = kind_of(&rel);
        let name = serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        *out.files.entry(name).or_default() += 1;
        let checked = match kind {
            FileKind::Temporary => {
                out.temporaries.push(rel);
                continue;
            }
            FileKind::Unknown => {
                out.unknown.push(rel);
                continue;
            }
            FileKind::Metrics
            | FileKind::Log
            | FileKind::Report
            | FileKind::Quarantine
            | FileKind::QueueMeta
            | FileKind::QueueKind => Ok(()),
            FileKind::Config => Config::load(&path).map(drop),
            FileKind::Manifest => read_marker::<Manifest>(&path).map(drop),
            FileKind::Lock => crate::crawl::read_lock(root).map(drop),
            FileKind::DoneMarker => DoneMarker::read(&path).map(drop),
            FileKind::FailedMarker => read_marker::<FailedMarker>(&path).map(drop),
            FileKind::Run => crate::run::verify(&path).map(drop),
            FileKind::Warc => {
                check_warc(&path).and_then(|()| check_written(&path, written.get(&rel)))
            }
            FileKind::ClockCache => {
                let cap = cfg.map_or(1 << 20, |c| c.split.cache_entries as usize);
                crate::split::clock::Clock::load(&path, cap.max(1)).map(drop)
            }
            FileKind::QueueData => crate::queue::pager::check_files(&path),
            FileKind::QueueJournal => Ok(()),
            FileKind::Cdxj => {
                check_cdxj(&path).and_then(|()| check_written(&path, written.get(&rel)))
            }
            FileKind::ArchiveLink => check_archive_link(&path),
        };
        if let Err(e) = checked {
            out.damaged.push((rel, e.with_causes(": ")));
        }
    }
    Ok(out)
}

/// A file against the size and xxh3 its stage's marker recorded (nothing to compare without one).
fn check_written(path: &Path, want: Option<&crate::crawl::FileDigest>) -> Result<()> {
    let Some(want) = want else {
        return Ok(());
    };
    let (sum, bytes) = crate::util::file_digest(path)?;
    let sum = format!("{sum:016x}");
    if bytes != want.bytes || sum != want.xxh3 {
        return Err(crate::Error::corrupt(
            path,
            bytes.min(want.bytes),
            format!(
                "it is not the file its stage committed: {bytes} bytes with xxh3 {sum}, the \
                 stage's .done marker recorded {} bytes with xxh3 {}",
                want.bytes, want.xxh3
            ),
        ));
    }
    Ok(())
}

/// A CDXJ index: every line `SURT 14-digit-timestamp {JSON}` with the fields a replay needs,
/// in sorted order; the list of cycles of the crawl's index: one number a line.
pub(super) fn check_cdxj(path: &Path) -> Result<()> {
    use crate::warc::cdxj::MAX_CDXJ_LINE;
    let f = std::fs::File::open(path).ctx("open", path)?;
    let mut rd = crate::util::lines::LineReader::new(std::io::BufReader::new(f), MAX_CDXJ_LINE);
    let cycles = path.extension().is_some_and(|e| e == "cycles");
    let mut last = Vec::new();
    let mut offset = 0u64;
    loop {
        let Some(l) = rd.next_line().ctx("read", path)? else {
            return Ok(());
        };
        let number = l.number;
        let bad = |why: &str| crate::Error::corrupt(path, offset, format!("line {number}: {why}"));
        if l.too_long() {
            return Err(bad(&format!(
                "{} bytes long, over the limit of {MAX_CDXJ_LINE} bytes a line",
                l.len
            )));
        }
        if !l.newline {
            return Err(bad("the file ends in the middle of a line"));
        }
        let line = l.text;
        let text = std::str::from_utf8(line).map_err(|_| bad("not UTF-8"))?;
        if cycles {
            text.parse::<u32>().map_err(|_| bad("not a cycle number"))?;
        } else {
            let mut parts = text.splitn(3, ' ');
            let (_surt, ts, json) = (parts.next(), parts.next(), parts.next());
            if !ts.is_some_and(|t| t.len() == 14 && t.bytes().all(|b| b.is_ascii_digit())) {
                return Err(bad("no 14-digit timestamp after the key"));
            }
            // The fields a replay needs, as strings; the rest skipped unread. (A map of
            // `serde_json::Value`s a line, allocating every key and value, made this check a
            // tenth of a cycle's end on a crawl of 189k captures.)
            let v: ReplayFields = json
                .and_then(|j| serde_json::from_str(j).ok())
                .ok_or_else(|| bad("no JSON object after the timestamp"))?;
            for (k, have) in [
                ("url", v.url),
                ("offset", v.offset),
                ("length", v.length),
                ("filename", v.filename),
            ] {
                if !have.is_some_and(|v| v.is_string()) {
                    return Err(bad(&format!("no \"{k}\" in the JSON")));
                }
            }
            if number > 1 && line < &last[..] {
                return Err(bad("sorts before the line above it"));
            }
            last.clear();
            last.extend_from_slice(line);
        }
        offset += l.bytes;
    }
}

/// The fields of a CDXJ line's JSON a replay needs (each must be a string); the others are
/// skipped without being kept.
#[derive(serde::Deserialize)]
struct ReplayFields {
    url: Option<serde_json::Value>,
    offset: Option<serde_json::Value>,
    length: Option<serde_json::Value>,
    filename: Option<serde_json::Value>,
}

/// `archive` must lead to `cycles/` (the crawl's indexes name files under it).
fn check_archive_link(path: &Path) -> Result<()> {
    let to = std::fs::read_link(path).ctx("read the link", path)?;
    if to != Path::new("cycles") {
        return Err(crate::Error::corrupt(
            path,
            0,
            format!(
                "a link to {} instead of `cycles`: the crawl's CDXJ indexes name WARC files                  under cycles/; remove it and the next cycle makes it again",
                to.display()
            ),
        ));
    }
    Ok(())
}

fn check_warc(path: &Path) -> Result<()> {
    let rep = crate::warc::check::check_file(path, &mut |_| {})?;
    if rep.bad_digests > 0 {
        return Err(crate::Error::corrupt(
            path,
            0,
            format!(
                "{} of its records have digests that do not match their content",
                rep.bad_digests
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_cdxj;

    fn check(text: &str) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.cdxj");
        std::fs::write(&path, text).unwrap();
        check_cdxj(&path).map_err(|e| e.to_string())
    }

    const GOOD: &str = "com,example)/ 20260101000000 {\"url\": \"http://example.com/\", \"mime\": \"text/html\", \"offset\": \"0\", \"length\": \"10\", \"filename\": \"000000/warc/p0000-000001.warc.gz\"}\n";

    #[test]
    fn a_line_needs_the_replay_fields_as_strings() {
        check(GOOD).unwrap();
        // Other fields of any shape, and escapes in the strings, are fine.
        let extra = GOOD.replace(
            "\"mime\": \"text/html\"",
            "\"mime\": {\"a\": [1, null, true]}, \"status\": 200, \"note\": \"\\u00e9\\\"\"",
        );
        check(&extra).unwrap();
        check(&GOOD.replace("\"http://example.com/\"", "\"http://example.com/\\u0041\"")).unwrap();
        for (from, to, why) in [
            ("\"url\": \"http://example.com/\", ", "", "no \"url\""),
            ("\"offset\": \"0\"", "\"offset\": 0", "no \"offset\""),
            ("\"length\": \"10\"", "\"length\": null", "no \"length\""),
            (
                "\"filename\": \"000000/warc/p0000-000001.warc.gz\"",
                "\"filename\": [\"x\"]",
                "no \"filename\"",
            ),
            ("{\"url\"", "[\"url\"", "no JSON object"),
            (" 20260101000000 ", " 2026 ", "no 14-digit timestamp"),
        ] {
            let bad = GOOD.replace(from, to);
            assert_ne!(bad, GOOD, "{from}");
            let e = check(&bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
