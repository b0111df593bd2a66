//! `gtb import release` (issue 11): a release-format file with malformed entries, reported by
//! city and index with nothing else lost; byte-identical re-imports; `--cities`; broken JSON;
//! and the 338,000-POI scale fixture.

use crate::common::*;
use gtb_store::import::release::fixture;
use gtb_store::{Coords, Dropped, PoiType, PopularitySource, Store, StoreSummary};
use std::path::Path;
use std::process::Command;

/// Real places of 北京 and 杭州 (coordinates approximate, from public maps), with a malformed
/// entry of every kind the adapter reports. Comments give the index in the city's list.
const SMALL: &str = r#"{
"北京市": [
  {"name": "故宫博物院", "custom_category": "博物馆", "poi_type": "attractions",
   "opening_hours": {"always_open": false, "rules": [
     {"date_range": {"start": "04-01", "end": "10-31"}, "weekdays": [2,3,4,5,6,7], "time_windows": [{"open": "08:30", "close": "17:00"}]},
     {"date_range": {"start": "11-01", "end": "03-31"}, "weekdays": [2,3,4,5,6,7], "time_windows": [{"open": "08:30", "close": "16:30"}]}]},
   "location": "116.403963,39.917940", "price": 60, "rating": 4.8},
  {"name": "天坛公园", "custom_category": "公园", "poi_type": "attractions",
   "opening_hours": {"always_open": false, "rules": [{"time_windows": [{"open": "06:00", "close": "22:00"}]}]},
   "price": "15", "review_count": "52000"},
  {"custom_category": "公园", "poi_type": "attractions", "opening_hours": null},
  {"name": "北海公园", "custom_category": "公园", "poi_type": "shops", "opening_hours": null},
  {"name": "颐和园", "custom_category": "5A景区", "poi_type": "attractions",
   "opening_hours": {"always_open": false, "rules": [{"time_windows": [{"open": "18:00", "close": "06:30"}]}]}},
  "雍和宫",
  {"name": "全聚德(前门店)", "custom_category": "北京菜", "poi_type": "food",
   "opening_hours": {"always_open": false, "rules": [{"time_windows": [{"open": "11:00", "close": "14:00"}, {"open": "16:30", "close": "21:00"}]}]},
   "avg_price": 150, "lat": 39.8985, "lng": 116.3977, "shop_id": 123},
  {"name": "北京饭店", "custom_category": "豪华型", "poi_type": "hotels", "opening_hours": null, "price": [900], "score": 4.6},
  {"name": 42, "poi_type": "food"},
  {"name": "景山公园", "custom_category": "旅游景点", "poi_type": "attraction", "opening_hours": null}
],
"杭州市": [
  {"name": "西湖", "custom_category": "5A景区", "poi_type": "attractions", "opening_hours": {"always_open": true, "rules": []}},
  {"name": "灵隐寺", "custom_category": "寺庙", "poi_type": "attractions", "opening_hours": "07:00-18:00"},
  {"name": "楼外楼", "custom_category": "杭帮菜", "poi_type": "food", "opening_hours": null, "location": "120.1447,30.2557x"},
  {"name": "", "poi_type": "hotels"}
],
"成都市": null,
"苏州市": {"name": "拙政园", "poi_type": "attractions"},
"西安市": []
}"#;

