//! The member's taste, as the offline generator reads a profile: a persona from age and role,
//! and how much each persona likes an attraction category or a food value.

use super::*;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Persona {
    Child,
    Teen,
    Young,
    Adult,
    Elder,
}

pub(super) fn persona(p: &Profile) -> Persona {
    match p.age {
        0..=11 => Persona::Child,
        12..=18 => Persona::Teen,
        19..=32 => Persona::Young,
        33..=59 => Persona::Adult,
        _ => Persona::Elder,
    }
}

/// Whose tastes: the personas, young people split by sex (their attraction tastes differ).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Taste {
    ChildOrTeen,
    YoungFemale,
    YoungMale,
    Adult,
    Elder,
}

impl Taste {
    pub(super) const ALL: [Taste; 5] = [
        Taste::ChildOrTeen,
        Taste::YoungFemale,
        Taste::YoungMale,
        Taste::Adult,
        Taste::Elder,
    ];
    pub(super) fn of(p: &Profile) -> Taste {
        match persona(p) {
            Persona::Child | Persona::Teen => Taste::ChildOrTeen,
            Persona::Young if p.gender == "女" => Taste::YoungFemale,
            Persona::Young => Taste::YoungMale,
            Persona::Adult => Taste::Adult,
            Persona::Elder => Taste::Elder,
        }
    }
}

/// How much a persona likes an attraction category (1 = neutral).
pub(super) fn category_taste(t: Taste, cat: &str) -> f64 {
    let liked: &[&str] = match t {
        Taste::ChildOrTeen => &[
            "游乐园",
            "主题公园",
            "动物园",
            "儿童乐园",
            "海滩",
            "海滨沙滩",
            "漂流",
            "户外拓展",
            "特色街区",
        ],
        Taste::YoungFemale => &[
            "特色街区",
            "古镇",
            "创意园区",
            "博物馆",
            "海滨沙滩",
            "购物相关场所",
            "观景点",
            "人文景观",
            "园林",
        ],
        Taste::YoungMale => &[
            "自然风光",
            "名山大川",
            "名山丘陵",
            "户外拓展",
            "漂流",
            "观景点",
            "特色街区",
            "大峡谷",
            "游乐园",
        ],
        Taste::Adult => &[
            "博物馆",
            "文物古迹",
            "古镇",
            "自然风光",
            "人文景观",
            "园林",
            "湖泊河流",
            "古建筑",
        ],
        Taste::Elder => &[
            "寺庙",
            "名山大川",
            "自然风光",
            "公园",
            "文物古迹",
            "红色景点",
            "湖泊河流",
            "古建筑",
            "纪念馆",
        ],
    };
    let disliked: &[&str] = match t {
        Taste::ChildOrTeen => &["寺庙", "纪念馆", "文物古迹", "古建筑", "烈士陵园", "道观"],
        Taste::YoungFemale | Taste::YoungMale => &["烈士陵园", "寺庙", "道观", "纪念馆"],
        Taste::Adult => &["游乐园", "儿童乐园", "购物相关场所"],
        Taste::Elder => &[
            "游乐园",
            "主题公园",
            "户外拓展",
            "漂流",
            "创意园区",
            "儿童乐园",
            "购物相关场所",
        ],
    };
    if liked.contains(&cat) {
        3.0
    } else if disliked.contains(&cat) {
        0.25
    } else {
        1.0
    }
}

pub(super) fn food_taste(t: Taste, cat: &str) -> f64 {
    let spicy = [
        "川菜",
        "湘菜",
        "重庆火锅",
        "四川火锅",
        "串串香",
        "麻辣烫",
        "贵州菜",
        "钵钵鸡",
    ];
    let young_food = [
        "西式快餐",
        "烤肉",
        "烧烤",
        "日本料理",
        "韩国料理",
        "奶茶/茶饮",
        "咖啡",
        "披萨",
        "小龙虾",
    ];
    match t {
        Taste::Elder if spicy.contains(&cat) => 0.3,
        Taste::Elder if young_food.contains(&cat) => 0.2,
        Taste::ChildOrTeen | Taste::YoungFemale | Taste::YoungMale if young_food.contains(&cat) => {
            2.0
        }
        _ => 1.0,
    }
}
