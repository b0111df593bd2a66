//! The release's opening-hours structure (rules of date ranges, weekdays and time windows),
//! checked field by field.

use super::fields::describe;
use gtb_resources::hours::{self, DateRange, OpeningHours, Rule, TimeWindow};
use serde_json::Value;

/// The release's opening-hours structure, checked: `null` (and an object with neither
/// `always_open` nor rules: no data) is unknown.
pub fn opening_hours(v: &Value) -> Result<Option<OpeningHours>, String> {
    let m = match v {
        Value::Null => return Ok(None),
        Value::Object(m) => m,
        v => return Err(format!("opening_hours is {}, not an object", describe(v))),
    };
    let always_open = match m.get("always_open") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(format!("always_open is {}, not true or false", describe(v))),
    };
    let rules = match m.get("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, r)| rule(r).map_err(|e| format!("rules[{i}]: {e}")))
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(format!("rules is {}, not a list", describe(v))),
    };
    if !always_open && rules.is_empty() {
        return Ok(None);
    }
    Ok(Some(OpeningHours { always_open, rules }))
}

fn rule(v: &Value) -> Result<Rule, String> {
    let Value::Object(m) = v else {
        return Err(format!("{}, not an object", describe(v)));
    };
    let date_range = match m.get("date_range") {
        None | Some(Value::Null) => None,
        Some(Value::Object(d)) => Some(DateRange {
            start: month_day(d.get("start")).map_err(|e| format!("date_range.start: {e}"))?,
            end: month_day(d.get("end")).map_err(|e| format!("date_range.end: {e}"))?,
        }),
        Some(v) => return Err(format!("date_range is {}, not an object", describe(v))),
    };
    let weekdays = match m.get("weekdays") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|d| d.as_u64().filter(|d| (1..=7).contains(d)).map(|d| d as u8))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| format!("weekdays {} are not all 1..7", Value::Array(a.clone())))?,
        ),
        Some(v) => return Err(format!("weekdays is {}, not a list", describe(v))),
    };
    let time_windows = match m.get("time_windows") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, w)| window(w).map_err(|e| format!("time_windows[{i}]: {e}")))
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(format!("time_windows is {}, not a list", describe(v))),
    };
    Ok(Rule {
        date_range,
        weekdays,
        time_windows,
    })
}

/// `MM-DD` of a real day (`hours::month_day`: ranges are yearless, 02-29 allowed).
fn month_day(v: Option<&Value>) -> Result<String, String> {
    let s = v.and_then(Value::as_str).ok_or("missing or not a string")?;
    match hours::month_day(s) {
        Some(_) => Ok(s.to_string()),
        None => Err(format!("{s:?} is not a MM-DD date")),
    }
}

/// `HH:MM` as minutes: 00:00..23:59, and 24:00 when `close`.
fn minutes(s: &str, close: bool) -> Option<u32> {
    let t = hours::clock_minutes(s).filter(|_| s.len() == 5)?;
    (t < 24 * 60 || close).then_some(t)
}

fn window(v: &Value) -> Result<TimeWindow, String> {
    let get = |k: &str| v.get(k).and_then(Value::as_str);
    let (Some(open), Some(close)) = (get("open"), get("close")) else {
        return Err(format!("{} has no open and close times", describe(v)));
    };
    let o = minutes(open, false).ok_or_else(|| format!("open {open:?} is not HH:MM"))?;
    let c = minutes(close, true).ok_or_else(|| format!("close {close:?} is not HH:MM"))?;
    if o >= c {
        return Err(format!("close {close:?} is not after open {open:?}"));
    }
    Ok(TimeWindow {
        open: open.to_string(),
        close: close.to_string(),
    })
}
