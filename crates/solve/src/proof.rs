//! Proofs that a task has no witness plan. Each check shows an infeasibility from the task,
//! the resources (fares, prices, venues, opening hours) and the documented time model alone
//! (`model`: a travel day's window, a visit of at least `BRIEF_VISIT` minutes, a transfer of
//! at least 15), never from a search that ran out: that case is `NoWitness::Exhausted`.
//!
//! * transport: a leg no usable mode serves (served, within a travel day, rejected by no
//!   member who cannot yield), or no choice of one mode per leg lets every such member with a
//!   must list travel by one of its modes at least once;
//! * budget: a firm member's budget below the cheapest possible trip (the cheapest usable
//!   fares, the cheapest hotel of each night; meals not counted);
//! * must_visit: an item no sight of the city names, or whose sights are closed on every day
//!   the group can be there, or more sights (or sightseeing minutes) than the member's caps
//!   allow on the days the city can have;
//! * must_eat: an item no venue of the city serves under the scoring table (a name containing
//!   it, or a resolved category equal to it).
//!
//! Per frame, the same reading of must items bounds the search (`unmeetable`, which
//! `eval::floor` charges): an item no piece of the frame can serve is broken by every plan of it.

use super::cny;
use super::frame;
use super::frame::{Frame, Need, Piece};
use super::instance::{Instance, Items, Mask, Sight};
use super::model::{self, MealKind, up5};

/// Why a task has no witness plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoWitness {
    /// shown from the task, the resources and the time model (the reason is the proof)
    Infeasible(String),
    /// the search ended without a plan within every hard constraint; no proof either way
    Exhausted(String),
}

impl NoWitness {
    pub fn reason(&self) -> &str {
        match self {
            NoWitness::Infeasible(r) | NoWitness::Exhausted(r) => r,
        }
    }
    /// `infeasible` or `search_exhausted` (the `verdict` of a plans-file line).
    pub fn verdict(&self) -> &'static str {
        match self {
            NoWitness::Infeasible(_) => "infeasible",
            NoWitness::Exhausted(_) => "search_exhausted",
        }
    }
}

/// Options of one leg, by index.
pub type Options = Vec<usize>;

/// Per leg, the options a plan may use: served, within a travel day, rejected by no member
/// who cannot yield; a proof when a leg has none.
pub fn usable_options(inst: &Instance) -> Result<Vec<Options>, String> {
    let firm = inst.firm();
    let mut out = Vec::new();
    for (l, leg) in inst.legs.iter().enumerate() {
        let usable: Options = (0..leg.options.len())
            .filter(|&o| leg.options[o].rejected & firm == 0 && frame::leg_fits(inst, l, o))
            .collect();
        if usable.is_empty() {
            return Err(no_usable_mode(inst, l));
        }
        out.push(usable);
    }
    Ok(out)
}

fn no_usable_mode(inst: &Instance, l: usize) -> String {
    let leg = &inst.legs[l];
    let served: Vec<String> = (0..leg.options.len())
        .map(|o| {
            let x = &leg.options[o];
            let mut s = format!("{} {}h{:02}", x.mode, x.minutes / 60, x.minutes % 60);
            if !frame::leg_fits(inst, l, o) {
                s.push_str(" (too long for one travel day)");
            }
            s
        })
        .collect();
    let rejecting: Vec<String> = inst
        .members
        .iter()
        .enumerate()
        .filter(|(i, m)| m.firm && leg.options.iter().any(|o| o.rejected >> i & 1 == 1))
        .map(|(_, m)| {
            let r = &m.pref.global_constraints.transport.reject;
            format!("{} (who cannot yield) rejects {}", m.name, r.join("/"))
        })
        .collect();
    let served = if served.is_empty() {
        "none".to_string()
    } else {
        served.join(", ")
    };
    let tail = if rejecting.is_empty() {
        String::new()
    } else {
        format!("; {}", rejecting.join("; "))
    };
    format!(
        "no intercity mode from {} to {} fits into a travel day and is acceptable to every member who cannot yield (served: {served}{tail})",
        inst.res.city(leg.from).name,
        inst.res.city(leg.to).name,
    )
}

