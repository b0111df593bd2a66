//! Replies -> typed preference tables. Every value is checked against the task's grounding
//! (candidate names, categories, food values, closed vocabularies); copy strategies take their
//! inherited fields from the reference member; the tables pass the validator's gates that a
//! reply can fail (plausible scalars, no item in two tiers, strategies honoured) and the
//! opening lines its line check (`gtb_validate::lines`): a reply is told what `gtb validate`
//! would find. Problems come back as short Chinese sentences for the correction turn, each with
//! the reason the run report counts it under.

use crate::grounding::{CityCandidates, Member};
use crate::prompt::TaskPrompt;
use gtb_core::task::{
    AttractionPref, Buckets, CategoryPref, CityPref, FoodPref, GlobalConstraints, HotelPreference,
    Intensity, Message, Preference,
};
use gtb_resources::names::normalize;
use gtb_resources::{Strategy, vocab};
use serde_json::Value;

pub use crate::gates::Fixes;
use crate::gates::{resolve, strategy_gate, trip_gate};
pub use crate::json::{Problem, Reason, extract_json};
use crate::lines::check_messages;

/// What a reply yields when its tables are sound: the tables (generation order) and the opening
/// lines, or the problems of the lines alone (then a template may stand in).
pub struct Parsed {
    pub tables: Vec<(String, Preference)>,
    pub messages: Result<Vec<Message>, Vec<Problem>>,
    /// what gtb fixed in the tables, as the build would
    pub fixes: Fixes,
}

struct Ctx<'a> {
    p: &'a TaskPrompt,
    problems: Vec<Problem>,
}

/// What a value check says of a value it refuses: why, and how to tell the model.
type Refusal = (Reason, String);

