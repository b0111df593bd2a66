//! `gtb import release`: the release's `poi2category/all_poi_by_city.json` (task_format.md §7),
//! a JSON object mapping a city to a list of POI objects `{name, custom_category, poi_type,
//! opening_hours, ...}`.
//!
//! The file is about 360 MB, so it is streamed: a serde visitor walks the cities (map) and
//! their POIs (sequence) straight off a buffered reader, and each POI is parsed alone into a
//! `serde_json::Value` before it becomes a row. A POI of the wrong shape is therefore reported
//! with its city and index and the rest of the file still imports; only a file that is not
//! JSON (truncated, broken syntax) stops the import, with serde's line and column, before
//! anything is published. Field mapping: docs/RESOURCES.md, `## Adapter: release`.
//!
//! Here: the entry point, the byte-counting reader and the importer's state. `stream` holds
//! the serde visitors, `rows` the importer's work per POI and its tallies, `fields` the
//! field readers (name, type, numbers, coordinates) and `hours` the opening-hours check.
//! [`fixture`] writes synthetic release-format files of any size (`gtb-bench fixture-release`).

mod fields;
pub mod fixture;
mod hours;
mod rows;
mod stream;
#[cfg(test)]
mod tests;

pub use hours::opening_hours;

use super::ImportContext;
use crate::{Coords, StoreBuilder};
use anyhow::{Context, Result, anyhow};
use indicatif::ProgressBar;
use rows::Stats;
use serde::de;
use serde_json::{Map, Value};
use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::rc::Rc;
use stream::FileVisitor;

const ADAPTER: &str = "release";
/// Drop kinds (the manifest tallies them).
const NO_NAME: &str = "no name";
const UNKNOWN_TYPE: &str = "unknown poi_type";
const BROKEN_HOURS: &str = "broken opening_hours (kept, hours unknown)";
const BAD_FIELD: &str = "bad field (kept without it)";
/// Distinct unknown field names listed in the notes; the rest are counted under `...`.
const MAX_EXTRA_FIELDS: usize = 64;

pub fn import(ctx: &ImportContext, out: &mut StoreBuilder) -> Result<()> {
    let path = &ctx.opts.input;
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let read = Rc::new(Cell::new(0));
    let counting = Counting {
        inner: file,
        read: Rc::clone(&read),
    };
    let mut reader = BufReader::with_capacity(1 << 20, counting);
    skip_bom(&mut reader).with_context(|| format!("reading {}", path.display()))?;
    let bar = ctx.bar(len, ADAPTER);
    let mut imp = Importer {
        ctx,
        out,
        bar: &bar,
        read,
        licence: ctx.opts.licence(),
        stats: Stats::default(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    de::Deserializer::deserialize_map(&mut de, FileVisitor(&mut imp))
        .and_then(|()| de.end())
        .map_err(|e| not_json(path, &e))?;
    bar.finish_and_clear();
    let mut source = ctx.source_info()?;
    source.notes = imp.stats.notes();
    out.add_source(source);
    Ok(())
}

/// The error for a file serde could not read to its end; nothing is published.
fn not_json(path: &std::path::Path, e: &serde_json::Error) -> anyhow::Error {
    let what = if e.is_eof() {
        "the file ends early (truncated?)"
    } else if e.is_io() {
        "could not be read"
    } else {
        "is not a release POI file (a JSON object: city -> list of POIs)"
    };
    // serde's message names the line and column
    anyhow!("{}: {what}: {e}; nothing was written", path.display())
}

/// A UTF-8 byte order mark is not JSON; editors on Windows write one.
fn skip_bom(r: &mut impl BufRead) -> std::io::Result<()> {
    if r.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        r.consume(3);
    }
    Ok(())
}

/// Counts the bytes read, for the progress bar.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// A city key of the file: as written (positions, source ids; `北京市~2` for its second
/// occurrence in the object) and as the store names it.
struct CityKey {
    key: String,
    name: String,
}

struct Importer<'a, 'c> {
    ctx: &'a ImportContext<'c>,
    out: &'a mut StoreBuilder,
    bar: &'a ProgressBar,
    read: Rc<Cell<u64>>,
    licence: String,
    stats: Stats,
}

type Obj = Map<String, Value>;
type Fault = (&'static str, &'static str, String);
/// A field at fault and why.
type FieldError = (&'static str, String);
/// WGS-84 latitude and longitude, and how they were obtained.
type Point = (f64, f64, Coords);
