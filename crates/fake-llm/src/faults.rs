//! The faults: the shares of requests that get each, the order `each_kind_first` forces them
//! in, and the deterministic draws per distinct request body (a question as the draws see it);
//! the transport faults answered instead of a completion.

use crate::http::Canned;
use crate::prompt::{is_first_turn, wants_stream};
use crate::reply::{answer, completion};
use crate::stats::FakeStats;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Shares of requests that get each fault (transport faults on the first sight of a body,
/// content faults on the first turn of a conversation).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub rate_429: f64,
    pub retry_after_secs: u64,
    pub rate_500: f64,
    pub rate_timeout: f64,
    /// how long a "timeout" request hangs
    pub timeout_ms: u64,
    pub rate_truncated_body: f64,
    pub rate_malformed_body: f64,
    pub rate_malformed_json: f64,
    pub rate_hallucinated: f64,
    pub rate_bad_mode: f64,
    pub rate_injection: f64,
    pub rate_fenced: f64,
    /// put the bearer token into 500 bodies and injected lines (a leaking server)
    pub echo_key: bool,
    /// answer 400 to response_format json_schema
    pub reject_json_schema: bool,
    /// 401 unless this bearer token is sent
    pub require_key: Option<String>,
    /// answer every request with 429 insufficient_quota
    pub quota_exhausted: bool,
    /// every reply's lines are garbage (a model that never gets them right)
    pub always_bad_messages: bool,
    /// the lines are garbage on the first sight of every request body, good when the same
    /// request is asked again (a flaky model: a re-ask of a cached bad reply gets a good one)
    pub bad_messages_first_sight: bool,
    /// the first new requests get one enabled fault kind each, in a fixed order, so that every
    /// kind is seen however few requests a test sends (later ones draw by rate)
    pub each_kind_first: bool,
    /// an honest rate limit of this many requests per second (0 = none): a request over it
    /// gets 429 with a Retry-After (whole seconds) that is enough for a slot to free
    pub rate_limit_per_sec: f64,
    /// prose with braces of its own before unfenced JSON
    pub rate_prose_braces: f64,
    /// `content` as a list of text parts instead of a string
    pub rate_content_parts: f64,
    /// a food value of another city (a speciality the city's candidates do not list)
    pub rate_foreign_food: f64,
    /// 400 to `max_tokens` (as OpenAI's reasoning models answer), asking for max_completion_tokens
    pub reject_max_tokens: bool,
    /// 401 unless this header (name, value) is sent
    pub require_header: Option<(String, String)>,
    /// 404 unless this query parameter (`name=value`) is on the URL
    pub require_query: Option<String>,
    /// 400 to `"stream": true` (a server without streaming)
    pub refuse_stream: bool,
    /// a member with tables of its own copies the first member's city preferences
    pub rate_copied_member: f64,
    /// the first member's line rejects the sight it must visit
    pub rate_contradicting_line: f64,
    /// the first member's budget is 50,000 (outside the release's range)
    pub rate_implausible_budget: f64,
}

/// Fault kinds in the order `each_kind_first` forces them.
const KINDS: [&str; 16] = [
    "429",
    "500",
    "timeout",
    "truncated",
    "malformed_body",
    "hallucinated",
    "bad_mode",
    "injection",
    "malformed_json",
    "fenced",
    "prose_braces",
    "content_parts",
    "foreign_food",
    "copied_member",
    "contradicting_line",
    "implausible_budget",
];

impl Faults {
    /// The share field of a fault kind (the names of `KINDS`).
    pub fn rate_mut(&mut self, kind: &str) -> Option<&mut f64> {
        Some(match kind {
            "429" => &mut self.rate_429,
            "500" => &mut self.rate_500,
            "timeout" => &mut self.rate_timeout,
            "truncated" => &mut self.rate_truncated_body,
            "malformed_body" => &mut self.rate_malformed_body,
            "hallucinated" => &mut self.rate_hallucinated,
            "bad_mode" => &mut self.rate_bad_mode,
            "injection" => &mut self.rate_injection,
            "malformed_json" => &mut self.rate_malformed_json,
            "fenced" => &mut self.rate_fenced,
            "prose_braces" => &mut self.rate_prose_braces,
            "content_parts" => &mut self.rate_content_parts,
            "foreign_food" => &mut self.rate_foreign_food,
            "copied_member" => &mut self.rate_copied_member,
            "contradicting_line" => &mut self.rate_contradicting_line,
            "implausible_budget" => &mut self.rate_implausible_budget,
            _ => return None,
        })
    }
    /// The kind forced on the `index`-th new request, if any.
    fn forced(&self, index: u64) -> Option<&'static str> {
        if !self.each_kind_first || index as usize >= KINDS.len() {
            return None;
        }
        let mut rates = self.clone();
        KINDS
            .iter()
            .copied()
            .filter(|k| rates.rate_mut(k).is_some_and(|r| *r > 0.0))
            .nth(index as usize)
    }
}

