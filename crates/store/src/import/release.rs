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
//! [`fixture`] writes synthetic release-format files of any size (`gtb-bench fixture-release`).

use super::ImportContext;
use crate::{Coords, PoiRow, PoiType, PopularitySource, StoreBuilder, gcj02_to_wgs84};
use anyhow::{Context, Result, anyhow};
use gtb_resources::hours::{self, DateRange, OpeningHours, Rule, TimeWindow};
use indicatif::ProgressBar;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::rc::Rc;

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

/// What the import saw, for the source's notes in the manifest.
#[derive(Default)]
struct Stats {
    entries: u64,
    cities: BTreeMap<String, u64>,
    not_in_cities_csv: u64,
    with_coordinates: u64,
    gcj02_converted: u64,
    with_price: u64,
    with_rating: u64,
    with_review_count: u64,
    hours: BTreeMap<&'static str, u64>,
    extra_fields: BTreeMap<String, u64>,
}

impl Stats {
    fn notes(&self) -> BTreeMap<String, Value> {
        let repeated: BTreeMap<&String, &u64> =
            self.cities.iter().filter(|(_, n)| **n > 1).collect();
        let mut notes = BTreeMap::new();
        let mut put = |k: &str, v: Value| notes.insert(k.to_string(), v);
        put("entries", self.entries.into());
        put("city_keys", self.cities.len().into());
        put("cities_not_in_cities_csv", self.not_in_cities_csv.into());
        put("with_coordinates", self.with_coordinates.into());
        put("gcj02_converted", self.gcj02_converted.into());
        put("with_price", self.with_price.into());
        put("with_rating", self.with_rating.into());
        put("with_review_count", self.with_review_count.into());
        put(
            "opening_hours",
            serde_json::to_value(&self.hours).unwrap_or_default(),
        );
        put(
            "extra_fields",
            serde_json::to_value(&self.extra_fields).unwrap_or_default(),
        );
        if !repeated.is_empty() {
            put(
                "repeated_city_keys",
                serde_json::to_value(repeated).unwrap_or_default(),
            );
        }
        put(
            "popularity",
            "rating (rating/score), else review count (review_count/comment_num/comments), else none: the build's stand-in ranks those".into(),
        );
        notes
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

impl Importer<'_, '_> {
    /// The store's name for a city key: the release name gtb knows when the key is it or its
    /// short form (北京 -> 北京市), else the key as written (a release city gtb has no row
    /// for is kept; builds exclude it with a reason).
    fn city(&mut self, key: String) -> CityKey {
        let trimmed = key.trim();
        let known = self
            .ctx
            .cities
            .resolve(trimmed)
            .filter(|c| c.name == trimmed || c.short_name() == trimmed);
        let name = known.map_or_else(|| trimmed.to_string(), |c| c.name.clone());
        let seen = self.stats.cities.entry(key.clone()).or_default();
        *seen += 1;
        if *seen > 1 {
            // a key repeated in the object: its POIs are imported too, under ids of their own
            let key = format!("{key}~{seen}");
            return CityKey { key, name };
        }
        if known.is_none() {
            self.stats.not_in_cities_csv += 1;
        }
        CityKey { key, name }
    }

    fn report(
        &mut self,
        city: &CityKey,
        index: Option<usize>,
        field: &str,
        kind: &str,
        why: String,
    ) {
        let position = match index {
            Some(i) => format!("city {} index {i}", city.key),
            None => format!("city {}", city.key),
        };
        self.out.drop_row(position, field, kind, why);
    }

    fn poi(&mut self, city: &CityKey, index: usize, v: Value) {
        self.stats.entries += 1;
        if self.stats.entries.is_multiple_of(4096) {
            self.bar.set_position(self.read.get());
        }
        if city.name.is_empty() {
            let why = "the city key is empty".to_string();
            return self.report(city, Some(index), "", "no city", why);
        }
        let Value::Object(m) = v else {
            let why = format!("the entry is {}, not a POI object", describe(&v));
            return self.report(city, Some(index), "", "not an object", why);
        };
        for k in m.keys().filter(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
            let n = self.stats.extra_fields.len();
            let k = if n < MAX_EXTRA_FIELDS || self.stats.extra_fields.contains_key(k) {
                k.clone()
            } else {
                "...".to_string()
            };
            *self.stats.extra_fields.entry(k).or_default() += 1;
        }
        match required(&m) {
            Ok((name, poi_type)) => {
                let row = self.row(city, index, &m, name, poi_type);
                self.out.push(row);
            }
            Err((field, kind, why)) => self.report(city, Some(index), field, kind, why),
        }
    }

    /// The row of a POI whose name and type are good; faults in the other fields are
    /// reported and the field left unknown.
    fn row(&mut self, city: &CityKey, index: usize, m: &Obj, name: &str, t: PoiType) -> PoiRow {
        let id = format!("{}#{index}", city.key);
        let mut r = PoiRow::new(&city.name, t, name, ADAPTER, id);
        r.licence = self.licence.clone();
        let mut faults: Vec<Fault> = Vec::new();
        match text(m, "custom_category") {
            Ok(c) => r = r.with_category(c.unwrap_or(""), c),
            Err(e) => faults.push(("custom_category", BAD_FIELD, e)),
        }
        let hours = m.get("opening_hours").unwrap_or(&Value::Null);
        match opening_hours(hours) {
            Ok(h) => {
                let k = if h.is_some() { "structured" } else { "null" };
                *self.stats.hours.entry(k).or_default() += 1;
                r.opening_hours = h;
            }
            Err(e) => {
                *self.stats.hours.entry("broken").or_default() += 1;
                faults.push(("opening_hours", BROKEN_HOURS, e));
            }
        }
        match coordinates(m) {
            Ok(Some((lat, lng, how))) => {
                self.stats.with_coordinates += 1;
                if how == Coords::Gcj02Converted {
                    self.stats.gcj02_converted += 1;
                }
                (r.lat, r.lng, r.coords) = (Some(lat), Some(lng), Some(how));
            }
            Ok(None) => {}
            Err((field, e)) => faults.push((field, BAD_FIELD, e)),
        }
        self.extras(&mut r, m, &mut faults);
        for (field, kind, why) in faults {
            self.report(city, Some(index), field, kind, format!("{name:?}: {why}"));
        }
        r
    }

    /// Price and popularity, when the file has them.
    fn extras(&mut self, r: &mut PoiRow, m: &Obj, faults: &mut Vec<Fault>) {
        match first_number(m, &PRICE_FIELDS) {
            Ok(Some((_, p))) => {
                self.stats.with_price += 1;
                r.price = Some(p);
            }
            Ok(None) => {}
            Err((f, e)) => faults.push((f, BAD_FIELD, e)),
        }
        let rating = first_number(m, &RATING_FIELDS);
        let reviews = first_number(m, &REVIEW_FIELDS);
        for res in [&rating, &reviews] {
            if let Err((f, e)) = res {
                faults.push((f, BAD_FIELD, e.clone()));
            }
        }
        if let Ok(Some(_)) = rating {
            self.stats.with_rating += 1;
        }
        if let Ok(Some(_)) = reviews {
            self.stats.with_review_count += 1;
        }
        // a rating is what map services rank by; a review count stands in without one
        if let Ok(Some((_, x))) = rating {
            (r.popularity, r.popularity_source) = (Some(x), PopularitySource::Rating);
        } else if let Ok(Some((_, x))) = reviews {
            (r.popularity, r.popularity_source) = (Some(x), PopularitySource::ReviewCount);
        }
    }
}

type Obj = Map<String, Value>;
type Fault = (&'static str, &'static str, String);
/// A field at fault and why.
type FieldError = (&'static str, String);
/// WGS-84 latitude and longitude, and how they were obtained.
type Point = (f64, f64, Coords);

/// Fields this adapter reads; any other is tolerated and counted in the notes.
const KNOWN_FIELDS: [&str; 21] = [
    "name",
    "poi_type",
    "custom_category",
    "opening_hours",
    "location",
    "lat",
    "lng",
    "lon",
    "latitude",
    "longitude",
    "coord_type",
    "coordinate_system",
    "price",
    "cost",
    "ticket",
    "avg_price",
    "rating",
    "score",
    "review_count",
    "comment_num",
    "comments",
];
const PRICE_FIELDS: [&str; 4] = ["price", "cost", "ticket", "avg_price"];
const RATING_FIELDS: [&str; 2] = ["rating", "score"];
const REVIEW_FIELDS: [&str; 3] = ["review_count", "comment_num", "comments"];
const DATUM_FIELDS: [&str; 2] = ["coord_type", "coordinate_system"];

/// The name and type, without which a POI is dropped.
fn required(m: &Obj) -> Result<(&str, PoiType), Fault> {
    let name = match text(m, "name") {
        Ok(Some(n)) if !n.is_empty() => n,
        Ok(_) => return Err(("name", NO_NAME, "the POI has no name".into())),
        Err(e) => return Err(("name", NO_NAME, e)),
    };
    let t = match text(m, "poi_type") {
        Ok(Some(t)) => PoiType::parse(t)
            .ok_or_else(|| format!("{name:?}: poi_type {t:?} is not attractions, food or hotels")),
        Ok(None) => Err(format!("{name:?}: no poi_type")),
        Err(e) => Err(format!("{name:?}: {e}")),
    };
    t.map(|t| (name, t))
        .map_err(|why| ("poi_type", UNKNOWN_TYPE, why))
}

/// A string field, trimmed; absent and `null` are `None`.
fn text<'a>(m: &'a Obj, key: &str) -> Result<Option<&'a str>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(v) => Err(format!("{key} is {}, not a string", describe(v))),
    }
}

