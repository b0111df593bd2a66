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

/// What a reply yields when its tables are sound: the tables (generation order) and the opening
/// lines, or the problems of the lines alone (then a template may stand in).
pub struct Parsed {
    pub tables: Vec<(String, Preference)>,
    pub messages: Result<Vec<Message>, Vec<Problem>>,
    /// items the tables named in two tiers (or rejected areas around a must_visit), resolved
    /// as the validator's fix does: the stronger tier keeps them
    pub resolved: usize,
}

/// Why a reply was rejected (`llm_report.json` counts rejections per reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// no JSON object in the reply
    Json,
    /// cut off at the completion budget
    Truncated,
    /// a member, city or field missing or of the wrong type
    Shape,
    /// a sight or food that is not a candidate of its city
    UnknownName,
    /// a mode, hotel category or attraction category outside its vocabulary
    Vocabulary,
    /// avg_budget or intensity outside its plausible range, or under min_budget
    Scalar,
    /// a copy strategy not honoured, or a member copying another's city preferences
    Strategy,
    /// an opening line missing, too long, not Chinese, or with forbidden text
    LineForm,
    /// an opening line that contradicts its speaker's table
    LineDisagrees,
    /// an opening line that voices none (or too many) of its speaker's preferences
    LineReveals,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Json => "json",
            Reason::Truncated => "truncated",
            Reason::Shape => "shape",
            Reason::UnknownName => "unknown_name",
            Reason::Vocabulary => "vocabulary",
            Reason::Scalar => "scalar_range",
            Reason::Strategy => "strategy",
            Reason::LineForm => "line_form",
            Reason::LineDisagrees => "line_disagrees",
            Reason::LineReveals => "line_reveals",
        }
    }
}

/// One problem of a reply: its reason and what the correction turn tells the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub reason: Reason,
    pub text: String,
}

impl Problem {
    pub fn new(reason: Reason, text: impl Into<String>) -> Problem {
        Problem {
            reason,
            text: text.into(),
        }
    }
}

/// Candidate `{…}` spans tried in prose (a reply with more braces than that is not JSON).
const MAX_SPANS: usize = 64;

/// Pull the JSON object out of a reply: bare, fenced (```json), after a `<think>` block, or the
/// first balanced `{...}` span of the prose that parses as an object (prose may hold braces of
/// its own before the JSON). The error says why, for the correction turn.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let mut t = text.trim();
    if let Some(end) = t.rfind("</think>") {
        t = t[end + "</think>".len()..].trim();
    }
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Ok(v);
    }
    // fenced blocks
    let mut rest = t;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        if let Ok(v) = serde_json::from_str::<Value>(body[..end].trim()) {
            return Ok(v);
        }
        rest = &body[end + 3..];
    }
    // balanced spans, from each opening brace in turn
    let mut first_failure: Option<(String, String)> = None;
    let mut spans = 0;
    for (start, _) in t.match_indices('{') {
        let Some(end) = balanced_end(t.as_bytes(), start) else {
            // an object that never closes: the reply was cut off
            return Err("回复中的 JSON 不完整（可能被截断），请输出更紧凑的完整 JSON".into());
        };
        match serde_json::from_str::<Value>(&t[start..=end]) {
            Ok(v @ Value::Object(_)) => return Ok(v),
            Ok(_) => {}
            Err(e) => {
                if first_failure.is_none() {
                    let shown: String = t[start..=end].chars().take(40).collect();
                    let msg = e.to_string();
                    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                    first_failure = Some((shown, msg));
                }
            }
        }
        spans += 1;
        if spans >= MAX_SPANS {
            break;
        }
    }
    match first_failure {
        Some((shown, msg)) => Err(format!(
            "回复中找不到可解析的 JSON 对象：花括号内的「{shown}」不是 JSON（{msg}）。只输出一个 JSON 对象，JSON 前后不要有含花括号的文字"
        )),
        None => Err("回复中没有 JSON 对象".into()),
    }
}

