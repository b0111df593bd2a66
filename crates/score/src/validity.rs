//! The release's nine plan-validity rules (`evaluation/plan_validity.py`), on any plan JSON:
//!
//! 1. adjacent cities are joined by an `intercity_transport` (within a day and across days);
//! 2. every night but the last ends with a hotel, the last activity of the day's last block;
//! 3. times parse and run forward (hotels and intercity trips may pass midnight);
//! 4. nobody is in two overlapping activities of a city block;
//! 5. attractions are visited within their opening hours on the day's date;
//! 6. inside a city block each member's consecutive places are joined by
//!    `intracity_transport` (arriving in a city, the first activity must be one);
//! 7. each member's day runs forward in time across segments;
//! 8. food, hotel and intercity transport carry `avg_cost`;
//! 9. `participants` is a non-empty list of known members or `"All"`.

use super::pyval::{self, Participants, get, has, list, parse_time, text};
use super::resolver::PoiDb;
use serde::Serialize;
use serde_json::Value;

mod paths;
use paths::{continuity, timeline};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// the release's issue type, e.g. `missing_hotel`
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub day: Value,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Validity {
    pub valid: bool,
    pub issues: Vec<Issue>,
}

impl Validity {
    /// Issue counts by type, sorted.
    pub fn counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut m = std::collections::BTreeMap::new();
        for i in &self.issues {
            *m.entry(i.kind).or_insert(0) += 1;
        }
        m
    }
}

struct Ctx<'a> {
    users: &'a [String],
    issues: Vec<Issue>,
}

impl Ctx<'_> {
    fn push(&mut self, kind: &'static str, day: &Value, message: String) {
        self.issues.push(Issue {
            kind,
            day: day_num(day),
            message,
        });
    }
}

fn day_num(day: &Value) -> Value {
    get(day, "day").cloned().unwrap_or(Value::from(0))
}

fn days(plan: &Value) -> &[Value] {
    list(plan, "days")
}

fn segments(day: &Value) -> &[Value] {
    list(day, "city_segments")
}

fn is_intercity(seg: &Value) -> bool {
    text(seg, "type") == "intercity_transport"
}

/// The activities of a segment that has an `activities` key.
fn activities(seg: &Value) -> Option<&[Value]> {
    has(seg, "activities").then(|| list(seg, "activities"))
}

fn kind(act: &Value) -> &str {
    text(act, "type")
}

