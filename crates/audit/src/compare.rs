//! Side-by-side comparison of two audits. Both sides are reduced to a [`Profile`]: named
//! categorical distributions (counts) and named scalars. A task file gives one through
//! [`Report::profile`], the paper's published figures through `paper::profile` (which builds on this module).

use super::report::Report;
use super::stats::{self, ChiSquare};
use serde::Serialize;

/// How a scalar is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// an integer count
    Count,
    /// a fraction in 0..1, shown as a percentage
    Share,
    /// a plain number, two decimals
    Number,
    /// CNY
    Yuan,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scalar {
    pub key: &'static str,
    pub title: &'static str,
    pub unit: Unit,
    pub value: f64,
}

/// A categorical distribution as counts; categories keep their display order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dist {
    pub key: &'static str,
    pub title: &'static str,
    pub cats: Vec<(String, u64)>,
}

/// How far a file's scalar may lie from a reference's figure before it counts as a miss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "by")]
pub enum Tolerance {
    /// within this fraction of the figure, either way (0.05: ±5 %)
    Relative(f64),
    /// within this much of the figure, either way (a share: 0.05 is five points)
    Absolute(f64),
    /// at least the figure (a range's lower end)
    AtLeast,
    /// at most the figure (a range's upper end)
    AtMost,
}

impl Tolerance {
    /// Whether `ours` meets the figure `target`.
    pub fn holds(self, ours: f64, target: f64) -> bool {
        match self {
            Tolerance::Relative(f) => (ours - target).abs() <= f * target.abs(),
            Tolerance::Absolute(d) => (ours - target).abs() <= d,
            Tolerance::AtLeast => ours >= target,
            Tolerance::AtMost => ours <= target,
        }
    }
}

/// A scalar the reference sets as a target, with its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Target {
    pub key: &'static str,
    pub tolerance: Tolerance,
}

/// What can be compared: every distribution and scalar a source provides, and (for the paper)
/// the scalars it sets as targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub label: String,
    pub dists: Vec<Dist>,
    pub scalars: Vec<Scalar>,
    pub targets: Vec<Target>,
}

impl Profile {
    pub fn scalar(&self, key: &str) -> Option<f64> {
        self.scalars.iter().find(|s| s.key == key).map(|s| s.value)
    }
    pub fn dist(&self, key: &str) -> Option<&Dist> {
        self.dists.iter().find(|d| d.key == key)
    }
}

/// Builds a list of scalars, skipping undefined values.
#[derive(Default)]
pub(crate) struct Scalars(pub Vec<Scalar>);

impl Scalars {
    pub fn push(&mut self, key: &'static str, title: &'static str, unit: Unit, value: Option<f64>) {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            self.0.push(Scalar {
                key,
                title,
                unit,
                value,
            });
        }
    }
}

pub const CONFLICT_DISTS: [(&str, &str); 3] = [
    (
        "conflicts_attractions",
        "tasks with an attraction must/reject clash",
    ),
    ("conflicts_food", "tasks with a food must/reject clash"),
    (
        "conflicts_transport",
        "tasks with a transport must/reject clash",
    ),
];
pub const WITH_CONFLICT: &str = "with a clash";
pub const WITHOUT_CONFLICT: &str = "without";

/// How a profile reads a scalar from a report.
type Read = fn(&Report) -> Option<f64>;

