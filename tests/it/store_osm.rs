//! `gtb import osm`: a PBF fixture of real places (names and WGS-84 coordinates from public
//! knowledge; boundary and park outlines simplified to rectangles), written with the crate's
//! PBF writer, imports with the expected rows, cities, categories and drops.

use gtb_pbf_write::{Member, MemberType, PbfWriter};
use gtb_store::import::{Adapter, ImportOptions};
use gtb_store::{PoiType, PopularitySource, Store};
use std::path::{Path, PathBuf};

type Node = (i64, f64, f64, &'static [(&'static str, &'static str)]);

const POIS: &[Node] = &[
    (
        1,
        39.9163,
        116.3972,
        &[
            ("tourism", "museum"),
            ("name", "故宫博物院"),
            ("name:en", "Palace Museum"),
            (
                "opening_hours",
                "Apr-Oct Tu-Su 08:30-17:00; Nov-Mar Tu-Su 08:30-16:30",
            ),
            ("charge", "60 CNY"),
            ("wikipedia", "zh:故宫博物院"),
        ],
    ),
    (
        2,
        39.9087,
        116.4076,
        &[("tourism", "hotel"), ("stars", "5"), ("name", "北京饭店")],
    ),
    (
        3,
        39.8966,
        116.3979,
        &[
            ("amenity", "restaurant"),
            ("cuisine", "peking_duck"),
            ("name", "全聚德(前门店)"),
        ],
    ),
    // unnamed: reported, not kept
    (4, 39.9990, 116.2740, &[("tourism", "viewpoint")]),
    (
        5,
        30.2425,
        120.1500,
        &[
            ("tourism", "attraction"),
            ("natural", "water"),
            ("name", "West Lake"),
            ("name:zh", "西湖"),
        ],
    ),
    (
        6,
        30.2408,
        120.0965,
        &[
            ("amenity", "place_of_worship"),
            ("religion", "buddhist"),
            ("tourism", "attraction"),
            ("name", "灵隐寺"),
            ("opening_hours", "Mo-Su 07:00-18:00"),
        ],
    ),
    (
        7,
        30.2530,
        120.1440,
        &[
            ("amenity", "restaurant"),
            ("cuisine", "hangzhou"),
            ("name", "楼外楼"),
            // different hours on different weekdays: the release structure cannot hold it
            ("opening_hours", "Mo-Fr 10:30-20:30; Sa-Su 10:00-21:00"),
        ],
    ),
    // far from every city centre, in no boundary
    (
        8,
        27.9881,
        86.9250,
        &[
            ("tourism", "attraction"),
            ("natural", "peak"),
            ("name", "珠穆朗玛峰"),
        ],
    ),
    // inside the 朝阳区 boundary, which is no release city: the 北京市 boundary decides
    (
        9,
        39.9841,
        116.4951,
        &[("tourism", "attraction"), ("name", "798艺术区")],
    ),
];

/// Outline nodes (untagged): 北京市 (101-104), 朝阳区 (111-114), 天坛公园 (121-124),
/// 颐和园 (131-134), each a rectangle listed counter-clockwise from its south-west corner.
const OUTLINES: &[(i64, [f64; 4])] = &[
    (101, [39.44, 115.42, 41.06, 117.50]),
    (111, [39.82, 116.42, 40.10, 116.65]),
    (121, [39.8768, 116.4010, 39.8880, 116.4145]),
    (131, [39.9850, 116.2580, 40.0050, 116.2820]),
];

fn corners(first: i64, [s, w, n, e]: [f64; 4]) -> [(i64, f64, f64); 4] {
    [
        (first, s, w),
        (first + 1, s, e),
        (first + 2, n, e),
        (first + 3, n, w),
    ]
}

fn write_fixture(path: &Path) {
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = PbfWriter::new(f).unwrap();
    for (id, lat, lon, tags) in POIS {
        w.node(*id, *lat, *lon, tags).unwrap();
    }
    for (first, rect) in OUTLINES {
        for (id, lat, lon) in corners(*first, *rect) {
            w.node(id, lat, lon, &[]).unwrap();
        }
    }
    // the 北京市 outline in two ways, the second drawn backwards
    w.way(201, &[101, 102, 103], &[]).unwrap();
    w.way(202, &[101, 104, 103], &[]).unwrap();
    w.way(211, &[111, 112, 113, 114, 111], &[]).unwrap();
    w.way(
        221,
        &[121, 122, 123, 124, 121],
        &[("leisure", "park"), ("name", "天坛公园")],
    )
    .unwrap();
    w.way(231, &[131, 132, 133, 134, 131], &[]).unwrap();
    let outer = |id| Member {
        kind: MemberType::Way,
        id,
        role: "outer",
    };
    let admin = |level, name| {
        [
            ("type", "boundary"),
            ("boundary", "administrative"),
            ("admin_level", level),
            ("name", name),
        ]
    };
    w.relation(301, &[outer(201), outer(202)], &admin("4", "北京市"))
        .unwrap();
    w.relation(311, &[outer(211)], &admin("6", "朝阳区"))
        .unwrap();
    w.relation(
        331,
        &[outer(231)],
        &[
            ("type", "multipolygon"),
            ("leisure", "park"),
            ("name", "颐和园"),
            ("wikipedia", "zh:颐和园"),
        ],
    )
    .unwrap();
    w.finish().unwrap();
}

fn import(input: &Path, out: &Path, threads: usize) -> anyhow::Result<gtb_store::StoreSummary> {
    let dir = out.parent().unwrap();
    let cfg = crate::common::config_in(dir);
    let opts = ImportOptions {
        adapter: Adapter::Osm,
        input: input.to_path_buf(),
        out: out.to_path_buf(),
        cities: None,
        licence: None,
        map: Default::default(),
        radius_km: 60.0,
        progress: false,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| gtb_ops::import(&cfg, &opts))
}

fn fixture(dir: &Path) -> PathBuf {
    let p = dir.join("fixture.osm.pbf");
    write_fixture(&p);
    p
}

#[test]
fn osm_fixture_imports_real_places_with_cities_and_categories() {
    let tmp = tempfile::tempdir().unwrap();
    let input = fixture(tmp.path());
    let out = tmp.path().join("store");
    import(&input, &out, 2).unwrap();
    let store = Store::open(&out).unwrap();
    let get = |name: &str| {
        store
            .rows
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name} missing from {:?}", store.rows))
    };
    let expect = [
        ("故宫博物院", "北京市", PoiType::Attractions, "博物馆", "n1"),
        ("北京饭店", "北京市", PoiType::Hotels, "豪华型", "n2"),
        ("全聚德(前门店)", "北京市", PoiType::Food, "北京菜", "n3"),
        ("西湖", "杭州市", PoiType::Attractions, "自然风光", "n5"),
        ("灵隐寺", "杭州市", PoiType::Attractions, "寺庙", "n6"),
        ("楼外楼", "杭州市", PoiType::Food, "杭帮菜", "n7"),
        (
            "798艺术区",
            "北京市",
            PoiType::Attractions,
            "特色景点",
            "n9",
        ),
        ("天坛公园", "北京市", PoiType::Attractions, "公园", "w221"),
        ("颐和园", "北京市", PoiType::Attractions, "公园", "r331"),
    ];
    assert_eq!(store.rows.len(), expect.len(), "{:?}", store.rows);
    for (name, city, t, cat, id) in expect {
        let r = get(name);
        assert_eq!(
            (
                r.city.as_str(),
                r.poi_type,
                r.category.as_deref(),
                r.source_id.as_str()
            ),
            (city, t, Some(cat), id),
            "{name}"
        );
        assert_eq!(r.source, "osm");
        assert!(r.licence.contains("OpenStreetMap"));
    }
    // the museum: hours by season, ticket, a derived popularity (one wikipedia tag)
    let gugong = get("故宫博物院");
    assert_eq!(gugong.category_raw, "tourism=museum");
    let hours = gugong.opening_hours.as_ref().unwrap();
    assert_eq!(hours.windows_on("05-01", 3).unwrap()[0].close, "17:00");
    assert_eq!(hours.windows_on("12-01", 3).unwrap()[0].close, "16:30");
    assert_eq!(hours.windows_on("12-01", 1), Some(&[][..])); // closed on Mondays
    assert_eq!(gugong.price, Some(60.0));
    assert_eq!(
        (gugong.popularity, gugong.popularity_source),
        (Some(1.0), PopularitySource::Derived)
    );
    let hotel = get("北京饭店");
    assert_eq!(
        (hotel.popularity, hotel.popularity_source),
        (Some(5.0), PopularitySource::Stars)
    );
    assert!(get("楼外楼").opening_hours.is_none());
    assert!(get("灵隐寺").opening_hours.is_some());
    // way and relation POIs sit at the centroids of their outlines
    let tiantan = get("天坛公园");
    assert!((tiantan.lat.unwrap() - 39.8824).abs() < 1e-4);
    assert!((tiantan.lng.unwrap() - 116.40775).abs() < 1e-4);
    let yhy = get("颐和园");
    assert!((yhy.lat.unwrap() - 39.995).abs() < 1e-4 && (yhy.lng.unwrap() - 116.27).abs() < 1e-4);

    let m = &store.manifest;
    assert_eq!(m.dropped.get("no name"), Some(&1));
    assert_eq!(m.dropped.get("outside every city"), Some(&1));
    let dropped = std::fs::read_to_string(out.join("dropped.jsonl")).unwrap();
    assert!(dropped.contains("\"node 4\""), "{dropped}");
    assert!(
        dropped.contains("\"node 8\"") && dropped.contains("珠穆朗玛峰"),
        "{dropped}"
    );
    let notes = &m.sources[0].notes;
    let ca = &notes["city_assignment"];
    assert_eq!(ca["boundary"], 6, "{ca}");
    assert_eq!(ca["nearest_centre"], 3, "{ca}");
    assert_eq!(ca["outside_every_city"], 1, "{ca}");
    assert_eq!(notes["opening_hours"]["untranslatable"], 1);
    assert_eq!(notes["opening_hours"]["translated"], 2);
    assert_eq!(notes["boundaries"]["used"][0], "r301 北京市");
    assert_eq!(notes["elements"]["nodes"], POIS.len() + 16);
}

