//! OSM `opening_hours` to the release rule structure (resources::hours), for the forms the
//! structure can hold: `24/7`; rules `[months] [weekdays] HH:MM-HH:MM[,HH:MM-HH:MM]` or
//! `[months] [weekdays] off` joined by `;` (later rules override earlier ones for the days they
//! name, as OSM specifies); `PH ...` rules are left out (the release has no public holidays).
//! Within one date range every open weekday must share the same windows (the release gives a
//! rule one list of windows); anything else is untranslatable: `Err` with the reason.

use gtb_resources::hours::{DateRange, OpeningHours, Rule, TimeWindow, clock, clock_minutes};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"];
const MONTH_END: [u8; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// Windows per weekday (index 0 = Monday); `None` = not said, `Some([])` = closed.
type Week = [Option<Vec<(u32, u32)>>; 7];

pub fn translate(raw: &str) -> Result<OpeningHours, String> {
    let raw = raw.trim();
    if raw == "24/7" {
        return Ok(OpeningHours {
            always_open: true,
            rules: Vec::new(),
        });
    }
    // (date range or None for all year, week), in order of first appearance
    let mut groups: Vec<(Option<(u32, u32)>, Week)> = Vec::new();
    for part in raw.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        if part.starts_with("PH") {
            continue;
        }
        let (range, days, windows) = parse_rule(part)?;
        if range.is_none() {
            // an all-year rule overrides its days in every range said before
            for (_, week) in groups.iter_mut() {
                set(week, &days, &windows);
            }
        }
        if !groups.iter().any(|(r, _)| *r == range) {
            let base = groups
                .iter()
                .find(|(r, _)| r.is_none())
                .map_or_else(Week::default, |(_, w)| w.clone());
            groups.push((range, base));
        }
        let week = &mut groups
            .iter_mut()
            .find(|(r, _)| *r == range)
            .expect("added")
            .1;
        set(week, &days, &windows);
    }
    if groups.is_empty() {
        return Err("no rule".into());
    }
    check_disjoint(&groups)?;
    // the release takes the first rule whose dates match: ranges first, the all-year rule last
    groups.sort_by_key(|(r, _)| r.is_none());
    let mut rules = Vec::new();
    for (range, week) in &groups {
        if let Some(rule) = to_rule(*range, week)? {
            rules.push(rule);
        }
    }
    let all_day = |r: &Rule| {
        r.date_range.is_none()
            && r.weekdays.is_none()
            && r.time_windows.len() == 1
            && r.time_windows[0].open == "00:00"
            && r.time_windows[0].close == "24:00"
    };
    if rules.len() == 1 && all_day(&rules[0]) {
        rules.clear();
        return Ok(OpeningHours {
            always_open: true,
            rules,
        });
    }
    Ok(OpeningHours {
        always_open: false,
        rules,
    })
}

fn set(week: &mut Week, days: &[usize], windows: &[(u32, u32)]) {
    for &d in days {
        week[d] = Some(windows.to_vec());
    }
}

type Parsed = (Option<(u32, u32)>, Vec<usize>, Vec<(u32, u32)>);

/// One `;`-rule: `[months] [weekdays] windows|off`, read from the end: the last word holds
/// the windows, the word before it the weekdays when it starts with one, the rest the months.
fn parse_rule(part: &str) -> Result<Parsed, String> {
    let norm = part.replace(", ", ",");
    let mut words: Vec<&str> = norm.split_whitespace().collect();
    let last = words.pop().ok_or("empty rule")?;
    let mut days: Vec<usize> = (0..7).collect();
    if words
        .last()
        .is_some_and(|w| DAYS.iter().any(|d| w.starts_with(d)))
    {
        days = weekdays(words.pop().expect("checked"))?;
    }
    let range = match words.is_empty() {
        true => None,
        false => Some(months(&words.join(" "))?),
    };
    if matches!(last, "off" | "closed") {
        return Ok((range, days, Vec::new()));
    }
    if last == "24/7" {
        return Ok((range, days, vec![(0, 24 * 60)]));
    }
    let mut windows = Vec::new();
    for w in last.split(',') {
        let (o, c) = w
            .split_once('-')
            .ok_or_else(|| format!("{w:?}: not a time span"))?;
        let (o, c) = (time(o)?, time(c)?);
        if o >= c {
            return Err(format!("{w:?} runs past midnight"));
        }
        windows.push((o, c));
    }
    Ok((range, days, windows))
}

/// `Apr-Oct`, `Nov-Mar`, `Apr 01-Oct 31`, `Dec 25` -> (MMDD start, MMDD end) as m*100+d.
fn months(tok: &str) -> Result<(u32, u32), String> {
    let date = |s: &str, end: bool| -> Result<u32, String> {
        let mut it = s.split_whitespace();
        let m = it.next().unwrap_or("");
        let m = MONTHS
            .iter()
            .position(|x| *x == m)
            .ok_or_else(|| format!("{s:?}: not a month"))? as u32
            + 1;
        let d = match it.next() {
            Some(d) => d
                .parse::<u32>()
                .ok()
                .filter(|d| (1..=u32::from(MONTH_END[m as usize - 1])).contains(d))
                .ok_or_else(|| format!("{s:?}: not a day"))?,
            None if end => u32::from(MONTH_END[m as usize - 1]).min(if m == 2 { 28 } else { 31 }),
            None => 1,
        };
        Ok(m * 100 + d)
    };
    match tok.split_once('-') {
        Some((a, b)) => Ok((date(a.trim(), false)?, date(b.trim(), true)?)),
        None => Ok((date(tok, false)?, date(tok, true)?)),
    }
}

