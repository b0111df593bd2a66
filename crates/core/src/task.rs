//! The task format of the release (task_format.md §2), field order included, plus the
//! skeleton the sampler produces.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A map keyed by user or city name in the file's order (fast fixed hasher: see `FastMap`).
pub type Keyed<V> = IndexMap<String, V, foldhash::fast::FixedState>;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Buckets {
    pub must: Vec<String>,
    pub prefer: Vec<String>,
    pub avoid: Vec<String>,
    pub reject: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Intensity {
    pub max_poi_per_day: u32,
    pub max_active_hours: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HotelPreference {
    pub prefer: Vec<String>,
    pub avoid: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GlobalConstraints {
    pub avg_budget: u32,
    pub transport: Buckets,
    pub intensity: Intensity,
    pub hotel_preference: HotelPreference,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CategoryPref {
    pub positive: Vec<String>,
    pub negative: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AttractionPref {
    pub must_visit: Vec<String>,
    pub reject_visit: Vec<String>,
    pub category_pref: CategoryPref,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FoodPref {
    pub must_eat: Vec<String>,
    pub prefer_eat: Vec<String>,
    pub avoid_eat: Vec<String>,
    pub reject_eat: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CityPref {
    pub attractions: AttractionPref,
    pub food: FoodPref,
}

/// One member's hierarchical preference table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Preference {
    pub global_constraints: GlobalConstraints,
    pub city_specific_preferences: Keyed<CityPref>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UserEntry {
    pub role: String,
    pub preference: Preference,
    pub compromisable: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ChildMember {
    pub user: String,
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metadata {
    pub departure_city: String,
    pub cities: Vec<String>,
    pub date: String,
    pub group_id: String,
    pub group_name: String,
    pub group_tags: Vec<String>,
    pub compromise_pattern: Vec<String>,
    pub child_members: Vec<ChildMember>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// A task exactly as the release writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Task {
    pub task_id: String,
    pub query: String,
    pub time: String,
    pub context: String,
    pub metadata: Metadata,
    pub user_preferences: Keyed<UserEntry>,
    pub initial_messages: Vec<Message>,
    pub difficulty_score: f64,
    pub difficulty_type: String,
}

impl Task {
    /// Days of the trip from the date phrase.
    pub fn days(&self) -> Option<u32> {
        days_of_phrase(&self.metadata.date)
    }
    /// N: members with tables plus skipped children.
    pub fn group_size(&self) -> usize {
        self.user_preferences.len() + self.metadata.child_members.len()
    }
}

pub const DAY_PHRASES: [(u32, &str); 6] = [
    (2, "两天一夜"),
    (3, "三天两夜"),
    (4, "四天三夜"),
    (5, "五天四夜"),
    (6, "六天五夜"),
    (7, "七天六夜"),
];

pub fn day_phrase(days: u32) -> &'static str {
    DAY_PHRASES
        .iter()
        .find(|(d, _)| *d == days)
        .map(|(_, p)| *p)
        .expect("days are 2..=7")
}

pub fn days_of_phrase(p: &str) -> Option<u32> {
    DAY_PHRASES.iter().find(|(_, x)| *x == p).map(|(d, _)| *d)
}

/// One member of a skeleton.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SkeletonMember {
    pub user: String,
    pub role: String,
    pub profile: String,
}

/// A sampled task before preferences: everything but the tables and messages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skeleton {
    /// position in the sampler's stream (replacements continue after n)
    pub index: usize,
    pub task_id: String,
    pub group_id: String,
    pub departure_city: String,
    pub cities: Vec<String>,
    pub days: u32,
    pub date: String,
    pub compromise_pattern: Vec<String>,
    /// every slot, User1..UserN, children included
    pub members: Vec<SkeletonMember>,
    pub difficulty_score: f64,
    pub difficulty_type: String,
}

impl Skeleton {
    /// A signature that identifies "the same task shape" across splits (leakage check).
    pub fn signature(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.group_id,
            self.departure_city,
            self.cities.join("、"),
            self.days
        )
    }
}
