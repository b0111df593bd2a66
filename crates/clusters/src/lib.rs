//! Destination clusters: 1..3 geographically coherent cities of one region.
//!
//! `build` is deterministic. Multi-city clusters are chosen greedily from neighbours found with
//! an R*-tree (same region, each leg within `max_leg_km`), preferring new coverage, then popular
//! cities and short legs; every tier-1/2 city, and every city no multi-city cluster covers, is
//! also a single-city cluster; the table stops at `target` clusters. Reading the table back is
//! `resources::cluster_table` (resources never depend on this module).

use gtb_resources::{CityId, Cluster, Resources};
use rstar::{RTree, primitives::GeomWithData};
use std::collections::HashSet;

#[derive(Debug, Clone, Copy)]
pub struct ClusterParams {
    pub target: usize,
    pub max_leg_km: f64,
    pub max_span_km: f64,
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            target: 175,
            max_leg_km: 260.0,
            max_span_km: 420.0,
        }
    }
}

fn planar(lat: f64, lng: f64) -> [f64; 2] {
    // equirectangular km around 35°N: good enough to pre-select neighbours, distances are exact geodesics
    [lng * 111.32 * 35f64.to_radians().cos(), lat * 110.57]
}

/// A candidate multi-city cluster: its score and its cities in visit order.
type Candidate = (f64, Vec<CityId>);

/// The destinations with an R*-tree over their positions.
struct Map<'r> {
    res: &'r Resources,
    p: ClusterParams,
    tree: RTree<GeomWithData<[f64; 2], CityId>>,
}

impl<'r> Map<'r> {
    fn new(res: &'r Resources, p: ClusterParams, dests: &[CityId]) -> Self {
        let tree = RTree::bulk_load(
            dests
                .iter()
                .map(|&c| GeomWithData::new(planar(res.city(c).lat, res.city(c).lng), c))
                .collect(),
        );
        Map { res, p, tree }
    }
    fn dist(&self, a: CityId, b: CityId) -> f64 {
        let pos = |c: CityId| (self.res.city(c).lat, self.res.city(c).lng);
        gtb_resources::geodesy::distance_km(pos(a), pos(b))
    }
    fn weight(&self, c: CityId) -> f64 {
        [3.0, 2.0, 1.0][self.res.city(c).tier as usize - 1]
    }
    fn tier(&self, c: CityId) -> u8 {
        self.res.city(c).tier
    }
    /// Neighbours within a leg, same region (search radius padded for the planar
    /// approximation), in id order.
    fn neighbours(&self, c: CityId) -> Vec<CityId> {
        let city = self.res.city(c);
        let r = self.p.max_leg_km * 1.3;
        let mut v: Vec<CityId> = self
            .tree
            .locate_within_distance(planar(city.lat, city.lng), r * r)
            .map(|g| g.data)
            .filter(|&o| {
                o != c
                    && self.res.city(o).region == city.region
                    && self.dist(c, o) <= self.p.max_leg_km
            })
            .collect();
        v.sort();
        v
    }
    /// Pairs and triples (a path x, a, y through each city a), the more popular end first.
    fn candidates(&self, dests: &[CityId]) -> (Vec<Candidate>, Vec<Candidate>) {
        let (mut pairs, mut triples) = (Vec::new(), Vec::new());
        for &a in dests {
            let na = self.neighbours(a);
            for &b in na.iter().filter(|&&b| a < b) {
                let mut v = vec![a, b];
                // the more popular city first (ties: file order)
                v.sort_by(|x, y| self.tier(*x).cmp(&self.tier(*y)).then(x.cmp(y)));
                let score = (self.weight(a) + self.weight(b)) / (1.0 + self.dist(a, b) / 150.0);
                pairs.push((score, v));
            }
            for (i, &x) in na.iter().enumerate() {
                for &y in na[i + 1..]
                    .iter()
                    .filter(|&&y| self.dist(x, y) <= self.p.max_span_km)
                {
                    let len = self.dist(x, a) + self.dist(a, y);
                    let mut v = vec![x, a, y];
                    if self.tier(y) < self.tier(x) || (self.tier(y) == self.tier(x) && y < x) {
                        v.reverse();
                    }
                    let w = self.weight(x) + self.weight(a) + self.weight(y);
                    triples.push((w / (1.0 + len / 200.0), v));
                }
            }
        }
        dedupe(&mut pairs);
        dedupe(&mut triples);
        (pairs, triples)
    }
}

