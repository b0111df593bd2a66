//! One self-contained HTML page: inline CSS, inline SVG charts, no script, no external resource.

use super::svg::{Scale, Series, esc, hbars, vbars};
use super::{
    Table, archetype_table, chi, conflict_table, count, cross_table, dist_table, distance_table,
    diversity_table, field_table, misses_heading, misses_text, num, numeric, pct, scalar_table,
    user_table, yuan,
};
use crate::Audit;
use crate::compare::{Comparison, DistComparison};
use crate::report::{CrossTab, Report};
use std::fmt::Write;

const CLASS_COLORS: [(&str, &str); 3] = [
    ("easy", "#2e7d32"),
    ("medium", "#ef8a00"),
    ("hard", "#c62828"),
];
const OURS: &str = "#2f6db3";
const REF: &str = "#8a8a8a";
const OTHER: &str = "#6a4c93";

fn class_color(c: &str) -> &'static str {
    CLASS_COLORS
        .iter()
        .find(|(k, _)| *k == c)
        .map_or(OTHER, |(_, v)| *v)
}

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",sans-serif;margin:0;background:#f5f6f8;color:#222}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:34px 0 10px;border-bottom:2px solid #dde1e6;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 8px}.sub{color:#666;margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:14px}.chart{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:6px}
.tables{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
table{border-collapse:collapse;background:#fff;font-size:13px;margin:4px 0 10px}
th,td{border:1px solid #e1e4e8;padding:4px 8px;text-align:right}th{background:#eef1f4;text-align:left}
td:first-child,th:first-child{text-align:left}td.l{text-align:left}
tr.all td{font-weight:600;background:#fafbfc}
details{margin:6px 0}summary{cursor:pointer;font-weight:600;font-size:14px}
.note{color:#666;font-size:12px}.bad{color:#a00}
svg text{font-family:inherit}svg .tt{font-size:14px;font-weight:600;fill:#222}svg .ax{font-size:11px;fill:#444}
svg .lg{font-size:11px;fill:#333}svg .vl{font-size:9.5px;fill:#555}svg .grid{stroke:#e6e6e6}svg .axis{stroke:#888}
"#;

struct Html(String);

impl Html {
    fn table(&mut self, t: &Table) {
        self.0.push_str("<table><tr>");
        for h in &t.head {
            let _ = write!(self.0, "<th>{}</th>", esc(h));
        }
        self.0.push_str("</tr>");
        for (i, r) in t.rows.iter().enumerate() {
            self.0
                .push_str(if t.last_is_total && i + 1 == t.rows.len() {
                    "<tr class=\"all\">"
                } else {
                    "<tr>"
                });
            for c in r {
                let class = if numeric(c) { "" } else { " class=\"l\"" };
                let _ = write!(self.0, "<td{class}>{}</td>", esc(c));
            }
            self.0.push_str("</tr>");
        }
        self.0.push_str("</table>");
    }
    fn h2(&mut self, id: &str, s: &str) {
        let _ = write!(self.0, "<h2 id=\"{id}\">{}</h2>", esc(s));
    }
    fn chart(&mut self, svg: String) {
        let _ = write!(self.0, "<div class=\"chart\">{svg}</div>");
    }
    fn p(&mut self, class: &str, s: &str) {
        let _ = write!(self.0, "<p class=\"{class}\">{}</p>", esc(s));
    }
}

/// Table 8 chart: counts per class, or shares of tasks side by side with the reference.
fn table8_chart(t: &CrossTab, cmp: Option<&DistComparison>, reference: &str) -> String {
    let title = format!(
        "Difficulty by {}",
        t.title.split(" (").next().unwrap_or(&t.title)
    );
    match cmp {
        None => {
            let cats: Vec<String> = t.rows.iter().map(|r| r.label.clone()).collect();
            let series: Vec<Series> = t
                .classes
                .iter()
                .enumerate()
                .map(|(i, c)| Series {
                    name: c,
                    color: class_color(c),
                    light: false,
                    values: t.rows.iter().map(|r| r.counts[i] as f64).collect(),
                })
                .collect();
            vbars(&title, &cats, &series, Scale::Count)
        }
        Some(d) => {
            // rows are "row · class" cells; regroup them by row
            let mut cats: Vec<String> = Vec::new();
            for r in &d.rows {
                let row = r.label.split(" · ").next().unwrap_or(&r.label).to_string();
                if !cats.contains(&row) {
                    cats.push(row);
                }
            }
            let share = |row: &str, class: &str, ours: bool| {
                d.rows
                    .iter()
                    .find(|r| r.label == format!("{row} · {class}"))
                    .and_then(|r| {
                        if ours {
                            r.ours_share
                        } else {
                            r.reference_share
                        }
                    })
                    .unwrap_or(0.0)
            };
            let names: Vec<(String, String)> = t
                .classes
                .iter()
                .map(|c| (c.clone(), format!("{c} ({reference})")))
                .collect();
            let mut series = Vec::new();
            for (c, rname) in &names {
                series.push(Series {
                    name: c,
                    color: class_color(c),
                    light: false,
                    values: cats.iter().map(|r| share(r, c, true)).collect(),
                });
                series.push(Series {
                    name: rname,
                    color: class_color(c),
                    light: true,
                    values: cats.iter().map(|r| share(r, c, false)).collect(),
                });
            }
            vbars(
                &format!("{title} (share of tasks)"),
                &cats,
                &series,
                Scale::Percent,
            )
        }
    }
}

/// Ours vs reference shares of one compared distribution, as horizontal bars.
fn dist_hbars(title: &str, d: &DistComparison, reference: &str, rows: usize) -> String {
    let shown: Vec<_> = d.rows.iter().take(rows).collect();
    let cats: Vec<String> = shown.iter().map(|r| r.label.clone()).collect();
    let series = [
        Series {
            name: "ours",
            color: OURS,
            light: false,
            values: shown.iter().map(|r| r.ours_share.unwrap_or(0.0)).collect(),
        },
        Series {
            name: reference,
            color: REF,
            light: true,
            values: shown
                .iter()
                .map(|r| r.reference_share.unwrap_or(0.0))
                .collect(),
        },
    ];
    hbars(title, &cats, &series, Scale::Percent)
}

/// Shares side by side with the reference when compared, else our counts (the first `rows`).
fn shares_or_counts(
    d: Option<&DistComparison>,
    reference: &str,
    title: &str,
    unit: &str,
    counts: impl Iterator<Item = (String, u64)>,
    rows: usize,
) -> String {
    match d {
        Some(d) => dist_hbars(&format!("{title} (share)"), d, reference, rows),
        None => {
            let (cats, values): (Vec<String>, Vec<f64>) =
                counts.take(rows).map(|(c, n)| (c, n as f64)).unzip();
            hbars(
                &format!("{title} ({unit})"),
                &cats,
                &[Series {
                    name: unit,
                    color: OURS,
                    light: false,
                    values,
                }],
                Scale::Count,
            )
        }
    }
}

/// What the sections of the report read: the report, the comparison if any, and the name the
/// charts give the reference.
struct Sections<'a> {
    r: &'a Report,
    c: Option<&'a Comparison>,
    reference: &'static str,
}

impl Sections<'_> {
    /// The comparison of one distribution, if there is a reference.
    fn dist(&self, key: &str) -> Option<&DistComparison> {
        self.c.and_then(|c| c.dists.iter().find(|d| d.key == key))
    }
}

fn report(h: &mut Html, r: &Report, c: Option<&Comparison>) {
    let reference = if c.is_some() { "reference" } else { "" };
    let s = Sections { r, c, reference };
    for section in [
        title, cards, skipped, table8, table5, table9, users, conflicts, diversity,
    ] {
        section(h, &s);
    }
}

/// The title, what was compared, and the sha256.
fn title(h: &mut Html, s: &Sections) {
    let r = s.r;
    let c = s.c;
    let _ = write!(h.0, "<h1>Audit of {}</h1>", esc(&r.source));
    let sub = match c {
        Some(c) => format!("{} tasks · compared with {}", count(r.tasks), c.reference),
        None => format!("{} tasks", count(r.tasks)),
    };
    h.p("sub", &sub);
    if let Some(sha) = &r.sha256 {
        h.p("sub", &format!("sha256 {sha}"));
    }
}

/// The headline figures.
fn cards(h: &mut Html, s: &Sections) {
    let r = s.r;
    let u = &s.r.users;
    h.0.push_str("<div class=\"cards\">");
    let median = r
        .budget
        .as_ref()
        .map(|b| yuan(b.median))
        .unwrap_or_else(|| "—".into());
    let cards = [
        (count(r.tasks), "tasks"),
        (count(u.users), "users with preferences"),
        (num(u.points_per_user, 1), "atomic points per user"),
        (pct(u.compromisable_share), "compromisable users"),
        (median, "median budget (CNY)"),
        (
            pct(r.conflict("attractions").and_then(|x| x.share)),
            "tasks with an attraction clash",
        ),
        (count(r.diversity.destination_cities), "destination cities"),
    ];
    for (v, l) in cards {
        let _ = write!(
            h.0,
            "<div class=\"card\"><b>{}</b><span>{}</span></div>",
            esc(&v),
            esc(l)
        );
    }
    h.0.push_str("</div>");
}

/// The malformed lines that were skipped, if any.
fn skipped(h: &mut Html, s: &Sections) {
    let r = s.r;
    if r.skipped_lines > 0 {
        h.p(
            "bad",
            &format!("{} malformed line(s) skipped", r.skipped_lines),
        );
        h.0.push_str("<ul class=\"note\">");
        for b in &r.skipped {
            let _ = write!(
                h.0,
                "<li>{}:{}: {}</li>",
                esc(&r.source),
                b.line,
                esc(&b.message)
            );
        }
        h.0.push_str("</ul>");
    }
}

/// Difficulty (paper Table 8).
fn table8(h: &mut Html, s: &Sections) {
    let r = s.r;
    let reference = s.reference;
    h.h2("table8", "Difficulty (paper Table 8)");
    h.0.push_str("<div class=\"charts\">");
    for (key, t) in r.table8.tabs() {
        h.chart(table8_chart(t, s.dist(key), reference));
    }
    h.0.push_str("</div><div class=\"tables\">");
    for (_, t) in r.table8.tabs() {
        h.table(&cross_table(t, r.tasks));
    }
    h.0.push_str("</div>");
}

/// Archetypes (paper Table 5).
fn table5(h: &mut Html, s: &Sections) {
    let r = s.r;
    let reference = s.reference;
    h.h2("table5", "Archetypes (paper Table 5)");
    h.0.push_str("<div class=\"charts\">");
    let counts = r
        .archetypes
        .iter()
        .map(|a| (format!("{} {}", a.group_id, a.group_name), a.tasks));
    h.chart(shares_or_counts(
        s.dist("archetypes"),
        reference,
        "Tasks per archetype",
        "tasks",
        counts,
        40,
    ));
    h.0.push_str("<div>");
    h.table(&archetype_table(r));
    h.0.push_str("</div></div>");
}

/// Preference fields (paper Table 9).
fn table9(h: &mut Html, s: &Sections) {
    let r = s.r;
    let reference = s.reference;
    h.h2("table9", "Preference fields (paper Table 9)");
    h.0.push_str("<div class=\"charts\">");
    let counts = r.fields.iter().map(|f| (f.field.clone(), f.count));
    h.chart(shares_or_counts(
        s.dist("fields"),
        reference,
        "Preference items per field",
        "items",
        counts,
        20,
    ));
    h.0.push_str("<div>");
    h.table(&field_table(r));
    h.0.push_str("</div></div>");
}

/// Users, preference points, budget.
fn users(h: &mut Html, s: &Sections) {
    let r = s.r;
    h.h2("users", "Users, preference points, budget");
    h.table(&user_table(r));
}

/// Conflicts between members.
fn conflicts(h: &mut Html, s: &Sections) {
    let r = s.r;
    let c = s.c;
    let reference = s.reference;
    h.h2("conflicts", "Conflicts between members");
    h.p("note", "A task has a conflict when one member's must item is another member's reject item: must_visit vs reject_visit and must_eat vs reject_eat in the same city, transport must vs reject.");
    h.0.push_str("<div class=\"charts\">");
    let kinds: Vec<String> = r.conflicts.iter().map(|x| x.kind.clone()).collect();
    let mut series = vec![Series {
        name: "ours",
        color: OURS,
        light: false,
        values: r.conflicts.iter().map(|x| x.share.unwrap_or(0.0)).collect(),
    }];
    if let Some(c) = c {
        let refs: Vec<f64> = kinds
            .iter()
            .map(|k| {
                c.scalars
                    .iter()
                    .find(|s| s.key == format!("conflict_share_{k}"))
                    .and_then(|s| s.reference)
                    .unwrap_or(0.0)
            })
            .collect();
        series.push(Series {
            name: reference,
            color: REF,
            light: true,
            values: refs,
        });
    }
    h.chart(hbars(
        "Share of tasks with a must/reject clash",
        &kinds,
        &series,
        Scale::Percent,
    ));
    h.0.push_str("<div>");
    h.table(&conflict_table(r));
    h.0.push_str("</div></div>");
}

/// Diversity.
fn diversity(h: &mut Html, s: &Sections) {
    let r = s.r;
    let reference = s.reference;
    let d = &r.diversity;
    h.h2("diversity", "Diversity");
    h.0.push_str("<div class=\"charts\">");
    let counts = d.destinations.iter().map(|x| (x.item.clone(), x.count));
    h.chart(shares_or_counts(
        s.dist("destinations"),
        reference,
        "Destination frequency, top 30",
        "tasks",
        counts,
        30,
    ));
    h.0.push_str("<div>");
    h.table(&diversity_table(d));
    let rows = d
        .top_must_visit
        .iter()
        .take(10)
        .map(|x| {
            vec![
                x.item.clone(),
                x.city.clone().unwrap_or_default(),
                count(x.count),
            ]
        })
        .collect();
    h.0.push_str("<h3>Top must_visit POIs</h3>");
    h.table(&Table::new(&["POI", "city", "mentions"], rows));
    let rows = d
        .departures
        .iter()
        .take(10)
        .map(|x| vec![x.item.clone(), count(x.count)])
        .collect();
    h.0.push_str("<h3>Top departure cities</h3>");
    h.table(&Table::new(&["departure city", "tasks"], rows));
    h.0.push_str("</div></div>");
}

fn comparison(h: &mut Html, c: &Comparison) {
    h.h2("comparison", &format!("Comparison with {}", c.reference));
    h.0.push_str("<div class=\"tables\"><div>");
    h.table(&scalar_table(c));
    h.p("note", &misses_heading(c));
    if let Some(t) = misses_text(c) {
        h.table(&t);
    }
    h.0.push_str("</div><div>");
    h.table(&distance_table(c));
    h.p("note", "TVD: total variation distance of the share vectors (0 = same, 1 = disjoint). Chi-square: test of homogeneity of the two count vectors, computed when every expected count is at least 5.");
    h.0.push_str("</div></div>");
    for d in &c.dists {
        let _ = write!(
            h.0,
            "<details><summary>{} — TVD {}</summary>",
            esc(d.title),
            num(d.tvd, 3)
        );
        h.table(&dist_table(d));
        h.p("note", &chi(d));
        h.0.push_str("</details>");
    }
}

pub fn render(a: &Audit) -> String {
    let mut h = Html(String::with_capacity(64 * 1024));
    let _ = write!(
        h.0,
        "<!DOCTYPE html>\n<html lang=\"zh-CN\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>gtb audit: {}</title><style>{CSS}</style></head><body><main>",
        esc(&a.report.source)
    );
    report(&mut h, &a.report, a.comparison.as_ref());
    if let Some(c) = &a.comparison {
        comparison(&mut h, c);
    }
    h.0.push_str("<p class=\"note\">Generated by gtb audit. Self-contained: no scripts, no external resources.</p></main></body></html>\n");
    h.0
}
