//! A task's failures: the supervisor that runs the stage in a child process and asks Slurm to
//! run the task again after a transient failure or a killed child.

use super::*;
use crate::error::{EXIT_SIGINT, EXIT_SIGTERM};

/// `dragnet slurm task` as Slurm starts it: runs the task in a child process (`worker`, the same
/// command with `--worker`) and decides what the child's end means. Success ends the job. A
/// transient failure (the child exits with [`EXIT_RETRY`], see [`Error::is_transient`]) or a
/// child killed by a signal other than Slurm's own stop signals (the kernel's OOM killer, an
/// operator's `kill -9`) asks Slurm to run the task again ([`requeue`]). Any other exit code is
/// a permanent failure: the job fails with it, and the arrays that depend on it are cancelled.
/// (A node that goes away is Slurm's to notice: the jobs are submitted with `--requeue`.)
///
/// SIGINT or SIGTERM to the task (Slurm's `scancel` or time limit signals every process of the
/// job; an operator may signal the task alone) is passed on to the worker, which stops within
/// 2 s, without committing anything more, and exits 130 or 143 ([`crate::interrupt`]): not
/// requeued, like a worker killed by those signals.
pub fn supervise(s: &SlurmSection, mut worker: Command, env: &TaskEnv) -> Result<i32> {
    use std::os::unix::process::ExitStatusExt;
    let program = worker.get_program().to_string_lossy().into_owned();
    let failed = |e: std::io::Error| Error::External {
        program: program.clone(),
        message: format!("cannot start the task's worker `{program}` ({e})"),
    };
    let mut child = worker.spawn().map_err(failed)?;
    let mut passed_on = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(failed)? {
            break status;
        }
        if let (Some(sig), false) = (crate::interrupt::requested(), passed_on) {
            passed_on = true;
            if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                // SAFETY: kill(2) on our own child, which has not been reaped (try_wait said
                // it runs), so its pid cannot have been reused.
                unsafe {
                    libc::kill(pid, sig);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    if status.success() {
        return Ok(0);
    }
    let why = match (status.code(), status.signal()) {
        (Some(EXIT_RETRY), _) => "the task failed for a transient reason".to_owned(),
        // The worker stopped on SIGINT or SIGTERM (exit 130, 143): stopped, not failed.
        (Some(code @ (EXIT_SIGINT | EXIT_SIGTERM)), _) => return Ok(code),
        (Some(code), _) => return Ok(code),
        (None, Some(sig)) if [libc::SIGTERM, libc::SIGINT, libc::SIGHUP].contains(&sig) => {
            // Slurm stops a cancelled job or one past its time limit with SIGTERM: not a failure
            // to retry.
            return Ok(128 + sig);
        }
        (None, Some(sig)) => format!("the task's process was killed by signal {sig}"),
        (None, None) => return Ok(EXIT_IO),
    };
    Ok(requeue(s, &why, env))
}

/// What Slurm tells a task about itself.
#[derive(Debug, Clone, Default)]
pub struct TaskEnv {
    /// The job to requeue: `ARRAY_TASK` for an array task, else `SLURM_JOB_ID`.
    pub job_id: Option<String>,
    /// `SLURM_RESTART_COUNT`: how many times the job was requeued (0 if unset).
    pub restarts: u32,
}

impl TaskEnv {
    /// This process's.
    pub fn from_env() -> TaskEnv {
        TaskEnv::from_vars(|name| std::env::var(name).ok())
    }

    /// From Slurm's variables as `var` gives them. An array task is named `ARRAY_TASK`
    /// (`SLURM_ARRAY_JOB_ID`_`SLURM_ARRAY_TASK_ID`): one task of the array has the array's own
    /// id as its `SLURM_JOB_ID`, and `scontrol requeue` of that id would requeue every task.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> TaskEnv {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let job_id = match (set("SLURM_ARRAY_JOB_ID"), set("SLURM_ARRAY_TASK_ID")) {
            (Some(array), Some(task)) => Some(format!("{}_{}", array.trim(), task.trim())),
            _ => set("SLURM_JOB_ID"),
        };
        TaskEnv {
            job_id,
            restarts: set("SLURM_RESTART_COUNT")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
        }
    }
}

/// Asks Slurm to run this job again (`scontrol requeue JOB`, an array task by array and index: it
/// goes back to the queue,
/// keeps its dependants waiting, and starts again, on any node, after Slurm's requeue delay), if
/// it has run fewer than `[slurm] max_retries` + 1 times (`SLURM_RESTART_COUNT`). Returns the exit
/// code to end with, [`EXIT_RETRY`] either way: when the job was not requeued it fails, and the
/// arrays that depend on it are cancelled; `dragnet slurm submit` runs it again later.
pub fn requeue(s: &SlurmSection, why: &str, env: &TaskEnv) -> i32 {
    let restarts = env.restarts;
    if restarts >= s.max_retries {
        eprintln!(
            "slurm task: {why}; not requeued: the job has run {} time(s) ([slurm] max_retries = \
             {}); `dragnet slurm submit` runs what is missing once the cause is fixed",
            restarts + 1,
            s.max_retries
        );
        return EXIT_RETRY;
    }
    let Some(job) = &env.job_id else {
        eprintln!("slurm task: {why}; not requeued: SLURM_JOB_ID is not set (not a Slurm job)");
        return EXIT_RETRY;
    };
    let scontrol = beside_sbatch(s, "scontrol");
    match Command::new(&scontrol).args(["requeue", job]).output() {
        Ok(out) if out.status.success() => eprintln!(
            "slurm task: {why}; requeued job {job}: Slurm runs it again (run {} of at most {})",
            restarts + 2,
            s.max_retries + 1
        ),
        Ok(out) => eprintln!(
            "slurm task: {why}; `{} requeue {job}` failed ({}): {}; the job fails",
            scontrol.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => eprintln!(
            "slurm task: {why}; cannot run `{}` ({e}); the job fails",
            scontrol.display()
        ),
    }
    EXIT_RETRY
}
