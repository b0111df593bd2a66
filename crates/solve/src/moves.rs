//! The search's moves over the whole plan (`search`): insert a sight, rework a slot, add an
//! optional meal, cheapen when a budget is exceeded, swap neighbours, change hotels. The
//! moves that serve must items are in `musts`.

use super::eval::{Field, Pieces, evaluate, rank};
use super::frame::Need;
use super::instance::Mask;
use super::model::MealKind;
use super::search::{Search, State};
use super::sim::{Item, PieceEval, Slot};
use super::sims::Edit;
use std::rc::Rc;

impl Search<'_, '_> {
    /// Insert one unused sight somewhere (jointly, or by the keen members while the others
    /// wait); the best insertion over the whole plan.
    pub(super) fn insert_sight(&mut self, st: &mut State) -> bool {
        let all = self.inst.all;
        let mut cands = self.candidates();
        for dest in 0..self.inst.dest.len() {
            let pieces = self.pieces_of(dest);
            for s in self.promising(st, dest) {
                let keen = self.keen(dest, s, all);
                let mut slots = vec![Slot::joint(all, Item::Sight(s))];
                if keen != 0 && keen != all {
                    slots.push(Slot::of(&[
                        (keen, Item::Sight(s)),
                        (all & !keen, Item::Rest),
                    ]));
                }
                for slot in slots {
                    for &p in &pieces {
                        cands.extend(self.insertions(st, p, slot).map(|e| (p, e)));
                    }
                }
            }
        }
        self.try_anywhere(st, cands)
    }

    /// Rework one slot at a time: drop it, give a team another sight or meal, let a team wait,
    /// move a member to another team (or to wait alone), or merge everyone into one team.
    pub(super) fn rework_slots(&mut self, st: &mut State) -> bool {
        let all = self.inst.all;
        let mut changed = false;
        for p in 0..st.programs.len() {
            let dest = self.frame.pieces[p].dest;
            let meals = self.inst.dest[dest].meals.len() as u16;
            let mut k = 0;
            while k < st.programs[p].len() && self.budget > 0 {
                let slot = st.programs[p][k];
                let meal_kind = slot.items().find_map(|i| match i {
                    Item::Meal(_, kind) => Some(kind),
                    _ => None,
                });
                let free = self.promising(st, dest);
                let mut alts: Vec<Slot> = Vec::new();
                for (j, &(_, item)) in slot.parts().iter().enumerate() {
                    match meal_kind {
                        Some(kind) => {
                            for m in 0..meals {
                                if Item::Meal(m, kind) != item {
                                    alts.push(slot.with(j, Item::Meal(m, kind)));
                                }
                            }
                        }
                        None => {
                            for &s in &free {
                                alts.push(slot.with(j, Item::Sight(s)));
                            }
                            if item.sight().is_some() {
                                alts.push(slot.with(j, item.toggled()));
                            }
                            if item != Item::Rest && slot.parts().len() > 1 {
                                alts.push(slot.with(j, Item::Rest));
                            }
                        }
                    }
                    if item != Item::Rest {
                        alts.push(Slot::joint(all, item));
                    }
                }
                for i in 0..self.inst.n() {
                    let extra = usize::from(meal_kind.is_none());
                    for to in 0..slot.parts().len() + extra {
                        let m = slot.moved(i, to);
                        if m != slot && (meal_kind.is_none() || m.items().all(|x| x != Item::Rest))
                        {
                            alts.push(m);
                        }
                    }
                }
                let mut cands: Vec<Edit> = Vec::with_capacity(alts.len() + 1);
                if meal_kind.is_none() {
                    cands.push(Edit::Remove(k));
                }
                cands.extend(alts.into_iter().map(|a| match a.idle() {
                    true => Edit::Remove(k),
                    false => Edit::Set(k, a),
                }));
                if self.try_programs(st, p, cands) {
                    changed = true;
                }
                k += 1;
            }
        }
        changed
    }

