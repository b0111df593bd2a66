//! The release's parameter rules for its ten tools (`tools/*.py`, `_validate_parameters`),
//! restated from their behaviour: unknown and missing parameters, JSON types (nullable
//! optionals), then each tool's own checks (empty strings, enums, ranges, `YYYY-MM-DD` dates,
//! `HH:MM` times, `lon,lat` coordinates, `city` for transit routes). The release runs these
//! before the cache lookup, so a call that fails them never reaches a cache file; every call
//! gtb pre-populates passes them (`tests/it/world.rs`).
//!
//! One check is not repeated here: the administrative-name check of city parameters
//! (`tools/get_adcode.py` over an `adcode.txt`), which needs the national code table. gtb
//! only writes city names it knows (a destination or hub as `cities.csv` names it, with and
//! without 市), and the test suite checks those forms against the CPCA codes when
//! `../shared/reference_data/cpca_adcodes` is there.

use crate::get;
use serde_json::{Map, Value};

/// A parameter's JSON type in a tool's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Str,
    Int,
    Num,
    /// `anyOf: [string, null]`
    OptStr,
    /// `anyOf: [number, null]`
    OptNum,
}

/// A parameter: name, type, required.
pub type Param = (&'static str, Ty, bool);

/// The parameters of the two timetable searches, before the one each has of its own.
const TRIP: [Param; 6] = [
    ("origin", Ty::Str, true),
    ("destination", Ty::Str, true),
    ("date", Ty::Str, true),
    ("depart_time_start", Ty::OptStr, false),
    ("depart_time_end", Ty::OptStr, false),
    ("sort_by", Ty::OptStr, false),
];

/// The two ends of the three route tools.
const ENDS: [Param; 2] = [("origin", Ty::Str, true), ("destination", Ty::Str, true)];

/// A tool's parameters, in the order of its schema.
pub fn schema(tool: &str) -> Option<Vec<Param>> {
    let (shared, own) = schema_parts(tool)?;
    Some(shared.iter().chain(own).copied().collect())
}

/// A tool's parameters as the shared ones and its own (`schema` without a list built).
fn schema_parts(tool: &str) -> Option<(&'static [Param], &'static [Param])> {
    use Ty::*;
    let own: &'static [Param] = match tool {
        "maps_geo" => &[("address", Str, true), ("city", OptStr, false)],
        "maps_weather" => &[
            ("location", Str, true),
            ("date", Str, true),
            ("days", Int, false),
        ],
        "web_search" => &[("query", Str, true)],
        "get_poi_detail" => &[("id", Str, true)],
        "search_poi" => &[
            ("keywords", Str, true),
            ("city", Str, true),
            ("region", OptStr, false),
            ("location", OptStr, false),
            ("radius_km", OptNum, false),
            ("price_min", OptNum, false),
            ("price_max", OptNum, false),
            ("sort_by", OptStr, false),
            ("page", Int, false),
            ("page_size", Int, false),
        ],
        "travel_search_trains" => &[("train_type_filter", OptStr, false)],
        "travel_search_flights" => &[("airport", OptStr, false)],
        "plan_route" => &[
            ("mode", Str, false),
            ("city", OptStr, false),
            ("date", OptStr, false),
            ("time", OptStr, false),
        ],
        "compare_routes" => &[("city", OptStr, false)],
        "search_along_route" => &[
            ("keywords", Str, true),
            ("mode", Str, false),
            ("city", OptStr, false),
            ("route_range", Int, false),
            ("route_index", Int, false),
            ("poi_limit", Int, false),
        ],
        _ => return None,
    };
    let shared: &'static [Param] = match tool {
        "travel_search_trains" | "travel_search_flights" => &TRIP,
        "plan_route" | "compare_routes" | "search_along_route" => &ENDS,
        _ => &[],
    };
    Some((shared, own))
}

fn type_ok(v: &Value, ty: Ty) -> bool {
    // Python: bool is an int; int and float are numbers
    let int = v.is_i64() || v.is_u64() || v.is_boolean();
    match ty {
        Ty::Str => v.is_string(),
        Ty::Int => int,
        Ty::Num => int || v.is_f64(),
        Ty::OptStr => v.is_null() || v.is_string(),
        Ty::OptNum => v.is_null() || int || v.is_f64(),
    }
}

/// The release's verdict on a call: `Err(message)` naming the problem, `Ok(())` when the
/// release would look the call up. An unknown tool is an error too.
pub fn validate(tool: &str, p: &Map<String, Value>) -> Result<(), String> {
    let Some((shared, own)) = schema_parts(tool) else {
        return Err(format!("unknown tool {tool:?}"));
    };
    let schema = || shared.iter().chain(own);
    for k in p.keys() {
        if !schema().any(|(n, _, _)| n == k) {
            let names: Vec<&str> = schema().map(|s| s.0).collect();
            return Err(format!("未知参数: '{k}'，允许的参数为: {names:?}"));
        }
    }
    for (n, _, required) in schema() {
        if *required && get(p, n).is_none() {
            return Err(format!("缺少必填参数: '{n}'"));
        }
    }
    for (n, ty, _) in schema() {
        if let Some(v) = get(p, n)
            && !type_ok(v, *ty)
        {
            return Err(format!("参数 '{n}' 类型错误，实际值为: {v}"));
        }
    }
    specific(tool, p)
}

