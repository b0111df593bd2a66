//! Search within one frame: a greedy start (hotels and required meals), then local search
//! over the pieces' programs (insert, remove and replace sights, change, add and split meals,
//! fill a waiting team's time, swap neighbours, change hotels) until no move improves. The
//! moves are in `moves` and `musts`; here are the state, the loop and how a move's
//! candidates are tried (`try_anywhere`).
//!
//! Plans are compared by `eval` (breaches, compromises, utility, stand-ins, money spent).
//! The utility is the release's, under the members' original preferences.
//!
//! A piece's program is simulated once per task (`sims`). The budget still counts every
//! candidate tried, cached or not, so the search takes the same path as without the cache.

use super::frame::{Frame, Need};
use super::instance::{Hotel, Instance, Items, MAX_MEMBERS, Mask, Members};
use super::model::MealKind;
use super::sim::{Item, PieceEval, Prefix, Slot, simulate, simulate_after};
use super::sims::{Edit, Sims};
use std::rc::Rc;

pub use super::eval::{Eval, Field, Key, MemberEval, Partial, Pieces, evaluate, rank};

#[derive(Clone)]
pub struct State {
    pub hotels: Vec<usize>,
    pub programs: Vec<Vec<Slot>>,
    pub evals: Vec<Rc<PieceEval>>,
    pub eval: Eval,
}

impl State {
    /// The state's pieces for `evaluate` and `rank`.
    pub fn pieces(&self) -> Pieces<'_> {
        Pieces::of(&self.evals)
    }
}

/// The outcomes of a search's first calls of `try_anywhere`, in order: those it made while
/// its budget lasted and whose candidates it tried in full. A search of the same frame with a
/// larger budget takes the same path from the same start until the smaller budget runs out
/// (the budget is only ever compared with zero), so it replays them (`Search::replaying`)
/// instead of trying their candidates again: a finalist's deep search begins with its scout.
#[derive(Debug, Clone, Default)]
pub struct Trail {
    steps: Vec<Step>,
    /// still recording: no call has yet begun with the budget spent or been cut short by it
    open: bool,
}

/// One call of `try_anywhere`: the candidates it tried (all of them) and the one it kept.
#[derive(Debug, Clone, Copy)]
struct Step {
    tried: usize,
    kept: Option<(usize, u32)>,
}

/// Per piece, the state's terms without it (`Partial`), for the state of these hotels and
/// program ids.
#[derive(Default)]
struct Partials {
    hotels: Vec<usize>,
    ids: Vec<u32>,
    of: Vec<Option<Partial>>,
}

pub struct Search<'a, 's> {
    pub inst: &'a Instance<'a>,
    pub frame: &'a Frame,
    /// piece simulations left (a deterministic bound on the work per frame)
    pub budget: usize,
    sims: &'s mut Sims,
    /// per piece: its cache in `sims`
    cache_of: Vec<usize>,
    /// per piece: the id of the state's program in its cache
    pub(super) ids: Vec<u32>,
    /// the candidate being built (`Edit::apply`)
    scratch: Vec<Slot>,
    /// the last call's list of candidates, emptied, for the next move to fill (`candidates`)
    spare: Vec<(usize, Edit)>,
    /// per piece: the state's terms without it, kept while the state stays
    partials: Partials,
    /// per piece: the run of the state's program (by its id), marked slot by slot
    prefixes: Vec<(Option<u32>, Prefix)>,
    /// this search's calls of `try_anywhere`, as far as a longer search would make them too
    trail: Trail,
    /// an earlier search's trail of this frame, and how many of its steps were replayed
    replay: Trail,
    replayed: usize,
}

impl<'a, 's> Search<'a, 's> {
    pub fn new(
        inst: &'a Instance<'a>,
        frame: &'a Frame,
        budget: usize,
        sims: &'s mut Sims,
    ) -> Self {
        let cache_of = sims.caches_of(inst, frame);
        Search {
            inst,
            frame,
            budget,
            sims,
            cache_of,
            ids: Vec::new(),
            scratch: Vec::new(),
            spare: Vec::new(),
            partials: Default::default(),
            prefixes: (0..frame.pieces.len())
                .map(|_| Default::default())
                .collect(),
            trail: Trail {
                steps: Vec::new(),
                open: true,
            },
            replay: Trail::default(),
            replayed: 0,
        }
    }

