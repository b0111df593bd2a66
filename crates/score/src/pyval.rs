//! Reading a plan the way the release's Python evaluator does: `dict.get` with defaults,
//! Python truthiness, `strptime("%H:%M")`, and the quirks of `participants` (a string is
//! searched by substring, a missing or empty list means everyone). Plans come from agents, so
//! nothing here assumes well-formed input and nothing panics.

use serde_json::Value;

/// `obj.get(key)` of a JSON object (anything else has no keys). A plan's objects hold a
/// handful of keys, and the scorer reads them by the million when the witness search checks
/// its plans: comparing the keys costs less than hashing the one asked for (`serde_json`'s
/// maps hash with SipHash), so a small object is scanned. Keys are unique, so both find the
/// same value.
pub fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    const SCAN: usize = 12;
    let map = v.as_object()?;
    if map.len() > SCAN {
        return map.get(key);
    }
    map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

/// Whether `key in obj`.
pub fn has(v: &Value, key: &str) -> bool {
    get(v, key).is_some()
}

/// A string field, or "" when absent or not a string (`obj.get(key, "")`).
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    get(v, key).and_then(Value::as_str).unwrap_or("")
}

/// A list field, or an empty slice when absent or not a list.
pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    get(v, key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The strings of a list field (other elements are skipped).
pub fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    list(v, key).iter().filter_map(Value::as_str).collect()
}

/// Python truthiness of an optional value.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// `float(x)` of a cost: numbers, and strings that parse as numbers.
pub fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// `strptime(s, "%H:%M")` as minutes after midnight: one or two digits each, hour 0–23.
pub fn parse_time(v: Option<&Value>) -> Option<u32> {
    let s = v?.as_str()?;
    let (h, m) = s.split_once(':')?;
    let digits = |x: &str| (1..=2).contains(&x.len()) && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Minutes of an activity (`_calculate_duration_minutes`): 0 when unparseable or not forward.
pub fn duration(act: &Value) -> u32 {
    span(act).map_or(0, |(s, e)| e - s)
}

/// An activity's forward `start`–`end` range in minutes: `None` when unparseable or not
/// forward (overnight), which never overlaps anything.
pub fn span(act: &Value) -> Option<(u32, u32)> {
    match (
        parse_time(get(act, "start_time")),
        parse_time(get(act, "end_time")),
    ) {
        (Some(s), Some(e)) if e > s => Some((s, e)),
        _ => None,
    }
}

/// Whether two spans overlap (`_time_ranges_overlap`); touching ranges do not.
pub fn spans_overlap(a: Option<(u32, u32)>, b: Option<(u32, u32)>) -> bool {
    matches!((a, b), (Some((s1, e1)), Some((s2, e2))) if s1 < e2 && s2 < e1)
}

/// Whether two activities' ranges overlap (`_time_ranges_overlap`): unparseable or
/// overnight ranges never do; touching ranges do not.
pub fn overlap(a: &Value, b: &Value) -> bool {
    spans_overlap(span(a), span(b))
}

/// A value as a key for equality tests between arbitrary JSON values (locations, days).
pub fn key(v: Option<&Value>) -> Option<String> {
    v.map(|v| match v {
        Value::String(s) => s.clone(),
        other => format!("\u{0}{other}"),
    })
}

/// Who takes part in an activity, as `_get_participants` returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Participants<'a> {
    /// absent, empty, falsy or `["All"]`
    Everyone,
    /// a list: members are its string elements (others never match a user)
    List(Vec<Option<&'a str>>),
    /// a string: Python's `in` tests substrings, and iterating yields characters
    Chars(&'a str),
    /// an object: `in` tests keys
    Keys(Vec<&'a str>),
    /// a number or `true`: `in` would raise in Python; nobody matches here
    Nobody,
}

impl<'a> Participants<'a> {
    pub fn of(act: &'a Value) -> Self {
        let p = get(act, "participants");
        if !truthy(p) {
            return Participants::Everyone;
        }
        match p.expect("truthy") {
            Value::Array(a) if a.len() == 1 && a[0].as_str() == Some(gtb_plan::ALL) => {
                Participants::Everyone
            }
            Value::Array(a) => Participants::List(a.iter().map(Value::as_str).collect()),
            Value::String(s) => Participants::Chars(s),
            Value::Object(o) => Participants::Keys(o.keys().map(String::as_str).collect()),
            _ => Participants::Nobody,
        }
    }
    /// `user in participants`.
    pub fn contains(&self, user: &str) -> bool {
        match self {
            Participants::Everyone => true,
            Participants::List(l) => l.contains(&Some(user)),
            Participants::Chars(s) => s.contains(user),
            Participants::Keys(k) => k.contains(&user),
            Participants::Nobody => false,
        }
    }
    /// `for user in participants` (for the continuity check).
    pub fn members(&self, all: &[String]) -> Vec<String> {
        match self {
            Participants::Everyone => all.to_vec(),
            Participants::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, s)| s.map_or_else(|| format!("\u{0}#{i}"), str::to_string))
                .collect(),
            Participants::Chars(s) => s.chars().map(String::from).collect(),
            Participants::Keys(k) => k.iter().map(|s| s.to_string()).collect(),
            Participants::Nobody => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_semantics() {
        assert_eq!(parse_time(Some(&json!("9:05"))), Some(545));
        assert_eq!(parse_time(Some(&json!("24:00"))), None);
        assert_eq!(parse_time(Some(&json!("08:00 "))), None);
        assert_eq!(parse_time(Some(&json!(800))), None);
        assert!(!truthy(Some(&json!(0))) && !truthy(Some(&json!([]))) && truthy(Some(&json!("x"))));
        assert_eq!(number(Some(&json!("80"))), Some(80.0));
        let a = json!({"start_time": "10:00", "end_time": "11:00"});
        let b = json!({"start_time": "11:00", "end_time": "12:00"});
        let c = json!({"start_time": "10:30", "end_time": "10:40"});
        assert!(!overlap(&a, &b) && overlap(&a, &c));
        assert_eq!(
            duration(&json!({"start_time": "20:00", "end_time": "08:00"})),
            0
        );
        let all = vec!["User1".to_string(), "User2".to_string()];
        let p = json!({"participants": ["All"]});
        assert_eq!(Participants::of(&p), Participants::Everyone);
        let p = json!({"participants": "User12"});
        assert!(Participants::of(&p).contains("User1"));
        assert_eq!(Participants::of(&p).members(&all).len(), 6);
        let p = json!({"participants": []});
        assert!(Participants::of(&p).contains("User2"));
    }

    #[test]
    fn get_finds_every_key_of_small_and_large_objects() {
        for n in [0, 1, 5, 12, 13, 40] {
            let mut m = serde_json::Map::new();
            for k in 0..n {
                m.insert(format!("k{k}"), json!(k));
            }
            let v = Value::Object(m);
            for k in 0..n {
                assert_eq!(get(&v, &format!("k{k}")), Some(&json!(k)), "{n} keys");
            }
            assert_eq!(get(&v, "k"), None);
            assert_eq!(get(&v, &format!("k{n}")), None);
        }
        assert_eq!(get(&json!([1]), "k0"), None);
    }
}
