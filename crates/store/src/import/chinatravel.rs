//! `gtb import chinatravel DIR`: the ChinaTravel database folder (`attractions/<city>.csv`
//! with `<city>_tag.csv`, `restaurants/<city>.csv`, `hotels/<city>.csv`; file names are the
//! city's pinyin). Mapping, coordinates (attractions BD-09, restaurants and hotels GCJ-02, with
//! the evidence), hours, prices and popularity: docs/RESOURCES.md, `## Adapter: chinatravel`.

use super::ImportContext;
use crate::{
    Coords, PoiRow, PoiType, PopularitySource, StoreBuilder, bd09_to_wgs84, gcj02_to_wgs84,
};
use anyhow::{Context, Result, bail};
use csv::StringRecord;
use gtb_resources::City;
use gtb_resources::hours::{OpeningHours, Rule, TimeWindow, clock, clock_minutes};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SOURCE: &str = "chinatravel";

/// Release city name, pinyin and English name of the 143 cities (raw_data/city_pinyin.csv),
/// compiled in so that an import works from any folder.
const CITY_PINYIN: &str = include_str!("../../../../raw_data/city_pinyin.csv");

/// Hotels without a telling name or feature are classed by their lowest nightly price (CNY):
/// MODELLED thresholds near Ctrip's diamond levels in the ten ChinaTravel cities, whose
/// `miniPrice` deciles run 245..869 (经济型 below the first, 豪华型 from the last).
const ECONOMY_BELOW: f64 = 200.0;
const COMFORT_BELOW: f64 = 400.0;
const UPSCALE_BELOW: f64 = 800.0;

/// A position farther than this from its city's centre (cities.csv) is a broken record (one
/// restaurant has longitude -0.0064); the widest ChinaTravel city, 重庆, reaches ~470 km.
const FAR_KM: f64 = 600.0;

/// The three tables of the database, in import order.
#[derive(Clone, Copy, PartialEq)]
enum Table {
    Attractions,
    Restaurants,
    Hotels,
}

impl Table {
    const ALL: [Table; 3] = [Table::Attractions, Table::Restaurants, Table::Hotels];
    fn folder(self) -> &'static str {
        match self {
            Table::Attractions => "attractions",
            Table::Restaurants => "restaurants",
            Table::Hotels => "hotels",
        }
    }
}

/// Reported like the release adapter's: the row is kept without the field.
const BAD_FIELD: &str = "bad field (kept without it)";
const BROKEN_HOURS: &str = "broken opening_hours (kept, hours unknown)";

/// Facts gathered while a file is read: fields left unknown on kept rows (reported in
/// dropped.jsonl once the file is done) and tag-file counts for the source notes.
#[derive(Default)]
struct Notes {
    /// (position, field, kind, reason) of a field left unknown on a kept row
    degraded: Vec<(String, &'static str, &'static str, String)>,
    /// tag rows (attractions/<city>_tag.csv) whose name has no row in the city's main file
    tag_rows_unmatched: u64,
    attractions_without_tag: u64,
}

