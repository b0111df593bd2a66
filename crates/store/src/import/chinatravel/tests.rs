//! Unit tests: drop positions, hours after midnight, category and hotel mappings, file names.

use super::category::{attraction_category, food_category, hotel_category};
use super::files::key;
use super::values::daily_hours;
use super::*;
use crate::PoiType;
use gtb_resources::City;

#[test]
fn drops_name_the_physical_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("beijing.csv");
    let text = "id,Name,Lat,Lon,Price,CuisineName,WeekdayOpenTime,WeekdayCloseTime\n\
        0,全聚德(前门店),39.8990,116.3980,150,北京菜,11:00,21:00\n\
        1,\"\",39.9,116.4,100,北京菜,11:00,21:00\n\
        2,\"多行\n名字\",39.9,116.4,100,北京菜,11:00,21:00\n\
        3,,39.9,116.4,100,北京菜,11:00,21:00\n";
    // LF and CRLF line ends: the same lines
    for text in [text.to_string(), text.replace('\n', "\r\n")] {
        std::fs::write(&path, text).unwrap();
        let city = test_city();
        let (mut out, mut notes) = (StoreBuilder::new(None), Notes::default());
        let rows = restaurants(
            &path,
            "restaurants/beijing.csv",
            &city,
            &mut out,
            &mut notes,
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        let at: Vec<&str> = out.dropped().iter().map(|d| d.position.as_str()).collect();
        assert_eq!(
            at,
            [
                "restaurants/beijing.csv line 3",
                "restaurants/beijing.csv line 6"
            ]
        );
    }
}

fn test_city() -> City {
    City {
        name: "北京市".into(),
        province: "北京市".into(),
        region: "north".into(),
        tier: 1,
        hub: true,
        lat: 39.9042,
        lng: 116.4074,
        hsr: true,
        airports: Vec::new(),
        stations: Vec::new(),
    }
}

#[test]
fn hours_after_midnight_split_into_two_windows() {
    let h = daily_hours("17:30", "2:00").unwrap().unwrap();
    let w: Vec<(&str, &str)> = h.rules[0]
        .time_windows
        .iter()
        .map(|w| (w.open.as_str(), w.close.as_str()))
        .collect();
    assert_eq!(w, [("00:00", "02:00"), ("17:30", "24:00")]);
    assert!(daily_hours("00:00", "24:00").unwrap().unwrap().always_open);
    assert!(daily_hours("00:00", "00:00").unwrap().unwrap().always_open);
    let h = daily_hours("9:00", "17:00").unwrap().unwrap();
    assert_eq!(h.rules[0].time_windows[0].open, "09:00");
    assert!(daily_hours("9", "17:00").is_err());
    assert_eq!(daily_hours("", "").unwrap(), None);
}

#[test]
fn every_mapped_category_is_in_the_release_vocabulary() {
    for raw in [
        "游乐园/体育娱乐",
        "公园",
        "历史古迹",
        "博物馆/纪念馆",
        "人文景观",
        "自然风光",
        "商业街区",
        "文化旅游区",
        "美术馆/艺术馆",
        "红色景点",
        "园林",
        "大学校园",
        "美术馆/纪念馆",
        "图书馆/纪念馆",
    ] {
        for name in [
            "x",
            "x动物园",
            "x植物园",
            "x湿地",
            "x森林公园",
            "x寺",
            "x故居",
            "x纪念馆",
        ] {
            let c = attraction_category(raw, name).unwrap();
            assert!(PoiType::Attractions.in_vocabulary(c), "{raw} {name} -> {c}");
        }
    }
    assert_eq!(attraction_category("其它", "x"), None);
    let cuisines = "西餐 火锅 粤菜 小吃 江浙菜 川菜 日本料理 自助餐 烧烤 北京菜 咖啡店 东南亚菜 创意菜 本帮菜 海鲜 湖北菜 韩国料理 湘菜 快餐简餐 素食 融合菜 其他中餐 农家菜 新疆菜 清真菜 云南菜 客家菜 鲁菜 西北菜 东北菜 台湾菜 徽菜 闽菜 海南菜 西藏菜";
    for raw in cuisines.split(' ') {
        let c = food_category(raw).unwrap_or_else(|| panic!("{raw}"));
        assert!(PoiType::Food.in_vocabulary(c), "{raw} -> {c}");
    }
    assert_eq!(food_category("面包甜点"), None);
}

#[test]
fn hotels_are_classed_by_word_then_price() {
    assert_eq!(hotel_category("某某民宿", "", Some(900.0)), Some("民宿"));
    assert_eq!(hotel_category("x", "电竞房", None), Some("电竞酒店"));
    assert_eq!(hotel_category("x", "免费停车", Some(150.0)), Some("经济型"));
    assert_eq!(hotel_category("x", "", Some(399.0)), Some("舒适型"));
    assert_eq!(hotel_category("x", "", Some(400.0)), Some("高档型"));
    assert_eq!(hotel_category("x", "", Some(800.0)), Some("豪华型"));
    assert_eq!(hotel_category("x", "", None), None);
}

#[test]
fn file_names_resolve_by_pinyin_or_english_only() {
    let t = pinyin_table().unwrap();
    assert_eq!(t.get(&key("beijing")).map(String::as_str), Some("北京市"));
    assert_eq!(t.get(&key("Xi'an")).map(String::as_str), Some("西安市"));
    assert_eq!(
        t.get(&key("Hohhot")).map(String::as_str),
        Some("呼和浩特市")
    );
    assert_eq!(t.get(&key("beijin")), None);
    assert_eq!(
        t.values().collect::<std::collections::BTreeSet<_>>().len(),
        143
    );
}
