//! Reading a task file: every non-blank line is parsed as a [`Task`] (in parallel) and counted
//! into a [`Tally`]; a line that is not a task becomes a [`BadLine`] with its 1-based number.

use super::report::{BAD_LINES_LISTED, BadLine, Report, Tally};
use anyhow::Result;
use gtb_core::task::Task;
use rayon::prelude::*;
use std::path::Path;

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why `line` (trimmed) is not a task: serde's reason, or what is wrong with the bytes when
/// they are not JSON text at all (a BOM, or not UTF-8), which serde would call "expected value".
fn describe(line: &[u8], e: &serde_json::Error) -> String {
    if line.starts_with(BOM) {
        return "starts with a UTF-8 byte-order mark (BOM): JSON Lines files are UTF-8 without one; save the file without the BOM".into();
    }
    if let Err(u) = std::str::from_utf8(line) {
        let at = u.valid_up_to();
        return format!(
            "not UTF-8 text (binary data?): byte {} of the line is 0x{:02X}",
            at + 1,
            line[at]
        );
    }
    gtb_core::jsonl::json_line_error(e, "task")
}

/// One line of a task file: `None` when blank, else the task or why it is not one.
pub fn parse_line(raw: &[u8]) -> Option<std::result::Result<Task, String>> {
    let text = raw.trim_ascii();
    if text.is_empty() {
        return None; // the release loader skips blank lines
    }
    // from_slice checks UTF-8 inside strings; anything else non-ASCII is a syntax error anyway
    Some(serde_json::from_slice::<Task>(text).map_err(|e| describe(text, &e)))
}

/// [`parse_line`] for a line already checked to be UTF-8 (serde then skips its own check).
pub fn parse_text(text: &str) -> Option<std::result::Result<Task, String>> {
    let text = text.trim_ascii();
    if text.is_empty() {
        return None;
    }
    Some(serde_json::from_str::<Task>(text).map_err(|e| describe(text.as_bytes(), &e)))
}

