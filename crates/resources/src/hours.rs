//! Opening hours: the compact raw grammar and the release's rule structure (task_format.md §7).
//!
//! Raw: `always` | `unknown` | rules separated by `;`, each `[MM-DD~MM-DD ][wA-B|wA,B,.. ]HH:MM-HH:MM[,HH:MM-HH:MM]`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    pub open: String,
    pub close: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DateRange {
    pub start: String,
    pub end: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_range: Option<DateRange>,
    /// 1 = Monday .. 7 = Sunday; `None` = every day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weekdays: Option<Vec<u8>>,
    pub time_windows: Vec<TimeWindow>,
}

/// `None` in `Attraction::hours` means unknown (the release's `null`): checks are skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpeningHours {
    pub always_open: bool,
    pub rules: Vec<Rule>,
}

/// `MM-DD` of a real day of a yearless calendar (02-29 allowed) as (month, day).
pub fn month_day(s: &str) -> Option<(u32, u32)> {
    const DAYS: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let (m, d) = s.split_once('-')?;
    if s.len() != 5 || m.len() != 2 {
        return None;
    }
    let (m, d): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    ((1..=12).contains(&m) && (1..=DAYS[m as usize - 1]).contains(&d)).then_some((m, d))
}

/// Minutes after midnight of a clock time `H:MM` or `HH:MM`, 00:00 to 24:00 (the end of the
/// day). One reader for every source: the raw grammar, the release's structure, ChinaTravel's
/// and OpenStreetMap's hours.
pub fn clock_minutes(s: &str) -> Option<u32> {
    let (h, m) = s.split_once(':')?;
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if !(1..=2).contains(&h.len()) || m.len() != 2 || !digits(h) || !digits(m) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    let t = h * 60 + m;
    (m < 60 && t <= 24 * 60).then_some(t)
}

/// `HH:MM` of minutes after midnight.
pub fn clock(t: u32) -> String {
    format!("{:02}:{:02}", t / 60, t % 60)
}

/// `HH:MM` exactly (the raw grammar and the release's structure write two-digit hours).
fn hhmm(s: &str) -> Option<u32> {
    (s.len() == 5).then(|| clock_minutes(s)).flatten()
}

/// Parse the raw grammar. `Ok(None)` is `unknown`.
pub fn parse(raw: &str) -> Result<Option<OpeningHours>, String> {
    let raw = raw.trim();
    match raw {
        "unknown" => return Ok(None),
        "always" => {
            return Ok(Some(OpeningHours {
                always_open: true,
                rules: Vec::new(),
            }));
        }
        "" => return Err("empty (write `unknown` when not known)".into()),
        _ => {}
    }
    let mut rules = Vec::new();
    for part in raw.split(';') {
        let mut tokens: Vec<&str> = part.split_whitespace().collect();
        let windows_tok = tokens
            .pop()
            .ok_or_else(|| format!("empty rule in {raw:?}"))?;
        let mut date_range = None;
        let mut weekdays = None;
        for t in tokens {
            if let Some(w) = t.strip_prefix('w') {
                let days: Vec<u8> = if let Some((a, b)) = w.split_once('-') {
                    let (a, b): (u8, u8) = (
                        a.parse().map_err(|_| format!("bad weekday {t:?}"))?,
                        b.parse().map_err(|_| format!("bad weekday {t:?}"))?,
                    );
                    if !(1..=7).contains(&a) || !(1..=7).contains(&b) || a > b {
                        return Err(format!("bad weekday range {t:?}"));
                    }
                    (a..=b).collect()
                } else {
                    w.split(',')
                        .map(|d| d.parse::<u8>().ok().filter(|d| (1..=7).contains(d)))
                        .collect::<Option<_>>()
                        .ok_or_else(|| format!("bad weekday list {t:?}"))?
                };
                weekdays = Some(days);
            } else if let Some((a, b)) = t.split_once('~') {
                if month_day(a).is_none() || month_day(b).is_none() {
                    return Err(format!("bad date range {t:?} (want MM-DD~MM-DD)"));
                }
                date_range = Some(DateRange {
                    start: a.to_string(),
                    end: b.to_string(),
                });
            } else {
                return Err(format!("unexpected {t:?} in {raw:?}"));
            }
        }
        let mut time_windows = Vec::new();
        for w in windows_tok.split(',') {
            let (o, c) = w
                .split_once('-')
                .ok_or_else(|| format!("bad time window {w:?} (want HH:MM-HH:MM)"))?;
            let (oo, cc) = (
                hhmm(o).ok_or_else(|| format!("bad time {o:?}"))?,
                hhmm(c).ok_or_else(|| format!("bad time {c:?}"))?,
            );
            if oo >= cc {
                return Err(format!("time window {w:?} closes before it opens"));
            }
            time_windows.push(TimeWindow {
                open: o.to_string(),
                close: c.to_string(),
            });
        }
        rules.push(Rule {
            date_range,
            weekdays,
            time_windows,
        });
    }
    Ok(Some(OpeningHours {
        always_open: false,
        rules,
    }))
}

