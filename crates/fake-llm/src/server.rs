//! The server: a listener in a thread of its own, one connection's requests answered in turn,
//! and what is turned away (paths, keys, headers, rate limits, quota) or refused (bodies,
//! parameters, streams, prompts too long for the context) before a completion is written.

use crate::faults::{Ask, Faults, Injected, transport_fault};
use crate::http::{Canned, Req, read_req, respond, respond_stream, send};
use crate::prompt::{prompt_tokens, wants_stream};
use crate::reply::completed;
use crate::stats::FakeStats;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct FakeConfig {
    pub latency: Duration,
    pub faults: Faults,
    /// the context per request, in the fake's tokens (a prompt's characters / 2): `GET /props`
    /// says it as llama.cpp does, and a longer prompt gets llama.cpp's 400
    /// `exceed_context_size_error`; None = no limit and no `/props`
    pub n_ctx: Option<u64>,
    /// the pause between the pieces of a streamed reply (a slow server still producing)
    pub piece_delay: Duration,
}

impl Default for FakeConfig {
    fn default() -> Self {
        FakeConfig {
            latency: Duration::ZERO,
            faults: Faults::default(),
            n_ctx: None,
            piece_delay: Duration::ZERO,
        }
    }
}

pub struct FakeServer {
    pub addr: std::net::SocketAddr,
    pub stats: Arc<FakeStats>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeServer {
    /// Start on 127.0.0.1 (port 0 = any) in a thread of its own.
    pub fn start(cfg: FakeConfig, port: u16) -> std::io::Result<FakeServer> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let stats = Arc::new(FakeStats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (stats.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).expect("listener");
                let cfg = Arc::new(cfg);
                while !sp.load(Ordering::Relaxed) {
                    let accepted =
                        tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
                    let Ok(Ok((sock, _))) = accepted else {
                        continue;
                    };
                    let (cfg, st) = (cfg.clone(), st.clone());
                    tokio::spawn(async move {
                        serve(sock, cfg, st).await.ok();
                    });
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        Ok(FakeServer {
            addr,
            stats,
            stop,
            thread: Some(thread),
        })
    }
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

struct InFlight(Arc<FakeStats>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether a request asks for a completion (counted in `requests`) rather than probing.
fn is_completion(req: &Req) -> bool {
    req.method == "POST"
        && req
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .ends_with("/chat/completions")
}

/// The bookkeeping of every request before it is looked at: requests or probes, early
/// arrivals, what it carried, the bearer seen. Returns its Authorization header, and the guard
/// that counts it as in flight until its latency is served.
fn admit(st: &Arc<FakeStats>, req: &Req) -> (String, InFlight) {
    // `requests` counts what a client asks to be completed; other paths (a client asking
    // for /props, /v1/models ...) are `probes`
    if is_completion(req) {
        st.requests.fetch_add(1, Ordering::Relaxed);
    } else {
        st.probes.fetch_add(1, Ordering::Relaxed);
    }
    st.arrived();
    st.record(req);
    // Counted while the request is being worked on, not while its reply is written: the
    // client may legitimately send its next request before this task gets to run again.
    let now = st.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    st.max_in_flight.fetch_max(now, Ordering::Relaxed);
    let working = InFlight(st.clone());
    let auth = req
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default();
    {
        let mut seen = st.auth_seen.lock().unwrap();
        if !seen.contains(&auth) {
            seen.push(auth.clone());
        }
    }
    (auth, working)
}

/// The answer to a request that is not completed for where or how it comes: `GET /props`,
/// another path or a missing query parameter (404), a wrong key or header (401), the honest
/// rate limit or an exhausted quota (429). Faults are booked.
fn turned_away(cfg: &FakeConfig, st: &FakeStats, req: &Req, auth: &str) -> Option<Canned> {
    let f = &cfg.faults;
    let (path, query) = req.path.split_once('?').unwrap_or((&req.path, ""));
    if req.method == "GET" && path == "/props" {
        let (code, body) = props(cfg);
        return Some(Canned::new(code, body));
    }
    let query_ok = f
        .require_query
        .as_ref()
        .is_none_or(|q| query.split('&').any(|kv| kv == q));
    if req.method != "POST" || !path.ends_with("/chat/completions") || !query_ok {
        return Some(Canned::new(404, r#"{"error": {"message": "not found"}}"#));
    }
    if let Some(k) = &f.require_key
        && auth != format!("Bearer {k}")
    {
        st.fault("401");
        return Some(Canned::new(
            401,
            r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}"#,
        ));
    }
    if let Some((name, value)) = &f.require_header
        && req.headers.get(&name.to_ascii_lowercase()) != Some(value)
    {
        st.fault("401");
        return Some(Canned::new(
            401,
            r#"{"error": {"message": "Access denied due to invalid subscription key", "code": "401"}}"#,
        ));
    }
    if let Some(wait) = st.over_limit(f.rate_limit_per_sec) {
        st.fault("rate_limit");
        return Some(Canned::retry_after(
            wait,
            r#"{"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}"#,
        ));
    }
    if f.quota_exhausted {
        st.fault("quota");
        return Some(Canned::new(
            429,
            r#"{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}"#,
        ));
    }
    None
}

/// The request's JSON body, or the 400 answered instead: not JSON, `max_tokens` where it is
/// refused, a refused stream or too long a prompt, `json_schema` where it is refused. The
/// response_format type is counted and faults are booked.
fn parsed_body(cfg: &FakeConfig, st: &FakeStats, req: &Req) -> Result<Value, Canned> {
    let f = &cfg.faults;
    let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
        return Err(Canned::new(
            400,
            r#"{"error": {"message": "body is not JSON"}}"#,
        ));
    };
    let rf = body
        .get("response_format")
        .and_then(|r| r.get("type"))
        .and_then(|t| t.as_str())
        .unwrap_or("none")
        .to_string();
    *st.formats.lock().unwrap().entry(rf.clone()).or_default() += 1;
    if f.reject_max_tokens && body.get("max_tokens").is_some() {
        st.fault("reject_max_tokens");
        return Err(Canned::new(
            400,
            r#"{"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}"#,
        ));
    }
    if let Some((fault, msg)) = refused(cfg, &body, wants_stream(&body)) {
        st.fault(fault);
        return Err(Canned::new(400, msg));
    }
    if f.reject_json_schema && rf == "json_schema" {
        st.fault("reject_json_schema");
        return Err(Canned::new(
            400,
            r#"{"error": {"message": "response_format json_schema is not supported by this server"}}"#,
        ));
    }
    Ok(body)
}

/// One connection: requests answered in turn until the client closes it (or a fault does).
/// The latency is the time from a request's arrival to its answer, the fake's own work (reading
/// the body, drafting the reply) included: a 200 ms server answers in 200 ms, however busy the
/// machine's cores are with the client.
async fn serve(
    mut sock: tokio::net::TcpStream,
    cfg: Arc<FakeConfig>,
    st: Arc<FakeStats>,
) -> std::io::Result<()> {
    sock.set_nodelay(true).ok();
    let mut buf = Vec::new();
    while let Some(req) = read_req(&mut sock, &mut buf).await? {
        let arrived = tokio::time::Instant::now();
        let (auth, working) = admit(&st, &req);
        let answer = answer(&cfg, &st, &req, &auth);
        tokio::time::sleep_until(arrived + cfg.latency).await;
        drop(working);
        match answer {
            Answer::Injected(Injected::Reply(c)) => {
                // a 429's pause runs from when the client can see it
                if let Some(wait) = c.announces {
                    st.announce(wait);
                }
                send(&mut sock, &c).await?
            }
            Answer::Injected(Injected::Hang(pause)) => {
                tokio::time::sleep(pause).await;
                return Ok(());
            }
            Answer::Injected(Injected::Truncated(full)) => {
                respond(&mut sock, 200, &[], full.as_bytes(), true)
                    .await
                    .ok();
                return Ok(());
            }
            Answer::Completion {
                reply,
                stream: true,
            } => {
                st.streamed.fetch_add(1, Ordering::Relaxed);
                respond_stream(&mut sock, &reply, cfg.piece_delay).await?;
            }
            Answer::Completion {
                reply,
                stream: false,
            } => respond(&mut sock, 200, &[], reply.as_bytes(), false).await?,
        }
    }
    Ok(())
}

/// What a request gets: a canned answer or a fault, or a completion (streamed or whole).
enum Answer {
    Injected(Injected),
    Completion { reply: String, stream: bool },
}

/// The answer to a request, worked out as it arrives.
fn answer(cfg: &FakeConfig, st: &FakeStats, req: &Req, auth: &str) -> Answer {
    if let Some(c) = turned_away(cfg, st, req, auth) {
        return Answer::Injected(Injected::Reply(c));
    }
    let body = match parsed_body(cfg, st, req) {
        Ok(body) => body,
        Err(c) => return Answer::Injected(Injected::Reply(c)),
    };
    let ask = Ask::new(st, &cfg.faults, &req.body, &body, auth);
    if let Some(fault) = transport_fault(st, &ask) {
        return Answer::Injected(fault);
    }
    Answer::Completion {
        reply: completed(st, &ask),
        stream: ask.stream,
    }
}

/// `GET /props` as llama.cpp answers it: the context per request (404 without one).
fn props(cfg: &FakeConfig) -> (u16, String) {
    match cfg.n_ctx {
        Some(n) => (
            200,
            json!({"default_generation_settings": {"n_ctx": n}, "total_slots": 1}).to_string(),
        ),
        None => (404, r#"{"error": {"message": "not found"}}"#.into()),
    }
}

/// A 400 for a request the fake refuses, as real servers word it: a stream where streaming is
/// off, a prompt longer than the context (llama.cpp's `exceed_context_size_error`).
fn refused(cfg: &FakeConfig, body: &Value, stream: bool) -> Option<(&'static str, String)> {
    if cfg.faults.refuse_stream && stream {
        let msg = r#"{"error": {"message": "stream is not supported by this server", "type": "invalid_request_error"}}"#;
        return Some(("refuse_stream", msg.into()));
    }
    let prompt = prompt_tokens(body);
    let n_ctx = cfg.n_ctx.filter(|&n| prompt >= n)?;
    let msg = json!({"error": {"code": 400, "message": format!("request ({prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"), "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": n_ctx}});
    Some(("exceed_context", msg.to_string()))
}
