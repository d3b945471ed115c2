//! The crawl lock: one cycle (or init) at a time per crawl, and no human needed after a crash.
//!
//! The lock is a file `DIR/lock` holding the holder's pid, host, start time and command, *and* an
//! OS lock (`flock(2)`, exclusive) that the holder keeps on that file while it runs. The kernel
//! drops the OS lock when the holder dies, however it dies (kill -9, OOM killer, power loss), so
//! the OS lock, not the pid, says whether the holder is alive:
//!
//! - **Taking it.** The holder's record is written to a temporary file, the OS lock is taken on
//!   that file, and only then is it hard-linked to `lock` (which fails if `lock` exists): the
//!   name never points at a file whose OS lock is free while its holder runs, and two processes
//!   can never both believe they hold it, even on NFS where `O_EXCL` used to be unreliable.
//! - **A lock left behind.** If `lock` exists, its OS lock is tried. Held: the holder runs (busy,
//!   exit 5). Free, and the record names this host: its holder is dead, whatever its pid says now
//!   (pids are reused), so the lock is *taken over*: the new record, already OS-locked, is renamed
//!   over the old one (after checking that `lock` is still the file whose OS lock was taken, so
//!   two processes taking over at once cannot both win), and a line says whose lock it was. The
//!   nightly cron job therefore resumes a killed cycle by itself.
//! - **Another host.** On a shared filesystem whose locks do not reach across hosts (some NFS and
//!   Lustre setups), a free OS lock proves nothing about a holder on another host. Such a lock is
//!   taken over only when its *lease* has expired: with `[cycle] lock_lease_secs` set, the holder
//!   refreshes the lock file's modification time every quarter lease, and a lock not refreshed
//!   for a whole lease is taken over (and logged). Without a lease (the default), it is reported
//!   with the command that clears it: `dragnet unlock --force`.
//!
//! The lock is released (file removed, then the OS lock) when the holder finishes, or is stopped
//! by SIGINT or SIGTERM (`crate::interrupt`). `dragnet unlock` stays for the rare case a person
//! must decide (a foreign host's lock without a lease); it never removes the lock of a holder
//! whose OS lock is held, not even with `--force` (that would let a second writer run beside a
//! live one).
//!
//! Every command that writes a crawl holds this lock: `init`, `inject`, `cycle`, the five
//! stages run by hand, `repair`, `repartition` (on the crawl it reads) and `slurm submit`. Slurm
//! tasks and `slurm finish` do not: they run while the crawl's jobs are queued, which every
//! local run refuses (`crate::exec::slurm`).
//! Every process that works on a crawl must use this protocol: a dragnet from before the OS lock
//! would look dead to it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::layout::CrawlDir;
use crate::error::{Error, IoContext, LockHolder, Result};

/// What the lock file says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    /// Holder's process id.
    pub pid: u32,
    /// Holder's host name.
    pub host: String,
    /// When it was taken, RFC 3339 UTC.
    pub started: String,
    /// What the holder is doing.
    pub command: String,
}

impl LockInfo {
    /// The holder as errors carry it.
    pub fn holder_of(&self) -> LockHolder {
        LockHolder {
            pid: self.pid,
            host: self.host.clone(),
            command: self.command.clone(),
            since: self.started.clone(),
        }
    }

    /// A [`Error::Locked`] about this holder.
    pub fn locked(&self, message: String) -> Error {
        Error::Locked {
            holder: Some(self.holder_of()),
            message,
        }
    }
}

/// Whether a lock's holder still runs ([`probe_lock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// The holder runs: its OS lock is held.
    Alive,
    /// The holder ran on this host and is gone (its OS lock is free): the lock is stale, and
    /// the next run takes it over.
    Gone,
    /// The record names another host and its OS lock is free here, which proves nothing on a
    /// filesystem whose locks do not reach across hosts.
    Unknown,
}

/// A held crawl lock; released on drop.
#[derive(Debug)]
pub struct CrawlLock {
    path: PathBuf,
    info: LockInfo,
    /// The lock file, open, with its OS lock held until this is dropped.
    _os: std::fs::File,
    took_over: Option<String>,
    /// Refreshes the lock file's time while a lease is configured: stop it by dropping the
    /// sender.
    heartbeat: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
    /// Releases the lock if a signal's stop is cut short ([`crate::interrupt`]).
    _stop: crate::interrupt::OnStop,
}

