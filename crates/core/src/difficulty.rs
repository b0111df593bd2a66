//! The release's difficulty score, computed with exact rationals.
//!
//! Release formula: `round(min(D,6)/3 + C/3 + N/2 - 1, 1)`, i.e. `(2·min(D,6) + 2·C + 3·N − 6) / 6`.
//! The paper's alternative, `0.5·f_N + 0.3·f_D + 0.2·f_C` on 1..5 ordinal scales with thresholds
//! 2.8 / 4.2, is selectable by config. Both are evaluated on integers so that class boundaries
//! never suffer float error (4/3 + 2/3 is exactly 2, not 1.999…).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Easy,
    Medium,
    Hard,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Easy, Class::Medium, Class::Hard];
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Easy => "easy",
            Class::Medium => "medium",
            Class::Hard => "hard",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Which weighting computes the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Formula {
    /// What the release's tasks show (default).
    Release,
    /// The paper's text: 0.5 f_N + 0.3 f_D + 0.2 f_C on ordinal 1..5 scales.
    Paper,
}

impl Formula {
    /// The name the config uses (`sample.difficulty`).
    pub fn name(self) -> &'static str {
        match self {
            Formula::Release => "release",
            Formula::Paper => "paper",
        }
    }
}

/// A score held as an exact fraction `num / den`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    pub num: i64,
    pub den: i64,
}

impl Score {
    /// Rounded to one decimal, half away from zero, as Python's round() on these values gives
    /// (no value here lies exactly on a .x5 boundary for a denominator of 6 or 30 except where
    /// noted in tests).
    pub fn tenths(self) -> i64 {
        // round(num/den * 10) with integer arithmetic, half up (all values are positive)
        (self.num * 20 + self.den) / (2 * self.den)
    }
    /// The one-decimal float the release writes.
    pub fn rounded(self) -> f64 {
        self.tenths() as f64 / 10.0
    }
}

/// Class thresholds, in tenths: easy below `easy_below`, hard above `hard_above`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    pub easy_below: f64,
    pub hard_above: f64,
}

impl Thresholds {
    pub fn release() -> Self {
        Thresholds {
            easy_below: 3.0,
            hard_above: 4.0,
        }
    }
    pub fn paper() -> Self {
        Thresholds {
            easy_below: 2.8,
            hard_above: 4.2,
        }
    }
}

/// Score for N members (children included), C cities and D days.
pub fn score(formula: Formula, n: u32, c: u32, d: u32) -> Score {
    let (n, c, d) = (n as i64, c as i64, d as i64);
    match formula {
        Formula::Release => Score {
            num: 2 * d.min(6) + 2 * c + 3 * n - 6,
            den: 6,
        },
        Formula::Paper => {
            // ordinal scales 1..5: N 2..6 -> 1..5; D 2..7 -> 1..5 (6 and 7 both 5); C 1..3 -> 1,3,5
            let f_n = (n - 1).clamp(1, 5);
            let f_d = (d - 1).clamp(1, 5);
            let f_c = (2 * c - 1).clamp(1, 5);
            Score {
                num: 5 * f_n + 3 * f_d + 2 * f_c,
                den: 10,
            }
        }
    }
}

/// Class of a score under thresholds, compared on the rounded one-decimal value (what the
/// release's labels agree with).
pub fn classify(s: Score, t: Thresholds) -> Class {
    let tenths = s.tenths();
    let easy = (t.easy_below * 10.0).round() as i64;
    let hard = (t.hard_above * 10.0).round() as i64;
    if tenths < easy {
        Class::Easy
    } else if tenths > hard {
        Class::Hard
    } else {
        Class::Medium
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_examples() {
        // examples from task_format.md §3.7
        let r = |n, c, d| score(Formula::Release, n, c, d).rounded();
        assert_eq!(r(2, 2, 3), 1.7);
        assert_eq!(r(3, 3, 7), 3.5);
        assert_eq!(r(4, 2, 5), 3.3);
        assert_eq!(r(6, 3, 7), 5.0);
        assert_eq!(r(2, 1, 2), 1.0);
        // 4/3 + 2/3 style sums land exactly on 3.0 and are medium
        let s = score(Formula::Release, 2, 3, 6);
        assert_eq!(s.rounded(), 3.0);
        assert_eq!(classify(s, Thresholds::release()), Class::Medium);
        assert_eq!(
            classify(score(Formula::Release, 6, 3, 7), Thresholds::release()),
            Class::Hard
        );
    }

    #[test]
    fn only_sixths_occur() {
        for n in 2..=6 {
            for c in 1..=3 {
                for d in 2..=7 {
                    let t = score(Formula::Release, n, c, d).tenths() % 10;
                    assert!([0, 2, 3, 5, 7, 8].contains(&t), "{n} {c} {d}");
                }
            }
        }
    }
}
