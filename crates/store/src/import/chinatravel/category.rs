//! ChinaTravel's attraction types, cuisines and hotels in the release vocabulary.

use super::{COMFORT_BELOW, ECONOMY_BELOW, UPSCALE_BELOW};

/// ChinaTravel's attraction `Type` (15 values) in the release vocabulary, refined by the
/// name where the release has a finer category (寺庙, 纪念馆, 动物园, ...). `其它` stays
/// unmapped.
pub(super) fn attraction_category(raw: &str, name: &str) -> Option<&'static str> {
    let has = |k: &str| name.contains(k);
    let ends = |k: &str| name.ends_with(k);
    Some(match raw {
        "公园" if has("动物园") => "动物园",
        "公园" if has("植物园") => "植物园",
        "公园" if has("湿地") => "湿地公园",
        "公园" if has("森林公园") => "森林公园",
        "公园" => "公园",
        "历史古迹" if ends("寺") || ends("庙") || has("禅寺") => "寺庙",
        "历史古迹" if has("故居") => "名人故居",
        "历史古迹" => "文物古迹",
        "博物馆/纪念馆" | "美术馆/纪念馆" | "图书馆/纪念馆" if has("纪念") => {
            "纪念馆"
        }
        "博物馆/纪念馆" | "美术馆/纪念馆" | "图书馆/纪念馆" | "美术馆/艺术馆" => {
            "博物馆"
        }
        "游乐园/体育娱乐" if has("动物园") => "动物园",
        "游乐园/体育娱乐" => "游乐园",
        "人文景观" | "大学校园" => "人文景观",
        "自然风光" => "自然风光",
        "商业街区" => "特色街区",
        "文化旅游区" => "特色景点",
        "红色景点" => "红色景点",
        "园林" => "园林",
        _ => return None,
    })
}

/// ChinaTravel's `CuisineName` (43 values) in the release vocabulary; values with no
/// counterpart (面包甜点, 酒吧/酒馆, 茶馆/茶室, 亚洲菜, 中东料理, 拉美料理, 其他, blank) stay
/// unmapped and are reported in the manifest.
pub(super) fn food_category(raw: &str) -> Option<&'static str> {
    Some(match raw {
        "西餐" => "西餐厅(综合风味)",
        "小吃" => "特色小吃",
        "咖啡店" => "咖啡",
        "本帮菜" => "上海菜",
        "快餐简餐" => "小吃快餐",
        "素食" => "素菜馆",
        "融合菜" => "创意菜",
        "其他中餐" => "中餐",
        "台湾菜" => "特色/地方风味餐厅",
        // 火锅, 粤菜, 川菜, 北京菜, ...: already release values
        _ => {
            return gtb_resources::vocab::FOOD_CATEGORIES
                .iter()
                .copied()
                .find(|c| *c == raw);
        }
    })
}

/// One of the release's 13 hotel categories: from the name or Ctrip feature tag when they
/// say it, else from the price band (thresholds above); `None` without either.
pub(super) fn hotel_category(
    name: &str,
    feature: &str,
    price: Option<f64>,
) -> Option<&'static str> {
    let has = |k: &str| name.contains(k) || feature.contains(k);
    let by_word = [
        ("电竞", "电竞酒店"),
        ("民宿", "民宿"),
        ("客栈", "客栈"),
        ("旅舍", "旅馆"),
        ("旅馆", "旅馆"),
        ("招待所", "旅馆"),
        ("公寓", "公寓式酒店"),
        ("主题", "主题酒店"),
        ("度假", "度假酒店"),
        ("快捷", "快捷酒店"),
        ("商务", "商务酒店"),
    ];
    if let Some((_, c)) = by_word.iter().find(|(k, _)| has(k)) {
        return Some(c);
    }
    let p = price.filter(|p| *p > 0.0)?;
    Some(if p < ECONOMY_BELOW {
        "经济型"
    } else if p < COMFORT_BELOW {
        "舒适型"
    } else if p < UPSCALE_BELOW {
        "高档型"
    } else {
        "豪华型"
    })
}
