//! `gtb score TASKS PLANS`: the release's validity, utility and fairness of any plans, plus
//! the witness contract. PLANS is a plans file (`gtb solve`, or an agent's plans converted to
//! its lines) or the release's inference records (what its harness writes and `multi_eval`
//! reads: the plan is extracted from the conversation, the record's effective preferences are
//! the reference, trials of one task are averaged as the release does). `--against` puts a
//! witness plans file beside them: the agent's utility as a share of the witness's.

use anyhow::{Context, Result, bail};
use gtb_core::task::Task;
use gtb_plan::PlanLine;
use gtb_score::record::{Outcome, Record, is_record};
use gtb_score::{PlanScore, PoiDb, score_plan, score_with};
use indexmap::IndexMap;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// credit stand-in labels with the category they name (NOT the release's scoring)
    pub credit_stand_ins: bool,
    /// a witness plans file to compare with
    pub against: Option<PathBuf>,
}

/// One trial of a task: a plans-file line, or one inference record.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub trial_id: i64,
    /// the plan's scores; `None` when the trial has no scored plan (see `error`)
    pub score: Option<PlanScore>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One task's result in a score report.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub task_id: String,
    pub difficulty: String,
    pub trials: Vec<Trial>,
    /// why there is no trial at all
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// the release's averages over the trials with a scored plan (`None`: no such trial)
    pub valid_ratio: Option<f64>,
    pub per_user_average: Option<f64>,
    pub fairness: Option<f64>,
    /// `--against`: the witness's per-member utility
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness_per_user: Option<f64>,
}

impl Scored {
    /// The first trial's scores (a plans file has one trial per task).
    pub fn score(&self) -> Option<&PlanScore> {
        self.trials.first().and_then(|t| t.score.as_ref())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ScoreReport {
    /// `plans` (a plans file) or `records` (the release's inference records)
    pub source: &'static str,
    /// false with `--credit-stand-ins` (`--world`): scored against a split's world table, in
    /// which stand-in labels count with their category (the release's evaluator does the same
    /// with that table; with a table of real venues only it gives them nothing)
    pub release_scoring: bool,
    pub tasks: usize,
    /// trials with a plan, and how they fared
    pub plans: usize,
    pub valid: usize,
    pub invalid: usize,
    /// plans that break the witness contract (trip, compromises, hard constraints)
    pub breaking: usize,
    /// tasks with lines or records but no scored plan, and tasks with none
    pub without_plan: usize,
    pub missing: usize,
    /// records or lines of tasks the task file does not have
    pub unknown_tasks: Vec<String>,
    pub summary: BTreeMap<String, ScoreSummary>,
    pub results: Vec<Scored>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ScoreSummary {
    /// tasks the file has lines or records of
    pub tasks: usize,
    pub plans: usize,
    /// means over those tasks, one without a scored plan counting 0 (the release's summary)
    pub valid_ratio: f64,
    pub group_utility_per_user: f64,
    pub fairness: f64,
    /// `--against`: the witnesses' per-member utility (same rule), and the share of it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness_per_user: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of_witness: Option<f64>,
}

/// Read a plans file: one JSON object per line with `task_id` and `plan`.
pub fn read_plans(path: &Path) -> Result<Vec<PlanLine>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    gtb_core::jsonl::from_jsonl(&bytes, path)
}

/// A file's lines as JSON values, naming the line of a malformed one.
fn read_values(path: &Path) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a JSON line", path.display(), n + 1))?;
        if !v.is_object() {
            bail!("{}:{}: not a JSON object", path.display(), n + 1);
        }
        out.push(v);
    }
    Ok(out)
}

/// The trials of each task: (task id, trial) in file order.
type Trials = Vec<(String, Trial)>;

/// Score plans-file lines: one trial per line.
fn plan_trials(tasks: &IndexMap<&str, &Task>, lines: &[PlanLine], db: &PoiDb) -> Trials {
    lines
        .par_iter()
        .map(|l| {
            let trial = match (tasks.get(l.task_id.as_str()), &l.plan) {
                (Some(t), Some(p)) if !p.is_null() => Trial {
                    trial_id: 0,
                    score: Some(score_plan(t, p, &l.compromises, db)),
                    error: None,
                },
                _ => Trial {
                    trial_id: 0,
                    score: None,
                    error: Some(l.reason.clone().unwrap_or_else(|| "no plan".into())),
                },
            };
            (l.task_id.clone(), trial)
        })
        .collect()
}