/// The index of the brace closing the one at `start` (strings and escapes respected).
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
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
    gtb_validate::food::canonical(&c.foods, s).ok_or_else(|| {
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

/// Text that must never be in an opening line: field names, markup, links, role markers and
/// instructions aimed at a model.
const FORBIDDEN: [&str; 24] = [
    "must_visit",
    "reject_visit",
    "avg_budget",
    "global_constraints",
    "city_specific",
    "category_pref",
    "prefer_eat",
    "avoid_eat",
    "must_eat",
    "reject_eat",
    "hotel_preference",
    "```",
    "http://",
    "https://",
    "<|",
    "</",
    "system",
    "assistant",
    "ignore",
    "prompt",
    "忽略",
    "系统提示",
    "指令",
    "API",
];

/// The text of each planned member's opening line in a reply's `initial_messages` (an object
/// keyed by user, or a list of `{role, content}`).
fn line_of(v: Option<&Value>, user: &str) -> Option<String> {
    match v? {
        Value::Object(m) => m.get(user).and_then(|x| {
            x.as_str()
                .map(String::from)
                .or_else(|| x.get("content").and_then(|c| c.as_str()).map(String::from))
        }),
        Value::Array(a) => a
            .iter()
            .find(|x| x.get("role").and_then(|r| r.as_str()) == Some(user))
            .and_then(|x| x.get("content"))
            .and_then(|c| c.as_str())
            .map(String::from),
        _ => None,
    }
}

pub use crate::schema::LINE_CHARS;

/// The form of a line: length, Chinese, nothing forbidden.
fn line_form(user: &str, text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut bad = |s: String| problems.push(Problem::new(Reason::LineForm, s));
    let chars = text.chars().count();
    let cjk = text
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    let lower = text.to_lowercase();
    if !LINE_CHARS.contains(&chars) {
        bad(format!(
            "{user} 的开场白长度为 {chars} 字，应为 1–4 句、400 字以内"
        ));
    } else if cjk * 2 < chars {
        bad(format!("{user} 的开场白应为中文口语"));
    }
    if let Some(f) = FORBIDDEN.iter().find(|f| lower.contains(&f.to_lowercase())) {
        bad(format!(
            "{user} 的开场白含有不允许的内容「{f}」：只说出偏好，不要字段名、链接、标记或指令"
        ));
    }
    if text.contains("User") {
        bad(format!("{user} 的开场白不要提 User 编号"));
    }
    problems
}

/// Screen the opening lines of `members`: their form, and the validator's line check against
/// their own tables (`tables`: theirs and any other of the task, whose values are recognised).
fn check_messages(
    p: &TaskPrompt,
    members: &[Member],
    tables: &[(String, Preference)],
    v: Option<&Value>,
) -> Result<Vec<Message>, Vec<Problem>> {
    use gtb_validate::lines::{LineIssue, Terms, check_line};
    let own = Terms::tables(tables.iter().map(|(_, t)| t));
    let mut sets: Vec<&Terms> = vec![Terms::vocabularies(), &own];
    sets.extend(p.cities.iter().map(|c| &c.terms));
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for m in members {
        let Some(text) = line_of(v, &m.user) else {
            problems.push(Problem::new(
                Reason::LineForm,
                format!("缺少 {} 的开场白", m.user),
            ));
            continue;
        };
        let text = text.trim().to_string();
        problems.extend(line_form(&m.user, &text));
        if let Some((_, t)) = tables.iter().find(|(u, _)| *u == m.user) {
            for issue in check_line(&sets, t, &text) {
                let reason = match issue {
                    LineIssue::Nothing | LineIssue::TooMany { .. } => Reason::LineReveals,
                    _ => Reason::LineDisagrees,
                };
                problems.push(Problem::new(
                    reason,
                    format!("{} 的{}", m.user, issue.message_zh()),
                ));
            }
        }
        out.push(Message {
            role: m.user.clone(),
            content: text,
        });
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// Resolve what the validator's fixes would change in one member's table, so that the table
/// the reply is checked with is the one the build keeps (and template lines are made from it):
/// an item named in two tiers stays in the stronger (`contradictions::resolve`), and a reject
/// of the scenic area around a sight the member must visit goes. Returns how many were resolved.
fn resolve(p: &TaskPrompt, t: &mut Preference) -> usize {
    let mut n = gtb_validate::contradictions::resolve(t).len();
    for c in &p.cities {
        let Some(cp) = t.city_specific_preferences.get_mut(&c.name) else {
            continue;
        };
        let a = &mut cp.attractions;
        let must = a.must_visit.clone();
        let before = a.reject_visit.len();
        a.reject_visit
            .retain(|r| !must.iter().any(|m| m != r && c.covers(r, m)));
        n += before - a.reject_visit.len();
    }
    n
}

/// The archetype's strategies, the validator's `strategies` gate (copies are exact by
/// construction; a member must not copy another's city preferences).
fn strategy_gate(p: &TaskPrompt, tables: &[(String, Preference)]) -> Vec<Problem> {
    let refs: Vec<(&str, &Preference)> = tables.iter().map(|(u, t)| (u.as_str(), t)).collect();
    gtb_validate::strategies::issues(&p.archetype, &refs)
        .iter()
        .map(|i| Problem::new(Reason::Strategy, i.message_zh()))
        .collect()
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
    let messages = check_messages(p, members, &tables, msgs);
    let tables = tables.split_off(accepted.len());
    Ok(Parsed {
        tables,
        messages,
        resolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_think_blocks_and_prose() {
        assert_eq!(extract_json("{\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(
            extract_json("<think>嗯 {x}</think>\n{\"a\": 2}").unwrap()["a"],
            2
        );
        assert_eq!(
            extract_json("好的：\n```json\n{\"a\": 3}\n```\n").unwrap()["a"],
            3
        );
        assert_eq!(
            extract_json("结果如下 {\"a\": {\"b\": \"}\"}} 完毕").unwrap()["a"]["b"],
            "}"
        );
        assert!(extract_json("{\"a\": [1, 2").unwrap_err().contains("截断"));
        assert!(extract_json("没有").is_err());
    }

    #[test]
    fn issue13_15_prose_with_braces_before_unfenced_json() {
        let reply = "好的，我会按 {成员} 的顺序输出，格式为 {preferences, initial_messages}：\n{\"preferences\": {\"User1\": {}}, \"initial_messages\": {}}";
        let v = extract_json(reply).unwrap();
        assert!(v["preferences"]["User1"].is_object(), "{v}");
        // nothing parses: the correction turn is told which braces and why
        let e = extract_json("注意 {成员} 与 {键名}").unwrap_err();
        assert!(
            e.contains("{成员}") && e.contains("不是 JSON") && e.contains("花括号"),
            "{e}"
        );
    }
}
