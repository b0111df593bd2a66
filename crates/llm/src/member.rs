//! Per-member generation, the paper's way (`llm.granularity = "member"`, the default): a task's
//! members are asked in generation order, one request each. Every request opens with the
//! task's grounding (system message, then the grounding JSON: group, candidates, transport),
//! byte-identical for every member of the task, so a server that reuses prompt prefixes
//! (llama.cpp `cache_prompt`, vLLM automatic prefix caching, the hosted caches) computes it
//! once; then comes the member's own part: role, profile, strategy, the fields its strategy
//! inherits (filled in by gtb from the accepted reference table, shown as fixed) and what the
//! group's clash pattern asks of it. A member never sees another member's tables, except the
//! one item a clash asks it to reject or insist on.

use crate::grounding::Member;
use crate::prompt::TaskPrompt;
use gtb_core::config::Conflicts;
use gtb_core::rng::item_rng;
use gtb_core::task::Preference;
use gtb_generate::TaskContext;
use gtb_resources::Strategy;
use rand::Rng;
use serde_json::{Map, Value, json};

/// Which field of two members the clash pattern sets against each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClashKind {
    /// a sight one must visit is one the other rejects
    Sight,
    /// a food one must eat is one the other rejects
    Food,
    /// a mode one must take is one the other rejects
    Mode,
}

/// One clash of the group's sampled pattern (advisory: asked for, not enforced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    pub kind: ClashKind,
    /// index (in generation order) of the member who insists
    pub must: usize,
    /// index of the member who rejects
    pub reject: usize,
    /// the city of a sight or food clash
    pub city: Option<String>,
}

impl Clash {
    /// The clash as the whole-group prompt states it (`conflict_plan`).
    pub fn text(&self, members: &[Member]) -> String {
        let (a, b) = (&members[self.must].user, &members[self.reject].user);
        let city = self.city.as_deref().unwrap_or_default();
        match self.kind {
            ClashKind::Sight => {
                format!("{a} 在{city}的 must_visit 中的一个景点，正是 {b} 在{city}的 reject_visit")
            }
            ClashKind::Food => {
                format!("{a} 在{city}的 must_eat 中的一项，正是 {b} 在{city}的 reject_eat")
            }
            ClashKind::Mode => {
                format!("{a} 的 transport.must 中的一种方式，正是 {b} 的 transport.reject")
            }
        }
    }

    /// What the clash asks of member `i`, asked after the `accepted` tables: the member asked
    /// later of the two is told the item of the other's table to reject or insist on (the
    /// earlier one is asked nothing: its choice is free).
    fn ask(
        &self,
        members: &[Member],
        i: usize,
        accepted: &[(String, Preference)],
    ) -> Option<String> {
        let other = match i {
            _ if i == self.must && self.reject < i => self.reject,
            _ if i == self.reject && self.must < i => self.must,
            _ => return None,
        };
        let user = &members[other].user;
        let t = &accepted.iter().find(|(u, _)| u == user)?.1;
        let city = self.city.as_deref().unwrap_or_default();
        let cp = t.city_specific_preferences.get(city);
        let (items, field, theirs) = match (self.kind, i == self.reject) {
            (ClashKind::Sight, true) => {
                (cp?.attractions.must_visit.clone(), "reject_visit", "必去")
            }
            (ClashKind::Sight, false) => {
                (cp?.attractions.reject_visit.clone(), "must_visit", "拒绝")
            }
            (ClashKind::Food, true) => (cp?.food.must_eat.clone(), "reject_eat", "必吃"),
            (ClashKind::Food, false) => (cp?.food.reject_eat.clone(), "must_eat", "拒吃"),
            (ClashKind::Mode, true) => (
                t.global_constraints.transport.must.clone(),
                "transport.reject",
                "必选",
            ),
            (ClashKind::Mode, false) => (
                t.global_constraints.transport.reject.clone(),
                "transport.must",
                "拒绝",
            ),
        };
        let first = items.first()?;
        let place = if self.kind == ClashKind::Mode {
            String::new()
        } else {
            format!("在{city}的 ")
        };
        Some(format!(
            "你{place}{field} 要有 {user} {theirs}的「{first}」"
        ))
    }
}