/// `Mo-Fr`, `Tu-Su`, `Fr-Mo`, `Mo,We,Fr`, `Mo-Fr,Su` -> day indices (0 = Monday).
fn weekdays(tok: &str) -> Result<Vec<usize>, String> {
    let day = |s: &str| {
        DAYS.iter()
            .position(|d| *d == s.trim())
            .ok_or_else(|| format!("{s:?}: not a weekday"))
    };
    let mut out = Vec::new();
    for part in tok.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (day(a)?, day(b)?);
                let mut d = a;
                loop {
                    out.push(d);
                    if d == b {
                        break;
                    }
                    d = (d + 1) % 7;
                }
            }
            None => out.push(day(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `9:00`, `09:00`, `24:00` -> minutes (`hours::clock_minutes`).
fn time(s: &str) -> Result<u32, String> {
    clock_minutes(s).ok_or_else(|| format!("{s:?}: not a time"))
}

fn check_disjoint(groups: &[(Option<(u32, u32)>, Week)]) -> Result<(), String> {
    let ranges: Vec<(u32, u32)> = groups.iter().filter_map(|(r, _)| *r).collect();
    let covers = |(s, e): (u32, u32), x: u32| {
        if s <= e {
            s <= x && x <= e
        } else {
            x >= s || x <= e
        }
    };
    for (i, a) in ranges.iter().enumerate() {
        for b in &ranges[i + 1..] {
            if covers(*a, b.0) || covers(*a, b.1) || covers(*b, a.0) {
                return Err("date ranges overlap".into());
            }
        }
    }
    Ok(())
}

fn mmdd(x: u32) -> String {
    format!("{:02}-{:02}", x / 100, x % 100)
}

/// One release rule for a date range: open weekdays must share their windows.
fn to_rule(range: Option<(u32, u32)>, week: &Week) -> Result<Option<Rule>, String> {
    let said: Vec<usize> = (0..7).filter(|&d| week[d].is_some()).collect();
    if said.is_empty() {
        return Ok(None);
    }
    let open: Vec<usize> = said
        .iter()
        .copied()
        .filter(|&d| week[d].as_ref().is_some_and(|w| !w.is_empty()))
        .collect();
    let windows = open
        .first()
        .and_then(|&d| week[d].clone())
        .unwrap_or_default();
    if open.iter().any(|&d| week[d].as_ref() != Some(&windows)) {
        return Err("weekdays with different hours".into());
    }
    let weekdays = (open.len() < 7).then(|| open.iter().map(|&d| d as u8 + 1).collect());
    Ok(Some(Rule {
        date_range: range.map(|(s, e)| DateRange {
            start: mmdd(s),
            end: mmdd(e),
        }),
        weekdays,
        time_windows: windows
            .iter()
            .map(|&(o, c)| TimeWindow {
                open: clock(o),
                close: clock(c),
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(raw: &str) -> String {
        let h = translate(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        serde_json::to_string(&h).unwrap()
    }

    #[test]
    fn common_forms() {
        assert_eq!(
            rules("Mo-Su 09:00-17:00"),
            r#"{"always_open":false,"rules":[{"time_windows":[{"open":"09:00","close":"17:00"}]}]}"#
        );
        assert_eq!(
            rules("Tu-Su 08:30-17:00; Mo off"),
            r#"{"always_open":false,"rules":[{"weekdays":[2,3,4,5,6,7],"time_windows":[{"open":"08:30","close":"17:00"}]}]}"#
        );
        assert_eq!(rules("24/7"), r#"{"always_open":true,"rules":[]}"#);
        assert_eq!(rules("00:00-24:00"), r#"{"always_open":true,"rules":[]}"#);
        assert_eq!(rules("24/7; PH off"), r#"{"always_open":true,"rules":[]}"#);
        let h = translate("Apr-Oct 08:00-18:00; Nov-Mar Tu-Su 08:30-12:00,13:00-17:00").unwrap();
        assert_eq!(h.rules.len(), 2);
        assert!(h.open_on(5, 1, 1));
        assert!(!h.open_on(12, 7, 1)); // a winter Monday
        assert!(h.open_on(1, 9, 2));
        assert_eq!(h.rules[1].date_range.as_ref().unwrap().start, "11-01");
        assert_eq!(h.rules[1].date_range.as_ref().unwrap().end, "03-31");
        // a seasonal rule after an all-year one: months first, then the rest of the year
        let h = translate("Mo-Su 08:00-17:00; Jul-Aug 07:30-19:00; PH off").unwrap();
        assert_eq!(h.windows_on("07-15", 3).unwrap()[0].open, "07:30");
        assert_eq!(h.windows_on("10-15", 3).unwrap()[0].open, "08:00");
        // a closed season is closed
        let h = translate("Apr 01-Oct 31 09:00-17:00; Nov-Mar off").unwrap();
        assert_eq!(h.windows_on("12-01", 3), Some(&[][..]));
        let h = translate("Mo,We,Fr-Su 9:00-17:00").unwrap();
        assert_eq!(h.rules[0].weekdays, Some(vec![1, 3, 5, 6, 7]));
    }

    #[test]
    fn untranslatable_forms_are_errors() {
        for raw in [
            "Mo-Fr 09:00-17:00; Sa-Su 10:00-16:00",
            "sunrise-sunset",
            "18:00-02:00",
            "Mo-Su 09:00+",
            "Jan-Jun 09:00-17:00; Mar-Aug 10:00-16:00",
            "",
            "SH off",
            "9-17",
        ] {
            assert!(translate(raw).is_err(), "{raw}");
        }
    }
}
