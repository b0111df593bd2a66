//! Reading a task file: every non-blank line is parsed as a [`Task`] (in parallel) and counted
//! into a [`Tally`]; a line that is not a task becomes a [`BadLine`] with its 1-based number.

use super::report::{BAD_LINES_LISTED, BadLine, Report, Tally};
use anyhow::Result;
use gtb_core::direct::ALIGN;
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

/// What a pass over a task file does with its lines: `fold` takes each non-blank line (its
/// 1-based number in the file, and the task or why it is not one) into a worker's
/// accumulator, `merge` joins two accumulators. Workers see the lines of a block in pieces,
/// the pieces in any order: the result must not depend on the order of merging (counts, or
/// lists sorted afterwards), nor, for a fold [`LineFold::BY_DESTINATION`], on the order of the
/// lines.
pub trait LineFold: Sync {
    type Acc: Send;
    /// Fold the lines of a block grouped by their destinations ([`destinations`]), in file
    /// order within a group, rather than in file order: the tasks of one destination read
    /// the same tables, so a worker finds them in the cache (a 100,000-task validate took 9 %
    /// less CPU). Off, each piece's lines come in file order.
    const BY_DESTINATION: bool = false;
    fn init(&self) -> Self::Acc;
    fn fold(&self, acc: &mut Self::Acc, line: usize, task: std::result::Result<Task, String>);
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// A task line's list of destinations as it is written (`"cities": [...]`, the first key of
/// that name), or nothing: what [`LineFold::BY_DESTINATION`] groups lines by. A guess from
/// the bytes, not a parse: a line it misreads is only folded in another order.
fn destinations(line: &[u8]) -> &[u8] {
    let Some(at) = memchr::memmem::find(line, b"\"cities\"") else {
        return &[];
    };
    let rest = &line[at..];
    &rest[..memchr::memchr(b']', rest).map_or(rest.len(), |end| end + 1)]
}

/// The lines of `bytes` (whose first line is line `first_line` of the file), parsed in
/// parallel in pieces of about 1 MB, grouped by destination if the fold asks; returns the
/// accumulator and the newlines of `bytes`.
fn fold_block<F: LineFold>(f: &F, bytes: &[u8], first_line: usize) -> (F::Acc, usize) {
    // every line with its number (after the last newline, an empty line or the file's end)
    let mut start = 0;
    let mut lines: Vec<(&[u8], usize)> = (line_ends(bytes).into_iter().enumerate())
        .map(|(i, end)| {
            let line = (&bytes[start..end], first_line + i);
            start = end + 1;
            line
        })
        .collect();
    let newlines = lines.len() - 1;
    if F::BY_DESTINATION {
        let mut keyed: Vec<_> = lines
            .into_par_iter()
            .map(|l| (destinations(l.0), l))
            .collect();
        // stable: file order within a destination
        keyed.par_sort_by_key(|&(key, _)| key);
        lines = keyed.into_iter().map(|(_, line)| line).collect();
    }
    let acc = pieces(&lines, 1 << 20)
        .par_iter()
        .fold(
            || f.init(),
            |mut acc, piece| {
                for &(raw, line) in *piece {
                    fold_line(f, &mut acc, raw, line);
                }
                acc
            },
        )
        .reduce(|| f.init(), |a, b| f.merge(a, b));
    (acc, newlines)
}

/// Where the lines of `bytes` end: each newline, then the end. Searched a megabyte at a time
/// in parallel: a block is tens of megabytes, and the workers wait for its lines.
fn line_ends(bytes: &[u8]) -> Vec<usize> {
    const STEP: usize = 1 << 20;
    let found: Vec<Vec<usize>> = (bytes.par_chunks(STEP).enumerate())
        .map(|(c, chunk)| {
            let at = memchr::memchr_iter(b'\n', chunk);
            at.map(|p| c * STEP + p).collect()
        })
        .collect();
    let mut ends = Vec::with_capacity(found.iter().map(Vec::len).sum::<usize>() + 1);
    ends.extend(found.into_iter().flatten());
    ends.push(bytes.len());
    ends
}

/// Runs of `lines` of about `target` bytes.
fn pieces<'l, 'b>(lines: &'l [(&'b [u8], usize)], target: usize) -> Vec<&'l [(&'b [u8], usize)]> {
    let mut out = Vec::with_capacity(lines.len() / 64 + 1);
    let (mut start, mut size) = (0, 0);
    for (i, (line, _)) in lines.iter().enumerate() {
        size += line.len() + 1;
        if size >= target {
            out.push(&lines[start..=i]);
            (start, size) = (i + 1, 0);
        }
    }
    if start < lines.len() {
        out.push(&lines[start..]);
    }
    out
}

