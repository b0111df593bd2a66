//! The skeleton sampler.
//!
//! 1. A joint distribution over cells (archetype, city count C, days D) is fitted by iterative
//!    proportional fitting to the archetype shares and to the per-class cross-tabs of paper
//!    Table 8 (cities, days, group size), all configurable.
//! 2. Each class gets its quota (200/250/200 for 650, proportional otherwise); each task draws
//!    a cell of its class, then a destination cluster of C cities (tier-weighted), a departure
//!    hub outside the cluster, a date, a compromise pattern and member profiles.
//!
//! Every task draws from its own ChaCha stream (seed, "sample", index), so the result does not
//! depend on thread count, and replacements for dropped tasks extend the same stream.

use anyhow::{Result, bail};
use gtb_core::config::Config;
use gtb_core::difficulty::{self, Class};
use gtb_core::rng::{item_rng, weighted_index};
use gtb_core::task::{Skeleton, SkeletonMember};
use gtb_resources::{Cluster, Resources};
use rand::Rng;
use rand::seq::SliceRandom;
use rayon::prelude::*;

/// Days allowed for a city count (release: 1 -> 2..3, 2 -> 3..5, 3 -> 5..7).
pub fn day_range(cities: u32) -> std::ops::RangeInclusive<u32> {
    match cities {
        1 => 2..=3,
        2 => 3..=5,
        _ => 5..=7,
    }
}

fn days_band(d: u32) -> usize {
    match d {
        0..=3 => 0,
        4..=5 => 1,
        _ => 2,
    }
}

#[derive(Debug, Clone)]
struct Cell {
    archetype: usize,
    cities: u32,
    days: u32,
    class: Class,
    score: f64,
    weight: f64,
}

/// The clusters a task can go to, by size: some hub reaches them leg by leg, and none of their
/// cities is held out; with each cluster's hubs ([`serving_hubs`]), drawn from per task.
fn destination_clusters<'r>(
    res: &'r Resources,
    held_out: &[gtb_resources::CityId],
) -> ([Vec<&'r Cluster>; 3], [Vec<Vec<gtb_resources::CityId>>; 3]) {
    let mut by_size: [Vec<&Cluster>; 3] = Default::default();
    let mut hubs: [Vec<Vec<gtb_resources::CityId>>; 3] = Default::default();
    for c in &res.clusters {
        let serving = serving_hubs(res, &c.cities);
        if !serving.is_empty() && !c.cities.iter().any(|x| held_out.contains(x)) {
            by_size[c.cities.len() - 1].push(c);
            hubs[c.cities.len() - 1].push(serving);
        }
    }
    (by_size, hubs)
}

/// The hubs outside `cities` from which every leg of the trip through them has some service.
fn serving_hubs(res: &Resources, cities: &[gtb_resources::CityId]) -> Vec<gtb_resources::CityId> {
    res.hubs()
        .filter(|&h| {
            !cities.contains(&h)
                && res
                    .route_legs(h, cities)
                    .iter()
                    .all(|&(a, b)| !res.transport(a, b).is_empty())
        })
        .collect()
}

/// Per archetype and slot, the profiles its filter accepts, for a group of men and of women
/// (same-gender archetypes draw every member from one of them).
fn eligible_profiles(res: &Resources) -> Result<Vec<Vec<[Vec<usize>; 2]>>> {
    let mut eligible = Vec::new();
    for a in &res.archetypes {
        let mut per_slot = Vec::new();
        for slot in &a.slots {
            let mut g: [Vec<usize>; 2] = Default::default();
            for (gi, gender) in [Some("男"), Some("女")].into_iter().enumerate() {
                let group_gender = if a.same_gender { gender } else { None };
                g[gi] = res
                    .profiles
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| slot.filter.accepts(p, group_gender))
                    .map(|(i, _)| i)
                    .collect();
            }
            let need = if a.same_gender {
                g[0].len().min(g[1].len())
            } else {
                g[0].len()
            };
            if need < a.slots.len() {
                bail!(
                    "archetype {} slot {} ({}): only {} profiles match its filter ({}); widen the filter or add profiles",
                    a.group_id,
                    slot.user,
                    slot.role,
                    need,
                    slot.filter
                );
            }
            per_slot.push(g);
        }
        eligible.push(per_slot);
    }
    Ok(eligible)
}

