//! Where a command may write: the one check every output path of the `dragnet` command goes
//! through (`--out` of `export`, `index` and `reparse`), so that no command writes over what a
//! crawl committed, over its own input, or through a device, FIFO or link (issue 30).
//!
//! An output path is refused (a usage error, exit 2, naming the path and what to do; nothing is
//! written) when it is:
//!
//! - **inside a crawl directory**: a directory on its way up from the path (symlinks and `..`
//!   resolved) is a crawl's root ([`crawl_root`]: it holds `crawl.toml` and `manifest.json`, or
//!   one of them beside `cycles/` or `state/`). A crawl's files are written by its cycles only,
//!   so no output can replace a WARC file, a run, a marker or `indexes/index.cdxj`;
//! - **an input** of the command: the same path, or the same file (device and inode, so a hard
//!   link to an input is caught too), or a path inside an input directory; a directory output
//!   must hold no input;
//! - **not a regular file** (a directory, for a directory output) where it exists: a symbolic
//!   link (never followed: the link is not replaced, nor what it points to), a directory, a
//!   device, a FIFO or a socket;
//! - **an existing file**, unless `--force` is given (as zstd and gzip ask). A directory output
//!   must be new or empty (dragnet's own temporary names aside), or, with `--force`, hold only
//!   what the command itself writes there, which it replaces.
//!
//! Publishing checks again: a file output is written under a temporary name in its own
//! directory ([`AtomicFile`]) and, just before the rename, [`Output::recheck`] runs the same
//! rules; a name that was free is taken with `RENAME_NOREPLACE` ([`storage::rename`]), so what
//! appears there meanwhile is never replaced. A directory output is written in a staging
//! directory inside it ([`StagedDir`]) and its files moved in the same way.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::storage::{self, AtomicFile, Publish};

/// The files that mark a crawl's root: `dragnet init` writes both.
pub const CRAWL_MARKERS: [&str; 2] = ["crawl.toml", "manifest.json"];

/// The directories every crawl has (`docs/design.md` §2).
pub const CRAWL_DIRS: [&str; 2] = ["cycles", "state"];

/// Whether `dir` is a crawl's root, and what says so: both [`CRAWL_MARKERS`], or one of them
/// beside one of [`CRAWL_DIRS`] (a crawl made before manifests existed, or one whose
/// `crawl.toml` is gone). A `crawl.toml` alone is a configuration to start crawls from (as
/// `pipeline/crawl.toml`, or the one a script writes beside the crawls it makes), not a crawl.
pub fn crawl_root(dir: &Path) -> Option<String> {
    let has = |name: &str| fs::symlink_metadata(dir.join(name)).is_ok();
    let markers: Vec<&str> = CRAWL_MARKERS.into_iter().filter(|n| has(n)).collect();
    let dirs: Vec<&str> = CRAWL_DIRS.into_iter().filter(|n| has(n)).collect();
    match (markers.as_slice(), dirs.first()) {
        ([a, b], _) => Some(format!("{a} and {b}")),
        ([m], Some(d)) => Some(format!("{m} and {d}/")),
        _ => None,
    }
}

/// What an output path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file (`export --out`, `index --out`).
    File,
    /// A directory the command fills (`reparse --out`).
    Dir,
}

/// What an output path held when it was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing.
    Absent,
    /// A regular file (with `--force` only).
    File,
    /// An empty directory (but for dragnet's temporary names).
    EmptyDir,
    /// A directory holding only what the command writes (with `--force` only).
    OwnDir,
}

/// An output path that passed the rules (module doc): what a command writes to.
#[derive(Debug, Clone)]
pub struct Output {
    given: PathBuf,
    real: PathBuf,
    kind: Kind,
    force: bool,
    inputs: Vec<PathBuf>,
    own: fn(&str) -> bool,
    found: Found,
}

impl Output {
    /// Checks `path` as a file output of a command that reads `inputs`; `force` lets an existing
    /// regular file be replaced.
    pub fn file(path: &Path, inputs: &[PathBuf], force: bool) -> Result<Output> {
        Output::check(path, Kind::File, inputs, force, |_| false)
    }

