//! The release's closed vocabularies (task_format.md §3).

pub const TRANSPORT_MODES: [&str; 4] = ["飞机", "高铁", "火车", "自驾"];

/// Profile attributes (`profiles.csv`, archetype slot filters).
pub const GENDERS: [&str; 2] = ["男", "女"];
pub const MARITAL: [&str; 4] = ["未婚", "已婚", "离婚", "丧偶"];
pub const PARENTING: [&str; 2] = ["有子女", "无子女"];
/// The oldest age a profile or an archetype filter may give.
pub const MAX_AGE: u32 = 110;

pub const HOTEL_CATEGORIES: [&str; 13] = [
    "舒适型",
    "经济型",
    "高档型",
    "民宿",
    "商务酒店",
    "豪华型",
    "快捷酒店",
    "旅馆",
    "客栈",
    "度假酒店",
    "电竞酒店",
    "公寓式酒店",
    "主题酒店",
];

pub const ATTRACTION_CATEGORIES: &[&str] = &[
    "博物馆",
    "公园",
    "自然风光",
    "4A景区",
    "5A景区",
    "3A景区",
    "寺庙",
    "人文景观",
    "游乐园",
    "文物古迹",
    "特色景点",
    "主题公园",
    "湿地公园",
    "湿地",
    "大峡谷",
    "红色景点",
    "湖泊河流",
    "名山丘陵",
    "名山大川",
    "广场",
    "森林公园",
    "城市公园",
    "生态公园",
    "滨海公园",
    "滨江公园",
    "海滨沙滩",
    "海滨浴场",
    "海滩",
    "观景点",
    "纪念馆",
    "纪念公园",
    "名人故居",
    "动物园",
    "植物园",
    "热带植物园",
    "冰川瀑布",
    "古镇",
    "古镇古村",
    "古村落",
    "古建筑",
    "温泉",
    "步道",
    "道观",
    "天主教堂",
    "教堂",
    "清真寺",
    "森林草原",
    "特色街区",
    "儿童乐园",
    "园林",
    "户外拓展",
    "烈士陵园",
    "购物相关场所",
    "创意园区",
    "溶洞",
    "漂流",
];

/// Excluded by the release's scorer; never a preference value (§3.3).
pub const EXCLUDED_ATTRACTION_CATEGORIES: [&str; 3] = ["旅游景点", "滑雪", "游客中心"];
pub const EXCLUDED_FOOD_CATEGORIES: [&str; 2] = ["食堂", "米粉"];

pub const FOOD_CATEGORIES: &[&str] = &[
    "川菜",
    "湘菜",
    "粤菜",
    "鲁菜",
    "徽菜",
    "闽菜",
    "苏菜",
    "浙菜",
    "江浙菜",
    "淮扬菜",
    "杭帮菜",
    "上海菜",
    "南京菜",
    "无锡菜",
    "宁波菜",
    "绍兴菜",
    "温州菜",
    "顺德菜",
    "潮州菜",
    "客家菜",
    "盐帮菜",
    "东北菜",
    "西北菜",
    "北京菜",
    "河北菜",
    "河南菜",
    "山西菜",
    "湖北菜",
    "江西菜",
    "贵州菜",
    "云南菜",
    "广西菜",
    "海南菜",
    "内蒙菜",
    "新疆菜",
    "西藏菜",
    "傣族菜",
    "家常菜",
    "农家菜",
    "农家乐",
    "私房菜",
    "创意菜",
    "中餐",
    "综合酒楼",
    "素菜馆",
    "清真菜",
    "特色/地方风味餐厅",
    "日本料理",
    "韩国料理",
    "泰国菜",
    "东南亚菜",
    "意大利菜",
    "西餐厅(综合风味)",
    "西式快餐",
    "中式快餐",
    "小吃快餐",
    "特色小吃",
    "美食街",
    "大排档",
    "自助餐",
    "茶餐厅",
    "咖啡",
    "奶茶/茶饮",
    "餐饮",
    "火锅",
    "四川火锅",
    "重庆火锅",
    "牛肉火锅",
    "海鲜火锅",
    "鱼火锅",
    "菌菇火锅",
    "腊排骨火锅",
    "云南火锅",
    "潮汕火锅",
    "糟粕醋火锅",
    "老北京火锅",
    "小火锅",
    "汤锅",
    "砂锅",
    "烧烤",
    "烤肉",
    "烤串",
    "烤鱼",
    "串串香",
    "麻辣烫",
    "涮羊肉",
    "海鲜",
    "水产海鲜",
    "海鲜餐厅",
    "海鲜酒楼",
    "椰子鸡",
    "小龙虾",
    "面馆",
    "牛肉面",
    "牛肉粉",
    "羊肉粉",
    "刀削面",
    "锅盖面",
    "过桥米线",
    "米线",
    "桂林米粉",
    "沙茶面",
    "肠粉",
    "粤式茶点",
    "福建小吃",
    "山东小吃",
    "豆花/豆腐脑",
    "钵钵鸡",
    "大盘鸡",
    "牛肉汤",
    "汤",
    "卤味",
    "炖菜",
    "煎饼",
    "烧饼",
    "披萨",
    "寿司",
    "肉类",
];

