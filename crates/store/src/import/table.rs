//! `gtb import table FILE --map name=名称,city=城市,...`: a user's own POI table as CSV, TSV,
//! JSONL or Parquet (chosen by the file extension). `--map FIELD=COLUMN` names the column of a
//! store field, `--map FIELD==VALUE` gives every row the constant VALUE; a field not mapped
//! reads the column of its own name when the file has one. Field rules: docs/RESOURCES.md,
//! `## Adapter: table`.

use super::ImportContext;
use super::chinatravel::{LineIndex, csv_problem};
use crate::{
    Coords, PoiRow, PoiType, PopularitySource, StoreBuilder, bd09_to_wgs84, gcj02_to_wgs84,
};
use anyhow::{Context, Result, bail};
use gtb_resources::hours::{self, OpeningHours};
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;

const SOURCE: &str = "table";

/// The store columns gtb sets itself: source, licence, and category_raw (the category as
/// given); a table can fill every other column (`FIELDS`).
const SET_BY_GTB: [&str; 3] = ["category_raw", "source", "licence"];

/// The store fields a table can fill, in the store's column order.
pub static FIELDS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    crate::write::COLUMNS
        .into_iter()
        .filter(|c| !SET_BY_GTB.contains(c))
        .collect()
});
const REQUIRED: [&str; 3] = ["name", "city", "poi_type"];

/// Reported like the release adapter's: the row is kept without the field.
const BAD_FIELD: &str = "bad field (kept without it)";
const BROKEN_HOURS: &str = "broken opening_hours (kept, hours unknown)";

/// Where a store field's value comes from.
#[derive(Debug, Clone, PartialEq)]
enum Src {
    /// the n-th column of the file
    Column(usize),
    /// `--map FIELD==VALUE`
    Constant(String),
}

/// Store field -> source, checked against the file's columns.
#[derive(Debug)]
struct Plan {
    fields: BTreeMap<&'static str, Src>,
}

impl Plan {
    fn new(map: &BTreeMap<String, String>, columns: &[String], file: &str) -> Result<Plan> {
        let listed = || columns.join(", ");
        for k in map.keys() {
            if !FIELDS.contains(&k.as_str()) {
                bail!(
                    "--map {k}: not a store field (fields: {})",
                    FIELDS.join(", ")
                );
            }
        }
        let mut fields = BTreeMap::new();
        for f in FIELDS.iter().copied() {
            let src = match map.get(f) {
                Some(v) => match v.strip_prefix('=') {
                    Some(constant) => Src::Constant(constant.trim().to_string()),
                    None => Src::Column(columns.iter().position(|c| c == v).ok_or_else(|| {
                        anyhow::anyhow!(
                            "{file}: --map {f}={v}: the file has no column {v:?} (columns: {})",
                            listed()
                        )
                    })?),
                },
                None => match columns.iter().position(|c| c == f) {
                    Some(i) => Src::Column(i),
                    None => continue,
                },
            };
            fields.insert(f, src);
        }
        for f in REQUIRED {
            if !fields.contains_key(f) {
                bail!(
                    "{file}: no {f}: give --map {f}=COLUMN (or {f}==VALUE for every row); columns: {}",
                    listed()
                );
            }
        }
        if fields.contains_key("popularity") && !fields.contains_key("popularity_source") {
            bail!(
                "{file}: popularity needs its source: --map popularity_source==rating (or review_count, stars, derived, or a column of these)"
            );
        }
        Ok(Plan { fields })
    }

    /// The value of a field in a row (`get` reads a column), trimmed; empty is absent.
    fn value(&self, field: &str, get: &impl Fn(usize) -> Option<String>) -> Option<String> {
        let v = match self.fields.get(field)? {
            Src::Column(i) => get(*i)?,
            Src::Constant(c) => c.clone(),
        };
        let v = v.trim();
        (!v.is_empty()).then(|| v.to_string())
    }
}

/// The input formats, by extension.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Csv,
    Tsv,
    Jsonl,
    Parquet,
}

fn format_of(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    Ok(match ext.as_str() {
        "csv" => Format::Csv,
        "tsv" | "tab" => Format::Tsv,
        "jsonl" | "ndjson" => Format::Jsonl,
        "parquet" => Format::Parquet,
        _ => bail!(
            "{}: unknown table format {ext:?} (gtb reads .csv, .tsv, .jsonl and .parquet)",
            path.display()
        ),
    })
}

