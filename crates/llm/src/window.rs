//! The server's context window: learnt once per run, so that every prompt is fitted to it
//! before it is sent (fewer attraction candidates when a task's grounding would not fit, a
//! shorter correction turn when the whole conversation would not) and no request overflows.
//!
//! Where it comes from, in order: `--context-tokens` (llm.context_tokens); llama.cpp's
//! `GET /props` (`default_generation_settings.n_ctx`: the per-request context, `-c` divided over
//! the `-np` slots); vLLM's `GET /v1/models` (`max_model_len`); Ollama's `GET /api/ps`
//! (`context_length` of the loaded model) or `POST /api/show` (a `num_ctx` parameter). A learnt
//! window is recorded in the cache folder, so that `--offline-replay` builds the same prompts
//! without a server.
//!
//! Tokens are estimated from the text (no tokenizer call), so that a rerun and an offline
//! replay fit the same prompts the same way. The estimate errs on the high side for the
//! tokenizers of the models gtb is used with (Gemma, Qwen, Llama, GPT): CJK characters,
//! digits and other characters are counted apart (see `estimate_tokens`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where a context window was learnt, and its size in tokens per request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub tokens: u32,
    pub source: String,
}

/// Tokens kept free besides the prompt and the reply: the chat template's own tokens and the
/// estimate's error on short texts.
const MARGIN: u32 = 96;

/// The fewest completion tokens a request may be given: a reply of a two-member task.
pub const MIN_REPLY: u32 = 512;

impl Window {
    /// The reply's room reserved when prompts are fitted: the configured completion budget,
    /// but never more than half the window (a prompt keeps the other half).
    pub fn reply_reserve(&self, max_tokens: u32) -> u32 {
        max_tokens
            .min(self.tokens / 2)
            .max(MIN_REPLY.min(self.tokens / 2))
    }
    /// The tokens a first turn's messages may take.
    pub fn prompt_budget(&self, max_tokens: u32) -> u32 {
        self.tokens
            .saturating_sub(self.reply_reserve(max_tokens))
            .saturating_sub(MARGIN)
    }
    /// The completion budget of a request whose messages take `prompt` tokens (estimated):
    /// the configured budget, cut to what the window leaves.
    pub fn max_tokens(&self, max_tokens: u32, prompt: u32) -> u32 {
        max_tokens.min(self.tokens.saturating_sub(prompt).saturating_sub(MARGIN))
    }
    /// Whether messages of `prompt` tokens leave the reply at least its reserve.
    pub fn fits(&self, max_tokens: u32, prompt: u32) -> bool {
        prompt <= self.prompt_budget(max_tokens)
    }
}

/// Estimated tokens of a text: a CJK character ~0.8 (a word of two is often one token), a digit
/// 1 (most tokenizers split numbers into digits), any other character ~0.4 (JSON punctuation,
/// latin words), and 4 per message for the chat template.
pub fn estimate_tokens(text: &str) -> u32 {
    let (mut cjk, mut digits, mut other) = (0u32, 0u32, 0u32);
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits += 1;
        } else if c as u32 >= 0x2E80 {
            cjk += 1;
        } else if !c.is_whitespace() {
            other += 1;
        }
    }
    (cjk * 4).div_ceil(5) + digits + (other * 2).div_ceil(5) + 4
}

/// Estimated tokens of a conversation (its messages' text).
pub fn estimate_messages(messages: &[Value]) -> u32 {
    messages
        .iter()
        .map(|m| estimate_tokens(m.get("content").and_then(Value::as_str).unwrap_or("")))
        .sum()
}

/// The server's root: the base URL without `/chat/completions` and `/v1`.
fn roots(endpoint: &str) -> (String, String) {
    let base = endpoint.split('?').next().unwrap_or(endpoint);
    let v1 = base.trim_end_matches("/chat/completions").to_string();
    let root = v1.trim_end_matches('/').trim_end_matches("/v1").to_string();
    (v1, root)
}

