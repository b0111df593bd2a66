//! Opening messages: 1-3 (at most 4) preference items per member, mostly strong ones, in
//! colloquial Chinese whose tone follows the tier (task_format.md §6): firm for must / budget /
//! intensity, absolute for reject, mild for prefer, soft for avoid. Never a field name.

use super::TaskContext;
use gtb_core::rng::weighted_index;
use gtb_core::task::{Message, Preference};
use gtb_resources::short_city_name;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

pub const TEMPLATES_VERSION: &str = "messages-v4";

/// A preference item that can be said aloud.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Budget(u32),
    Hours(u32),
    PoiPerDay(u32),
    MustMode(String),
    PreferMode(String),
    AvoidMode(String),
    RejectMode(String),
    HotelPrefer(String),
    HotelAvoid(String),
    MustVisit(String, String),
    RejectVisit(String, String),
    CategoryPositive(String, String),
    CategoryNegative(String, String),
    MustEat(String, String),
    PreferEat(String, String),
    AvoidEat(String, String),
    RejectEat(String, String),
}

impl Item {
    /// Strong items (must, reject, budget, intensity) are said more often.
    pub fn is_strong(&self) -> bool {
        matches!(
            self,
            Item::Budget(_)
                | Item::Hours(_)
                | Item::PoiPerDay(_)
                | Item::MustMode(_)
                | Item::RejectMode(_)
                | Item::MustVisit(..)
                | Item::RejectVisit(..)
                | Item::MustEat(..)
                | Item::RejectEat(..)
        )
    }
}

