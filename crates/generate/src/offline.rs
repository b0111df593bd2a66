//! The offline grounded generator: a rule-based synthesizer over the real inventory.
//!
//! Per member it derives a budget from the route's fares, hotel prices and meals; transport
//! buckets from the modes served on the route; intensity from age and the group's pace; hotel
//! categories that exist in the cities; and per city must/reject sights and food drawn from the
//! city's inventory by popularity and the member's taste. The four strategies share globals and
//! weak city fields as the release does, and must/reject clashes between members are injected
//! at the configured rates (and scrubbed elsewhere), so conflict shares are tunable.

use super::{GenError, Generated, PreferenceGenerator, TaskContext, messages};
use gtb_core::config::{Conflicts, RELEASE_BUDGET_RANGE};
use gtb_core::rng::item_rng;
use gtb_core::rng::weighted_index;
use gtb_core::task::{
    AttractionPref, Buckets, CategoryPref, CityPref, FoodPref, GlobalConstraints, HotelPreference,
    Intensity, Preference,
};
use gtb_resources::archetypes::Pace;
use gtb_resources::{CityId, FoodKind, Profile, Resources, Strategy, parents, vocab};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

mod group;
use group::{fit_budgets, inject_conflicts};

pub struct OfflineGenerator<'r> {
    pub conflicts: Conflicts,
    /// the resources `stock` was computed from
    res: &'r Resources,
    stock: Stock,
}

impl<'r> OfflineGenerator<'r> {
    pub fn new(conflicts: Conflicts, res: &'r Resources) -> Self {
        OfflineGenerator {
            conflicts,
            res,
            stock: Stock::new(res),
        }
    }
}

/// Bumped whenever the rules change output; part of the generate stage fingerprint.
pub const OFFLINE_RULES_VERSION: &str = "offline-rules-v6";

impl PreferenceGenerator for OfflineGenerator<'_> {
    fn name(&self) -> &str {
        "offline"
    }
    fn version(&self) -> String {
        format!("{OFFLINE_RULES_VERSION}+{}", messages::TEMPLATES_VERSION)
    }
    fn generate(
        &self,
        ctx: &TaskContext,
        attempt: u32,
        _feedback: Option<&str>,
    ) -> Result<Generated, GenError> {
        // a context over other resources than the generator's gets a stock of its own
        let own;
        let stock = if std::ptr::eq(self.res, ctx.res) {
            &self.stock
        } else {
            own = Stock::new(ctx.res);
            &own
        };
        let mut rng = item_rng(
            ctx.seed,
            "generate",
            &format!("{}#{attempt}", ctx.skeleton.task_id),
        );
        let trip = Trip::new(ctx, stock);
        let mut tables = build_tables(&trip, &mut rng);
        inject_conflicts(&trip, &self.conflicts, &mut tables, &mut rng);
        fit_budgets(ctx, &mut tables, &mut rng);
        let messages = tables
            .iter()
            .map(|(u, p)| messages::opening_message(ctx, u, p, &mut rng))
            .collect();
        Ok(Generated { tables, messages })
    }
}

/// Draw up to `k` indices by weight; after each draw `d`, `d` and every index of `excluded(d)`
/// are out of the running.
fn draw_indices<'a>(
    rng: &mut ChaCha8Rng,
    weights: &[f64],
    k: usize,
    excluded: impl Fn(usize) -> &'a [u32],
) -> Vec<usize> {
    let mut w = weights.to_vec();
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let Some(i) = weighted_index(rng, &w) else {
            break;
        };
        w[i] = 0.0;
        for &j in excluded(i) {
            w[j as usize] = 0.0;
        }
        out.push(i);
    }
    out
}

/// Draw `k` distinct items by weight.
fn pick_distinct<T: Clone>(rng: &mut ChaCha8Rng, items: &[T], weights: &[f64], k: usize) -> Vec<T> {
    pick_indices(rng, weights, k)
        .into_iter()
        .map(|i| items[i].clone())
        .collect()
}