/// A JSON value in a few words, for messages.
fn describe(v: &Value) -> String {
    let mut s = match v {
        Value::Null => return "null".into(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(a) => return format!("a list of {}", a.len()),
        Value::Object(_) => return "an object".into(),
    };
    if s.chars().count() > 40 {
        s = s.chars().take(40).collect::<String>() + "…";
    }
    s
}

/// A number given as a number or a numeric string (map services give both); `免费` (free)
/// is 0. Absent, `null` and `""` are `None`.
fn number(key: &str, v: &Value) -> Result<Option<f64>, String> {
    let x = match v {
        Value::Null => return Ok(None),
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s.trim().is_empty() => return Ok(None),
        Value::String(s) if s.trim() == "免费" => Some(0.0),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        // a list of comments counts as its length
        Value::Array(a) if key == "comments" => Some(a.len() as f64),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err(format!("{key} is {}, not a number ≥ 0", describe(v))),
    }
}

/// The first of `keys` present with a value.
fn first_number(m: &Obj, keys: &[&'static str]) -> Result<Option<(&'static str, f64)>, FieldError> {
    for &k in keys {
        if let Some(v) = m.get(k) {
            match number(k, v) {
                Ok(Some(x)) => return Ok(Some((k, x))),
                Ok(None) => {}
                Err(e) => return Err((k, e)),
            }
        }
    }
    Ok(None)
}

/// WGS-84 coordinates: a `location` "lng,lat" string (GCJ-02, as map services give it) or
/// object, else lat/lng fields (WGS-84 unless `coord_type`/`coordinate_system` says GCJ-02).
fn coordinates(m: &Obj) -> Result<Option<Point>, FieldError> {
    let declared = DATUM_FIELDS
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str))
        .map(|s| s.to_ascii_lowercase());
    let gcj_declared = declared.as_deref().is_some_and(|s| s.contains("gcj"));
    let wgs_declared = declared.as_deref().is_some_and(|s| s.contains("wgs"));
    let (point, gcj) = match m.get("location") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            (location_string(s).map(Some), !wgs_declared)
        }
        Some(Value::Object(o)) => (lat_lng(o), gcj_declared),
        None | Some(Value::Null) | Some(Value::String(_)) => (lat_lng(m), gcj_declared),
        Some(v) => (Err(format!("location is {}", describe(v))), false),
    };
    let Some((lat, lng)) = point.map_err(|e| ("location", e))? else {
        return Ok(None);
    };
    if !(lat.abs() <= 90.0 && lng.abs() <= 180.0) || (lat == 0.0 && lng == 0.0) {
        let e = format!("coordinates ({lat}, {lng}) are out of range or a (0, 0) placeholder");
        return Err(("location", e));
    }
    Ok(Some(if gcj {
        let (lat, lng) = gcj02_to_wgs84(lat, lng);
        (lat, lng, Coords::Gcj02Converted)
    } else {
        (lat, lng, Coords::Wgs84)
    }))
}