pub fn import(ctx: &ImportContext, out: &mut StoreBuilder) -> Result<()> {
    let dir = &ctx.opts.input;
    if !dir.is_dir() {
        bail!(
            "{}: not a folder (the ChinaTravel database folder holds attractions/, restaurants/ and hotels/)",
            dir.display()
        );
    }
    let mut info = ctx.source_info()?;
    let pinyin = pinyin_table()?;
    let files = list_files(dir)?;
    if files.is_empty() {
        bail!(
            "{}: no CSV under attractions/, restaurants/ or hotels/ (is this the ChinaTravel database folder?)",
            dir.display()
        );
    }
    let total: u64 = files
        .iter()
        .map(|(_, p)| p.metadata().map_or(0, |m| m.len()))
        .sum();
    let bar = ctx.bar(total, "chinatravel");
    let licence = ctx.opts.licence();
    let mut notes = Notes::default();
    for (table, path) in &files {
        let rel = relative(dir, path);
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        match city_of(stem, &pinyin, ctx) {
            Some(city) => {
                let mut rows = match table {
                    Table::Attractions => attractions(path, &rel, city, out, &mut notes)?,
                    Table::Restaurants => restaurants(path, &rel, city, out, &mut notes)?,
                    Table::Hotels => hotels(path, &rel, city, out, &mut notes)?,
                };
                for r in &mut rows {
                    r.licence.clone_from(&licence);
                }
                rows.into_iter().for_each(|r| out.push(r));
            }
            None => {
                let n = count_records(path);
                out.drop_row(
                    rel.clone(),
                    "file",
                    "unknown city",
                    format!(
                        "{rel}: {stem:?} is not the pinyin or English name of a city gtb knows (raw_data/city_pinyin.csv); its {n} rows are not imported"
                    ),
                );
            }
        }
        bar.inc(path.metadata().map_or(0, |m| m.len()));
    }
    bar.finish_and_clear();
    for (at, field, kind, reason) in std::mem::take(&mut notes.degraded) {
        out.drop_row(at, field, kind, reason);
    }
    add_notes(&mut info, notes);
    out.add_source(info);
    Ok(())
}

fn add_notes(info: &mut crate::SourceInfo, notes: Notes) {
    use serde_json::json;
    let n = &mut info.notes;
    n.insert(
        "coordinates".into(),
        json!("attractions: BD-09 (Baidu) converted to WGS-84; restaurants and hotels: GCJ-02 converted to WGS-84 (evidence: docs/RESOURCES.md)"),
    );
    n.insert(
        "popularity".into(),
        json!("attractions: Popularity (1-10) of attractions/<city>_tag.csv, matched by name (source 'rating'); restaurants: none; hotels: commentNumber (review_count), else commentScore (rating)"),
    );
    n.insert(
        "hotel_categories".into(),
        json!(format!(
            "from the name or featureHotelType (电竞, 民宿, 客栈, 旅舍/旅馆/招待所, 公寓, 主题, 度假, 快捷, 商务), else miniPrice: below {ECONOMY_BELOW} 经济型, below {COMFORT_BELOW} 舒适型, below {UPSCALE_BELOW} 高档型, else 豪华型"
        )),
    );
    n.insert(
        "tag_rows_without_attraction".into(),
        json!(notes.tag_rows_unmatched),
    );
    n.insert(
        "attractions_without_tag_row".into(),
        json!(notes.attractions_without_tag),
    );
    n.insert(
        "not_read".into(),
        json!("poi/*.json, subways.json and intercity_transport/ hold no attractions, restaurants or hotels"),
    );
}

/// `attractions/x.csv` etc., sorted by folder (attractions, restaurants, hotels) then name;
/// `_tag.csv` files are read with their main file.
fn list_files(dir: &Path) -> Result<Vec<(Table, PathBuf)>> {
    let mut out = Vec::new();
    for t in Table::ALL {
        let sub = dir.join(t.folder());
        if !sub.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        for e in std::fs::read_dir(&sub).with_context(|| format!("reading {}", sub.display()))? {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_file() && name.ends_with(".csv") && !name.ends_with("_tag.csv") {
                files.push(p);
            }
        }
        files.sort();
        out.extend(files.into_iter().map(|p| (t, p)));
    }
    Ok(out)
}

fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .display()
        .to_string()
        .replace('\\', "/")
}

/// Lower-case letters and digits only: `Xi'an`, `xi_an` and `XIAN` all give `xian`.
fn key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Pinyin and English keys -> release city name.
fn pinyin_table() -> Result<BTreeMap<String, String>> {
    let mut rd = csv::Reader::from_reader(CITY_PINYIN.as_bytes());
    let mut map = BTreeMap::new();
    for (i, rec) in rd.records().enumerate() {
        let rec = rec.with_context(|| format!("raw_data/city_pinyin.csv line {}", i + 2))?;
        let (name, pinyin, english) = (&rec[0], &rec[1], &rec[2]);
        map.insert(key(pinyin), name.to_string());
        map.insert(key(english), name.to_string());
    }
    Ok(map)
}

