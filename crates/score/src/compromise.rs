//! Applying compromises to the members' preferences, as the release's `CompromiseTracker`
//! does: the dotted path is relative to the member's `preference`; garbled segments such as
//! `global_constraints_xxx` are cut back and adjacent duplicates collapsed; a path that does not
//! resolve is retried under `global_constraints.` and then `city_specific_preferences.`; the
//! value replaces the field; a member takes at most two compromises.

use gtb_plan::Compromise;
use indexmap::IndexMap;
use serde_json::Value;

/// Compromises a member may make.
pub const MAX_PER_USER: usize = 2;

/// `_normalize_field_path`: garbled compound segments are cut back to the field names of
/// `gtb_core::prefs`, and adjacent duplicates collapsed.
pub fn normalize_path(path: &str) -> String {
    let canonical = gtb_core::prefs::compound_segments();
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('.') {
        let fixed = canonical
            .iter()
            .find(|c| seg.len() > c.len() + 1 && seg.starts_with(&format!("{c}_")))
            .copied()
            .unwrap_or(seg);
        if out.last() != Some(&fixed) {
            out.push(fixed);
        }
    }
    out.join(".")
}

/// `_set_by_path`: walk existing objects, then set the leaf (which may be new).
fn set_by_path(root: &mut Value, path: &str, value: &Value) -> bool {
    let segs: Vec<&str> = path.split('.').collect();
    let (leaf, parents) = segs
        .split_last()
        .expect("split yields one segment at least");
    let mut cur = root;
    for s in parents {
        match cur.as_object_mut().and_then(|o| o.get_mut(*s)) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    match cur.as_object_mut() {
        Some(o) => {
            o.insert(leaf.to_string(), value.clone());
            true
        }
        None => false,
    }
}

/// What happened to one compromise.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Applied {
    pub user: String,
    /// the path that took effect (after repair), or the path as given when it failed
    pub path: String,
    pub applied: bool,
    /// why it did not apply
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Apply compromises in order to `prefs` (member → `preference`).
pub fn apply(prefs: &mut IndexMap<String, Value>, compromises: &[Compromise]) -> Vec<Applied> {
    let mut counts: IndexMap<String, usize> = IndexMap::new();
    let mut out = Vec::new();
    for c in compromises {
        let fail = |why: String| Applied {
            user: c.user.clone(),
            path: c.path.clone(),
            applied: false,
            problem: Some(why),
        };
        let Some(root) = prefs.get_mut(&c.user) else {
            out.push(fail(format!("{} is not a member of the task", c.user)));
            continue;
        };
        let n = counts.entry(c.user.clone()).or_insert(0);
        if *n >= MAX_PER_USER {
            out.push(fail(format!(
                "{} already made {MAX_PER_USER} compromises",
                c.user
            )));
            continue;
        }
        let path = normalize_path(&c.path);
        let resolved = if set_by_path(root, &path, &c.value) {
            Some(path.clone())
        } else {
            ["global_constraints.", "city_specific_preferences."]
                .iter()
                .filter(|p| !path.starts_with(*p))
                .map(|p| format!("{p}{path}"))
                .find(|cand| set_by_path(root, cand, &c.value))
        };
        match resolved {
            Some(p) => {
                *n += 1;
                out.push(Applied {
                    user: c.user.clone(),
                    path: p,
                    applied: true,
                    problem: None,
                });
            }
            None => out.push(fail(format!(
                "path {:?} does not resolve in the preference of {}",
                c.path, c.user
            ))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairable_segments_are_the_releases() {
        let mut ours = gtb_core::prefs::compound_segments();
        ours.sort();
        let mut release = vec![
            "global_constraints",
            "city_specific_preferences",
            "hotel_preference",
            "category_pref",
            "must_visit",
            "reject_visit",
            "must_eat",
            "prefer_eat",
            "avoid_eat",
            "reject_eat",
            "max_poi_per_day",
            "max_active_hours",
            "avg_budget",
        ];
        release.sort();
        assert_eq!(ours, release);
    }
    use serde_json::json;

    #[test]
    fn repairs_and_cap() {
        assert_eq!(
            normalize_path("global_constraints.hotel_preference.hotel_preference.prefer"),
            "global_constraints.hotel_preference.prefer"
        );
        assert_eq!(
            normalize_path("city_specific_preferences_specific_preferences.西安市.food.must_eat"),
            "city_specific_preferences.西安市.food.must_eat"
        );
        let mut prefs = IndexMap::new();
        prefs.insert(
            "User1".to_string(),
            json!({"global_constraints": {"avg_budget": 1500, "hotel_preference": {"prefer": []}},
                   "city_specific_preferences": {"西安市": {"food": {"must_eat": ["x"]}}}}),
        );
        let c = |path: &str, value: Value| Compromise {
            user: "User1".into(),
            path: path.into(),
            value,
        };
        let r = apply(
            &mut prefs,
            &[
                c("hotel_preference.prefer", json!(["经济型酒店"])),
                c("西安市.food.must_eat", json!([])),
                c("global_constraints.avg_budget", json!(2000)),
            ],
        );
        assert_eq!(r[0].path, "global_constraints.hotel_preference.prefer");
        assert_eq!(r[1].path, "city_specific_preferences.西安市.food.must_eat");
        assert!(r[0].applied && r[1].applied && !r[2].applied);
        let user1 = &prefs["User1"];
        assert_eq!(
            user1["global_constraints"]["hotel_preference"]["prefer"],
            json!(["经济型酒店"])
        );
        assert_eq!(
            user1["city_specific_preferences"]["西安市"]["food"]["must_eat"],
            json!([])
        );
        // the third one hit the cap: the budget is unchanged
        assert_eq!(user1["global_constraints"]["avg_budget"], json!(1500));
    }

    /// The release sets a one-segment path on the preference root itself (its `_set_by_path`
    /// succeeds there), so a bare `avg_budget` counts as a compromise yet changes no budget.
    #[test]
    fn bare_leaf_lands_on_the_root_as_in_the_release() {
        let mut prefs = IndexMap::new();
        prefs.insert(
            "User1".to_string(),
            json!({"global_constraints": {"avg_budget": 1500}}),
        );
        let bare = Compromise {
            user: "User1".into(),
            path: "avg_budget".into(),
            value: json!(1800),
        };
        let r = apply(&mut prefs, &[bare]);
        assert!(r[0].applied);
        assert_eq!(r[0].path, "avg_budget");
        assert_eq!(prefs["User1"]["avg_budget"], json!(1800));
        assert_eq!(
            prefs["User1"]["global_constraints"]["avg_budget"],
            json!(1500)
        );
    }
}
