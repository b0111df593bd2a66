//! Building a store: adapters push rows and report drops; `finish` checks, de-duplicates,
//! sorts and publishes `pois.parquet`, `dropped.jsonl` and, last, `manifest.json`.

use super::{DROPPED_FILE, FORMAT, MANIFEST_FILE, POIS_FILE, PoiRow};
use anyhow::{Context, Result};
use gtb_core::digest;
use polars::prelude::{
    Column, DataFrame, Float64Chunked, IntoColumn, NewChunkedArray, PolarsResult, StringChunked,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The manifest's `dropped` kind of rows skipped by `--cities` (not input errors).
pub const OUTSIDE_CITIES: &str = "outside --cities";

/// An input of the store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceInfo {
    pub adapter: String,
    /// the input as given on the command line
    pub input: String,
    /// sha256 of the input file (of every file, in path order, for a folder: `files`)
    pub sha256: String,
    pub licence: String,
    /// per-file sha256 when the input is a folder
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// adapter-specific facts: how cities were assigned, what stands in for popularity,
    /// opening hours that could not be translated, ...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, serde_json::Value>,
}

/// A row of the input that did not become a POI.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dropped {
    /// where: `city 北京市 index 12`, `line 40`, `node 123`
    pub position: String,
    /// the field at fault (empty when the whole row)
    pub field: String,
    /// short kind for the manifest's tally: `no name`, `unknown poi_type`, `no city`, ...
    pub kind: String,
    /// the message in full
    pub reason: String,
}

/// What a finished store holds (also the body of `manifest.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoreSummary {
    pub format: String,
    pub pois: FileEntry,
    pub dropped_file: FileEntry,
    pub sources: Vec<SourceInfo>,
    /// city -> type -> rows
    pub counts: BTreeMap<String, BTreeMap<String, u64>>,
    /// type -> raw category -> rows kept without a release category
    pub unmapped_categories: BTreeMap<String, BTreeMap<String, u64>>,
    /// kind -> rows dropped
    pub dropped: BTreeMap<String, u64>,
    /// how coordinates were obtained -> rows (`none`: no coordinates)
    pub coordinates: BTreeMap<String, u64>,
    /// popularity source -> rows
    pub popularity: BTreeMap<String, u64>,
    /// rows with opening hours in the release structure / unknown
    pub opening_hours: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    pub file: String,
    pub sha256: String,
    pub rows: u64,
}

/// Rows and drops collected by an adapter.
#[derive(Debug, Default)]
pub struct StoreBuilder {
    rows: Vec<PoiRow>,
    dropped: Vec<Dropped>,
    sources: Vec<SourceInfo>,
    /// only these cities are kept (`--cities`); others are dropped silently as out of scope
    /// but counted
    cities: Option<BTreeSet<String>>,
    outside: u64,
}

impl StoreBuilder {
    pub fn new(cities: Option<BTreeSet<String>>) -> Self {
        StoreBuilder {
            cities,
            ..Default::default()
        }
    }
    pub fn add_source(&mut self, s: SourceInfo) {
        self.sources.push(s);
    }
    /// Whether rows of `city` are wanted (`--cities`).
    pub fn wants(&self, city: &str) -> bool {
        self.cities.as_ref().is_none_or(|c| c.contains(city))
    }
    /// Add a row. Rows of cities outside `--cities` are counted, not kept.
    pub fn push(&mut self, row: PoiRow) {
        if self.wants(&row.city) {
            self.rows.push(row);
        } else {
            self.outside += 1;
        }
    }
    /// Count rows of cities outside `--cities` that an adapter skipped without building them.
    pub fn skip_outside(&mut self, rows: u64) {
        self.outside += rows;
    }
    /// Record a row that could not be used.
    pub fn drop_row(&mut self, position: String, field: &str, kind: &str, reason: String) {
        self.dropped.push(Dropped {
            position,
            field: field.to_string(),
            kind: kind.to_string(),
            reason,
        });
    }
    pub fn rows(&self) -> &[PoiRow] {
        &self.rows
    }
    pub fn dropped(&self) -> &[Dropped] {
        &self.dropped
    }

