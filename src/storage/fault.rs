//! Injected storage faults, for tests (docs/RELIABILITY.md, campaign 3).
//!
//! `DRAGNET_FAULT=N` makes the Nth storage operation of the process (counted from 1 over every
//! [`check`] call: writes, fsyncs, renames, directory fsyncs and creations, the removals of
//! pruning, in whatever order the threads reach them) fail with EIO; `DRAGNET_FAULT=N:enospc`
//! with ENOSPC (no space left on device). One fault, then everything works again, as after a
//! transient error. `DRAGNET_FAULT=N:kill` sends the process SIGKILL instead, just before the
//! Nth operation: a crash at an exact point (the crash campaign, docs/RELIABILITY.md, campaign 2). With
//! `DRAGNET_FAULT_LOG=FILE` every operation is appended to FILE as `N op path` (to count a run's
//! operations and name the one that failed). Only debug builds read these variables: a release
//! build's `check` is `Ok(())`.

use std::io;
use std::path::Path;

/// Fails the operation `op` on `path` if it is the one `DRAGNET_FAULT` names (see the
/// module docs); logs it with `DRAGNET_FAULT_LOG`.
#[cfg(debug_assertions)]
pub fn check(op: &'static str, path: &Path) -> io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    struct Plan {
        /// The operation to fail and its errno (0: SIGKILL).
        at: Option<(u64, i32)>,
        log: Option<Mutex<std::fs::File>>,
    }
    static PLAN: OnceLock<Plan> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let plan = PLAN.get_or_init(|| {
        let at = std::env::var("DRAGNET_FAULT").ok().and_then(|v| {
            let (n, kind) = v.split_once(':').unwrap_or((&v, "eio"));
            let errno = match kind {
                "enospc" => libc::ENOSPC,
                "kill" => 0,
                _ => libc::EIO,
            };
            n.trim().parse().ok().map(|n| (n, errno))
        });
        let log = std::env::var_os("DRAGNET_FAULT_LOG").and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
                .map(Mutex::new)
        });
        Plan { at, log }
    });
    if plan.at.is_none() && plan.log.is_none() {
        return Ok(());
    }
    let n = COUNT.fetch_add(1, Ordering::Relaxed) + 1;
    if let Some(log) = &plan.log {
        let mut f = log.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(f, "{n} {op} {}", path.display());
    }
    match plan.at {
        Some((at, 0)) if at == n => {
            // SAFETY: kill(2) on this process; SIGKILL cannot be caught, nothing runs after.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            unreachable!("SIGKILL returned")
        }
        Some((at, errno)) if at == n => Err(io::Error::from_raw_os_error(errno)),
        _ => Ok(()),
    }
}

/// Release builds inject nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn check(_op: &'static str, _path: &Path) -> io::Result<()> {
    Ok(())
}
