//! Prompts and grounding: the system message (from `prompts/`), the user message (one JSON
//! object with everything the model may use), the per-task JSON schema (closed vocabularies as
//! enums, list sizes as bounds) and the candidate sets the reply is checked against.

use gtb_core::config::Conflicts;
use gtb_core::rng::item_rng;
use gtb_generate::TaskContext;
use gtb_resources::{Attraction, CityId, FoodKind, Strategy, parents, vocab};
use gtb_validate::names::CityNames;
use indexmap::IndexMap;
use rand::Rng;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Bump when the meaning of the prompts or of the context changes (the file digest is added).
pub const PROMPTS_VERSION: &str = "prompts-v4";

pub const SYSTEM: &str = include_str!("../../../prompts/system.md");
pub const STRATEGY_INDEPENDENT: &str = include_str!("../../../prompts/strategy_independent.md");
pub const STRATEGY_COPY_MODERATE: &str = include_str!("../../../prompts/strategy_copy_moderate.md");
pub const STRATEGY_COPY_MINOR: &str = include_str!("../../../prompts/strategy_copy_minor.md");
pub const OPENING_MESSAGES: &str = include_str!("../../../prompts/opening_messages.md");
pub const CORRECTION: &str = include_str!("../../../prompts/correction.md");
pub const LINES_ONLY: &str = include_str!("../../../prompts/lines_only.md");

/// `prompts-v1+<digest of every prompt file>`: changes whenever a prompt does.
pub fn prompts_version() -> String {
    let mut h = blake3::Hasher::new();
    for p in [
        SYSTEM,
        STRATEGY_INDEPENDENT,
        STRATEGY_COPY_MODERATE,
        STRATEGY_COPY_MINOR,
        OPENING_MESSAGES,
        CORRECTION,
        LINES_ONLY,
    ] {
        h.update(p.as_bytes());
        h.update(b"\0");
    }
    format!("{PROMPTS_VERSION}+{}", &h.finalize().to_hex()[..12])
}

/// One transport option of a leg as the model sees it: a row [mode, fare, minutes], and for an
/// option with changes of train also [.., changes, "where、where"] (rows, not objects: the keys
/// of every option would cost more tokens than its values).
fn transport_option(o: &gtb_resources::TransportOption) -> Value {
    let mut row = vec![json!(o.mode), json!(o.fare), json!(o.minutes)];
    if !o.direct() {
        row.push(json!(o.transfers));
        row.push(json!(o.via.join("、")));
    }
    Value::Array(row)
}

/// The correction turn after a rejected reply.
pub fn correction(problems: &[String]) -> String {
    let list: Vec<String> = problems
        .iter()
        .take(20)
        .enumerate()
        .map(|(i, p)| format!("{}. {p}", i + 1))
        .collect();
    let mut text = list.join("\n");
    if problems.len() > 20 {
        text.push_str(&format!("\n（另有 {} 个问题未列出）", problems.len() - 20));
    }
    CORRECTION.trim_end().replace("{problems}", &text)
}

/// One planned member as the prompt and the parser see it.
#[derive(Debug, Clone)]
pub struct Member {
    pub user: String,
    pub strategy: Strategy,
    pub reference: Option<String>,
}

/// Grounding of one city: what a reply may name there.
#[derive(Debug, Clone, Default)]
pub struct CityCandidates {
    pub name: String,
    /// offered attraction names (open during the trip, most popular first)
    pub offered: Vec<String>,
    /// every attraction of the city: name -> open during the trip
    pub inventory: HashMap<String, bool>,
    /// attraction categories present in the city (excluded ones dropped)
    pub categories: Vec<String>,
    /// food values offered: categories of the city's entries and its local dishes
    pub food: Vec<String>,
    /// the city's food rows: what a reply's food values are checked against (`validate::food`)
    pub foods: Vec<gtb_resources::Food>,
    /// the city's attraction names and aliases, to resolve other spellings of a candidate
    pub names: CityNames,
    /// attraction name -> the scenic areas it lies in (a reject of one covers it)
    pub areas: HashMap<String, Vec<String>>,
}