/// `"116.397,39.909"`: longitude first, as map services write it.
fn location_string(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("location {s:?} is not \"lng,lat\"");
    let (lng, lat) = s.split_once(',').ok_or_else(bad)?;
    let lng: f64 = lng.trim().parse().map_err(|_| bad())?;
    let lat: f64 = lat.trim().parse().map_err(|_| bad())?;
    Ok((lat, lng))
}

/// lat/latitude and lng/lon/longitude of an object; neither present is `None`.
fn lat_lng(m: &Obj) -> Result<Option<(f64, f64)>, String> {
    let pick = |keys: &[&'static str]| -> Result<Option<f64>, String> {
        for &k in keys {
            if let Some(x) = m.get(k).map(|v| number_signed(k, v)).transpose()?.flatten() {
                return Ok(Some(x));
            }
        }
        Ok(None)
    };
    match (
        pick(&["lat", "latitude"])?,
        pick(&["lng", "lon", "longitude"])?,
    ) {
        (Some(lat), Some(lng)) => Ok(Some((lat, lng))),
        (None, None) => Ok(None),
        _ => Err("a latitude without a longitude, or the reverse".into()),
    }
}

/// A coordinate: a number or numeric string, sign allowed.
fn number_signed(key: &str, v: &Value) -> Result<Option<f64>, String> {
    let x = match v {
        Value::Null => return Ok(None),
        Value::String(s) if s.trim().is_empty() => return Ok(None),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    x.filter(|x| x.is_finite())
        .map(Some)
        .ok_or_else(|| format!("{key} is {}, not a number", describe(v)))
}

/// The release's opening-hours structure, checked: `null` (and an object with neither
/// `always_open` nor rules: no data) is unknown.
pub fn opening_hours(v: &Value) -> Result<Option<OpeningHours>, String> {
    let m = match v {
        Value::Null => return Ok(None),
        Value::Object(m) => m,
        v => return Err(format!("opening_hours is {}, not an object", describe(v))),
    };
    let always_open = match m.get("always_open") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(format!("always_open is {}, not true or false", describe(v))),
    };
    let rules = match m.get("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, r)| rule(r).map_err(|e| format!("rules[{i}]: {e}")))
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(format!("rules is {}, not a list", describe(v))),
    };
    if !always_open && rules.is_empty() {
        return Ok(None);
    }
    Ok(Some(OpeningHours { always_open, rules }))
}