/// The scalars of a profile, in the order reports show them: key, title, unit, value (a scalar
/// without a value is left out).
pub(crate) const SCALARS: [(&str, &str, Unit, Read); 18] = [
    ("tasks", "tasks", Unit::Count, |r| Some(r.tasks as f64)),
    ("users", "users with preferences", Unit::Count, |r| {
        Some(r.users.users as f64)
    }),
    ("users_per_task", "users per task", Unit::Number, |r| {
        r.users.users_per_task
    }),
    (
        "atomic_points",
        "atomic preference points",
        Unit::Count,
        |r| Some(r.users.atomic_points as f64),
    ),
    (
        "points_per_user",
        "atomic points per user",
        Unit::Number,
        |r| r.users.points_per_user,
    ),
    (
        "compromisable_share",
        "compromisable users",
        Unit::Share,
        |r| r.users.compromisable_share,
    ),
    ("budget_min", "budget min", Unit::Yuan, |r| {
        r.budget.as_ref().map(|b| b.min as f64)
    }),
    ("budget_max", "budget max", Unit::Yuan, |r| {
        r.budget.as_ref().map(|b| b.max as f64)
    }),
    ("budget_mean", "budget mean", Unit::Yuan, |r| {
        r.budget.as_ref().map(|b| b.mean)
    }),
    ("budget_median", "budget median", Unit::Yuan, |r| {
        r.budget.as_ref().map(|b| b.median)
    }),
    (
        "conflict_share_attractions",
        "conflict share, attractions",
        Unit::Share,
        |r| r.conflict("attractions").and_then(|c| c.share),
    ),
    (
        "conflict_share_food",
        "conflict share, food",
        Unit::Share,
        |r| r.conflict("food").and_then(|c| c.share),
    ),
    (
        "conflict_share_transport",
        "conflict share, transport",
        Unit::Share,
        |r| r.conflict("transport").and_then(|c| c.share),
    ),
    (
        "destination_cities",
        "distinct destination cities",
        Unit::Count,
        |r| Some(r.diversity.destination_cities as f64),
    ),
    (
        "departure_cities",
        "distinct departure cities",
        Unit::Count,
        |r| Some(r.diversity.departure_cities as f64),
    ),
    (
        "destination_gini",
        "Gini of destination frequency",
        Unit::Number,
        |r| r.diversity.destination_gini,
    ),
    (
        "destination_entropy",
        "normalised entropy of destinations",
        Unit::Number,
        |r| r.diversity.destination_entropy,
    ),
    (
        "top10_must_visit_share",
        "share of must_visit held by top-10 POIs",
        Unit::Share,
        |r| r.diversity.top10_must_visit_share,
    ),
];

