//! The group step of the offline generator: the must/reject clashes between members made to
//! match the task's plan (injected where it asks for one, scrubbed elsewhere), and the budgets
//! of members who cannot yield raised to cover the cheapest trip the group can share.

use super::*;

/// Make the task's must/reject clashes match the plan drawn for it: inject one where the plan
/// says so, and scrub accidental ones elsewhere (so that the configured shares hold).
pub(super) fn inject_conflicts(
    trip: &Trip,
    c: &Conflicts,
    tables: &mut [(String, Preference)],
    rng: &mut ChaCha8Rng,
) {
    let ctx = trip.ctx;
    let want_attr = rng.gen_bool(c.attractions);
    let want_food = rng.gen_bool(c.food);
    let want_transport = rng.gen_bool(c.transport);
    let n = tables.len();
    let city_names: Vec<String> = ctx
        .cities
        .iter()
        .map(|&x| ctx.res.city(x).name.clone())
        .collect();
    scrub_city_clashes(ctx, &city_names, tables);
    scrub_transport(tables);
    if n < 2 {
        return;
    }
    if want_attr {
        let (i, j) = two_members(n, rng);
        let ci = rng.gen_range(0..city_names.len());
        attraction_clash(ctx, ci, &city_names[ci], (i, j), tables);
    }
    if want_food {
        let (i, j) = two_members(n, rng);
        let k = rng.gen_range(0..city_names.len());
        food_clash(trip, k, &city_names[k], (i, j), tables);
    }
    if want_transport {
        transport_clash(ctx, tables, rng);
    }
}

/// Two different members of `n`, drawn uniformly.
fn two_members(n: usize, rng: &mut ChaCha8Rng) -> (usize, usize) {
    let i = rng.gen_range(0..n);
    let mut j = rng.gen_range(0..n - 1);
    if j >= i {
        j += 1;
    }
    (i, j)
}

/// Nobody rejects what another member must have, nor the area it lies in.
fn scrub_city_clashes(
    ctx: &TaskContext,
    city_names: &[String],
    tables: &mut [(String, Preference)],
) {
    let n = tables.len();
    for (city, &cid) in city_names.iter().zip(&ctx.cities) {
        for i in 0..n {
            let own = &tables[i].1.city_specific_preferences[city];
            if own.attractions.reject_visit.is_empty() && own.food.reject_eat.is_empty() {
                continue;
            }
            // a list of every other member's preferences for the city
            let others = |list: fn(&CityPref) -> &Vec<String>| -> Vec<String> {
                (0..n)
                    .filter(|&j| j != i)
                    .flat_map(|j| list(&tables[j].1.city_specific_preferences[city]).clone())
                    .collect()
            };
            let musts_v = others(|c| &c.attractions.must_visit);
            let musts_f = others(|c| &c.food.must_eat);
            let cp = city_pref(tables, i, city);
            cp.attractions
                .reject_visit
                .retain(|x| !musts_v.iter().any(|m| ctx.res.same_place(cid, m, x)));
            cp.food.reject_eat.retain(|x| !musts_f.contains(x));
        }
    }
}

/// Member `i`'s preferences for `city` (every table has every trip city).
fn city_pref<'t>(tables: &'t mut [(String, Preference)], i: usize, city: &str) -> &'t mut CityPref {
    tables[i]
        .1
        .city_specific_preferences
        .get_mut(city)
        .expect("city")
}

/// Member `j` rejects member `i`'s first must_visit of the trip's `ci`-th city.
fn attraction_clash(
    ctx: &TaskContext,
    ci: usize,
    city: &str,
    (i, j): (usize, usize),
    tables: &mut [(String, Preference)],
) {
    let cid = ctx.cities[ci];
    let item = tables[i].1.city_specific_preferences[city]
        .attractions
        .must_visit[0]
        .clone();
    let cj = city_pref(tables, j, city);
    // j rejects the item: j cannot insist on it, on the area it lies in, or on a part of it
    cj.attractions
        .must_visit
        .retain(|x| !ctx.res.same_place(cid, x, &item));
    if cj.attractions.must_visit.is_empty() {
        // keep must_visit non-empty: take the most popular sight nobody else is fighting over
        let atts = &ctx.res.attractions[cid as usize];
        let at = ctx.res.attraction_index(cid, &item);
        if let Some(alt) = atts.iter().enumerate().find_map(|(k, a)| {
            let same = at.map_or(a.name == item, |at| parents::related(atts, at, k));
            (!same && ctx.open_during_trip(a)).then_some(a)
        }) {
            cj.attractions.must_visit.push(alt.name.clone());
        }
    }
    cj.attractions.reject_visit = vec![item];
}

/// Member `j` rejects member `i`'s first must_eat of the trip's `k`-th city (one is given to
/// `i` when it has none).
fn food_clash(
    trip: &Trip,
    k: usize,
    city: &str,
    (i, j): (usize, usize),
    tables: &mut [(String, Preference)],
) {
    let ci = city_pref(tables, i, city);
    if ci.food.must_eat.is_empty()
        && let Some((v, _)) = trip.stock[k].food.iter().find(|(v, _)| {
            !ci.food.prefer_eat.contains(v)
                && !ci.food.avoid_eat.contains(v)
                && !ci.food.reject_eat.contains(v)
        })
    {
        ci.food.must_eat.push(v.clone());
    }
    let Some(item) = ci.food.must_eat.first().cloned() else {
        return;
    };
    let cj = city_pref(tables, j, city);
    for l in [
        &mut cj.food.must_eat,
        &mut cj.food.prefer_eat,
        &mut cj.food.avoid_eat,
    ] {
        l.retain(|x| *x != item);
    }
    cj.food.reject_eat = vec![item.clone()];
    // prefer_eat and avoid_eat are shared with j's copy_minor partners: they lose the item
    // too, or the partners would no longer share them
    for p in copy_minor_unit(trip.ctx, tables, j) {
        let cp = city_pref(tables, p, city);
        cp.food.prefer_eat.retain(|x| *x != item);
        cp.food.avoid_eat.retain(|x| *x != item);
    }
}

