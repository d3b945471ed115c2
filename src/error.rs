//! The one error type of the library.
//!
//! Every fallible function in `dragnet` returns [`Result<T>`]. Variants carry the file (and, for
//! corruption, the byte offset) they are about, and their messages say what to do, because the
//! person reading them is a crawl operator at 3 a.m., not the author. Context is added at the edge
//! (the binary prints the whole `source()` chain), as ripgrep and tantivy do.
//!
//! [`Error::exit_code`] maps each variant onto the exit codes cron jobs act on, so a caller (the
//! cron wrapper, a scheduler) decides by the code alone, never by the wording:
//!
//! | code | meaning | what to do |
//! |---|---|---|
//! | 0 | done | |
//! | 1 | finished, with per-item failures recorded (bad seed lines, deferred URLs) | look at them |
//! | 2 | usage or configuration error, or a stage asked for before its input exists | fix the command or crawl.toml |
//! | 3 | I/O failure, corrupt data, an external program (sbatch) failed, or an internal error (a bug) | fix and re-run; committed data is intact |
//! | 4 | a cycle finished with failed partitions (the others' work is kept) | re-run: only what is missing runs |
//! | 5 | busy: another run holds the crawl's lock, or its Slurm jobs are queued | nothing was done; try later |
//! | 130, 143 | stopped by SIGINT (130) or SIGTERM (143), within 2 s: nothing more committed, its temporaries removed, its lock released ([`Error::Interrupted`], `crate::interrupt`) | run it again: it resumes where the stop left off, as after a `kill -9` |
//! | 75 | a Slurm task failed for a transient reason ([`Error::is_transient`]) | Slurm re-runs it (requeued), up to `[slurm] max_retries` times |
//!
//! (6, a stale lock, is no longer used: a dead run's lock is taken over by the next run, see
//! `crawl::lock`.) 1 and 4 are decided by the caller from what it finished; the rest follow from the variant.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// `Result` with [`Error`] as the error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Exit code: everything done.
pub const EXIT_OK: i32 = 0;
/// Exit code: finished, but some items failed and were recorded (bad seed lines, failed URLs).
pub const EXIT_PARTIAL: i32 = 1;
/// Exit code: usage or configuration error; nothing was changed.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: an I/O failure or corrupt data; committed data is untouched.
pub const EXIT_IO: i32 = 3;
/// Exit code: a cycle finished, but some partitions failed (their `.failed` markers say why);
/// the other partitions' work is kept, and a re-run does only what is missing.
pub const EXIT_CYCLE_INCOMPLETE: i32 = 4;
/// Exit code: busy. Another run holds the crawl's lock (alive, or on a host that cannot be
/// checked), or the crawl's Slurm jobs are still queued. Nothing was done.
pub const EXIT_BUSY: i32 = 5;

/// Exit code of a command stopped by SIGINT (Ctrl-C): 128 + 2, as a shell reports it.
pub const EXIT_SIGINT: i32 = 128 + libc::SIGINT;
/// Exit code of a command stopped by SIGTERM: 128 + 15, as a shell reports it.
pub const EXIT_SIGTERM: i32 = 128 + libc::SIGTERM;

/// Exit code of a Slurm task (`dragnet slurm task`) that failed for a transient reason (an I/O
/// error, a busy crawl, a killed process): the task asks Slurm to run it again. `EX_TEMPFAIL`
/// of sysexits.h.
pub const EXIT_RETRY: i32 = 75;

/// Who holds a crawl's lock, as an error tells it (see `crawl::lock`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// The command that took the lock (`cycle`, `init`, ...).
    pub command: String,
    /// When, RFC 3339.
    pub since: String,
}

/// A 16-byte record key shown in hex, so `OutOfOrder` messages are readable.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyBytes(pub Vec<u8>);

