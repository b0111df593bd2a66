//! Post-validation (paper stage 4, and beyond): POI names, cross-tier contradictions, transport
//! reachability and a solvability certificate. `check_task` fixes what can be fixed (logging
//! each fix) and returns what cannot; the build regenerates or drops such tasks, and
//! `gtb validate FILE` reports both.

mod certificate;
pub mod contradictions;
pub mod food;
mod format;
pub use format::duplicate_task_ids;
pub mod lines;
pub mod names;
mod poi_names;
mod reachability;
pub mod report;
pub mod scalars;
pub mod strategies;
mod terms;

use gtb_core::config::Config;
use gtb_core::task::Task;
use gtb_resources::{CityId, Resources};
use names::NameIndex;
use serde::Serialize;

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

/// The names findings are filed under, in the report's order.
pub const CHECKS: [&str; 11] = [
    "format",
    "poi_names",
    "contradictions",
    "scalars",
    "strategies",
    "lines",
    "reachability",
    "certificate.budget",
    "certificate.capacity",
    "certificate.opening",
    "certificate.shared_mode",
];

/// The check `[solve]` adds after the others: the task has a witness plan (`gtb_build` settle).
/// A report lists it only in builds that run it.
pub const WITNESS: &str = "witness";

/// A finding about one task: where, what, and whether it was fixed.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Finding {
    #[serde(deserialize_with = "check_name")]
    pub check: CheckName,
    pub task_id: String,
    pub user: String,
    pub city: String,
    pub field: String,
    pub item: String,
    pub message: String,
}

/// A check's name, one of `CHECKS` (an alias: serde would take a plain `&'static str` field
/// as borrowed from the input).
pub type CheckName = &'static str;

/// A check's name read back (a shard's report): one of `CHECKS`, or `WITNESS`.
fn check_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    CHECKS
        .iter()
        .chain(&[WITNESS])
        .find(|c| **c == name)
        .copied()
        .ok_or_else(|| serde::de::Error::custom(format!("unknown check {name:?}")))
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
    /// per inventory city: the terms its lines are read with (`lines`), built when first needed
    city_terms: Vec<std::sync::OnceLock<lines::Terms>>,
    /// per inventory city: the names and categories of its food rows (`food::spelled`)
    city_foods: Vec<std::sync::OnceLock<gtb_core::FastSet<&'a str>>>,
}

/// A check on any task (it may repair the task in `Mode::Fix`).
type TaskCheck = fn(&Validator, &mut Task, Mode, &mut Outcome);

/// A check that needs the task's route resolved against the inventory.
type TripCheck = fn(&Validator, &mut Task, &Trip, Mode, &mut Outcome);

/// The checks every task gets, in order: a new check is a function added here. The lines are
/// checked last, against the tables as the fixes before leave them.
const TASK_CHECKS: [TaskCheck; 8] = [
    format::check,
    poi_names::check_attractions,
    poi_names::check_food,
    contradictions::check,
    contradictions::rejected_areas,
    scalars::check,
    strategies::check,
    lines::check,
];

/// The checks of a task whose hub, cities and days are known, in order. Reachability comes
/// first: the members it makes compromisable no longer bind the certificate.
const TRIP_CHECKS: [TripCheck; 5] = [
    reachability::check,
    certificate::shared_mode,
    certificate::budget,
    certificate::capacity,
    certificate::opening,
];

/// A task's route as inventory ids: departure hub, cities in visit order, and trip days.
pub(crate) struct Trip {
    hub: CityId,
    cities: Vec<CityId>,
    days: u32,
}

impl Trip {
    /// `None` when the hub, a city or the day phrase is unknown, or there is no city (the
    /// format check says which).
    fn resolve(res: &Resources, t: &Task) -> Option<Trip> {
        if t.metadata.cities.is_empty() {
            return None;
        }
        Some(Trip {
            hub: res.city_id(&t.metadata.departure_city)?,
            cities: t
                .metadata
                .cities
                .iter()
                .map(|c| res.city_id(c))
                .collect::<Option<_>>()?,
            days: t.days()?,
        })
    }
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

impl<'a> Validator<'a> {
    pub fn new(res: &'a Resources, cfg: &'a Config) -> Self {
        Validator {
            res,
            cfg,
            names: NameIndex::new(res, cfg.validate.fuzzy_threshold, cfg.validate.fuzzy_margin),
            city_terms: res.cities.iter().map(|_| Default::default()).collect(),
            city_foods: res.cities.iter().map(|_| Default::default()).collect(),
        }
    }

    /// Run every check on a task, in the order of `TASK_CHECKS` then, when the route is
    /// known to the inventory, `TRIP_CHECKS`. In `Mode::Fix` fixable issues are repaired in
    /// place.
    pub fn check_task(&self, t: &mut Task, mode: Mode) -> Outcome {
        let mut out = Outcome::default();
        for check in TASK_CHECKS {
            check(self, t, mode, &mut out);
        }
        let Some(trip) = Trip::resolve(self.res, t) else {
            return out;
        };
        for check in TRIP_CHECKS {
            check(self, t, &trip, mode, &mut out);
        }
        out
    }

    /// Record a finding about an issue a fix can resolve: a fix in `Mode::Fix` (the caller
    /// repaired the task), a problem in `Mode::Audit`.
    fn fixable(out: &mut Outcome, mode: Mode, f: Finding) {
        if mode == Mode::Fix {
            out.fixes.push(f)
        } else {
            out.problems.push(f)
        }
    }
}