fn rule(v: &Value) -> Result<Rule, String> {
    let Value::Object(m) = v else {
        return Err(format!("{}, not an object", describe(v)));
    };
    let date_range = match m.get("date_range") {
        None | Some(Value::Null) => None,
        Some(Value::Object(d)) => Some(DateRange {
            start: month_day(d.get("start")).map_err(|e| format!("date_range.start: {e}"))?,
            end: month_day(d.get("end")).map_err(|e| format!("date_range.end: {e}"))?,
        }),
        Some(v) => return Err(format!("date_range is {}, not an object", describe(v))),
    };
    let weekdays = match m.get("weekdays") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|d| d.as_u64().filter(|d| (1..=7).contains(d)).map(|d| d as u8))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| format!("weekdays {} are not all 1..7", Value::Array(a.clone())))?,
        ),
        Some(v) => return Err(format!("weekdays is {}, not a list", describe(v))),
    };
    let time_windows = match m.get("time_windows") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, w)| window(w).map_err(|e| format!("time_windows[{i}]: {e}")))
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(format!("time_windows is {}, not a list", describe(v))),
    };
    Ok(Rule {
        date_range,
        weekdays,
        time_windows,
    })
}

/// `MM-DD` of a real day (`hours::month_day`: ranges are yearless, 02-29 allowed).
fn month_day(v: Option<&Value>) -> Result<String, String> {
    let s = v.and_then(Value::as_str).ok_or("missing or not a string")?;
    match hours::month_day(s) {
        Some(_) => Ok(s.to_string()),
        None => Err(format!("{s:?} is not a MM-DD date")),
    }
}

/// `HH:MM` as minutes: 00:00..23:59, and 24:00 when `close`.
fn minutes(s: &str, close: bool) -> Option<u32> {
    let t = hours::clock_minutes(s).filter(|_| s.len() == 5)?;
    (t < 24 * 60 || close).then_some(t)
}

fn window(v: &Value) -> Result<TimeWindow, String> {
    let get = |k: &str| v.get(k).and_then(Value::as_str);
    let (Some(open), Some(close)) = (get("open"), get("close")) else {
        return Err(format!("{} has no open and close times", describe(v)));
    };
    let o = minutes(open, false).ok_or_else(|| format!("open {open:?} is not HH:MM"))?;
    let c = minutes(close, true).ok_or_else(|| format!("close {close:?} is not HH:MM"))?;
    if o >= c {
        return Err(format!("close {close:?} is not after open {open:?}"));
    }
    Ok(TimeWindow {
        open: open.to_string(),
        close: close.to_string(),
    })
}

