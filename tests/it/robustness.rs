//! Issue 13 items 2–6: the build's folders under concurrent runs, unbounded arguments, temp
//! files of dead runs, crashes while publishing, and full disks. Every test runs the binary.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn gtb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gtb"));
    c.current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("GTB_CRASH_AT");
    c
}

fn build_args(out: &Path, n: usize, seed: u64) -> Vec<String> {
    vec![
        "build".into(),
        "--n".into(),
        n.to_string(),
        "--seed".into(),
        seed.to_string(),
        "--out".into(),
        out.display().to_string(),
    ]
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn sha256(path: &Path) -> String {
    gtb_core::digest::sha256_file(path).unwrap()
}

/// Every `*.tmp<PID>` file below `dir`.
fn temps(dir: &Path) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.rsplit_once(".tmp"))
                .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

/// A build of `out` killed (`GTB_CRASH_AT`) at `point`, which leaves a temp file whose path
/// contains `temp`.
fn crash_leaving_temp(out: &Path, point: &str, temp: &str) {
    let o = gtb()
        .args(build_args(out, 5000, 3))
        .arg("--no-witness")
        .env("GTB_CRASH_AT", point)
        .output()
        .unwrap();
    assert!(!o.status.success(), "{point}: the hook did not fire");
    let left = temps(out);
    assert!(
        left.iter().any(|p| p.display().to_string().contains(temp)),
        "{point}: {left:?}"
    );
}

/// The published split is consistent: the manifest (when present) and every report present
/// state the sha256 of the task file that is in place.
fn assert_reports_agree(out: &Path) {
    let tasks = out.join("test.jsonl");
    let reports = out.join("validation_reports");
    let Ok(_) = std::fs::metadata(&tasks) else {
        // no task file: nothing may claim to describe one
        assert!(!out.join("manifest.json").exists());
        return;
    };
    let sha = sha256(&tasks);
    let json = |p: PathBuf| -> Option<serde_json::Value> {
        std::fs::read(&p)
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
    };
    if let Some(m) = json(out.join("manifest.json")) {
        assert_eq!(m["test_jsonl_sha256"], sha.as_str(), "manifest");
    }
    if let Some(r) = json(reports.join("report.json")) {
        assert_eq!(r["test_jsonl_sha256"], sha.as_str(), "report.json");
    }
    if let Some(a) = json(reports.join("audit.json")) {
        assert_eq!(a["report"]["sha256"], sha.as_str(), "audit.json");
    }
    for f in ["report.md", "audit.md", "audit.html"] {
        if let Ok(text) = std::fs::read_to_string(reports.join(f)) {
            assert!(text.contains(&sha), "{f} does not name sha256 {sha}");
        }
    }
}

