//! The release's inference records (`infer_output/.../test.jsonl`, what `multi_eval` reads):
//! one line per (task, trial) with `success`, `plan_generated`, `user_names`,
//! `effective_preferences` (the task's preferences after the applied compromises),
//! `compromise_log` and the `conversation_history`, whose Agent messages carry the plan.
//!
//! `extract_plan` finds the plan as `group_utility.extract_plan_from_conversation` does: the
//! Agent messages from the last back, each one naming both `days` and `city_segments`; in it
//! the first fenced block opened by three backticks and `json` (the capture runs from its
//! first `{` to the first `}` followed by optional whitespace and three backticks), else the
//! object around the first `"days"` (then `'days'`), found by counting braces without regard
//! to strings from the nearest `{` before it; the first candidate that parses and passes the
//! structural gate (`is_plan`) wins, else older messages are tried.

use super::is_plan;
use gtb_plan::Compromise;
use indexmap::IndexMap;
use serde_json::Value;

/// The first `}` at or after `from` that is followed by optional whitespace and three
/// backticks: where the release's lazy fence capture ends.
fn fence_end(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    (from..bytes.len()).find(|&i| {
        bytes[i] == b'}' && {
            let rest = text[i + 1..].trim_start();
            rest.starts_with("```")
        }
    })
}

/// The capture of the release's fence pattern (first match), if any.
fn fenced(text: &str) -> Option<&str> {
    let mut at = 0;
    while let Some(k) = text[at..].find("```json") {
        let open = at + k + "```json".len();
        let body = text[open..].trim_start();
        let start = text.len() - body.len();
        if body.starts_with('{')
            && let Some(end) = fence_end(text, start)
        {
            return Some(&text[start..=end]);
        }
        at = open;
    }
    None
}

/// The object around the first `pattern`, braces counted without regard to strings.
fn braced<'a>(text: &'a str, pattern: &str) -> Option<&'a str> {
    let key = text.find(pattern)?;
    let start = text[..key].rfind('{')?;
    let mut depth = 0i64;
    for (i, b) in text.bytes().enumerate().skip(start) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The plan of one Agent message, if it holds one.
fn plan_in(text: &str) -> Option<Value> {
    if !(text.contains("days") && text.contains("city_segments")) {
        return None;
    }
    let parse = |s: &str| serde_json::from_str::<Value>(s).ok().filter(is_plan);
    fenced(text)
        .and_then(parse)
        .or_else(|| braced(text, "\"days\"").and_then(parse))
        .or_else(|| braced(text, "'days'").and_then(parse))
}

/// The plan the release's evaluator scores: from the last Agent message back.
pub fn extract_plan(history: &[Value]) -> Option<Value> {
    history
        .iter()
        .rev()
        .filter(|e| e.get("role").and_then(Value::as_str) == Some("Agent"))
        .find_map(|e| e.get("content").and_then(Value::as_str).and_then(plan_in))
}

/// One inference record, as the evaluator reads it.
#[derive(Debug, Clone)]
pub struct Record {
    pub task_id: String,
    pub trial_id: i64,
    /// the members in the runner's order (`user_names`), the task's order when absent
    pub user_names: Option<Vec<String>>,
    /// member → `preference` after the compromises (unwrapped from `{role, preference, ..}`)
    pub effective: IndexMap<String, Value>,
    /// the compromises the log marks as applied
    pub compromises: Vec<Compromise>,
    /// what the evaluator makes of the record before any scoring
    pub outcome: Outcome,
}

/// The evaluator's gates (`multi_eval.evaluate_single_result`).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// `success: false` or no `effective_preferences`: every dimension errs
    Crashed,
    /// `plan_generated` false or absent: no plan is looked for
    NoPlanGenerated,
    /// no plan could be extracted from the conversation
    NoPlanFound,
    Plan(Value),
}

impl Outcome {
    /// The evaluator's error for a record without a scored plan.
    pub fn error(&self) -> Option<&'static str> {
        match self {
            Outcome::Crashed => Some("inference failed (no effective_preferences)"),
            Outcome::NoPlanGenerated => Some("plan not generated"),
            Outcome::NoPlanFound => Some("failed to extract plan from conversation"),
            Outcome::Plan(_) => None,
        }
    }
}

