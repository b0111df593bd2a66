//! The rail network: real lines (`rail_lines.csv`) with their stops in order, documented through
//! services (`rail_services.csv`) that run across lines, and journeys over them.
//!
//! A journey is a shortest path over *routes* (every line, all stops; every through service,
//! its own stops) with a transfer allowance at each change, so a pair of cities is direct only
//! when one line or one service carries the traveller from one to the other. Times and fares are
//! modelled from the line's kind and design speed (constants below); they are not timetables.

use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use gtb_resources::InputError;
use gtb_resources::geodesy::distance_km;
use gtb_resources::table::read_csv;

mod track;
use track::{Entry, Graph};

/// What runs on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// dedicated passenger line: G/D/C trains only
    Hsr,
    /// mixed line: D trains (EMUs) and conventional trains
    Mixed,
    /// conventional trains (K/T/Z) only
    Conventional,
}

/// The two rail modes of the task format: 高铁 (G/D/C EMUs) and 火车 (conventional trains).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RailMode {
    Emu,
    Conventional,
}

impl RailMode {
    pub const ALL: [RailMode; 2] = [RailMode::Emu, RailMode::Conventional];

    pub fn label(self) -> &'static str {
        match self {
            RailMode::Emu => "高铁",
            RailMode::Conventional => "火车",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        RailMode::ALL.into_iter().find(|m| m.label() == s)
    }
}

impl Kind {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "hsr" => Some(Kind::Hsr),
            "mixed" => Some(Kind::Mixed),
            "conventional" => Some(Kind::Conventional),
            _ => None,
        }
    }

    pub fn carries(self, m: RailMode) -> bool {
        match m {
            RailMode::Emu => self != Kind::Conventional,
            RailMode::Conventional => self != Kind::Hsr,
        }
    }
}

// ---- model constants (calibrated against the ChinaTravel timetable of 88 city pairs and the
// published anchors in tests/transport_calibration.rs) ------------------------------------------

/// Track km per geodesic km between consecutive stops. The stops of a line already trace its
/// course, so a 300-350 km/h line needs no extra (京沪高铁: 1,315 modelled km, 1,318 real);
/// older 250 km/h lines curve a little more (合武 351 km for 320 km of hops), mixed and
/// conventional lines wind (昆楚大 328 km for 2 × 140 km of geodesic hops: 1.18).
const CURVE_FAST: f64 = 1.00;
const CURVE: [(Kind, f64); 3] = [
    (Kind::Hsr, 1.08),
    (Kind::Mixed, 1.18),
    (Kind::Conventional, 1.15),
];
/// Average EMU running speed between stops as a share of the line's design speed (from the
/// fastest trains: 京沪 1,318 km in 4 h 18 min with two stops; 昆楚大 328 km in 2 h 10 min).
const EMU_SPEED_SHARE: [(u32, f64); 3] = [(300, 0.84), (250, 0.80), (0, 0.75)];
/// Conventional trains (the Z/T/K of a trunk line) run at most 160 km/h and average 0.65 of
/// the line speed (slow sections, freight paths): 北京–上海 about 14 h.
const CONVENTIONAL_SPEED_SHARE: f64 = 0.65;
const CONVENTIONAL_MAX_KMH: f64 = 160.0;
/// Minutes at each intermediate stop of a ride, and once per ride for starting and stopping
/// (the slow approach to a terminal station).
const DWELL_MIN: [(RailMode, f64); 2] = [(RailMode::Emu, 3.0), (RailMode::Conventional, 6.0)];
const RIDE_OVERHEAD_MIN: [(RailMode, f64); 2] =
    [(RailMode::Emu, 10.0), (RailMode::Conventional, 10.0)];