/// The top level: city -> list of POIs.
struct FileVisitor<'i, 'a, 'c>(&'i mut Importer<'a, 'c>);

impl<'de> Visitor<'de> for FileVisitor<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object mapping city names to lists of POIs")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let city = self.0.city(key);
            if self.0.out.wants(&city.name) {
                map.next_value_seed(CitySeed {
                    imp: &mut *self.0,
                    city,
                })?;
            } else {
                let n = map.next_value_seed(Skip)?;
                self.0.out.skip_outside(n);
            }
        }
        Ok(())
    }
}

/// One city's list, POI by POI.
struct CitySeed<'i, 'a, 'c> {
    imp: &'i mut Importer<'a, 'c>,
    city: CityKey,
}

impl<'de> DeserializeSeed<'de> for CitySeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl CitySeed<'_, '_, '_> {
    fn not_a_list(self, what: String) {
        let why = format!(
            "the value of city {:?} is {what}, not a list of POIs",
            self.city.key
        );
        self.imp.report(&self.city, None, "", "not a list", why);
    }
}

impl<'de> Visitor<'de> for CitySeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of POI objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(v) = seq.next_element::<Value>()? {
            self.imp.poi(&self.city, i, v);
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.not_a_list("an object".into());
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.not_a_list(describe(&Value::String(v.into())));
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.not_a_list("null".into());
        Ok(())
    }
}

/// Reads past a city outside `--cities` without building its POIs; the number of entries.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = u64;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(0)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
        Ok(0)
    }
}

pub mod fixture {
    //! Synthetic release-format files for benchmarks and tests (`gtb-bench fixture-release`):
    //! N POIs over every city of cities.csv, in the paper's proportions (about 100K
    //! attractions, 119K food and 119K hotels of 338K), with names that cannot be mistaken for
    //! real places (`北京市景点000123`), release-vocabulary categories, opening hours in the
    //! rule structure (some null), GCJ-02 `location` strings, prices, ratings and review
    //! counts on some entries, and an unknown `id` field. `malformed` entries, spread evenly,
    //! cycle through a missing name, an unknown poi_type and broken opening hours.

    use crate::PoiType;
    use gtb_resources::City;
    use gtb_resources::vocab;
    use rand::Rng;
    use rand::seq::SliceRandom;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::io::Write;

    #[derive(Debug, Clone, Copy)]
    pub struct Spec {
        pub pois: usize,
        pub seed: u64,
        pub malformed: usize,
    }

    /// What a fixture holds, for tests to check an import against.
    #[derive(Debug, Default)]
    pub struct Summary {
        pub entries: usize,
        /// city -> [attractions, food, hotels] an import must keep
        pub kept: BTreeMap<String, [u64; 3]>,
        /// (city, index, kind) of each malformed entry, kind as the import reports it
        pub malformed: Vec<(String, usize, &'static str)>,
        /// entries with broken hours (kept, hours unknown)
        pub broken_hours: usize,
    }

    /// Attractions and food of `n` POIs in the paper's 100 : 119 : 119; hotels the rest.
    pub fn split(n: usize) -> [usize; 3] {
        let a = (n * 100 + 169) / 338;
        let f = (n * 119 + 169) / 338;
        [a, f, n - a - f]
    }

    /// Cities weighted by tier (a tier-1 city has four times the POIs of a tier-3 one); each
    /// gets one POI of every type first when there are enough.
    fn allocate(total: usize, cities: &[City]) -> Vec<usize> {
        let weight = |c: &City| match c.tier {
            1 => 4,
            2 => 2,
            _ => 1,
        };
        let base = usize::from(total >= cities.len());
        let rest = total - base * cities.len();
        let sum: usize = cities.iter().map(weight).sum();
        let mut out: Vec<usize> = cities
            .iter()
            .map(|c| base + rest * weight(c) / sum)
            .collect();
        // the floors lose less than one POI per city: the first cities take the remainder
        let left = total - out.iter().sum::<usize>();
        for x in out.iter_mut().take(left) {
            *x += 1;
        }
        out
    }