/// Score inference records as `multi_eval` does: the record's effective preferences and
/// member order; its applied compromises for the witness contract.
fn record_trials(tasks: &IndexMap<&str, &Task>, records: &[Record], db: &PoiDb) -> Trials {
    records
        .par_iter()
        .map(|r| {
            let scored = match (tasks.get(r.task_id.as_str()), &r.outcome) {
                (Some(t), Outcome::Plan(plan)) => {
                    let users = r.user_names.clone().unwrap_or_else(|| gtb_score::users(t));
                    let mut scratch = gtb_score::preferences(t);
                    let applied = gtb_score::compromise::apply(&mut scratch, &r.compromises);
                    Some(score_with(t, plan, &users, &r.effective, applied, db))
                }
                _ => None,
            };
            let error = match (&scored, r.outcome.error()) {
                (None, Some(e)) => Some(e.to_string()),
                (None, None) => Some("the task is not in the task file".to_string()),
                _ => None,
            };
            let trial = Trial {
                trial_id: r.trial_id,
                score: scored,
                error,
            };
            (r.task_id.clone(), trial)
        })
        .collect()
}

/// The release's averages over a task's trials with a scored plan (`_average_trial_results`:
/// not rounded; the summary rounds).
fn averages(trials: &[Trial]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let scored: Vec<&PlanScore> = trials.iter().filter_map(|t| t.score.as_ref()).collect();
    if scored.is_empty() {
        return (None, None, None);
    }
    let n = scored.len() as f64;
    let mean =
        |f: &dyn Fn(&PlanScore) -> f64| scored.iter().map(|s| f(s)).fold(0.0, |a, x| a + x) / n;
    (
        Some(mean(&|s| {
            f64::from(u8::from(s.is_plan && s.validity.valid))
        })),
        Some(mean(&|s| s.utility.per_user_average_score)),
        Some(mean(&|s| s.utility.fairness)),
    )
}

/// Score trials against their tasks; `witness` holds the witnesses' per-member utility.
fn report(
    source: &'static str,
    tasks: &[Task],
    trials: Trials,
    witness: Option<&IndexMap<String, f64>>,
) -> ScoreReport {
    let known: std::collections::HashSet<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
    let mut by_task: IndexMap<String, Vec<Trial>> = IndexMap::new();
    let mut unknown_tasks = Vec::new();
    for (id, trial) in trials {
        if !known.contains(id.as_str()) && !unknown_tasks.contains(&id) {
            unknown_tasks.push(id.clone());
        }
        by_task.entry(id).or_default().push(trial);
    }
    let results: Vec<Scored> = tasks
        .iter()
        .map(|t| {
            let trials = by_task.shift_remove(&t.task_id).unwrap_or_default();
            let (valid_ratio, per_user_average, fairness) = averages(&trials);
            Scored {
                task_id: t.task_id.clone(),
                difficulty: t.difficulty_type.clone(),
                reason: trials
                    .is_empty()
                    .then(|| "no plan line or record for this task".to_string()),
                trials,
                valid_ratio,
                per_user_average,
                fairness,
                witness_per_user: witness.map(|w| w.get(&t.task_id).copied().unwrap_or(0.0)),
            }
        })
        .collect();
    let scored = || {
        results
            .iter()
            .flat_map(|r| r.trials.iter().filter_map(|t| t.score.as_ref()))
    };
    ScoreReport {
        source,
        release_scoring: true,
        tasks: tasks.len(),
        plans: scored().count(),
        valid: scored().filter(|s| s.is_plan && s.validity.valid).count(),
        invalid: scored()
            .filter(|s| !(s.is_plan && s.validity.valid))
            .count(),
        breaking: scored().filter(|s| !s.violations.is_empty()).count(),
        without_plan: results
            .iter()
            .filter(|r| !r.trials.is_empty() && r.valid_ratio.is_none())
            .count(),
        missing: results.iter().filter(|r| r.trials.is_empty()).count(),
        unknown_tasks,
        summary: summarise(&results),
        results,
    }
}

