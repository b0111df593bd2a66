//! `gtb solve TASKS --out plans.jsonl` (a witness plan per task, or why there is none: a proof
//! of infeasibility, or a search that ran out) and the reference figures of a set of
//! witnesses. `--format official` writes the release's inference records instead
//! (`official`); `gtb score` is `score`.

use anyhow::{Context, Result};
use gtb_core::task::Task;
use gtb_plan::{PlanLine, STAND_IN_RULE, StandIns};
use gtb_solve::{NoWitness, Solver, Venues, Witness};
use indexmap::IndexMap;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::score::{
    ScoreFormat, ScoreOptions, ScoreReport, read_plans, score_file, score_lines,
};

/// Read a task file (JSONL), naming the line of any error.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    gtb_core::jsonl::from_jsonl(&bytes, path)
}

/// The `venues` object of a witness line: hotel and meal activities, and stand-ins among them.
fn venues_json(v: &Venues) -> Value {
    json!({
        "hotels": v.hotels,
        "hotel_stand_ins": v.hotel_stand_ins,
        "meals": v.meals,
        "meal_stand_ins": v.meal_stand_ins,
    })
}

/// The `scores` object of a witness line.
fn scores_json(w: &Witness) -> Value {
    let u = &w.score.utility;
    json!({
        "valid": w.score.validity.valid,
        "validity_issues": w.score.validity.issues.len(),
        "group_utility": u.total_score,
        "per_user_average": u.per_user_average_score,
        "fairness": u.fairness,
        "per_user": u.per_user.iter().map(|(k, s)| (k.clone(), Value::from(s.total))).collect::<serde_json::Map<_, _>>(),
        "split_penalty": u.split_penalty,
        "utility_without_compromises": w.utility_without_compromises,
        "upper_bound": w.upper_bound,
        "gap": w.upper_bound - u.total_score,
        "venues": venues_json(&w.venues),
    })
}

/// The plans-file line of a solver's answer for one task.
pub fn line_of(task: &Task, answer: Result<Witness, NoWitness>) -> PlanLine {
    match answer {
        Ok(w) => PlanLine {
            task_id: task.task_id.clone(),
            plan: Some(serde_json::to_value(&w.plan).expect("plans serialise")),
            reason: None,
            verdict: None,
            scores: Some(scores_json(&w)),
            stand_ins: (!w.venues.stand_ins.is_empty()).then(|| StandIns {
                rule: STAND_IN_RULE.to_string(),
                locations: w.venues.stand_ins.clone(),
            }),
            compromises: w.compromises,
        },
        Err(no) => PlanLine {
            task_id: task.task_id.clone(),
            plan: None,
            reason: Some(no.reason().to_string()),
            verdict: Some(no.verdict().to_string()),
            compromises: Vec::new(),
            scores: None,
            stand_ins: None,
        },
    }
}

/// The plans-file line of one task.
pub fn plan_line(solver: &Solver, task: &Task) -> PlanLine {
    line_of(task, solver.solve(task))
}

/// Solve every task (in parallel, output in task order).
pub fn solve_tasks(solver: &Solver, tasks: &[Task]) -> Vec<PlanLine> {
    tasks.par_iter().map(|t| plan_line(solver, t)).collect()
}

/// The bytes of a plans file.
pub fn plans_bytes(lines: &[PlanLine]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        gtb_core::pyjson::write_value(&mut out, l).expect("plan lines serialise");
        out.push(b'\n');
    }
    out
}

/// What `gtb solve` writes: the plans file, or the release's inference records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SolveFormat {
    /// `plans.jsonl`: one line per task (docs/PLANS.md)
    #[default]
    Plans,
    /// the release's inference records, which its `multi_eval` reads (docs/PLANS.md)
    Official,
}

