//! The commit of a crawl's in-place conversion, one (cycle, partition) at a time: the staged
//! names (`.NAME.convert`) new files are written under, what a partition's conversion stages
//! ([`Staging`]), the journal (`cycles/C/fetch/pNNNN.convert`) whose publication commits it and
//! which a later run finishes, and the sweep of what was staged and never committed.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::crawl::{CrawlDir, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};
use crate::storage;

/// The suffix of a staged file: `.NAME.convert` beside `NAME`.
const STAGED: &str = ".convert";

const JOURNAL_MAGIC: &str = "dragnet-convert";

/// One (cycle, partition) of a crawl: what is converted, and committed by one journal, at once.
#[derive(Clone, Copy)]
pub(super) struct Unit<'a> {
    pub(super) crawl: &'a CrawlDir,
    pub(super) cycle: u32,
    pub(super) p: u32,
}

impl Unit<'_> {
    /// The unit's journal.
    pub(super) fn journal_path(&self) -> PathBuf {
        journal_path(self.crawl, self.cycle, self.p)
    }
}

/// `dir/.NAME.convert` for `dir/NAME`.
pub(super) fn staged(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}{STAGED}"))
}

/// `cycles/C/fetch/pNNNN.convert`: the journal of a partition's conversion.
pub(super) fn journal_path(crawl: &CrawlDir, cycle: u32, p: u32) -> PathBuf {
    crawl
        .stage_dir(cycle, Stage::Fetch)
        .join(format!("{}.convert", CrawlDir::partition_name(p)))
}

/// What a partition's conversion has staged so far, step by step, for its journal.
pub(super) struct Staging {
    /// The fetch marker's outputs, each file rewritten replaced by its staged file's digest
    /// under its final name.
    pub(super) outputs: Vec<FileDigest>,
    /// (staged, final), in the order they are to be renamed: WARC files first, then the runs
    /// and indexes that point into them, the markers last.
    pub(super) renames: Vec<(PathBuf, PathBuf)>,
    /// Old WARC files to remove once the indexes no longer name them.
    pub(super) remove: Vec<PathBuf>,
    /// Record bytes of the files converted, before.
    pub(super) bytes_in: u64,
    /// Record bytes of the files converted, after.
    pub(super) bytes_out: u64,
    /// The files converted as CDXJ lines name them (`filename`, their old names).
    pub(super) converted: Vec<String>,
}

impl Staging {
    /// Nothing staged yet, for a fetch marker of `outputs`.
    pub(super) fn new(outputs: Vec<FileDigest>) -> Staging {
        Staging {
            outputs,
            renames: Vec::new(),
            remove: Vec::new(),
            bytes_in: 0,
            bytes_out: 0,
            converted: Vec::new(),
        }
    }

    /// Replaces the output entry of `path` in the fetch marker's outputs by `d` (adds it if
    /// missing).
    pub(super) fn replace_output(&mut self, crawl: &CrawlDir, path: &Path, d: FileDigest) {
        let rel = crawl.relative(path);
        match self.outputs.iter_mut().find(|o| o.path == rel) {
            Some(o) => *o = d,
            None => self.outputs.push(d),
        }
    }

    /// Publishes the journal of what was staged, then applies it: from the journal on, the
    /// conversion of `unit` is committed.
    pub(super) fn commit(&self, unit: Unit<'_>) -> Result<Journal> {
        let crawl = unit.crawl;
        let rel = |v: &[PathBuf]| v.iter().map(|p| crawl.relative(p)).collect::<Vec<_>>();
        let journal = Journal {
            magic: JOURNAL_MAGIC.into(),
            renames: self
                .renames
                .iter()
                .map(|(a, b)| (crawl.relative(a), crawl.relative(b)))
                .collect(),
            remove: rel(&self.remove),
        };
        let text = serde_json::to_vec_pretty(&journal).expect("journal serializes");
        storage::write_atomic(&unit.journal_path(), &text)?;
        journal.apply(crawl)?;
        Ok(journal)
    }
}

/// What a partition's conversion changes, once committed: staged files to rename over their
/// final names (in order), then old files to remove after the crawl's indexes are rewritten.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    magic: String,
    /// (staged, final), relative to the crawl.
    renames: Vec<(String, String)>,
    /// Relative to the crawl.
    remove: Vec<String>,
}

impl Journal {
    pub(super) fn read(path: &Path) -> Result<Option<Journal>> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let j: Journal = serde_json::from_slice(&text)
            .map_err(|e| Error::corrupt(path, 0, format!("conversion journal: {e}")))?;
        if j.magic != JOURNAL_MAGIC {
            return Err(Error::corrupt(path, 0, "not a conversion journal"));
        }
        Ok(Some(j))
    }

    /// Renames what is still staged (a rename already done has no staged file left).
    pub(super) fn apply(&self, crawl: &CrawlDir) -> Result<()> {
        for (from, to) in &self.renames {
            let (from, to) = (crawl.root().join(from), crawl.root().join(to));
            if from.exists() {
                storage::fault::check("rename", &from)
                    .and_then(|()| std::fs::rename(&from, &to))
                    .ctx("rename", &from)?;
                storage::sync_dir(to.parent().expect("in a directory"))?;
            } else if !to.exists() {
                return Err(Error::corrupt(
                    &from,
                    0,
                    format!(
                        "the conversion journal lists it, but neither it nor {} exists: restore \
                         the crawl from a copy",
                        to.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Removes the old files (after the indexes no longer name them).
    pub(super) fn finish(&self, crawl: &CrawlDir) -> Result<()> {
        for old in &self.remove {
            let path = crawl.root().join(old);
            match storage::fault::check("remove", &path).and_then(|()| std::fs::remove_file(&path))
            {
                Ok(()) => storage::sync_dir(path.parent().expect("in a directory"))?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove", &path, e)),
            }
        }
        Ok(())
    }
}

/// Removes what conversions of `cycle` staged and did not commit (partitions without a
/// journal), and the temporaries of dead writers in the directories it writes.
pub(super) fn sweep_staged(crawl: &CrawlDir, cycle: u32) -> Result<()> {
    let dirs = [
        crawl.warc_dir(cycle),
        crawl.stage_dir(cycle, Stage::Fetch),
        crawl.stage_dir(cycle, Stage::Parse),
        crawl.stage_dir(cycle, Stage::Merge),
        crawl
            .fetched(cycle, 0)
            .parent()
            .expect("fetched/")
            .to_path_buf(),
        crawl
            .partition_cdxj(cycle, 0)
            .parent()
            .expect("cdxj/")
            .to_path_buf(),
    ];
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(".p").filter(|_| name.ends_with(STAGED)) else {
                continue;
            };
            let Some(p) = rest.get(..4).and_then(|d| d.parse::<u32>().ok()) else {
                continue;
            };
            if !journal_path(crawl, cycle, p).exists() {
                let path = e.path();
                std::fs::remove_file(&path).ctx("remove", &path)?;
            }
        }
        storage::remove_temps(&dir)?;
    }
    Ok(())
}
