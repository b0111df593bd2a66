//! What a plan is worth: from its pieces' simulations, its hotels and its frame, each member's
//! utility, spending and broken hard fields, and the plan's rank (`Eval::key`).
//!
//! Plans are compared on (hard-constraint breaches, compromises, group utility, stand-in
//! venues, money spent): breaches first, graded so that a cheaper plan counts as progress even
//! while a budget is still exceeded. A compromisable member's breached field is a compromise
//! (at most two per member; beyond that it counts as a breach).
//!
//! The search ranks thousands of candidates per frame, so the rank has a path of its own
//! (`rank`) that allocates nothing: it runs the same member walk as `evaluate`, with the broken
//! fields tallied (`Breaks`) instead of listed. Candidates for one piece are ranked by
//! `Partial`: the plan's sums over the other pieces, kept once, plus the candidate's own.

use super::frame::{Frame, Piece};
use super::instance::{Instance, Items, MAX_DAYS, MAX_DESTINATIONS};
use super::sim::{MemberPiece, PieceEval};
use gtb_core::task::Intensity;
use gtb_score::compromise::MAX_PER_USER;
use std::rc::Rc;

/// A hard field of a member that the plan breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    Budget,
    MaxPoi,
    MaxHours,
    TransportMust,
    TransportReject,
    MustVisit(usize),
    RejectVisit(usize),
    MustEat(usize),
    RejectEat(usize),
}

#[derive(Debug, Clone, Default)]
pub struct MemberEval {
    /// the member's utility (original preferences)
    pub value: i64,
    pub cost: u32,
    /// broken fields with their weight
    pub broken: Vec<(Field, i64)>,
    /// per day: attractions and active minutes
    pub pois: [u32; MAX_DAYS],
    pub active: [u32; MAX_DAYS],
}

#[derive(Debug, Clone, Default)]
pub struct Eval {
    pub breach: i64,
    pub total: i64,
    pub compromises: i64,
    pub stand_ins: i64,
    pub cost: i64,
    pub split: i64,
    pub members: Vec<MemberEval>,
}

/// A plan's rank: larger is better (`Eval::key`).
pub type Key = (i64, i64, i64, i64, i64);

impl Eval {
    /// Larger is better: fewer hard-constraint breaches, then fewer compromises (a witness
    /// declares one only when it needs it), then utility, then fewer stand-ins, then cheaper.
    pub fn key(&self) -> Key {
        (
            -self.breach,
            -self.compromises,
            self.total,
            -self.stand_ins,
            -self.cost,
        )
    }
    /// The plan's sums without the members' evaluations.
    fn sums(&self) -> Eval {
        Eval {
            members: Vec::new(),
            ..*self
        }
    }
    pub fn better(&self, other: &Eval) -> bool {
        self.key() > other.key()
    }
    /// A piece's share of the plan's terms (the members aside).
    fn add_piece(&mut self, p: &PieceEval) {
        if !p.ok {
            self.breach += 1_000_000;
        }
        self.split += p.split;
        self.stand_ins += p.stand_ins as i64;
    }
    /// A member's share: utility, spending, and the (breach, compromises) of their tally.
    fn add_member(&mut self, value: i64, cost: u32, (breach, compromises): (i64, i64)) {
        self.breach += breach;
        self.compromises += compromises;
        self.total += value;
        self.cost += cost as i64;
    }
}

const BREACH: i64 = 1000;

/// The pieces' simulations of a plan (a candidate for one piece is ranked by `Partial`).
#[derive(Clone, Copy)]
pub struct Pieces<'e> {
    pub base: &'e [Rc<PieceEval>],
}

impl<'e> Pieces<'e> {
    pub fn of(base: &'e [Rc<PieceEval>]) -> Self {
        Pieces { base }
    }
    fn iter(self) -> impl Iterator<Item = &'e PieceEval> {
        self.base.iter().map(|e| &**e)
    }
}

/// Where the walk over a member's plan puts their broken fields.
trait Breaks {
    fn push(&mut self, field: Field, weight: i64);
}

impl Breaks for Vec<(Field, i64)> {
    fn push(&mut self, field: Field, weight: i64) {
        Vec::push(self, (field, weight));
    }
}

/// Broken fields counted without being listed: how many, their weight, the two heaviest.
#[derive(Clone, Copy, Default)]
struct Tally {
    n: i64,
    sum: i64,
    top: [i64; 2],
}

impl Breaks for Tally {
    fn push(&mut self, _: Field, w: i64) {
        self.n += 1;
        self.sum += w;
        if w > self.top[0] {
            self.top = [w, self.top[0]];
        } else if w > self.top[1] {
            self.top[1] = w;
        }
    }
}

