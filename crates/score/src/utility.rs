//! Group utility and fairness as the release computes them (`group_utility.py`,
//! `group_fairness.py`), on any plan JSON and the members' effective preferences.
//!
//! Per member: attractions (must_visit +2 / reject_visit −2 once per item; category_pref ±1 per
//! other attraction), food (per restaurant), transport (per intercity trip), hotel (per
//! night), intensity (−2 per day and cap exceeded) and budget (−2 once). Group utility is the
//! sum minus the split penalty (K parallel teams in one time slot cost K−1); fairness is
//! min/max of the members' totals (before the split penalty), with the release's special cases.

use super::pyval::{self, Participants, get, has, key, list, number, strings, text, truthy};
use super::resolver::PoiDb;
use super::rules::{self, FoodLists, Term};
use super::split::plan_split_penalty;
use super::validity::{label, overlapping_pairs};
use gtb_core::FastSet as HashSet;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

/// A scored item with where it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detail {
    #[serde(flatten)]
    pub term: Term,
    /// the city block (attractions, food), or "" for global fields
    pub city: String,
    /// the day number (transport, intensity), or 0
    pub day: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Breakdown {
    pub attractions: i64,
    pub food: i64,
    pub transport: i64,
    pub hotel: i64,
    pub intensity: i64,
    pub budget: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UserScore {
    pub total: i64,
    pub breakdown: Breakdown,
    /// what the member pays (intercity, hotels, own meals), as the budget rule sums it
    pub cost: f64,
    pub details: Vec<Detail>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Utility {
    pub per_user: IndexMap<String, UserScore>,
    pub split_penalty: i64,
    pub total_score: i64,
    pub num_users: usize,
    pub per_user_average_score: f64,
    pub fairness: f64,
}

/// Round half to even at 2 decimals, as Python's `round(x, 2)` does on most values.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round_ties_even() / 100.0
}

/// An activity flattened with its day and city (`_get_all_activities`).
struct Flat<'a> {
    act: &'a Value,
    /// position of the day in `days`
    day_index: usize,
    day: i64,
    day_key: Option<String>,
    city: Option<&'a str>,
}

fn flatten(plan: &Value) -> Vec<Flat<'_>> {
    let mut out = Vec::new();
    for (day_index, day) in list(plan, "days").iter().enumerate() {
        let d = get(day, "day");
        let (dn, dk) = (
            d.and_then(Value::as_i64).unwrap_or(0),
            key(Some(d.unwrap_or(&Value::from(0)))),
        );
        for seg in list(day, "city_segments") {
            if text(seg, "type") == "intercity_transport" {
                out.push(Flat {
                    act: seg,
                    day_index,
                    day: dn,
                    day_key: dk.clone(),
                    city: None,
                });
            } else if has(seg, "activities") {
                for a in list(seg, "activities") {
                    out.push(Flat {
                        act: a,
                        day_index,
                        day: dn,
                        day_key: dk.clone(),
                        city: Some(text(seg, "city")),
                    });
                }
            }
        }
    }
    out
}

type ActKey = (Option<String>, String, String);

fn act_key(f: &Flat) -> ActKey {
    (
        f.day_key.clone(),
        label(f.act).to_string(),
        text(f.act, "start_time").to_string(),
    )
}

