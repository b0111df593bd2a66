//! Opening messages: 1-3 (at most 4) preference items per member, mostly strong ones, in
//! colloquial Chinese whose tone follows the tier (task_format.md §6): firm for must / budget /
//! intensity, absolute for reject, mild for prefer, soft for avoid. Never a field name.

use super::TaskContext;
use gtb_core::prefs::{ListField, Scalar};
use gtb_core::rng::weighted_index;
use gtb_core::task::{Message, Preference};
use gtb_resources::short_city_name;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

pub const TEMPLATES_VERSION: &str = "messages-v4";

/// A preference item that can be said aloud: a scalar with its figure, or a list value (with the
/// short name of its city for a city field).
#[derive(Debug, Clone, PartialEq)]
pub enum Item<'a> {
    Scalar(Scalar, u32),
    List {
        field: ListField,
        city: &'a str,
        value: &'a str,
    },
}

impl Item<'_> {
    /// Strong items (budget, intensity, must, reject) are said more often.
    pub fn is_strong(&self) -> bool {
        match self {
            Item::Scalar(..) => true,
            Item::List { field, .. } => field.spec().tier.strong(),
        }
    }
}

/// The scalars in the order a member's items list them (the order lines draw from).
const SPOKEN_SCALARS: [Scalar; 3] = [
    Scalar::AvgBudget,
    Scalar::MaxActiveHours,
    Scalar::MaxPoiPerDay,
];

/// Every item of a table: the scalars, then the list values in table order.
pub fn items(p: &Preference) -> Vec<Item<'_>> {
    let g = &p.global_constraints;
    let mut v: Vec<Item> = SPOKEN_SCALARS
        .iter()
        .map(|s| Item::Scalar(*s, s.get(g)))
        .collect();
    // a city's items come together: its short name is found once for them
    let mut last: Option<(&str, &str)> = None;
    for i in p.list_items() {
        let city = match (i.city, last) {
            (None, _) => "",
            (Some(c), Some((full, s))) if full == c => s,
            (Some(c), _) => {
                let s = short_city_name(c);
                last = Some((c, s));
                s
            }
        };
        v.push(Item::List {
            field: i.field,
            city,
            value: i.value,
        });
    }
    v
}

/// How a food value is said: the spoken form and whether one eats it, drinks it, or eats *at* it.
enum FoodWord {
    Eat(String),
    Drink(String),
    Place(String),
}

fn food_word(v: &str) -> FoodWord {
    let spoken = gtb_resources::vocab::spoken_food(v).to_string();
    const DRINKS: [&str; 2] = ["咖啡", "奶茶"];
    const PLACES: [&str; 12] = [
        "馆",
        "餐厅",
        "酒楼",
        "美食街",
        "大排档",
        "自助餐",
        "农家乐",
        "私房菜",
        "茶餐厅",
        "快餐",
        "风味餐厅",
        "餐饮",
    ];
    if DRINKS.contains(&spoken.as_str()) {
        FoodWord::Drink(spoken)
    } else if PLACES.iter().any(|p| spoken.ends_with(p)) {
        FoodWord::Place(spoken)
    } else {
        FoodWord::Eat(spoken)
    }
}

/// A food sentence: `eat`, `drink` and `place` templates use {a} for the city, {b} for the food.
fn food_sentence(
    rng: &mut ChaCha8Rng,
    city: &str,
    value: &str,
    eat: &[&str],
    drink: &[&str],
    place: &[&str],
) -> String {
    let (t, w) = match food_word(value) {
        FoodWord::Eat(w) => (one(rng, eat), w),
        FoodWord::Drink(w) => (one(rng, drink), w),
        FoodWord::Place(w) => (one(rng, place), w),
    };
    t.replace("{a}", city).replace("{b}", &w)
}

fn one<'a>(rng: &mut ChaCha8Rng, xs: &[&'a str]) -> &'a str {
    xs[rng.gen_range(0..xs.len())]
}

