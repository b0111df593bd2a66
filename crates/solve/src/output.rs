//! A solved state written out: the plan in the release's format, the compromises it needs,
//! and an upper bound on the group utility.

use super::frame::{Frame, Step};
use super::instance::{Instance, Member};
use super::model::{self, ride_mode};
use super::search::{Field, MemberEval, State};
use super::sim::{ActKind, Place, activities, coords};
use gtb_plan::{
    Activity, CityBlock, Compromise, Day, Intercity, IntercityTag, Plan, Segment, hhmm,
    participants,
};
use gtb_score::hard::Violation;
use serde_json::Value;

fn label(inst: &Instance, frame: &Frame, st: &State, dest: usize, p: Place) -> String {
    let d = &inst.dest[dest];
    match p {
        Place::Terminal(leg) => model::terminal(inst.res, d.id, frame.mode(inst, usize::from(leg))),
        Place::Hotel => d.hotels[st.hotels[dest]].location.to_string(),
        Place::Sight(s) => d.sights[s as usize].name.to_string(),
        Place::Meal(m) => d.meals[m as usize].location.to_string(),
    }
}

/// The plan of a state.
pub fn plan(inst: &Instance, frame: &Frame, st: &State) -> Plan {
    let driving = frame.driving(inst);
    let mut days = Vec::new();
    for (day, steps) in frame.days.iter().enumerate() {
        let mut segs = Vec::new();
        for step in steps {
            match *step {
                Step::Trip(t) => {
                    let trip = &frame.trips[t];
                    let leg = &inst.legs[trip.leg];
                    let o = &leg.options[trip.option];
                    segs.push(Segment::Intercity(Intercity {
                        kind: IntercityTag::IntercityTransport,
                        from_city: inst.res.city(leg.from).name.clone(),
                        to_city: inst.res.city(leg.to).name.clone(),
                        transport_mode: o.mode.to_string(),
                        start_time: hhmm(trip.depart),
                        end_time: hhmm(trip.arrive),
                        avg_cost: o.fare,
                    }));
                }
                Step::Piece(p) => {
                    let dest = frame.pieces[p].dest;
                    let d = &inst.dest[dest];
                    let mut acts = activities(inst, frame, p, &st.programs[p]);
                    // activities by start time; a member's own activities keep their order
                    acts.sort_by_key(|a| (a.kind == ActKind::Hotel, a.start));
                    let activities = acts
                        .iter()
                        .map(|a| {
                            let who = participants(&inst.names(a.mask), inst.n());
                            let (start_time, end_time) = (hhmm(a.start), hhmm(a.end));
                            match a.kind {
                                ActKind::Transfer(from, to) => Activity::IntracityTransport {
                                    transport_mode: ride_mode(
                                        coords(inst, dest, from),
                                        coords(inst, dest, to),
                                        driving,
                                    )
                                    .to_string(),
                                    from: label(inst, frame, st, dest, from),
                                    to: label(inst, frame, st, dest, to),
                                    start_time,
                                    end_time,
                                    participants: who,
                                },
                                ActKind::Sight(s) => Activity::Attraction {
                                    location: d.sights[s as usize].name.to_string(),
                                    start_time,
                                    end_time,
                                    participants: who,
                                },
                                ActKind::Meal(m) => Activity::Food {
                                    location: d.meals[m as usize].location.to_string(),
                                    start_time,
                                    end_time,
                                    participants: who,
                                    avg_cost: d.meals[m as usize].price,
                                },
                                ActKind::Rest => Activity::Rest {
                                    start_time,
                                    end_time,
                                    participants: who,
                                },
                                ActKind::Hotel => {
                                    let h = &d.hotels[st.hotels[dest]];
                                    Activity::Hotel {
                                        location: h.location.to_string(),
                                        start_time,
                                        end_time,
                                        avg_cost: h.price,
                                    }
                                }
                            }
                        })
                        .collect();
                    segs.push(Segment::City(CityBlock {
                        city: d.name.to_string(),
                        activities,
                    }));
                }
            }
        }
        days.push(Day {
            day: day as u32 + 1,
            date: inst.dates[day].0.clone(),
            city_segments: segs,
        });
    }
    Plan { days }
}

/// Where a member goes and eats in a plan: (city, location) of the attractions and of the
/// meals they take part in.
/// (city, location) pairs.
type Places = Vec<(String, String)>;

