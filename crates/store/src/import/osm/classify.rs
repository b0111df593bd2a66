//! Which OSM objects are POIs, of what type and release category (docs/RESOURCES.md,
//! "Adapter: osm", lists every mapping).

use crate::PoiType;

/// The tags of one element, as read.
pub type Tags<'a> = [(&'a str, &'a str)];

pub fn tag<'a>(tags: &Tags<'a>, key: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// What an element is, when it is a POI.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub poi_type: PoiType,
    /// the deciding tags, `;`-joined (`tourism=museum`, `amenity=restaurant;cuisine=sichuan`)
    pub raw: String,
    pub category: Option<&'static str>,
}

/// The POI name: `name:zh`, else `name:zh-Hans`, else `name`.
pub fn name<'a>(tags: &Tags<'a>) -> Option<&'a str> {
    tag(tags, "name:zh")
        .or_else(|| tag(tags, "name:zh-Hans"))
        .or_else(|| tag(tags, "name"))
}

/// The POI class of an element's tags; `None` when it is not a POI gtb imports.
pub fn classify(tags: &Tags) -> Option<Class> {
    if tags.is_empty() {
        return None;
    }
    hotel(tags)
        .or_else(|| food(tags))
        .or_else(|| attraction(tags))
}

fn class(poi_type: PoiType, raw: String, category: Option<&'static str>) -> Option<Class> {
    Some(Class {
        poi_type,
        raw,
        category,
    })
}

fn attraction(tags: &Tags) -> Option<Class> {
    let a = PoiType::Attractions;
    let tourism = tag(tags, "tourism");
    if tag(tags, "amenity") == Some("place_of_worship") && tourism.is_some() {
        let religion = tag(tags, "religion").unwrap_or("");
        let raw = format!("amenity=place_of_worship;religion={religion}");
        return class(a, raw, worship(religion, tag(tags, "denomination")));
    }
    if let Some(t) = tourism {
        let c = match t {
            "museum" => Some("博物馆"),
            // no gallery category in the release; art museums (美术馆) are listed as museums
            "gallery" => Some("博物馆"),
            "zoo" => Some("动物园"),
            "aquarium" => Some("动物园"),
            "theme_park" => Some("主题公园"),
            "viewpoint" => Some("观景点"),
            _ => None,
        };
        if c.is_some() {
            return class(a, format!("tourism={t}"), c);
        }
    }
    if let Some(h) = tag(tags, "historic").filter(|h| *h != "no") {
        return class(a, format!("historic={h}"), Some(historic(h)));
    }
    match tag(tags, "leisure") {
        Some("park") => {
            let c = park_kind(name(tags).unwrap_or(""));
            return class(a, "leisure=park".into(), Some(c));
        }
        Some("nature_reserve") => {
            return class(a, "leisure=nature_reserve".into(), Some("自然风光"));
        }
        _ => {}
    }
    if tourism == Some("attraction") {
        let c = if tag(tags, "natural").is_some() {
            "自然风光"
        } else {
            "特色景点"
        };
        return class(a, "tourism=attraction".into(), Some(c));
    }
    None
}

fn worship(religion: &str, denomination: Option<&str>) -> Option<&'static str> {
    Some(match religion {
        "buddhist" => "寺庙",
        "taoist" => "道观",
        "muslim" => "清真寺",
        "christian" => match denomination {
            Some("catholic" | "roman_catholic") => "天主教堂",
            _ => "教堂",
        },
        // 文庙 / 孔庙: listed as heritage sites by Chinese map services
        "confucian" => "文物古迹",
        _ => return None,
    })
}

fn historic(h: &str) -> &'static str {
    match h {
        "castle" | "fort" | "city_gate" | "citywalls" | "palace" | "manor" | "tower"
        | "building" | "house" | "monastery" | "temple" | "pagoda" | "bridge" => "古建筑",
        "memorial" => "纪念馆",
        _ => "文物古迹",
    }
}

/// Park names carry their kind (森林公园, 湿地公园, ...); a plain park is 公园.
fn park_kind(name: &str) -> &'static str {
    const KINDS: [&str; 7] = [
        "森林公园",
        "湿地公园",
        "生态公园",
        "滨江公园",
        "滨海公园",
        "纪念公园",
        "植物园",
    ];
    KINDS
        .into_iter()
        .find(|k| name.ends_with(k))
        .unwrap_or("公园")
}