/// `_find_invalid_split_activities`: activities in which some member is double-booked.
fn invalid_activities(plan: &Value, users: &[String]) -> HashSet<ActKey> {
    let mut out = HashSet::default();
    for day in list(plan, "days") {
        let dk = key(Some(get(day, "day").unwrap_or(&Value::from(0))));
        for seg in list(day, "city_segments") {
            if !has(seg, "activities") {
                continue;
            }
            let acts = list(seg, "activities");
            for (_, i, j) in overlapping_pairs(acts, users) {
                for a in [&acts[i], &acts[j]] {
                    out.insert((
                        dk.clone(),
                        label(a).to_string(),
                        text(a, "start_time").to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// Record one scored term with where it happened, and return its score for the caller's
/// breakdown part.
fn record(details: &mut Vec<Detail>, t: Term, city: &str, day: i64) -> i64 {
    let score = t.score as i64;
    details.push(Detail {
        term: t,
        city: city.to_string(),
        day,
    });
    score
}

/// The member's valid activities of one kind in one city block: the ones they join and that
/// no double booking invalidates.
fn joined<'f>(
    flat: &'f [Flat],
    kind: &str,
    city: &str,
    user: &str,
    invalid: &HashSet<ActKey>,
) -> Vec<&'f Flat<'f>> {
    flat.iter()
        .filter(|f| {
            text(f.act, "type") == kind
                && f.city == Some(city)
                && Participants::of(f.act).contains(user)
                && !invalid.contains(&act_key(f))
        })
        .collect()
}

/// One city's attraction terms: must_visit / reject_visit once per item seen, then the
/// category preferences of every sight no strong rule already matched.
fn attraction_terms(
    sights: &[&Flat],
    city: &str,
    att: &Value,
    db: &PoiDb,
    details: &mut Vec<Detail>,
) -> i64 {
    let mut sum = 0;
    let (must, reject) = (strings(att, "must_visit"), strings(att, "reject_visit"));
    let cat = get(att, "category_pref").unwrap_or(&Value::Null);
    let (pos, neg) = (strings(cat, "positive"), strings(cat, "negative"));
    for (list, field, score) in [(&must, "must_visit", 2), (&reject, "reject_visit", -2)] {
        for item in list.iter() {
            if sights
                .iter()
                .any(|f| text(f.act, "location").contains(item))
            {
                let t = Term {
                    field,
                    item: item.to_string(),
                    score,
                };
                sum += record(details, t, city, 0);
            }
        }
    }
    for f in sights {
        let loc = text(f.act, "location");
        if rules::strong_match(&must, &reject, loc) {
            continue;
        }
        let Some(c) = db.category(loc, city) else {
            continue;
        };
        for t in rules::category_terms(&pos, &neg, loc, c) {
            sum += record(details, t, city, 0);
        }
    }
    sum
}

/// One city's food terms, restaurant by restaurant, from the member's four food lists.
fn food_terms(
    meals: &[&Flat],
    city: &str,
    food: &Value,
    db: &PoiDb,
    details: &mut Vec<Detail>,
) -> i64 {
    let mut sum = 0;
    let lists = (
        strings(food, "must_eat"),
        strings(food, "reject_eat"),
        strings(food, "prefer_eat"),
        strings(food, "avoid_eat"),
    );
    let fl = FoodLists {
        must: &lists.0,
        reject: &lists.1,
        prefer: &lists.2,
        avoid: &lists.3,
    };
    for f in meals {
        let loc = text(f.act, "location");
        let Some(c) = db.category(loc, city) else {
            continue;
        };
        for t in rules::food_terms(&fl, loc, c) {
            sum += record(details, t, city, 0);
        }
    }
    sum
}

/// Transport terms, one set per intercity trip with a mode (`g` is `global_constraints`).
fn transport_terms(flat: &[Flat], g: &Value, details: &mut Vec<Detail>) -> i64 {
    let mut sum = 0;
    let tr = get(g, "transport").unwrap_or(&Value::Null);
    let (m, p, a, r) = (
        strings(tr, "must"),
        strings(tr, "prefer"),
        strings(tr, "avoid"),
        strings(tr, "reject"),
    );
    for f in flat.iter().filter(|f| f.city.is_none()) {
        let mode = text(f.act, "transport_mode");
        if mode.is_empty() {
            continue;
        }
        for t in rules::transport_terms(&m, &p, &a, &r, mode) {
            sum += record(details, t, "", f.day);
        }
    }
    sum
}

/// Hotel terms, one per hotel night whose category the preference names (`g` is
/// `global_constraints`).
fn hotel_terms(flat: &[Flat], g: &Value, db: &PoiDb, details: &mut Vec<Detail>) -> i64 {
    let mut sum = 0;
    let hp = get(g, "hotel_preference").unwrap_or(&Value::Null);
    let (hp_prefer, hp_avoid) = (strings(hp, "prefer"), strings(hp, "avoid"));
    if hp_prefer.is_empty() && hp_avoid.is_empty() {
        return 0;
    }
    for f in flat.iter().filter(|f| text(f.act, "type") == "hotel") {
        let city = f.city.unwrap_or("");
        let Some(c) = db.category(text(f.act, "location"), city) else {
            continue;
        };
        if let Some(t) = rules::hotel_term(&hp_prefer, &hp_avoid, c) {
            sum += record(details, t, city, f.day);
        }
    }
    sum
}

/// Score one member (`per_user` entry); `prefs` is the member's `preference` object.
fn score_user(
    flat: &[Flat],
    user: &str,
    prefs: &Value,
    invalid: &HashSet<ActKey>,
    db: &PoiDb,
) -> UserScore {
    let mut details: Vec<Detail> = Vec::new();
    let mut b = Breakdown::default();
    let cities = get(prefs, "city_specific_preferences")
        .and_then(Value::as_object)
        .into_iter()
        .flatten();
    for (city, cp) in cities {
        let att = get(cp, "attractions").unwrap_or(&Value::Null);
        let sights = joined(flat, "attraction", city, user, invalid);
        b.attractions += attraction_terms(&sights, city, att, db, &mut details);
        let food = get(cp, "food").unwrap_or(&Value::Null);
        let meals = joined(flat, "food", city, user, invalid);
        b.food += food_terms(&meals, city, food, db, &mut details);
    }
    let g = get(prefs, "global_constraints").unwrap_or(&Value::Null);
    b.transport += transport_terms(flat, g, &mut details);
    b.hotel += hotel_terms(flat, g, db, &mut details);
    intensity(flat, user, g, &mut details, &mut b);
    let cost = cost_of(flat, user);
    if let Some(budget) = number(get(g, "avg_budget")).filter(|b| *b != 0.0)
        && cost > budget
    {
        let t = Term {
            field: "avg_budget",
            item: format!("{cost} > {budget}"),
            score: -2,
        };
        b.budget += record(&mut details, t, "", 0);
    }
    UserScore {
        total: b.attractions + b.food + b.transport + b.hotel + b.intensity + b.budget,
        breakdown: b,
        cost,
        details,
    }
}

/// The intensity caps, day by day: attractions per day, and attraction plus transfer minutes.
fn intensity(flat: &[Flat], user: &str, g: &Value, details: &mut Vec<Detail>, b: &mut Breakdown) {
    let it = get(g, "intensity").unwrap_or(&Value::Null);
    let max_poi = number(get(it, "max_poi_per_day")).unwrap_or(0.0);
    let max_hours = number(get(it, "max_active_hours")).unwrap_or(0.0);
    if max_poi == 0.0 && max_hours == 0.0 {
        return;
    }
    let mut days: Vec<(usize, i64)> = flat.iter().map(|f| (f.day_index, f.day)).collect();
    days.dedup();
    // days without activities count nothing and cannot exceed a cap
    for (di, dn) in days {
        let (mut n, mut minutes) = (0u32, 0u32);
        for f in flat
            .iter()
            .filter(|f| f.day_index == di && f.city.is_some())
        {
            if !Participants::of(f.act).contains(user) {
                continue;
            }
            match text(f.act, "type") {
                "attraction" => {
                    n += 1;
                    minutes += pyval::duration(f.act);
                }
                "intracity_transport" => minutes += pyval::duration(f.act),
                _ => {}
            }
        }
        let mut fire = |field: &'static str, item: String| {
            b.intensity -= 2;
            details.push(Detail {
                term: Term {
                    field,
                    item,
                    score: -2,
                },
                city: String::new(),
                day: dn,
            });
        };
        if max_poi > 0.0 && f64::from(n) > max_poi {
            fire("intensity.max_poi_per_day", format!("{n} > {max_poi}"));
        }
        if max_hours > 0.0 && f64::from(minutes) / 60.0 > max_hours {
            fire(
                "intensity.max_active_hours",
                format!("{} > {max_hours}", round2(f64::from(minutes) / 60.0)),
            );
        }
    }
}

/// What the budget rule charges a member: every intercity trip and hotel night, and the food
/// they join.
fn cost_of(flat: &[Flat], user: &str) -> f64 {
    let mut total = 0.0;
    for f in flat {
        let c = get(f.act, "avg_cost");
        if !truthy(c) {
            continue;
        }
        let charged = match (f.city, text(f.act, "type")) {
            (None, _) | (Some(_), "hotel") => true,
            (Some(_), "food") => Participants::of(f.act).contains(user),
            _ => false,
        };
        if charged {
            total += number(c).unwrap_or(0.0);
        }
    }
    total
}

/// Fairness from the members' totals: 100 when equal, min/max when both are non-negative,
/// 0 when the best is positive and the worst negative, max/min when all are ≤ 0.
pub fn fairness(totals: &[i64]) -> f64 {
    let (Some(&max), Some(&min)) = (totals.iter().max(), totals.iter().min()) else {
        return 100.0;
    };
    let f = if max == min {
        100.0
    } else if max > 0 && min >= 0 {
        min as f64 / max as f64 * 100.0
    } else if max > 0 || min == 0 {
        // someone is below zero while another gains, or the best is 0 and others lose
        0.0
    } else {
        max as f64 / min as f64 * 100.0
    };
    round2(f)
}

/// Group utility and fairness of a plan. `prefs` maps each member to their effective
/// `preference` object; `users` is the task's member order.
pub fn score(
    plan: &Value,
    prefs: &IndexMap<String, Value>,
    users: &[String],
    db: &PoiDb,
) -> Utility {
    let flat = flatten(plan);
    let invalid = invalid_activities(plan, users);
    let mut per_user = IndexMap::new();
    let mut totals = Vec::new();
    for u in users {
        let p = prefs.get(u);
        let s = score_user(&flat, u, p.unwrap_or(&Value::Null), &invalid, db);
        totals.push(s.total);
        // the utility skips members without a table; fairness counts them as 0
        if p.is_some() {
            per_user.insert(u.clone(), s);
        }
    }
    let split = plan_split_penalty(plan);
    let total = per_user.values().map(|s| s.total).sum::<i64>() - split;
    let n = per_user.len().max(1);
    Utility {
        num_users: per_user.len(),
        per_user,
        split_penalty: split,
        total_score: total,
        per_user_average_score: round2(total as f64 / n as f64),
        fairness: fairness(&totals),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_cases() {
        assert_eq!(fairness(&[4, 4]), 100.0);
        assert_eq!(fairness(&[2, 4]), 50.0);
        assert_eq!(fairness(&[-1, 4]), 0.0);
        assert_eq!(fairness(&[-4, -2]), 50.0);
        assert_eq!(fairness(&[-4, 0]), 0.0);
        assert_eq!(fairness(&[1, 3]), 33.33);
    }
}
