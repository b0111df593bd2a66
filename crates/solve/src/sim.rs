//! A piece's program (an ordered list of slots, each done by the whole group or by two teams
//! at once) turned into timed activities: transfers wherever someone changes place, visits
//! inside opening hours, meals inside their windows, rests for a team that waits, and the trip
//! to the end place in time. It also sums what the piece is worth to each member.

use super::frame::{Anchor, Frame, Need, Piece};
use super::instance::{Instance, Items, MAX_MEMBERS, Mask, Members};
use super::model::{self, MealKind, up5};
use gtb_score::split::mask_split_penalty;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Item {
    Sight(u16),
    /// a short visit to a sight (`model::BRIEF_VISIT` minutes) when time is short
    Brief(u16),
    Meal(u16, MealKind),
    /// stay where one is (only for the second team of a split slot)
    Rest,
}

impl Item {
    /// The sight visited, fully or briefly.
    pub fn sight(self) -> Option<u16> {
        match self {
            Item::Sight(s) | Item::Brief(s) => Some(s),
            _ => None,
        }
    }
    /// A full visit made brief, a brief one full; anything else unchanged.
    pub fn toggled(self) -> Item {
        match self {
            Item::Sight(s) => Item::Brief(s),
            Item::Brief(s) => Item::Sight(s),
            other => other,
        }
    }
}

/// Teams a slot may have (a slot with K teams costs K − 1 in the release's split penalty).
pub const MAX_TEAMS: usize = 4;

/// One slot of a program: the group split into teams (one team: everyone together), each
/// doing one item at the same time. The teams partition the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    parts: [(Mask, Item); MAX_TEAMS],
    len: u8,
}

/// By `Slot::code` (the search's cache hashes programs by the million: two words a slot).
impl std::hash::Hash for Slot {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let code = self.code();
        h.write_u64(code as u64);
        h.write_u64((code >> 64) as u64);
    }
}

/// A team as 27 bits: its mask, what it does (5 kinds) and which sight or meal.
fn team_code((mask, item): (Mask, Item)) -> u32 {
    let (kind, index) = match item {
        Item::Sight(s) => (0, s),
        Item::Brief(s) => (1, s),
        Item::Meal(m, MealKind::Lunch) => (2, m),
        Item::Meal(m, MealKind::Dinner) => (3, m),
        Item::Rest => (4, 0),
    };
    u32::from(mask) | kind << 8 | u32::from(index) << 11
}

impl Slot {
    pub fn joint(all: Mask, item: Item) -> Slot {
        Slot::of(&[(all, item)])
    }
    /// A slot of these teams (empty teams dropped, at most `MAX_TEAMS`).
    pub fn of(parts: &[(Mask, Item)]) -> Slot {
        let mut s = Slot {
            parts: [(0, Item::Rest); MAX_TEAMS],
            len: 0,
        };
        for &(m, i) in parts.iter().filter(|(m, _)| *m != 0).take(MAX_TEAMS) {
            s.parts[s.len as usize] = (m, i);
            s.len += 1;
        }
        s
    }
    /// The slot as one number, equal for equal slots only: 27 bits a team (`team_code`),
    /// then the count of teams (111 bits in all). The unused teams are always `(0, Rest)`, so
    /// the used ones and their count identify a slot.
    pub fn code(&self) -> u128 {
        let teams = self.parts().iter().enumerate();
        let code = teams.fold(0, |c, (j, &t)| c | u128::from(team_code(t)) << (27 * j));
        code | u128::from(self.len) << 108
    }
    pub fn parts(&self) -> &[(Mask, Item)] {
        &self.parts[..self.len as usize]
    }
    pub fn items(&self) -> impl Iterator<Item = Item> + '_ {
        self.parts().iter().map(|p| p.1)
    }
    /// Whether nobody does anything (every team rests).
    pub fn idle(&self) -> bool {
        self.items().all(|i| i == Item::Rest)
    }
    /// The same slot with member `i` moved into team `to` (or a new resting team when `to`
    /// is past the last team).
    pub fn moved(&self, i: usize, to: usize) -> Slot {
        let bit: Mask = 1 << i;
        let mut parts: Vec<(Mask, Item)> =
            self.parts().iter().map(|&(m, it)| (m & !bit, it)).collect();
        if to < parts.len() {
            parts[to].0 |= bit;
        } else {
            parts.push((bit, Item::Rest));
        }
        Slot::of(&parts)
    }
    /// The same slot with team `j` doing `item`.
    pub fn with(&self, j: usize, item: Item) -> Slot {
        let mut s = *self;
        s.parts[j].1 = item;
        s
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// the terminal of a leg (its index: a task has at most `MAX_DESTINATIONS` + 1 legs, so a
    /// place is one word for the simulation's per-member copies and comparisons)
    Terminal(u8),
    Hotel,
    Sight(u16),
    Meal(u16),
}

