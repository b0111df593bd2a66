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
mod gates;
mod grounding;
pub mod json;
mod lines;
pub mod member;
pub mod parse;
mod progress;
pub mod prompt;
mod report;
pub mod schema;
mod settings;
pub mod stream;
pub mod window;

use anyhow::Result;
use client::{Stats, Transport};
use converse::{Said, Unit};
use gtb_core::config::Config;
use gtb_core::redact::public_url;
use gtb_generate::{GenError, Generated, PreferenceGenerator, Request, TaskContext, messages};
use progress::Progress;
use serde_json::{Value, json};
pub use settings::resolve;
use settings::transport_settings;
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
    /// the reply's room kept free when prompts and corrections are fitted to the window
    reserve: u32,
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
            reserve: granularity.reply_reserve(l.max_tokens),
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
        let set = prompt::Settings {
            max_attractions: self.max_attractions,
            conflicts: &self.conflicts,
            validate: &self.validate,
            window: self.inner.window().map(|w| (w, self.inner.reserve)),
            granularity: self.granularity,
        };
        // Tasks run in at most 4 x `concurrency` places (the transport bounds the requests in
        // flight): a task busy between two requests (checking a reply, building its next
        // member's prompt) leaves its request slot to another, and a started task's next member
        // queues behind a few rounds at most. The tasks with the most members start first, so
        // the batch does not end on one long chain of members. On the 650 tasks of `gtb-bench
        // llm`, a simulation of whole 200 ms rounds ends at 1.035 x the ideal with 2 places per
        // slot and 1.011 with 4 (the measured gain is about as small, below the noise). Prompts
        // are built (in parallel, by rayon) a chunk ahead of what is in flight: the CPU work
        // overlaps the network waits, and few prompts are held in memory.
        let places = Arc::new(tokio::sync::Semaphore::new(
            (self.inner.transport.s.concurrency * 4).max(64),
        ));
        let order = self.dispatch_order(items);
        let mut handles = Vec::with_capacity(items.len());
        for part in order.chunks(16) {
            let prompts: Vec<Result<prompt::TaskPrompt, String>> = part
                .par_iter()
                .map(|&i| prompt::build(items[i].0, &self.memo, &set, items[i].2))
                .collect();
            for (p, &i) in prompts.into_iter().zip(part) {
                let (ctx, attempt, _) = items[i];
                let place = self
                    .rt
                    .block_on(places.clone().acquire_owned())
                    .expect("places open");
                if p.as_ref()
                    .is_ok_and(|p| p.attractions_offered < self.max_attractions)
                {
                    Stats::add(&self.inner.stats.fitted_prompts, 1);
                }
                let inner = self.inner.clone();
                let (task, seed) = (ctx.skeleton.task_id.clone(), ctx.seed);
                let handle = self.rt.spawn(async move {
                    let out = match p {
                        Ok(p) => inner.attempt(p, task, seed, attempt).await,
                        // no prompt fits the window: no retry can cure it, the run stops
                        Err(m) => {
                            inner.transport.set_fatal(m.clone());
                            Said::Failed(GenError(m))
                        }
                    };
                    drop(place);
                    out
                });
                handles.push((i, handle));
            }
        }
        let mut outs: Vec<Option<_>> = (0..items.len()).map(|_| None).collect();
        let (at, handles): (Vec<usize>, Vec<_>) = handles.into_iter().unzip();
        for (i, o) in at
            .into_iter()
            .zip(self.rt.block_on(futures_util::future::join_all(handles)))
        {
            outs[i] = Some(o);
        }
        progress.stop();
        *self.busy.lock().expect("busy") += t0.elapsed();
        outs.into_iter()
            .zip(items)
            .map(
                |(o, (ctx, attempt, _))| match o.expect("every task dispatched") {
                    Ok(Said::Done(tables, lines)) => Ok(with_lines(ctx, *attempt, tables, lines)),
                    Ok(Said::Failed(e) | Said::Rejected(e)) => Err(e),
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    Err(e) => Err(GenError(format!("LLM task cancelled: {e}"))),
                },
            )
            .collect()
    }

    /// The order tasks are dispatched in: per member, the tasks with the most members first
    /// (longest chains first; stable, so ties keep the batch's order); per task, as given.
    /// Only the timing depends on it: every request is seeded and cached by its own key.
    fn dispatch_order(&self, items: &[(&TaskContext, u32, Option<&str>)]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..items.len()).collect();
        if self.granularity == prompt::Granularity::Member {
            order.sort_by_key(|&i| std::cmp::Reverse(items[i].0.profiles.len()));
        }
        order
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