/// The city a file name stands for, when gtb knows it (never guessed from a prefix).
fn city_of<'a>(
    stem: &str,
    pinyin: &BTreeMap<String, String>,
    ctx: &ImportContext<'a>,
) -> Option<&'a City> {
    let name = pinyin.get(&key(stem))?;
    ctx.cities.resolve(name)
}

fn count_records(path: &Path) -> u64 {
    csv::Reader::from_path(path).map_or(0, |mut r| r.records().count() as u64)
}

/// Line numbers from byte offsets. The csv crate's own line count is one short after a
/// CRLF header (ChinaTravel's hotel files end their lines with CRLF), so lines are counted
/// here from the bytes.
pub(super) struct LineIndex {
    newlines: Vec<u64>,
}

impl LineIndex {
    pub(super) fn new(bytes: &[u8]) -> LineIndex {
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
    pub(super) fn line(&self, byte: u64) -> u64 {
        self.newlines.partition_point(|&n| n <= byte) as u64 + 1
    }
}

/// What is wrong with a record, without the csv crate's own line count (see [`LineIndex`]).
pub(super) fn csv_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => e.to_string(),
    }
}

/// A CSV file with its header, read record by record.
struct Sheet {
    rel: String,
    header: Vec<String>,
    lines: LineIndex,
    reader: csv::Reader<std::io::Cursor<Vec<u8>>>,
}

impl Sheet {
    fn open(path: &Path, rel: &str) -> Result<Sheet> {
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
    fn need(&self, column: &str) -> Result<usize> {
        self.find(column).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no column {column:?} (columns: {})",
                self.rel,
                self.header.join(", ")
            )
        })
    }
    fn find(&self, column: &str) -> Option<usize> {
        self.header.iter().position(|h| h == column)
    }
    /// Every record with its line; unreadable records become drops.
    fn for_each(
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

fn cell(rec: &StringRecord, i: Option<usize>) -> &str {
    i.and_then(|i| rec.get(i)).map_or("", str::trim)
}

/// A number field: empty is unknown; anything else unreadable is noted with its position.
fn number(text: &str, at: &str, field: &'static str, notes: &mut Notes) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v),
        _ => {
            let why = format!("{at}: {field} {text:?} is not a number");
            notes.degraded.push((at.to_string(), field, BAD_FIELD, why));
            None
        }
    }
}

/// A position (lat, lng) in the given datum, converted to WGS-84; missing, zero or
/// unreadable coordinates leave the row without a position.
fn position(
    (lat, lng): (&str, &str),
    datum: Coords,
    city: &City,
    at: &str,
    notes: &mut Notes,
) -> (Option<f64>, Option<f64>, Option<Coords>) {
    let (Some(la), Some(lo)) = (number(lat, at, "lat", notes), number(lng, at, "lng", notes))
    else {
        return (None, None, None);
    };
    if la == 0.0 && lo == 0.0 {
        let why = format!("{at}: lat/lng (0, 0) is no position");
        notes.degraded.push((at.to_string(), "lat", BAD_FIELD, why));
        return (None, None, None);
    }
    let (wla, wlo) = match datum {
        Coords::Bd09Converted => bd09_to_wgs84(la, lo),
        Coords::Gcj02Converted => gcj02_to_wgs84(la, lo),
        Coords::Wgs84 => (la, lo),
    };
    let km = gtb_resources::geodesy::distance_km((wla, wlo), (city.lat, city.lng));
    if km.is_nan() || km >= FAR_KM {
        let why = format!(
            "{at}: lat/lng ({la}, {lo}) is {km:.0} km from {}, not a position in it",
            city.name
        );
        notes.degraded.push((at.to_string(), "lat", BAD_FIELD, why));
        return (None, None, None);
    }
    (Some(wla), Some(wlo), Some(datum))
}

