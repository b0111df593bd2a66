//! The lines a split publishes, as spans of the files that hold them: every line of some files
//! in order (`Lines::scan`: a merge's shard slices, the witness parts), or the spans a build's
//! validate stage recorded (`Lines::indexed`: an untouched first attempt stays where the
//! generate stage wrote it, so the 100,000-task validate stage writes only the lines it
//! changed). Lines are copied with positioned reads, never held in memory all at once, and
//! hashed while they are written.

use anyhow::{Context, Result, bail};
use gtb_core::digest;
use gtb_core::rng::item_rng;
use rand::seq::SliceRandom;
use std::io::{BufRead, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// One line: (part, byte offset, length without its newline).
pub type Span = (usize, u64, usize);

/// Lines spread over files.
pub struct Lines {
    parts: Vec<(PathBuf, std::fs::File)>,
    spans: Vec<Span>,
}

fn open(parts: &[PathBuf]) -> Result<Vec<(PathBuf, std::fs::File)>> {
    parts
        .iter()
        .map(|p| {
            let f = std::fs::File::open(p).with_context(|| format!("reading {}", p.display()))?;
            Ok((p.clone(), f))
        })
        .collect()
}

impl Lines {
    /// Every non-empty line of `parts`, in order.
    pub fn scan(parts: &[PathBuf]) -> Result<Lines> {
        let parts = open(parts)?;
        let mut spans = Vec::new();
        for (k, (path, file)) in parts.iter().enumerate() {
            let mut pos = 0u64;
            for line in std::io::BufReader::with_capacity(1 << 20, file).split(b'\n') {
                let len = line
                    .with_context(|| format!("reading {}", path.display()))?
                    .len();
                if len > 0 {
                    spans.push((k, pos, len));
                }
                pos += len as u64 + 1;
            }
        }
        Ok(Lines { parts, spans })
    }

    /// The lines an index written by [`write_index`] lists over `parts`.
    pub fn indexed(parts: &[PathBuf], index: &Path) -> Result<Lines> {
        let parts = open(parts)?;
        let sizes = parts
            .iter()
            .map(|(p, f)| {
                let m = f
                    .metadata()
                    .with_context(|| format!("reading {}", p.display()));
                Ok(m?.len())
            })
            .collect::<Result<Vec<u64>>>()?;
        let text = std::fs::read_to_string(index)
            .with_context(|| format!("reading {}", index.display()))?;
        let spans = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                parse_span(l, &sizes)
                    .with_context(|| format!("{}:{}: span", index.display(), i + 1))
            })
            .collect::<Result<Vec<Span>>>()?;
        Ok(Lines { parts, spans })
    }

    /// Write the lines in order to `to` (atomically); returns its sha256.
    pub fn write_in_order(&self, to: &Path) -> Result<String> {
        let order: Vec<usize> = (0..self.spans.len()).collect();
        self.write(&order, to)
    }

    /// Write the lines in the seeded shuffled order of a split to `to` (atomically); returns
    /// its sha256 and line count.
    pub fn write_shuffled(&self, seed: u64, to: &Path) -> Result<(String, usize)> {
        let order = shuffled_order(seed, self.spans.len());
        Ok((self.write(&order, to)?, order.len()))
    }

    fn write(&self, order: &[usize], to: &Path) -> Result<String> {
        let mut sha = String::new();
        digest::write_streaming_atomic_direct(to, |w| {
            sha = copy_hashed(order, |i, buf| self.read(i, buf), w)?;
            Ok(())
        })?;
        Ok(sha)
    }

    /// Append line `i` and its newline to `buf`.
    fn read(&self, i: usize, buf: &mut Vec<u8>) -> Result<()> {
        let (k, off, len) = self.spans[i];
        let (path, file) = &self.parts[k];
        let start = buf.len();
        buf.resize(start + len, 0);
        file.read_exact_at(&mut buf[start..], off)
            .with_context(|| format!("reading {}", path.display()))?;
        buf.push(b'\n');
        Ok(())
    }
}

/// The seeded shuffled order of a split's `n` lines: the line at each place of the published
/// file, by its place in slot order.
pub fn shuffled_order(seed: u64, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut item_rng(seed, "write", "order"));
    order
}

/// `part offset length`, inside a part of the given sizes and followed by its newline there.
fn parse_span(line: &str, sizes: &[u64]) -> Result<Span> {
    let mut f = line.split(' ').map(str::parse::<u64>);
    let (Some(Ok(k)), Some(Ok(off)), Some(Ok(len)), None) =
        (f.next(), f.next(), f.next(), f.next())
    else {
        bail!("expected `part offset length`, found {line:?}");
    };
    let size = sizes.get(k as usize).copied();
    match size {
        Some(size) if off + len < size => Ok((k as usize, off, len as usize)),
        Some(size) => bail!(
            "bytes {off}..{} are past the part's end ({size})",
            off + len + 1
        ),
        None => bail!("part {k} of {}", sizes.len()),
    }
}

/// Write the span index of `spans` (one `part offset length` line each) to `to`, atomically.
pub fn write_index(spans: &[Span], to: &Path) -> Result<()> {
    let mut text = Vec::with_capacity(spans.len() * 20);
    for (k, off, len) in spans {
        writeln!(text, "{k} {off} {len}")?;
    }
    digest::write_atomic(to, &text)
}

