//! The LLM generator: preference tables and opening lines from any OpenAI-compatible
//! `/v1/chat/completions` endpoint, grounded in the task's real inventory, cached on disk,
//! resumable and rate-limited.
//!
//! **One request per task attempt.** The reply holds every member's table (in generation
//! order) and every opening line. Against one request per member plus one for the lines, this
//! sends the grounding context (the bulk of the prompt) once instead of N+1 times, has no chain
//! of dependent round trips (a 6-member task is one round trip, not up to 7), lets the model see
//! the whole group so the archetype's clashes are deliberate, and makes a task attempt one cache
//! entry, so a rerun resumes task by task. Copy strategies stay exact: the schema asks a copying
//! member only for the fields it owns, and the parser copies the inherited ones from its
//! reference member, so they can never drift.
//!
//! Flow of an attempt: `prompt::build` (system from `prompts/`, user = one JSON object of
//! grounding, schema with the candidates as enums) -> `client::Transport::chat` (cache, then
//! the server) -> `parse::parse` (typed tables, every name checked against the candidates) ->
//! on problems a correction turn with the list of problems, at most `max_corrections` times ->
//! `Err(GenError)` so the build regenerates (with the validator's feedback) or drops and
//! replaces the task. Conditions retrying cannot cure make the transport fatal; `stopped` reports it and the
//! build stops after the batch without committing it.

pub mod cache;
pub mod city;
pub mod client;
mod converse;
pub mod grounding;
pub mod member;
pub mod parse;
pub mod prompt;
pub mod schema;
pub mod stream;
pub mod window;

use anyhow::{Result, bail};
use client::{Format, Stats, Transport};
use converse::{Said, Unit};
use gtb_core::config::Config;
use gtb_core::redact::public_url;
use gtb_generate::{GenError, Generated, PreferenceGenerator, Request, TaskContext, messages};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rejected replies kept in the run report (the raw replies are in the cache).
pub(crate) const MAX_REJECTIONS_LISTED: usize = 500;

pub struct LlmGenerator {
    inner: Arc<Inner>,
    rt: tokio::runtime::Runtime,
    version: String,
    max_attractions: usize,
    granularity: prompt::Granularity,
    validate: gtb_core::config::Validate,
    conflicts: gtb_core::config::Conflicts,
    busy: Mutex<Duration>,
    memo: prompt::Memo,
    cfg: gtb_core::config::Llm,
    reports: PathBuf,
}

/// What the spawned jobs share.
struct Inner {
    transport: Transport,
    stats: Arc<Stats>,
    max_corrections: u32,
    message_fallback: bool,
    refresh_rejected: bool,
    rejections: Mutex<Vec<Value>>,
    /// rejected replies per reason (a reply counts once under each of its reasons)
    by_reason: Mutex<BTreeMap<&'static str, u64>>,
    /// requests, turns and tokens per task (cached answers included)
    tasks: Mutex<BTreeMap<String, TaskUsage>>,
    /// the server's context window (learnt before the first batch; None inside when unknown):
    /// prompts and corrections are fitted to it
    window: std::sync::OnceLock<Option<window::Window>>,
    /// the configured completion budget per request
    max_tokens: u32,
}

/// What one task cost, over its attempts and turns (and, per member, over that member's
/// requests in per-member generation).
#[derive(Debug, Default, Clone, serde::Serialize)]
struct TaskUsage {
    attempts: u64,
    /// replies received (fresh or from the cache): every turn of every attempt
    turns: u64,
    prompt_tokens: u64,
    /// of those, the tokens the server reported reusing from its prefix cache (not computed)
    prompt_tokens_cached: u64,
    completion_tokens: u64,
    rejected: u64,
    /// opening lines written from the templates instead of the model's
    template_lines: u64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    members: BTreeMap<String, TaskUsage>,
}