    /// The search replays `trail`, an earlier search's of the same frame from the same start
    /// with no larger budget: the same path, with less work.
    pub fn replaying(mut self, trail: Trail) -> Self {
        self.replay = trail;
        self
    }

    /// A piece's program simulated (once per task and signature; every call counts against
    /// the budget), with its id.
    pub(super) fn sim(&mut self, piece: usize, program: &[Slot]) -> (u32, Rc<PieceEval>) {
        self.budget = self.budget.saturating_sub(1);
        let (inst, frame) = (self.inst, self.frame);
        let cache = &mut self.sims.caches[self.cache_of[piece]];
        let id = cache.find_or_run(program, || simulate(inst, frame, piece, program));
        (id, cache.shared(id))
    }

    /// `sim` of `edit` made to the piece's program in the state (`program`, its id in
    /// `ids`): the edit is looked up first, the program built and found only when new.
    fn sim_edit(&mut self, piece: usize, program: &[Slot], edit: Edit) -> u32 {
        self.budget = self.budget.saturating_sub(1);
        let c = self.cache_of[piece];
        let from = self.ids[piece];
        let key = edit.key(from);
        if let Some(&id) = self.sims.caches[c].by_edit.get(&key) {
            return id;
        }
        // the program's run, marked, so that the candidate runs only from the edited slot
        let (inst, frame) = (self.inst, self.frame);
        let (marked, prefix) = &mut self.prefixes[piece];
        if *marked != Some(from) {
            prefix.record(inst, frame, piece, program);
            *marked = Some(from);
        }
        let built = &mut self.scratch;
        edit.apply(program, built);
        let cache = &mut self.sims.caches[c];
        let run = || simulate_after(inst, frame, piece, built, prefix, edit.shared());
        let id = cache.find_or_run(built, run);
        cache.by_edit.insert(key, id);
        id
    }

    /// The program with this id in the piece's cache.
    fn program(&self, piece: usize, id: u32) -> Vec<Slot> {
        self.sims.caches[self.cache_of[piece]].program(id).to_vec()
    }

    /// The best joint meal option of a destination for a start: no member who cannot yield
    /// rejects it; then by worth, named over stand-in, cheaper.
    pub(super) fn default_meal(&self, dest: usize) -> Option<u16> {
        let d = &self.inst.dest[dest];
        let firm = self.inst.firm();
        (0..d.meals.len())
            .filter(|&m| d.meals[m].rejected & firm == 0)
            .max_by_key(|&m| {
                let f = &d.meals[m];
                (
                    f.value.iter().sum::<i32>(),
                    !f.stand_in,
                    std::cmp::Reverse(f.price),
                    std::cmp::Reverse(m),
                )
            })
            .map(|m| m as u16)
    }

    /// The start: each destination's hotel worth most to the group (cheaper on ties), and the
    /// required meals.
    pub fn initial(&mut self) -> State {
        let inst = self.inst;
        let hotels = self.hotels_by(|h, i| {
            let worth = h.value.iter().sum::<i32>();
            (worth, std::cmp::Reverse(h.price), std::cmp::Reverse(i))
        });
        let mut programs = Vec::new();
        for p in &self.frame.pieces {
            let mut prog = Vec::new();
            for kind in [MealKind::Lunch, MealKind::Dinner] {
                if p.need(kind) == Need::Required
                    && let Some(m) = self.default_meal(p.dest)
                {
                    prog.push(Slot::joint(inst.all, Item::Meal(m, kind)));
                }
            }
            programs.push(prog);
        }
        let (ids, evals): (Vec<u32>, Vec<Rc<PieceEval>>) = (0..programs.len())
            .map(|p| self.sim(p, &programs[p]))
            .unzip();
        self.ids = ids;
        let eval = evaluate(inst, self.frame, &hotels, Pieces::of(&evals));
        State {
            hotels,
            programs,
            evals,
            eval,
        }
    }

