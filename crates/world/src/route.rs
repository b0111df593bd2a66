//! `plan_route`, `compare_routes`, `search_along_route`, `maps_weather` and `web_search`.
//!
//! Routes: gtb models one door-to-door time per pair of places in a city
//! (`gtb_plan::day::ride_minutes_km`: 12 minutes plus 2.4 per km, at most 90, on the 5-minute
//! grid) and the way it is made (`ride_mode_km`: on foot within 1.5 km, else by taxi or the
//! group's car), the figures the witness plans use. A pair a witness plan travels (station,
//! airport or car park included) is answered with the witness's own minutes and mode. A venue
//! without coordinates (named restaurants and hotels, modelled venues) is placed at the city
//! centre for the time, and the answer says so (`at_city_centre`); no coordinates are invented
//! for it. `modelled` is `ride` (the model) or `witness` (a witness's transfer, which includes
//! the way into a station or airport or to the car).

use crate::{World, no_data, param};
use gtb_plan::day::{ride_minutes_km, ride_mode_km};
use gtb_resources::CityId;
use gtb_resources::geodesy::distance_km;
use serde_json::{Map, Value, json};

/// A route between two places: minutes, the way, and what is approximate.
pub struct Route {
    pub minutes: u32,
    pub mode: String,
    /// km between real positions (both ends with coordinates)
    pub km: Option<f64>,
    /// ends placed at the city centre (no coordinates)
    pub at_centre: Vec<String>,
    /// the figure a witness plan uses for this pair
    pub witness: bool,
}

