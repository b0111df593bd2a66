//! What the fake reads from a request: its turn, whether it streams, its prompt tokens, its
//! grounding (the first user message) and a per-member request's member part.

use serde_json::Value;

/// Whether a request is the first turn of its conversation: no reply of the model in it, and
/// its last message is data (a grounding or a member's part, JSON) rather than a correction.
pub(crate) fn is_first_turn(body: &Value) -> bool {
    let msgs = arr(body, "messages");
    let role = |m: &Value| m.get("role").and_then(|r| r.as_str()).map(String::from);
    !msgs.iter().any(|m| role(m).as_deref() == Some("assistant"))
        && msgs.last().is_some_and(|m| {
            m.get("content")
                .and_then(|c| c.as_str())
                .is_some_and(|c| serde_json::from_str::<Value>(c).is_ok_and(|v| v.is_object()))
        })
}

/// Whether the request asks for a streamed reply.
pub(crate) fn wants_stream(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool) == Some(true)
}

/// The prompt tokens of a request as the fake counts them: its messages' characters / 2 + 1.
pub(crate) fn prompt_tokens(req: &Value) -> u64 {
    let chars: usize = arr(req, "messages")
        .iter()
        .map(|m| {
            m.get("content")
                .and_then(|c| c.as_str())
                .map(|s| s.chars().count())
                .unwrap_or(0)
        })
        .sum();
    chars as u64 / 2 + 1
}

/// The items of the array member `k` (none when it is missing or not an array).
pub(crate) fn arr<'a>(v: &'a Value, k: &str) -> Vec<&'a Value> {
    v.get(k)
        .and_then(|x| x.as_array())
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// A string value as an owned string (empty when it is not a string).
pub(crate) fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// A candidate's field: column `i` of a row (`["name", …]`), or member `key` of an object.
pub(crate) fn col(v: &Value, i: usize, key: &str) -> String {
    match v {
        Value::Array(r) => r.get(i).map(s).unwrap_or_default(),
        _ => s(&v[key]),
    }
}

/// The request's grounding context: the JSON of its first user message (Null without one).
pub(crate) fn request_context(msgs: &[&Value]) -> Value {
    msgs.iter()
        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_str())
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null)
}

/// The member part of a per-member request (gtb's `member::first_turn`): the JSON of its
/// second user message when it names a `member`.
pub(crate) fn member_part(msgs: &[&Value]) -> Option<Value> {
    msgs.iter()
        .filter(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
        .nth(1)
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_str())
        .and_then(|c| serde_json::from_str::<Value>(c).ok())
        .filter(|v| v.get("member").is_some())
}
