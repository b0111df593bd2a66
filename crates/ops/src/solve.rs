//! `gtb solve TASKS --out plans.jsonl` (a witness plan per task, or why there is none) and
//! `gtb score TASKS PLANS` (the release's validity, utility and fairness of any plans file,
//! plus the witness contract).

use anyhow::{Context, Result};
use gtb_core::task::Task;
use gtb_plan::{PlanLine, STAND_IN_RULE, StandIns};
use gtb_score::{PlanScore, PoiDb, score_plan};
use gtb_solve::{Solver, Witness};
use indexmap::IndexMap;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Read a task file (JSONL), naming the line of any error.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    gtb_core::jsonl::from_jsonl(&bytes, path)
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
    })
}

/// The plans-file line of one task.
pub fn plan_line(solver: &Solver, task: &Task) -> PlanLine {
    match solver.solve(task) {
        Ok(w) => PlanLine {
            task_id: task.task_id.clone(),
            plan: Some(serde_json::to_value(&w.plan).expect("plans serialise")),
            reason: None,
            scores: Some(scores_json(&w)),
            stand_ins: (!w.stand_ins.is_empty()).then(|| StandIns {
                rule: STAND_IN_RULE.to_string(),
                locations: w.stand_ins.clone(),
            }),
            compromises: w.compromises,
        },
        Err(reason) => PlanLine {
            task_id: task.task_id.clone(),
            plan: None,
            reason: Some(reason),
            compromises: Vec::new(),
            scores: None,
            stand_ins: None,
        },
    }
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

#[derive(Debug, Clone, Default, Serialize)]
pub struct SolveSummary {
    pub tasks: usize,
    pub solved: usize,
    /// (task_id, reason) of tasks without a witness
    pub unsolved: Vec<(String, String)>,
    pub figures: Figures,
}

/// `gtb solve`: witness plans for a task file.
pub fn solve_file(
    cfg: &gtb_core::config::Config,
    tasks: &Path,
    out: &Path,
) -> Result<SolveSummary> {
    let res = super::load_resources(cfg)?;
    let db = PoiDb::from_resources(&res);
    let solver = Solver::new(&res, &db);
    let tasks = read_tasks(tasks)?;
    let lines = solve_tasks(&solver, &tasks);
    gtb_core::digest::write_atomic(out, &plans_bytes(&lines))?;
    Ok(SolveSummary {
        tasks: tasks.len(),
        solved: lines.iter().filter(|l| l.plan.is_some()).count(),
        unsolved: lines
            .iter()
            .filter_map(|l| l.reason.clone().map(|r| (l.task_id.clone(), r)))
            .collect(),
        figures: Figures::of(&tasks, &lines),
    })
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
}

/// What one witness line contributes to the figures.
struct Sample {
    utility: f64,
    per_user: f64,
    fairness: f64,
    bound: f64,
    compromises: bool,
    subgroups: bool,
}

impl Figures {
    pub fn of(tasks: &[Task], lines: &[PlanLine]) -> Figures {
        let by_id: IndexMap<&str, &PlanLine> =
            lines.iter().map(|l| (l.task_id.as_str(), l)).collect();
        let mut acc: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for t in tasks {
            for k in [t.difficulty_type.clone(), "all".to_string()] {
                *counts.entry(k.clone()).or_default() += 1;
                let Some(l) = by_id.get(t.task_id.as_str()) else {
                    continue;
                };
                let Some(s) = &l.scores else {
                    continue;
                };
                let f = |k: &str| s.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                acc.entry(k).or_default().push(Sample {
                    utility: f("group_utility"),
                    per_user: f("per_user_average"),
                    fairness: f("fairness"),
                    bound: f("upper_bound"),
                    compromises: !l.compromises.is_empty(),
                    subgroups: f("split_penalty") > 0.0,
                });
            }
        }
        let mut out = Figures::default();
        for (k, n) in counts {
            let v = acc.remove(&k).unwrap_or_default();
            let m = v.len().max(1) as f64;
            let mean = |g: fn(&Sample) -> f64| {
                gtb_score::utility::round2(v.iter().map(g).sum::<f64>() / m)
            };
            out.by_difficulty.insert(
                k,
                ClassFigures {
                    tasks: n,
                    with_plan: v.len(),
                    group_utility: mean(|x| x.utility),
                    per_user_average: mean(|x| x.per_user),
                    fairness: mean(|x| x.fairness),
                    upper_bound: mean(|x| x.bound),
                    with_compromises: mean(|x| f64::from(u8::from(x.compromises))),
                    with_subgroups: mean(|x| f64::from(u8::from(x.subgroups))),
                },
            );
        }
        out
    }

    /// A Markdown table, difficulties in the release's order.
    pub fn to_markdown(&self) -> String {
        let mut s = String::from(
            "| difficulty | tasks | with plan | group utility | per member | fairness | upper bound | with compromises | with subgroups |\n|---|---|---|---|---|---|---|---|---|\n",
        );
        for k in ["easy", "medium", "hard", "all"] {
            if let Some(c) = self.by_difficulty.get(k) {
                s.push_str(&format!(
                    "| {k} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}% | {:.1}% |\n",
                    c.tasks,
                    c.with_plan,
                    c.group_utility,
                    c.per_user_average,
                    c.fairness,
                    c.upper_bound,
                    c.with_compromises * 100.0,
                    c.with_subgroups * 100.0
                ));
            }
        }
        s
    }
}

// ---- gtb score ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ScoreFormat {
    #[default]
    Md,
    Json,
}

