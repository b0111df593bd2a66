//! The transport: one OpenAI-compatible chat-completions client with a response cache in
//! front, an adaptive concurrency limit (AIMD: +1 per window of successes, halved on HTTP 429),
//! optional request- and token-per-minute buckets, Retry-After, exponential back-off with
//! jitter for 5xx / timeouts / connection errors, response-format negotiation
//! (json_schema -> json_object -> text) and a sticky fatal state for errors that retrying
//! cannot cure (authentication, quota, unknown model or URL, too many failures, cache miss in
//! offline replay). The API key lives only in the `Authorization` header and is redacted from
//! every response body and error message before anything is stored or shown.

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
    /// requests that failed for good (after retries)
    pub failed: AtomicU64,
    pub prompt_tokens: AtomicU64,
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
    pub fn new(secret: Option<&str>) -> Self {
        Redactor {
            needles: secret
                .filter(|s| s.len() >= 4)
                .map(|s| vec![s.to_string()])
                .unwrap_or_default(),
        }
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

/// A completion, fresh or cached.
#[derive(Debug, Clone)]
pub struct Completion {
    pub content: String,
    pub finish_reason: String,
    pub cache_key: String,
    pub cached: bool,
}

pub struct Settings {
    pub endpoint: String,
    pub model: String,
    pub key: Option<String>,
    pub key_env: String,
    pub prompt_version: String,
    pub temperature: f64,
    pub max_tokens: u32,
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
    pause_until: Mutex<Option<Instant>>,
    fatal: Mutex<Option<String>>,
    window: Mutex<VecDeque<bool>>,
    pub stats: std::sync::Arc<Stats>,
}

/// Outcomes looked at by the error-rate stop.
const WINDOW: usize = 40;
const WINDOW_MIN: usize = 20;

impl Transport {
    pub fn new(
        s: Settings,
        cache_dir: &std::path::Path,
        stats: std::sync::Arc<Stats>,
    ) -> anyhow::Result<Transport> {
        let client = reqwest::Client::builder()
            .timeout(s.timeout)
            .connect_timeout(Duration::from_secs(10).min(s.timeout))
            .pool_max_idle_per_host(s.concurrency.max(1))
            .user_agent(concat!("gtb/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Transport {
            redact: Redactor::new(s.key.as_deref()),
            aimd: Aimd::new(s.concurrency),
            rpm: Bucket::new(s.rpm),
            tpm: Bucket::new(s.tpm),
            format: AtomicU8::new(s.format as u8),
            pause_until: Mutex::new(None),
            fatal: Mutex::new(None),
            window: Mutex::new(VecDeque::new()),
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
            self.set_fatal(format!(
                "stopping early: {bad} of the last {} LLM requests or task attempts failed (last: {what}); HTTP 429: {}, 5xx: {}, other HTTP errors: {}, timeouts: {}, connection errors: {}, rejected replies: {}. Responses received so far are cached; rerun to resume",
                w.len(),
                Stats::get(&st.http_429),
                Stats::get(&st.http_5xx),
                Stats::get(&st.http_other),
                Stats::get(&st.timeouts),
                Stats::get(&st.connection_errors),
                Stats::get(&st.rejected_replies),
            ));
        }
    }

    /// The exact request body for a conversation (`messages` already serialised) in a format.
    /// Built as text once per request: it is what is hashed, sent and stored.
    pub fn body(&self, messages: &str, schema: &str, seed: u64, format: Format) -> String {
        let mut b = String::with_capacity(messages.len() + schema.len() + 256);
        b.push_str("{\"model\":");
        b.push_str(&serde_json::to_string(&self.s.model).expect("string"));
        b.push_str(",\"messages\":");
        b.push_str(messages);
        b.push_str(&format!(
            ",\"temperature\":{},\"max_tokens\":{}",
            serde_json::to_string(&self.s.temperature).expect("number"),
            self.s.max_tokens
        ));
        if self.s.send_seed {
            b.push_str(&format!(",\"seed\":{seed}"));
        }
        match format {
            Format::JsonSchema => {
                b.push_str(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"group_preferences\",\"strict\":true,\"schema\":");
                b.push_str(schema);
                b.push_str("}}");
            }
            Format::JsonObject => b.push_str(",\"response_format\":{\"type\":\"json_object\"}"),
            Format::Text => {}
        }
        b.push('}');
        b
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
        let msg = choice.get("message")?;
        let content = msg
            .get("content")
            .and_then(|c| c.as_str())
            .unwrap_or("")
            .to_string();
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
        if cached {
            Stats::add(&self.stats.cached_prompt_tokens, tok("prompt_tokens"));
            Stats::add(
                &self.stats.cached_completion_tokens,
                tok("completion_tokens"),
            );
        } else {
            Stats::add(&self.stats.prompt_tokens, tok("prompt_tokens"));
            Stats::add(&self.stats.completion_tokens, tok("completion_tokens"));
            if let Some(t) = &self.tpm {
                t.refund(
                    self.estimate(request_len)
                        - (tok("prompt_tokens") + tok("completion_tokens")) as f64,
                );
            }
        }
        Some(Completion {
            content,
            finish_reason,
            cache_key: key.to_string(),
            cached,
        })
    }

    /// Rough tokens of a request for the TPM bucket (~3 bytes per token over Chinese-heavy JSON)
    /// plus the completion budget, as providers count it.
    fn estimate(&self, request_len: usize) -> f64 {
        request_len as f64 / 3.0 + self.s.max_tokens as f64
    }

    /// Formats whose cached answers count for this request: the current one and the weaker
    /// ones negotiation may have moved to.
    fn lookup_formats(&self) -> Vec<Format> {
        let first = self.format();
        if self.s.negotiate {
            [Format::JsonSchema, Format::JsonObject, Format::Text]
                .into_iter()
                .filter(|f| (*f as u8) >= (first as u8))
                .collect()
        } else {
            vec![first]
        }
    }

    /// One chat completion: from the cache, else from the server (with retries).
    pub async fn chat(
        &self,
        messages: &[Value],
        schema: &str,
        seed: u64,
        label: &str,
    ) -> Result<Completion, CallError> {
        let messages = serde_json::to_string(messages).expect("messages serialise");
        for f in self.lookup_formats() {
            let body = self.body(&messages, schema, seed, f);
            let key = cache::key(&self.s.endpoint, &self.s.prompt_version, &body);
            if let Some(e) = self.cache.get(&key)
                && let Some(c) = self.completion(&e.response, &key, true, body.len())
            {
                Stats::add(&self.stats.cached, 1);
                return Ok(c);
            }
        }
        if self.s.offline_replay {
            let body = self.body(&messages, schema, seed, self.format());
            let key = cache::key(&self.s.endpoint, &self.s.prompt_version, &body);
            let msg = format!(
                "--offline-replay: no cached response for {label} (cache entry {}); run without --offline-replay to fetch it",
                self.cache.path(&key).display()
            );
            self.set_fatal(msg.clone());
            return Err(CallError::Fatal(msg));
        }
        let r = self.fetch(&messages, schema, seed, label).await;
        // successes are booked per task attempt (a model that answers garbage must count as failing)
        if let Err(CallError::Failed(m)) = &r {
            Stats::add(&self.stats.failed, 1);
            self.outcome(false, m);
        }
        r
    }

    async fn wait_pause(&self) {
        loop {
            let until = *self.pause_until.lock().expect("pause");
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t.into()).await,
                _ => return,
            }
        }
    }

    fn backoff(&self, retry: u32) -> Duration {
        use rand::Rng;
        let base = self.s.backoff.as_secs_f64() * 2f64.powi(retry.min(16) as i32);
        let capped = base.min(60.0);
        Duration::from_secs_f64(capped * rand::thread_rng().gen_range(0.5..1.0))
    }

    async fn fetch(
        &self,
        messages: &str,
        schema: &str,
        seed: u64,
        label: &str,
    ) -> Result<Completion, CallError> {
        let mut retry = 0u32;
        loop {
            if let Some(f) = self.fatal() {
                return Err(CallError::Fatal(f));
            }
            let format = self.format();
            let body = self.body(messages, schema, seed, format);
            let key = cache::key(&self.s.endpoint, &self.s.prompt_version, &body);
            let body_len = body.len();
            self.wait_pause().await;
            if let Some(b) = &self.rpm {
                b.take(1.0).await;
            }
            if let Some(b) = &self.tpm {
                b.take(self.estimate(body_len)).await;
            }
            self.aimd.acquire().await;
            if let Some(f) = self.fatal() {
                self.aimd.release();
                return Err(CallError::Fatal(f));
            }
            Stats::add(&self.stats.sent, 1);
            Stats::add(&self.stats.in_flight, 1);
            let mut req = self
                .client
                .post(&self.s.endpoint)
                .header("content-type", "application/json")
                .body(body.clone());
            if let Some(k) = &self.s.key {
                req = req.bearer_auth(k);
            }
            let res = async {
                let resp = req.send().await?;
                let status = resp.status().as_u16();
                let headers = resp.headers().clone();
                let text = resp.text().await?;
                Ok::<_, reqwest::Error>((status, headers, text))
            }
            .await;
            self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
            self.aimd.release();
            let (status, headers, text) = match res {
                Ok(x) => x,
                Err(e) => {
                    let last = if e.is_timeout() {
                        Stats::add(&self.stats.timeouts, 1);
                        format!("timed out after {:?}", self.s.timeout)
                    } else {
                        Stats::add(&self.stats.connection_errors, 1);
                        format!("connection error: {}", self.redact.clean(&error_chain(&e)))
                    };
                    if retry >= self.s.max_retries {
                        return Err(CallError::Failed(format!(
                            "{label}: gave up after {} tries: {last}",
                            retry + 1
                        )));
                    }
                    Stats::add(&self.stats.retries, 1);
                    tokio::time::sleep(self.backoff(retry)).await;
                    retry += 1;
                    continue;
                }
            };
            let text = self.redact.clean(&text);
            let snippet: String = text.chars().take(300).collect();
            let last: String;
            match status {
                200..=299 => {
                    match self.completion(&text, &key, false, body_len) {
                        Some(c) => {
                            let request = serde_json::value::RawValue::from_string(body)
                                .expect("the body is JSON");
                            let entry = Entry {
                                key,
                                endpoint: self.s.endpoint.clone(),
                                prompt_version: self.s.prompt_version.clone(),
                                label: label.to_string(),
                                request,
                                status: 200,
                                response: text,
                            };
                            // store before anything else looks at it: a crash loses nothing paid for
                            let cache = self.cache.clone();
                            let stored =
                                tokio::task::spawn_blocking(move || cache.put(&entry)).await;
                            if let Ok(Err(e)) | Err(e) = stored.map_err(std::io::Error::other) {
                                self.set_fatal(format!(
                                    "cannot write the LLM cache under {}: {e}",
                                    self.cache.root.display()
                                ));
                                return Err(CallError::Fatal(self.fatal().unwrap_or_default()));
                            }
                            Stats::add(&self.stats.received, 1);
                            self.aimd.success();
                            return Ok(c);
                        }
                        None => {
                            // a 200 whose body is not a completion (cut off, not JSON): transient
                            Stats::add(&self.stats.malformed_bodies, 1);
                            last = format!(
                                "HTTP {status} with a body that is not a chat completion: {snippet:?}"
                            );
                        }
                    }
                }
                429 => {
                    Stats::add(&self.stats.http_429, 1);
                    let lower = text.to_lowercase();
                    if lower.contains("insufficient_quota")
                        || lower.contains("quota exceeded")
                        || lower.contains("exceeded your current quota")
                        || lower.contains("billing")
                    {
                        let m = format!(
                            "quota exhausted at {} (HTTP 429): {snippet}",
                            self.s.endpoint
                        );
                        self.set_fatal(m.clone());
                        return Err(CallError::Fatal(m));
                    }
                    let wait = retry_after(&headers).unwrap_or_else(|| self.backoff(retry));
                    let limit = self.aimd.overload(wait.max(Duration::from_millis(500)));
                    {
                        let mut p = self.pause_until.lock().expect("pause");
                        let t = Instant::now() + wait;
                        if p.is_none_or(|x| x < t) {
                            *p = Some(t);
                        }
                    }
                    last = format!(
                        "HTTP 429 (rate limited; waited {:.1}s, concurrency now {limit})",
                        wait.as_secs_f64()
                    );
                    if retry >= self.s.max_retries.saturating_mul(2) {
                        return Err(CallError::Failed(format!(
                            "{label}: gave up after {} tries: {last}",
                            retry + 1
                        )));
                    }
                    Stats::add(&self.stats.retries, 1);
                    retry += 1;
                    continue; // the pause is the wait
                }
                401 | 403 => {
                    Stats::add(&self.stats.http_other, 1);
                    let key_note = if self.s.key.is_some() {
                        format!("check the key in ${}", self.s.key_env)
                    } else {
                        format!(
                            "no key was sent: set ${} (or --api-key-env NAME)",
                            self.s.key_env
                        )
                    };
                    let m = format!(
                        "authentication failed at {} (HTTP {status}): {key_note}. Server said: {snippet}",
                        self.s.endpoint
                    );
                    self.set_fatal(m.clone());
                    return Err(CallError::Fatal(m));
                }
                402 => {
                    Stats::add(&self.stats.http_other, 1);
                    let m = format!(
                        "quota or balance exhausted at {} (HTTP 402): {snippet}",
                        self.s.endpoint
                    );
                    self.set_fatal(m.clone());
                    return Err(CallError::Fatal(m));
                }
                404 => {
                    Stats::add(&self.stats.http_other, 1);
                    let m = format!(
                        "{} answered HTTP 404: check the base URL (it should end in /v1) and the model name {:?}. Server said: {snippet}",
                        self.s.endpoint, self.s.model
                    );
                    self.set_fatal(m.clone());
                    return Err(CallError::Fatal(m));
                }
                400 | 422
                    if self.s.negotiate && format != Format::Text && mentions_format(&text) =>
                {
                    Stats::add(&self.stats.http_other, 1);
                    let next = if format == Format::JsonSchema {
                        Format::JsonObject
                    } else {
                        Format::Text
                    };
                    if self
                        .format
                        .compare_exchange(
                            format as u8,
                            next as u8,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        )
                        .is_ok()
                    {
                        Stats::add(&self.stats.format_downgrades, 1);
                        eprintln!(
                            "llm: the server rejected response_format {}; using {} from now on",
                            format.name(),
                            next.name()
                        );
                    }
                    continue;
                }
                400 | 413 | 422 => {
                    Stats::add(&self.stats.http_other, 1);
                    return Err(CallError::Failed(format!(
                        "{label}: HTTP {status} (not retried): {snippet}"
                    )));
                }
                _ => {
                    if status >= 500 {
                        Stats::add(&self.stats.http_5xx, 1);
                    } else {
                        Stats::add(&self.stats.http_other, 1);
                    }
                    last = format!("HTTP {status}: {snippet}");
                    if let Some(w) = retry_after(&headers).filter(|_| status == 503) {
                        tokio::time::sleep(w).await;
                    }
                }
            }
            if retry >= self.s.max_retries {
                return Err(CallError::Failed(format!(
                    "{label}: gave up after {} tries: {last}",
                    retry + 1
                )));
            }
            Stats::add(&self.stats.retries, 1);
            tokio::time::sleep(self.backoff(retry)).await;
            retry += 1;
        }
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

/// `Retry-After` (seconds or HTTP date) or `retry-after-ms`.
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = h
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64((ms / 1000.0).clamp(0.0, 600.0)));
    }
    let v = h.get("retry-after")?.to_str().ok()?.trim().to_string();
    if let Ok(s) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(s.clamp(0.0, 600.0)));
    }
    let t =
        chrono::NaiveDateTime::parse_from_str(v.trim_end_matches(" GMT"), "%a, %d %b %Y %H:%M:%S")
            .ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let secs = (t.and_utc().timestamp() as f64 - now).max(0.0);
    Some(Duration::from_secs_f64(secs.min(600.0)))
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
        let r = Redactor::new(Some("sk-secret-123"));
        assert_eq!(r.clean("bad key sk-secret-123!"), "bad key [REDACTED]!");
        assert_eq!(Redactor::new(Some("x")).clean("x y"), "x y");
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
