//! Check `poi_names`: every must/reject attraction is a POI of its city (a close spelling, an
//! official long name or an alias is snapped to the inventory name), and every food value is
//! one its city accepts (`super::food`: the city's own, or a category found everywhere).

use super::names::Match;
use super::{Finding, Mode, Outcome, Validator, finding, food};
use gtb_core::task::Task;

/// Attractions: exact, snapped (a fix, applied in `Mode::Fix`), or unknown (a problem).
pub(super) fn check_attractions(v: &Validator, t: &mut Task, mode: Mode, out: &mut Outcome) {
    let task_id = t.task_id.clone();
    for (u, entry) in t.user_preferences.iter_mut() {
        for (city, cp) in entry.preference.city_specific_preferences.iter_mut() {
            let Some(cid) = v.res.city_id(city) else {
                continue;
            };
            for (field, list) in [
                ("attractions.must_visit", &mut cp.attractions.must_visit),
                ("attractions.reject_visit", &mut cp.attractions.reject_visit),
            ] {
                for item in list.iter_mut() {
                    let found = |message: String| Finding {
                        check: "poi_names",
                        task_id: task_id.clone(),
                        user: u.clone(),
                        city: city.clone(),
                        field: field.into(),
                        item: item.clone(),
                        message,
                    };
                    let m = v.names.lookup(cid as usize, item);
                    match &m {
                        Match::Exact => {}
                        Match::Snapped(..) | Match::Aliased { .. } => {
                            // a snap or an alias is a fix in either mode: the name is
                            // recognisable
                            let (canon, why) = m.resolved().expect("a resolved match");
                            out.fixes.push(found(why));
                            if mode == Mode::Fix {
                                *item = canon.to_string();
                            }
                        }
                        Match::Unknown { best } => {
                            let hint = best
                                .as_ref()
                                .map(|(c, s)| format!("; closest is {c:?} ({s:.2})"))
                                .unwrap_or_default();
                            out.problems
                                .push(found(format!("not a POI of {city}{hint}")));
                        }
                    }
                }
            }
        }
    }
}

/// Food values: the city's own (names and categories of its rows) or a category found
/// everywhere; a speciality of another city is a problem.
pub(super) fn check_food(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    for (u, entry) in &t.user_preferences {
        for (city, cp) in &entry.preference.city_specific_preferences {
            let Some(cid) = v.res.city_id(city) else {
                continue;
            };
            let foods = &v.res.food[cid as usize];
            let spelled = v.city_foods[cid as usize].get_or_init(|| food::spelled(foods));
            let known = |x: &str| food::allowed_in(spelled, foods, x);
            for (field, list) in [
                ("food.must_eat", &cp.food.must_eat),
                ("food.prefer_eat", &cp.food.prefer_eat),
                ("food.avoid_eat", &cp.food.avoid_eat),
                ("food.reject_eat", &cp.food.reject_eat),
            ] {
                for item in list.iter().filter(|v| !known(v)) {
                    out.problems.push(finding(
                        "poi_names",
                        t,
                        u,
                        city,
                        field,
                        item,
                        format!("not a food value of {city}: neither a name or category of its food rows nor a category found in every city"),
                    ));
                }
            }
        }
    }
}
