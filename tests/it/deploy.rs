//! Issue 14 item 3: `deploy/` runs shards then the merge. Its scripts and manifests parse, and
//! the commands they run (the local script, the Slurm array and merge jobs through a stand-in
//! `sbatch`, the Kubernetes Indexed Job's container command with its completion indexes) give
//! the unsharded build's bytes.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

fn deploy() -> PathBuf {
    root().join("deploy")
}

fn gtb_bin() -> String {
    env!("CARGO_BIN_EXE_gtb").to_string()
}

/// The build every launcher runs here (small, offline).
const ARGS: &str = "--n 90 --seed 6";

fn sha(path: &Path) -> String {
    gtb_core::digest::sha256_file(path).unwrap()
}

fn unsharded_sha(dir: &Path) -> String {
    let out = dir.join("whole");
    let mut a: Vec<String> = vec!["build".into(), "--out".into(), out.display().to_string()];
    a.extend(ARGS.split(' ').map(String::from));
    let o = Command::new(gtb_bin()).args(&a).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    sha(&out.join("test.jsonl"))
}

/// Run `bash -c <script>` (or a script file) in the repository root with `env`.
fn run_bash(args: &[&str], env: &BTreeMap<String, String>) {
    let o = Command::new("bash")
        .args(args)
        .current_dir(root())
        .envs(env)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "bash {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn launcher_env(dir: &Path, shards: usize) -> BTreeMap<String, String> {
    [
        ("SHARD_COUNT", shards.to_string()),
        ("SHARDS_DIR", dir.join("shards").display().to_string()),
        ("OUT", dir.join("out").display().to_string()),
        ("GTB", gtb_bin()),
        ("GTB_ARGS", ARGS.to_string()),
        ("GTB_DEPLOY", deploy().display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn scripts() -> Vec<PathBuf> {
    files(&deploy())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh" || e == "sbatch"))
        .collect()
}

fn yaml(name: &str) -> Yaml {
    let path = deploy().join("k8s").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(docs.len(), 1, "{name}: one document");
    docs.remove(0)
}

/// The container's env as name -> value (plain values only).
fn container_env(job: &Yaml) -> BTreeMap<String, String> {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    c["env"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_string(),
                e["value"].as_str()?.to_string(),
            ))
        })
        .collect()
}