    /// Checks `path` as a directory output of a command that reads `inputs`; `own` says which
    /// file names the command writes there, which `force` lets it replace.
    pub fn dir(
        path: &Path,
        inputs: &[PathBuf],
        force: bool,
        own: fn(&str) -> bool,
    ) -> Result<Output> {
        Output::check(path, Kind::Dir, inputs, force, own)
    }

    fn check(
        path: &Path,
        kind: Kind,
        inputs: &[PathBuf],
        force: bool,
        own: fn(&str) -> bool,
    ) -> Result<Output> {
        let mut out = Output {
            given: path.to_path_buf(),
            real: PathBuf::new(),
            kind,
            force,
            inputs: inputs.to_vec(),
            own,
            found: Found::Absent,
        };
        (out.real, out.found) = out.inspect()?;
        Ok(out)
    }

    /// The path as given (for messages).
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// The path to write: its directory with symlinks and `..` resolved.
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// What the path held when it was checked.
    pub fn found(&self) -> Found {
        self.found
    }

    /// The rules again (as just before a publish): what the path holds now, or the error that
    /// refuses it now; an error too if its directory now resolves elsewhere.
    pub fn recheck(&self) -> Result<Found> {
        let (real, found) = self.inspect()?;
        if real != self.real {
            return Err(Error::Usage(format!(
                "{}: its directory changed while dragnet wrote it (it now resolves to {}); \
                 nothing was written there",
                self.given.display(),
                real.display()
            )));
        }
        Ok(found)
    }

    /// A file output's [`AtomicFile`]: its temporary file in the output's directory, published
    /// after [`Output::recheck`], without replacing anything unless `--force` allowed it.
    pub fn create_file(&self) -> Result<AtomicFile> {
        assert_eq!(self.kind, Kind::File, "create_file of a directory output");
        let me = self.clone();
        Ok(AtomicFile::create(&self.real)?.guard(Box::new(move || {
            Ok(match me.recheck()? {
                Found::File => Publish::Replace,
                _ => Publish::NoReplace,
            })
        })))
    }

    /// A directory output's staging directory (created, with the output directory and its
    /// parents if missing): the command writes there, then [`StagedDir::publish`].
    pub fn stage_dir(&self) -> Result<StagedDir> {
        assert_eq!(self.kind, Kind::Dir, "stage_dir of a file output");
        let mut made = false;
        if self.found == Found::Absent {
            storage::create_dir_all(parent_of(&self.real))?;
            match storage::fault::check("create directory", &self.real)
                .and_then(|()| fs::create_dir(&self.real))
            {
                Ok(()) => {
                    made = true;
                    storage::sync_dir(parent_of(&self.real))?;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io("create directory", &self.real, e)),
            }
        }
        let mut staged = StagedDir {
            out: self.clone(),
            staging: self.real.join(format!(
                ".staging{}{}",
                storage::TEMP_MARK,
                storage::temp_writer_tag()
            )),
            made,
            done: false,
        };
        // A directory someone made meanwhile passes only if the rules still hold.
        staged.out.found = self.recheck()?;
        storage::remove_temps(&self.real)?;
        fs::create_dir(&staged.staging).ctx("create directory", &staged.staging)?;
        Ok(staged)
    }