/// The chat-completions URL of a base URL (`…/v1`, or the full `…/chat/completions`), with its
/// own query and the extra parameters (`name=value`) appended.
fn endpoint(base_url: &str, query: &[String]) -> Result<String> {
    let (base, own) = match base_url.trim().split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (base_url.trim(), None),
    };
    let base = base.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        bail!(
            "llm.base_url must start with http:// or https://, got {:?}",
            public_url(base)
        );
    }
    let mut url = if base.ends_with("/chat/completions") {
        base.to_string()
    } else {
        format!("{base}/chat/completions")
    };
    let mut params: Vec<&str> = own.into_iter().filter(|q| !q.is_empty()).collect();
    for q in query {
        let ok = q.split_once('=').is_some_and(|(k, v)| {
            !k.trim().is_empty() && !q.contains(char::is_whitespace) && !v.contains('&')
        });
        if !ok {
            bail!(
                "--query / llm.query {:?} is not name=value (no spaces or &)",
                public_url(&format!("http://x/?{q}")).trim_start_matches("http://x/?")
            );
        }
        params.push(q);
    }
    if !params.is_empty() {
        url.push('?');
        url.push_str(&params.join("&"));
    }
    Ok(url)
}

/// Extra headers from `"Name: value"`; headers gtb sets itself are refused.
fn headers(specs: &[String], key_header: &str) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for spec in specs {
        let Some((name, value)) = spec.split_once(':') else {
            bail!(
                "--header / llm.headers: an entry has no ':' (expected \"Name: value\"); it is not shown, header values may be secrets"
            );
        };
        let (name, value) = (name.trim(), value.trim());
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || reqwest::header::HeaderValue::from_str(value).is_err()
        {
            bail!(
                "--header {name:?}: not a valid header name, or its value holds characters a header cannot carry"
            );
        }
        let lower = name.to_ascii_lowercase();
        if ["content-type", "content-length", "host"].contains(&lower.as_str())
            || lower == key_header.to_ascii_lowercase()
            || out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            bail!("--header {name:?}: gtb sets this header itself, or it is given twice");
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// Body members gtb writes itself: --extra-body may not override them.
const OWN_BODY_KEYS: [&str; 9] = [
    "model",
    "messages",
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "response_format",
    "stream",
    "stream_options",
];

/// `--extra-body` as body members (`,"k":v,…`, in the given order).
fn extra_body(text: &str) -> Result<String> {
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("--extra-body / llm.extra_body is not JSON: {e}"))?;
    let Value::Object(m) = v else {
        bail!(
            "--extra-body / llm.extra_body must be a JSON object, like '{{\"enable_thinking\": false}}'"
        );
    };
    let mut out = String::new();
    for (k, v) in &m {
        if OWN_BODY_KEYS.contains(&k.as_str()) {
            bail!(
                "--extra-body: {k:?} is set by gtb (use --model, --temperature, --max-tokens, --max-tokens-param, --response-format, --no-stream)"
            );
        }
        out.push(',');
        out.push_str(&serde_json::to_string(k).expect("string"));
        out.push(':');
        out.push_str(&serde_json::to_string(v).expect("JSON"));
    }
    Ok(out)
}

