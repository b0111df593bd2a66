//! CSV reading: a sheet with its header, records with their physical line numbers, and
//! unreadable records reported as drops.

use crate::StoreBuilder;
use anyhow::{Context, Result};
use csv::StringRecord;
use std::path::Path;

/// Line numbers from byte offsets. The csv crate's own line count is one short after a
/// CRLF header (ChinaTravel's hotel files end their lines with CRLF), so lines are counted
/// here from the bytes.
pub(in crate::import) struct LineIndex {
    newlines: Vec<u64>,
}

impl LineIndex {
    pub(in crate::import) fn new(bytes: &[u8]) -> LineIndex {
        let newlines = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i as u64)
            .collect();
        LineIndex { newlines }
    }
    /// The 1-based line of a record starting at `byte` (after a CRLF the crate's offset is
    /// that of the LF, which still ends the previous line).
    pub(in crate::import) fn line(&self, byte: u64) -> u64 {
        self.newlines.partition_point(|&n| n <= byte) as u64 + 1
    }
}

/// What is wrong with a record, without the csv crate's own line count (see [`LineIndex`]).
pub(in crate::import) fn csv_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => e.to_string(),
    }
}

/// A CSV file with its header, read record by record.
pub(super) struct Sheet {
    rel: String,
    header: Vec<String>,
    lines: LineIndex,
    reader: csv::Reader<std::io::Cursor<Vec<u8>>>,
}

impl Sheet {
    pub(super) fn open(path: &Path, rel: &str) -> Result<Sheet> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {rel}"))?;
        let lines = LineIndex::new(&bytes);
        let mut reader = csv::ReaderBuilder::new()
            .flexible(false)
            .from_reader(std::io::Cursor::new(bytes));
        let header = reader
            .headers()
            .with_context(|| format!("{rel}: no header row"))?
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').trim().to_string())
            .collect();
        Ok(Sheet {
            rel: rel.to_string(),
            header,
            lines,
            reader,
        })
    }
    /// The index of a column the table cannot do without.
    pub(super) fn need(&self, column: &str) -> Result<usize> {
        self.find(column).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no column {column:?} (columns: {})",
                self.rel,
                self.header.join(", ")
            )
        })
    }
    pub(super) fn find(&self, column: &str) -> Option<usize> {
        self.header.iter().position(|h| h == column)
    }
    /// Every record with its line; unreadable records become drops.
    pub(super) fn for_each(
        &mut self,
        out: &mut StoreBuilder,
        mut f: impl FnMut(u64, &StringRecord),
    ) -> Result<()> {
        let mut rec = StringRecord::new();
        loop {
            match self.reader.read_record(&mut rec) {
                Ok(false) => return Ok(()),
                Ok(true) => f(
                    self.lines.line(rec.position().map_or(0, |p| p.byte())),
                    &rec,
                ),
                Err(e) => {
                    if e.is_io_error() {
                        return Err(e).with_context(|| format!("reading {}", self.rel));
                    }
                    let line = self.lines.line(e.position().map_or(0, |p| p.byte()));
                    out.drop_row(
                        format!("{} line {line}", self.rel),
                        "",
                        "unreadable row",
                        format!("{} line {line}: {}", self.rel, csv_problem(&e)),
                    );
                }
            }
        }
    }
}

pub(super) fn cell(rec: &StringRecord, i: Option<usize>) -> &str {
    i.and_then(|i| rec.get(i)).map_or("", str::trim)
}
