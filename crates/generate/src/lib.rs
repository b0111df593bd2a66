//! Preference generation: one boundary (`PreferenceGenerator`), several generators.
//!
//! A generator turns a skeleton plus its grounding (`TaskContext`) into one preference table
//! per planned member and one opening message per member. `assemble` then builds the
//! release-format task around them; both generators' output passes the same validators.

pub mod messages;
pub mod offline;
pub mod trip;

use gtb_core::task::{
    ChildMember, Message, Metadata, Preference, Skeleton, Task, UserEntry, day_phrase,
};
use gtb_resources::{Archetype, CityId, Profile, Resources};

/// Everything a generator may look at for one task.
pub struct TaskContext<'a> {
    pub skeleton: &'a Skeleton,
    pub archetype: &'a Archetype,
    pub hub: CityId,
    pub cities: Vec<CityId>,
    /// profile per slot, User1..UserN
    pub profiles: Vec<&'a Profile>,
    pub res: &'a Resources,
    pub seed: u64,
    /// (month, day, weekday 1..7) of every day of the trip
    pub trip_days: Vec<(u32, u32, u8)>,
}

impl<'a> TaskContext<'a> {
    pub fn new(skeleton: &'a Skeleton, res: &'a Resources, seed: u64) -> Result<Self, String> {
        let archetype = res
            .archetype(&skeleton.group_id)
            .ok_or_else(|| format!("unknown group_id {}", skeleton.group_id))?;
        let hub = res
            .city_id(&skeleton.departure_city)
            .ok_or_else(|| format!("unknown departure city {}", skeleton.departure_city))?;
        let cities = skeleton
            .cities
            .iter()
            .map(|c| res.city_id(c).ok_or_else(|| format!("unknown city {c}")))
            .collect::<Result<Vec<_>, _>>()?;
        let profiles = skeleton
            .members
            .iter()
            .map(|m| {
                res.profile(&m.profile)
                    .ok_or_else(|| format!("unknown profile {}", m.profile))
            })
            .collect::<Result<Vec<_>, _>>()?;
        use chrono::Datelike;
        let start = chrono::NaiveDate::parse_from_str(&skeleton.date, "%Y-%m-%d")
            .map_err(|e| format!("date {:?}: {e}", skeleton.date))?;
        let trip_days = (0..skeleton.days as i64)
            .map(|k| start + chrono::Duration::days(k))
            .map(|d| (d.month(), d.day(), d.weekday().number_from_monday() as u8))
            .collect();
        Ok(TaskContext {
            skeleton,
            archetype,
            hub,
            cities,
            profiles,
            res,
            seed,
            trip_days,
        })
    }
    /// Whether an attraction is open on at least one day of the trip (unknown hours count as open).
    pub fn open_during_trip(&self, a: &gtb_resources::Attraction) -> bool {
        a.hours
            .as_ref()
            .is_none_or(|h| self.trip_days.iter().any(|&(m, d, w)| h.open_on(m, d, w)))
    }
    pub fn profile_of(&self, user: &str) -> &'a Profile {
        let i = self
            .skeleton
            .members
            .iter()
            .position(|m| m.user == user)
            .expect("slot exists");
        self.profiles[i]
    }
}

/// A generator's answer for one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// (user, table) in generation order
    pub tables: Vec<(String, Preference)>,
    /// opening messages, keyed by user
    pub messages: Vec<Message>,
}

/// Why a generation attempt failed (the validator's message, a parse error ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenError(pub String);

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The boundary between producing preference tables and everything after.
pub trait PreferenceGenerator: Sync {
    /// Short name recorded in the manifest.
    fn name(&self) -> &str;
    /// Version of prompts / rules; part of the generate stage's fingerprint.
    fn version(&self) -> String;
    /// Generate attempt `attempt` (0-based) of a task. `feedback` carries the validator's
    /// complaints about the previous attempt.
    fn generate(
        &self,
        ctx: &TaskContext,
        attempt: u32,
        feedback: Option<&str>,
    ) -> Result<Generated, GenError>;

    /// Why the whole run must stop (authentication, quota, too many failures ...), checked
    /// after every batch; `None` while generation may go on.
    fn stopped(&self) -> Option<String> {
        None
    }

    /// Many requests at once, answers in request order. Generators that wait on I/O override
    /// this to overlap requests; the default spreads them over the rayon pool.
    fn generate_batch(&self, requests: &[Request]) -> Vec<Result<Generated, GenError>> {
        use rayon::prelude::*;
        requests
            .par_iter()
            .map(|r| self.generate(&r.ctx, r.attempt, r.feedback.as_deref()))
            .collect()
    }
}

/// One generation request of a batch.
pub struct Request<'a> {
    pub ctx: TaskContext<'a>,
    pub attempt: u32,
    pub feedback: Option<String>,
}

/// Build the release-format task around generated tables.
pub fn assemble(ctx: &TaskContext, g: Generated) -> Task {
    let sk = ctx.skeleton;
    let a = ctx.archetype;
    let n = a.size();
    let children: Vec<ChildMember> = a
        .children()
        .map(|s| ChildMember {
            user: s.user.clone(),
            role: s.role.clone(),
        })
        .collect();
    let mut context = format!(
        "出发城市：{}；出行日期：{}；团队类型：{}（共{}人）",
        sk.departure_city, sk.date, a.group_name, n
    );
    if !children.is_empty() {
        let roles: Vec<&str> = children.iter().map(|c| c.role.as_str()).collect();
        context.push_str(&format!("；随行儿童：{}", roles.join("、")));
    }
    let mut user_preferences = gtb_core::task::Keyed::default();
    for (user, pref) in g.tables {
        let role = a.slot(&user).map(|s| s.role.clone()).unwrap_or_default();
        let compromisable = sk.compromise_pattern.contains(&user);
        user_preferences.insert(
            user,
            UserEntry {
                role,
                preference: pref,
                compromisable,
            },
        );
    }
    let mut messages = g.messages;
    messages.sort_by_key(|m| {
        m.role
            .trim_start_matches("User")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    Task {
        task_id: sk.task_id.clone(),
        query: format!(
            "{}，{}，{}人的旅行计划",
            sk.cities.join("、"),
            day_phrase(sk.days),
            n
        ),
        time: sk.date.clone(),
        context,
        metadata: Metadata {
            departure_city: sk.departure_city.clone(),
            cities: sk.cities.clone(),
            date: day_phrase(sk.days).to_string(),
            group_id: a.group_id.clone(),
            group_name: a.group_name.clone(),
            group_tags: a.group_tags.clone(),
            compromise_pattern: sk.compromise_pattern.clone(),
            child_members: children,
        },
        user_preferences,
        initial_messages: messages,
        difficulty_score: sk.difficulty_score,
        difficulty_type: sk.difficulty_type.clone(),
    }
}