impl Tally {
    /// (breach, compromises) of a member's broken fields: a firm member's all breach; a
    /// compromisable one's heaviest `MAX_PER_USER` are compromises, the rest breach.
    fn charge(&self, firm: bool) -> (i64, i64) {
        if firm {
            return (self.sum, 0);
        }
        const _: () = assert!(MAX_PER_USER == 2, "Tally keeps the two heaviest");
        (self.sum - self.top[0] - self.top[1], self.n.min(2))
    }
}

/// Stand-in venues and split penalty of the pieces and nights (the members aside).
fn plan_terms<'e>(
    inst: &Instance,
    frame: &Frame,
    hotels: &[usize],
    pieces: impl Iterator<Item = &'e PieceEval>,
) -> Eval {
    let mut e = Eval::default();
    for p in pieces {
        e.add_piece(p);
    }
    // nights at a stand-in hotel count like meals at a stand-in venue
    e.stand_ins += frame
        .night_dest
        .iter()
        .filter(|&&d| inst.dest[d].hotels[hotels[d]].stand_in)
        .count() as i64;
    e
}

/// Score a plan from its pieces' evaluations.
pub fn evaluate(inst: &Instance, frame: &Frame, hotels: &[usize], pieces: Pieces) -> Eval {
    let mut e = plan_terms(inst, frame, hotels, pieces.iter());
    e.members.reserve_exact(inst.n());
    for (i, m) in inst.members.iter().enumerate() {
        let mut broken = Vec::new();
        let mut me = member_eval(inst, frame, hotels, pieces, i, &mut broken);
        let mut tally = Tally::default();
        for &(f, w) in &broken {
            tally.push(f, w);
        }
        e.add_member(me.value, me.cost, tally.charge(m.firm));
        me.broken = broken;
        e.members.push(me);
    }
    e.total -= e.split;
    e
}

/// `evaluate(..).key()` without building the evaluation.
pub fn rank(inst: &Instance, frame: &Frame, hotels: &[usize], pieces: Pieces) -> Key {
    let mut e = plan_terms(inst, frame, hotels, pieces.iter());
    for (i, m) in inst.members.iter().enumerate() {
        let mut tally = Tally::default();
        let me = member_eval(inst, frame, hotels, pieces, i, &mut tally);
        e.add_member(me.value, me.cost, tally.charge(m.firm));
    }
    e.total -= e.split;
    e.key()
}

/// What every plan of a frame breaks at least, as the rank's first two terms (breaches,
/// compromises): the legs' transport terms, which the frame fixes, the budget at the
/// frame's fares with the cheapest hotel of each night and free meals, and the must_visit and
/// must_eat items no piece of the frame can serve (`proof::unmeetable`). A plan can only add
/// broken fields or weight to these, and a member's (breach, compromises) never falls when a
/// field is added or grows heavier (`Tally::charge`), so no plan of the frame ranks above
/// `(-breach, -compromises, ∞, …)`.
pub fn floor(inst: &Instance, frame: &Frame) -> (i64, i64) {
    let cheapest: u32 = frame
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
    let (mut breach, mut compromises) = (0, 0);
    for (i, m) in inst.members.iter().enumerate() {
        let mut tally = Tally::default();
        transport_terms(frame, i, &mut tally);
        let budget = m.pref.global_constraints.avg_budget;
        budget_terms(budget, frame.fare + cheapest, &mut tally);
        for d in 0..inst.dest.len() {
            // the most of the destination's must items a plan of the frame can cover
            let (visit, eat) = super::proof::unmeetable(inst, frame, i, d);
            let most = Cover {
                must: !visit,
                eat: !eat,
                ..Cover::default()
            };
            most.terms(inst, i, d, &mut tally);
        }
        let (b, c) = tally.charge(m.firm);
        breach += b;
        compromises += c;
    }
    (breach, compromises)
}

/// A plan's terms summed over every piece but one, so that the candidates for that piece are
/// ranked by adding their own terms alone: `rank` of the plan with the piece swapped, in
/// time that does not grow with the other pieces.
pub struct Partial {
    /// the piece's destination
    dest: usize,
    terms: Eval,
    members: Vec<Rest>,
}

/// A member's walk over every piece but one, finished except for what the piece touches:
/// its destination's places, its day's caps and the budget.
#[derive(Clone, Copy)]
struct Rest {
    value: i64,
    cost: u32,
    /// the broken fields of the other destinations and of transport
    tally: Tally,
    /// the piece's destination as the other pieces cover it
    cover: Cover,
    /// the piece's day: the other pieces' attractions and active minutes
    pois: u32,
    active: u32,
    /// the caps exceeded on the other days
    over: Over,
    /// the member's must items of the piece's destination, caps, budget and firmness
    /// (copied here: the rank reads them for every candidate)
    visit_all: Items,
    eat_all: Items,
    caps: Caps,
    budget: u32,
    firm: bool,
}

