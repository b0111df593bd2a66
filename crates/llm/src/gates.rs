//! The gates a reply's tables pass beyond their values (`parse`): the validator's fixes applied
//! as the build would, the strategies honoured, and a trip the firm members can pay.

use crate::json::{Problem, Reason};
use crate::prompt::TaskPrompt;
use gtb_core::task::Preference;
use gtb_resources::vocab;

/// Resolve what the validator's fixes would change in one member's table, so that the table
/// the reply is checked with is the one the build keeps (and template lines are made from it):
/// an item named in two tiers stays in the stronger (`contradictions::resolve`), and a reject
/// of the scenic area around a sight the member must visit goes. Returns how many were resolved.
pub(crate) fn resolve(p: &TaskPrompt, t: &mut Preference) -> usize {
    let mut n = gtb_validate::contradictions::resolve(t).len();
    for c in &p.cities {
        let Some(cp) = t.city_specific_preferences.get_mut(&c.name) else {
            continue;
        };
        let a = &mut cp.attractions;
        let must = a.must_visit.clone();
        let before = a.reject_visit.len();
        a.reject_visit
            .retain(|r| !must.iter().any(|m| m != r && c.covers(r, m)));
        n += before - a.reject_visit.len();
    }
    n
}

/// The archetype's strategies, the validator's `strategies` gate (copies are exact by
/// construction; a member must not copy another's city preferences).
pub(crate) fn strategy_gate(p: &TaskPrompt, tables: &[(String, Preference)]) -> Vec<Problem> {
    let refs: Vec<(&str, &Preference)> = tables.iter().map(|(u, t)| (u.as_str(), t)).collect();
    gtb_validate::strategies::issues(&p.archetype, &refs)
        .iter()
        .map(|i| Problem::new(Reason::Strategy, i.message_zh()))
        .collect()
}

/// What gtb fixed in a reply's tables, as the build would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fixes {
    /// items named in two tiers (or rejected areas around a must_visit): the stronger tier
    /// keeps them
    pub clashes: usize,
    /// firm members' budgets lifted to the cheapest trip (`trip_gate`)
    pub budgets: usize,
}

/// Every member who cannot yield can pay the cheapest trip that the firm members' transport
/// wishes leave (`gtb_generate::trip`): else the witness search proves the task infeasible and
/// the build drops it, however good its tables. `tables[new..]` are the reply's. A firm member
/// of the reply whose budget is short is lifted to the trip, rounded up to 100, as the offline
/// generator does (with the members whose global constraints are its copies); its line is then
/// checked against the lifted budget. What cannot be lifted is put to the reply: a trip above
/// the plausible budgets, or an earlier member's accepted budget that the reply's wishes broke.
/// Wishes the validator's reachability fix will undo (a mode no leg serves, musts that cannot
/// be met together) are left to it. Returns the problems and how many budgets were lifted.
pub(crate) fn trip_gate(
    p: &TaskPrompt,
    tables: &mut [(String, Preference)],
    new: usize,
) -> (Vec<Problem>, usize) {
    // firm as the build will have it: a member who wants a mode no leg serves is made
    // compromisable by the validator's reachability fix, and then binds no one
    let served = |t: &Preference| {
        let tr = &t.global_constraints.transport;
        tr.must
            .iter()
            .chain(&tr.prefer)
            .all(|m| !vocab::is_transport_mode(m) || p.trip.serves(m, p.ranges.max_transfers))
    };
    let firm_at = |i: usize| {
        let (u, t) = &tables[i];
        p.members.iter().any(|m| &m.user == u && m.firm) && served(t)
    };
    let firm: Vec<bool> = (0..tables.len()).map(firm_at).collect();
    let replying: Vec<String> = tables[new..].iter().map(|(u, _)| u.clone()).collect();
    let who = replying.join("、");
    let wishes = tables.iter().zip(&firm).filter(|(_, f)| **f);
    // musts that cannot be met together: the reachability fix makes the later member
    // compromisable, and the witness search plans the rest
    let Some(floor) = p.trip.cost(wishes.map(|((_, t), _)| &t.global_constraints)) else {
        return (Vec::new(), 0);
    };
    let at_least = floor.div_ceil(100) * 100;
    let mut problems = Vec::new();
    // an earlier member's accepted budget is not reopened, nor shown (an independent member
    // never sees another's table): the reply's wishes must leave a trip it covers
    let broken = tables[..new].iter().zip(&firm).any(|((_, t), f)| {
        let budget = t.global_constraints.avg_budget;
        *f && budget > 0 && budget < floor
    });
    if broken {
        problems.push(Problem::new(Reason::Trip, format!(
            "{who} 的 transport.reject / must 使最便宜的行程人均升到 {at_least} 元，超出了团队里不能让步的成员的预算：少拒绝一些交通方式，或去掉 must"
        )));
    }
    if at_least > p.ranges.avg_budget[1] {
        problems.push(Problem::new(Reason::Trip, format!(
            "按不能让步的成员的交通要求，最便宜的行程人均要 {at_least} 元，超过了预算上限 {}：{who} 少拒绝一些交通方式",
            p.ranges.avg_budget[1]
        )));
    }
    if !problems.is_empty() {
        return (problems, 0);
    }
    let mut lifted = 0;
    for i in new..tables.len() {
        let old = tables[i].1.global_constraints.clone();
        if !firm[i] || old.avg_budget == 0 || old.avg_budget >= floor {
            continue;
        }
        for (_, t) in tables[new..].iter_mut() {
            if t.global_constraints == old {
                t.global_constraints.avg_budget = at_least;
            }
        }
        lifted += 1;
    }
    (problems, lifted)
}
