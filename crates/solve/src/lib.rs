//! Witness plans: for a task, a concrete itinerary in the release's plan format that passes
//! the release's validity rules and keeps every member's hard constraints after the
//! compromises it declares (compromisable members only, at most two each), chosen to maximise
//! the group utility under the release's weights. A task without one gets the constraint
//! that blocks it.
//!
//! How: the frames (nights per destination × a mode per leg) are enumerated and ranked; for
//! the best ones a greedy start and a local search fill the days (`search`, its moves for
//! must items in `musts`, its simulations kept per task in `sims`); the best plan is
//! written out (`output`) and scored by the release-faithful scorer (`gtb_score`), which
//! must find it valid and within every hard constraint, or the next frame's plan is tried.
//! Everything is deterministic: fixed orders, ties broken by position, a bound on the work
//! counted in simulations rather than time. The time model is in `model` (docs/PLANS.md).

pub mod baseline;
pub mod bound;
pub mod eval;
pub mod frame;
pub mod instance;
pub mod model;
mod moves;
mod musts;
pub mod output;
pub mod proof;
pub mod search;
mod shortlist;
pub mod sim;
pub mod sims;

use frame::Frame;
use gtb_core::task::Task;
use gtb_plan::{Compromise, Plan};
use gtb_resources::Resources;
use gtb_score::{PlanScore, PoiDb, score_plan};
use instance::Instance;
pub use proof::NoWitness;
use search::{Eval, Field, Key, Search, State, Trail};
use sims::Sims;

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
    /// skip scouting a frame that cannot be a finalist (`Solver::scout`): the same
    /// witnesses, with less work; off, every frame is scouted
    pub prune: bool,
}

impl Default for Effort {
    fn default() -> Self {
        Effort {
            scout: 600,
            deep: 4000,
            finalists: 2,
            combos: 3,
            prune: true,
        }
    }
}

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
    /// the plan's hotels and meals, and which of them are stand-ins
    pub venues: Venues,
}

/// Hotel and meal activities of a plan, and those at stand-ins (`plan::standin`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Venues {
    pub hotels: usize,
    pub hotel_stand_ins: usize,
    pub meals: usize,
    pub meal_stand_ins: usize,
    /// the stand-in locations, each once, in plan order
    pub stand_ins: Vec<String>,
}

impl Venues {
    pub fn of(plan: &gtb_plan::Plan) -> Venues {
        use gtb_plan::{Activity, Segment};
        let mut v = Venues::default();
        let blocks = plan.days.iter().flat_map(|d| &d.city_segments);
        for b in blocks.filter_map(|s| match s {
            Segment::City(b) => Some(b),
            Segment::Intercity(_) => None,
        }) {
            for a in &b.activities {
                let (location, hotel) = match a {
                    Activity::Hotel { location, .. } => (location, true),
                    Activity::Food { location, .. } => (location, false),
                    _ => continue,
                };
                let stand_in = gtb_plan::parse_stand_in(location).is_some();
                let (all, standing) = if hotel {
                    (&mut v.hotels, &mut v.hotel_stand_ins)
                } else {
                    (&mut v.meals, &mut v.meal_stand_ins)
                };
                *all += 1;
                if stand_in {
                    *standing += 1;
                    if !v.stand_ins.contains(location) {
                        v.stand_ins.push(location.clone());
                    }
                }
            }
        }
        v
    }
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

    /// A witness for the task, or why there is none: a proof of infeasibility, or the breach
    /// the best plan of an exhausted search still has.
    pub fn solve(&self, task: &Task) -> Result<Witness, NoWitness> {
        let inst = Instance::new(task, self.res, self.db).map_err(NoWitness::Infeasible)?;
        let usable = proof::usable_options(&inst).map_err(NoWitness::Infeasible)?;
        let all = proof::transport_combos(&inst, &usable).map_err(NoWitness::Infeasible)?;
        proof::budget(&inst, &all).map_err(NoWitness::Infeasible)?;
        proof::must_visits(&inst).map_err(NoWitness::Infeasible)?;
        proof::must_eats(&inst).map_err(NoWitness::Infeasible)?;
        let frames = self.frames(&inst, &all)?;
        // the searches of all frames share the task's simulations
        let mut sims = Sims::default();
        let mut trails: Vec<Trail> = vec![Trail::default(); frames.len()];
        // scout every frame briefly, then search the most promising deeply: a deep search
        // begins as its frame's scout did, and replays it (`Trail`)
        let mut scouted = self.scout(&inst, &frames, |k| {
            let scout = Search::new(&inst, &frames[k], self.effort.scout, &mut sims);
            let (st, trail) = scout.run_with_trail();
            trails[k] = trail;
            st.eval
        });
        scouted.sort_by(|a, b| b.1.key().cmp(&a.1.key()).then(a.0.cmp(&b.0)));
        let replays = self.effort.deep >= self.effort.scout;
        let mut finals: Vec<(usize, State)> = scouted
            .iter()
            .take(self.effort.finalists)
            .map(|&(k, _)| {
                let trail = std::mem::take(&mut trails[k]);
                let deep = Search::new(&inst, &frames[k], self.effort.deep, &mut sims);
                (k, if replays { deep.replaying(trail) } else { deep }.run())
            })
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
        Err(NoWitness::Exhausted(why))
    }