impl CrawlLock {
    /// Takes the lock of the crawl at `root` for `command`, taking over a lock whose holder is
    /// dead on this host, or explains who holds it (see the module docs). No lease: a lock of
    /// another host is never taken over.
    pub fn acquire(root: &Path, command: &str) -> Result<CrawlLock> {
        CrawlLock::acquire_with_lease(root, command, None)
    }

    /// As [`CrawlLock::acquire`], with a lease (`[cycle] lock_lease_secs`): a lock of another
    /// host not refreshed for `lease` is taken over, and this holder refreshes its own every
    /// quarter lease.
    pub fn acquire_with_lease(
        root: &Path,
        command: &str,
        lease: Option<Duration>,
    ) -> Result<CrawlLock> {
        let path = CrawlDir::new(root).lock_path();
        let info = LockInfo {
            pid: std::process::id(),
            host: crate::util::hostname(),
            started: crate::util::rfc3339(crate::util::unix_now()),
            command: command.to_string(),
        };
        // A few rounds: each lost race (another process took or replaced the lock meanwhile)
        // starts over with what is there now.
        for _ in 0..8 {
            let (tmp, file) = locked_record(root, &info)?;
            match std::fs::hard_link(&tmp, &path) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&tmp);
                    crate::storage::sync_dir(root)?;
                    return Ok(CrawlLock::held(path, info, file, None, lease));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(Error::io("create lock", &path, e));
                }
            }
            // `lock` exists: is its holder alive?
            let old = match open_existing(&path)? {
                Some(f) => f,
                None => {
                    let _ = std::fs::remove_file(&tmp);
                    continue; // removed meanwhile: try again
                }
            };
            if !try_flock(&old, &path)? {
                let _ = std::fs::remove_file(&tmp);
                return Err(held_error(root, &path, Holder::Alive));
            }
            // We hold the old file's OS lock. Is `lock` still that file (not replaced since)?
            if !same_file(&old, &path)? {
                let _ = std::fs::remove_file(&tmp);
                continue;
            }
            let Some(old_info) = read(&path)? else {
                let _ = std::fs::remove_file(&tmp);
                continue;
            };
            let why = if old_info.host == info.host {
                format!("pid {} is no longer running", old_info.pid)
            } else {
                let age = old
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .unwrap_or_default();
                match lease {
                    Some(l) if age >= l => format!(
                        "its lease expired: not refreshed for {}s (lease {}s)",
                        age.as_secs(),
                        l.as_secs()
                    ),
                    _ => {
                        let _ = std::fs::remove_file(&tmp);
                        return Err(held_error(root, &path, Holder::Unknown));
                    }
                }
            };
            std::fs::rename(&tmp, &path).ctx("take over the lock", &path)?;
            crate::storage::sync_dir(root)?;
            let note = format!(
                "took over the lock of {}: pid {} on {} since {} ({}); {why}",
                root.display(),
                old_info.pid,
                old_info.host,
                old_info.started,
                old_info.command
            );
            drop(old);
            return Ok(CrawlLock::held(path, info, file, Some(note), lease));
        }
        Err(Error::Locked {
            holder: None,
            message: format!(
                "crawl {} is being locked and unlocked by other processes; try again",
                root.display()
            ),
        })
    }

    fn held(
        path: PathBuf,
        info: LockInfo,
        file: std::fs::File,
        took_over: Option<String>,
        lease: Option<Duration>,
    ) -> CrawlLock {
        let heartbeat = lease.filter(|l| !l.is_zero()).map(|l| {
            let (stop, rx) = std::sync::mpsc::channel::<()>();
            let f = file.try_clone().ok();
            let every = (l / 4).max(Duration::from_secs(1));
            let thread = std::thread::spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    if let Some(f) = &f {
                        let _ = f.set_modified(SystemTime::now());
                    }
                }
            });
            (stop, thread)
        });
        let stop = {
            let (path, info) = (path.clone(), info.clone());
            crate::interrupt::on_stop_release(move || release(&path, &info))
        };
        CrawlLock {
            path,
            info,
            _os: file,
            took_over,
            heartbeat,
            _stop: stop,
        }
    }

    /// What this lock says.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// If this lock was taken over from a dead holder (or an expired lease), a line saying
    /// whose it was and why, for the log.
    pub fn took_over(&self) -> Option<&str> {
        self.took_over.as_deref()
    }
}