/// One line into the accumulator: a UTF-8 check by vector instructions, so that serde skips
/// its check of every string; a line that is not UTF-8 is parsed as bytes to say where.
fn fold_line<F: LineFold>(f: &F, acc: &mut F::Acc, raw: &[u8], line: usize) {
    let task = match simdutf8::basic::from_utf8(raw) {
        Ok(text) => parse_text(text),
        Err(_) => parse_line(raw),
    };
    if let Some(task) = task {
        f.fold(acc, line, task);
    }
}

/// Every task of `input`, read a block of about `block` bytes at a time (memory stays flat
/// however large the file). A reader thread reads the next block while the workers parse
/// this one; two buffers go back and forth between them.
pub fn fold_reader<F: LineFold>(
    f: &F,
    input: impl std::io::Read + Send,
    block: usize,
) -> std::io::Result<F::Acc> {
    use std::sync::mpsc::sync_channel;
    let (full_tx, full_rx) = sync_channel::<std::io::Result<Block>>(1);
    let (empty_tx, empty_rx) = sync_channel::<Block>(2);
    for _ in 0..2 {
        let _ = empty_tx.send(Block::default());
    }
    std::thread::scope(|s| {
        s.spawn(move || read_blocks(input, block, &empty_rx, &full_tx));
        let mut acc = f.init();
        let mut line = 1;
        for buf in full_rx {
            let buf = buf?;
            let (a, newlines) = fold_block(f, buf.lines(), line);
            acc = f.merge(acc, a);
            line += newlines;
            // the reader may have stopped (at the end); its buffers are not needed then
            let _ = empty_tx.send(buf);
        }
        Ok(acc)
    })
}

/// The reader of [`fold_reader`]: fill a free buffer with whole lines (a line longer than the
/// block is read on to its newline; the last line need not end in one), hand it on, and carry
/// the part line after its last newline into the next buffer.
fn read_blocks(
    mut input: impl std::io::Read,
    block: usize,
    empty: &std::sync::mpsc::Receiver<Block>,
    full: &std::sync::mpsc::SyncSender<std::io::Result<Block>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    // the first block an eighth of the others: the workers wait for it
    let mut size = (block / 8).next_multiple_of(ALIGN);
    while !eof {
        let Ok(mut buf) = empty.recv() else { return };
        buf.begin(&carry, block);
        // a block after the part line; past a long line's end, 64 KB more at a time
        let mut target = buf.end + size.max(1 << 16);
        size = block;
        // the bytes not yet searched for a newline (the part line has none): a line longer
        // than a block is searched once, not again at every 64 KB read past it
        let mut unsearched = buf.end;
        let cut = loop {
            match buf.fill(&mut input, target) {
                Err(e) => {
                    let _ = full.send(Err(e));
                    return;
                }
                Ok(true) => {
                    eof = true;
                    break buf.end;
                }
                Ok(false) => {
                    let read = &buf.bytes[unsearched..buf.end];
                    if let Some(p) = memchr::memrchr(b'\n', read) {
                        break unsearched + p + 1;
                    }
                    unsearched = buf.end;
                    target = buf.end + (1 << 16);
                }
            }
        };
        carry.clear();
        carry.extend_from_slice(&buf.bytes[cut..buf.end]);
        buf.end = cut;
        if full.send(Ok(buf)).is_err() {
            return;
        }
    }
}

