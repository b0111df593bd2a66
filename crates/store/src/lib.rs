//! The POI store: real POIs (attractions, food, hotels) of any source, normalised into one
//! Parquet table (`pois.parquet`), with `dropped.jsonl` (every row an importer could not use,
//! and why) and `manifest.json` (sources, counts, unmapped categories; written last). Schema
//! and rules: docs/RESOURCES.md.
//!
//! * [`import`]: the adapters behind `gtb import` (release, chinatravel, osm, table), each
//!   filling a [`StoreBuilder`];
//! * [`write`]: the builder: checks, de-duplicates, sorts and publishes a store atomically;
//! * [`read`]: opens a store, checking it against its manifest;
//! * `resources::store` lays a store over the embedded snapshot for builds.

pub mod import;
pub mod overlay;
pub mod read;
pub mod write;

use gtb_resources::hours::OpeningHours;
use serde::{Deserialize, Serialize};

pub use read::Store;
pub use write::{Dropped, SourceInfo, StoreBuilder, StoreSummary};

/// The store's format tag (manifest `format`); bumped when the schema changes.
pub const FORMAT: &str = "gtb-poi-store/1";
/// File names inside a store folder.
pub const POIS_FILE: &str = "pois.parquet";
pub const DROPPED_FILE: &str = "dropped.jsonl";
pub const MANIFEST_FILE: &str = "manifest.json";

/// The three kinds of POI, named as the release's `poi_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoiType {
    Attractions,
    Food,
    Hotels,
}

impl PoiType {
    pub const ALL: [PoiType; 3] = [PoiType::Attractions, PoiType::Food, PoiType::Hotels];
    pub fn as_str(self) -> &'static str {
        match self {
            PoiType::Attractions => "attractions",
            PoiType::Food => "food",
            PoiType::Hotels => "hotels",
        }
    }
    /// The release's `poi_type` string (also accepts the singular forms some dumps use).
    pub fn parse(s: &str) -> Option<PoiType> {
        match s.trim() {
            "attractions" | "attraction" => Some(PoiType::Attractions),
            "food" | "restaurant" | "restaurants" => Some(PoiType::Food),
            "hotels" | "hotel" => Some(PoiType::Hotels),
            _ => None,
        }
    }
    /// The category the release's evaluator gives a POI whose category is missing or
    /// excluded (task_format.md §3.3).
    pub fn fallback_category(self) -> &'static str {
        match self {
            PoiType::Attractions => "公园",
            PoiType::Food => "中餐",
            PoiType::Hotels => "商务酒店",
        }
    }
    /// Whether `category` is in the release vocabulary of this type.
    pub fn in_vocabulary(self, category: &str) -> bool {
        use gtb_resources::vocab;
        match self {
            PoiType::Attractions => {
                vocab::is_attraction_category(category)
                    && !vocab::EXCLUDED_ATTRACTION_CATEGORIES.contains(&category)
            }
            PoiType::Food => {
                vocab::is_food_category(category)
                    && !vocab::EXCLUDED_FOOD_CATEGORIES.contains(&category)
            }
            PoiType::Hotels => vocab::is_hotel_category(category),
        }
    }
}

/// How a row's coordinates were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coords {
    /// WGS-84 as the source gave them
    Wgs84,
    /// the source gave GCJ-02 (Chinese map services); converted to WGS-84 on import
    Gcj02Converted,
    /// the source gave BD-09 (Baidu's offset of GCJ-02); converted to WGS-84 on import
    Bd09Converted,
}

impl Coords {
    pub fn as_str(self) -> &'static str {
        match self {
            Coords::Wgs84 => "wgs84",
            Coords::Gcj02Converted => "gcj02_converted",
            Coords::Bd09Converted => "bd09_converted",
        }
    }
    pub fn parse(s: &str) -> Option<Coords> {
        match s {
            "wgs84" => Some(Coords::Wgs84),
            "gcj02_converted" => Some(Coords::Gcj02Converted),
            "bd09_converted" => Some(Coords::Bd09Converted),
            _ => None,
        }
    }
}