#[derive(Debug, Clone, Default)]
pub struct ScoreOptions {
    pub tasks: PathBuf,
    pub plans: PathBuf,
    pub format: ScoreFormat,
    /// write score.md / score.json into this folder
    pub out: Option<PathBuf>,
}

/// One task's result in a score report.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub task_id: String,
    pub difficulty: String,
    /// the plan's scores; `None` when the line has no plan (see `reason`) or no line exists
    pub score: Option<PlanScore>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScoreReport {
    pub tasks: usize,
    pub plans: usize,
    pub valid: usize,
    pub invalid: usize,
    /// plans that break the witness contract (trip, compromises, hard constraints)
    pub breaking: usize,
    pub without_plan: usize,
    pub missing: usize,
    pub summary: BTreeMap<String, ScoreSummary>,
    pub results: Vec<Scored>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ScoreSummary {
    pub tasks: usize,
    pub plans: usize,
    /// shares and means over all tasks, a task without a valid plan counting 0 (as the
    /// release's summary does)
    pub valid_ratio: f64,
    pub group_utility_per_user: f64,
    pub fairness: f64,
}

/// Read a plans file: one JSON object per line with `task_id` and `plan`.
pub fn read_plans(path: &Path) -> Result<Vec<PlanLine>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    gtb_core::jsonl::from_jsonl(&bytes, path)
}

/// Score plan lines against their tasks.
pub fn score_lines(tasks: &[Task], lines: &[PlanLine], db: &PoiDb) -> ScoreReport {
    let by_id: IndexMap<&str, &PlanLine> = lines.iter().map(|l| (l.task_id.as_str(), l)).collect();
    let results: Vec<Scored> = tasks
        .par_iter()
        .map(|t| {
            let line = by_id.get(t.task_id.as_str());
            let (score, reason) = match line {
                None => (
                    None,
                    Some("no line for this task in the plans file".to_string()),
                ),
                Some(l) => match &l.plan {
                    None | Some(Value::Null) => (
                        None,
                        Some(l.reason.clone().unwrap_or_else(|| "no plan".into())),
                    ),
                    Some(p) => (Some(score_plan(t, p, &l.compromises, db)), None),
                },
            };
            Scored {
                task_id: t.task_id.clone(),
                difficulty: t.difficulty_type.clone(),
                score,
                reason,
            }
        })
        .collect();
    let mut summary: BTreeMap<String, ScoreSummary> = BTreeMap::new();
    for r in &results {
        for k in [r.difficulty.clone(), "all".to_string()] {
            let s = summary.entry(k).or_default();
            s.tasks += 1;
            if let Some(sc) = &r.score {
                s.plans += 1;
                if sc.is_plan && sc.validity.valid {
                    s.valid_ratio += 1.0;
                }
                if sc.is_plan {
                    s.group_utility_per_user += sc.utility.per_user_average_score;
                    s.fairness += sc.utility.fairness;
                }
            }
        }
    }
    for s in summary.values_mut() {
        let n = s.tasks.max(1) as f64;
        s.valid_ratio = gtb_score::utility::round2(s.valid_ratio / n);
        s.group_utility_per_user = gtb_score::utility::round2(s.group_utility_per_user / n);
        s.fairness = gtb_score::utility::round2(s.fairness / n);
    }
    let scored = || results.iter().filter_map(|r| r.score.as_ref());
    ScoreReport {
        tasks: tasks.len(),
        plans: scored().count(),
        valid: scored().filter(|s| s.is_plan && s.validity.valid).count(),
        invalid: scored()
            .filter(|s| !(s.is_plan && s.validity.valid))
            .count(),
        breaking: scored().filter(|s| !s.violations.is_empty()).count(),
        without_plan: results
            .iter()
            .filter(|r| r.score.is_none() && by_id.contains_key(r.task_id.as_str()))
            .count(),
        missing: results
            .iter()
            .filter(|r| !by_id.contains_key(r.task_id.as_str()))
            .count(),
        summary,
        results,
    }
}

