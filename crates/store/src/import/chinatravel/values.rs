//! Cell values: numbers, positions converted to WGS-84 and checked against the city, and
//! daily opening hours; faults are noted and the field left unknown.

use super::{BAD_FIELD, BROKEN_HOURS, FAR_KM, Notes};
use crate::{Coords, bd09_to_wgs84, gcj02_to_wgs84};
use gtb_resources::City;
use gtb_resources::hours::{OpeningHours, Rule, TimeWindow, clock, clock_minutes};

/// A number field: empty is unknown; anything else unreadable is noted with its position.
pub(super) fn number(text: &str, at: &str, field: &'static str, notes: &mut Notes) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v),
        _ => {
            let why = format!("{at}: {field} {text:?} is not a number");
            notes.degraded.push((at.to_string(), field, BAD_FIELD, why));
            None
        }
    }
}

/// A position (lat, lng) in the given datum, converted to WGS-84; missing, zero or
/// unreadable coordinates leave the row without a position.
pub(super) fn position(
    (lat, lng): (&str, &str),
    datum: Coords,
    city: &City,
    at: &str,
    notes: &mut Notes,
) -> (Option<f64>, Option<f64>, Option<Coords>) {
    let (Some(la), Some(lo)) = (number(lat, at, "lat", notes), number(lng, at, "lng", notes))
    else {
        return (None, None, None);
    };
    if la == 0.0 && lo == 0.0 {
        let why = format!("{at}: lat/lng (0, 0) is no position");
        notes.degraded.push((at.to_string(), "lat", BAD_FIELD, why));
        return (None, None, None);
    }
    let (wla, wlo) = match datum {
        Coords::Bd09Converted => bd09_to_wgs84(la, lo),
        Coords::Gcj02Converted => gcj02_to_wgs84(la, lo),
        Coords::Wgs84 => (la, lo),
    };
    let km = gtb_resources::geodesy::distance_km((wla, wlo), (city.lat, city.lng));
    if km.is_nan() || km >= FAR_KM {
        let why = format!(
            "{at}: lat/lng ({la}, {lo}) is {km:.0} km from {}, not a position in it",
            city.name
        );
        notes.degraded.push((at.to_string(), "lat", BAD_FIELD, why));
        return (None, None, None);
    }
    (Some(wla), Some(wlo), Some(datum))
}

/// The same hours every day, as the release rule structure. 00:00-24:00 (or an equal open
/// and close) is open around the clock; a close earlier than the open is after midnight,
/// given as two windows of the day (00:00-close and open-24:00).
pub(super) fn daily_hours(open: &str, close: &str) -> Result<Option<OpeningHours>, String> {
    if open.is_empty() && close.is_empty() {
        return Ok(None);
    }
    let o = clock_minutes(open.trim()).ok_or_else(|| format!("{open:?} is not a time (HH:MM)"))?;
    let c =
        clock_minutes(close.trim()).ok_or_else(|| format!("{close:?} is not a time (HH:MM)"))?;
    let all_day = o == c || (o == 0 && c >= 24 * 60 - 1);
    if all_day {
        return Ok(Some(OpeningHours {
            always_open: true,
            rules: Vec::new(),
        }));
    }
    let window = |a: u32, b: u32| TimeWindow {
        open: clock(a),
        close: clock(b),
    };
    let time_windows = if c > o {
        vec![window(o, c)]
    } else if c == 0 {
        vec![window(o, 24 * 60)]
    } else {
        vec![window(0, c), window(o, 24 * 60)]
    };
    Ok(Some(OpeningHours {
        always_open: false,
        rules: vec![Rule {
            date_range: None,
            weekdays: None,
            time_windows,
        }],
    }))
}

/// Hours of a row; unreadable ones are noted and left unknown.
pub(super) fn hours_or_note(
    open: &str,
    close: &str,
    at: &str,
    notes: &mut Notes,
) -> Option<OpeningHours> {
    daily_hours(open, close).unwrap_or_else(|e| {
        let why = format!("{at}: opening hours {e}");
        notes
            .degraded
            .push((at.to_string(), "OpenTime", BROKEN_HOURS, why));
        None
    })
}
