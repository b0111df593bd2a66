//! `[llm]`: the LLM generator's endpoint and request shape, concurrency and rate limits,
//! retries and corrections, its response cache, granularity and prices.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The LLM generator (`run.generator = "openai"`): any OpenAI-compatible
/// `/v1/chat/completions` endpoint (OpenAI, DeepSeek, DashScope, vLLM, llama.cpp, Ollama).
/// The API key is never part of the config: it is read from the environment variable named by
/// `api_key_env` and is written to no file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Llm {
    /// API base URL ending in `/v1`; "" = `$OPENAI_BASE_URL`, else `https://api.openai.com/v1`
    /// (recorded without credentials)
    #[serde(serialize_with = "public_url")]
    pub base_url: String,
    /// model name sent in every request; "" = `$OPENAI_MODEL` (required for the LLM generator)
    pub model: String,
    /// name of the environment variable holding the API key (none needed by local servers)
    pub api_key_env: String,
    /// header that carries the key as is (Azure: `api-key`); "" = `Authorization: Bearer KEY`
    pub api_key_header: String,
    /// extra request headers, `"Name: value"`; the values are treated as secrets (never
    /// recorded: not in the manifest, reports, logs or cache entries; in cache keys as a digest)
    #[serde(skip_serializing)]
    pub headers: Vec<String>,
    /// extra query parameters of every request, `"name=value"` (Azure: `api-version=…`); part of
    /// the endpoint (so of the cache key); not recorded, values of names that look secret
    /// (key, token, secret, signature, password) are redacted from every record
    #[serde(skip_serializing)]
    pub query: Vec<String>,
    /// extra top-level members of every request body, as a JSON object (`{"enable_thinking":
    /// false}` for Qwen3 on DashScope, `{"chat_template_kwargs": {…}}` for vLLM); part of the
    /// cache key
    pub extra_body: String,
    pub temperature: f64,
    /// completion budget per request (one request returns every table of a task)
    pub max_tokens: u32,
    /// the body member carrying it: `auto` (max_tokens, switching to max_completion_tokens when
    /// the server asks for it), `max_tokens` or `max_completion_tokens` (OpenAI reasoning models)
    pub max_tokens_param: String,
    /// `auto` (json_schema, falling back to json_object, then text), `json_schema`, `json_object` or `text`
    pub response_format: String,
    /// send a per-request `seed` derived from (run seed, task, attempt, turn)
    pub send_seed: bool,
    /// requests in flight at most (lowered adaptively on HTTP 429)
    pub concurrency: usize,
    /// requests per minute, 0 = unlimited
    pub requests_per_minute: u32,
    /// (estimated) tokens per minute, 0 = unlimited
    pub tokens_per_minute: u32,
    /// seconds the server may stay silent before a request is abandoned and retried (a
    /// streamed reply that keeps coming is never cut off; a plain reply must arrive within it)
    pub timeout_secs: u64,
    /// stream replies (server-sent events), falling back to plain replies when the server
    /// refuses; the cache and the output are the same either way
    pub stream: bool,
    /// the server's context window in tokens per request; 0 = ask the server (llama.cpp
    /// `/props`, vLLM `/v1/models`, Ollama `/api/ps` or `/api/show`). Prompts are fitted to it
    pub context_tokens: u32,
    /// retries of one request on 5xx, timeouts and connection errors (429s: see below)
    pub max_retries: u32,
    /// seconds the run may spend paused by rate limits (HTTP 429 with or without Retry-After):
    /// rate-limited requests are retried until then, so a rate limit never changes the output;
    /// past it the run stops with a resumable error
    pub rate_limit_budget_secs: u64,
    /// first back-off after a 5xx or connection error, milliseconds (doubles, with jitter)
    pub backoff_ms: u64,
    /// correction turns per attempt when a reply does not parse or names unknown items
    pub max_corrections: u32,
    /// stop the run when this share of the recent requests failed for good
    pub max_error_rate: f64,
    /// attraction candidates offered per city (most popular first, open during the trip)
    pub max_attractions: usize,
    /// content-addressed response cache (shared by all runs; never holds the key)
    pub cache_dir: PathBuf,
    /// answer from the cache alone; a miss stops the run
    pub offline_replay: bool,
    /// ask the server again instead of replaying a cached reply that the checks reject (the
    /// new reply replaces the cached one)
    pub refresh_rejected: bool,
    /// write template opening lines when the model's still fail the checks after the corrections
    pub message_fallback: bool,
    /// `member` (one request per member, in generation order: the paper's way) or `task` (one
    /// request for the whole group)
    pub granularity: String,
    /// prices per million prompt / completion tokens (for the cost in the manifest and report)
    pub price_input_per_mtok: f64,
    pub price_output_per_mtok: f64,
    pub currency: String,
}

impl Default for Llm {
    fn default() -> Self {
        Llm {
            base_url: String::new(),
            model: String::new(),
            api_key_env: "OPENAI_API_KEY".into(),
            api_key_header: String::new(),
            headers: Vec::new(),
            query: Vec::new(),
            extra_body: String::new(),
            temperature: 0.7,
            max_tokens: 8192,
            max_tokens_param: "auto".into(),
            response_format: "auto".into(),
            send_seed: true,
            concurrency: 16,
            requests_per_minute: 0,
            tokens_per_minute: 0,
            timeout_secs: 180,
            stream: true,
            context_tokens: 0,
            max_retries: 6,
            rate_limit_budget_secs: 3600,
            backoff_ms: 1000,
            max_corrections: 2,
            max_error_rate: 0.5,
            max_attractions: 40,
            cache_dir: "llm_cache".into(),
            offline_replay: false,
            refresh_rejected: false,
            message_fallback: true,
            granularity: "member".into(),
            price_input_per_mtok: 0.0,
            price_output_per_mtok: 0.0,
            currency: "USD".into(),
        }
    }
}

/// A base URL as records show it: without credentials.
fn public_url<S: serde::Serializer>(url: &str, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::redact::public_url(url))
}
