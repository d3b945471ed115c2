//! Making a damaged derived file again by running the stage that wrote it, in a sandbox.
//!
//! Every stage is deterministic: run again on the same inputs it writes the same bytes, and its
//! `.done` marker records the checksum of each output. So a damaged output of parse, split,
//! merge or prioritize is made again without touching anything else of the crawl:
//!
//! 1. A sandbox crawl is laid out in `DIR/.repair.tmp.PID@HOST/`: `crawl.toml`, the manifest,
//!    the partition's state files and the whole of the cycle (and the next cycle's fetch lists)
//!    as **hard links** to the crawl's own files (no bytes copied; every writer publishes by
//!    renaming a new file, so nothing the sandbox writes reaches the crawl's inodes). The
//!    prioritize stage gets a frontier of its own, rebuilt from the URL db the stage's cycle
//!    started with (the frontier is the only file written in place).
//! 2. The stage's `.done` marker and the damaged files are taken out of the sandbox, and the
//!    stage runs there for that one partition.
//! 3. Its new marker's outputs are compared with the old marker's (path, size, xxh3): all equal,
//!    the regeneration is proven the same bytes the stage committed, and each damaged file is
//!    moved to `quarantine/` and replaced by its remade twin (a rename, same file system). A
//!    damaged marker is replaced by the new one when every output it names equals the crawl's
//!    file. Anything else (an input pruned or itself damaged, outputs that differ) leaves the
//!    crawl untouched and the repair falls back to its other means.
//!
//! The sandbox is removed when it is done with; one left by a killed repair is swept by the next.

use std::path::{Path, PathBuf};

use crate::config::Config;

use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};

/// The sandbox directory's name prefix (a temporary name: `check crawl` lists it as one).
const SANDBOX: &str = ".repair";

/// A sandbox crawl inside the crawl directory; removed on drop.
pub(super) struct Sandbox {
    crawl: CrawlDir,
}

impl Sandbox {
    fn new(crawl: &CrawlDir) -> Result<Sandbox> {
        let root = crawl.root().join(format!(
            "{SANDBOX}{}{}",
            crate::storage::TEMP_MARK,
            crate::storage::temp_writer_tag()
        ));
        if root.exists() {
            std::fs::remove_dir_all(&root).ctx("remove", &root)?;
        }
        crate::storage::create_dir_all(&root)?;
        Ok(Sandbox {
            crawl: CrawlDir::new(root),
        })
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.crawl.root());
    }
}

/// Removes sandboxes a killed repair left in `crawl` (any pid: the caller holds the lock).
pub(super) fn sweep(crawl: &CrawlDir) -> Result<Vec<PathBuf>> {
    let mut swept = Vec::new();
    let Ok(entries) = std::fs::read_dir(crawl.root()) else {
        return Ok(swept);
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(SANDBOX) && crate::storage::is_temp_name(&name) {
            std::fs::remove_dir_all(e.path()).ctx("remove", &e.path())?;
            swept.push(PathBuf::from(name));
        }
    }
    Ok(swept)
}

/// Hard-links every file under `from` to the same place under `to` (a copy where the file
/// system has no hard links), skipping temporaries and any directory `skip` names.
fn link_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    crate::storage::create_dir_all(to)?;
    for e in entries {
        let e = e.ctx("list", from)?;
        let name = e.file_name();
        if crate::storage::is_temp_name(&name.to_string_lossy()) {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let ft = e.file_type().ctx("stat", &src)?;
        if ft.is_dir() {
            if !skip(&src) {
                link_tree(&src, &dst, skip)?;
            }
        } else if ft.is_file() && std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).ctx("copy", &src)?;
        }
    }
    Ok(())
}

/// Why a regeneration could not be proven (the crawl is left as it was).
pub(super) type NotProven = String;

/// What a stage committed: its marker's record of `out`, or (the marker damaged) the digest
/// of the crawl's own file.
fn committed(crawl: &CrawlDir, old: Option<&DoneMarker>, out: &FileDigest) -> Option<FileDigest> {
    match old {
        Some(m) => m.outputs.iter().find(|o| o.path == out.path).cloned(),
        None => {
            let path = crawl.root().join(&out.path);
            match out.records {
                Some(_) => FileDigest::of_run(crawl, &path).ok(),
                None => FileDigest::of_file(crawl, &path).ok(),
            }
        }
    }
}

/// Runs `stage` of `cycle` for `p` in the sandbox `s` (its marker and `gone` taken out first)
/// and returns the outputs that differ from what the crawl's stage committed.
fn rerun(
    crawl: &CrawlDir,
    s: &CrawlDir,
    cfg: &Config,
    (stage, cycle, p): (Stage, u32, u32),
    gone: &[PathBuf],
) -> Result<std::result::Result<Vec<FileDigest>, NotProven>> {
    let done = crawl.relative(&crawl.done_path(cycle, stage, p));
    for rel in gone.iter().map(PathBuf::as_path).chain([Path::new(&done)]) {
        let path = s.root().join(rel);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("remove", path, e)),
        }
    }
    let old = DoneMarker::read(&crawl.done_path(cycle, stage, p))
        .ok()
        .flatten();
    if let Err(e) = crate::ops::stage::run_stage(s, cfg, stage, cycle, p, &Default::default()) {
        return Ok(Err(format!(
            "{stage} of cycle {cycle} p{p} run again failed: {e}"
        )));
    }
    let Some(marker) = DoneMarker::read(&s.done_path(cycle, stage, p))? else {
        return Ok(Err(format!("{stage} of cycle {cycle} p{p} left no marker")));
    };
    if old
        .as_ref()
        .is_some_and(|m| m.outputs.len() != marker.outputs.len())
    {
        return Ok(Err(format!(
            "{stage} of cycle {cycle} p{p} run again wrote other files than it committed"
        )));
    }
    let differ = marker
        .outputs
        .iter()
        .filter(|out| {
            !committed(crawl, old.as_ref(), out)
                .is_some_and(|c| c.xxh3 == out.xxh3 && c.bytes == out.bytes)
        })
        .cloned()
        .collect();
    Ok(Ok(differ))
}

