//! Prompts: the system message (from `prompts/`), the user message (one JSON object with
//! everything the model may use: the task's grounding), the correction turns, and the prompt of
//! a task attempt fitted to the server's window. The schema is `schema`, the candidates a reply
//! is checked against `grounding` and `city`.

use crate::city::city_grounding;
pub use crate::grounding::{CityCandidates, CityData, Member, Memo, min_budget};
use crate::schema::{lines_schema, object, schema};
use gtb_core::config::Conflicts;
use gtb_generate::TaskContext;
use gtb_resources::{Strategy, vocab};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Bump when the meaning of the prompts or of the context changes (the file digest is added).
pub const PROMPTS_VERSION: &str = "prompts-v5";

pub const SYSTEM: &str = include_str!("../../../prompts/system.md");
pub const STRATEGY_INDEPENDENT: &str = include_str!("../../../prompts/strategy_independent.md");
pub const STRATEGY_COPY_MODERATE: &str = include_str!("../../../prompts/strategy_copy_moderate.md");
pub const STRATEGY_COPY_MINOR: &str = include_str!("../../../prompts/strategy_copy_minor.md");
pub const OPENING_MESSAGES: &str = include_str!("../../../prompts/opening_messages.md");
pub const CORRECTION: &str = include_str!("../../../prompts/correction.md");
pub const LINES_ONLY: &str = include_str!("../../../prompts/lines_only.md");
pub const OUTPUT_TASK: &str = include_str!("../../../prompts/output_task.md");
pub const OUTPUT_MEMBER: &str = include_str!("../../../prompts/output_member.md");

/// What one request asks for: the whole group's tables, or one member's (the paper's way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    Task,
    Member,
}

impl Granularity {
    /// `llm.granularity` read: `member` or `task`.
    pub fn parse(s: &str) -> Option<Granularity> {
        match s {
            "member" => Some(Granularity::Member),
            "task" => Some(Granularity::Task),
            _ => None,
        }
    }
    /// The reply's room kept free when a prompt is fitted to the server's window: the
    /// configured completion budget for a whole group's reply; for one member's reply (one
    /// table of up to three cities and a line, a few hundred tokens) at most
    /// `MEMBER_REPLY_TOKENS`, so that a long grounding is not cut for room no reply uses.
    /// Requests are still sent the configured budget, cut to what the window leaves.
    pub fn reply_reserve(self, max_tokens: u32) -> u32 {
        match self {
            Granularity::Task => max_tokens,
            Granularity::Member => max_tokens.min(MEMBER_REPLY_TOKENS),
        }
    }
}

/// The completion room a member's reply is given when prompts are fitted (see
/// `Granularity::reply_reserve`).
pub const MEMBER_REPLY_TOKENS: u32 = 1536;

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
        OUTPUT_TASK,
        OUTPUT_MEMBER,
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

/// Everything about one request that does not depend on the turn.
pub struct TaskPrompt {
    pub system: String,
    pub user: String,
    /// the JSON schema of the reply, as sent
    pub schema_json: String,
    pub members: Vec<Member>,
    pub cities: Vec<Arc<CityData>>,
    pub min_budget: u32,
    /// the cheapest trip under any firm members' transport wishes (`trip_gate`)
    pub trip: gtb_generate::trip::TripFloor,
    /// the task's archetype (its strategies are checked on the reply)
    pub archetype: gtb_resources::Archetype,
    /// the plausible ranges of the scalars (`[validate]`)
    pub ranges: gtb_core::config::Validate,
    /// attraction candidates offered per city (fewer than configured when fitted to the window)
    pub attractions_offered: usize,
    /// estimated tokens of the system and user messages
    pub tokens: u32,
    /// one request for the group, or one per member
    pub granularity: Granularity,
    /// each member as the grounding shows it (role, profile, strategy, ...), generation order
    pub member_info: Vec<Value>,
    /// the group's clash pattern
    pub clashes: Vec<crate::member::Clash>,
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
    pub granularity: Granularity,
}

