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

/// Read a JSON-lines file in blocks of at most `block` records, each block decoded in parallel
/// and handed to `each` in file order, so that a file of any size is read in bounded memory.
/// Blank lines are skipped; an error names the file and line.
pub fn read_blocks<T: serde::de::DeserializeOwned + Send>(
    path: &Path,
    block: usize,
    mut each: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<()> {
    use rayon::prelude::*;
    use std::io::BufRead;
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line_no = 0usize;
    loop {
        let mut lines: Vec<(usize, String)> = Vec::with_capacity(block);
        while lines.len() < block.max(1) {
            let mut line = String::new();
            let n = reader
                .read_line(&mut line)
                .with_context(|| format!("reading {} (line {})", path.display(), line_no + 1))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if !line.trim().is_empty() {
                lines.push((line_no, line));
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        let items = lines
            .par_iter()
            .map(|(no, l)| {
                serde_json::from_str(l).map_err(|e| {
                    let why = json_line_error(&e, "record");
                    anyhow::anyhow!("{}:{no}: {why}", path.display())
                })
            })
            .collect::<Result<Vec<T>>>()?;
        drop(lines);
        each(items)?;
    }
}
