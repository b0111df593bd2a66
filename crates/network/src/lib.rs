//! The transport model behind `raw_data/transport.csv` (`gtb transport`): rail journeys over the
//! real network (`rail`), plausible direct flights between airports with scheduled service
//! (`air`) and self-drive on the road network's average detour (`road`). Every figure is
//! MODELLED from documented constants; the model is deterministic (same inputs, same bytes).
//!
//! Rows: one per ordered pair of cities and served mode, with whether the service is direct and
//! how many changes it needs. No row where a mode does not serve the pair, or above the limits:
//! 高铁 up to `EMU_MAX_MIN` and 火车 up to `CONVENTIONAL_MAX_MIN` with at most `MAX_TRANSFERS`
//! changes (beyond, nobody plans the trip by train); 自驾 up to `road::MAX_KM`.

pub mod air;
pub mod rail;
pub mod road;

use std::collections::HashMap;
use std::path::Path;

use gtb_resources::InputError;
use gtb_resources::geodesy::distance_km;
use gtb_resources::table::read_csv;
use rail::{Network, Planner, RailMode};
use rayon::prelude::*;

/// 16 h: a long day or one night on G/D trains.
pub const EMU_MAX_MIN: f64 = 16.0 * 60.0;
/// 48 h: two nights on a conventional train (北京–拉萨 Z21 takes about 40 h).
pub const CONVENTIONAL_MAX_MIN: f64 = 48.0 * 60.0;
pub const MAX_TRANSFERS: usize = 2;

/// What the model needs of a city (`cities.csv`).
#[derive(Debug, Clone)]
pub struct Place {
    pub name: String,
    pub lat: f64,
    pub lng: f64,
    pub adcode: String,
    pub airports: Vec<String>,
}

impl Place {
    fn centre(&self) -> (f64, f64) {
        (self.lat, self.lng)
    }

    /// Whether a stop with this adcode lies inside the city: the same county for a county-level
    /// city, the same prefecture (4 digits) for a prefecture, the same province for the four
    /// municipalities.
    pub fn contains(&self, adcode: &str) -> bool {
        let own = self.adcode.as_str();
        let prefix = if own.get(2..6) == Some("0000") {
            2
        } else if own.get(4..6) == Some("00") {
            4
        } else {
            6
        };
        own.len() >= prefix && adcode.starts_with(&own[..prefix])
    }
}

/// Everything the model reads.
pub struct Inputs {
    pub places: Vec<Place>,
    pub airports: HashMap<String, air::Airport>,
    pub rail: Network,
}

impl Inputs {
    /// Read `cities.csv`, `airports.csv` and the rail tables of a raw-data folder.
    pub fn load(dir: &Path) -> Result<Inputs, InputError> {
        let airports: HashMap<String, air::Airport> = read_csv(&dir.join("airports.csv"), |r| {
            let iata = r.text("iata")?;
            let kind = r.str("type")?;
            let class = air::Airport::class_of(&iata, kind)
                .ok_or_else(|| r.err("type", format!("{kind:?} is not an airport type")))?;
            Ok(air::Airport {
                iata,
                class,
                lat: r.parse("lat")?,
                lng: r.parse("lng")?,
                county: r.text("county")?,
            })
        })?
        .into_iter()
        .map(|a| (a.iata.clone(), a))
        .collect();
        let places = read_csv(&dir.join("cities.csv"), |r| {
            let list = r.list("airports")?;
            if let Some(a) = list.iter().find(|a| !airports.contains_key(*a)) {
                return Err(r.err("airports", format!("{a} is not in airports.csv")));
            }
            Ok(Place {
                name: r.text("name")?,
                lat: r.parse("lat")?,
                lng: r.parse("lng")?,
                adcode: r.text("adcode")?,
                airports: list,
            })
        })?;
        Ok(Inputs {
            places,
            airports,
            rail: Network::load(dir)?,
        })
    }

    /// The stop where a city's journeys of `mode` start: its stop served by the mode nearest to
    /// the centre.
    pub fn entry(&self, place: &Place, mode: RailMode) -> Option<usize> {
        entry(&self.rail, place, mode)
    }

    pub fn place(&self, name: &str) -> Option<&Place> {
        self.places.iter().find(|p| p.name == name)
    }

    /// The first city (in cities.csv order) an airport serves: where a connection changes.
    pub fn airport_city(&self, iata: &str) -> Option<&Place> {
        self.places
            .iter()
            .find(|p| p.airports.iter().any(|a| a == iata))
    }
}

/// The stop of `place` served by `mode` on `net` nearest to the place's centre.
pub fn entry(net: &Network, place: &Place, mode: RailMode) -> Option<usize> {
    net.nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| place.contains(&n.adcode) && net.serves(*i, mode))
        .min_by(|a, b| {
            let d = |n: &rail::Node| distance_km(place.centre(), (n.lat, n.lng));
            d(a.1).total_cmp(&d(b.1))
        })
        .map(|(i, _)| i)
}