    /// Write the fixture as JSON (one POI a line) to `w`.
    pub fn write(w: &mut impl Write, cities: &[City], spec: &Spec) -> std::io::Result<Summary> {
        let per_type: Vec<Vec<usize>> = split(spec.pois)
            .iter()
            .map(|&n| allocate(n, cities))
            .collect();
        let mut s = Summary::default();
        let mut global = 0usize;
        w.write_all(b"{")?;
        for (ci, city) in cities.iter().enumerate() {
            let mut rng = gtb_core::rng::item_rng(spec.seed, "fixture-release", &city.name);
            let mut order: Vec<(PoiType, usize)> = Vec::new();
            for (t, counts) in PoiType::ALL.iter().zip(&per_type) {
                order.extend((0..counts[ci]).map(|k| (*t, k)));
            }
            order.shuffle(&mut rng);
            let kept = s.kept.entry(city.name.clone()).or_default();
            if ci > 0 {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, &city.name)?;
            w.write_all(b":[")?;
            for (i, (t, k)) in order.into_iter().enumerate() {
                let mut e = entry(city, ci, t, k, &mut rng);
                // exactly `malformed` entries, evenly spread over the file
                let bad = spec.malformed > 0
                    && (global * spec.malformed) / spec.pois
                        != ((global + 1) * spec.malformed) / spec.pois;
                global += 1;
                let kind = bad.then(|| spoil(&mut e, s.malformed.len()));
                match kind {
                    Some(k) if k == super::BROKEN_HOURS => {
                        s.broken_hours += 1;
                        kept[t as usize] += 1;
                    }
                    Some(_) => {}
                    None => kept[t as usize] += 1,
                }
                if let Some(k) = kind {
                    s.malformed.push((city.name.clone(), i, k));
                }
                w.write_all(if i == 0 { b"\n" } else { b",\n" })?;
                serde_json::to_writer(&mut *w, &e)?;
                s.entries += 1;
            }
            w.write_all(b"]")?;
        }
        w.write_all(b"}\n")?;
        Ok(s)
    }

    /// Make entry number `j` of the malformed ones bad; the kind an import reports.
    fn spoil(e: &mut Value, j: usize) -> &'static str {
        let m = e.as_object_mut().expect("entries are objects");
        match j % 3 {
            0 => {
                m.remove("name");
                super::NO_NAME
            }
            1 => {
                m.insert("poi_type".into(), "shops".into());
                super::UNKNOWN_TYPE
            }
            _ => {
                let h = json!({"always_open": false, "rules": [{"time_windows": [{"open": "18:00", "close": "09:00"}]}]});
                m.insert("opening_hours".into(), h);
                super::BROKEN_HOURS
            }
        }
    }

    fn entry(city: &City, ci: usize, t: PoiType, k: usize, rng: &mut impl Rng) -> Value {
        let (word, cats, priced, price_max): (&str, &[&str], f64, u32) = match t {
            PoiType::Attractions => ("景点", vocab::ATTRACTION_CATEGORIES, 0.4, 200),
            PoiType::Food => ("餐厅", vocab::FOOD_CATEGORIES, 0.8, 300),
            PoiType::Hotels => ("酒店", &vocab::HOTEL_CATEGORIES, 0.9, 1500),
        };
        // the release has excluded categories too (旅游景点): they import as unmapped
        let category = if t == PoiType::Attractions && rng.gen_bool(0.02) {
            "旅游景点"
        } else {
            cats[rng.gen_range(0..cats.len())]
        };
        let mut m = serde_json::Map::new();
        m.insert("name".into(), format!("{}{word}{k:06}", city.name).into());
        m.insert("custom_category".into(), category.into());
        m.insert("poi_type".into(), t.as_str().into());
        m.insert("opening_hours".into(), hours(t, rng));
        m.insert("id".into(), format!("FX{ci:03}{}{k:06}", t as u8).into());
        if rng.gen_bool(0.85) {
            let lat = city.lat + rng.gen_range(-0.15..0.15);
            let lng = city.lng + rng.gen_range(-0.15..0.15);
            m.insert("location".into(), format!("{lng:.6},{lat:.6}").into());
        }
        if rng.gen_bool(priced) {
            let lo = if t == PoiType::Hotels { 120 } else { 0 };
            m.insert("price".into(), rng.gen_range(lo..=price_max).into());
        }
        if rng.gen_bool(0.7) {
            let r = f64::from(rng.gen_range(30..=50u32)) / 10.0;
            m.insert("rating".into(), r.into());
        }
        if rng.gen_bool(0.5) {
            m.insert("review_count".into(), rng.gen_range(0..20_000u32).into());
        }
        Value::Object(m)
    }

