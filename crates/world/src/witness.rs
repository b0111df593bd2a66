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

/// The witnesses' facts.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    /// the intercity trips, per leg, mode and date
    pub trips: Trips,
    /// transfer minutes and mode per pair of places (the first witness's, in file order), by
    /// `pair_key`; only looked up, never listed
    pub transfers: HashMap<PairKey, (u32, String)>,
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
            let plans: Vec<Option<Plan>> = lines.par_iter().map(WitnessLine::plan).collect();
            let mut places = Vec::new();
            for (line, plan) in lines.iter().zip(&plans) {
                if let Some(plan) = plan {
                    places.extend(f.add_plan(res, &line.task_id, plan));
                }
            }
            // a block's plans are many small allocations: freed in parallel
            plans.into_par_iter().for_each(drop);
            each(places)
        })?;
        Ok(f)
    }

    /// Add a witness's facts; returns the places it uses, per city.
    fn add_plan(&mut self, res: &Resources, task_id: &str, plan: &Plan) -> Vec<TaskPlaces> {
        let mut per_city: BTreeMap<String, TaskPlaces> = BTreeMap::new();
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
                        {
                            self.trips
                                .insert((a, b), &t.transport_mode, &day.date, (d, m));
                        }
                    }
                    Segment::City(block) => {
                        let tp = per_city
                            .entry(block.city.clone())
                            .or_insert_with(|| TaskPlaces {
                                task_id: task_id.to_string(),
                                city: block.city.clone(),
                                ..TaskPlaces::default()
                            });
                        // one entry per block: a world reads a witness per task
                        let places = self.places.entry(block.city.clone()).or_default();
                        let mut key = String::new();
                        for a in &block.activities {
                            let transfers = (&mut self.transfers, &mut key);
                            add_activity(places, transfers, &block.city, a, tp);
                        }
                    }
                }
            }
        }
        per_city.into_values().collect()
    }
}

/// An activity's facts: its places in the city (a place met before is not copied: most
/// are), the witness's own places, and a transfer's minutes and mode.
fn add_activity(
    places: &mut BTreeSet<String>,
    (transfers, key): (&mut HashMap<PairKey, (u32, String)>, &mut String),
    city: &str,
    a: &Activity,
    tp: &mut TaskPlaces,
) {
    let mut place = |x: &String| crate::calls::insert_new(places, x);
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
            // the first witness's figures stay
            pair_key(key, city, from, to);
            if let Some(m) = span(start_time, end_time)
                && !transfers.contains_key(key.as_str())
            {
                transfers.insert(key.clone(), (m, transport_mode.clone()));
            }
        }
        Activity::Rest { .. } => {}
    }
}
