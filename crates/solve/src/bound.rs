//! The utility ceiling of a frame (`ceiling`): with `eval::floor`, the bound by which the
//! scouting skips a frame that cannot be a finalist (`Solver::scout`).

use super::frame::{Frame, Need};
use super::instance::{Destination, Instance, MAX_DESTINATIONS};
use super::model::MealKind;

/// Per member and destination, what `ceiling` reads that does not depend on the frame: the
/// sum of the `k` best positive sight values for every `k`, the best hotel value and the best
/// meal value (0 when none is positive: a meal may be left out).
pub struct Tops {
    /// `[i][d]`: member `i`'s figures for destination `d`
    per: Vec<Vec<Best>>,
}

struct Best {
    /// `sights[k]`: the `k` best positive sight values summed
    sights: Vec<i64>,
    hotel: i64,
    meal: i64,
}

impl Tops {
    pub fn new(inst: &Instance) -> Tops {
        let best = |i: usize, d: &Destination| {
            let mut v: Vec<i64> = d.sights.iter().map(|s| s.value[i] as i64).collect();
            v.retain(|&x| x > 0);
            v.sort_unstable_by(|a, b| b.cmp(a));
            let sums = v.iter().scan(0, |acc, &x| {
                *acc += x;
                Some(*acc)
            });
            Best {
                sights: std::iter::once(0).chain(sums).collect(),
                hotel: d
                    .hotels
                    .iter()
                    .map(|h| h.value[i] as i64)
                    .max()
                    .unwrap_or(0),
                meal: d
                    .meals
                    .iter()
                    .map(|f| f.value[i] as i64)
                    .max()
                    .unwrap_or(0)
                    .max(0),
            }
        };
        let per = (0..inst.n())
            .map(|i| inst.dest.iter().map(|d| best(i, d)).collect())
            .collect();
        Tops { per }
    }
    fn sights(&self, i: usize, d: usize, k: usize) -> i64 {
        let s = &self.per[i][d].sights;
        s[k.min(s.len() - 1)]
    }
}

/// An upper bound on the group utility of every plan of the frame that ranks level with its
/// `floor` in (breaches, compromises). Such a plan breaks exactly the floor's fields (any other
/// field, or a firm member's heavier one, adds a breach or a compromise: `Tally::charge`), so
/// it keeps every intensity cap, sees no rejected sight and has no budget term. Per member:
/// the frame's transport terms, the best hotel of each night, +2 per must_visit item, the best
/// positive sight values that fit the caps (a plan visits a sight once: the search only
/// inserts unused sights), and the best meal value for each lunch and dinner a piece may have.
/// The split penalty only lowers the total. So when this bound is below the utility of
/// `finalists` scouted frames of the same floor, the frame cannot be a finalist.
pub fn ceiling(inst: &Instance, frame: &Frame, tops: &Tops) -> i64 {
    let mut days = [0u64; MAX_DESTINATIONS];
    for p in &frame.pieces {
        days[p.dest] |= 1 << p.day;
    }
    let mut total = 0;
    for (i, m) in inst.members.iter().enumerate() {
        let cap = m.pref.global_constraints.intensity.max_poi_per_day as usize;
        let mut value = frame.transport_value[i] as i64;
        for &d in &frame.night_dest {
            value += tops.per[i][d].hotel;
        }
        for (d, on) in days.iter().enumerate().take(inst.dest.len()) {
            value += 2 * inst.must_visit_all(i, d).count_ones() as i64;
            let k = match cap {
                0 => usize::MAX,
                c => c * on.count_ones() as usize,
            };
            value += tops.sights(i, d, k);
        }
        for p in &frame.pieces {
            let meals = [MealKind::Lunch, MealKind::Dinner]
                .into_iter()
                .filter(|&kind| p.need(kind) != Need::No)
                .count() as i64;
            value += meals * tops.per[i][p.dest].meal;
        }
        total += value;
    }
    total
}
