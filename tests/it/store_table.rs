//! `gtb import table`: CSV, TSV, JSONL and Parquet inputs of the same real places give the
//! same store; `--map` columns, constants and same-named defaults; bad rows reported with
//! their line (or Parquet row); a mapping to a missing column is an error listing the columns.
//! The places are real (approximate WGS-84 positions from public knowledge; 外滩 is given in
//! GCJ-02 to exercise the conversion); the files are written by the tests, not shipped.

use crate::common::*;
use gtb_store::import::{Adapter, ImportOptions};
use gtb_store::{Coords, PoiType, PopularitySource, Store, StoreSummary};
use polars::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const HEADER: [&str; 12] = [
    "编号",
    "名称",
    "城市",
    "类型",
    "分类",
    "纬度",
    "经度",
    "坐标系",
    "营业时间",
    "价格",
    "评分",
    "备注",
];

/// 编号, 名称, 城市, 类型, 分类, 纬度, 经度, 坐标系, 营业时间, 价格, 评分, 备注
const PLACES: [[&str; 12]; 6] = [
    [
        "1",
        "故宫博物院",
        "北京",
        "attractions",
        "博物馆",
        "39.9163",
        "116.3972",
        "wgs84",
        "w2-7 08:30-17:00",
        "60",
        "4.8",
        "周一闭馆",
    ],
    [
        "2",
        "颐和园",
        "北京市",
        "attractions",
        "5A景区",
        "39.9999",
        "116.2755",
        "wgs84",
        "06:30-18:00",
        "30",
        "4.7",
        "",
    ],
    [
        "3",
        "全聚德(前门店)",
        "北京",
        "food",
        "北京菜",
        "39.899",
        "116.3976",
        "wgs84",
        "11:00-21:00",
        "200",
        "4.5",
        "",
    ],
    [
        "4",
        "外滩",
        "上海",
        "attractions",
        "人文景观",
        "31.238",
        "121.4945",
        "gcj02",
        "always",
        "0",
        "4.9",
        "",
    ],
    [
        "5",
        "北京饭店",
        "北京",
        "hotels",
        "豪华型",
        "39.9087",
        "116.4075",
        "wgs84",
        "",
        "1200",
        "4.6",
        "",
    ],
    [
        "6",
        "清水寺",
        "京都市",
        "attractions",
        "寺庙",
        "34.9949",
        "135.785",
        "wgs84",
        "06:00-18:00",
        "400",
        "4.7",
        "",
    ],
];

const MAP: &str = "source_id=编号,name=名称,city=城市,poi_type=类型,category=分类,lat=纬度,lng=经度,coords=坐标系,opening_hours=营业时间,price=价格,popularity=评分,popularity_source==rating";

fn map(spec: &str) -> BTreeMap<String, String> {
    spec.split(',')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn try_import(input: &Path, out: &Path, spec: &str) -> anyhow::Result<StoreSummary> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_in(dir.path());
    let opts = ImportOptions {
        adapter: Adapter::Table,
        input: input.to_path_buf(),
        out: out.to_path_buf(),
        cities: None,
        licence: Some("CC0 (test fixture)".into()),
        map: map(spec),
        radius_km: 60.0,
        progress: false,
    };
    gtb_ops::import(&cfg, &opts)
}

fn delimited(sep: &str) -> String {
    let mut s = HEADER.join(sep) + "\n";
    for p in PLACES {
        s += &(p.join(sep) + "\n");
    }
    s
}

/// The same rows as JSON objects with English keys (numbers as numbers, the first row's
/// hours in the release's structure).
fn jsonl() -> String {
    let mut s = String::new();
    for (i, p) in PLACES.iter().enumerate() {
        let hours = if i == 0 {
            serde_json::json!({"always_open": false, "rules": [{"weekdays": [2,3,4,5,6,7],
                "time_windows": [{"open": "08:30", "close": "17:00"}]}]})
        } else if p[8].is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::Value::String(p[8].into())
        };
        let num = |x: &str| x.parse::<f64>().unwrap();
        let o = serde_json::json!({
            "source_id": p[0], "name": p[1], "city": p[2], "poi_type": p[3], "category": p[4],
            "lat": num(p[5]), "lng": num(p[6]), "coords": p[7], "opening_hours": hours,
            "price": num(p[9]), "popularity": num(p[10]), "extra": {"note": p[11]}
        });
        s += &format!("{o}\n");
        if i == 2 {
            s += "\n"; // blank lines are skipped
        }
    }
    s
}