/// Minutes a change of train adds (walking, minimum connection, waiting for the next departure).
const TRANSFER_MIN: [(RailMode, f64); 2] = [(RailMode::Emu, 45.0), (RailMode::Conventional, 120.0)];
/// Extra cost (not time) per change when choosing a journey: travellers accept a somewhat slower
/// direct train over a change.
const TRANSFER_AVERSION_MIN: f64 = 30.0;
/// Second-class EMU fares, CNY per track km: 0.45 on 300-350 km/h lines (京沪 G 553 CNY /
/// 1,318 km = 0.42; 沪杭 73 CNY / 159 km = 0.46; 京津 54.5 / 117 = 0.47); on slower lines 0.30
/// under the tariffs of lines opened before 2016, and 0.40 on lines opened since, whose fares the
/// railway sets itself (发改价格〔2015〕3070号; 昆明–大理 145 CNY / 328 km = 0.44).
const EMU_RATE_FAST: f64 = 0.45;
const EMU_RATE_OLD: f64 = 0.30;
const EMU_RATE_NEW: f64 = 0.40;
const MARKET_FARES_FROM: u32 = 2016;
/// Conventional hard seat (硬座): 0.05861 CNY/km base tariff with the 递远递减 taper (full rate to
/// 200 km, then 90/80/70/60/50 % per band), times the express, air-conditioning and new-train
/// surcharges, which together bring it to 0.131 CNY per tapered km (北京–上海 1,463 km: 156.5 CNY).
const CONVENTIONAL_RATE: f64 = 0.131;
const TAPER: [(f64, f64); 6] = [
    (200.0, 1.0),
    (500.0, 0.9),
    (1000.0, 0.8),
    (1500.0, 0.7),
    (2500.0, 0.6),
    (f64::INFINITY, 0.5),
];

fn lookup<K: PartialEq + Copy>(table: &[(K, f64)], k: K) -> f64 {
    table
        .iter()
        .find(|(x, _)| *x == k)
        .map(|(_, v)| *v)
        .expect("every key has a constant")
}

/// A stop of the network: an administrative unit (the seat's position, from cpca).
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    pub adcode: String,
    pub lat: f64,
    pub lng: f64,
}

#[derive(Debug, Clone)]
pub struct Line {
    pub name: String,
    pub kind: Kind,
    pub speed: u32,
    pub opened: u32,
    /// published route length, when known: the hops are scaled to it
    pub km: Option<f64>,
    pub stops: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    pub mode: RailMode,
    pub stops: Vec<usize>,
}

/// The lines and services as read.
#[derive(Debug, Clone)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub lines: Vec<Line>,
    pub services: Vec<Service>,
    index: HashMap<String, usize>,
}