impl Place {
    /// Where a piece starts or ends.
    fn at(anchor: Anchor) -> Place {
        match anchor {
            Anchor::Hotel => Place::Hotel,
            // legs are few (`instance::setup_error` refuses more cities than the tables hold)
            Anchor::Terminal(leg) => Place::Terminal(leg as u8),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActKind {
    Transfer(Place, Place),
    Sight(u16),
    Meal(u16),
    Rest,
    Hotel,
}

#[derive(Debug, Clone, Copy)]
pub struct Act {
    pub kind: ActKind,
    pub start: u32,
    pub end: u32,
    pub mask: Mask,
}

/// What a piece gives one member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberPiece {
    /// category and food terms
    pub value: i32,
    pub must: Items,
    pub reject: Items,
    pub must_eat: Items,
    pub reject_eat: bool,
    pub pois: u32,
    /// attraction and transfer minutes
    pub active: u32,
    pub food: u32,
}

#[derive(Debug, Clone)]
pub struct PieceEval {
    /// the program fits: opening hours, meal windows, required meals, end in time
    pub ok: bool,
    /// per member (task order; the entries past the group's size stay empty)
    pub members: [MemberPiece; MAX_MEMBERS],
    pub split: i64,
    /// meals at stand-in venues (a named one is preferred when it is worth as much)
    pub stand_ins: u32,
}

/// How long a visit lasts: the sight's time, or the brief one.
fn visit_minutes(item: Item, full: u32) -> u32 {
    match item {
        Item::Brief(_) => model::BRIEF_VISIT.min(full),
        _ => full,
    }
}

struct Run<'a> {
    inst: &'a Instance<'a>,
    frame: &'a Frame,
    piece: &'a Piece,
    loc: [Place; MAX_MEMBERS],
    clock: [u32; MAX_MEMBERS],
    out: PieceEval,
    /// every activity (`activities`), or `None` when only the result is wanted
    acts: Option<&'a mut Vec<Act>>,
    /// the activities apart from the group, as the split penalty reads them
    parts: &'a mut Vec<(u32, u32, Mask)>,
}

/// Where a place is: sights at their coordinates; terminals, hotels and restaurants (which
/// have none in the resources) at the city centre.
pub fn coords(inst: &Instance, dest: usize, p: Place) -> (f64, f64) {
    let d = &inst.dest[dest];
    match p {
        Place::Sight(s) => d.sights[s as usize].at,
        _ => d.centre,
    }
}

impl Run<'_> {
    /// Minutes of a transfer: a ride across town, plus the way to or from a terminal.
    fn transfer(&self, a: Place, b: Place) -> u32 {
        let sight = |p: Place| match p {
            Place::Sight(s) => Some(s),
            _ => None,
        };
        let ride = self.inst.ride(self.piece.dest, sight(a), sight(b));
        let terminal = [a, b].iter().find_map(|p| match p {
            Place::Terminal(leg) => Some(self.frame.mode(self.inst, usize::from(*leg))),
            _ => None,
        });
        match terminal.map(|m| (m, model::access(m).0)) {
            // a car waits where the group is: only the walk to it
            Some(("自驾", acc)) => acc,
            // the access time covers the way between the terminal and the centre
            Some((_, acc)) => {
                up5((acc + ride - self.inst.ride(self.piece.dest, None, None)).min(150))
            }
            None => ride,
        }
    }

    fn members(&self, mask: Mask) -> Members {
        self.inst.members_of(mask)
    }

    /// Record an activity: apart from the group (not the whole group, not the hotel), it
    /// counts towards the split penalty.
    fn act(&mut self, kind: ActKind, start: u32, end: u32, mask: Mask) {
        if mask != self.inst.all && kind != ActKind::Hotel {
            self.parts.push((start, end, mask));
        }
        if let Some(acts) = &mut self.acts {
            acts.push(Act {
                kind,
                start,
                end,
                mask,
            });
        }
    }

