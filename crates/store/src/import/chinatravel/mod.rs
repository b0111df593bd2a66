//! `gtb import chinatravel DIR`: the ChinaTravel database folder (`attractions/<city>.csv`
//! with `<city>_tag.csv`, `restaurants/<city>.csv`, `hotels/<city>.csv`; file names are the
//! city's pinyin). Mapping, coordinates (attractions BD-09, restaurants and hotels GCJ-02, with
//! the evidence), hours, prices and popularity: docs/RESOURCES.md, `## Adapter: chinatravel`.
//!
//! Here: the tables, the constants, the import's outline and the source notes. `files` finds
//! the CSV files and their cities, `sheet` reads a CSV with physical line numbers, `values`
//! reads numbers, positions and hours, `rows` turns each table's records into rows, and
//! `category` maps types, cuisines and hotels to the release vocabulary.

mod category;
mod files;
mod rows;
mod sheet;
#[cfg(test)]
mod tests;
mod values;

pub(super) use sheet::{LineIndex, csv_problem};

use super::ImportContext;
use crate::StoreBuilder;
use anyhow::{Result, bail};
use files::{city_of, count_records, list_files, pinyin_table, relative};
use rows::{attractions, hotels, restaurants};

const SOURCE: &str = "chinatravel";

/// Release city name, pinyin and English name of the 143 cities (raw_data/city_pinyin.csv),
/// compiled in so that an import works from any folder.
const CITY_PINYIN: &str = include_str!("../../../../../raw_data/city_pinyin.csv");

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
