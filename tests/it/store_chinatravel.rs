//! `gtb import chinatravel` over the ChinaTravel database in ../shared/reference_data (read
//! there, never copied): every CSV row becomes a POI or a reported drop, categories map to the
//! release vocabulary, the store is byte-identical across imports, and a build over it draws
//! destinations and must/reject_visit from it, and plans at its hotels and restaurants.

use crate::common::*;
use gtb_store::import::{Adapter, ImportOptions};
use gtb_store::{PoiType, Store, StoreSummary};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CITIES: [(&str, &str); 10] = [
    ("beijing", "北京市"),
    ("shanghai", "上海市"),
    ("nanjing", "南京市"),
    ("suzhou", "苏州市"),
    ("hangzhou", "杭州市"),
    ("shenzhen", "深圳市"),
    ("chengdu", "成都市"),
    ("wuhan", "武汉市"),
    ("guangzhou", "广州市"),
    ("chongqing", "重庆市"),
];

fn db() -> Option<PathBuf> {
    Some(shared()?.join("reference_data/chinatravel_db"))
}

fn import(input: &Path, out: &Path) -> StoreSummary {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let opts = ImportOptions {
        adapter: Adapter::Chinatravel,
        input: input.to_path_buf(),
        out: out.to_path_buf(),
        cities: None,
        licence: None,
        map: BTreeMap::new(),
        radius_km: 60.0,
        progress: false,
    };
    gtb_ops::import(&cfg, &opts).expect("import")
}

/// (name column, records) of a ChinaTravel CSV.
fn names_in(path: &Path, column: &str) -> Vec<String> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    let i = rd
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == column)
        .unwrap();
    rd.records()
        .map(|r| r.unwrap()[i].trim().to_string())
        .collect()
}

