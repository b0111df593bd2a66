//! JSON lines: work artifacts gtb writes and reads back, and the wording of a line that does not
//! decode (`FILE:LINE: ...`), shared by every reader of task files.

use anyhow::{Context, Result};
use std::path::Path;

/// Encode items as JSON lines.
pub fn to_jsonl<T: serde::Serialize + Sync>(items: &[T]) -> Vec<u8> {
    use rayon::prelude::*;
    // serialised in parallel blocks, joined in order
    let blocks: Vec<Vec<u8>> = items
        .par_chunks(1024)
        .map(|block| {
            let mut out = Vec::new();
            for it in block {
                serde_json::to_writer(&mut out, it).expect("serialises");
                out.push(b'\n');
            }
            out
        })
        .collect();
    blocks.concat()
}

/// Decode JSON lines (work artifacts gtb wrote), naming the line of any error.
pub fn from_jsonl<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &Path) -> Result<Vec<T>> {
    let text =
        std::str::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", what.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                anyhow::anyhow!(
                    "{}:{}: {}",
                    what.display(),
                    i + 1,
                    json_line_error(&e, "record")
                )
            })
        })
        .collect()
}

/// Why one JSON line did not decode, for a `FILE:LINE: ...` message. serde's "at line 1 column
/// N" becomes "(column N)": the line number is the file's, given by the caller, and naming
/// line 1 as well would name two different lines. `noun` is what a line should hold.
pub fn json_line_error(e: &serde_json::Error, noun: &str) -> String {
    let text = e.to_string();
    let msg = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    match e.classify() {
        serde_json::error::Category::Data => format!("not a {noun}: {msg} (column {})", e.column()),
        _ => format!("invalid JSON: {msg} (column {})", e.column()),
    }
}
