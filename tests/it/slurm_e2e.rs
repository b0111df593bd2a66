//! Issue 23: `deploy/slurm/submit.sh` on a real single-node Slurm (Debian's slurmctld, slurmd
//! and munge, started by scripts/engines/slurm.sh as this test's own processes).
//!
//! `make slurm-e2e` installs the packages when they are missing and runs this test; when they
//! cannot be installed it prints "skipped: <why>" and runs nothing. Run alone (`cargo test`),
//! the test is listed as ignored.

use crate::common::{engine, root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A private cluster, stopped (every daemon it started, by pid) however the test ends.
struct Cluster {
    script: PathBuf,
    dir: PathBuf,
    conf: String,
}

impl Cluster {
    fn start(script: &Path, dir: &Path) -> Cluster {
        // two CPUs claimed per core: the four 1-CPU shards run side by side on 2 cores
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
        let o = Command::new(script)
            .arg("start")
            .arg(dir)
            .env("SLURM_NODE_CPUS", cpus.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let conf = stdout
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .map(str::to_string);
        let cluster = Cluster {
            script: script.to_path_buf(),
            dir: dir.to_path_buf(),
            conf: conf.clone().unwrap_or_default(),
        };
        assert!(
            o.status.success() && conf.is_some(),
            "slurm.sh start failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        cluster
    }

    /// A command of this cluster (sbatch, squeue, scancel, submit.sh...).
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Wait until a job has left the queue (all its array tasks ended).
    fn wait_gone(&self, job: &str, limit: Duration) {
        let t0 = Instant::now();
        loop {
            let o = self.cmd("squeue").args(["-h", "-j", job]).output().unwrap();
            if o.status.success() && o.stdout.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let queue = self.cmd("squeue").output().unwrap();
            assert!(
                t0.elapsed() < limit,
                "job {job} still queued after {limit:?}:\n{}",
                String::from_utf8_lossy(&queue.stdout)
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

/// `submit.sh` with the shard build's variables plus `extra`, from the test's folder (the
/// jobs' logs go there); its output, whatever the exit.
fn submit(c: &Cluster, vars: &[(&str, String)], extra: &[(&str, &str)]) -> Output {
    let mut cmd = c.cmd("bash");
    cmd.current_dir(c.dir.parent().expect("the cluster is in the test's folder"));
    cmd.arg(root().join("deploy/slurm/submit.sh"));
    cmd.envs(vars.iter().map(|(k, v)| (*k, v.as_str())));
    cmd.envs(extra.iter().copied());
    cmd.output().unwrap()
}

/// The job ids `submit.sh` printed: "shards: job A (array ...), merge: job M (after ...)".
fn job_ids(o: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "submit.sh failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let id = |after: &str| {
        stdout
            .split(after)
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| panic!("no job id after {after:?} in {stdout}"))
            .to_string()
    };
    (id("shards: job "), id("merge: job "))
}

fn sha(p: &Path) -> String {
    gtb_core::digest::sha256_file(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A wrapper of the gtb binary for the shard jobs: the first run of shard 3 hangs after its
/// first generated chunk (`GTB_HANG_AT`), like a hung node, and leaves a mark; once the mark
/// exists, gtb runs normally.
fn hanging_gtb(dir: &Path, mark: &Path) -> PathBuf {
    let wrapper = dir.join("gtb-hang-shard-3");
    let script = format!(
        "#!/usr/bin/env bash\n\
         if [[ \" $* \" == *\" --shard 3/\"* && ! -e {mark:?} ]]; then\n\
         export GTB_HANG_AT=generate:chunk-written GTB_HANG_MARK={mark:?}\n\
         fi\n\
         exec {gtb:?} \"$@\"\n",
        gtb = env!("CARGO_BIN_EXE_gtb"),
    );
    std::fs::write(&wrapper, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

#[test]
#[ignore = "needs Slurm (slurmctld, slurmd, munge): run through `make slurm-e2e`"]
fn issue23_slurm_array_job_and_merge_give_the_unsharded_bytes_and_a_cancelled_shard_resumes() {
    let script = engine("GTB_SLURM_ENGINE", "make slurm-e2e");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t0 = Instant::now();
    let cluster = Cluster::start(&script, &d.join("cluster"));
    eprintln!("cluster up in {:.1} s", t0.elapsed().as_secs_f64());

    let gtb = env!("CARGO_BIN_EXE_gtb");
    let args = ["build", "--n", "2000", "--seed", "5", "--out"];
    // in the folder the jobs run in: the same inputs (the embedded data)
    let reference = Command::new(gtb)
        .args(args)
        .arg(d.join("ref"))
        .current_dir(d)
        .output()
        .unwrap();
    assert!(reference.status.success());
    let want = sha(&d.join("ref/test.jsonl"));
    let vars = |run: &str, gtb: &Path| -> Vec<(&'static str, String)> {
        vec![
            ("SHARD_COUNT", "4".into()),
            ("GTB", gtb.display().to_string()),
            ("GTB_ARGS", "--n 2000 --seed 5".into()),
            (
                "SHARDS_DIR",
                d.join(run).join("shards").display().to_string(),
            ),
            ("OUT", d.join(run).join("out").display().to_string()),
        ]
    };
    let limit = Duration::from_secs(300);

    // 1. the array job, then the merge after it: the unsharded build's bytes
    let t = Instant::now();
    let (_, merge) = job_ids(&submit(&cluster, &vars("a", Path::new(gtb)), &[]));
    cluster.wait_gone(&merge, limit);
    assert_eq!(sha(&d.join("a/out/test.jsonl")), want, "sharded build");
    eprintln!("4 shards + merge in {:.1} s", t.elapsed().as_secs_f64());

    // 2. shard 3 hangs mid-build and is cancelled; the merge cancels itself (its dependency
    //    can never be met); only index 3 is submitted again, with a merge after it
    let t = Instant::now();
    let mark = d.join("shard-3-hung");
    let b = vars("b", &hanging_gtb(d, &mark));
    let (shards, merge) = job_ids(&submit(&cluster, &b, &[]));
    let started = Instant::now();
    while !mark.exists() {
        assert!(started.elapsed() < limit, "shard 3 never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    let cancel = cluster
        .cmd("scancel")
        .arg(format!("{shards}_3"))
        .status()
        .unwrap();
    assert!(cancel.success());
    cluster.wait_gone(&shards, limit);
    cluster.wait_gone(&merge, limit);
    assert!(
        !d.join("b/out/test.jsonl").exists(),
        "a merge ran without shard 3"
    );
    let resume = [("SHARD_ARRAY", "3"), ("GTB_MERGE_AFTER", shards.as_str())];
    let (_, merge) = job_ids(&submit(&cluster, &b, &resume));
    cluster.wait_gone(&merge, limit);
    assert_eq!(sha(&d.join("b/out/test.jsonl")), want, "after the resume");
    eprintln!("cancel + resume in {:.1} s", t.elapsed().as_secs_f64());

    // 3. a request no node can satisfy is refused before anything is submitted
    let too_big = format!("--cpus-per-task={}", 64 * 1024);
    let o = submit(
        &cluster,
        &vars("c", Path::new(gtb)),
        &[("GTB_SHARD_SBATCH_ARGS", too_big.as_str())],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "an impossible request was submitted");
    assert!(
        stderr.contains("no node can run the shard job") && stderr.contains(&too_big),
        "{stderr}"
    );
    assert!(!d.join("c/shards").exists());
    drop(cluster);
    eprintln!("slurm test in {:.1} s", t0.elapsed().as_secs_f64());
}