/// The same hours every day, as the release rule structure. 00:00-24:00 (or an equal open
/// and close) is open around the clock; a close earlier than the open is after midnight,
/// given as two windows of the day (00:00-close and open-24:00).
pub(crate) fn daily_hours(open: &str, close: &str) -> Result<Option<OpeningHours>, String> {
    if open.is_empty() && close.is_empty() {
        return Ok(None);
    }
    let o = clock_minutes(open.trim()).ok_or_else(|| format!("{open:?} is not a time (HH:MM)"))?;
    let c =
        clock_minutes(close.trim()).ok_or_else(|| format!("{close:?} is not a time (HH:MM)"))?;
    let all_day = o == c || (o == 0 && c >= 24 * 60 - 1);
    if all_day {
        return Ok(Some(OpeningHours {
            always_open: true,
            rules: Vec::new(),
        }));
    }
    let window = |a: u32, b: u32| TimeWindow {
        open: clock(a),
        close: clock(b),
    };
    let time_windows = if c > o {
        vec![window(o, c)]
    } else if c == 0 {
        vec![window(o, 24 * 60)]
    } else {
        vec![window(0, c), window(o, 24 * 60)]
    };
    Ok(Some(OpeningHours {
        always_open: false,
        rules: vec![Rule {
            date_range: None,
            weekdays: None,
            time_windows,
        }],
    }))
}

/// Hours of a row; unreadable ones are noted and left unknown.
fn hours_or_note(open: &str, close: &str, at: &str, notes: &mut Notes) -> Option<OpeningHours> {
    daily_hours(open, close).unwrap_or_else(|e| {
        let why = format!("{at}: opening hours {e}");
        notes
            .degraded
            .push((at.to_string(), "OpenTime", BROKEN_HOURS, why));
        None
    })
}

/// Rows already read from a file: (source id, name) -> line.
type Seen = BTreeMap<(String, String), u64>;

/// A row with a name, or a reported drop. A repeat of an earlier row of the file (same id
/// and name: the hotel lists repeat some hotels verbatim) is reported here with its line;
/// other duplicates of a name are left to the store builder's rule (the most popular kept).
fn named(
    name: &str,
    city: &City,
    t: PoiType,
    (source_id, line): (String, u64),
    seen: &mut Seen,
    out: &mut StoreBuilder,
) -> Option<PoiRow> {
    let at = |line: u64| format!("{} line {line}", file_of(&source_id));
    if name.is_empty() {
        let msg = format!("{}: the row has no name", at(line));
        out.drop_row(at(line), "Name", "no name", msg);
        return None;
    }
    if let Some(first) = seen.get(&(source_id.clone(), name.to_string())) {
        let msg = format!(
            "{}: {name:?} repeats line {first} (same id {source_id})",
            at(line)
        );
        out.drop_row(at(line), "Name", "duplicate", msg);
        return None;
    }
    seen.insert((source_id.clone(), name.to_string()), line);
    Some(PoiRow::new(&city.name, t, name, SOURCE, source_id))
}

/// `hotels/beijing.csv` of a source id `hotels/beijing#123`.
fn file_of(source_id: &str) -> String {
    let stem = source_id.split('#').next().unwrap_or(source_id);
    format!("{stem}.csv")
}

fn source_id(rel: &str, id: &str, line: u64) -> String {
    let stem = rel.trim_end_matches(".csv");
    if id.is_empty() {
        format!("{stem}#line{line}")
    } else {
        format!("{stem}#{id}")
    }
}

