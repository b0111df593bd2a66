//! Post-validation (paper stage 4, and beyond): POI names, cross-tier contradictions, transport
//! reachability and a solvability certificate. `check_task` fixes what can be fixed (logging
//! each fix) and returns what cannot; the build regenerates or drops such tasks, and
//! `gtb validate FILE` reports both.

pub mod names;
pub mod report;

use crate::config::Config;
use crate::resources::{CityId, Resources, vocab};
use crate::task::{Buckets, Task};
use chrono::Datelike;
use names::{Match, NameIndex};
use serde::Serialize;

/// The checks, in the order they run.
/// The cheapest stay per person on a route: hotel nights (the nights spread over the cities in
/// order, two people per room, the city's lowest band) and `days` meals. With the cheapest
/// intercity fares it is the budget floor of the solvability certificate.
pub fn stay_floor(res: &Resources, cities: &[CityId], days: u32, min_meal_cost: u32) -> (u32, u32) {
    let nights = days.saturating_sub(1);
    let n = cities.len().max(1) as u32;
    let hotel = cities
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let night = res.hotels[c as usize]
                .iter()
                .map(|h| h.price_low)
                .min()
                .unwrap_or(150);
            night * (nights / n + u32::from((i as u32) < nights % n)) / 2
        })
        .sum();
    (hotel, days * min_meal_cost)
}

pub const CHECKS: [&str; 8] = [
    "format",
    "poi_names",
    "contradictions",
    "reachability",
    "certificate.budget",
    "certificate.capacity",
    "certificate.opening",
    "certificate.shared_mode",
];

/// A finding about one task: where, what, and whether it was fixed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Finding {
    pub check: &'static str,
    pub task_id: String,
    pub user: String,
    pub city: String,
    pub field: String,
    pub item: String,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.task_id, self.check)?;
        for (k, v) in [
            ("user", &self.user),
            ("city", &self.city),
            ("field", &self.field),
            ("item", &self.item),
        ] {
            if !v.is_empty() {
                write!(f, " {k}={v}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// What validating one task produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// applied fixes (the task was changed)
    pub fixes: Vec<Finding>,
    /// problems that remain: the task is not acceptable as it is
    pub problems: Vec<Finding>,
}

/// Whether fixable issues are fixed (build) or reported as problems (`gtb validate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Fix,
    Audit,
}

pub struct Validator<'a> {
    pub res: &'a Resources,
    pub cfg: &'a Config,
    pub names: NameIndex,
}

/// A finding about task `t`.
fn finding(
    check: &'static str,
    t: &Task,
    user: &str,
    city: &str,
    field: &str,
    item: &str,
    message: String,
) -> Finding {
    Finding {
        check,
        task_id: t.task_id.clone(),
        user: user.into(),
        city: city.into(),
        field: field.into(),
        item: item.into(),
        message,
    }
}

/// Remove from `weak` every item that is in `strong`; returns the removed items.
/// Records one fix: (user, strong field, weak field, removed values).
type FixLog<'a> = dyn FnMut(&str, &str, &str, Vec<String>) + 'a;

fn keep_stronger(strong: &[String], weak: &mut Vec<String>) -> Vec<String> {
    let removed: Vec<String> = weak
        .iter()
        .filter(|x| strong.contains(x))
        .cloned()
        .collect();
    weak.retain(|x| !strong.contains(x));
    removed
}

impl<'a> Validator<'a> {
    pub fn new(res: &'a Resources, cfg: &'a Config) -> Self {
        Validator {
            res,
            cfg,
            names: NameIndex::new(res, cfg.validate.fuzzy_threshold, cfg.validate.fuzzy_margin),
        }
    }