#[derive(Debug, Clone, Default)]
pub struct SolveOptions {
    pub tasks: PathBuf,
    pub out: PathBuf,
    pub format: SolveFormat,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SolveSummary {
    pub tasks: usize,
    pub solved: usize,
    /// tasks without a witness, proven infeasible
    pub infeasible: usize,
    /// tasks without a witness whose search ran out (no proof either way)
    pub exhausted: usize,
    /// (task_id, verdict, reason) of tasks without a witness
    pub unsolved: Vec<(String, String, String)>,
    pub figures: Figures,
}

impl SolveSummary {
    pub fn of(tasks: &[Task], lines: &[PlanLine]) -> SolveSummary {
        let verdict = |v: &str| {
            lines
                .iter()
                .filter(|l| l.verdict.as_deref() == Some(v))
                .count()
        };
        SolveSummary {
            tasks: tasks.len(),
            solved: lines.iter().filter(|l| l.plan.is_some()).count(),
            infeasible: verdict("infeasible"),
            exhausted: verdict("search_exhausted"),
            unsolved: lines
                .iter()
                .filter_map(|l| {
                    let (v, r) = (l.verdict.clone()?, l.reason.clone()?);
                    Some((l.task_id.clone(), v, r))
                })
                .collect(),
            figures: Figures::of(tasks, lines),
        }
    }
}

/// `gtb solve`: witness plans for a task file, as a plans file or as inference records.
pub fn solve_file(cfg: &gtb_core::config::Config, opts: &SolveOptions) -> Result<SolveSummary> {
    let res = super::load_resources(cfg)?;
    let db = gtb_score::PoiDb::from_resources(&res);
    let solver = Solver::new(&res, &db);
    let tasks = read_tasks(&opts.tasks)?;
    let lines = solve_tasks(&solver, &tasks);
    let bytes = match opts.format {
        SolveFormat::Plans => plans_bytes(&lines),
        SolveFormat::Official => crate::official::records_bytes(&tasks, &lines)?,
    };
    gtb_core::digest::write_atomic(&opts.out, &bytes)?;
    Ok(SolveSummary::of(&tasks, &lines))
}

/// Reference figures of a set of witnesses, by difficulty (the audit's "reference utility").
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Figures {
    /// difficulty → figures; "all" for the whole file
    pub by_difficulty: BTreeMap<String, ClassFigures>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ClassFigures {
    pub tasks: usize,
    pub with_plan: usize,
    /// means over the tasks with a plan
    pub group_utility: f64,
    pub per_user_average: f64,
    pub fairness: f64,
    pub upper_bound: f64,
    /// shares of the tasks with a plan
    pub with_compromises: f64,
    pub with_subgroups: f64,
    /// hotel nights and meals of the plans, and the shares of them at stand-ins
    pub hotels: usize,
    pub meals: usize,
    pub hotel_stand_in_share: f64,
    pub meal_stand_in_share: f64,
    pub stand_in_share: f64,
}

/// The witness figures' samples of a split's accepted slots in slot order (difficulty and
/// sample), taken while validate holds the witness lines: publishing tallies them in the
/// published order (`SlotSamples::figures`) instead of reading the plans file back (1.3 GB
/// at 100,000 tasks, about 2.5 s of a build).
#[derive(Default)]
pub struct SlotSamples(Vec<(String, Option<Sample>)>);

impl SlotSamples {
    /// The next slot's accepted task's difficulty and its witness line.
    pub fn push(&mut self, difficulty: &str, line: &PlanLine) {
        self.0.push((difficulty.to_string(), Sample::of(line)));
    }

    /// How many slots.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The figures of the slots in `order` (the published file's: the slot at each place), as
    /// reading the published plans back tallies them.
    pub(crate) fn figures(&self, order: &[usize]) -> Figures {
        let mut tally = FigureTally::default();
        for &slot in order {
            let (difficulty, sample) = &self.0[slot];
            tally.add_sample(difficulty, *sample);
        }
        tally.finish()
    }
}

/// What one witness line contributes to the figures.
#[derive(Default, Clone, Copy)]
pub struct Sample {
    utility: f64,
    per_user: f64,
    fairness: f64,
    bound: f64,
    compromises: bool,
    subgroups: bool,
    /// hotels, hotel stand-ins, meals, meal stand-ins
    venues: [usize; 4],
}

impl Sample {
    fn of(l: &PlanLine) -> Option<Sample> {
        let s = l.scores.as_ref()?;
        Some(Sample::of_scores(s, !l.compromises.is_empty()))
    }

    /// A line's sample from its `scores` and whether it makes compromises.
    pub(crate) fn of_scores(s: &Value, compromises: bool) -> Sample {
        let f = |k: &str| s.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let v = |k: &str| s["venues"].get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
        Sample {
            utility: f("group_utility"),
            per_user: f("per_user_average"),
            fairness: f("fairness"),
            bound: f("upper_bound"),
            compromises,
            subgroups: f("split_penalty") > 0.0,
            venues: [
                v("hotels"),
                v("hotel_stand_ins"),
                v("meals"),
                v("meal_stand_ins"),
            ],
        }
    }
}

/// A share rounded to 4 places (0 of nothing is 0).
fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 / whole as f64 * 10_000.0).round() / 10_000.0
    }
}

