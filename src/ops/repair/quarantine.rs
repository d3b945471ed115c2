//! `quarantine/<unix time>/`: where a repair puts what it takes out of the crawl, at the same
//! relative path, so nothing it replaces or rolls back is ever deleted (a person can inspect it,
//! put it back, or remove it). `check crawl` does not check it; nothing reads it.

use std::path::{Path, PathBuf};

use crate::crawl::CrawlDir;
use crate::error::{IoContext, Result};

/// The quarantine directory of one repair run.
pub(super) fn dir_for_now(crawl: &CrawlDir) -> PathBuf {
    crawl
        .root()
        .join("quarantine")
        .join(crate::util::unix_now().to_string())
}

/// Moves `rel` (a file or directory of the crawl) to the same relative path under `q`
/// (a rename: the crawl and its quarantine are one file system).
pub(super) fn move_in(crawl: &CrawlDir, q: &Path, rel: &Path) -> Result<()> {
    let (from, to) = (crawl.root().join(rel), q.join(rel));
    crate::storage::create_dir_all(to.parent().expect("has a parent"))?;
    std::fs::rename(&from, &to).ctx("move to quarantine", &from)?;
    crate::storage::sync_dir(from.parent().expect("has a parent"))?;
    Ok(())
}

/// Bytes under `path` (a file, or a directory's files), not following links.
pub(super) fn size_of(path: &Path) -> u64 {
    let Ok(md) = path.symlink_metadata() else {
        return 0;
    };
    if !md.is_dir() {
        return md.len();
    }
    std::fs::read_dir(path)
        .map(|es| es.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}
