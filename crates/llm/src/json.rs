//! A reply's JSON and what is wrong with it: the object pulled out of the reply's text, and the
//! problems the checks find, each with the reason the run report counts it under.

use serde_json::Value;

/// Why a reply was rejected (`llm_report.json` counts rejections per reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// no JSON object in the reply
    Json,
    /// cut off at the completion budget
    Truncated,
    /// a member, city or field missing or of the wrong type
    Shape,
    /// a sight or food that is not a candidate of its city
    UnknownName,
    /// a mode, hotel category or attraction category outside its vocabulary
    Vocabulary,
    /// avg_budget or intensity outside its plausible range, or under min_budget
    Scalar,
    /// a firm member's budget under the cheapest trip the firm members' transport wishes leave
    /// (or those wishes leave no trip at all): the witness search would prove it infeasible
    Trip,
    /// a copy strategy not honoured, or a member copying another's city preferences
    Strategy,
    /// an opening line missing, too long, not Chinese, or with forbidden text
    LineForm,
    /// an opening line that contradicts its speaker's table
    LineDisagrees,
    /// an opening line that voices none (or too many) of its speaker's preferences
    LineReveals,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Json => "json",
            Reason::Truncated => "truncated",
            Reason::Shape => "shape",
            Reason::UnknownName => "unknown_name",
            Reason::Vocabulary => "vocabulary",
            Reason::Scalar => "scalar_range",
            Reason::Trip => "trip",
            Reason::Strategy => "strategy",
            Reason::LineForm => "line_form",
            Reason::LineDisagrees => "line_disagrees",
            Reason::LineReveals => "line_reveals",
        }
    }
}

/// One problem of a reply: its reason and what the correction turn tells the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub reason: Reason,
    pub text: String,
}

impl Problem {
    pub fn new(reason: Reason, text: impl Into<String>) -> Problem {
        Problem {
            reason,
            text: text.into(),
        }
    }
}

/// Candidate `{…}` spans tried in prose (a reply with more braces than that is not JSON).
const MAX_SPANS: usize = 64;

/// Pull the JSON object out of a reply: bare, fenced (```json), after a `<think>` block, or the
/// first balanced `{...}` span of the prose that parses as an object (prose may hold braces of
/// its own before the JSON). The error says why, for the correction turn.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let mut t = text.trim();
    if let Some(end) = t.rfind("</think>") {
        t = t[end + "</think>".len()..].trim();
    }
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Ok(v);
    }
    // fenced blocks
    let mut rest = t;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        if let Ok(v) = serde_json::from_str::<Value>(body[..end].trim()) {
            return Ok(v);
        }
        rest = &body[end + 3..];
    }
    // balanced spans, from each opening brace in turn
    let mut first_failure: Option<(String, String)> = None;
    let mut spans = 0;
    for (start, _) in t.match_indices('{') {
        let Some(end) = balanced_end(t.as_bytes(), start) else {
            // an object that never closes: the reply was cut off
            return Err("回复中的 JSON 不完整（可能被截断），请输出更紧凑的完整 JSON".into());
        };
        match serde_json::from_str::<Value>(&t[start..=end]) {
            Ok(v @ Value::Object(_)) => return Ok(v),
            Ok(_) => {}
            Err(e) => {
                if first_failure.is_none() {
                    let shown: String = t[start..=end].chars().take(40).collect();
                    let msg = e.to_string();
                    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                    first_failure = Some((shown, msg));
                }
            }
        }
        spans += 1;
        if spans >= MAX_SPANS {
            break;
        }
    }
    match first_failure {
        Some((shown, msg)) => Err(format!(
            "回复中找不到可解析的 JSON 对象：花括号内的「{shown}」不是 JSON（{msg}）。只输出一个 JSON 对象，JSON 前后不要有含花括号的文字"
        )),
        None => Err("回复中没有 JSON 对象".into()),
    }
}

/// The index of the brace closing the one at `start` (strings and escapes respected).
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_think_blocks_and_prose() {
        assert_eq!(extract_json("{\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(
            extract_json("<think>嗯 {x}</think>\n{\"a\": 2}").unwrap()["a"],
            2
        );
        assert_eq!(
            extract_json("好的：\n```json\n{\"a\": 3}\n```\n").unwrap()["a"],
            3
        );
        assert_eq!(
            extract_json("结果如下 {\"a\": {\"b\": \"}\"}} 完毕").unwrap()["a"]["b"],
            "}"
        );
        assert!(extract_json("{\"a\": [1, 2").unwrap_err().contains("截断"));
        assert!(extract_json("没有").is_err());
    }

    #[test]
    fn issue13_15_prose_with_braces_before_unfenced_json() {
        let reply = "好的，我会按 {成员} 的顺序输出，格式为 {preferences, initial_messages}：\n{\"preferences\": {\"User1\": {}}, \"initial_messages\": {}}";
        let v = extract_json(reply).unwrap();
        assert!(v["preferences"]["User1"].is_object(), "{v}");
        // nothing parses: the correction turn is told which braces and why
        let e = extract_json("注意 {成员} 与 {键名}").unwrap_err();
        assert!(
            e.contains("{成员}") && e.contains("不是 JSON") && e.contains("花括号"),
            "{e}"
        );
    }
}
