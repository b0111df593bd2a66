//! The JSON schema of a reply, as sent: closed vocabularies and candidate names as enums, list
//! sizes as bounds, the scalars' ranges as minimum / maximum, and per member only the fields
//! its strategy generates.

use crate::grounding::{CityCandidates, CityData, Member};
use gtb_resources::{CityId, Strategy, vocab};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The length of an opening line in characters (the schema's `minLength` / `maxLength`, and
/// the line check's bounds).
pub const LINE_CHARS: std::ops::RangeInclusive<usize> = 4..=400;

/// A JSON object from owned parts (`json!` would deep-copy nested values it is handed).
pub(crate) fn obj(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

pub(crate) fn str_enum(values: &[String]) -> Value {
    obj(vec![
        ("type", "string".into()),
        (
            "enum",
            Value::Array(values.iter().map(|v| Value::String(v.clone())).collect()),
        ),
    ])
}

pub(crate) fn list(item: Value, min: usize, max: usize) -> Value {
    obj(vec![
        ("type", "array".into()),
        ("items", item),
        ("minItems", min.into()),
        ("maxItems", max.into()),
    ])
}

pub(crate) fn object(props: Vec<(&str, Value)>) -> Value {
    let required: Vec<Value> = props
        .iter()
        .map(|(k, _)| Value::String(k.to_string()))
        .collect();
    obj(vec![
        ("type", "object".into()),
        ("properties", obj(props)),
        ("required", Value::Array(required)),
        ("additionalProperties", false.into()),
    ])
}

pub(crate) fn r(name: &str) -> Value {
    obj(vec![("$ref", Value::String(format!("#/$defs/{name}")))])
}

/// The name of a city block in `$defs`: the full fields (`weak`) or the individual fields of
/// copy_minor, with every food value as a must_eat or (`firm`) only those a venue serves.
pub(crate) fn city_block_name(id: CityId, weak: bool, firm: bool) -> String {
    let minor = if weak { "" } else { "_minor" };
    let firm = if firm { "_firm" } else { "" };
    format!("city{id}{minor}{firm}")
}

/// The `$defs` of one city: candidate names, categories and food values as enums (a firm
/// member's must_eat from the values a venue serves), and the city blocks a member writes.
pub(crate) fn city_defs(id: CityId, c: &CityCandidates) -> String {
    let names = if c.offered.is_empty() {
        c.inventory.keys().cloned().collect::<Vec<_>>()
    } else {
        c.offered.clone()
    };
    let (poi, cat, food, eat) = (
        format!("poi{id}"),
        format!("cat{id}"),
        format!("food{id}"),
        format!("eat{id}"),
    );
    let visit = |weak: bool| {
        let mut v = vec![
            ("must_visit", list(r(&poi), 1, 2)),
            ("reject_visit", list(r(&poi), 0, 1)),
        ];
        if weak {
            v.push((
                "category_pref",
                object(vec![
                    ("positive", list(r(&cat), 0, 2)),
                    ("negative", list(r(&cat), 0, 1)),
                ]),
            ));
        }
        object(v)
    };
    let food_block = |weak: bool, firm: bool| {
        let f = r(&food);
        let must = match (firm, c.firm_food.is_empty()) {
            (true, true) => list(json!({"type": "string"}), 0, 0),
            (true, false) => list(r(&eat), 0, 2),
            (false, _) => list(f.clone(), 0, 2),
        };
        let mut v = vec![("must_eat", must)];
        if weak {
            v.push(("prefer_eat", list(f.clone(), 0, 2)));
            v.push(("avoid_eat", list(f.clone(), 0, 1)));
        }
        v.push(("reject_eat", list(f, 0, 1)));
        object(v)
    };
    let mut m = Map::new();
    m.insert(poi.clone(), str_enum(&names));
    m.insert(cat.clone(), str_enum(&c.categories));
    m.insert(food.clone(), str_enum(&c.food_enum()));
    if !c.firm_food.is_empty() {
        m.insert(eat.clone(), str_enum(&c.firm_food));
    }
    for weak in [true, false] {
        for firm in [false, true] {
            m.insert(
                city_block_name(id, weak, firm),
                object(vec![
                    ("attractions", visit(weak)),
                    ("food", food_block(weak, firm)),
                ]),
            );
        }
    }
    let text = serde_json::to_string(&Value::Object(m)).expect("serialises");
    text[1..text.len() - 1].to_string()
}

/// The schema of the opening lines: one string per member, in slot order, within the line
/// check's length bounds.
pub(crate) fn lines_schema(members: &[Member]) -> Value {
    let mut by_slot: Vec<&Member> = members.iter().collect();
    by_slot.sort_by_key(|m| {
        m.user
            .trim_start_matches("User")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    let (lo, hi) = (LINE_CHARS.start(), LINE_CHARS.end());
    object(
        by_slot
            .iter()
            .map(|m| {
                (
                    m.user.as_str(),
                    json!({"type": "string", "minLength": lo, "maxLength": hi}),
                )
            })
            .collect(),
    )
}

/// The schema of a member's global constraints: the scalars within `[validate]`'s ranges
/// (avg_budget from `min_budget` up), list sizes as bounds.
fn globals_schema(min_budget: u32, v: &gtb_core::config::Validate) -> Value {
    use gtb_core::prefs::Scalar;
    let bounds = |s: Scalar, floor: u32| {
        let r = v.scalar_range(s);
        json!({"type": "integer", "minimum": floor.clamp(*r.start(), *r.end()), "maximum": r.end()})
    };
    object(vec![
        ("avg_budget", bounds(Scalar::AvgBudget, min_budget)),
        (
            "transport",
            object(vec![
                ("must", list(r("mode"), 0, 2)),
                ("prefer", list(r("mode"), 0, 2)),
                ("avoid", list(r("mode"), 0, 1)),
                ("reject", list(r("mode"), 0, 1)),
            ]),
        ),
        (
            "intensity",
            object(vec![
                ("max_poi_per_day", bounds(Scalar::MaxPoiPerDay, 0)),
                ("max_active_hours", bounds(Scalar::MaxActiveHours, 0)),
            ]),
        ),
        (
            "hotel_preference",
            object(vec![
                ("prefer", list(r("hotel"), 1, 3)),
                ("avoid", list(r("hotel"), 0, 1)),
            ]),
        ),
    ])
}

/// The schema of one member's table: only the fields its strategy generates (a copying
/// member's inherited ones are filled in by gtb), and per city the block of its strategy, with
/// the must_eat values a venue serves for a member who cannot yield.
pub(crate) fn member_table(m: &Member, cities: &[Arc<CityData>]) -> Value {
    let weak = m.strategy != Strategy::CopyMinor;
    let blocks = object(
        cities
            .iter()
            .map(|c| (c.name.as_str(), r(&city_block_name(c.id, weak, m.firm))))
            .collect(),
    );
    match m.strategy {
        Strategy::Independent => object(vec![
            ("global_constraints", r("globals")),
            ("city_specific_preferences", blocks),
        ]),
        _ => object(vec![("city_specific_preferences", blocks)]),
    }
}

/// A schema document as sent: `top` with the `$defs` of the vocabularies, the global
/// constraints and the cities.
fn with_defs(
    top: Value,
    cities: &[Arc<CityData>],
    min_budget: u32,
    v: &gtb_core::config::Validate,
) -> String {
    let modes: Vec<String> = vocab::TRANSPORT_MODES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let hotels: Vec<String> = vocab::HOTEL_CATEGORIES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut defs = Map::new();
    defs.insert("mode".into(), str_enum(&modes));
    defs.insert("hotel".into(), str_enum(&hotels));
    defs.insert("globals".into(), globals_schema(min_budget, v));
    let top = serde_json::to_string(&top).expect("serialises");
    let mut defs = serde_json::to_string(&Value::Object(defs)).expect("serialises");
    defs.pop(); // the closing brace: the cities' definitions follow
    for c in cities {
        defs.push(',');
        defs.push_str(&c.defs);
    }
    defs.push('}');
    format!("{},\"$defs\":{defs}}}", &top[..top.len() - 1])
}

/// The JSON schema of a whole-group reply (as sent): closed vocabularies and candidate names as
/// enums, list sizes as bounds, and per member only the fields its strategy generates.
pub fn schema(
    members: &[Member],
    cities: &[Arc<CityData>],
    min_budget: u32,
    v: &gtb_core::config::Validate,
) -> String {
    let prefs: Vec<(&str, Value)> = members
        .iter()
        .map(|m| (m.user.as_str(), member_table(m, cities)))
        .collect();
    let top = object(vec![
        ("preferences", object(prefs)),
        ("initial_messages", lines_schema(members)),
    ]);
    with_defs(top, cities, min_budget, v)
}

/// The JSON schema of one member's reply: its table, and its opening line when `line`.
pub fn member_schema(
    m: &Member,
    line: bool,
    cities: &[Arc<CityData>],
    min_budget: u32,
    v: &gtb_core::config::Validate,
) -> String {
    let mut top = vec![(
        "preferences",
        object(vec![(m.user.as_str(), member_table(m, cities))]),
    )];
    if line {
        top.push(("initial_messages", lines_schema(std::slice::from_ref(m))));
    }
    with_defs(object(top), cities, min_budget, v)
}
