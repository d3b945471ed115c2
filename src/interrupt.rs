//! SIGINT and SIGTERM: every command stops within 2 s, removes its temporaries, releases its
//! lock and exits 130 (SIGINT) or 143 (SIGTERM).
//!
//! [`install`] (the binary calls it before any command but `websim`, which has its own) makes
//! both signals set a process-wide flag instead of killing the process. The long loops look at
//! it ([`check`]: the stage envelope, the executors' loops over partitions, the fetch's workers
//! and feeder, every run writer and external sort as it takes a record, every `.done` commit)
//! and return [`Error::Interrupted`], so the work in progress unwinds as after any error:
//! nothing more is committed (no `.done` marker is written after the signal), the temporaries
//! are removed by their writers' `Drop`, the crawl lock by its own, and the binary exits 128 +
//! the signal. The next run resumes as after a `kill -9`: every stage commits with its `.done`
//! marker, and a stage without one is redone from its inputs.
//!
//! Some waits cannot be cut short (a request in flight to a slow server, an fsync on a slow
//! disk), so the stop is also bounded: a watchdog thread, woken by the handler through a pipe
//! (the handler itself only stores to an atomic and writes one byte, both async-signal-safe),
//! waits [`GRACE`], then runs what is registered to run on a stop ([`on_stop`]: every
//! atomic-publish temporary, sort and index scratch directory removed, the crawl locks this
//! process holds released) and ends the process with `_exit(128 + signal)`. What is left then
//! is what a `kill -9` leaves, without its temporaries and its lock. A second signal while
//! stopping changes nothing: the stop is bounded already.
//!
//! A library caller that never calls [`install`] sees none of this: the flag is never set, and
//! [`on_stop`] registers nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::{signal_name, Error, Result};

/// How long a stop may take before the watchdog cuts it short: well within the 2 s promised,
/// with room for a loaded machine to schedule the exit.
pub const GRACE: Duration = Duration::from_millis(1000);

/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The pipe's write end the handler wakes the watchdog through (-1: not installed).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// [`install`] ran: [`on_stop`] registers.
static INSTALLED: AtomicBool = AtomicBool::new(false);

type Action = Box<dyn FnOnce() + Send>;

/// What runs if the watchdog has to cut a stop short, by registration number.
static ACTIONS: Mutex<Option<HashMap<u64, Action>>> = Mutex::new(None);
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The signal that asked this process to stop, if one did.
#[inline]
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// [`Error::Interrupted`] once a stop was asked for; `Ok` otherwise (one atomic load: cheap
/// enough for every record a writer takes).
#[inline]
pub fn check() -> Result<()> {
    match requested() {
        None => Ok(()),
        Some(signal) => Err(Error::Interrupted { signal }),
    }
}

/// Makes SIGINT and SIGTERM ask this process to stop (see the module docs) and starts the
/// watchdog. Idempotent.
pub fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        INSTALLED.store(false, Ordering::SeqCst);
        return Err(std::io::Error::last_os_error());
    }
    let [read_end, write_end] = fds;
    WAKE.store(write_end, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("dragnet-signal".into())
        .spawn(move || watchdog(read_end))?;
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only touches atomics and write(2), both
        // async-signal-safe; SA_RESTART so the other threads' system calls go on, not EINTR.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return; // stopping already: the watchdog bounds it
    }
    let fd = WAKE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: write(2) and errno are async-signal-safe; errno is restored for the thread
        // the signal interrupted.
        unsafe {
            let errno = libc::__errno_location();
            let saved = *errno;
            libc::write(fd, (&byte as *const u8).cast(), 1);
            *errno = saved;
        }
    }
}

/// The watchdog: waits for the handler's byte, gives the stop [`GRACE`], then cuts it short.
fn watchdog(read_end: libc::c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: reads one byte into a local.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return; // the pipe is gone: nothing will wake us
    }
    let signal = requested().unwrap_or(libc::SIGTERM);
    eprintln!(
        "dragnet: {} received: stopping (nothing more is committed; the next run resumes here)",
        signal_name(signal)
    );
    std::thread::sleep(GRACE);
    // Still running: what runs now must leave no temporary and no lock.
    let actions = ACTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    eprintln!(
        "dragnet: still stopping after {:.1}s: {} temporaries and locks cleared, exiting now",
        GRACE.as_secs_f64(),
        actions.len()
    );
    // Temporaries first, locks last: nobody may take the crawl over while its debris is here.
    let (locks, temps): (Vec<_>, Vec<_>) = actions.into_iter().partition(|(k, _)| *k & LOCK != 0);
    for (_, act) in temps.into_iter().chain(locks) {
        act();
    }
    // SAFETY: ends the process at once; nothing of this process is needed any more.
    unsafe { libc::_exit(128 + signal) }
}

/// Registration numbers of locks carry this bit (released after the temporaries).
const LOCK: u64 = 1 << 63;

/// A registration of [`on_stop`]; dropping it unregisters (the owner cleaned up, or committed).
#[derive(Debug)]
#[must_use = "dropping the registration unregisters it at once"]
pub struct OnStop(u64);

impl Drop for OnStop {
    fn drop(&mut self) {
        if self.0 == 0 {
            return;
        }
        if let Some(map) = ACTIONS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            map.remove(&self.0);
        }
    }
}

fn register(action: Action, lock: bool) -> OnStop {
    if !INSTALLED.load(Ordering::Relaxed) {
        return OnStop(0);
    }
    let id = NEXT.fetch_add(1, Ordering::Relaxed) | if lock { LOCK } else { 0 };
    ACTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(id, action);
    OnStop(id)
}

/// Runs `action` if the watchdog has to cut a stop short, unless the returned registration was
/// dropped first. Nothing is registered if [`install`] was not called.
pub fn on_stop(action: impl FnOnce() + Send + 'static) -> OnStop {
    register(Box::new(action), false)
}

/// As [`on_stop`], for releasing a lock: runs after every other action.
pub fn on_stop_release(action: impl FnOnce() + Send + 'static) -> OnStop {
    register(Box::new(action), true)
}

/// Removes `path` (a temporary file, or a scratch directory with what it holds) if the
/// watchdog has to cut a stop short.
pub fn remove_on_stop(path: &Path) -> OnStop {
    if !INSTALLED.load(Ordering::Relaxed) {
        return OnStop(0);
    }
    let path: PathBuf = path.to_path_buf();
    on_stop(move || {
        if std::fs::remove_file(&path).is_err() {
            let _ = std::fs::remove_dir_all(&path);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_asked_or_registered_without_install() {
        // The library's own tests never install the handlers: no stop is asked, nothing runs.
        assert_eq!(requested(), None);
        assert!(check().is_ok());
        let r = remove_on_stop(Path::new("/nonexistent"));
        assert_eq!(r.0, 0);
    }

    #[test]
    fn interrupted_maps_to_130_and_143() {
        let int = Error::Interrupted {
            signal: libc::SIGINT,
        };
        let term = Error::Interrupted {
            signal: libc::SIGTERM,
        };
        assert_eq!(int.exit_code(), crate::error::EXIT_SIGINT);
        assert_eq!(int.exit_code(), 130);
        assert_eq!(term.exit_code(), 143);
        assert!(!term.is_transient(), "a stop is not retried by Slurm");
        assert!(term.to_string().contains("SIGTERM"), "{term}");
    }
}