/// Pieces of about `target` bytes that end just after a newline (or at the end).
fn chunks(bytes: &[u8], target: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while start < bytes.len() {
        let end = (start + target).min(bytes.len());
        let end = match bytes[end..].iter().position(|&b| b == b'\n') {
            Some(p) => end + p + 1,
            None => bytes.len(),
        };
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// One worker's share: its tally, plus what is needed to number its bad lines globally.
#[derive(Default)]
struct Part {
    tally: Tally,
    /// (chunk, line within the chunk from 0, message)
    bad: Vec<(usize, usize, String)>,
    /// (chunk, newlines in it)
    newlines: Vec<(usize, usize)>,
}

/// Count every task of `bytes`, whose first line is line `first_line` of the file. Lines are
/// parsed in parallel, in chunks of about 1 MB; malformed lines are kept in the tally with their
/// 1-based line numbers. Returns the tally and the number of newlines in `bytes`.
fn tally_block(bytes: &[u8], first_line: usize) -> (Tally, usize) {
    let pieces = chunks(bytes, 1 << 20);
    let part = pieces
        .par_iter()
        .enumerate()
        .fold(Part::default, |mut acc, (k, chunk)| {
            let mut lines = 0;
            for (i, raw) in chunk.split(|&b| b == b'\n').enumerate() {
                lines = i;
                match parse_line(raw) {
                    None => {}
                    Some(Ok(t)) => acc.tally.add(&t),
                    Some(Err(message)) => acc.bad.push((k, i, message)),
                }
            }
            acc.newlines.push((k, lines));
            acc
        })
        .reduce(Part::default, |mut a, b| {
            a.tally = a.tally.merge(b.tally);
            a.bad.extend(b.bad);
            a.newlines.extend(b.newlines);
            a
        });
    // first line number of each chunk
    let mut first = vec![0; pieces.len()];
    let mut newlines = part.newlines;
    newlines.sort_unstable();
    let mut line = first_line;
    for (k, n) in newlines {
        first[k] = line;
        line += n;
    }
    let mut tally = part.tally;
    for (k, i, message) in part.bad {
        tally.add_bad(BadLine {
            line: first[k] + i,
            message,
        });
    }
    (tally, line - first_line)
}

/// Count every task read from `input`, a block of about 32 MB at a time (memory stays flat
/// however large the file).
pub fn tally_reader(input: impl std::io::Read) -> std::io::Result<Tally> {
    tally_reader_in_blocks(input, 32 << 20)
}

/// [`tally_reader`] with a chosen block size (for tests of the block boundaries).
pub fn tally_reader_in_blocks(
    mut input: impl std::io::Read,
    block: usize,
) -> std::io::Result<Tally> {
    let mut tally = Tally::default();
    let mut buf: Vec<u8> = Vec::with_capacity(block + (1 << 16));
    let mut line = 1;
    let mut eof = false;
    while !eof {
        // fill to `block` bytes (or the end of the input)
        while buf.len() < block {
            let start = buf.len();
            buf.resize(block, 0);
            let n = input.read(&mut buf[start..])?;
            buf.truncate(start + n);
            if n == 0 {
                eof = true;
                break;
            }
        }
        // whole lines only, unless this is the end
        let cut = if eof {
            buf.len()
        } else {
            buf.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1)
        };
        if cut == 0 && !eof {
            // a single line longer than the block: read on until its newline
            let mut more = [0u8; 1 << 16];
            let n = input.read(&mut more)?;
            eof = n == 0;
            buf.extend_from_slice(&more[..n]);
            if !eof {
                continue;
            }
        }
        let cut = if eof { buf.len() } else { cut };
        let (t, newlines) = tally_block(&buf[..cut], line);
        tally = tally.merge(t);
        line += newlines;
        buf.drain(..cut);
    }
    Ok(tally)
}

/// Count every task of `bytes` (all in memory).
pub fn tally_bytes(bytes: &[u8]) -> Tally {
    tally_block(bytes, 1).0
}

/// The path that means standard input (`gtb audit -`, `gtb validate -`).
pub const STDIN: &str = "-";

/// How a task file is named in messages: `stdin` for `-`.
pub fn input_name(path: &Path) -> String {
    if path.as_os_str() == STDIN {
        "stdin".into()
    } else {
        path.display().to_string()
    }
}

/// A task file, or standard input for `-`, as a reader.
pub fn open_input(path: &Path) -> Result<Box<dyn std::io::Read>> {
    if path.as_os_str() == STDIN {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", input_name(path)))?;
    Ok(Box::new(file))
}

/// The error for malformed lines: `FILE:LINE: message` for each (up to a limit), then a count
/// and `remedy` (what the user can do besides fixing the lines, or "").
pub fn malformed_lines(name: &str, bad: &[BadLine], remedy: &str) -> anyhow::Error {
    let mut msg: Vec<String> = bad
        .iter()
        .take(BAD_LINES_LISTED)
        .map(|b| format!("{name}:{}: {}", b.line, b.message))
        .collect();
    if bad.len() > BAD_LINES_LISTED {
        msg.push(format!("… and {} more", bad.len() - BAD_LINES_LISTED));
    }
    msg.push(format!("{name}: {} malformed line(s){remedy}", bad.len()));
    anyhow::anyhow!("{}", msg.join("\n"))
}

/// Audit one file (`-`: standard input). Malformed lines are an error (listing
/// `FILE:LINE: message` for each, up to a limit) unless `skip_bad`, in which case they are
/// skipped and counted in the report.
pub fn audit_file(path: &Path, skip_bad: bool) -> Result<Report> {
    let name = input_name(path);
    let mut tally =
        tally_reader(open_input(path)?).map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    let bad = tally.bad_lines();
    if !bad.is_empty() && !skip_bad {
        return Err(malformed_lines(
            &name,
            bad,
            "; pass --skip-bad to skip them",
        ));
    }
    Ok(tally.report(&name))
}