#[test]
#[cfg_attr(
    not(has_reference_data),
    ignore = "needs ../shared/reference_data/chinatravel_db (absent)"
)]
fn chinatravel_every_row_is_a_poi_or_a_reported_drop() {
    let Some(db) = db() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let s = import(&db, &tmp.path().join("S"));
    let store = Store::open(&tmp.path().join("S")).unwrap();
    assert_eq!(
        s.counts.keys().cloned().collect::<BTreeSet<_>>(),
        CITIES.iter().map(|c| c.1.to_string()).collect()
    );
    let dropped: Vec<gtb_store::Dropped> =
        std::fs::read_to_string(tmp.path().join("S/dropped.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    for (file, city) in CITIES {
        for (folder, t, column) in [
            ("attractions", PoiType::Attractions, "Name"),
            ("restaurants", PoiType::Food, "Name"),
            ("hotels", PoiType::Hotels, "hotelName"),
        ] {
            let rel = format!("{folder}/{file}.csv");
            let rows = names_in(&db.join(&rel), column).len() as u64;
            // rows kept with a field degraded are reported too, as `... (kept ...)`
            let drops = dropped
                .iter()
                .filter(|d| d.position.starts_with(&format!("{rel} line ")))
                .filter(|d| !d.kind.contains("(kept"))
                .count() as u64;
            let kept = s.counts[city][t.as_str()];
            assert_eq!(kept + drops, rows, "{rel}: {kept} kept + {drops} dropped");
        }
    }
    // the repeated hotel rows of the source are the only rows lost, each with its line
    let lost: Vec<&gtb_store::Dropped> = dropped
        .iter()
        .filter(|d| !d.kind.contains("(kept"))
        .collect();
    assert!(lost.iter().all(|d| d.kind == "duplicate"), "{lost:?}");
    assert_eq!(lost.len(), 96);
    assert_eq!(store.rows.len() as u64, s.pois.rows);
    // every kept name is a name of its city's file
    for (file, city) in CITIES {
        let attractions: BTreeSet<String> =
            names_in(&db.join(format!("attractions/{file}.csv")), "Name")
                .into_iter()
                .collect();
        for r in store
            .rows
            .iter()
            .filter(|r| r.city == city && r.poi_type == PoiType::Attractions)
        {
            assert!(attractions.contains(&r.name), "{city} {}", r.name);
        }
    }
}

#[test]
#[cfg_attr(
    not(has_reference_data),
    ignore = "needs ../shared/reference_data/chinatravel_db (absent)"
)]
fn chinatravel_categories_coordinates_hours_and_popularity_are_mapped() {
    let Some(db) = db() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let s = import(&db, &tmp.path().join("S"));
    let store = Store::open(&tmp.path().join("S")).unwrap();
    let centre: BTreeMap<&str, (f64, f64)> = [
        ("北京市", (39.9042, 116.4074)),
        ("上海市", (31.2304, 121.4737)),
        ("南京市", (32.0603, 118.7969)),
        ("苏州市", (31.2990, 120.5853)),
        ("杭州市", (30.2741, 120.1551)),
        ("深圳市", (22.5431, 114.0579)),
        ("成都市", (30.5728, 104.0668)),
        ("武汉市", (30.5928, 114.3055)),
        ("广州市", (23.1291, 113.2644)),
        ("重庆市", (29.5630, 106.5516)),
    ]
    .into_iter()
    .collect();
    let mut by_type: BTreeMap<PoiType, (usize, usize)> = BTreeMap::new();
    for r in &store.rows {
        let e = by_type.entry(r.poi_type).or_default();
        e.0 += 1;
        if let Some(c) = &r.category {
            assert!(r.poi_type.in_vocabulary(c), "{} {c}", r.name);
            e.1 += 1;
        }
        // every row placed, converted, and inside its city (the prefectures reach far: 重庆 巫山
        // ~470 km east, 杭州 淳安 ~170 km), but the one whose longitude is broken
        let (Some(lat), Some(lng)) = (r.lat, r.lng) else {
            assert_eq!(r.name, "重庆来福士洲际酒店·菁中餐厅");
            continue;
        };
        let want = match r.poi_type {
            PoiType::Attractions => "bd09_converted",
            _ => "gcj02_converted",
        };
        assert_eq!(r.coords.map(|c| c.as_str()), Some(want), "{}", r.name);
        let d = gtb_resources::geodesy::distance_km((lat, lng), centre[r.city.as_str()]);
        let limit = if r.city == "重庆市" { 500.0 } else { 220.0 };
        assert!(
            d < limit,
            "{} {} is {d:.0} km from the centre",
            r.city,
            r.name
        );
    }
    // attractions: all but 其它 mapped; hotels: all (name, feature or price); food: most
    let (n, mapped) = by_type[&PoiType::Attractions];
    assert_eq!(
        n - mapped,
        s.unmapped_categories["attractions"]["其它"] as usize
    );
    let (n, mapped) = by_type[&PoiType::Hotels];
    assert_eq!(n, mapped);
    let (n, mapped) = by_type[&PoiType::Food];
    assert!(mapped * 100 >= n * 90, "{mapped} of {n} food rows mapped");
    // hours: attractions and restaurants all known, hotels none
    let with_hours = store
        .rows
        .iter()
        .filter(|r| r.opening_hours.is_some())
        .count();
    let (a, f) = (by_type[&PoiType::Attractions].0, by_type[&PoiType::Food].0);
    assert_eq!(with_hours, a + f);
    // popularity: the tag file's score on almost every attraction, reviews on every hotel
    assert!(s.popularity["rating"] as usize * 100 >= a * 99);
    assert_eq!(
        s.popularity["review_count"],
        s.counts.values().map(|c| c["hotels"]).sum::<u64>()
    );
    // the source's unreadable ticket price and broken longitude, each reported with its line,
    // the rows kept
    let dropped = std::fs::read_to_string(tmp.path().join("S/dropped.jsonl")).unwrap();
    for want in [
        "attractions/shanghai.csv line 156: Price \\\"10]\\\" is not a number",
        "restaurants/chongqing.csv line 103: lat/lng (29.562363, -0.006416) is 9850 km",
    ] {
        assert!(dropped.contains(want), "{dropped}");
    }
    assert_eq!(s.dropped["bad field (kept without it)"], 2);
    assert_eq!(s.coordinates.get("none"), Some(&1));
}

