//! `gtb solve` of a built split: the witness plans' wall time and figures by difficulty
//! against the naive baseline, then the search's CPU per task (`solver_cpu`).

use crate::{peak_rss_mib, solver_cpu};
use gtb_core::config::Config;
use std::time::Instant;

/// `gtb solve` of a built split: wall time of the witnesses (all cores), then the mean group
/// utility by difficulty of the witness against the naive baseline (`Solver::baseline`: only the
/// shared must_visits, the cheapest food, hotel and modes; scored on the original preferences,
/// a task whose baseline cannot be framed counting 0).
pub fn solve_witnesses(c: &Config, tasks: &std::path::Path) -> anyhow::Result<()> {
    use gtb_score::{PoiDb, score_plan};
    use rayon::prelude::*;
    let res = gtb_ops::load_resources(c)?;
    let db = PoiDb::from_resources(&res);
    let solver = gtb_solve::Solver::new(&res, &db);
    let tasks = gtb_ops::solve::read_tasks(tasks)?;
    let t = Instant::now();
    let lines = gtb_ops::solve::solve_tasks(&solver, &tasks);
    let wall = t.elapsed().as_secs_f64();
    let summary = gtb_ops::solve::SolveSummary::of(&tasks, &lines);
    println!(
        "solve n={}: {wall:.3}s wall on {} threads, {} witnesses ({} proven infeasible, {} search exhausted), peak RSS {:.0} MiB",
        tasks.len(),
        rayon::current_num_threads(),
        summary.solved,
        summary.infeasible,
        summary.exhausted,
        peak_rss_mib()
    );
    let baseline: Vec<Baseline> = tasks
        .par_iter()
        .map(|t| match solver.baseline(t) {
            Ok(plan) => {
                let plan = serde_json::to_value(&plan).expect("plans serialise");
                let s = score_plan(t, &plan, &[], &db);
                let u = &s.utility;
                [
                    u.total_score as f64,
                    u.per_user_average_score,
                    u.fairness,
                    f64::from(u8::from(s.validity.valid)),
                ]
            }
            Err(_) => [0.0; 4],
        })
        .collect();
    print_against_baseline(&tasks, &summary.figures, &baseline);
    solver_cpu::report(&solver, &tasks);
    Ok(())
}

/// The naive plan's group utility, per-member utility, fairness and validity (1 or 0).
type Baseline = [f64; 4];

/// The witnesses' figures by difficulty beside the naive baseline's.
fn print_against_baseline(
    tasks: &[gtb_core::task::Task],
    figures: &gtb_ops::solve::Figures,
    baseline: &[Baseline],
) {
    for k in ["easy", "medium", "hard", "all"] {
        let picked: Vec<&Baseline> = tasks
            .iter()
            .zip(baseline)
            .filter(|(t, _)| k == "all" || t.difficulty_type == k)
            .map(|(_, b)| b)
            .collect();
        let (Some(w), false) = (figures.by_difficulty.get(k), picked.is_empty()) else {
            continue;
        };
        let m = picked.len() as f64;
        let mean = |i: usize| picked.iter().map(|b| b[i]).sum::<f64>() / m;
        println!(
            "  {k:<6} {:>4} tasks: witness group utility {:.2}, per member {:.2}, fairness {:.2} (upper bound {:.2}; with compromises {:.0} %, subgroups {:.0} %; stand-in hotels {:.1} % of {}, meals {:.1} % of {}) | baseline group utility {:.2}, per member {:.2}, fairness {:.2} (valid {:.0} %)",
            w.tasks,
            w.group_utility,
            w.per_user_average,
            w.fairness,
            w.upper_bound,
            w.with_compromises * 100.0,
            w.with_subgroups * 100.0,
            w.hotel_stand_in_share * 100.0,
            w.hotels,
            w.meal_stand_in_share * 100.0,
            w.meals,
            mean(0),
            mean(1),
            mean(2),
            mean(3) * 100.0,
        );
    }
}