#[test]
fn issue13_02_concurrent_builds_fail_fast_naming_the_holder_or_wait() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // this process holds the output folder: a build fails at once and names the holder
    let held = gtb_ops::lock::lock_folders(&[out.as_path()], false).unwrap();
    let o = gtb().args(build_args(&out, 20, 1)).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("in use by gtb process {}", std::process::id()))
            && e.contains("--wait"),
        "{e}"
    );
    assert!(!out.join("test.jsonl").exists());
    // with --wait it waits until the holder lets go, then builds
    let mut waiting = gtb()
        .args(build_args(&out, 20, 1))
        .arg("--wait")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // its first line says whom it waits for; it cannot finish while the lock is held
    let mut err = std::io::BufReader::new(waiting.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut err, &mut first).unwrap();
    assert!(
        first.contains(&format!("waiting for {}", out.display()))
            && first.contains(&format!("gtb process {}", std::process::id())),
        "{first}"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(waiting.try_wait().unwrap().is_none(), "--wait did not wait");
    drop(held);
    let status = waiting.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(status.success(), "{rest}");
    assert_reports_agree(&out);

    // the reproducer: two builds with different seeds into one folder, at the same time
    for wait in [false, true] {
        let runs: Vec<_> = [11u64, 12]
            .iter()
            .map(|&seed| {
                let mut c = gtb();
                // no witness search: the lock is what is tested, not 1,500 plans
                c.args(build_args(&out, 1500, seed))
                    .arg("--no-witness")
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                if wait {
                    c.arg("--wait");
                }
                c.spawn().unwrap()
            })
            .collect();
        let outputs: Vec<Output> = runs
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let ok = outputs.iter().filter(|o| o.status.success()).count();
        for o in outputs.iter().filter(|o| !o.status.success()) {
            assert!(stderr(o).contains("in use by gtb process"), "{}", stderr(o));
        }
        assert!(ok >= 1);
        if wait {
            assert_eq!(
                ok, 2,
                "with --wait both builds complete, one after the other"
            );
        }
        // whatever ran last, the published file is whole and matches its manifest and reports
        let text = std::fs::read_to_string(out.join("test.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 1500);
        for l in text.lines() {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
        assert_reports_agree(&out);
    }
}

#[test]
fn issue13_03_unbounded_arguments_are_refused_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: [(&[&str], &str); 8] = [
        (
            &["build", "--shard", "4/4"],
            "\"4/4\" is not I/N with 0 <= I < N",
        ),
        (
            &["build", "--n", "3", "--shard", "0/4"],
            "run.n (--n) is 3: fewer tasks than the 4 shards of --shard",
        ),
        (
            &["build", "--n", "18446744073709551615"],
            "run.n (--n) is 18446744073709551615: a build has at most 10000000 tasks",
        ),
        (
            &["build", "--n", "100000000"],
            "run.n (--n) is 100000000: a build has at most 10000000 tasks",
        ),
        (
            &["build", "--n", "2000000"],
            "run.n (--n) is 2000000: one build process makes at most 1000000 tasks (each is held in memory while it is built); build it in shards: --shard I/N with N >= 2",
        ),
        (
            &["--threads", "100000", "build", "--n", "20"],
            "run.threads (--threads) is 100000: at most 256",
        ),
        (
            &["--threads", "10000", "build", "--n", "20"],
            "run.threads (--threads) is 10000: at most 256",
        ),
        (
            &["build", "--splits", "test=10,train=5000000"],
            "--splits train is 5000000: one build process makes at most 1000000 tasks",
        ),
    ];
    for (args, message) in cases {
        let o = gtb().args(args).arg("--out").arg(&out).output().unwrap();
        // 1: refused by the settings check, 2: by the argument parser; never a panic (101)
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        // refused before anything was written
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
    let o = gtb()
        .args(["sample", "--n", "2000000", "--out"])
        .arg(dir.path().join("s.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("at most 1000000 tasks"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn issue13_04_temp_files_of_dead_runs_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // runs killed (as by kill -9: nothing is cleaned up) while generating, and while writing
    // test.jsonl (the issue's test.tmpPID)
    crash_leaving_temp(&out, "generate:chunk-written", "generate.jsonl.tmp");
    crash_leaving_temp(&out, "write:task-file-half-written", "test.jsonl.tmp");
    // a temp of a live process (this test) is not touched
    let live = out.join(format!("notes.txt.tmp{}", std::process::id()));
    std::fs::write(&live, b"in use").unwrap();
    // without witnesses: temp files and resuming are the same with them, and the witness
    // search of 5,000 tasks, four times, was most of this test's time
    let o = gtb()
        .args(build_args(&out, 5000, 3))
        .arg("--no-witness")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("temp file(s) left by runs that died"),
        "{}",
        stderr(&o)
    );
    assert_eq!(temps(&out), vec![live]);
    // the rerun resumed to the same bytes as an uninterrupted build
    let clean = dir.path().join("clean");
    let o = gtb()
        .args(build_args(&clean, 5000, 3))
        .arg("--no-witness")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(
        sha256(&out.join("test.jsonl")),
        sha256(&clean.join("test.jsonl"))
    );
}

#[test]
fn issue13_05_reports_never_disagree_with_the_published_split() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = gtb().args(build_args(&out, 200, 1)).output().unwrap();
    assert!(o.status.success());
    assert_reports_agree(&out);
    let points = [
        "write:unpublished",
        "write:task-file-half-written",
        "write:tasks-in-place",
        "write:world-written",
        "write:reports-written",
    ];
    // every crash point of publishing, during a change of seed: what is left never disagrees
    for (k, point) in points.iter().enumerate() {
        let seed = 2 + k as u64;
        let o = gtb()
            .args(build_args(&out, 200, seed))
            .env("GTB_CRASH_AT", point)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{point}: the hook did not fire");
        assert_reports_agree(&out);
        assert!(
            !out.join("manifest.json").exists(),
            "{point}: an interrupted publish must not look complete"
        );
        // the rerun completes the split, consistently
        let o = gtb().args(build_args(&out, 200, seed)).output().unwrap();
        assert!(o.status.success(), "{point}: {}", stderr(&o));
        assert!(out.join("manifest.json").exists());
        assert_reports_agree(&out);
    }
}

/// A validate stage killed after its lines are in place, but before its span index, never
/// looks finished: not even to a later run whose inputs match the fingerprint an earlier
/// finished run left (the validate stage lists its lines by spans of `generate.jsonl` and
/// `validate.jsonl`, which must come from one run).
#[test]
fn issue27_an_interrupted_validate_never_looks_finished() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut a = build_args(&out, 200, 1);
    a.push("--no-witness".into());
    let o = gtb().args(&a).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let first = sha256(&out.join("test.jsonl"));
    // another validate config (witnesses on), killed once its lines are written
    let o = gtb()
        .args(build_args(&out, 200, 1))
        .env("GTB_CRASH_AT", "validate:lines-written")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the hook did not fire");
    // back to the first config: validate reruns, and the split is the first one's
    let o = gtb().args(&a).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("validate") && l.contains("runs:")),
        "{err}"
    );
    assert_eq!(sha256(&out.join("test.jsonl")), first);
}

