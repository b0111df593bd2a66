//! Check `format`: the route names inventory cities, the date is one of the day phrases, the
//! closed vocabularies (transport modes, hotel categories) hold, and every member's city
//! preferences follow `metadata.cities`.

use super::{Mode, Outcome, Validator, finding};
use crate::resources::vocab;
use crate::task::{Preference, Task};

pub(super) fn check(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    route(v, t, out);
    for (u, entry) in &t.user_preferences {
        vocabularies(t, u, &entry.preference, out);
        city_keys(t, u, &entry.preference, out);
    }
}

/// Departure city and cities known to the inventory; the date a day phrase.
fn route(v: &Validator, t: &Task, out: &mut Outcome) {
    let m = &t.metadata;
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
    let csp: Vec<&String> = p.city_specific_preferences.keys().collect();
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