/// The transport's settings from `[llm]`, every knob checked (the error names it); the key is
/// read from the environment here and nowhere else.
fn transport_settings(l: &gtb_core::config::Llm) -> Result<client::Settings> {
    if l.model.trim().is_empty() {
        bail!(
            "the LLM generator needs a model: --model NAME, llm.model in the config, or $OPENAI_MODEL"
        );
    }
    let format = match l.response_format.as_str() {
        "auto" | "json_schema" => Format::JsonSchema,
        "json_object" => Format::JsonObject,
        "text" => Format::Text,
        other => bail!(
            "llm.response_format must be auto, json_schema, json_object or text, got {other:?}"
        ),
    };
    if !(0.0..=2.0).contains(&l.temperature) {
        bail!("llm.temperature must be in 0..2, got {}", l.temperature);
    }
    if l.concurrency == 0 || l.max_tokens == 0 || l.timeout_secs == 0 {
        bail!("llm.concurrency, llm.max_tokens and llm.timeout_secs must be positive");
    }
    if !(0.0..=1.0).contains(&l.max_error_rate) {
        bail!(
            "llm.max_error_rate must be a share in 0..1, got {}",
            l.max_error_rate
        );
    }
    if l.price_input_per_mtok < 0.0 || l.price_output_per_mtok < 0.0 {
        bail!("llm prices must not be negative");
    }
    let token_param = match l.max_tokens_param.as_str() {
        "auto" | "max_tokens" => client::TokenParam::MaxTokens,
        "max_completion_tokens" => client::TokenParam::MaxCompletionTokens,
        other => bail!(
            "llm.max_tokens_param must be auto, max_tokens or max_completion_tokens, got {other:?}"
        ),
    };
    if !l.api_key_header.is_empty()
        && reqwest::header::HeaderName::from_bytes(l.api_key_header.as_bytes()).is_err()
    {
        bail!(
            "--api-key-header {:?} is not a valid header name",
            l.api_key_header
        );
    }
    if l.refresh_rejected && l.offline_replay {
        bail!("--refresh-rejected asks the server again, --offline-replay never does: choose one");
    }
    let key = std::env::var(&l.api_key_env)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .map(|k| k.trim().to_string());
    if key.is_none() && !l.offline_replay {
        eprintln!(
            "llm: ${} is not set; sending requests without an API key (fine for local servers)",
            l.api_key_env
        );
    }
    Ok(client::Settings {
        endpoint: endpoint(&l.base_url, &l.query)?,
        model: l.model.clone(),
        key,
        key_env: l.api_key_env.clone(),
        key_header: Some(l.api_key_header.clone()).filter(|h| !h.is_empty()),
        headers: headers(&l.headers, &l.api_key_header)?,
        extra_body: extra_body(&l.extra_body)?,
        prompt_version: prompt::prompts_version(),
        temperature: l.temperature,
        max_tokens: l.max_tokens,
        token_param,
        stream: l.stream,
        negotiate_token_param: l.max_tokens_param == "auto",
        send_seed: l.send_seed,
        format,
        negotiate: l.response_format == "auto",
        concurrency: l.concurrency,
        rpm: l.requests_per_minute,
        tpm: l.tokens_per_minute,
        timeout: Duration::from_secs(l.timeout_secs),
        max_retries: l.max_retries,
        backoff: Duration::from_millis(l.backoff_ms),
        rate_limit_budget: Duration::from_secs(l.rate_limit_budget_secs),
        max_error_rate: l.max_error_rate,
        offline_replay: l.offline_replay,
    })
}

/// Fill the empty LLM settings from the environment (`OPENAI_BASE_URL`, `OPENAI_MODEL`), so
/// the manifest records what was used.
pub fn resolve(cfg: &mut gtb_core::config::Llm) {
    if cfg.base_url.is_empty() {
        cfg.base_url = std::env::var("OPENAI_BASE_URL")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "https://api.openai.com/v1".into());
    }
    if cfg.model.is_empty() {
        cfg.model = std::env::var("OPENAI_MODEL").unwrap_or_default();
    }
}

impl LlmGenerator {
    /// Check the settings and set up the client (no request is sent).
    pub fn new(cfg: &Config) -> Result<LlmGenerator> {
        let mut l = cfg.llm.clone();
        resolve(&mut l);
        let settings = transport_settings(&l)?;
        let granularity = prompt::Granularity::parse(&l.granularity).ok_or_else(|| {
            anyhow::anyhow!(
                "llm.granularity must be member or task, got {:?}",
                l.granularity
            )
        })?;
        let prompt_version = settings.prompt_version.clone();
        // what shapes the output: part of the generate stage's fingerprint (header values only
        // as a digest: they may be secrets). The window is learnt when the first batch needs
        // it (a run that reuses every stage asks the server nothing); like the model behind a
        // name, it is not part of the fingerprint: the prompts it shapes are in every cache key
        let params = json!({
            "endpoint": public_url(&settings.endpoint), "model": l.model, "temperature": l.temperature, "max_tokens": l.max_tokens,
            "response_format": l.response_format, "send_seed": l.send_seed, "max_attractions": l.max_attractions,
            "max_corrections": l.max_corrections, "message_fallback": l.message_fallback, "min_meal_cost": cfg.validate.min_meal_cost,
            "max_tokens_param": l.max_tokens_param, "extra_body": settings.extra_body,
            "headers": client::headers_digest(&settings.headers), "validate": cfg.validate,
            "granularity": granularity,
        });
        let version = format!(
            "{prompt_version} model={} params={}",
            l.model,
            &blake3::hash(params.to_string().as_bytes()).to_hex()[..12],
        );
        let stats = Arc::new(Stats::default());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("gtb-llm")
            .build()?;
        let transport = {
            let _g = rt.enter();
            Transport::new(settings, &l.cache_dir, stats.clone())?
        };
        let inner = Arc::new(Inner {
            transport,
            stats,
            max_corrections: l.max_corrections,
            message_fallback: l.message_fallback,
            refresh_rejected: l.refresh_rejected,
            rejections: Mutex::new(Vec::new()),
            by_reason: Mutex::new(BTreeMap::new()),
            tasks: Mutex::new(BTreeMap::new()),
            window: std::sync::OnceLock::new(),
            max_tokens: l.max_tokens,
        });
        Ok(LlmGenerator {
            inner,
            rt,
            version,
            max_attractions: l.max_attractions,
            granularity,
            validate: cfg.validate.clone(),
            conflicts: cfg.generate.conflicts.clone(),
            busy: Mutex::new(Duration::ZERO),
            memo: Default::default(),
            cfg: l,
            reports: cfg.run.reports.clone(),
        })
    }