/// Every (archetype, cities, days) combination with a cluster of that size, with its
/// difficulty class and the archetype's share as the starting weight.
fn cells(cfg: &Config, res: &Resources, clusters_by_size: &[Vec<&Cluster>; 3]) -> Vec<Cell> {
    let s = &cfg.sample;
    let thresholds = s.thresholds();
    let mut cells = Vec::new();
    for (ai, a) in res.archetypes.iter().enumerate() {
        for c in 1..=3u32 {
            if clusters_by_size[c as usize - 1].is_empty() {
                continue;
            }
            for d in day_range(c) {
                let sc = difficulty::score(s.difficulty, a.size(), c, d);
                cells.push(Cell {
                    archetype: ai,
                    cities: c,
                    days: d,
                    class: difficulty::classify(sc, thresholds),
                    score: sc.rounded(),
                    weight: a.share as f64,
                });
            }
        }
    }
    cells
}

/// A class with a quota needs some combination of that class with weight.
fn check_quotas(cfg: &Config, quotas: &[usize; 3], cells: &[Cell]) -> Result<()> {
    let s = &cfg.sample;
    let thresholds = s.thresholds();
    for k in Class::ALL {
        let w: f64 = cells
            .iter()
            .filter(|c| c.class == k)
            .map(|c| c.weight)
            .sum();
        if quotas[k.index()] > 0 && (w.is_nan() || w <= 0.0) {
            let any = cells.iter().any(|c| c.class == k);
            bail!(
                "unsatisfiable quotas: {} {} tasks requested, but {} under the {} difficulty formula (easy below {}, hard above {}); change sample.quotas, sample.difficulty or sample.thresholds",
                quotas[k.index()],
                k.as_str(),
                if any {
                    "every (archetype, cities, days) combination of that class has zero target weight"
                } else {
                    "no (archetype, cities, days) combination falls in that class"
                },
                s.difficulty.name(),
                thresholds.easy_below,
                thresholds.hard_above
            );
        }
    }
    Ok(())
}

/// Stratified allocation: each class quota is split over its cells in proportion to the fitted
/// weights (largest remainders), so the split reproduces the fitted joint without sampling
/// noise. One cell index per task, class by class.
fn allocate(cells: &[Cell], quotas: &[usize; 3], n: usize) -> Vec<usize> {
    let mut cell_plan = Vec::with_capacity(n);
    for k in Class::ALL {
        let idx: Vec<usize> = (0..cells.len())
            .filter(|&i| cells[i].class == k && cells[i].weight > 0.0)
            .collect();
        let total: f64 = idx.iter().map(|&i| cells[i].weight).sum();
        let q = quotas[k.index()];
        if q == 0 || idx.is_empty() {
            continue;
        }
        let exact: Vec<f64> = idx
            .iter()
            .map(|&i| cells[i].weight / total * q as f64)
            .collect();
        let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
        let mut order: Vec<usize> = (0..idx.len()).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor())
                .total_cmp(&(exact[a] - exact[a].floor()))
                .then(a.cmp(&b))
        });
        let rest = q - counts.iter().sum::<usize>();
        for &o in order.iter().take(rest) {
            counts[o] += 1;
        }
        for (j, &c) in counts.iter().enumerate() {
            cell_plan.extend(std::iter::repeat_n(idx[j], c));
        }
    }
    cell_plan
}