    /// Add an optional meal where the piece could have one.
    pub(super) fn add_meals(&mut self, st: &mut State) -> bool {
        let all = self.inst.all;
        let mut changed = false;
        for p in 0..st.programs.len() {
            let piece = self.frame.pieces[p].clone();
            for kind in [MealKind::Lunch, MealKind::Dinner] {
                let has = st.programs[p].iter().any(|s| {
                    s.items()
                        .any(|i| matches!(i, Item::Meal(_, x) if x == kind))
                });
                if has || piece.need(kind) != Need::Optional {
                    continue;
                }
                let Some(m) = self.default_meal(piece.dest) else {
                    continue;
                };
                let joint = Slot::joint(all, Item::Meal(m, kind));
                let mut slots = vec![joint];
                // or a meal composed for the must_eat items still missing
                if let Some(s) = self.must_eat_slot(st, piece.dest, &joint) {
                    slots.push(s);
                }
                let cands = slots
                    .into_iter()
                    .flat_map(|s| self.insertions(st, p, s))
                    .collect();
                if self.try_programs(st, p, cands) {
                    changed = true;
                }
            }
        }
        changed
    }

    /// When a budget is exceeded: the cheapest hotels, the cheapest meals (keeping what each
    /// team's meal covers of must_eat and never a rejected one), or both, at once.
    pub(super) fn cheapen(&mut self, st: &mut State) -> bool {
        let over = st
            .eval
            .members
            .iter()
            .any(|m| m.broken.iter().any(|b| b.0 == Field::Budget));
        if !over {
            return false;
        }
        let inst = self.inst;
        let hotels = self.hotels_by(|h, i| {
            let worth = h.value.iter().sum::<i32>();
            std::cmp::Reverse((h.price, -worth, i))
        });
        let mut programs = st.programs.clone();
        for (p, prog) in programs.iter_mut().enumerate() {
            let d = &inst.dest[self.frame.pieces[p].dest];
            for slot in prog.iter_mut() {
                let parts: Vec<(Mask, Item)> = slot
                    .parts()
                    .iter()
                    .map(|&(team, item)| match item {
                        Item::Meal(cur, kind) => {
                            let c = &d.meals[cur as usize];
                            let best = (0..d.meals.len())
                                .filter(|&m| {
                                    let x = &d.meals[m];
                                    x.rejected & team == 0
                                        && (0..inst.n())
                                            .filter(|i| team >> i & 1 == 1)
                                            .all(|i| x.must[i] & c.must[i] == c.must[i])
                                })
                                .min_by_key(|&m| (d.meals[m].price, m))
                                .unwrap_or(cur as usize);
                            (team, Item::Meal(best as u16, kind))
                        }
                        other => (team, other),
                    })
                    .collect();
                *slot = Slot::of(&parts);
            }
        }
        let mut best: Option<(State, Vec<u32>)> = None;
        for (h, pr) in [(true, false), (false, true), (true, true)] {
            let hs = if h { hotels.clone() } else { st.hotels.clone() };
            let progs = if pr {
                programs.clone()
            } else {
                st.programs.clone()
            };
            let (ids, evals): (Vec<u32>, Vec<Rc<PieceEval>>) = (0..progs.len())
                .map(|p| match pr {
                    true => self.sim(p, &progs[p]),
                    false => (self.ids[p], Rc::clone(&st.evals[p])),
                })
                .unzip();
            if evals.iter().any(|e| !e.ok) {
                continue;
            }
            let eval = evaluate(inst, self.frame, &hs, Pieces::of(&evals));
            let bar = best.as_ref().map_or(&st.eval, |b| &b.0.eval);
            if eval.better(bar) {
                let state = State {
                    hotels: hs,
                    programs: progs,
                    evals,
                    eval,
                };
                best = Some((state, ids));
            }
        }
        match best {
            Some((b, ids)) => {
                *st = b;
                self.ids = ids;
                true
            }
            None => false,
        }
    }

    /// Swap neighbouring slots (a different order may fit opening hours or free time).
    pub(super) fn reorder(&mut self, st: &mut State) -> bool {
        let mut changed = false;
        for p in 0..st.programs.len() {
            let cands: Vec<Edit> = (1..st.programs[p].len()).map(Edit::Swap).collect();
            if self.try_programs(st, p, cands) {
                changed = true;
            }
        }
        changed
    }

    pub(super) fn rework_hotels(&mut self, st: &mut State) -> bool {
        let mut changed = false;
        for dest in 0..self.inst.dest.len() {
            for h in 0..self.inst.dest[dest].hotels.len() {
                let mut hotels = st.hotels.clone();
                hotels[dest] = h;
                if rank(self.inst, self.frame, &hotels, st.pieces()) > st.eval.key() {
                    st.eval = evaluate(self.inst, self.frame, &hotels, st.pieces());
                    st.hotels = hotels;
                    changed = true;
                }
            }
        }
        changed
    }
}