    pub fn stats(&self) -> &Stats {
        &self.inner.stats
    }

    /// Wall time spent inside `generate_batch` so far.
    pub fn busy(&self) -> Duration {
        *self.busy.lock().expect("busy")
    }

    /// Drive a batch of attempts: prompts are built in parallel (rayon), then every attempt runs
    /// as a task of the generator's runtime; the transport bounds what is in flight. When the
    /// transport went fatal the answers are failures and `stopped` tells the build to stop.
    fn run_batch(
        &self,
        items: &[(&TaskContext, u32, Option<&str>)],
    ) -> Vec<Result<Generated, GenError>> {
        use rayon::prelude::*;
        let t0 = Instant::now();
        let stats = &self.inner.stats;
        stats.batch_done.store(0, Ordering::Relaxed);
        if self.inner.window.get().is_none() {
            let w = self
                .rt
                .block_on(self.inner.transport.window(self.cfg.context_tokens));
            self.inner.window.set(w).ok();
        }
        let progress = Progress::start(&self.rt, stats.clone(), items.len(), &self.inner.transport);
        // Prompts are built (in parallel, by rayon) just ahead of what is in flight: the first
        // requests leave at once, the rest of the CPU work overlaps the network waits, and at
        // most `window` prompts are held in memory however large the batch.
        let window = (self.inner.transport.s.concurrency * 2).max(64);
        let slots = Arc::new(tokio::sync::Semaphore::new(window));
        let chunk = (window / 4).clamp(8, 32);
        let mut handles: Vec<tokio::task::JoinHandle<Said>> = Vec::with_capacity(items.len());
        for part in items.chunks(chunk) {
            let permits = self
                .rt
                .block_on(slots.clone().acquire_many_owned(part.len() as u32))
                .expect("window open");
            let set = prompt::Settings {
                max_attractions: self.max_attractions,
                conflicts: &self.conflicts,
                validate: &self.validate,
                window: self.inner.window().map(|w| (w, self.inner.max_tokens)),
                granularity: self.granularity,
            };
            let prompts: Vec<Result<prompt::TaskPrompt, String>> = part
                .par_iter()
                .map(|(ctx, _, fb)| prompt::build(ctx, &self.memo, &set, *fb))
                .collect();
            let mut permits = Some(permits);
            for (p, (ctx, attempt, _)) in prompts.into_iter().zip(part) {
                let inner = self.inner.clone();
                let (task, seed, attempt) = (ctx.skeleton.task_id.clone(), ctx.seed, *attempt);
                let permit = permits.as_mut().and_then(|ps| ps.split(1));
                if p.as_ref()
                    .is_ok_and(|p| p.attractions_offered < self.max_attractions)
                {
                    Stats::add(&self.inner.stats.fitted_prompts, 1);
                }
                handles.push(self.rt.spawn(async move {
                    let out = match p {
                        Ok(p) => inner.attempt(p, task, seed, attempt).await,
                        // no prompt fits the window: no retry can cure it, the run stops
                        Err(m) => {
                            inner.transport.set_fatal(m.clone());
                            Said::Failed(GenError(m))
                        }
                    };
                    drop(permit);
                    out
                }));
            }
        }
        let outs = self.rt.block_on(futures_util::future::join_all(handles));
        progress.stop();
        *self.busy.lock().expect("busy") += t0.elapsed();
        outs.into_iter()
            .zip(items)
            .map(|(o, (ctx, attempt, _))| match o {
                Ok(Said::Done(tables, lines)) => Ok(with_lines(ctx, *attempt, tables, lines)),
                Ok(Said::Failed(e) | Said::Rejected(e)) => Err(e),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => Err(GenError(format!("LLM task cancelled: {e}"))),
            })
            .collect()
    }

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