/// Over a POI store whose destinations cannot make a class (one city: no hard trips), that
/// class's quota goes to the nearest class that can, with a warning: the store decides what
/// trips exist. Without a store an infeasible quota stays an error (a config mistake).
fn shift_infeasible_quotas(quotas: &mut [usize; 3], cells: &[Cell]) {
    let feasible = |k: Class| {
        let w: f64 = cells
            .iter()
            .filter(|c| c.class == k)
            .map(|c| c.weight)
            .sum();
        w.is_finite() && w > 0.0
    };
    // nearest first: easy -> medium -> hard, hard -> medium -> easy, medium -> hard -> easy
    const NEAREST: [[usize; 2]; 3] = [[1, 2], [2, 0], [1, 0]];
    for k in Class::ALL {
        let i = k.index();
        if quotas[i] == 0 || feasible(k) {
            continue;
        }
        let Some(&to) = NEAREST[i].iter().find(|&&j| feasible(Class::ALL[j])) else {
            return; // nothing feasible: the check below says so
        };
        eprintln!(
            "note: the store's destinations allow no {} trip; its {} tasks are {} instead",
            k.as_str(),
            quotas[i],
            Class::ALL[to].as_str()
        );
        quotas[to] += quotas[i];
        quotas[i] = 0;
    }
}

/// The prepared sampler: fitted cells, clusters by size and eligible profiles per slot.
pub struct Sampler<'a> {
    cfg: &'a Config,
    res: &'a Resources,
    cells: Vec<Cell>,
    clusters_by_size: [Vec<&'a Cluster>; 3],
    /// per cluster of `clusters_by_size`, its serving hubs in hub order
    cluster_hubs: [Vec<Vec<gtb_resources::CityId>>; 3],
    cluster_weights: [Vec<f64>; 3],
    /// per archetype, per slot, per group gender (0 any/男, 1 女): eligible profile indices
    eligible: Vec<Vec<[Vec<usize>; 2]>>,
    quotas: [usize; 3],
    /// the fitted cell of each of the first n tasks: exact expected counts per cell (largest
    /// remainder within each class quota), in a seeded shuffled order
    cell_plan: Vec<usize>,
    ids: Vec<u32>,
}

impl<'a> Sampler<'a> {
    pub fn new(cfg: &'a Config, res: &'a Resources, n: usize) -> Result<Self> {
        Self::excluding(cfg, res, n, &[])
    }

    /// A sampler whose destinations avoid some cities (held out for another split).
    pub fn excluding(
        cfg: &'a Config,
        res: &'a Resources,
        n: usize,
        held_out: &[gtb_resources::CityId],
    ) -> Result<Self> {
        let s = &cfg.sample;
        if res.clusters.is_empty() {
            bail!(
                "no destination clusters: run `gtb clusters` (expected {})",
                cfg.paths.clusters.display()
            );
        }
        let (clusters_by_size, cluster_hubs) = destination_clusters(res, held_out);
        let cluster_weights = clusters_by_size.clone().map(|v| {
            v.iter()
                .map(|c| {
                    c.cities
                        .iter()
                        .map(|&x| s.tier_weights[res.city(x).tier as usize - 1])
                        .sum::<f64>()
                        / c.cities.len() as f64
                })
                .collect::<Vec<f64>>()
        });
        let eligible = eligible_profiles(res)?;
        let mut cells = cells(cfg, res, &clusters_by_size);
        fit(&mut cells, cfg, res);
        let mut quotas = s.quotas_for(n);
        if res.store.is_some() {
            shift_infeasible_quotas(&mut quotas, &cells);
        }
        check_quotas(cfg, &quotas, &cells)?;
        let mut cell_plan = allocate(&cells, &quotas, n);
        cell_plan.shuffle(&mut item_rng(cfg.run.seed, "sample", "cell-plan"));
        // task ids: a shuffled pool about 7.4x the split, as the release's ids look (task_000011..task_004784 for 650)
        let pool = (n * 4800).div_ceil(650).max(n + 64) as u32;
        let mut ids: Vec<u32> = (1..=pool).collect();
        ids.shuffle(&mut item_rng(cfg.run.seed, "sample", "task-ids"));
        Ok(Sampler {
            cfg,
            res,
            cells,
            clusters_by_size,
            cluster_hubs,
            cluster_weights,
            eligible,
            quotas,
            cell_plan,
            ids,
        })
    }

