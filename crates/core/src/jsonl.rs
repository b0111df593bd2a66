//! JSON lines: work artifacts gtb writes and reads back, and the wording of a line that does not
//! decode (`FILE:LINE: ...`), shared by every reader of task files.

use anyhow::{Context, Result};
use std::path::Path;

/// Write items as JSON lines to `path`, atomically (`digest::write_streaming_atomic`). Blocks of
/// items are serialised in parallel and written in order, a group of blocks at a time, so that
/// the file is never held whole in memory (a million skeletons are half a gigabyte).
pub fn write_jsonl<T: serde::Serialize + Sync>(path: &Path, items: &[T]) -> Result<()> {
    crate::digest::write_streaming_atomic(path, |w| {
        for group in items.chunks(JSONL_GROUP) {
            write_jsonl_lines(w, group)?;
        }
        Ok(())
    })
}

/// Items `write_jsonl` serialises at once (a group of blocks); a caller that makes its items
/// as it goes makes this many at a time.
pub const JSONL_GROUP: usize = 64 * JSONL_BLOCK;
const JSONL_BLOCK: usize = 1024;

/// Append items to `w` as JSON lines: blocks serialised in parallel, written in order.
pub fn write_jsonl_lines<T: serde::Serialize + Sync>(
    w: &mut dyn std::io::Write,
    items: &[T],
) -> Result<()> {
    use rayon::prelude::*;
    let blocks = items
        .par_chunks(JSONL_BLOCK)
        .map(|block| {
            let mut out = Vec::new();
            for it in block {
                serde_json::to_writer(&mut out, it)?;
                out.push(b'\n');
            }
            Ok(out)
        })
        .collect::<serde_json::Result<Vec<Vec<u8>>>>()?;
    for b in &blocks {
        w.write_all(b)?;
    }
    Ok(())
}

/// Decode JSON lines (work artifacts gtb wrote), naming the line of any error.
pub fn from_jsonl<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &Path) -> Result<Vec<T>> {
    let text =
        std::str::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", what.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| decode_line(l, i + 1, what))
        .collect()
}

/// Decode line `at` (1-based) of a JSON-lines artifact, naming file and line on error.
pub fn decode_line<T: serde::de::DeserializeOwned>(
    line: &str,
    at: usize,
    what: &Path,
) -> Result<T> {
    serde_json::from_str(line).map_err(|e| {
        let why = json_line_error(&e, "record");
        anyhow::anyhow!("{}:{at}: {why}", what.display())
    })
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
/// The next block is read and decoded while `each` handles the current one (at most two
/// blocks are held). Blank lines are skipped; an error names the file and line, and an error
/// of `each` comes before one of the block after it.
pub fn read_blocks<T: serde::de::DeserializeOwned + Send>(
    path: &Path,
    block: usize,
    mut each: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<()> {
    let reader = crate::direct::DirectRead::open(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let mut blocks = Blocks {
        path,
        reader,
        line_no: 0,
        block: block.max(1),
        last_bytes: 0,
    };
    let mut current = blocks.next_block()?;
    while let Some(items) = current {
        let (done, next) = std::thread::scope(|s| {
            let reading = s.spawn(|| blocks.next_block());
            let done = each(items);
            let next = reading
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (done, next)
        });
        done?;
        current = next?;
    }
    Ok(())
}

/// `read_blocks` on a thread of the scope `s`: each block, then the error if one ends the
/// file early, comes through the returned channel in file order (which closes at the end).
/// The reader stops when the receiver is dropped.
pub fn blocks_on<'s, T: serde::de::DeserializeOwned + Send + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    path: &'s Path,
    block: usize,
) -> std::sync::mpsc::Receiver<Result<Vec<T>>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    s.spawn(move || {
        let sent = read_blocks(path, block, |b| {
            tx.send(Ok(b)).map_err(|_| anyhow::Error::new(Stopped))
        });
        if let Err(e) = sent
            && !e.is::<Stopped>()
        {
            // nobody may be listening any more
            let _ = tx.send(Err(e));
        }
    });
    rx
}

/// The receiver of `blocks_on` was dropped.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("nobody takes the blocks any more")
    }
}

impl std::error::Error for Stopped {}

/// A JSON-lines file read a block of records at a time (`read_blocks`).
struct Blocks<'p> {
    path: &'p Path,
    reader: crate::direct::DirectRead,
    line_no: usize,
    block: usize,
    /// the bytes of the block before (the next one's buffer starts with room for as many)
    last_bytes: usize,
}

impl Blocks<'_> {
    /// The next block's records, decoded in parallel (None at the end of the file). The block's
    /// lines are read as bytes into one buffer; each is checked to be UTF-8 as it is decoded,
    /// by the workers (with SIMD: `std`'s check of the mostly Chinese lines took more CPU than
    /// decoding them), so that the one reading thread only finds the lines (a 100,000-task
    /// world reads 3.7 GB of plans and tasks so). The first bad line of the block is named.
    fn next_block<T: serde::de::DeserializeOwned + Send>(&mut self) -> Result<Option<Vec<T>>> {
        use rayon::prelude::*;
        use std::io::BufRead;
        let path = self.path;
        let mut bytes: Vec<u8> = Vec::with_capacity(self.last_bytes);
        // per record: its line number and its span in `bytes`
        let mut lines: Vec<(usize, usize, usize)> = Vec::with_capacity(self.block);
        while lines.len() < self.block {
            let start = bytes.len();
            let n = self.reader.read_until(b'\n', &mut bytes).with_context(|| {
                format!("reading {} (line {})", path.display(), self.line_no + 1)
            })?;
            if n == 0 {
                break;
            }
            self.line_no += 1;
            if is_blank(&bytes[start..]) {
                bytes.truncate(start);
            } else {
                lines.push((self.line_no, start, bytes.len()));
            }
        }
        self.last_bytes = bytes.len();
        if lines.is_empty() {
            return Ok(None);
        }
        let items: Vec<Result<T>> = lines
            .par_iter()
            .map(|&(no, a, b)| {
                let text = simdutf8::basic::from_utf8(&bytes[a..b]).map_err(|_| {
                    let e = std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    );
                    anyhow::Error::new(e).context(format!("reading {} (line {no})", path.display()))
                })?;
                serde_json::from_str(text).map_err(|e| {
                    let why = json_line_error(&e, "record");
                    anyhow::anyhow!("{}:{no}: {why}", path.display())
                })
            })
            .collect();
        items.into_iter().collect::<Result<Vec<T>>>().map(Some)
    }
}