impl CityCandidates {
    /// The inventory attraction a reply's name stands for, and whether it is open during the
    /// trip: the name itself, or another spelling or name of it (the validator's resolver:
    /// normalised form, alias table, official long form).
    pub fn attraction(&self, name: &str) -> Option<(String, bool)> {
        if let Some((k, open)) = self.inventory.get_key_value(name) {
            return Some((k.clone(), *open));
        }
        let m = self.names.resolve(name)?;
        let (k, _) = m.resolved()?;
        self.inventory
            .get_key_value(k)
            .map(|(k, open)| (k.clone(), *open))
    }
    /// Whether rejecting `area` rejects `spot` too: the same place, or an area it lies in.
    pub fn covers(&self, area: &str, spot: &str) -> bool {
        area == spot
            || self
                .areas
                .get(spot)
                .is_some_and(|a| a.iter().any(|x| x == area))
    }
}

/// The grounding of one city for one set of open attractions, shared by every task that
/// visits it then: candidates, their context JSON and their schema definitions, built once.
pub struct CityData {
    pub id: CityId,
    pub cand: CityCandidates,
    /// the city's entry of `city_candidates`
    pub json: Box<RawValue>,
    /// the city's `$defs` members (`"poi<id>":{…},…`), serialised
    pub defs: String,
    /// what its opening lines are read with (`gtb_validate::lines`)
    pub terms: gtb_validate::lines::Terms,
}

impl std::ops::Deref for CityData {
    type Target = CityCandidates;
    fn deref(&self) -> &CityCandidates {
        &self.cand
    }
}

/// Per-(city, open attractions) grounding, reused across tasks and batches.
pub type Memo = Mutex<HashMap<(CityId, [u8; 16]), Arc<CityData>>>;

/// Everything about one request that does not depend on the turn.
pub struct TaskPrompt {
    pub system: String,
    pub user: String,
    /// the JSON schema of the reply, as sent
    pub schema_json: String,
    pub members: Vec<Member>,
    pub cities: Vec<Arc<CityData>>,
    pub min_budget: u32,
    /// the task's archetype (its strategies are checked on the reply)
    pub archetype: gtb_resources::Archetype,
    /// the plausible ranges of the scalars (`[validate]`)
    pub ranges: gtb_core::config::Validate,
    /// attraction candidates offered per city (fewer than configured when fitted to the window)
    pub attractions_offered: usize,
    /// estimated tokens of the system and user messages
    pub tokens: u32,
}

/// What prompts are built with, besides the task.
pub struct Settings<'a> {
    /// attraction candidates offered per city at most
    pub max_attractions: usize,
    pub conflicts: &'a Conflicts,
    /// `[validate]`: the meal cost of the budget floor and the scalar ranges
    pub validate: &'a gtb_core::config::Validate,
    /// the server's context window and the configured completion budget, when known
    pub window: Option<(&'a crate::window::Window, u32)>,
}

/// The fewest attraction candidates a city is offered when a prompt is fitted to the window
/// (a member names up to two it must visit and one it rejects).
const MIN_ATTRACTIONS: usize = 4;

/// The fewest food values a city is offered when a prompt is fitted to the window.
const MIN_FOOD: usize = 8;

/// Build the prompt of a task attempt, fitted to the server's context window when it is
/// known: with fewer attraction candidates (and food values) per city until the messages
/// leave the reply its room. `Err` says why no prompt fits.
pub fn build(
    ctx: &TaskContext,
    memo: &Memo,
    set: &Settings,
    feedback: Option<&str>,
) -> Result<TaskPrompt, String> {
    let mut n = set.max_attractions.max(1);
    loop {
        let p = build_with(ctx, memo, set, n, feedback);
        let Some((w, max_tokens)) = set.window else {
            return Ok(p);
        };
        if w.fits(max_tokens, p.tokens) {
            return Ok(p);
        }
        let budget = w.prompt_budget(max_tokens);
        if n <= MIN_ATTRACTIONS {
            return Err(format!(
                "the prompt of {} needs about {} tokens with {n} attraction candidates per city, but the server's context of {} tokens ({}) leaves {budget} once the reply's {} are reserved: start the server with a larger context (llama.cpp: -c is split over the -np slots), or lower --max-tokens",
                ctx.skeleton.task_id,
                p.tokens,
                w.tokens,
                w.source,
                w.reply_reserve(max_tokens)
            ));
        }
        // the candidates are most of what can go: scale them to the room, a little under
        let scaled = n * budget as usize / p.tokens.max(1) as usize * 9 / 10;
        n = scaled.clamp(MIN_ATTRACTIONS, n - 1);
    }
}

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