/// What the probes send with every request: the key and the extra headers.
pub struct Probe<'a> {
    pub client: &'a reqwest::Client,
    pub endpoint: &'a str,
    pub model: &'a str,
    pub auth: &'a [(String, String)],
    /// the most requests the run may have in flight (`llm.concurrency`)
    pub in_flight: usize,
}

impl Probe<'_> {
    async fn get_json(&self, url: &str, body: Option<&Value>) -> Option<Value> {
        let mut req = match body {
            Some(b) => self
                .client
                .post(url)
                .header("content-type", "application/json")
                .body(b.to_string()),
            None => self.client.get(url),
        };
        for (k, v) in self.auth {
            req = req.header(k.as_str(), v.as_str());
        }
        let r = tokio::time::timeout(Duration::from_secs(5), req.send())
            .await
            .ok()?
            .ok()?;
        if !r.status().is_success() {
            return None;
        }
        let text = tokio::time::timeout(Duration::from_secs(5), r.text())
            .await
            .ok()?
            .ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Ask the server: llama.cpp, then vLLM, then Ollama. None when none of them answers.
    /// The four questions go out at once, as far as `in_flight` allows (one round trip, not
    /// four, before the first prompt can be fitted), and the answers are read in that order of
    /// preference.
    pub async fn learn(&self) -> Option<Window> {
        use futures_util::StreamExt;
        let (v1, root) = roots(self.endpoint);
        let show = serde_json::json!({"model": self.model});
        let asks = [
            (format!("{root}/props"), None),
            (format!("{v1}/models"), None),
            (format!("{root}/api/ps"), None),
            (format!("{root}/api/show"), Some(&show)),
        ];
        // as many at once as the run may have in flight, answers kept in this order
        let answers: Vec<Option<Value>> = futures_util::stream::iter(&asks)
            .map(|(url, body)| self.get_json(url, *body))
            .buffered(self.in_flight.max(1))
            .collect()
            .await;
        choose(<[Option<Value>; 4]>::try_from(answers).ok()?, self.model)
    }
}

/// The window the first server to say one gives, from the answers of llama.cpp's `/props`,
/// vLLM's `/v1/models`, Ollama's `/api/ps` and `/api/show`, in that order.
fn choose([props, models, ps, shown]: [Option<Value>; 4], model: &str) -> Option<Window> {
    props
        .and_then(|v| from_props(&v))
        .or_else(|| models.and_then(|v| from_models(&v, model)))
        .or_else(|| ps.and_then(|v| from_ps(&v, model)))
        .or_else(|| from_show(&shown?, model))
}

/// A window of a positive number of tokens, if any.
fn found(tokens: Option<u64>, source: String) -> Option<Window> {
    tokens.filter(|&t| t > 0).map(|t| Window {
        tokens: t.min(u32::MAX as u64) as u32,
        source,
    })
}

/// llama.cpp's `GET /props`: the context per request.
fn from_props(v: &Value) -> Option<Window> {
    let n = v["default_generation_settings"]["n_ctx"].as_u64();
    let slots = v["total_slots"].as_u64().unwrap_or(1);
    found(
        n,
        format!("llama.cpp GET /props: n_ctx per request ({slots} slots)"),
    )
}

/// vLLM's `GET /v1/models`: the model's `max_model_len` (else the first model's).
fn from_models(v: &Value, model: &str) -> Option<Window> {
    let models = v["data"].as_array()?;
    let m = models
        .iter()
        .find(|m| m["id"].as_str() == Some(model))
        .or(models.first());
    found(
        m.and_then(|m| m["max_model_len"].as_u64()),
        "vLLM GET /v1/models: max_model_len".into(),
    )
}

/// Ollama's `GET /api/ps`: the loaded model's context.
fn from_ps(v: &Value, model: &str) -> Option<Window> {
    let n = v["models"].as_array()?.iter().find(|m| {
        m["name"].as_str() == Some(model) || m["model"].as_str() == Some(model)
    })?["context_length"]
        .as_u64();
    found(n, "Ollama GET /api/ps: context_length".into())
}

