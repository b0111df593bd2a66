//! Small statistics used by the audit: concentration (Gini, entropy) and the distances between
//! two categorical distributions (total variation, chi-square test of homogeneity).

use serde::Serialize;

/// Gini coefficient of non-negative frequencies (0 = all equal, → 1 = one item has everything).
/// `None` when there is nothing to measure.
pub fn gini(values: &[u64]) -> Option<f64> {
    let total: u64 = values.iter().sum();
    if values.is_empty() || total == 0 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len() as f64;
    // G = 2 Σ i·x_(i) / (n Σ x) − (n + 1) / n, with i = 1..n over ascending values
    let weighted: f64 = v
        .iter()
        .enumerate()
        .map(|(i, &x)| (i as f64 + 1.0) * x as f64)
        .sum();
    Some(2.0 * weighted / (n * total as f64) - (n + 1.0) / n)
}

/// Shannon entropy of the frequencies divided by its maximum ln(k): 1 = uniform over the k
/// observed categories. `None` for fewer than two categories.
pub fn normalized_entropy(values: &[u64]) -> Option<f64> {
    // Sorted so that the float sum does not depend on the caller's (hash-map) order.
    let mut nz: Vec<f64> = values
        .iter()
        .filter(|&&x| x > 0)
        .map(|&x| x as f64)
        .collect();
    nz.sort_by(f64::total_cmp);
    if nz.len() < 2 {
        return None;
    }
    let total: f64 = nz.iter().sum();
    let h: f64 = nz
        .iter()
        .map(|&x| {
            let p = x / total;
            -p * p.ln()
        })
        .sum();
    Some(h / (nz.len() as f64).ln())
}

/// Total variation distance between two count vectors over the same categories, each
/// normalised to shares: ½ Σ |p − q|. `None` if either side is empty.
pub fn total_variation(a: &[u64], b: &[u64]) -> Option<f64> {
    let (ta, tb): (u64, u64) = (a.iter().sum(), b.iter().sum());
    if ta == 0 || tb == 0 {
        return None;
    }
    Some(
        0.5 * a
            .iter()
            .zip(b)
            .map(|(&x, &y)| (x as f64 / ta as f64 - y as f64 / tb as f64).abs())
            .sum::<f64>(),
    )
}

/// Result of a chi-square test of homogeneity of two samples over k categories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChiSquare {
    pub statistic: f64,
    pub df: usize,
    pub p_value: f64,
}

/// Why a chi-square test was not computed.
pub const CHI2_SMALL: &str = "not computed: an expected count is below 5";
pub const CHI2_ONE_CATEGORY: &str = "not computed: fewer than two non-empty categories";
pub const CHI2_EMPTY: &str = "not computed: one side is empty";

/// Chi-square test of homogeneity on the 2×k table formed by two count vectors. Categories
/// empty on both sides are dropped; the test is computed only when every expected count is
/// at least 5 (the usual validity rule), otherwise the reason is returned.
pub fn chi_square(a: &[u64], b: &[u64]) -> Result<ChiSquare, &'static str> {
    let cols: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| **x + **y > 0)
        .map(|(&x, &y)| (x as f64, y as f64))
        .collect();
    let (na, nb): (f64, f64) = (
        cols.iter().map(|c| c.0).sum(),
        cols.iter().map(|c| c.1).sum(),
    );
    if na == 0.0 || nb == 0.0 {
        return Err(CHI2_EMPTY);
    }
    if cols.len() < 2 {
        return Err(CHI2_ONE_CATEGORY);
    }
    let n = na + nb;
    let mut stat = 0.0;
    for &(x, y) in &cols {
        let col = x + y;
        let (ea, eb) = (na * col / n, nb * col / n);
        if ea < 5.0 || eb < 5.0 {
            return Err(CHI2_SMALL);
        }
        stat += (x - ea).powi(2) / ea + (y - eb).powi(2) / eb;
    }
    let df = cols.len() - 1;
    Ok(ChiSquare {
        statistic: stat,
        df,
        p_value: chi2_survival(stat, df as f64),
    })
}

/// P(X ≥ x) for X ~ χ²(df): the upper regularised incomplete gamma Q(df/2, x/2).
pub fn chi2_survival(x: f64, df: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    upper_gamma_q(df / 2.0, x / 2.0)
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for x > 0
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Q(a, x) = Γ(a, x) / Γ(a): series for x < a + 1, continued fraction otherwise.
fn upper_gamma_q(a: f64, x: f64) -> f64 {
    let gln = ln_gamma(a);
    if x < a + 1.0 {
        let (mut ap, mut sum) = (a, 1.0 / a);
        let mut del = sum;
        for _ in 0..1000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        (1.0 - sum * (-x + a * x.ln() - gln).exp()).clamp(0.0, 1.0)
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        ((-x + a * x.ln() - gln).exp() * h).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gini_and_entropy() {
        assert_eq!(gini(&[5, 5, 5, 5]), Some(0.0));
        let g = gini(&[0, 0, 0, 10]).unwrap();
        assert!((g - 0.75).abs() < 1e-12, "{g}");
        assert!((normalized_entropy(&[3, 3, 3]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(normalized_entropy(&[7]), None);
    }

    #[test]
    fn distances() {
        assert_eq!(total_variation(&[1, 1], &[2, 2]), Some(0.0));
        assert!((total_variation(&[10, 0], &[0, 10]).unwrap() - 1.0).abs() < 1e-12);
        // a known value: Q(df=2, x=5.991) = 0.05
        assert!((chi2_survival(5.991_464_547, 2.0) - 0.05).abs() < 1e-6);
        assert!((chi2_survival(3.841_458_821, 1.0) - 0.05).abs() < 1e-6);
        assert!((chi2_survival(30.0, 10.0) - 8.566_412_e-4).abs() < 1e-8);
        let c = chi_square(&[50, 50], &[50, 50]).unwrap();
        assert_eq!((c.statistic, c.df), (0.0, 1));
        assert_eq!(chi_square(&[1, 50], &[2, 50]), Err(CHI2_SMALL));
        assert_eq!(chi_square(&[10, 0], &[10, 0]), Err(CHI2_ONE_CATEGORY));
    }
}
