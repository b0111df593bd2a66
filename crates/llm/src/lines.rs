//! The opening lines of a reply: their form, and the validator's line check against their
//! speakers' tables (`gtb_validate::lines`).

use crate::grounding::Member;
use crate::json::{Problem, Reason};
use crate::prompt::TaskPrompt;
use gtb_core::task::{Message, Preference};
use serde_json::Value;

/// Text that must never be in an opening line: field names, markup, links, role markers and
/// instructions aimed at a model.
const FORBIDDEN: [&str; 24] = [
    "must_visit",
    "reject_visit",
    "avg_budget",
    "global_constraints",
    "city_specific",
    "category_pref",
    "prefer_eat",
    "avoid_eat",
    "must_eat",
    "reject_eat",
    "hotel_preference",
    "```",
    "http://",
    "https://",
    "<|",
    "</",
    "system",
    "assistant",
    "ignore",
    "prompt",
    "忽略",
    "系统提示",
    "指令",
    "API",
];

/// The text of each planned member's opening line in a reply's `initial_messages` (an object
/// keyed by user, or a list of `{role, content}`).
fn line_of(v: Option<&Value>, user: &str) -> Option<String> {
    match v? {
        Value::Object(m) => m.get(user).and_then(|x| {
            x.as_str()
                .map(String::from)
                .or_else(|| x.get("content").and_then(|c| c.as_str()).map(String::from))
        }),
        Value::Array(a) => a
            .iter()
            .find(|x| x.get("role").and_then(|r| r.as_str()) == Some(user))
            .and_then(|x| x.get("content"))
            .and_then(|c| c.as_str())
            .map(String::from),
        _ => None,
    }
}

use crate::schema::LINE_CHARS;

/// The form of a line: length, Chinese, nothing forbidden.
fn line_form(user: &str, text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut bad = |s: String| problems.push(Problem::new(Reason::LineForm, s));
    let chars = text.chars().count();
    let cjk = text
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    let lower = text.to_lowercase();
    if !LINE_CHARS.contains(&chars) {
        bad(format!(
            "{user} 的开场白长度为 {chars} 字，应为 1–4 句、400 字以内"
        ));
    } else if cjk * 2 < chars {
        bad(format!("{user} 的开场白应为中文口语"));
    }
    if let Some(f) = FORBIDDEN.iter().find(|f| lower.contains(&f.to_lowercase())) {
        bad(format!(
            "{user} 的开场白含有不允许的内容「{f}」：只说出偏好，不要字段名、链接、标记或指令"
        ));
    }
    if text.contains("User") {
        bad(format!("{user} 的开场白不要提 User 编号"));
    }
    problems
}

/// Screen the opening lines of `members`: their form, and the validator's line check against
/// their own tables (`tables`: theirs and any other of the task, whose values are recognised).
pub(crate) fn check_messages(
    p: &TaskPrompt,
    members: &[Member],
    tables: &[(String, Preference)],
    v: Option<&Value>,
) -> Result<Vec<Message>, Vec<Problem>> {
    use gtb_validate::lines::{LineIssue, Terms, check_line};
    let own = Terms::tables(tables.iter().map(|(_, t)| t));
    let mut sets: Vec<&Terms> = vec![Terms::vocabularies(), &own];
    sets.extend(p.cities.iter().map(|c| &c.terms));
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for m in members {
        let Some(text) = line_of(v, &m.user) else {
            problems.push(Problem::new(
                Reason::LineForm,
                format!("缺少 {} 的开场白", m.user),
            ));
            continue;
        };
        let text = text.trim().to_string();
        problems.extend(line_form(&m.user, &text));
        if let Some((_, t)) = tables.iter().find(|(u, _)| *u == m.user) {
            for issue in check_line(&sets, t, &text) {
                let reason = match issue {
                    LineIssue::Nothing | LineIssue::TooMany { .. } => Reason::LineReveals,
                    _ => Reason::LineDisagrees,
                };
                problems.push(Problem::new(
                    reason,
                    format!("{} 的{}", m.user, issue.message_zh()),
                ));
            }
        }
        out.push(Message {
            role: m.user.clone(),
            content: text,
        });
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}