    /// Hours in the rule structure: null for some, always open for some, daily windows,
    /// seasonal rules with a closing day for attractions, lunch and dinner for food.
    fn hours(t: PoiType, rng: &mut impl Rng) -> Value {
        let x: f64 = rng.r#gen();
        match t {
            PoiType::Attractions if x < 0.3 => Value::Null,
            PoiType::Attractions if x < 0.4 => json!({"always_open": true, "rules": []}),
            PoiType::Attractions if x < 0.7 => daily(&[("08:30", "17:30")]),
            PoiType::Attractions => json!({"always_open": false, "rules": [
                {"date_range": {"start": "04-01", "end": "10-31"}, "weekdays": [2, 3, 4, 5, 6, 7],
                 "time_windows": [{"open": "08:00", "close": "18:00"}]},
                {"date_range": {"start": "11-01", "end": "03-31"}, "weekdays": [2, 3, 4, 5, 6, 7],
                 "time_windows": [{"open": "08:30", "close": "17:00"}]}]}),
            PoiType::Food if x < 0.4 => Value::Null,
            PoiType::Food if x < 0.8 => daily(&[("10:30", "14:00"), ("17:00", "21:30")]),
            PoiType::Food => daily(&[("18:00", "24:00")]),
            PoiType::Hotels if x < 0.7 => Value::Null,
            PoiType::Hotels => json!({"always_open": true, "rules": []}),
        }
    }

