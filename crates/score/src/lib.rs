//! Scoring a plan as the release's evaluator does (`evaluation/multi_eval.py`): the compromises
//! are applied to the members' preferences, then the nine validity rules, group utility and
//! fairness are computed on the plan JSON; `hard` adds the witness contract (the trip itself and
//! every member's hard constraints). Any plan in the release's format can be scored, an
//! agent's included: nothing here trusts the plan's shape.

pub mod compromise;
pub mod hard;
pub mod joined;
pub mod pyval;
pub mod record;
pub mod resolver;
pub mod rules;
pub mod split;
pub mod utility;
pub mod validity;

use gtb_core::task::Task;
use gtb_plan::Compromise;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

pub use resolver::PoiDb;

/// Everything `gtb score` says about one plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanScore {
    /// the release's structural gate (`_is_valid_travel_plan`): a non-empty `days` list whose
    /// first day has a non-empty `city_segments` list. Without it nothing else is scored.
    pub is_plan: bool,
    pub validity: validity::Validity,
    pub utility: utility::Utility,
    pub compromises: Vec<compromise::Applied>,
    /// the witness contract (trip, compromises, hard constraints)
    pub violations: Vec<hard::Violation>,
}

/// `_is_valid_travel_plan`.
pub fn is_plan(plan: &Value) -> bool {
    pyval::list(plan, "days")
        .first()
        .is_some_and(|d| d.is_object() && !pyval::list(d, "city_segments").is_empty())
}

/// The members' `preference` objects, in the task's member order.
pub fn preferences(task: &Task) -> IndexMap<String, Value> {
    task.user_preferences
        .iter()
        .map(|(u, e)| {
            (
                u.clone(),
                serde_json::to_value(&e.preference).expect("preferences serialise"),
            )
        })
        .collect()
}

/// The task's member order (`user_names` of the release's runner).
pub fn users(task: &Task) -> Vec<String> {
    task.user_preferences.keys().cloned().collect()
}

/// Score a plan of a task after its compromises.
pub fn score_plan(task: &Task, plan: &Value, compromises: &[Compromise], db: &PoiDb) -> PlanScore {
    let mut prefs = preferences(task);
    let applied = compromise::apply(&mut prefs, compromises);
    score_with(task, plan, &users(task), &prefs, applied, db)
}

/// Score a plan against given effective preferences (an inference record's: the release
/// scores those, whatever compromises led to them), for the members in `users` order;
/// `applied` are the compromises behind them, for the witness contract.
pub fn score_with(
    task: &Task,
    plan: &Value,
    users: &[String],
    prefs: &IndexMap<String, Value>,
    applied: Vec<compromise::Applied>,
    db: &PoiDb,
) -> PlanScore {
    if !is_plan(plan) {
        return PlanScore {
            is_plan: false,
            validity: validity::Validity {
                valid: false,
                issues: vec![validity::Issue {
                    kind: "not_a_plan",
                    day: Value::from(0),
                    message: "no non-empty `days` list whose first day has `city_segments`".into(),
                }],
            },
            utility: utility::Utility::default(),
            compromises: applied,
            violations: Vec::new(),
        };
    }
    let validity = validity::check(plan, users, db);
    let utility = utility::score(plan, prefs, users, db);
    let mut violations = hard::trip(task, plan);
    violations.extend(hard::compromises(task, &applied));
    violations.extend(hard::constraints(plan, prefs, &utility));
    PlanScore {
        is_plan: true,
        validity,
        utility,
        compromises: applied,
        violations,
    }
}