    /// Whether this run asked the generator for anything (every stage may have been reused).
    fn did_work(&self) -> bool {
        let s = &self.inner.stats;
        Stats::get(&s.sent)
            + Stats::get(&s.cached)
            + Stats::get(&s.attempts_ok)
            + Stats::get(&s.attempts_failed)
            > 0
    }

    /// Write `<reports>/llm_report.json` and add the accounting to the manifests this run
    /// wrote. Called by `gtb_build` after the run (also after an abort). A run that generated
    /// nothing (every stage reused) keeps the report of the run that did, and copies that
    /// accounting into any manifest it rewrote: report and manifest always agree.
    pub fn finish(&self, manifests: &[PathBuf]) -> Result<()> {
        let path = self.reports.join("llm_report.json");
        let previous = (!self.did_work())
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        let report = match previous {
            Some(r) => {
                eprintln!(
                    "llm: nothing generated in this run; {} keeps the accounting of the run that generated the data",
                    path.display()
                );
                r
            }
            None => {
                let r = self.report();
                let text = self
                    .inner
                    .transport
                    .redact
                    .clean(&serde_json::to_string_pretty(&r)?);
                gtb_core::digest::write_atomic(&path, text.as_bytes())?;
                r
            }
        };
        let mut summary = report;
        if let Some(o) = summary.as_object_mut() {
            o.remove("rejections");
            o.remove("tasks");
        }
        for m in manifests {
            let Ok(bytes) = std::fs::read(m) else {
                continue;
            };
            let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            v["llm"] = summary.clone();
            let text = self
                .inner
                .transport
                .redact
                .clean(&gtb_core::pyjson::to_string(&v));
            gtb_core::digest::write_atomic(m, text.as_bytes())?;
        }
        if Stats::get(&self.inner.stats.sent) + Stats::get(&self.inner.stats.cached) > 0 {
            eprintln!(
                "{}",
                self.inner.transport.redact.clean(&self.summary_line())
            );
        }
        Ok(())
    }
}

/// A task's generated tables and lines: the model's line where it passed, a template line
/// (`generate::messages`, the offline generator's, from the accepted table) where it did not.
/// The template stream is drawn for every member, so which lines stand in changes no other.
fn with_lines(
    ctx: &TaskContext,
    attempt: u32,
    tables: Vec<(String, gtb_core::task::Preference)>,
    lines: Vec<Option<gtb_core::task::Message>>,
) -> Generated {
    let mut rng = gtb_core::rng::item_rng(
        ctx.seed,
        "llm-messages",
        &format!("{}#{attempt}", ctx.skeleton.task_id),
    );
    let messages = tables
        .iter()
        .zip(lines)
        .map(|((u, t), line)| {
            let template = messages::opening_message(ctx, u, t, &mut rng);
            line.unwrap_or(template)
        })
        .collect();
    Generated { tables, messages }
}

impl Inner {
    /// The seed of one request: (run seed, task, attempt, turn).
    fn request_seed(seed: u64, task: &str, attempt: u32, turn: u32) -> u64 {
        use rand::RngCore;
        // 31 bits: some servers take the seed as a signed 32-bit integer
        gtb_core::rng::item_rng(seed, "llm-request", &format!("{task}#{attempt}#{turn}")).next_u64()
            & 0x7fff_ffff
    }

