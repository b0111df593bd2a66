//! Streamed replies (server-sent events): the chunks of a `"stream": true` chat completion are
//! put back together into the `chat.completion` body a non-streamed request would have got, so
//! that the cache, the parser and the accounting see one shape whichever way a reply came.
//!
//! The wire format (OpenAI, vLLM, llama.cpp, Ollama): lines `data: <json>` separated by blank
//! lines, ending with `data: [DONE]`; each chunk has `choices[0].delta.content` (a piece of the
//! text; the first may hold only the role, reasoning pieces are not content) and the last
//! choice chunk its `finish_reason`; with `stream_options.include_usage` one more chunk carries
//! `usage` with `choices: []`.

use serde_json::{Value, json};

/// The stream members added to a request body (the cache key is taken without them: a
/// streamed and a plain reply to one request are the same answer).
pub const STREAM_MEMBERS: &str = ",\"stream\":true,\"stream_options\":{\"include_usage\":true}";

/// A request body with the stream members (`body` ends with its closing brace).
pub fn streaming_body(body: &str) -> String {
    let mut b = body.to_string();
    b.pop();
    b.push_str(STREAM_MEMBERS);
    b.push('}');
    b
}

/// Collects the events of one streamed reply.
#[derive(Debug, Default)]
pub struct Assembly {
    pending: Vec<u8>,
    content: String,
    finish_reason: Option<String>,
    usage: Option<Value>,
    /// llama.cpp's `timings` (its `cache_n`: prompt tokens reused from the slot's cache)
    timings: Option<Value>,
    id: Option<Value>,
    model: Option<Value>,
    error: Option<String>,
    pub done: bool,
    /// content pieces received (about one token each)
    pub pieces: u64,
}

impl Assembly {
    /// Feed received bytes; returns the content pieces they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> u64 {
        self.pending.extend_from_slice(bytes);
        let before = self.pieces;
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            self.line(line.trim_end_matches(['\n', '\r']));
        }
        self.pieces - before
    }

    fn line(&mut self, line: &str) {
        let Some(data) = line.strip_prefix("data:") else {
            return; // blank separators, comments (`: keep-alive`), `event:` / `id:` lines
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return;
        };
        if let Some(e) = v.get("error") {
            self.error = Some(e.to_string());
            return;
        }
        self.id = self.id.take().or_else(|| v.get("id").cloned());
        self.model = self.model.take().or_else(|| v.get("model").cloned());
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        if let Some(t) = v.get("timings").filter(|t| t.is_object()) {
            self.timings = Some(t.clone());
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        if let Some(piece) = choice.pointer("/delta/content").and_then(Value::as_str)
            && !piece.is_empty()
        {
            self.content.push_str(piece);
            self.pieces += 1;
        }
        if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(f.to_string());
        }
    }

    /// The `chat.completion` body of the reply, or why there is none (an error event, or a
    /// stream that ended before its reply did).
    pub fn finish(mut self) -> Result<String, String> {
        if !self.pending.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).to_string();
            self.line(rest.trim());
        }
        if let Some(e) = self.error {
            return Err(format!("the stream carried an error: {e}"));
        }
        let Some(finish_reason) = self.finish_reason else {
            return Err(format!(
                "the stream ended after {} pieces without a finish_reason",
                self.pieces
            ));
        };
        let mut body = json!({
            "id": self.id.unwrap_or(Value::Null),
            "object": "chat.completion",
            "model": self.model.unwrap_or(Value::Null),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.content}, "finish_reason": finish_reason}],
        });
        if let Some(u) = self.usage {
            body["usage"] = u;
        }
        if let Some(t) = self.timings {
            body["timings"] = t;
        }
        Ok(body.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_events_assemble_into_a_completion() {
        // split at awkward places, as the network does
        let wire = concat!(
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"id\":\"c1\",\"model\":\"m\"}\n\n",
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"{\\\"a\\\"\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\": 1}\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":6,\"prompt_tokens\":26,\"total_tokens\":32}}\n\n",
            "data: [DONE]\n\n"
        );
        let mut a = Assembly::default();
        let mut pieces = 0;
        for chunk in wire.as_bytes().chunks(7) {
            pieces += a.feed(chunk);
        }
        assert!(a.done);
        assert_eq!(pieces, 2);
        let v: Value = serde_json::from_str(&a.finish().unwrap()).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "{\"a\": 1}");
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
        assert_eq!(v["usage"]["prompt_tokens"], 26);
        assert_eq!(v["id"], "c1");
    }

    #[test]
    fn cut_streams_and_error_events_are_errors() {
        let mut a = Assembly::default();
        a.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
        assert!(a.finish().unwrap_err().contains("without a finish_reason"));
        let mut a = Assembly::default();
        a.feed(b"data: {\"error\":{\"message\":\"boom\"}}\n\n");
        assert!(a.finish().unwrap_err().contains("boom"));
        assert_eq!(
            streaming_body("{\"model\":\"m\"}"),
            "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
        );
    }
}