    /// Check, de-duplicate and sort the rows, then publish the store in `dir`.
    pub fn finish(mut self, dir: &Path) -> Result<StoreSummary> {
        self.check_rows();
        self.dedupe();
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        // a reader never sees the new table under an old manifest
        let manifest_path = dir.join(MANIFEST_FILE);
        if manifest_path.exists() {
            std::fs::remove_file(&manifest_path)
                .with_context(|| format!("removing {}", manifest_path.display()))?;
        }
        let pois_path = dir.join(POIS_FILE);
        write_parquet(&pois_path, &self.rows)?;
        let dropped_path = dir.join(DROPPED_FILE);
        self.dropped.sort();
        digest::write_streaming_atomic(&dropped_path, |w| {
            for d in &self.dropped {
                serde_json::to_writer(&mut *w, d)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        let summary = self.summary(
            digest::sha256_file(&pois_path)?,
            digest::sha256_file(&dropped_path)?,
        );
        let mut text = serde_json::to_string_pretty(&summary)?;
        text.push('\n');
        digest::write_atomic(&manifest_path, text.as_bytes())?;
        Ok(summary)
    }

    /// Rows a build could not use become drops: empty names, coordinates out of range.
    fn check_rows(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        for mut r in rows {
            r.name = r.name.trim().to_string();
            if r.name.is_empty() {
                let pos = format!("{} {}", r.source, r.source_id);
                self.drop_row(pos, "name", "no name", "the POI has no name".into());
                continue;
            }
            if let (Some(lat), Some(lng)) = (r.lat, r.lng)
                && !(lat.is_finite() && lng.is_finite() && lat.abs() <= 90.0 && lng.abs() <= 180.0)
            {
                let pos = format!("{} {}", r.source, r.source_id);
                let msg = format!("{:?}: coordinates ({lat}, {lng}) out of range", r.name);
                self.drop_row(pos, "lat", "bad coordinates", msg);
                continue;
            }
            if r.lat.is_none() != r.lng.is_none() {
                (r.lat, r.lng, r.coords) = (None, None, None);
            }
            if r.price.is_some_and(|p| !p.is_finite() || p < 0.0) {
                r.price = None;
            }
            self.rows.push(r);
        }
    }

    /// One row per (city, type, name): the most popular, then the first in source order.
    /// The others are reported as duplicates.
    fn dedupe(&mut self) {
        let mut rows = std::mem::take(&mut self.rows);
        // stable: equal keys keep source order
        rows.sort_by(|a, b| {
            (&a.city, a.poi_type, &a.name)
                .cmp(&(&b.city, b.poi_type, &b.name))
                .then_with(|| {
                    let (pa, pb) = (a.popularity.unwrap_or(-1.0), b.popularity.unwrap_or(-1.0));
                    pb.total_cmp(&pa)
                })
        });
        let mut kept: Vec<PoiRow> = Vec::with_capacity(rows.len());
        for r in rows {
            if let Some(k) = kept.last()
                && (&k.city, k.poi_type, &k.name) == (&r.city, r.poi_type, &r.name)
            {
                let msg = format!(
                    "{:?} appears again in {} ({}); kept {} {}",
                    r.name,
                    r.city,
                    r.poi_type.as_str(),
                    k.source,
                    k.source_id
                );
                self.drop_row(
                    format!("{} {}", r.source, r.source_id),
                    "name",
                    "duplicate",
                    msg,
                );
                continue;
            }
            kept.push(r);
        }
        self.rows = kept;
    }

    fn summary(&self, pois_sha: String, dropped_sha: String) -> StoreSummary {
        let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        let mut unmapped: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        let mut coordinates = BTreeMap::new();
        let mut popularity = BTreeMap::new();
        let mut opening = BTreeMap::new();
        for r in &self.rows {
            let t = r.poi_type.as_str().to_string();
            *counts
                .entry(r.city.clone())
                .or_default()
                .entry(t.clone())
                .or_default() += 1;
            if r.category.is_none() {
                *unmapped
                    .entry(t)
                    .or_default()
                    .entry(r.category_raw.clone())
                    .or_default() += 1;
            }
            let c = r.coords.map_or("none", |c| c.as_str());
            *coordinates.entry(c.to_string()).or_default() += 1;
            *popularity
                .entry(r.popularity_source.as_str().to_string())
                .or_default() += 1;
            let h = if r.opening_hours.is_some() {
                "known"
            } else {
                "unknown"
            };
            *opening.entry(h.to_string()).or_default() += 1;
        }
        let mut dropped: BTreeMap<String, u64> = BTreeMap::new();
        for d in &self.dropped {
            *dropped.entry(d.kind.clone()).or_default() += 1;
        }
        if self.outside > 0 {
            dropped.insert(OUTSIDE_CITIES.into(), self.outside);
        }
        StoreSummary {
            format: FORMAT.to_string(),
            pois: FileEntry {
                file: POIS_FILE.into(),
                sha256: pois_sha,
                rows: self.rows.len() as u64,
            },
            dropped_file: FileEntry {
                file: DROPPED_FILE.into(),
                sha256: dropped_sha,
                rows: self.dropped.len() as u64,
            },
            sources: self.sources.clone(),
            counts,
            unmapped_categories: unmapped,
            dropped,
            coordinates,
            popularity,
            opening_hours: opening,
        }
    }
}

/// The store's columns, in file order (docs/RESOURCES.md lists them; a test checks the doc).
pub const COLUMNS: [&str; 15] = [
    "city",
    "poi_type",
    "name",
    "category",
    "category_raw",
    "lat",
    "lng",
    "coords",
    "opening_hours",
    "price",
    "popularity",
    "popularity_source",
    "source",
    "source_id",
    "licence",
];

fn text<'a>(name: &str, v: impl Iterator<Item = Option<&'a str>>) -> Column {
    StringChunked::from_iter_options(name.into(), v).into_column()
}

fn number(name: &str, v: impl Iterator<Item = Option<f64>>) -> Column {
    Float64Chunked::from_iter_options(name.into(), v).into_column()
}

/// The rows as a frame in [`COLUMNS`] order.
fn frame(rows: &[PoiRow]) -> PolarsResult<DataFrame> {
    let hours: Vec<Option<String>> = rows
        .iter()
        .map(|r| {
            r.opening_hours
                .as_ref()
                .map(|h| serde_json::to_string(h).expect("hours serialise"))
        })
        .collect();
    let columns = vec![
        text("city", rows.iter().map(|r| Some(r.city.as_str()))),
        text("poi_type", rows.iter().map(|r| Some(r.poi_type.as_str()))),
        text("name", rows.iter().map(|r| Some(r.name.as_str()))),
        text("category", rows.iter().map(|r| r.category.as_deref())),
        text(
            "category_raw",
            rows.iter().map(|r| Some(r.category_raw.as_str())),
        ),
        number("lat", rows.iter().map(|r| r.lat)),
        number("lng", rows.iter().map(|r| r.lng)),
        text("coords", rows.iter().map(|r| r.coords.map(|c| c.as_str()))),
        text("opening_hours", hours.iter().map(|h| h.as_deref())),
        number("price", rows.iter().map(|r| r.price)),
        number("popularity", rows.iter().map(|r| r.popularity)),
        text(
            "popularity_source",
            rows.iter().map(|r| Some(r.popularity_source.as_str())),
        ),
        text("source", rows.iter().map(|r| Some(r.source.as_str()))),
        text("source_id", rows.iter().map(|r| Some(r.source_id.as_str()))),
        text("licence", rows.iter().map(|r| Some(r.licence.as_str()))),
    ];
    DataFrame::new(rows.len(), columns)
}

/// Write the rows as Parquet (zstd, row groups of 65,536 rows), atomically.
fn write_parquet(path: &Path, rows: &[PoiRow]) -> Result<()> {
    const GROUP: usize = 1 << 16;
    let schema = frame(&[])?.schema().as_ref().clone();
    digest::write_streaming_atomic(path, |w| {
        let mut writer = gtb_parquet::writer_for(w, &schema)?;
        for chunk in rows.chunks(GROUP) {
            writer.write_batch(&frame(chunk)?)?;
        }
        writer.finish()?;
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PoiType;

    #[test]
    fn duplicates_keep_the_most_popular_and_are_reported() {
        let mut b = StoreBuilder::new(None);
        let mut a = PoiRow::new("北京市", PoiType::Attractions, "故宫", "t", "1".into());
        a.popularity = Some(1.0);
        let mut c = a.clone();
        c.source_id = "2".into();
        c.popularity = Some(5.0);
        b.push(a);
        b.push(c);
        b.push(PoiRow::new("北京市", PoiType::Food, " ", "t", "3".into()));
        b.check_rows();
        b.dedupe();
        assert_eq!(b.rows().len(), 1);
        assert_eq!(b.rows()[0].source_id, "2");
        let kinds: Vec<&str> = b.dropped().iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["no name", "duplicate"]);
    }
}
