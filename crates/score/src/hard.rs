//! The witness contract, beyond the release's validity rules: the plan is the task's trip
//! (its days and dates, out from and back to the departure city, every destination in order)
//! and, after the compromises it declares (compromisable members only, at most two each), it
//! keeps every member's hard constraints: the strong tier of the preference table.
//!
//! * `avg_budget`: what the member pays (intercity, hotels, own meals) is within it;
//! * `intensity`: no day over `max_poi_per_day` attractions or `max_active_hours`;
//! * `transport.must`: at least one intercity trip uses one of the member's must modes (when
//!   any), as the release scores each trip by a must mode +2 and an unmet must 0;
//!   `transport.reject`: no trip uses a rejected mode;
//! * per city, every `must_visit` and `must_eat` item is scored for the member (+2), and no
//!   `reject_visit` / `reject_eat` item is; a `must_eat` item is also kept by a stand-in meal
//!   named after it (`热干面（武汉市·示意）`: the kind of place, unnamed), which the release
//!   does not score (the solver prefers a real venue it scores).
//!
//! Everything is read off the release's own scoring details, so "kept" means exactly what the
//! scorer counts.

use super::compromise::Applied;
use super::pyval::{get, list, text};
use super::utility::Utility;
use super::validity::normalize_city;
use gtb_core::task::Task;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// the member, or "" for the trip as a whole
    pub user: String,
    /// the field (a path relative to `preference`), or `trip` / `compromises`
    pub field: String,
    /// the list item concerned (a place, dish or mode), or ""
    pub item: String,
    pub message: String,
}

fn v(user: &str, field: impl Into<String>, message: String) -> Violation {
    Violation {
        user: user.to_string(),
        field: field.into(),
        item: String::new(),
        message,
    }
}

fn vi(user: &str, field: impl Into<String>, item: &str, message: String) -> Violation {
    Violation {
        item: item.to_string(),
        ..v(user, field, message)
    }
}

fn same_city(a: &str, b: &str) -> bool {
    a == b || normalize_city(a) == normalize_city(b)
}

/// Whether a city segment is an intercity trip (the rest are city blocks).
fn is_intercity(s: &Value) -> bool {
    text(s, "type") == "intercity_transport"
}

/// The trip: days, dates, departure and return, destinations in order.
pub fn trip(task: &Task, plan: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let days = list(plan, "days");
    calendar(task, days, &mut out);
    let segs: Vec<&Value> = days.iter().flat_map(|d| list(d, "city_segments")).collect();
    ends(&task.metadata.departure_city, &segs, &mut out);
    route(task, &segs, &mut out);
    out
}

/// The days: as many as the task has, numbered from 1, dated from the task's start date on.
fn calendar(task: &Task, days: &[Value], out: &mut Vec<Violation>) {
    let want = task.days().unwrap_or(0) as usize;
    if days.len() != want {
        out.push(v(
            "",
            "trip",
            format!("{} days planned, the task has {want}", days.len()),
        ));
    }
    let start = chrono::NaiveDate::parse_from_str(&task.time, "%Y-%m-%d").ok();
    for (i, d) in days.iter().enumerate() {
        if get(d, "day").and_then(Value::as_u64) != Some(i as u64 + 1) {
            out.push(v(
                "",
                "trip",
                format!("day {} is numbered {:?}", i + 1, get(d, "day")),
            ));
        }
        let date = start.map(|s| {
            (s + chrono::Duration::days(i as i64))
                .format("%Y-%m-%d")
                .to_string()
        });
        if date.as_deref() != Some(text(d, "date")) {
            out.push(v(
                "",
                "trip",
                format!(
                    "day {} is dated {:?}, the trip's date is {:?}",
                    i + 1,
                    text(d, "date"),
                    date
                ),
            ));
        }
    }
}

/// The first segment is a trip out of `home` and the last one a trip back to it.
fn ends(home: &str, segs: &[&Value], out: &mut Vec<Violation>) {
    if !segs
        .first()
        .is_some_and(|s| is_intercity(s) && same_city(text(s, "from_city"), home))
    {
        out.push(v(
            "",
            "trip",
            format!("the trip does not start with a trip from {home}"),
        ));
    }
    if !segs
        .last()
        .is_some_and(|s| is_intercity(s) && same_city(text(s, "to_city"), home))
    {
        out.push(v(
            "",
            "trip",
            format!("the trip does not end with a trip back to {home}"),
        ));
    }
}

