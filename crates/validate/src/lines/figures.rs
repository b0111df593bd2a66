//! The figures a line states: a budget, hours or sights a day, in digits or Chinese
//! numerals, with the unit that says which.

use super::*;

/// A figure a line states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Figure {
    Budget(u32),
    Hours(u32),
    Sights(u32),
}

impl Figure {
    pub(super) fn scalar(self) -> (Scalar, u32) {
        match self {
            Figure::Budget(n) => (Scalar::AvgBudget, n),
            Figure::Hours(n) => (Scalar::MaxActiveHours, n),
            Figure::Sights(n) => (Scalar::MaxPoiPerDay, n),
        }
    }
}

/// Words that make a money figure the price of one thing, not the trip's budget.
pub(super) const PRICE_OF_A_THING: [&str; 9] = [
    "门票", "一晚", "每晚", "票价", "机票", "车票", "一顿", "每顿", "每餐",
];

/// A figure that starts `tail` (digits or Chinese numerals and the unit after them), with the
/// bytes it takes; `clause` decides what a bare 个 counts and whether money is a budget.
pub(super) fn figure_at(tail: &str, clause: &str) -> Option<(usize, Option<Figure>)> {
    let (n, used) = number_at(tail)?;
    let after = tail[used..].trim_start();
    let skipped = tail.len() - after.len();
    let unit = |words: &[&str]| {
        words
            .iter()
            .find(|w| after.starts_with(**w))
            .map(|w| w.len())
    };
    if let Some(u) = unit(&["元", "块"]) {
        let budget = !PRICE_OF_A_THING.iter().any(|w| clause.contains(w));
        return Some((skipped + u, budget.then_some(Figure::Budget(n))));
    }
    if let Some(u) = unit(&["个小时", "小时", "个钟头", "钟头"]) {
        return Some((skipped + u, Some(Figure::Hours(n))));
    }
    if let Some(u) = unit(&["个景点", "处景点", "个景区", "个地方", "个点"]) {
        return Some((skipped + u, Some(Figure::Sights(n))));
    }
    if let Some(u) = unit(&["个"]).filter(|_| clause.contains("景点")) {
        return Some((skipped + u, Some(Figure::Sights(n))));
    }
    Some((used, None))
}

/// Whether a number may start with `first`: asked at every character of a line, and most
/// start none.
pub(super) fn may_start(first: char) -> bool {
    first.is_ascii_digit() || chinese_digit(first).is_some() || chinese_unit(first).is_some()
}

/// A number that starts `text`: digits (with thousands commas, a decimal point and a 千 / 万
/// after them) or Chinese numerals; with the bytes it takes.
pub(super) fn number_at(text: &str) -> Option<(u32, usize)> {
    if !may_start(text.chars().next()?) {
        return None;
    }
    let digits: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .collect();
    if digits.starts_with(|c: char| c.is_ascii_digit()) {
        let digits = digits.trim_end_matches([',', '.']);
        let mut used = digits.len();
        let mut value: f64 = digits.replace(',', "").parse().ok()?;
        let rest = &text[used..];
        for (w, k) in [("千", 1e3), ("万", 1e4), ("k", 1e3), ("K", 1e3)] {
            if rest.starts_with(w) {
                value *= k;
                used += w.len();
                break;
            }
        }
        return Some((value.round().min(u32::MAX as f64) as u32, used));
    }
    chinese_number(text)
}

/// A Chinese numeral (三, 十二, 两千五百, 一万) that starts `text`, with the bytes it takes.
pub(super) fn chinese_number(text: &str) -> Option<(u32, usize)> {
    let (mut total, mut section, mut last, mut used) = (0u32, 0u32, 0u32, 0usize);
    for c in text.chars() {
        if let Some(d) = chinese_digit(c) {
            last = d;
        } else {
            let Some(unit) = chinese_unit(c) else {
                break;
            };
            if unit == 10_000 {
                total = (total + section + last).saturating_mul(unit);
                section = 0;
            } else {
                section += last.max(u32::from(unit == 10 && last == 0)) * unit;
            }
            last = 0;
        }
        used += c.len_utf8();
    }
    (used > 0).then_some((total + section + last, used))
}

/// A Chinese digit (零 to 九, and 两 for 2).
fn chinese_digit(c: char) -> Option<u32> {
    let d = match c {
        '零' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    };
    Some(d)
}

/// A Chinese unit of a numeral (十, 百, 千, 万).
fn chinese_unit(c: char) -> Option<u32> {
    match c {
        '十' => Some(10),
        '百' => Some(100),
        '千' => Some(1000),
        '万' => Some(10_000),
        _ => None,
    }
}
