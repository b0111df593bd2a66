//! Rules 6 and 7, each member's path through a day: consecutive places inside a city block
//! joined by `intracity_transport` (the first activity after arriving in a city is one), and
//! the member's activities running forward in time across segments.

use super::{Ctx, activities, days, is_intercity, kind, segments};
use crate::pyval::{Participants, get, key, parse_time, text};
use gtb_core::FastMap as HashMap;
use serde_json::Value;

// ---- 6 --------------------------------------------------------------------------------
#[derive(Debug, Clone, PartialEq)]
enum Pos {
    /// just arrived by intercity transport: the next activity must be a transfer
    Arrived,
    At(String),
}

/// Start and end place of an activity: `location` for attraction/food/hotel, `from`/`to` for
/// a transfer, none for anything else (a rest keeps the member where they are).
fn places(act: &Value) -> (Option<String>, Option<String>) {
    match kind(act) {
        "attraction" | "food" | "hotel" => {
            let l = key(get(act, "location"));
            (l.clone(), l)
        }
        "intracity_transport" => (key(get(act, "from")), key(get(act, "to"))),
        _ => (None, None),
    }
}

pub(super) fn continuity(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        let mut pos: HashMap<String, Option<Pos>> =
            cx.users.iter().map(|u| (u.clone(), None)).collect();
        for seg in segments(day) {
            if is_intercity(seg) {
                for u in cx.users {
                    pos.insert(u.clone(), Some(Pos::Arrived));
                }
                continue;
            }
            let Some(acts) = activities(seg) else {
                continue;
            };
            let city = text(seg, "city").to_string();
            for act in acts {
                let k = kind(act);
                let (from, to) = places(act);
                for u in Participants::of(act).members(cx.users) {
                    if k == "rest" {
                        continue;
                    }
                    let prev = pos.get(&u).cloned().flatten();
                    let missing = |cx: &mut Ctx, p: &str, f: &str| {
                        cx.push(
                            "missing_intracity_transport",
                            day,
                            format!("({city}): {u} 从 '{p}' 到 '{f}' 缺少城内交通"),
                        )
                    };
                    match prev {
                        Some(Pos::Arrived) => {
                            if k != "intracity_transport" {
                                missing(cx, "交通枢纽(到达点)", from.as_deref().unwrap_or("?"));
                            }
                            if let Some(t) = &to {
                                pos.insert(u.clone(), Some(Pos::At(t.clone())));
                            }
                        }
                        Some(Pos::At(p)) if k == "hotel" => {
                            if let Some(f) = &from
                                && *f != p
                            {
                                missing(cx, &p, f);
                            }
                            if to.as_deref().is_some_and(|t| !t.is_empty()) {
                                pos.insert(u.clone(), to.clone().map(Pos::At));
                            }
                        }
                        Some(Pos::At(p)) => {
                            if let Some(f) = &from
                                && *f != p
                            {
                                if k == "intracity_transport" {
                                    cx.push(
                                        "intracity_transport_origin_mismatch",
                                        day,
                                        format!("({city}): {u} 的城内交通 起点为 '{f}'，但用户当前 位于 '{p}'"),
                                    );
                                } else {
                                    missing(cx, &p, f);
                                }
                            }
                            if let Some(t) = &to {
                                pos.insert(u.clone(), Some(Pos::At(t.clone())));
                            }
                        }
                        None => {
                            let keep = if k == "hotel" {
                                to.as_deref().is_some_and(|t| !t.is_empty())
                            } else {
                                to.is_some()
                            };
                            if keep {
                                pos.insert(u.clone(), to.clone().map(Pos::At));
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---- 7 --------------------------------------------------------------------------------
pub(super) fn timeline(plan: &Value, cx: &mut Ctx) {
    for day in days(plan) {
        // (activity or segment, participants, description)
        let mut items: Vec<(&Value, Participants, String)> = Vec::new();
        for seg in segments(day) {
            if is_intercity(seg) {
                items.push((
                    seg,
                    Participants::Everyone,
                    format!(
                        "城际交通 {}→{}",
                        text(seg, "from_city"),
                        text(seg, "to_city")
                    ),
                ));
            } else if let Some(acts) = activities(seg) {
                for a in acts {
                    let d = match kind(a) {
                        "intracity_transport" => {
                            format!("城内交通 {}→{}", text(a, "from"), text(a, "to"))
                        }
                        k @ ("attraction" | "food" | "hotel") => {
                            format!("{k} {}", text(a, "location"))
                        }
                        "rest" => "休息".into(),
                        k => k.to_string(),
                    };
                    items.push((a, Participants::of(a), d));
                }
            }
        }
        for u in cx.users {
            let mut prev: Option<(u32, &str)> = None;
            for (a, _, d) in items.iter().filter(|(_, p, _)| p.contains(u)) {
                let start = parse_time(get(a, "start_time"));
                if let (Some((pe, pd)), Some(s)) = (prev, start)
                    && s < pe
                {
                    cx.push(
                        "timeline_order_violation",
                        day,
                        format!(
                            "{u} 的时间线倒流 - '{pd}' 结束于 {}，但 '{d}' 开始于 {}",
                            gtb_plan::hhmm(pe),
                            text(a, "start_time")
                        ),
                    );
                }
                if kind(a) == "hotel" {
                    continue;
                }
                if let Some(e) = parse_time(get(a, "end_time"))
                    && start.is_none_or(|s| e >= s)
                {
                    prev = Some((e, d));
                }
            }
        }
    }
}