impl World<'_> {
    /// The city of a route call: `city`, else the city both ends lie in.
    fn route_city(&self, p: &Map<String, Value>, o: &str, d: &str) -> Option<CityId> {
        if let Some(c) = param(p, "city").and_then(|c| self.city(c)) {
            return Some(c);
        }
        let (a, b) = (self.cities_named(o), self.cities_named(d));
        if let Some(&c) = a.iter().find(|c| b.contains(c)) {
            return Some(c);
        }
        // the first city that knows both ends: listed for witness places, else looked up
        if let (Some(a), Some(b)) = (self.known.get(o), self.known.get(d)) {
            return a.iter().find(|c| b.binary_search(c).is_ok()).copied();
        }
        (0..self.res.cities.len() as CityId).find(|&c| {
            let name = &self.res.cities[c as usize].name;
            let knows = |x: &str| crate::known::knows(&self.db, &self.facts, name, x);
            knows(o) && knows(d)
        })
    }

    /// The modelled route between two places of a city (module doc), `None` when an end is
    /// unknown.
    pub fn route(&self, c: CityId, o: &str, d: &str, driving: bool) -> Option<Route> {
        let city = &self.res.cities[c as usize];
        let mut key = String::new();
        let (from, to) = (self.place_name(c, o), self.place_name(c, d));
        crate::witness::pair_key(&mut key, &city.name, &from, &to);
        if let Some((m, mode)) = self.facts.transfers.get(&key) {
            return Some(Route {
                minutes: *m,
                mode: mode.clone(),
                km: None,
                at_centre: Vec::new(),
                witness: true,
            });
        }
        let mut at_centre = Vec::new();
        let mut end = |x: &str| -> Option<(f64, f64)> {
            if let Some((xy, real)) = self.position(c, x) {
                if !real {
                    at_centre.push(x.to_string());
                }
                return Some(xy);
            }
            let known = self.db.find(x, &city.name).is_some()
                && gtb_plan::parse_stand_in(x).is_none_or(|(kind, _)| kind != "停车场");
            known.then(|| {
                at_centre.push(x.to_string());
                (city.lat, city.lng)
            })
        };
        let (a, b) = (end(o)?, end(d)?);
        let km = distance_km(a, b);
        Some(Route {
            minutes: ride_minutes_km(km),
            mode: ride_mode_km(km, driving).to_string(),
            km: at_centre.is_empty().then_some((km * 10.0).round() / 10.0),
            at_centre,
            witness: false,
        })
    }

    /// A place as a route call names it: the name itself, or for `lng,lat` the attraction
    /// there (as the answers write its `location`), so that a witness's transfer is found
    /// either way.
    fn place_name(&self, c: CityId, place: &str) -> String {
        if !place.trim().starts_with(|ch: char| ch.is_ascii_digit()) {
            return place.to_string();
        }
        let at = self.res.attractions[c as usize]
            .iter()
            .find(|a| format!("{},{}", a.lng, a.lat) == place.trim());
        at.map_or_else(|| place.to_string(), |a| a.name.clone())
    }

    /// The form of a place that a route call can use: its name, or `lng,lat` for an attraction
    /// whose name the release's rules read as a coordinate (it begins with three digits).
    pub fn call_place(&self, c: CityId, name: &str) -> String {
        let digits = name.chars().take(3).filter(char::is_ascii_digit).count() == 3;
        let city = &self.res.cities[c as usize].name;
        match self.db.find(name, city).and_then(|p| self.coords(c, p)) {
            Some((lat, lng)) if digits => format!("{lng},{lat}"),
            _ => name.to_string(),
        }
    }

    fn route_answer(&self, p: &Map<String, Value>, compare: bool) -> Value {
        let (o, d) = (
            param(p, "origin").unwrap_or(""),
            param(p, "destination").unwrap_or(""),
        );
        let asked = param(p, "mode").unwrap_or(if compare { "all" } else { "transit" });
        let ends = [("origin", o.into()), ("destination", d.into())];
        let Some(c) = self.route_city(p, o, d) else {
            return no_data(
                &ends,
                "起点或终点不在本数据集的世界中（请用search_poi返回的名称，并传city）",
            );
        };
        let Some(r) = self.route(c, o, d, asked == "driving") else {
            return no_data(
                &ends,
                "gtb没有该起点或终点的位置（车站、机场和停车场只在见证方案用到的路线中有数据）",
            );
        };
        let mut v = json!({"status": "ok", "origin": o, "destination": d,
            "city": self.res.cities[c as usize].name});
        if compare {
            v["routes"] = json!([{"mode": r.mode, "minutes": r.minutes}]);
            v["recommended"] = r.mode.clone().into();
        } else {
            v["mode_asked"] = asked.into();
            v["mode"] = r.mode.clone().into();
            v["minutes"] = r.minutes.into();
        }
        if let Some(km) = r.km {
            v["distance_km"] = km.into();
        }
        if !r.at_centre.is_empty() {
            // no coordinates: the time is from the city centre (none is invented)
            let which: Vec<&str> = r
                .at_centre
                .iter()
                .map(|x| if x == o { "origin" } else { "destination" })
                .collect();
            v["at_city_centre"] = which.into();
        }
        v["modelled"] = if r.witness { "witness" } else { "ride" }.into();
        v
    }

    pub(crate) fn plan_route(&self, p: &Map<String, Value>) -> Value {
        self.route_answer(p, false)
    }

    pub(crate) fn compare_routes(&self, p: &Map<String, Value>) -> Value {
        self.route_answer(p, true)
    }
}

pub(crate) fn along_route(p: &Map<String, Value>) -> Value {
    no_data(
        &[
            ("origin", param(p, "origin").unwrap_or("").into()),
            ("destination", param(p, "destination").unwrap_or("").into()),
            ("keywords", param(p, "keywords").unwrap_or("").into()),
        ],
        "gtb没有沿途POI数据（服务区、加油站等）；请用search_poi按城市查询",
    )
}

pub(crate) fn weather(p: &Map<String, Value>) -> Value {
    no_data(
        &[
            ("location", param(p, "location").unwrap_or("").into()),
            ("date", param(p, "date").unwrap_or("").into()),
        ],
        "no forecast for this date：gtb的离线数据集没有天气预报",
    )
}

pub(crate) fn web_search(p: &Map<String, Value>) -> Value {
    no_data(
        &[("query", param(p, "query").unwrap_or("").into())],
        "web search is not available offline：请用search_poi、get_poi_detail和交通查询工具",
    )
}
