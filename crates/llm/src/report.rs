//! The run's accounting: `llm_report.json` and the terminal's summary line.

use crate::LlmGenerator;
use crate::cache;
use crate::client::Stats;
use gtb_core::redact::public_url;
use serde_json::{Value, json};

impl LlmGenerator {
    /// The run's accounting as JSON (no secret: URL without credentials, no headers).
    pub fn report(&self) -> Value {
        let s = &self.inner.stats;
        let g = |a: &std::sync::atomic::AtomicU64| Stats::get(a);
        let cost = |p: u64, c: u64| self.cost(p, c);
        let round = |x: f64| (x * 1e6).round() / 1e6;
        json!({
            "generator": format!("openai {}", self.version),
            "endpoint": public_url(&self.inner.transport.s.endpoint),
            "model": self.inner.transport.s.model,
            "response_format": self.inner.transport.format().name(),
            "max_tokens_param": self.inner.transport.token_param().name(),
            // names only: header values may be secrets
            "extra_headers": self.inner.transport.s.headers.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
            "cache_dir": self.cfg.cache_dir.join(cache::BUCKET),
            "offline_replay": self.cfg.offline_replay,
            "requests": {
                "sent": g(&s.sent), "received": g(&s.received), "cached": g(&s.cached), "retries": g(&s.retries),
                "failed": g(&s.failed), "http_429": g(&s.http_429), "http_5xx": g(&s.http_5xx), "http_other": g(&s.http_other),
                "timeouts": g(&s.timeouts), "connection_errors": g(&s.connection_errors), "malformed_bodies": g(&s.malformed_bodies),
                "context_overflows": g(&s.context_overflows),
                "recent_transient_errors": self.inner.transport.transient_errors(),
                "format_downgrades": g(&s.format_downgrades), "final_concurrency": self.inner.transport.concurrency(),
                "rate_limited_seconds": g(&s.rate_limited_ms) as f64 / 1000.0,
            },
            "replies": {
                "rejected": g(&s.rejected_replies), "corrections": g(&s.corrections), "attempts_ok": g(&s.attempts_ok),
                "attempts_failed": g(&s.attempts_failed), "template_messages": g(&s.message_fallbacks),
                "compacted_corrections": g(&s.compacted_corrections),
                // replies outside the JSON schema they were asked with: the server ignored it
                "outside_schema": g(&s.schema_ignored),
            },
            // per reason, the rejected replies that had it (a reply counts once per reason)
            "rejections_by_reason": self.inner.by_reason.lock().expect("by_reason").clone(),
            "context_window": self.inner.window(),
            "fitted_prompts": g(&s.fitted_prompts),
            // items of accepted tables named in two tiers, kept in the stronger (the build's fix)
            "resolved_clashes": g(&s.resolved_clashes),
            // firm members' budgets lifted to the cheapest trip their group's hard wishes leave
            "lifted_budgets": g(&s.lifted_budgets),
            "streamed": self.inner.transport.streaming(),
            "granularity": self.granularity,
            "tokens": {
                // prompt: sent; of those, cached: reused from the server's prefix cache (as it
                // reports them), computed: the rest
                "this_run": {
                    "prompt": g(&s.prompt_tokens), "prompt_cached": g(&s.prompt_tokens_reused),
                    "prompt_computed": g(&s.prompt_tokens) - g(&s.prompt_tokens_reused).min(g(&s.prompt_tokens)),
                    "completion": g(&s.completion_tokens),
                },
                "from_cache": {"prompt": g(&s.cached_prompt_tokens), "completion": g(&s.cached_completion_tokens)},
            },
            "cost": {
                "currency": self.cfg.currency,
                "price_input_per_mtok": self.cfg.price_input_per_mtok,
                "price_output_per_mtok": self.cfg.price_output_per_mtok,
                "this_run": round(cost(g(&s.prompt_tokens), g(&s.completion_tokens))),
                "dataset": round(cost(g(&s.prompt_tokens) + g(&s.cached_prompt_tokens), g(&s.completion_tokens) + g(&s.cached_completion_tokens))),
            },
            "generate_wall_seconds": (self.busy().as_secs_f64() * 1000.0).round() / 1000.0,
            // per task (cached answers included): attempts, turns, tokens, rejected replies
            "tasks": self.inner.tasks.lock().expect("tasks").clone(),
            "rejections": self.inner.rejections.lock().expect("rejections").clone(),
        })
    }

    /// The price of prompt and completion tokens at the configured rates.
    fn cost(&self, prompt: u64, completion: u64) -> f64 {
        prompt as f64 / 1e6 * self.cfg.price_input_per_mtok
            + completion as f64 / 1e6 * self.cfg.price_output_per_mtok
    }

    /// One line for the terminal.
    pub fn summary_line(&self) -> String {
        let s = &self.inner.stats;
        let g = |a: &std::sync::atomic::AtomicU64| Stats::get(a);
        let mut line = format!(
            "llm: {} requests sent ({} retries), {} answers from the cache, {} failed; {} replies rejected, {} corrections, {} template lines; tokens this run {} in ({} reused from the server's prefix cache) / {} out",
            g(&s.sent),
            g(&s.retries),
            g(&s.cached),
            g(&s.failed),
            g(&s.rejected_replies),
            g(&s.corrections),
            g(&s.message_fallbacks),
            g(&s.prompt_tokens),
            g(&s.prompt_tokens_reused),
            g(&s.completion_tokens)
        );
        if self.cfg.price_input_per_mtok > 0.0 || self.cfg.price_output_per_mtok > 0.0 {
            let c = self.cost(g(&s.prompt_tokens), g(&s.completion_tokens));
            line.push_str(&format!(", cost {c:.4} {}", self.cfg.currency));
        }
        line
    }
}
