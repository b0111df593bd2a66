//! Witness plans: for a task, a concrete itinerary in the release's plan format that passes
//! the release's validity rules and keeps every member's hard constraints after the
//! compromises it declares (compromisable members only, at most two each), chosen to maximise
//! the group utility under the release's weights. A task without one gets the constraint
//! that blocks it.
//!
//! How: the frames (nights per destination × a mode per leg) are enumerated and ranked; for
//! the best ones a greedy start and a local search fill the days (`search`); the best plan is
//! written out (`output`) and scored by the release-faithful scorer (`gtb_score`), which
//! must find it valid and within every hard constraint, or the next frame's plan is tried.
//! Everything is deterministic: fixed orders, ties broken by position, a bound on the work
//! counted in simulations rather than time. The time model is in `model` (docs/PLANS.md).

pub mod baseline;
pub mod frame;
pub mod instance;
pub mod model;
pub mod output;
pub mod search;
pub mod sim;

use frame::Frame;
use gtb_core::task::Task;
use gtb_plan::{Compromise, Plan};
use gtb_resources::Resources;
use gtb_score::{PlanScore, PoiDb, score_plan};
use instance::Instance;
use search::{Eval, Field, Search, State};

/// How much searching a task gets (piece simulations).
#[derive(Debug, Clone, Copy)]
pub struct Effort {
    /// per frame in the first round (every frame)
    pub scout: usize,
    /// per frame in the second round (the best frames)
    pub deep: usize,
    /// frames searched deeply
    pub finalists: usize,
    /// mode combinations kept per allocation of nights
    pub combos: usize,
}

impl Default for Effort {
    fn default() -> Self {
        Effort {
            scout: 600,
            deep: 4000,
            finalists: 2,
            combos: 3,
        }
    }
}

/// Ways to share the nights among the destinations.
type Allocations = Vec<Vec<u32>>;
/// Mode combinations: an option index per leg.
type Combos = Vec<Vec<usize>>;

/// A witness and what it scores.
#[derive(Debug, Clone)]
pub struct Witness {
    pub plan: Plan,
    pub compromises: Vec<Compromise>,
    /// the release's scores of the plan after its compromises
    pub score: PlanScore,
    /// group utility under the original preferences (no compromise applied)
    pub utility_without_compromises: i64,
    /// an upper bound on the group utility (`output::upper_bound`)
    pub upper_bound: i64,
    /// time slots in which the group splits
    pub split_slots: i64,
    /// stand-in locations used
    pub stand_ins: Vec<String>,
}

pub struct Solver<'a> {
    pub res: &'a Resources,
    pub db: &'a PoiDb,
    pub effort: Effort,
}

/// Thousands with commas: 1240 → "1,240".
pub fn cny(x: u32) -> String {
    gtb_core::text::grouped(u64::from(x), ',')
}

impl<'a> Solver<'a> {
    pub fn new(res: &'a Resources, db: &'a PoiDb) -> Self {
        let effort = Effort::default();
        Solver { res, db, effort }
    }