/// Every combination of one usable option per leg under which each firm member with a
/// transport must list travels by one of its modes at least once; a proof when there is none.
pub fn transport_combos(inst: &Instance, usable: &[Options]) -> Result<Vec<Options>, String> {
    let need: Mask = inst.firm() & inst.must_travellers();
    let mut all: Vec<(Options, Mask)> = vec![(Vec::new(), 0)];
    for (l, opts) in usable.iter().enumerate() {
        all = all
            .into_iter()
            .flat_map(|(c, hit)| {
                opts.iter().map(move |&o| {
                    let mut c = c.clone();
                    c.push(o);
                    (c, hit | inst.legs[l].options[o].must_hit)
                })
            })
            .collect();
    }
    let ok: Vec<Options> = all
        .into_iter()
        .filter(|(_, hit)| need & !hit == 0)
        .map(|(c, _)| c)
        .collect();
    if ok.is_empty() {
        return Err(no_must_combination(inst, usable, need));
    }
    Ok(ok)
}

fn no_must_combination(inst: &Instance, usable: &[Options], need: Mask) -> String {
    let modes = |l: usize| {
        usable[l]
            .iter()
            .map(|&o| inst.legs[l].options[o].mode)
            .collect::<Vec<_>>()
            .join("/")
    };
    let legs: Vec<String> = (0..inst.legs.len())
        .map(|l| {
            let leg = &inst.legs[l];
            format!(
                "{}→{} {}",
                inst.res.city(leg.from).name,
                inst.res.city(leg.to).name,
                modes(l)
            )
        })
        .collect();
    let musts: Vec<String> = inst
        .members
        .iter()
        .enumerate()
        .filter(|(i, _)| need >> i & 1 == 1)
        .map(|(_, m)| {
            format!(
                "{} must travel by {}",
                m.name,
                m.pref.global_constraints.transport.must.join("/")
            )
        })
        .collect();
    format!(
        "no choice of one usable mode per leg lets every member who cannot yield travel by a must mode at least once ({}; usable: {})",
        musts.join("; "),
        legs.join(", ")
    )
}

/// The cheapest possible trip per person: the cheapest usable fares (over the combinations
/// that keep the firm members' transport musts) and the cheapest hotel of each night, every
/// destination at least one night and the spare nights in the cheapest one.
pub fn budget(inst: &Instance, combos: &[Options]) -> Result<(), String> {
    let fare: u32 = combos
        .iter()
        .map(|c| {
            c.iter()
                .enumerate()
                .map(|(l, &o)| inst.legs[l].options[o].fare)
                .sum()
        })
        .min()
        .unwrap_or(0);
    let cheapest: Vec<u32> = inst
        .dest
        .iter()
        .map(|d| d.hotels.iter().map(|h| h.price).min().unwrap_or(0))
        .collect();
    let nights = inst.days - 1;
    let spare = nights.saturating_sub(inst.dest.len() as u32);
    let hotel = cheapest.iter().sum::<u32>() + spare * cheapest.iter().copied().min().unwrap_or(0);
    let total = fare + hotel;
    for m in inst.members.iter().filter(|m| m.firm) {
        let b = m.pref.global_constraints.avg_budget;
        if b > 0 && b < total {
            return Err(format!(
                "the budget of {} ({} CNY) is below the cheapest possible trip ({} CNY: fares {} on the cheapest usable modes + {nights} night{} {} at the cheapest hotels; meals not counted)",
                m.name,
                cny(b),
                cny(total),
                cny(fare),
                if nights == 1 { "" } else { "s" },
                cny(hotel),
            ));
        }
    }
    Ok(())
}

