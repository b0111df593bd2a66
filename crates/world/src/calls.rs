//! The calls gtb pre-populates for a split (issue 28, item 2): for each task, the calls an
//! agent makes to plan it, in the forms agents send them (city with and without 市, optional
//! arguments absent or at their defaults, the sort orders). Every call passes the release's
//! parameter rules (`validate`).
//!
//! * `search_poi` per destination and departure city: generic words (all forms and sort
//!   orders for 景点 / 餐厅 / 酒店), every item, category, food value and hotel type in the
//!   members' tables for the city, and every venue name of the city's table (the names the
//!   answers contain);
//! * `get_poi_detail` for every venue id of those cities; `maps_geo` for every venue name and
//!   the cities themselves;
//! * `travel_search_trains` / `travel_search_flights` between the departure city and each
//!   destination both ways and between consecutive destinations both ways, on every date of
//!   the trip;
//! * `maps_weather` per destination and date; `web_search` a few guide queries per destination;
//! * `plan_route` / `compare_routes` for every transfer of the witness plan and between each of
//!   its hotels and each place it visits in that city, both ways; `search_along_route` for its
//!   self-drive legs.

use crate::World;
use crate::cache::cache_key;
use crate::names::{city_forms, venue_id};
use crate::runs::Runs;
use crate::witness::TaskPlaces;
use anyhow::Result;
use gtb_core::task::Task;
use gtb_resources::CityId;
use rayon::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Calls as (tool, cache key), gathered in parallel and then added to `Runs`.
pub type Batch = Vec<(&'static str, String)>;

/// Tasks read at once from a task file.
const BLOCK: usize = 4096;

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Add a call, unless the release's rules refuse it (a place named like `1933老场坊` reads as
/// a coordinate to them: the release never looks such a call up).
fn add(calls: &mut Batch, tool: &'static str, v: Value) {
    let m = obj(v);
    if crate::validate::validate(tool, &m).is_ok() {
        calls.push((tool, cache_key(&m)));
    }
}

/// Add a batch's calls to the runs.
pub fn extend(runs: &mut Runs, batch: Batch) -> Result<()> {
    batch
        .into_iter()
        .try_for_each(|(tool, key)| runs.add(tool, key))
}

/// The dates of a task's trip, `YYYY-MM-DD`.
pub fn trip_dates(t: &Task) -> Vec<String> {
    let Ok(start) = chrono::NaiveDate::parse_from_str(&t.time, "%Y-%m-%d") else {
        return Vec::new();
    };
    (0..t.days().unwrap_or(1).max(1))
        .filter_map(|d| start.checked_add_days(chrono::Days::new(d as u64)))
        .map(|d| d.format("%Y-%m-%d").to_string())
        .collect()
}

/// What the members' tables name for a city: items, categories, food values, hotel types.
fn table_words(t: &Task, city: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for u in t.user_preferences.values() {
        let g = &u.preference.global_constraints.hotel_preference;
        out.extend(g.prefer.iter().chain(&g.avoid).cloned());
        if let Some(cp) = u.preference.city_specific_preferences.get(city) {
            let (a, f) = (&cp.attractions, &cp.food);
            out.extend(a.must_visit.iter().chain(&a.reject_visit).cloned());
            out.extend(
                a.category_pref
                    .positive
                    .iter()
                    .chain(&a.category_pref.negative)
                    .cloned(),
            );
            out.extend(
                f.must_eat
                    .iter()
                    .chain(&f.prefer_eat)
                    .chain(&f.avoid_eat)
                    .chain(&f.reject_eat)
                    .cloned(),
            );
        }
    }
    out.retain(|w| !w.trim().is_empty());
    out
}

impl World<'_> {
    /// The calls of a task file (module doc): each task's trips, and each city's searches for
    /// the words the members' tables name there. The file is read in blocks, never whole.
    pub fn task_calls(&self, tasks: &Path, runs: &mut Runs) -> Result<()> {
        let mut words: BTreeMap<CityId, BTreeSet<String>> = BTreeMap::new();
        gtb_core::jsonl::read_blocks(tasks, BLOCK, |block: Vec<Task>| {
            let batch: Batch = block
                .par_iter()
                .flat_map_iter(|t| self.trip_calls(t))
                .collect();
            for t in &block {
                for name in t.metadata.cities.iter().chain([&t.metadata.departure_city]) {
                    if let Some(c) = self.city(name) {
                        words.entry(c).or_default().extend(table_words(t, name));
                    }
                }
            }
            extend(runs, batch)
        })?;
        let cities: Vec<(&CityId, &BTreeSet<String>)> = words.iter().collect();
        let batch: Batch = cities
            .par_iter()
            .flat_map_iter(|(c, w)| self.city_calls(**c, w))
            .collect();
        extend(runs, batch)
    }

    fn city_calls(&self, c: CityId, words: &BTreeSet<String>) -> Batch {
        let mut out = Batch::new();
        let calls = &mut out;
        let city = &self.res.cities[c as usize].name;
        let forms = city_forms(city);
        let mut poi = |v: Value| add(calls, "search_poi", v);
        for w in ["景点", "餐厅", "酒店"] {
            poi(json!({"keywords": w, "city": city, "page": 2}));
            for s in ["relevance", "rating", "price_low", "price_high", "distance"] {
                poi(json!({"keywords": w, "city": city, "sort_by": s}));
            }
        }
        for f in &forms {
            for w in [
                "景点", "餐厅", "酒店", "美食", "景区", "住宿", "宾馆", "小吃",
            ] {
                poi(json!({"keywords": w, "city": f}));
                poi(json!({"keywords": w, "city": f, "page": 1, "page_size": 10}));
            }
            for w in words {
                poi(json!({"keywords": w, "city": f}));
            }
        }
        for f in &forms {
            add(calls, "maps_geo", json!({"address": f}));
            add(
                calls,
                "web_search",
                json!({"query": format!("{f}旅游攻略")}),
            );
            add(
                calls,
                "web_search",
                json!({"query": format!("{f}美食推荐")}),
            );
        }
        for p in self.db.city(city) {
            add(
                calls,
                "get_poi_detail",
                json!({"id": venue_id(city, &p.name)}),
            );
            add(calls, "maps_geo", json!({"address": p.name}));
            for f in &forms {
                add(calls, "search_poi", json!({"keywords": p.name, "city": f}));
                add(calls, "maps_geo", json!({"address": p.name, "city": f}));
            }
        }
        out
    }

    /// Trains, flights and weather of a task's legs and dates.
    fn trip_calls(&self, t: &Task) -> Batch {
        let mut out = Batch::new();
        let calls = &mut out;
        let Some(hub) = self.city(&t.metadata.departure_city) else {
            return out;
        };
        let cities: Vec<CityId> = t
            .metadata
            .cities
            .iter()
            .filter_map(|c| self.city(c))
            .collect();
        let mut legs = BTreeSet::new();
        for &c in &cities {
            legs.insert((hub, c));
            legs.insert((c, hub));
        }
        for w in cities.windows(2) {
            legs.insert((w[0], w[1]));
            legs.insert((w[1], w[0]));
        }
        let dates = trip_dates(t);
        let name = |c: CityId| self.res.cities[c as usize].name.as_str();
        for &(a, b) in &legs {
            let (fa, fb) = (city_forms(name(a)), city_forms(name(b)));
            let pairs = [(&fa[0], &fb[0]), (fa.last().unwrap(), fb.last().unwrap())];
            for date in &dates {
                for (o, d) in pairs {
                    let base = json!({"origin": o, "destination": d, "date": date});
                    add(calls, "travel_search_trains", base.clone());
                    add(calls, "travel_search_flights", base);
                }
                let (o, d) = pairs[0];
                let v = json!({"origin": o, "destination": d, "date": date, "sort_by": "price"});
                add(calls, "travel_search_trains", v);
            }
        }
        for &c in &cities {
            for f in city_forms(name(c)) {
                for date in &dates {
                    add(calls, "maps_weather", json!({"location": f, "date": date}));
                }
            }
        }
        out
    }

    /// Routes of a witness's places in a city: each transfer (`city` with and without 市, by
    /// car, and compared with and without `city`), and each hotel to and from each place.
    pub fn place_calls(&self, tp: &TaskPlaces) -> Batch {
        let mut out = Batch::new();
        let calls = &mut out;
        let forms = city_forms(&tp.city);
        let full = &forms[0];
        let Some(c) = self.city(&tp.city) else {
            return out;
        };
        let place = |x: &String| self.call_place(c, x);
        for (o, d) in tp.pairs.iter().map(|(o, d)| (place(o), place(d))) {
            let od = |extra: Value| {
                let mut v = json!({"origin": o, "destination": d});
                if let (Some(v), Some(e)) = (v.as_object_mut(), extra.as_object()) {
                    v.extend(e.clone());
                }
                v
            };
            for f in &forms {
                add(calls, "plan_route", od(json!({"city": f})));
            }
            add(
                calls,
                "plan_route",
                od(json!({"city": full, "mode": "driving"})),
            );
            add(calls, "compare_routes", od(json!({})));
            add(calls, "compare_routes", od(json!({"city": full})));
        }
        for h in tp.hotels.iter().map(place) {
            for p in tp.places.iter().map(place) {
                for (o, d) in [(&h, &p), (&p, &h)] {
                    let v = json!({"origin": o, "destination": d, "city": full});
                    add(calls, "plan_route", v.clone());
                    add(calls, "compare_routes", v);
                }
            }
        }
        out
    }

    /// `search_along_route` for the witnesses' self-drive legs.
    pub fn along_route_calls(&self) -> Batch {
        let mut out = Batch::new();
        for (a, b, mode, _) in self.facts.trips.keys() {
            if mode == "自驾" {
                let (o, d) = (
                    &self.res.cities[*a as usize].name,
                    &self.res.cities[*b as usize].name,
                );
                for k in ["服务区", "加油站", "餐厅"] {
                    add(
                        &mut out,
                        "search_along_route",
                        json!({"origin": o, "destination": d, "keywords": k}),
                    );
                }
            }
        }
        out
    }
}