/// The fewest attraction candidates a city is offered when a prompt is fitted to the window
/// (a member names up to two it must visit and one it rejects).
const MIN_ATTRACTIONS: usize = 4;

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

fn strategy_section(s: Strategy) -> &'static str {
    match s {
        Strategy::Independent => STRATEGY_INDEPENDENT,
        Strategy::CopyModerate => STRATEGY_COPY_MODERATE,
        Strategy::CopyMinor => STRATEGY_COPY_MINOR,
        Strategy::Skip => "",
    }
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
            firm: !ctx.skeleton.compromise_pattern.contains(&s.user),
        })
        .collect();
    let cities: Vec<Arc<CityData>> = ctx
        .cities
        .iter()
        .map(|&c| city_grounding(ctx, memo, c, max_attractions))
        .collect();
    let trip = crate::grounding::trip_floor(ctx, set.validate.min_meal_cost);
    let min_budget = min_budget(ctx, &trip);
    let clashes = crate::member::conflict_plan(ctx, &members, set.conflicts);
    let plan = (set.granularity == Granularity::Task)
        .then(|| clashes.iter().map(|c| c.text(&members)).collect());
    let user = context_json(ctx, &members, &cities, min_budget, plan, feedback);
    let system = system_message(set.validate, &members, set.granularity);
    let schema_json = schema(&members, &cities, min_budget, set.validate);
    let own = match set.granularity {
        Granularity::Task => 0,
        Granularity::Member => crate::member::MEMBER_PART_TOKENS,
    };
    let tokens =
        crate::window::estimate_tokens(&system) + crate::window::estimate_tokens(&user) + own;
    TaskPrompt {
        granularity: set.granularity,
        member_info: members.iter().map(|m| member_json(ctx, m)).collect(),
        clashes,
        system,
        user,
        schema_json,
        members,
        cities,
        min_budget,
        trip,
        archetype: ctx.archetype.clone(),
        ranges: set.validate.clone(),
        attractions_offered: max_attractions,
        tokens,
    }
}

/// The user message: the grounding context as one JSON object.
fn context_json(
    ctx: &TaskContext,
    members: &[Member],
    cities: &[Arc<CityData>],
    min_budget: u32,
    conflict_plan: Option<Vec<String>>,
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
        conflict_plan,
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
        "compromisable": !m.firm,
        "profile": format!("{}岁，{}，{}，{}，{}", p.age, p.gender, p.marital, p.parenting, p.home_province),
    })
}

/// The system message: the base text (with the output of a request of this granularity), the
/// sections of the strategies present, the opening lines. The same for every member of a task.
fn system_message(
    v: &gtb_core::config::Validate,
    members: &[Member],
    granularity: Granularity,
) -> String {
    let output = match granularity {
        Granularity::Task => OUTPUT_TASK,
        Granularity::Member => OUTPUT_MEMBER,
    };
    let mut system = system_text(v).replace("{output}", output.trim_end());
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
    /// the clash pattern (whole-group requests; a member's own part says its share)
    #[serde(skip_serializing_if = "Option::is_none")]
    conflict_plan: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_attempt_feedback: Option<&'a str>,
}

/// A correction turn that asks for the opening lines alone, once a reply's tables passed: the
/// accepted tables, the roles and the problems, without the grounding the tables were chosen
/// from (the lines speak of the tables only). Its messages and schema.
pub fn lines_request(
    p: &TaskPrompt,
    members: &[Member],
    tables: &[(String, gtb_core::task::Preference)],
    problems: &[String],
) -> (Vec<Value>, String) {
    let roles: Map<String, Value> = members
        .iter()
        .filter_map(|m| {
            let slot = p.archetype.slot(&m.user)?;
            Some((m.user.clone(), Value::String(slot.role.clone())))
        })
        .collect();
    let prefs: Map<String, Value> = tables
        .iter()
        .filter(|(u, _)| members.iter().any(|m| m.user == *u))
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
    let schema = object(vec![("initial_messages", lines_schema(members))]);
    (
        messages,
        serde_json::to_string(&schema).expect("serialises"),
    )
}