/// How an item is worded (task_format.md §6: firm for must, budget and intensity, absolute for
/// reject, mild for prefer, soft for avoid). In a template `{a}` is the figure, the mode or the
/// hotel category of a global item, or the city of a city item, and `{b}` the city item's value.
enum Wording {
    Plain(&'static [&'static str]),
    /// a sight: templates for a name that already says its city (张掖大佛寺 is not "张掖的张掖大佛寺")
    Sight {
        city_in_name: &'static [&'static str],
        other: &'static [&'static str],
    },
    /// a food: one eats it, drinks it, or eats at it
    Food {
        eat: &'static [&'static str],
        drink: &'static [&'static str],
        place: &'static [&'static str],
    },
}

fn scalar_wording(s: Scalar) -> &'static [&'static str] {
    match s {
        Scalar::AvgBudget => &[
            "我这边人均不能超过{a}元。",
            "预算方面我最多花{a}元，这是底线。",
            "我自己最多花{a}元，不能超。",
            "人均{a}元以内是我的底线。",
            "我这边人均不能超过 {a} 元。",
        ],
        Scalar::MaxActiveHours => &[
            "每天活动时间不能超过{a}小时，我体力跟不上。",
            "一天玩{a}个小时就是极限了，不能再多。",
            "咱们每天活动时间必须控制在{a}小时以内。",
        ],
        Scalar::MaxPoiPerDay => &[
            "一天最多逛{a}个景点，不能再多了。",
            "每天景点不能超过{a}个，太赶我受不了。",
        ],
    }
}

/// The wording of each list field, in `ListField` order.
const LIST_WORDING: [Wording; 14] = [
    // transport.must
    Wording::Plain(&[
        "这次一定要坐{a}去。",
        "交通方面必须是{a}，别的我不考虑。",
        "出行我一定要{a}，这个没得商量。",
    ]),
    // transport.prefer
    Wording::Plain(&[
        "交通最好是{a}。",
        "我比较想坐{a}。",
        "路上倾向{a}，方便一点。",
    ]),
    // transport.avoid
    Wording::Plain(&[
        "{a}尽量别安排。",
        "{a}就算了吧，能避开最好。",
        "我不太想坐{a}。",
    ]),
    // transport.reject
    Wording::Plain(&[
        "{a}我是绝对不坐的。",
        "千万别安排{a}，我坚决不坐。",
        "打死我都不坐{a}。",
    ]),
    // hotel.prefer
    Wording::Plain(&[
        "住的话最好是{a}。",
        "酒店我比较倾向{a}。",
        "住宿最好找{a}的。",
    ]),
    // hotel.avoid
    Wording::Plain(&[
        "{a}就算了吧，能避开最好。",
        "住的地方{a}我不太想要。",
        "{a}尽量别订。",
    ]),
    // must_visit
    Wording::Sight {
        city_in_name: &[
            "{b}我非去不可。",
            "{b}是我这次最想去的，一定要去。",
            "{b}必须安排上！",
        ],
        other: &[
            "{a}的{b}我非去不可。",
            "{a}一定要去{b}！",
            "到了{a}，{b}必须安排上。",
            "{b}是我这次最想去的，一定要去。",
        ],
    },
    // reject_visit
    Wording::Sight {
        city_in_name: &["{b}我绝对不去。", "{b}就千万别安排了，我坚决不去。"],
        other: &[
            "{a}的{b}我绝对不去。",
            "{b}就千万别安排了，我坚决不去。",
            "我打死都不去{a}的{b}。",
        ],
    },
    // category.positive
    Wording::Plain(&[
        "在{a}我比较想去{b}这类地方。",
        "{a}的{b}我挺感兴趣的。",
        "{a}最好能安排点{b}。",
    ]),
    // category.negative
    Wording::Plain(&[
        "{a}的{b}就算了。",
        "{b}这类地方我不太想去。",
        "{a}能避开{b}就避开吧。",
    ]),
    // must_eat
    Wording::Food {
        eat: &[
            "{a}的{b}一定要吃！",
            "到{a}必须吃{b}。",
            "{a}那边的{b}我非吃不可。",
        ],
        drink: &["到{a}一定要喝{b}！", "{a}的{b}我必须喝上。"],
        place: &["在{a}一定要去{b}吃一顿。", "到{a}必须安排一次{b}。"],
    },
    // prefer_eat
    Wording::Food {
        eat: &[
            "{a}最好能吃{b}。",
            "{b}我挺感兴趣的，在{a}比较想尝尝。",
            "在{a}倾向吃{b}。",
        ],
        drink: &["在{a}最好能喝杯{b}。", "{b}我比较想喝。"],
        place: &["在{a}最好能去{b}吃。", "{a}的{b}我挺感兴趣的。"],
    },
    // avoid_eat
    Wording::Food {
        eat: &["{b}能避开就避开。", "在{a}我不太想吃{b}。", "{b}就算了吧。"],
        drink: &["{b}就算了吧，我不太想喝。"],
        place: &["{b}就算了吧。", "在{a}尽量别去{b}。"],
    },
    // reject_eat
    Wording::Food {
        eat: &[
            "{b}我绝对不吃。",
            "{a}的{b}千万别给我安排。",
            "我坚决不吃{b}。",
        ],
        drink: &["{b}我是绝对不喝的。"],
        place: &["{b}我坚决不去。", "千万别安排{b}，我绝对不去。"],
    },
];

