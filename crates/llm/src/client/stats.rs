//! The run's counters and the redactor that keeps secrets out of every record.

use std::sync::atomic::{AtomicU64, Ordering};

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
    /// firm members' budgets of accepted replies lifted to the cheapest trip (`gates::trip_gate`)
    pub lifted_budgets: AtomicU64,
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
}
