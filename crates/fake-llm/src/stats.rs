//! What the fake saw: requests, completions, faults, concurrency, headers and body members,
//! tokens, and the pauses it announced, for tests and benchmarks to assert on.

use crate::http::Req;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct FakeStats {
    /// chat-completion requests seen (retries included)
    pub requests: AtomicU64,
    pub completions: AtomicU64,
    pub faults: Mutex<HashMap<String, u64>>,
    pub in_flight: AtomicU64,
    pub max_in_flight: AtomicU64,
    /// every Authorization header value seen (distinct)
    pub auth_seen: Mutex<Vec<String>>,
    /// response_format types seen
    pub formats: Mutex<HashMap<String, u64>>,
    pub(crate) seen_bodies: Mutex<HashMap<u64, u64>>,
    /// distinct request bodies seen so far
    pub(crate) new_bodies: AtomicU64,
    /// requests that arrived inside a Retry-After pause announced by an earlier 429, more than
    /// `PAUSE_GRACE` after that 429 was sent (requests already in flight then are not counted)
    pub early_requests: AtomicU64,
    /// the latest announced pause: (when its 429 was sent, when it ends)
    pause: Mutex<Option<(Instant, Instant)>>,
    /// the honest rate limit's bucket: (tokens, last refill)
    bucket: Mutex<Option<(f64, Instant)>>,
    /// request targets seen (path and query), distinct
    pub targets: Mutex<Vec<String>>,
    /// top-level body members seen, with their JSON values, counted
    pub body_members: Mutex<HashMap<String, u64>>,
    /// names of the request headers seen (lower case), distinct
    pub header_names: Mutex<Vec<String>>,
    /// replies sent as a stream of events
    pub streamed: AtomicU64,
    /// requests to other paths than chat completions (a client learning the context window)
    pub probes: AtomicU64,
    /// prompt and completion tokens of every completion sent (as its `usage` says)
    pub prompt_tokens: AtomicU64,
    pub completion_tokens: AtomicU64,
    /// of the prompt tokens, those reported as reused from the prefix cache
    pub prompt_tokens_cached: AtomicU64,
    /// the prompt prefixes (system + first user message) answered before: a prefix cache as
    /// OpenAI's and vLLM's (`usage.prompt_tokens_details.cached_tokens`)
    pub(crate) prefixes: Mutex<std::collections::HashSet<u64>>,
}

/// Requests that reach the server this soon after a 429 may have been sent before the client
/// read it: they do not count as early.
pub const PAUSE_GRACE: Duration = Duration::from_millis(50);

impl FakeStats {
    /// Book a request's arrival against the latest announced pause.
    pub(crate) fn arrived(&self) {
        let now = Instant::now();
        if let Some((sent, until)) = *self.pause.lock().unwrap()
            && now > sent + PAUSE_GRACE
            && now < until
        {
            self.early_requests.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// A 429 that asks for `wait` is being sent now.
    pub(crate) fn announce(&self, wait: Duration) {
        let now = Instant::now();
        let mut p = self.pause.lock().unwrap();
        let until = now + wait;
        if p.is_none_or(|(_, u)| u < until) {
            *p = Some((now, until));
        }
    }
    /// The honest limiter: None when the request may pass, else how long until a slot frees
    /// (rounded up to whole seconds, as `Retry-After` carries them).
    pub(crate) fn over_limit(&self, per_sec: f64) -> Option<Duration> {
        if per_sec <= 0.0 {
            return None;
        }
        let cap = per_sec.max(1.0);
        let now = Instant::now();
        let mut b = self.bucket.lock().unwrap();
        let (tokens, last) = b.get_or_insert((cap, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * per_sec).min(cap);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            return None;
        }
        let secs = ((1.0 - *tokens) / per_sec).ceil().max(1.0);
        Some(Duration::from_secs_f64(secs))
    }
    pub(crate) fn record(&self, req: &Req) {
        let mut t = self.targets.lock().unwrap();
        if !t.contains(&req.path) {
            t.push(req.path.clone());
        }
        drop(t);
        let mut h = self.header_names.lock().unwrap();
        for k in req.headers.keys() {
            if !h.contains(k) {
                h.push(k.clone());
            }
        }
        drop(h);
        if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&req.body) {
            let mut seen = self.body_members.lock().unwrap();
            for (k, v) in m {
                if k != "messages" && k != "response_format" {
                    *seen.entry(format!("{k}={v}")).or_default() += 1;
                }
            }
        }
    }
    /// Count the tokens a completion's `usage` says.
    pub(crate) fn book_usage(&self, reply: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(reply) {
            let u = |k: &str| v["usage"][k].as_u64().unwrap_or(0);
            self.prompt_tokens
                .fetch_add(u("prompt_tokens"), Ordering::Relaxed);
            self.completion_tokens
                .fetch_add(u("completion_tokens"), Ordering::Relaxed);
        }
    }
    pub fn fault_count(&self, k: &str) -> u64 {
        self.faults.lock().unwrap().get(k).copied().unwrap_or(0)
    }
    pub(crate) fn fault(&self, k: &str) {
        *self
            .faults
            .lock()
            .unwrap()
            .entry(k.to_string())
            .or_default() += 1;
    }
}