    /// Run every check on a task. In `Mode::Fix` fixable issues are repaired in place.
    pub fn check_task(&self, t: &mut Task, mode: Mode) -> Outcome {
        let mut out = Outcome::default();
        let note = |out: &mut Outcome, f: Finding, fixed: bool| {
            if fixed && mode == Mode::Fix {
                out.fixes.push(f)
            } else {
                out.problems.push(f)
            }
        };
        let res = self.res;
        // ---- format: cities, vocabularies ------------------------------------------------
        let hub = res.city_id(&t.metadata.departure_city);
        if hub.is_none() {
            out.problems.push(finding(
                "format",
                t,
                "",
                &t.metadata.departure_city,
                "metadata.departure_city",
                &t.metadata.departure_city,
                "departure city is not in the inventory".into(),
            ));
        }
        let cities: Vec<Option<CityId>> =
            t.metadata.cities.iter().map(|c| res.city_id(c)).collect();
        for (c, id) in t.metadata.cities.iter().zip(&cities) {
            if id.is_none() {
                out.problems.push(finding(
                    "format",
                    t,
                    "",
                    c,
                    "metadata.cities",
                    c,
                    "city is not in the inventory".into(),
                ));
            }
        }
        let days = t.days();
        if days.is_none() {
            out.problems.push(finding(
                "format",
                t,
                "",
                "",
                "metadata.date",
                &t.metadata.date,
                "not one of the six day phrases".into(),
            ));
        }
        let users: Vec<String> = t.user_preferences.keys().cloned().collect();
        for u in &users {
            let g = &t.user_preferences[u].preference.global_constraints;
            for (field, list) in [
                ("transport.must", &g.transport.must),
                ("transport.prefer", &g.transport.prefer),
                ("transport.avoid", &g.transport.avoid),
                ("transport.reject", &g.transport.reject),
            ] {
                for m in list.iter().filter(|m| !vocab::is_transport_mode(m)) {
                    out.problems.push(finding(
                        "format",
                        t,
                        u,
                        "",
                        field,
                        m,
                        "not one of 飞机/高铁/火车/自驾".into(),
                    ));
                }
            }
            for (field, list) in [
                ("hotel_preference.prefer", &g.hotel_preference.prefer),
                ("hotel_preference.avoid", &g.hotel_preference.avoid),
            ] {
                for m in list.iter().filter(|m| !vocab::is_hotel_category(m)) {
                    out.problems.push(finding(
                        "format",
                        t,
                        u,
                        "",
                        field,
                        m,
                        "not one of the 13 hotel categories".into(),
                    ));
                }
            }
            let csp: Vec<&String> = t.user_preferences[u]
                .preference
                .city_specific_preferences
                .keys()
                .collect();
            if csp != t.metadata.cities.iter().collect::<Vec<_>>() {
                out.problems.push(finding(
                    "format",
                    t,
                    u,
                    "",
                    "city_specific_preferences",
                    "",
                    format!(
                        "cities {csp:?} differ from metadata.cities {:?}",
                        t.metadata.cities
                    ),
                ));
            }
        }
        // ---- POI names ----------------------------------------------------------------------
        for u in &users {
            let entry = t.user_preferences.get_mut(u).expect("user");
            for (city, cp) in entry.preference.city_specific_preferences.iter_mut() {
                let Some(cid) = res.city_id(city) else {
                    continue;
                };
                for (field, list) in [
                    ("attractions.must_visit", &mut cp.attractions.must_visit),
                    ("attractions.reject_visit", &mut cp.attractions.reject_visit),
                ] {
                    for item in list.iter_mut() {
                        match self.names.lookup(cid as usize, item) {
                            Match::Exact => {}
                            Match::Snapped(canon, sim) => {
                                let f = Finding {
                                    check: "poi_names",
                                    task_id: t.task_id.clone(),
                                    user: u.clone(),
                                    city: city.clone(),
                                    field: field.into(),
                                    item: item.clone(),
                                    message: format!(
                                        "snapped to inventory name {canon:?} (similarity {sim:.2})"
                                    ),
                                };
                                if mode == Mode::Fix {
                                    *item = canon;
                                    out.fixes.push(f);
                                } else {
                                    out.fixes.push(f);
                                }
                            }
                            Match::Unknown { best } => {
                                let hint = best
                                    .map(|(c, s)| format!("; closest is {c:?} ({s:.2})"))
                                    .unwrap_or_default();
                                out.problems.push(Finding {
                                    check: "poi_names",
                                    task_id: t.task_id.clone(),
                                    user: u.clone(),
                                    city: city.clone(),
                                    field: field.into(),
                                    item: item.clone(),
                                    message: format!("not a POI of {city}{hint}"),
                                });
                            }
                        }
                    }
                }
            }
        }
        // food values: a vocabulary category, or a dish / restaurant of that city's inventory
        for u in &users {
            for (city, cp) in &t.user_preferences[u].preference.city_specific_preferences {
                let Some(cid) = res.city_id(city) else {
                    continue;
                };
                let foods = &res.food[cid as usize];
                let known = |v: &str| {
                    vocab::is_food_category(v) || foods.iter().any(|f| f.name == v) || {
                        let nv = names::normalize(v);
                        foods.iter().any(|f| names::normalize(&f.name) == nv)
                    }
                };
                for (field, list) in [
                    ("food.must_eat", &cp.food.must_eat),
                    ("food.prefer_eat", &cp.food.prefer_eat),
                    ("food.avoid_eat", &cp.food.avoid_eat),
                    ("food.reject_eat", &cp.food.reject_eat),
                ] {
                    for item in list.iter().filter(|v| !known(v)) {
                        out.problems.push(finding(
                            "poi_names",
                            t,
                            u,
                            city,
                            field,
                            item,
                            format!("neither a food category nor a dish or restaurant of {city}"),
                        ));
                    }
                }
            }
        }
        // ---- cross-tier contradictions: keep the stronger tier -----------------------------
        for u in &users {
            let tid = t.task_id.clone();
            let entry = t.user_preferences.get_mut(u).expect("user");
            let mut found: Vec<Finding> = Vec::new();
            let mut log =
                |city: &str, weak_field: &str, strong_field: &str, removed: Vec<String>| {
                    for item in removed {
                        found.push(Finding {
                            check: "contradictions",
                            task_id: tid.clone(),
                            user: u.clone(),
                            city: city.into(),
                            field: weak_field.into(),
                            item,
                            message: format!(
                                "also in {strong_field}, the stronger tier{}",
                                if mode == Mode::Fix {
                                    ", which is kept"
                                } else {
                                    ""
                                }
                            ),
                        });
                    }
                };
            let g = &mut entry.preference.global_constraints;
            let tr: &mut Buckets = &mut g.transport;
            let fix_tr = |strong: Vec<String>,
                          weak: &mut Vec<String>,
                          sf: &str,
                          wf: &str,
                          log: &mut FixLog<'_>| {
                let removed = if mode == Mode::Fix {
                    keep_stronger(&strong, weak)
                } else {
                    weak.iter()
                        .filter(|x| strong.contains(x))
                        .cloned()
                        .collect()
                };
                log("", wf, sf, removed);
            };
            let (must, reject, prefer) = (tr.must.clone(), tr.reject.clone(), tr.prefer.clone());
            fix_tr(
                must.clone(),
                &mut tr.reject,
                "transport.must",
                "transport.reject",
                &mut log,
            );
            fix_tr(
                must.clone(),
                &mut tr.prefer,
                "transport.must",
                "transport.prefer",
                &mut log,
            );
            fix_tr(
                must.clone(),
                &mut tr.avoid,
                "transport.must",
                "transport.avoid",
                &mut log,
            );
            fix_tr(
                reject.clone(),
                &mut tr.prefer,
                "transport.reject",
                "transport.prefer",
                &mut log,
            );
            fix_tr(
                reject,
                &mut tr.avoid,
                "transport.reject",
                "transport.avoid",
                &mut log,
            );
            fix_tr(
                prefer,
                &mut tr.avoid,
                "transport.prefer",
                "transport.avoid",
                &mut log,
            );
            let hp = g.hotel_preference.prefer.clone();
            fix_tr(
                hp,
                &mut g.hotel_preference.avoid,
                "hotel_preference.prefer",
                "hotel_preference.avoid",
                &mut log,
            );
            for (city, cp) in entry.preference.city_specific_preferences.iter_mut() {
                let mut fix = |strong: Vec<String>, weak: &mut Vec<String>, sf: &str, wf: &str| {
                    let removed = if mode == Mode::Fix {
                        keep_stronger(&strong, weak)
                    } else {
                        weak.iter()
                            .filter(|x| strong.contains(x))
                            .cloned()
                            .collect()
                    };
                    log(city, wf, sf, removed);
                };
                let a = &mut cp.attractions;
                fix(
                    a.must_visit.clone(),
                    &mut a.reject_visit,
                    "attractions.must_visit",
                    "attractions.reject_visit",
                );
                fix(
                    a.category_pref.positive.clone(),
                    &mut a.category_pref.negative,
                    "category_pref.positive",
                    "category_pref.negative",
                );
                let fo = &mut cp.food;
                let (me, re, pe) = (
                    fo.must_eat.clone(),
                    fo.reject_eat.clone(),
                    fo.prefer_eat.clone(),
                );
                fix(
                    me.clone(),
                    &mut fo.reject_eat,
                    "food.must_eat",
                    "food.reject_eat",
                );
                fix(
                    me.clone(),
                    &mut fo.avoid_eat,
                    "food.must_eat",
                    "food.avoid_eat",
                );
                fix(me, &mut fo.prefer_eat, "food.must_eat", "food.prefer_eat");
                fix(
                    re.clone(),
                    &mut fo.prefer_eat,
                    "food.reject_eat",
                    "food.prefer_eat",
                );
                fix(re, &mut fo.avoid_eat, "food.reject_eat", "food.avoid_eat");
                fix(pe, &mut fo.avoid_eat, "food.prefer_eat", "food.avoid_eat");
            }
            for f in found {
                note(&mut out, f, true);
            }
        }
        let (Some(hub), Some(days)) = (hub, days) else {
            return out;
        };
        if cities.iter().any(Option::is_none) {
            return out;
        }
        let cities: Vec<CityId> = cities.into_iter().flatten().collect();
        // ---- transport reachability -> compromisable ----------------------------------------
        // a must/prefer mode that serves no leg of the route at all cannot be honoured
        let served = res.modes_on_some_leg(hub, &cities);
        for u in &users {
            let entry = &t.user_preferences[u];
            let tr = &entry.preference.global_constraints.transport;
            let missing: Vec<&String> = tr
                .must
                .iter()
                .chain(tr.prefer.iter())
                .filter(|m| vocab::is_transport_mode(m) && !served.contains(&m.as_str()))
                .collect();
            if let Some(m) = missing.first() {
                let m = m.to_string();
                if !entry.compromisable {
                    let f = finding(
                        "reachability",
                        t,
                        u,
                        "",
                        "global_constraints.transport",
                        &m,
                        format!(
                            "{m} serves no leg of {} -> {} -> {}; member made compromisable",
                            t.metadata.departure_city,
                            t.metadata.cities.join(" -> "),
                            t.metadata.departure_city
                        ),
                    );
                    if mode == Mode::Fix {
                        t.user_preferences.get_mut(u).expect("user").compromisable = true;
                        t.metadata.compromise_pattern.push(u.clone());
                        out.fixes.push(f);
                    } else {
                        out.problems.push(f);
                    }
                }
            }
        }
        // ---- solvability certificate ---------------------------------------------------------
        let legs = res.route_legs(hub, &cities);
        let firm = |u: &str| !t.user_preferences[u].compromisable;
        // shared transport: every leg has a served mode that no firm member rejects (intercity
        // transport is shared; the mode may differ from leg to leg)
        let rejected = |m: &str| {
            users.iter().filter(|u| firm(u)).any(|u| {
                t.user_preferences[u.as_str()]
                    .preference
                    .global_constraints
                    .transport
                    .reject
                    .iter()
                    .any(|r| r == m)
            })
        };
        let mut leg_fares: Vec<u32> = Vec::with_capacity(legs.len());
        for &(a, b) in &legs {
            match res.transport(a, b).iter().filter(|o| !rejected(o.mode)).map(|o| o.fare).min() {
                Some(f) => leg_fares.push(f),
                None => out.problems.push(finding("certificate.shared_mode", t, "", "", "global_constraints.transport", "", format!("no intercity mode from {} to {} is served and acceptable to every member who cannot yield", res.city(a).name, res.city(b).name))),
            }
        }
        // budget: cheapest shared transport + hotel nights (two per room) + meals
        let transport_min: u32 = leg_fares.iter().sum();
        let (hotel_min, meals_min) =
            stay_floor(res, &cities, days, self.cfg.validate.min_meal_cost);
        let need = transport_min + hotel_min + meals_min;
        for u in &users {
            let b = t.user_preferences[u]
                .preference
                .global_constraints
                .avg_budget;
            if b < need {
                out.problems.push(finding("certificate.budget", t, u, "", "global_constraints.avg_budget", &b.to_string(), format!("budget {b} cannot cover the cheapest shared trip: transport {transport_min} + hotel {hotel_min} + meals {meals_min} = {need} CNY")));
            }
        }
        // capacity: each member's musts fit into the days of the city
        for u in &users {
            let p = &t.user_preferences[u].preference;
            let per_day = p.global_constraints.intensity.max_poi_per_day.max(1);
            for (i, (city, cp)) in p.city_specific_preferences.iter().enumerate() {
                let city_days = (days / cities.len() as u32
                    + u32::from((i as u32) < days % cities.len() as u32))
                .max(1);
                let n = cp.attractions.must_visit.len() as u32;
                if n > city_days * per_day {
                    out.problems.push(finding("certificate.capacity", t, u, city, "attractions.must_visit", "", format!("{n} must-visit sights do not fit into {city_days} day(s) x {per_day} per day")));
                }
            }
        }
        // opening: each must_visit open on at least one day of the trip
        if let Ok(start) = chrono::NaiveDate::parse_from_str(&t.time, "%Y-%m-%d") {
            let trip: Vec<chrono::NaiveDate> = (0..days as i64)
                .map(|k| start + chrono::Duration::days(k))
                .collect();
            for u in &users {
                for (city, cp) in &t.user_preferences[u].preference.city_specific_preferences {
                    let Some(cid) = res.city_id(city) else {
                        continue;
                    };
                    for item in &cp.attractions.must_visit {
                        let Some(a) = res.attractions[cid as usize]
                            .iter()
                            .find(|a| a.name == *item)
                        else {
                            continue;
                        };
                        let Some(h) = &a.hours else { continue };
                        if !trip.iter().any(|d| {
                            h.open_on(d.month(), d.day(), d.weekday().number_from_monday() as u8)
                        }) {
                            out.problems.push(finding(
                                "certificate.opening",
                                t,
                                u,
                                city,
                                "attractions.must_visit",
                                item,
                                format!(
                                    "closed on every day of the trip ({} + {days} days)",
                                    t.time
                                ),
                            ));
                        }
                    }
                }
            }
        }
        out
    }
}
