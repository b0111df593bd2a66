//! What holds requests back: the AIMD concurrency limit, the request and token buckets, the
//! rate-limit pause every request waits out (Retry-After, or back-off after a 429 without one)
//! and the back-off between retries.

use super::Transport;
use super::errors::CallError;
use super::http::Reply;
use super::stats::Stats;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// AIMD concurrency limit over a semaphore: permits are forgotten to shrink it.
pub(super) struct Aimd {
    sem: Semaphore,
    state: Mutex<AimdState>,
    max: usize,
}

struct AimdState {
    /// fractional limit (additive increase adds 1/limit per success)
    limit: f64,
    /// permits that exist (held or available)
    effective: usize,
    /// permits to swallow on release (pending decrease)
    debt: usize,
    last_decrease: Option<Instant>,
}

impl Aimd {
    pub(super) fn new(max: usize) -> Self {
        let max = max.max(1);
        Aimd {
            sem: Semaphore::new(max),
            state: Mutex::new(AimdState {
                limit: max as f64,
                effective: max,
                debt: 0,
                last_decrease: None,
            }),
            max,
        }
    }
    pub(super) async fn acquire(&self) {
        self.sem.acquire().await.expect("semaphore open").forget();
    }
    pub(super) fn release(&self) {
        let mut s = self.state.lock().expect("aimd");
        if s.debt > 0 {
            s.debt -= 1;
        } else {
            self.sem.add_permits(1);
        }
    }
    pub(super) fn success(&self) {
        let mut s = self.state.lock().expect("aimd");
        if s.effective >= self.max {
            return;
        }
        s.limit = (s.limit + 1.0 / s.limit).min(self.max as f64);
        while (s.limit.floor() as usize) > s.effective {
            s.effective += 1;
            if s.debt > 0 {
                s.debt -= 1;
            } else {
                self.sem.add_permits(1);
            }
        }
    }
    /// Halve the limit, at most once per `cooldown` (one burst of 429s is one signal).
    fn overload(&self, cooldown: Duration) -> usize {
        let mut s = self.state.lock().expect("aimd");
        if s.last_decrease.is_some_and(|t| t.elapsed() < cooldown) {
            return s.effective;
        }
        let new = (s.effective / 2).max(1);
        // idle permits go at once; held ones when they come back
        let idle = self.sem.forget_permits(s.effective - new);
        s.debt += s.effective - new - idle;
        s.effective = new;
        s.limit = new as f64;
        s.last_decrease = Some(Instant::now());
        new
    }
    pub(super) fn current(&self) -> usize {
        self.state.lock().expect("aimd").effective
    }
}

/// A token bucket (requests or tokens per minute); `None` = unlimited.
pub(super) struct Bucket {
    per_sec: f64,
    cap: f64,
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    pub(super) fn new(per_minute: u32) -> Option<Bucket> {
        (per_minute > 0).then(|| {
            let cap = (per_minute as f64 / 6.0).max(1.0);
            Bucket {
                per_sec: per_minute as f64 / 60.0,
                cap,
                state: Mutex::new((cap, Instant::now())),
            }
        })
    }
    pub(super) async fn take(&self, n: f64) {
        loop {
            let wait = {
                let mut s = self.state.lock().expect("bucket");
                let now = Instant::now();
                s.0 = (s.0 + now.duration_since(s.1).as_secs_f64() * self.per_sec).min(self.cap);
                s.1 = now;
                let need = n.min(self.cap);
                if s.0 >= need {
                    s.0 -= n; // may go negative: a request larger than the burst is paid for later
                    return;
                }
                (need - s.0) / self.per_sec
            };
            tokio::time::sleep(Duration::from_secs_f64(wait.clamp(0.001, 60.0))).await;
        }
    }
    pub(super) fn refund(&self, n: f64) {
        let mut s = self.state.lock().expect("bucket");
        s.0 = (s.0 + n).min(self.cap);
    }
}

/// The pause every new request to the endpoint waits out (Retry-After, or back-off after a 429
/// without one), and the total paused time of the run.
#[derive(Default)]
pub(super) struct Pause {
    until: Option<Instant>,
    total: Duration,
}

/// Transient failures kept for the report.
const TRANSIENT_KEPT: usize = 20;

/// The longest Retry-After taken at its word (a day); the rate-limit budget decides whether
/// the run waits that long or stops.
const MAX_RETRY_AFTER: f64 = 86_400.0;

/// `Retry-After` (seconds or HTTP date) or `retry-after-ms`.
pub(super) fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = h
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(
            (ms / 1000.0).clamp(0.0, MAX_RETRY_AFTER),
        ));
    }
    let v = h.get("retry-after")?.to_str().ok()?.trim().to_string();
    if let Ok(s) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(s.clamp(0.0, MAX_RETRY_AFTER)));
    }
    let t =
        chrono::NaiveDateTime::parse_from_str(v.trim_end_matches(" GMT"), "%a, %d %b %Y %H:%M:%S")
            .ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let secs = (t.and_utc().timestamp() as f64 - now).max(0.0);
    Some(Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER)))
}

