//! The grounding of one city for one set of open attractions: its candidates, their context
//! JSON and their schema definitions, built once and shared by every task that visits it then.

use crate::grounding::{CityCandidates, CityData, Memo};
use crate::schema::{city_defs, obj};
use gtb_generate::TaskContext;
use gtb_resources::{Attraction, CityId, FoodKind, parents, vocab};
use gtb_validate::names::CityNames;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// The fewest food values a city is offered when a prompt is fitted to the window.
const MIN_FOOD: usize = 8;

/// Food values of a city (as the offline generator offers them): categories of its entries and
/// its local dishes; excluded categories never, nor the category of a restaurant known from
/// general knowledge only (`Food::grounds_values`).
fn food_values(ctx: &TaskContext, city: CityId) -> Vec<(String, &'static str, u32)> {
    let mut out: Vec<(String, &'static str, u32)> = Vec::new();
    for f in ctx.res.food[city as usize]
        .iter()
        .filter(|f| f.grounds_values())
    {
        let (v, kind) = match f.kind {
            FoodKind::Dish => (f.name.clone(), "当地菜品"),
            FoodKind::Cuisine => (f.category.clone(), "菜系"),
            FoodKind::Restaurant => (f.category.clone(), "餐厅类别"),
        };
        if vocab::EXCLUDED_FOOD_CATEGORIES.contains(&v.as_str())
            || out.iter().any(|(x, _, _)| *x == v)
        {
            continue;
        }
        out.push((v, kind, f.price));
    }
    out
}

/// The grounding of one city, memoised per set of attractions open during the trip.
pub(crate) fn city_grounding(
    ctx: &TaskContext,
    memo: &Memo,
    c: CityId,
    max_attractions: usize,
) -> Arc<CityData> {
    let open: Vec<bool> = ctx.res.attractions[c as usize]
        .iter()
        .map(|x| ctx.open_during_trip(x))
        .collect();
    let mut h = blake3::Hasher::new();
    h.update(&(max_attractions as u64).to_le_bytes());
    h.update(&open.iter().map(|&b| b as u8).collect::<Vec<u8>>());
    let sig: [u8; 16] = h.finalize().as_bytes()[..16].try_into().expect("16 bytes");
    let hit = memo.lock().expect("memo").get(&(c, sig)).cloned();
    if let Some(d) = hit {
        return d;
    }
    let d = Arc::new(city_data(ctx, c, &open, max_attractions));
    memo.lock()
        .expect("memo")
        .entry((c, sig))
        .or_insert(d)
        .clone()
}

/// Candidates, context JSON and schema definitions of one city (`open`: per attraction, open
/// on some day of the trip).
fn city_data(ctx: &TaskContext, c: CityId, open: &[bool], max_attractions: usize) -> CityData {
    let res = ctx.res;
    let name = res.city(c).name.clone();
    let atts = &res.attractions[c as usize];
    let inventory: HashMap<String, bool> = atts
        .iter()
        .zip(open)
        .map(|(x, &o)| (x.name.clone(), o))
        .collect();
    let offered: Vec<usize> = (0..atts.len())
        .filter(|&i| open[i])
        .take(max_attractions.max(1))
        .collect();
    let mut categories: Vec<String> = Vec::new();
    for x in atts {
        if vocab::is_attraction_category(&x.category) && !categories.contains(&x.category) {
            categories.push(x.category.clone());
        }
    }
    if categories.is_empty() {
        categories = vocab::ATTRACTION_CATEGORIES
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    // a prompt fitted to a small window offers fewer food values too (the first, the city's
    // own categories and dishes, stay)
    let mut food = food_values(ctx, c);
    food.truncate(max_attractions.max(MIN_FOOD));
    let hotels: Vec<Value> = res.hotels[c as usize]
        .iter()
        .map(|h| json!([h.category, h.price_low, h.price_high]))
        .collect();
    let mut json = obj(vec![
        ("attractions", attractions_json(atts, &offered)),
        (
            "attraction_categories",
            Value::Array(
                categories
                    .iter()
                    .map(|c| Value::String(c.clone()))
                    .collect(),
            ),
        ),
        (
            "food",
            Value::Array(food.iter().map(|(v, k, p)| json!([v, k, p])).collect()),
        ),
        ("hotels", Value::Array(hotels)),
    ]);
    let mut cand = CityCandidates {
        name,
        offered: offered.iter().map(|&i| atts[i].name.clone()).collect(),
        inventory,
        categories,
        food: food.into_iter().map(|(v, _, _)| v).collect(),
        firm_food: Vec::new(),
        foods: res.food[c as usize].clone(),
        names: CityNames::of_city(res, c),
        areas: atts
            .iter()
            .enumerate()
            .filter(|(_, x)| x.parent.is_some())
            .map(|(i, x)| {
                let around = parents::ancestors(atts, i).map(|a| atts[a].name.clone());
                (x.name.clone(), around.collect())
            })
            .collect(),
    };
    let venues = gtb_score::resolver::PoiDb::of_city(res, c);
    cand.firm_food = cand
        .food_enum()
        .into_iter()
        .filter(|v| venues.serves_must_eat(res, &cand.name, v))
        .collect();
    json["firm_must_eat"] = json!(cand.firm_food);
    let defs = city_defs(c, &cand);
    CityData {
        id: c,
        cand,
        json: RawValue::from_string(serde_json::to_string(&json).expect("serialises"))
            .expect("JSON"),
        defs,
        terms: gtb_validate::lines::inventory_terms(res, c),
    }
}

/// The offered attractions of a city as rows [name, category, popularity, ticket], most
/// popular first, each part of a scenic area right after its area with a fifth column naming
/// it (its `ticket` is the extra fee inside the area's ticket); a part whose area is not
/// offered names it all the same.
fn attractions_json(atts: &[Attraction], offered: &[usize]) -> Value {
    let row = |i: usize, area: Option<usize>| {
        let x = &atts[i];
        let mut r = vec![
            json!(x.name),
            json!(x.category),
            json!(x.popularity),
            json!(x.ticket),
        ];
        if let Some(a) = area {
            r.push(json!(atts[a].name));
        }
        Value::Array(r)
    };
    // the outermost offered area around an attraction (parts of parts join the outer area)
    let area = |i: usize| {
        parents::ancestors(atts, i)
            .filter(|a| offered.contains(a))
            .last()
    };
    let mut out = Vec::with_capacity(offered.len());
    for &i in offered.iter().filter(|&&i| area(i).is_none()) {
        out.push(row(i, atts[i].parent.map(|p| p as usize)));
        for &k in offered.iter().filter(|&&k| area(k) == Some(i)) {
            out.push(row(k, Some(i)));
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gtb_resources::{Alias, AliasKind};

    /// A sight of 华阴市 (where 华山 is) with a ticket and an optional parent area.
    fn att(name: &str, ticket: u32, parent: Option<u32>) -> Attraction {
        Attraction {
            city: 0,
            name: name.into(),
            category: "名山大川".into(),
            lat: 34.48,
            lng: 110.08,
            hours: None,
            ticket,
            popularity: 50,
            parent,
        }
    }

    #[test]
    fn issue12_parts_are_listed_under_their_area() {
        let atts = vec![
            att("华山", 160, None),
            att("华山西峰", 0, Some(0)),
            att("翠云宫", 0, Some(1)),
            att("西岳庙", 0, None),
            att("长空栈道", 30, Some(5)),
            att("华山南峰", 0, Some(0)),
        ];
        let v = attractions_json(&atts, &[0, 1, 2, 3, 4]);
        let rows = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let r = r.as_array().unwrap();
                    match r.get(4) {
                        Some(a) => format!("{} in {}", r[0].as_str().unwrap(), a.as_str().unwrap()),
                        None => r[0].as_str().unwrap().to_string(),
                    }
                })
                .collect()
        };
        // parts of parts join the outermost offered area (华山南峰 itself is not offered)
        assert_eq!(
            rows(&v),
            [
                "华山",
                "华山西峰 in 华山",
                "翠云宫 in 华山",
                "长空栈道 in 华山",
                "西岳庙"
            ]
        );
        // no area offered: the part names the area it lies in
        let v = attractions_json(&atts, &[3, 4]);
        assert_eq!(rows(&v), ["西岳庙", "长空栈道 in 华山南峰"]);
    }

    #[test]
    fn issue12_replies_may_name_a_candidate_by_an_alias() {
        let aliases = [Alias {
            alias: "南山寺".into(),
            name: "南山文化旅游区".into(),
            kind: AliasKind::PartOf,
        }];
        let c = CityCandidates {
            inventory: [
                ("南山文化旅游区".to_string(), true),
                ("天涯海角".to_string(), false),
            ]
            .into_iter()
            .collect(),
            names: CityNames::new(
                vec!["南山文化旅游区".into(), "天涯海角".into()],
                &aliases,
                vec!["三亚市".into(), "三亚".into()],
            ),
            ..Default::default()
        };
        assert_eq!(
            c.attraction("南山寺"),
            Some(("南山文化旅游区".into(), true))
        );
        assert_eq!(
            c.attraction("三亚市天涯海角景区"),
            Some(("天涯海角".into(), false))
        );
        assert_eq!(c.attraction("天涯海角"), Some(("天涯海角".into(), false)));
        assert_eq!(c.attraction("亚龙湾"), None);
    }
}
