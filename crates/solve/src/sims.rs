//! A task's simulations, shared by the searches of all its frames (`search`).
//!
//! A piece's program is simulated once per task: the search revisits the same candidates
//! round after round (a move in one piece leaves the others' candidates as they were), and the
//! frames of a task share most of their pieces (a full day in a city is the same piece whatever
//! the other cities' nights or the legs' modes), so a simulation is kept by (the piece's
//! signature, program). A candidate is an edit of the state's program (`Edit`), and is found
//! by the edit before it is built. A cache holds its programs and their evaluations in place,
//! in two vectors: most simulations are tried once and dropped with the task, and two heap
//! blocks for each (its program, its evaluation behind an `Rc`) cost a 10,000-task witness
//! build 6 % of its CPU. A state takes a shared copy of the few it keeps (`Cache::shared`).

use super::frame::{Anchor, Frame, Need, Piece};
use super::instance::Instance;
use super::sim::{PieceEval, Slot};
use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::BuildHasher;
use std::rc::Rc;

/// All that a piece's simulation reads of its frame (`sim::simulate`): its day, city, times,
/// ends and meals, and the mode of each leg it starts or ends at. Pieces of two frames with
/// the same signature simulate every program alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Signature {
    day: usize,
    dest: usize,
    start: u32,
    end_limit: u32,
    ends: [(Anchor, &'static str); 2],
    meals: [Need; 2],
}

impl Signature {
    fn of(inst: &Instance, frame: &Frame, p: &Piece) -> Signature {
        // every field: a field added to `Piece` must be weighed here
        let Piece {
            day,
            dest,
            start,
            start_at,
            end_at,
            end_limit,
            lunch,
            dinner,
        } = *p;
        let end = |a: Anchor| match a {
            Anchor::Hotel => (a, ""),
            Anchor::Terminal(leg) => (a, frame.mode(inst, leg)),
        };
        Signature {
            day,
            dest,
            start,
            end_limit,
            ends: [end(start_at), end(end_at)],
            meals: [lunch, dinner],
        }
    }
}

/// A candidate: one edit of a piece's program. The search tries thousands a frame, so a
/// candidate is built into one reused buffer when it is tried (`Edit::apply`) rather than
/// cloned out of the program up front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edit {
    Insert(usize, Slot),
    Set(usize, Slot),
    Remove(usize),
    /// swap slot `k` with the one before it
    Swap(usize),
}

impl Edit {
    /// How many first slots the edited program shares with the program.
    pub(super) fn shared(self) -> usize {
        match self {
            Edit::Insert(k, _) | Edit::Set(k, _) | Edit::Remove(k) => k,
            Edit::Swap(k) => k - 1,
        }
    }

    /// The edit of the program with this id, as a key of `Cache::by_edit`: three words,
    /// hashed and compared at once (the search looks up every candidate it tries), equal for
    /// equal (id, edit) pairs only.
    pub(super) fn key(self, id: u32) -> EditKey {
        let (kind, k, slot) = match self {
            Edit::Insert(k, s) => (0u64, k, s.code()),
            Edit::Set(k, s) => (1, k, s.code()),
            Edit::Remove(k) => (2, k, 0),
            Edit::Swap(k) => (3, k, 0),
        };
        // a slot's place in a day's program (tens at most)
        debug_assert!(k <= u32::MAX as usize);
        let at = u64::from(id) | (k as u64) << 32;
        [at, slot as u64, (slot >> 64) as u64 | kind << 62]
    }

    /// `program` with the edit made, into `out`.
    pub(super) fn apply(self, program: &[Slot], out: &mut Vec<Slot>) {
        out.clear();
        out.extend_from_slice(program);
        match self {
            Edit::Insert(k, slot) => out.insert(k, slot),
            Edit::Set(k, slot) => out[k] = slot,
            Edit::Remove(k) => {
                out.remove(k);
            }
            Edit::Swap(k) => out.swap(k - 1, k),
        }
    }
}

/// An edit of a simulated program, as `Cache::by_edit` keys it (`Edit::key`).
pub(super) type EditKey = [u64; 3];

/// A task's simulations, shared by the searches of all its frames: per piece signature, the
/// programs simulated so far.
#[derive(Default)]
pub struct Sims {
    signatures: FxHashMap<Signature, usize>,
    pub(super) caches: Vec<Cache>,
}

/// A program simulated, with its hash: its slots are `Cache::slots[start..start + len]`.
pub(super) struct Simulated {
    hash: u64,
    start: u32,
    len: u32,
    eval: PieceEval,
}

impl Simulated {
    /// Its program, in the slots of its cache.
    fn program<'s>(&self, slots: &'s [Slot]) -> &'s [Slot] {
        &slots[self.start as usize..][..self.len as usize]
    }
}

