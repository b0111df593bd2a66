//! `gtb solve --format official`: the witnesses as the release's inference records, the lines
//! its harness writes and `evaluation/multi_eval.py` reads (docs/PLANS.md), so that the
//! release's evaluator scores a witness like any agent's run:
//!
//! * `success: true`; `plan_generated` whether the task has a witness;
//! * `user_names`: the members in the task's order (the runner's);
//! * `original_preferences`: the task's `user_preferences`; `effective_preferences`: the same
//!   after the witness's compromises (the release's tracker rules, `score::compromise`), with
//!   one `compromise_log` entry per applied compromise; `agent_preference_table`: the
//!   effective preferences (a reference plan knows every preference);
//! * `conversation_history`: the opening messages, then one Agent message with the plan in a
//!   ```` ```json ```` fence (or, without a witness, the reason there is none).
//!
//! Nothing else is made up: no tool calls, no dialogue, zero durations.

use anyhow::Result;
use gtb_core::task::Task;
use gtb_plan::PlanLine;
use serde_json::{Map, Value, json};

/// The conversation: the opening messages, then the Agent's message with the plan.
fn conversation(task: &Task, line: &PlanLine) -> Value {
    let mut history: Vec<Value> = task
        .initial_messages
        .iter()
        .map(|m| json!({"type": "message", "role": m.role, "content": m.content}))
        .collect();
    let content = match &line.plan {
        Some(p) if !p.is_null() => format!(
            "参考方案（gtb 见证方案 witness plan，docs/PLANS.md）：\n```json\n{}\n```",
            serde_json::to_string(p).expect("a plan serialises")
        ),
        _ => format!(
            "没有可行方案（no witness plan）：{}",
            line.reason.as_deref().unwrap_or("")
        ),
    };
    history.push(
        json!({"type": "message", "role": "Agent", "content": content, "has_tool_calls": false}),
    );
    Value::Array(history)
}

/// One inference record of a task and its plans-file line.
pub fn record(index: usize, task: &Task, line: &PlanLine) -> Result<Value> {
    let users = gtb_score::users(task);
    let mut prefs = gtb_score::preferences(task);
    let applied = gtb_score::compromise::apply(&mut prefs, &line.compromises);
    if let Some(bad) = applied.iter().find(|a| !a.applied) {
        anyhow::bail!(
            "task {}: a compromise of {} does not apply ({})",
            task.task_id,
            bad.user,
            bad.problem.as_deref().unwrap_or(&bad.path)
        );
    }
    let original = serde_json::to_value(&task.user_preferences)?;
    let mut effective = original.clone();
    for (u, p) in &prefs {
        effective[u]["preference"] = p.clone();
    }
    let log: Vec<Value> = applied
        .iter()
        .zip(&line.compromises)
        .enumerate()
        .map(|(k, (a, c))| {
            json!({"round": k + 1, "user": a.user, "field_path": a.path, "new_value": c.value, "applied": true})
        })
        .collect();
    let table: Map<String, Value> = prefs.into_iter().collect();
    let planned = line.plan.as_ref().is_some_and(|p| !p.is_null());
    let history = conversation(task, line);
    let events = history.as_array().map_or(0, Vec::len);
    Ok(json!({
        "task_index": index,
        "task_id": task.task_id,
        "trial_id": 0,
        "success": true,
        "plan_generated": planned,
        "completion_reason": if planned { "plan_generated" } else { "no_witness" },
        "user_names": users,
        "query": task.query,
        "time": task.time,
        "context": task.context,
        "original_preferences": original,
        "effective_preferences": effective,
        "compromise_log": log,
        "agent_preference_table": table,
        "agent_tool_stats": {"cache_hits": 0, "cache_misses": 0, "tool_errors": 0, "tool_calls_executed": 0},
        "duration": 0.0,
        "total_rounds": 0,
        "total_events": events,
        "total_steps": events,
        "agent_trace": [],
        "conversation_history": history,
    }))
}

/// The records of a task file and its plans-file lines (matched by task id), in task order.
pub fn records_bytes(tasks: &[Task], lines: &[PlanLine]) -> Result<Vec<u8>> {
    let by_id: indexmap::IndexMap<&str, &PlanLine> =
        lines.iter().map(|l| (l.task_id.as_str(), l)).collect();
    let mut out = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let Some(line) = by_id.get(t.task_id.as_str()) else {
            anyhow::bail!("task {} has no line in the plans", t.task_id);
        };
        gtb_core::pyjson::write_value(&mut out, &record(i, t, line)?)?;
        out.push(b'\n');
    }
    Ok(out)
}
