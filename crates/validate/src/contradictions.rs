//! Check `contradictions`: one member naming the same item in two tiers of one field (must and
//! reject, prefer and avoid, ...), or rejecting the scenic area around a must_visit sight (a
//! reject of an area covers its parts: `resources::parents`). The stronger tier wins: in
//! `Mode::Fix` the item leaves the weaker tier.

use super::{Finding, Mode, Outcome, Validator};
use gtb_core::task::{Preference, Task};

/// The tiers of a four-tier field, strongest first where it matters: must (0), prefer (1),
/// avoid (2), reject (3).
type Tiers<'t> = [(&'static str, &'t mut Vec<String>); 4];

/// (stronger, weaker) tier pairs of transport, in the order their findings are reported.
const TRANSPORT_PAIRS: [(usize, usize); 6] = [(0, 3), (0, 1), (0, 2), (3, 1), (3, 2), (1, 2)];
/// (stronger, weaker) tier pairs of food, in the order their findings are reported.
const FOOD_PAIRS: [(usize, usize); 6] = [(0, 3), (0, 2), (0, 1), (3, 1), (3, 2), (1, 2)];

pub(super) fn check(_v: &Validator, t: &mut Task, mode: Mode, out: &mut Outcome) {
    let task_id = t.task_id.clone();
    for (u, entry) in t.user_preferences.iter_mut() {
        let mut log = Log {
            mode,
            found: Vec::new(),
        };
        member(&mut entry.preference, &mut log);
        let kept = if mode == Mode::Fix {
            ", which is kept"
        } else {
            ""
        };
        for c in log.found {
            let f = Finding {
                check: "contradictions",
                task_id: task_id.clone(),
                user: u.clone(),
                city: c.city,
                field: c.field.into(),
                item: c.item,
                message: format!("also in {}, the stronger tier{kept}", c.stronger),
            };
            Validator::fixable(out, mode, f);
        }
    }
}

/// One item a member names in two tiers of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// "" for a global field
    pub city: String,
    /// the weaker tier, which the fix empties of the item
    pub field: &'static str,
    pub stronger: &'static str,
    pub item: String,
}

/// Resolve the items of a table named in two tiers of one field as the build does (the
/// stronger tier keeps them), and say which. The LLM reply checks apply it to a reply's tables
/// at once, so that the lines are checked against, and template lines made from, the table the
/// build keeps.
pub fn resolve(p: &mut Preference) -> Vec<Clash> {
    let mut log = Log {
        mode: Mode::Fix,
        found: Vec::new(),
    };
    member(p, &mut log);
    log.found
}

/// Every field of one member: transport and hotels, then each city's attractions and food.
fn member(p: &mut Preference, log: &mut Log) {
    let g = &mut p.global_constraints;
    let tr = &mut g.transport;
    let mut tiers = [
        ("transport.must", &mut tr.must),
        ("transport.prefer", &mut tr.prefer),
        ("transport.avoid", &mut tr.avoid),
        ("transport.reject", &mut tr.reject),
    ];
    four_tiers(&mut tiers, &TRANSPORT_PAIRS, "", log);
    let hp = &mut g.hotel_preference;
    log.keep_stronger(
        "",
        (&hp.prefer, "hotel_preference.prefer"),
        (&mut hp.avoid, "hotel_preference.avoid"),
    );
    for (city, cp) in p.city_specific_preferences.iter_mut() {
        let a = &mut cp.attractions;
        log.keep_stronger(
            city,
            (&a.must_visit, "attractions.must_visit"),
            (&mut a.reject_visit, "attractions.reject_visit"),
        );
        let c = &mut a.category_pref;
        log.keep_stronger(
            city,
            (&c.positive, "category_pref.positive"),
            (&mut c.negative, "category_pref.negative"),
        );
        let fo = &mut cp.food;
        let mut tiers = [
            ("food.must_eat", &mut fo.must_eat),
            ("food.prefer_eat", &mut fo.prefer_eat),
            ("food.avoid_eat", &mut fo.avoid_eat),
            ("food.reject_eat", &mut fo.reject_eat),
        ];
        four_tiers(&mut tiers, &FOOD_PAIRS, city, log);
    }
}

/// A four-tier field: each (stronger, weaker) pair, the stronger tier as it was before any fix.
fn four_tiers(tiers: &mut Tiers, pairs: &[(usize, usize)], city: &str, log: &mut Log) {
    // most members name no item twice: nothing to copy then
    let clash = |&(s, w): &(usize, usize)| tiers[w].1.iter().any(|x| tiers[s].1.contains(x));
    if !pairs.iter().any(clash) {
        return;
    }
    let before: Vec<Vec<String>> = tiers.iter().map(|(_, l)| l.to_vec()).collect();
    for &(s, w) in pairs {
        let strong_field = tiers[s].0;
        let (weak_field, weak) = &mut tiers[w];
        log.keep_stronger(city, (&before[s], strong_field), (weak, weak_field));
    }
}

/// The clashes of one member.
struct Log {
    mode: Mode,
    found: Vec<Clash>,
}

impl Log {
    /// Items of `weak` that are also in `strong`: a clash each, and in `Mode::Fix` they leave
    /// `weak`.
    fn keep_stronger(
        &mut self,
        city: &str,
        (strong, strong_field): (&[String], &'static str),
        (weak, weak_field): (&mut Vec<String>, &'static str),
    ) {
        let removed: Vec<String> = weak
            .iter()
            .filter(|x| strong.contains(x))
            .cloned()
            .collect();
        if self.mode == Mode::Fix {
            weak.retain(|x| !strong.contains(x));
        }
        for item in removed {
            self.found.push(Clash {
                city: city.into(),
                field: weak_field,
                stronger: strong_field,
                item,
            });
        }
    }
}

/// A member who must visit 华山西峰 and rejects 华山 contradicts themself: the reject of the
/// area goes (in `Mode::Fix`), the must stays.
pub(super) fn rejected_areas(v: &Validator, t: &mut Task, mode: Mode, out: &mut Outcome) {
    let task_id = t.task_id.clone();
    let kept = if mode == Mode::Fix {
        ", which is kept"
    } else {
        ""
    };
    for (u, entry) in t.user_preferences.iter_mut() {
        for (city, cp) in entry.preference.city_specific_preferences.iter_mut() {
            let Some(cid) = v.res.city_id(city) else {
                continue;
            };
            let a = &mut cp.attractions;
            let covering: Vec<(String, String)> = a
                .reject_visit
                .iter()
                .filter_map(|r| {
                    let m = a
                        .must_visit
                        .iter()
                        .find(|m| *m != r && v.res.covers(cid, r, m))?;
                    Some((r.clone(), m.clone()))
                })
                .collect();
            for (r, m) in covering {
                if mode == Mode::Fix {
                    a.reject_visit.retain(|x| *x != r);
                }
                let f = Finding {
                    check: "contradictions",
                    task_id: task_id.clone(),
                    user: u.clone(),
                    city: city.clone(),
                    field: "attractions.reject_visit".into(),
                    item: r,
                    message: format!(
                        "rejects the area around must_visit {m:?}, the stronger tier{kept}"
                    ),
                };
                Validator::fixable(out, mode, f);
            }
        }
    }
}
