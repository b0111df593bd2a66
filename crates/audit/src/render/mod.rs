//! Renderers of an [`Audit`]: one function per format, sharing the number formatting below.

mod html;
mod md;
mod svg;

use super::Audit;
use super::compare::{Comparison, DistComparison, Tolerance, Unit};
use super::report::{CrossTab, Diversity, Report};

/// Output format of `gtb audit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Markdown tables (printed; audit.md with --out)
    #[default]
    Md,
    /// the report as JSON (audit.json)
    Json,
    /// one self-contained page with inline SVG charts (audit.html)
    Html,
}

impl Format {
    /// The file written under `--out DIR`.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Md => "audit.md",
            Format::Json => "audit.json",
            Format::Html => "audit.html",
        }
    }

    pub fn render(self, audit: &Audit) -> String {
        match self {
            Format::Md => md::render(audit),
            Format::Json => {
                serde_json::to_string_pretty(audit).expect("the report serialises") + "\n"
            }
            Format::Html => html::render(audit),
        }
    }
}

/// The audit's headline figures as Markdown (for the dataset card of `gtb export`).
pub fn headline_md(audit: &Audit) -> String {
    md::headline(audit)
}

/// "33.1 %", or "—" when undefined.
pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_string(), |x| format!("{:.1} %", 100.0 * x))
}

/// A number with `d` decimals, or "—".
pub(crate) fn num(x: Option<f64>, d: usize) -> String {
    x.map_or_else(|| "—".to_string(), |x| format!("{x:.d$}"))
}

/// Integers with thin grouping: 62 998.
pub(crate) fn count(n: u64) -> String {
    gtb_core::text::grouped(n, ' ')
}

/// Money: grouped integer part, one decimal only when there is a fraction ("3 395.2").
pub(crate) fn yuan(v: f64) -> String {
    let neg = if v < 0.0 { "-" } else { "" };
    let v = v.abs();
    if v.fract() == 0.0 {
        format!("{neg}{}", count(v as u64))
    } else {
        let tenths = (v * 10.0).round() as u64;
        format!("{neg}{}.{}", count(tenths / 10), tenths % 10)
    }
}

pub(crate) fn scalar(unit: Unit, x: Option<f64>) -> String {
    match (unit, x) {
        (_, None) => "—".to_string(),
        (Unit::Count, Some(v)) => count(v.round() as u64),
        (Unit::Share, v) => pct(v),
        (Unit::Number, v) => num(v, 3),
        (Unit::Yuan, Some(v)) => yuan(v),
    }
}

/// Numbers, shares and "a / b" figures (right-aligned in tables); anything else is text.
pub(crate) fn numeric(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_digit() || " .,%+-−—/()p".contains(c))
}

/// A signed difference in the scalar's unit; shares in percentage points.
pub(crate) fn diff(unit: Unit, x: Option<f64>) -> String {
    match (unit, x) {
        (_, None) => "—".to_string(),
        (Unit::Share, Some(v)) => format!("{:+.1} pp", 100.0 * v),
        (Unit::Count, Some(v)) => format!("{v:+.0}"),
        (Unit::Number, Some(v)) => format!("{v:+.3}"),
        (Unit::Yuan, Some(v)) => format!("{}{}", if v >= 0.0 { "+" } else { "" }, yuan(v)),
    }
}

/// "χ² = 12.3, df 4, p = 0.015" or the reason it is missing.
pub(crate) fn chi(c: &DistComparison) -> String {
    match (&c.chi_square, c.chi_square_note) {
        (Some(x), _) => format!(
            "χ² = {:.2}, df {}, p = {}",
            x.statistic,
            x.df,
            p_value(x.p_value)
        ),
        (None, Some(note)) => note.to_string(),
        (None, None) => "—".to_string(),
    }
}

fn p_value(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// Rows shown per distribution in comparison tables; the distance uses them all.
pub(crate) const MAX_ROWS: usize = 30;

/// A table as both renderers draw it: header, rows of formatted cells, and whether the last
/// row is a total. The builders below are the one place a section's rows are decided.
pub(crate) struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub last_is_total: bool,
}

impl Table {
    fn new(head: &[&str], rows: Vec<Vec<String>>) -> Table {
        Table {
            head: head.iter().map(|h| h.to_string()).collect(),
            rows,
            last_is_total: false,
        }
    }
}

fn share_of(n: u64, of: u64) -> String {
    pct((of > 0).then(|| n as f64 / of as f64))
}

/// A Table 8 cross-tab with row totals, shares and a class-total row.
pub(crate) fn cross_table(t: &CrossTab, tasks: u64) -> Table {
    let mut head = vec![t.title.as_str()];
    head.extend(t.classes.iter().map(String::as_str));
    head.extend(["total", "share"]);
    let mut rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![r.label.clone()];
            row.extend(r.counts.iter().map(|&n| count(n)));
            row.extend([count(r.total), share_of(r.total, tasks)]);
            row
        })
        .collect();
    let mut all = vec!["all".to_string()];
    all.extend(t.class_totals().into_iter().map(count));
    all.extend([count(tasks), String::new()]);
    rows.push(all);
    Table {
        last_is_total: true,
        ..Table::new(&head, rows)
    }
}

pub(crate) fn archetype_table(r: &Report) -> Table {
    let rows = r
        .archetypes
        .iter()
        .map(|a| {
            vec![
                a.group_id.clone(),
                a.group_name.clone(),
                count(a.tasks),
                share_of(a.tasks, r.tasks),
            ]
        })
        .collect();
    Table::new(&["group_id", "group_name", "tasks", "share"], rows)
}