fn import(input: &Path, out: &Path, extra: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gtb"))
        .args(["import", "release"])
        .arg(input)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra)
        .current_dir(root())
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn dropped(store: &Path) -> Vec<Dropped> {
    std::fs::read_to_string(store.join("dropped.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn small(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("all_poi_by_city.json");
    std::fs::write(&p, SMALL).unwrap();
    p
}

#[test]
fn release_malformed_entries_are_reported_by_city_and_index_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("store");
    let (ok, err) = import(&small(dir.path()), &out, &[]);
    assert!(ok, "{err}");
    let got: Vec<(String, String)> = dropped(&out)
        .into_iter()
        .map(|d| (d.position, d.kind))
        .collect();
    let want = [
        ("city 北京市 index 2", "no name"),
        ("city 北京市 index 3", "unknown poi_type"),
        (
            "city 北京市 index 4",
            "broken opening_hours (kept, hours unknown)",
        ),
        ("city 北京市 index 5", "not an object"),
        ("city 北京市 index 7", "bad field (kept without it)"),
        ("city 北京市 index 8", "no name"),
        ("city 成都市", "not a list"),
        (
            "city 杭州市 index 1",
            "broken opening_hours (kept, hours unknown)",
        ),
        ("city 杭州市 index 2", "bad field (kept without it)"),
        ("city 杭州市 index 3", "no name"),
        ("city 苏州市", "not a list"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, k)| (p.to_string(), k.to_string()))
        .collect();
    assert_eq!(got, want);

    let store = Store::open(&out).unwrap();
    let mut names: Vec<&str> = store.rows.iter().map(|r| r.name.as_str()).collect();
    names.sort();
    let mut good = [
        "故宫博物院",
        "天坛公园",
        "颐和园",
        "全聚德(前门店)",
        "北京饭店",
        "景山公园",
        "西湖",
        "灵隐寺",
        "楼外楼",
    ];
    good.sort();
    assert_eq!(names, good, "every good entry kept, and only those");
    let row = |n: &str| store.rows.iter().find(|r| r.name == n).unwrap();

    let gugong = row("故宫博物院");
    assert_eq!(gugong.source_id, "北京市#0");
    assert_eq!(gugong.category.as_deref(), Some("博物馆"));
    assert_eq!(gugong.coords, Some(Coords::Gcj02Converted));
    // the GCJ-02 offset in Beijing is several hundred metres; converted, it is the WGS-84 place
    let wgs = (gugong.lat.unwrap(), gugong.lng.unwrap());
    assert!(
        gtb_resources::geodesy::distance_km(wgs, (39.9163, 116.3972)) < 0.3,
        "{wgs:?}"
    );
    assert!(gtb_resources::geodesy::distance_km(wgs, (39.917940, 116.403963)) > 0.3);
    assert_eq!(gugong.opening_hours.as_ref().unwrap().rules.len(), 2);
    assert_eq!((gugong.price, gugong.popularity), (Some(60.0), Some(4.8)));
    assert_eq!(gugong.popularity_source, PopularitySource::Rating);
    let tiantan = row("天坛公园");
    assert_eq!(
        (tiantan.price, tiantan.popularity),
        (Some(15.0), Some(52000.0))
    );
    assert_eq!(tiantan.popularity_source, PopularitySource::ReviewCount);
    assert_eq!(row("颐和园").opening_hours, None);
    assert_eq!(row("灵隐寺").opening_hours, None);
    let qjd = row("全聚德(前门店)");
    assert_eq!(
        (qjd.poi_type, qjd.coords),
        (PoiType::Food, Some(Coords::Wgs84))
    );
    assert_eq!((qjd.lat, qjd.price), (Some(39.8985), Some(150.0)));
    let hotel = row("北京饭店");
    assert_eq!((hotel.price, hotel.popularity), (None, Some(4.6)));
    let jingshan = row("景山公园");
    assert_eq!(jingshan.poi_type, PoiType::Attractions);
    assert_eq!(
        (jingshan.category.as_deref(), jingshan.category_raw.as_str()),
        (None, "旅游景点")
    );
    assert_eq!(row("楼外楼").lat, None);
    assert!(row("西湖").opening_hours.as_ref().unwrap().always_open);
    assert!(
        store
            .rows
            .iter()
            .all(|r| r.source == "release" && !r.licence.is_empty())
    );

    let m = &store.manifest;
    assert_eq!(m.sources.len(), 1);
    let notes = &m.sources[0].notes;
    assert_eq!(notes["entries"], 14);
    assert_eq!(notes["extra_fields"]["shop_id"], 1);
    assert_eq!(notes["gcj02_converted"], 1);
    assert_eq!(m.unmapped_categories["attractions"]["旅游景点"], 1);
}

#[test]
fn release_reimport_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let input = small(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert!(import(&input, &a, &[]).0);
    assert!(import(&input, &b, &[]).0);
    // and over an existing store
    assert!(import(&input, &b, &[]).0);
    for f in ["pois.parquet", "dropped.jsonl", "manifest.json"] {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x == y, "{f} differs between two imports of the same file");
    }
}

