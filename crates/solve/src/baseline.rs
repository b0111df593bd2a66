//! The naive plan the witness is measured against in the benchmark: the cheapest modes, the
//! nights shared as evenly as possible, the cheapest hotel, the cheapest food at every
//! required meal, and only the must_visit sights that every member shares, all together.

use super::Solver;
use super::frame::{self, Frame, Need};
use super::instance::Instance;
use super::model::MealKind;
use super::search::{Pieces, State, evaluate};
use super::sim::{Item, Slot, simulate};
use gtb_core::task::Task;
use gtb_plan::Plan;

impl Solver<'_> {
    /// The naive plan of a task (not necessarily within the hard constraints), or why the task
    /// cannot even be framed.
    pub fn baseline(&self, task: &Task) -> Result<Plan, String> {
        let inst = Instance::new(task, self.res, self.db)?;
        let combo: Vec<usize> = inst
            .legs
            .iter()
            .map(|l| {
                (0..l.options.len())
                    .filter(|&o| l.options[o].minutes <= 16 * 60)
                    .min_by_key(|&o| (l.options[o].fare, o))
                    .ok_or_else(|| {
                        format!(
                            "no intercity mode of at most 16 hours from {} to {}",
                            inst.res.city(l.from).name,
                            inst.res.city(l.to).name
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        let mut allocs = frame::allocations(inst.days - 1, inst.dest.len());
        allocs.sort_by_key(|a| (a.iter().max().copied().unwrap_or(0), a.clone()));
        let frame = allocs
            .iter()
            .find_map(|a| Frame::new(&inst, a, &combo))
            .ok_or("no frame fits")?;
        let hotels: Vec<usize> = inst
            .dest
            .iter()
            .map(|d| {
                (0..d.hotels.len())
                    .min_by_key(|&h| (d.hotels[h].price, h))
                    .unwrap_or(0)
            })
            .collect();
        let cheapest = |dest: usize| {
            let d = &inst.dest[dest];
            (0..d.meals.len())
                .min_by_key(|&m| (d.meals[m].price, m))
                .map(|m| m as u16)
        };
        let mut programs: Vec<Vec<Slot>> = frame
            .pieces
            .iter()
            .map(|p| {
                [MealKind::Lunch, MealKind::Dinner]
                    .into_iter()
                    .filter(|k| p.need(*k) == Need::Required)
                    .filter_map(|k| {
                        cheapest(p.dest).map(|m| Slot::joint(inst.all, Item::Meal(m, k)))
                    })
                    .collect()
            })
            .collect();
        for (di, d) in inst.dest.iter().enumerate() {
            let shared: Vec<u16> = (0..d.sights.len())
                .filter(|&s| (0..inst.n()).all(|i| d.sights[s].must[i] != 0))
                .map(|s| s as u16)
                .collect();
            for s in shared {
                // the first piece and position where it fits
                'place: for p in (0..frame.pieces.len()).filter(|&p| frame.pieces[p].dest == di) {
                    for k in 0..=programs[p].len() {
                        let mut c = programs[p].clone();
                        c.insert(k, Slot::joint(inst.all, Item::Sight(s)));
                        if simulate(&inst, &frame, p, &c).ok {
                            programs[p] = c;
                            break 'place;
                        }
                    }
                }
            }
        }
        let evals: Vec<_> = (0..programs.len())
            .map(|p| std::rc::Rc::new(simulate(&inst, &frame, p, &programs[p])))
            .collect();
        if evals.iter().any(|e| !e.ok) {
            return Err("the naive plan does not fit its days".into());
        }
        let eval = evaluate(&inst, &frame, &hotels, Pieces::of(&evals));
        let st = State {
            hotels,
            programs,
            evals,
            eval,
        };
        Ok(super::output::plan(&inst, &frame, &st))
    }
}