/// Where a row's popularity figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PopularitySource {
    /// a user rating (e.g. 0–5 stars of a map service)
    Rating,
    /// a count of reviews or comments
    ReviewCount,
    /// a hotel's star class
    Stars,
    /// a score the importer derived (documented per adapter in docs/RESOURCES.md)
    Derived,
    /// none: builds rank such rows by the stand-in of docs/RESOURCES.md
    None,
}

impl PopularitySource {
    pub fn as_str(self) -> &'static str {
        match self {
            PopularitySource::Rating => "rating",
            PopularitySource::ReviewCount => "review_count",
            PopularitySource::Stars => "stars",
            PopularitySource::Derived => "derived",
            PopularitySource::None => "none",
        }
    }
    pub fn parse(s: &str) -> Option<PopularitySource> {
        Some(match s {
            "rating" => PopularitySource::Rating,
            "review_count" => PopularitySource::ReviewCount,
            "stars" => PopularitySource::Stars,
            "derived" => PopularitySource::Derived,
            "none" => PopularitySource::None,
            _ => return None,
        })
    }
}

/// One POI of the store (one row of `pois.parquet`).
#[derive(Debug, Clone, PartialEq)]
pub struct PoiRow {
    /// release city name (北京市, 西双版纳傣族自治州)
    pub city: String,
    pub poi_type: PoiType,
    pub name: String,
    /// release vocabulary; `None` when the source's category has no mapping (kept in
    /// `category_raw`, reported in the manifest; builds use the release's fallback)
    pub category: Option<String>,
    /// the source's own category (tags for OSM), as given
    pub category_raw: String,
    /// WGS-84 degrees
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    pub coords: Option<Coords>,
    /// the release rule structure; `None` is unknown (checks skipped)
    pub opening_hours: Option<OpeningHours>,
    /// CNY: a ticket (attractions), per person (food), per night (hotels)
    pub price: Option<f64>,
    pub popularity: Option<f64>,
    pub popularity_source: PopularitySource,
    /// adapter name (release, chinatravel, osm, table)
    pub source: String,
    /// the row's id in its source (an OSM `n123`/`w45`/`r6`, a database id, or city#index)
    pub source_id: String,
    pub licence: String,
}

impl PoiRow {
    /// A row with the required fields; the rest unknown.
    pub fn new(city: &str, poi_type: PoiType, name: &str, source: &str, source_id: String) -> Self {
        PoiRow {
            city: city.to_string(),
            poi_type,
            name: name.to_string(),
            category: None,
            category_raw: String::new(),
            lat: None,
            lng: None,
            coords: None,
            opening_hours: None,
            price: None,
            popularity: None,
            popularity_source: PopularitySource::None,
            source: source.to_string(),
            source_id,
            licence: String::new(),
        }
    }
    /// Set the raw category and its release mapping (`None` when it is not in the release
    /// vocabulary of the row's type).
    pub fn with_category(mut self, raw: &str, mapped: Option<&str>) -> Self {
        self.category_raw = raw.to_string();
        self.category = mapped
            .filter(|c| self.poi_type.in_vocabulary(c))
            .map(str::to_string);
        self
    }
    /// The category a build uses: the mapped one, else the release fallback.
    pub fn category_or_fallback(&self) -> &str {
        self.category
            .as_deref()
            .unwrap_or(self.poi_type.fallback_category())
    }
}

/// GCJ-02 (the offset datum of Chinese map services) to WGS-84, by the standard iterative
/// inverse of the published forward transform; within about 1 m inside China.
pub fn gcj02_to_wgs84(lat: f64, lng: f64) -> (f64, f64) {
    let (mut wlat, mut wlng) = (lat, lng);
    for _ in 0..4 {
        let (glat, glng) = wgs84_to_gcj02(wlat, wlng);
        wlat += lat - glat;
        wlng += lng - glng;
    }
    (wlat, wlng)
}