pub(crate) fn field_table(r: &Report) -> Table {
    let rows = r
        .fields
        .iter()
        .map(|f| vec![f.field.clone(), count(f.count), num(f.per_user, 2)])
        .collect();
    Table::new(&["field", "items", "per user"], rows)
}

pub(crate) fn user_table(r: &Report) -> Table {
    let u = &r.users;
    let budget = match &r.budget {
        Some(b) => format!(
            "{} / {} / {} / {}",
            yuan(b.min as f64),
            yuan(b.median),
            yuan(b.mean),
            yuan(b.max as f64)
        ),
        None => "—".to_string(),
    };
    let points = format!(
        "{} / {} / {}",
        num(u.points_per_user, 2),
        num(u.points_min.map(|x| x as f64), 0),
        num(u.points_max.map(|x| x as f64), 0)
    );
    let rows = [
        ("users with preferences", count(u.users)),
        ("users per task", num(u.users_per_task, 2)),
        (
            "members per task (N, skipped children included)",
            num(u.members_per_task, 2),
        ),
        (
            "atomic preference points (list items + 3 scalars per user)",
            count(u.atomic_points),
        ),
        ("points per user: mean / min / max", points),
        (
            "compromisable users",
            format!(
                "{} ({})",
                count(u.compromisable),
                pct(u.compromisable_share)
            ),
        ),
        ("budget per person: min / median / mean / max", budget),
    ];
    Table::new(
        &["figure", "value"],
        rows.into_iter()
            .map(|(k, v)| vec![k.to_string(), v])
            .collect(),
    )
}

pub(crate) fn conflict_table(r: &Report) -> Table {
    let rows = r
        .conflicts
        .iter()
        .map(|c| {
            vec![
                c.kind.clone(),
                count(c.tasks),
                pct(c.share),
                c.top
                    .iter()
                    .take(8)
                    .map(|x| format!("{} ({})", x.label(), x.count))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    Table::new(
        &[
            "kind",
            "tasks",
            "share",
            "most frequent clashing items (tasks)",
        ],
        rows,
    )
}

pub(crate) fn diversity_table(d: &Diversity) -> Table {
    let rows = [
        ("distinct destination cities", count(d.destination_cities)),
        ("distinct departure cities", count(d.departure_cities)),
        (
            "Gini of tasks per destination city",
            num(d.destination_gini, 3),
        ),
        (
            "normalised Shannon entropy of destinations",
            num(d.destination_entropy, 3),
        ),
        (
            "must_visit mentions / distinct POIs",
            format!(
                "{} / {}",
                count(d.must_visit_mentions),
                count(d.must_visit_distinct)
            ),
        ),
        (
            "share of must_visit mentions held by the top 10 POIs",
            pct(d.top10_must_visit_share),
        ),
    ];
    Table::new(
        &["figure", "value"],
        rows.into_iter()
            .map(|(k, v)| vec![k.to_string(), v])
            .collect(),
    )
}

pub(crate) fn scalar_table(c: &Comparison) -> Table {
    let rows = c
        .scalars
        .iter()
        .map(|s| {
            vec![
                s.title.to_string(),
                scalar(s.unit, s.ours),
                scalar(s.unit, s.reference),
                diff(s.unit, s.diff),
            ]
        })
        .collect();
    Table::new(&["figure", "ours", "reference", "ours − reference"], rows)
}

/// The reference's targets and whether the file meets each; a sentence when it misses none.
pub(crate) fn misses_text(c: &Comparison) -> Option<Table> {
    if c.misses.is_empty() {
        return None;
    }
    let rows = c
        .misses
        .iter()
        .map(|m| {
            let within = match m.tolerance {
                Tolerance::Relative(f) => format!("within {:.0} %", f * 100.0),
                Tolerance::Absolute(d) => format!("within {}", scalar(m.unit, Some(d))),
                Tolerance::AtLeast => "at least".to_string(),
                Tolerance::AtMost => "at most".to_string(),
            };
            vec![
                m.title.to_string(),
                scalar(m.unit, m.ours),
                format!("{within} {}", scalar(m.unit, Some(m.target))),
            ]
        })
        .collect();
    Some(Table::new(&["target missed", "ours", "target"], rows))
}

/// The line a report shows above the misses (or instead of them).
pub(crate) fn misses_heading(c: &Comparison) -> String {
    match c.misses.len() {
        0 => format!("Every target of {} is met.", c.reference),
        n => format!("{n} target(s) of {} missed:", c.reference),
    }
}

pub(crate) fn distance_table(c: &Comparison) -> Table {
    let rows = c
        .dists
        .iter()
        .map(|d| {
            vec![
                d.title.to_string(),
                count(d.ours_total),
                count(d.reference_total),
                num(d.tvd, 3),
                chi(d),
            ]
        })
        .collect();
    Table::new(
        &[
            "distribution",
            "ours (n)",
            "reference (n)",
            "TVD",
            "chi-square",
        ],
        rows,
    )
}

/// One compared distribution, category by category (the first `MAX_ROWS`).
pub(crate) fn dist_table(d: &DistComparison) -> Table {
    let mut rows: Vec<Vec<String>> = d
        .rows
        .iter()
        .take(MAX_ROWS)
        .map(|r| {
            vec![
                r.label.clone(),
                count(r.ours),
                pct(r.ours_share),
                count(r.reference),
                pct(r.reference_share),
            ]
        })
        .collect();
    if d.rows.len() > MAX_ROWS {
        rows.push(vec![
            format!("… {} more categories", d.rows.len() - MAX_ROWS),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    Table::new(
        &["category", "ours", "ours %", "reference", "reference %"],
        rows,
    )
}