/// The lowest budget that covers the cheapest shared trip (the validator's certificate with no
/// mode rejected), rounded up to 100.
pub fn min_budget(ctx: &TaskContext, min_meal_cost: u32) -> u32 {
    let res = ctx.res;
    let legs = res.route_legs(ctx.hub, &ctx.cities);
    let transport: u32 = legs
        .iter()
        .map(|&(a, b)| res.cheapest_fare(a, b, None).unwrap_or(0))
        .sum();
    let (hotel, meals) =
        gtb_validate::stay_floor(res, &ctx.cities, ctx.skeleton.days, min_meal_cost);
    let need = transport + hotel + meals;
    need.div_ceil(100) * 100
}

fn strategy_section(s: Strategy) -> &'static str {
    match s {
        Strategy::Independent => STRATEGY_INDEPENDENT,
        Strategy::CopyModerate => STRATEGY_COPY_MODERATE,
        Strategy::CopyMinor => STRATEGY_COPY_MINOR,
        Strategy::Skip => "",
    }
}

/// An advisory conflict plan drawn at the configured rates (prompt text only; not enforced).
fn conflict_plan(ctx: &TaskContext, members: &[Member], c: &Conflicts) -> Vec<String> {
    let mut rng = item_rng(ctx.seed, "llm-conflicts", &ctx.skeleton.task_id);
    let mut out = Vec::new();
    let n = members.len();
    if n < 2 {
        return out;
    }
    let pair = |rng: &mut rand_chacha::ChaCha8Rng| {
        let i = rng.gen_range(0..n);
        let mut j = rng.gen_range(0..n - 1);
        if j >= i {
            j += 1;
        }
        (i, j)
    };
    let city_of = |rng: &mut rand_chacha::ChaCha8Rng| {
        ctx.skeleton.cities[rng.gen_range(0..ctx.skeleton.cities.len())].clone()
    };
    if rng.gen_bool(c.attractions) {
        let (i, j) = pair(&mut rng);
        let city = city_of(&mut rng);
        out.push(format!(
            "{} 在{city}的 must_visit 中的一个景点，正是 {} 在{city}的 reject_visit",
            members[i].user, members[j].user
        ));
    }
    if rng.gen_bool(c.food) {
        let (i, j) = pair(&mut rng);
        let city = city_of(&mut rng);
        out.push(format!(
            "{} 在{city}的 must_eat 中的一项，正是 {} 在{city}的 reject_eat",
            members[i].user, members[j].user
        ));
    }
    if rng.gen_bool(c.transport) {
        let units: Vec<&Member> = members
            .iter()
            .filter(|m| m.strategy == Strategy::Independent)
            .collect();
        if units.len() >= 2 {
            let i = rng.gen_range(0..units.len());
            let mut j = rng.gen_range(0..units.len() - 1);
            if j >= i {
                j += 1;
            }
            out.push(format!(
                "{} 的 transport.must 中的一种方式，正是 {} 的 transport.reject",
                units[i].user, units[j].user
            ));
        }
    }
    out
}

/// Build the prompt, schema and candidate sets of one task attempt.
fn build_with(
    ctx: &TaskContext,
    memo: &Memo,
    set: &Settings,
    max_attractions: usize,
    feedback: Option<&str>,
) -> TaskPrompt {
    let members: Vec<Member> = ctx
        .archetype
        .planned_slots()
        .map(|s| Member {
            user: s.user.clone(),
            strategy: s.strategy,
            reference: s.reference.clone(),
        })
        .collect();
    let cities: Vec<Arc<CityData>> = ctx
        .cities
        .iter()
        .map(|&c| city_grounding(ctx, memo, c, max_attractions))
        .collect();
    let min_budget = min_budget(ctx, set.validate.min_meal_cost);
    let user = context_json(ctx, set, &members, &cities, min_budget, feedback);
    let system = system_message(set.validate, &members);
    let schema_json = schema(&members, &cities, min_budget, set.validate);
    let tokens = crate::window::estimate_tokens(&system) + crate::window::estimate_tokens(&user);
    TaskPrompt {
        system,
        user,
        schema_json,
        members,
        cities,
        min_budget,
        archetype: ctx.archetype.clone(),
        ranges: set.validate.clone(),
        attractions_offered: max_attractions,
        tokens,
    }
}

