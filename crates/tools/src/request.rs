//! A tool simulation request as the release's harness sends it, read back into the call it
//! stands for.
//!
//! On a cache miss the harness (`simulators/tool_simulator.py` of GroupTravelbench) asks its
//! tool LLM, through the OpenAI client, for a `/chat/completions` reply with two messages: a
//! system message that describes the tool (`你是一个工具模拟器，需要模拟 <tool> 工具的真实返回结果。`,
//! the tool's schema and up to 8 cached examples) and a user message
//! `请为以下参数生成 <tool> 工具的模拟返回结果：` followed by `参数：` and the call's parameters as
//! `json.dumps(params, ensure_ascii=False, indent=2)`. The reply's content, stripped, is the
//! tool's answer. The request is always streamed (`"stream": true`), at temperature 0, with
//! `chat_template_kwargs` in the body when thinking is switched off.
//!
//! Only the user message carries the call; the examples of the system message are ignored
//! (they are other calls' answers). A problem is named without quoting the body: the body
//! could carry what it should not (a key pasted into a prompt), and a reply never echoes it.

use serde_json::{Map, Value};

/// The user message's opening, up to the tool's name.
const ASK_OPEN: &str = "请为以下参数生成";
/// What follows the tool's name in the user message.
const ASK_CLOSE: &str = "工具的模拟返回结果";
/// The label before the parameters.
const PARAMS_LABEL: &str = "参数：";
/// The system message's phrase before the tool's name, and after it.
const SYSTEM_OPEN: &str = "需要模拟";
const SYSTEM_CLOSE: &str = "工具的真实返回结果";

/// The longest tool name accepted (the release's are at most 21 characters).
const MAX_TOOL_NAME: usize = 64;

/// What a simulation request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SimCall {
    /// the tool's name, as the harness wrote it
    pub tool: String,
    /// the call's parameters, in the order the harness wrote them
    pub params: Map<String, Value>,
    /// `"stream": true`: the reply goes as server-sent events
    pub stream: bool,
}

/// Why a request is not a tool simulation request (the HTTP 400 message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest(pub String);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(msg: impl Into<String>) -> BadRequest {
    BadRequest(msg.into())
}

/// Read a `/chat/completions` body into the call it simulates.
pub fn parse(body: &[u8]) -> Result<SimCall, BadRequest> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        bad(format!(
            "request body is not JSON ({:?} error at line {} column {})",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    let Value::Object(body) = v else {
        return Err(bad("request body is not a JSON object"));
    };
    let stream = match body.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("stream: not a boolean")),
    };
    let messages = match body.get("messages") {
        None => return Err(bad("messages: missing")),
        Some(Value::Array(m)) if m.is_empty() => return Err(bad("messages: empty")),
        Some(Value::Array(m)) => m,
        Some(_) => return Err(bad("messages: not an array")),
    };
    let texts = message_texts(messages)?;
    let (i, user) = texts
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (role, _))| role == "user")
        .map(|(i, (_, t))| (i, t))
        .ok_or_else(|| bad("messages: no user message"))?;
    let (tool, params) = read_ask(user).map_err(|e| bad(format!("messages[{i}].content: {e}")))?;
    for (j, (role, text)) in texts.iter().enumerate() {
        if role == "system"
            && let Some((named, _)) = between(text, SYSTEM_OPEN, SYSTEM_CLOSE)
            && named != tool
        {
            return Err(bad(format!(
                "messages[{j}].content: the system message simulates another tool than \
                 messages[{i}] asks for"
            )));
        }
    }
    Ok(SimCall {
        tool: tool.to_string(),
        params,
        stream,
    })
}

/// Each message's role and text (a string, or the text parts of a list; null is empty).
fn message_texts(messages: &[Value]) -> Result<Vec<(String, String)>, BadRequest> {
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let Value::Object(m) = m else {
            return Err(bad(format!("messages[{i}]: not an object")));
        };
        let role = match m.get("role") {
            Some(Value::String(r)) => r.clone(),
            Some(_) => return Err(bad(format!("messages[{i}].role: not a string"))),
            None => return Err(bad(format!("messages[{i}].role: missing"))),
        };
        let text = match m.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts_text(parts, i)?,
            Some(_) => {
                return Err(bad(format!(
                    "messages[{i}].content: neither a string nor a list of parts"
                )));
            }
        };
        out.push((role, text));
    }
    Ok(out)
}

/// The text parts of a content list, joined.
fn parts_text(parts: &[Value], i: usize) -> Result<String, BadRequest> {
    let mut text = String::new();
    for (k, p) in parts.iter().enumerate() {
        match p.get("text") {
            Some(Value::String(t)) => text.push_str(t),
            Some(_) => {
                return Err(bad(format!(
                    "messages[{i}].content[{k}].text: not a string"
                )));
            }
            // an image or another kind of part carries no text
            None if p.is_object() => {}
            None => return Err(bad(format!("messages[{i}].content[{k}]: not an object"))),
        }
    }
    Ok(text)
}

/// The trimmed text between `open` and the next `close`, if both are there, and where the
/// text after `close` starts.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<(&'a str, usize)> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some((text[start..start + len].trim(), start + len + close.len()))
}

/// The tool and parameters of the user message.
fn read_ask(text: &str) -> Result<(&str, Map<String, Value>), String> {
    let (tool, end) = between(text, ASK_OPEN, ASK_CLOSE).ok_or_else(|| {
        format!(
            "not a tool simulation request (no \"{ASK_OPEN} <tool> {ASK_CLOSE}\" in the user \
             message)"
        )
    })?;
    let tool_ok = !tool.is_empty()
        && tool.len() <= MAX_TOOL_NAME
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !tool_ok {
        return Err("the tool's name is not a name (letters, digits, _ and - only)".into());
    }
    let after = &text[end..];
    let at = after
        .find(PARAMS_LABEL)
        .ok_or_else(|| format!("no \"{PARAMS_LABEL}\" before the parameters"))?;
    let rest = &after[at + PARAMS_LABEL.len()..];
    // the parameters are one JSON value; the request's instructions follow it
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Object(params))) => Ok((tool, params)),
        Some(Ok(_)) => Err(format!(
            "the parameters after \"{PARAMS_LABEL}\" are not an object"
        )),
        Some(Err(e)) => Err(format!(
            "the parameters after \"{PARAMS_LABEL}\" are not JSON ({:?} error at line {} \
             column {} of them)",
            e.classify(),
            e.line(),
            e.column()
        )),
        None => Err(format!("no parameters after \"{PARAMS_LABEL}\"")),
    }
}
