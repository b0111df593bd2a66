//! Markdown: one table per section, readable in a terminal and on a code forge.

use super::{
    Table, archetype_table, chi, conflict_table, count, cross_table, dist_table, distance_table,
    diversity_table, field_table, misses_heading, misses_text, num, numeric, scalar_table,
    user_table,
};
use crate::Audit;
use crate::compare::Comparison;
use crate::report::Report;
use std::fmt::Write;

/// Escape a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table; numeric columns are right-aligned, a total row is bold.
fn table(t: &Table) -> String {
    let mut rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(|c| cell(c)).collect())
        .collect();
    if t.last_is_total
        && let Some(first) = rows.last_mut().and_then(|r| r.first_mut())
    {
        *first = format!("**{first}**");
    }
    let right: Vec<bool> = (0..t.head.len())
        .map(|i| {
            i > 0
                && rows.iter().all(|r| {
                    r.get(i)
                        .is_none_or(|c| c.is_empty() || numeric(c.trim_matches('*')))
                })
        })
        .collect();
    let mut s = format!("| {} |\n|", t.head.join(" | "));
    for r in &right {
        s.push_str(if *r { "---:|" } else { "---|" });
    }
    s.push('\n');
    for r in &rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s.push('\n');
    s
}

fn report(out: &mut String, r: &Report) {
    let _ = writeln!(out, "# Audit of `{}`\n", r.source);
    if let Some(sha) = &r.sha256 {
        let _ = writeln!(out, "sha256 `{sha}`\n");
    }
    let _ = writeln!(
        out,
        "{} tasks, {} users with preferences, {} malformed line(s) skipped.\n",
        count(r.tasks),
        count(r.users.users),
        r.skipped_lines
    );
    for b in &r.skipped {
        let _ = writeln!(out, "* skipped `{}:{}`: {}", r.source, b.line, b.message);
    }
    if r.skipped_lines as usize > r.skipped.len() {
        let _ = writeln!(
            out,
            "* … and {} more",
            r.skipped_lines as usize - r.skipped.len()
        );
    }
    if !r.skipped.is_empty() {
        out.push('\n');
    }

    out.push_str("## Difficulty (paper Table 8)\n\n");
    for (_, t) in r.table8.tabs() {
        out.push_str(&table(&cross_table(t, r.tasks)));
    }
    out.push_str("## Archetypes (paper Table 5)\n\n");
    out.push_str(&table(&archetype_table(r)));
    out.push_str("## Preference fields (paper Table 9; summed over users and cities)\n\n");
    out.push_str(&table(&field_table(r)));
    out.push_str("## Users, preference points, budget\n\n");
    out.push_str(&table(&user_table(r)));
    out.push_str("## Conflicts (one member's must item is another member's reject item)\n\n");
    out.push_str("Attractions: must_visit vs reject_visit and food: must_eat vs reject_eat, in the same city; transport: must vs reject.\n\n");
    out.push_str(&table(&conflict_table(r)));

    let d = &r.diversity;
    out.push_str("## Diversity\n\n");
    out.push_str(&table(&diversity_table(d)));
    let list = |v: &[crate::report::Counted], n: usize| {
        v.iter()
            .take(n)
            .map(|c| format!("{} {}", c.label(), c.count))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "Top destinations (tasks): {}\n",
        list(&d.destinations, 15)
    );
    let _ = writeln!(out, "Top departures (tasks): {}\n", list(&d.departures, 10));
    let _ = writeln!(
        out,
        "Top must_visit POIs (mentions): {}\n",
        list(&d.top_must_visit, 10)
    );
}

fn comparison(out: &mut String, c: &Comparison) {
    let _ = writeln!(out, "## Comparison: `{}` vs {}\n", c.ours, c.reference);
    out.push_str("### Figures\n\n");
    out.push_str(&table(&scalar_table(c)));
    targets(out, c);
    out.push_str("### Distances between distributions\n\n");
    out.push_str("TVD: total variation distance of the two share vectors (0 = same, 1 = disjoint). χ²: test of homogeneity of the two count vectors, computed when every expected count is at least 5.\n\n");
    out.push_str(&table(&distance_table(c)));
    for d in &c.dists {
        let _ = writeln!(out, "#### {}\n", d.title);
        out.push_str(&table(&dist_table(d)));
        let _ = writeln!(out, "TVD {} · {}\n", num(d.tvd, 3), chi(d));
    }
}

fn targets(out: &mut String, c: &Comparison) {
    if c.misses.is_empty() && c.scalars.iter().all(|s| s.reference.is_none()) {
        return;
    }
    let _ = writeln!(out, "{}\n", misses_heading(c));
    if let Some(t) = misses_text(c) {
        out.push_str(&table(&t));
    }
}

/// The audit's headline, for a dataset card: the figures beside the reference's, the distance
/// of each distribution, and the conflict shares (no per-category tables).
pub fn headline(a: &Audit) -> String {
    let mut out = String::new();
    match &a.comparison {
        Some(c) => {
            let _ = writeln!(out, "Figures against {}:\n", c.reference);
            out.push_str(&table(&scalar_table(c)));
            targets(&mut out, c);
            out.push_str(
                "Total variation distance (TVD, 0 = same shares) of each distribution:\n\n",
            );
            out.push_str(&table(&distance_table(c)));
        }
        None => out.push_str(&table(&user_table(&a.report))),
    }
    out.push_str("Conflicts (one member's must item is another member's reject item):\n\n");
    out.push_str(&table(&conflict_table(&a.report)));
    out
}

pub fn render(a: &Audit) -> String {
    let mut out = String::new();
    report(&mut out, &a.report);
    if let Some(c) = &a.comparison {
        comparison(&mut out, c);
    }
    out
}
