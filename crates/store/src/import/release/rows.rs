//! The importer's work per POI: city keys, drop reports, rows from the fields, and the
//! tallies behind the source's notes.

use super::fields::{
    KNOWN_FIELDS, PRICE_FIELDS, RATING_FIELDS, REVIEW_FIELDS, coordinates, describe, first_number,
    required, text,
};
use super::hours::opening_hours;
use super::{ADAPTER, BAD_FIELD, BROKEN_HOURS, CityKey, Fault, Importer, MAX_EXTRA_FIELDS, Obj};
use crate::{Coords, PoiRow, PoiType, PopularitySource};
use serde_json::Value;
use std::collections::BTreeMap;

/// What the import saw, for the source's notes in the manifest.
#[derive(Default)]
pub(super) struct Stats {
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
    pub(super) fn notes(&self) -> BTreeMap<String, Value> {
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

impl Importer<'_, '_> {
    /// The store's name for a city key: the release name gtb knows when the key is it or its
    /// short form (北京 -> 北京市), else the key as written (a release city gtb has no row
    /// for is kept; builds exclude it with a reason).
    pub(super) fn city(&mut self, key: String) -> CityKey {
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

    pub(super) fn report(
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

    pub(super) fn poi(&mut self, city: &CityKey, index: usize, v: Value) {
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