pub fn import(ctx: &ImportContext, out: &mut StoreBuilder) -> Result<()> {
    let path = &ctx.opts.input;
    if path.is_dir() {
        bail!(
            "{}: a folder; gtb import table reads one .csv, .tsv, .jsonl or .parquet file",
            path.display()
        );
    }
    let format = format_of(path)?;
    let mut info = ctx.source_info()?;
    let mut reader = Reader {
        ctx,
        out,
        licence: ctx.opts.licence(),
        cities: BTreeMap::new(),
    };
    match format {
        Format::Csv => reader.delimited(path, b',')?,
        Format::Tsv => reader.delimited(path, b'\t')?,
        Format::Jsonl => reader.jsonl(path)?,
        Format::Parquet => reader.parquet(path)?,
    }
    use serde_json::json;
    let map: BTreeMap<&String, &String> = ctx.opts.map.iter().collect();
    info.notes.insert("map".into(), json!(map));
    out.add_source(info);
    Ok(())
}

/// Turns the records of any format into rows.
struct Reader<'c, 'o> {
    ctx: &'c ImportContext<'c>,
    out: &'o mut StoreBuilder,
    licence: String,
    /// city as written -> the name stored (resolution scans the city list)
    cities: BTreeMap<String, String>,
}

impl Reader<'_, '_> {
    /// A field of a kept row that could not be read: reported, the row kept without it.
    fn degrade(&mut self, at: &str, field: &str, kind: &str, why: String) {
        self.out
            .drop_row(at.to_string(), field, kind, format!("{at}: {field} {why}"));
    }

    fn file(&self) -> String {
        self.ctx.opts.input.display().to_string()
    }

