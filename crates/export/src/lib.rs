//! `gtb export`: a split's JSONL as Parquet, alone or in the Hugging Face layout.
//!
//! * [`source`] finds the splits of a build folder and reads a task file as rows, in chunks;
//! * [`columns`] is the schema: typed columns, JSON strings for the nested objects and the
//!   original line, so that nothing is lost;
//! * [`card`] writes the dataset card; [`manifest`] reads what the build recorded.
//!
//! One pass over the file parses each line once, and that parse feeds the Parquet rows, the
//! audit shown on the card and the sha256 checked against the manifest. Memory stays flat: one
//! chunk of rows is held at a time, and each chunk is one Parquet row group.

pub mod card;
pub mod columns;
pub mod manifest;
pub mod source;

use anyhow::{Context, Result, bail};
use gtb_audit::report::Tally;
use gtb_parquet::writer_for;
use polars::prelude::{BatchedWriter, Schema};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Rows per chunk, and so per Parquet row group: about 11 MB uncompressed (a task and its JSON
/// columns), which keeps a 100,000-task export under 100 MiB of memory; 4,096 took 230 MiB for
/// 1.5 % smaller files.
pub const CHUNK: usize = 1024;

/// An open Parquet file (under a temporary name).
struct OpenFile {
    path: PathBuf,
    /// a second handle on the file, to sync it once the writer is done
    handle: std::fs::File,
    writer: BatchedWriter<std::fs::File>,
    rows: u64,
}

/// Parquet files of at most `rows_per_file` rows each, written into `dir` as `<stem>.<k>.part`.
pub struct ShardWriter {
    dir: PathBuf,
    stem: String,
    rows_per_file: u64,
    schema: Schema,
    open: Option<OpenFile>,
    done: Vec<(PathBuf, u64)>,
}

impl ShardWriter {
    pub fn new(dir: &Path, stem: &str, rows_per_file: u64) -> Result<ShardWriter> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(ShardWriter {
            dir: dir.to_path_buf(),
            stem: stem.to_string(),
            rows_per_file: rows_per_file.max(1),
            schema: columns::schema()?,
            open: None,
            done: Vec::new(),
        })
    }

    /// Rows the current file can still take (a chunk must not straddle two files).
    pub fn room(&self) -> usize {
        let used = self.open.as_ref().map_or(0, |f| f.rows);
        usize::try_from(self.rows_per_file - used).unwrap_or(usize::MAX)
    }

    fn start(&mut self) -> Result<&mut OpenFile> {
        let path = self
            .dir
            .join(format!("{}.{}.part", self.stem, self.done.len()));
        let file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let handle = file.try_clone()?;
        let writer = writer_for(file, &self.schema)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(self.open.insert(OpenFile {
            path,
            handle,
            writer,
            rows: 0,
        }))
    }

    fn close(&mut self) -> Result<()> {
        if let Some(f) = self.open.take() {
            f.writer
                .finish()
                .with_context(|| format!("writing {}", f.path.display()))?;
            f.handle
                .sync_all()
                .with_context(|| format!("writing {}", f.path.display()))?;
            self.done.push((f.path, f.rows));
        }
        Ok(())
    }

    /// Append rows (at most [`ShardWriter::room`]) as one row group.
    pub fn write(&mut self, rows: &[columns::Row]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let df = columns::frame(rows)?;
        let f = match self.open.as_mut() {
            Some(f) => f,
            None => self.start()?,
        };
        f.writer
            .write_batch(&df)
            .with_context(|| format!("writing {}", f.path.display()))?;
        f.rows += rows.len() as u64;
        if f.rows >= self.rows_per_file {
            self.close()?;
        }
        Ok(())
    }

    /// Close the last file; returns every file with its row count. A split without rows still
    /// gets one (empty) file, so that it exists for a reader.
    pub fn finish(mut self) -> Result<Vec<(PathBuf, u64)>> {
        if self.done.is_empty() && self.open.is_none() {
            self.start()?;
        }
        self.close()?;
        Ok(self.done)
    }
}

/// One split read, written and audited.
pub struct SplitExport {
    pub source: source::SplitSource,
    /// the written files (temporary names) and their rows
    pub files: Vec<(PathBuf, u64)>,
    pub rows: u64,
    pub source_sha256: String,
    pub source_bytes: u64,
    pub manifest: Option<manifest::Manifest>,
    pub audit: gtb_audit::Audit,
}

/// Read `src` once: rows into Parquet files in `dir` (at most `rows_per_file` each), tasks into
/// the audit, bytes into the sha256 that the manifest must agree with.
pub fn export_split(
    src: &source::SplitSource,
    dir: &Path,
    rows_per_file: u64,
) -> Result<SplitExport> {
    let manifest = src
        .manifest
        .as_deref()
        .map(|m| manifest::Manifest::read(m, &src.jsonl))
        .transpose()?;
    let mut reader = source::RowReader::open(&src.jsonl)?;
    let mut shards = ShardWriter::new(dir, &src.name, rows_per_file)?;
    let mut tally = Tally::default();
    let mut rows = 0u64;
    loop {
        let chunk = reader.next_rows(CHUNK.min(shards.room()))?;
        if chunk.is_empty() {
            break;
        }
        let part = chunk
            .par_iter()
            .fold(Tally::default, |mut t, r| {
                t.add(&r.task);
                t
            })
            .reduce(Tally::default, Tally::merge);
        tally = tally.merge(part);
        shards.write(&chunk)?;
        rows += chunk.len() as u64;
    }
    let (source_sha256, source_bytes) = reader.digest();
    if let Some(expected) = manifest.as_ref().and_then(|m| m.sha256.as_deref())
        && expected != source_sha256
    {
        bail!(
            "{}: sha256 {source_sha256} differs from the one in {} ({expected}): the file changed after its build, or the manifest belongs to another build",
            src.jsonl.display(),
            src.manifest
                .as_deref()
                .map_or("the manifest".into(), |p| p.display().to_string()),
        );
    }
    let report = tally.report(&src.jsonl.display().to_string());
    let audit = gtb_audit::Audit::new(report, Some(&gtb_audit::paper::profile()));
    Ok(SplitExport {
        source: src.clone(),
        files: shards.finish()?,
        rows,
        source_sha256,
        source_bytes,
        manifest,
        audit,
    })
}
