//! The parts of a [`Report`](super::Report): labelled counts, the Table 8 cross tabs, the
//! per-user, budget, conflict and diversity figures, and the malformed lines listed.

use serde::Serialize;

/// A line of the input that is not a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadLine {
    pub line: usize,
    pub message: String,
}
/// A labelled count; `city` qualifies POIs and city-level clashes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counted {
    pub item: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    pub count: u64,
}

impl Counted {
    pub fn new(item: &str, count: u64) -> Self {
        Counted {
            item: item.to_string(),
            city: None,
            count,
        }
    }
    /// "item" or "item (city)".
    pub fn label(&self) -> String {
        match &self.city {
            Some(c) => format!("{} ({c})", self.item),
            None => self.item.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossRow {
    pub label: String,
    /// one count per class of the table
    pub counts: Vec<u64>,
    pub total: u64,
}

/// Rows × difficulty classes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossTab {
    pub title: String,
    pub classes: Vec<String>,
    pub rows: Vec<CrossRow>,
}

impl CrossTab {
    pub fn class_totals(&self) -> Vec<u64> {
        (0..self.classes.len())
            .map(|i| self.rows.iter().map(|r| r.counts[i]).sum())
            .collect()
    }
    /// Flattened "row · class" cells, in row order, for comparisons.
    pub fn cells(&self) -> Vec<(String, u64)> {
        self.rows
            .iter()
            .flat_map(|r| {
                self.classes
                    .iter()
                    .zip(&r.counts)
                    .map(move |(c, &n)| (format!("{} · {c}", r.label), n))
            })
            .collect()
    }
}

/// Paper Table 8: difficulty class by group size, city count and days band.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table8 {
    pub by_size: CrossTab,
    /// the paper's grouping: Table 8 prints the three-generation family (6-3, six members, one
    /// a skipped child) under N=5, with the five-member groups
    pub by_paper_size: CrossTab,
    pub by_cities: CrossTab,
    pub by_days: CrossTab,
}

impl Table8 {
    pub fn tabs(&self) -> [(&'static str, &CrossTab); 4] {
        [
            ("table8_size", &self.by_size),
            ("table8_size_paper", &self.by_paper_size),
            ("table8_cities", &self.by_cities),
            ("table8_days", &self.by_days),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchetypeCount {
    pub group_id: String,
    pub group_name: String,
    pub tasks: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldCount {
    pub field: String,
    pub count: u64,
    pub per_user: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserStats {
    /// members with a preference table
    pub users: u64,
    pub users_per_task: Option<f64>,
    /// members including skipped children (the N of the query)
    pub members_per_task: Option<f64>,
    /// every list item plus 3 scalars per user
    pub atomic_points: u64,
    pub points_per_user: Option<f64>,
    pub points_min: Option<u64>,
    pub points_max: Option<u64>,
    pub compromisable: u64,
    pub compromisable_share: Option<f64>,
}

/// `avg_budget` over users.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetStats {
    pub users: u64,
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    pub median: f64,
}

/// Tasks with at least one must-vs-reject clash between two different members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConflictStat {
    pub kind: String,
    pub tasks: u64,
    pub share: Option<f64>,
    /// clashing items, by the number of tasks they clash in
    pub top: Vec<Counted>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diversity {
    pub destination_cities: u64,
    pub departure_cities: u64,
    /// sum over tasks of the number of destination cities
    pub destination_visits: u64,
    /// Gini coefficient of the tasks-per-destination counts (observed cities)
    pub destination_gini: Option<f64>,
    /// Shannon entropy of the destination frequencies / ln(distinct cities)
    pub destination_entropy: Option<f64>,
    /// tasks per destination city, most frequent first (all cities)
    pub destinations: Vec<Counted>,
    /// tasks per departure city, most frequent first
    pub departures: Vec<Counted>,
    pub must_visit_mentions: u64,
    pub must_visit_distinct: u64,
    pub top_must_visit: Vec<Counted>,
    /// share of all must_visit mentions taken by the 10 most frequent POIs
    pub top10_must_visit_share: Option<f64>,
}