fn food(tags: &Tags) -> Option<Class> {
    let amenity = tag(tags, "amenity")?;
    if !matches!(amenity, "restaurant" | "fast_food" | "cafe") {
        return None;
    }
    let cuisine = tag(tags, "cuisine");
    let mapped = cuisine.and_then(|c| c.split(';').find_map(|c| cuisine_category(c.trim())));
    let c = match amenity {
        "restaurant" => mapped.or(Some("餐饮")),
        "fast_food" => match mapped {
            Some("西餐厅(综合风味)" | "意大利菜" | "披萨") => Some("西式快餐"),
            Some(c) => Some(c),
            None if cuisine.is_some_and(western_fast_food) => Some("西式快餐"),
            None => Some("小吃快餐"),
        },
        _ => match mapped {
            Some("奶茶/茶饮") => Some("奶茶/茶饮"),
            _ => Some("咖啡"),
        },
    };
    let raw = match cuisine {
        Some(cu) => format!("amenity={amenity};cuisine={cu}"),
        None => format!("amenity={amenity}"),
    };
    class(PoiType::Food, raw, c)
}

fn western_fast_food(cuisine: &str) -> bool {
    cuisine.split(';').any(|c| {
        matches!(
            c.trim(),
            "burger" | "chicken" | "fried_chicken" | "sandwich" | "american" | "hot_dog"
        )
    })
}

/// OSM `cuisine=*` values to release food categories.
pub fn cuisine_category(c: &str) -> Option<&'static str> {
    Some(match c {
        "sichuan" | "szechuan" => "川菜",
        "hunan" => "湘菜",
        "cantonese" | "guangdong" => "粤菜",
        "shandong" => "鲁菜",
        "anhui" => "徽菜",
        "fujian" => "闽菜",
        "jiangsu" => "苏菜",
        "zhejiang" => "浙菜",
        "huaiyang" => "淮扬菜",
        "hangzhou" => "杭帮菜",
        "shanghai" | "shanghainese" => "上海菜",
        "teochew" | "chaozhou" => "潮州菜",
        "hakka" => "客家菜",
        "northeastern_chinese" | "dongbei" => "东北菜",
        "northwestern_chinese" | "xibei" => "西北菜",
        "beijing" | "peking_duck" | "roast_duck" => "北京菜",
        "yunnan" => "云南菜",
        "guizhou" => "贵州菜",
        "xinjiang" | "uyghur" => "新疆菜",
        "tibetan" => "西藏菜",
        "hot_pot" | "hotpot" => "火锅",
        "chongqing_hot_pot" => "重庆火锅",
        "barbecue" | "bbq" | "grill" => "烧烤",
        "kebab" | "skewer" | "skewers" => "烤串",
        "seafood" => "海鲜",
        "noodle" | "noodles" => "面馆",
        "lamian" | "beef_noodle" | "lanzhou_lamian" => "牛肉面",
        "crossing_bridge_noodles" => "过桥米线",
        "malatang" => "麻辣烫",
        "crayfish" => "小龙虾",
        "dim_sum" => "粤式茶点",
        "cha_chaan_teng" | "hong_kong" => "茶餐厅",
        "chinese" => "中餐",
        "regional" | "local" => "特色/地方风味餐厅",
        "vegetarian" | "vegan" => "素菜馆",
        "halal" | "muslim" => "清真菜",
        "japanese" | "ramen" => "日本料理",
        "sushi" => "寿司",
        "korean" => "韩国料理",
        "thai" => "泰国菜",
        "vietnamese" | "malaysian" | "indonesian" | "singaporean" => "东南亚菜",
        "italian" => "意大利菜",
        "pizza" => "披萨",
        "western" | "french" | "steak_house" | "european" | "international" | "german"
        | "spanish" | "mediterranean" => "西餐厅(综合风味)",
        "coffee_shop" | "coffee" => "咖啡",
        "bubble_tea" | "tea" | "milk_tea" => "奶茶/茶饮",
        "buffet" => "自助餐",
        "snack" | "street_food" => "小吃快餐",
        _ => return None,
    })
}