/// The same rows as Parquet: numbers as Float64 (ids as Int64), mixed column names.
fn parquet(path: &Path) {
    let text = |i: usize| -> Vec<Option<&str>> {
        PLACES
            .iter()
            .map(|p| (!p[i].is_empty()).then_some(p[i]))
            .collect()
    };
    let num = |i: usize| -> Vec<f64> { PLACES.iter().map(|p| p[i].parse().unwrap()).collect() };
    let ids: Vec<i64> = PLACES.iter().map(|p| p[0].parse().unwrap()).collect();
    let mut df = DataFrame::new(
        PLACES.len(),
        vec![
            Column::new("编号".into(), ids),
            Column::new("name".into(), text(1)),
            Column::new("city".into(), text(2)),
            Column::new("类型".into(), text(3)),
            Column::new("category".into(), text(4)),
            Column::new("lat".into(), num(5)),
            Column::new("lng".into(), num(6)),
            Column::new("coords".into(), text(7)),
            Column::new("opening_hours".into(), text(8)),
            Column::new("price".into(), num(9)),
            Column::new("popularity".into(), num(10)),
        ],
    )
    .unwrap();
    let f = std::fs::File::create(path).unwrap();
    ParquetWriter::new(f).finish(&mut df).unwrap();
}

#[test]
fn table_csv_tsv_jsonl_and_parquet_give_the_same_store() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("pois.csv"), delimited(",")).unwrap();
    std::fs::write(d.join("pois.tsv"), delimited("\t")).unwrap();
    std::fs::write(d.join("pois.jsonl"), jsonl()).unwrap();
    parquet(&d.join("pois.parquet"));
    let inputs = [
        ("pois.csv", MAP.to_string()),
        ("pois.tsv", MAP.to_string()),
        // English keys: every field but the constant is the same-named default
        ("pois.jsonl", "popularity_source==rating".to_string()),
        (
            "pois.parquet",
            "source_id=编号,poi_type=类型,popularity_source==rating".to_string(),
        ),
    ];
    let mut tables = Vec::new();
    for (file, spec) in &inputs {
        let out = d.join(format!("S-{file}"));
        let s = try_import(&d.join(file), &out, spec).unwrap();
        assert_eq!(s.pois.rows, 6, "{file}");
        assert_eq!(s.dropped_file.rows, 0, "{file}");
        tables.push(std::fs::read(out.join("pois.parquet")).unwrap());
    }
    for (t, (file, _)) in tables.iter().zip(&inputs) {
        assert!(t == &tables[0], "{file} gives another store than pois.csv");
    }
    let store = Store::open(&d.join("S-pois.csv")).unwrap();
    let by_name = |n: &str| store.rows.iter().find(|r| r.name == n).unwrap();
    // cities resolved to release names; a city gtb does not know kept as given
    assert_eq!(by_name("故宫博物院").city, "北京市");
    assert_eq!(by_name("清水寺").city, "京都市");
    let gugong = by_name("故宫博物院");
    assert_eq!(gugong.category.as_deref(), Some("博物馆"));
    assert_eq!(gugong.price, Some(60.0));
    assert_eq!(gugong.popularity, Some(4.8));
    assert_eq!(gugong.popularity_source, PopularitySource::Rating);
    assert_eq!(gugong.source_id, "1");
    assert_eq!(gugong.licence, "CC0 (test fixture)");
    let hours = gugong.opening_hours.as_ref().unwrap();
    assert_eq!(hours.rules[0].weekdays, Some(vec![2, 3, 4, 5, 6, 7]));
    assert_eq!(by_name("北京饭店").poi_type, PoiType::Hotels);
    assert_eq!(by_name("北京饭店").opening_hours, None);
    assert!(by_name("外滩").opening_hours.as_ref().unwrap().always_open);
    // GCJ-02 converted: the Bund moves a few hundred metres west
    let bund = by_name("外滩");
    assert_eq!(bund.coords, Some(Coords::Gcj02Converted));
    let moved = gtb_resources::geodesy::distance_km(
        (31.238, 121.4945),
        (bund.lat.unwrap(), bund.lng.unwrap()),
    );
    assert!((0.3..0.8).contains(&moved), "{moved}");
    assert_eq!(by_name("颐和园").coords, Some(Coords::Wgs84));
    assert_eq!(by_name("颐和园").lat, Some(39.9999));
}

