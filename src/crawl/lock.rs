//! The crawl lock: one cycle (or init) at a time per crawl.
//!
//! The lock is a file `DIR/lock` holding the holder's pid, host, start time and command. It is
//! created atomically (written under a temporary name, then hard-linked to `lock`, which fails if
//! the lock exists), so two processes can never both believe they hold it, even on NFS where
//! `O_EXCL` used to be unreliable. It is removed when the holder finishes.
//!
//! A lock whose holder is gone (same host, pid not running) is *stale*: it is reported with the
//! command to clear it, never broken silently, since a cron job that clears locks by itself can
//! run two cycles over each other when the pid check is wrong (other host, pid reuse).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::layout::CrawlDir;
use crate::error::{Error, IoContext, LockHolder, LockState, Result};

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
    pub fn locked(&self, state: LockState, message: String) -> Error {
        Error::Locked {
            holder: Some(self.holder_of()),
            state,
            message,
        }
    }
}

/// Whether a lock's holder still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// The holder runs on this host.
    Alive,
    /// The holder ran on this host and is gone: the lock is stale.
    Gone,
    /// The holder runs on another host; cannot tell from here.
    Unknown,
}

impl LockInfo {
    /// Checks whether the holder still runs.
    pub fn holder(&self) -> Holder {
        if self.host != crate::util::hostname() {
            return Holder::Unknown;
        }
        if crate::util::pid_alive(self.pid) {
            Holder::Alive
        } else {
            Holder::Gone
        }
    }
}

/// A held crawl lock; released on drop.
#[derive(Debug)]
pub struct CrawlLock {
    path: PathBuf,
    info: LockInfo,
}

impl CrawlLock {
    /// Takes the lock of the crawl at `root` for `command`, or explains who holds it.
    pub fn acquire(root: &Path, command: &str) -> Result<CrawlLock> {
        let dir = CrawlDir::new(root);
        let path = dir.lock_path();
        let info = LockInfo {
            pid: std::process::id(),
            host: crate::util::hostname(),
            started: crate::util::rfc3339(crate::util::unix_now()),
            command: command.to_string(),
        };
        let tmp = root.join(format!(".lock.tmp.{}", std::process::id()));
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&info).expect("lock serializes"),
        )
        .ctx("write", &tmp)?;
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                crate::storage::sync_dir(root)?;
                Ok(CrawlLock { path, info })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(held_error(root, &path)),
            Err(e) => Err(Error::io("create lock", &path, e)),
        }
    }

    /// What this lock says.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }
}

impl Drop for CrawlLock {
    fn drop(&mut self) {
        // Remove only our own lock (an operator may have cleared and re-taken it meanwhile).
        if read(&self.path)
            .ok()
            .flatten()
            .is_some_and(|i| i == self.info)
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
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

fn held_error(root: &Path, path: &Path) -> Error {
    let info = match read(path) {
        Ok(Some(i)) => i,
        Ok(None) => {
            return Error::Locked {
                holder: None,
                state: LockState::Held,
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
    match info.holder() {
        Holder::Alive => info.locked(
            LockState::Held,
            format!(
                "crawl {} is already running: locked by {who}",
                root.display()
            ),
        ),
        Holder::Gone => info.locked(
            LockState::Stale,
            format!(
                "crawl {} has a stale lock: {who} is no longer running. If no other dragnet works \
                 on this crawl, clear it with `dragnet unlock {}` and re-run; committed stages \
                 are kept",
                root.display(),
                root.display()
            ),
        ),
        Holder::Unknown => info.locked(
            LockState::Held,
            format!(
                "crawl {} is locked by {who}, on another host; if that process is gone, clear it \
                 with `dragnet unlock --force {}`",
                root.display(),
                root.display()
            ),
        ),
    }
}

/// Removes a lock: a stale one always, a live or foreign one only with `force`.
/// Returns the lock that was removed.
pub fn unlock(root: &Path, force: bool) -> Result<Option<LockInfo>> {
    let crawl = CrawlDir::new(root);
    let path = crawl.lock_path();
    if !crawl.config_path().is_file() && !path.exists() {
        return Err(crawl.not_a_crawl());
    }
    let Some(info) = read(&path)? else {
        return Ok(None);
    };
    match info.holder() {
        Holder::Gone => {}
        Holder::Alive if !force => {
            return Err(info.locked(
                LockState::Held,
                format!(
                    "pid {} on {} is still running `{}`; stop it first (or use --force if you are \
                     sure)",
                    info.pid, info.host, info.command
                ),
            ))
        }
        Holder::Unknown if !force => {
            return Err(info.locked(
                LockState::Held,
                format!(
                    "the lock belongs to pid {} on host {}, which cannot be checked from here; use \
                     --force if it is gone",
                    info.pid, info.host
                ),
            ))
        }
        _ => {}
    }
    std::fs::remove_file(&path).ctx("remove", &path)?;
    crate::storage::sync_dir(root)?;
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
            matches!(&err, Error::Locked { holder: Some(h), state: LockState::Held, .. } if h.pid == std::process::id()),
            "{err:?}"
        );
        drop(l);
        assert!(read_lock(t.path()).unwrap().is_none());
        CrawlLock::acquire(t.path(), "again").unwrap();
    }

    #[test]
    fn stale_lock_is_reported_with_the_fix() {
        let t = tempfile::tempdir().unwrap();
        // A pid that cannot be running: above the kernel's pid_max.
        let info = LockInfo {
            pid: 4_194_304 + 7,
            host: crate::util::hostname(),
            started: "then".into(),
            command: "cycle".into(),
        };
        std::fs::write(t.path().join("lock"), serde_json::to_vec(&info).unwrap()).unwrap();
        assert_eq!(info.holder(), Holder::Gone);
        let err = CrawlLock::acquire(t.path(), "cycle").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("stale") && msg.contains("dragnet unlock"),
            "{msg}"
        );
        assert_eq!(unlock(t.path(), false).unwrap(), Some(info));
        CrawlLock::acquire(t.path(), "cycle").unwrap();
    }
}