/// `location`, else `to` (the release's label of an activity in messages and keys).
pub fn label(act: &Value) -> &str {
    get(act, "location")
        .or_else(|| get(act, "to"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Strip one administrative suffix (市, 区, 县, 自治州, 地区), as the release compares cities here.
pub fn normalize_city(city: &str) -> &str {
    for s in ["市", "区", "县", "自治州", "地区"] {
        if let Some(x) = city.strip_suffix(s)
            && !x.is_empty()
        {
            return x;
        }
    }
    city
}

fn cities_match(a: &str, b: &str) -> bool {
    a == b || normalize_city(a) == normalize_city(b)
}

/// Run the nine rules.
pub fn check(plan: &Value, users: &[String], db: &PoiDb) -> Validity {
    let mut cx = Ctx {
        users,
        issues: Vec::new(),
    };
    intercity(plan, &mut cx);
    hotel_every_night(plan, &mut cx);
    time_order(plan, &mut cx);
    time_overlap(plan, &mut cx);
    opening_hours(plan, db, &mut cx);
    continuity(plan, &mut cx);
    timeline(plan, &mut cx);
    avg_cost(plan, &mut cx);
    participants(plan, &mut cx);
    Validity {
        valid: cx.issues.is_empty(),
        issues: cx.issues,
    }
}

// ---- 1 --------------------------------------------------------------------------------
fn intercity(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        let mut prev: Option<&str> = None;
        for seg in segments(day) {
            if is_intercity(seg) {
                prev = Some(text(seg, "to_city"));
            } else if has(seg, "city") {
                let cur = text(seg, "city");
                if let Some(p) = prev
                    && !cities_match(p, cur)
                {
                    cx.push(
                        "missing_intercity_transport",
                        day,
                        format!("从 {p} 到 {cur} 缺少城间交通"),
                    );
                }
                prev = Some(cur);
            }
        }
    }
    let ds = days(plan);
    for w in ds.windows(2) {
        let last = segments(&w[0]).iter().rev().find_map(|s| {
            if has(s, "city") {
                Some(text(s, "city"))
            } else if is_intercity(s) {
                Some(text(s, "to_city"))
            } else {
                None
            }
        });
        let first = segments(&w[1]).iter().find_map(|s| {
            if is_intercity(s) {
                Some(text(s, "to_city"))
            } else if has(s, "city") {
                Some(text(s, "city"))
            } else {
                None
            }
        });
        if let (Some(a), Some(b)) = (last, first)
            && !a.is_empty()
            && !b.is_empty()
            && !cities_match(a, b)
            && !segments(&w[1]).first().is_some_and(is_intercity)
        {
            cx.push(
                "missing_intercity_transport",
                &w[1],
                format!("跨天从 {a} 到 {b} 缺少城间交通"),
            );
        }
    }
}

// ---- 2 --------------------------------------------------------------------------------
fn hotel_every_night(plan: &Value, cx: &mut Ctx) {
    let ds = days(plan);
    if ds.len() <= 1 {
        return;
    }
    for day in &ds[..ds.len() - 1] {
        let segs = segments(day);
        let last_block = segs
            .iter()
            .rev()
            .find(|s| has(s, "activities") && !is_intercity(s));
        let Some(block) = last_block else {
            cx.push("missing_hotel", day, "未安排住宿（无 city_block）".into());
            continue;
        };
        let acts = list(block, "activities");
        let Some(last) = acts.last() else {
            cx.push(
                "missing_hotel",
                day,
                "未安排住宿（最后一个 city_block 无活动）".into(),
            );
            continue;
        };
        if kind(last) != "hotel" {
            let any_hotel = segs
                .iter()
                .filter_map(activities)
                .flatten()
                .any(|a| kind(a) == "hotel");
            if any_hotel {
                cx.push(
                    "hotel_not_last_activity",
                    day,
                    "hotel 未安排在当天最后一个 city_block 的最后一个活动位置".into(),
                );
            } else {
                cx.push("missing_hotel", day, "未安排住宿".into());
            }
        }
    }
}

// ---- 3 --------------------------------------------------------------------------------
fn time_order(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        for seg in segments(day) {
            if is_intercity(seg) {
                time_range(seg, day, "intercity_transport", true, cx);
            } else if let Some(acts) = activities(seg) {
                for a in acts.iter().filter(|a| kind(a) != "hotel") {
                    time_range(a, day, kind(a), false, cx);
                }
            }
        }
    }
}

fn time_range(act: &Value, day: &Value, what: &str, overnight: bool, cx: &mut Ctx) {
    let (s, e) = (text(act, "start_time"), text(act, "end_time"));
    match (
        parse_time(get(act, "start_time")),
        parse_time(get(act, "end_time")),
    ) {
        (Some(a), Some(b)) => {
            if b <= a && !overnight {
                cx.push(
                    "invalid_time_range",
                    day,
                    format!("{what} '{}' 结束时间不晚于开始时间 ({s} - {e})", label(act)),
                );
            }
        }
        _ => cx.push(
            "invalid_time_format",
            day,
            format!("{what} '{}' 时间格式无效 ({s} - {e})", label(act)),
        ),
    }
}

// ---- 4 --------------------------------------------------------------------------------
/// Pairs of activities (indices into a block) in which one member overlaps; hotels excluded.
/// Shared with the utility, which does not score such activities.
pub fn overlapping_pairs(acts: &[Value], users: &[String]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    // each activity's span and participants, read once for every user and pair
    let read: Vec<_> = acts
        .iter()
        .map(|a| (kind(a) != "hotel", Participants::of(a), pyval::span(a)))
        .collect();
    for u in users {
        let mine: Vec<usize> = (0..acts.len())
            .filter(|&i| read[i].0 && read[i].1.contains(u))
            .collect();
        for (x, &i) in mine.iter().enumerate() {
            for &j in &mine[x + 1..] {
                if pyval::spans_overlap(read[i].2, read[j].2) {
                    out.push((u.clone(), i, j));
                }
            }
        }
    }
    out
}

fn time_overlap(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        for seg in segments(day) {
            let Some(acts) = activities(seg) else {
                continue;
            };
            for (u, i, j) in overlapping_pairs(acts, cx.users) {
                let span = |a: &Value| format!("{}-{}", text(a, "start_time"), text(a, "end_time"));
                cx.push(
                    "time_overlap",
                    day,
                    format!(
                        "{u} 的活动时间冲突 - '{}' ({}) 与 '{}' ({})",
                        label(&acts[i]),
                        span(&acts[i]),
                        label(&acts[j]),
                        span(&acts[j])
                    ),
                );
            }
        }
    }
}

