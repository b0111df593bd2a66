//! The moves of the search (`search`) that serve must items: a slot for the must_visit
//! sights still missing, inserted anywhere in their destination, and a meal recomposed for
//! the must_eat items still missing.

use super::instance::Mask;
use super::search::{Search, State};
use super::sim::{Item, MAX_TEAMS, Slot};
use super::sims::Edit;

impl Search<'_, '_> {
    /// A slot that serves uncovered must_visit items: the sight most members still need
    /// forms a team, then the next sight for the others, and so on; whoever is left joins the
    /// team whose sight they like best, or waits.
    pub(super) fn must_slots(&self, st: &State, dest: usize) -> Vec<Slot> {
        let d = &self.inst.dest[dest];
        let (covered, _) = self.covered(st, dest);
        let need = |i: usize| self.inst.must_visit_all(i, dest) & !covered[i];
        let free_sights = self.promising(st, dest);
        // per free sight: the members it serves an item they still need, not rejecting it
        let serves: Vec<Mask> = free_sights
            .iter()
            .map(|&s| {
                let x = &d.sights[s as usize];
                self.members_where(self.inst.all, |i| {
                    x.must[i] & need(i) != 0 && x.reject[i] == 0
                })
            })
            .collect();
        let mut parts: Vec<(Mask, Item)> = Vec::new();
        let mut free = self.inst.all;
        while parts.len() < MAX_TEAMS {
            let best = free_sights
                .iter()
                .zip(&serves)
                .filter(|(s, _)| !parts.iter().any(|p| p.1.sight() == Some(**s)))
                .map(|(&s, &serves)| {
                    let team: Mask = serves & free;
                    (team.count_ones(), s, team)
                })
                .filter(|b| b.0 > 0)
                .max_by_key(|b| (b.0, std::cmp::Reverse(b.1)));
            let Some((_, s, team)) = best else { break };
            parts.push((team, Item::Sight(s)));
            free &= !team;
        }
        if parts.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // the others wait
        let mut waiting = parts.clone();
        if free != 0 {
            waiting.push((free, Item::Rest));
        }
        out.push(Slot::of(&waiting));
        // the others join the team they like best (when they like one)
        let mut joined = parts.clone();
        let mut rest: Mask = 0;
        for i in self.members(free) {
            let pick = (0..joined.len())
                .filter_map(|j| {
                    let x = &d.sights[joined[j].1.sight()? as usize];
                    (x.reject[i] == 0 && x.value[i] >= 0).then_some((
                        x.value[i],
                        std::cmp::Reverse(j),
                        j,
                    ))
                })
                .max();
            match pick {
                Some((_, _, j)) => joined[j].0 |= 1 << i,
                None => rest |= 1 << i,
            }
        }
        if rest != 0 {
            joined.push((rest, Item::Rest));
        }
        let joined = Slot::of(&joined);
        if !out.contains(&joined) {
            out.push(joined);
        }
        // and the same with brief visits, for days that are short of time
        let brief: Vec<Slot> = out
            .iter()
            .map(|s| {
                let parts: Vec<(Mask, Item)> =
                    s.parts().iter().map(|&(m, i)| (m, i.toggled())).collect();
                Slot::of(&parts)
            })
            .collect();
        out.extend(brief);
        out
    }

    /// Insert a slot serving must_visit items somewhere in the destination's pieces.
    pub(super) fn cover_musts(&mut self, st: &mut State) -> bool {
        let mut cands = self.candidates();
        for dest in 0..self.inst.dest.len() {
            let pieces = self.pieces_of(dest);
            for slot in self.must_slots(st, dest) {
                for &p in &pieces {
                    cands.extend(self.insertions(st, p, slot).map(|e| (p, e)));
                }
            }
        }
        self.try_anywhere(st, cands)
    }

    /// A meal slot recomposed for uncovered must_eat items: the option most members still need
    /// forms a team, and so on; the others keep the slot's current option (or the best one
    /// for them that no member who cannot yield rejects).
    pub(super) fn must_eat_slot(&self, st: &State, dest: usize, slot: &Slot) -> Option<Slot> {
        let d = &self.inst.dest[dest];
        let kind = slot.items().find_map(|i| match i {
            Item::Meal(_, k) => Some(k),
            _ => None,
        })?;
        let (_, covered) = self.covered(st, dest);
        let need = |i: usize| self.inst.must_eat_all(i, dest) & !covered[i];
        if (0..self.inst.n()).all(|i| need(i) == 0) {
            return None; // nothing left to serve: no meal forms a team
        }
        // per option: the members it serves an item they still need and who do not reject it
        let serves: Vec<Mask> = d
            .meals
            .iter()
            .map(|x| {
                self.members_where(self.inst.all, |i| {
                    x.must[i] & need(i) != 0 && x.rejected >> i & 1 == 0
                })
            })
            .collect();
        let mut parts: Vec<(Mask, Item)> = Vec::new();
        let mut free = self.inst.all;
        while parts.len() < MAX_TEAMS - 1 {
            let best = (0..d.meals.len())
                .map(|m| {
                    let x = &d.meals[m];
                    let team: Mask = serves[m] & free;
                    (
                        team.count_ones(),
                        !x.stand_in,
                        std::cmp::Reverse(x.price),
                        std::cmp::Reverse(m),
                        team,
                    )
                })
                .filter(|b| b.0 > 0)
                .max();
            let Some((_, _, _, std::cmp::Reverse(m), team)) = best else {
                break;
            };
            parts.push((team, Item::Meal(m as u16, kind)));
            free &= !team;
        }
        if parts.is_empty() {
            return None;
        }
        if free != 0 {
            // the others: the slot's current option of their team when acceptable, else theirs
            for i in self.members(free) {
                let cur = slot.parts().iter().find(|p| p.0 >> i & 1 == 1).map(|p| p.1);
                let ok = |m: usize| d.meals[m].rejected >> i & 1 == 0;
                let item = match cur {
                    Some(Item::Meal(m, _)) if ok(m as usize) => Item::Meal(m, kind),
                    _ => {
                        let m = (0..d.meals.len()).filter(|&m| ok(m)).max_by_key(|&m| {
                            (d.meals[m].value[i], std::cmp::Reverse(d.meals[m].price))
                        })?;
                        Item::Meal(m as u16, kind)
                    }
                };
                match parts.iter().position(|p| p.1 == item) {
                    Some(j) => parts[j].0 |= 1 << i,
                    None if parts.len() < MAX_TEAMS => parts.push((1 << i, item)),
                    None => return None,
                }
            }
        }
        Some(Slot::of(&parts))
    }

    pub(super) fn cover_must_eats(&mut self, st: &mut State) -> bool {
        let mut cands = self.candidates();
        for p in 0..st.programs.len() {
            let dest = self.frame.pieces[p].dest;
            for k in 0..st.programs[p].len() {
                if let Some(slot) = self.must_eat_slot(st, dest, &st.programs[p][k]) {
                    cands.push((p, Edit::Set(k, slot)));
                }
            }
        }
        self.try_anywhere(st, cands)
    }
}