/// Runs `stage` of `cycle` for partition `p` again in a sandbox and, if its outputs prove equal
/// to what the stage committed, replaces each of `damaged` (relative paths the stage wrote) by
/// its remade twin, moving the damaged one into `quarantine` (module docs), and returns the
/// files remade (relative paths). `Ok(Err(why))` when it cannot be proven: the crawl is then as it was. `dry_run`: prove, replace nothing.
#[allow(clippy::too_many_arguments)]
pub(super) fn regenerate(
    crawl: &CrawlDir,
    cfg: &Config,
    stage: Stage,
    cycle: u32,
    p: u32,
    damaged: &[PathBuf],
    quarantine: &Path,
    dry_run: bool,
) -> Result<std::result::Result<Vec<PathBuf>, NotProven>> {
    let sb = Sandbox::new(crawl)?;
    let s = &sb.crawl;
    for name in ["crawl.toml", "manifest.json"] {
        let src = crawl.root().join(name);
        if src.exists() {
            std::fs::hard_link(&src, s.root().join(name))
                .or_else(|_| std::fs::copy(&src, s.root().join(name)).map(|_| ()))
                .ctx("link", &src)?;
        }
    }
    let no_frontier = |d: &Path| d.file_name() == Some("frontier".as_ref());
    link_tree(&crawl.state_dir(p), &s.state_dir(p), &no_frontier)?;
    link_tree(&crawl.cycle_dir(cycle), &s.cycle_dir(cycle), &|_| false)?;
    let next_lists = crawl.fetchlist(cycle + 1, p);
    let next_lists = next_lists.parent().expect("has a parent");
    link_tree(
        next_lists,
        &s.root().join(crawl.relative(next_lists)),
        &|_| false,
    )?;
    if stage == Stage::Prioritize {
        // The frontier as the stage found it: rebuilt from the URL db its cycle started with.
        super::rebuild_frontier(s, cfg, p, cycle, false, false)?;
    }
    let differ = match rerun(crawl, s, cfg, (stage, cycle, p), damaged)? {
        Ok(r) => r,
        Err(why) => return Ok(Err(why)),
    };
    let mut files: Vec<PathBuf> = damaged.to_vec();
    if let Some(out) = differ.first() {
        // The links run of a parse from the WARC may hold links to one target in another order
        // than the fetch's inline parse wrote them (parse/inline.rs). It is the same links if
        // the split, which sums them whatever the order, makes the same bytes from it as it
        // committed (or, the split not run yet, nothing has read it); the new parse marker then
        // replaces the old one, since it names the new file's checksum.
        let links = crawl.relative(&crawl.links(cycle, p));
        let reordered = stage == Stage::Parse && differ.len() == 1 && out.path == links;
        if !reordered {
            return Ok(Err(format!(
                "{stage} of cycle {cycle} p{p} run again wrote {} unlike the committed one",
                out.path
            )));
        }
        if crawl.done_path(cycle, Stage::Split, p).exists() {
            let split_outputs: Vec<PathBuf> =
                DoneMarker::read(&crawl.done_path(cycle, Stage::Split, p))?
                    .map(|m| m.outputs.iter().map(|o| PathBuf::from(&o.path)).collect())
                    .unwrap_or_default();
            match rerun(crawl, s, cfg, (Stage::Split, cycle, p), &split_outputs)? {
                Ok(d) if d.is_empty() => {}
                Ok(d) => {
                    return Ok(Err(format!(
                        "the links run made again from the WARC splits into {} unlike the \
                         committed one",
                        d[0].path
                    )))
                }
                Err(why) => return Ok(Err(why)),
            }
        }
        let done = PathBuf::from(crawl.relative(&crawl.done_path(cycle, stage, p)));
        if files.contains(&PathBuf::from(&links)) && !files.contains(&done) {
            files.push(done);
        }
    }
    for rel in &files {
        if !s.root().join(rel).is_file() {
            return Ok(Err(format!(
                "{stage} of cycle {cycle} p{p} run again did not write {}",
                rel.display()
            )));
        }
    }
    if !dry_run {
        for rel in &files {
            let (path, remade) = (crawl.root().join(rel), s.root().join(rel));
            if path.exists() {
                super::quarantine::move_in(crawl, quarantine, rel)?;
            }
            std::fs::rename(&remade, &path).ctx("move into place", &path)?;
            crate::storage::sync_dir(path.parent().expect("has a parent"))?;
        }
    }
    Ok(Ok(files))
}