// ---- 5 --------------------------------------------------------------------------------
fn opening_hours(plan: &Value, db: &PoiDb, cx: &mut Ctx) {
    for day in days(plan) {
        let date = text(day, "date");
        if date.is_empty() {
            continue;
        }
        for seg in segments(day) {
            let Some(acts) = activities(seg) else {
                continue;
            };
            let city = text(seg, "city");
            if city.is_empty() {
                continue;
            }
            for a in acts.iter().filter(|a| kind(a) == "attraction") {
                let (loc, s, e) = (
                    text(a, "location"),
                    text(a, "start_time"),
                    text(a, "end_time"),
                );
                if loc.is_empty() || s.is_empty() || e.is_empty() {
                    continue;
                }
                let Some(windows) = db.windows(loc, city, date) else {
                    continue;
                };
                // the release compares the HH:MM strings
                let inside = windows.iter().any(|w| {
                    !w.open.is_empty()
                        && !w.close.is_empty()
                        && s >= w.open.as_str()
                        && e <= w.close.as_str()
                });
                if inside {
                    continue;
                }
                let msg = if windows.is_empty() {
                    format!("({date}): '{loc}' 当天不开放")
                } else {
                    let w: Vec<String> = windows
                        .iter()
                        .map(|w| format!("{}-{}", w.open, w.close))
                        .collect();
                    format!(
                        "({date}): '{loc}' 的活动时间 {s}-{e} 不在开放时间 {} 内",
                        w.join(", ")
                    )
                };
                cx.push("outside_opening_hours", day, msg);
            }
        }
    }
}

// ---- 8 --------------------------------------------------------------------------------
fn avg_cost(plan: &Value, cx: &mut Ctx) {
    let missing = |v: &Value| get(v, "avg_cost").is_none_or(Value::is_null);
    for day in days(plan) {
        for seg in segments(day) {
            if is_intercity(seg) {
                if missing(seg) {
                    cx.push(
                        "missing_avg_cost",
                        day,
                        format!(
                            "城际交通 {}→{} 缺少 avg_cost",
                            text(seg, "from_city"),
                            text(seg, "to_city")
                        ),
                    );
                }
            } else if let Some(acts) = activities(seg) {
                for a in acts {
                    if matches!(kind(a), "food" | "hotel") && missing(a) {
                        cx.push(
                            "missing_avg_cost",
                            day,
                            format!("{} '{}' 缺少 avg_cost", kind(a), text(a, "location")),
                        );
                    }
                }
            }
        }
    }
}

// ---- 9 --------------------------------------------------------------------------------
fn participants(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        for seg in segments(day) {
            let Some(acts) = activities(seg) else {
                continue;
            };
            let city = text(seg, "city");
            for a in acts.iter().filter(|a| kind(a) != "hotel") {
                // the activity as a finding names it (built only for a finding)
                let what = || format!("({city}): {} '{}'", kind(a), label(a));
                match get(a, "participants") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(l)) if l.is_empty() => cx.push(
                        "invalid_participants",
                        day,
                        format!("{} 的 participants 为空列表", what()),
                    ),
                    Some(Value::Array(l)) => {
                        for n in l {
                            let ok = n.as_str().is_some_and(|s| {
                                s == gtb_plan::ALL || cx.users.iter().any(|u| u == s)
                            });
                            if !ok {
                                cx.push(
                                    "invalid_participants",
                                    day,
                                    format!(
                                        "{} 的参与者 '{}' 不在用户列表中",
                                        what(),
                                        n.as_str().map_or_else(|| n.to_string(), str::to_string)
                                    ),
                                );
                            }
                        }
                    }
                    Some(_) => cx.push(
                        "invalid_participants",
                        day,
                        format!("{} 的 participants 不是列表", what()),
                    ),
                }
            }
        }
    }
}