/// Food categories found in every Chinese city: national formats and chains, and the four
/// cuisines served nationwide. They are valid food preferences in any city; every other value
/// must be one of the destination city's own (a name or category of its food rows), so a
/// regional speciality (重庆火锅, 肠粉, 小龙虾, 过桥米线, ...) is valid only where the city's
/// rows list it. The LLM prompt states the same rule (`food_anywhere`); `validate::food` applies
/// it for the validator and the reply parser alike.
pub const FOOD_ANYWHERE: &[&str] = &[
    "中餐",
    "家常菜",
    "农家菜",
    "私房菜",
    "创意菜",
    "综合酒楼",
    "素菜馆",
    "清真菜",
    "特色/地方风味餐厅",
    "川菜",
    "湘菜",
    "粤菜",
    "东北菜",
    "火锅",
    "小火锅",
    "烧烤",
    "烤肉",
    "烤串",
    "烤鱼",
    "串串香",
    "麻辣烫",
    "砂锅",
    "面馆",
    "小吃快餐",
    "中式快餐",
    "西式快餐",
    "特色小吃",
    "美食街",
    "大排档",
    "自助餐",
    "日本料理",
    "韩国料理",
    "西餐厅(综合风味)",
    "披萨",
    "咖啡",
    "奶茶/茶饮",
    "餐饮",
];

/// How a food value is said aloud: the part before a `/` or a `(` (奶茶/茶饮 -> 奶茶,
/// 西餐厅(综合风味) -> 西餐厅). The template lines say it so, and the line checks map it back.
pub fn spoken_food(v: &str) -> &str {
    // both are ASCII, so a byte that is one is where a character starts
    v.bytes()
        .position(|b| b == b'/' || b == b'(')
        .map_or(v, |i| &v[..i])
}

/// A vocabulary as a set, built on first use: validation asks these for every value of every
/// task, and the lists are long (a linear scan compared about a hundred strings a value).
struct Vocab {
    list: &'static [&'static str],
    set: std::sync::OnceLock<std::collections::HashSet<&'static str, foldhash::fast::FixedState>>,
}

impl Vocab {
    const fn of(list: &'static [&'static str]) -> Vocab {
        Vocab {
            list,
            set: std::sync::OnceLock::new(),
        }
    }
    fn contains(&self, s: &str) -> bool {
        self.set
            .get_or_init(|| self.list.iter().copied().collect())
            .contains(s)
    }
}

static ATTRACTIONS: Vocab = Vocab::of(ATTRACTION_CATEGORIES);
static FOOD: Vocab = Vocab::of(FOOD_CATEGORIES);
static FOOD_ANY: Vocab = Vocab::of(FOOD_ANYWHERE);
static HOTELS: Vocab = Vocab::of(&HOTEL_CATEGORIES);

pub fn is_attraction_category(s: &str) -> bool {
    ATTRACTIONS.contains(s)
}
pub fn is_food_category(s: &str) -> bool {
    FOOD.contains(s)
}
pub fn is_food_anywhere(s: &str) -> bool {
    FOOD_ANY.contains(s)
}
pub fn is_hotel_category(s: &str) -> bool {
    HOTELS.contains(s)
}
pub fn is_transport_mode(s: &str) -> bool {
    TRANSPORT_MODES.contains(&s)
}

/// The three kinds of POI of the release's table (`poi_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoiKind {
    Attraction,
    Food,
    Hotel,
}

/// The category the release's resolver reads for a stored category (`utils/eval_util.py`):
/// an empty or excluded attraction category counts as 公园, food as 中餐, and a hotel
/// category outside the 13 as 商务酒店. The scorer and the generator (which grounds must_eat
/// in what the venues serve) both read categories through it.
pub fn resolved_category(category: &str, kind: PoiKind) -> &str {
    let fallback = match kind {
        PoiKind::Attraction => "公园",
        PoiKind::Food => "中餐",
        PoiKind::Hotel => "商务酒店",
    };
    let excluded = match kind {
        PoiKind::Attraction => EXCLUDED_ATTRACTION_CATEGORIES.contains(&category),
        PoiKind::Food => EXCLUDED_FOOD_CATEGORIES.contains(&category),
        PoiKind::Hotel => !is_hotel_category(category),
    };
    if category.is_empty() || excluded {
        fallback
    } else {
        category
    }
}

#[cfg(test)]
mod tests {
    use super::spoken_food;

    #[test]
    fn a_food_is_said_up_to_its_first_slash_or_bracket() {
        assert_eq!(spoken_food("奶茶/茶饮"), "奶茶");
        assert_eq!(spoken_food("西餐厅(综合风味)"), "西餐厅");
        assert_eq!(spoken_food("小吃(街边)/快餐"), "小吃");
        assert_eq!(spoken_food("快餐/小吃(街边)"), "快餐");
        assert_eq!(spoken_food("湘菜"), "湘菜");
        assert_eq!(spoken_food("/茶饮"), "");
    }
}