/// The days on which the group can be in destination `k`: each city before it takes at least
/// one night, and so does each after it.
fn possible_days(inst: &Instance, k: usize) -> std::ops::RangeInclusive<usize> {
    let days = inst.days as usize;
    let after = inst.dest.len() - 1 - k;
    k..=days - 1 - after
}

/// Whether a sight can be visited (at least briefly) on one of the days, by its opening hours
/// and the time model's day (from the earliest departure to the last sightseeing).
fn visitable(
    inst: &Instance,
    dest: usize,
    s: usize,
    days: &std::ops::RangeInclusive<usize>,
) -> bool {
    let sight = &inst.dest[dest].sights[s];
    days.clone()
        .any(|day| brief_visit_fits(inst, sight, day, model::EARLIEST_DEPARTURE))
}

/// Member `i`'s must_visit and must_eat items of destination `d` that no plan of `frame` can
/// meet (`eval::floor` charges them): no sight naming the item can be visited, even briefly,
/// in one of the frame's pieces in the city, by its opening hours on the piece's day from the
/// piece's start (a member's clock starts there and transfers only delay a visit: the run's
/// `schedule`); and no venue serves the item, or none of those pieces can hold a lunch or a
/// dinner.
pub fn unmeetable(inst: &Instance, frame: &Frame, i: usize, d: usize) -> (Items, Items) {
    let dest = &inst.dest[d];
    let pieces = || frame.pieces.iter().filter(move |p| p.dest == d);
    let seen = dest
        .sights
        .iter()
        .filter(|s| s.must[i] != 0 && pieces().any(|p| brief_visit_fits(inst, s, p.day, p.start)))
        .fold(0, |a: Items, s| a | s.must[i]);
    let meals = pieces().any(|p| Instance::meal_kinds().iter().any(|&k| meal_fits(p, k)));
    let served = match meals {
        true => dest.meals.iter().fold(0, |a: Items, m| a | m.must[i]),
        false => 0,
    };
    (
        inst.must_visit_all(i, d) & !seen,
        inst.must_eat_all(i, d) & !served,
    )
}

/// Whether a brief visit of the sight can start at `from` or later on a day of the trip (as
/// the run's `schedule` starts one: on the five minutes) and end within an opening window of
/// the day and before the last sightseeing.
fn brief_visit_fits(inst: &Instance, s: &Sight, day: usize, from: u32) -> bool {
    let need = model::BRIEF_VISIT.min(s.minutes);
    let ends = |start: u32, close: u32| start + need <= close.min(model::SIGHT_LATEST_END);
    match inst.windows(s, day) {
        None => ends(up5(from), u32::MAX),
        Some(ws) => ws.iter().any(|&(o, c)| ends(up5(from.max(o)), c)),
    }
}

/// Whether a piece may hold a meal of this kind: the piece allows it, and it can start within
/// the meal's window from the piece's start.
fn meal_fits(p: &Piece, kind: MealKind) -> bool {
    let (earliest, latest, _) = kind.window();
    p.need(kind) != Need::No && up5(p.start.max(earliest)) <= latest
}

/// The fewest sights that together name every item of `want` (exact over up to 16 items).
fn fewest_sights(covers: &[Items], want: Items) -> Option<u32> {
    if want.count_ones() > 16 {
        return None;
    }
    let items: Vec<u32> = (0..32).filter(|k| want >> k & 1 == 1).collect();
    let compact = |c: Items| {
        items
            .iter()
            .enumerate()
            .filter(|(_, k)| c >> **k & 1 == 1)
            .fold(0usize, |a, (j, _)| a | 1 << j)
    };
    let sets: Vec<usize> = covers
        .iter()
        .map(|&c| compact(c))
        .filter(|&c| c != 0)
        .collect();
    let full = (1usize << items.len()) - 1;
    let mut best = vec![u32::MAX; full + 1];
    best[0] = 0;
    for m in 0..=full {
        if best[m] == u32::MAX {
            continue;
        }
        for &s in &sets {
            let next = m | s;
            best[next] = best[next].min(best[m] + 1);
        }
    }
    (best[full] != u32::MAX).then_some(best[full])
}