    /// A witness for the task, or the constraint that blocks one.
    pub fn solve(&self, task: &Task) -> Result<Witness, String> {
        let inst = Instance::new(task, self.res, self.db)?;
        let (allocs, combos) = self.frame_choices(&inst)?;
        let frames = self.frames(&inst, &allocs, &combos)?;
        budget_floor(&inst, &frames)?;
        // scout every frame briefly, then search the most promising deeply
        let mut scouted: Vec<(usize, Eval)> = (0..frames.len())
            .map(|k| (k, self.search(&inst, &frames[k], self.effort.scout).eval))
            .collect();
        scouted.sort_by(|a, b| b.1.key().cmp(&a.1.key()).then(a.0.cmp(&b.0)));
        let mut finals: Vec<(usize, State)> = scouted
            .iter()
            .take(self.effort.finalists)
            .map(|&(k, _)| (k, self.search(&inst, &frames[k], self.effort.deep)))
            .collect();
        finals.sort_by(|a, b| b.1.eval.key().cmp(&a.1.eval.key()).then(a.0.cmp(&b.0)));
        let mut why = String::new();
        for (k, st) in &finals {
            if st.eval.breach > 0 {
                if why.is_empty() {
                    why = explain(&inst, st);
                }
                continue;
            }
            match self.witness(&inst, &frames[*k], st) {
                Ok(w) => return Ok(w),
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    fn search(&self, inst: &Instance, frame: &Frame, budget: usize) -> State {
        Search {
            inst,
            frame,
            budget,
        }
        .run()
    }

    /// The allocations of nights and the mode combinations worth trying.
    fn frame_choices(&self, inst: &Instance) -> Result<(Allocations, Combos), String> {
        for leg in &inst.legs {
            if leg.options.is_empty() {
                return Err(format!(
                    "no intercity transport from {} to {} in the transport table",
                    self.res.city(leg.from).name,
                    self.res.city(leg.to).name
                ));
            }
        }
        Ok((
            frame::allocations(inst.days - 1, inst.dest.len()),
            self.combos(inst)?,
        ))
    }

    /// The frames of every allocation and combination that fit their days.
    fn frames(
        &self,
        inst: &Instance,
        allocs: &[Vec<u32>],
        combos: &[Vec<usize>],
    ) -> Result<Vec<Frame>, String> {
        let mut out = Vec::new();
        for (ai, a) in allocs.iter().enumerate() {
            for (ci, c) in combos.iter().enumerate() {
                if let Some(mut f) = Frame::new(inst, a, c) {
                    f.alloc = ai;
                    f.combo = ci;
                    out.push(f);
                }
            }
        }
        if out.is_empty() {
            return Err(
                "no allocation of the nights fits the travel days of the acceptable modes".into(),
            );
        }
        Ok(out)
    }

    /// Mode combinations: no hard transport breach of a member who cannot yield, then the
    /// best transport terms, then the cheapest; plus the cheapest acceptable one.
    fn combos(&self, inst: &Instance) -> Result<Vec<Vec<usize>>, String> {
        let firm: instance::Mask = inst
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.firm)
            .fold(0, |a, (i, _)| a | 1 << i);
        let acceptable = |l: usize, o: usize| {
            let x = &inst.legs[l].options[o];
            (x.must_missed | x.rejected) & firm == 0 && frame::leg_fits(inst, l, o)
        };
        for (l, leg) in inst.legs.iter().enumerate() {
            if (0..leg.options.len()).any(|o| acceptable(l, o)) {
                continue;
            }
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
            let mut who = Vec::new();
            for (i, m) in inst.members.iter().enumerate().filter(|(_, m)| m.firm) {
                let t = &m.pref.global_constraints.transport;
                if leg.options.iter().any(|o| o.must_missed >> i & 1 == 1) {
                    who.push(format!("{} must take {}", m.name, t.must.join("/")));
                }
                if leg.options.iter().any(|o| o.rejected >> i & 1 == 1) {
                    who.push(format!("{} rejects {}", m.name, t.reject.join("/")));
                }
            }
            return Err(format!(
                "no intercity mode from {} to {} fits into a travel day and is acceptable to every member who cannot yield (served: {}{}{})",
                self.res.city(leg.from).name,
                self.res.city(leg.to).name,
                served.join(", "),
                if who.is_empty() { "" } else { "; " },
                who.join("; ")
            ));
        }
        let mut all: Vec<Vec<usize>> = vec![Vec::new()];
        for (l, leg) in inst.legs.iter().enumerate() {
            let opts: Vec<usize> = (0..leg.options.len())
                .filter(|&o| acceptable(l, o))
                .collect();
            all = all
                .into_iter()
                .flat_map(|c| {
                    opts.iter().map(move |&o| {
                        let mut c = c.clone();
                        c.push(o);
                        c
                    })
                })
                .collect();
        }
        let stats = |c: &Vec<usize>| {
            let (mut v, mut fare, mut mins) = (0i64, 0u32, 0u32);
            for (leg, &o) in inst.legs.iter().zip(c) {
                let x = &leg.options[o];
                v += x.value.iter().map(|&y| y as i64).sum::<i64>();
                fare += x.fare;
                mins += x.minutes;
            }
            (v, fare, mins)
        };
        let mut ranked: Vec<(Vec<usize>, (i64, u32, u32))> = all
            .into_iter()
            .map(|c| {
                let s = stats(&c);
                (c, s)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.0
                .cmp(&a.1.0)
                .then(a.1.1.cmp(&b.1.1))
                .then(a.1.2.cmp(&b.1.2))
                .then(a.0.cmp(&b.0))
        });
        let mut out: Vec<Vec<usize>> = ranked
            .iter()
            .take(self.effort.combos)
            .map(|r| r.0.clone())
            .collect();
        // the cheapest and the fastest acceptable combinations as well
        for pick in [
            ranked
                .iter()
                .min_by(|a, b| a.1.1.cmp(&b.1.1).then(a.0.cmp(&b.0))),
            ranked
                .iter()
                .min_by(|a, b| a.1.2.cmp(&b.1.2).then(a.0.cmp(&b.0))),
        ]
        .into_iter()
        .flatten()
        {
            if !out.contains(&pick.0) {
                out.push(pick.0.clone());
            }
        }
        Ok(out)
    }

    /// Write out a state and check it with the scorer.
    fn witness(&self, inst: &Instance, frame: &Frame, st: &State) -> Result<Witness, String> {
        let plan = output::plan(inst, frame, st);
        let value = serde_json::to_value(&plan).map_err(|e| e.to_string())?;
        let plain = score_plan(inst.task, &value, &[], self.db);
        let firm_breach = plain
            .violations
            .iter()
            .find(|v| v.field == "trip" || inst.members.iter().any(|m| m.firm && m.name == v.user));
        if let Some(b) = firm_breach {
            return Err(format!(
                "the best plan breaks a hard constraint: {}",
                b.message
            ));
        }
        let compromises = output::compromises(inst, st, &plan, &plain.violations);
        let score = score_plan(inst.task, &value, &compromises, self.db);
        if !score.validity.valid || !score.violations.is_empty() {
            let first = score
                .validity
                .issues
                .first()
                .map(|i| format!("{}: {}", i.kind, i.message))
                .or_else(|| score.violations.first().map(|v| v.message.clone()))
                .unwrap_or_default();
            return Err(format!("the best plan fails the scorer: {first}"));
        }
        let mut stand_ins: Vec<String> = Vec::new();
        for d in &plan.days {
            for s in &d.city_segments {
                if let gtb_plan::Segment::City(b) = s {
                    for a in &b.activities {
                        if let gtb_plan::Activity::Food { location, .. }
                        | gtb_plan::Activity::Hotel { location, .. } = a
                            && gtb_plan::parse_stand_in(location).is_some()
                            && !stand_ins.contains(location)
                        {
                            stand_ins.push(location.clone());
                        }
                    }
                }
            }
        }
        Ok(Witness {
            plan,
            compromises,
            utility_without_compromises: plain.utility.total_score,
            score,
            upper_bound: output::upper_bound(inst),
            split_slots: st.eval.split,
            stand_ins,
        })
    }
}

/// Refuse early when a member who cannot yield cannot afford even the cheapest trip the
/// frames allow: the fares, the cheapest hotel of each night's city, and the cheapest meal
/// at each meal the days require.
fn budget_floor(inst: &Instance, frames: &[Frame]) -> Result<(), String> {
    let floor = |f: &Frame| {
        let hotel: u32 = f
            .night_dest
            .iter()
            .map(|&d| {
                inst.dest[d]
                    .hotels
                    .iter()
                    .map(|h| h.price)
                    .min()
                    .unwrap_or(0)
            })
            .sum();
        let meals: u32 = f
            .pieces
            .iter()
            .map(|p| {
                let n = [p.lunch, p.dinner]
                    .iter()
                    .filter(|x| **x == frame::Need::Required)
                    .count() as u32;
                n * inst.dest[p.dest]
                    .meals
                    .iter()
                    .map(|m| m.price)
                    .min()
                    .unwrap_or(0)
            })
            .sum();
        (f.fare + hotel + meals, f.fare, hotel, meals)
    };
    let Some((total, fare, hotel, meals)) = frames.iter().map(floor).min() else {
        return Ok(());
    };
    for m in inst.members.iter().filter(|m| m.firm) {
        let b = m.pref.global_constraints.avg_budget;
        if b > 0 && b < total {
            let nights = inst.days - 1;
            return Err(format!(
                "the budget of {} ({} CNY) is below the cheapest shared trip ({} CNY: transport {} + {} night{} {} + meals {})",
                m.name,
                cny(b),
                cny(total),
                cny(fare),
                nights,
                if nights == 1 { "" } else { "s" },
                cny(hotel),
                cny(meals)
            ));
        }
    }
    Ok(())
}

/// The first hard constraint the best plan still breaks, in words.
fn explain(inst: &Instance, st: &State) -> String {
    for (i, m) in inst.members.iter().enumerate() {
        let me = &st.eval.members[i];
        let mut broken = me.broken.clone();
        // a compromisable member yields on their two heaviest breaches; name the next one
        let skip = if m.firm {
            0
        } else {
            broken.sort_by_key(|b| std::cmp::Reverse(b.1));
            gtb_score::compromise::MAX_PER_USER
        };
        let who = if m.firm {
            format!("{} (who cannot yield)", m.name)
        } else {
            format!("{} (already at two compromises)", m.name)
        };
        let g = &m.pref.global_constraints;
        let city = |d: usize| inst.dest[d].name;
        // one of the member's lists for a destination, as the task writes it
        let listed = |d: usize, list: fn(&gtb_core::task::CityPref) -> &Vec<String>| {
            m.pref
                .city_specific_preferences
                .get(city(d))
                .map(|c| list(c).join("、"))
                .unwrap_or_default()
        };
        let Some(&(field, _)) = broken.get(skip) else {
            continue;
        };
        return match field {
            Field::Budget => format!(
                "the budget of {who} ({} CNY) is exceeded: the best plan found costs {} CNY",
                cny(g.avg_budget),
                cny(me.cost)
            ),
            Field::MaxPoi => format!(
                "{who} allows {} sights a day; the plan needs more",
                g.intensity.max_poi_per_day
            ),
            Field::MaxHours => format!(
                "{who} allows {} active hours a day; the plan needs more",
                g.intensity.max_active_hours
            ),
            Field::TransportMust => format!("{who} must travel by {}", g.transport.must.join("/")),
            Field::TransportReject => format!("{who} rejects {}", g.transport.reject.join("/")),
            Field::MustVisit(d) => format!(
                "the must_visit of {who} in {} ({}) cannot all be scheduled within the days, opening hours and caps",
                city(d),
                listed(d, |c| &c.attractions.must_visit)
            ),
            Field::RejectVisit(d) => format!(
                "{who} rejects a sight of {} that the plan cannot avoid",
                city(d)
            ),
            Field::MustEat(d) => format!(
                "the must_eat of {who} in {} ({}) cannot all be served",
                city(d),
                listed(d, |c| &c.food.must_eat)
            ),
            Field::RejectEat(d) => format!("{who} rejects the food the plan serves in {}", city(d)),
        };
    }
    "no plan meets every hard constraint".into()
}