impl Transport {
    /// plus the completion budget, as providers count it.
    pub(super) fn estimate(&self, request_len: usize) -> f64 {
        request_len as f64 / 3.0 + self.s.max_tokens as f64
    }

    /// Wait until no rate-limit pause holds the endpoint.
    pub(super) async fn wait_pause(&self) {
        loop {
            let until = self.pause.lock().expect("pause").until;
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t.into()).await,
                _ => return,
            }
        }
    }

    /// Hold every new request to the endpoint for `wait` (a pause already longer stands). The
    /// run stops, resumably, when its paused time would exceed the rate-limit budget.
    pub(super) fn pause_for(&self, wait: Duration, why: &str) -> Result<(), CallError> {
        let total = {
            let mut p = self.pause.lock().expect("pause");
            let now = Instant::now();
            let until = now + wait;
            let from = p.until.filter(|t| *t > now).unwrap_or(now);
            if until > from {
                p.total += until - from;
                p.until = Some(until);
                Stats::add(
                    &self.stats.rate_limited_ms,
                    (until - from).as_millis() as u64,
                );
            }
            p.total
        };
        if total <= self.s.rate_limit_budget {
            return Ok(());
        }
        let m = format!(
            "rate limited by {} for {:.0} s in total ({} HTTP 429s; the last, {why}, asked to wait {:.1} s), more than the rate-limit budget of {} s. Nothing is lost and no task was given up: the answers received so far are cached. Rerun the same command to resume (it asks only for what is missing); raise the budget with --rate-limit-budget SECS, or ask less often with --rpm / --concurrency",
            gtb_core::redact::public_url(&self.s.endpoint),
            total.as_secs_f64(),
            Stats::get(&self.stats.http_429),
            wait.as_secs_f64(),
            self.s.rate_limit_budget.as_secs()
        );
        self.set_fatal(m);
        Err(CallError::Fatal(self.fatal().unwrap_or_default()))
    }

    fn backoff(&self, retry: u32) -> Duration {
        use rand::Rng;
        let base = self.s.backoff.as_secs_f64() * 2f64.powi(retry.min(16) as i32);
        let capped = base.min(60.0);
        Duration::from_secs_f64(capped * rand::thread_rng().gen_range(0.5..1.0))
    }

    /// After a transient failure: back off and count the retry, or give up on the request.
    pub(super) async fn retry_or_fail(
        &self,
        retry: u32,
        label: &str,
        last: &str,
    ) -> Result<u32, CallError> {
        {
            let mut t = self.transient.lock().expect("transient");
            if t.len() == TRANSIENT_KEPT {
                t.pop_front();
            }
            t.push_back(format!("{label}: {last}"));
        }
        if retry >= self.s.max_retries {
            return Err(CallError::Failed(format!(
                "{label}: gave up after {} tries: {last}",
                retry + 1
            )));
        }
        Stats::add(&self.stats.retries, 1);
        tokio::time::sleep(self.backoff(retry)).await;
        Ok(retry + 1)
    }

    /// An HTTP 429: a fatal quota error, or a rate limit whose pause holds the endpoint.
    pub(super) fn rate_limited(
        &self,
        r: &Reply,
        limited: u32,
        snippet: &str,
    ) -> Result<(), CallError> {
        Stats::add(&self.stats.http_429, 1);
        let lower = r.text.to_lowercase();
        if lower.contains("insufficient_quota")
            || lower.contains("quota exceeded")
            || lower.contains("exceeded your current quota")
            || lower.contains("billing")
        {
            let m = format!(
                "quota exhausted at {} (HTTP 429): {snippet}",
                gtb_core::redact::public_url(&self.s.endpoint)
            );
            self.set_fatal(m.clone());
            return Err(CallError::Fatal(m));
        }
        let (wait, why) = match retry_after(&r.headers) {
            Some(w) => (w, "Retry-After"),
            None => (self.backoff(limited), "no Retry-After, back-off"),
        };
        self.aimd.overload(wait.max(Duration::from_millis(500)));
        Stats::add(&self.stats.retries, 1);
        self.pause_for(wait, why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aimd_halves_then_grows_back() {
        let a = Aimd::new(8);
        assert_eq!(a.overload(Duration::from_secs(60)), 4);
        assert_eq!(
            a.overload(Duration::from_secs(60)),
            4,
            "one burst is one signal"
        );
        for _ in 0..100 {
            a.success();
        }
        assert_eq!(a.current(), 8);
    }

    #[test]
    fn retry_after_reads_seconds_and_ms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
    }
}