impl OpeningHours {
    /// Whether the place is open at some time on a date, by the release's rule: the first rule
    /// whose date range matches decides; a weekday outside its list means closed.
    pub fn open_on(&self, month: u32, day: u32, weekday: u8) -> bool {
        if self.always_open {
            return true;
        }
        for r in &self.rules {
            if let Some(dr) = &r.date_range {
                let (s, e) = (
                    month_day(&dr.start).unwrap_or((1, 1)),
                    month_day(&dr.end).unwrap_or((12, 31)),
                );
                let x = (month, day);
                let inside = if s <= e {
                    s <= x && x <= e
                } else {
                    x >= s || x <= e
                };
                if !inside {
                    continue;
                }
            }
            return match &r.weekdays {
                Some(w) => w.contains(&weekday) && !r.time_windows.is_empty(),
                None => !r.time_windows.is_empty(),
            };
        }
        false
    }
}

impl OpeningHours {
    /// The opening windows on a date as the release's evaluator reads them
    /// (`POIOpeningHoursResolver.get_time_windows`): `None` when the check is skipped (always
    /// open, no rules, or no rule matches the date), `Some(&[])` when the place is closed that
    /// day (a weekday outside the matching rule's list), else the matching rule's windows. A
    /// matching rule without windows is passed over, as the release does.
    pub fn windows_on(&self, mmdd: &str, weekday: u8) -> Option<&[TimeWindow]> {
        if self.always_open {
            return None;
        }
        for r in &self.rules {
            if let Some(dr) = &r.date_range {
                let (s, e) = (dr.start.as_str(), dr.end.as_str());
                let inside = if s <= e {
                    s <= mmdd && mmdd <= e
                } else {
                    mmdd >= s || mmdd <= e
                };
                if !inside {
                    continue;
                }
            }
            if r.weekdays.as_ref().is_some_and(|w| !w.contains(&weekday)) {
                return Some(&[]);
            }
            if !r.time_windows.is_empty() {
                return Some(&r.time_windows);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_and_calendar_days() {
        assert_eq!(clock_minutes("9:00"), Some(540));
        assert_eq!(clock_minutes("09:05"), Some(545));
        assert_eq!(clock_minutes("24:00"), Some(1440));
        for bad in ["24:01", "9:5", "25:00", "09:60", "0900", "+9:00", ""] {
            assert_eq!(clock_minutes(bad), None, "{bad}");
        }
        assert_eq!(clock(545), "09:05");
        assert_eq!(month_day("02-29"), Some((2, 29)));
        for bad in ["02-30", "04-31", "13-01", "1-01", "00-10"] {
            assert_eq!(month_day(bad), None, "{bad}");
        }
    }

    #[test]
    fn grammar() {
        let h = parse("04-01~10-31 08:00-18:00;11-01~03-31 w2-7 08:30-12:00,13:00-17:00")
            .unwrap()
            .unwrap();
        assert_eq!(h.rules.len(), 2);
        assert!(h.open_on(5, 1, 1));
        assert!(!h.open_on(12, 7, 1)); // winter Monday closed
        assert!(h.open_on(1, 9, 2));
        assert!(parse("always").unwrap().unwrap().open_on(1, 1, 1));
        assert_eq!(h.windows_on("12-07", 1), Some(&[][..]));
        assert_eq!(h.windows_on("01-09", 2).map(<[TimeWindow]>::len), Some(2));
        assert_eq!(
            parse("always").unwrap().unwrap().windows_on("01-01", 1),
            None
        );
        assert_eq!(parse("unknown").unwrap(), None);
        for bad in [
            "",
            "8:00-17:00",
            "w0-7 08:00-17:00",
            "13-01~02-01 08:00-09:00",
            "09:00-08:00",
            "09:00",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
