//! Unit tests of the field readers, the opening-hours check and the fixture's split.

use super::fields::{
    PRICE_FIELDS, RATING_FIELDS, REVIEW_FIELDS, coordinates, first_number, required,
};
use super::*;
use crate::PoiType;
use serde_json::json;

#[test]
fn hours_structure_is_checked() {
    let ok = json!({"always_open": false, "rules": [
        {"date_range": {"start": "11-01", "end": "03-31"}, "weekdays": [2, 3, 4, 5, 6, 7],
         "time_windows": [{"open": "08:30", "close": "12:00"}, {"open": "13:00", "close": "24:00"}]},
        {"time_windows": []}]});
    let h = opening_hours(&ok).unwrap().unwrap();
    assert_eq!(h.rules.len(), 2);
    assert_eq!(
        h.rules[0].weekdays.as_deref(),
        Some(&[2, 3, 4, 5, 6, 7][..])
    );
    assert_eq!(h.windows_on("12-07", 1), Some(&[][..]));
    assert_eq!(opening_hours(&Value::Null).unwrap(), None);
    assert_eq!(
        opening_hours(&json!({"always_open": false, "rules": []})).unwrap(),
        None
    );
    let always = opening_hours(&json!({"always_open": true}))
        .unwrap()
        .unwrap();
    assert!(always.always_open);
    let window = |o: &str, c: &str| json!({"rules": [{"time_windows": [{"open": o, "close": c}]}]});
    for (o, c) in [
        ("09:00", "08:00"),
        ("09:00", "09:00"),
        ("8:00", "17:00"),
        ("24:00", "24:00"),
        ("09:00", "24:30"),
        ("09:60", "10:00"),
        ("18:00", "02:00"),
    ] {
        assert!(opening_hours(&window(o, c)).is_err(), "{o}-{c}");
    }
    assert!(opening_hours(&window("00:00", "24:00")).unwrap().is_some());
    let bad = [
        json!("08:00-17:00"),
        json!({"always_open": "yes"}),
        json!({"rules": {"time_windows": []}}),
        json!({"rules": [{"weekdays": [0, 1]}]}),
        json!({"rules": [{"weekdays": [8]}]}),
        json!({"rules": [{"weekdays": "1-5"}]}),
        json!({"rules": [{"date_range": {"start": "13-01", "end": "01-31"}}]}),
        json!({"rules": [{"date_range": {"start": "02-30", "end": "03-31"}}]}),
        json!({"rules": [{"date_range": {"start": "2-01", "end": "03-31"}}]}),
        json!({"rules": [{"date_range": {"start": "02-01"}}]}),
        json!({"rules": [{"time_windows": [{"open": "08:00"}]}]}),
        json!({"rules": ["daily"]}),
    ];
    for b in bad {
        assert!(opening_hours(&b).is_err(), "{b}");
    }
    let leap =
        json!({"rules": [{"date_range": {"start": "02-29", "end": "03-01"}, "time_windows": []}]});
    assert!(opening_hours(&leap).unwrap().is_some());
}

fn obj(v: Value) -> Obj {
    v.as_object().unwrap().clone()
}

#[test]
fn coordinate_variants() {
    // 故宫博物院: GCJ-02 as a map service gives it, and WGS-84
    let m = obj(json!({"location": "116.403963,39.917940"}));
    let (lat, lng, how) = coordinates(&m).unwrap().unwrap();
    assert_eq!(how, Coords::Gcj02Converted);
    assert!(
        (lat - 39.9166).abs() < 0.002 && (lng - 116.3977).abs() < 0.002,
        "{lat},{lng}"
    );
    let m = obj(json!({"lat": "39.9163", "lng": 116.3972}));
    assert_eq!(
        coordinates(&m).unwrap(),
        Some((39.9163, 116.3972, Coords::Wgs84))
    );
    let m = obj(json!({"latitude": 39.9163, "longitude": 116.3972, "coord_type": "GCJ02"}));
    assert_eq!(coordinates(&m).unwrap().unwrap().2, Coords::Gcj02Converted);
    let m = obj(json!({"location": {"lat": 39.9163, "lon": 116.3972}}));
    assert_eq!(coordinates(&m).unwrap().unwrap().2, Coords::Wgs84);
    assert_eq!(coordinates(&obj(json!({"name": "x"}))).unwrap(), None);
    assert_eq!(coordinates(&obj(json!({"location": ""}))).unwrap(), None);
    for bad in [
        json!({"location": "39.9,116.4x"}),
        json!({"location": "116.4"}),
        json!({"location": 116.4}),
        json!({"lat": 39.9}),
        json!({"lat": true, "lng": 116.4}),
        json!({"location": "0,0"}),
        json!({"lat": 116.4, "lng": 39.9, "location": null}),
        json!({"location": "39.9,116.4"}),
    ] {
        assert!(coordinates(&obj(bad.clone())).is_err(), "{bad}");
    }
}

#[test]
fn numbers_and_required_fields() {
    let m = obj(json!({"cost": "45.5", "score": 4.6, "comments": [1, 2, 3]}));
    assert_eq!(
        first_number(&m, &PRICE_FIELDS).unwrap(),
        Some(("cost", 45.5))
    );
    assert_eq!(
        first_number(&m, &RATING_FIELDS).unwrap(),
        Some(("score", 4.6))
    );
    assert_eq!(
        first_number(&m, &REVIEW_FIELDS).unwrap(),
        Some(("comments", 3.0))
    );
    let m = obj(json!({"price": "免费", "ticket": 30}));
    assert_eq!(
        first_number(&m, &PRICE_FIELDS).unwrap(),
        Some(("price", 0.0))
    );
    let m = obj(json!({"price": null, "ticket": 30}));
    assert_eq!(
        first_number(&m, &PRICE_FIELDS).unwrap(),
        Some(("ticket", 30.0))
    );
    for bad in [
        json!({"price": -1}),
        json!({"price": "about 50"}),
        json!({"price": [50]}),
    ] {
        assert!(first_number(&obj(bad), &PRICE_FIELDS).is_err());
    }
    let ok = obj(json!({"name": " 故宫博物院 ", "poi_type": "attraction"}));
    assert_eq!(required(&ok).unwrap(), ("故宫博物院", PoiType::Attractions));
    let kind = |v: Value| required(&obj(v)).unwrap_err().1;
    assert_eq!(kind(json!({"poi_type": "food"})), NO_NAME);
    assert_eq!(kind(json!({"name": "", "poi_type": "food"})), NO_NAME);
    assert_eq!(kind(json!({"name": 12, "poi_type": "food"})), NO_NAME);
    assert_eq!(kind(json!({"name": "故宫博物院"})), UNKNOWN_TYPE);
    assert_eq!(
        kind(json!({"name": "故宫博物院", "poi_type": "shops"})),
        UNKNOWN_TYPE
    );
    assert_eq!(
        kind(json!({"name": "故宫博物院", "poi_type": 1})),
        UNKNOWN_TYPE
    );
}

#[test]
fn fixture_split_and_allocation() {
    assert_eq!(fixture::split(338_000), [100_000, 119_000, 119_000]);
    let s = fixture::split(1000);
    assert_eq!(s.iter().sum::<usize>(), 1000);
}