fn container_command(job: &Yaml) -> Vec<String> {
    job["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn issue14_03_deploy_scripts_parse_and_are_executable() {
    use std::os::unix::fs::PermissionsExt;
    let scripts = scripts();
    assert!(scripts.len() >= 6, "{scripts:?}");
    for s in scripts {
        let o = Command::new("bash").arg("-n").arg(&s).output().unwrap();
        assert!(
            o.status.success(),
            "{}: {}",
            s.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let mode = std::fs::metadata(&s).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{} is not executable", s.display());
    }
}

#[test]
fn issue14_03_kubernetes_manifests_are_an_indexed_job_and_its_merge() {
    let shards = yaml("shards-job.yaml");
    let merge = yaml("merge-job.yaml");
    let volume = yaml("shared-volume.yaml");
    assert_eq!(shards["kind"].as_str(), Some("Job"));
    assert_eq!(shards["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(shards["spec"]["completionMode"].as_str(), Some("Indexed"));
    let n = shards["spec"]["completions"].as_i64().unwrap();
    assert_eq!(shards["spec"]["parallelism"].as_i64(), Some(n));
    assert_eq!(merge["kind"].as_str(), Some("Job"));
    assert_eq!(volume["kind"].as_str(), Some("PersistentVolumeClaim"));
    let claim = volume["metadata"]["name"].as_str().unwrap();
    for job in [&shards, &merge] {
        let env = container_env(job);
        assert_eq!(
            env["SHARD_COUNT"],
            n.to_string(),
            "SHARD_COUNT = completions"
        );
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(
            pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(),
            Some(claim)
        );
        let mount = pod["containers"][0]["volumeMounts"][0]["mountPath"]
            .as_str()
            .unwrap();
        assert!(
            env["SHARDS_DIR"].starts_with(mount),
            "shards on the shared volume"
        );
    }
    // the LLM: a vLLM service in the cluster, by URL; its cache on the shared volume
    let args = &container_env(&shards)["GTB_ARGS"];
    assert!(
        args.contains("--base-url http://vllm.") && args.contains(".svc.cluster.local:8000/v1"),
        "{args}"
    );
    assert!(args.contains("--cache-dir /shared/"), "{args}");
}

#[test]
fn issue14_03_local_slurm_and_kubernetes_launchers_give_the_unsharded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let want = unsharded_sha(dir.path());

    // local processes
    let local = dir.path().join("local");
    let env = launcher_env(&local, 3);
    run_bash(&[deploy().join("local.sh").to_str().unwrap()], &env);
    assert_eq!(sha(&local.join("out/test.jsonl")), want, "local.sh");

    // Slurm: submit.sh against a stand-in sbatch that runs each job at once (array tasks one
    // after another) and logs its arguments; the stand-in has no sinfo, so the resource check
    // is off here (tests/it/slurm_e2e.rs runs it against a real cluster)
    let slurm = dir.path().join("slurm");
    let bin = slurm.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("sbatch");
    std::fs::write(&fake, FAKE_SBATCH).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    // submit.sh finds deploy/ itself
    let mut env = launcher_env(&slurm, 4);
    env.remove("GTB_DEPLOY");
    env.insert(
        "PATH".into(),
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    );
    env.insert("GTB_SBATCH_NO_CHECK".into(), "1".into());
    env.insert(
        "SBATCH_LOG".into(),
        slurm.join("sbatch.log").display().to_string(),
    );
    run_bash(&[deploy().join("slurm/submit.sh").to_str().unwrap()], &env);
    assert_eq!(sha(&slurm.join("out/test.jsonl")), want, "slurm");
    let log = std::fs::read_to_string(slurm.join("sbatch.log")).unwrap();
    assert!(log.contains("--array=0-3"), "{log}");
    assert!(log.contains("--dependency=afterok:4242"), "{log}");

    // Kubernetes: the Indexed Job's container command once per completion index, then the
    // merge Job's, with the manifests' own variables (paths and the build pointed here)
    let k8s = dir.path().join("k8s");
    for (file, indexes) in [("shards-job.yaml", true), ("merge-job.yaml", false)] {
        let job = yaml(file);
        let mut env = container_env(&job);
        let count: usize = env["SHARD_COUNT"].parse().unwrap();
        env.extend(
            launcher_env(&k8s, count)
                .into_iter()
                .filter(|(k, _)| k != "SHARD_COUNT"),
        );
        let cmd = container_command(&job);
        assert_eq!(cmd[0], "/bin/bash");
        let args: Vec<&str> = cmd[1..].iter().map(String::as_str).collect();
        if indexes {
            for i in 0..count {
                env.insert("JOB_COMPLETION_INDEX".into(), i.to_string());
                run_bash(&args, &env);
            }
        } else {
            run_bash(&args, &env);
        }
    }
    assert_eq!(sha(&k8s.join("out/test.jsonl")), want, "kubernetes");
}

/// A stand-in for Slurm's sbatch: runs the job script at once (the tasks of an array one
/// after another, with SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT), logs its arguments,
/// prints job id 4242 (--parsable).
const FAKE_SBATCH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "$*" >>"$SBATCH_LOG"
array= script=
for a in "$@"; do
    case $a in
    --array=*) array=${a#--array=} ;;
    --*) ;;
    *) script=$a ;;
    esac
done
if [ -n "$array" ]; then
    lo=${array%-*} hi=${array#*-}
    for ((i = lo; i <= hi; i++)); do
        SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) \
            bash "$script" >&2
    done
else
    bash "$script" >&2
fi
echo 4242
"#;