fn hotel(tags: &Tags) -> Option<Class> {
    let t = tag(tags, "tourism")?;
    if !matches!(
        t,
        "hotel" | "guest_house" | "hostel" | "motel" | "apartment"
    ) {
        return None;
    }
    let stars = stars(tags);
    let raw = match tag(tags, "stars") {
        Some(s) => format!("tourism={t};stars={s}"),
        None => format!("tourism={t}"),
    };
    let by_stars = stars.map(|s| match s {
        5 => "豪华型",
        4 => "高档型",
        3 => "舒适型",
        _ => "经济型",
    });
    let by_name = name(tags).and_then(hotel_name_kind);
    let by_tourism = match t {
        "guest_house" => Some("民宿"),
        "hostel" => Some("旅馆"),
        "motel" => Some("快捷酒店"),
        "apartment" => Some("公寓式酒店"),
        _ => None,
    };
    class(PoiType::Hotels, raw, by_stars.or(by_name).or(by_tourism))
}

/// `stars=*` as a whole number 1-5 (`4`, `4S`, `3.5` -> 3).
pub fn stars(tags: &Tags) -> Option<u8> {
    let s = tag(tags, "stars")?;
    let d = s.chars().next()?.to_digit(10)? as u8;
    (1..=5).contains(&d).then_some(d)
}

/// Chinese hotel names say what kind of lodging they are.
fn hotel_name_kind(name: &str) -> Option<&'static str> {
    const KINDS: [(&str, &str); 9] = [
        ("电竞", "电竞酒店"),
        ("主题", "主题酒店"),
        ("公寓", "公寓式酒店"),
        ("度假", "度假酒店"),
        ("快捷", "快捷酒店"),
        ("商务", "商务酒店"),
        ("客栈", "客栈"),
        ("民宿", "民宿"),
        ("青年旅舍", "旅馆"),
    ];
    KINDS
        .into_iter()
        .find(|(k, _)| name.contains(k))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(tags: &Tags) -> Option<(PoiType, Option<&'static str>)> {
        classify(tags).map(|c| (c.poi_type, c.category))
    }

    #[test]
    fn mappings() {
        let a = PoiType::Attractions;
        assert_eq!(cat(&[("tourism", "museum")]), Some((a, Some("博物馆"))));
        assert_eq!(
            cat(&[
                ("amenity", "place_of_worship"),
                ("religion", "buddhist"),
                ("tourism", "attraction")
            ]),
            Some((a, Some("寺庙")))
        );
        // a place of worship without a tourism tag is not a sight
        assert_eq!(
            cat(&[("amenity", "place_of_worship"), ("religion", "buddhist")]),
            None
        );
        assert_eq!(
            cat(&[("leisure", "park"), ("name", "西溪国家湿地公园")]),
            Some((a, Some("湿地公园")))
        );
        assert_eq!(
            cat(&[("amenity", "restaurant"), ("cuisine", "foo;sichuan")]),
            Some((PoiType::Food, Some("川菜")))
        );
        assert_eq!(
            cat(&[("amenity", "fast_food"), ("cuisine", "burger")]),
            Some((PoiType::Food, Some("西式快餐")))
        );
        assert_eq!(
            cat(&[("tourism", "hotel"), ("stars", "5"), ("name", "北京饭店")]),
            Some((PoiType::Hotels, Some("豪华型")))
        );
        assert_eq!(
            cat(&[("tourism", "hotel"), ("name", "如家快捷酒店")]),
            Some((PoiType::Hotels, Some("快捷酒店")))
        );
        assert_eq!(cat(&[("tourism", "hotel")]), Some((PoiType::Hotels, None)));
        assert_eq!(cat(&[("highway", "residential")]), None);
    }

    #[test]
    fn names_prefer_chinese() {
        let t = [("name", "West Lake"), ("name:zh-Hans", "西湖")];
        assert_eq!(name(&t), Some("西湖"));
        let t = [("name", " "), ("name:zh", "故宫博物院")];
        assert_eq!(name(&t), Some("故宫博物院"));
        assert_eq!(name(&[("name", "  ")]), None);
    }
}
