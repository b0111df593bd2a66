//! Check `scalars`: every member's avg_budget and intensity lie within the plausible ranges of
//! `[validate]` (taken from the release: 550..10,500 CNY, 2..4 sights and 6..10 active hours a
//! day; an intensity of 0, the release's "no limit", too). A budget of 100,000 is no preference
//! a traveller states; the LLM's schema carries the same bounds, and its replies are checked by
//! [`out_of_range`] too.

use super::{Mode, Outcome, Validator, finding};
use gtb_core::config::Validate;
use gtb_core::prefs::Scalar;
use gtb_core::task::{Preference, Task};

/// The scalars of a table outside their plausible range: (scalar, value). An intensity of 0 is
/// the release's "no limit" (its scorer skips the check), so it is plausible too.
pub fn out_of_range(ranges: &Validate, p: &Preference) -> Vec<(Scalar, u32)> {
    Scalar::ALL
        .iter()
        .map(|&s| (s, s.get(&p.global_constraints)))
        .filter(|&(s, v)| !(ranges.scalar_range(s).contains(&v) || no_limit(s, v)))
        .collect()
}

fn no_limit(s: Scalar, v: u32) -> bool {
    v == 0 && s != Scalar::AvgBudget
}

pub(super) fn check(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    let ranges = &v.cfg.validate;
    for (u, e) in &t.user_preferences {
        for (s, value) in out_of_range(ranges, &e.preference) {
            let r = ranges.scalar_range(s);
            out.problems.push(finding(
                "scalars",
                t,
                u,
                "",
                &format!("global_constraints.{}", s.path()),
                &value.to_string(),
                format!(
                    "{value} is outside the plausible range {}..{} ([validate] {})",
                    r.start(),
                    r.end(),
                    s.path().rsplit('.').next().unwrap_or_default()
                ),
            ));
        }
    }
}