/// Whether a line is blank: nothing but white space (`str::trim`'s, which a line of other
/// bytes that are not UTF-8 is not).
fn is_blank(line: &[u8]) -> bool {
    for (i, &c) in line.iter().enumerate() {
        match c {
            b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => {}
            0x80.. => return std::str::from_utf8(&line[i..]).is_ok_and(|s| s.trim().is_empty()),
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    /// More items than a group of blocks: the file is every item's line, in order, as one
    /// serial pass writes them, and nothing else is left in the folder.
    #[test]
    fn issue27_write_jsonl_writes_the_lines_of_a_serial_pass() {
        let items: Vec<(usize, String)> = (0..70_000).map(|i| (i, format!("项{i}"))).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("items.jsonl");
        write_jsonl(&path, &items).unwrap();
        let mut serial = Vec::new();
        for it in &items {
            serde_json::to_writer(&mut serial, it).unwrap();
            serial.push(b'\n');
        }
        assert!(std::fs::read(&path).unwrap() == serial);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let back: Vec<(usize, String)> = from_jsonl(&serial, &path).unwrap();
        assert_eq!(back, items);
    }

    #[test]
    fn issue27_read_blocks_hands_every_record_in_order_while_reading_ahead() {
        let text: String = (0..1000).map(|i| format!("{i}\n\n")).collect();
        let f = file(&text);
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        read_blocks(f.path(), 64, |b: Vec<u32>| {
            sizes.push(b.len());
            seen.extend(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..1000).collect::<Vec<u32>>());
        assert!(sizes.iter().all(|&n| n <= 64) && sizes.len() == 16);
    }

    /// Blocks on a thread: every block in order, then the error that ends the file early; a
    /// receiver dropped early stops the reader (the scope ends).
    #[test]
    fn issue27_blocks_on_a_thread_come_in_order_then_the_error() {
        let f = file("1\n2\n3\n4\nx\n");
        let got: Vec<Result<Vec<u32>>> =
            std::thread::scope(|s| blocks_on(s, f.path(), 2).into_iter().collect());
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].as_ref().unwrap(), &[1, 2]);
        assert_eq!(got[1].as_ref().unwrap(), &[3, 4]);
        let at = format!("{}:5: invalid JSON", f.path().display());
        assert!(got[2].as_ref().unwrap_err().to_string().starts_with(&at));
        let many: String = (0..10_000).map(|i| format!("{i}\n")).collect();
        let f = file(&many);
        let first = std::thread::scope(|s| blocks_on::<u32>(s, f.path(), 1).recv().unwrap());
        assert_eq!(first.unwrap(), [0]);
    }

    #[test]
    fn issue27_read_blocks_errors_name_the_line_and_come_in_order() {
        let f = file("1\n2\n\nx\n5\n");
        let e = read_blocks(f.path(), 2, |_: Vec<u32>| Ok(())).unwrap_err();
        let at = format!("{}:4: invalid JSON", f.path().display());
        assert!(e.to_string().starts_with(&at), "{e}");
        // the handler's error on a block comes before a bad line of the block read ahead
        let e = read_blocks(f.path(), 2, |_: Vec<u32>| anyhow::bail!("handler")).unwrap_err();
        assert_eq!(e.to_string(), "handler");
    }

    /// The reading thread only finds the lines; the workers check them. A line that is not
    /// UTF-8 is named as before, the first bad line of a block wins whatever the workers do,
    /// and a line of nothing but white space (the ideographic space too) is skipped.
    #[test]
    fn issue27_read_blocks_checks_utf8_in_the_workers_and_names_the_first_bad_line() {
        let bytes = |b: &[u8]| {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), b).unwrap();
            f
        };
        let f = bytes(b"1\n\xe3\x80\x80 \r\n\x0b\n2\n\"\xff\"\n4\n");
        let e = read_blocks(f.path(), 64, |_: Vec<Value>| Ok(())).unwrap_err();
        let at = format!("reading {} (line 5)", f.path().display());
        assert_eq!(e.to_string(), at);
        assert!(format!("{e:#}").ends_with("stream did not contain valid UTF-8"));
        let f = bytes(b"1\n\xe3\x80\x80 \r\n\x0b\n2\nx\n\"\xff\"\ny\n");
        let e = read_blocks(f.path(), 64, |_: Vec<Value>| Ok(())).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}:5: invalid JSON", f.path().display()))
        );
        let f = bytes("1\n\u{3000}\n\n\"是\"\r\n".as_bytes());
        let mut seen = Vec::new();
        read_blocks(f.path(), 1, |b: Vec<Value>| {
            seen.extend(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [Value::from(1), Value::from("是")]);
    }
}