/// Whether a JSON line is an inference record (rather than a plans-file line).
pub fn is_record(v: &Value) -> bool {
    v.get("conversation_history").is_some() || v.get("effective_preferences").is_some()
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    }
}

impl Record {
    /// Read one record; `Err` names the field that is not what the evaluator expects.
    pub fn from_value(v: &Value) -> Result<Record, String> {
        let task_id = match v.get("task_id") {
            None => "unknown".to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(x) => return Err(format!("task_id is {x}, not a string")),
        };
        let effective: IndexMap<String, Value> = match v.get("effective_preferences") {
            Some(Value::Object(m)) => m
                .iter()
                .map(|(u, e)| (u.clone(), e.get("preference").unwrap_or(e).clone()))
                .collect(),
            None | Some(Value::Null) => IndexMap::new(),
            Some(x) => return Err(format!("effective_preferences is {x}, not an object")),
        };
        let user_names = v.get("user_names").and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        });
        let crashed = v.get("success") == Some(&Value::Bool(false)) || effective.is_empty();
        let outcome = if crashed {
            Outcome::Crashed
        } else if !truthy(v.get("plan_generated")) {
            Outcome::NoPlanGenerated
        } else {
            let history = v
                .get("conversation_history")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            extract_plan(history).map_or(Outcome::NoPlanFound, Outcome::Plan)
        };
        Ok(Record {
            task_id,
            trial_id: v.get("trial_id").and_then(Value::as_i64).unwrap_or(0),
            user_names,
            effective,
            compromises: applied_log(v),
            outcome,
        })
    }
}

/// The applied entries of `compromise_log` as compromises.
fn applied_log(v: &Value) -> Vec<Compromise> {
    let Some(log) = v.get("compromise_log").and_then(Value::as_array) else {
        return Vec::new();
    };
    log.iter()
        .filter(|e| e.get("applied") == Some(&Value::Bool(true)))
        .filter_map(|e| {
            Some(Compromise {
                user: e.get("user")?.as_str()?.to_string(),
                path: e.get("field_path")?.as_str()?.to_string(),
                value: e.get("new_value").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agent(text: &str) -> Value {
        json!({"type": "message", "role": "Agent", "content": text})
    }

    #[test]
    fn extraction_follows_the_release() {
        let plan =
            r#"{"days": [{"day": 1, "city_segments": [{"city": "北京市", "activities": []}]}]}"#;
        // a json fence
        let h = [agent(&format!("方案：\n```json\n{plan}\n```\n"))];
        assert!(extract_plan(&h).is_some());
        // no fence: the object around "days"
        let h = [agent(&format!("方案如下 {plan} 谢谢"))];
        assert!(extract_plan(&h).is_some());
        // the plan wrapped in another object is still found around "days"
        let h = [agent(&format!("{{\"plan\": {plan}}}"))];
        assert_eq!(extract_plan(&h).unwrap()["days"][0]["day"], 1);
        // a broken last message falls back to an older one; users are never read
        let h = [
            agent(&format!("```json\n{plan}\n```")),
            json!({"type": "message", "role": "User1", "content": plan}),
            agent("days city_segments but no JSON"),
        ];
        assert!(extract_plan(&h).is_some());
        // the structural gate: an empty days list is no plan
        let h = [agent(r#"{"days": [], "city_segments": []}"#)];
        assert!(extract_plan(&h).is_none());
        // a plain fence without the json tag: the brace fallback still finds it
        let h = [agent(&format!("```\n{plan}\n```"))];
        assert!(extract_plan(&h).is_some());
    }

    #[test]
    fn gates() {
        let ok = json!({"task_id": "t", "success": true, "plan_generated": true,
            "effective_preferences": {"User1": {"preference": {"global_constraints": {}}}},
            "conversation_history": [agent("nothing")]});
        let r = Record::from_value(&ok).unwrap();
        assert!(matches!(r.outcome, Outcome::NoPlanFound));
        let mut crashed = ok.clone();
        crashed["success"] = json!(false);
        assert!(matches!(
            Record::from_value(&crashed).unwrap().outcome,
            Outcome::Crashed
        ));
        let mut none = ok.clone();
        none["plan_generated"] = json!(false);
        assert!(matches!(
            Record::from_value(&none).unwrap().outcome,
            Outcome::NoPlanGenerated
        ));
    }
}
