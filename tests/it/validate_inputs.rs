//! `gtb validate` and `gtb audit` on broken task files: every broken task is a finding (never
//! "every check passed", never a panic), every unreadable line an error naming the line and
//! why, and `-` reads standard input (issue 13 items 1 and 10).

use crate::common::*;
use gtb_core::config::Config;
use gtb_core::task::Task;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Three tasks of a small default build (built once per test binary).
fn built_tasks() -> &'static [Task] {
    static TASKS: OnceLock<Vec<Task>> = OnceLock::new();
    TASKS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config_in(dir.path());
        cfg.run.n = 3;
        let s = build(&cfg, 1);
        let text = std::fs::read_to_string(&s.splits[0].path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    })
}

fn config() -> Config {
    config_in(Path::new("target/unused-outputs"))
}

/// The findings of `gtb validate` on these tasks, as text.
fn validate(tasks: &[Task]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.jsonl");
    std::fs::write(&file, gtb_ops::sinks::release_bytes(tasks)).unwrap();
    let (n, findings) = gtb_ops::validate_file(&config(), &file).unwrap();
    assert_eq!(n, tasks.len());
    findings.iter().map(|f| f.to_string()).collect()
}

/// The first built task, changed by `f`, validated: its findings.
fn validate_changed(f: impl FnOnce(&mut Task)) -> Vec<String> {
    let mut t = built_tasks()[0].clone();
    f(&mut t);
    validate(&[t])
}

fn has(findings: &[String], needle: &str) -> bool {
    findings.iter().any(|f| f.contains(needle))
}

