//! The bodies the server answers with, in the OpenAI wire format: a chat completion, the same
//! as server-sent events, the model list and errors.
//!
//! Every body is a function of the call alone: the id is a digest of the tool and its
//! parameters, `created` is 0, and the model is always `MODEL`. Nothing of the request but the
//! call's answer goes back (no header, no model name, no body excerpt).

use serde_json::{Value, json};

/// The one model this server lists and answers as.
pub const MODEL: &str = "gtb-world";

/// The completion's id: `chatcmpl-` and a digest of the call.
pub fn completion_id(tool: &str, params: &serde_json::Map<String, Value>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(tool.as_bytes());
    h.update(&[0]);
    h.update(&serde_json::to_vec(params).expect("a JSON map serialises"));
    format!("chatcmpl-{}", &h.finalize().to_hex()[..24])
}

/// A whole `chat.completion` with `content` as the assistant's message.
pub fn completion(id: &str, content: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "id": id,
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
    }))
    .expect("a JSON value serialises")
}

/// The same completion as server-sent events: the role, the content in one delta, the finish
/// reason, then `[DONE]`.
pub fn completion_events(id: &str, content: &str) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let events = [
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": content}), Value::Null),
        chunk(json!({}), json!("stop")),
    ];
    let mut out = Vec::with_capacity(content.len() + 1024);
    for e in &events {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&serde_json::to_vec(e).expect("a JSON value serialises"));
        out.extend_from_slice(b"\n\n");
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

/// `/v1/models`: the one model.
pub fn models() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "gtb"}],
    }))
    .expect("a JSON value serialises")
}

/// An error body in OpenAI's shape; `kind` is its `type` (`invalid_request_error`, ...).
pub fn error(kind: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "error": {"message": message, "type": kind, "param": null, "code": null},
    }))
    .expect("a JSON value serialises")
}
