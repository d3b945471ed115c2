//! The Slurm executor on a real cluster (`.ci/slurm-up` starts a one-node cluster; without one
//! these tests say so and pass): job arrays, a task killed mid-stage, an interrupted
//! submission's leftovers, a node that goes away.

use super::*;

/// Whether a Slurm cluster answers here whose nodes are all this machine (the test's crawl lives
/// in a local temporary directory, and its web on loopback: every node's address is loopback or
/// this host) and can take jobs.
fn cluster_up() -> bool {
    let Ok(out) = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%o %T"])
        .output()
    else {
        return false;
    };
    let me = dragnet::util::hostname();
    let me = me.split('.').next().unwrap_or("");
    let text = String::from_utf8_lossy(&out.stdout);
    let nodes: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    let local = |addr: &str| {
        addr.starts_with("127.")
            || addr == "::1"
            || addr == "localhost"
            || addr.split('.').next() == Some(me)
    };
    out.status.success()
        && !nodes.is_empty()
        && nodes.iter().all(|(addr, _)| local(addr))
        && nodes.iter().any(|(_, state)| {
            ["idle", "mixed", "allocated"].contains(&state.trim().trim_end_matches('*'))
        })
}

/// Whether the cluster runs a job at all: a trivial job submitted must leave the queue within a
/// minute (a node that registers but cannot start jobs is the cluster's problem, not dragnet's).
fn cluster_runs_jobs() -> bool {
    let Ok(out) = Command::new("sbatch")
        .args([
            "--parsable",
            "--job-name=dragnet-probe",
            "--output=/dev/null",
            "--wrap=true",
        ])
        .output()
    else {
        return false;
    };
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_owned();
    if !out.status.success() || id.is_empty() {
        return false;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let q = Command::new("squeue").args(["-h", "-j", &id]).output();
        if q.is_ok_and(|q| q.status.success() && q.stdout.trim_ascii().is_empty()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = Command::new("scancel").arg(&id).status();
    false
}

/// Job names of this crawl still queued or running.
fn queued(name: &str) -> Vec<String> {
    let out = Command::new("squeue")
        .args(["-h", "-o", "%i %j %T"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&format!("dragnet-{name}-")))
        .map(str::to_owned)
        .collect()
}

/// The real-cluster tests share one cluster, and one of them stops a node: one at a time.
static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cluster, to this test alone; the test fails (never passes) if there is none.
fn real_cluster() -> std::sync::MutexGuard<'static, ()> {
    let guard = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    common::require(
        "a Slurm cluster",
        cluster_up(),
        "no cluster of this machine answers `sinfo`; `.ci/slurm-up` starts one",
    );
    common::require(
        "a Slurm cluster",
        cluster_runs_jobs(),
        "the cluster answers but did not run a trivial job in 60 s (see /var/log/slurm)",
    );
    guard
}

/// The web of the real-cluster tests and its configuration (named `name`, for the job names).
fn real_web(
    name: &str,
) -> (
    std::sync::Arc<websim::model::Web>,
    websim::server::Server,
    dragnet::config::Config,
) {
    let (web, server) = common::small_web(29, 6, 8);
    let mut cfg = common::websim_config(M, 2);
    cfg.crawl.name = format!("{name}{}", std::process::id());
    (web, server, cfg)
}

/// Submits the crawl to the cluster until its fetch lists are empty and waits (bounded) until
/// none of its jobs is queued; `meanwhile` is called every 50 ms while jobs are.
fn crawl_through_slurm(c: &common::Crawl, mut meanwhile: impl FnMut()) -> String {
    let name = c.cfg.crawl.name.clone();
    let submitted = common::ok(common::dragnet_on(
        &["slurm", "submit", "--until-empty", "--max-cycles", "20"],
        c.dir.root(),
    ));
    // The chain ends by itself: poll until none of its jobs is queued (bounded).
    let deadline = Instant::now() + Duration::from_secs(480);
    let mut idle = 0;
    while idle < 2 {
        if Instant::now() > deadline {
            for j in queued(&name) {
                let id = j.split_whitespace().next().unwrap().to_owned();
                let _ = Command::new("scancel").arg(id).status();
            }
            panic!("the chain did not end in time\n{}", logs(c.dir.root()));
        }
        meanwhile();
        std::thread::sleep(Duration::from_millis(50));
        idle = if queued(&name).is_empty() {
            idle + 1
        } else {
            0
        };
    }
    String::from_utf8_lossy(&submitted.stderr).into_owned()
}

/// What the local executor decides for the same web and configuration.
fn local_outcome(web: &websim::model::Web, cfg: &dragnet::config::Config) -> common::Outcome {
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg.clone());
    dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(20)).unwrap();
    common::outcome(&c.dir, M)
}

