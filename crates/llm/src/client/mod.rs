//! The transport: one OpenAI-compatible chat-completions client with a response cache in
//! front, an adaptive concurrency limit (AIMD: +1 per window of successes, halved on HTTP 429),
//! optional request- and token-per-minute buckets, Retry-After, exponential back-off with
//! jitter for 5xx / timeouts / connection errors, response-format negotiation
//! (json_schema -> json_object -> text) and a sticky fatal state for errors that retrying
//! cannot cure (authentication, quota, unknown model or URL, too many failures, cache miss in
//! offline replay). The API key lives only in the `Authorization` header (or the header named by
//! `key_header`) and is redacted from every response body and error message before anything is
//! stored or shown; so are the values of extra headers and secret-looking query parameters.
//!
//! Rate limits never change the output: a 429 is retried for as long as the run's rate-limit
//! budget lasts (its Retry-After holds every new request to the endpoint, not just the one that
//! got it), and when the budget runs out the run stops with a resumable error instead of
//! failing the task (which would regenerate it and so change the dataset).
//!
//! The pieces: `variant` (the request body and what negotiation moves it to: response format,
//! token-budget field, streaming), `http` (sending within the limits, the exchange, the window
//! probe), `completion` (a reply read and its tokens booked), `limits` (AIMD concurrency,
//! request and token buckets, rate-limit pauses, Retry-After, back-off), `errors` (why a call
//! failed, statuses no retry cures), `stats` (the run's counters, the redactor).

mod completion;
mod errors;
mod http;
mod limits;
mod stats;
mod variant;

pub use completion::Completion;
pub use errors::CallError;
pub use stats::{Redactor, Stats};
pub use variant::{Format, TokenParam, Variant};

use super::cache::{self, Cache, Entry};
use limits::{Aimd, Bucket, Pause};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

pub struct Settings {
    /// the chat-completions URL, query string included
    pub endpoint: String,
    pub model: String,
    pub key: Option<String>,
    pub key_env: String,
    /// header that carries the key as is (Azure: `api-key`); None = `Authorization: Bearer`
    pub key_header: Option<String>,
    /// extra request headers (name, value); the values are secrets to every record
    pub headers: Vec<(String, String)>,
    /// extra top-level body members, serialised as `,"k":v,...` (empty: none)
    pub extra_body: String,
    pub prompt_version: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub token_param: TokenParam,
    /// ask for streamed replies (falling back to plain ones when the server refuses)
    pub stream: bool,
    /// switch to `max_completion_tokens` when the server rejects `max_tokens`
    pub negotiate_token_param: bool,
    pub send_seed: bool,
    pub format: Format,
    /// try weaker formats when the server rejects the requested one
    pub negotiate: bool,
    pub concurrency: usize,
    pub rpm: u32,
    pub tpm: u32,
    pub timeout: Duration,
    pub max_retries: u32,
    pub backoff: Duration,
    /// wall time the run may spend paused by rate limits before it stops (resumable)
    pub rate_limit_budget: Duration,
    pub max_error_rate: f64,
    pub offline_replay: bool,
}

pub struct Transport {
    pub s: Settings,
    client: reqwest::Client,
    cache: Cache,
    pub redact: Redactor,
    aimd: Aimd,
    rpm: Option<Bucket>,
    tpm: Option<Bucket>,
    format: AtomicU8,
    token_param: AtomicU8,
    /// replies are streamed (until the server refuses)
    streaming: std::sync::atomic::AtomicBool,
    pause: Mutex<Pause>,
    /// what identifies the endpoint in cache keys: the URL, plus a digest of the extra headers
    key_scope: String,
    truncation_warned: std::sync::atomic::AtomicBool,
    /// the latest transient failures (for the report: why requests were retried)
    transient: Mutex<VecDeque<String>>,
    fatal: Mutex<Option<String>>,
    window: Mutex<VecDeque<bool>>,
    /// body members the learnt server needs to reuse prompt prefixes (llama.cpp:
    /// `cache_prompt`), sent but not part of the cache key
    server_members: std::sync::OnceLock<&'static str>,
    pub stats: std::sync::Arc<Stats>,
}

/// What llama.cpp's server is sent so that it keeps a slot's prompt and computes only what
/// follows the longest prefix it shares with the request (its slots are then picked by prompt
/// similarity: no `id_slot` is pinned, which would queue concurrent tasks behind one slot).
pub const LLAMA_CPP_MEMBERS: &str = ",\"cache_prompt\":true";

/// Outcomes looked at by the error-rate stop.
const WINDOW: usize = 40;
const WINDOW_MIN: usize = 20;

