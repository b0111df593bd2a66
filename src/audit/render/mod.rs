//! Renderers of an [`Audit`]: one function per format, sharing the number formatting below.

mod html;
mod md;
mod svg;

use super::Audit;
use super::compare::Unit;

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
            Format::Json => serde_json::to_string_pretty(audit).expect("the report serialises") + "\n",
            Format::Html => html::render(audit),
        }
    }
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
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(ch);
    }
    out
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
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || " .,%+-−—/()p".contains(c))
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
pub(crate) fn chi(c: &super::compare::DistComparison) -> String {
    match (&c.chi_square, c.chi_square_note) {
        (Some(x), _) => format!("χ² = {:.2}, df {}, p = {}", x.statistic, x.df, p_value(x.p_value)),
        (None, Some(note)) => note.to_string(),
        (None, None) => "—".to_string(),
    }
}

fn p_value(p: f64) -> String {
    if p < 1e-4 { format!("{p:.1e}") } else { format!("{p:.4}") }
}

/// Rows shown per distribution in comparison tables; the distance uses them all.
pub(crate) const MAX_ROWS: usize = 30;