/// Write the lines `read` puts into a buffer, in `order`, and return their sha256. Three
/// threads form a pipeline: one gathers the lines into blocks, this one writes each block,
/// and a third hashes it. Gathering (a positioned read per line) and writing each cost about
/// as much on a 100,000-task file; in turn on one thread, they added up.
fn copy_hashed(
    order: &[usize],
    read: impl Fn(usize, &mut Vec<u8>) -> Result<()> + Sync,
    w: &mut dyn Write,
) -> Result<String> {
    use sha2::Digest;
    use std::sync::Arc;
    use std::sync::mpsc::sync_channel;
    const BLOCK: usize = 4 << 20;
    let (gathered_tx, gathered_rx) = sync_channel::<Arc<Vec<u8>>>(2);
    std::thread::scope(|scope| {
        let (hash_tx, hasher) =
            digest::sha256_thread(scope, 4, |h, block: &Arc<Vec<u8>>| h.update(&block[..]));
        let read = &read;
        let gatherer = scope.spawn(move || -> Result<()> {
            let mut buf = Vec::with_capacity(BLOCK + (64 << 10));
            for (done, &i) in order.iter().enumerate() {
                read(i, &mut buf)?;
                if done == order.len() / 2 {
                    crate::publish::crash_point("write:task-file-half-written");
                }
                if buf.len() >= BLOCK || done + 1 == order.len() {
                    let next = Vec::with_capacity(BLOCK + (64 << 10));
                    let block = Arc::new(std::mem::replace(&mut buf, next));
                    // the gatherer stops early only when the writer has stopped taking blocks
                    if gathered_tx.send(block).is_err() {
                        break;
                    }
                }
            }
            Ok(())
        });
        let written = (|| -> Result<()> {
            for block in gathered_rx {
                w.write_all(&block)?;
                // the hasher only stops early when this thread has stopped sending
                hash_tx.send(block).ok();
            }
            Ok(())
        })();
        drop(hash_tx);
        let gathered = gatherer.join().expect("the gatherer thread does not panic");
        let sha = hasher.join().expect("the hasher thread does not panic");
        gathered.and(written).map(|()| sha)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_lines_are_copied_from_both_parts_and_checked_against_them() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, ix) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("ix"),
        );
        std::fs::write(&a, "one\ntwo\n").unwrap();
        std::fs::write(&b, "TWO\n").unwrap();
        write_index(&[(0, 0, 3), (1, 0, 3)], &ix).unwrap();
        let lines = Lines::indexed(&[a.clone(), b.clone()], &ix).unwrap();
        let out = dir.path().join("out");
        let sha = lines.write_in_order(&out).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "one\nTWO\n");
        assert_eq!(sha, digest::sha256_file(&out).unwrap());
        // a span past a part's end (the part changed under the index) is an error naming it
        write_index(&[(0, 4, 9)], &ix).unwrap();
        let e = format!("{:#}", Lines::indexed(&[a, b], &ix).err().unwrap());
        assert!(
            e.contains("ix:1") && e.contains("past the part's end"),
            "{e}"
        );
    }

    #[test]
    fn scanned_lines_keep_every_non_empty_line_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "x\n\ny\n").unwrap();
        std::fs::write(&b, "z").unwrap();
        let lines = Lines::scan(&[a, b]).unwrap();
        let out = dir.path().join("out");
        let (_, n) = lines.write_shuffled(1, &out).unwrap();
        assert_eq!(n, 3);
        lines.write_in_order(&out).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "x\ny\nz\n");
    }

    /// A writer that takes `left` bytes, then fails.
    struct FailsAfter {
        left: usize,
    }

    impl Write for FailsAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.left {
                return Err(std::io::Error::other("disk full"));
            }
            self.left -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Lines of 64 KB, so that a copy of 200 of them spans several blocks.
    fn big_line(i: usize, buf: &mut Vec<u8>) -> Result<()> {
        buf.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 64 << 10));
        buf.push(b'\n');
        Ok(())
    }

    #[test]
    fn the_copy_pipeline_hashes_what_it_writes_and_stops_on_either_side_failing() {
        let order: Vec<usize> = (0..200).rev().collect();
        let mut out = Vec::new();
        let sha = copy_hashed(&order, big_line, &mut out).unwrap();
        assert_eq!(out.len(), 200 * ((64 << 10) + 1));
        assert_eq!(out[0], b'a' + (199 % 26) as u8);
        assert_eq!(
            sha,
            digest::hex(&<sha2::Sha256 as sha2::Digest>::digest(&out))
        );
        // the writer fails after its first block: the error comes back, nothing hangs
        let e = copy_hashed(&order, big_line, &mut FailsAfter { left: 5 << 20 }).unwrap_err();
        assert!(format!("{e:#}").contains("disk full"), "{e:#}");
        // a read fails half-way: its error comes back
        let failing = |i: usize, buf: &mut Vec<u8>| match i {
            100 => anyhow::bail!("reading line {i}"),
            _ => big_line(i, buf),
        };
        let e = copy_hashed(&order, failing, &mut Vec::new()).unwrap_err();
        assert!(format!("{e:#}").contains("reading line 100"), "{e:#}");
    }
}