    /// Move `mask` to `target` (a transfer per place they come from); returns when all are there.
    fn go(&mut self, mask: Mask, target: Place) -> u32 {
        let mut ready = 0;
        let mut left = mask;
        while left != 0 {
            let from = self.loc[left.trailing_zeros() as usize];
            // those of `left` where the first is, and when the last of them is free
            let (mut group, mut t0): (Mask, u32) = (0, 0);
            let mut rest = left;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if self.loc[i] == from {
                    group |= 1 << i;
                    t0 = t0.max(self.clock[i]);
                }
            }
            let mut dur = 0;
            if from != target {
                dur = self.transfer(from, target);
                self.act(ActKind::Transfer(from, target), t0, t0 + dur, group);
            }
            let arrive = t0 + dur;
            for i in self.members(group) {
                self.out.members[i].active += dur;
                self.loc[i] = target;
                self.clock[i] = arrive;
            }
            ready = ready.max(arrive);
            left &= !group;
        }
        ready
    }

    /// When `item` can start at `ready`, and its end; `None` when it cannot fit.
    fn schedule(&self, item: Item, ready: u32) -> Option<(u32, u32)> {
        match item {
            Item::Sight(s) | Item::Brief(s) => {
                let sight = &self.inst.dest[self.piece.dest].sights[s as usize];
                let dur = visit_minutes(item, sight.minutes);
                let start = match self.inst.windows(sight, self.piece.day) {
                    None => up5(ready),
                    Some(ws) => ws.iter().find_map(|&(o, c)| {
                        let s = up5(ready.max(o));
                        (s + dur <= c).then_some(s)
                    })?,
                };
                (start + dur <= model::SIGHT_LATEST_END).then_some((start, start + dur))
            }
            Item::Meal(_, kind) => {
                let (earliest, latest, dur) = kind.window();
                let start = up5(ready.max(earliest));
                (start <= latest).then_some((start, start + dur))
            }
            Item::Rest => Some((ready, ready)),
        }
    }

    fn credit(&mut self, mask: Mask, item: Item) {
        let d = &self.inst.dest[self.piece.dest];
        if let Item::Meal(f, _) = item {
            self.out.stand_ins += u32::from(d.meals[f as usize].stand_in);
        }
        for i in self.members(mask) {
            let m = &mut self.out.members[i];
            match item {
                Item::Sight(s) | Item::Brief(s) => {
                    let s = &d.sights[s as usize];
                    m.value += s.value[i];
                    m.must |= s.must[i];
                    m.reject |= s.reject[i];
                    m.pois += 1;
                    m.active += visit_minutes(item, s.minutes);
                }
                Item::Meal(f, _) => {
                    let f = &d.meals[f as usize];
                    m.value += f.value[i];
                    m.must_eat |= f.must[i];
                    m.reject_eat |= f.rejected >> i & 1 == 1;
                    m.food += f.price;
                }
                Item::Rest => {}
            }
        }
    }

    fn slot(&mut self, slot: &Slot) -> bool {
        // when the last working team is done (0: nobody works)
        let mut until = 0;
        let teams = slot.parts();
        for &(mask, item) in teams.iter().filter(|(m, i)| *m != 0 && *i != Item::Rest) {
            let target = match item {
                Item::Sight(s) | Item::Brief(s) => Place::Sight(s),
                Item::Meal(f, _) => Place::Meal(f),
                Item::Rest => unreachable!("filtered"),
            };
            let ready = self.go(mask, target);
            let Some((start, end)) = self.schedule(item, ready) else {
                return false;
            };
            let kind = match item {
                Item::Sight(s) | Item::Brief(s) => ActKind::Sight(s),
                Item::Meal(f, _) => ActKind::Meal(f),
                Item::Rest => ActKind::Rest,
            };
            self.act(kind, start, end, mask);
            self.credit(mask, item);
            for i in self.members(mask) {
                self.clock[i] = end;
            }
            until = until.max(end);
        }
        for &(mask, _) in teams.iter().filter(|(m, i)| *m != 0 && *i == Item::Rest) {
            let from = self.members(mask).map(|i| self.clock[i]).max().unwrap_or(0);
            if until > from {
                self.act(ActKind::Rest, from, until, mask);
                for i in self.members(mask) {
                    self.clock[i] = until;
                }
            }
        }
        true
    }
}

/// What a run writes besides its result: the activities apart from the group (the split
/// penalty's input), and every activity when they are wanted (`activities`: `Some`).
#[derive(Default)]
struct Buffers {
    acts: Option<Vec<Act>>,
    parts: Vec<(u32, u32, Mask)>,
}

/// A run between two slots: all it needs to carry on. Its activities apart from the group so
/// far are the first `parts` of its program's.
#[derive(Clone)]
struct Mark {
    loc: [Place; MAX_MEMBERS],
    clock: [u32; MAX_MEMBERS],
    out: PieceEval,
    parts: usize,
}

/// A program's run, marked before each slot it reached and after the last. A run is a
/// function of its slots in order, so a program that shares the first `k` slots runs from
/// mark `k` to the result a run from the start gives (`simulate_after`): an edit of a
/// search's program (`sims::Edit`) runs only from the slot it changes.
#[derive(Default)]
pub struct Prefix {
    marks: Vec<Mark>,
    parts: Vec<(u32, u32, Mask)>,
}