impl Transport {
    pub fn new(
        s: Settings,
        cache_dir: &std::path::Path,
        stats: std::sync::Arc<Stats>,
    ) -> anyhow::Result<Transport> {
        // no whole-request timeout: a streamed reply may take long and is cut off only when the
        // server falls silent (`send` times each wait instead)
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(s.timeout))
            // a fresh connection per request: llama.cpp's server closes a connection after a
            // streamed reply without saying so, and a request sent on it failed before the
            // server saw it (a retry the server never counted); a connection costs little
            // beside a completion
            .pool_max_idle_per_host(0)
            .user_agent(concat!("gtb/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let secrets = s
            .key
            .iter()
            .map(String::as_str)
            .chain(s.headers.iter().map(|(_, v)| v.as_str()))
            .chain(gtb_core::redact::url_secrets(&s.endpoint));
        Ok(Transport {
            redact: Redactor::new(secrets),
            aimd: Aimd::new(s.concurrency),
            rpm: Bucket::new(s.rpm),
            tpm: Bucket::new(s.tpm),
            format: AtomicU8::new(s.format as u8),
            token_param: AtomicU8::new(s.token_param as u8),
            streaming: std::sync::atomic::AtomicBool::new(s.stream),
            pause: Mutex::new(Pause::default()),
            key_scope: key_scope(&s.endpoint, &s.headers),
            truncation_warned: Default::default(),
            transient: Mutex::new(VecDeque::new()),
            fatal: Mutex::new(None),
            window: Mutex::new(VecDeque::new()),
            server_members: std::sync::OnceLock::new(),
            cache: Cache::new(cache_dir),
            client,
            stats,
            s,
        })
    }

    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().expect("fatal").clone()
    }
    pub fn set_fatal(&self, msg: String) {
        let mut f = self.fatal.lock().expect("fatal");
        if f.is_none() {
            *f = Some(self.redact.clean(&msg));
        }
    }
    pub fn concurrency(&self) -> usize {
        self.aimd.current()
    }

    /// Book the final outcome of a request or task attempt; stop the run when too many of the
    /// recent ones failed.
    pub fn outcome(&self, ok: bool, what: &str) {
        let mut w = self.window.lock().expect("window");
        w.push_back(ok);
        if w.len() > WINDOW {
            w.pop_front();
        }
        let bad = w.iter().filter(|x| !**x).count();
        if w.len() >= WINDOW_MIN && bad as f64 > self.s.max_error_rate * w.len() as f64 {
            let st = &self.stats;
            let rejected = Stats::get(&st.rejected_replies);
            // rejected replies are cached like the others: a plain rerun would replay them
            let resume = if rejected > 0 {
                "Responses received so far are cached, rejected ones included, so a plain rerun replays the same rejected replies: fix the cause first (a stronger model, --max-tokens, llm.message_fallback), then rerun with --refresh-rejected to ask again for every cached reply the checks reject (or delete the entries named by rejections[].cache_key in llm_report.json)"
            } else {
                "Responses received so far are cached; rerun to resume"
            };
            self.set_fatal(format!(
                "stopping early: {bad} of the last {} LLM requests or task attempts failed (last: {what}); HTTP 429: {}, 5xx: {}, other HTTP errors: {}, timeouts: {}, connection errors: {}, rejected replies: {rejected}. {resume}",
                w.len(),
                Stats::get(&st.http_429),
                Stats::get(&st.http_5xx),
                Stats::get(&st.http_other),
                Stats::get(&st.timeouts),
                Stats::get(&st.connection_errors),
            ));
        }
    }

    /// The request body of an ask (`messages` already serialised) in a variant.
    fn ask_body(&self, messages: &str, ask: &Ask<'_>, v: Variant) -> String {
        self.body(messages, ask.schema, ask.seed, ask.max_tokens, v)
    }

    /// The cache key of a request body.
    fn key(&self, body: &str) -> String {
        cache::key(&self.key_scope, &self.s.prompt_version, body)
    }

    /// One chat completion: from the cache (unless `use_cache` is false: the answer is asked
    /// for again and replaces the cached one), else from the server (with retries).
    pub async fn chat(&self, ask: &Ask<'_>, use_cache: bool) -> Result<Completion, CallError> {
        let messages = serde_json::to_string(ask.messages).expect("messages serialise");
        for v in self.lookup_variants().into_iter().filter(|_| use_cache) {
            let body = self.ask_body(&messages, ask, v);
            let key = self.key(&body);
            if let Some(e) = self.cache.get(&key)
                && let Some(c) = self.completion(&e.response, &key, true, body.len())
            {
                Stats::add(&self.stats.cached, 1);
                return Ok(c);
            }
        }
        if self.s.offline_replay {
            let body = self.ask_body(&messages, ask, self.variant());
            let msg = format!(
                "--offline-replay: no cached response for {} (cache entry {}); run without --offline-replay to fetch it",
                ask.label,
                self.cache.path(&self.key(&body)).display()
            );
            self.set_fatal(msg.clone());
            return Err(CallError::Fatal(msg));
        }
        let r = self.fetch(&messages, ask).await;
        // successes are booked per task attempt (a model that answers garbage must count as failing)
        if let Err(CallError::Failed(m)) = &r {
            Stats::add(&self.stats.failed, 1);
            self.outcome(false, m);
        }
        r
    }
    /// The latest transient failures (oldest first), already redacted.
    pub fn transient_errors(&self) -> Vec<String> {
        self.transient
            .lock()
            .expect("transient")
            .iter()
            .cloned()
            .collect()
    }

