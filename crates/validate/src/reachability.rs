//! Check `reachability`: a must/prefer transport mode that serves no leg of the route (within
//! `validate.max_transfers` changes) cannot be honoured, so a member who insists on it must be
//! compromisable (made so in `Mode::Fix`).

use super::{Mode, Outcome, Trip, Validator, finding};
use gtb_core::task::Task;
use gtb_resources::vocab;

pub(super) fn check(v: &Validator, t: &mut Task, trip: &Trip, mode: Mode, out: &mut Outcome) {
    let max = v.cfg.validate.max_transfers;
    let served = v.res.modes_on_some_leg(trip.hub, &trip.cities, max);
    let users: Vec<String> = t.user_preferences.keys().cloned().collect();
    for u in &users {
        let entry = &t.user_preferences[u];
        if entry.compromisable {
            continue;
        }
        let tr = &entry.preference.global_constraints.transport;
        let Some(m) = tr
            .must
            .iter()
            .chain(tr.prefer.iter())
            .find(|m| vocab::is_transport_mode(m) && !served.contains(&m.as_str()))
        else {
            continue;
        };
        let f = finding(
            "reachability",
            t,
            u,
            "",
            "global_constraints.transport",
            m,
            format!(
                "{m} serves no leg of {} -> {} -> {} with at most {max} changes; member made compromisable",
                t.metadata.departure_city,
                t.metadata.cities.join(" -> "),
                t.metadata.departure_city
            ),
        );
        if mode == Mode::Fix {
            t.user_preferences.get_mut(u).expect("user").compromisable = true;
            t.metadata.compromise_pattern.push(u.clone());
        }
        Validator::fixable(out, mode, f);
    }
}
