//! Whole CLI runs, snapshotted with redaction filters (paths, digests, timings).

use crate::common::*;
use std::process::Command;

fn gtb(args: &[&str], dir: &std::path::Path) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let redact = |s: &[u8]| String::from_utf8_lossy(s).replace(&dir.display().to_string(), "[TMP]");
    (
        redact(&out.stdout),
        redact(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"sha256 [0-9a-f]{64}", "sha256 [SHA256]");
    s.add_filter(r"task_\d{6}", "task_[ID]");
    s.add_filter(r"\(\d+\.\d s\)", "([TIME])");
    s
}

#[test]
fn build_twice_then_explain() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("split");
    let out_s = out.display().to_string();
    let (stdout1, stderr1, code1) = gtb(
        &["build", "--n", "12", "--seed", "3", "--out", &out_s],
        dir.path(),
    );
    let (stdout2, stderr2, code2) = gtb(
        &["build", "--n", "12", "--seed", "3", "--out", &out_s],
        dir.path(),
    );
    let (_, stderr3, code3) = gtb(
        &[
            "build",
            "--n",
            "12",
            "--seed",
            "4",
            "--out",
            &out_s,
            "--explain",
        ],
        dir.path(),
    );
    assert_eq!((code1, code2, code3), (0, 0, 0));
    assert!(out.join("validation_reports/report.md").exists());
    settings().bind(|| {
        insta::assert_snapshot!("first_build", format!("{stderr1}---\n{stdout1}"));
        insta::assert_snapshot!("second_build_reuses", format!("{stderr2}---\n{stdout2}"));
        insta::assert_snapshot!("explain_other_seed", stderr3);
    });
}

#[test]
fn validate_reports_each_problem_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    let mut cfg = config_in(dir.path());
    cfg.run.n = 3;
    let s = build(&cfg, 1);
    let text = std::fs::read_to_string(&s.splits[0].path).unwrap();
    let mut t: gtb_core::task::Task = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let city = t.metadata.cities[0].clone();
    let e = t.user_preferences.values_mut().next().unwrap();
    e.preference.city_specific_preferences[&city]
        .attractions
        .must_visit
        .push("不存在的乐园".into());
    e.preference.global_constraints.hotel_preference.avoid =
        vec![e.preference.global_constraints.hotel_preference.prefer[0].clone()];
    std::fs::write(&bad, gtb_ops::sinks::release_bytes(&[t])).unwrap();
    let (stdout, stderr, code) = gtb(&["validate", &bad.display().to_string()], dir.path());
    assert_eq!(code, 1);
    let mut s = settings();
    s.add_filter(r"user=User\d", "user=User[N]");
    s.add_filter(r"city=\S+", "city=[CITY]");
    s.add_filter(r"item=\S+", "item=[ITEM]");
    s.add_filter(r"; closest is .*", "");
    s.add_filter(r"POI of \S+", "POI of [CITY]");
    s.bind(|| insta::assert_snapshot!("validate_bad_file", format!("{stdout}---\n{stderr}")));
}

/// Issue 14 item 5: stage lines come as the work happens, so a failed build shows which
/// stages ran, which one failed, and that none ran after it.
#[test]
fn issue14_05_a_failed_build_shows_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("split");
    // a folder where test.jsonl should go: the write stage cannot put the file in place
    std::fs::create_dir_all(out.join("test.jsonl/occupied")).unwrap();
    let out_s = out.display().to_string();
    let (_, stderr, code) = gtb(
        &["build", "--n", "12", "--seed", "3", "--out", &out_s],
        dir.path(),
    );
    assert_eq!(code, 1);
    let mut s = settings();
    s.add_filter(r"\.tmp\d+", ".tmp[PID]");
    s.add_filter(r"\(os error \d+\)", "(os error [N])");
    s.bind(|| insta::assert_snapshot!("failed_build", stderr));
}