    /// Per destination, the hotel that `key` ranks highest (a key that ends with the index
    /// has no ties); the first when there is none.
    pub(super) fn hotels_by<K: Ord>(&self, key: impl Fn(&Hotel, usize) -> K) -> Vec<usize> {
        let dest = self.inst.dest.iter();
        dest.map(|d| {
            (0..d.hotels.len())
                .max_by_key(|&h| key(&d.hotels[h], h))
                .unwrap_or(0)
        })
        .collect()
    }

    /// Sights of a destination already in the plan.
    fn used(&self, st: &State, dest: usize) -> Vec<bool> {
        let mut used = vec![false; self.inst.dest[dest].sights.len()];
        for (p, prog) in st.programs.iter().enumerate() {
            if self.frame.pieces[p].dest != dest {
                continue;
            }
            for s in prog {
                for it in s.items() {
                    if let Some(x) = it.sight() {
                        used[x as usize] = true;
                    }
                }
            }
        }
        used
    }

    /// Sights of a destination that could be worth something to someone, unused so far.
    pub(super) fn promising(&self, st: &State, dest: usize) -> Vec<u16> {
        let d = &self.inst.dest[dest];
        let used = self.used(st, dest);
        (0..d.sights.len())
            .filter(|&s| {
                let x = &d.sights[s];
                !used[s] && (0..self.inst.n()).any(|i| x.value[i] > 0 || x.must[i] != 0)
            })
            .map(|s| s as u16)
            .collect()
    }

    /// Members of `among` better off in a sight (worth or a must) and not rejecting it.
    pub(super) fn keen(&self, dest: usize, s: u16, among: Mask) -> Mask {
        let x = &self.inst.dest[dest].sights[s as usize];
        self.members_where(among, |i| {
            x.reject[i] == 0 && (x.value[i] > 0 || x.must[i] != 0)
        })
    }

    pub(super) fn members(&self, mask: Mask) -> Members {
        self.inst.members_of(mask)
    }

    /// The members of `among` for whom `f` holds, as a mask.
    pub(super) fn members_where(&self, among: Mask, f: impl Fn(usize) -> bool) -> Mask {
        self.members(among)
            .filter(|&i| f(i))
            .fold(0, |a, i| a | 1 << i)
    }

    /// What the plan covers so far in a destination, per member: must_visit and must_eat items.
    pub(super) fn covered(
        &self,
        st: &State,
        dest: usize,
    ) -> ([Items; MAX_MEMBERS], [Items; MAX_MEMBERS]) {
        let n = self.inst.n();
        let (mut v, mut e) = ([0; MAX_MEMBERS], [0; MAX_MEMBERS]);
        for (p, ev) in st.evals.iter().enumerate() {
            if self.frame.pieces[p].dest == dest {
                for i in 0..n {
                    v[i] |= ev.members[i].must;
                    e[i] |= ev.members[i].must_eat;
                }
            }
        }
        (v, e)
    }

    /// An empty list for a move's candidates (`try_anywhere` hands it back): a search makes
    /// thousands of moves, each list growing to hundreds of candidates.
    pub(super) fn candidates(&mut self) -> Vec<(usize, Edit)> {
        std::mem::take(&mut self.spare)
    }

    /// Try candidate edits of one piece's program; keep the best if it beats `st`.
    pub(super) fn try_programs(
        &mut self,
        st: &mut State,
        piece: usize,
        candidates: Vec<Edit>,
    ) -> bool {
        let mut pairs = self.candidates();
        pairs.extend(candidates.into_iter().map(|e| (piece, e)));
        self.try_anywhere(st, pairs)
    }

