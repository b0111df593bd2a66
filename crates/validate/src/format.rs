//! Check `format`: the route names inventory cities (at least one), the date is one of the day
//! phrases and `time` a calendar date, the group is an archetype's with its members, the closed
//! vocabularies (transport modes, hotel categories) hold, intensities fit in a day, and every
//! member's city preferences follow `metadata.cities`. Also the file-level check that task ids
//! are unique ([`duplicate_task_ids`]).

use super::{Finding, Mode, Outcome, Validator, finding};
use gtb_core::task::{Preference, Task};
use gtb_resources::vocab;

/// Hours in a day: the bound of `max_active_hours`, and of `max_poi_per_day` (a day cannot hold
/// more sights than hours). 0 is allowed for both: the release's scorer reads it as "no limit".
const HOURS_IN_A_DAY: u32 = 24;

pub(super) fn check(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    route(v, t, out);
    time(t, out);
    members(v, t, out);
    for (u, entry) in &t.user_preferences {
        vocabularies(t, u, &entry.preference, out);
        intensity(t, u, &entry.preference, out);
        city_keys(t, u, &entry.preference, out);
    }
}

/// A problem of the `format` check about the task as a whole (no member, no city).
fn task_problem(t: &Task, field: &str, item: &str, message: String) -> Finding {
    finding("format", t, "", "", field, item, message)
}

/// Task ids are unique within a file: every repeat of an id is a finding naming the line where
/// it was first seen. `ids` are (line, task_id) in file order.
pub fn duplicate_task_ids<'a>(ids: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<Finding> {
    let ids = ids.into_iter();
    // a hash map: a file's ids are looked up once each, in file order (100,000 took 50 ms in
    // a tree, all of it after the workers were done)
    let mut first: gtb_core::FastMap<&str, usize> =
        gtb_core::FastMap::with_capacity_and_hasher(ids.size_hint().0, Default::default());
    let mut out = Vec::new();
    for (line, id) in ids {
        match first.get(id) {
            Some(seen) => out.push(Finding {
                check: "format",
                task_id: id.to_string(),
                user: String::new(),
                city: String::new(),
                field: "task_id".into(),
                item: id.to_string(),
                message: format!("line {line} repeats the task_id of line {seen}"),
            }),
            None => {
                first.insert(id, line);
            }
        }
    }
    out
}

/// `time`: the departure date, a real calendar date written YYYY-MM-DD (four-digit year: chrono
/// alone would take "+262142-12-31").
fn time(t: &Task, out: &mut Outcome) {
    let date = chrono::NaiveDate::parse_from_str(&t.time, "%Y-%m-%d");
    if t.time.len() != "YYYY-MM-DD".len() || date.is_err() {
        out.problems.push(task_problem(
            t,
            "time",
            &t.time,
            "not a calendar date written YYYY-MM-DD".into(),
        ));
    }
}

/// The group: an archetype of the inventory, with as many members (children included) as it
/// has slots, at least one of them with a preference table, every member key one of
/// User1..UserN and used once, and the compromise pattern naming members with tables.
fn members(v: &Validator, t: &Task, out: &mut Outcome) {
    let n = t.group_size();
    if t.user_preferences.is_empty() {
        out.problems.push(task_problem(
            t,
            "user_preferences",
            "",
            "no member has a preference table: a task needs at least one user".into(),
        ));
    }
    let m = &t.metadata;
    match v.res.archetype(&m.group_id) {
        None => out.problems.push(task_problem(
            t,
            "metadata.group_id",
            &m.group_id,
            "not the group_id of an archetype".into(),
        )),
        Some(a) if a.size() as usize != n => out.problems.push(task_problem(
            t,
            "user_preferences",
            &n.to_string(),
            format!(
                "{n} members (user_preferences plus child_members), but group {} ({}) has {}",
                a.group_id,
                a.group_name,
                a.size()
            ),
        )),
        Some(_) => {}
    }
    let keys = t
        .user_preferences
        .keys()
        .map(|u| ("user_preferences", u))
        .chain(
            m.child_members
                .iter()
                .map(|c| ("metadata.child_members", &c.user)),
        );
    let mut seen = std::collections::BTreeSet::new();
    for (field, u) in keys {
        let slot = u.strip_prefix("User").and_then(|k| k.parse::<usize>().ok());
        let message = if !slot.is_some_and(|k| (1..=n).contains(&k) && u == &format!("User{k}")) {
            format!("not a member key User1..User{n}")
        } else if !seen.insert(u) {
            "a member listed twice (with a table and as a child)".into()
        } else {
            continue;
        };
        out.problems
            .push(finding("format", t, u, "", field, u, message));
    }
    for u in m
        .compromise_pattern
        .iter()
        .filter(|u| !t.user_preferences.contains_key(*u))
    {
        out.problems.push(task_problem(
            t,
            "metadata.compromise_pattern",
            u,
            "not a member with a preference table".into(),
        ));
    }
}

/// Intensity limits that fit in a day.
fn intensity(t: &Task, u: &str, p: &Preference, out: &mut Outcome) {
    let i = &p.global_constraints.intensity;
    for (field, value, what) in [
        (
            "intensity.max_poi_per_day",
            i.max_poi_per_day,
            "sights a day",
        ),
        (
            "intensity.max_active_hours",
            i.max_active_hours,
            "active hours a day",
        ),
    ] {
        if value > HOURS_IN_A_DAY {
            out.problems.push(finding(
                "format",
                t,
                u,
                "",
                field,
                &value.to_string(),
                format!("{value} {what}: a day has {HOURS_IN_A_DAY} hours (0 means no limit)"),
            ));
        }
    }
}

/// Departure city and cities known to the inventory; the date a day phrase.
fn route(v: &Validator, t: &Task, out: &mut Outcome) {
    let m = &t.metadata;
    if m.cities.is_empty() {
        out.problems.push(task_problem(
            t,
            "metadata.cities",
            "",
            "no city to visit: metadata.cities is empty".into(),
        ));
    }
    if v.res.city_id(&m.departure_city).is_none() {
        out.problems.push(finding(
            "format",
            t,
            "",
            &m.departure_city,
            "metadata.departure_city",
            &m.departure_city,
            "departure city is not in the inventory".into(),
        ));
    }
    for c in m.cities.iter().filter(|c| v.res.city_id(c).is_none()) {
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
    if t.days().is_none() {
        out.problems.push(finding(
            "format",
            t,
            "",
            "",
            "metadata.date",
            &m.date,
            "not one of the six day phrases".into(),
        ));
    }
}

/// Transport modes and hotel categories from the release's closed vocabularies.
fn vocabularies(t: &Task, u: &str, p: &Preference, out: &mut Outcome) {
    let g = &p.global_constraints;
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
}

/// A member's city preferences name exactly the task's cities, in order.
fn city_keys(t: &Task, u: &str, p: &Preference, out: &mut Outcome) {
    let csp: Vec<&str> = p
        .city_specific_preferences
        .keys()
        .map(String::as_str)
        .collect();
    if csp
        != t.metadata
            .cities
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    {
        out.problems.push(finding(
            "format",
            t,
            u,
            "",
            "city_specific_preferences",
            "",
            format!(
                "cities [{}] differ from metadata.cities [{}]",
                csp.join("、"),
                t.metadata.cities.join("、")
            ),
        ));
    }
}
