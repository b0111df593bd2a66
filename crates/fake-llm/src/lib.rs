//! A fake OpenAI-compatible server for tests and benchmarks (`gtb-fake-llm`): plain HTTP/1.1
//! on loopback, the real `/v1/chat/completions` wire format, answers built from the request's
//! own grounding context (so they are valid), and injected faults: 429 with Retry-After, 500s,
//! timeouts, truncated and malformed bodies, malformed JSON content, hallucinated POI names,
//! modes outside the vocabulary, prompt-injection text, an echo of the API key, rejection of
//! `json_schema`, bad keys and exhausted quotas. Faults are drawn per distinct request body, so
//! a retry of the same request (or its correction turn) gets a good answer.
//!
//! The map: `server` (the listener, one connection's requests in turn, what is turned away or
//! refused), `http` (reading a request, writing a reply or a stream of events), `stats` (what
//! the server saw, for tests and benchmarks), `faults` (the fault shares and their
//! deterministic draws per request body, transport faults), `prompt` (what is read from a
//! request: its grounding, a member's part, its turn), `reply` (the completion written: the
//! answer, content faults, the lines), `draft` (the members' tables built from the grounding,
//! table faults).

mod draft;
mod faults;
mod http;
mod prompt;
mod reply;
mod server;
mod stats;

pub use faults::Faults;
pub use server::{FakeConfig, FakeServer};
pub use stats::{FakeStats, PAUSE_GRACE};