    /// One task attempt: one conversation for the group, or one per member in generation
    /// order (each after the tables accepted before it; a member that exhausts its turns fails
    /// the attempt, and the build regenerates the task); books its outcome.
    async fn attempt(
        self: Arc<Self>,
        p: prompt::TaskPrompt,
        task: String,
        seed: u64,
        attempt: u32,
    ) -> Said {
        self.usage(&task, None, |u| u.attempts += 1);
        let out = match p.granularity {
            prompt::Granularity::Task => {
                let unit = Unit {
                    p: &p,
                    members: &p.members,
                    accepted: &[],
                    first: vec![
                        json!({"role": "system", "content": p.system}),
                        json!({"role": "user", "content": p.user}),
                    ],
                    schema: p.schema_json.clone(),
                    task: &task,
                    member: None,
                    seed,
                    attempt,
                };
                self.converse(&unit).await
            }
            prompt::Granularity::Member => self.members(&p, &task, seed, attempt).await,
        };
        match &out {
            // an attempt with template lines (for some members, or all) counts once
            Said::Done(_, lines) if lines.iter().any(Option::is_none) => {
                Stats::add(&self.stats.message_fallbacks, 1);
                Stats::add(&self.stats.attempts_ok, 1);
                self.transport.outcome(true, "");
            }
            Said::Failed(_) => Stats::add(&self.stats.attempts_failed, 1),
            Said::Rejected(e) => {
                Stats::add(&self.stats.attempts_failed, 1);
                self.transport.outcome(false, &e.0);
            }
            _ => {
                Stats::add(&self.stats.attempts_ok, 1);
                self.transport.outcome(true, "");
            }
        }
        Stats::add(&self.stats.batch_done, 1);
        out
    }

    /// The members of a task asked one by one in generation order, each after the tables
    /// accepted before it; the first member that exhausts its turns ends the attempt.
    async fn members(&self, p: &prompt::TaskPrompt, task: &str, seed: u64, attempt: u32) -> Said {
        let (mut tables, mut lines) = (Vec::new(), Vec::new());
        for (i, m) in p.members.iter().enumerate() {
            let unit = Unit {
                p,
                members: std::slice::from_ref(m),
                accepted: &tables,
                first: member::first_turn(p, i, &tables),
                schema: schema::member_schema(m, true, &p.cities, p.min_budget, &p.ranges),
                task,
                member: Some(&m.user),
                seed,
                attempt,
            };
            match self.converse(&unit).await {
                Said::Done(t, l) => {
                    tables.extend(t);
                    lines.extend(l);
                }
                failed => return failed,
            }
        }
        Said::Done(tables, lines)
    }

    /// The server's context window, once learnt and when known.
    fn window(&self) -> Option<&window::Window> {
        self.window.get().and_then(Option::as_ref)
    }

    /// Update the usage of one task, and of one of its members when given (then the task's
    /// counts follow: its attempts are the task's own).
    fn usage(&self, task: &str, member: Option<&str>, f: impl Fn(&mut TaskUsage)) {
        let mut tasks = self.tasks.lock().expect("tasks");
        let t = tasks.entry(task.to_string()).or_default();
        f(t);
        if let Some(m) = member {
            f(t.members.entry(m.to_string()).or_default());
        }
    }

    /// The completion budget of a request: the configured one, cut to what the window leaves
    /// once the conversation is in.
    fn max_tokens_for(&self, conv: &[Value]) -> u32 {
        match self.window() {
            Some(w) => w
                .max_tokens(self.max_tokens, window::estimate_messages(conv))
                .max(window::MIN_REPLY.min(self.max_tokens)),
            None => self.max_tokens,
        }
    }
}

impl PreferenceGenerator for LlmGenerator {
    fn name(&self) -> &str {
        "openai"
    }
    fn version(&self) -> String {
        self.version.clone()
    }
    fn stopped(&self) -> Option<String> {
        self.inner.transport.fatal()
    }
    fn generate(
        &self,
        ctx: &TaskContext,
        attempt: u32,
        feedback: Option<&str>,
    ) -> Result<Generated, GenError> {
        self.run_batch(&[(ctx, attempt, feedback)])
            .pop()
            .expect("one answer")
    }
    fn generate_batch(&self, requests: &[Request]) -> Vec<Result<Generated, GenError>> {
        let items: Vec<(&TaskContext, u32, Option<&str>)> = requests
            .iter()
            .map(|r| (&r.ctx, r.attempt, r.feedback.as_deref()))
            .collect();
        self.run_batch(&items)
    }
}