/// The members a client adds to a body to ask for a streamed reply (gtb's `stream::STREAM_MEMBERS`).
const STREAM_MEMBERS: &str = ",\"stream\":true,\"stream_options\":{\"include_usage\":true}";

/// A number from a blake3 hash of the bytes (its first 8 bytes).
pub(crate) fn h64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(blake3::hash(bytes).as_bytes()[..8].try_into().expect("8"))
}

/// A deterministic draw in 0..1 from a hash and a salt.
fn draw(h: u64, salt: &str) -> f64 {
    let x = h64(format!("{h}/{salt}").as_bytes());
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// One question as the fault draws see it: the request body, its hash (stream members left
/// out, so a streamed request is the same question as a plain one), how often it has been
/// seen and the fault kind forced on it, and the bearer token it came with.
#[derive(Clone, Copy)]
pub(crate) struct Ask<'a> {
    pub(crate) body: &'a Value,
    pub(crate) f: &'a Faults,
    pub(crate) h: u64,
    /// 1 on the first sight of this body
    pub(crate) sight: u64,
    forced: Option<&'static str>,
    /// the bearer token (what a leaking server echoes)
    pub(crate) key: &'a str,
    /// the conversation's first turn (content faults only hit it)
    pub(crate) first_turn: bool,
    pub(crate) stream: bool,
}

impl<'a> Ask<'a> {
    /// Book a sighting of the body `raw` (parsed: `body`) and draw the kind forced on a new one.
    pub(crate) fn new(
        st: &FakeStats,
        f: &'a Faults,
        raw: &[u8],
        body: &'a Value,
        auth: &'a str,
    ) -> Ask<'a> {
        let h = h64(String::from_utf8_lossy(raw)
            .replace(STREAM_MEMBERS, "")
            .as_bytes());
        let sight = {
            let mut seen = st.seen_bodies.lock().unwrap();
            let e = seen.entry(h).or_default();
            *e += 1;
            *e
        };
        let forced = if sight == 1 {
            f.forced(st.new_bodies.fetch_add(1, Ordering::Relaxed))
        } else {
            None
        };
        Ask {
            body,
            f,
            h,
            sight,
            forced,
            key: auth.trim_start_matches("Bearer "),
            first_turn: is_first_turn(body),
            stream: wants_stream(body),
        }
    }
    /// Whether the fault `salt` hits this question: the forced kind if any, else a draw
    /// against `rate`.
    fn hits(&self, rate: f64, salt: &str) -> bool {
        match self.forced {
            Some(k) => k == salt,
            None => rate > 0.0 && draw(self.h, salt) < rate,
        }
    }
    /// Whether the content fault `salt` hits: only ever on the first turn.
    pub(crate) fn content(&self, rate: f64, salt: &str) -> bool {
        self.first_turn && self.hits(rate, salt)
    }
}

/// What a transport fault sends instead of a good completion.
pub(crate) enum Injected {
    /// an error or a broken body, the connection kept
    Reply(Canned),
    /// no answer: hang this long, then close
    Hang(Duration),
    /// this completion's first half, then close
    Truncated(String),
}

/// The transport fault drawn (or forced) on the first sight of a body, booked in the stats
/// (a body seen before is answered: a retry gets through).
pub(crate) fn transport_fault(st: &FakeStats, ask: &Ask) -> Option<Injected> {
    if ask.sight != 1 {
        return None;
    }
    let f = ask.f;
    if ask.hits(f.rate_429, "429") {
        st.fault("429");
        return Some(Injected::Reply(Canned::retry_after(
            Duration::from_secs(f.retry_after_secs),
            r#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#,
        )));
    }
    if ask.hits(f.rate_500, "500") {
        st.fault("500");
        let msg = if f.echo_key {
            let key_text = ask.key;
            format!(r#"{{"error": {{"message": "upstream failure for key {key_text}"}}}}"#)
        } else {
            r#"{"error": {"message": "upstream failure"}}"#.to_string()
        };
        return Some(Injected::Reply(Canned::new(500, msg)));
    }
    if ask.hits(f.rate_timeout, "timeout") {
        st.fault("timeout");
        return Some(Injected::Hang(Duration::from_millis(f.timeout_ms.max(1))));
    }
    if ask.hits(f.rate_truncated_body, "truncated") {
        st.fault("truncated_body");
        let good = answer(&Ask {
            forced: None,
            ..*ask
        })
        .0;
        let full = completion(ask.body, &good, ask.h, false);
        return Some(Injected::Truncated(full));
    }
    if ask.hits(f.rate_malformed_body, "malformed_body") {
        st.fault("malformed_body");
        return Some(Injected::Reply(Canned::new(
            200,
            r#"{"id": "x", "choices": [{"message": {"role": "assis"#,
        )));
    }
    None
}