#[test]
fn table_bad_rows_are_reported_with_their_line_or_row() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let good = PLACES[0].join(",");
    let text = format!(
        "{}\n{good}\n{}\n{}\n7,只有三列,北京\n{}\n\"8\",\"多行\n名称\",北京,attractions,公园,,,,,,,\n{}\n",
        HEADER.join(","),
        // line 3: no name
        ",,北京,attractions,公园,39.9,116.4,wgs84,,,,",
        // line 4: an unknown poi_type
        "9,天坛公园,北京,museum,公园,39.8822,116.4066,wgs84,,,,",
        // line 6: kept, its unreadable price and hours reported
        "10,景山公园,北京,attractions,公园,39.9254,116.3967,wgs84,8-17,abc,4.5,",
        // line 9: no city
        "11,北海公园,,attractions,公园,39.9254,116.3889,wgs84,,,,",
    );
    std::fs::write(d.join("bad.csv"), text.replace('\n', "\r\n")).unwrap();
    let s = try_import(&d.join("bad.csv"), &d.join("S"), MAP).unwrap();
    let dropped = std::fs::read_to_string(d.join("S/dropped.jsonl")).unwrap();
    let got: Vec<(String, String)> = dropped
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["position"].as_str().unwrap().into(),
                v["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("line 3", "no name"),
        ("line 4", "unknown poi_type"),
        ("line 5", "unreadable row"),
        ("line 6", "broken opening_hours (kept, hours unknown)"),
        ("line 6", "bad field (kept without it)"),
        ("line 9", "no city"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want, "{dropped}");
    // the multi-line name (lines 7-8) and the row with bad fields are kept
    assert_eq!(s.pois.rows, 3);
    assert!(
        dropped.contains("line 5: 3 fields where the header has 12"),
        "{dropped}"
    );
    assert!(
        dropped.contains("line 6: price \\\"abc\\\" is not a number"),
        "{dropped}"
    );

    // Parquet rows are numbered from 0
    let mut df = DataFrame::new(
        2,
        vec![
            Column::new("name".into(), [Some("雍和宫"), None]),
            Column::new("city".into(), ["北京", "北京"]),
            Column::new("poi_type".into(), ["attractions", "attractions"]),
        ],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(d.join("p.parquet")).unwrap())
        .finish(&mut df)
        .unwrap();
    let s = try_import(&d.join("p.parquet"), &d.join("P"), "category==寺庙").unwrap();
    assert_eq!(s.pois.rows, 1);
    let dropped = std::fs::read_to_string(d.join("P/dropped.jsonl")).unwrap();
    assert!(
        dropped.contains("\"position\":\"row 1\"") && dropped.contains("no name"),
        "{dropped}"
    );

    // JSONL lines that are not objects
    std::fs::write(
        d.join("j.jsonl"),
        "{\"name\":\"雍和宫\",\"city\":\"北京\",\"poi_type\":\"attractions\"}\n[1,2]\n{oops\n",
    )
    .unwrap();
    let s = try_import(&d.join("j.jsonl"), &d.join("J"), "category==寺庙").unwrap();
    assert_eq!(s.pois.rows, 1);
    let dropped = std::fs::read_to_string(d.join("J/dropped.jsonl")).unwrap();
    assert!(
        dropped.contains("\"line 2\"") && dropped.contains("\"line 3\""),
        "{dropped}"
    );
}

#[test]
fn table_a_map_to_a_missing_column_lists_the_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("pois.csv"), delimited(",")).unwrap();
    let e = try_import(
        &d.join("pois.csv"),
        &d.join("S"),
        "name=名字,city=城市,poi_type=类型",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no column \"名字\""), "{e}");
    assert!(e.contains(&HEADER.join(", ")), "{e}");
    // nothing is published
    assert!(!d.join("S/manifest.json").exists());
    let e = try_import(&d.join("pois.csv"), &d.join("S"), "name=名称,city=城市")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no poi_type") && e.contains("poi_type==VALUE"),
        "{e}"
    );
    let e = try_import(&d.join("pois.xlsx"), &d.join("S"), "name=名称")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such file"), "{e}");
}