impl Prefix {
    /// This prefix, made the run of `program`.
    pub fn record(&mut self, inst: &Instance, frame: &Frame, piece: usize, program: &[Slot]) {
        self.marks.clear();
        let mut b = Buffers {
            acts: None,
            parts: std::mem::take(&mut self.parts),
        };
        run(
            inst,
            frame,
            piece,
            program,
            &mut b,
            Start::Marking(&mut self.marks),
        );
        self.parts = b.parts;
    }
}

/// Where a run starts, and whether it marks its way (`Prefix`).
enum Start<'p> {
    Fresh,
    Marking(&'p mut Vec<Mark>),
    /// after the first slots the program shares with the prefix's (no activities are kept)
    After(&'p Prefix, usize),
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::default();
}

/// Run a piece's program: what it is worth (the search keeps thousands of these per task, so
/// they hold no activities; a run writes those apart from the group to a buffer kept per
/// thread).
pub fn simulate(inst: &Instance, frame: &Frame, piece: usize, program: &[Slot]) -> PieceEval {
    BUFFERS.with_borrow_mut(|b| run(inst, frame, piece, program, b, Start::Fresh))
}

/// `simulate`, for a program whose first `shared` slots are those of the prefix's program.
pub fn simulate_after(
    inst: &Instance,
    frame: &Frame,
    piece: usize,
    program: &[Slot],
    prefix: &Prefix,
    shared: usize,
) -> PieceEval {
    let start = Start::After(prefix, shared);
    BUFFERS.with_borrow_mut(|b| run(inst, frame, piece, program, b, start))
}

/// The activities of a piece's program, for the plan written out.
pub fn activities(inst: &Instance, frame: &Frame, piece: usize, program: &[Slot]) -> Vec<Act> {
    let mut b = Buffers {
        acts: Some(Vec::new()),
        parts: Vec::new(),
    };
    run(inst, frame, piece, program, &mut b, Start::Fresh);
    b.acts.unwrap_or_default()
}

impl Run<'_> {
    fn mark(&self) -> Mark {
        Mark {
            loc: self.loc,
            clock: self.clock,
            out: self.out.clone(),
            parts: self.parts.len(),
        }
    }
}

/// Run a piece's program, its activities into `buffers` (cleared first).
fn run(
    inst: &Instance,
    frame: &Frame,
    piece: usize,
    program: &[Slot],
    buffers: &mut Buffers,
    mut from: Start,
) -> PieceEval {
    let Buffers { acts, parts } = buffers;
    if let Some(acts) = acts {
        acts.clear();
    }
    parts.clear();
    let p = &frame.pieces[piece];
    let start_at = Place::at(p.start_at);
    let out = PieceEval {
        ok: false,
        members: [MemberPiece::default(); MAX_MEMBERS],
        split: 0,
        stand_ins: 0,
    };
    // the meals the piece needs, checked before anything is run
    for kind in [MealKind::Lunch, MealKind::Dinner] {
        let has = program.iter().any(|s| {
            s.items()
                .any(|i| matches!(i, Item::Meal(_, k) if k == kind))
        });
        if p.need(kind) == Need::Required && !has || p.need(kind) == Need::No && has {
            return out;
        }
    }
    let mut run = Run {
        inst,
        frame,
        piece: p,
        loc: [start_at; MAX_MEMBERS],
        clock: [p.start; MAX_MEMBERS],
        out,
        acts: acts.as_mut(),
        parts,
    };
    // the last mark at or before the slots shared: a program's run stops at its first slot
    // that does not fit, which a program sharing later slots reaches and stops at too
    let mut first = 0;
    if let Start::After(prefix, shared) = from
        && let Some(last) = prefix.marks.len().checked_sub(1)
    {
        first = shared.min(last);
        let m = &prefix.marks[first];
        (run.loc, run.clock, run.out) = (m.loc, m.clock, m.out.clone());
        run.parts.extend_from_slice(&prefix.parts[..m.parts]);
    }
    for s in &program[first..] {
        if let Start::Marking(marks) = &mut from {
            marks.push(run.mark());
        }
        if !run.slot(s) {
            return run.out;
        }
    }
    if let Start::Marking(marks) = &mut from {
        marks.push(run.mark());
    }
    let end_at = Place::at(p.end_at);
    let ready = run.go(inst.all, end_at);
    if ready > p.end_limit {
        return run.out;
    }
    if p.end_at == Anchor::Hotel {
        run.act(ActKind::Hotel, ready, model::HOTEL_CHECKOUT, inst.all);
    }
    // fewer than two acts apart cost nothing (most pieces keep the group together)
    if run.parts.len() > 1 {
        run.out.split = mask_split_penalty(run.parts);
    }
    run.out.ok = true;
    run.out
}
