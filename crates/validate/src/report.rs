//! Validation reports: `report.json` (machine-readable) and `report.md` (a readable summary).

use super::{CHECKS, Finding, Outcome, WITNESS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Keep at most this many findings per check in the report (counts stay exact).
const MAX_LISTED: usize = 200;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckStats {
    /// tasks that passed this check untouched
    pub passes: usize,
    /// fixes applied (names snapped, contradictions resolved, members made compromisable)
    pub fixes: usize,
    /// regenerations caused by this check
    pub retries: usize,
    /// tasks dropped (and replaced) because of this check
    pub drops: usize,
    pub findings: Vec<Finding>,
    pub findings_omitted: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drop {
    pub task_id: String,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// tasks generated (first attempts of skeletons, replacements included)
    pub generated: usize,
    pub written: usize,
    pub dropped: usize,
    pub replacements: usize,
    pub checks: BTreeMap<String, CheckStats>,
    pub drops: Vec<Drop>,
    /// sha256 of the task file the published report describes
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_jsonl_sha256: Option<String>,
}

impl Report {
    pub fn new() -> Self {
        let mut r = Report::default();
        for c in CHECKS {
            r.checks.insert(c.to_string(), CheckStats::default());
        }
        r
    }

    fn push(stats: &mut CheckStats, f: &Finding) {
        if stats.findings.len() < MAX_LISTED {
            stats.findings.push(f.clone());
        } else {
            stats.findings_omitted += 1;
        }
    }

    /// Record the final outcome of an accepted task (fixes and passes).
    pub fn accept(&mut self, o: &Outcome) {
        // every check the report lists (`CHECKS`, and `WITNESS` in builds that run it)
        for (c, stats) in self.checks.iter_mut() {
            let fixes: Vec<&Finding> = o.fixes.iter().filter(|f| f.check == c).collect();
            if fixes.is_empty() {
                stats.passes += 1;
            }
            stats.fixes += fixes.len();
            for f in fixes {
                Self::push(stats, f);
            }
        }
    }

    /// Record a failed attempt that led to a regeneration.
    pub fn retry(&mut self, o: &Outcome) {
        for c in unique_checks(&o.problems) {
            self.checks.entry(c.to_string()).or_default().retries += 1;
        }
        for f in &o.problems {
            Self::push(self.checks.entry(f.check.to_string()).or_default(), f);
        }
    }

    /// Record a dropped task with its last problems.
    pub fn drop_task(&mut self, task_id: &str, o: &Outcome) {
        self.dropped += 1;
        for c in unique_checks(&o.problems) {
            self.checks.entry(c.to_string()).or_default().drops += 1;
        }
        self.drops.push(Drop {
            task_id: task_id.to_string(),
            reasons: o.problems.iter().map(|f| f.to_string()).collect(),
        });
    }

    /// Append the report of the slots after this one's (a later shard): the same report as
    /// booking all of their slots in order.
    pub fn merge(&mut self, later: Report) {
        self.generated += later.generated;
        self.written += later.written;
        self.dropped += later.dropped;
        self.replacements += later.replacements;
        for (c, st) in later.checks {
            let mine = self.checks.entry(c).or_default();
            mine.passes += st.passes;
            mine.fixes += st.fixes;
            mine.retries += st.retries;
            mine.drops += st.drops;
            mine.findings_omitted += st.findings_omitted;
            for f in &st.findings {
                Self::push(mine, f);
            }
        }
        self.drops.extend(later.drops);
    }

    /// The checks in the report's order: `CHECKS`, then `WITNESS` when the build ran it.
    fn listed(&self) -> impl Iterator<Item = &'static str> + '_ {
        CHECKS
            .into_iter()
            .chain(Some(WITNESS).filter(|w| self.checks.contains_key(*w)))
    }

    pub fn to_markdown(&self) -> String {
        let mut s = String::from("# Validation report\n\n");
        if let Some(sha) = &self.test_jsonl_sha256 {
            s.push_str(&format!("Describes the task file with sha256 `{sha}`.\n\n"));
        }
        s.push_str(&format!(
            "Generated {} tasks ({} of them replacements): {} written + {} dropped = {}.\n\n",
            self.generated,
            self.replacements,
            self.written,
            self.dropped,
            self.written + self.dropped
        ));
        s.push_str("| check | passes | fixes | retries | drops |\n|---|---:|---:|---:|---:|\n");
        for c in self.listed() {
            let st = &self.checks[c];
            s.push_str(&format!(
                "| {c} | {} | {} | {} | {} |\n",
                st.passes, st.fixes, st.retries, st.drops
            ));
        }
        if !self.drops.is_empty() {
            s.push_str("\n## Dropped tasks\n\n");
            for d in self.drops.iter().take(50) {
                s.push_str(&format!(
                    "- {}: {}\n",
                    d.task_id,
                    d.reasons.first().map(String::as_str).unwrap_or("")
                ));
            }
        }
        for c in self.listed() {
            let st = &self.checks[c];
            if st.findings.is_empty() {
                continue;
            }
            s.push_str(&format!(
                "\n## {c} (first {} of {})\n\n",
                st.findings.len().min(20),
                st.findings.len() + st.findings_omitted
            ));
            for f in st.findings.iter().take(20) {
                s.push_str(&format!("- {f}\n"));
            }
        }
        s
    }
}

fn unique_checks(fs: &[Finding]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = fs.iter().map(|f| f.check).collect();
    v.sort();
    v.dedup();
    v
}