fn joined(plan: &Plan, user: &str) -> (Places, Places) {
    let (mut sights, mut meals) = (Vec::new(), Vec::new());
    let takes_part = |p: &[String]| p.iter().any(|x| x == gtb_plan::ALL || x == user);
    for d in &plan.days {
        for s in &d.city_segments {
            let Segment::City(b) = s else { continue };
            for a in &b.activities {
                match a {
                    Activity::Attraction {
                        location,
                        participants,
                        ..
                    } if takes_part(participants) => {
                        sights.push((b.city.clone(), location.clone()))
                    }
                    Activity::Food {
                        location,
                        participants,
                        ..
                    } if takes_part(participants) => meals.push((b.city.clone(), location.clone())),
                    _ => {}
                }
            }
        }
    }
    (sights, meals)
}

/// The compromises that make every breach of a compromisable member a declared yield: the
/// field's new value keeps what the plan honours as the scorer reads it (`breaches`, its
/// findings without compromises, name the items it does not count), and drops the rest; a
/// reject list also drops an item a location the member joins names (the solver's stricter
/// rule); a budget or cap rises to what the plan needs.
pub fn compromises(
    inst: &Instance,
    st: &State,
    plan: &Plan,
    breaches: &[Violation],
) -> Vec<Compromise> {
    let mut out: Vec<Compromise> = Vec::new();
    for (i, m) in inst.members.iter().enumerate() {
        if m.firm {
            continue;
        }
        let me = &st.eval.members[i];
        let (sights, meals) = joined(plan, m.name);
        let y = Yielder {
            member: m,
            me,
            plan,
            breaches,
            sights,
            meals,
        };
        for field in broken_fields(inst, me, m.name, breaches) {
            let Some(value) = y.value(&field) else {
                continue;
            };
            out.push(Compromise {
                user: m.name.to_string(),
                path: field,
                value,
            });
        }
    }
    out
}

/// The path (relative to `preference`) of a field the solver found broken.
fn field_path(inst: &Instance, f: &Field) -> String {
    let city_path =
        |d: usize, leaf: &str| format!("city_specific_preferences.{}.{leaf}", inst.dest[d].name);
    match f {
        Field::Budget => "global_constraints.avg_budget".to_string(),
        Field::MaxPoi => "global_constraints.intensity.max_poi_per_day".to_string(),
        Field::MaxHours => "global_constraints.intensity.max_active_hours".to_string(),
        Field::TransportMust => "global_constraints.transport.must".to_string(),
        Field::TransportReject => "global_constraints.transport.reject".to_string(),
        Field::MustVisit(d) => city_path(*d, "attractions.must_visit"),
        Field::RejectVisit(d) => city_path(*d, "attractions.reject_visit"),
        Field::MustEat(d) => city_path(*d, "food.must_eat"),
        Field::RejectEat(d) => city_path(*d, "food.reject_eat"),
    }
}

/// A member's broken fields, sorted and once each: the solver's and the scorer's (`breaches`).
fn broken_fields(
    inst: &Instance,
    me: &MemberEval,
    user: &str,
    breaches: &[Violation],
) -> Vec<String> {
    let mut fields: Vec<String> = me
        .broken
        .iter()
        .map(|(f, _)| field_path(inst, f))
        .chain(
            breaches
                .iter()
                .filter(|b| b.user == user)
                .map(|b| b.field.clone()),
        )
        .collect();
    fields.sort();
    fields.dedup();
    fields
}

/// What a compromisable member's new field values are read from.
struct Yielder<'a> {
    member: &'a Member<'a>,
    me: &'a MemberEval,
    plan: &'a Plan,
    /// the scorer's findings without compromises
    breaches: &'a [Violation],
    /// (city, location) of the sights and meals the member joins
    sights: Places,
    meals: Places,
}