    /// CSV or TSV with a header row; lines counted from the bytes (a quoted field may span
    /// lines, and the csv crate's count is off after CRLF).
    fn delimited(&mut self, path: &Path, delimiter: u8) -> Result<()> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let lines = LineIndex::new(&bytes);
        let bar = self.ctx.bar(bytes.len() as u64, "table");
        let mut rd = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(false)
            .from_reader(std::io::Cursor::new(bytes));
        let columns: Vec<String> = rd
            .headers()
            .with_context(|| format!("{}: no header row", self.file()))?
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').trim().to_string())
            .collect();
        let plan = Plan::new(&self.ctx.opts.map, &columns, &self.file())?;
        let mut rec = csv::StringRecord::new();
        loop {
            match rd.read_record(&mut rec) {
                Ok(false) => break,
                Ok(true) => {
                    let byte = rec.position().map_or(0, |p| p.byte());
                    let at = super::at_line(lines.line(byte));
                    self.row(&plan, &at, &|i| rec.get(i).map(str::to_string));
                    bar.set_position(byte);
                }
                Err(e) if e.is_io_error() => {
                    return Err(e).with_context(|| format!("reading {}", self.file()));
                }
                Err(e) => {
                    let at = super::at_line(lines.line(e.position().map_or(0, |p| p.byte())));
                    let msg = format!("{at}: {}", csv_problem(&e));
                    self.out.drop_row(at, "", "unreadable row", msg);
                }
            }
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// One JSON object per line; its keys are the columns (every key of the file, sorted).
    /// Blank lines are skipped.
    fn jsonl(&mut self, path: &Path) -> Result<()> {
        let file =
            std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        let mut records = Vec::new();
        let mut keys = BTreeSet::new();
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let at = super::at_line(i as u64 + 1);
            let line = match line {
                Ok(l) => l,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    let msg = format!("{at}: not UTF-8 text");
                    self.out.drop_row(at, "", "unreadable row", msg);
                    continue;
                }
                Err(e) => return Err(e).with_context(|| format!("reading {}", self.file())),
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<serde_json::Value>(&line) {
                Ok(serde_json::Value::Object(o)) => {
                    keys.extend(o.keys().cloned());
                    records.push((at, o));
                }
                Ok(_) => {
                    let msg = format!("{at}: a JSON value that is not an object");
                    self.out.drop_row(at, "", "unreadable row", msg);
                }
                Err(e) => {
                    let msg = format!("{at}: not JSON: {e}");
                    self.out.drop_row(at, "", "unreadable row", msg);
                }
            }
        }
        let columns: Vec<String> = keys.into_iter().collect();
        let plan = Plan::new(&self.ctx.opts.map, &columns, &self.file())?;
        let bar = self.ctx.bar(records.len() as u64, "table");
        for (at, o) in &records {
            self.row(&plan, at, &|i| o.get(&columns[i]).and_then(json_text));
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// A Parquet file read with polars; rows are numbered from 0 (`row N`).
    fn parquet(&mut self, path: &Path) -> Result<()> {
        use polars::prelude::{ParquetReader, SerReader};
        let file =
            std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        let df = ParquetReader::new(file)
            .finish()
            .map_err(|e| anyhow::anyhow!("{}: not a readable Parquet file: {e}", self.file()))?;
        let columns: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let plan = Plan::new(&self.ctx.opts.map, &columns, &self.file())?;
        // only the columns the plan reads, as text
        let mut text: BTreeMap<usize, Vec<Option<String>>> = BTreeMap::new();
        for src in plan.fields.values() {
            if let Src::Column(i) = src
                && !text.contains_key(i)
            {
                let series = df.columns()[*i].as_materialized_series().rechunk();
                text.insert(*i, series.iter().map(any_text).collect());
            }
        }
        let bar = self.ctx.bar(df.height() as u64, "table");
        for r in 0..df.height() {
            let at = format!("row {r}");
            self.row(&plan, &at, &|i| text.get(&i).and_then(|c| c[r].clone()));
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// One record: a row, or a drop naming its position and field.
    fn row(&mut self, plan: &Plan, at: &str, get: &impl Fn(usize) -> Option<String>) {
        match self.build(plan, at, get) {
            Ok(r) => self.out.push(r),
            Err((field, kind, reason)) => {
                self.out
                    .drop_row(at.to_string(), field, kind, format!("{at}: {reason}"))
            }
        }
    }

    fn build(
        &mut self,
        plan: &Plan,
        at: &str,
        get: &impl Fn(usize) -> Option<String>,
    ) -> Result<PoiRow, (&'static str, &'static str, String)> {
        let v = |f: &str| plan.value(f, get);
        let name = v("name").ok_or(("name", "no name", "the row has no name".to_string()))?;
        let city = v("city").ok_or(("city", "no city", format!("{name:?} has no city")))?;
        let t = v("poi_type").unwrap_or_default();
        let poi_type = PoiType::parse(&t).ok_or((
            "poi_type",
            "unknown poi_type",
            format!("{name:?}: poi_type {t:?} is not attractions, food or hotels"),
        ))?;
        // a city gtb knows under its release name; any other kept as given
        let city = match self.cities.get(&city) {
            Some(c) => c.clone(),
            None => {
                let stored =
                    (self.ctx.cities.resolve(&city)).map_or(city.clone(), |c| c.name.clone());
                self.cities.insert(city, stored.clone());
                stored
            }
        };
        let source_id = v("source_id").unwrap_or_else(|| at.to_string());
        let raw = v("category").unwrap_or_default();
        let mut row = PoiRow::new(&city, poi_type, &name, SOURCE, source_id)
            .with_category(&raw, Some(raw.as_str()));
        row.licence.clone_from(&self.licence);
        self.position(&mut row, plan, at, get);
        row.opening_hours = v("opening_hours").and_then(|h| match read_hours(&h) {
            Ok(h) => h,
            Err(e) => {
                self.degrade(at, "opening_hours", BROKEN_HOURS, e);
                None
            }
        });
        row.price = self.number(v("price"), at, "price");
        row.popularity = self.number(v("popularity"), at, "popularity");
        if row.popularity.is_some() {
            let s = v("popularity_source").unwrap_or_default();
            match PopularitySource::parse(&s) {
                Some(p) => row.popularity_source = p,
                None => {
                    let why = format!(
                        "{s:?} is not rating, review_count, stars, derived or none (the popularity is not kept)"
                    );
                    self.degrade(at, "popularity_source", BAD_FIELD, why);
                    row.popularity = None;
                }
            }
        }
        Ok(row)
    }

    fn number(&mut self, v: Option<String>, at: &str, field: &str) -> Option<f64> {
        let v = v?;
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Some(x),
            _ => {
                self.degrade(at, field, BAD_FIELD, format!("{v:?} is not a number"));
                None
            }
        }
    }

    /// lat/lng in the row's datum (`coords`: wgs84, gcj02 or bd09; WGS-84 when not given),
    /// stored as WGS-84.
    fn position(
        &mut self,
        row: &mut PoiRow,
        plan: &Plan,
        at: &str,
        get: &impl Fn(usize) -> Option<String>,
    ) {
        let lat = self.number(plan.value("lat", get), at, "lat");
        let lng = self.number(plan.value("lng", get), at, "lng");
        let (Some(lat), Some(lng)) = (lat, lng) else {
            return;
        };
        let datum = plan.value("coords", get).unwrap_or_else(|| "wgs84".into());
        let (la, lo, c) = match datum.to_ascii_lowercase().as_str() {
            "wgs84" | "wgs-84" => (lat, lng, Coords::Wgs84),
            "gcj02" | "gcj-02" => {
                let (a, b) = gcj02_to_wgs84(lat, lng);
                (a, b, Coords::Gcj02Converted)
            }
            "bd09" | "bd-09" => {
                let (a, b) = bd09_to_wgs84(lat, lng);
                (a, b, Coords::Bd09Converted)
            }
            _ => {
                let why =
                    format!("{datum:?} is not wgs84, gcj02 or bd09 (the position is not kept)");
                self.degrade(at, "coords", BAD_FIELD, why);
                return;
            }
        };
        (row.lat, row.lng, row.coords) = (Some(la), Some(lo), Some(c));
    }
}

/// Opening hours as the release's JSON structure (`{"always_open": ..., "rules": [...]}`),
/// `null`, or gtb's raw grammar (`w2-7 08:30-17:00`, `always`, `unknown`).
fn read_hours(text: &str) -> Result<Option<OpeningHours>, String> {
    if text == "null" {
        return Ok(None);
    }
    if text.starts_with('{') {
        // checked as the release adapter checks it (times, dates, weekdays)
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("not the release's opening_hours structure: {e}"))?;
        return super::release::opening_hours(&v);
    }
    hours::parse(text)
}

/// A JSON value as the text of a cell (objects and arrays as JSON; null absent).
fn json_text(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        other => Some(other.to_string()),
    }
}

/// A Parquet cell as text: numbers in Rust's shortest form (polars' display rounds).
fn any_text(v: polars::prelude::AnyValue) -> Option<String> {
    use polars::prelude::AnyValue as A;
    Some(match v {
        A::Null => return None,
        A::String(s) => s.to_string(),
        A::StringOwned(s) => s.to_string(),
        A::Float64(f) => f.to_string(),
        A::Float32(f) => f.to_string(),
        A::Int8(i) => i.to_string(),
        A::Int16(i) => i.to_string(),
        A::Int32(i) => i.to_string(),
        A::Int64(i) => i.to_string(),
        A::UInt8(i) => i.to_string(),
        A::UInt16(i) => i.to_string(),
        A::UInt32(i) => i.to_string(),
        A::UInt64(i) => i.to_string(),
        A::Boolean(b) => b.to_string(),
        other => other.str_value().into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_plan_reads_mapped_same_named_and_constant_fields() {
        let cols: Vec<String> = ["名称", "city", "lat"].map(String::from).to_vec();
        let p = Plan::new(
            &map(&[("name", "名称"), ("poi_type", "=hotels")]),
            &cols,
            "f.csv",
        )
        .unwrap();
        assert_eq!(p.fields["name"], Src::Column(0));
        assert_eq!(p.fields["city"], Src::Column(1));
        assert_eq!(p.fields["poi_type"], Src::Constant("hotels".into()));
        assert!(!p.fields.contains_key("lng"));
    }

    #[test]
    fn a_plan_names_what_is_missing() {
        let cols: Vec<String> = ["名称", "城市"].map(String::from).to_vec();
        let e = Plan::new(&map(&[("name", "名字")]), &cols, "f.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no column \"名字\"") && e.contains("名称, 城市"),
            "{e}"
        );
        let e = Plan::new(&map(&[("name", "名称")]), &cols, "f.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no city"), "{e}");
        let e = Plan::new(&map(&[("nmae", "名称")]), &cols, "f.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a store field"), "{e}");
        let m = map(&[
            ("name", "名称"),
            ("city", "城市"),
            ("poi_type", "=food"),
            ("popularity", "名称"),
        ]);
        let e = Plan::new(&m, &cols, "f.csv").unwrap_err().to_string();
        assert!(e.contains("popularity_source"), "{e}");
    }