/// The group's clash pattern, drawn at the configured rates from the task's own stream (the
/// same draws in both granularities).
pub fn conflict_plan(ctx: &TaskContext, members: &[Member], c: &Conflicts) -> Vec<Clash> {
    let mut rng = item_rng(ctx.seed, "llm-conflicts", &ctx.skeleton.task_id);
    let mut out = Vec::new();
    let n = members.len();
    if n < 2 {
        return out;
    }
    let pair = |rng: &mut rand_chacha::ChaCha8Rng, n: usize| {
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
    for (rate, kind) in [(c.attractions, ClashKind::Sight), (c.food, ClashKind::Food)] {
        if rng.gen_bool(rate) {
            let (must, reject) = pair(&mut rng, n);
            let city = Some(city_of(&mut rng));
            out.push(Clash {
                kind,
                must,
                reject,
                city,
            });
        }
    }
    if rng.gen_bool(c.transport) {
        let units: Vec<usize> = (0..n)
            .filter(|&i| members[i].strategy == Strategy::Independent)
            .collect();
        if units.len() >= 2 {
            let (i, j) = pair(&mut rng, units.len());
            out.push(Clash {
                kind: ClashKind::Mode,
                must: units[i],
                reject: units[j],
                city: None,
            });
        }
    }
    out
}

/// The fields member `m` inherits from its accepted reference table, as the prompt shows them
/// (fixed: gtb fills them in): copy_moderate the global constraints; copy_minor also, per
/// city, category_pref, prefer_eat and avoid_eat.
fn fixed(m: &Member, accepted: &[(String, Preference)]) -> Option<Value> {
    let r = m.reference.as_ref()?;
    let t = &accepted.iter().find(|(u, _)| u == r)?.1;
    let globals = serde_json::to_value(&t.global_constraints).expect("a table");
    match m.strategy {
        Strategy::CopyModerate => Some(json!({ "global_constraints": globals })),
        Strategy::CopyMinor => {
            let cities: Map<String, Value> = t
                .city_specific_preferences
                .iter()
                .map(|(c, cp)| {
                    let v = json!({
                        "category_pref": cp.attractions.category_pref,
                        "prefer_eat": cp.food.prefer_eat,
                        "avoid_eat": cp.food.avoid_eat,
                    });
                    (c.clone(), v)
                })
                .collect();
            Some(json!({ "global_constraints": globals, "city_specific_preferences": cities }))
        }
        _ => None,
    }
}

/// The first turn of member `i` (in generation order) after the `accepted` tables: the task's
/// grounding (system, grounding JSON: the prefix every member of the task shares), then the
/// member's own part as a second user message.
pub fn first_turn(p: &TaskPrompt, i: usize, accepted: &[(String, Preference)]) -> Vec<Value> {
    let m = &p.members[i];
    let mut own = Map::new();
    own.insert("member".into(), json!(m.user));
    if let Some(Value::Object(info)) = p.member_info.get(i) {
        for k in ["role", "profile", "strategy", "reference", "compromisable"] {
            if let Some(v) = info.get(k) {
                own.insert(k.into(), v.clone());
            }
        }
    }
    if let Some(f) = fixed(m, accepted) {
        own.insert("fixed".into(), f);
    }
    let clash: Vec<String> = p
        .clashes
        .iter()
        .filter_map(|c| c.ask(&p.members, i, accepted))
        .collect();
    if !clash.is_empty() {
        own.insert("clash".into(), json!(clash));
    }
    vec![
        json!({"role": "system", "content": p.system}),
        json!({"role": "user", "content": p.user}),
        json!({"role": "user", "content": Value::Object(own).to_string()}),
    ]
}

/// Estimated tokens a member's own part adds to the task's grounding (the largest: a copy_minor
/// member's fixed fields over three cities), reserved when a prompt is fitted to the window.
pub const MEMBER_PART_TOKENS: u32 = 600;