impl Partial {
    pub fn new(
        inst: &Instance,
        frame: &Frame,
        hotels: &[usize],
        base: &[Rc<PieceEval>],
        piece: usize,
    ) -> Partial {
        let others = || {
            let all = frame.pieces.iter().zip(base).enumerate();
            all.filter(move |(q, _)| *q != piece).map(|(_, pe)| pe)
        };
        let terms = plan_terms(inst, frame, hotels, others().map(|(_, e)| &**e));
        let p = &frame.pieces[piece];
        let members = (0..inst.n())
            .map(|i| {
                let mut me = member_start(inst, frame, hotels, i);
                let mut c = Covered::default();
                for (q, ev) in others() {
                    me.add_piece(&mut c, q, &ev.members[i]);
                }
                let mut tally = Tally::default();
                for d in (0..inst.dest.len()).filter(|&d| d != p.dest) {
                    me.value += c[d].terms(inst, i, d, &mut tally);
                }
                let mut over = Over::default();
                let m = &inst.members[i];
                let g = &m.pref.global_constraints;
                let caps = Caps::of(&g.intensity);
                for day in (0..inst.days as usize).filter(|&day| day != p.day) {
                    me.value += over.day(caps, me.pois[day], me.active[day]);
                }
                transport_terms(frame, i, &mut tally);
                Rest {
                    value: me.value,
                    cost: me.cost,
                    tally,
                    cover: c[p.dest],
                    pois: me.pois[p.day],
                    active: me.active[p.day],
                    over,
                    visit_all: inst.must_visit_all(i, p.dest),
                    eat_all: inst.must_eat_all(i, p.dest),
                    caps,
                    budget: g.avg_budget,
                    firm: m.firm,
                }
            })
            .collect();
        Partial {
            dest: p.dest,
            terms,
            members,
        }
    }

    /// `rank` of the plan with this piece's simulation `ev`.
    pub fn rank(&self, ev: &PieceEval) -> Key {
        let mut e = self.terms.sums();
        e.add_piece(ev);
        for (r, mp) in self.members.iter().zip(&ev.members) {
            let mut tally = r.tally;
            let mut cover = r.cover;
            cover.add(mp);
            let mut over = r.over;
            let (must, eat) = (r.visit_all, r.eat_all);
            let mut value =
                r.value + mp.value as i64 + cover.terms_of(self.dest, must, eat, &mut tally);
            value += over.day(r.caps, r.pois + mp.pois, r.active + mp.active);
            over.push(&mut tally);
            let cost = r.cost + mp.food;
            value += budget_terms(r.budget, cost, &mut tally);
            e.add_member(value, cost, tally.charge(r.firm));
        }
        e.total -= e.split;
        e.key()
    }
}

/// What a member's pieces cover of one destination: the must and reject sights and must
/// dishes (bit sets over the member's lists) and whether a rejected dish is eaten.
#[derive(Clone, Copy, Default)]
struct Cover {
    must: u32,
    reject: u32,
    eat: u32,
    reject_eat: bool,
}

/// Per destination, what a member's pieces cover.
type Covered = [Cover; MAX_DESTINATIONS];

impl Cover {
    fn add(&mut self, mp: &MemberPiece) {
        self.must |= mp.must;
        self.reject |= mp.reject;
        self.eat |= mp.must_eat;
        self.reject_eat |= mp.reject_eat;
    }

    /// Member `i`'s terms of destination `d`: ±2 per must / rejected sight seen (once each),
    /// and the must sights and dishes missed and rejected ones taken as broken fields.
    fn terms(&self, inst: &Instance, i: usize, d: usize, broken: &mut impl Breaks) -> i64 {
        let (must, eat) = (inst.must_visit_all(i, d), inst.must_eat_all(i, d));
        self.terms_of(d, must, eat, broken)
    }

    /// `terms`, given the member's must_visit and must_eat items of the destination.
    fn terms_of(&self, d: usize, must: Items, eat: Items, broken: &mut impl Breaks) -> i64 {
        let value = 2 * self.must.count_ones() as i64 - 2 * self.reject.count_ones() as i64;
        let missing = (must & !self.must).count_ones() as i64;
        if missing > 0 {
            broken.push(Field::MustVisit(d), BREACH * missing);
        }
        if self.reject != 0 {
            let seen = self.reject.count_ones() as i64;
            broken.push(Field::RejectVisit(d), BREACH * seen);
        }
        let missing = (eat & !self.eat).count_ones() as i64;
        if missing > 0 {
            broken.push(Field::MustEat(d), BREACH * missing);
        }
        if self.reject_eat {
            broken.push(Field::RejectEat(d), BREACH);
        }
        value
    }
}

