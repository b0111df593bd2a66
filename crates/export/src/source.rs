//! What `gtb export` reads: the splits of a build output folder, each a JSONL file with the
//! manifest that describes it, read as a stream of rows in chunks.

use super::columns::Row;
use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use sha2::Digest;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// One split to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSource {
    /// split name: the file's stem (`test` for `test.jsonl`)
    pub name: String,
    pub jsonl: PathBuf,
    /// `manifest.json` beside the file, when there is one
    pub manifest: Option<PathBuf>,
}

impl SplitSource {
    fn of_file(jsonl: PathBuf) -> Result<SplitSource> {
        let name = jsonl
            .file_stem()
            .and_then(|s| s.to_str())
            .with_context(|| format!("{}: the file name is not UTF-8", jsonl.display()))?
            .to_string();
        let manifest = jsonl
            .parent()
            .map(|d| d.join("manifest.json"))
            .filter(|m| m.is_file());
        Ok(SplitSource {
            name,
            jsonl,
            manifest,
        })
    }
}

/// The task file of a single-split folder: `test.jsonl`, else `<folder>.jsonl`, else the only
/// `*.jsonl` there is.
fn task_file_in(dir: &Path) -> Result<Option<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read the folder", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    found.sort();
    let named = |stem: &str| {
        found
            .iter()
            .find(|p| p.file_stem().is_some_and(|s| s == stem))
    };
    let own = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(p) = named("test").or_else(|| named(own)) {
        return Ok(Some(p.clone()));
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => bail!(
            "{}: several task files ({}) and none is test.jsonl; pass one of them",
            dir.display(),
            found
                .iter()
                .filter_map(|p| p.file_name()?.to_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Conventional order of splits: train, then validation, then test, then the others by name.
fn split_rank(name: &str) -> (u8, &str) {
    let rank = match name {
        "train" => 0,
        "dev" | "val" | "valid" | "validation" => 1,
        "test" => 2,
        _ => 3,
    };
    (rank, name)
}

/// The splits under `input`: a JSONL file; a build folder (`test.jsonl` + `manifest.json`);
/// or the `--splits` layout, one folder per split holding `<split>.jsonl` + `manifest.json`.
pub fn discover(input: &Path) -> Result<Vec<SplitSource>> {
    if input.is_file() {
        return Ok(vec![SplitSource::of_file(input.to_path_buf())?]);
    }
    if !input.is_dir() {
        bail!("{}: no such file or folder", input.display());
    }
    if input.join("manifest.json").is_file() || input.join("test.jsonl").is_file() {
        let file = task_file_in(input)?.with_context(|| {
            format!(
                "{}: manifest.json but no task file (.jsonl)",
                input.display()
            )
        })?;
        return Ok(vec![SplitSource::of_file(file)?]);
    }
    let mut splits = Vec::new();
    for e in std::fs::read_dir(input)
        .with_context(|| format!("{}: cannot read the folder", input.display()))?
    {
        let dir = e?.path();
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let jsonl = dir.join(format!("{name}.jsonl"));
        if dir.join("manifest.json").is_file() && jsonl.is_file() {
            splits.push(SplitSource::of_file(jsonl)?);
        }
    }
    if splits.is_empty() {
        bail!(
            "{}: no task file: expected a JSONL file, a build folder (test.jsonl + manifest.json) or the --splits layout (one folder per split with <split>.jsonl + manifest.json)",
            input.display()
        );
    }
    splits.sort_by(|a, b| split_rank(&a.name).cmp(&split_rank(&b.name)));
    Ok(splits)
}

/// A task file read as rows, `chunk` at most at a time, with the sha256 of every byte read.
pub struct RowReader {
    path: PathBuf,
    reader: std::io::BufReader<std::fs::File>,
    line_no: usize,
    sha: sha2::Sha256,
    bytes: u64,
    done: bool,
}

/// A non-blank line and its 1-based number.
type NumberedLine = (usize, Vec<u8>);

impl RowReader {
    pub fn open(path: &Path) -> Result<RowReader> {
        let f = std::fs::File::open(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        Ok(RowReader {
            path: path.to_path_buf(),
            reader: std::io::BufReader::with_capacity(1 << 20, f),
            line_no: 0,
            sha: sha2::Sha256::default(),
            bytes: 0,
            done: false,
        })
    }

    /// Up to `max` non-blank lines (blank lines are skipped, as the release's loader does).
    fn lines(&mut self, max: usize) -> Result<Vec<NumberedLine>> {
        let mut out = Vec::with_capacity(max);
        while out.len() < max && !self.done {
            let mut buf = Vec::with_capacity(8 << 10);
            let n = self
                .reader
                .read_until(b'\n', &mut buf)
                .with_context(|| format!("{}: cannot read", self.path.display()))?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.line_no += 1;
            self.sha.update(&buf);
            self.bytes += n as u64;
            if buf.last() == Some(&b'\n') {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            if !buf.trim_ascii().is_empty() {
                out.push((self.line_no, buf));
            }
        }
        Ok(out)
    }

    /// The next rows (up to `max`, parsed in parallel); empty at the end of the file. A line
    /// that is not a task stops the export with `FILE:LINE: reason`.
    pub fn next_rows(&mut self, max: usize) -> Result<Vec<Row>> {
        let lines = self.lines(max)?;
        let path = &self.path;
        lines
            .into_par_iter()
            .map(|(no, bytes)| {
                let fail = |msg: String| anyhow::anyhow!("{}:{no}: {msg}", path.display());
                let line = String::from_utf8(bytes).map_err(|e| {
                    fail(format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()))
                })?;
                let task = gtb_audit::load::parse_text(&line)
                    .unwrap_or_else(|| Err("blank line".into()))
                    .map_err(fail)?;
                Ok(Row { task, line })
            })
            .collect()
    }

    /// sha256 (hex) and size of everything read so far.
    pub fn digest(&self) -> (String, u64) {
        (
            gtb_core::digest::hex(&self.sha.clone().finalize()),
            self.bytes,
        )
    }
}