/// The grounding of one city, memoised per set of attractions open during the trip.
fn city_grounding(
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

/// The user message: the grounding context as one JSON object.
fn context_json(
    ctx: &TaskContext,
    set: &Settings,
    members: &[Member],
    cities: &[Arc<CityData>],
    min_budget: u32,
    feedback: Option<&str>,
) -> String {
    let (res, a, sk) = (ctx.res, ctx.archetype, ctx.skeleton);
    let transport: Vec<Value> = res
        .route_legs(ctx.hub, &ctx.cities)
        .iter()
        .map(|&(x, y)| {
            json!({
                "from": res.city(x).name,
                "to": res.city(y).name,
                "options": res.transport(x, y).iter().map(transport_option).collect::<Vec<_>>(),
            })
        })
        .collect();
    let pace = match a.pace {
        gtb_resources::archetypes::Pace::Relaxed => "relaxed",
        gtb_resources::archetypes::Pace::Normal => "normal",
        gtb_resources::archetypes::Pace::Active => "active",
    };
    let context = Context {
        task_id: &sk.task_id,
        departure_city: &sk.departure_city,
        cities: &sk.cities,
        date: &sk.date,
        days: sk.days,
        day_phrase: gtb_core::task::day_phrase(sk.days),
        group: json!({
            "group_id": a.group_id,
            "group_name": a.group_name,
            "group_tags": a.group_tags,
            "size": a.size(),
            "pace": pace,
            "spend": a.spend,
            "dynamics": a.dynamics,
        }),
        members: members.iter().map(|m| member_json(ctx, m)).collect(),
        children_without_table: a
            .children()
            .map(|s| json!({"user": s.user, "role": s.role}))
            .collect(),
        transport,
        modes_on_every_leg: res.modes_on_all_legs(ctx.hub, &ctx.cities),
        min_budget,
        city_candidates: cities.iter().map(|d| (d.name.as_str(), &*d.json)).collect(),
        food_anywhere: vocab::FOOD_ANYWHERE,
        conflict_plan: conflict_plan(ctx, members, set.conflicts),
        previous_attempt_feedback: feedback,
    };
    serde_json::to_string(&context).expect("context serialises")
}

/// One member as the model sees it (the profile in words: fewer tokens than its keys).
fn member_json(ctx: &TaskContext, m: &Member) -> Value {
    let slot = ctx.archetype.slot(&m.user).expect("planned slot");
    let p = ctx.profile_of(&m.user);
    json!({
        "user": m.user,
        "role": slot.role,
        "strategy": m.strategy.as_str(),
        "reference": m.reference,
        "compromisable": ctx.skeleton.compromise_pattern.contains(&m.user),
        "profile": format!("{}岁，{}，{}，{}，{}", p.age, p.gender, p.marital, p.parenting, p.home_province),
    })
}

/// The system message: the base text, the sections of the strategies present, the opening
/// lines.
fn system_message(v: &gtb_core::config::Validate, members: &[Member]) -> String {
    let mut system = system_text(v);
    for s in [
        Strategy::Independent,
        Strategy::CopyModerate,
        Strategy::CopyMinor,
    ] {
        if members.iter().any(|m| m.strategy == s) {
            system.push_str("\n\n");
            system.push_str(strategy_section(s).trim_end());
        }
    }
    system.push_str("\n\n");
    system.push_str(OPENING_MESSAGES.trim_end());
    system
}

/// `system.md` with the scalar ranges of `[validate]` in place of its `{avg_budget}`,
/// `{max_poi_per_day}` and `{max_active_hours}`.
fn system_text(v: &gtb_core::config::Validate) -> String {
    use gtb_core::prefs::Scalar;
    let mut text = SYSTEM.trim_end().to_string();
    for s in Scalar::ALL {
        let r = v.scalar_range(s);
        let name = s.path().rsplit('.').next().unwrap_or_default();
        text = text.replace(
            &format!("{{{name}}}"),
            &format!("{}–{}", r.start(), r.end()),
        );
    }
    text
}

/// The user message: the grounding context, in this key order.
#[derive(Serialize)]
struct Context<'a> {
    task_id: &'a str,
    departure_city: &'a str,
    cities: &'a [String],
    date: &'a str,
    days: u32,
    day_phrase: &'a str,
    group: Value,
    members: Vec<Value>,
    children_without_table: Vec<Value>,
    transport: Vec<Value>,
    modes_on_every_leg: Vec<&'static str>,
    min_budget: u32,
    city_candidates: IndexMap<&'a str, &'a RawValue>,
    food_anywhere: &'static [&'static str],
    conflict_plan: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_attempt_feedback: Option<&'a str>,
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
    let json = obj(vec![
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
    let cand = CityCandidates {
        name,
        offered: offered.iter().map(|&i| atts[i].name.clone()).collect(),
        inventory,
        categories,
        food: food.into_iter().map(|(v, _, _)| v).collect(),
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

/// A JSON object from owned parts (`json!` would deep-copy nested values it is handed).
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

fn str_enum(values: &[String]) -> Value {
    obj(vec![
        ("type", "string".into()),
        (
            "enum",
            Value::Array(values.iter().map(|v| Value::String(v.clone())).collect()),
        ),
    ])
}

fn list(item: Value, min: usize, max: usize) -> Value {
    obj(vec![
        ("type", "array".into()),
        ("items", item),
        ("minItems", min.into()),
        ("maxItems", max.into()),
    ])
}

fn object(props: Vec<(&str, Value)>) -> Value {
    let required: Vec<Value> = props
        .iter()
        .map(|(k, _)| Value::String(k.to_string()))
        .collect();
    obj(vec![
        ("type", "object".into()),
        ("properties", obj(props)),
        ("required", Value::Array(required)),
        ("additionalProperties", false.into()),
    ])
}

fn r(name: &str) -> Value {
    obj(vec![("$ref", Value::String(format!("#/$defs/{name}")))])
}

/// The `$defs` of one city: candidate names, categories and food values as enums, and the
/// city blocks a member writes (full, or the individual fields of copy_minor).
fn city_defs(id: CityId, c: &CityCandidates) -> String {
    let names = if c.offered.is_empty() {
        c.inventory.keys().cloned().collect::<Vec<_>>()
    } else {
        c.offered.clone()
    };
    let (poi, cat, food) = (format!("poi{id}"), format!("cat{id}"), format!("food{id}"));
    let visit = |weak: bool| {
        let mut v = vec![
            ("must_visit", list(r(&poi), 1, 2)),
            ("reject_visit", list(r(&poi), 0, 1)),
        ];
        if weak {
            v.push((
                "category_pref",
                object(vec![
                    ("positive", list(r(&cat), 0, 2)),
                    ("negative", list(r(&cat), 0, 1)),
                ]),
            ));
        }
        object(v)
    };
    let food_block = |weak: bool| {
        let f = r(&food);
        if weak {
            object(vec![
                ("must_eat", list(f.clone(), 0, 2)),
                ("prefer_eat", list(f.clone(), 0, 2)),
                ("avoid_eat", list(f.clone(), 0, 1)),
                ("reject_eat", list(f, 0, 1)),
            ])
        } else {
            object(vec![
                ("must_eat", list(f.clone(), 0, 2)),
                ("reject_eat", list(f, 0, 1)),
            ])
        }
    };
    let mut m = Map::new();
    m.insert(poi.clone(), str_enum(&names));
    m.insert(cat.clone(), str_enum(&c.categories));
    // the rule of `validate::food`: the city's values, or a category found everywhere
    let mut food_enum = c.food.clone();
    for v in vocab::FOOD_ANYWHERE {
        if !food_enum.iter().any(|x| x == v) {
            food_enum.push(v.to_string());
        }
    }
    m.insert(food.clone(), str_enum(&food_enum));
    m.insert(
        format!("city{id}"),
        object(vec![
            ("attractions", visit(true)),
            ("food", food_block(true)),
        ]),
    );
    m.insert(
        format!("city{id}_minor"),
        object(vec![
            ("attractions", visit(false)),
            ("food", food_block(false)),
        ]),
    );
    let text = serde_json::to_string(&Value::Object(m)).expect("serialises");
    text[1..text.len() - 1].to_string()
}

/// The schema of the opening lines: one string per member, in slot order, within the line
/// check's length bounds.
fn lines_schema(members: &[Member]) -> Value {
    let mut by_slot: Vec<&Member> = members.iter().collect();
    by_slot.sort_by_key(|m| {
        m.user
            .trim_start_matches("User")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    let (lo, hi) = (
        crate::parse::LINE_CHARS.start(),
        crate::parse::LINE_CHARS.end(),
    );
    object(
        by_slot
            .iter()
            .map(|m| {
                (
                    m.user.as_str(),
                    json!({"type": "string", "minLength": lo, "maxLength": hi}),
                )
            })
            .collect(),
    )
}

/// A correction turn that asks for the opening lines alone, once a reply's tables passed: the
/// accepted tables, the roles and the problems, without the grounding the tables were chosen
/// from (the lines speak of the tables only). Its messages and schema.
pub fn lines_request(
    p: &TaskPrompt,
    tables: &[(String, gtb_core::task::Preference)],
    problems: &[String],
) -> (Vec<Value>, String) {
    let roles: Map<String, Value> = p
        .members
        .iter()
        .filter_map(|m| {
            let slot = p.archetype.slot(&m.user)?;
            Some((m.user.clone(), Value::String(slot.role.clone())))
        })
        .collect();
    let prefs: Map<String, Value> = tables
        .iter()
        .map(|(u, t)| (u.clone(), serde_json::to_value(t).expect("a table")))
        .collect();
    let user = json!({
        "cities": p.cities.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "roles": roles,
        "preferences": prefs,
        "problems": problems,
    });
    let system = format!(
        "{}\n\n{}",
        LINES_ONLY.trim_end(),
        OPENING_MESSAGES.trim_end()
    );
    let messages = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": user.to_string()}),
    ];
    let schema = object(vec![("initial_messages", lines_schema(&p.members))]);
    (
        messages,
        serde_json::to_string(&schema).expect("serialises"),
    )
}

/// The schema of a member's global constraints: the scalars within `[validate]`'s ranges
/// (avg_budget from `min_budget` up), list sizes as bounds.
fn globals_schema(min_budget: u32, v: &gtb_core::config::Validate) -> Value {
    use gtb_core::prefs::Scalar;
    let bounds = |s: Scalar, floor: u32| {
        let r = v.scalar_range(s);
        json!({"type": "integer", "minimum": floor.clamp(*r.start(), *r.end()), "maximum": r.end()})
    };
    object(vec![
        ("avg_budget", bounds(Scalar::AvgBudget, min_budget)),
        (
            "transport",
            object(vec![
                ("must", list(r("mode"), 0, 2)),
                ("prefer", list(r("mode"), 0, 2)),
                ("avoid", list(r("mode"), 0, 1)),
                ("reject", list(r("mode"), 0, 1)),
            ]),
        ),
        (
            "intensity",
            object(vec![
                ("max_poi_per_day", bounds(Scalar::MaxPoiPerDay, 0)),
                ("max_active_hours", bounds(Scalar::MaxActiveHours, 0)),
            ]),
        ),
        (
            "hotel_preference",
            object(vec![
                ("prefer", list(r("hotel"), 1, 3)),
                ("avoid", list(r("hotel"), 0, 1)),
            ]),
        ),
    ])
}

/// The JSON schema of a reply (as sent): closed vocabularies and candidate names as enums, list
/// sizes as bounds, and per member only the fields its strategy generates.
pub fn schema(
    members: &[Member],
    cities: &[Arc<CityData>],
    min_budget: u32,
    v: &gtb_core::config::Validate,
) -> String {
    let modes: Vec<String> = vocab::TRANSPORT_MODES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let hotels: Vec<String> = vocab::HOTEL_CATEGORIES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut defs = Map::new();
    defs.insert("mode".into(), str_enum(&modes));
    defs.insert("hotel".into(), str_enum(&hotels));
    defs.insert("globals".into(), globals_schema(min_budget, v));
    let city_block = |minor: bool| {
        let props: Vec<(&str, Value)> = cities
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    r(&if minor {
                        format!("city{}_minor", c.id)
                    } else {
                        format!("city{}", c.id)
                    }),
                )
            })
            .collect();
        object(props)
    };
    let mut prefs: Vec<(&str, Value)> = Vec::new();
    for m in members {
        let v = match m.strategy {
            Strategy::Independent => object(vec![
                ("global_constraints", r("globals")),
                ("city_specific_preferences", city_block(false)),
            ]),
            Strategy::CopyModerate => {
                object(vec![("city_specific_preferences", city_block(false))])
            }
            _ => object(vec![("city_specific_preferences", city_block(true))]),
        };
        prefs.push((m.user.as_str(), v));
    }
    let top = object(vec![
        ("preferences", object(prefs)),
        ("initial_messages", lines_schema(members)),
    ]);
    let top = serde_json::to_string(&top).expect("serialises");
    let mut defs = serde_json::to_string(&Value::Object(defs)).expect("serialises");
    defs.pop(); // the closing brace: the cities' definitions follow
    for c in cities {
        defs.push(',');
        defs.push_str(&c.defs);
    }
    defs.push('}');
    format!("{},\"$defs\":{defs}}}", &top[..top.len() - 1])
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