impl Report {
    /// The comparable view of this report.
    pub fn profile(&self) -> Profile {
        let mut dists = vec![Dist {
            key: "difficulty",
            title: "difficulty class",
            cats: self
                .difficulty
                .iter()
                .map(|c| (c.item.clone(), c.count))
                .collect(),
        }];
        let titles = [
            "Table 8: group size × class",
            "Table 8: group size as the paper groups it × class",
            "Table 8: cities × class",
            "Table 8: days × class",
        ];
        for ((key, tab), title) in self.table8.tabs().into_iter().zip(titles) {
            dists.push(Dist {
                key,
                title,
                cats: tab.cells(),
            });
        }
        dists.push(Dist {
            key: "archetypes",
            title: "Table 5: tasks per archetype",
            cats: self
                .archetypes
                .iter()
                .map(|a| (a.group_id.clone(), a.tasks))
                .collect(),
        });
        dists.push(Dist {
            key: "fields",
            title: "Table 9: preference items per field",
            cats: self
                .fields
                .iter()
                .map(|f| (f.field.clone(), f.count))
                .collect(),
        });
        for (c, (key, title)) in self.conflicts.iter().zip(CONFLICT_DISTS) {
            dists.push(Dist {
                key,
                title,
                cats: vec![
                    (WITH_CONFLICT.to_string(), c.tasks),
                    (WITHOUT_CONFLICT.to_string(), self.tasks - c.tasks),
                ],
            });
        }
        let d = &self.diversity;
        dists.push(Dist {
            key: "destinations",
            title: "tasks per destination city",
            cats: d
                .destinations
                .iter()
                .map(|c| (c.item.clone(), c.count))
                .collect(),
        });
        dists.push(Dist {
            key: "departures",
            title: "tasks per departure city",
            cats: d
                .departures
                .iter()
                .map(|c| (c.item.clone(), c.count))
                .collect(),
        });

        let mut s = Scalars::default();
        for (key, title, unit, read) in SCALARS {
            s.push(key, title, unit, read(self));
        }
        // a task file sets no targets: it is compared with, not held to
        Profile {
            label: self.source.clone(),
            dists,
            scalars: s.0,
            targets: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistRow {
    pub label: String,
    pub ours: u64,
    pub reference: u64,
    pub ours_share: Option<f64>,
    pub reference_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistComparison {
    pub key: &'static str,
    pub title: &'static str,
    pub rows: Vec<DistRow>,
    pub ours_total: u64,
    pub reference_total: u64,
    /// total variation distance between the two share vectors (0 = identical, 1 = disjoint)
    pub tvd: Option<f64>,
    /// chi-square test of homogeneity, when every expected count is at least 5
    pub chi_square: Option<ChiSquare>,
    /// why `chi_square` is absent
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chi_square_note: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalarComparison {
    pub key: &'static str,
    pub title: &'static str,
    pub unit: Unit,
    pub ours: Option<f64>,
    pub reference: Option<f64>,
    /// ours − reference
    pub diff: Option<f64>,
}

/// A reference's target that the file does not meet (or cannot be measured on it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    pub key: &'static str,
    pub title: &'static str,
    pub unit: Unit,
    pub ours: Option<f64>,
    pub target: f64,
    pub tolerance: Tolerance,
}

/// Two profiles side by side, and the reference's targets the file misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub ours: String,
    pub reference: String,
    pub scalars: Vec<ScalarComparison>,
    pub dists: Vec<DistComparison>,
    pub misses: Vec<Miss>,
}

/// The reference's targets that `scalars` miss, in the targets' order.
fn misses(scalars: &[ScalarComparison], targets: &[Target]) -> Vec<Miss> {
    targets
        .iter()
        .filter_map(|t| {
            let s = scalars.iter().find(|s| s.key == t.key)?;
            let target = s.reference?;
            let met = s.ours.is_some_and(|o| t.tolerance.holds(o, target));
            (!met).then_some(Miss {
                key: s.key,
                title: s.title,
                unit: s.unit,
                ours: s.ours,
                target,
                tolerance: t.tolerance,
            })
        })
        .collect()
}

fn compare_dist(a: &Dist, b: &Dist) -> DistComparison {
    let mut labels: Vec<&str> = a.cats.iter().map(|(l, _)| l.as_str()).collect();
    for (l, _) in &b.cats {
        if !labels.contains(&l.as_str()) {
            labels.push(l);
        }
    }
    let get = |d: &Dist, l: &str| d.cats.iter().find(|(x, _)| x == l).map_or(0, |(_, n)| *n);
    let ours: Vec<u64> = labels.iter().map(|l| get(a, l)).collect();
    let reference: Vec<u64> = labels.iter().map(|l| get(b, l)).collect();
    let (ta, tb): (u64, u64) = (ours.iter().sum(), reference.iter().sum());
    let share = |x: u64, t: u64| (t > 0).then(|| x as f64 / t as f64);
    let rows = labels
        .iter()
        .zip(ours.iter().zip(&reference))
        .map(|(l, (&o, &r))| DistRow {
            label: l.to_string(),
            ours: o,
            reference: r,
            ours_share: share(o, ta),
            reference_share: share(r, tb),
        })
        .collect();
    let chi = stats::chi_square(&ours, &reference);
    DistComparison {
        key: a.key,
        title: a.title,
        rows,
        ours_total: ta,
        reference_total: tb,
        tvd: stats::total_variation(&ours, &reference),
        chi_square_note: chi.as_ref().err().copied(),
        chi_square: chi.ok(),
    }
}

/// Compare every distribution and scalar present on both sides (scalars present on only one
/// side are listed with the other side empty).
pub fn compare(ours: &Profile, reference: &Profile) -> Comparison {
    let dists = ours
        .dists
        .iter()
        .filter_map(|d| reference.dist(d.key).map(|r| compare_dist(d, r)))
        .collect();
    let mut scalars: Vec<ScalarComparison> = ours
        .scalars
        .iter()
        .map(|s| {
            let r = reference.scalar(s.key);
            ScalarComparison {
                key: s.key,
                title: s.title,
                unit: s.unit,
                ours: Some(s.value),
                reference: r,
                diff: r.map(|r| s.value - r),
            }
        })
        .collect();
    for s in &reference.scalars {
        if ours.scalar(s.key).is_none() {
            scalars.push(ScalarComparison {
                key: s.key,
                title: s.title,
                unit: s.unit,
                ours: None,
                reference: Some(s.value),
                diff: None,
            });
        }
    }
    Comparison {
        ours: ours.label.clone(),
        reference: reference.label.clone(),
        misses: misses(&scalars, &reference.targets),
        scalars,
        dists,
    }
}
