//! A completion read out of a response body (fresh or cached), with the tokens its usage
//! reports booked.

use super::Transport;
use super::stats::Stats;
use serde_json::Value;
use std::sync::atomic::Ordering;

/// A completion, fresh or cached.
#[derive(Debug, Clone)]
pub struct Completion {
    pub content: String,
    pub finish_reason: String,
    pub cache_key: String,
    pub cached: bool,
    /// prompt tokens the server reports (0 when it does not)
    pub prompt_tokens: u64,
    /// completion tokens the server reports (0 when it does not)
    pub completion_tokens: u64,
    /// of the prompt tokens, those the server reports reusing from its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`, llama.cpp's `timings.cache_n`)
    pub prompt_tokens_cached: u64,
}

impl Transport {
    /// A completion out of a response body; books its tokens.
    pub(super) fn completion(
        &self,
        response: &str,
        key: &str,
        cached: bool,
        request_len: usize,
    ) -> Option<Completion> {
        let v: Value = serde_json::from_str(response).ok()?;
        let choice = v.get("choices")?.get(0)?;
        let content = message_text(choice.get("message")?);
        let finish_reason = choice
            .get("finish_reason")
            .and_then(|f| f.as_str())
            .unwrap_or("")
            .to_string();
        let usage = v.get("usage");
        let tok = |k: &str| {
            usage
                .and_then(|u| u.get(k))
                .and_then(|x| x.as_u64())
                .unwrap_or(0)
        };
        let reused = prompt_tokens_cached(&v).min(tok("prompt_tokens"));
        if cached {
            Stats::add(&self.stats.cached_prompt_tokens, tok("prompt_tokens"));
            Stats::add(
                &self.stats.cached_completion_tokens,
                tok("completion_tokens"),
            );
        } else {
            Stats::add(&self.stats.prompt_tokens, tok("prompt_tokens"));
            Stats::add(&self.stats.prompt_tokens_reused, reused);
            Stats::add(&self.stats.completion_tokens, tok("completion_tokens"));
            if let Some(t) = &self.tpm {
                t.refund(
                    self.estimate(request_len)
                        - (tok("prompt_tokens") + tok("completion_tokens")) as f64,
                );
            }
        }
        if !cached && !self.streaming() {
            Stats::add(&self.stats.received_pieces, tok("completion_tokens"));
        }
        Some(Completion {
            content,
            finish_reason,
            cache_key: key.to_string(),
            cached,
            prompt_tokens: tok("prompt_tokens"),
            completion_tokens: tok("completion_tokens"),
            prompt_tokens_cached: reused,
        })
    }

    /// Rough tokens of a request for the TPM bucket (~3 bytes per token over Chinese-heavy JSON)
    /// the ~3 bytes per token of the Chinese-heavy JSON): it cut the prompt off, as Ollama
    /// does beyond its context window.
    pub(super) fn warn_if_truncated(&self, prompt_tokens: u64, messages_len: usize) {
        if prompt_tokens == 0 || prompt_tokens as usize * 12 >= messages_len {
            return;
        }
        if !self.truncation_warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "llm: warning: the server counted {prompt_tokens} prompt tokens for about {} sent: it seems to cut prompts off at its context window (Ollama: OLLAMA_CONTEXT_LENGTH=16384 ollama serve, or PARAMETER num_ctx 16384 in a Modelfile)",
                messages_len / 3
            );
        }
    }
}

/// The prompt tokens a server reports reusing from its prefix cache: OpenAI's (and vLLM's,
/// DeepSeek's) `usage.prompt_tokens_details.cached_tokens`, DeepSeek's
/// `usage.prompt_cache_hit_tokens`, or llama.cpp's `timings.cache_n`; the largest said.
fn prompt_tokens_cached(v: &Value) -> u64 {
    [
        "/usage/prompt_tokens_details/cached_tokens",
        "/usage/prompt_cache_hit_tokens",
        "/timings/cache_n",
    ]
    .iter()
    .filter_map(|p| v.pointer(p).and_then(Value::as_u64))
    .max()
    .unwrap_or(0)
}

/// The text of a reply message: `content` as a string, or the text of its parts when it is a
/// list (`[{"type": "text", "text": …}, …]`, as some servers send); reasoning parts are left out.
fn message_text(msg: &Value) -> String {
    match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => {
                    let kind = o.get("type").and_then(Value::as_str).unwrap_or("text");
                    (!kind.contains("reasoning") && !kind.contains("thinking"))
                        .then(|| o.get("text").and_then(Value::as_str))
                        .flatten()
                }
                _ => None,
            })
            .collect(),
        _ => String::new(),
    }
}