#[test]
fn osm_import_is_byte_identical_across_thread_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let input = fixture(tmp.path());
    let (a, b) = (tmp.path().join("a/store"), tmp.path().join("b/store"));
    import(&input, &a, 1).unwrap();
    import(&input, &b, 2).unwrap();
    for f in ["pois.parquet", "dropped.jsonl", "manifest.json"] {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        // the manifest names its input, the same file for both
        assert!(x == y, "{f} differs between 1 and 2 threads");
    }
}

#[test]
fn osm_bad_input_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("junk.osm.pbf");
    std::fs::write(&junk, b"this is not a protocol buffer at all, just text\n").unwrap();
    let err = import(&junk, &tmp.path().join("s1/store"), 2).unwrap_err();
    assert!(format!("{err:#}").contains("junk.osm.pbf"), "{err:#}");
    // a file cut short inside a blob
    let good = fixture(tmp.path());
    let bytes = std::fs::read(&good).unwrap();
    let cut = tmp.path().join("cut.osm.pbf");
    std::fs::write(&cut, &bytes[..bytes.len() - 40]).unwrap();
    let err = import(&cut, &tmp.path().join("s2/store"), 2).unwrap_err();
    assert!(format!("{err:#}").contains("cut.osm.pbf"), "{err:#}");
    // bit flips inside the compressed data: an error or a store, never a panic
    for at in [60, bytes.len() / 2, bytes.len() - 100] {
        let mut b = bytes.clone();
        b[at] ^= 0x5a;
        let p = tmp.path().join(format!("flip{at}.osm.pbf"));
        std::fs::write(&p, &b).unwrap();
        let _ = import(&p, &tmp.path().join(format!("f{at}/store")), 2);
    }
}