    /// Try candidate (piece, edit) pairs over the whole plan; keep the best improvement.
    pub(super) fn try_anywhere(
        &mut self,
        st: &mut State,
        mut candidates: Vec<(usize, Edit)>,
    ) -> bool {
        let (len, start) = (candidates.len(), self.budget);
        let step = match self.replay.steps.get(self.replayed) {
            Some(&step) => {
                self.replayed += 1;
                self.budget -= step.tried;
                step
            }
            None => Step {
                kept: self.best_of(st, &candidates),
                tried: start - self.budget,
            },
        };
        candidates.clear();
        self.spare = candidates;
        let trail = &mut self.trail;
        trail.open &= start > 0 && step.tried == len;
        if trail.open {
            trail.steps.push(step);
        }
        self.keep(st, step)
    }

    /// The step's kept candidate made in the state, if any.
    fn keep(&mut self, st: &mut State, step: Step) -> bool {
        let Some((p, id)) = step.kept else {
            return false;
        };
        st.programs[p] = self.program(p, id);
        self.ids[p] = id;
        st.evals[p] = self.sims.caches[self.cache_of[p]].shared(id);
        st.eval = evaluate(self.inst, self.frame, &st.hotels, st.pieces());
        true
    }

    /// The best of the candidates that improves on `st`, as (piece, program id), trying them
    /// while the budget lasts.
    fn best_of(&mut self, st: &State, candidates: &[(usize, Edit)]) -> Option<(usize, u32)> {
        let mut best: Option<(Key, usize, u32)> = None;
        let mut bar = st.eval.key();
        // per piece, the state's terms without it (built at its first candidate, and kept
        // while the state's hotels and programs stay: calls that keep nothing follow each other)
        let kept = &mut self.partials;
        if kept.hotels != st.hotels || kept.ids != self.ids {
            kept.hotels.clone_from(&st.hotels);
            kept.ids.clone_from(&self.ids);
            kept.of.clear();
            kept.of.resize_with(st.evals.len(), || None);
        }
        for &(p, edit) in candidates {
            if self.budget == 0 {
                break;
            }
            let id = self.sim_edit(p, &st.programs[p], edit);
            let ev = self.sims.caches[self.cache_of[p]].eval(id);
            if !ev.ok {
                continue;
            }
            let (inst, frame) = (self.inst, self.frame);
            let partial = self.partials.of[p]
                .get_or_insert_with(|| Partial::new(inst, frame, &st.hotels, &st.evals, p));
            let k = partial.rank(ev);
            if k > bar {
                bar = k;
                best = Some((k, p, id));
            }
        }
        best.map(|(_, p, id)| (p, id))
    }

    /// Every insertion of `slot` into `piece`'s program, as edits.
    pub(super) fn insertions(
        &self,
        st: &State,
        piece: usize,
        slot: Slot,
    ) -> impl Iterator<Item = Edit> + use<> {
        (0..=st.programs[piece].len()).map(move |k| Edit::Insert(k, slot))
    }

    pub(super) fn pieces_of(&self, dest: usize) -> Vec<usize> {
        (0..self.frame.pieces.len())
            .filter(|&p| self.frame.pieces[p].dest == dest)
            .collect()
    }

    /// Steps of an earlier search's trail replayed so far.
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// `run`, with the trail of its calls for a longer search of the frame to replay.
    pub fn run_with_trail(mut self) -> (State, Trail) {
        let st = self.run();
        (st, self.trail)
    }

    /// Local search from the start until nothing improves or the budget is spent.
    pub fn run(&mut self) -> State {
        let mut st = self.initial();
        loop {
            let mut changed = false;
            while self.budget > 0 && self.cover_musts(&mut st) {
                changed = true;
            }
            while self.budget > 0 && self.cover_must_eats(&mut st) {
                changed = true;
            }
            while self.budget > 0 && self.insert_sight(&mut st) {
                changed = true;
            }
            changed |= self.cheapen(&mut st);
            changed |= self.add_meals(&mut st);
            changed |= self.rework_hotels(&mut st);
            changed |= self.rework_slots(&mut st);
            changed |= self.reorder(&mut st);
            if !changed || self.budget == 0 {
                break;
            }
        }
        st
    }
}