fn s<'a>(p: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    get(p, k).and_then(Value::as_str)
}

fn num(p: &Map<String, Value>, k: &str) -> Option<f64> {
    get(p, k).and_then(|v| v.as_f64().or(v.as_bool().map(|b| b as u8 as f64)))
}

fn nonempty(p: &Map<String, Value>, k: &str) -> Result<(), String> {
    match s(p, k) {
        Some(v) if v.trim().is_empty() => Err(format!("参数 '{k}' 不能为空")),
        _ => Ok(()),
    }
}

fn one_of(p: &Map<String, Value>, k: &str, allowed: &[&str]) -> Result<(), String> {
    match s(p, k) {
        Some(v) if !allowed.contains(&v) => Err(format!(
            "参数 '{k}' 值错误，应为 {allowed:?} 之一，实际值为: '{v}'"
        )),
        _ => Ok(()),
    }
}

fn range(p: &Map<String, Value>, k: &str, lo: f64, hi: f64) -> Result<(), String> {
    match num(p, k) {
        Some(v) if v < lo || v > hi => {
            Err(format!("参数 '{k}' 超出范围 [{lo}, {hi}]，实际值为: {v}"))
        }
        _ => Ok(()),
    }
}

/// `YYYY-MM-DD` and a real date.
pub fn date_ok(d: &str) -> bool {
    d.len() == 10
        && d.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
        && chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok()
}

/// `HH:MM`, 00:00 to 23:59.
pub fn time_ok(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 5
        && b[2] == b':'
        && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit())
        && t[..2].parse::<u32>().is_ok_and(|h| h <= 23)
        && t[3..].parse::<u32>().is_ok_and(|m| m <= 59)
}

fn date(p: &Map<String, Value>, k: &str) -> Result<(), String> {
    match s(p, k) {
        Some(d) if !date_ok(d) => Err(format!("日期格式错误: \"{d}\"，应为 \"YYYY-MM-DD\"")),
        _ => Ok(()),
    }
}

fn time(p: &Map<String, Value>, k: &str) -> Result<(), String> {
    match s(p, k) {
        Some(t) if !time_ok(t) => Err(format!(
            "参数 '{k}' 格式错误，应为 'HH:MM' 格式，实际值为: '{t}'"
        )),
        _ => Ok(()),
    }
}

/// A place given as coordinates (its first three characters digits) must be `lon,lat` in range.
fn place(p: &Map<String, Value>, k: &str) -> Result<(), String> {
    nonempty(p, k)?;
    let Some(v) = s(p, k).map(str::trim) else {
        return Ok(());
    };
    if v.chars().take(3).filter(char::is_ascii_digit).count() < 3 {
        return Ok(());
    }
    let parts: Vec<&str> = v.split(',').collect();
    let parsed: Option<Vec<f64>> = parts.iter().map(|x| x.trim().parse().ok()).collect();
    match parsed.as_deref() {
        Some([lon, lat]) if (-180.0..=180.0).contains(lon) && (-90.0..=90.0).contains(lat) => {
            Ok(())
        }
        _ => Err(format!(
            "参数 '{k}' 坐标格式错误，应为 '经度,纬度'，实际值为: '{v}'"
        )),
    }
}

fn window(p: &Map<String, Value>) -> Result<(), String> {
    time(p, "depart_time_start")?;
    time(p, "depart_time_end")?;
    match (s(p, "depart_time_start"), s(p, "depart_time_end")) {
        (Some(a), Some(b)) if a > b => {
            Err("参数 'depart_time_start' 不能晚于 'depart_time_end'".to_string())
        }
        _ => Ok(()),
    }
}

