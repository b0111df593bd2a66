//! What the witness plans of a split fix in its world: the intercity trips they take (each
//! leg's mode, date, departure and arrival) and the transfers between their places (minutes
//! and mode), so that the tool answers carry exactly the figures the witnesses use.

use crate::names::minutes;
use gtb_core::FastMap as HashMap;
use gtb_plan::{Activity, Plan, Segment};
use gtb_resources::{CityId, Resources};
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The witnesses' intercity trips: per leg (from, to), mode and date, the departures
/// (minutes after midnight) with their trip's minutes. A world looks a leg up for every
/// timetable answer it writes (millions at training scale), so the levels are hashed and the
/// names looked up borrowed, never built into a key; [`Trips::legs`] lists them sorted.
#[derive(Debug, Default, Clone)]
pub struct Trips(HashMap<(CityId, CityId), Modes>);

/// Per mode and date, a leg's trips.
pub type Modes = HashMap<String, HashMap<String, BTreeSet<(u32, u32)>>>;

impl Trips {
    /// Add a trip from `a` to `b` by `mode` on `date`: (departure, minutes).
    pub fn insert(&mut self, (a, b): (CityId, CityId), mode: &str, date: &str, trip: (u32, u32)) {
        let modes = self.0.entry((a, b)).or_default();
        let dates = modes.entry(mode.to_string()).or_default();
        dates.entry(date.to_string()).or_default().insert(trip);
    }

    /// Whether the trip from `a` to `b` by `mode` on `date` is there.
    pub fn has(&self, leg: (CityId, CityId), mode: &str, date: &str, trip: (u32, u32)) -> bool {
        let dates = self.0.get(&leg).and_then(|m| m.get(mode));
        dates
            .and_then(|d| d.get(date))
            .is_some_and(|t| t.contains(&trip))
    }

    /// The trips from `a` to `b`, per mode and date (a timetable looks its leg up once for
    /// all its modes).
    pub fn leg(&self, (a, b): (CityId, CityId)) -> Option<&Modes> {
        self.0.get(&(a, b))
    }

    /// Every (from, to, mode) with a trip on some date, sorted.
    pub fn legs(&self) -> Vec<(CityId, CityId, &str)> {
        let mut out: Vec<_> = (self.0.iter())
            .flat_map(|(&(a, b), modes)| modes.keys().map(move |mode| (a, b, mode.as_str())))
            .collect();
        out.sort_unstable();
        out
    }
}

/// A transfer in a city between two named places (`pair_key`).
pub type PairKey = String;

/// The key of a transfer in a city between two named places: the three names, each but the
/// last after its length (so no two triples share a key), written into `out` (cleared first),
/// so that a lookup needs no new string.
pub fn pair_key(out: &mut String, city: &str, from: &str, to: &str) {
    use std::fmt::Write;
    out.clear();
    // writing to a String cannot fail
    let _ = write!(out, "{}:{city}{}:{from}{to}", city.len(), from.len());
}

/// Per pair of places in a city (`pair_key`), a transfer's minutes and mode.
pub type Transfers = HashMap<PairKey, (u32, String)>;

/// A trip from a witness: (from, to), mode, date, (departure, minutes).
type Trip = ((CityId, CityId), String, String, (u32, u32));

/// The witnesses' facts.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    /// the intercity trips, per leg, mode and date
    pub trips: Trips,
    /// transfer minutes and mode per pair of places (the first witness's, in file order), by
    /// `pair_key`; only looked up, never listed
    pub transfers: Transfers,
    /// the places the witnesses name per city: sights, meals, hotels and terminals
    pub places: BTreeMap<String, BTreeSet<String>>,
}

/// The places one witness uses in one city, in plan order.
#[derive(Debug, Default, Clone)]
pub struct TaskPlaces {
    pub task_id: String,
    pub city: String,
    pub places: Vec<String>,
    pub hotels: Vec<String>,
    /// the transfers the witness makes here, (from, to) in plan order
    pub pairs: Vec<(String, String)>,
}

/// Span in minutes from `a` to `b` (`HH:MM`), across midnight when `b` is earlier.
pub fn span(a: &str, b: &str) -> Option<u32> {
    let (a, b) = (minutes(a)?, minutes(b)?);
    Some(if b >= a { b - a } else { b + 24 * 60 - a })
}