#[test]
fn pbf_writer_output_reads_back_with_osmpbf() {
    let tmp = tempfile::tempdir().unwrap();
    let input = fixture(tmp.path());
    let reader = osmpbf::ElementReader::from_path(&input).unwrap();
    let (mut nodes, mut ways, mut rels) = (0, 0, 0);
    let mut seen_museum = false;
    reader
        .for_each(|e| match e {
            osmpbf::Element::DenseNode(n) => {
                nodes += 1;
                if n.id() == 1 {
                    assert!((n.lat() - 39.9163).abs() < 1e-7 && (n.lon() - 116.3972).abs() < 1e-7);
                    let tags: Vec<_> = n.tags().collect();
                    assert!(tags.contains(&("name", "故宫博物院")));
                    seen_museum = true;
                }
            }
            osmpbf::Element::Way(w) => {
                ways += 1;
                if w.id() == 202 {
                    assert_eq!(w.refs().collect::<Vec<_>>(), [101, 104, 103]);
                }
            }
            osmpbf::Element::Relation(r) => {
                rels += 1;
                if r.id() == 301 {
                    let m: Vec<_> = r
                        .members()
                        .map(|m| (m.member_id, m.role().unwrap().to_string()))
                        .collect();
                    assert_eq!(m, [(201, "outer".into()), (202, "outer".into())]);
                }
            }
            osmpbf::Element::Node(_) => panic!("the writer writes dense nodes only"),
        })
        .unwrap();
    assert!(seen_museum);
    assert_eq!((nodes, ways, rels), (POIS.len() + 16, 5, 3));
}

