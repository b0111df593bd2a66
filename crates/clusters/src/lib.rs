//! Destination clusters: 1..3 geographically coherent cities of one region.
//!
//! `build` is deterministic. Multi-city clusters are chosen greedily from neighbours found with
//! an R*-tree (same region, each leg within `max_leg_km`), preferring new coverage, then popular
//! cities and short legs; every tier-1/2 city, and every city no multi-city cluster covers, is
//! also a single-city cluster; the table stops at `target` clusters. Reading the table back is
//! `resources::cluster_table` (resources never depend on this module).

use gtb_resources::{CityId, Cluster, Resources};
use rstar::{RTree, primitives::GeomWithData};

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

/// Build the cluster table.
pub fn build(res: &Resources, p: ClusterParams) -> Vec<Cluster> {
    let dests: Vec<CityId> = res.destinations().collect();
    let pos = |c: CityId| (res.city(c).lat, res.city(c).lng);
    let dist = |a: CityId, b: CityId| gtb_resources::geodesy::distance_km(pos(a), pos(b));
    let weight = |c: CityId| [3.0, 2.0, 1.0][res.city(c).tier as usize - 1];
    let tree: RTree<GeomWithData<[f64; 2], CityId>> = RTree::bulk_load(
        dests
            .iter()
            .map(|&c| GeomWithData::new(planar(pos(c).0, pos(c).1), c))
            .collect(),
    );
    // neighbours within a leg, same region (search radius padded for the planar approximation)
    let neigh = |c: CityId| -> Vec<CityId> {
        let q = planar(pos(c).0, pos(c).1);
        let r = p.max_leg_km * 1.3;
        let mut v: Vec<CityId> = tree
            .locate_within_distance(q, r * r)
            .map(|g| g.data)
            .filter(|&o| {
                o != c && res.city(o).region == res.city(c).region && dist(c, o) <= p.max_leg_km
            })
            .collect();
        v.sort();
        v
    };
    // candidates: (score, cities in visit order)
    let mut pairs: Vec<(f64, Vec<CityId>)> = Vec::new();
    let mut triples: Vec<(f64, Vec<CityId>)> = Vec::new();
    for &a in &dests {
        let na = neigh(a);
        for &b in &na {
            if a < b {
                let mut v = vec![a, b];
                // the more popular city first (ties: file order)
                v.sort_by(|x, y| res.city(*x).tier.cmp(&res.city(*y).tier).then(x.cmp(y)));
                pairs.push(((weight(a) + weight(b)) / (1.0 + dist(a, b) / 150.0), v));
            }
        }
        // a is the middle stop of a -- path x, a, y
        for (i, &x) in na.iter().enumerate() {
            for &y in &na[i + 1..] {
                if dist(x, y) <= p.max_span_km {
                    let len = dist(x, a) + dist(a, y);
                    let mut v = vec![x, a, y];
                    if res.city(y).tier < res.city(x).tier
                        || (res.city(y).tier == res.city(x).tier && y < x)
                    {
                        v.reverse();
                    }
                    triples.push(((weight(x) + weight(a) + weight(y)) / (1.0 + len / 200.0), v));
                }
            }
        }
    }
    // the same set can appear with another middle stop: keep the shortest path per set
    let dedupe = |c: &mut Vec<(f64, Vec<CityId>)>| {
        c.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let mut seen = std::collections::HashSet::new();
        c.retain(|(_, v)| {
            let mut k = v.clone();
            k.sort();
            seen.insert(k)
        });
    };
    dedupe(&mut pairs);
    dedupe(&mut triples);
    // Single-city clusters: every tier-1/2 city, and every city no multi-city cluster covers.
    // Multi-city clusters are added until singles + multi reach the target.
    let popular = dests.iter().filter(|&&c| res.city(c).tier <= 2).count();
    let singles_needed = |covered: &std::collections::HashSet<CityId>| {
        popular
            + dests
                .iter()
                .filter(|&&c| res.city(c).tier > 2 && !covered.contains(&c))
                .count()
    };
    let mut covered = std::collections::HashSet::new();
    let mut chosen: Vec<Vec<CityId>> = Vec::new();
    let (mut pi, mut ti) = (vec![true; pairs.len()], vec![true; triples.len()]);
    // the free candidate that brings the most cities not yet in a multi-city cluster (ties: the
    // better score, i.e. the earlier candidate), so that multi-city trips reach many cities
    let take = |cands: &Vec<(f64, Vec<CityId>)>,
                free: &mut Vec<bool>,
                covered: &mut std::collections::HashSet<CityId>,
                strict: bool|
     -> Option<Vec<CityId>> {
        let fresh = |i: usize| cands[i].1.iter().filter(|c| !covered.contains(c)).count();
        let i = (0..cands.len())
            .filter(|&i| free[i] && (!strict || fresh(i) > 0))
            .max_by(|&a, &b| fresh(a).cmp(&fresh(b)).then(b.cmp(&a)))?;
        free[i] = false;
        covered.extend(cands[i].1.iter().copied());
        Some(cands[i].1.clone())
    };
    let mut turn = 0usize;
    while chosen.len() + singles_needed(&covered) < p.target {
        let from_triples = turn % 2 == 1;
        turn += 1;
        let got = if from_triples {
            take(&triples, &mut ti, &mut covered, true)
                .or_else(|| take(&triples, &mut ti, &mut covered, false))
        } else {
            take(&pairs, &mut pi, &mut covered, true)
                .or_else(|| take(&pairs, &mut pi, &mut covered, false))
        };
        match got {
            Some(v) => chosen.push(v),
            None if pi.iter().all(|f| !f) && ti.iter().all(|f| !f) => break,
            None => {}
        }
    }
    chosen.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    let mut singles: Vec<Cluster> = dests
        .iter()
        .filter(|&&c| res.city(c).tier <= 2 || !covered.contains(&c))
        .map(|&c| Cluster {
            id: String::new(),
            region: res.city(c).region.clone(),
            cities: vec![c],
        })
        .collect();
    singles.extend(chosen.into_iter().map(|v| Cluster {
        id: String::new(),
        region: res.city(v[0]).region.clone(),
        cities: v,
    }));
    for (i, c) in singles.iter_mut().enumerate() {
        c.id = format!("K{:03}", i + 1);
    }
    singles
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
