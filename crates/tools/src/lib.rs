//! The long tail of a split's world (issue 28, item 3): `gtb tools serve`, an OpenAI-compatible
//! endpoint that stands in for the release harness's tool simulator (its LLM, called on a cache
//! miss through `TOOL_API_BASE`) and answers each call from the split's world instead of
//! inventing one; and `gtb tools fill`, which adds the calls a finished run missed
//! (`<tool>_missed.json`) to the split's cache, so that a rerun hits.
//!
//! Both answer a call with `served_answer`: the world's answer, the very string the split's
//! cache holds (or would hold) for it, or an explicit no-data answer when the world has none.
//! `request` reads a simulation request, `reply` writes the OpenAI bodies, `server` is the HTTP
//! side and `fill` the cache side.

pub mod fill;
pub mod reply;
pub mod request;
pub mod server;

pub use fill::{FillOptions, FillReport, fill};

use anyhow::Result;
use gtb_world::{ToolError, World};
use serde_json::{Map, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What answers tool calls: a split's world.
pub trait Answerer: Send + Sync {
    /// The answer to a call, exactly the string the split's cache holds (or would hold) for
    /// it, or why the world has none (named for the agent, without local paths).
    fn answer(&self, tool: &str, params: &Map<String, Value>) -> Result<String, String>;
}

/// The answer served for a call, and filled into the cache for it: the world's answer, or the
/// explicit no-data answer `{"status": "no_data", "tool": ..., "reason": ...}` (never an
/// invented one).
pub fn served_answer(world: &dyn Answerer, tool: &str, params: &Map<String, Value>) -> String {
    world
        .answer(tool, params)
        .unwrap_or_else(|why| no_data(tool, &why))
}

/// The explicit no-data answer (Python `json.dumps(..., ensure_ascii=False)` style, as the
/// world writes its answers).
pub fn no_data(tool: &str, why: &str) -> String {
    let mut m = Map::new();
    m.insert("status".into(), Value::from("no_data"));
    m.insert("tool".into(), Value::from(tool));
    m.insert("reason".into(), Value::from(why));
    gtb_core::pyjson::to_string(&m)
}