/// Issue 11: `gtb validate --resources` against the OSM store accepts its names and flags a
/// POI of another city. The task is a 北京市 trip of the default build with its attraction
/// preferences rewritten to the store's names.
#[test]
fn issue11_validate_against_an_osm_store_accepts_its_names_and_flags_another_citys() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&fixture(dir.path()), &store, 2).unwrap();
    let plain = crate::common::config_in(&dir.path().join("default"));
    let built = crate::common::build(&plain, 2);
    let text = std::fs::read_to_string(&built.splits[0].path).unwrap();
    let mut task: gtb_core::task::Task = text
        .lines()
        .map(|l| serde_json::from_str::<gtb_core::task::Task>(l).unwrap())
        .find(|t| t.metadata.cities == ["北京市"])
        .expect("the default build has a trip to 北京市 alone");
    let mut cfg = plain.clone();
    cfg.paths.resources = Some(store);
    let check = |t: &gtb_core::task::Task, name: &str| -> Vec<String> {
        let file = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&file, gtb_core::pyjson::to_string(t) + "\n").unwrap();
        let (n, findings) = gtb_ops::validate_file(&cfg, &file).unwrap();
        assert_eq!(n, 1);
        findings
            .iter()
            .map(|f| f.to_string())
            .filter(|m| m.contains("[poi_names]"))
            .collect()
    };
    for u in task.user_preferences.values_mut() {
        let cp = &mut u.preference.city_specific_preferences["北京市"];
        cp.attractions.must_visit = vec!["故宫博物院".into()];
        cp.attractions.reject_visit = vec!["798艺术区".into()];
    }
    assert_eq!(check(&task, "ok"), Vec::<String>::new());
    // 西湖 is a POI of the store, in 杭州市
    let u = task.user_preferences.values_mut().next().unwrap();
    u.preference.city_specific_preferences["北京市"]
        .attractions
        .must_visit = vec!["西湖".into()];
    let found = check(&task, "other_city");
    assert!(
        found.iter().any(|m| m.contains("西湖")),
        "西湖 passed as a POI of 北京市: {found:?}"
    );
}