fn specific(tool: &str, p: &Map<String, Value>) -> Result<(), String> {
    match tool {
        "maps_geo" => nonempty(p, "address"),
        "web_search" => nonempty(p, "query"),
        "get_poi_detail" => nonempty(p, "id"),
        "maps_weather" => {
            nonempty(p, "location")?;
            date(p, "date")?;
            range(p, "days", 0.0, 4.0)
        }
        "search_poi" => search_poi(p),
        "travel_search_trains" | "travel_search_flights" => {
            nonempty(p, "origin")?;
            nonempty(p, "destination")?;
            date(p, "date")?;
            window(p)?;
            if tool == "travel_search_trains" {
                one_of(
                    p,
                    "sort_by",
                    &["depart_time", "depart_time_desc", "duration", "price"],
                )?;
                one_of(
                    p,
                    "train_type_filter",
                    &["high_speed", "high_speed_and_emu", "regular"],
                )
            } else {
                one_of(p, "sort_by", &["depart_time", "price", "duration"])
            }
        }
        "plan_route" => {
            place(p, "origin")?;
            place(p, "destination")?;
            one_of(p, "mode", &["transit", "driving", "walking", "bicycling"])?;
            date(p, "date")?;
            time(p, "time")?;
            let transit = s(p, "mode").is_none_or(|m| m == "transit");
            if transit && s(p, "city").is_none_or(str::is_empty) {
                return Err("transit 模式下参数 'city' 必须传入".to_string());
            }
            Ok(())
        }
        "compare_routes" => {
            place(p, "origin")?;
            place(p, "destination")
        }
        "search_along_route" => {
            place(p, "origin")?;
            place(p, "destination")?;
            nonempty(p, "keywords")?;
            one_of(p, "mode", &["driving", "walking", "bicycling"])?;
            range(p, "route_range", 1.0, 3000.0)?;
            range(p, "route_index", 1.0, f64::INFINITY)?;
            range(p, "poi_limit", 1.0, 50.0)
        }
        _ => Ok(()),
    }
}

fn search_poi(p: &Map<String, Value>) -> Result<(), String> {
    nonempty(p, "keywords")?;
    nonempty(p, "city")?;
    one_of(
        p,
        "sort_by",
        &["relevance", "distance", "rating", "price_low", "price_high"],
    )?;
    range(p, "page_size", 1.0, 20.0)?;
    range(p, "page", 1.0, f64::INFINITY)?;
    if num(p, "radius_km").is_some_and(|r| r <= 0.0) {
        return Err("参数 'radius_km' 必须大于0".to_string());
    }
    range(p, "price_min", 0.0, f64::INFINITY)?;
    range(p, "price_max", 0.0, f64::INFINITY)?;
    if let (Some(a), Some(b)) = (num(p, "price_min"), num(p, "price_max"))
        && a > b
    {
        return Err("参数 'price_min' 不能大于 'price_max'".to_string());
    }
    if s(p, "location").is_some() {
        place(p, "location")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(tool: &str, json: &str) -> Result<(), String> {
        validate(tool, &serde_json::from_str(json).unwrap())
    }

    #[test]
    fn issue28_the_release_rules() {
        assert!(v("search_poi", r#"{"keywords": "景点", "city": "杭州"}"#).is_ok());
        assert!(
            v("search_poi", r#"{"keywords": "景点"}"#)
                .unwrap_err()
                .contains("city")
        );
        assert!(
            v(
                "search_poi",
                r#"{"keywords": "景点", "city": "杭州", "foo": 1}"#
            )
            .is_err()
        );
        assert!(v("search_poi", r#"{"keywords": " ", "city": "杭州"}"#).is_err());
        assert!(
            v(
                "search_poi",
                r#"{"keywords": "a", "city": "杭州", "page_size": 21}"#
            )
            .is_err()
        );
        assert!(
            v(
                "search_poi",
                r#"{"keywords": "a", "city": "杭州", "sort_by": "best"}"#
            )
            .is_err()
        );
        assert!(
            v(
                "search_poi",
                r#"{"keywords": "a", "city": "杭州", "sort_by": null}"#
            )
            .is_ok()
        );
        assert!(
            v(
                "search_poi",
                r#"{"keywords": "a", "city": "杭州", "page": "1"}"#
            )
            .is_err()
        );
        assert!(
            v(
                "travel_search_trains",
                r#"{"origin": "北京", "destination": "杭州", "date": "2026-02-30"}"#
            )
            .is_err()
        );
        assert!(v("travel_search_trains", r#"{"origin": "北京", "destination": "杭州", "date": "2026-05-01", "depart_time_start": "9:00"}"#).is_err());
        assert!(v("travel_search_flights", r#"{"origin": "北京", "destination": "杭州", "date": "2026-05-01", "sort_by": "depart_time_desc"}"#).is_err());
        assert!(
            v(
                "plan_route",
                r#"{"origin": "西湖", "destination": "灵隐寺"}"#
            )
            .unwrap_err()
            .contains("transit")
        );
        assert!(
            v(
                "plan_route",
                r#"{"origin": "西湖", "destination": "灵隐寺", "mode": "driving"}"#
            )
            .is_ok()
        );
        assert!(
            v(
                "plan_route",
                r#"{"origin": "120.1,30.2,1", "destination": "灵隐寺", "mode": "driving"}"#
            )
            .is_err()
        );
        assert!(
            v(
                "maps_weather",
                r#"{"location": "杭州", "date": "2026-05-01", "days": 5}"#
            )
            .is_err()
        );
        assert!(
            v(
                "search_along_route",
                r#"{"origin": "a", "destination": "b", "keywords": "服务区", "mode": "transit"}"#
            )
            .is_err()
        );
        assert!(v("nope", "{}").is_err());
    }
}
