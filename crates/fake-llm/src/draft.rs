//! The members' tables of a reply, built from the request's grounding (each value picked from
//! the candidates by the request's hash), the opening lines that voice them, and the table
//! faults: a hallucinated sight, a foreign dish, a bad mode, a copied member, an implausible
//! budget.

use crate::faults::{Ask, h64};
use crate::prompt::{arr, col, s};
use crate::reply::good_line;
use serde_json::{Value, json};
use std::collections::HashMap;

/// What a reply's tables are built from: the request's grounding and the content faults that
/// change the tables (drawn for this turn).
pub(crate) struct Draft<'a> {
    ctx: &'a Value,
    /// the member asked for in a per-member request (its part: `fixed` fields included)
    only: Option<Value>,
    h: u64,
    cities: Vec<String>,
    cand: Value,
    every_leg: Vec<String>,
    min_budget: u64,
    days: u64,
    pub(crate) foreign_food: bool,
    pub(crate) hallucinate: bool,
    pub(crate) bad_mode: bool,
}

/// A reply's tables, with what each member's line voices: its budget (a copying member's is
/// its reference's) and its first must_visit.
pub(crate) struct Tables {
    pub(crate) prefs: serde_json::Map<String, Value>,
    pub(crate) budgets: HashMap<String, u64>,
    musts: HashMap<String, String>,
}

