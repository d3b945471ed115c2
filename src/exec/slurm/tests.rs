use super::*;

#[test]
fn ranges_round_trip() {
    for ps in [
        vec![],
        vec![0],
        vec![0, 1, 2, 3],
        vec![0, 2, 3, 4, 9],
        vec![5, 7, 9, 10, 11, 4095],
    ] {
        let s = ranges(&ps);
        if ps.is_empty() {
            assert_eq!(s, "");
            continue;
        }
        assert_eq!(parse_ranges(&s).unwrap(), ps, "{s}");
    }
    assert_eq!(ranges(&[0, 2, 3, 4, 9]), "0,2-4,9");
    assert!(parse_ranges("3,1").is_err());
    assert!(parse_ranges("4-2").is_err());
    assert!(parse_ranges("1,x").is_err());
}

#[test]
fn shell_words_quote_what_sh_would_split() {
    let w = |v: &[&str]| shell_words(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        w(&["/bin/dragnet", "--cycle", "3"]),
        "/bin/dragnet --cycle 3"
    );
    assert_eq!(w(&["/a b/c", "it's", ""]), "'/a b/c' 'it'\\''s' ''");
    assert_eq!(w(&["$HOME"]), "'$HOME'");
}

/// A `[slurm]` section whose `scontrol` (beside `sbatch`) logs its arguments, and the log.
fn fake_scontrol(dir: &Path) -> (SlurmSection, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("scontrol.log");
    let script = dir.join("scontrol");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = SlurmSection {
        sbatch: dir.join("sbatch").display().to_string(),
        max_retries: 2,
        ..SlurmSection::default()
    };
    (s, log)
}

#[test]
fn a_transient_failure_or_a_killed_worker_is_requeued_until_the_retries_run_out() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, log) = fake_scontrol(tmp.path());
    let sh = |script: &str| {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    };
    let env = |restarts| TaskEnv {
        job_id: Some("4242".into()),
        restarts,
    };
    let calls = || std::fs::read_to_string(&log).unwrap_or_default();
    // Done, or a permanent failure (bad input: exit 3, usage: 2): no requeue.
    assert_eq!(supervise(&s, sh("exit 0"), &env(0)).unwrap(), 0);
    assert_eq!(supervise(&s, sh("exit 3"), &env(0)).unwrap(), 3);
    assert_eq!(supervise(&s, sh("exit 2"), &env(0)).unwrap(), 2);
    // Stopped by Slurm (scancel, time limit): not retried either.
    assert_eq!(supervise(&s, sh("kill -TERM $$"), &env(0)).unwrap(), 143);
    // A dragnet worker catches the signal, stops cleanly and exits 143 or 130
    // (`crate::interrupt`): not retried either.
    assert_eq!(supervise(&s, sh("exit 143"), &env(0)).unwrap(), 143);
    assert_eq!(supervise(&s, sh("exit 130"), &env(0)).unwrap(), 130);
    assert_eq!(calls(), "");
    // Transient (exit 75) and killed (SIGKILL): requeued while runs remain.
    assert_eq!(supervise(&s, sh("exit 75"), &env(0)).unwrap(), EXIT_RETRY);
    assert_eq!(
        supervise(&s, sh("kill -KILL $$"), &env(1)).unwrap(),
        EXIT_RETRY
    );
    assert_eq!(calls(), "requeue 4242\nrequeue 4242\n");
    // max_retries = 2: the third run's failure is final.
    assert_eq!(supervise(&s, sh("exit 75"), &env(2)).unwrap(), EXIT_RETRY);
    assert_eq!(calls().lines().count(), 2);
    // Not a Slurm job: nothing to requeue.
    let none = TaskEnv::default();
    assert_eq!(supervise(&s, sh("exit 75"), &none).unwrap(), EXIT_RETRY);
    assert_eq!(calls().lines().count(), 2);
}

#[test]
fn an_array_task_is_requeued_by_its_array_and_index_not_by_its_job_id() {
    let env = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TaskEnv::from_vars(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    };
    // The task that carries the array's own id: requeueing "3487" would requeue them all.
    let t = env(&[
        ("SLURM_JOB_ID", "3487"),
        ("SLURM_ARRAY_JOB_ID", "3487"),
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_RESTART_COUNT", "1"),
    ]);
    assert_eq!(t.job_id.as_deref(), Some("3487_2"));
    assert_eq!(t.restarts, 1);
    let t = env(&[("SLURM_JOB_ID", "12")]);
    assert_eq!(t.job_id.as_deref(), Some("12"));
    assert_eq!(t.restarts, 0);
    assert_eq!(env(&[]).job_id, None);
}

#[test]
fn the_chain_counts_down_and_stops_when_empty() {
    assert_eq!(Then::Cycles(2).next(0), Some(Then::Cycles(1)));
    assert_eq!(Then::Cycles(0).next(5), None);
    assert_eq!(Then::UntilEmpty(3).next(5), Some(Then::UntilEmpty(2)));
    assert_eq!(Then::UntilEmpty(3).next(0), None);
    assert_eq!(Then::UntilEmpty(0).next(5), None);
}