#[test]
fn release_cities_option_keeps_only_those_cities() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("store");
    let (ok, err) = import(&small(dir.path()), &out, &["--cities", "杭州"]);
    assert!(ok, "{err}");
    let store = Store::open(&out).unwrap();
    assert_eq!(store.rows.len(), 3);
    assert!(store.rows.iter().all(|r| r.city == "杭州市"));
    // the ten entries of 北京市 are counted, not read; only 杭州市's faults are reported
    assert_eq!(store.manifest.dropped["outside --cities"], 10);
    let d = dropped(&out);
    assert_eq!(d.len(), 3);
    assert!(
        d.iter()
            .all(|d| d.position.starts_with("city 杭州市 index "))
    );
}

#[test]
fn release_broken_json_is_an_error_naming_the_place_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("truncated.json");
    let at = SMALL.find("\"灵隐寺\"").unwrap();
    std::fs::write(&cut, &SMALL[..at]).unwrap();
    // a missing colon after the key on the line of `{"name": 42, ...}`
    let at = SMALL.find("{\"name\": 42").unwrap();
    let line = SMALL[..at].lines().count();
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        SMALL.replacen("\"poi_type\": \"food\"}", "\"poi_type\" \"food\"}", 1),
    )
    .unwrap();
    let array = dir.path().join("array.json");
    std::fs::write(&array, "[{\"name\": \"故宫博物院\"}]").unwrap();
    let colon = format!("expected `:` at line {line} column 27");
    for (input, says) in [
        (&cut, "ends early"),
        (&broken, colon.as_str()),
        (&array, "expected a JSON object mapping city names"),
    ] {
        let out = dir.path().join("store");
        let (ok, err) = import(input, &out, &[]);
        assert!(!ok, "{} imported", input.display());
        assert!(err.contains(says), "{}: {err}", input.display());
        assert!(err.contains("line ") && err.contains("column "), "{err}");
        assert!(!out.join("manifest.json").exists() && !out.join("pois.parquet").exists());
    }
}

