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

/// A split's world answers as `World::answer` does; a call it refuses (an unknown tool, or
/// parameters the release's rules reject, which the harness never sends) has no answer.
impl Answerer for World<'static> {
    fn answer(&self, tool: &str, params: &Map<String, Value>) -> Result<String, String> {
        World::answer(self, tool, params).map_err(|e| match e {
            ToolError::UnknownTool(_) => e.to_string(),
            ToolError::Invalid { message, .. } => message,
        })
    }
}

/// The answer served (and filled into the cache) for a call: the world's answer (itself an
/// explicit no-data answer where the world has no data), or, for a call the world refuses,
/// the no-data answer `{"status": "no_data", "tool": ..., "note": why}`. Never an invented one.
pub fn served_answer(world: &dyn Answerer, tool: &str, params: &Map<String, Value>) -> String {
    world
        .answer(tool, params)
        .unwrap_or_else(|why| no_data(tool, &why))
}

/// The no-data answer for a refused call, in the shape of the world's own no-data answers
/// (`gtb_world::is_no_data` recognises it).
pub fn no_data(tool: &str, why: &str) -> String {
    let mut m = Map::new();
    m.insert("status".into(), Value::from("no_data"));
    m.insert("tool".into(), Value::from(tool));
    m.insert("note".into(), Value::from(why));
    gtb_core::pyjson::to_string(&m)
}

/// The world of a published split folder (`gtb_ops::world::open`), ready to serve.
pub fn open_world(split: &std::path::Path) -> Result<Arc<dyn Answerer>> {
    Ok(Arc::new(gtb_ops::world::open(split)?))
}

/// `gtb tools serve`'s options.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// the split folder
    pub split: PathBuf,
    /// where to listen (port 0: any free one)
    pub addr: SocketAddr,
}

/// Open the split's world and serve it on `opts.addr` with `threads` workers (0: one per
/// core) until the process ends; `ready` gets the bound address once requests are accepted.
pub fn serve(opts: &ServeOptions, threads: usize, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let world = open_world(&opts.split)?;
    server::serve_blocking(opts.addr, threads, world, ready)
}