impl Drop for CrawlLock {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.heartbeat.take() {
            drop(stop);
            let _ = thread.join();
        }
        release(&self.path, &self.info);
    }
}

/// Removes the lock file at `path` if it still holds `info` (an operator may have cleared and
/// re-taken it meanwhile); the OS lock goes when the holder's file is closed, after.
fn release(path: &Path, info: &LockInfo) {
    if read(path).ok().flatten().is_some_and(|i| &i == info) {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes `info` to a new temporary lock file in `root` and takes its OS lock.
fn locked_record(root: &Path, info: &LockInfo) -> Result<(PathBuf, std::fs::File)> {
    let tmp = root.join(format!(
        ".lock{}{}",
        crate::storage::TEMP_MARK,
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&tmp)
        .ctx("create", &tmp)?;
    use std::io::Write as _;
    crate::storage::fault::check("write", &tmp)
        .and_then(|()| f.write_all(&serde_json::to_vec_pretty(info).expect("lock serializes")))
        .and_then(|()| f.sync_all())
        .ctx("write", &tmp)?;
    if !try_flock(&f, &tmp)? {
        return Err(Error::Internal(format!(
            "{}: a new file is OS-locked by someone else",
            tmp.display()
        )));
    }
    Ok((tmp, f))
}

/// Opens an existing lock file (`None` if it is gone).
fn open_existing(path: &Path) -> Result<Option<std::fs::File>> {
    match std::fs::File::open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("open", path, e)),
    }
}

/// Takes the exclusive OS lock of `f` without waiting: `false` if another open file holds it.
fn try_flock(f: &std::fs::File, path: &Path) -> Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own; no memory is involved.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::WouldBlock {
        return Ok(false);
    }
    Err(Error::io("lock (flock)", path, e))
}

/// Whether `path` names the file `f` has open.
fn same_file(f: &std::fs::File, path: &Path) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let a = f.metadata().ctx("stat", path)?;
    match std::fs::metadata(path) {
        Ok(b) => Ok(a.dev() == b.dev() && a.ino() == b.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("stat", path, e)),
    }
}

/// Whether the holder of the crawl's lock file is alive, by its OS lock: [`Holder::Alive`] if
/// the OS lock is held, [`Holder::Gone`] if it is free and the record names this host,
/// [`Holder::Unknown`] for another host's record with a free OS lock. `None` without a lock.
pub fn probe_lock(root: &Path) -> Result<Option<(LockInfo, Holder)>> {
    Ok(probe_file(&CrawlDir::new(root).lock_path())?.map(|(_, info, holder)| (info, holder)))
}

/// The lock file at `path` (opened, its OS lock taken when free), its record and its holder;
/// `None` without a lock. Taking the OS lock of a file whose holder is dead is harmless: it is
/// released when the file is dropped, and [`unlock`] keeps it while it removes the file.
fn probe_file(path: &Path) -> Result<Option<(std::fs::File, LockInfo, Holder)>> {
    let Some(f) = open_existing(path)? else {
        return Ok(None);
    };
    let Some(info) = read(path)? else {
        return Ok(None);
    };
    let holder = if !try_flock(&f, path)? {
        Holder::Alive
    } else if info.host == crate::util::hostname() {
        Holder::Gone
    } else {
        Holder::Unknown
    };
    Ok(Some((f, info, holder)))
}

/// Reads the lock of a crawl, if any.
pub fn read_lock(root: &Path) -> Result<Option<LockInfo>> {
    read(&CrawlDir::new(root).lock_path())
}