/// The release's summary by difficulty (`_compute_summary`): means over the tasks the file has
/// lines or records of, a task without a scored plan counting 0. Tasks of the task file it
/// does not mention are left out, as the release never sees them (`missing` counts them).
fn summarise(results: &[Scored]) -> BTreeMap<String, ScoreSummary> {
    let mut summary: BTreeMap<String, ScoreSummary> = BTreeMap::new();
    for r in results.iter().filter(|r| !r.trials.is_empty()) {
        for k in [r.difficulty.clone(), "all".to_string()] {
            let s = summary.entry(k).or_default();
            s.tasks += 1;
            s.plans += usize::from(r.valid_ratio.is_some());
            s.valid_ratio += r.valid_ratio.unwrap_or(0.0);
            s.group_utility_per_user += r.per_user_average.unwrap_or(0.0);
            s.fairness += r.fairness.unwrap_or(0.0);
            if let Some(w) = r.witness_per_user {
                *s.witness_per_user.get_or_insert(0.0) += w;
            }
        }
    }
    for s in summary.values_mut() {
        let n = s.tasks.max(1) as f64;
        let round = gtb_score::utility::round2;
        s.valid_ratio = round(s.valid_ratio / n);
        s.group_utility_per_user = round(s.group_utility_per_user / n);
        s.fairness = round(s.fairness / n);
        s.witness_per_user = s.witness_per_user.map(|w| round(w / n));
        s.share_of_witness = s
            .witness_per_user
            .filter(|w| *w > 0.0)
            .map(|w| round(s.group_utility_per_user / w));
    }
    summary
}

/// Score plan lines against their tasks.
pub fn score_lines(tasks: &[Task], lines: &[PlanLine], db: &PoiDb) -> ScoreReport {
    let by_id: IndexMap<&str, &Task> = tasks.iter().map(|t| (t.task_id.as_str(), t)).collect();
    report("plans", tasks, plan_trials(&by_id, lines, db), None)
}