/// Where the group is, segment by segment: each trip leaves where the group is, city blocks
/// lie only in destinations and where the group is, and the destinations are visited in the
/// task's order.
fn route(task: &Task, segs: &[&Value], out: &mut Vec<Violation>) {
    let mut here = task.metadata.departure_city.clone();
    let mut visited: Vec<String> = Vec::new();
    for s in segs {
        if is_intercity(s) {
            if !same_city(text(s, "from_city"), &here) {
                out.push(v(
                    "",
                    "trip",
                    format!(
                        "a trip leaves {} while the group is in {here}",
                        text(s, "from_city")
                    ),
                ));
            }
            here = text(s, "to_city").to_string();
            continue;
        }
        let c = text(s, "city");
        if !same_city(c, &here) {
            out.push(v(
                "",
                "trip",
                format!("a block in {c} while the group is in {here}"),
            ));
        }
        if !task.metadata.cities.iter().any(|x| x == c) {
            out.push(v(
                "",
                "trip",
                format!("{c} is not a destination of the task"),
            ));
        } else if visited.last().map(String::as_str) != Some(c) {
            visited.push(c.to_string());
        }
    }
    if visited != task.metadata.cities {
        out.push(v(
            "",
            "trip",
            format!(
                "destinations visited in the order {visited:?}, the task's are {:?}",
                task.metadata.cities
            ),
        ));
    }
}

/// Compromises: only by compromisable members, at most two each, each one applied.
pub fn compromises(task: &Task, applied: &[Applied]) -> Vec<Violation> {
    let mut out = Vec::new();
    for a in applied {
        let firm = task
            .user_preferences
            .get(&a.user)
            .is_none_or(|e| !e.compromisable);
        if firm {
            out.push(v(
                &a.user,
                "compromises",
                format!("{} may not compromise ({})", a.user, a.path),
            ));
        }
        if let Some(p) = &a.problem {
            out.push(v(&a.user, "compromises", p.clone()));
        }
    }
    out
}

/// (city, location) of the stand-in meals (`plan::standin`) a member takes part in.
fn stand_in_meals<'a>(plan: &'a Value, user: &str) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    for seg in list(plan, "days")
        .iter()
        .flat_map(|d| list(d, "city_segments"))
    {
        for a in list(seg, "activities") {
            let location = text(a, "location");
            if text(a, "type") == "food"
                && gtb_plan::parse_stand_in(location).is_some()
                && super::pyval::Participants::of(a).contains(user)
            {
                out.push((text(seg, "city"), location));
            }
        }
    }
    out
}

/// The strong tier of every member, from the scorer's details.
pub fn constraints(
    plan: &Value,
    prefs: &IndexMap<String, Value>,
    utility: &Utility,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let trips: Vec<&str> = list(plan, "days")
        .iter()
        .flat_map(|d| list(d, "city_segments"))
        .filter(|s| text(s, "type") == "intercity_transport")
        .map(|s| text(s, "transport_mode"))
        .collect();
    for (u, s) in &utility.per_user {
        let p = &prefs[u];
        let fired = |field: &'static str| s.details.iter().filter(move |d| d.term.field == field);
        for d in fired("avg_budget") {
            out.push(v(
                u,
                "global_constraints.avg_budget",
                format!("{u} pays {}", d.term.item),
            ));
        }
        for (f, path) in [
            (
                "intensity.max_poi_per_day",
                "global_constraints.intensity.max_poi_per_day",
            ),
            (
                "intensity.max_active_hours",
                "global_constraints.intensity.max_active_hours",
            ),
        ] {
            for d in fired(f) {
                out.push(v(u, path, format!("day {}: {}", d.day, d.term.item)));
            }
        }
        for d in fired("transport.reject") {
            out.push(vi(
                u,
                "global_constraints.transport.reject",
                &d.term.item,
                format!("day {}: {} is rejected", d.day, d.term.item),
            ));
        }
        let g = get(p, "global_constraints").unwrap_or(&Value::Null);
        let must_modes = super::pyval::strings(get(g, "transport").unwrap_or(&Value::Null), "must");
        if !must_modes.is_empty() && !trips.iter().any(|m| must_modes.contains(m)) {
            out.push(vi(
                u,
                "global_constraints.transport.must",
                &must_modes.join("/"),
                format!("no intercity trip is by {}", must_modes.join(" or ")),
            ));
        }
        let cities = get(p, "city_specific_preferences")
            .and_then(Value::as_object)
            .into_iter()
            .flatten();
        let stand_ins = stand_in_meals(plan, u);
        for (city, cp) in cities {
            // kept: the scorer counts it; a must_eat also when a stand-in meal names it
            let scored = |field: &str, item: &str| {
                s.details
                    .iter()
                    .any(|d| d.term.field == field && d.city == *city && d.term.item == item)
                    || field == "must_eat"
                        && stand_ins.iter().any(|(c, l)| c == city && l.contains(item))
            };
            for (group, field, want) in [
                ("attractions", "must_visit", true),
                ("attractions", "reject_visit", false),
                ("food", "must_eat", true),
                ("food", "reject_eat", false),
            ] {
                let items = super::pyval::strings(get(cp, group).unwrap_or(&Value::Null), field);
                for item in items {
                    if scored(field, item) != want {
                        let what = if want {
                            "is not in the plan"
                        } else {
                            "is in the plan"
                        };
                        out.push(vi(
                            u,
                            format!("city_specific_preferences.{city}.{group}.{field}"),
                            item,
                            format!("{item} {what} for {u}"),
                        ));
                    }
                }
            }
        }
    }
    out
}