/// A member's intensity caps exceeded, summed over days: attractions and active minutes.
#[derive(Clone, Copy, Default)]
struct Over {
    poi: i64,
    min: i64,
}

/// A member's daily caps (0: none): attractions and active hours.
#[derive(Clone, Copy)]
struct Caps {
    poi: u32,
    hours: u32,
}

impl Caps {
    fn of(it: &Intensity) -> Caps {
        Caps {
            poi: it.max_poi_per_day,
            hours: it.max_active_hours,
        }
    }
}

impl Over {
    /// One day's attractions and active minutes against the caps: −2 per cap exceeded.
    fn day(&mut self, caps: Caps, pois: u32, active: u32) -> i64 {
        let (max_poi, max_h) = (caps.poi, caps.hours);
        let mut value = 0;
        if max_poi > 0 && pois > max_poi {
            value -= 2;
            self.poi += (pois - max_poi) as i64;
        }
        if max_h > 0 && active > max_h * 60 {
            value -= 2;
            self.min += (active - max_h * 60) as i64;
        }
        value
    }
    /// The caps exceeded as broken fields.
    fn push(self, broken: &mut impl Breaks) {
        if self.poi > 0 {
            broken.push(Field::MaxPoi, BREACH * self.poi);
        }
        if self.min > 0 {
            broken.push(Field::MaxHours, BREACH + self.min);
        }
    }
}

/// Member `i`'s utility and spending in a plan (its `broken` left empty), the broken hard
/// fields going to `broken`.
fn member_eval(
    inst: &Instance,
    frame: &Frame,
    hotels: &[usize],
    pieces: Pieces,
    i: usize,
    broken: &mut impl Breaks,
) -> MemberEval {
    let mut me = member_start(inst, frame, hotels, i);
    let mut covered = Covered::default();
    for (p, ev) in frame.pieces.iter().zip(pieces.iter()) {
        me.add_piece(&mut covered, p, &ev.members[i]);
    }
    member_finish(inst, frame, i, &mut me, &covered, broken);
    me
}

/// Member `i`'s transport terms and fares, and hotels.
fn member_start(inst: &Instance, frame: &Frame, hotels: &[usize], i: usize) -> MemberEval {
    let mut me = MemberEval {
        value: frame.transport_value[i] as i64,
        cost: frame.fare,
        ..Default::default()
    };
    for &d in &frame.night_dest {
        let h = &inst.dest[d].hotels[hotels[d]];
        me.value += h.value[i] as i64;
        me.cost += h.price;
    }
    me
}

/// What member `i`'s pieces add up to: the places covered, the intensity caps, the budget
/// and the transport fields.
fn member_finish(
    inst: &Instance,
    frame: &Frame,
    i: usize,
    me: &mut MemberEval,
    covered: &Covered,
    broken: &mut impl Breaks,
) {
    let g = &inst.members[i].pref.global_constraints;
    for (d, c) in covered.iter().enumerate().take(inst.dest.len()) {
        me.value += c.terms(inst, i, d, broken);
    }
    let mut over = Over::default();
    let caps = Caps::of(&g.intensity);
    for day in 0..inst.days as usize {
        me.value += over.day(caps, me.pois[day], me.active[day]);
    }
    over.push(broken);
    me.value += budget_terms(g.avg_budget, me.cost, broken);
    transport_terms(frame, i, broken);
}

/// A budget exceeded: −2, and a breach graded by the excess (a cheaper plan is progress).
fn budget_terms(budget: u32, cost: u32, broken: &mut impl Breaks) -> i64 {
    if budget > 0 && cost > budget {
        broken.push(Field::Budget, BREACH + (cost - budget) as i64);
        return -2;
    }
    0
}

/// Member `i`'s transport must unmet and rejected legs taken.
fn transport_terms(frame: &Frame, i: usize, broken: &mut impl Breaks) {
    if frame.must_unmet >> i & 1 == 1 {
        broken.push(Field::TransportMust, BREACH);
    }
    if frame.rejected[i] != 0 {
        let legs = frame.rejected[i].count_ones() as i64;
        broken.push(Field::TransportReject, BREACH * legs);
    }
}

impl MemberEval {
    /// Add member `i`'s share `mp` of piece `p`: value, meals paid, attractions and active
    /// minutes of its day, and what it covers of its destination.
    fn add_piece(&mut self, c: &mut Covered, p: &Piece, mp: &MemberPiece) {
        self.value += mp.value as i64;
        self.cost += mp.food;
        c[p.dest].add(mp);
        self.pois[p.day] += mp.pois;
        self.active[p.day] += mp.active;
    }
}