    #[test]
    fn hours_read_the_release_structure_and_the_raw_grammar() {
        let j = r#"{"always_open":false,"rules":[{"time_windows":[{"open":"08:30","close":"17:00"}]}]}"#;
        let a = read_hours(j).unwrap().unwrap();
        let b = read_hours("08:30-17:00").unwrap().unwrap();
        assert_eq!(a, b);
        assert_eq!(read_hours("null").unwrap(), None);
        assert!(read_hours("{\"rules\": 3}").is_err());
        assert!(read_hours("8-17").is_err());
        // the structure is checked, not only parsed: a 25 o'clock window is no opening time
        let late = r#"{"always_open":false,"rules":[{"time_windows":[{"open":"08:30","close":"25:00"}]}]}"#;
        assert!(read_hours(late).is_err());
    }

    #[test]
    fn formats_are_chosen_by_extension() {
        assert_eq!(format_of(Path::new("a.CSV")).unwrap(), Format::Csv);
        assert_eq!(format_of(Path::new("a.tsv")).unwrap(), Format::Tsv);
        assert_eq!(format_of(Path::new("a.jsonl")).unwrap(), Format::Jsonl);
        assert_eq!(format_of(Path::new("a.parquet")).unwrap(), Format::Parquet);
        assert!(format_of(Path::new("a.xlsx")).is_err());
    }
}