/// Best score first; the same set can appear with another middle stop: keep the shortest path
/// (the best score) per set.
fn dedupe(c: &mut Vec<Candidate>) {
    c.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut seen = HashSet::new();
    c.retain(|(_, v)| {
        let mut k = v.clone();
        k.sort();
        seen.insert(k)
    });
}

/// Candidates not yet taken, and the cities that multi-city clusters cover so far.
struct Pool {
    cands: Vec<Candidate>,
    free: Vec<bool>,
}

impl Pool {
    fn new(cands: Vec<Candidate>) -> Self {
        let free = vec![true; cands.len()];
        Pool { cands, free }
    }
    fn exhausted(&self) -> bool {
        self.free.iter().all(|f| !f)
    }
    /// The free candidate that brings the most cities not yet covered (ties: the better score,
    /// i.e. the earlier candidate), so that multi-city trips reach many cities; with `strict`,
    /// only one that brings some.
    fn take(&mut self, covered: &mut HashSet<CityId>, strict: bool) -> Option<Vec<CityId>> {
        let fresh = |i: usize| {
            self.cands[i]
                .1
                .iter()
                .filter(|c| !covered.contains(c))
                .count()
        };
        let i = (0..self.cands.len())
            .filter(|&i| self.free[i] && (!strict || fresh(i) > 0))
            .max_by(|&a, &b| fresh(a).cmp(&fresh(b)).then(b.cmp(&a)))?;
        self.free[i] = false;
        covered.extend(self.cands[i].1.iter().copied());
        Some(self.cands[i].1.clone())
    }
    fn take_fresh_first(&mut self, covered: &mut HashSet<CityId>) -> Option<Vec<CityId>> {
        self.take(covered, true)
            .or_else(|| self.take(covered, false))
    }
}

/// Build the cluster table.
pub fn build(res: &Resources, p: ClusterParams) -> Vec<Cluster> {
    let dests: Vec<CityId> = res.destinations().collect();
    let map = Map::new(res, p, &dests);
    let (pairs, triples) = map.candidates(&dests);
    // Single-city clusters: every tier-1/2 city, and every city no multi-city cluster covers.
    // Multi-city clusters are added, pairs and triples in turn, until singles + multi reach
    // the target.
    let popular = dests.iter().filter(|&&c| res.city(c).tier <= 2).count();
    let singles_needed = |covered: &HashSet<CityId>| {
        popular
            + dests
                .iter()
                .filter(|&&c| res.city(c).tier > 2 && !covered.contains(&c))
                .count()
    };
    let mut covered = HashSet::new();
    let mut chosen: Vec<Vec<CityId>> = Vec::new();
    let mut pools = [Pool::new(pairs), Pool::new(triples)];
    let mut turn = 0usize;
    while chosen.len() + singles_needed(&covered) < p.target {
        let got = pools[turn % 2].take_fresh_first(&mut covered);
        turn += 1;
        match got {
            Some(v) => chosen.push(v),
            None if pools.iter().all(Pool::exhausted) => break,
            None => {}
        }
    }
    chosen.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    let singles = dests
        .iter()
        .filter(|&&c| res.city(c).tier <= 2 || !covered.contains(&c))
        .map(|&c| vec![c]);
    singles
        .chain(chosen)
        .enumerate()
        .map(|(i, cities)| Cluster {
            id: format!("K{:03}", i + 1),
            region: res.city(cities[0]).region.clone(),
            cities,
        })
        .collect()
}

/// The CSV text of a cluster table.
pub fn to_csv(res: &Resources, clusters: &[Cluster]) -> String {
    let mut s = String::from("id,region,cities\n");
    for c in clusters {
        let names: Vec<&str> = c
            .cities
            .iter()
            .map(|&x| res.city(x).name.as_str())
            .collect();
        s.push_str(&format!("{},{},{}\n", c.id, c.region, names.join("|")));
    }
    s
}