/// One row of transport.csv.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub from: usize,
    pub to: usize,
    pub distance_km: f64,
    pub mode: &'static str,
    pub minutes: f64,
    pub fare: f64,
    pub transfers: usize,
    /// where the traveller changes (rail stop names)
    pub via: Vec<String>,
}

/// Per rail mode, per origin city, per destination city: the best journey (None: no service).
type RailTable = Vec<Vec<Vec<Option<rail::Journey>>>>;

/// Every row, ordered by (from, to) in `cities.csv` order, then 飞机, 高铁, 火车, 自驾.
pub fn model(inp: &Inputs) -> Vec<Row> {
    let rail = rail_table(inp);
    let n = inp.places.len();
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
        .collect();
    // pairs in parallel; collect keeps their order (deterministic)
    let rows: Vec<Vec<Row>> = pairs
        .par_iter()
        .map(|&(a, b)| pair_rows(inp, &rail, a, b))
        .collect();
    rows.into_iter().flatten().collect()
}

/// Rail journeys between the entry stops of every pair of cities, for both modes.
fn rail_table(inp: &Inputs) -> RailTable {
    RailMode::ALL
        .into_iter()
        .map(|mode| {
            let planner = Planner::new(&inp.rail, mode);
            let entries: Vec<Option<usize>> =
                inp.places.iter().map(|p| inp.entry(p, mode)).collect();
            // origins in parallel; collect keeps the city order (deterministic)
            entries
                .par_iter()
                .map(|e| {
                    let all = e.map(|s| planner.journeys_from(s));
                    entries
                        .iter()
                        .map(|t| Some((all.as_ref()?, (*t)?)).and_then(|(all, t)| all[t].clone()))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The rows of one ordered pair: the flight first, then 高铁, 火车 and 自驾.
fn pair_rows(inp: &Inputs, rail: &RailTable, a: usize, b: usize) -> Vec<Row> {
    let (pa, pb) = (&inp.places[a], &inp.places[b]);
    let d = distance_km(pa.centre(), pb.centre());
    let row = |mode, minutes: f64, fare: f64, transfers, via| Row {
        from: a,
        to: b,
        distance_km: d,
        mode,
        minutes,
        fare,
        transfers,
        via,
    };
    let mut surface = Vec::new();
    for (k, mode) in RailMode::ALL.into_iter().enumerate() {
        let Some(j) = &rail[k][a][b] else { continue };
        let limit = match mode {
            RailMode::Emu => EMU_MAX_MIN,
            RailMode::Conventional => CONVENTIONAL_MAX_MIN,
        };
        if j.minutes <= limit && j.transfers <= MAX_TRANSFERS {
            let via = j
                .via
                .iter()
                .map(|&s| inp.rail.nodes[s].name.clone())
                .collect();
            surface.push(row(mode.label(), j.minutes, j.fare, j.transfers, via));
        }
    }
    let (ta, tb) = (road::terrain(&pa.adcode), road::terrain(&pb.adcode));
    if let Some(dr) = road::drive(d, ta, tb) {
        surface.push(row("自驾", dr.minutes, dr.fare, 0, Vec::new()));
    }
    let fastest_surface = surface.iter().map(|r| r.minutes).min_by(f64::total_cmp);
    let ports =
        |p: &Place| -> Vec<&air::Airport> { p.airports.iter().map(|c| &inp.airports[c]).collect() };
    let (fa, fb) = (ports(pa), ports(pb));
    let flight = air::best_flight(&fa, pa.centre(), &fb, pb.centre(), fastest_surface)
        .map(|f| row("飞机", f.minutes, f.fare, 0, Vec::new()))
        .or_else(|| {
            let hubs = air::hubs(inp.airports.values());
            let c = air::best_connection(&fa, pa.centre(), &fb, pb.centre(), &hubs)?;
            let via = inp.airport_city(&c.hub)?.name.clone();
            Some(row("飞机", c.flight.minutes, c.flight.fare, 1, vec![via]))
        });
    flight.into_iter().chain(surface).collect()
}

/// transport.csv text of the rows (integers: km, minutes and CNY rounded half away from zero).
pub fn to_csv(inp: &Inputs, rows: &[Row]) -> String {
    let mut out = String::from("from,to,distance_km,mode,minutes,fare,direct,transfers,via\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{:.0},{},{:.0},{:.0},{},{},{}\n",
            inp.places[r.from].name,
            inp.places[r.to].name,
            r.distance_km.round(),
            r.mode,
            r.minutes.round(),
            r.fare.round().max(1.0),
            u8::from(r.transfers == 0),
            r.transfers,
            r.via.join("|")
        ));
    }
    out
}
