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
