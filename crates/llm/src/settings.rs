//! The generator's settings from `[llm]`: the endpoint, extra headers and body members, and
//! the transport's knobs, every one checked (the error names it). The API key is read from
//! the environment here and nowhere else.

use crate::client::{self, Format};
use crate::prompt;
use anyhow::{Result, bail};
use gtb_core::redact::public_url;
use serde_json::Value;
use std::time::Duration;

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
pub(crate) fn transport_settings(l: &gtb_core::config::Llm) -> Result<client::Settings> {
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