/// A line of `plans.jsonl` as the world reads it: a line whose plan is not one (a task
/// without a witness has none) fixes nothing.
#[derive(Deserialize)]
struct WitnessLine {
    task_id: String,
    #[serde(default)]
    plan: Option<Box<RawValue>>,
}

impl WitnessLine {
    fn plan(&self) -> Option<Plan> {
        gtb_plan::from_json(self.plan.as_ref()?.get()).ok()
    }
}

/// Plan lines read at once when streaming a plans file.
const BLOCK: usize = 4096;

impl Facts {
    /// The facts of a plans file, read in blocks (a missing file: none). `each` gets the
    /// places of each block's witnesses, in file order, and the file is never held whole.
    /// A block's plans are read in parallel, each against the facts as the block found them
    /// (`Found`: most of a witness's facts are already there); what is new is added in file
    /// order, so the facts are those of adding the witnesses one by one.
    pub fn read(
        res: &Resources,
        path: &Path,
        mut each: impl FnMut(Vec<TaskPlaces>) -> anyhow::Result<()>,
    ) -> anyhow::Result<Facts> {
        let mut f = Facts::default();
        if !path.exists() {
            return Ok(f);
        }
        gtb_core::jsonl::read_blocks(path, BLOCK, |lines: Vec<WitnessLine>| {
            let found: Vec<Found> = (lines.par_iter())
                .filter_map(|l| Some(f.found(res, &l.task_id, &l.plan()?)))
                .collect();
            let mut places = Vec::new();
            for x in found {
                places.extend(f.add(x));
            }
            each(places)
        })?;
        Ok(f)
    }

    /// What a witness adds to these facts, and the places it uses per city (by city).
    fn found(&self, res: &Resources, task_id: &str, plan: &Plan) -> Found {
        let mut x = Found::default();
        let mut per_city: BTreeMap<&str, TaskPlaces> = BTreeMap::new();
        for day in &plan.days {
            for seg in &day.city_segments {
                match seg {
                    Segment::Intercity(t) => {
                        let (Some(a), Some(b)) =
                            (res.city_id(&t.from_city), res.city_id(&t.to_city))
                        else {
                            continue;
                        };
                        if let (Some(d), Some(m)) =
                            (minutes(&t.start_time), span(&t.start_time, &t.end_time))
                            && !self.trips.has((a, b), &t.transport_mode, &day.date, (d, m))
                        {
                            let (mode, date) = (t.transport_mode.clone(), day.date.clone());
                            x.trips.push(((a, b), mode, date, (d, m)));
                        }
                    }
                    Segment::City(block) => {
                        let city = block.city.as_str();
                        let tp = per_city.entry(city).or_insert_with(|| TaskPlaces {
                            task_id: task_id.to_string(),
                            city: city.to_string(),
                            ..TaskPlaces::default()
                        });
                        // one entry per block: a world reads a witness per task
                        let known = self.places.get(city);
                        if known.is_none() {
                            x.places.push((city.to_string(), None));
                        }
                        let mut key = String::new();
                        for a in &block.activities {
                            let facts = (known, &self.transfers, &mut key);
                            found_activity(facts, city, a, tp, &mut x);
                        }
                    }
                }
            }
        }
        x.task_places = per_city.into_values().collect();
        x
    }

    /// Add what a witness found new (`found`), unless an earlier witness of its block added
    /// it first; returns its places per city.
    fn add(&mut self, x: Found) -> Vec<TaskPlaces> {
        for (leg, mode, date, trip) in x.trips {
            self.trips.insert(leg, &mode, &date, trip);
        }
        for (city, place) in x.places {
            let places = self.places.entry(city).or_default();
            if let Some(p) = place
                && !places.contains(&p)
            {
                places.insert(p);
            }
        }
        for (key, figure) in x.transfers {
            // the first witness's figures stay
            self.transfers.entry(key).or_insert(figure);
        }
        x.task_places
    }
}

/// What one witness adds to the facts as its block found them (`Facts::found`), in plan order.
#[derive(Default)]
struct Found {
    trips: Vec<Trip>,
    /// (city, place): a city met first without a place, then the places not known there
    places: Vec<(String, Option<String>)>,
    transfers: Vec<(PairKey, (u32, String))>,
    task_places: Vec<TaskPlaces>,
}