impl ClassFigures {
    fn of(tasks: usize, v: &[Sample]) -> ClassFigures {
        let m = v.len().max(1) as f64;
        // a sum that starts at +0.0 (an empty f64 sum is -0.0, shown as "-0.00")
        let mean = |g: fn(&Sample) -> f64| {
            gtb_score::utility::round2(v.iter().map(g).fold(0.0, |a, x| a + x) / m)
        };
        let sum = |k: usize| v.iter().map(|s| s.venues[k]).sum::<usize>();
        let (hotels, meals) = (sum(0), sum(2));
        ClassFigures {
            tasks,
            with_plan: v.len(),
            group_utility: mean(|x| x.utility),
            per_user_average: mean(|x| x.per_user),
            fairness: mean(|x| x.fairness),
            upper_bound: mean(|x| x.bound),
            with_compromises: mean(|x| f64::from(u8::from(x.compromises))),
            with_subgroups: mean(|x| f64::from(u8::from(x.subgroups))),
            hotels,
            meals,
            hotel_stand_in_share: share(sum(1), hotels),
            meal_stand_in_share: share(sum(3), meals),
            stand_in_share: share(sum(1) + sum(3), hotels + meals),
        }
    }
}

/// The figures taken line by line (a split's plans are streamed, never held whole).
#[derive(Default)]
pub struct FigureTally {
    counts: BTreeMap<String, usize>,
    samples: BTreeMap<String, Vec<Sample>>,
}

impl FigureTally {
    /// One task of a difficulty class, and its plans-file line when it has one.
    pub fn add(&mut self, difficulty: &str, line: Option<&PlanLine>) {
        self.add_sample(difficulty, line.and_then(Sample::of));
    }

    /// One task of a difficulty class, and its line's sample when it has one.
    pub(crate) fn add_sample(&mut self, difficulty: &str, sample: Option<Sample>) {
        for k in [difficulty, "all"] {
            *self.counts.entry(k.to_string()).or_default() += 1;
            if let Some(s) = &sample {
                self.samples.entry(k.to_string()).or_default().push(*s);
            }
        }
    }

    pub fn finish(mut self) -> Figures {
        let by_difficulty = self
            .counts
            .into_iter()
            .map(|(k, n)| {
                let v = self.samples.remove(&k).unwrap_or_default();
                (k, ClassFigures::of(n, &v))
            })
            .collect();
        Figures { by_difficulty }
    }
}

impl Figures {
    pub fn of(tasks: &[Task], lines: &[PlanLine]) -> Figures {
        let by_id: IndexMap<&str, &PlanLine> =
            lines.iter().map(|l| (l.task_id.as_str(), l)).collect();
        let mut tally = FigureTally::default();
        for t in tasks {
            tally.add(&t.difficulty_type, by_id.get(t.task_id.as_str()).copied());
        }
        tally.finish()
    }

    /// A Markdown table, difficulties in the release's order.
    pub fn to_markdown(&self) -> String {
        let mut s = String::from(
            "| difficulty | tasks | with plan | group utility | per member | fairness | upper bound | with compromises | with subgroups | stand-in hotels | stand-in meals |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for k in ["easy", "medium", "hard", "all"] {
            if let Some(c) = self.by_difficulty.get(k) {
                s.push_str(&format!(
                    "| {k} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}% | {:.1}% | {:.1}% of {} | {:.1}% of {} |\n",
                    c.tasks,
                    c.with_plan,
                    c.group_utility,
                    c.per_user_average,
                    c.fairness,
                    c.upper_bound,
                    c.with_compromises * 100.0,
                    c.with_subgroups * 100.0,
                    c.hotel_stand_in_share * 100.0,
                    c.hotels,
                    c.meal_stand_in_share * 100.0,
                    c.meals
                ));
            }
        }
        s
    }
}