/// Each firm member's must_visit items can be seen: named by a sight, open on a day the group
/// can be there, and within the member's caps on the days the city can have.
pub fn must_visits(inst: &Instance) -> Result<(), String> {
    for (k, d) in inst.dest.iter().enumerate() {
        let days = possible_days(inst, k);
        let n_days = (days.end() - days.start() + 1) as u32;
        for (i, m) in inst.members.iter().enumerate().filter(|(_, m)| m.firm) {
            let Some(cp) = m.city(d.name) else { continue };
            let list = &cp.attractions.must_visit;
            let open: Vec<usize> = (0..d.sights.len())
                .filter(|&s| d.sights[s].must[i] != 0 && visitable(inst, k, s, &days))
                .collect();
            for (j, item) in list.iter().enumerate().take(32) {
                let named = d.sights.iter().any(|s| s.must[i] >> j & 1 == 1);
                let who = format!(
                    "{} (who cannot yield) must visit {item} in {}",
                    m.name, d.name
                );
                if !named {
                    return Err(format!(
                        "{who}, but no attraction of {} is named so",
                        d.name
                    ));
                }
                if !open.iter().any(|&s| d.sights[s].must[i] >> j & 1 == 1) {
                    return Err(format!(
                        "{who}, but it is closed on every day the group can be there ({} to {})",
                        inst.dates[*days.start()].0,
                        inst.dates[*days.end()].0
                    ));
                }
            }
            let covers: Vec<Items> = open.iter().map(|&s| d.sights[s].must[i]).collect();
            let want = inst.must_visit_all(i, k);
            let Some(sights) = fewest_sights(&covers, want) else {
                continue;
            };
            let it = &m.pref.global_constraints.intensity;
            let per_sight = model::BRIEF_VISIT + 15;
            let too_many = it.max_poi_per_day > 0 && sights > it.max_poi_per_day * n_days;
            let too_long =
                it.max_active_hours > 0 && sights * per_sight > it.max_active_hours * 60 * n_days;
            if too_many || too_long {
                return Err(format!(
                    "the must_visit of {} (who cannot yield) in {} ({}) needs at least {sights} sights ({} minutes with the shortest visits and transfers), more than {} sights a day and {} active hours a day allow on the at most {n_days} days there",
                    m.name,
                    d.name,
                    list.join("、"),
                    sights * per_sight,
                    it.max_poi_per_day,
                    it.max_active_hours
                ));
            }
        }
    }
    Ok(())
}

/// Each firm member's must_eat items are served somewhere in the city under the scoring
/// table (the release scores +2 for the item there).
pub fn must_eats(inst: &Instance) -> Result<(), String> {
    for (k, d) in inst.dest.iter().enumerate() {
        for (i, m) in inst.members.iter().enumerate().filter(|(_, m)| m.firm) {
            let Some(cp) = m.city(d.name) else { continue };
            let served = d.meals.iter().fold(0, |a: Items, x| a | x.must[i]);
            let missing = inst.must_eat_all(i, k) & !served;
            if let Some(j) = (0..32).find(|j| missing >> j & 1 == 1) {
                return Err(format!(
                    "{} (who cannot yield) must eat {} in {}, but no restaurant there serves it (no real venue of the POI table whose name contains it or whose category is it)",
                    m.name, cp.food.must_eat[j], d.name
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewest_sights_is_an_exact_cover() {
        // items 0,1,2: one sight names 0 and 1, another 2, a third 1 and 2
        assert_eq!(fewest_sights(&[0b011, 0b100, 0b110], 0b111), Some(2));
        assert_eq!(fewest_sights(&[0b111], 0b111), Some(1));
        assert_eq!(fewest_sights(&[0b001], 0b011), None);
        assert_eq!(fewest_sights(&[], 0), Some(0));
    }
}
