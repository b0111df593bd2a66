//! A fake OpenAI-compatible server on loopback, for trying `gtb build --llm openai` without a
//! model and for the generate-stage benchmark (fixed latency, optional injected faults).
//!
//!     cargo run --release --bin gtb-fake-llm -- --port 8089 --latency-ms 200
//!     OPENAI_BASE_URL=http://127.0.0.1:8089/v1 gtb build --llm openai --model fake --concurrency 64
//!
//! Faults: `--fault 429=0.1 --fault 500=0.1 --fault timeout=0.05 --fault truncated=0.05
//! --fault malformed_body=0.05 --fault malformed_json=0.1 --fault hallucinated=0.1
//! --fault bad_mode=0.05 --fault injection=0.1 --fault fenced=0.2 --fault prose_braces=0.1
//! --fault content_parts=0.1 --fault foreign_food=0.1` (shares of requests); `--rate-limit 4` is an
//! honest 4 requests/s limit (429 with a Retry-After that suffices).

use clap::Parser;
use gtb_fake_llm::{FakeConfig, FakeServer, Faults};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "gtb-fake-llm",
    about = "Fake OpenAI-compatible chat-completions server on 127.0.0.1"
)]
struct Args {
    /// Port on 127.0.0.1 (0 = any free port)
    #[arg(long, default_value_t = 8089)]
    port: u16,
    /// Fixed latency of every answer: from the request's arrival to the answer, the server's own
    /// work (reading the body, drafting the reply) included
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Injected fault as KIND=SHARE (repeatable)
    #[arg(long = "fault", value_name = "KIND=SHARE")]
    faults: Vec<String>,
    /// Retry-After seconds sent with injected 429s
    #[arg(long, default_value_t = 1)]
    retry_after: u64,
    /// How long an injected timeout hangs, ms
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    /// Answer 400 to response_format json_schema (servers without structured outputs)
    #[arg(long)]
    reject_json_schema: bool,
    /// Answer 401 unless this bearer token is sent
    #[arg(long)]
    require_key: Option<String>,
    /// The first new requests get one enabled fault kind each (every kind is seen at least once)
    #[arg(long)]
    each_kind_first: bool,
    /// Honest rate limit, requests per second (0 = none)
    #[arg(long, default_value_t = 0.0)]
    rate_limit: f64,
    /// Answer 400 to max_tokens, asking for max_completion_tokens (OpenAI reasoning models)
    #[arg(long)]
    reject_max_tokens: bool,
    /// Answer 401 unless this header is sent, "Name: value" (Azure: "api-key: KEY")
    #[arg(long, value_name = "NAME: VALUE")]
    require_header: Option<String>,
    /// Answer 404 unless this query parameter is on the URL (Azure: api-version=2024-10-21)
    #[arg(long, value_name = "NAME=VALUE")]
    require_query: Option<String>,
    /// Stop after this many seconds (0 = run until killed)
    #[arg(long, default_value_t = 0)]
    exit_after: u64,
    /// Context per request in the fake's tokens (prompt characters / 2), said by GET /props as
    /// llama.cpp does; a longer prompt gets llama.cpp's 400 exceed_context_size_error
    #[arg(long)]
    n_ctx: Option<u64>,
    /// Pause between the pieces of a streamed reply, ms (a slow server)
    #[arg(long, default_value_t = 0)]
    piece_delay_ms: u64,
    /// Answer 400 to "stream": true (a server without streaming)
    #[arg(long)]
    refuse_stream: bool,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let mut f = Faults {
        retry_after_secs: a.retry_after,
        timeout_ms: a.timeout_ms,
        reject_json_schema: a.reject_json_schema,
        require_key: a.require_key,
        each_kind_first: a.each_kind_first,
        rate_limit_per_sec: a.rate_limit,
        reject_max_tokens: a.reject_max_tokens,
        require_header: a
            .require_header
            .as_deref()
            .and_then(|h| h.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string())),
        require_query: a.require_query,
        refuse_stream: a.refuse_stream,
        ..Default::default()
    };
    for spec in &a.faults {
        let (k, v) = spec
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--fault {spec:?} is not KIND=SHARE"))?;
        let v: f64 = v.parse()?;
        *f.rate_mut(k)
            .ok_or_else(|| anyhow::anyhow!("unknown fault kind {k:?}"))? = v;
    }
    let server = FakeServer::start(
        FakeConfig {
            latency: Duration::from_millis(a.latency_ms),
            faults: f,
            n_ctx: a.n_ctx,
            piece_delay: Duration::from_millis(a.piece_delay_ms),
        },
        a.port,
    )?;
    println!("{}", server.base_url());
    let t0 = std::time::Instant::now();
    let mut last = u64::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let n = server
            .stats
            .requests
            .load(std::sync::atomic::Ordering::Relaxed);
        if n != last {
            let faults = server.stats.faults.lock().unwrap().clone();
            eprintln!(
                "gtb-fake-llm: {n} requests, {} completions, max in flight {}, early (inside a Retry-After) {}, faults {faults:?}",
                server
                    .stats
                    .completions
                    .load(std::sync::atomic::Ordering::Relaxed),
                server
                    .stats
                    .max_in_flight
                    .load(std::sync::atomic::Ordering::Relaxed),
                server
                    .stats
                    .early_requests
                    .load(std::sync::atomic::Ordering::Relaxed)
            );
            last = n;
        }
        if a.exit_after > 0 && t0.elapsed() >= Duration::from_secs(a.exit_after) {
            return Ok(());
        }
    }
}