/// BD-09 (Baidu's datum: GCJ-02 with a further published offset) to WGS-84: Baidu's inverse
/// formula to GCJ-02, then [`gcj02_to_wgs84`].
pub fn bd09_to_wgs84(lat: f64, lng: f64) -> (f64, f64) {
    use std::f64::consts::PI;
    const X_PI: f64 = PI * 3000.0 / 180.0;
    let (x, y) = (lng - 0.0065, lat - 0.006);
    let z = (x * x + y * y).sqrt() - 0.00002 * (y * X_PI).sin();
    let theta = y.atan2(x) - 0.000003 * (x * X_PI).cos();
    gcj02_to_wgs84(z * theta.sin(), z * theta.cos())
}

/// The forward GCJ-02 transform (Krasovsky 1940 ellipsoid constants of the published formula).
fn wgs84_to_gcj02(lat: f64, lng: f64) -> (f64, f64) {
    use std::f64::consts::PI;
    const A: f64 = 6_378_245.0;
    const EE: f64 = 0.006_693_421_622_965_943;
    let (x, y) = (lng - 105.0, lat - 35.0);
    let mut dlat = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * x.abs().sqrt();
    dlat += (20.0 * (6.0 * x * PI).sin() + 20.0 * (2.0 * x * PI).sin()) * 2.0 / 3.0;
    dlat += (20.0 * (y * PI).sin() + 40.0 * (y / 3.0 * PI).sin()) * 2.0 / 3.0;
    dlat += (160.0 * (y / 12.0 * PI).sin() + 320.0 * (y * PI / 30.0).sin()) * 2.0 / 3.0;
    let mut dlng = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * x.abs().sqrt();
    dlng += (20.0 * (6.0 * x * PI).sin() + 20.0 * (2.0 * x * PI).sin()) * 2.0 / 3.0;
    dlng += (20.0 * (x * PI).sin() + 40.0 * (x / 3.0 * PI).sin()) * 2.0 / 3.0;
    dlng += (150.0 * (x / 12.0 * PI).sin() + 300.0 * (x / 30.0 * PI).sin()) * 2.0 / 3.0;
    let rad = lat / 180.0 * PI;
    let magic = 1.0 - EE * rad.sin() * rad.sin();
    let sq = magic.sqrt();
    dlat = (dlat * 180.0) / ((A * (1.0 - EE)) / (magic * sq) * PI);
    dlng = (dlng * 180.0) / (A / sq * rad.cos() * PI);
    (lat + dlat, lng + dlng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcj02_round_trip_is_within_a_metre() {
        // 天安门 in WGS-84; the GCJ-02 offset there is several hundred metres
        let (lat, lng) = (39.90872, 116.39748);
        let (glat, glng) = wgs84_to_gcj02(lat, lng);
        assert!(gtb_resources::geodesy::distance_km((lat, lng), (glat, glng)) > 0.2);
        let back = gcj02_to_wgs84(glat, glng);
        assert!(gtb_resources::geodesy::distance_km((lat, lng), back) < 0.001);
    }

    #[test]
    fn bd09_is_gcj02_shifted_north_east() {
        // a synthetic point in eastern China: Baidu's offset is several hundred metres to the
        // north-east of GCJ-02
        let bd = (31.2, 121.4);
        let (lat, lng) = bd09_to_wgs84(bd.0, bd.1);
        let (glat, glng) = gcj02_to_wgs84(bd.0, bd.1);
        let shift = gtb_resources::geodesy::distance_km((lat, lng), (glat, glng));
        assert!((0.6..1.2).contains(&shift), "{shift}");
        assert!(lat < glat && lng < glng);
    }

    #[test]
    fn categories_outside_the_vocabulary_are_unmapped() {
        let r = PoiRow::new("北京市", PoiType::Attractions, "x", "t", "1".into())
            .with_category("旅游景点", Some("旅游景点"));
        assert_eq!(r.category, None);
        assert_eq!(r.category_or_fallback(), "公园");
        let r = PoiRow::new("北京市", PoiType::Hotels, "x", "t", "1".into())
            .with_category("豪华型", Some("豪华型"));
        assert_eq!(r.category.as_deref(), Some("豪华型"));
    }
}