impl fmt::Display for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Everything that can go wrong in `dragnet`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error on a named file or directory.
    #[error("{op} {}: {source}{}", path.display(), io_hint(source))]
    Io {
        /// What was being done ("open", "write", "rename", ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A file's bytes do not match its format or checksums.
    #[error(
        "corrupt file {} at byte offset {offset}: {reason}; the file is damaged or was not \
         written by dragnet: restore it or re-run the stage that produced it",
        path.display()
    )]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset where the damage was detected.
        offset: u64,
        /// What check failed.
        reason: String,
    },

    /// A file was written by a format version this build cannot read.
    #[error(
        "{}: format version {found} is not supported (this build reads versions \
         {oldest}..={newest}); use a dragnet release that supports it",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Version found in the file.
        found: u32,
        /// Oldest version this build reads.
        oldest: u32,
        /// Newest version this build reads and writes.
        newest: u32,
    },

    /// A sorted writer was given a key smaller than the previous one.
    #[error(
        "records out of order: key {got} after {previous}; sorted writers need non-decreasing keys"
    )]
    OutOfOrder {
        /// The previous key written.
        previous: KeyBytes,
        /// The key that broke the order.
        got: KeyBytes,
    },

    /// A file has a valid layout but holds another kind of records than expected.
    #[error("{}: {what}", path.display())]
    Schema {
        /// The file.
        path: PathBuf,
        /// What did not match.
        what: String,
    },

    /// Invalid configuration (crawl.toml, flags).
    #[error("configuration error in {}: {message}", path.display())]
    Config {
        /// The configuration file (or `<command line>`).
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },

    /// Bad input given by the user (a seed file that cannot be read as text, a bad argument).
    #[error("{0}")]
    Usage(String),

    /// A stage was asked to run before what it reads exists (its upstream stage is not done, or
    /// there is no fetch list); the message names the command to run first. Nothing was written.
    #[error("{0}")]
    NotReady(String),

    /// The crawl is locked by another process that runs (or runs on another host, where it
    /// cannot be checked). A dead holder's lock is taken over, never reported.
    #[error("{message}")]
    Locked {
        /// The holder, if the lock file could be read.
        holder: Option<LockHolder>,
        /// What happened and what to do.
        message: String,
    },

    /// Jobs of the crawl submitted to Slurm before are still queued or running.
    #[error("{message}")]
    SlurmQueued {
        /// `ID NAME` of each job.
        jobs: Vec<String>,
        /// What happened and what to do.
        message: String,
    },

    /// A broken invariant of dragnet itself (a bug, not bad input): please report it.
    #[error("internal error: {0}; this is a bug in dragnet, please report it")]
    Internal(String),

    /// SIGINT or SIGTERM arrived: the work in progress stopped without committing anything more
    /// (`crate::interrupt`). Exit 128 + the signal (130, 143); the next run resumes.
    #[error(
        "stopped by {}: nothing more was committed; run the command again to resume where it \
         stopped",
        signal_name(*signal)
    )]
    Interrupted {
        /// The signal (`libc::SIGINT` or `libc::SIGTERM`).
        signal: i32,
    },

    /// An external program (sbatch, squeue) could not be run or failed.
    #[error("{message}")]
    External {
        /// The program.
        program: String,
        /// What happened and what to do.
        message: String,
    },
}

/// `SIGINT`, `SIGTERM`, or `signal N`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

fn io_hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            " (too many open files: raise the limit with `ulimit -n 65536` or merge fewer runs at once)"
        }
        Some(libc::ENOSPC) => " (the disk is full: free space and re-run; committed data is intact)",
        Some(libc::EACCES) | Some(libc::EPERM) => " (permission denied: check ownership of the crawl directory)",
        _ => "",
    }
}

impl Error {
    /// An I/O error on `path` while doing `op`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Corruption in `path` detected at `offset`.
    pub fn corrupt(path: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            path: path.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// A configuration error about `path`.
    pub fn config(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Config {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The message followed by each cause of the `source()` chain that it does not already say,
    /// each after `sep` and "caused by: " (an I/O error's message includes the OS error, so a
    /// chain that only repeats it adds nothing).
    pub fn with_causes(&self, sep: &str) -> String {
        let mut msg = self.to_string();
        let mut src = std::error::Error::source(self);
        while let Some(s) = src {
            let text = s.to_string();
            if !msg.contains(&text) {
                msg.push_str(sep);
                msg.push_str("caused by: ");
                msg.push_str(&text);
            }
            src = s.source();
        }
        msg
    }

    /// Whether running the same thing again may succeed without anyone changing anything: an
    /// I/O error (a full disk, a shared filesystem that went away for a moment; not a denied
    /// permission), a busy crawl, a failed external program, or a stage whose input is not
    /// visible yet (a shared filesystem's attribute cache). Corrupt or unreadable data, a bad
    /// configuration or command and bugs are permanent: re-running cannot help. The Slurm
    /// executor requeues a task that failed transiently and lets a permanent failure fail.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Io { source, .. } => source.kind() != io::ErrorKind::PermissionDenied,
            Error::Locked { .. }
            | Error::SlurmQueued { .. }
            | Error::External { .. }
            | Error::NotReady(_) => true,
            Error::Corrupt { .. }
            | Error::Version { .. }
            | Error::OutOfOrder { .. }
            | Error::Schema { .. }
            | Error::Config { .. }
            | Error::Usage(_)
            | Error::Internal(_) => false,
            // Stopped on purpose (an operator's Ctrl-C, Slurm's scancel or time limit): running
            // it again is the caller's decision, not a retry's.
            Error::Interrupted { .. } => false,
        }
    }

    /// The process exit code this error maps to (see the module docs).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config { .. } | Error::Usage(_) | Error::NotReady(_) => EXIT_USAGE,
            Error::Locked { .. } | Error::SlurmQueued { .. } => EXIT_BUSY,
            Error::Interrupted { signal } => 128 + signal,
            _ => EXIT_IO,
        }
    }
}

/// Adds the path to a bare `io::Error`.
pub(crate) trait IoContext<T> {
    /// Wraps the error as [`Error::Io`] naming `path`.
    fn ctx(self, op: &'static str, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(op, path, e))
    }
}