/// One social unit rejects the mode another must take (only members of different units can
/// disagree on transport: units share their globals).
fn transport_clash(ctx: &TaskContext, tables: &mut [(String, Preference)], rng: &mut ChaCha8Rng) {
    let n = tables.len();
    let units: Vec<usize> = (0..n)
        .filter(|&i| {
            (0..i).all(|j| tables[j].1.global_constraints != tables[i].1.global_constraints)
        })
        .collect();
    if units.len() < 2 {
        return;
    }
    let (a, b) = (units[0], units[1 + rng.gen_range(0..units.len() - 1)]);
    let ga = tables[a].1.global_constraints.clone();
    let mode = ga.transport.must.first().cloned().or_else(|| {
        ctx.res
            .modes_on_all_legs(ctx.hub, &ctx.cities)
            .first()
            .map(|m| m.to_string())
    });
    let Some(mode) = mode else { return };
    let old = tables[b].1.global_constraints.clone();
    for t in tables.iter_mut().filter(|t| t.1.global_constraints == old) {
        let tr = &mut t.1.global_constraints.transport;
        for l in [&mut tr.must, &mut tr.prefer, &mut tr.avoid] {
            l.retain(|x| *x != mode);
        }
        tr.reject = vec![mode.clone()];
    }
    for t in tables.iter_mut().filter(|t| t.1.global_constraints == ga) {
        let tr = &mut t.1.global_constraints.transport;
        if !tr.must.contains(&mode) {
            for l in [&mut tr.prefer, &mut tr.avoid, &mut tr.reject] {
                l.retain(|x| *x != mode);
            }
            tr.must.insert(0, mode.clone());
            tr.must.truncate(2);
        }
    }
}

/// The cheapest trip per person a group can share: per leg a served mode no firm member
/// rejects that fits into its travel day (`plan::day`), each firm member with a transport must
/// list travelling by one of its modes at least once, the cheapest hotel of each night (every
/// city one night, the spare ones in the cheapest), and two meals a day at the cheapest food;
/// `None` when no such trip exists.
fn cheapest_trip(ctx: &TaskContext, tables: &[(String, Preference)]) -> Option<u32> {
    let firm = tables
        .iter()
        .filter(|(u, _)| !ctx.skeleton.compromise_pattern.contains(u))
        .map(|(_, p)| &p.global_constraints);
    let trip = crate::trip::TripFloor::new(ctx, crate::trip::TripFloor::offline_stay(ctx));
    trip.cost(firm)
}

/// A member who cannot yield states a budget that covers the cheapest trip the group's hard
/// transport wishes allow (`cheapest_trip`): a lower one is raised, with their whole unit (the
/// members sharing their global constraints), to 110–130 % of that trip, rounded up to 100.
pub(super) fn fit_budgets(
    ctx: &TaskContext,
    tables: &mut [(String, Preference)],
    rng: &mut ChaCha8Rng,
) {
    let Some(floor) = cheapest_trip(ctx, tables) else {
        return;
    };
    let mut low: Vec<GlobalConstraints> = Vec::new();
    for (u, p) in tables.iter() {
        let g = &p.global_constraints;
        let firm = !ctx.skeleton.compromise_pattern.contains(u);
        if firm && f64::from(g.avg_budget) < f64::from(floor) * 1.1 && !low.contains(g) {
            low.push(g.clone());
        }
    }
    for old in low {
        let raised = (f64::from(floor) * rng.gen_range(1.1..1.3) / 100.0).ceil() as u32 * 100;
        let raised = in_budget_range(raised);
        for (_, p) in tables.iter_mut() {
            if p.global_constraints == old {
                p.global_constraints.avg_budget = raised.max(old.avg_budget);
            }
        }
    }
}

/// The other members that share weak city fields with member `j` (linked to it by copy_minor,
/// either way, through any chain of such links).
fn copy_minor_unit(ctx: &TaskContext, tables: &[(String, Preference)], j: usize) -> Vec<usize> {
    let mut unit = vec![j];
    let mut k = 0;
    while k < unit.len() {
        let u = &tables[unit[k]].0;
        for (i, (v, _)) in tables.iter().enumerate() {
            if !unit.contains(&i) && ctx.archetype.minor_linked(u, v) {
                unit.push(i);
            }
        }
        k += 1;
    }
    unit.remove(0);
    unit
}

fn scrub_transport(tables: &mut [(String, Preference)]) {
    let musts: Vec<Vec<String>> = tables
        .iter()
        .map(|t| t.1.global_constraints.transport.must.clone())
        .collect();
    for (i, table) in tables.iter_mut().enumerate() {
        let others: Vec<&String> = musts
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, m)| m.iter())
            .collect();
        table
            .1
            .global_constraints
            .transport
            .reject
            .retain(|x| !others.contains(&x));
    }
}
