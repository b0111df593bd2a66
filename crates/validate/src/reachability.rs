//! Check `reachability` (the paper's stage-4 rule): a must or prefer transport mode that is
//! infeasible on the itinerary makes the member who wants it compromisable (made so in
//! `Mode::Fix`). A mode is feasible when some leg of the route serves it (within
//! `validate.max_transfers` changes) in a trip that fits into its travel day
//! (`plan::day::fits_travel_day`); a must, which holds when one trip uses one of its modes,
//! is moreover infeasible when it cannot be met together with the musts of the members who
//! cannot yield before it (in the task's order): the route has too few legs, or too few usable
//! modes, for all of them.

use super::{Mode, Outcome, Trip, Validator, finding};
use gtb_core::task::Task;
use gtb_plan::day::{LegPlace, fits_travel_day};
use gtb_resources::{TransportOption, vocab};

/// Whether an option can be planned: few enough changes, and within its travel day.
fn usable(v: &Validator, leg: usize, legs: usize, o: &TransportOption) -> bool {
    o.transfers <= v.cfg.validate.max_transfers
        && fits_travel_day(o.mode, o.minutes, LegPlace::of(leg, legs))
}

/// The modes some member who cannot yield rejects.
fn firm_rejects(t: &Task) -> Vec<String> {
    t.user_preferences
        .values()
        .filter(|e| !e.compromisable)
        .flat_map(|e| e.preference.global_constraints.transport.reject.clone())
        .collect()
}

pub(super) fn check(v: &Validator, t: &mut Task, trip: &Trip, mode: Mode, out: &mut Outcome) {
    let legs = v.res.route_legs(trip.hub, &trip.cities);
    let feasible = |m: &str| {
        legs.iter().enumerate().any(|(l, &(a, b))| {
            v.res
                .transport(a, b)
                .iter()
                .any(|o| o.mode == m && usable(v, l, legs.len(), o))
        })
    };
    // written only into a finding (most tasks have none)
    let route = || {
        format!(
            "{} -> {} -> {}",
            t.metadata.departure_city,
            t.metadata.cities.join(" -> "),
            t.metadata.departure_city
        )
    };
    let rejected = firm_rejects(t);
    // the must lists of the members who cannot yield, kept so far
    let mut firm_musts: Vec<Vec<String>> = Vec::new();
    for i in 0..t.user_preferences.len() {
        let (u, entry) = t.user_preferences.get_index(i).expect("a member");
        if entry.compromisable {
            continue;
        }
        let tr = &entry.preference.global_constraints.transport;
        let wanted = tr.must.iter().chain(tr.prefer.iter());
        let why = match wanted
            .clone()
            .find(|m| vocab::is_transport_mode(m) && !feasible(m))
        {
            Some(m) => Some((
                m.clone(),
                format!(
                    "{m} serves no leg of {} with at most {} changes within a travel day; member made compromisable",
                    route(),
                    v.cfg.validate.max_transfers
                ),
            )),
            None if !tr.must.is_empty() => {
                let mut musts: Vec<&[String]> = firm_musts.iter().map(Vec::as_slice).collect();
                musts.push(&tr.must);
                let all = (1u64 << musts.len()) - 1;
                let fares = v.res.fares_by_musts(
                    trip.hub,
                    &trip.cities,
                    |l, o| usable(v, l, legs.len(), o) && !rejected.iter().any(|r| r == o.mode),
                    &musts,
                );
                (!fares.contains_key(&all)).then(|| (tr.must.join("/"), format!(
                    "a trip by {} cannot be planned on {} together with the must modes of the members before who cannot yield; member made compromisable",
                    tr.must.join("/"),
                    route()
                )))
            }
            None => None,
        };
        let Some((item, message)) = why else {
            if !tr.must.is_empty() {
                firm_musts.push(tr.must.clone());
            }
            continue;
        };
        let f = finding(
            "reachability",
            t,
            u,
            "",
            "global_constraints.transport",
            &item,
            message,
        );
        if mode == Mode::Fix {
            let u = u.clone();
            t.user_preferences[i].compromisable = true;
            t.metadata.compromise_pattern.push(u);
        } else if !tr.must.is_empty() {
            // audited as it stands: the member stays firm, so their must still binds the rest
            firm_musts.push(tr.must.clone());
        }
        Validator::fixable(out, mode, f);
    }
}
