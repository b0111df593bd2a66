//! Issue 21: the official harness, both ways. `gtb solve --format official` writes the
//! release's inference records (what its `multi_eval` reads), and `gtb score` reads such
//! records, an agent's run included, beside the witness.

use crate::common::{build, config_in, root};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A built split of `n` tasks: (its folder, test.jsonl, plans.jsonl).
fn built(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = n;
    let s = build(&cfg, 2);
    let tasks = s.splits[0].path.clone();
    let plans = tasks.with_file_name("plans.jsonl");
    (dir, tasks, plans)
}

fn gtb(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn score_json(tasks: &Path, plans: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "score",
        tasks.to_str().unwrap(),
        plans.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend(extra);
    let (ok, out, err) = gtb(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The witnesses as inference records: every field `multi_eval` reads, the plan in a json
/// fence of the last Agent message, the compromises applied to `effective_preferences` and
/// logged; scored from the records, every plan scores exactly as from `plans.jsonl`.
#[test]
fn issue21_official_records_score_as_the_plans() {
    let (dir, tasks, plans) = built(40);
    let records = dir.path().join("records.jsonl");
    let (ok, out, err) = gtb(&[
        "solve",
        tasks.to_str().unwrap(),
        "--format",
        "official",
        "--out",
        records.to_str().unwrap(),
    ]);
    assert!(ok && out.contains("40 of 40 tasks"), "{out}{err}");
    let witnesses = lines(&plans);
    for (r, w) in lines(&records).iter().zip(&witnesses) {
        assert_eq!(r["task_id"], w["task_id"]);
        assert_eq!(r["success"], json!(true));
        assert_eq!(r["plan_generated"], json!(true));
        let users = r["user_names"].as_array().unwrap();
        assert_eq!(
            users.len(),
            r["effective_preferences"].as_object().unwrap().len()
        );
        let history = r["conversation_history"].as_array().unwrap();
        let last = history.last().unwrap();
        assert_eq!(last["role"], "Agent");
        assert!(
            last["content"]
                .as_str()
                .unwrap()
                .contains("```json\n{\"days\"")
        );
        let log = r["compromise_log"].as_array().unwrap();
        assert_eq!(log.len(), w["compromises"].as_array().unwrap().len());
        for (entry, c) in log.iter().zip(w["compromises"].as_array().unwrap()) {
            assert_eq!(entry["applied"], json!(true));
            assert_eq!(entry["new_value"], c["value"]);
            let path = entry["field_path"].as_str().unwrap().replace('.', "/");
            let user = c["user"].as_str().unwrap();
            let pointer = format!("/{user}/preference/{path}");
            assert_eq!(
                r["effective_preferences"].pointer(&pointer),
                Some(&c["value"])
            );
        }
    }
    let from_records = score_json(&tasks, &records, &[]);
    let from_plans = score_json(&tasks, &plans, &[]);
    assert_eq!(from_records["source"], "records");
    assert_eq!(from_records["summary"], from_plans["summary"]);
    for (a, b) in from_records["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(from_plans["results"].as_array().unwrap())
    {
        assert_eq!(
            a["trials"][0]["score"], b["trials"][0]["score"],
            "{}",
            a["task_id"]
        );
    }
}

/// An agent's run as the official harness writes it: trials of a task averaged over those with
/// a scored plan (a crash, a run without a plan and a plan only in prose count as the release
/// counts them), and `--against` the witnesses: the agent's utility as a share of theirs.
#[test]
fn issue21_score_reads_agent_records_beside_the_witness() {
    let (dir, tasks, plans) = built(12);
    let witness = &lines(&plans)[0];
    let task = lines(&tasks)
        .into_iter()
        .find(|t| t["task_id"] == witness["task_id"])
        .unwrap();
    let effective: serde_json::Map<String, Value> =
        task["user_preferences"].as_object().unwrap().clone();
    let users: Vec<Value> = effective.keys().map(|k| json!(k)).collect();
    let plan_text = serde_json::to_string(&witness["plan"]).unwrap();
    let record = |trial: u64, success: bool, generated: bool, content: String| {
        json!({
            "task_id": witness["task_id"], "trial_id": trial, "success": success,
            "plan_generated": generated, "user_names": users,
            "effective_preferences": effective,
            "conversation_history": [
                {"type": "message", "role": "User1", "content": "你好"},
                {"type": "message", "role": "Agent", "content": content, "has_tool_calls": false}
            ]
        })
    };
    let file = dir.path().join("agent.jsonl");
    let recs = [
        // a plan in prose, without a fence: found around "days"
        record(
            0,
            true,
            true,
            format!("最终方案如下：{plan_text} 祝旅途愉快"),
        ),
        // a crash and a run that made no plan: no dimension for them
        record(1, false, true, format!("```json\n{plan_text}\n```")),
        record(2, true, false, format!("```json\n{plan_text}\n```")),
    ];
    let text: String = recs.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(&file, text).unwrap();
    let r = score_json(&tasks, &file, &["--against", plans.to_str().unwrap()]);
    assert_eq!(r["source"], "records");
    let one = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["task_id"] == witness["task_id"])
        .unwrap();
    let trials = one["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 3);
    assert!(trials[0]["score"].is_object());
    assert_eq!(
        trials[1]["error"],
        "inference failed (no effective_preferences)"
    );
    assert_eq!(trials[2]["error"], "plan not generated");
    // the one scored trial is the task's figure; the witness's per-member utility beside it
    assert_eq!(one["valid_ratio"], json!(1.0));
    assert!(one["witness_per_user"].as_f64().is_some());
    let all = &r["summary"]["all"];
    assert!(all["share_of_witness"].as_f64().is_some(), "{all}");
    // the summary is over the tasks the records name, as the release's is; the others are
    // counted apart
    assert_eq!(all["tasks"], json!(1));
    assert_eq!(all["valid_ratio"], json!(1.0));
    assert_eq!(r["missing"], json!(11));
}

/// `gtb poi-table` writes the table names resolve through, in the release's layout: real
/// attractions, restaurants and hotels, no stand-in.
#[test]
fn issue21_poi_table_holds_real_names_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all_poi_by_city.json");
    let (ok, text, err) = gtb(&["poi-table", "--out", out.to_str().unwrap()]);
    assert!(ok && text.contains("POIs of 143 cities"), "{text}{err}");
    let table: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let beijing = table["北京市"].as_array().unwrap();
    let kinds = |k: &str| beijing.iter().filter(|p| p["poi_type"] == k).count();
    assert!(kinds("attractions") > 20 && kinds("food") >= 5 && kinds("hotels") >= 3);
    assert!(beijing.iter().any(|p| p["name"] == "全聚德(前门店)"));
    for pois in table.as_object().unwrap().values() {
        for p in pois.as_array().unwrap() {
            assert!(!p["name"].as_str().unwrap().contains("·示意）"), "{p}");
        }
    }
}
