//! The audit report: one pass over the tasks fills a mergeable [`Tally`] (so that lines can be
//! parsed and counted in parallel), which is turned once into the [`Report`] the renderers read.
//! Every group-by is a `BTreeMap` (sorted, deterministic) or a `HashMap` that is sorted on output.
//!
//! * `tally`: the [`Tally`], its counting (`add`, `merge`) and its finishing into a [`Report`];
//! * `sections`: the parts of a report ([`Table8`], [`UserStats`], [`Diversity`], ...), re-exported
//!   here;
//! * this file: the [`Report`] itself, the constants and the row labels (shared with
//!   [`crate::paper`]).

mod sections;
mod tally;

pub use sections::{
    ArchetypeCount, BadLine, BudgetStats, ConflictStat, Counted, CrossRow, CrossTab, Diversity,
    FieldCount, Table8, UserStats,
};
pub use tally::Tally;

use gtb_core::prefs::LIST_FIELDS;
use gtb_core::task::Task;
use serde::Serialize;

/// Difficulty classes in display order; any other value found in a file is appended.
pub const CLASSES: [&str; 3] = ["easy", "medium", "hard"];

/// The preference list fields of paper Table 9 (their labels), summed over users and cities.
pub const FIELDS: [&str; 14] = {
    let mut out = [""; 14];
    let mut i = 0;
    while i < out.len() {
        out[i] = LIST_FIELDS[i].label;
        i += 1;
    }
    out
};

/// The three must-vs-reject conflict kinds (paper A.6).
pub const CONFLICT_KINDS: [&str; 3] = ["attractions", "food", "transport"];

/// How many items the "top" lists keep.
pub const TOP: usize = 20;
/// How many malformed lines a report or an error lists (all are counted).
pub const BAD_LINES_LISTED: usize = 20;

pub fn size_label(n: usize) -> String {
    format!("N={n}")
}

pub fn cities_label(c: usize) -> String {
    if c == 1 {
        "1 city".to_string()
    } else {
        format!("{c} cities")
    }
}

/// Days band of Table 8: 2-3, 4-5, 6-7 (keyed by the band's first day so that it sorts).
fn days_band(days: Option<u32>) -> u32 {
    match days {
        Some(d @ 2..=7) => d - (d % 2),
        Some(d) => d,
        None => u32::MAX,
    }
}

pub fn days_band_label(band: u32) -> String {
    match band {
        u32::MAX => "unknown days".to_string(),
        2 | 4 | 6 => format!("{}-{} days", band, band + 1),
        d => format!("{d} days"),
    }
}

/// Everything `gtb audit` measures on one task file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub source: String,
    /// sha256 of the file, when known (a build's published audit records the file it describes)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    pub tasks: u64,
    /// malformed lines skipped with --skip-bad (the first few are listed in `skipped`)
    pub skipped_lines: u64,
    pub skipped: Vec<BadLine>,
    pub difficulty: Vec<Counted>,
    pub table8: Table8,
    pub archetypes: Vec<ArchetypeCount>,
    pub fields: Vec<FieldCount>,
    pub users: UserStats,
    pub budget: Option<BudgetStats>,
    pub conflicts: Vec<ConflictStat>,
    pub diversity: Diversity,
}

impl Report {
    /// Build a report from tasks in memory (the file loader does the same in parallel).
    pub fn from_tasks<'a>(source: &str, tasks: impl IntoIterator<Item = &'a Task>) -> Report {
        let mut t = Tally::default();
        for task in tasks {
            t.add(task);
        }
        t.report(source)
    }

    pub fn field(&self, name: &str) -> Option<u64> {
        self.fields
            .iter()
            .find(|f| f.field == name)
            .map(|f| f.count)
    }

    pub fn conflict(&self, kind: &str) -> Option<&ConflictStat> {
        self.conflicts.iter().find(|c| c.kind == kind)
    }
}

/// The group-size row of Table 8 for a task of `group_id` with `n` members: the paper prints
/// group 6-3 (three generations, six members, one a skipped child) under N=5. (A fact of the
/// paper, not of gtb's archetype file, whose `table8_size` tells the sampler the same.)
pub fn table8_size(group_id: &str, n: usize) -> usize {
    if group_id == "6-3" { 5 } else { n }
}