impl ScoreReport {
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Plan scores\n\n{} tasks, {} plans: {} valid, {} invalid, {} breaking the witness contract; {} lines without a plan, {} tasks without a line.\n\n",
            self.tasks,
            self.plans,
            self.valid,
            self.invalid,
            self.breaking,
            self.without_plan,
            self.missing
        );
        s.push_str("| difficulty | tasks | plans | valid ratio | utility per member | fairness |\n|---|---|---|---|---|---|\n");
        for k in ["easy", "medium", "hard", "all"] {
            if let Some(x) = self.summary.get(k) {
                s.push_str(&format!(
                    "| {k} | {} | {} | {:.2} | {:.2} | {:.2} |\n",
                    x.tasks, x.plans, x.valid_ratio, x.group_utility_per_user, x.fairness
                ));
            }
        }
        s.push_str("\n| task | difficulty | valid | issues | utility | per member | fairness | split | contract |\n|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            match &r.score {
                Some(sc) => {
                    let kinds: Vec<String> = sc
                        .validity
                        .counts()
                        .iter()
                        .map(|(k, n)| format!("{k}×{n}"))
                        .collect();
                    let contract = if sc.violations.is_empty() {
                        "kept".to_string()
                    } else {
                        sc.violations
                            .iter()
                            .map(|v| format!("{} {}: {}", v.user, v.field, v.message))
                            .collect::<Vec<_>>()
                            .join("; ")
                    };
                    s.push_str(&format!(
                        "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} |\n",
                        r.task_id,
                        r.difficulty,
                        if sc.is_plan && sc.validity.valid {
                            "yes"
                        } else {
                            "no"
                        },
                        if kinds.is_empty() {
                            "0".into()
                        } else {
                            kinds.join(", ")
                        },
                        sc.utility.total_score,
                        sc.utility.per_user_average_score,
                        sc.utility.fairness,
                        sc.utility.split_penalty,
                        contract
                    ));
                }
                None => s.push_str(&format!(
                    "| {} | {} | – | – | – | – | – | – | {} |\n",
                    r.task_id,
                    r.difficulty,
                    r.reason.as_deref().unwrap_or("")
                )),
            }
        }
        s
    }
}

/// `gtb score`: the report and its rendering; written into `out` when given.
pub fn score_file(
    cfg: &gtb_core::config::Config,
    opts: &ScoreOptions,
) -> Result<(ScoreReport, String)> {
    let res = super::load_resources(cfg)?;
    let db = PoiDb::from_resources(&res);
    let tasks = read_tasks(&opts.tasks)?;
    let lines = read_plans(&opts.plans)?;
    let report = score_lines(&tasks, &lines, &db);
    let text = match opts.format {
        ScoreFormat::Md => report.to_markdown(),
        ScoreFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
    };
    if let Some(dir) = &opts.out {
        let name = match opts.format {
            ScoreFormat::Md => "score.md",
            ScoreFormat::Json => "score.json",
        };
        gtb_core::digest::write_atomic(&dir.join(name), text.as_bytes())?;
    }
    Ok((report, text))
}