impl<'a> Draft<'a> {
    /// The grounding of `ctx` and the table faults drawn for `ask`. The first turn of a
    /// per-member request (`only`) picks from the grounding's hash, so every member of a task
    /// draws from one stream as the whole-group reply does; a correction turn from its own.
    pub(crate) fn new(ctx: &'a Value, ask: &Ask, only: Option<Value>) -> Draft<'a> {
        let f = ask.f;
        let h = match &only {
            Some(_) if ask.first_turn => h64(ctx.to_string().as_bytes()),
            _ => ask.h,
        };
        Draft {
            ctx,
            only,
            h,
            cities: arr(ctx, "cities").iter().map(|c| s(c)).collect(),
            cand: ctx.get("city_candidates").cloned().unwrap_or(Value::Null),
            every_leg: arr(ctx, "modes_on_every_leg")
                .iter()
                .map(|c| s(c))
                .collect(),
            min_budget: ctx
                .get("min_budget")
                .and_then(|b| b.as_u64())
                .unwrap_or(1000),
            days: ctx.get("days").and_then(|d| d.as_u64()).unwrap_or(3),
            foreign_food: ask.content(f.rate_foreign_food, "foreign_food"),
            hallucinate: ask.content(f.rate_hallucinated, "hallucinated"),
            bad_mode: ask.content(f.rate_bad_mode, "bad_mode"),
        }
    }
    /// A deterministic pick in 0..m from the hash and a salt (0 when m is 0).
    fn n(&self, salt: &str, m: usize) -> usize {
        if m == 0 {
            0
        } else {
            (h64(format!("{}{salt}", self.h).as_bytes()) % m as u64) as usize
        }
    }
    /// Every member's tables, in the order of the request.
    pub(crate) fn tables(&self) -> Tables {
        let mut t = Tables {
            prefs: serde_json::Map::new(),
            budgets: HashMap::new(),
            musts: HashMap::new(),
        };
        for (mi, m) in arr(self.ctx, "members").iter().enumerate() {
            let user = s(&m["user"]);
            if self.only.as_ref().is_some_and(|o| s(&o["member"]) != user) {
                continue;
            }
            let strategy = s(&m["strategy"]);
            let firm = m["compromisable"] == json!(false);
            let mut city_map = serde_json::Map::new();
            for (ci, c) in self.cities.iter().enumerate() {
                let (city, must) = self.city(mi, ci, &strategy, firm);
                t.musts.entry(user.clone()).or_insert(must);
                city_map.insert(c.clone(), city);
            }
            let mut entry = json!({"city_specific_preferences": Value::Object(city_map)});
            if strategy == "independent" {
                let (globals, budget) = self.globals(mi);
                t.budgets.insert(user.clone(), budget);
                entry["global_constraints"] = globals;
            } else if let Some(r) = m.get("reference").and_then(|r| r.as_str()) {
                let fixed = self.only.as_ref().and_then(|o| {
                    o.pointer("/fixed/global_constraints/avg_budget")
                        .and_then(|b| b.as_u64())
                });
                let b = fixed
                    .or_else(|| t.budgets.get(r).copied())
                    .unwrap_or(self.min_budget);
                t.budgets.insert(user.clone(), b);
            }
            t.prefs.insert(user, entry);
        }
        t
    }
    /// Member `mi`'s preferences for city `ci`, picked from its candidates by the hash (under
    /// the hallucination and foreign-food faults the first member's first city names a sight
    /// or dish that is no candidate), with its first must_visit. A `firm` member's must_eat is
    /// one the city's restaurants serve (`firm_must_eat`).
    fn city(&self, mi: usize, ci: usize, strategy: &str, firm: bool) -> (Value, String) {
        let cc = &self.cand[&self.cities[ci]];
        let atts = arr(cc, "attractions");
        let foods = arr(cc, "food");
        let served = arr(cc, "firm_must_eat");
        let cats = arr(cc, "attraction_categories");
        let a = |k: usize| {
            atts.get(k % atts.len().max(1))
                .map(|x| col(x, 0, "name"))
                .unwrap_or_default()
        };
        let fv = |k: usize| {
            foods
                .get(k % foods.len().max(1))
                .map(|x| col(x, 0, "value"))
                .unwrap_or_default()
        };
        let base = self.n(&format!("a{mi}{ci}"), atts.len().max(1));
        let mut must = vec![a(base)];
        if self.hallucinate && mi == 0 && ci == 0 {
            must = vec!["不存在的梦幻乐园".to_string()];
        }
        let reject: Vec<String> = if atts.len() > 2 {
            vec![a(base + 1)]
        } else {
            vec![]
        };
        let fb = self.n(&format!("f{mi}{ci}"), foods.len().max(1));
        let must_eat: Vec<String> = if self.foreign_food && mi == 0 && ci == 0 {
            vec![foreign_value(self.ctx, &foods)]
        } else if foods.is_empty() {
            vec![]
        } else if firm && !served.is_empty() {
            let v = fv(fb);
            let ok = served.iter().any(|x| s(x) == v);
            vec![if ok { v } else { s(served[fb % served.len()]) }]
        } else if firm {
            vec![]
        } else {
            vec![fv(fb)]
        };
        let reject_eat: Vec<String> = if foods.len() > 3 {
            vec![fv(fb + 1)]
        } else {
            vec![]
        };
        let city = if strategy == "copy_minor" {
            json!({"attractions": {"must_visit": must, "reject_visit": reject}, "food": {"must_eat": must_eat, "reject_eat": reject_eat}})
        } else {
            let pos: Vec<String> = cats.first().map(|x| vec![s(x)]).unwrap_or_default();
            let prefer_eat: Vec<String> = if foods.len() > 2 {
                vec![fv(fb + 2)]
            } else {
                vec![]
            };
            json!({
                "attractions": {"must_visit": must, "reject_visit": reject, "category_pref": {"positive": pos, "negative": []}},
                "food": {"must_eat": must_eat, "prefer_eat": prefer_eat, "avoid_eat": [], "reject_eat": reject_eat},
            })
        };
        let first = must[0].clone();
        (city, first)
    }
    /// An independent member's global constraints (a budget over min_budget, a preferred mode
    /// every leg has, a ship as must under the bad-mode fault, a hotel category of the first
    /// city), with its budget.
    fn globals(&self, mi: usize) -> (Value, u64) {
        let extra = self.days + self.n(&format!("b{mi}"), 10) as u64;
        let budget = (self.min_budget + 100 * extra).div_ceil(100) * 100;
        // a mode every leg has is preferred, not required: a must raises the cheapest trip
        // (gtb's trip gate), and a model reading the fares would budget for it
        let prefer: Vec<String> = self.every_leg.iter().take(1).cloned().collect();
        let must: Vec<String> = if self.bad_mode && mi == 0 {
            vec!["轮船".into()]
        } else {
            Vec::new()
        };
        let avoid: Vec<String> = ["自驾", "火车", "飞机", "高铁"]
            .iter()
            .map(|x| x.to_string())
            .filter(|x| !self.every_leg.contains(x) && !must.contains(x))
            .take(1)
            .collect();
        let hotels = arr(&self.cand[&self.cities[0]], "hotels");
        let hp: Vec<String> = hotels
            .get(self.n(&format!("h{mi}"), hotels.len().max(1)))
            .map(|x| vec![col(x, 0, "category")])
            .unwrap_or_else(|| vec!["舒适型".into()]);
        let ha: Vec<String> = if hp[0] == "豪华型" {
            vec!["经济型".into()]
        } else {
            vec!["豪华型".into()]
        };
        let globals = json!({
            "avg_budget": budget,
            "transport": {"must": must, "prefer": prefer, "avoid": avoid, "reject": []},
            "intensity": {"max_poi_per_day": 3, "max_active_hours": 8},
            "hotel_preference": {"prefer": hp, "avoid": ha},
        });
        (globals, budget)
    }
    /// The opening lines (members sorted User1, User2 …): each voices its budget and first
    /// must_visit; the first member rejects its must_visit when `contradict`; all are `ok`
    /// when `bad`.
    pub(crate) fn lines(
        &self,
        t: &Tables,
        users: &[String],
        contradict: bool,
        bad: bool,
    ) -> serde_json::Map<String, Value> {
        let first = arr(self.ctx, "members")
            .first()
            .map(|m| s(&m["user"]))
            .unwrap_or_default();
        let mut lines = serde_json::Map::new();
        for u in users {
            let b = t.budgets.get(u).copied().unwrap_or(self.min_budget);
            let place = t.musts.get(u).cloned().unwrap_or_default();
            let mut text = good_line(b, &place);
            if contradict && *u == first {
                text = format!("{place}就千万别安排了，我坚决不去。");
            }
            if bad {
                text = "ok".into();
            }
            lines.insert(u.clone(), Value::String(text));
        }
        lines
    }
}

/// The table faults of the gates a reply can fail (copied member, implausible budget): the
/// first member's city preferences copied to the next member that writes its own (in a
/// per-member request for that member: the first member's, drawn again from the task's
/// stream), and a budget of 50,000 for the first member; the names of those applied.
pub(crate) fn table_faults(
    d: &Draft,
    (copied, budget): (bool, bool),
    prefs: &mut serde_json::Map<String, Value>,
    budgets: &mut HashMap<String, u64>,
) -> Vec<&'static str> {
    let mut applied = Vec::new();
    let members = arr(d.ctx, "members");
    let first = members.first().map(|m| s(&m["user"])).unwrap_or_default();
    let own = members
        .iter()
        .skip(1)
        .find(|m| matches!(s(&m["strategy"]).as_str(), "independent" | "copy_moderate"));
    if let Some(m) = own.filter(|_| copied) {
        let user = s(&m["user"]);
        let city = match &d.only {
            None => Some(prefs[&first]["city_specific_preferences"].clone()),
            Some(_) if prefs.contains_key(&user) => {
                let firm = members[0]["compromisable"] == json!(false);
                let strategy = s(&members[0]["strategy"]);
                let cities: serde_json::Map<String, Value> = (0..d.cities.len())
                    .map(|ci| (d.cities[ci].clone(), d.city(0, ci, &strategy, firm).0))
                    .collect();
                Some(Value::Object(cities))
            }
            Some(_) => None,
        };
        if let Some(city) = city {
            applied.push("copied_member");
            prefs[&user]["city_specific_preferences"] = city;
        }
    }
    if budget && prefs.contains_key(&first) {
        applied.push("implausible_budget");
        prefs[&first]["global_constraints"]["avg_budget"] = json!(50_000);
        budgets.insert(first, 50_000);
    }
    applied
}

/// A food value the city does not accept: a speciality of the release's vocabulary that is
/// neither among the city's candidates nor a category found everywhere.
fn foreign_value(ctx: &Value, foods: &[&Value]) -> String {
    let anywhere: Vec<String> = arr(ctx, "food_anywhere").iter().map(|v| s(v)).collect();
    ["重庆火锅", "肠粉", "小龙虾", "过桥米线", "大盘鸡", "沙茶面"]
        .iter()
        .map(|v| v.to_string())
        .find(|v| !anywhere.contains(v) && !foods.iter().any(|x| col(x, 0, "value") == *v))
        .unwrap_or_else(|| "重庆火锅".into())
}