/// `Popularity` of `<city>_tag.csv` by attraction name (absent file: empty).
fn tag_popularity(path: &Path, rel: &str, out: &mut StoreBuilder) -> Result<BTreeMap<String, f64>> {
    let tag = path.with_file_name(format!(
        "{}_tag.csv",
        path.file_stem().and_then(|s| s.to_str()).unwrap_or("")
    ));
    let mut map = BTreeMap::new();
    if !tag.is_file() {
        return Ok(map);
    }
    let tag_rel = rel.replace(".csv", "_tag.csv");
    let mut sheet = Sheet::open(&tag, &tag_rel)?;
    let (name, pop) = (sheet.need("Name")?, sheet.need("Popularity")?);
    let mut bad = Vec::new();
    sheet.for_each(out, |line, rec| {
        let n = cell(rec, Some(name));
        match cell(rec, Some(pop)).parse::<f64>() {
            Ok(p) if p.is_finite() && !n.is_empty() => {
                map.entry(n.to_string()).or_insert(p);
            }
            _ => bad.push(line),
        }
    })?;
    for line in bad {
        out.drop_row(
            format!("{tag_rel} line {line}"),
            "Popularity",
            "unreadable tag row",
            format!("{tag_rel} line {line}: no name or no numeric Popularity (the attraction keeps no popularity)"),
        );
    }
    Ok(map)
}

fn attractions(
    path: &Path,
    rel: &str,
    city: &City,
    out: &mut StoreBuilder,
    notes: &mut Notes,
) -> Result<Vec<PoiRow>> {
    let mut tags = tag_popularity(path, rel, out)?;
    let sheet = Sheet::open(path, rel)?;
    let name = sheet.need("Name")?;
    let [id, typ, lat, lng, date, open, end, price] = [
        "id",
        "Type",
        "Latitude",
        "Longitude",
        "dateDesc",
        "OpenTime",
        "EndTime",
        "Price",
    ]
    .map(|c| sheet.find(c));
    let rows = named_rows(
        sheet,
        rel,
        (name, id),
        city,
        PoiType::Attractions,
        out,
        |row, rec, at| {
            let n = cell(rec, Some(name));
            let raw = cell(rec, typ);
            let mut row = row.with_category(raw, attraction_category(raw, n));
            (row.lat, row.lng, row.coords) = position(
                (cell(rec, lat), cell(rec, lng)),
                Coords::Bd09Converted,
                city,
                at,
                notes,
            );
            let d = cell(rec, date);
            row.opening_hours = if d.is_empty() || d == "全年" {
                hours_or_note(cell(rec, open), cell(rec, end), at, notes)
            } else {
                let why = format!("{at}: dateDesc {d:?} is not 全年 (the only value gtb reads)");
                notes
                    .degraded
                    .push((at.to_string(), "dateDesc", BROKEN_HOURS, why));
                None
            };
            row.price = number(cell(rec, price), at, "Price", notes);
            match tags.remove(n) {
                Some(p) => {
                    row.popularity = Some(p);
                    row.popularity_source = PopularitySource::Rating;
                }
                None => notes.attractions_without_tag += 1,
            }
            row
        },
    )?;
    notes.tag_rows_unmatched += tags.len() as u64;
    Ok(rows)
}

fn restaurants(
    path: &Path,
    rel: &str,
    city: &City,
    out: &mut StoreBuilder,
    notes: &mut Notes,
) -> Result<Vec<PoiRow>> {
    let sheet = Sheet::open(path, rel)?;
    let name = sheet.need("Name")?;
    let [id, lat, lng, price, cuisine, open, close] = [
        "id",
        "Lat",
        "Lon",
        "Price",
        "CuisineName",
        "WeekdayOpenTime",
        "WeekdayCloseTime",
    ]
    .map(|c| sheet.find(c));
    named_rows(
        sheet,
        rel,
        (name, id),
        city,
        PoiType::Food,
        out,
        |row, rec, at| {
            let raw = cell(rec, cuisine);
            let mut row = row.with_category(raw, food_category(raw));
            (row.lat, row.lng, row.coords) = position(
                (cell(rec, lat), cell(rec, lng)),
                Coords::Gcj02Converted,
                city,
                at,
                notes,
            );
            row.opening_hours = hours_or_note(cell(rec, open), cell(rec, close), at, notes);
            row.price = number(cell(rec, price), at, "Price", notes);
            row
        },
    )
}

