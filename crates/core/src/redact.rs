//! Secrets out of what gtb records: a URL as logs, caches and manifests show it. Lives in core
//! because the config (which serialises `llm.base_url`) and the LLM transport both need it.

/// Query parameter names whose values are secrets (`api-key`, `token`, `sig`, ...).
fn secret_query_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["key", "token", "secret", "sig", "password", "auth"]
        .iter()
        .any(|k| n.contains(k))
}

/// The user-info part of a URL (`user:pw` of `https://user:pw@host/...`), if any.
fn user_info(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let (info, host) = rest.split_once('@')?;
    // an @ after the first slash belongs to the path, not to the authority
    (!info.contains('/')).then_some((scheme, info, host))
}

/// A URL as records show it: no credentials, secret-looking query values redacted.
pub fn public_url(url: &str) -> String {
    let bare = match user_info(url) {
        Some((scheme, _, host)) => format!("{scheme}://{host}"),
        None => url.to_string(),
    };
    match bare.split_once('?') {
        Some((base, q)) => {
            let q: Vec<String> = q
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if secret_query_name(k) => format!("{k}=[REDACTED]"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{base}?{}", q.join("&"))
        }
        None => bare,
    }
}

/// The secrets a URL carries: user and password, values of secret-looking query parameters.
pub fn url_secrets(url: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    if let Some((_, info, _)) = user_info(url) {
        out.extend(info.split(':'));
    }
    if let Some((_, q)) = url.split_once('?') {
        out.extend(
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| secret_query_name(k))
                .map(|(_, v)| v),
        );
    }
    out
}
