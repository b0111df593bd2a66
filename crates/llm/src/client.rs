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

use super::cache::{self, Cache, Entry};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// How the reply's shape is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    JsonSchema = 0,
    JsonObject = 1,
    Text = 2,
}

impl Format {
    fn from_u8(v: u8) -> Format {
        match v {
            0 => Format::JsonSchema,
            1 => Format::JsonObject,
            _ => Format::Text,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::JsonSchema => "json_schema",
            Format::JsonObject => "json_object",
            Format::Text => "text",
        }
    }
}

/// The body member that carries the completion budget: `max_tokens` (most servers) or
/// `max_completion_tokens` (OpenAI reasoning models reject `max_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenParam {
    MaxTokens = 0,
    MaxCompletionTokens = 1,
}

impl TokenParam {
    fn from_u8(v: u8) -> TokenParam {
        if v == 0 {
            TokenParam::MaxTokens
        } else {
            TokenParam::MaxCompletionTokens
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            TokenParam::MaxTokens => "max_tokens",
            TokenParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Counters of a run (all requests, all batches).
#[derive(Debug, Default)]
pub struct Stats {
    /// HTTP requests sent (retries included)
    pub sent: AtomicU64,
    /// completions received and stored
    pub received: AtomicU64,
    /// completions answered from the cache
    pub cached: AtomicU64,
    pub in_flight: AtomicU64,
    pub retries: AtomicU64,
    pub http_429: AtomicU64,
    pub http_5xx: AtomicU64,
    pub http_other: AtomicU64,
    pub timeouts: AtomicU64,
    pub connection_errors: AtomicU64,
    pub malformed_bodies: AtomicU64,
    pub format_downgrades: AtomicU64,
    /// wall time the endpoint was paused by rate limits (Retry-After or back-off), ms
    pub rate_limited_ms: AtomicU64,
    /// requests that failed for good (after retries)
    pub failed: AtomicU64,
    pub prompt_tokens: AtomicU64,
    /// of `prompt_tokens`, those the server reported reusing from its prefix cache
    pub prompt_tokens_reused: AtomicU64,
    pub completion_tokens: AtomicU64,
    pub cached_prompt_tokens: AtomicU64,
    pub cached_completion_tokens: AtomicU64,
    /// replies rejected by the parser (each led to a correction turn or a failed attempt)
    pub rejected_replies: AtomicU64,
    pub corrections: AtomicU64,
    pub attempts_ok: AtomicU64,
    pub attempts_failed: AtomicU64,
    pub message_fallbacks: AtomicU64,
    /// tasks finished in the current batch (progress)
    pub batch_done: AtomicU64,
    /// reply pieces received (streamed: about one token each; not streamed: the reply's
    /// completion tokens when it arrives): the progress line's tokens per second
    pub received_pieces: AtomicU64,
    /// requests the server refused for their length (a 400 about the context window)
    pub context_overflows: AtomicU64,
    /// correction turns sent without the previous reply, which would not have fit the window
    pub compacted_corrections: AtomicU64,
    /// prompts fitted to the window with fewer attraction candidates
    pub fitted_prompts: AtomicU64,
    /// items of accepted replies named in two tiers, resolved as the validator's fix does
    pub resolved_clashes: AtomicU64,
    /// replies the JSON schema they were asked with rules out (the server ignored it)
    pub schema_ignored: AtomicU64,
}

impl Stats {
    pub fn get(a: &AtomicU64) -> u64 {
        a.load(Ordering::Relaxed)
    }
    pub fn add(a: &AtomicU64, n: u64) {
        a.fetch_add(n, Ordering::Relaxed);
    }
}

/// Replaces every occurrence of the secret with `[REDACTED]`.
#[derive(Clone, Default)]
pub struct Redactor {
    needles: Vec<String>,
}

impl Redactor {
    /// Secrets shorter than 4 characters are ignored (they would mangle ordinary text).
    pub fn new<'s>(secrets: impl IntoIterator<Item = &'s str>) -> Self {
        let mut needles: Vec<String> = secrets
            .into_iter()
            .map(str::trim)
            .filter(|s| s.len() >= 4)
            .map(String::from)
            .collect();
        // longest first: a secret that contains another is replaced whole
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        Redactor { needles }
    }
    pub fn clean(&self, s: &str) -> String {
        let mut out = s.to_string();
        for n in &self.needles {
            if out.contains(n.as_str()) {
                out = out.replace(n.as_str(), "[REDACTED]");
            }
        }
        out
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor([REDACTED])")
    }
}

/// AIMD concurrency limit over a semaphore: permits are forgotten to shrink it.
struct Aimd {
    sem: Semaphore,
    state: Mutex<AimdState>,
    max: usize,
}

struct AimdState {
    /// fractional limit (additive increase adds 1/limit per success)
    limit: f64,
    /// permits that exist (held or available)
    effective: usize,
    /// permits to swallow on release (pending decrease)
    debt: usize,
    last_decrease: Option<Instant>,
}

impl Aimd {
    fn new(max: usize) -> Self {
        let max = max.max(1);
        Aimd {
            sem: Semaphore::new(max),
            state: Mutex::new(AimdState {
                limit: max as f64,
                effective: max,
                debt: 0,
                last_decrease: None,
            }),
            max,
        }
    }
    async fn acquire(&self) {
        self.sem.acquire().await.expect("semaphore open").forget();
    }
    fn release(&self) {
        let mut s = self.state.lock().expect("aimd");
        if s.debt > 0 {
            s.debt -= 1;
        } else {
            self.sem.add_permits(1);
        }
    }
    fn success(&self) {
        let mut s = self.state.lock().expect("aimd");
        if s.effective >= self.max {
            return;
        }
        s.limit = (s.limit + 1.0 / s.limit).min(self.max as f64);
        while (s.limit.floor() as usize) > s.effective {
            s.effective += 1;
            if s.debt > 0 {
                s.debt -= 1;
            } else {
                self.sem.add_permits(1);
            }
        }
    }
    /// Halve the limit, at most once per `cooldown` (one burst of 429s is one signal).
    fn overload(&self, cooldown: Duration) -> usize {
        let mut s = self.state.lock().expect("aimd");
        if s.last_decrease.is_some_and(|t| t.elapsed() < cooldown) {
            return s.effective;
        }
        let new = (s.effective / 2).max(1);
        // idle permits go at once; held ones when they come back
        let idle = self.sem.forget_permits(s.effective - new);
        s.debt += s.effective - new - idle;
        s.effective = new;
        s.limit = new as f64;
        s.last_decrease = Some(Instant::now());
        new
    }
    fn current(&self) -> usize {
        self.state.lock().expect("aimd").effective
    }
}

/// A token bucket (requests or tokens per minute); `None` = unlimited.
struct Bucket {
    per_sec: f64,
    cap: f64,
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    fn new(per_minute: u32) -> Option<Bucket> {
        (per_minute > 0).then(|| {
            let cap = (per_minute as f64 / 6.0).max(1.0);
            Bucket {
                per_sec: per_minute as f64 / 60.0,
                cap,
                state: Mutex::new((cap, Instant::now())),
            }
        })
    }
    async fn take(&self, n: f64) {
        loop {
            let wait = {
                let mut s = self.state.lock().expect("bucket");
                let now = Instant::now();
                s.0 = (s.0 + now.duration_since(s.1).as_secs_f64() * self.per_sec).min(self.cap);
                s.1 = now;
                let need = n.min(self.cap);
                if s.0 >= need {
                    s.0 -= n; // may go negative: a request larger than the burst is paid for later
                    return;
                }
                (need - s.0) / self.per_sec
            };
            tokio::time::sleep(Duration::from_secs_f64(wait.clamp(0.001, 60.0))).await;
        }
    }
    fn refund(&self, n: f64) {
        let mut s = self.state.lock().expect("bucket");
        s.0 = (s.0 + n).min(self.cap);
    }
}

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

/// The pause every new request to the endpoint waits out (Retry-After, or back-off after a 429
/// without one), and the total paused time of the run.
#[derive(Default)]
struct Pause {
    until: Option<Instant>,
    total: Duration,
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

/// Transient failures kept for the report.
const TRANSIENT_KEPT: usize = 20;

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
    pub fn format(&self) -> Format {
        Format::from_u8(self.format.load(Ordering::Relaxed))
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

    pub fn token_param(&self) -> TokenParam {
        TokenParam::from_u8(self.token_param.load(Ordering::Relaxed))
    }
    fn variant(&self) -> Variant {
        Variant {
            format: self.format(),
            tokens: self.token_param(),
        }
    }

    /// The exact request body for a conversation (`messages` already serialised) in a variant.
    /// Built as text once per request: it is what is hashed, sent and stored.
    pub fn body(
        &self,
        messages: &str,
        schema: &str,
        seed: u64,
        max_tokens: u32,
        v: Variant,
    ) -> String {
        let mut b = String::with_capacity(messages.len() + schema.len() + 256);
        b.push_str("{\"model\":");
        b.push_str(&serde_json::to_string(&self.s.model).expect("string"));
        b.push_str(",\"messages\":");
        b.push_str(messages);
        b.push_str(&format!(
            ",\"temperature\":{},\"{}\":{}",
            serde_json::to_string(&self.s.temperature).expect("number"),
            v.tokens.name(),
            max_tokens
        ));
        if self.s.send_seed {
            b.push_str(&format!(",\"seed\":{seed}"));
        }
        match v.format {
            Format::JsonSchema => {
                b.push_str(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"group_preferences\",\"strict\":true,\"schema\":");
                b.push_str(schema);
                b.push_str("}}");
            }
            Format::JsonObject => b.push_str(",\"response_format\":{\"type\":\"json_object\"}"),
            Format::Text => {}
        }
        b.push_str(&self.s.extra_body);
        b.push('}');
        b
    }

    /// The cache key of a request body.
    fn key(&self, body: &str) -> String {
        cache::key(&self.key_scope, &self.s.prompt_version, body)
    }

    /// A completion out of a response body; books its tokens.
    fn completion(
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
    /// plus the completion budget, as providers count it.
    fn estimate(&self, request_len: usize) -> f64 {
        request_len as f64 / 3.0 + self.s.max_tokens as f64
    }

    /// Variants whose cached answers count for this request: the current one and those that
    /// negotiation (weaker formats, `max_completion_tokens`) may have moved to.
    fn lookup_variants(&self) -> Vec<Variant> {
        let first = self.variant();
        let formats: Vec<Format> = if self.s.negotiate {
            [Format::JsonSchema, Format::JsonObject, Format::Text]
                .into_iter()
                .filter(|f| (*f as u8) >= (first.format as u8))
                .collect()
        } else {
            vec![first.format]
        };
        let mut tokens = vec![first.tokens];
        if self.s.negotiate_token_param && first.tokens == TokenParam::MaxTokens {
            tokens.push(TokenParam::MaxCompletionTokens);
        }
        formats
            .iter()
            .flat_map(|&format| tokens.iter().map(move |&t| Variant { format, tokens: t }))
            .collect()
    }

    /// One chat completion: from the cache (unless `use_cache` is false: the answer is asked
    /// for again and replaces the cached one), else from the server (with retries).
    pub async fn chat(&self, ask: &Ask<'_>, use_cache: bool) -> Result<Completion, CallError> {
        let Ask {
            schema,
            seed,
            max_tokens,
            label,
            ..
        } = *ask;
        let messages = serde_json::to_string(ask.messages).expect("messages serialise");
        for v in self.lookup_variants().into_iter().filter(|_| use_cache) {
            let body = self.body(&messages, schema, seed, max_tokens, v);
            let key = self.key(&body);
            if let Some(e) = self.cache.get(&key)
                && let Some(c) = self.completion(&e.response, &key, true, body.len())
            {
                Stats::add(&self.stats.cached, 1);
                return Ok(c);
            }
        }
        if self.s.offline_replay {
            let body = self.body(&messages, schema, seed, max_tokens, self.variant());
            let msg = format!(
                "--offline-replay: no cached response for {label} (cache entry {}); run without --offline-replay to fetch it",
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

    /// Wait until no rate-limit pause holds the endpoint.
    async fn wait_pause(&self) {
        loop {
            let until = self.pause.lock().expect("pause").until;
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t.into()).await,
                _ => return,
            }
        }
    }

    /// Hold every new request to the endpoint for `wait` (a pause already longer stands). The
    /// run stops, resumably, when its paused time would exceed the rate-limit budget.
    fn pause_for(&self, wait: Duration, why: &str) -> Result<(), CallError> {
        let total = {
            let mut p = self.pause.lock().expect("pause");
            let now = Instant::now();
            let until = now + wait;
            let from = p.until.filter(|t| *t > now).unwrap_or(now);
            if until > from {
                p.total += until - from;
                p.until = Some(until);
                Stats::add(
                    &self.stats.rate_limited_ms,
                    (until - from).as_millis() as u64,
                );
            }
            p.total
        };
        if total <= self.s.rate_limit_budget {
            return Ok(());
        }
        let m = format!(
            "rate limited by {} for {:.0} s in total ({} HTTP 429s; the last, {why}, asked to wait {:.1} s), more than the rate-limit budget of {} s. Nothing is lost and no task was given up: the answers received so far are cached. Rerun the same command to resume (it asks only for what is missing); raise the budget with --rate-limit-budget SECS, or ask less often with --rpm / --concurrency",
            gtb_core::redact::public_url(&self.s.endpoint),
            total.as_secs_f64(),
            Stats::get(&self.stats.http_429),
            wait.as_secs_f64(),
            self.s.rate_limit_budget.as_secs()
        );
        self.set_fatal(m);
        Err(CallError::Fatal(self.fatal().unwrap_or_default()))
    }

    fn backoff(&self, retry: u32) -> Duration {
        use rand::Rng;
        let base = self.s.backoff.as_secs_f64() * 2f64.powi(retry.min(16) as i32);
        let capped = base.min(60.0);
        Duration::from_secs_f64(capped * rand::thread_rng().gen_range(0.5..1.0))
    }

    /// After a transient failure: back off and count the retry, or give up on the request.
    async fn retry_or_fail(&self, retry: u32, label: &str, last: &str) -> Result<u32, CallError> {
        {
            let mut t = self.transient.lock().expect("transient");
            if t.len() == TRANSIENT_KEPT {
                t.pop_front();
            }
            t.push_back(format!("{label}: {last}"));
        }
        if retry >= self.s.max_retries {
            return Err(CallError::Failed(format!(
                "{label}: gave up after {} tries: {last}",
                retry + 1
            )));
        }
        Stats::add(&self.stats.retries, 1);
        tokio::time::sleep(self.backoff(retry)).await;
        Ok(retry + 1)
    }

    /// Send one request when the limits allow: request and token buckets, a concurrency slot,
    /// then no rate-limit pause (checked again once the slot is held: a request queued for a
    /// slot must not slip through a pause that began while it waited). `Ok(Err(why))` is a
    /// transport failure (timeout, connection) worth a retry.
    async fn send(&self, body: &str, streaming: bool) -> Result<Result<Reply, String>, CallError> {
        self.wait_pause().await;
        if let Some(b) = &self.rpm {
            b.take(1.0).await;
        }
        if let Some(b) = &self.tpm {
            b.take(self.estimate(body.len())).await;
        }
        self.aimd.acquire().await;
        self.wait_pause().await;
        if let Some(f) = self.fatal() {
            self.aimd.release();
            return Err(CallError::Fatal(f));
        }
        Stats::add(&self.stats.sent, 1);
        Stats::add(&self.stats.in_flight, 1);
        let mut wire = if streaming {
            super::stream::streaming_body(body)
        } else {
            body.to_string()
        };
        if let Some(m) = self.server_members.get() {
            wire.pop();
            wire.push_str(m);
            wire.push('}');
        }
        let mut req = self
            .client
            .post(&self.s.endpoint)
            .header("content-type", "application/json")
            .body(wire);
        for (k, v) in self.auth_headers() {
            req = req.header(k, v);
        }
        let res = self.exchange(req, streaming).await;
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.aimd.release();
        Ok(res)
    }

    /// One HTTP exchange. A plain reply must arrive within the timeout; a streamed one may take
    /// as long as the server keeps sending: it is cut off only when nothing comes for the
    /// timeout (a slow server still producing tokens is never asked again). A streamed `200`
    /// is assembled into the `chat.completion` body a plain request gets.
    async fn exchange(
        &self,
        req: reqwest::RequestBuilder,
        streaming: bool,
    ) -> Result<Reply, String> {
        let t = self.s.timeout;
        let silent = |pieces: u64| {
            Stats::add(&self.stats.timeouts, 1);
            if streaming {
                format!("the server sent nothing for {t:?} ({pieces} reply pieces before)")
            } else {
                format!("timed out after {t:?}")
            }
        };
        let failed = |e: reqwest::Error| {
            Stats::add(&self.stats.connection_errors, 1);
            format!("connection error: {}", self.redact.clean(&error_chain(&e)))
        };
        if !streaming {
            let whole = async {
                let resp = req.send().await?;
                let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
                let text = resp.text().await?;
                Ok::<_, reqwest::Error>(Reply {
                    status,
                    headers,
                    text,
                })
            };
            return match tokio::time::timeout(t, whole).await {
                Err(_) => Err(silent(0)),
                Ok(r) => r.map_err(failed),
            };
        }
        let mut resp = match tokio::time::timeout(t, req.send()).await {
            Err(_) => return Err(silent(0)),
            Ok(r) => r.map_err(failed)?,
        };
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let sse = resp.status().is_success()
            && headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("text/event-stream"));
        let (mut events, mut raw) = (super::stream::Assembly::default(), Vec::new());
        loop {
            match tokio::time::timeout(t, resp.chunk()).await {
                Err(_) => return Err(silent(events.pieces)),
                Ok(Err(e)) => return Err(failed(e)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) if sse => {
                    Stats::add(&self.stats.received_pieces, events.feed(&bytes));
                }
                Ok(Ok(Some(bytes))) => raw.extend_from_slice(&bytes),
            }
        }
        let text = if sse {
            events.finish().inspect_err(|_| {
                Stats::add(&self.stats.malformed_bodies, 1);
            })?
        } else {
            String::from_utf8_lossy(&raw).into_owned()
        };
        Ok(Reply {
            status,
            headers,
            text,
        })
    }

    /// The headers every request carries: the extra ones and the key (`Authorization: Bearer`
    /// or the configured key header).
    fn auth_headers(&self) -> Vec<(String, String)> {
        let mut h = self.s.headers.clone();
        if let Some(k) = &self.s.key {
            match &self.s.key_header {
                Some(name) => h.push((name.clone(), k.clone())),
                None => h.push(("authorization".into(), format!("Bearer {k}"))),
            }
        }
        h
    }

    /// The server's context window: `--context-tokens`, else what the server says (recorded in
    /// the cache folder), else, in an offline replay, the one recorded. None when unknown.
    pub async fn window(&self, configured: u32) -> Option<super::window::Window> {
        use super::window::{Probe, Window, record, record_path, recorded};
        if configured > 0 {
            return Some(Window {
                tokens: configured,
                source: "--context-tokens / llm.context_tokens".into(),
            });
        }
        let path = record_path(&self.cache.root, &self.key_scope, &self.s.model);
        if self.s.offline_replay {
            return recorded(&path);
        }
        let auth = self.auth_headers();
        let probe = Probe {
            client: &self.client,
            endpoint: &self.s.endpoint,
            model: &self.s.model,
            auth: &auth,
        };
        let w = probe.learn().await;
        if w.as_ref()
            .is_some_and(|w| w.source.starts_with("llama.cpp"))
        {
            self.server_members.set(LLAMA_CPP_MEMBERS).ok();
        }
        match &w {
            Some(w) => {
                eprintln!(
                    "llm: the server's context window is {} tokens per request ({}); prompts are fitted to it",
                    w.tokens, w.source
                );
                if let Err(e) = record(&path, w) {
                    eprintln!(
                        "llm: warning: cannot record the window in {}: {e}",
                        path.display()
                    );
                }
            }
            None => eprintln!(
                "llm: the server does not say its context window; prompts are sent unfitted (--context-tokens N fits them)"
            ),
        }
        w
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

    /// Whether replies are streamed now.
    pub fn streaming(&self) -> bool {
        self.streaming.load(Ordering::Relaxed)
    }

    /// A 400/422 to a streamed request that refuses streaming: plain replies from now on (with
    /// the whole-request timeout; requests refused while the first refusal was read switch too).
    /// False when the complaint is about something else.
    fn refuse_stream(&self, text: &str) -> bool {
        let lower = text.to_lowercase();
        // the word, not "upstream"
        let said = lower.match_indices("stream").any(|(i, _)| {
            !lower[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphabetic())
        });
        if !said {
            return false;
        }
        Stats::add(&self.stats.http_other, 1);
        if self.streaming.swap(false, Ordering::Relaxed) {
            eprintln!(
                "llm: the server refused a streamed reply; asking for plain replies from now on (each must arrive within --request-timeout {} s)",
                self.s.timeout.as_secs()
            );
        }
        true
    }

    /// A 400 about the prompt's length, in the words of llama.cpp (`exceed_context_size_error`,
    /// `n_prompt_tokens`, `n_ctx`), vLLM and OpenAI ("maximum context length is N tokens ...
    /// resulted in M tokens"): a message naming both numbers and the fix. None for other 400s.
    fn context_error(&self, text: &str, label: &str) -> Option<String> {
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

    /// An HTTP 429: a fatal quota error, or a rate limit whose pause holds the endpoint.
    fn rate_limited(&self, r: &Reply, limited: u32, snippet: &str) -> Result<(), CallError> {
        Stats::add(&self.stats.http_429, 1);
        let lower = r.text.to_lowercase();
        if lower.contains("insufficient_quota")
            || lower.contains("quota exceeded")
            || lower.contains("exceeded your current quota")
            || lower.contains("billing")
        {
            let m = format!(
                "quota exhausted at {} (HTTP 429): {snippet}",
                gtb_core::redact::public_url(&self.s.endpoint)
            );
            self.set_fatal(m.clone());
            return Err(CallError::Fatal(m));
        }
        let (wait, why) = match retry_after(&r.headers) {
            Some(w) => (w, "Retry-After"),
            None => (self.backoff(limited), "no Retry-After, back-off"),
        };
        self.aimd.overload(wait.max(Duration::from_millis(500)));
        Stats::add(&self.stats.retries, 1);
        self.pause_for(wait, why)
    }

    /// Say once when the server counted far fewer prompt tokens than were sent (a quarter of
    /// the ~3 bytes per token of the Chinese-heavy JSON): it cut the prompt off, as Ollama
    /// does beyond its context window.
    fn warn_if_truncated(&self, prompt_tokens: u64, messages_len: usize) {
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

    /// Errors no retry can cure: bad key, no money, wrong URL or model.
    fn fatal_status(&self, status: u16, snippet: &str) -> CallError {
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

    /// A 400/422 that refuses a request variant: move to the next one for the rest of the run
    /// (`max_completion_tokens` for `max_tokens`, a weaker response format). False when the
    /// complaint is about something else.
    fn switch_variant(&self, v: Variant, text: &str) -> bool {
        let lower = text.to_lowercase();
        if self.s.negotiate_token_param
            && v.tokens == TokenParam::MaxTokens
            && lower.contains("max_completion_tokens")
        {
            Stats::add(&self.stats.http_other, 1);
            let next = TokenParam::MaxCompletionTokens;
            if self
                .token_param
                .compare_exchange(
                    v.tokens as u8,
                    next as u8,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                eprintln!(
                    "llm: the server rejected max_tokens; sending max_completion_tokens from now on (--max-tokens-param max_completion_tokens skips this)"
                );
            }
            return true;
        }
        if !(self.s.negotiate && v.format != Format::Text && mentions_format(text)) {
            return false;
        }
        Stats::add(&self.stats.http_other, 1);
        let next = if v.format == Format::JsonSchema {
            Format::JsonObject
        } else {
            Format::Text
        };
        if self
            .format
            .compare_exchange(
                v.format as u8,
                next as u8,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            Stats::add(&self.stats.format_downgrades, 1);
            eprintln!(
                "llm: the server rejected response_format {}; using {} from now on",
                v.format.name(),
                next.name()
            );
        }
        true
    }

    async fn fetch(&self, messages: &str, ask: &Ask<'_>) -> Result<Completion, CallError> {
        let Ask {
            schema,
            seed,
            max_tokens,
            label,
            ..
        } = *ask;
        // transient failures are retried max_retries times; 429s for as long as the
        // rate-limit budget lasts (giving up would regenerate the task: another dataset)
        let (mut retry, mut limited) = (0u32, 0u32);
        loop {
            if let Some(f) = self.fatal() {
                return Err(CallError::Fatal(f));
            }
            let v = self.variant();
            let body = self.body(messages, schema, seed, max_tokens, v);
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
                status => {
                    if status >= 500 {
                        Stats::add(&self.stats.http_5xx, 1);
                    } else {
                        Stats::add(&self.stats.http_other, 1);
                    }
                    // an overloaded server's Retry-After holds everybody, like a 429's
                    if let Some(w) = retry_after(&r.headers).filter(|_| status == 503) {
                        self.pause_for(w, "HTTP 503 Retry-After")?;
                    }
                    format!("HTTP {status}: {snippet}")
                }
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

/// A request variant: the response format and the token-budget field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub format: Format,
    pub tokens: TokenParam,
}

/// An HTTP answer.
struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    text: String,
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

/// Does an error body complain about the requested response format?
fn mentions_format(body: &str) -> bool {
    let l = body.to_lowercase();
    [
        "response_format",
        "json_schema",
        "json schema",
        "structured output",
        "guided_json",
        "grammar",
        "schema",
    ]
    .iter()
    .any(|k| l.contains(k))
}

/// The longest Retry-After taken at its word (a day); the rate-limit budget decides whether
/// the run waits that long or stops.
const MAX_RETRY_AFTER: f64 = 86_400.0;

/// `Retry-After` (seconds or HTTP date) or `retry-after-ms`.
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = h
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(
            (ms / 1000.0).clamp(0.0, MAX_RETRY_AFTER),
        ));
    }
    let v = h.get("retry-after")?.to_str().ok()?.trim().to_string();
    if let Ok(s) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(s.clamp(0.0, MAX_RETRY_AFTER)));
    }
    let t =
        chrono::NaiveDateTime::parse_from_str(v.trim_end_matches(" GMT"), "%a, %d %b %Y %H:%M:%S")
            .ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let secs = (t.and_utc().timestamp() as f64 - now).max(0.0);
    Some(Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER)))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redactor_hides_the_key_and_ignores_trivial_ones() {
        let r = Redactor::new(["sk-secret-123"]);
        assert_eq!(r.clean("bad key sk-secret-123!"), "bad key [REDACTED]!");
        assert_eq!(Redactor::new(["x"]).clean("x y"), "x y");
        assert!(!format!("{r:?}").contains("secret"));
    }

    #[test]
    fn aimd_halves_then_grows_back() {
        let a = Aimd::new(8);
        assert_eq!(a.overload(Duration::from_secs(60)), 4);
        assert_eq!(
            a.overload(Duration::from_secs(60)),
            4,
            "one burst is one signal"
        );
        for _ in 0..100 {
            a.success();
        }
        assert_eq!(a.current(), 8);
    }

    #[test]
    fn retry_after_reads_seconds_and_ms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
    }
}