/// One signature's simulations: each program once, its id its place in `runs`; found by the
/// program, or by an edit of a program simulated before (a search tries the same edits of
/// the same program round after round: found so, a candidate is neither built nor hashed).
pub(super) struct Cache {
    runs: Vec<Simulated>,
    /// the programs' slots, one after another
    slots: Vec<Slot>,
    by_program: HashTable<u32>,
    pub(super) by_edit: FxHashMap<EditKey, u32>,
}

impl Cache {
    /// Room each cache starts with: growing from empty rehashed it at every doubling. Over
    /// the 20,193 caches of a 1,000-task default build, a cache held 55 programs at the
    /// median and 123 on average, of 3.7 slots each. From 64, the caches that grew copied
    /// their evaluations (about 300 bytes each) at every doubling: room for 256 took 2–4 %
    /// off the solver's CPU; the few larger ones grow.
    const START: usize = 256;

    fn new() -> Cache {
        Cache {
            runs: Vec::with_capacity(Self::START),
            slots: Vec::with_capacity(Self::START * 4),
            by_program: HashTable::with_capacity(Self::START),
            by_edit: FxHashMap::with_capacity_and_hasher(Self::START, FxBuildHasher),
        }
    }

    /// The id of `program`, run by `simulate` when it is new.
    pub(super) fn find_or_run(
        &mut self,
        program: &[Slot],
        simulate: impl FnOnce() -> PieceEval,
    ) -> u32 {
        let Cache {
            runs,
            slots,
            by_program,
            ..
        } = self;
        let hash = FxBuildHasher.hash_one(program);
        let same = |&id: &u32| {
            let s = &runs[id as usize];
            s.hash == hash && s.program(slots) == program
        };
        if let Some(&id) = by_program.find(hash, same) {
            return id;
        }
        let id = runs.len() as u32;
        runs.push(Simulated {
            hash,
            start: slots.len() as u32,
            len: program.len() as u32,
            eval: simulate(),
        });
        slots.extend_from_slice(program);
        by_program.insert_unique(hash, id, |&i| runs[i as usize].hash);
        id
    }

    /// The program with this id.
    pub(super) fn program(&self, id: u32) -> &[Slot] {
        self.runs[id as usize].program(&self.slots)
    }

    /// The evaluation of the program with this id.
    pub(super) fn eval(&self, id: u32) -> &PieceEval {
        &self.runs[id as usize].eval
    }

    /// [`Cache::eval`], as a state holds it.
    pub(super) fn shared(&self, id: u32) -> Rc<PieceEval> {
        Rc::new(self.eval(id).clone())
    }
}

impl Sims {
    /// The cache of each of a frame's pieces.
    pub(super) fn caches_of(&mut self, inst: &Instance, frame: &Frame) -> Vec<usize> {
        let pieces = frame.pieces.iter();
        pieces
            .map(|p| {
                let next = self.caches.len();
                let k = *self
                    .signatures
                    .entry(Signature::of(inst, frame, p))
                    .or_insert(next);
                if k == next {
                    self.caches.push(Cache::new());
                }
                k
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MealKind;
    use crate::sim::Item;

    /// Edits of one program and of another, every kind, with slots that differ in one team's
    /// members, item kind, index or count: equal keys for equal (id, edit) pairs only.
    #[test]
    fn edit_keys_are_equal_for_equal_edits_only() {
        let items = [
            Item::Sight(0),
            Item::Sight(511),
            Item::Brief(0),
            Item::Meal(3, MealKind::Lunch),
            Item::Meal(3, MealKind::Dinner),
            Item::Rest,
        ];
        let mut slots = Vec::new();
        for &a in &items {
            slots.push(Slot::joint(0b1111, a));
            for &b in &items {
                slots.push(Slot::of(&[(0b0011, a), (0b1100, b)]));
                slots.push(Slot::of(&[(0b0001, a), (0b1110, b)]));
                slots.push(Slot::of(&[(0b0001, a), (0b0110, b), (0b1000, Item::Rest)]));
            }
        }
        let mut edits = vec![
            Edit::Remove(0),
            Edit::Remove(3),
            Edit::Swap(1),
            Edit::Swap(3),
        ];
        for &s in &slots {
            edits.extend([Edit::Insert(0, s), Edit::Insert(2, s), Edit::Set(0, s)]);
        }
        let mut pairs = Vec::new();
        for id in [0, 1, u32::MAX] {
            pairs.extend(edits.iter().map(|&e| (id, e)));
        }
        for (i, &(a, x)) in pairs.iter().enumerate() {
            for &(b, y) in &pairs[i..] {
                assert_eq!(
                    x.key(a) == y.key(b),
                    (a, x) == (b, y),
                    "{a} {x:?} / {b} {y:?}"
                );
            }
        }
    }
}