/// Issue 27 (the no-witness build's time): generate streams into validate, which checks the
/// tasks as made instead of parsing their lines back. A validate that reads the same artifact
/// back (generate fresh, validate rerun) must publish the same bytes: tasks, plans, reports.
#[test]
fn issue27_generate_streamed_into_validate_gives_the_bytes_of_a_validate_reading_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = gtb().args(build_args(&out, 300, 5)).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("generate  streams into validate"), "{err}");
    let files = [
        "test.jsonl",
        "plans.jsonl",
        "validation_reports/report.json",
    ];
    let streamed: Vec<String> = files.iter().map(|f| sha256(&out.join(f))).collect();
    std::fs::remove_file(out.join(".work/validate.fingerprint.json")).unwrap();
    let o = gtb().args(build_args(&out, 300, 5)).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("generate  fresh, reused"), "{err}");
    assert!(!err.contains("streams into"), "{err}");
    let read_back: Vec<String> = files.iter().map(|f| sha256(&out.join(f))).collect();
    assert_eq!(streamed, read_back);
}

/// Runs `script` (sh) in a new user and mount namespace when the system allows it.
fn in_namespace(script: &str) -> Option<Output> {
    let probe = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    Command::new("unshare")
        .args(["-rm", "sh", "-c", script])
        .current_dir(root())
        .output()
        .ok()
}

#[test]
fn issue13_06_a_full_disk_names_the_stage_and_the_path() {
    let bin = env!("CARGO_BIN_EXE_gtb");
    let dir = tempfile::tempdir().unwrap();
    // a real full disk: a 1 MiB tmpfs (generate.jsonl of 650 tasks is about 3 MB)
    let mnt = dir.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs {m} && {bin} build --out {m}/out; echo rc=$?; find {m} -name '*.tmp*'",
        m = mnt.display()
    );
    match in_namespace(&script) {
        Some(o) => {
            let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
            assert!(out.contains("rc=1"), "{out}{err}");
            assert!(
                err.contains("stage validate (generate streamed into it): writing ")
                    && err.contains(&format!("{}/out/.work/", mnt.display()))
                    && err.contains(".jsonl.tmp")
                    && err.contains("No space left on device"),
                "{err}"
            );
            assert!(!out.contains(".tmp"), "temp files left: {out}");
        }
        None => eprintln!(
            "NOTE: no user namespace for a tmpfs here: the ENOSPC case is covered by the file size limit below only"
        ),
    }
    // a file size limit: the work folder's large artifacts (generate.jsonl, 3.5 MB, and the
    // witnesses, written side by side as generate streams into validate) do not fit
    let out = dir.path().join("out");
    // bash: its `ulimit -f` counts KiB (POSIX sh may count 512-byte blocks)
    let o = Command::new("bash")
        .args([
            "-c",
            &format!(
                "ulimit -f 3300; trap '' XFSZ; exec {bin} build --out {}",
                out.display()
            ),
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("stage validate (generate streamed into it): writing ")
            && err.contains(&format!("{}/.work/", out.display()))
            && err.contains(".jsonl.tmp")
            && err.contains("File too large"),
        "{err}"
    );
    assert!(err.contains("generate  failed"), "{err}");
    assert_eq!(temps(&out), Vec::<PathBuf>::new());
    assert!(!out.join("test.jsonl").exists() && !out.join("manifest.json").exists());
}