    /// The class of each of the first n tasks (replacements take the class of the task they
    /// replace).
    pub fn class_plan(&self) -> Vec<Class> {
        self.cell_plan
            .iter()
            .map(|&c| self.cells[c].class)
            .collect()
    }

    /// `k` destination cities held out of training splits: a seeded, tier-weighted choice.
    pub fn held_out_cities(cfg: &Config, res: &Resources, k: usize) -> Vec<gtb_resources::CityId> {
        let mut rng = item_rng(cfg.run.seed, "sample", "held-out-cities");
        let dests: Vec<gtb_resources::CityId> =
            res.destinations().filter(|&c| !res.city(c).hub).collect();
        let w: Vec<f64> = dests
            .iter()
            .map(|&c| cfg.sample.tier_weights[res.city(c).tier as usize - 1])
            .collect();
        let mut w2 = w.clone();
        let mut out = Vec::new();
        while out.len() < k.min(dests.len()) {
            let Some(i) = weighted_index(&mut rng, &w2) else {
                break;
            };
            out.push(dests[i]);
            w2[i] = 0.0;
        }
        out.sort();
        out
    }

    /// The class of slot `index` (one of the first n).
    pub fn class_at(&self, index: usize) -> Class {
        self.cells[self.cell_plan[index]].class
    }

    /// The task number of stream position `index`: the shuffled id pool (the release's look)
    /// while it lasts, then numbers above the pool, so that no two positions share an id.
    fn task_number(&self, index: usize) -> usize {
        match self.ids.get(index) {
            Some(&id) => id as usize,
            None => index + 1,
        }
    }

    pub fn quotas(&self) -> [usize; 3] {
        self.quotas
    }

    /// Draw the skeleton at stream position `index` for a class.
    pub fn draw(&self, index: usize, class: Class) -> Skeleton {
        let res = self.res;
        let mut rng = item_rng(self.cfg.run.seed, "sample", &index.to_string());
        let cell = match self.cell_plan.get(index) {
            Some(&c) if self.cells[c].class == class => &self.cells[c],
            // replacements draw from the fitted distribution of their class
            _ => {
                let cells: Vec<&Cell> = self.cells.iter().filter(|c| c.class == class).collect();
                let w: Vec<f64> = cells.iter().map(|c| c.weight).collect();
                cells[weighted_index(&mut rng, &w).expect("checked in Sampler::new")]
            }
        };
        let a = &res.archetypes[cell.archetype];
        let size = cell.cities as usize - 1;
        let k = weighted_index(&mut rng, &self.cluster_weights[size]).expect("non-empty");
        let cluster = self.clusters_by_size[size][k];
        // a hub from which every leg of the trip has some service
        let hubs = &self.cluster_hubs[size][k];
        let hub = hubs[rng.gen_range(0..hubs.len())];
        let (d0, d1) = self.cfg.date_window();
        let span = (d1 - d0).num_days();
        let date = d0 + chrono::Duration::days(rng.gen_range(0..=span));
        let pattern = a.compromise_patterns[rng.gen_range(0..a.compromise_patterns.len())].clone();
        let gender = if a.same_gender {
            rng.gen_range(0..2usize)
        } else {
            0
        };
        let mut used = Vec::new();
        let mut members = Vec::new();
        for (si, slot) in a.slots.iter().enumerate() {
            let pool = &self.eligible[cell.archetype][si][gender];
            let p = loop {
                let p = pool[rng.gen_range(0..pool.len())];
                if !used.contains(&p) {
                    break p;
                }
            };
            used.push(p);
            members.push(SkeletonMember {
                user: slot.user.clone(),
                role: slot.role.clone(),
                profile: res.profiles[p].id.clone(),
            });
        }
        Skeleton {
            index,
            task_id: format!("task_{:06}", self.task_number(index)),
            group_id: a.group_id.clone(),
            departure_city: res.city(hub).name.clone(),
            cities: cluster
                .cities
                .iter()
                .map(|&c| res.city(c).name.clone())
                .collect(),
            days: cell.days,
            date: date.format("%Y-%m-%d").to_string(),
            compromise_pattern: pattern,
            members,
            difficulty_score: cell.score,
            difficulty_type: class.as_str().to_string(),
        }
    }