fn hotels(
    path: &Path,
    rel: &str,
    city: &City,
    out: &mut StoreBuilder,
    notes: &mut Notes,
) -> Result<Vec<PoiRow>> {
    let sheet = Sheet::open(path, rel)?;
    let name = sheet.need("hotelName")?;
    let [id, feature, score, comments, price, lat, lng] = [
        "hotelId",
        "featureHotelType",
        "commentScore",
        "commentNumber",
        "miniPrice",
        "lat",
        "lon",
    ]
    .map(|c| sheet.find(c));
    named_rows(
        sheet,
        rel,
        (name, id),
        city,
        PoiType::Hotels,
        out,
        |mut row, rec, at| {
            let n = cell(rec, Some(name));
            row.price = number(cell(rec, price), at, "miniPrice", notes);
            let f = cell(rec, feature);
            let category = hotel_category(n, f, row.price);
            row = row.with_category(f, category);
            (row.lat, row.lng, row.coords) = position(
                (cell(rec, lat), cell(rec, lng)),
                Coords::Gcj02Converted,
                city,
                at,
                notes,
            );
            let count = number(cell(rec, comments), at, "commentNumber", notes);
            let rating = number(cell(rec, score), at, "commentScore", notes);
            (row.popularity, row.popularity_source) = match (count, rating) {
                (Some(c), _) => (Some(c), PopularitySource::ReviewCount),
                (None, Some(r)) => (Some(r), PopularitySource::Rating),
                (None, None) => (None, PopularitySource::None),
            };
            row
        },
    )
}

/// The rows of one sheet: a record with a usable name (`named`) becomes a row of `poi_type`,
/// which `fill` completes from the record (`at` names its line); the others are reported.
fn named_rows(
    mut sheet: Sheet,
    rel: &str,
    (name, id): (usize, Option<usize>),
    city: &City,
    poi_type: PoiType,
    out: &mut StoreBuilder,
    mut fill: impl FnMut(PoiRow, &StringRecord, &str) -> PoiRow,
) -> Result<Vec<PoiRow>> {
    let mut rows = Vec::new();
    let mut drops = StoreBuilder::new(None);
    let mut seen = Seen::new();
    sheet.for_each(out, |line, rec| {
        let at = format!("{rel} line {line}");
        let sid = source_id(rel, cell(rec, id), line);
        let n = cell(rec, Some(name));
        if let Some(row) = named(n, city, poi_type, (sid, line), &mut seen, &mut drops) {
            rows.push(fill(row, rec, &at));
        }
    })?;
    absorb(out, drops);
    Ok(rows)
}

/// Drops collected while the sheet held `out` borrowed.
fn absorb(out: &mut StoreBuilder, drops: StoreBuilder) {
    for d in drops.dropped() {
        out.drop_row(d.position.clone(), &d.field, &d.kind, d.reason.clone());
    }
}

/// ChinaTravel's attraction `Type` (15 values) in the release vocabulary, refined by the
/// name where the release has a finer category (寺庙, 纪念馆, 动物园, ...). `其它` stays
/// unmapped.
fn attraction_category(raw: &str, name: &str) -> Option<&'static str> {
    let has = |k: &str| name.contains(k);
    let ends = |k: &str| name.ends_with(k);
    Some(match raw {
        "公园" if has("动物园") => "动物园",
        "公园" if has("植物园") => "植物园",
        "公园" if has("湿地") => "湿地公园",
        "公园" if has("森林公园") => "森林公园",
        "公园" => "公园",
        "历史古迹" if ends("寺") || ends("庙") || has("禅寺") => "寺庙",
        "历史古迹" if has("故居") => "名人故居",
        "历史古迹" => "文物古迹",
        "博物馆/纪念馆" | "美术馆/纪念馆" | "图书馆/纪念馆" if has("纪念") => {
            "纪念馆"
        }
        "博物馆/纪念馆" | "美术馆/纪念馆" | "图书馆/纪念馆" | "美术馆/艺术馆" => {
            "博物馆"
        }
        "游乐园/体育娱乐" if has("动物园") => "动物园",
        "游乐园/体育娱乐" => "游乐园",
        "人文景观" | "大学校园" => "人文景观",
        "自然风光" => "自然风光",
        "商业街区" => "特色街区",
        "文化旅游区" => "特色景点",
        "红色景点" => "红色景点",
        "园林" => "园林",
        _ => return None,
    })
}