fn read(path: &Path) -> Result<Option<LockInfo>> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            Error::corrupt(
                path,
                0,
                format!("unreadable lock file ({e}); remove it by hand if no dragnet runs"),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// The error for a lock that is not ours to take: `holder` is [`Holder::Alive`] (its OS lock is
/// held) or [`Holder::Unknown`] (another host's, no expired lease).
fn held_error(root: &Path, path: &Path, holder: Holder) -> Error {
    let info = match read(path) {
        Ok(Some(i)) => i,
        Ok(None) => {
            return Error::Locked {
                holder: None,
                message: format!(
                    "crawl {} was locked a moment ago; try again",
                    root.display()
                ),
            }
        }
        Err(e) => return e,
    };
    let who = format!(
        "pid {} on {} since {} ({})",
        info.pid, info.host, info.started, info.command
    );
    match holder {
        Holder::Unknown => info.locked(format!(
            "crawl {} is locked by {who}, on another host; it is taken over only when its \
                 lease expires (`[cycle] lock_lease_secs`, not set); if that process is gone, \
                 clear it with `dragnet unlock --force {}`",
            root.display(),
            root.display()
        )),
        _ => info.locked(format!(
            "crawl {} is already running: locked by {who}",
            root.display()
        )),
    }
}

/// Removes a lock whose holder is gone: a dead holder's on this host always, another host's
/// (which cannot be checked from here) only with `force`. A live holder's lock (its OS lock is
/// held) is never removed, `force` or not: that would let a second writer run beside it
/// ([`Error::Locked`], exit 5, naming the holder's pid and command). Returns the lock that was
/// removed.
///
/// The old lock file's OS lock is held while it is removed, and the name checked to be still
/// that file, so a run that takes the lock meanwhile is never the one removed.
pub fn unlock(root: &Path, force: bool) -> Result<Option<LockInfo>> {
    let crawl = CrawlDir::new(root);
    let path = crawl.lock_path();
    if !crawl.config_path().is_file() && !path.exists() {
        return Err(crawl.not_a_crawl());
    }
    let Some((f, info, holder)) = probe_file(&path)? else {
        return Ok(None);
    };
    match holder {
        Holder::Gone => {}
        Holder::Alive => {
            let stop = if info.host == crate::util::hostname() {
                format!("`kill {}`", info.pid)
            } else {
                format!("`kill {}` on {}", info.pid, info.host)
            };
            return Err(info.locked(format!(
                "crawl {} is locked by pid {} on {} (`{}`, since {}), which is running: its OS \
                 lock is held, so the lock is not removed{}; wait for it to finish, or stop that \
                 process ({stop}) and run again (a stopped run's lock is taken over by the next \
                 run by itself)",
                root.display(),
                info.pid,
                info.host,
                info.command,
                info.started,
                if force { ", not even with --force" } else { "" },
            )));
        }
        Holder::Unknown if !force => {
            return Err(info.locked(format!(
                "the lock belongs to pid {} on host {}, which cannot be checked from here; use \
                     --force if it is gone",
                info.pid, info.host
            )))
        }
        Holder::Unknown => {}
    }
    // The OS lock of the file read is ours now: nobody can take it over meanwhile. Is `lock`
    // still that file?
    if !same_file(&f, &path)? {
        return Err(Error::Locked {
            holder: None,
            message: format!(
                "crawl {} was locked again a moment ago; run `dragnet status {}` to see by whom",
                root.display(),
                root.display()
            ),
        });
    }
    std::fs::remove_file(&path).ctx("remove", &path)?;
    crate::storage::sync_dir(root)?;
    drop(f);
    Ok(Some(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_is_refused_and_drop_releases() {
        let t = tempfile::tempdir().unwrap();
        let l = CrawlLock::acquire(t.path(), "test").unwrap();
        let err = CrawlLock::acquire(t.path(), "test2").unwrap_err();
        assert!(err.to_string().contains("already running"), "{err}");
        assert_eq!(err.exit_code(), crate::error::EXIT_BUSY);
        assert!(
            matches!(&err, Error::Locked { holder: Some(h), .. } if h.pid == std::process::id()),
            "{err:?}"
        );
        drop(l);
        assert!(read_lock(t.path()).unwrap().is_none());
        CrawlLock::acquire(t.path(), "again").unwrap();
    }

    fn record(pid: u32, host: &str) -> LockInfo {
        LockInfo {
            pid,
            host: host.into(),
            started: "then".into(),
            command: "cycle".into(),
        }
    }

    #[test]
    fn a_dead_holders_lock_on_this_host_is_taken_over() {
        let t = tempfile::tempdir().unwrap();
        // The lock file a killed run leaves: its record, no OS lock. Even a pid that runs (this
        // process: pids are reused) does not keep it.
        for pid in [4_194_304 + 7, std::process::id()] {
            let old = record(pid, &crate::util::hostname());
            std::fs::write(t.path().join("lock"), serde_json::to_vec(&old).unwrap()).unwrap();
            assert_eq!(
                probe_lock(t.path()).unwrap(),
                Some((old.clone(), Holder::Gone))
            );
            let l = CrawlLock::acquire(t.path(), "cycle").unwrap();
            let note = l.took_over().expect("a takeover is reported");
            assert!(
                note.contains(&format!("pid {pid}")) && note.contains("no longer running"),
                "{note}"
            );
            assert_eq!(read_lock(t.path()).unwrap().as_ref(), Some(l.info()));
            assert_eq!(probe_lock(t.path()).unwrap().unwrap().1, Holder::Alive);
            // While it is held, nobody else gets it.
            let err = CrawlLock::acquire(t.path(), "cycle").unwrap_err();
            assert_eq!(err.exit_code(), crate::error::EXIT_BUSY, "{err}");
            drop(l);
            assert!(read_lock(t.path()).unwrap().is_none());
        }
    }

    #[test]
    fn another_hosts_lock_waits_for_its_lease() {
        let t = tempfile::tempdir().unwrap();
        let old = record(42, "some-other-host.example");
        let path = t.path().join("lock");
        std::fs::write(&path, serde_json::to_vec(&old).unwrap()).unwrap();
        assert_eq!(probe_lock(t.path()).unwrap().unwrap().1, Holder::Unknown);
        // No lease: never taken over; the message names the way out.
        let err = CrawlLock::acquire(t.path(), "cycle").unwrap_err();
        assert!(err.to_string().contains("unlock --force"), "{err}");
        // A lease not yet expired: still held.
        let lease = Some(Duration::from_secs(600));
        let err = CrawlLock::acquire_with_lease(t.path(), "cycle", lease).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::EXIT_BUSY, "{err}");
        assert_eq!(read_lock(t.path()).unwrap(), Some(old.clone()));
        // Not refreshed for longer than the lease: taken over, and said so.
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(601))
            .unwrap();
        let l = CrawlLock::acquire_with_lease(t.path(), "cycle", lease).unwrap();
        let note = l.took_over().unwrap();
        assert!(
            note.contains("lease expired") && note.contains("some-other-host"),
            "{note}"
        );
        // `unlock --force` clears a foreign lock; plain `unlock` refuses it.
        drop(l);
        std::fs::write(&path, serde_json::to_vec(&old).unwrap()).unwrap();
        assert!(unlock(t.path(), false).is_err());
        assert_eq!(unlock(t.path(), true).unwrap(), Some(old));
    }

    #[test]
    fn a_live_holders_lock_is_never_removed_even_with_force() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("crawl.toml"), "").unwrap();
        // Held (its OS lock too) by this process, as by a running cycle.
        let l = CrawlLock::acquire(t.path(), "cycle").unwrap();
        for force in [false, true] {
            let err = unlock(t.path(), force).unwrap_err();
            assert_eq!(err.exit_code(), crate::error::EXIT_BUSY, "{err}");
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("pid {}", std::process::id()))
                    && msg.contains("`cycle`")
                    && msg.contains("wait for it")
                    && msg.contains("stop that process"),
                "{msg}"
            );
            assert_eq!(read_lock(t.path()).unwrap().as_ref(), Some(l.info()));
        }
        drop(l);
        // A dead holder's lock: removed, with or without --force.
        for force in [false, true] {
            let old = record(4_194_304 + 9, &crate::util::hostname());
            std::fs::write(t.path().join("lock"), serde_json::to_vec(&old).unwrap()).unwrap();
            assert_eq!(unlock(t.path(), force).unwrap(), Some(old));
            assert!(read_lock(t.path()).unwrap().is_none());
        }
    }

    #[test]
    fn a_lease_holder_refreshes_its_lock() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("lock");
        let l =
            CrawlLock::acquire_with_lease(t.path(), "cycle", Some(Duration::from_secs(4))).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        // The heartbeat runs every second (a quarter of the lease): within a few, the time is
        // fresh again.
        let fresh = (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            let age = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok());
            age.is_some_and(|a| a < Duration::from_secs(60))
        });
        assert!(fresh, "the lock's time was not refreshed");
        drop(l);
        assert!(!path.exists());
    }
}
