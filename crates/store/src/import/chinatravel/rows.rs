//! Rows of the three tables (attractions with their tag file's popularity, restaurants,
//! hotels): records with a usable name, repeats reported, fields filled from the record.

use super::category::{attraction_category, food_category, hotel_category};
use super::sheet::{Sheet, cell};
use super::values::{hours_or_note, number, position};
use super::{BROKEN_HOURS, Notes, SOURCE};
use crate::{Coords, PoiRow, PoiType, PopularitySource, StoreBuilder};
use anyhow::Result;
use csv::StringRecord;
use gtb_resources::City;
use std::collections::BTreeMap;
use std::path::Path;

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

pub(super) fn attractions(
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

pub(super) fn restaurants(
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

pub(super) fn hotels(
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
