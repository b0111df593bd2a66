//! Hand-written inline SVG bar charts: no dependency, no external resource. Each bar carries a
//! `<title>` so that hovering shows its exact value.

use std::fmt::Write;

/// One series of values, one per category.
pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    /// drawn lighter with an outline (the reference side of a comparison)
    pub light: bool,
    pub values: Vec<f64>,
}

/// How values and ticks read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Count,
    /// values are fractions, shown as percentages
    Percent,
}

impl Scale {
    fn fmt(self, v: f64) -> String {
        match self {
            Scale::Count if v.fract().abs() < 1e-9 => format!("{v:.0}"),
            Scale::Count => format!("{v:.1}"),
            Scale::Percent if v * 100.0 >= 10.0 || (v * 100.0).fract().abs() < 1e-9 => {
                format!("{:.0}%", v * 100.0)
            }
            Scale::Percent => format!("{:.1}%", v * 100.0),
        }
    }
}

/// Chart width in px: two charts fit side by side on a 1200 px page.
const WIDTH: f64 = 540.0;

pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A round axis maximum ≥ `max` and its tick step (at most 5 intervals).
fn axis(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.25);
    }
    let mag = 10f64.powf((max / 5.0).log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| (max / s).ceil() <= 5.0)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

/// Legend entries laid out from `x0`, wrapping before `max_x`; returns the SVG and the
/// number of lines used.
fn legend(series: &[Series], x0: f64, y0: f64, max_x: f64) -> (String, usize) {
    let mut out = String::new();
    let (mut x, mut line) = (x0, 0);
    for s in series {
        let w = 24.0
            + 6.5
                * s.name
                    .chars()
                    .map(|c| if c.is_ascii() { 1.0 } else { 1.8 })
                    .sum::<f64>();
        if x > x0 && x + w > max_x {
            x = x0;
            line += 1;
        }
        let y = y0 + 16.0 * line as f64;
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="11" height="11" {}/>"#,
            y - 9.0,
            fill(s)
        );
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{y:.1}" class="lg">{}</text>"#,
            x + 15.0,
            esc(s.name)
        );
        x += w;
    }
    (out, line + 1)
}