    /// The first n skeletons (parallel; identical for any thread count).
    pub fn sample(&self) -> Vec<Skeleton> {
        let plan = self.class_plan();
        plan.par_iter()
            .enumerate()
            .map(|(i, &k)| self.draw(i, k))
            .collect()
    }
}

/// Iterative proportional fitting of cell weights to the configured margins.
fn fit(cells: &mut [Cell], cfg: &Config, res: &Resources) {
    let s = &cfg.sample;
    let scale = 650.0;
    type Key = Box<dyn Fn(&Cell) -> Option<(usize, usize)>>;
    let margins: Vec<(Key, Vec<Vec<f64>>)> = vec![
        (
            Box::new(|c: &Cell| Some((c.cities as usize - 1, c.class.index()))),
            s.target_cities.iter().map(|r| r.to_vec()).collect(),
        ),
        (
            Box::new(|c: &Cell| Some((days_band(c.days), c.class.index()))),
            s.target_days.iter().map(|r| r.to_vec()).collect(),
        ),
        (
            Box::new(|c: &Cell| Some((c.archetype, 0))),
            archetype_targets(cfg, res)
                .into_iter()
                .map(|t| vec![t * scale])
                .collect(),
        ),
    ];
    let size_of = |c: &Cell| res.archetypes[c.archetype].table8_size() as usize;
    let size_targets = s.target_size;
    for _round in 0..60 {
        for (key, target) in &margins {
            apply(cells, |c| key(c), target);
        }
        apply(
            cells,
            |c| {
                (2..=6)
                    .contains(&size_of(c))
                    .then(|| (size_of(c) - 2, c.class.index()))
            },
            &size_targets.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
        );
        // keep archetype shares exact at the end of each round: they are the firmest target
        let (key, target) = &margins[2];
        apply(cells, |c| key(c), target);
    }
}

/// Each archetype's share of the tasks (sums to 1). With `size_totals_from_targets`, a group
/// size gets its row total of `target_size` and its archetypes split it by their shares; sizes
/// without a target row (or without archetypes) keep their archetypes' plain shares.
pub fn archetype_targets(cfg: &Config, res: &Resources) -> Vec<f64> {
    let s = &cfg.sample;
    let total_share: f64 = res.archetypes.iter().map(|a| a.share as f64).sum();
    let plain: Vec<f64> = res
        .archetypes
        .iter()
        .map(|a| a.share as f64 / total_share)
        .collect();
    if !s.size_totals_from_targets {
        return plain;
    }
    let row_total: f64 = s.target_size.iter().flatten().sum();
    let mut out = plain.clone();
    for n in 2..=6u32 {
        let members: Vec<usize> = (0..res.archetypes.len())
            .filter(|&i| res.archetypes[i].table8_size() == n)
            .collect();
        let row_share: f64 = members.iter().map(|&i| plain[i]).sum();
        let target: f64 = s.target_size[n as usize - 2].iter().sum::<f64>() / row_total;
        if row_share > 0.0 && target > 0.0 {
            for &i in &members {
                out[i] = plain[i] / row_share * target;
            }
        }
    }
    let sum: f64 = out.iter().sum();
    out.iter().map(|x| x / sum).collect()
}

fn apply(cells: &mut [Cell], key: impl Fn(&Cell) -> Option<(usize, usize)>, target: &[Vec<f64>]) {
    let mut sums = vec![vec![0.0f64; target.first().map_or(0, Vec::len)]; target.len()];
    for c in cells.iter() {
        if let Some((r, k)) = key(c) {
            sums[r][k] += c.weight;
        }
    }
    for c in cells.iter_mut() {
        if let Some((r, k)) = key(c) {
            let (t, s) = (target[r][k], sums[r][k]);
            // a zero target is soft: it removes nothing that another margin needs
            if s > 0.0 && t > 0.0 {
                c.weight *= t / s;
            } else if s > 0.0 && t == 0.0 {
                c.weight *= 0.5;
            }
        }
    }
}