impl Ctx<'_> {
    fn bad(&mut self, reason: Reason, s: String) {
        if !self.problems.iter().any(|p| p.text == s) {
            self.problems.push(Problem::new(reason, s));
        }
    }
    fn obj<'v>(
        &mut self,
        v: Option<&'v Value>,
        path: &str,
    ) -> Option<&'v serde_json::Map<String, Value>> {
        match v {
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                self.bad(Reason::Shape, format!("{path} 应为对象"));
                None
            }
            None => {
                self.bad(Reason::Shape, format!("缺少 {path}"));
                None
            }
        }
    }
    /// A list of strings, each mapped through `check` (None = not allowed), deduplicated and cut
    /// to `max` items; fewer than `min` is a problem.
    fn list(
        &mut self,
        v: Option<&Value>,
        path: &str,
        min: usize,
        max: usize,
        mut check: impl FnMut(&str) -> Result<String, Refusal>,
    ) -> Vec<String> {
        let items: Vec<&Value> = match v {
            Some(Value::Array(a)) => a.iter().collect(),
            // a lone string where a list belongs counts as a one-item list
            Some(x @ Value::String(s)) if !s.trim().is_empty() => vec![x],
            Some(Value::Null) | Some(Value::String(_)) | None => {
                if min > 0 {
                    self.bad(Reason::Shape, format!("缺少 {path}（至少 {min} 项）"));
                }
                return Vec::new();
            }
            Some(_) => {
                self.bad(Reason::Shape, format!("{path} 应为字符串列表"));
                return Vec::new();
            }
        };
        let mut out: Vec<String> = Vec::new();
        for it in items {
            let Some(s) = it.as_str() else {
                self.bad(Reason::Shape, format!("{path} 的元素应为字符串，得到 {it}"));
                continue;
            };
            match check(s.trim()) {
                Ok(x) => {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
                Err((reason, e)) => self.bad(reason, format!("{path}：{e}")),
            }
        }
        out.truncate(max);
        if out.len() < min {
            self.bad(Reason::Shape, format!("{path} 至少要有 {min} 项"));
        }
        out
    }
    fn int(&mut self, v: Option<&Value>, path: &str) -> Option<i64> {
        match v {
            Some(Value::Number(n)) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .or_else(|| {
                    self.bad(Reason::Shape, format!("{path} 应为整数，得到 {n}"));
                    None
                }),
            Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => s.trim().parse().ok(),
            Some(other) => {
                self.bad(Reason::Shape, format!("{path} 应为整数，得到 {other}"));
                None
            }
            None => {
                self.bad(Reason::Shape, format!("缺少 {path}"));
                None
            }
        }
    }

    /// Member `key` of `m` read as a list (its path: `{at}.{key}`), checked as `list` does.
    fn field(
        &mut self,
        m: &serde_json::Map<String, Value>,
        at: &str,
        key: &str,
        (min, max): (usize, usize),
        check: impl FnMut(&str) -> Result<String, Refusal>,
    ) -> Vec<String> {
        self.list(m.get(key), &format!("{at}.{key}"), min, max, check)
    }
    /// Member `key` of `m` as an object (its path: `{at}.{key}`); empty when it is not one
    /// (a problem then).
    fn section(
        &mut self,
        m: &serde_json::Map<String, Value>,
        at: &str,
        key: &str,
    ) -> serde_json::Map<String, Value> {
        self.obj(m.get(key), &format!("{at}.{key}"))
            .cloned()
            .unwrap_or_default()
    }

    fn globals(&mut self, v: Option<&Value>, user: &str) -> GlobalConstraints {
        let path = format!("{user}.global_constraints");
        let Some(g) = self.obj(v, &path) else {
            return GlobalConstraints::default();
        };
        let budget = self.budget(g, &path);
        let tr = self.section(g, &path, "transport");
        let tp = format!("{path}.transport");
        let transport = Buckets {
            must: self.field(&tr, &tp, "must", (0, 2), mode_check),
            prefer: self.field(&tr, &tp, "prefer", (0, 2), mode_check),
            avoid: self.field(&tr, &tp, "avoid", (0, 1), mode_check),
            reject: self.field(&tr, &tp, "reject", (0, 1), mode_check),
        };
        let it = self.section(g, &path, "intensity");
        let ip = format!("{path}.intensity");
        let poi = self
            .int(it.get("max_poi_per_day"), &format!("{ip}.max_poi_per_day"))
            .unwrap_or(3);
        let hours = self
            .int(
                it.get("max_active_hours"),
                &format!("{ip}.max_active_hours"),
            )
            .unwrap_or(8);
        let h = self.section(g, &path, "hotel_preference");
        let hp = format!("{path}.hotel_preference");
        let hotel_preference = HotelPreference {
            prefer: self.field(&h, &hp, "prefer", (1, 3), hotel_check),
            avoid: self.field(&h, &hp, "avoid", (0, 1), hotel_check),
        };
        let as_u32 = |x: i64| x.clamp(0, u32::MAX as i64) as u32;
        let g = GlobalConstraints {
            avg_budget: as_u32(budget),
            transport,
            intensity: Intensity {
                max_poi_per_day: as_u32(poi),
                max_active_hours: as_u32(hours),
            },
            hotel_preference,
        };
        self.scalars_gate(g, &path)
    }
    /// avg_budget (0 when missing), which must not be under the task's min_budget.
    fn budget(&mut self, g: &serde_json::Map<String, Value>, path: &str) -> i64 {
        let budget = self
            .int(g.get("avg_budget"), &format!("{path}.avg_budget"))
            .unwrap_or(0);
        if budget > 0 && budget < self.p.min_budget as i64 {
            self.bad(
                Reason::Scalar,
                format!(
                    "{path}.avg_budget = {budget} 低于 min_budget {}",
                    self.p.min_budget
                ),
            );
        }
        budget
    }
    /// The validator's `scalars` gate, on the same ranges: a problem per scalar outside its
    /// range (the constraints come back unchanged).
    fn scalars_gate(&mut self, g: GlobalConstraints, path: &str) -> GlobalConstraints {
        let table = Preference {
            global_constraints: g,
            ..Default::default()
        };
        for (s, v) in gtb_validate::scalars::out_of_range(&self.p.ranges, &table) {
            let r = self.p.ranges.scalar_range(s);
            self.bad(
                Reason::Scalar,
                format!(
                    "{path}.{} = {v} 不合理，应在 {} 到 {} 之间",
                    s.path(),
                    r.start(),
                    r.end()
                ),
            );
        }
        table.global_constraints
    }

    /// One member's table: its own fields from the reply, the inherited ones from its
    /// reference (copy strategies stay exact).
    fn member(&mut self, m: &Member, mv: &Value, reference: Option<&Preference>) -> Preference {
        let global = match (m.strategy, reference) {
            (Strategy::CopyMinor | Strategy::CopyModerate, Some(r)) => r.global_constraints.clone(),
            _ => self.globals(mv.get("global_constraints"), &m.user),
        };
        let csp_path = format!("{}.city_specific_preferences", m.user);
        let csp = self
            .obj(mv.get("city_specific_preferences"), &csp_path)
            .cloned()
            .unwrap_or_default();
        let same_city = |c: &str, k: &str| {
            c == k || normalize(c) == normalize(k) || gtb_resources::short_city_name(c) == k
        };
        let minor = if m.strategy == Strategy::CopyMinor {
            reference
        } else {
            None
        };
        let mut cities = gtb_core::task::Keyed::default();
        for (ci, c) in self.p.cities.iter().enumerate() {
            let raw = csp.get(&c.name).or_else(|| {
                csp.iter()
                    .find(|(k, _)| same_city(&c.name, k))
                    .map(|(_, v)| v)
            });
            let mut cp = if raw.is_none() {
                self.bad(Reason::Shape, format!("{csp_path} 缺少城市「{}」", c.name));
                CityPref::default()
            } else {
                self.city(raw, m, c, minor.is_none())
            };
            if let Some(r) = minor {
                inherit_weak(&mut cp, &r.city_specific_preferences[ci]);
            }
            cities.insert(c.name.clone(), cp);
        }
        for k in csp.keys() {
            if !self.p.cities.iter().any(|c| same_city(&c.name, k)) {
                self.bad(
                    Reason::Shape,
                    format!("{csp_path} 含有行程之外的城市「{k}」"),
                );
            }
        }
        Preference {
            global_constraints: global,
            city_specific_preferences: cities,
        }
    }

    /// One city of one member; `weak` = the member writes the weak fields itself.
    fn city(&mut self, v: Option<&Value>, m: &Member, c: &CityCandidates, weak: bool) -> CityPref {
        let path = format!("{}.{}", m.user, c.name);
        let Some(o) = self.obj(v, &path) else {
            return CityPref::default();
        };
        let a = self.section(o, &path, "attractions");
        let f = self.section(o, &path, "food");
        CityPref {
            attractions: self.attractions(&a, &path, c, weak),
            food: self.food(&f, &path, c, weak, m.firm),
        }
    }
    /// A city's sights (candidates of the city, a must_visit open during the trip) and, when
    /// `weak`, its attraction categories.
    fn attractions(
        &mut self,
        a: &serde_json::Map<String, Value>,
        path: &str,
        c: &CityCandidates,
        weak: bool,
    ) -> AttractionPref {
        let at = format!("{path}.attractions");
        let must_visit = self.field(a, &at, "must_visit", (1, 2), sight_check(c, true));
        let reject_visit = self.field(a, &at, "reject_visit", (0, 1), sight_check(c, false));
        let category_pref = if weak {
            let cp = self.section(a, &at, "category_pref");
            let at = format!("{path}.category_pref");
            CategoryPref {
                positive: self.field(&cp, &at, "positive", (0, 2), category_check),
                negative: self.field(&cp, &at, "negative", (0, 1), category_check),
            }
        } else {
            CategoryPref::default()
        };
        AttractionPref {
            must_visit,
            reject_visit,
            category_pref,
        }
    }
    /// A city's food (candidates of the city or values found everywhere; a `firm` member's
    /// must_eat only what a venue there serves); prefer_eat and avoid_eat only when `weak`.
    fn food(
        &mut self,
        f: &serde_json::Map<String, Value>,
        path: &str,
        c: &CityCandidates,
        weak: bool,
        firm: bool,
    ) -> FoodPref {
        let at = format!("{path}.food");
        let food = |s: &str| food_check(c, s);
        let must_eat = self.field(f, &at, "must_eat", (0, 2), |s: &str| {
            let v = food_check(c, s)?;
            if firm && !c.firm_food.contains(&v) {
                return Err((
                    Reason::UnknownName,
                    format!(
                        "「{v}」在{}没有餐厅供应，不能妥协的成员不能把它作为 must_eat（只取 firm_must_eat 中的值）",
                        c.name
                    ),
                ));
            }
            Ok(v)
        });
        let (prefer_eat, avoid_eat) = if weak {
            (
                self.field(f, &at, "prefer_eat", (0, 2), food),
                self.field(f, &at, "avoid_eat", (0, 1), food),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let reject_eat = self.field(f, &at, "reject_eat", (0, 1), food);
        FoodPref {
            must_eat,
            prefer_eat,
            avoid_eat,
            reject_eat,
        }
    }
}

/// The check of a transport mode against the closed vocabulary.
fn mode_check(s: &str) -> Result<String, Refusal> {
    if vocab::is_transport_mode(s) {
        Ok(s.to_string())
    } else {
        Err((
            Reason::Vocabulary,
            format!("「{s}」不是 飞机/高铁/火车/自驾 之一"),
        ))
    }
}

/// The check of a hotel category against the closed vocabulary.
fn hotel_check(s: &str) -> Result<String, Refusal> {
    if vocab::is_hotel_category(s) {
        Ok(s.to_string())
    } else {
        Err((Reason::Vocabulary, format!("「{s}」不是 13 个酒店类别之一")))
    }
}

/// The check of a sight against city `c`'s candidates, giving the candidate's own name;
/// `must`: it must also be open during the trip.
fn sight_check(c: &CityCandidates, must: bool) -> impl Fn(&str) -> Result<String, Refusal> + '_ {
    move |s: &str| match c.attraction(s) {
        Some((k, true)) => Ok(k),
        Some((k, false)) if !must => Ok(k),
        Some((k, false)) => Err((
            Reason::UnknownName,
            format!("「{k}」在出行期间不开放，不能作为必去景点"),
        )),
        None => Err((
            Reason::UnknownName,
            format!("「{s}」不在{}的候选景点中，请逐字照抄候选 name", c.name),
        )),
    }
}

/// The check of an attraction category: in the vocabulary and not excluded.
fn category_check(s: &str) -> Result<String, Refusal> {
    if vocab::is_attraction_category(s) && !vocab::EXCLUDED_ATTRACTION_CATEGORIES.contains(&s) {
        Ok(s.to_string())
    } else {
        Err((Reason::Vocabulary, format!("「{s}」不是可用的景点类别")))
    }
}

/// The check of a food value against city `c`'s candidates and the values found everywhere,
/// giving its canonical form.
fn food_check(c: &CityCandidates, s: &str) -> Result<String, Refusal> {
    gtb_validate::food::canonical(&c.foods, s)
        .map(str::to_string)
        .ok_or_else(|| {
            (
                Reason::UnknownName,
                format!(
                    "「{s}」不在{}的美食候选中，也不是 food_anywhere 里各地都有的类别",
                    c.name
                ),
            )
        })
}

/// A copy_minor member's city: the reference's weak fields (category_pref, prefer_eat,
/// avoid_eat), and its own must / reject food without the values it inherits (an own item that
/// repeats an inherited one would make the validator cut the inherited field, the stronger tier
/// winning: the inheritance stays exact instead).
fn inherit_weak(cp: &mut CityPref, r: &CityPref) {
    cp.attractions.category_pref = r.attractions.category_pref.clone();
    cp.food.prefer_eat = r.food.prefer_eat.clone();
    cp.food.avoid_eat = r.food.avoid_eat.clone();
    let inherited: Vec<&String> = r.food.prefer_eat.iter().chain(&r.food.avoid_eat).collect();
    cp.food.must_eat.retain(|x| !inherited.contains(&x));
    cp.food.reject_eat.retain(|x| !inherited.contains(&x));
}

/// Find the per-user maps of a reply, tolerating the usual wrappers.
fn sections(v: &Value) -> (Option<&Value>, Option<&Value>) {
    let root = match v {
        Value::Object(m) if m.len() == 1 && !m.contains_key("preferences") => {
            m.values().next().filter(|x| x.is_object()).unwrap_or(v)
        }
        _ => v,
    };
    let prefs = root
        .get("preferences")
        .or_else(|| root.get("user_preferences"));
    let msgs = root
        .get("initial_messages")
        .or_else(|| root.get("messages"));
    (prefs, msgs)
}

/// Parse and check the reply to a lines-only correction turn: the lines of `members`, whose
/// tables (in `tables`) stay as they were accepted.
pub fn parse_lines(
    p: &TaskPrompt,
    members: &[Member],
    tables: &[(String, Preference)],
    reply: &str,
) -> Result<Vec<Message>, Vec<Problem>> {
    let v = extract_json(reply).map_err(|e| vec![Problem::new(Reason::Json, e)])?;
    let msgs = v
        .get("initial_messages")
        .or_else(|| v.get("messages"))
        .unwrap_or(&v);
    check_messages(p, members, tables, Some(msgs))
}

/// Parse and check a reply with the tables of `members` (the whole group, or one member after
/// the `accepted` tables of the members before it). `Err` lists the problems of the tables (or
/// of the JSON itself).
pub fn parse(
    p: &TaskPrompt,
    members: &[Member],
    accepted: &[(String, Preference)],
    reply: &str,
) -> Result<Parsed, Vec<Problem>> {
    let v = extract_json(reply).map_err(|e| {
        let reason = if e.contains("截断") {
            Reason::Truncated
        } else {
            Reason::Json
        };
        vec![Problem::new(reason, e)]
    })?;
    let (prefs, msgs) = sections(&v);
    let mut cx = Ctx {
        p,
        problems: Vec::new(),
    };
    let Some(prefs) = cx.obj(prefs, "preferences") else {
        return Err(cx.problems);
    };
    let prefs = prefs.clone();
    let mut tables: Vec<(String, Preference)> = accepted.to_vec();
    let mut resolved = 0;
    for m in members {
        let Some(mv) = prefs.get(&m.user) else {
            cx.bad(Reason::Shape, format!("preferences 缺少成员 {}", m.user));
            continue;
        };
        let reference = m
            .reference
            .as_ref()
            .and_then(|r| tables.iter().find(|(u, _)| u == r).map(|(_, t)| t));
        let mut table = cx.member(m, mv, reference);
        resolved += resolve(p, &mut table);
        tables.push((m.user.clone(), table));
    }
    if !cx.problems.is_empty() {
        return Err(cx.problems);
    }
    let gates = strategy_gate(p, &tables);
    if !gates.is_empty() {
        return Err(gates);
    }
    let (gates, lifted) = trip_gate(p, &mut tables, accepted.len());
    if !gates.is_empty() {
        return Err(gates);
    }
    let messages = check_messages(p, members, &tables, msgs);
    let tables = tables.split_off(accepted.len());
    Ok(Parsed {
        tables,
        messages,
        fixes: Fixes {
            clashes: resolved,
            budgets: lifted,
        },
    })
}