fn fill(s: &Series) -> String {
    if s.light {
        format!(
            r#"fill="{}" fill-opacity="0.35" stroke="{}" stroke-width="1""#,
            s.color, s.color
        )
    } else {
        format!(r#"fill="{}""#, s.color)
    }
}

fn bar_title(cat: &str, s: &Series, v: f64, scale: Scale) -> String {
    format!(
        "<title>{} · {}: {}</title>",
        esc(cat),
        esc(s.name),
        scale.fmt(v)
    )
}

/// Vertical grouped bars: one group per category, one bar per series.
pub fn vbars(title: &str, cats: &[String], series: &[Series], scale: Scale) -> String {
    let w = WIDTH;
    let (lg, lines) = legend(series, 52.0, 36.0, w - 8.0);
    let (ml, mr, mt, mb) = (52.0, 12.0, 34.0 + 16.0 * lines as f64, 30.0);
    let h = mt + 220.0 + mb;
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let (top, step) = axis(max);
    let y = |v: f64| mt + ph - ph * v / top;
    let mut o = format!(
        r#"<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(o, r#"<text x="10" y="18" class="tt">{}</text>"#, esc(title));
    o.push_str(&lg);
    let mut t = 0.0;
    while t <= top + step * 1e-9 {
        let _ = write!(
            o,
            r#"<line x1="{ml}" x2="{:.1}" y1="{:.1}" y2="{:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="ax" text-anchor="end">{}</text>"#,
            ml + pw,
            y(t),
            y(t),
            ml - 5.0,
            y(t) + 4.0,
            scale.fmt(t)
        );
        t += step;
    }
    let gw = pw / cats.len().max(1) as f64;
    let bw = gw * 0.8 / series.len().max(1) as f64;
    for (i, cat) in cats.iter().enumerate() {
        let gx = ml + gw * i as f64 + gw * 0.1;
        for (j, s) in series.iter().enumerate() {
            let v = s.values.get(i).copied().unwrap_or(0.0);
            let (x, yy) = (gx + bw * j as f64, y(v));
            let _ = write!(
                o,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" {}>{}</rect>"#,
                (bw - 1.0).max(1.0),
                mt + ph - yy,
                fill(s),
                bar_title(cat, s, v, scale)
            );
        }
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" class="ax" text-anchor="middle">{}</text>"#,
            ml + gw * (i as f64 + 0.5),
            mt + ph + 16.0,
            esc(cat)
        );
    }
    let _ = write!(
        o,
        r#"<line x1="{ml}" x2="{:.1}" y1="{:.1}" y2="{:.1}" class="axis"/></svg>"#,
        ml + pw,
        mt + ph,
        mt + ph
    );
    o
}

/// Horizontal grouped bars: one row block per category (labels on the left), one bar per series.
pub fn hbars(title: &str, cats: &[String], series: &[Series], scale: Scale) -> String {
    let w = WIDTH;
    let (lg, lines) = legend(series, 170.0, 36.0, w - 8.0);
    let (ml, mr, mt) = (170.0, 50.0, 34.0 + 16.0 * lines as f64);
    let bh = if series.len() > 1 { 9.0 } else { 13.0 };
    let rh = bh * series.len() as f64 + 6.0;
    let ph = rh * cats.len() as f64;
    let h = mt + ph + 24.0;
    let pw = w - ml - mr;
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let (top, step) = axis(max);
    let x = |v: f64| ml + pw * v / top;
    let mut o = format!(
        r#"<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(o, r#"<text x="10" y="18" class="tt">{}</text>"#, esc(title));
    o.push_str(&lg);
    let mut t = 0.0;
    while t <= top + step * 1e-9 {
        let _ = write!(
            o,
            r#"<line x1="{:.1}" x2="{:.1}" y1="{mt}" y2="{:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="ax" text-anchor="middle">{}</text>"#,
            x(t),
            x(t),
            mt + ph,
            x(t),
            mt + ph + 14.0,
            scale.fmt(t)
        );
        t += step;
    }
    for (i, cat) in cats.iter().enumerate() {
        let ry = mt + rh * i as f64 + 3.0;
        let label: String = if cat.chars().count() > 16 {
            cat.chars().take(15).chain(['…']).collect()
        } else {
            cat.clone()
        };
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" class="ax" text-anchor="end">{}<title>{}</title></text>"#,
            ml - 6.0,
            ry + rh / 2.0 + 1.0,
            esc(&label),
            esc(cat)
        );
        for (j, s) in series.iter().enumerate() {
            let v = s.values.get(i).copied().unwrap_or(0.0);
            let by = ry + bh * j as f64;
            let _ = write!(
                o,
                r#"<rect x="{ml}" y="{by:.1}" width="{:.1}" height="{:.1}" {}>{}</rect>"#,
                (x(v) - ml).max(0.0),
                bh - 1.0,
                fill(s),
                bar_title(cat, s, v, scale)
            );
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" class="vl">{}</text>"#,
                x(v) + 3.0,
                by + bh - 2.0,
                scale.fmt(v)
            );
        }
    }
    let _ = write!(
        o,
        r#"<line x1="{ml}" x2="{ml}" y1="{mt}" y2="{:.1}" class="axis"/></svg>"#,
        mt + ph
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_is_round() {
        let close =
            |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9;
        assert!(close(axis(123.0), (125.0, 25.0)), "{:?}", axis(123.0));
        assert!(close(axis(0.331), (0.4, 0.1)), "{:?}", axis(0.331));
        assert!(close(axis(5.0), (5.0, 1.0)));
        assert!(close(axis(0.0), (1.0, 0.25)));
    }

    #[test]
    fn charts_escape_labels() {
        let s = vec![Series {
            name: "a<b",
            color: "#000",
            light: false,
            values: vec![1.0],
        }];
        let v = vbars("t&", &["x\"".to_string()], &s, Scale::Count);
        assert!(v.contains("t&amp;") && v.contains("a&lt;b") && v.contains("x&quot;"));
        assert!(hbars("t", &["y".to_string()], &s, Scale::Percent).starts_with("<svg"));
    }
}