    fn daily(windows: &[(&str, &str)]) -> Value {
        let w: Vec<Value> = windows
            .iter()
            .map(|(o, c)| json!({"open": o, "close": c}))
            .collect();
        json!({"always_open": false, "rules": [{"time_windows": w}]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hours_structure_is_checked() {
        let ok = json!({"always_open": false, "rules": [
            {"date_range": {"start": "11-01", "end": "03-31"}, "weekdays": [2, 3, 4, 5, 6, 7],
             "time_windows": [{"open": "08:30", "close": "12:00"}, {"open": "13:00", "close": "24:00"}]},
            {"time_windows": []}]});
        let h = opening_hours(&ok).unwrap().unwrap();
        assert_eq!(h.rules.len(), 2);
        assert_eq!(
            h.rules[0].weekdays.as_deref(),
            Some(&[2, 3, 4, 5, 6, 7][..])
        );
        assert_eq!(h.windows_on("12-07", 1), Some(&[][..]));
        assert_eq!(opening_hours(&Value::Null).unwrap(), None);
        assert_eq!(
            opening_hours(&json!({"always_open": false, "rules": []})).unwrap(),
            None
        );
        let always = opening_hours(&json!({"always_open": true}))
            .unwrap()
            .unwrap();
        assert!(always.always_open);
        let window =
            |o: &str, c: &str| json!({"rules": [{"time_windows": [{"open": o, "close": c}]}]});
        for (o, c) in [
            ("09:00", "08:00"),
            ("09:00", "09:00"),
            ("8:00", "17:00"),
            ("24:00", "24:00"),
            ("09:00", "24:30"),
            ("09:60", "10:00"),
            ("18:00", "02:00"),
        ] {
            assert!(opening_hours(&window(o, c)).is_err(), "{o}-{c}");
        }
        assert!(opening_hours(&window("00:00", "24:00")).unwrap().is_some());
        let bad = [
            json!("08:00-17:00"),
            json!({"always_open": "yes"}),
            json!({"rules": {"time_windows": []}}),
            json!({"rules": [{"weekdays": [0, 1]}]}),
            json!({"rules": [{"weekdays": [8]}]}),
            json!({"rules": [{"weekdays": "1-5"}]}),
            json!({"rules": [{"date_range": {"start": "13-01", "end": "01-31"}}]}),
            json!({"rules": [{"date_range": {"start": "02-30", "end": "03-31"}}]}),
            json!({"rules": [{"date_range": {"start": "2-01", "end": "03-31"}}]}),
            json!({"rules": [{"date_range": {"start": "02-01"}}]}),
            json!({"rules": [{"time_windows": [{"open": "08:00"}]}]}),
            json!({"rules": ["daily"]}),
        ];
        for b in bad {
            assert!(opening_hours(&b).is_err(), "{b}");
        }
        let leap = json!({"rules": [{"date_range": {"start": "02-29", "end": "03-01"}, "time_windows": []}]});
        assert!(opening_hours(&leap).unwrap().is_some());
    }

    fn obj(v: Value) -> Obj {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn coordinate_variants() {
        // 故宫博物院: GCJ-02 as a map service gives it, and WGS-84
        let m = obj(json!({"location": "116.403963,39.917940"}));
        let (lat, lng, how) = coordinates(&m).unwrap().unwrap();
        assert_eq!(how, Coords::Gcj02Converted);
        assert!(
            (lat - 39.9166).abs() < 0.002 && (lng - 116.3977).abs() < 0.002,
            "{lat},{lng}"
        );
        let m = obj(json!({"lat": "39.9163", "lng": 116.3972}));
        assert_eq!(
            coordinates(&m).unwrap(),
            Some((39.9163, 116.3972, Coords::Wgs84))
        );
        let m = obj(json!({"latitude": 39.9163, "longitude": 116.3972, "coord_type": "GCJ02"}));
        assert_eq!(coordinates(&m).unwrap().unwrap().2, Coords::Gcj02Converted);
        let m = obj(json!({"location": {"lat": 39.9163, "lon": 116.3972}}));
        assert_eq!(coordinates(&m).unwrap().unwrap().2, Coords::Wgs84);
        assert_eq!(coordinates(&obj(json!({"name": "x"}))).unwrap(), None);
        assert_eq!(coordinates(&obj(json!({"location": ""}))).unwrap(), None);
        for bad in [
            json!({"location": "39.9,116.4x"}),
            json!({"location": "116.4"}),
            json!({"location": 116.4}),
            json!({"lat": 39.9}),
            json!({"lat": true, "lng": 116.4}),
            json!({"location": "0,0"}),
            json!({"lat": 116.4, "lng": 39.9, "location": null}),
            json!({"location": "39.9,116.4"}),
        ] {
            assert!(coordinates(&obj(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_and_required_fields() {
        let m = obj(json!({"cost": "45.5", "score": 4.6, "comments": [1, 2, 3]}));
        assert_eq!(
            first_number(&m, &PRICE_FIELDS).unwrap(),
            Some(("cost", 45.5))
        );
        assert_eq!(
            first_number(&m, &RATING_FIELDS).unwrap(),
            Some(("score", 4.6))
        );
        assert_eq!(
            first_number(&m, &REVIEW_FIELDS).unwrap(),
            Some(("comments", 3.0))
        );
        let m = obj(json!({"price": "免费", "ticket": 30}));
        assert_eq!(
            first_number(&m, &PRICE_FIELDS).unwrap(),
            Some(("price", 0.0))
        );
        let m = obj(json!({"price": null, "ticket": 30}));
        assert_eq!(
            first_number(&m, &PRICE_FIELDS).unwrap(),
            Some(("ticket", 30.0))
        );
        for bad in [
            json!({"price": -1}),
            json!({"price": "about 50"}),
            json!({"price": [50]}),
        ] {
            assert!(first_number(&obj(bad), &PRICE_FIELDS).is_err());
        }
        let ok = obj(json!({"name": " 故宫博物院 ", "poi_type": "attraction"}));
        assert_eq!(required(&ok).unwrap(), ("故宫博物院", PoiType::Attractions));
        let kind = |v: Value| required(&obj(v)).unwrap_err().1;
        assert_eq!(kind(json!({"poi_type": "food"})), NO_NAME);
        assert_eq!(kind(json!({"name": "", "poi_type": "food"})), NO_NAME);
        assert_eq!(kind(json!({"name": 12, "poi_type": "food"})), NO_NAME);
        assert_eq!(kind(json!({"name": "故宫博物院"})), UNKNOWN_TYPE);
        assert_eq!(
            kind(json!({"name": "故宫博物院", "poi_type": "shops"})),
            UNKNOWN_TYPE
        );
        assert_eq!(
            kind(json!({"name": "故宫博物院", "poi_type": 1})),
            UNKNOWN_TYPE
        );
    }

    #[test]
    fn fixture_split_and_allocation() {
        assert_eq!(fixture::split(338_000), [100_000, 119_000, 119_000]);
        let s = fixture::split(1000);
        assert_eq!(s.iter().sum::<usize>(), 1000);
    }
}
