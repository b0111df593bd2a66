//! Check `strategies`: the tables follow their archetype's generation strategies
//! (task_format.md §2, "Blocks that share preferences").
//!
//! * A `copy_minor` or `copy_moderate` member shares its reference's global constraints (a
//!   social unit has one budget, transport, intensity and hotel choice).
//! * A `copy_minor` member also shares, per city, its reference's category_pref, prefer_eat
//!   and avoid_eat (couples and family pairs do in the release).
//! * No member's city preferences are another's, item for item: an `independent` or
//!   `copy_moderate` member writes its own. Only a `copy_minor` member, which writes its must
//!   and reject fields beside the weak ones it shares, may agree with its reference on them.
//!
//! The LLM reply checks (`gtb_llm::parse`) run the same [`issues`].

use super::{Mode, Outcome, Validator, finding};
use gtb_core::prefs::ListField;
use gtb_core::task::{Preference, Task};
use gtb_resources::{Archetype, Strategy};

/// A table that does not follow its strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrategyIssue {
    /// a copying member whose global constraints are not its reference's
    Globals { user: String, reference: String },
    /// a copy_minor member whose weak field of a city is not its reference's
    Weak {
        user: String,
        reference: String,
        city: String,
        field: &'static str,
    },
    /// a member whose city preferences are another member's, item for item
    Copies { user: String, other: String },
}

/// The weak fields a copy_minor member inherits, per city.
const WEAK: [ListField; 4] = [
    ListField::CategoryPositive,
    ListField::CategoryNegative,
    ListField::PreferEat,
    ListField::AvoidEat,
];

impl StrategyIssue {
    pub fn user(&self) -> &str {
        match self {
            StrategyIssue::Globals { user, .. }
            | StrategyIssue::Weak { user, .. }
            | StrategyIssue::Copies { user, .. } => user,
        }
    }
    pub fn city(&self) -> &str {
        match self {
            StrategyIssue::Weak { city, .. } => city,
            _ => "",
        }
    }
    pub fn field(&self) -> &str {
        match self {
            StrategyIssue::Globals { .. } => "global_constraints",
            StrategyIssue::Weak { field, .. } => field,
            StrategyIssue::Copies { .. } => "city_specific_preferences",
        }
    }
    /// English, for `gtb validate` and the report.
    pub fn message(&self) -> String {
        match self {
            StrategyIssue::Globals { reference, .. } => format!(
                "the strategy copies {reference}'s global constraints (one social unit), but they differ"
            ),
            StrategyIssue::Weak { reference, .. } => {
                format!("copy_minor shares this field with {reference}, but it differs")
            }
            StrategyIssue::Copies { other, .. } => format!(
                "the city preferences are {other}'s, item for item: each member's must / reject fields are its own"
            ),
        }
    }
    /// Chinese, for the correction turn of an LLM reply.
    pub fn message_zh(&self) -> String {
        match self {
            StrategyIssue::Globals { user, reference } => format!(
                "{user} 与 {reference} 是同一出行单元，global_constraints 必须与 {reference} 完全相同"
            ),
            StrategyIssue::Weak {
                user,
                reference,
                city,
                field,
            } => format!("{user} 在{city}的 {field} 必须与 {reference} 相同（copy_minor 共用）"),
            StrategyIssue::Copies { user, other } => format!(
                "{user} 的 city_specific_preferences 与 {other} 完全相同：每位成员的必去、拒绝、必吃和拒吃要按本人的画像和角色单独决定"
            ),
        }
    }
}

/// The issues of a task's tables (`tables`: user and table, any order) under archetype `a`.
pub fn issues(a: &Archetype, tables: &[(&str, &Preference)]) -> Vec<StrategyIssue> {
    let table = |u: &str| tables.iter().find(|(x, _)| *x == u).map(|(_, p)| *p);
    let mut out = Vec::new();
    for slot in &a.slots {
        let (Some(own), Some(r)) = (table(&slot.user), slot.reference.as_deref()) else {
            continue;
        };
        let Some(reference) = table(r) else { continue };
        let copies = matches!(slot.strategy, Strategy::CopyMinor | Strategy::CopyModerate);
        if copies && own.global_constraints != reference.global_constraints {
            out.push(StrategyIssue::Globals {
                user: slot.user.clone(),
                reference: r.to_string(),
            });
        }
        if slot.strategy == Strategy::CopyMinor {
            for (city, c) in own.city_specific_preferences.iter() {
                let Some(rc) = reference.city_specific_preferences.get(city) else {
                    continue;
                };
                let (g, rg) = (&own.global_constraints, &reference.global_constraints);
                for field in WEAK
                    .iter()
                    .filter(|f| f.get(g, Some(c)) != f.get(rg, Some(rc)))
                {
                    out.push(StrategyIssue::Weak {
                        user: slot.user.clone(),
                        reference: r.to_string(),
                        city: city.clone(),
                        field: field.spec().path,
                    });
                }
            }
        }
    }
    // a copy_minor member writes only its must / reject fields beside its reference's shared
    // ones: the two may agree on them (both must see the landmark); nobody else may
    for (i, (u, p)) in tables.iter().enumerate() {
        let same = tables[..i].iter().find(|(v, q)| {
            !p.city_specific_preferences.is_empty()
                && q.city_specific_preferences == p.city_specific_preferences
                && !a.minor_linked(u, v)
        });
        if let Some((other, _)) = same {
            out.push(StrategyIssue::Copies {
                user: u.to_string(),
                other: other.to_string(),
            });
        }
    }
    out
}

pub(super) fn check(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    let Some(a) = v.res.archetype(&t.metadata.group_id) else {
        return; // the format check names an unknown group
    };
    let tables: Vec<(&str, &Preference)> = t
        .user_preferences
        .iter()
        .map(|(u, e)| (u.as_str(), &e.preference))
        .collect();
    for issue in issues(a, &tables) {
        out.problems.push(finding(
            "strategies",
            t,
            issue.user(),
            issue.city(),
            issue.field(),
            "",
            issue.message(),
        ));
    }
}