/// The crawl ended (its last fetch lists are empty), fetched exactly the truth, and decided what
/// the local executor decides: the same seen sets, URL db (timestamps aside) and fetched set.
fn same_as_local(c: &common::Crawl, web: &websim::model::Web, local: &common::Outcome) {
    let last = next_cycle(&c.dir, M);
    assert_eq!(
        dragnet::exec::fetch_list_size(&c.dir, last, M).unwrap(),
        0,
        "the chain stopped before the crawl was done\n{}",
        logs(c.dir.root())
    );
    let got = common::outcome(&c.dir, M);
    assert_eq!(
        got.fetched,
        common::truth_fetched(web),
        "{}",
        logs(c.dir.root())
    );
    assert!(
        got == *local,
        "the Slurm crawl decided otherwise than the local one\n{}",
        logs(c.dir.root())
    );
}

/// A `dragnet slurm task --worker` process of the crawl (the child that runs a stage).
struct Worker {
    pid: u32,
    /// The node it runs on (`SLURMD_NODENAME`).
    node: String,
    /// The array task whose `SLURM_JOB_ID` is the array's own id (`SLURM_ARRAY_JOB_ID`).
    carries_array_id: bool,
}

/// The crawl's stage processes now running.
fn workers(root: &Path) -> Vec<Worker> {
    let root = root.canonicalize().unwrap();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in procs.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        if !args.contains(&&b"--worker"[..]) || !args.contains(&root.as_os_str().as_encoded_bytes())
        {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        let var = |name: &str| {
            env.split(|&b| b == 0)
                .find_map(|v| v.strip_prefix(format!("{name}=").as_bytes()))
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        out.push(Worker {
            pid,
            node: var("SLURMD_NODENAME").unwrap_or_default(),
            carries_array_id: var("SLURM_JOB_ID").is_some()
                && var("SLURM_JOB_ID") == var("SLURM_ARRAY_JOB_ID"),
        });
    }
    out
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn a_crawl_through_real_slurm_job_arrays() {
    let _cluster = real_cluster();
    let (web, server, cfg) = real_web("arrays");
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let mut nodes = std::collections::BTreeSet::new();
    crawl_through_slurm(&c, || {
        nodes.extend(workers(c.dir.root()).into_iter().map(|w| w.node))
    });
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);
    same_as_local(&c, &web, &local);
    eprintln!("tasks seen running on nodes {nodes:?}");
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn a_task_killed_mid_stage_is_requeued_and_the_crawl_is_unchanged() {
    let _cluster = real_cluster();
    let (web, server, mut cfg) = real_web("killed");
    // A delay between a host's requests makes each fetch stage last seconds (8 pages a host):
    // without it every stage of this small web may end within one 50 ms poll, and no stage
    // process is there to kill (seen in CI: one process tried, gone before the kill).
    cfg.fetch.default_delay_secs = 0.25;
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // SIGKILL to a stage process (as the kernel's OOM killer would send it): the one of the
    // array task whose job id is the array's own, the case where requeueing by `SLURM_JOB_ID`
    // would requeue the whole array. A stage may end between being seen and the kill: then the
    // next such process seen is killed, until one death shows in the logs.
    const KILLED: &str = "killed by signal 9; requeued job";
    let mut tried = Vec::new();
    crawl_through_slurm(&c, || {
        if whole_logs(c.dir.root()).contains(KILLED) {
            return;
        }
        if let Some(w) = workers(c.dir.root())
            .into_iter()
            .find(|w| w.carries_array_id && !tried.contains(&w.pid))
        {
            let _ = Command::new("kill")
                .args(["-9", &w.pid.to_string()])
                .status();
            tried.push(w.pid);
        }
    });
    server.stop();
    let logs_now = whole_logs(c.dir.root());
    let kills = logs_now.matches(KILLED).count();
    assert!(
        kills >= 1,
        "no stage process was killed and requeued (tried {tried:?})\n{}",
        logs(c.dir.root())
    );
    // Those tasks alone: no other task of their arrays was stopped and run again.
    let requeued = logs_now.matches("DUE TO JOB REQUEUE").count();
    assert!(
        requeued <= kills,
        "{requeued} tasks stopped for {kills} killed\n{}",
        logs(c.dir.root())
    );
    same_as_local(&c, &web, &local);
}

#[test]
#[ignore = "needs a Slurm cluster that runs jobs (.ci/slurm-up starts one); .ci/run runs it there"]
fn the_held_leftovers_of_an_interrupted_submission_are_cancelled_and_the_cycle_submitted_again() {
    let _cluster = real_cluster();
    let (web, server, cfg) = real_web("interrupted");
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // A submission killed half-way (a `finish` job on a node that went away) leaves jobs of the
    // crawl held in the queue, recorded nowhere.
    let out = common::ok(
        Command::new("sbatch")
            .args(["--parsable", "--hold", "--output=/dev/null", "--wrap=true"])
            .arg(format!("--job-name=dragnet-{}-c0-fetch", c.cfg.crawl.name))
            .output()
            .unwrap(),
    );
    let stray = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let said = crawl_through_slurm(&c, || {});
    server.stop();
    assert!(
        said.contains("cancelled 1 held job(s)") && said.contains(&stray),
        "{said}"
    );
    let q = Command::new("squeue")
        .args(["-h", "-j", &stray])
        .output()
        .unwrap();
    assert!(
        q.stdout.trim_ascii().is_empty(),
        "the stray job is still queued"
    );
    let last = next_cycle(&c.dir, M);
    assert_eq!(dragnet::exec::fetch_list_size(&c.dir, last, M).unwrap(), 0);
    assert_eq!(
        common::fetched_urls(&c.dir, M, last),
        common::truth_fetched(&web),
        "{}",
        logs(c.dir.root())
    );
}

/// Brings back a node stopped by the test, however the test ends.
struct NodeBack(Option<String>);

impl Drop for NodeBack {
    fn drop(&mut self) {
        if let Some(node) = self.0.take() {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-node");
            let out = Command::new(script).args(["start", &node]).output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) {
                eprintln!("could not bring {node} back: {out:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs the multi-node Slurm cluster of .ci/slurm-up; .ci/run runs it there"]
fn a_node_that_goes_away_mid_cycle_has_its_tasks_run_on_the_others() {
    let _cluster = real_cluster();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-node");
    let nodes = String::from_utf8(
        Command::new("sinfo")
            .args(["-h", "-N", "-o", "%N"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    common::require(
        "the cluster of .ci/slurm-up",
        nodes.lines().filter(|n| n.starts_with("node")).count() >= 2
            && Path::new("/run/slurmd-node1.pid").exists(),
        "this test stops one node of the cluster .ci/slurm-up starts (node1..nodeN, pid files \
         /run/slurmd-nodeK.pid); start it with `.ci/slurm-up`",
    );
    let (web, server, mut cfg) = real_web("nodeloss");
    // A delay between a host's requests makes each fetch stage last seconds (8 pages a host),
    // not the moment the stop below needs on a loaded machine to find the stage still running.
    cfg.fetch.default_delay_secs = 0.25;
    let local = local_outcome(&web, &cfg);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    // The first node seen running one of the crawl's stages goes away (slurmd and the job's
    // processes killed); it comes back when the chain has ended.
    // (If the stage ended between being seen and the stop, no job process was killed: the node
    // is brought back and the next one seen goes away.)
    let mut back = NodeBack(None);
    let mut lost = false;
    let mut missed = Vec::new();
    crawl_through_slurm(&c, || {
        if lost {
            return;
        }
        if let Some(node) = workers(c.dir.root())
            .into_iter()
            .map(|w| w.node)
            .find(|n| !n.is_empty())
        {
            let out = common::ok(
                Command::new(&script)
                    .args(["stop", &node])
                    .output()
                    .unwrap(),
            );
            back.0 = Some(node.clone());
            lost = !String::from_utf8_lossy(&out.stdout).contains(" and 0 job processes");
            if !lost {
                missed.push(node);
                drop(std::mem::replace(&mut back, NodeBack(None)));
            }
        }
    });
    server.stop();
    let node = back.0.clone().unwrap_or_else(|| {
        panic!(
            "no node was stopped while it ran a stage: the chain ended first ({} stops came after \
             the stage had ended: {missed:?})",
            missed.len()
        )
    });
    assert!(
        whole_logs(c.dir.root()).contains(", run 2"),
        "no task ran a second time after {node} went away\n{}",
        logs(c.dir.root())
    );
    same_as_local(&c, &web, &local);
    drop(back);
}
