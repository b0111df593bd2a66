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

mod globals;
mod group;
mod taste;
use globals::{globals, in_budget_range};
use group::{fit_budgets, inject_conflicts};
use taste::{Persona, Taste, category_taste, food_taste, persona};

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
