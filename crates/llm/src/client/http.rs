//! The wire: a request sent when the limits allow, one HTTP exchange (plain, or streamed and
//! assembled), the headers every request carries, and the probe of the server's window.

use super::errors::{CallError, error_chain};
use super::stats::Stats;
use super::{LLAMA_CPP_MEMBERS, Transport};
use std::sync::atomic::Ordering;

/// An HTTP answer.
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) headers: reqwest::header::HeaderMap,
    pub(super) text: String,
}

impl Transport {
    /// Send one request when the limits allow: request and token buckets, a concurrency slot,
    /// then no rate-limit pause (checked again once the slot is held: a request queued for a
    /// slot must not slip through a pause that began while it waited). `Ok(Err(why))` is a
    /// transport failure (timeout, connection) worth a retry.
    pub(super) async fn send(
        &self,
        body: &str,
        streaming: bool,
    ) -> Result<Result<Reply, String>, CallError> {
        self.wait_pause().await;
        if let Some(b) = &self.rpm {
            b.take(1.0).await;
        }
        if let Some(b) = &self.tpm {
            b.take(self.estimate(body.len())).await;
        }
        self.aimd.acquire().await;
        self.wait_pause().await;
        if let Some(f) = self.fatal() {
            self.aimd.release();
            return Err(CallError::Fatal(f));
        }
        Stats::add(&self.stats.sent, 1);
        Stats::add(&self.stats.in_flight, 1);
        let mut wire = if streaming {
            crate::stream::streaming_body(body)
        } else {
            body.to_string()
        };
        if let Some(m) = self.server_members.get() {
            wire.pop();
            wire.push_str(m);
            wire.push('}');
        }
        let mut req = self
            .client
            .post(&self.s.endpoint)
            .header("content-type", "application/json")
            .body(wire);
        for (k, v) in self.auth_headers() {
            req = req.header(k, v);
        }
        let res = self.exchange(req, streaming).await;
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.aimd.release();
        Ok(res)
    }

    /// One HTTP exchange. A plain reply must arrive within the timeout; a streamed one may take
    /// as long as the server keeps sending: it is cut off only when nothing comes for the
    /// timeout (a slow server still producing tokens is never asked again). A streamed `200`
    /// is assembled into the `chat.completion` body a plain request gets.
    async fn exchange(
        &self,
        req: reqwest::RequestBuilder,
        streaming: bool,
    ) -> Result<Reply, String> {
        let t = self.s.timeout;
        let silent = |pieces: u64| {
            Stats::add(&self.stats.timeouts, 1);
            if streaming {
                format!("the server sent nothing for {t:?} ({pieces} reply pieces before)")
            } else {
                format!("timed out after {t:?}")
            }
        };
        let failed = |e: reqwest::Error| {
            Stats::add(&self.stats.connection_errors, 1);
            format!("connection error: {}", self.redact.clean(&error_chain(&e)))
        };
        if !streaming {
            let whole = async {
                let resp = req.send().await?;
                let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
                let text = resp.text().await?;
                Ok::<_, reqwest::Error>(Reply {
                    status,
                    headers,
                    text,
                })
            };
            return match tokio::time::timeout(t, whole).await {
                Err(_) => Err(silent(0)),
                Ok(r) => r.map_err(failed),
            };
        }
        let mut resp = match tokio::time::timeout(t, req.send()).await {
            Err(_) => return Err(silent(0)),
            Ok(r) => r.map_err(failed)?,
        };
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let sse = resp.status().is_success()
            && headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("text/event-stream"));
        let (mut events, mut raw) = (crate::stream::Assembly::default(), Vec::new());
        loop {
            match tokio::time::timeout(t, resp.chunk()).await {
                Err(_) => return Err(silent(events.pieces)),
                Ok(Err(e)) => return Err(failed(e)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) if sse => {
                    Stats::add(&self.stats.received_pieces, events.feed(&bytes));
                }
                Ok(Ok(Some(bytes))) => raw.extend_from_slice(&bytes),
            }
        }
        let text = if sse {
            events.finish().inspect_err(|_| {
                Stats::add(&self.stats.malformed_bodies, 1);
            })?
        } else {
            String::from_utf8_lossy(&raw).into_owned()
        };
        Ok(Reply {
            status,
            headers,
            text,
        })
    }

    /// The headers every request carries: the extra ones and the key (`Authorization: Bearer`
    /// or the configured key header).
    fn auth_headers(&self) -> Vec<(String, String)> {
        let mut h = self.s.headers.clone();
        if let Some(k) = &self.s.key {
            match &self.s.key_header {
                Some(name) => h.push((name.clone(), k.clone())),
                None => h.push(("authorization".into(), format!("Bearer {k}"))),
            }
        }
        h
    }

    /// The server's context window: `--context-tokens`, else what the server says (recorded in
    /// the cache folder), else, in an offline replay, the one recorded. None when unknown.
    pub async fn window(&self, configured: u32) -> Option<crate::window::Window> {
        use crate::window::{Probe, Window, record, record_path, recorded};
        if configured > 0 {
            return Some(Window {
                tokens: configured,
                source: "--context-tokens / llm.context_tokens".into(),
            });
        }
        let path = record_path(&self.cache.root, &self.key_scope, &self.s.model);
        if self.s.offline_replay {
            return recorded(&path);
        }
        let auth = self.auth_headers();
        let probe = Probe {
            client: &self.client,
            endpoint: &self.s.endpoint,
            model: &self.s.model,
            auth: &auth,
            in_flight: self.s.concurrency,
        };
        let w = probe.learn().await;
        if w.as_ref()
            .is_some_and(|w| w.source.starts_with("llama.cpp"))
        {
            self.server_members.set(LLAMA_CPP_MEMBERS).ok();
        }
        match &w {
            Some(w) => {
                eprintln!(
                    "llm: the server's context window is {} tokens per request ({}); prompts are fitted to it",
                    w.tokens, w.source
                );
                if let Err(e) = record(&path, w) {
                    eprintln!(
                        "llm: warning: cannot record the window in {}: {e}",
                        path.display()
                    );
                }
            }
            None => eprintln!(
                "llm: the server does not say its context window; prompts are sent unfitted (--context-tokens N fits them)"
            ),
        }
        w
    }
}
