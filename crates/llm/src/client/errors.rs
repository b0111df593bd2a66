//! Why a call failed, and the messages of what the server answered: statuses no retry cures,
//! a prompt too long for the server's context, other statuses worth a retry.

use super::Transport;
use super::http::Reply;
use super::limits::retry_after;
use super::stats::Stats;
use serde_json::Value;

/// Why a call failed.
#[derive(Debug, Clone)]
pub enum CallError {
    /// this request failed for good; the task attempt fails, the run goes on
    Failed(String),
    /// the run must stop
    Fatal(String),
}

impl CallError {
    pub fn message(self) -> String {
        match self {
            CallError::Failed(m) | CallError::Fatal(m) => m,
        }
    }
}

impl Transport {
    /// A 400 about the prompt's length, in the words of llama.cpp (`exceed_context_size_error`,
    /// `n_prompt_tokens`, `n_ctx`), vLLM and OpenAI ("maximum context length is N tokens ...
    /// resulted in M tokens"): a message naming both numbers and the fix. None for other 400s.
    pub(super) fn context_error(&self, text: &str, label: &str) -> Option<String> {
        let lower = text.to_lowercase();
        if !(lower.contains("exceed_context_size")
            || lower.contains("context length")
            || lower.contains("context size")
            || lower.contains("context window"))
        {
            return None;
        }
        Stats::add(&self.stats.context_overflows, 1);
        let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let e = &v["error"];
        let numbers = match (e["n_prompt_tokens"].as_u64(), e["n_ctx"].as_u64()) {
            (Some(p), Some(c)) => format!(
                "the request has {p} prompt tokens, the server's context is {c} per request"
            ),
            _ => format!(
                "the server said: {}",
                text.chars().take(300).collect::<String>()
            ),
        };
        Some(format!(
            "{label}: the server refused the request for its length ({numbers}). gtb did not know the window: pass --context-tokens N (llama.cpp: -c divided by -np; vLLM: --max-model-len; Ollama: OLLAMA_CONTEXT_LENGTH) so that prompts are fitted to it, or start the server with a larger context, or lower --max-tokens / llm.max_attractions"
        ))
    }

    /// Errors no retry can cure: bad key, no money, wrong URL or model.
    pub(super) fn fatal_status(&self, status: u16, snippet: &str) -> CallError {
        Stats::add(&self.stats.http_other, 1);
        let url = gtb_core::redact::public_url(&self.s.endpoint);
        let m = match status {
            401 | 403 => {
                let key_note = if self.s.key.is_some() {
                    format!("check the key in ${}", self.s.key_env)
                } else {
                    format!(
                        "no key was sent: set ${} (or --api-key-env NAME)",
                        self.s.key_env
                    )
                };
                format!(
                    "authentication failed at {url} (HTTP {status}): {key_note}. Server said: {snippet}"
                )
            }
            402 => format!("quota or balance exhausted at {url} (HTTP 402): {snippet}"),
            _ => format!(
                "{url} answered HTTP {status}: check the base URL (it should end in /v1) and the model name {:?}. Server said: {snippet}",
                self.s.model
            ),
        };
        self.set_fatal(m.clone());
        CallError::Fatal(m)
    }

    /// Another status, worth a retry: counted, and an overloaded server's Retry-After holds
    /// everybody, like a 429's. The failure's description.
    pub(super) fn other_status(&self, r: &Reply, snippet: &str) -> Result<String, CallError> {
        let status = r.status;
        if status >= 500 {
            Stats::add(&self.stats.http_5xx, 1);
        } else {
            Stats::add(&self.stats.http_other, 1);
        }
        if let Some(w) = retry_after(&r.headers).filter(|_| status == 503) {
            self.pause_for(w, "HTTP 503 Retry-After")?;
        }
        Ok(format!("HTTP {status}: {snippet}"))
    }
}

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