/// Score a plans file or a file of inference records (told apart by their first line).
fn score_any(
    tasks: &[Task],
    path: &Path,
    db: &PoiDb,
    witness: Option<&IndexMap<String, f64>>,
) -> Result<ScoreReport> {
    let by_id: IndexMap<&str, &Task> = tasks.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let values = read_values(path)?;
    if values.first().is_some_and(is_record) {
        let records = values
            .iter()
            .enumerate()
            .map(|(n, v)| {
                Record::from_value(v)
                    .map_err(|e| anyhow::anyhow!("{}: record {}: {e}", path.display(), n + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(report(
            "records",
            tasks,
            record_trials(&by_id, &records, db),
            witness,
        ));
    }
    let lines = read_plans(path)?;
    Ok(report(
        "plans",
        tasks,
        plan_trials(&by_id, &lines, db),
        witness,
    ))
}

/// The witnesses' per-member utility by task, scored with the same table.
fn witness_utilities(tasks: &[Task], path: &Path, db: &PoiDb) -> Result<IndexMap<String, f64>> {
    let lines = read_plans(path)?;
    let r = score_lines(tasks, &lines, db);
    Ok(r.results
        .iter()
        .filter_map(|s| Some((s.task_id.clone(), s.per_user_average?)))
        .collect())
}

/// `gtb score`: the report and its rendering; written into `out` when given.
pub fn score_file(
    cfg: &gtb_core::config::Config,
    opts: &ScoreOptions,
) -> Result<(ScoreReport, String)> {
    let res = super::load_resources(cfg)?;
    let db = if opts.credit_stand_ins {
        PoiDb::with_stand_ins(&res)
    } else {
        PoiDb::from_resources(&res)
    };
    let tasks = super::solve::read_tasks(&opts.tasks)?;
    let witness = match &opts.against {
        Some(p) => Some(witness_utilities(&tasks, p, &db)?),
        None => None,
    };
    let mut report = score_any(&tasks, &opts.plans, &db, witness.as_ref())?;
    report.release_scoring = !opts.credit_stand_ins;
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

/// `x.xx`, or `–` when absent.
fn opt2(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

impl ScoreReport {
    fn headline(&self) -> String {
        let scoring = if self.release_scoring {
            "Scored as the release does (names resolve through the POI table of real venues; stand-ins get nothing)."
        } else {
            "Scored as the release does against the split's world table (poi2category/all_poi_by_city.json: real venues and modelled stand-ins under the category they name; --credit-stand-ins); against a table of real venues only, stand-ins get nothing."
        };
        let unknown = if self.unknown_tasks.is_empty() {
            String::new()
        } else {
            format!(
                " {} plan line(s) or record(s) name tasks the task file does not have: {}.",
                self.unknown_tasks.len(),
                self.unknown_tasks.join(", ")
            )
        };
        format!(
            "# Plan scores\n\n{scoring}\n\nFrom {}: {} tasks, {} plans: {} valid, {} invalid, {} breaking the witness contract; {} tasks with lines but no scored plan, {} tasks without a line.{unknown}\n\n",
            self.source,
            self.tasks,
            self.plans,
            self.valid,
            self.invalid,
            self.breaking,
            self.without_plan,
            self.missing
        )
    }

    fn summary_table(&self) -> String {
        let against = self.summary.values().any(|s| s.witness_per_user.is_some());
        let mut s = String::from(
            "| difficulty | tasks | plans | valid ratio | utility per member | fairness |",
        );
        s.push_str(if against {
            " witness per member | share of witness |\n|---|---|---|---|---|---|---|---|\n"
        } else {
            "\n|---|---|---|---|---|---|\n"
        });
        for k in ["easy", "medium", "hard", "all"] {
            let Some(x) = self.summary.get(k) else {
                continue;
            };
            s.push_str(&format!(
                "| {k} | {} | {} | {:.2} | {:.2} | {:.2} |",
                x.tasks, x.plans, x.valid_ratio, x.group_utility_per_user, x.fairness
            ));
            if against {
                s.push_str(&format!(
                    " {} | {} |",
                    opt2(x.witness_per_user),
                    x.share_of_witness
                        .map_or_else(|| "–".into(), |v| format!("{:.0}%", v * 100.0))
                ));
            }
            s.push('\n');
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        let mut s = self.headline();
        s.push_str(&self.summary_table());
        s.push_str("\n| task | difficulty | trials | valid | issues | utility | per member | fairness | split | contract |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            let Some(sc) = r.score() else {
                let why = r
                    .trials
                    .first()
                    .and_then(|t| t.error.as_deref())
                    .or(r.reason.as_deref())
                    .unwrap_or("");
                s.push_str(&format!(
                    "| {} | {} | {} | – | – | – | – | – | – | {why} |\n",
                    r.task_id,
                    r.difficulty,
                    r.trials.len()
                ));
                continue;
            };
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
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.task_id,
                r.difficulty,
                r.trials.len(),
                opt2(r.valid_ratio),
                if kinds.is_empty() {
                    "0".into()
                } else {
                    kinds.join(", ")
                },
                sc.utility.total_score,
                opt2(r.per_user_average),
                opt2(r.fairness),
                sc.utility.split_penalty,
                contract
            ));
        }
        s
    }
}

/// The scoring table in the release's `all_poi_by_city.json` layout
/// (`gtb_score::resolver::release_table`).
pub use gtb_score::resolver::release_table as poi_table_json;

/// `gtb poi-table`: write the scoring table of the configured resources (or store) in the
/// release's layout (`world`: the table of a split's world, with the stand-ins); returns the
/// numbers of cities and POIs.
pub fn write_poi_table(
    cfg: &gtb_core::config::Config,
    out: &Path,
    world: bool,
) -> Result<(usize, usize)> {
    let res = super::load_resources(cfg)?;
    let db = if world {
        PoiDb::with_stand_ins(&res)
    } else {
        PoiDb::from_resources(&res)
    };
    let (bytes, cities, pois) = poi_table_json(&db);
    gtb_core::digest::write_atomic(out, &bytes)?;
    Ok((cities, pois))
}