impl Yielder<'_> {
    /// The new value of a broken field: a budget or cap raised to what the plan needs, a
    /// transport list cleared of what the plan breaks, or a city list (`city_value`).
    fn value(&self, field: &str) -> Option<Value> {
        let (me, g) = (self.me, &self.member.pref.global_constraints);
        Some(match field {
            "global_constraints.avg_budget" => Value::from(me.cost.div_ceil(100) * 100),
            "global_constraints.intensity.max_poi_per_day" => {
                Value::from(me.pois.iter().copied().max().unwrap_or(0))
            }
            "global_constraints.intensity.max_active_hours" => {
                Value::from(me.active.iter().copied().max().unwrap_or(0).div_ceil(60))
            }
            "global_constraints.transport.must" => Value::from(Vec::<String>::new()),
            "global_constraints.transport.reject" => {
                let used: Vec<&str> = plan_modes(self.plan);
                Value::from(
                    g.transport
                        .reject
                        .iter()
                        .filter(|x| !used.contains(&x.as_str()))
                        .cloned()
                        .collect::<Vec<_>>(),
                )
            }
            f => return self.city_value(f),
        })
    }

    /// The new value of a city list: a must item stays when the scorer counts it; a reject
    /// item when neither the scorer counts it nor a location the member joins names it.
    /// `None` when the field is no city list the member has.
    fn city_value(&self, field: &str) -> Option<Value> {
        let (city, leaf) = field
            .strip_prefix("city_specific_preferences.")
            .and_then(|r| r.split_once('.'))?;
        let cp = self.member.pref.city_specific_preferences.get(city)?;
        let scorer_drops: Vec<&str> = self
            .breaches
            .iter()
            .filter(|b| b.user == self.member.name && b.field == field)
            .map(|b| b.item.as_str())
            .collect();
        let named = |places: &[(String, String)], x: &str| {
            places.iter().any(|(c, l)| c == city && l.contains(x))
        };
        let keep = |list: &[String], ok: &dyn Fn(&str) -> bool| {
            Value::from(list.iter().filter(|x| ok(x)).cloned().collect::<Vec<_>>())
        };
        Some(match leaf {
            "attractions.must_visit" => {
                keep(&cp.attractions.must_visit, &|x| !scorer_drops.contains(&x))
            }
            "attractions.reject_visit" => keep(&cp.attractions.reject_visit, &|x| {
                !named(&self.sights, x) && !scorer_drops.contains(&x)
            }),
            "food.must_eat" => keep(&cp.food.must_eat, &|x| !scorer_drops.contains(&x)),
            "food.reject_eat" => keep(&cp.food.reject_eat, &|x| {
                !named(&self.meals, x) && !scorer_drops.contains(&x)
            }),
            _ => return None,
        })
    }
}

/// The intercity modes a plan uses.
fn plan_modes(plan: &Plan) -> Vec<&str> {
    plan.days
        .iter()
        .flat_map(|d| d.city_segments.iter())
        .filter_map(|s| match s {
            Segment::Intercity(t) => Some(t.transport_mode.as_str()),
            _ => None,
        })
        .collect()
}

/// An upper bound on the group utility: every member gets, independently, the best each part
/// of a plan could give them: every must_visit (+2 each), a positive category for every
/// attraction their daily cap allows, the best meal at two meals a day, the best mode on every
/// leg and the best hotel every night; no penalty.
pub fn upper_bound(inst: &Instance) -> i64 {
    let days = inst.days as i64;
    let nights = days - 1;
    let mut total = 0i64;
    for (i, m) in inst.members.iter().enumerate() {
        let mut ub = 0i64;
        let mut keen = 0i64;
        for (di, d) in inst.dest.iter().enumerate() {
            let must = inst.must_visit_all(i, di);
            let reachable = d.sights.iter().fold(0, |a, s| a | s.must[i]);
            ub += 2 * (must & reachable).count_ones() as i64;
            keen += d.sights.iter().filter(|s| s.value[i] > 0).count() as i64;
        }
        let cap = match m.pref.global_constraints.intensity.max_poi_per_day {
            0 => 4,
            c => c as i64,
        };
        ub += keen.min(cap * days);
        let best_meal = inst
            .dest
            .iter()
            .flat_map(|d| d.meals.iter().map(move |f| f.value[i] as i64))
            .max()
            .unwrap_or(0)
            .max(0);
        ub += 2 * days * best_meal;
        for leg in &inst.legs {
            ub += leg
                .options
                .iter()
                .map(|o| o.value[i] as i64)
                .max()
                .unwrap_or(0);
        }
        let best_hotel = inst
            .dest
            .iter()
            .flat_map(|d| d.hotels.iter().map(move |h| h.value[i] as i64))
            .max()
            .unwrap_or(0);
        ub += nights * best_hotel;
        total += ub;
    }
    total
}