    /// Each frame scouted (`scout`), except a frame whose bound ranks below the last of the
    /// best `finalists` scouted so far: the breaches and compromises every plan of it has at
    /// least (`eval::floor`), then the most utility a plan at that floor can have
    /// (`bound::ceiling`). It could not be a finalist, so the finalists are those of scouting
    /// every frame. Frames are scouted by bound, best first (then in order), so that the bar
    /// rises early.
    fn scout(
        &self,
        inst: &Instance,
        frames: &[Frame],
        mut search: impl FnMut(usize) -> Eval,
    ) -> Vec<(usize, Eval)> {
        let tops = bound::Tops::new(inst);
        let floors: Vec<Key> = frames
            .iter()
            .map(|f| {
                let (breach, compromises) = eval::floor(inst, f);
                let ceiling = bound::ceiling(inst, f, &tops);
                (-breach, -compromises, ceiling, i64::MAX, i64::MAX)
            })
            .collect();
        let mut order: Vec<usize> = (0..frames.len()).collect();
        order.sort_by(|&a, &b| floors[b].cmp(&floors[a]).then(a.cmp(&b)));
        let mut scouted: Vec<(usize, Eval)> = Vec::with_capacity(frames.len());
        // the best `finalists` keys so far, best first
        let n = self.effort.finalists;
        let mut best: Vec<Key> = Vec::with_capacity(n + 1);
        for k in order {
            let beaten = best.len() == n && best.last().is_some_and(|&last| floors[k] < last);
            if beaten && self.effort.prune {
                continue;
            }
            let eval = search(k);
            let key = eval.key();
            let at = best.partition_point(|&b| b >= key);
            best.insert(at, key);
            best.truncate(n);
            scouted.push((k, eval));
        }
        scouted
    }

    /// The frames worth searching: every allocation of the nights with the best mode
    /// combinations (`pick_combos`); when none of those fits its days, every combination,
    /// and a proof when still none does.
    fn frames(&self, inst: &Instance, all: &[proof::Options]) -> Result<Vec<Frame>, NoWitness> {
        let allocs = frame::allocations(inst.days - 1, inst.dest.len());
        let picked = self.pick_combos(inst, all);
        for combos in [&picked[..], all] {
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
            if !out.is_empty() {
                return Ok(out);
            }
        }
        Err(NoWitness::Infeasible(
            "no allocation of the nights fits the travel days of any usable mode combination"
                .into(),
        ))
    }

    /// Of the usable combinations: the best by transport terms (then cheaper, then faster),
    /// plus the cheapest and the fastest.
    fn pick_combos(&self, inst: &Instance, all: &[proof::Options]) -> Vec<proof::Options> {
        let stats = |c: &proof::Options| {
            let (mut v, mut fare, mut mins) = (0i64, 0u32, 0u32);
            for (leg, &o) in inst.legs.iter().zip(c) {
                let x = &leg.options[o];
                v += x.value.iter().map(|&y| y as i64).sum::<i64>();
                fare += x.fare;
                mins += x.minutes;
            }
            (v, fare, mins)
        };
        let mut ranked: Vec<(&proof::Options, (i64, u32, u32))> =
            all.iter().map(|c| (c, stats(c))).collect();
        ranked.sort_by(|a, b| {
            b.1.0
                .cmp(&a.1.0)
                .then(a.1.1.cmp(&b.1.1))
                .then(a.1.2.cmp(&b.1.2))
                .then(a.0.cmp(b.0))
        });
        let mut out: Vec<proof::Options> = ranked
            .iter()
            .take(self.effort.combos)
            .map(|r| r.0.clone())
            .collect();
        let cheapest = ranked
            .iter()
            .min_by(|a, b| a.1.1.cmp(&b.1.1).then(a.0.cmp(b.0)));
        let fastest = ranked
            .iter()
            .min_by(|a, b| a.1.2.cmp(&b.1.2).then(a.0.cmp(b.0)));
        for pick in [cheapest, fastest].into_iter().flatten() {
            if !out.contains(pick.0) {
                out.push(pick.0.clone());
            }
        }
        out
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
        // without compromises the scorer's inputs are those it just scored
        let score = if compromises.is_empty() {
            plain.clone()
        } else {
            score_plan(inst.task, &value, &compromises, self.db)
        };
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
        let venues = Venues::of(&plan);
        Ok(Witness {
            plan,
            compromises,
            utility_without_compromises: plain.utility.total_score,
            score,
            upper_bound: output::upper_bound(inst),
            split_slots: st.eval.split,
            venues,
        })
    }
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
        let what = match field {
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
            Field::TransportMust => format!(
                "{who} must travel by {} at least once; the plan does not",
                g.transport.must.join("/")
            ),
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
        return format!(
            "the search found no plan within every hard constraint; the best one: {what}"
        );
    }
    "the search found no plan within every hard constraint".into()
}
