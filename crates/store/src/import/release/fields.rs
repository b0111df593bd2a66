//! Field readers: the name and type a POI needs, strings, numbers (prices, ratings, review
//! counts) and coordinates (GCJ-02 converted), each fault named with its field.

use super::{Fault, FieldError, NO_NAME, Obj, Point, UNKNOWN_TYPE};
use crate::{Coords, PoiType, gcj02_to_wgs84};
use serde_json::Value;

/// Fields this adapter reads; any other is tolerated and counted in the notes.
pub(super) const KNOWN_FIELDS: [&str; 21] = [
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
pub(super) const PRICE_FIELDS: [&str; 4] = ["price", "cost", "ticket", "avg_price"];
pub(super) const RATING_FIELDS: [&str; 2] = ["rating", "score"];
pub(super) const REVIEW_FIELDS: [&str; 3] = ["review_count", "comment_num", "comments"];
const DATUM_FIELDS: [&str; 2] = ["coord_type", "coordinate_system"];

/// The name and type, without which a POI is dropped.
pub(super) fn required(m: &Obj) -> Result<(&str, PoiType), Fault> {
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
pub(super) fn text<'a>(m: &'a Obj, key: &str) -> Result<Option<&'a str>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(v) => Err(format!("{key} is {}, not a string", describe(v))),
    }
}

/// A JSON value in a few words, for messages.
pub(super) fn describe(v: &Value) -> String {
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
pub(super) fn first_number(
    m: &Obj,
    keys: &[&'static str],
) -> Result<Option<(&'static str, f64)>, FieldError> {
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
pub(super) fn coordinates(m: &Obj) -> Result<Option<Point>, FieldError> {
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