    /// Keep a completion in the cache before anything else looks at it: a crash loses nothing
    /// paid for.
    async fn store(
        &self,
        c: Completion,
        body: String,
        label: &str,
        response: String,
    ) -> Result<Completion, CallError> {
        let request = serde_json::value::RawValue::from_string(body).expect("the body is JSON");
        let entry = Entry {
            key: c.cache_key.clone(),
            endpoint: gtb_core::redact::public_url(&self.s.endpoint),
            prompt_version: self.s.prompt_version.clone(),
            label: label.to_string(),
            request,
            status: 200,
            response,
        };
        let cache = self.cache.clone();
        let stored = tokio::task::spawn_blocking(move || cache.put(&entry)).await;
        if let Ok(Err(e)) | Err(e) = stored.map_err(std::io::Error::other) {
            self.set_fatal(format!(
                "cannot write the LLM cache under {}: {e}",
                self.cache.root.display()
            ));
            return Err(CallError::Fatal(self.fatal().unwrap_or_default()));
        }
        Stats::add(&self.stats.received, 1);
        self.aimd.success();
        Ok(c)
    }

    async fn fetch(&self, messages: &str, ask: &Ask<'_>) -> Result<Completion, CallError> {
        let label = ask.label;
        // transient failures are retried max_retries times; 429s for as long as the
        // rate-limit budget lasts (giving up would regenerate the task: another dataset)
        let (mut retry, mut limited) = (0u32, 0u32);
        loop {
            if let Some(f) = self.fatal() {
                return Err(CallError::Fatal(f));
            }
            let v = self.variant();
            let body = self.ask_body(messages, ask, v);
            let key = self.key(&body);
            let streaming = self.streaming();
            let r = match self.send(&body, streaming).await? {
                Ok(r) => r,
                Err(last) => {
                    retry = self.retry_or_fail(retry, label, &last).await?;
                    continue;
                }
            };
            let text = self.redact.clean(&r.text);
            let snippet: String = text.chars().take(300).collect();
            let too_long = [400, 413]
                .contains(&r.status)
                .then(|| self.context_error(&text, label))
                .flatten();
            let last = match r.status {
                200..=299 => match self.completion(&text, &key, false, body.len()) {
                    Some(c) => {
                        self.warn_if_truncated(c.prompt_tokens, messages.len());
                        return self.store(c, body, label, text).await;
                    }
                    None => {
                        // a 200 whose body is not a completion (cut off, not JSON): transient
                        Stats::add(&self.stats.malformed_bodies, 1);
                        format!(
                            "HTTP {} with a body that is not a chat completion: {snippet:?}",
                            r.status
                        )
                    }
                },
                429 => {
                    self.rate_limited(&r, limited, &snippet)?;
                    limited += 1;
                    continue; // the pause is the wait
                }
                401..=404 => return Err(self.fatal_status(r.status, &snippet)),
                400 | 413 if too_long.is_some() => {
                    return Err(CallError::Failed(too_long.unwrap_or_default()));
                }
                400 | 422 if streaming && self.refuse_stream(&text) => continue,
                400 | 422 if self.switch_variant(v, &text) => continue,
                400 | 413 | 422 => {
                    Stats::add(&self.stats.http_other, 1);
                    return Err(CallError::Failed(format!(
                        "{label}: HTTP {} (not retried): {snippet}",
                        r.status
                    )));
                }
                _ => self.other_status(&r, &snippet)?,
            };
            retry = self.retry_or_fail(retry, label, &last).await?;
        }
    }
}

/// One request of a conversation: what `Transport::chat` sends.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    pub messages: &'a [Value],
    /// the reply's JSON schema (json_schema format)
    pub schema: &'a str,
    pub seed: u64,
    /// the completion budget of this request (fitted to the window)
    pub max_tokens: u32,
    /// what the request is, for messages and the cache entry
    pub label: &'a str,
}

/// A digest of extra headers' names and values (they may change the answer, and their values
/// may be secrets, so they never appear in clear); None without extra headers.
pub fn headers_digest(headers: &[(String, String)]) -> Option<String> {
    if headers.is_empty() {
        return None;
    }
    let mut sorted: Vec<(String, &str)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .collect();
    sorted.sort();
    let mut h = blake3::Hasher::new();
    for (k, v) in sorted {
        h.update(k.as_bytes());
        h.update(b"\0");
        h.update(v.as_bytes());
        h.update(b"\0");
    }
    Some(h.finalize().to_hex().to_string())
}

/// What identifies an endpoint in cache keys: its URL (query included) and the digest of the
/// extra headers. The API key is not part of it: another key gets the same answers.
fn key_scope(endpoint: &str, headers: &[(String, String)]) -> String {
    match headers_digest(headers) {
        Some(d) => format!("{endpoint}\0headers:{d}"),
        None => endpoint.to_string(),
    }
}