fn fill(template: &str, a: &str, b: &str) -> String {
    template.replace("{a}", a).replace("{b}", b)
}

/// One sentence for an item, with a randomly chosen phrasing.
pub fn sentence(item: &Item, rng: &mut ChaCha8Rng) -> String {
    match item {
        Item::Scalar(s, n) => fill(one(rng, scalar_wording(*s)), &n.to_string(), ""),
        Item::List { field, city, value } => match &LIST_WORDING[*field as usize] {
            Wording::Plain(ts) if field.spec().per_city => fill(one(rng, ts), city, value),
            Wording::Plain(ts) => fill(one(rng, ts), value, ""),
            Wording::Sight {
                city_in_name,
                other,
            } => {
                let ts = if value.contains(city) {
                    city_in_name
                } else {
                    other
                };
                fill(one(rng, ts), city, value)
            }
            Wording::Food { eat, drink, place } => {
                food_sentence(rng, city, value, eat, drink, place)
            }
        },
    }
}

fn is_intensity(i: &Item) -> bool {
    matches!(
        i,
        Item::Scalar(Scalar::MaxActiveHours | Scalar::MaxPoiPerDay, _)
    )
}

/// The opening message of one member.
pub fn opening_message(
    _ctx: &TaskContext,
    user: &str,
    p: &Preference,
    rng: &mut ChaCha8Rng,
) -> Message {
    let all = items(p);
    let k = 1 + weighted_index(rng, &[0.12, 0.5, 0.33, 0.05]).unwrap_or(1);
    let mut w: Vec<f64> = all
        .iter()
        .map(|i| match i {
            Item::Scalar(Scalar::MaxPoiPerDay, _) => 0.6,
            Item::Scalar(Scalar::AvgBudget, _) => 5.0,
            i if i.is_strong() => 3.0,
            _ => 0.7,
        })
        .collect();
    let mut chosen = Vec::new();
    while chosen.len() < k.min(all.len()) {
        let Some(i) = weighted_index(rng, &w) else {
            break;
        };
        chosen.push(i);
        w[i] = 0.0;
        // one intensity figure per message is enough
        if is_intensity(&all[i]) {
            for (j, it) in all.iter().enumerate() {
                if is_intensity(it) {
                    w[j] = 0.0;
                }
            }
        }
    }
    chosen.sort();
    let content: String = chosen.iter().map(|&i| sentence(&all[i], rng)).collect();
    Message {
        role: user.to_string(),
        content,
    }
}