/// The scale fixture (`gtb-bench fixture-release`): 338,000 POIs over every city of
/// cities.csv, 30 of them malformed; the import keeps what it must, per city and type, and
/// reports each malformed entry where it is. Prints the import's wall time.
#[test]
fn release_fixture_of_338k_pois_imports_with_the_expected_counts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let res = gtb_resources::load(&cfg.paths).unwrap();
    let input = dir.path().join("fixture.json");
    let spec = fixture::Spec {
        pois: 338_000,
        seed: 7,
        malformed: 30,
    };
    let mut w = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    let s = fixture::write(&mut w, &res.cities, &spec).unwrap();
    std::io::Write::flush(&mut w).unwrap();
    drop(w);
    assert_eq!(
        (s.entries, s.malformed.len(), s.broken_hours),
        (338_000, 30, 10)
    );
    assert_eq!(s.kept.len(), res.cities.len());

    let out = dir.path().join("store");
    let t = std::time::Instant::now();
    let (ok, err) = import(&input, &out, &[]);
    assert!(ok, "{err}");
    eprintln!("import of 338,000 POIs: {:.2}s", t.elapsed().as_secs_f64());
    let m: StoreSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m.counts.len(), res.cities.len(), "every city covered");
    for (city, kept) in &s.kept {
        for t in PoiType::ALL {
            let got = m.counts[city].get(t.as_str()).copied().unwrap_or(0);
            assert_eq!(got, kept[t as usize], "{city} {}", t.as_str());
        }
    }
    let per_type = |t: &str| -> u64 {
        m.counts
            .values()
            .map(|c| c.get(t).copied().unwrap_or(0))
            .sum()
    };
    // 10 no-name and 10 unknown-poi_type entries are dropped, spread over the three types
    let [a, f, h] = fixture::split(338_000).map(|n| n as u64);
    assert_eq!(
        per_type("attractions") + per_type("food") + per_type("hotels"),
        a + f + h - 20
    );
    assert!(
        a - per_type("attractions") <= 20
            && f - per_type("food") <= 20
            && h - per_type("hotels") <= 20
    );
    assert_eq!(m.pois.rows, 338_000 - 20);
    let tally: Vec<(&str, u64)> = m.dropped.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(
        tally,
        [
            ("broken opening_hours (kept, hours unknown)", 10),
            ("no name", 10),
            ("unknown poi_type", 10)
        ]
    );
    let d: Vec<(String, String)> = dropped(&out)
        .into_iter()
        .map(|d| (d.position, d.kind))
        .collect();
    for (city, i, kind) in &s.malformed {
        let want = (format!("city {city} index {i}"), kind.to_string());
        assert!(d.contains(&want), "{want:?} not reported");
    }
    assert_eq!(m.sources[0].notes["entries"], 338_000);

    // issue 11: a 650-task build over the store passes every check
    let mut bcfg = config_in(&dir.path().join("build"));
    bcfg.paths.resources = Some(out.clone());
    bcfg.run.n = 650;
    let t = std::time::Instant::now();
    let b = gtb_build::build(&gtb_build::BuildRequest::new(bcfg.clone())).unwrap();
    eprintln!(
        "650 tasks over 338,000 POIs: {:.2}s",
        t.elapsed().as_secs_f64()
    );
    let (n, findings) = gtb_ops::validate_file(&bcfg, &b.splits[0].path).unwrap();
    assert_eq!(
        (n, findings.len()),
        (650, 0),
        "{:?}",
        &findings[..findings.len().min(5)]
    );
}

/// A short city key takes gtb's release name; a key gtb does not know is kept as written; a
/// key repeated in the object is imported again under ids of its own.
#[test]
fn release_city_keys_resolve_repeat_and_stay_when_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("keys.json");
    let text = r#"{
"杭州": [{"name": "西湖", "custom_category": "5A景区", "poi_type": "attractions", "opening_hours": null}],
"鄂州市": [{"name": "西山风景区", "custom_category": "4A景区", "poi_type": "attractions", "opening_hours": null}],
"杭州市": [{"name": "灵隐寺", "custom_category": "寺庙", "poi_type": "attractions", "opening_hours": null}],
"杭州市": [{"name": "六和塔", "custom_category": "文物古迹", "poi_type": "attractions", "opening_hours": null},
          {"name": "", "poi_type": "food"}]
}"#;
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("store");
    let (ok, err) = import(&input, &out, &[]);
    assert!(ok, "{err}");
    let store = Store::open(&out).unwrap();
    let mut got: Vec<(&str, &str, &str)> = store
        .rows
        .iter()
        .map(|r| (r.city.as_str(), r.name.as_str(), r.source_id.as_str()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("杭州市", "六和塔", "杭州市~2#0"),
            ("杭州市", "灵隐寺", "杭州市#0"),
            ("杭州市", "西湖", "杭州#0"),
            ("鄂州市", "西山风景区", "鄂州市#0"),
        ]
    );
    let d = dropped(&out);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].position, "city 杭州市~2 index 1");
    let notes = &store.manifest.sources[0].notes;
    assert_eq!(notes["cities_not_in_cities_csv"], 1);
    assert_eq!(notes["repeated_city_keys"]["杭州市"], 2);
}