#[test]
#[cfg_attr(
    not(has_reference_data),
    ignore = "needs ../shared/reference_data/chinatravel_db (absent)"
)]
fn chinatravel_import_is_byte_identical_and_builds_over_it_use_its_names() {
    let Some(db) = db() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    import(&db, &a);
    import(&db, &b);
    for f in ["pois.parquet", "dropped.jsonl", "manifest.json"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    let mut cfg = config_in(tmp.path());
    cfg.paths.resources = Some(a.clone());
    cfg.run.n = 130;
    let s1 = build(&cfg, 1);
    let names: BTreeMap<String, BTreeSet<String>> = CITIES
        .iter()
        .map(|(file, city)| {
            let n = names_in(&db.join(format!("attractions/{file}.csv")), "Name");
            (city.to_string(), n.into_iter().collect())
        })
        .collect();
    let text = std::fs::read_to_string(cfg.run.out.join("test.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let t: serde_json::Value = serde_json::from_str(line).unwrap();
        for c in t["metadata"]["cities"].as_array().unwrap() {
            assert!(names.contains_key(c.as_str().unwrap()), "{c}");
        }
        for (_, u) in t["user_preferences"].as_object().unwrap() {
            let csp = u["preference"]["city_specific_preferences"].as_object();
            for (city, p) in csp.into_iter().flatten() {
                for k in ["must_visit", "reject_visit"] {
                    for a in p["attractions"][k].as_array().unwrap() {
                        let a = a.as_str().unwrap();
                        assert!(names[city].contains(a), "{city}: {a} is not ChinaTravel's");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(text.lines().count(), 130);
    assert!(checked > 500, "{checked}");
    // the release format checks, and every other check, pass over the store
    let (n, findings) = gtb_ops::validate_file(&cfg, &cfg.run.out.join("test.jsonl")).unwrap();
    assert_eq!((n, findings.len()), (130, 0), "{findings:?}");
    issue21_plans_sleep_and_eat_at_the_stores_venues(&cfg);
    // the same tasks, and the same plans, on 2 threads
    let before = std::fs::read(cfg.run.out.join("test.jsonl")).unwrap();
    let plans = std::fs::read(cfg.run.out.join("plans.jsonl")).unwrap();
    std::fs::remove_dir_all(&cfg.run.out).unwrap();
    let s2 = build(&cfg, 2);
    assert_eq!(
        std::fs::read(cfg.run.out.join("test.jsonl")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read(cfg.run.out.join("plans.jsonl")).unwrap(),
        plans
    );
    let _ = (s1, s2);
}

/// Issue 21: with the ChinaTravel store every task has a witness, and every hotel night and
/// meal of the witnesses is one of the store's venues, by name: no stand-in.
fn issue21_plans_sleep_and_eat_at_the_stores_venues(cfg: &gtb_core::config::Config) {
    let plans = std::fs::read_to_string(cfg.run.out.join("plans.jsonl")).unwrap();
    let (mut hotels, mut meals) = (0, 0);
    for line in plans.lines() {
        let l: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(l["plan"].is_object(), "{}: {}", l["task_id"], l["reason"]);
        let v = &l["scores"]["venues"];
        assert_eq!(
            (v["hotel_stand_ins"].as_u64(), v["meal_stand_ins"].as_u64()),
            (Some(0), Some(0)),
            "{}",
            l["task_id"]
        );
        hotels += v["hotels"].as_u64().unwrap();
        meals += v["meals"].as_u64().unwrap();
    }
    assert_eq!(plans.lines().count(), 130);
    assert!(hotels > 200 && meals > 500, "{hotels} {meals}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cfg.run.out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["witness"]["stand_ins"]["share"], serde_json::json!(0.0));
}

#[test]
#[cfg_attr(
    not(has_reference_data),
    ignore = "needs ../shared/reference_data/chinatravel_db (absent)"
)]
fn chinatravel_unknown_city_files_and_broken_rows_are_reported() {
    let Some(db) = db() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("db");
    std::fs::create_dir_all(input.join("restaurants")).unwrap();
    let real = std::fs::read_to_string(db.join("restaurants/beijing.csv")).unwrap();
    // a synthetic file name that is no city, and a broken record appended to a real file
    std::fs::write(input.join("restaurants/notacity.csv"), &real).unwrap();
    let lines = real.lines().count();
    std::fs::write(
        input.join("restaurants/beijing.csv"),
        format!("{real}\"unterminated,1,2\nx,y\n"),
    )
    .unwrap();
    let s = import(&input, &tmp.path().join("S"));
    let dropped = std::fs::read_to_string(tmp.path().join("S/dropped.jsonl")).unwrap();
    assert!(
        dropped.contains("\"position\":\"restaurants/notacity.csv\"")
            && dropped.contains("unknown city"),
        "{dropped}"
    );
    assert!(
        dropped.contains(&format!("restaurants/beijing.csv line {}", lines + 1)),
        "{dropped}"
    );
    assert_eq!(s.counts.len(), 1);
    assert_eq!(
        s.counts["北京市"]["food"] as usize,
        names_in(&db.join("restaurants/beijing.csv"), "Name").len()
    );
}