/// Every task of `bytes` (all in memory).
pub fn fold_bytes<F: LineFold>(f: &F, bytes: &[u8]) -> F::Acc {
    fold_block(f, bytes, 1).0
}

/// A buffer of the reader thread: its lines are `bytes[start..end]`. The bytes are read from
/// an offset aligned to [`ALIGN`] (the part line carried over from the block before sits just
/// ahead of it), so that a file read around the page cache goes straight into them; and the
/// vector stays at its full length, so that no read zeroes its spare room first.
#[derive(Default)]
struct Block {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl Block {
    fn lines(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Start the buffer with `carry`, with room after it for a `block` (at least 64 KB).
    fn begin(&mut self, carry: &[u8], block: usize) {
        let ahead = carry.len().next_multiple_of(ALIGN);
        let needed = ALIGN + ahead + block.max(1 << 16);
        if self.bytes.len() < needed {
            // room for a part line of up to 1 MB ahead, so that the next block fits too
            self.bytes = vec![0; needed.max(ALIGN + (1 << 20) + block.max(1 << 16))];
        }
        let at = gtb_core::direct::aligned_start(&self.bytes) + ahead;
        (self.start, self.end) = (at - carry.len(), at);
        self.bytes[self.start..at].copy_from_slice(carry);
    }

    /// Read until the buffer's lines end at `target` (it grows to hold them); true at the end
    /// of the input.
    fn fill(&mut self, input: &mut impl std::io::Read, target: usize) -> std::io::Result<bool> {
        if self.bytes.len() < target {
            self.bytes.resize(target, 0);
        }
        while self.end < target {
            match input.read(&mut self.bytes[self.end..target]) {
                Ok(0) => return Ok(true),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }
}

/// The audit's pass: every task counted into a [`Tally`], malformed lines kept with their
/// numbers.
struct TallyFold;

impl LineFold for TallyFold {
    type Acc = Tally;
    fn init(&self) -> Tally {
        Tally::default()
    }
    fn fold(&self, acc: &mut Tally, line: usize, task: std::result::Result<Task, String>) {
        match task {
            Ok(t) => acc.add(&t),
            Err(message) => acc.add_bad(BadLine { line, message }),
        }
    }
    fn merge(&self, a: Tally, b: Tally) -> Tally {
        a.merge(b)
    }
}

/// Count every task read from `input`, a block of about 32 MB at a time (memory stays flat
/// however large the file).
pub fn tally_reader(input: impl std::io::Read + Send) -> std::io::Result<Tally> {
    tally_reader_in_blocks(input, 32 << 20)
}

/// [`tally_reader`] with a chosen block size (for tests of the block boundaries).
pub fn tally_reader_in_blocks(
    input: impl std::io::Read + Send,
    block: usize,
) -> std::io::Result<Tally> {
    fold_reader(&TallyFold, input, block)
}

/// Count every task of `bytes` (all in memory).
pub fn tally_bytes(bytes: &[u8]) -> Tally {
    fold_bytes(&TallyFold, bytes)
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
pub fn open_input(path: &Path) -> Result<Box<dyn std::io::Read + Send>> {
    if path.as_os_str() == STDIN {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = gtb_core::direct::DirectRead::open(path)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each task's (line, first destination), in the order the fold was given them.
    struct Order;

    impl LineFold for Order {
        type Acc = Vec<(usize, String)>;
        const BY_DESTINATION: bool = true;
        fn init(&self) -> Self::Acc {
            Vec::new()
        }
        fn fold(&self, acc: &mut Self::Acc, line: usize, task: std::result::Result<Task, String>) {
            let city = task.map_or_else(|e| format!("bad: {e}"), |t| t.metadata.cities.join("+"));
            acc.push((line, city));
        }
        fn merge(&self, mut a: Self::Acc, b: Self::Acc) -> Self::Acc {
            a.extend(b);
            a
        }
    }

    fn task_line(id: usize, cities: &str) -> String {
        format!(
            r#"{{"task_id": "t{id}", "query": "", "time": "", "context": "", "metadata": {{"departure_city": "", "cities": [{cities}], "date": "", "group_id": "", "group_name": "", "group_tags": [], "compromise_pattern": [], "child_members": []}}, "user_preferences": {{}}, "initial_messages": [], "difficulty_score": 0.0, "difficulty_type": ""}}"#
        )
    }

    #[test]
    fn issue27_a_fold_by_destination_gets_each_line_once_grouped_in_file_order() {
        let cities = [r#""丽江市""#, r#""大理市", "丽江市""#, "", r#""丽江市""#];
        let mut text = String::new();
        for i in 0..12 {
            match i {
                5 => text.push_str("{\"task_id\": broken\n"),
                8 => text.push('\n'),
                _ => text.push_str(&(task_line(i, cities[i % 4]) + "\n")),
            }
        }
        // one piece: the order the fold saw is the grouped order
        let seen = fold_bytes(&Order, text.as_bytes());
        let lines: Vec<usize> = seen.iter().map(|(l, _)| *l).collect();
        // no list first (the broken line; the blank line 9 is no task), then by the list's
        // bytes: 丽江市, 大理市 + 丽江市, the empty list; file order within each
        assert_eq!(lines, [6, 1, 4, 5, 8, 12, 2, 10, 3, 7, 11]);
        assert!(seen[0].1.starts_with("bad: invalid JSON"), "{:?}", seen[0]);
        assert_eq!(seen[6].1, "大理市+丽江市");
        // blocks of any size: every line once, with its number
        for block in [1, 100, 1 << 20] {
            let mut got = fold_reader(&Order, text.as_bytes(), block).unwrap();
            got.sort();
            let mut want = seen.clone();
            want.sort();
            assert_eq!(got, want, "block {block}");
        }
    }

    /// A file on disk is read around the page cache, straight into the blocks' aligned
    /// buffers once the reader's own buffer is used up: every line once, with its number,
    /// whatever the line lengths where the blocks meet.
    #[test]
    fn issue27_a_file_read_directly_folds_every_line_once() {
        let cities = [r#""丽江市""#, r#""大理市", "丽江市""#, "", r#""成都市""#];
        let mut text = String::new();
        for i in 0..60_000 {
            let mut line = task_line(i, cities[i % 4]);
            // lines of many lengths, so that blocks end anywhere
            line.push_str(&" ".repeat(i * 7 % 61));
            text.push_str(&line);
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.jsonl");
        std::fs::write(&path, &text).unwrap();
        let mut want = fold_bytes(&Order, text.as_bytes());
        want.sort();
        for block in [8 << 20, 5 << 20] {
            let file = gtb_core::direct::DirectRead::open(&path).unwrap();
            let mut got = fold_reader(&Order, file, block).unwrap();
            got.sort();
            assert_eq!(got.len(), 60_000, "block {block}");
            assert!(got == want, "block {block}: the lines differ");
        }
    }

    #[test]
    fn issue27_destinations_are_read_from_the_bytes_or_are_none() {
        assert_eq!(
            destinations(br#"{"metadata": {"cities": ["A", "B"], "x": 1}}"#),
            br#""cities": ["A", "B"]"#
        );
        assert_eq!(destinations(br#"{"cities":[]}"#), br#""cities":[]"#);
        assert_eq!(destinations(br#"{"cities": "#), br#""cities": "#);
        assert_eq!(destinations(br#"{"city": ["A"]}"#), b"");
    }
}
