//! Markdown: one table per section, readable in a terminal and on a code forge.

use super::{MAX_ROWS, chi, count, diff, num, numeric, pct, scalar, yuan};
use crate::audit::Audit;
use crate::audit::compare::Comparison;
use crate::audit::report::{CrossTab, Report};
use std::fmt::Write;

/// Escape a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table; numeric columns are right-aligned.
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(head: &[&str]) -> Table {
        Table { head: head.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }
    fn row<S: AsRef<str>>(&mut self, cells: &[S]) {
        self.rows.push(cells.iter().map(|c| cell(c.as_ref())).collect());
    }
    fn done(self) -> String {
        let right: Vec<bool> = (0..self.head.len())
            .map(|i| i > 0 && self.rows.iter().all(|r| r.get(i).is_none_or(|c| c.is_empty() || numeric(c.trim_matches('*')))))
            .collect();
        let mut s = format!("| {} |\n|", self.head.join(" | "));
        for r in &right {
            s.push_str(if *r { "---:|" } else { "---|" });
        }
        s.push('\n');
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        s.push('\n');
        s
    }
}

fn cross_tab(t: &CrossTab, tasks: u64) -> String {
    let mut head = vec![t.title.as_str()];
    head.extend(t.classes.iter().map(String::as_str));
    head.push("total");
    head.push("share");
    let mut tab = Table::new(&head);
    for r in &t.rows {
        let mut row: Vec<String> = vec![r.label.clone()];
        row.extend(r.counts.iter().map(|&n| count(n)));
        row.push(count(r.total));
        row.push(pct((tasks > 0).then(|| r.total as f64 / tasks as f64)));
        tab.row(&row);
    }
    let mut row = vec!["**all**".to_string()];
    row.extend(t.class_totals().into_iter().map(count));
    row.push(count(tasks));
    row.push(String::new());
    tab.row(&row);
    tab.done()
}

fn report(out: &mut String, r: &Report) {
    let u = &r.users;
    let _ = writeln!(out, "# Audit of `{}`\n", r.source);
    let _ = writeln!(out, "{} tasks, {} users with preferences, {} malformed line(s) skipped.\n", count(r.tasks), count(u.users), r.skipped_lines);
    for b in &r.skipped {
        let _ = writeln!(out, "* skipped `{}:{}`: {}", r.source, b.line, b.message);
    }
    if r.skipped_lines as usize > r.skipped.len() {
        let _ = writeln!(out, "* … and {} more", r.skipped_lines as usize - r.skipped.len());
    }
    if !r.skipped.is_empty() {
        out.push('\n');
    }

    out.push_str("## Difficulty (paper Table 8)\n\n");
    for (_, t) in r.table8.tabs() {
        out.push_str(&cross_tab(t, r.tasks));
    }

    out.push_str("## Archetypes (paper Table 5)\n\n");
    let mut t = Table::new(&["group_id", "group_name", "tasks", "share"]);
    for a in &r.archetypes {
        t.row(&[a.group_id.clone(), a.group_name.clone(), count(a.tasks), pct((r.tasks > 0).then(|| a.tasks as f64 / r.tasks as f64))]);
    }
    out.push_str(&t.done());

    out.push_str("## Preference fields (paper Table 9; summed over users and cities)\n\n");
    let mut t = Table::new(&["field", "items", "per user"]);
    for f in &r.fields {
        t.row(&[f.field.clone(), count(f.count), num(f.per_user, 2)]);
    }
    out.push_str(&t.done());

    out.push_str("## Users, preference points, budget\n\n");
    let mut t = Table::new(&["figure", "value"]);
    t.row(&["users with preferences".to_string(), count(u.users)]);
    t.row(&["users per task".to_string(), num(u.users_per_task, 2)]);
    t.row(&["members per task (N, skipped children included)".to_string(), num(u.members_per_task, 2)]);
    t.row(&["atomic preference points (list items + 3 scalars per user)".to_string(), count(u.atomic_points)]);
    t.row(&["points per user: mean / min / max".to_string(), format!("{} / {} / {}", num(u.points_per_user, 2), num(u.points_min.map(|x| x as f64), 0), num(u.points_max.map(|x| x as f64), 0))]);
    t.row(&["compromisable users".to_string(), format!("{} ({})", count(u.compromisable), pct(u.compromisable_share))]);
    match &r.budget {
        Some(b) => t.row(&["budget per person: min / median / mean / max".to_string(), format!("{} / {} / {} / {}", yuan(b.min as f64), yuan(b.median), yuan(b.mean), yuan(b.max as f64))]),
        None => t.row(&["budget per person", "—"]),
    }
    out.push_str(&t.done());

    out.push_str("## Conflicts (one member's must item is another member's reject item)\n\n");
    out.push_str("Attractions: must_visit vs reject_visit and food: must_eat vs reject_eat, in the same city; transport: must vs reject.\n\n");
    let mut t = Table::new(&["kind", "tasks", "share", "most frequent clashing items (tasks)"]);
    for c in &r.conflicts {
        let items: Vec<String> = c.top.iter().take(8).map(|x| format!("{} ({})", x.label(), x.count)).collect();
        t.row(&[c.kind.clone(), count(c.tasks), pct(c.share), items.join(", ")]);
    }
    out.push_str(&t.done());

    let d = &r.diversity;
    out.push_str("## Diversity\n\n");
    let mut t = Table::new(&["figure", "value"]);
    t.row(&["distinct destination cities".to_string(), count(d.destination_cities)]);
    t.row(&["distinct departure cities".to_string(), count(d.departure_cities)]);
    t.row(&["Gini of tasks per destination city".to_string(), num(d.destination_gini, 3)]);
    t.row(&["normalised Shannon entropy of destinations".to_string(), num(d.destination_entropy, 3)]);
    t.row(&["must_visit mentions / distinct POIs".to_string(), format!("{} / {}", count(d.must_visit_mentions), count(d.must_visit_distinct))]);
    t.row(&["share of must_visit mentions held by the top 10 POIs".to_string(), pct(d.top10_must_visit_share)]);
    out.push_str(&t.done());
    let list = |v: &[crate::audit::report::Counted], n: usize| v.iter().take(n).map(|c| format!("{} {}", c.label(), c.count)).collect::<Vec<_>>().join(", ");
    let _ = writeln!(out, "Top destinations (tasks): {}\n", list(&d.destinations, 15));
    let _ = writeln!(out, "Top departures (tasks): {}\n", list(&d.departures, 10));
    let _ = writeln!(out, "Top must_visit POIs (mentions): {}\n", list(&d.top_must_visit, 10));
}