impl Network {
    pub fn node(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Read `rail_nodes.csv`, `rail_lines.csv` and `rail_services.csv` of a folder.
    pub fn load(dir: &Path) -> Result<Network, InputError> {
        let nodes = read_csv(&dir.join("rail_nodes.csv"), |r| {
            Ok(Node {
                name: r.text("name")?,
                adcode: r.text("adcode")?,
                lat: r.parse("lat")?,
                lng: r.parse("lng")?,
            })
        })?;
        let index: HashMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        let stops = |r: &gtb_resources::table::Row| -> Result<Vec<usize>, InputError> {
            let names = r.list("stops")?;
            if names.len() < 2 {
                return Err(r.err("stops", "a line or service needs at least two stops"));
            }
            let ids = names
                .iter()
                .map(|n| {
                    index
                        .get(n)
                        .copied()
                        .ok_or_else(|| r.err("stops", format!("{n:?} is not in rail_nodes.csv")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if ids.windows(2).any(|w| w[0] == w[1]) {
                return Err(r.err("stops", "the same stop twice in a row"));
            }
            Ok(ids)
        };
        let lines = read_csv(&dir.join("rail_lines.csv"), |r| {
            let kind = r.str("kind")?;
            let kind = Kind::parse(kind).ok_or_else(|| {
                r.err(
                    "kind",
                    format!("must be hsr, mixed or conventional, got {kind:?}"),
                )
            })?;
            let speed: u32 = r.parse("speed")?;
            if !(60..=350).contains(&speed) {
                return Err(r.err("speed", format!("{speed} km/h is not a line speed")));
            }
            let km = match r.str("km")? {
                "" => None,
                _ => Some(r.parse::<f64>("km")?),
            };
            Ok(Line {
                name: r.text("line")?,
                kind,
                speed,
                opened: r.parse("opened")?,
                km,
                stops: stops(r)?,
            })
        })?;
        let services = read_csv(&dir.join("rail_services.csv"), |r| {
            let mode = r.str("mode")?;
            let mode = RailMode::parse(mode)
                .ok_or_else(|| r.err("mode", format!("must be 高铁 or 火车, got {mode:?}")))?;
            Ok(Service {
                name: r.text("service")?,
                mode,
                stops: stops(r)?,
            })
        })?;
        Ok(Network {
            nodes,
            lines,
            services,
            index,
        })
    }

    /// The network as it was at the end of `year`: lines opened later removed (services that
    /// would need them no longer run).
    pub fn as_of(&self, year: u32) -> Network {
        Network {
            lines: self
                .lines
                .iter()
                .filter(|l| l.opened <= year)
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// Whether any line carrying `mode` stops at `node`.
    pub fn serves(&self, node: usize, mode: RailMode) -> bool {
        self.lines
            .iter()
            .any(|l| l.kind.carries(mode) && l.stops.contains(&node))
    }

    fn geodesic(&self, a: usize, b: usize) -> f64 {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        distance_km((x.lat, x.lng), (y.lat, y.lng))
    }

    /// Track km of each hop of a line: the published length spread over the hops in proportion
    /// to their geodesic length, else the geodesic times the curve factor of the line's kind.
    fn hop_km(&self, line: &Line) -> Vec<f64> {
        let geo: Vec<f64> = line
            .stops
            .windows(2)
            .map(|w| self.geodesic(w[0], w[1]))
            .collect();
        let curve = match line.km {
            Some(km) => km / geo.iter().sum::<f64>(),
            None if line.speed >= 300 => CURVE_FAST,
            None => lookup(&CURVE, line.kind),
        };
        geo.iter().map(|g| g * curve).collect()
    }
}

/// One hop between consecutive stops of a route.
#[derive(Debug, Clone, Copy, Default)]
struct Hop {
    km: f64,
    minutes: f64,
    /// EMU fare of the hop (conventional fares are tapered over a whole ride)
    fare: f64,
}

impl std::ops::AddAssign for Hop {
    fn add_assign(&mut self, o: Hop) {
        self.km += o.km;
        self.minutes += o.minutes;
        self.fare += o.fare;
    }
}

fn hop_on(line: &Line, km: f64, mode: RailMode) -> Hop {
    let speed = line.speed as f64;
    let kmh = match mode {
        RailMode::Emu => {
            let share = EMU_SPEED_SHARE
                .iter()
                .find(|(v, _)| line.speed >= *v)
                .map_or(0.75, |(_, s)| *s);
            speed * share
        }
        RailMode::Conventional => speed.min(CONVENTIONAL_MAX_KMH) * CONVENTIONAL_SPEED_SHARE,
    };
    let rate = if line.speed >= 300 {
        EMU_RATE_FAST
    } else if line.opened >= MARKET_FARES_FROM {
        EMU_RATE_NEW
    } else {
        EMU_RATE_OLD
    };
    Hop {
        km,
        minutes: km / kmh * 60.0,
        fare: km * rate,
    }
}

/// A route of one mode: a line (all its stops) or a through service (its own stops).
struct Route {
    stops: Vec<usize>,
    hops: Vec<Hop>,
}

/// Hard-seat fare of a conventional ride of `km` track km.
pub fn conventional_fare(km: f64) -> f64 {
    let mut left = km;
    let mut from = 0.0;
    let mut tapered = 0.0;
    for (upto, share) in TAPER {
        let band = (upto - from).min(left);
        tapered += band * share;
        left -= band;
        from = upto;
        if left <= 0.0 {
            break;
        }
    }
    tapered * CONVENTIONAL_RATE
}

/// A modelled rail journey between two stops.
#[derive(Debug, Clone, PartialEq)]
pub struct Journey {
    pub minutes: f64,
    pub km: f64,
    pub fare: f64,
    pub transfers: usize,
    /// the stops where the traveller changes trains
    pub via: Vec<usize>,
}

/// The routes of one mode, ready for journeys.
pub struct Planner<'a> {
    net: &'a Network,
    mode: RailMode,
    routes: Vec<Route>,
    /// (route, position) of each stop node
    at: Vec<Vec<(usize, usize)>>,
    /// first state id of each route
    offset: Vec<usize>,
    states: usize,
}

impl<'a> Planner<'a> {
    pub fn new(net: &'a Network, mode: RailMode) -> Planner<'a> {
        let lines: Vec<&Line> = net.lines.iter().filter(|l| l.kind.carries(mode)).collect();
        let mut routes: Vec<Route> = lines
            .iter()
            .map(|l| Route {
                stops: l.stops.clone(),
                hops: net
                    .hop_km(l)
                    .into_iter()
                    .map(|km| hop_on(l, km, mode))
                    .collect(),
            })
            .collect();
        // services ride the fastest track between their stops, stopping only at their own stops
        let graph = Graph::new(net, &lines, mode);
        for s in net.services.iter().filter(|s| s.mode == mode) {
            let hops: Option<Vec<Hop>> = s
                .stops
                .windows(2)
                .map(|w| graph.fastest(w[0], w[1]))
                .collect();
            if let Some(hops) = hops {
                routes.push(Route {
                    stops: s.stops.clone(),
                    hops,
                });
            }
        }
        let mut at = vec![Vec::new(); net.nodes.len()];
        let mut offset = Vec::with_capacity(routes.len());
        let mut states = net.nodes.len();
        for (r, route) in routes.iter().enumerate() {
            offset.push(states);
            states += route.stops.len();
            for (i, &n) in route.stops.iter().enumerate() {
                at[n].push((r, i));
            }
        }
        Planner {
            net,
            mode,
            routes,
            at,
            offset,
            states,
        }
    }

    /// Services whose stops are not all connected by this mode's lines (a data error).
    pub fn broken_services(net: &Network, mode: RailMode) -> Vec<String> {
        let lines: Vec<&Line> = net.lines.iter().filter(|l| l.kind.carries(mode)).collect();
        let graph = Graph::new(net, &lines, mode);
        net.services
            .iter()
            .filter(|s| s.mode == mode)
            .filter(|s| {
                s.stops
                    .windows(2)
                    .any(|w| graph.fastest(w[0], w[1]).is_none())
            })
            .map(|s| s.name.clone())
            .collect()
    }

    /// The best journey from `from` to every stop (None where unreachable).
    pub fn journeys_from(&self, from: usize) -> Vec<Option<Journey>> {
        let dwell = lookup(&DWELL_MIN, self.mode);
        let board = lookup(&TRANSFER_MIN, self.mode) + TRANSFER_AVERSION_MIN;
        let n = self.net.nodes.len();
        // states: 0..n platform of a stop; then (route, position) on board
        let mut cost = vec![f64::INFINITY; self.states];
        let mut prev = vec![usize::MAX; self.states];
        let mut heap = BinaryHeap::new();
        for &(r, i) in &self.at[from] {
            let s = self.offset[r] + i;
            cost[s] = 0.0;
            heap.push(Entry(0.0, s));
        }
        while let Some(Entry(c, s)) = heap.pop() {
            if c > cost[s] {
                continue;
            }
            let mut relax = |t: usize, w: f64, heap: &mut BinaryHeap<Entry>| {
                if c + w < cost[t] {
                    cost[t] = c + w;
                    prev[t] = s;
                    heap.push(Entry(c + w, t));
                }
            };
            if s < n {
                for &(r, i) in &self.at[s] {
                    relax(self.offset[r] + i, board, &mut heap);
                }
                continue;
            }
            let r = self.offset.partition_point(|&o| o <= s) - 1;
            let i = s - self.offset[r];
            let route = &self.routes[r];
            relax(route.stops[i], 0.0, &mut heap);
            if i + 1 < route.stops.len() {
                relax(s + 1, route.hops[i].minutes + dwell, &mut heap);
            }
            if i > 0 {
                relax(s - 1, route.hops[i - 1].minutes + dwell, &mut heap);
            }
        }
        (0..n)
            .map(|to| (to != from && cost[to].is_finite()).then(|| self.trace(&prev, to)))
            .collect()
    }

    /// The fastest direct journey (one line or one through service, no change) from `from` to
    /// every stop.
    pub fn direct_from(&self, from: usize) -> Vec<Option<Journey>> {
        let mut best: Vec<Option<Journey>> = vec![None; self.net.nodes.len()];
        for &(r, i) in &self.at[from] {
            for k in 0..self.routes[r].stops.len() {
                let to = self.routes[r].stops[k];
                if k == i || to == from {
                    continue;
                }
                let j = self.ride_journey(&[(r, i, k)]);
                if best[to].as_ref().is_none_or(|b| j.minutes < b.minutes) {
                    best[to] = Some(j);
                }
            }
        }
        best
    }

    /// Rebuild the journey that ends on the platform of `to`: its rides and changes.
    fn trace(&self, prev: &[usize], to: usize) -> Journey {
        let n = self.net.nodes.len();
        let mut states = vec![to];
        while let Some(&s) = states.last() {
            if prev[s] == usize::MAX {
                break;
            }
            states.push(prev[s]);
        }
        states.reverse();
        // rides: maximal runs of on-board states of one route
        let mut rides: Vec<(usize, usize, usize)> = Vec::new(); // (route, first pos, last pos)
        for &s in states.iter().filter(|&&s| s >= n) {
            let r = self.offset.partition_point(|&o| o <= s) - 1;
            let i = s - self.offset[r];
            match rides.last_mut() {
                Some((rr, _, last)) if *rr == r && i.abs_diff(*last) == 1 => *last = i,
                _ => rides.push((r, i, i)),
            }
        }
        rides.retain(|&(_, a, b)| a != b);
        self.ride_journey(&rides)
    }

    /// The journey made of these rides (route, boarding position, alighting position).
    fn ride_journey(&self, rides: &[(usize, usize, usize)]) -> Journey {
        let dwell = lookup(&DWELL_MIN, self.mode);
        let mut j = Journey {
            minutes: 0.0,
            km: 0.0,
            fare: 0.0,
            transfers: rides.len().saturating_sub(1),
            via: Vec::new(),
        };
        for (k, &(r, a, b)) in rides.iter().enumerate() {
            let route = &self.routes[r];
            let mut ride = Hop::default();
            for h in &route.hops[a.min(b)..a.max(b)] {
                ride += *h;
            }
            j.minutes += ride.minutes
                + dwell * (a.abs_diff(b) as f64 - 1.0)
                + lookup(&RIDE_OVERHEAD_MIN, self.mode);
            j.km += ride.km;
            j.fare += match self.mode {
                RailMode::Emu => ride.fare,
                RailMode::Conventional => conventional_fare(ride.km),
            };
            if k > 0 {
                j.via.push(route.stops[a]);
            }
        }
        j.minutes += lookup(&TRANSFER_MIN, self.mode) * j.transfers as f64;
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hard_seat_taper_gives_the_published_beijing_shanghai_fare() {
        // 北京–上海 1,463 km, 硬座 156.5 CNY
        let f = conventional_fare(1463.0);
        assert!((f - 156.5).abs() < 3.0, "{f}");
        // full rate below 200 km
        assert!((conventional_fare(100.0) - 13.1).abs() < 1e-9);
    }
}