/// Ollama's `POST /api/show`: a `num_ctx` set on the model (a warning when it has none).
fn from_show(v: &Value, model: &str) -> Option<Window> {
    let params = v["parameters"].as_str().unwrap_or("");
    let n = params.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next() == Some("num_ctx"))
            .then(|| it.next()?.parse::<u32>().ok())
            .flatten()
    });
    if n.is_none() {
        eprintln!(
            "llm: warning: Ollama does not say the context it runs {model} with (no num_ctx, model not loaded); it cuts longer prompts off silently. Pass --context-tokens N (what OLLAMA_CONTEXT_LENGTH is set to)"
        );
    }
    found(n.map(u64::from), "Ollama POST /api/show: num_ctx".into())
}

/// Where a learnt window is recorded for offline replays: one file per endpoint and model.
pub fn record_path(cache_root: &Path, scope: &str, model: &str) -> PathBuf {
    let h = blake3::hash(format!("{scope}\0{model}").as_bytes()).to_hex();
    cache_root
        .join("windows")
        .join(format!("{}.json", &h[..32]))
}

/// The recorded window of an endpoint and model, if any.
pub fn recorded(path: &Path) -> Option<Window> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Record a learnt window (atomically: a temp file, then a rename).
pub fn record(path: &Path, w: &Window) -> std::io::Result<()> {
    let dir = path.parent().expect("a folder");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".window.{}.tmp", std::process::id()));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(w).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_server_that_says_a_window_gives_it() {
        let props = json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4});
        let models = json!({"data": [{"id": "other", "max_model_len": 4096}, {"id": "m", "max_model_len": 32768}]});
        let ps = json!({"models": [{"name": "m", "context_length": 2048}]});
        let show = json!({"parameters": "temperature 0.7\nnum_ctx 16384"});
        let all = || {
            [
                Some(props.clone()),
                Some(models.clone()),
                Some(ps.clone()),
                Some(show.clone()),
            ]
        };
        let w = choose(all(), "m").unwrap();
        assert_eq!((w.tokens, w.source.starts_with("llama.cpp")), (8192, true));
        // a /props without a context (or no /props) falls through to vLLM, then Ollama
        let mut a = all();
        a[0] = Some(json!({"total_slots": 1}));
        assert_eq!(choose(a.clone(), "m").unwrap().tokens, 32768);
        assert_eq!(choose(a.clone(), "absent").unwrap().tokens, 4096);
        a[1] = None;
        assert_eq!(choose(a.clone(), "m").unwrap().tokens, 2048);
        a[2] = Some(json!({"models": []}));
        assert_eq!(choose(a.clone(), "m").unwrap().tokens, 16384);
        a[3] = Some(json!({"parameters": "temperature 0.7"}));
        assert!(choose(a, "m").is_none());
        assert!(choose([None, None, None, None], "m").is_none());
    }

    #[test]
    fn budgets_leave_room_for_the_reply() {
        let w = Window {
            tokens: 8192,
            source: "test".into(),
        };
        assert_eq!(w.reply_reserve(2048), 2048);
        assert_eq!(w.reply_reserve(8192), 4096);
        assert_eq!(w.prompt_budget(2048), 8192 - 2048 - MARGIN);
        assert!(w.fits(2048, 6000) && !w.fits(2048, 6100));
        assert_eq!(w.max_tokens(8192, 5000), 8192 - 5000 - MARGIN);
        assert_eq!(w.max_tokens(1024, 5000), 1024);
    }

    #[test]
    fn estimates_count_cjk_digits_and_the_rest() {
        assert_eq!(estimate_tokens(""), 4);
        assert_eq!(estimate_tokens("你好"), 2 + 4);
        assert_eq!(estimate_tokens("4200"), 4 + 4);
        assert_eq!(estimate_tokens("{\"a\": 1}"), 1 + 3 + 4);
    }

    #[test]
    fn roots_of_base_urls() {
        assert_eq!(
            roots("http://127.0.0.1:8080/v1/chat/completions"),
            (
                "http://127.0.0.1:8080/v1".into(),
                "http://127.0.0.1:8080".into()
            )
        );
        assert_eq!(
            roots("http://h/api/v1/chat/completions?x=1"),
            ("http://h/api/v1".into(), "http://h/api".into())
        );
    }
}