fn comparison(out: &mut String, c: &Comparison) {
    let _ = writeln!(out, "## Comparison: `{}` vs {}\n", c.ours, c.reference);
    out.push_str("### Figures\n\n");
    let mut t = Table::new(&["figure", "ours", "reference", "ours − reference"]);
    for s in &c.scalars {
        t.row(&[s.title.to_string(), scalar(s.unit, s.ours), scalar(s.unit, s.reference), diff(s.unit, s.diff)]);
    }
    out.push_str(&t.done());

    out.push_str("### Distances between distributions\n\n");
    out.push_str("TVD: total variation distance of the two share vectors (0 = same, 1 = disjoint). χ²: test of homogeneity of the two count vectors, computed when every expected count is at least 5.\n\n");
    let mut t = Table::new(&["distribution", "ours (n)", "reference (n)", "TVD", "chi-square"]);
    for d in &c.dists {
        t.row(&[d.title.to_string(), count(d.ours_total), count(d.reference_total), num(d.tvd, 3), chi(d)]);
    }
    out.push_str(&t.done());

    for d in &c.dists {
        let _ = writeln!(out, "#### {}\n", d.title);
        let mut t = Table::new(&["category", "ours", "ours %", "reference", "reference %"]);
        for r in d.rows.iter().take(MAX_ROWS) {
            t.row(&[r.label.clone(), count(r.ours), pct(r.ours_share), count(r.reference), pct(r.reference_share)]);
        }
        if d.rows.len() > MAX_ROWS {
            t.row(&[format!("… {} more categories", d.rows.len() - MAX_ROWS), String::new(), String::new(), String::new(), String::new()]);
        }
        out.push_str(&t.done());
        let _ = writeln!(out, "TVD {} · {}\n", num(d.tvd, 3), chi(d));
    }
}

pub fn render(a: &Audit) -> String {
    let mut out = String::new();
    report(&mut out, &a.report);
    if let Some(c) = &a.comparison {
        comparison(&mut out, c);
    }
    out
}