/// ChinaTravel's `CuisineName` (43 values) in the release vocabulary; values with no
/// counterpart (面包甜点, 酒吧/酒馆, 茶馆/茶室, 亚洲菜, 中东料理, 拉美料理, 其他, blank) stay
/// unmapped and are reported in the manifest.
fn food_category(raw: &str) -> Option<&'static str> {
    Some(match raw {
        "西餐" => "西餐厅(综合风味)",
        "小吃" => "特色小吃",
        "咖啡店" => "咖啡",
        "本帮菜" => "上海菜",
        "快餐简餐" => "小吃快餐",
        "素食" => "素菜馆",
        "融合菜" => "创意菜",
        "其他中餐" => "中餐",
        "台湾菜" => "特色/地方风味餐厅",
        // 火锅, 粤菜, 川菜, 北京菜, ...: already release values
        _ => {
            return gtb_resources::vocab::FOOD_CATEGORIES
                .iter()
                .copied()
                .find(|c| *c == raw);
        }
    })
}

/// One of the release's 13 hotel categories: from the name or Ctrip feature tag when they
/// say it, else from the price band (thresholds above); `None` without either.
fn hotel_category(name: &str, feature: &str, price: Option<f64>) -> Option<&'static str> {
    let has = |k: &str| name.contains(k) || feature.contains(k);
    let by_word = [
        ("电竞", "电竞酒店"),
        ("民宿", "民宿"),
        ("客栈", "客栈"),
        ("旅舍", "旅馆"),
        ("旅馆", "旅馆"),
        ("招待所", "旅馆"),
        ("公寓", "公寓式酒店"),
        ("主题", "主题酒店"),
        ("度假", "度假酒店"),
        ("快捷", "快捷酒店"),
        ("商务", "商务酒店"),
    ];
    if let Some((_, c)) = by_word.iter().find(|(k, _)| has(k)) {
        return Some(c);
    }
    let p = price.filter(|p| *p > 0.0)?;
    Some(if p < ECONOMY_BELOW {
        "经济型"
    } else if p < COMFORT_BELOW {
        "舒适型"
    } else if p < UPSCALE_BELOW {
        "高档型"
    } else {
        "豪华型"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_name_the_physical_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("beijing.csv");
        let text = "id,Name,Lat,Lon,Price,CuisineName,WeekdayOpenTime,WeekdayCloseTime\n\
            0,全聚德(前门店),39.8990,116.3980,150,北京菜,11:00,21:00\n\
            1,\"\",39.9,116.4,100,北京菜,11:00,21:00\n\
            2,\"多行\n名字\",39.9,116.4,100,北京菜,11:00,21:00\n\
            3,,39.9,116.4,100,北京菜,11:00,21:00\n";
        // LF and CRLF line ends: the same lines
        for text in [text.to_string(), text.replace('\n', "\r\n")] {
            std::fs::write(&path, text).unwrap();
            let city = test_city();
            let (mut out, mut notes) = (StoreBuilder::new(None), Notes::default());
            let rows = restaurants(
                &path,
                "restaurants/beijing.csv",
                &city,
                &mut out,
                &mut notes,
            )
            .unwrap();
            assert_eq!(rows.len(), 2);
            let at: Vec<&str> = out.dropped().iter().map(|d| d.position.as_str()).collect();
            assert_eq!(
                at,
                [
                    "restaurants/beijing.csv line 3",
                    "restaurants/beijing.csv line 6"
                ]
            );
        }
    }

    fn test_city() -> City {
        City {
            name: "北京市".into(),
            province: "北京市".into(),
            region: "north".into(),
            tier: 1,
            hub: true,
            lat: 39.9042,
            lng: 116.4074,
            hsr: true,
            airports: Vec::new(),
            stations: Vec::new(),
        }
    }

    #[test]
    fn hours_after_midnight_split_into_two_windows() {
        let h = daily_hours("17:30", "2:00").unwrap().unwrap();
        let w: Vec<(&str, &str)> = h.rules[0]
            .time_windows
            .iter()
            .map(|w| (w.open.as_str(), w.close.as_str()))
            .collect();
        assert_eq!(w, [("00:00", "02:00"), ("17:30", "24:00")]);
        assert!(daily_hours("00:00", "24:00").unwrap().unwrap().always_open);
        assert!(daily_hours("00:00", "00:00").unwrap().unwrap().always_open);
        let h = daily_hours("9:00", "17:00").unwrap().unwrap();
        assert_eq!(h.rules[0].time_windows[0].open, "09:00");
        assert!(daily_hours("9", "17:00").is_err());
        assert_eq!(daily_hours("", "").unwrap(), None);
    }

    #[test]
    fn every_mapped_category_is_in_the_release_vocabulary() {
        for raw in [
            "游乐园/体育娱乐",
            "公园",
            "历史古迹",
            "博物馆/纪念馆",
            "人文景观",
            "自然风光",
            "商业街区",
            "文化旅游区",
            "美术馆/艺术馆",
            "红色景点",
            "园林",
            "大学校园",
            "美术馆/纪念馆",
            "图书馆/纪念馆",
        ] {
            for name in [
                "x",
                "x动物园",
                "x植物园",
                "x湿地",
                "x森林公园",
                "x寺",
                "x故居",
                "x纪念馆",
            ] {
                let c = attraction_category(raw, name).unwrap();
                assert!(PoiType::Attractions.in_vocabulary(c), "{raw} {name} -> {c}");
            }
        }
        assert_eq!(attraction_category("其它", "x"), None);
        let cuisines = "西餐 火锅 粤菜 小吃 江浙菜 川菜 日本料理 自助餐 烧烤 北京菜 咖啡店 东南亚菜 创意菜 本帮菜 海鲜 湖北菜 韩国料理 湘菜 快餐简餐 素食 融合菜 其他中餐 农家菜 新疆菜 清真菜 云南菜 客家菜 鲁菜 西北菜 东北菜 台湾菜 徽菜 闽菜 海南菜 西藏菜";
        for raw in cuisines.split(' ') {
            let c = food_category(raw).unwrap_or_else(|| panic!("{raw}"));
            assert!(PoiType::Food.in_vocabulary(c), "{raw} -> {c}");
        }
        assert_eq!(food_category("面包甜点"), None);
    }

    #[test]
    fn hotels_are_classed_by_word_then_price() {
        assert_eq!(hotel_category("某某民宿", "", Some(900.0)), Some("民宿"));
        assert_eq!(hotel_category("x", "电竞房", None), Some("电竞酒店"));
        assert_eq!(hotel_category("x", "免费停车", Some(150.0)), Some("经济型"));
        assert_eq!(hotel_category("x", "", Some(399.0)), Some("舒适型"));
        assert_eq!(hotel_category("x", "", Some(400.0)), Some("高档型"));
        assert_eq!(hotel_category("x", "", Some(800.0)), Some("豪华型"));
        assert_eq!(hotel_category("x", "", None), None);
    }

    #[test]
    fn file_names_resolve_by_pinyin_or_english_only() {
        let t = pinyin_table().unwrap();
        assert_eq!(t.get(&key("beijing")).map(String::as_str), Some("北京市"));
        assert_eq!(t.get(&key("Xi'an")).map(String::as_str), Some("西安市"));
        assert_eq!(
            t.get(&key("Hohhot")).map(String::as_str),
            Some("呼和浩特市")
        );
        assert_eq!(t.get(&key("beijin")), None);
        assert_eq!(
            t.values().collect::<std::collections::BTreeSet<_>>().len(),
            143
        );
    }
}