/// Draw `k` sights of a city by weight, never two that are one place (an area and a part of
/// it: `parents::related`); siblings inside one area may both be drawn.
fn pick_places(rng: &mut ChaCha8Rng, city: &CityStock, weights: &[f64], k: usize) -> Vec<usize> {
    draw_indices(rng, weights, k, |i| &city.relatives[i])
}

/// Draw up to `k` distinct indices by weight.
fn pick_indices(rng: &mut ChaCha8Rng, weights: &[f64], k: usize) -> Vec<usize> {
    draw_indices(rng, weights, k, |_| &[])
}

/// Draw a list length from a distribution over 0..
fn count(rng: &mut ChaCha8Rng, probs: &[f64]) -> usize {
    weighted_index(rng, probs).unwrap_or(0)
}

#[derive(Clone, Copy, PartialEq)]
enum Persona {
    Child,
    Teen,
    Young,
    Adult,
    Elder,
}

fn persona(p: &Profile) -> Persona {
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
enum Taste {
    ChildOrTeen,
    YoungFemale,
    YoungMale,
    Adult,
    Elder,
}

impl Taste {
    const ALL: [Taste; 5] = [
        Taste::ChildOrTeen,
        Taste::YoungFemale,
        Taste::YoungMale,
        Taste::Adult,
        Taste::Elder,
    ];
    fn of(p: &Profile) -> Taste {
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
fn category_taste(t: Taste, cat: &str) -> f64 {
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

fn food_taste(t: Taste, cat: &str) -> f64 {
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

/// One city's inventory as the rules read it, computed once for the whole run: attraction
/// categories interned, popularity weights and every taste evaluated per category and food
/// value, so that drawing a member's preferences compares ids, not strings.
struct CityStock {
    /// distinct attraction categories, in order of first appearance
    cats: Vec<String>,
    /// per attraction: index into `cats`, (popularity/100)^1.5 and popularity/100
    att_cat: Vec<usize>,
    att_pop15: Vec<f64>,
    att_pop: Vec<f64>,
    /// per attraction: the others that are one place with it (`parents::relatives`)
    relatives: Vec<Vec<u32>>,
    /// per `Taste`, per category
    cat_taste: Vec<Vec<f64>>,
    /// food values (category or dish) with their base weights, see [`food_values`]
    food: Vec<(String, f64)>,
    /// per food value: whether a named restaurant of the city serves it as the release scores
    /// a must_eat (its resolved category is the value, or its name contains it)
    servable: Vec<bool>,
    /// per `Taste`, per food value
    food_taste: Vec<Vec<f64>>,
    /// per food value: the city's most popular restaurants of that category (store builds,
    /// `[store] named_restaurants` > 0; empty otherwise)
    restaurants: Vec<Vec<String>>,
    /// the share of must_eat / prefer_eat values that name one of them
    named_share: f64,
}

/// [`CityStock`] of every city, indexed by `CityId`.
struct Stock {
    cities: Vec<CityStock>,
}

impl Stock {
    fn new(res: &Resources) -> Stock {
        let cities = (0..res.cities.len())
            .map(|c| {
                let atts = &res.attractions[c];
                let mut cats: Vec<String> = Vec::new();
                let att_cat = atts
                    .iter()
                    .map(|a| match cats.iter().position(|x| *x == a.category) {
                        Some(i) => i,
                        None => {
                            cats.push(a.category.clone());
                            cats.len() - 1
                        }
                    })
                    .collect();
                let food = food_values(res, c as CityId);
                let named = named_restaurants(res, c as CityId);
                CityStock {
                    att_cat,
                    att_pop15: atts
                        .iter()
                        .map(|a| (a.popularity as f64 / 100.0).powf(1.5))
                        .collect(),
                    att_pop: atts.iter().map(|a| a.popularity as f64 / 100.0).collect(),
                    relatives: parents::relatives(atts),
                    cat_taste: Taste::ALL
                        .iter()
                        .map(|&t| cats.iter().map(|c| category_taste(t, c)).collect())
                        .collect(),
                    food_taste: Taste::ALL
                        .iter()
                        .map(|&t| food.iter().map(|(v, _)| food_taste(t, v)).collect())
                        .collect(),
                    restaurants: restaurants_by_value(res, c as CityId, &food),
                    servable: servable(&named, &food),
                    named_share: res.named_restaurants,
                    cats,
                    food,
                }
            })
            .collect();
        Stock { cities }
    }
}

/// One task's view of the stock: its cities, and which of their attractions are open on some
/// day of the trip (evaluated once per task, not once per member).
struct Trip<'a> {
    ctx: &'a TaskContext<'a>,
    /// per task city (in `ctx.cities` order)
    stock: Vec<&'a CityStock>,
    open: Vec<Vec<bool>>,
}

impl<'a> Trip<'a> {
    fn new(ctx: &'a TaskContext<'a>, stock: &'a Stock) -> Trip<'a> {
        Trip {
            ctx,
            stock: ctx
                .cities
                .iter()
                .map(|&c| &stock.cities[c as usize])
                .collect(),
            open: ctx
                .cities
                .iter()
                .map(|&c| {
                    ctx.res.attractions[c as usize]
                        .iter()
                        .map(|a| ctx.open_during_trip(a))
                        .collect()
                })
                .collect(),
        }
    }
}

/// Global constraints of one social unit (a root member and those who copy it). The draws
/// come in a fixed order (transport, intensity, spending level, hotel, budget): the bytes of
/// every build depend on it.
fn globals(ctx: &TaskContext, root: &Profile, rng: &mut ChaCha8Rng) -> GlobalConstraints {
    let a = ctx.archetype;
    let elder = persona(root) == Persona::Elder;
    let pace = if elder { Pace::Relaxed } else { a.pace };
    let transport = transport_wishes(ctx, elder, rng);
    let intensity = intensity(pace, rng);
    let level = a.spend * rng.gen_range(0.75..1.35) * if elder { 0.85 } else { 1.0 };
    let hotel_preference = hotel_wishes(ctx, level, elder, rng);
    let meals = match persona(root) {
        Persona::Elder => 110.0,
        _ => 150.0,
    } * level;
    GlobalConstraints {
        avg_budget: budget(ctx, &transport, &hotel_preference, meals, rng),
        transport,
        intensity,
        hotel_preference,
    }
}

/// How much a member likes a mode, by the first leg's length, the group's spending and age:
/// flights for long legs, high-speed rail up to 1,500 km, slow trains for thrifty groups,
/// driving for short legs (not for elders).
fn mode_weight(m: &str, first_leg_km: f64, spend: f64, elder: bool) -> f64 {
    match m {
        "飞机" if first_leg_km > 1200.0 => 4.0,
        "飞机" if first_leg_km > 600.0 => 1.5,
        "飞机" => 0.3,
        "高铁" if first_leg_km < 1500.0 => 3.0,
        "高铁" => 1.0,
        "火车" if spend < 0.9 => 1.5,
        "火车" => 0.3,
        _ if first_leg_km < 500.0 && !elder => 1.5,
        _ => 0.15,
    }
}

/// A unit's transport buckets: must and prefer among the modes that serve every leg, avoid
/// and (rarely) reject among the rest.
fn transport_wishes(ctx: &TaskContext, elder: bool, rng: &mut ChaCha8Rng) -> Buckets {
    let res = ctx.res;
    let all_legs = res.modes_on_all_legs(ctx.hub, &ctx.cities);
    let first_leg_km = res
        .transport(ctx.hub, ctx.cities[0])
        .first()
        .map(|o| o.distance_km)
        .unwrap_or(1000) as f64;
    let weight = |m: &str| mode_weight(m, first_leg_km, ctx.archetype.spend, elder);
    // an uninformed wish now and then: a mode that does not serve the whole route (caught by
    // the reachability check, which makes the member compromisable)
    let wish_pool: Vec<&str> = if rng.gen_bool(0.04) {
        vocab::TRANSPORT_MODES.to_vec()
    } else {
        all_legs.clone()
    };
    let w: Vec<f64> = wish_pool.iter().map(|m| weight(m)).collect();
    let n_must = count(rng, &[0.3, 0.6, 0.1]).min(wish_pool.len());
    let must = pick_distinct(rng, &wish_pool, &w, n_must);
    let rest: Vec<&str> = all_legs
        .iter()
        .copied()
        .filter(|m| !must.contains(m))
        .collect();
    let n_pref = count(rng, &[0.35, 0.5, 0.15]).min(rest.len());
    let w: Vec<f64> = rest.iter().map(|m| weight(m)).collect();
    let prefer = pick_distinct(rng, &rest, &w, n_pref);
    let unused: Vec<&str> = vocab::TRANSPORT_MODES
        .iter()
        .copied()
        .filter(|m| !must.contains(m) && !prefer.contains(m))
        .collect();
    let w: Vec<f64> = unused.iter().map(|m| 1.0 / weight(m)).collect();
    let k = usize::from(rng.gen_bool(0.8));
    let avoid = pick_distinct(rng, &unused, &w, k);
    // nobody flatly rejects the only mode that serves a leg of their own trip
    let legs = res.route_legs(ctx.hub, &ctx.cities);
    let essential = |m: &str| {
        legs.iter().any(|&(x, y)| {
            let o = res.transport(x, y);
            o.len() == 1 && o[0].mode == m
        })
    };
    let unused: Vec<&str> = unused
        .into_iter()
        .filter(|m| !avoid.contains(m) && !essential(m))
        .collect();
    let w: Vec<f64> = unused.iter().map(|m| 1.0 / weight(m)).collect();
    let k = usize::from(rng.gen_bool(0.07));
    let reject = pick_distinct(rng, &unused, &w, k);
    let to_s = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
    Buckets {
        must: to_s(must),
        prefer: to_s(prefer),
        avoid: to_s(avoid),
        reject: to_s(reject),
    }
}

/// Attractions a day and active hours, drawn from the pace's weights.
fn intensity(pace: Pace, rng: &mut ChaCha8Rng) -> Intensity {
    type Weights = &'static [(u32, f64)];
    let (poi, hours): (Weights, Weights) = match pace {
        Pace::Relaxed => (
            &[(2, 0.55), (3, 0.4), (4, 0.05)],
            &[(6, 0.4), (7, 0.4), (8, 0.2)],
        ),
        Pace::Normal => (
            &[(2, 0.1), (3, 0.7), (4, 0.2)],
            &[(7, 0.15), (8, 0.6), (9, 0.2), (10, 0.05)],
        ),
        Pace::Active => (&[(3, 0.5), (4, 0.5)], &[(8, 0.3), (9, 0.4), (10, 0.3)]),
    };
    let pick = |rng: &mut ChaCha8Rng, t: &[(u32, f64)]| {
        t[weighted_index(rng, &t.iter().map(|x| x.1).collect::<Vec<_>>()).unwrap_or(0)].0
    };
    Intensity {
        max_poi_per_day: pick(rng, poi),
        max_active_hours: pick(rng, hours),
    }
}

const UPSCALE_HOTELS: [&str; 3] = ["高档型", "豪华型", "度假酒店"];
const CHEAP_HOTELS: [&str; 3] = ["经济型", "快捷酒店", "旅馆"];

/// How much a unit at spending `level` likes a hotel category: upscale ones with the level,
/// cheap ones against it; families like comfort, young friends like B&Bs and themed hotels.
fn hotel_weight(ctx: &TaskContext, c: &str, level: f64, elder: bool) -> f64 {
    let a = ctx.archetype;
    let young = a.group_tags.iter().any(|t| t == "宿舍" || t == "朋友") && !elder;
    let mut w = if UPSCALE_HOTELS.contains(&c) {
        2.0 * level * level
    } else if CHEAP_HOTELS.contains(&c) {
        1.6 / level
    } else {
        1.0
    };
    if a.is_family() && ["舒适型", "公寓式酒店", "度假酒店"].contains(&c) {
        w *= 2.0;
    }
    if young && ["民宿", "电竞酒店", "主题酒店", "客栈"].contains(&c) {
        w *= 2.0;
    }
    w
}

/// 1–3 preferred categories among those the trip's cities have, and usually one to avoid:
/// the cheap end for a unit that prefers upscale, luxury for one that does not.
fn hotel_wishes(
    ctx: &TaskContext,
    level: f64,
    elder: bool,
    rng: &mut ChaCha8Rng,
) -> HotelPreference {
    let mut cats: Vec<&str> = Vec::new();
    for &c in &ctx.cities {
        for h in &ctx.res.hotels[c as usize] {
            if !cats.contains(&h.category.as_str()) {
                cats.push(&h.category);
            }
        }
    }
    cats.sort_by_key(|c| vocab::HOTEL_CATEGORIES.iter().position(|x| x == c));
    if cats.is_empty() {
        cats = vocab::HOTEL_CATEGORIES.to_vec();
    }
    let w: Vec<f64> = cats
        .iter()
        .map(|c| hotel_weight(ctx, c, level, elder))
        .collect();
    let n_pref = (1 + count(rng, &[0.3, 0.45, 0.25])).min(cats.len());
    let prefer = pick_distinct(rng, &cats, &w, n_pref);
    let others: Vec<&str> = vocab::HOTEL_CATEGORIES
        .iter()
        .copied()
        .filter(|c| !prefer.contains(c))
        .collect();
    let upscale_pref = prefer.iter().any(|c| UPSCALE_HOTELS.contains(c));
    let w: Vec<f64> = others
        .iter()
        .map(|c| {
            if upscale_pref && (CHEAP_HOTELS.contains(c) || *c == "民宿") {
                3.0
            } else if !upscale_pref && *c == "豪华型" {
                6.0
            } else {
                0.4
            }
        })
        .collect();
    let k = usize::from(rng.gen_bool(0.93));
    let avoid = pick_distinct(rng, &others, &w, k);
    HotelPreference {
        prefer: prefer.into_iter().map(String::from).collect(),
        avoid: avoid.into_iter().map(String::from).collect(),
    }
}

/// The unit's budget per person: the wanted (else cheapest) fare of every leg, half a night
/// at the preferred hotels' mid price, and the day's meals, times [`budget_factor`], in
/// hundreds within the release's range ([`in_budget_range`]).
fn budget(
    ctx: &TaskContext,
    transport: &Buckets,
    hotel: &HotelPreference,
    meals: f64,
    rng: &mut ChaCha8Rng,
) -> u32 {
    let res = ctx.res;
    let days = ctx.skeleton.days;
    let fare_of = |a: CityId, b: CityId| -> u32 {
        let opts = res.transport(a, b);
        let wanted = transport
            .must
            .iter()
            .chain(transport.prefer.iter())
            .filter_map(|m| opts.iter().find(|o| o.mode == m.as_str()).map(|o| o.fare))
            .max();
        wanted
            .or_else(|| opts.iter().map(|o| o.fare).min())
            .unwrap_or(300)
    };
    let legs = res.route_legs(ctx.hub, &ctx.cities);
    let transport_cost: u32 = legs.iter().map(|&(a, b)| fare_of(a, b)).sum();
    let (mut sum, mut k) = (0.0, 0.0);
    for &c in &ctx.cities {
        for h in &res.hotels[c as usize] {
            if hotel.prefer.contains(&h.category) {
                sum += (h.price_low + h.price_high) as f64 / 2.0;
                k += 1.0;
            }
        }
    }
    let nightly = if k > 0.0 { sum / k } else { 300.0 };
    let raw = transport_cost as f64 + nightly / 2.0 * (days - 1) as f64 + meals * days as f64;
    in_budget_range((raw * budget_factor(rng) / 100.0).round() as u32 * 100)
}

/// How much above (or below) the modelled trip a unit budgets: 0.83 + 1.22·u^3.5 for a uniform
/// u (one draw), so most units plan close to the trip's cost and a long tail spends up to
/// twice it. Fitted (issue 27) so that, after `fit_budgets` lifts the firm members who could
/// not afford the cheapest trip, the split's budgets reproduce the paper's (mean 3,265,
/// median 3,000 CNY per person) on the default split and on other seeds.
fn budget_factor(rng: &mut ChaCha8Rng) -> f64 {
    const LOW: f64 = 0.83;
    const HIGH: f64 = 2.05;
    const SKEW: f64 = 3.5;
    LOW + (HIGH - LOW) * rng.gen_range(0.0..1.0f64).powf(SKEW)
}

/// A budget in hundreds inside the release's range ([`RELEASE_BUDGET_RANGE`]): 600 at the
/// least, 10,500 at the most.
fn in_budget_range(budget: u32) -> u32 {
    let [low, high] = RELEASE_BUDGET_RANGE;
    budget.clamp(low.div_ceil(100) * 100, high / 100 * 100)
}

/// Category preferences for one city (weak fields, shared by copy_minor).
fn category_pref(city: &CityStock, t: Taste, rng: &mut ChaCha8Rng) -> CategoryPref {
    let taste = &city.cat_taste[t as usize];
    let positive = {
        let k = count(rng, &[0.15, 0.45, 0.4]);
        pick_indices(rng, taste, k)
    };
    let rest: Vec<usize> = (0..city.cats.len())
        .filter(|c| !positive.contains(c))
        .collect();
    let w: Vec<f64> = rest.iter().map(|&c| 1.0 / taste[c]).collect();
    let negative = {
        let k = usize::from(rng.gen_bool(0.75));
        pick_distinct(rng, &rest, &w, k)
    };
    let names = |v: Vec<usize>| v.into_iter().map(|c| city.cats[c].clone()).collect();
    CategoryPref {
        positive: names(positive),
        negative: names(negative),
    }
}

/// Food values of a city: (value, weight base). Categories of its entries and its local dishes;
/// restaurant names are never used as preference values (the release matches categories), and
/// a restaurant known from general knowledge only grounds none (`Food::grounds_values`).
fn food_values(res: &Resources, city: CityId) -> Vec<(String, f64)> {
    // a store lists hundreds of restaurants: a category counts at most this many of them, as
    // many as the snapshot ever lists for one (its weights are unchanged by the cap)
    const RESTAURANTS_PER_VALUE: usize = 4;
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut restaurants: Vec<(&str, usize)> = Vec::new();
    for f in res.food[city as usize]
        .iter()
        .filter(|f| f.grounds_values())
    {
        if f.kind == FoodKind::Restaurant {
            match restaurants.iter_mut().find(|(c, _)| *c == f.category) {
                Some((_, n)) if *n >= RESTAURANTS_PER_VALUE => continue,
                Some((_, n)) => *n += 1,
                None => restaurants.push((&f.category, 1)),
            }
        }
        let (v, w) = match f.kind {
            FoodKind::Dish => (&f.name, 2.5),
            FoodKind::Cuisine => (&f.category, 1.5),
            FoodKind::Restaurant => (&f.category, 1.0),
        };
        if vocab::EXCLUDED_FOOD_CATEGORIES.contains(&v.as_str()) {
            continue;
        }
        match out.iter_mut().find(|(x, _)| x == v) {
            Some(e) => e.1 += w * 0.5,
            None => out.push((v.clone(), w)),
        }
    }
    out
}

/// The named restaurants of a city that ground a must_eat, as the scorer reads them: (name,
/// resolved category). A restaurant known from general knowledge only grounds none.
fn named_restaurants(res: &Resources, city: CityId) -> Vec<(String, String)> {
    res.food[city as usize]
        .iter()
        .filter(|f| f.kind == FoodKind::Restaurant && f.grounds_values())
        .map(|f| {
            let category = vocab::resolved_category(&f.category, vocab::PoiKind::Food);
            (f.name.clone(), category.to_string())
        })
        .collect()
}

/// Per food value: whether a named restaurant of the city serves it (see `CityStock`).
fn servable(named: &[(String, String)], food: &[(String, f64)]) -> Vec<bool> {
    food.iter()
        .map(|(v, _)| {
            named
                .iter()
                .any(|(name, category)| category == v || name.contains(v.as_str()))
        })
        .collect()
}

/// Restaurants a member may name for each food value: up to 12 of the city's restaurants of
/// that category, in the store's popularity order. Only store builds name restaurants.
fn restaurants_by_value(res: &Resources, city: CityId, food: &[(String, f64)]) -> Vec<Vec<String>> {
    const PER_VALUE: usize = 12;
    if res.named_restaurants <= 0.0 {
        return vec![Vec::new(); food.len()];
    }
    food.iter()
        .map(|(v, _)| {
            res.food[city as usize]
                .iter()
                .filter(|f| f.kind == FoodKind::Restaurant && f.grounds_values())
                .filter(|f| f.category == *v)
                .take(PER_VALUE)
                .map(|f| f.name.clone())
                .collect()
        })
        .collect()
}

/// Food preference values, some named as a restaurant of their category (store builds: a
/// draw per value with probability `named`; without a store no draw is made, so the
/// snapshot's builds keep their bytes).
fn maybe_named(city: &CityStock, values: Vec<String>, rng: &mut ChaCha8Rng) -> Vec<String> {
    if city.named_share <= 0.0 {
        return values;
    }
    values
        .into_iter()
        .map(|v| {
            let Some(i) = city.food.iter().position(|(x, _)| *x == v) else {
                return v;
            };
            let names = &city.restaurants[i];
            if names.is_empty() || !rng.gen_bool(city.named_share) {
                return v;
            }
            names[rng.gen_range(0..names.len())].clone()
        })
        .collect()
}

/// Indices into `all` of the values of `list` (values it does not hold are left out).
fn ids_of(all: &[String], list: &[String]) -> Vec<usize> {
    list.iter()
        .filter_map(|v| all.iter().position(|x| x == v))
        .collect()
}

fn food_names(city: &CityStock, ids: Vec<usize>) -> Vec<String> {
    ids.into_iter().map(|i| city.food[i].0.clone()).collect()
}

fn weak_food(city: &CityStock, t: Taste, rng: &mut ChaCha8Rng) -> (Vec<String>, Vec<String>) {
    let taste = &city.food_taste[t as usize];
    let w: Vec<f64> = city
        .food
        .iter()
        .zip(taste)
        .map(|((_, w), t)| w * t)
        .collect();
    let prefer = {
        let k = count(rng, &[0.2, 0.55, 0.25]);
        pick_indices(rng, &w, k)
    };
    let rest: Vec<usize> = (0..city.food.len())
        .filter(|v| !prefer.contains(v))
        .collect();
    let w: Vec<f64> = rest.iter().map(|&v| 1.0 / taste[v]).collect();
    let avoid = {
        let k = usize::from(rng.gen_bool(0.62));
        pick_distinct(rng, &rest, &w, k)
    };
    (food_names(city, prefer), food_names(city, avoid))
}

/// The individual city fields: must/reject sights, must/reject food. `ci` is the city's
/// position in the trip.
fn individual_city(
    trip: &Trip,
    ci: usize,
    t: Taste,
    weak: &CityPref,
    rng: &mut ChaCha8Rng,
) -> CityPref {
    let city = trip.stock[ci];
    let atts = &trip.ctx.res.attractions[trip.ctx.cities[ci] as usize];
    let taste = &city.cat_taste[t as usize];
    let pos = ids_of(&city.cats, &weak.attractions.category_pref.positive);
    let neg = ids_of(&city.cats, &weak.attractions.category_pref.negative);
    let w: Vec<f64> = (0..atts.len())
        .map(|a| {
            if !trip.open[ci][a] {
                return 0.0; // closed for the whole trip (season, weekday): nobody insists on it
            }
            let c = city.att_cat[a];
            let cat = if pos.contains(&c) {
                3.0
            } else if neg.contains(&c) {
                0.05
            } else {
                1.0
            };
            city.att_pop15[a] * cat * taste[c]
        })
        .collect();
    let must_visit = {
        let k = 1 + count(rng, &[0.7, 0.3]);
        pick_places(rng, city, &w, k)
    };
    let w: Vec<f64> = (0..atts.len())
        .map(|a| {
            // nobody rejects what they must see, nor the area around it or a part of it
            if must_visit
                .iter()
                .any(|&m| m == a || city.relatives[m].binary_search(&(a as u32)).is_ok())
            {
                return 0.0;
            }
            let c = city.att_cat[a];
            let cat = if neg.contains(&c) {
                4.0
            } else if pos.contains(&c) {
                0.0
            } else {
                1.0
            };
            city.att_pop[a] * cat / taste[c]
        })
        .collect();
    let reject_visit = {
        let k = usize::from(rng.gen_bool(0.42));
        pick_places(rng, city, &w, k)
    };
    let names = |v: Vec<usize>| v.into_iter().map(|a| atts[a].name.clone()).collect();
    CityPref {
        attractions: AttractionPref {
            must_visit: names(must_visit),
            reject_visit: names(reject_visit),
            category_pref: weak.attractions.category_pref.clone(),
        },
        food: individual_food(city, t, &weak.food, rng),
    }
}

/// A member's food lists of a city: the weak ones (shared or their own), must_eat drawn from
/// the values named restaurants serve (a plan keeps them at a real venue the release scores)
/// and from the others only when too few are served, reject_eat from the rest.
fn individual_food(city: &CityStock, t: Taste, weak: &FoodPref, rng: &mut ChaCha8Rng) -> FoodPref {
    let food_taste = &city.food_taste[t as usize];
    let mut taken = ids_of_food(city, &weak.prefer_eat);
    taken.extend(ids_of_food(city, &weak.avoid_eat));
    // served values first; the others only when too few are served
    let weights = |served: bool| -> Vec<f64> {
        (0..city.food.len())
            .map(|v| {
                if taken.contains(&v) || city.servable[v] != served {
                    0.0
                } else {
                    city.food[v].1 * food_taste[v]
                }
            })
            .collect()
    };
    let must_eat = {
        let k = count(rng, &[0.25, 0.5, 0.25]);
        let mut picked = pick_indices(rng, &weights(true), k);
        if picked.len() < k {
            picked.extend(pick_indices(rng, &weights(false), k - picked.len()));
        }
        picked
    };
    let w: Vec<f64> = (0..city.food.len())
        .map(|v| {
            if taken.contains(&v) || must_eat.contains(&v) {
                0.0
            } else {
                1.0 / food_taste[v]
            }
        })
        .collect();
    let reject_eat = {
        let k = usize::from(rng.gen_bool(0.36));
        pick_indices(rng, &w, k)
    };
    FoodPref {
        must_eat: maybe_named(city, food_names(city, must_eat), rng),
        prefer_eat: maybe_named(city, weak.prefer_eat.clone(), rng),
        avoid_eat: weak.avoid_eat.clone(),
        reject_eat: food_names(city, reject_eat),
    }
}

/// Indices of food values of the city.
fn ids_of_food(city: &CityStock, list: &[String]) -> Vec<usize> {
    list.iter()
        .filter_map(|v| city.food.iter().position(|(x, _)| x == v))
        .collect()
}

fn build_tables(trip: &Trip, rng: &mut ChaCha8Rng) -> Vec<(String, Preference)> {
    let ctx = trip.ctx;
    let mut out: Vec<(String, Preference)> = Vec::new();
    for slot in ctx.archetype.planned_slots() {
        let p = ctx.profile_of(&slot.user);
        let t = Taste::of(p);
        let reference = slot
            .reference
            .as_ref()
            .and_then(|r| out.iter().find(|(u, _)| u == r).map(|(_, t)| t));
        let global = match (slot.strategy, reference) {
            (Strategy::CopyMinor | Strategy::CopyModerate, Some(r)) => r.global_constraints.clone(),
            _ => globals(ctx, p, rng),
        };
        let mut cities = gtb_core::task::Keyed::default();
        for (ci, &c) in ctx.cities.iter().enumerate() {
            let weak = match (slot.strategy, reference) {
                (Strategy::CopyMinor, Some(r)) => r.city_specific_preferences[ci].clone(),
                _ => {
                    let category_pref = category_pref(trip.stock[ci], t, rng);
                    let (prefer_eat, avoid_eat) = weak_food(trip.stock[ci], t, rng);
                    CityPref {
                        attractions: AttractionPref {
                            category_pref,
                            ..Default::default()
                        },
                        food: FoodPref {
                            prefer_eat,
                            avoid_eat,
                            ..Default::default()
                        },
                    }
                }
            };
            cities.insert(
                ctx.res.city(c).name.clone(),
                individual_city(trip, ci, t, &weak, rng),
            );
        }
        out.push((
            slot.user.clone(),
            Preference {
                global_constraints: global,
                city_specific_preferences: cities,
            },
        ));
    }
    out
}