/// Every item of a table, in table order.
pub fn items(p: &Preference) -> Vec<Item> {
    let g = &p.global_constraints;
    let mut v = vec![
        Item::Budget(g.avg_budget),
        Item::Hours(g.intensity.max_active_hours),
        Item::PoiPerDay(g.intensity.max_poi_per_day),
    ];
    v.extend(g.transport.must.iter().map(|m| Item::MustMode(m.clone())));
    v.extend(
        g.transport
            .prefer
            .iter()
            .map(|m| Item::PreferMode(m.clone())),
    );
    v.extend(g.transport.avoid.iter().map(|m| Item::AvoidMode(m.clone())));
    v.extend(
        g.transport
            .reject
            .iter()
            .map(|m| Item::RejectMode(m.clone())),
    );
    v.extend(
        g.hotel_preference
            .prefer
            .iter()
            .map(|m| Item::HotelPrefer(m.clone())),
    );
    v.extend(
        g.hotel_preference
            .avoid
            .iter()
            .map(|m| Item::HotelAvoid(m.clone())),
    );
    for (city, c) in &p.city_specific_preferences {
        let s = short_city_name(city).to_string();
        v.extend(
            c.attractions
                .must_visit
                .iter()
                .map(|x| Item::MustVisit(s.clone(), x.clone())),
        );
        v.extend(
            c.attractions
                .reject_visit
                .iter()
                .map(|x| Item::RejectVisit(s.clone(), x.clone())),
        );
        v.extend(
            c.attractions
                .category_pref
                .positive
                .iter()
                .map(|x| Item::CategoryPositive(s.clone(), x.clone())),
        );
        v.extend(
            c.attractions
                .category_pref
                .negative
                .iter()
                .map(|x| Item::CategoryNegative(s.clone(), x.clone())),
        );
        v.extend(
            c.food
                .must_eat
                .iter()
                .map(|x| Item::MustEat(s.clone(), x.clone())),
        );
        v.extend(
            c.food
                .prefer_eat
                .iter()
                .map(|x| Item::PreferEat(s.clone(), x.clone())),
        );
        v.extend(
            c.food
                .avoid_eat
                .iter()
                .map(|x| Item::AvoidEat(s.clone(), x.clone())),
        );
        v.extend(
            c.food
                .reject_eat
                .iter()
                .map(|x| Item::RejectEat(s.clone(), x.clone())),
        );
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
    // 奶茶/茶饮 -> 奶茶, 西餐厅(综合风味) -> 西餐厅
    let spoken = v
        .split('/')
        .next()
        .unwrap_or(v)
        .split('(')
        .next()
        .unwrap_or(v)
        .to_string();
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

/// One sentence for an item, with a randomly chosen phrasing.
pub fn sentence(item: &Item, rng: &mut ChaCha8Rng) -> String {
    let f = |t: &str, a: &str, b: &str| t.replace("{a}", a).replace("{b}", b);
    match item {
        Item::Budget(b) => {
            let b = b.to_string();
            f(
                one(
                    rng,
                    &[
                        "我这边人均不能超过{a}元。",
                        "预算方面我最多花{a}元，这是底线。",
                        "我自己最多花{a}元，不能超。",
                        "人均{a}元以内是我的底线。",
                        "我这边人均不能超过 {a} 元。",
                    ],
                ),
                &b,
                "",
            )
        }
        Item::Hours(h) => f(
            one(
                rng,
                &[
                    "每天活动时间不能超过{a}小时，我体力跟不上。",
                    "一天玩{a}个小时就是极限了，不能再多。",
                    "咱们每天活动时间必须控制在{a}小时以内。",
                ],
            ),
            &h.to_string(),
            "",
        ),
        Item::PoiPerDay(p) => f(
            one(
                rng,
                &[
                    "一天最多逛{a}个景点，不能再多了。",
                    "每天景点不能超过{a}个，太赶我受不了。",
                ],
            ),
            &p.to_string(),
            "",
        ),
        Item::MustMode(m) => f(
            one(
                rng,
                &[
                    "这次一定要坐{a}去。",
                    "交通方面必须是{a}，别的我不考虑。",
                    "出行我一定要{a}，这个没得商量。",
                ],
            ),
            m,
            "",
        ),
        Item::PreferMode(m) => f(
            one(
                rng,
                &[
                    "交通最好是{a}。",
                    "我比较想坐{a}。",
                    "路上倾向{a}，方便一点。",
                ],
            ),
            m,
            "",
        ),
        Item::AvoidMode(m) => f(
            one(
                rng,
                &[
                    "{a}尽量别安排。",
                    "{a}就算了吧，能避开最好。",
                    "我不太想坐{a}。",
                ],
            ),
            m,
            "",
        ),
        Item::RejectMode(m) => f(
            one(
                rng,
                &[
                    "{a}我是绝对不坐的。",
                    "千万别安排{a}，我坚决不坐。",
                    "打死我都不坐{a}。",
                ],
            ),
            m,
            "",
        ),
        Item::HotelPrefer(h) => f(
            one(
                rng,
                &[
                    "住的话最好是{a}。",
                    "酒店我比较倾向{a}。",
                    "住宿最好找{a}的。",
                ],
            ),
            h,
            "",
        ),
        Item::HotelAvoid(h) => f(
            one(
                rng,
                &[
                    "{a}就算了吧，能避开最好。",
                    "住的地方{a}我不太想要。",
                    "{a}尽量别订。",
                ],
            ),
            h,
            "",
        ),
        // a name that already says its city (张掖大佛寺) is not prefixed with it again
        Item::MustVisit(c, x) if x.contains(c.as_str()) => f(
            one(
                rng,
                &[
                    "{b}我非去不可。",
                    "{b}是我这次最想去的，一定要去。",
                    "{b}必须安排上！",
                ],
            ),
            c,
            x,
        ),
        Item::MustVisit(c, x) => f(
            one(
                rng,
                &[
                    "{a}的{b}我非去不可。",
                    "{a}一定要去{b}！",
                    "到了{a}，{b}必须安排上。",
                    "{b}是我这次最想去的，一定要去。",
                ],
            ),
            c,
            x,
        ),
        Item::RejectVisit(c, x) if x.contains(c.as_str()) => f(
            one(rng, &["{b}我绝对不去。", "{b}就千万别安排了，我坚决不去。"]),
            c,
            x,
        ),
        Item::RejectVisit(c, x) => f(
            one(
                rng,
                &[
                    "{a}的{b}我绝对不去。",
                    "{b}就千万别安排了，我坚决不去。",
                    "我打死都不去{a}的{b}。",
                ],
            ),
            c,
            x,
        ),
        Item::CategoryPositive(c, x) => f(
            one(
                rng,
                &[
                    "在{a}我比较想去{b}这类地方。",
                    "{a}的{b}我挺感兴趣的。",
                    "{a}最好能安排点{b}。",
                ],
            ),
            c,
            x,
        ),
        Item::CategoryNegative(c, x) => f(
            one(
                rng,
                &[
                    "{a}的{b}就算了。",
                    "{b}这类地方我不太想去。",
                    "{a}能避开{b}就避开吧。",
                ],
            ),
            c,
            x,
        ),
        Item::MustEat(c, x) => food_sentence(
            rng,
            c,
            x,
            &[
                "{a}的{b}一定要吃！",
                "到{a}必须吃{b}。",
                "{a}那边的{b}我非吃不可。",
            ],
            &["到{a}一定要喝{b}！", "{a}的{b}我必须喝上。"],
            &["在{a}一定要去{b}吃一顿。", "到{a}必须安排一次{b}。"],
        ),
        Item::PreferEat(c, x) => food_sentence(
            rng,
            c,
            x,
            &[
                "{a}最好能吃{b}。",
                "{b}我挺感兴趣的，在{a}比较想尝尝。",
                "在{a}倾向吃{b}。",
            ],
            &["在{a}最好能喝杯{b}。", "{b}我比较想喝。"],
            &["在{a}最好能去{b}吃。", "{a}的{b}我挺感兴趣的。"],
        ),
        Item::AvoidEat(c, x) => food_sentence(
            rng,
            c,
            x,
            &["{b}能避开就避开。", "在{a}我不太想吃{b}。", "{b}就算了吧。"],
            &["{b}就算了吧，我不太想喝。"],
            &["{b}就算了吧。", "在{a}尽量别去{b}。"],
        ),
        Item::RejectEat(c, x) => food_sentence(
            rng,
            c,
            x,
            &[
                "{b}我绝对不吃。",
                "{a}的{b}千万别给我安排。",
                "我坚决不吃{b}。",
            ],
            &["{b}我是绝对不喝的。"],
            &["{b}我坚决不去。", "千万别安排{b}，我绝对不去。"],
        ),
    }
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
            Item::PoiPerDay(_) => 0.6,
            Item::Budget(_) => 5.0,
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
        if matches!(all[i], Item::Hours(_) | Item::PoiPerDay(_)) {
            for (j, it) in all.iter().enumerate() {
                if matches!(it, Item::Hours(_) | Item::PoiPerDay(_)) {
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