/// An activity's facts: its places in the city that the facts do not know yet (`known`), the
/// witness's own places, and a transfer's minutes and mode unless the facts have the pair.
fn found_activity(
    (known, transfers, key): (Option<&BTreeSet<String>>, &Transfers, &mut String),
    city: &str,
    a: &Activity,
    tp: &mut TaskPlaces,
    x: &mut Found,
) {
    let mut place = |p: &String| {
        if !known.is_some_and(|k| k.contains(p)) {
            x.places.push((city.to_string(), Some(p.clone())));
        }
    };
    match a {
        Activity::Attraction { location, .. } | Activity::Food { location, .. } => {
            place(location);
            if !tp.places.contains(location) {
                tp.places.push(location.clone());
            }
        }
        Activity::Hotel { location, .. } => {
            place(location);
            if !tp.hotels.contains(location) {
                tp.hotels.push(location.clone());
            }
        }
        Activity::IntracityTransport {
            transport_mode,
            from,
            to,
            start_time,
            end_time,
            ..
        } => {
            place(from);
            place(to);
            tp.pairs.push((from.clone(), to.clone()));
            pair_key(key, city, from, to);
            if let Some(m) = span(start_time, end_time)
                && !transfers.contains_key(key.as_str())
            {
                x.transfers.push((key.clone(), (m, transport_mode.clone())));
            }
        }
        Activity::Rest { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A witness line: a day with a trip from 上海市 to 杭州市 departing at `depart`, then in 杭州
    /// a transfer from 西湖 to `to` taking `minutes`.
    fn line(task: &str, depart: &str, to: &str, minutes: u32) -> String {
        let end = format!("10:{minutes:02}");
        let plan = json!({"days": [{"day": 1, "date": "2026-05-01", "city_segments": [
            {"type": "intercity_transport", "from_city": "上海市", "to_city": "杭州市",
             "transport_mode": "高铁", "start_time": depart, "end_time": "09:00", "avg_cost": 73},
            {"city": "杭州市", "activities": [
                {"type": "intracity_transport", "transport_mode": "taxi", "from": "西湖",
                 "to": to, "start_time": "10:00", "end_time": end, "participants": ["a"]}]}]}]});
        json!({"task_id": task, "plan": plan}).to_string()
    }

    /// Issue 27: a block's witnesses are read in parallel, each against the facts before the
    /// block, and added in file order: the facts are those of adding them one by one (the
    /// first witness's transfer figures stay), and each witness still lists its own places.
    #[test]
    fn issue27_facts_read_in_parallel_are_those_of_the_witnesses_in_order() {
        let res = gtb_resources::load(&gtb_core::config::Paths::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.jsonl");
        let lines = [
            line("t1", "08:00", "灵隐寺", 20),
            line("t2", "08:00", "灵隐寺", 35),
            line("t3", "08:30", "河坊街", 15),
            json!({"task_id": "t4", "plan": null}).to_string(),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let mut seen = Vec::new();
        let f = Facts::read(&res, &path, |places| {
            seen.extend(
                places
                    .into_iter()
                    .map(|tp| (tp.task_id, tp.city, tp.places, tp.pairs)),
            );
            Ok(())
        })
        .unwrap();
        let mut key = String::new();
        pair_key(&mut key, "杭州市", "西湖", "灵隐寺");
        assert_eq!(f.transfers[&key], (20, "taxi".to_string()));
        pair_key(&mut key, "杭州市", "西湖", "河坊街");
        assert_eq!(f.transfers[&key], (15, "taxi".to_string()));
        let names: Vec<&str> = f.places["杭州市"].iter().map(String::as_str).collect();
        assert_eq!(names, ["河坊街", "灵隐寺", "西湖"]);
        let leg = (
            res.city_id("上海市").unwrap(),
            res.city_id("杭州市").unwrap(),
        );
        let trips = &f.trips.leg(leg).unwrap()["高铁"]["2026-05-01"];
        assert_eq!(
            trips.iter().copied().collect::<Vec<_>>(),
            [(480, 60), (510, 30)]
        );
        let tasks: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(tasks, ["t1", "t2", "t3"]);
        assert!(
            seen.iter()
                .all(|s| s.1 == "杭州市" && s.2.is_empty() && s.3.len() == 1)
        );
    }
}