#[test]
fn issue13_10_built_tasks_pass() {
    let f = validate(built_tasks());
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn issue13_01_empty_cities_is_a_finding() {
    let f = validate_changed(|t| {
        t.metadata.cities.clear();
        for e in t.user_preferences.values_mut() {
            e.preference.city_specific_preferences.clear();
        }
    });
    assert!(
        has(&f, "[format] field=metadata.cities: no city to visit"),
        "{f:?}"
    );
    // the route checks need a city: they do not run (no "重庆市 ->  -> 重庆市" noise)
    assert!(!has(&f, "[reachability]"), "{f:?}");
}

#[test]
fn issue13_10_zero_users_is_a_finding() {
    let f = validate_changed(|t| {
        t.user_preferences.clear();
        t.metadata.child_members.clear();
        t.metadata.compromise_pattern.clear();
    });
    assert!(has(&f, "no member has a preference table"), "{f:?}");
    assert!(has(&f, "0 members"), "{f:?}");
}

#[test]
fn issue13_10_400_users_is_a_finding() {
    let f = validate_changed(|t| {
        let first = t.user_preferences.values().next().unwrap().clone();
        t.user_preferences = (1..=400)
            .map(|k| (format!("User{k}"), first.clone()))
            .collect();
    });
    assert!(has(&f, "400 members"), "{f:?}");
}

#[test]
fn issue13_10_member_keys_and_compromise_pattern_are_checked() {
    let f = validate_changed(|t| {
        let (_, e) = t.user_preferences.pop().unwrap();
        t.user_preferences.insert("User07".into(), e);
        t.metadata.compromise_pattern.push("User9".into());
    });
    assert!(has(&f, "item=User07: not a member key"), "{f:?}");
    assert!(
        has(&f, "field=metadata.compromise_pattern item=User9"),
        "{f:?}"
    );
}

#[test]
fn issue13_10_unknown_group_id_is_a_finding() {
    let f = validate_changed(|t| t.metadata.group_id = "9-9".into());
    assert!(has(&f, "field=metadata.group_id item=9-9"), "{f:?}");
}

#[test]
fn issue13_10_duplicate_task_ids_are_a_finding() {
    let t = &built_tasks()[0];
    let f = validate(&[t.clone(), built_tasks()[1].clone(), t.clone()]);
    assert_eq!(
        f,
        vec![format!(
            "{} [format] field=task_id item={}: line 3 repeats the task_id of line 1",
            t.task_id, t.task_id
        )]
    );
}

#[test]
fn issue13_10_time_must_be_a_calendar_date() {
    for bad in ["2026-13-45", "2026-02-30", "tomorrow", "", "262143-12-31"] {
        let f = validate_changed(|t| t.time = bad.into());
        let item = if bad.is_empty() {
            String::new()
        } else {
            format!(" item={bad}")
        };
        let says = format!("field=time{item}: not a calendar date written YYYY-MM-DD");
        assert!(has(&f, &says), "{bad}: {f:?}");
    }
    // near the last day chrono knows: a finding, and the opening check does not overflow
    let f = validate_changed(|t| t.time = "+262142-12-31".into());
    assert!(has(&f, "field=time item=+262142-12-31"), "{f:?}");
}

#[test]
fn issue13_10_intensity_must_fit_in_a_day() {
    let f = validate_changed(|t| {
        let i = &mut t.user_preferences[0]
            .preference
            .global_constraints
            .intensity;
        i.max_poi_per_day = u32::MAX;
        i.max_active_hours = 25;
    });
    assert!(
        has(&f, "field=intensity.max_poi_per_day item=4294967295"),
        "{f:?}"
    );
    assert!(has(&f, "field=intensity.max_active_hours item=25"), "{f:?}");
    // 0 is the release's "no limit"
    let f = validate_changed(|t| {
        let i = &mut t.user_preferences[0]
            .preference
            .global_constraints
            .intensity;
        i.max_active_hours = 0;
    });
    // (the line that states 8 hours no longer agrees with the table: that is the lines check)
    let limits: Vec<&String> = f.iter().filter(|m| !m.contains("[lines]")).collect();
    assert!(!limits.iter().any(|m| m.contains("intensity")), "{f:?}");
}

/// `gtb CMD ARGS` with `stdin` piped in: (exit code, stdout, stderr).
fn gtb(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// `gtb validate -` and `gtb audit -` both fail on these bytes, saying each of `says`.
fn both_refuse_saying(bytes: &[u8], says: &[&str]) {
    for cmd in ["validate", "audit"] {
        let (code, _, err) = gtb(&[cmd, "-"], bytes);
        assert_eq!(code, 1, "{cmd}: {err}");
        for s in says {
            assert!(err.contains(s), "{cmd}: {err}");
        }
        assert!(!err.contains("at line"), "{cmd}: {err}");
    }
}

#[test]
fn issue13_10_bom_is_named() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(gtb_ops::sinks::release_bytes(&built_tasks()[..1]));
    both_refuse_saying(
        &bytes,
        &["stdin:1: starts with a UTF-8 byte-order mark (BOM)"],
    );
}

#[test]
fn issue13_10_binary_input_names_its_line() {
    let mut bytes = gtb_ops::sinks::release_bytes(&built_tasks()[..1]);
    bytes.extend(b"{\"task_id\": \"\xFF\xFE\"}\n");
    both_refuse_saying(
        &bytes,
        &["stdin:2: not UTF-8 text (binary data?): byte 14 of the line is 0xFF"],
    );
}

#[test]
fn issue13_10_a_json_error_names_one_line_and_a_column() {
    let line = String::from_utf8(gtb_ops::sinks::release_bytes(&built_tasks()[..1])).unwrap();
    let broken = format!("\n{}\"x{}", &line[..40], &line[40..]);
    both_refuse_saying(broken.as_bytes(), &["stdin:2: invalid JSON: ", "(column "]);
}

#[test]
fn issue13_10_audit_and_validate_read_stdin() {
    let bytes = gtb_ops::sinks::release_bytes(built_tasks());
    let (code, out, err) = gtb(&["validate", "-"], &bytes);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("stdin: 3 tasks, every check passed"), "{out}");
    let (code, out, err) = gtb(&["audit", "-", "--format", "json"], &bytes);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["report"]["tasks"], 3, "{out}");
}

#[test]
fn issue13_08_city_keys_message_lists_names_not_debug() {
    let f = validate_changed(|t| {
        let e = t.user_preferences.values_mut().next().unwrap();
        let (_, cp) = e.preference.city_specific_preferences.pop().unwrap();
        e.preference
            .city_specific_preferences
            .insert("北京市".into(), cp);
        t.metadata.cities.retain(|c| c != "北京市");
    });
    let m = f
        .iter()
        .find(|m| m.contains("field=city_specific_preferences"))
        .unwrap_or_else(|| panic!("{f:?}"));
    assert!(m.contains("北京市]") && !m.contains('"'), "{m}");
}