    /// The path resolved, and what it holds, or the rule that refuses it.
    fn inspect(&self) -> Result<(PathBuf, Found)> {
        let given = &self.given;
        if given.as_os_str().is_empty() {
            return Err(Error::Usage("--out is empty: give a path".into()));
        }
        let real = self.resolve()?;
        self.refuse_in_a_crawl(&real)?;
        let inputs = self.inputs();
        self.refuse_on_an_input(&real, &inputs)?;
        let meta = match fs::symlink_metadata(&real) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((real, Found::Absent)),
            Err(e) => return Err(Error::io("look at", given, e)),
        };
        self.refuse_the_wrong_kind(&real, &meta)?;
        let shown = given.display();
        for Input {
            given: input, id, ..
        } in &inputs
        {
            if *id == Some((meta.dev(), meta.ino())) {
                return Err(Error::Usage(format!(
                    "{shown} is the same file as the input {} (a hard link to it, or the same \
                     path); give another path for the output",
                    input.display()
                )));
            }
        }
        self.existing(real)
    }

    /// Refuses a path inside a crawl (for a directory output, the crawl directory itself too).
    fn refuse_in_a_crawl(&self, real: &Path) -> Result<()> {
        let shown = self.given.display();
        let skip = usize::from(self.kind == Kind::File);
        for dir in real.ancestors().skip(skip) {
            if let Some(holds) = crawl_root(dir) {
                let is = if dir == real {
                    "is the crawl directory".to_string()
                } else {
                    format!("is inside the crawl directory {}", dir.display())
                };
                return Err(Error::Usage(format!(
                    "{shown} {is} (it holds {holds}): a crawl's files are written by its cycles \
                     only, and no command writes its output there; give a path outside the \
                     crawl"
                )));
            }
        }
        Ok(())
    }

    /// Refuses a path that is an input, inside one, or (a directory output) holding one.
    fn refuse_on_an_input(&self, real: &Path, inputs: &[Input]) -> Result<()> {
        let (given, shown) = (&self.given, self.given.display());
        for Input {
            given: input,
            canon,
            ..
        } in inputs
        {
            if real == canon {
                let named = if input == given {
                    String::new()
                } else {
                    format!(" (the input {})", input.display())
                };
                return Err(Error::Usage(format!(
                    "{shown} is an input of this command{named}; give another path for the \
                     output"
                )));
            }
            let inside = match self.kind {
                Kind::File => real.starts_with(canon),
                Kind::Dir => real.starts_with(canon) || canon.starts_with(real),
            };
            if inside {
                let (what, which) = if real.starts_with(canon) {
                    ("is inside the input", input.display())
                } else {
                    ("holds the input", input.display())
                };
                return Err(Error::Usage(format!(
                    "{shown} {what} {which}; give an output path apart from the inputs"
                )));
            }
        }
        Ok(())
    }

    /// Refuses a symlink, and anything but a regular file (a directory, for a directory
    /// output): devices, FIFOs, sockets.
    fn refuse_the_wrong_kind(&self, real: &Path, meta: &fs::Metadata) -> Result<()> {
        let shown = self.given.display();
        let ft = meta.file_type();
        if ft.is_symlink() {
            let to = fs::read_link(real)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            return Err(Error::Usage(format!(
                "{shown} is a symbolic link{to}: dragnet writes neither through a link nor over \
                 it; give the path it stands for, or a new name"
            )));
        }
        let want = match self.kind {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
        };
        let other = if ft.is_dir() {
            "a directory"
        } else if ft.is_file() {
            "a regular file"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "something else"
        };
        let fits = match self.kind {
            Kind::File => ft.is_file(),
            Kind::Dir => ft.is_dir(),
        };
        if !fits {
            let hint = match (self.kind, ft.is_dir()) {
                (Kind::File, true) => "; --out names the file to write: give a file name",
                (Kind::File, false) => "; dragnet writes its outputs as regular files only",
                (Kind::Dir, _) => "; give a new or empty directory",
            };
            return Err(Error::Usage(format!(
                "{shown} is {other}, not {want}{hint}"
            )));
        }
        Ok(())
    }

    /// What an existing output path that passed the rules holds: a file to replace (with
    /// `--force`), or a directory that is empty or holds this command's own earlier output.
    fn existing(&self, real: PathBuf) -> Result<(PathBuf, Found)> {
        let shown = self.given.display();
        match self.kind {
            Kind::File if self.force => Ok((real, Found::File)),
            Kind::File => Err(Error::Usage(format!(
                "{shown} exists; give --force to replace it, or another path (nothing was \
                 written)"
            ))),
            Kind::Dir => {
                let mut foreign = None;
                let mut any = false;
                for e in fs::read_dir(&real).ctx("list", &real)? {
                    let name = e.ctx("list", &real)?.file_name();
                    let name = name.to_string_lossy();
                    if storage::is_temp_name(&name) {
                        continue;
                    }
                    any = true;
                    if !(self.own)(&name) {
                        foreign.get_or_insert_with(|| name.into_owned());
                    }
                }
                match (any, foreign, self.force) {
                    (false, _, _) => Ok((real, Found::EmptyDir)),
                    (true, None, true) => Ok((real, Found::OwnDir)),
                    (true, None, false) => Err(Error::Usage(format!(
                        "{shown} exists and holds the output of an earlier run; give --force \
                         to replace it, or a new or empty directory (nothing was written)"
                    ))),
                    (true, Some(name), _) => Err(Error::Usage(format!(
                        "{shown} exists and is not empty (it holds '{name}', which this \
                         command does not write); give a new or empty directory"
                    ))),
                }
            }
        }
    }

    /// The output path with its existing part canonicalized (symlinks and `..` resolved).
    fn resolve(&self) -> Result<PathBuf> {
        let given = &self.given;
        let shown = given.display();
        // A directory output may be `.` or end in `..`: an existing directory, resolved whole.
        if self.kind == Kind::Dir
            && fs::symlink_metadata(given).is_ok_and(|m| m.is_dir())
            && given.file_name().is_none()
        {
            return given.canonicalize().ctx("resolve", given);
        }
        let Some(name) = given.file_name() else {
            return Err(Error::Usage(format!(
                "{shown} does not end in a name; give the path of the {} to write",
                match self.kind {
                    Kind::File => "file",
                    Kind::Dir => "directory",
                }
            )));
        };
        // The nearest existing directory up from the path, and the names below it.
        let mut tail: Vec<&std::ffi::OsStr> = vec![name];
        let mut dir = parent_of(given);
        loop {
            match fs::metadata(dir) {
                Ok(m) if m.is_dir() => break,
                Ok(_) => {
                    return Err(Error::Usage(format!(
                        "{shown}: {} is not a directory",
                        dir.display()
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound && self.kind == Kind::Dir => {
                    let up = dir.file_name().filter(|_| {
                        matches!(dir.components().next_back(), Some(Component::Normal(_)))
                    });
                    let Some(up) = up else {
                        return Err(Error::Usage(format!(
                            "{shown}: give a path without `.` or `..` below a directory that \
                             does not exist"
                        )));
                    };
                    tail.push(up);
                    dir = parent_of(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(Error::Usage(format!(
                        "{shown}: the directory {} does not exist; create it first",
                        dir.display()
                    )))
                }
                Err(e) => return Err(Error::io("look at", dir, e)),
            }
        }
        let mut real = dir.canonicalize().ctx("resolve", dir)?;
        for n in tail.into_iter().rev() {
            real.push(n);
        }
        Ok(real)
    }

    /// Each input as given, canonicalized, and its (device, inode); an input that cannot be
    /// resolved is left to the command to report.
    fn inputs(&self) -> Vec<Input<'_>> {
        self.inputs
            .iter()
            .filter_map(|i| {
                let canon = i.canonicalize().ok()?;
                let id = fs::metadata(&canon).ok().map(|m| (m.dev(), m.ino()));
                Some(Input {
                    given: i.as_path(),
                    canon,
                    id,
                })
            })
            .collect()
    }
}

/// An input of the command, as given, resolved, and its (device, inode).
struct Input<'a> {
    given: &'a Path,
    canon: PathBuf,
    id: Option<(u64, u64)>,
}

/// A directory output being written: the command writes into [`StagedDir::path`], a staging
/// directory (a temporary name) inside the output directory, and [`StagedDir::publish`] moves
/// the files in. Dropped unpublished, it removes the staging directory, and the output
/// directory if it made it.
pub struct StagedDir {
    out: Output,
    staging: PathBuf,
    made: bool,
    done: bool,
}

impl StagedDir {
    /// Where the command writes.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Checks the rules again and moves the staged files into the output directory, `last` (a
    /// file that says the output is complete) after the others; without `--force`, a name that
    /// appeared meanwhile is left as it is (an error). With `--force`, the command's own files
    /// from an earlier run are replaced, and those it did not write this time removed.
    pub fn publish(mut self, last: &str) -> Result<()> {
        let found = self.out.recheck()?;
        let out = self.out.real.clone();
        let mut names: Vec<String> = Vec::new();
        for e in fs::read_dir(&self.staging).ctx("list", &self.staging)? {
            let name = e.ctx("list", &self.staging)?.file_name();
            let name = name.to_string_lossy().into_owned();
            if !storage::is_temp_name(&name) {
                names.push(name);
            }
        }
        names.sort_by_key(|n| (n == last, n.clone()));
        let how = if found == Found::OwnDir {
            Publish::Replace
        } else {
            Publish::NoReplace
        };
        let last = names.pop();
        for name in &names {
            storage::rename(&self.staging.join(name), &out.join(name), how)?;
        }
        if found == Found::OwnDir {
            // The earlier run's files this one did not write go before the last one comes.
            for e in fs::read_dir(&out).ctx("list", &out)? {
                let old = e.ctx("list", &out)?.file_name();
                let old = old.to_string_lossy().into_owned();
                let mine = names.contains(&old) || last.as_ref() == Some(&old);
                if !storage::is_temp_name(&old) && (self.out.own)(&old) && !mine {
                    let p = out.join(&old);
                    fs::remove_file(&p).ctx("remove", &p)?;
                }
            }
        }
        if let Some(name) = &last {
            storage::rename(&self.staging.join(name), &out.join(name), how)?;
        }
        storage::sync_dir(&out)?;
        fs::remove_dir(&self.staging).ctx("remove", &self.staging)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.staging);
            if self.made {
                let _ = fs::remove_dir(&self.out.real);
            }
        }
    }
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_name_taken_while_writing_is_left_as_it_is() {
        let t = tempfile::tempdir().unwrap();
        let x = t.path().join("x.cdxj");
        let out = Output::file(&x, &[], false).unwrap();
        let mut f = out.create_file().unwrap();
        f.write_all_bytes(b"ours").unwrap();
        fs::write(&x, b"theirs").unwrap();
        let e = f.commit().unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE, "{e}");
        assert_eq!(fs::read(&x).unwrap(), b"theirs");
        assert_eq!(names(t.path()), ["x.cdxj"], "no temporary left");

        // With --force a regular file may be replaced, but not a link that appeared.
        let y = t.path().join("y.cdxj");
        let out = Output::file(&y, &[], true).unwrap();
        let mut f = out.create_file().unwrap();
        f.write_all_bytes(b"ours").unwrap();
        std::os::unix::fs::symlink(&x, &y).unwrap();
        let e = f.commit().unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(fs::symlink_metadata(&y).unwrap().is_symlink());
        assert_eq!(fs::read(&x).unwrap(), b"theirs");
        assert_eq!(names(t.path()), ["x.cdxj", "y.cdxj"]);
    }

    #[test]
    fn a_crawl_root_is_told_from_a_configuration_beside_crawls() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        fs::write(d.join("crawl.toml"), "").unwrap();
        assert_eq!(crawl_root(d), None, "a configuration alone");
        assert!(Output::file(&d.join("pages.parquet"), &[], false).is_ok());
        fs::create_dir(d.join("state")).unwrap();
        assert!(crawl_root(d).is_some(), "a crawl made before manifests");
        fs::remove_file(d.join("crawl.toml")).unwrap();
        assert_eq!(crawl_root(d), None, "a state/ directory alone");
        fs::write(d.join("manifest.json"), "").unwrap();
        assert!(crawl_root(d).is_some(), "a crawl whose crawl.toml is gone");
        let e = Output::file(&d.join("state/x"), &[], true).unwrap_err();
        assert!(e.to_string().contains("inside the crawl directory"), "{e}");
    }

    #[test]
    fn a_staged_directory_leaves_what_appeared_in_it_and_cleans_up() {
        let t = tempfile::tempdir().unwrap();
        let out_dir = t.path().join("new/out");
        let own = |n: &str| n == "a.run" || n == "done.json";
        let out = Output::dir(&out_dir, &[], false, own).unwrap();
        let staged = out.stage_dir().unwrap();
        fs::write(staged.path().join("a.run"), b"ours").unwrap();
        fs::write(staged.path().join("done.json"), b"{}").unwrap();
        fs::write(out_dir.join("a.run"), b"theirs").unwrap();
        assert!(staged.publish("done.json").is_err());
        assert_eq!(fs::read(out_dir.join("a.run")).unwrap(), b"theirs");
        assert_eq!(names(&out_dir), ["a.run"], "the staging directory is gone");

        // Dropped unpublished, a directory it made goes too.
        let other = t.path().join("other");
        let staged = Output::dir(&other, &[], false, own)
            .unwrap()
            .stage_dir()
            .unwrap();
        fs::write(staged.path().join("a.run"), b"ours").unwrap();
        drop(staged);
        assert!(!other.exists());
    }
}