/// Progress of a batch: an indicatif bar on a terminal (done, cached, failed and in flight
/// apart), else a plain line every 30 s for long batches.
struct Progress {
    stop: Arc<tokio::sync::Notify>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

/// Tokens per second received, over the last few seconds.
struct Rate {
    samples: std::collections::VecDeque<(Instant, u64)>,
}

impl Rate {
    /// How far back the rate looks.
    const SPAN: Duration = Duration::from_secs(10);
    fn new(count: u64) -> Rate {
        Rate {
            samples: std::iter::once((Instant::now(), count)).collect(),
        }
    }
    fn update(&mut self, count: u64) -> f64 {
        let now = Instant::now();
        self.samples.push_back((now, count));
        while self.samples.len() > 2 && now - self.samples[0].0 > Self::SPAN {
            self.samples.pop_front();
        }
        let (t, c) = self.samples[0];
        let secs = (now - t).as_secs_f64();
        if secs < 0.5 {
            0.0
        } else {
            count.saturating_sub(c) as f64 / secs
        }
    }
}

impl Progress {
    fn start(
        rt: &tokio::runtime::Runtime,
        stats: Arc<Stats>,
        len: usize,
        t: &Transport,
    ) -> Progress {
        let stop = Arc::new(tokio::sync::Notify::new());
        if len < 2 {
            return Progress { stop, handle: None };
        }
        let base = (
            Stats::get(&stats.cached),
            Stats::get(&stats.attempts_failed),
            Stats::get(&stats.sent),
        );
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let limit = t.concurrency();
        let flag = stop.clone();
        let handle = rt.spawn(async move {
            let pb = indicatif::ProgressBar::new(len as u64);
            if tty {
                pb.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix:>9} [{bar:30}] {pos}/{len} {elapsed} {msg}",
                    )
                    .expect("template")
                    .progress_chars("=> "),
                );
                pb.set_prefix("llm");
            } else {
                pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            let t0 = Instant::now();
            let mut last_line = Instant::now();
            let mut rate = Rate::new(Stats::get(&stats.received_pieces));
            loop {
                let done = Stats::get(&stats.batch_done);
                let msg = format!(
                    "done {done} · cached {} · failed {} · in flight {} (limit {limit}) · sent {} · {:.0} tok/s",
                    Stats::get(&stats.cached) - base.0,
                    Stats::get(&stats.attempts_failed) - base.1,
                    Stats::get(&stats.in_flight),
                    Stats::get(&stats.sent) - base.2,
                    rate.update(Stats::get(&stats.received_pieces))
                );
                pb.set_position(done);
                pb.set_message(msg.clone());
                if !tty && last_line.elapsed() >= Duration::from_secs(30) {
                    eprintln!(
                        "llm: {done}/{len} after {:.0}s: {msg}",
                        t0.elapsed().as_secs_f64()
                    );
                    last_line = Instant::now();
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = flag.notified() => break,
                }
            }
            pb.finish_and_clear();
        });
        Progress {
            stop,
            handle: Some(handle),
        }
    }
    fn stop(mut self) {
        self.stop.notify_one();
        if let Some(h) = self.handle.take() {
            // the bar clears itself within one tick
            let deadline = Instant::now() + Duration::from_millis(500);
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_credentials() {
        assert_eq!(
            public_url("https://user:pw@api.example.com/v1"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            public_url("http://127.0.0.1:8000/v1"),
            "http://127.0.0.1:8000/v1"
        );
    }

    #[test]
    fn seeds_differ_per_turn_and_fit_31_bits() {
        let a = Inner::request_seed(1, "task_000001", 0, 0);
        assert_ne!(a, Inner::request_seed(1, "task_000001", 0, 1));
        assert_ne!(a, Inner::request_seed(1, "task_000001", 1, 0));
        assert!(a < (1 << 31));
    }
}
