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
use std::hash::Hash;
use std::path::Path;

/// Calls as (tool, cache key), gathered in parallel and then added to `Runs`.
pub type Batch = Vec<(&'static str, String)>;

/// What a task's trip calls depend on (`World::trip_items`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum TripItem {
    /// a leg (from, to) on a date
    Leg(CityId, CityId, String),
    /// a destination's weather on a date
    Weather(CityId, String),
}

/// What a witness's route calls depend on (`World::place_items`), in a city as the plan
/// names it: a transfer (from, to), or a hotel and a place the witness visits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PlaceItem {
    Transfer(String, String, String),
    Stay(String, String, String),
}

/// The items met so far: a world makes the calls of an item once, however many tasks share
/// it (the calls' keys are deduplicated anyway; this spares building them). Only asked
/// whether it holds an item, never listed, so its hasher is the fast one.
pub struct Seen<T>(gtb_core::FastSet<T>);

impl<T> Default for Seen<T> {
    fn default() -> Self {
        Seen(gtb_core::FastSet::default())
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> Seen<T> {
    /// The items of `sources` (each source's made by `items`) not met before, in order, each
    /// once. The sources' items are made and looked up in parallel (most were met before);
    /// only the rest are added, in order.
    pub fn new_of<S: Sync>(
        &mut self,
        sources: &[S],
        items: impl Fn(&S) -> Vec<T> + Sync,
    ) -> Vec<T> {
        let fresh: Vec<Vec<T>> = (sources.par_iter())
            .map(|s| {
                items(s)
                    .into_iter()
                    .filter(|i| !self.0.contains(i))
                    .collect()
            })
            .collect();
        (fresh.into_iter().flatten())
            .filter(|i| !self.0.contains(i) && self.0.insert(i.clone()))
            .collect()
    }
}

/// Add `x` to `set` when it is not there yet, copied only then (most names repeat across tasks
/// and witnesses).
pub(crate) fn insert_new(set: &mut BTreeSet<String>, x: &str) {
    if !set.contains(x) {
        set.insert(x.to_string());
    }
}

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

/// What the members' tables name for a city, each word as often as a table names it:
/// items, categories, food values, hotel types (blank ones left out).
fn table_words<'t>(t: &'t Task, city: &str) -> Vec<&'t String> {
    let mut out = Vec::new();
    for u in t.user_preferences.values() {
        let g = &u.preference.global_constraints.hotel_preference;
        out.extend(g.prefer.iter().chain(&g.avoid));
        if let Some(cp) = u.preference.city_specific_preferences.get(city) {
            let (a, f) = (&cp.attractions, &cp.food);
            out.extend(a.must_visit.iter().chain(&a.reject_visit));
            let cat = &a.category_pref;
            out.extend(cat.positive.iter().chain(&cat.negative));
            out.extend(f.must_eat.iter().chain(&f.prefer_eat));
            out.extend(f.avoid_eat.iter().chain(&f.reject_eat));
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
        let mut seen = Seen::default();
        gtb_core::jsonl::read_blocks(tasks, BLOCK, |block: Vec<Task>| {
            let items = seen.new_of(&block, |t| self.trip_items(t));
            let batch: Batch = items
                .par_iter()
                .flat_map_iter(|i| self.trip_item_calls(i))
                .collect();
            for t in &block {
                for name in t.metadata.cities.iter().chain([&t.metadata.departure_city]) {
                    if let Some(c) = self.city(name) {
                        let known = words.entry(c).or_default();
                        for w in table_words(t, name) {
                            insert_new(known, w);
                        }
                    }
                }
            }
            // a block's tasks are many small allocations: freed in parallel
            block.into_par_iter().for_each(drop);
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

    /// What a task's trains, flights and weather depend on: each leg on each date of the trip
    /// (from the departure city to each destination and back, and between consecutive
    /// destinations, both ways), and each destination on each date.
    fn trip_items(&self, t: &Task) -> Vec<TripItem> {
        let Some(hub) = self.city(&t.metadata.departure_city) else {
            return Vec::new();
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
        let on_dates = |f: &dyn Fn(&String) -> TripItem| dates.iter().map(f).collect::<Vec<_>>();
        let mut out = Vec::new();
        for &(a, b) in &legs {
            out.extend(on_dates(&|d| TripItem::Leg(a, b, d.clone())));
        }
        for &c in &cities {
            out.extend(on_dates(&|d| TripItem::Weather(c, d.clone())));
        }
        out
    }

    /// The calls of a leg on a date (trains and flights between the cities' forms with and
    /// without 市, and trains by price), or of a destination's weather on a date.
    fn trip_item_calls(&self, item: &TripItem) -> Batch {
        let mut out = Batch::new();
        let calls = &mut out;
        let name = |c: CityId| self.res.cities[c as usize].name.as_str();
        match item {
            TripItem::Leg(a, b, date) => {
                let (fa, fb) = (city_forms(name(*a)), city_forms(name(*b)));
                let pairs = [(&fa[0], &fb[0]), (fa.last().unwrap(), fb.last().unwrap())];
                for (o, d) in pairs {
                    let base = json!({"origin": o, "destination": d, "date": date});
                    add(calls, "travel_search_trains", base.clone());
                    add(calls, "travel_search_flights", base);
                }
                let (o, d) = pairs[0];
                let v = json!({"origin": o, "destination": d, "date": date, "sort_by": "price"});
                add(calls, "travel_search_trains", v);
            }
            TripItem::Weather(c, date) => {
                for f in city_forms(name(*c)) {
                    add(calls, "maps_weather", json!({"location": f, "date": date}));
                }
            }
        }
        out
    }

    /// The routes of a witness's places in a city (`place_item_calls`): each transfer, and
    /// each hotel with each place.
    pub fn place_items(tp: &TaskPlaces) -> impl Iterator<Item = PlaceItem> + '_ {
        let city = || tp.city.clone();
        let transfers =
            (tp.pairs.iter()).map(move |(o, d)| PlaceItem::Transfer(city(), o.clone(), d.clone()));
        let stays = tp.hotels.iter().flat_map(move |h| {
            (tp.places.iter()).map(move |p| PlaceItem::Stay(city(), h.clone(), p.clone()))
        });
        transfers.chain(stays)
    }

    /// The calls of a route item: a transfer (`city` with and without 市, by car, and compared
    /// with and without `city`), or a hotel to and from a place.
    pub fn place_item_calls(&self, item: &PlaceItem) -> Batch {
        let mut out = Batch::new();
        let calls = &mut out;
        let (PlaceItem::Transfer(city, o, d) | PlaceItem::Stay(city, o, d)) = item;
        let Some(c) = self.city(city) else {
            return out;
        };
        let forms = city_forms(city);
        let full = &forms[0];
        let (o, d) = (self.call_place(c, o), self.call_place(c, d));
        match item {
            PlaceItem::Transfer(..) => {
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
            PlaceItem::Stay(..) => {
                for (o, d) in [(&o, &d), (&d, &o)] {
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
        for (a, b, mode) in self.facts.trips.legs() {
            if mode == "自驾" {
                let (o, d) = (
                    &self.res.cities[a as usize].name,
                    &self.res.cities[b as usize].name,
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
