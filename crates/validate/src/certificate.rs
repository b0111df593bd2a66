//! The solvability certificate: evidence that a plan satisfying every member who cannot yield
//! exists. `shared_mode`: every leg has a served mode no firm member rejects; `budget`: every
//! budget covers the cheapest such trip; `capacity`: each member's musts fit the city's days;
//! `opening`: each must-visit sight is open on some day of the trip.

use super::{Mode, Outcome, Trip, Validator, finding, stay_floor};
use chrono::Datelike;
use gtb_core::task::Task;
use gtb_resources::CityId;

impl Validator<'_> {
    /// Per leg of the trip, the cheapest served fare of a mode that no firm (non-compromisable)
    /// member rejects, with at most `validate.max_transfers` changes, or the leg's cities when
    /// there is none. Intercity transport is shared; the mode may differ from leg to leg.
    fn shared_leg_fares(&self, t: &Task, trip: &Trip) -> Vec<Result<u32, (CityId, CityId)>> {
        let rejected = |m: &str| {
            t.user_preferences.values().any(|e| {
                !e.compromisable
                    && e.preference
                        .global_constraints
                        .transport
                        .reject
                        .iter()
                        .any(|r| r == m)
            })
        };
        self.res
            .route_legs(trip.hub, &trip.cities)
            .into_iter()
            .map(|(a, b)| {
                let fares = self.res.transport(a, b).iter();
                fares
                    .filter(|o| !rejected(o.mode) && o.transfers <= self.cfg.validate.max_transfers)
                    .map(|o| o.fare)
                    .min()
                    .ok_or((a, b))
            })
            .collect()
    }
}

pub(super) fn shared_mode(v: &Validator, t: &mut Task, trip: &Trip, _: Mode, out: &mut Outcome) {
    for (a, b) in v
        .shared_leg_fares(t, trip)
        .into_iter()
        .filter_map(Result::err)
    {
        out.problems.push(finding(
            "certificate.shared_mode",
            t,
            "",
            "",
            "global_constraints.transport",
            "",
            format!(
                "no intercity mode from {} to {} is served and acceptable to every member who cannot yield",
                v.res.city(a).name,
                v.res.city(b).name
            ),
        ));
    }
}

/// Budget: cheapest shared transport + hotel nights (two per room) + meals.
pub(super) fn budget(v: &Validator, t: &mut Task, trip: &Trip, _: Mode, out: &mut Outcome) {
    let transport_min: u32 = v.shared_leg_fares(t, trip).into_iter().flatten().sum();
    let (hotel_min, meals_min) =
        stay_floor(v.res, &trip.cities, trip.days, v.cfg.validate.min_meal_cost);
    let need = transport_min + hotel_min + meals_min;
    for (u, e) in &t.user_preferences {
        let b = e.preference.global_constraints.avg_budget;
        if b < need {
            out.problems.push(finding(
                "certificate.budget",
                t,
                u,
                "",
                "global_constraints.avg_budget",
                &b.to_string(),
                format!(
                    "budget {b} cannot cover the cheapest shared trip: transport {transport_min} + hotel {hotel_min} + meals {meals_min} = {need} CNY"
                ),
            ));
        }
    }
}

/// Capacity: each member's musts fit into the days of the city.
pub(super) fn capacity(_: &Validator, t: &mut Task, trip: &Trip, _: Mode, out: &mut Outcome) {
    let (days, n_cities) = (trip.days, trip.cities.len() as u32);
    for (u, e) in &t.user_preferences {
        let p = &e.preference;
        let per_day = p.global_constraints.intensity.max_poi_per_day.max(1);
        for (i, (city, cp)) in p.city_specific_preferences.iter().enumerate() {
            let city_days = (days / n_cities + u32::from((i as u32) < days % n_cities)).max(1);
            let n = cp.attractions.must_visit.len() as u32;
            if n > city_days * per_day {
                out.problems.push(finding(
                    "certificate.capacity",
                    t,
                    u,
                    city,
                    "attractions.must_visit",
                    "",
                    format!(
                        "{n} must-visit sights do not fit into {city_days} day(s) x {per_day} per day"
                    ),
                ));
            }
        }
    }
}

/// Opening: each must_visit open on at least one day of the trip.
pub(super) fn opening(v: &Validator, t: &mut Task, trip: &Trip, _: Mode, out: &mut Outcome) {
    let Ok(start) = chrono::NaiveDate::parse_from_str(&t.time, "%Y-%m-%d") else {
        return;
    };
    let days = trip.days;
    // checked: a date at the end of the calendar is a format finding, not a panic
    let dates: Vec<chrono::NaiveDate> = (0..u64::from(days))
        .filter_map(|k| start.checked_add_days(chrono::Days::new(k)))
        .collect();
    for (u, e) in &t.user_preferences {
        for (city, cp) in &e.preference.city_specific_preferences {
            let Some(cid) = v.res.city_id(city) else {
                continue;
            };
            for item in &cp.attractions.must_visit {
                let Some(a) = v
                    .res
                    .attraction_index(cid, item)
                    .map(|i| &v.res.attractions[cid as usize][i])
                else {
                    continue;
                };
                let Some(h) = &a.hours else { continue };
                let open = dates
                    .iter()
                    .any(|d| h.open_on(d.month(), d.day(), d.weekday().number_from_monday() as u8));
                if !open {
                    out.problems.push(finding(
                        "certificate.opening",
                        t,
                        u,
                        city,
                        "attractions.must_visit",
                        item,
                        format!("closed on every day of the trip ({} + {days} days)", t.time),
                    ));
                }
            }
        }
    }
}
