//! The 22 group archetypes, loaded from `archetypes/archetypes.toml`.

use super::table::InputError;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    Independent,
    CopyMinor,
    CopyModerate,
    Skip,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Independent => "independent",
            Strategy::CopyMinor => "copy_minor",
            Strategy::CopyModerate => "copy_moderate",
            Strategy::Skip => "skip",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Pace {
    Relaxed,
    Normal,
    Active,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileFilter {
    pub age: [u32; 2],
    #[serde(default)]
    pub gender: Option<String>,
    #[serde(default)]
    pub marital: Option<Vec<String>>,
    #[serde(default)]
    pub parenting: Option<String>,
}

/// In words, for messages: "age 20–33, 女, 未婚".
impl std::fmt::Display for ProfileFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "age {}–{}", self.age[0], self.age[1])?;
        if let Some(g) = &self.gender {
            write!(f, ", {g}")?;
        }
        if let Some(m) = &self.marital {
            write!(f, ", {}", m.join("/"))?;
        }
        if let Some(p) = &self.parenting {
            write!(f, ", {p}")?;
        }
        Ok(())
    }
}

impl ProfileFilter {
    /// The first value outside the profile vocabularies, as (field, problem).
    fn problem(&self) -> Option<(&'static str, String)> {
        use super::vocab::{GENDERS, MARITAL, MAX_AGE, PARENTING};
        let outside =
            |v: &str, allowed: &[&str]| format!("{v:?} is not one of {}", allowed.join(" "));
        if self.age[0] > self.age[1] || self.age[1] > MAX_AGE {
            return Some((
                "slot.filter.age",
                format!(
                    "age range {}..{} is empty or beyond {MAX_AGE}",
                    self.age[0], self.age[1]
                ),
            ));
        }
        if let Some(g) = self.gender.as_deref().filter(|g| !GENDERS.contains(g)) {
            return Some(("slot.filter.gender", outside(g, &GENDERS)));
        }
        if let Some(m) = self
            .marital
            .iter()
            .flatten()
            .find(|m| !MARITAL.contains(&m.as_str()))
        {
            return Some(("slot.filter.marital", outside(m, &MARITAL)));
        }
        if let Some(p) = self.parenting.as_deref().filter(|p| !PARENTING.contains(p)) {
            return Some(("slot.filter.parenting", outside(p, &PARENTING)));
        }
        None
    }

    pub fn accepts(&self, p: &super::Profile, group_gender: Option<&str>) -> bool {
        (self.age[0]..=self.age[1]).contains(&p.age)
            && self
                .gender
                .as_deref()
                .or(group_gender)
                .is_none_or(|g| g == p.gender)
            && self.marital.as_ref().is_none_or(|m| m.contains(&p.marital))
            && self.parenting.as_ref().is_none_or(|x| *x == p.parenting)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Slot {
    pub user: String,
    pub role: String,
    pub filter: ProfileFilter,
    pub strategy: Strategy,
    #[serde(default)]
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Archetype {
    pub group_id: String,
    pub group_name: String,
    pub group_tags: Vec<String>,
    pub share: u32,
    pub pace: Pace,
    pub spend: f64,
    #[serde(default)]
    pub same_gender: bool,
    /// The group-size row of the paper's Table 8 this archetype is counted in, when it is not
    /// its member count (the paper prints 6-3 under N=5); the sampler fits `target_size` by it.
    #[serde(default)]
    pub table8_size: Option<u32>,
    pub dynamics: String,
    pub generation_order: Vec<String>,
    pub compromise_patterns: Vec<Vec<String>>,
    #[serde(rename = "slot")]
    pub slots: Vec<Slot>,
}

impl Archetype {
    /// Total group size N (skipped children included).
    pub fn size(&self) -> u32 {
        self.slots.len() as u32
    }
    /// The row of the configured Table 8 size targets (`sample.target_size`) this archetype counts in.
    pub fn table8_size(&self) -> u32 {
        self.table8_size.unwrap_or_else(|| self.size())
    }
    pub fn slot(&self, user: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.user == user)
    }
    /// Slots that get a preference table, in generation order.
    pub fn planned_slots(&self) -> impl Iterator<Item = &Slot> {
        self.generation_order.iter().filter_map(|u| self.slot(u))
    }
    pub fn children(&self) -> impl Iterator<Item = &Slot> {
        self.slots.iter().filter(|s| s.strategy == Strategy::Skip)
    }
    /// Whether one of two members copies the other's weak city fields (copy_minor): they share
    /// category_pref, prefer_eat and avoid_eat.
    pub fn minor_linked(&self, a: &str, b: &str) -> bool {
        [(a, b), (b, a)].iter().any(|(copier, reference)| {
            self.slot(copier).is_some_and(|s| {
                s.strategy == Strategy::CopyMinor && s.reference.as_deref() == Some(*reference)
            })
        })
    }
    pub fn is_family(&self) -> bool {
        self.group_tags.iter().any(|t| t == "家庭")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    archetype: Vec<Archetype>,
}

fn line_of(text: &str, offset: usize) -> u64 {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count() as u64
        + 1
}

/// Load and check the archetype file.
pub fn load(path: &Path) -> Result<Vec<Archetype>, InputError> {
    let err = |line: u64, field: &str, message: String| InputError {
        file: path.to_path_buf(),
        line,
        field: field.to_string(),
        message,
    };
    let bytes = super::input::read(path).map_err(|e| err(0, "", format!("cannot read: {e}")))?;
    let text =
        std::str::from_utf8(&bytes).map_err(|e| err(0, "", format!("invalid UTF-8: {e}")))?;
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        err(line, "", e.message().to_string())
    })?;
    let mut seen = std::collections::HashSet::new();
    for a in &file.archetype {
        let problem = if seen.insert(a.group_id.clone()) {
            archetype_problem(a)
        } else {
            Some(("group_id", "duplicate group_id".into()))
        };
        if let Some((field, m)) = problem {
            let line = text
                .find(&format!("group_id = \"{}\"", a.group_id))
                .map(|o| line_of(text, o))
                .unwrap_or(0);
            return Err(err(line, field, format!("archetype {}: {m}", a.group_id)));
        }
    }
    if file.archetype.is_empty() {
        return Err(err(0, "archetype", "no [[archetype]] in the file".into()));
    }
    Ok(file.archetype)
}

/// What is wrong with one archetype, as (field, message).
fn archetype_problem(a: &Archetype) -> Option<(&'static str, String)> {
    if let Some(n) = a.table8_size.filter(|n| !(2..=6).contains(n)) {
        return Some((
            "table8_size",
            format!("{n} is not a Table 8 group size (2..=6)"),
        ));
    }
    let planned: Vec<&str> = a
        .slots
        .iter()
        .filter(|s| s.strategy != Strategy::Skip)
        .map(|s| s.user.as_str())
        .collect();
    if let Some(m) = order_problem(&a.generation_order, &planned) {
        return Some(("generation_order", m));
    }
    if let Some(p) = a
        .slots
        .iter()
        .enumerate()
        .find_map(|(i, s)| slot_problem(a, i, s))
    {
        return Some(p);
    }
    if let Some(m) = patterns_problem(&a.compromise_patterns, &planned) {
        return Some(("compromise_patterns", m));
    }
    if a.share == 0 || !(0.2..=5.0).contains(&a.spend) {
        return Some((
            "share",
            "share must be positive and spend within 0.2..5".into(),
        ));
    }
    None
}

/// What is wrong with slot `i`: its name, its profile filter, or its copy reference (a copying
/// member names a member generated before it; nobody else names one).
fn slot_problem(a: &Archetype, i: usize, s: &Slot) -> Option<(&'static str, String)> {
    if s.user != format!("User{}", i + 1) {
        return Some((
            "slot.user",
            format!("slot {} must be User{}, found {}", i + 1, i + 1, s.user),
        ));
    }
    if let Some((field, m)) = s.filter.problem() {
        return Some((field, format!("{}: {m}", s.user)));
    }
    let copies = matches!(s.strategy, Strategy::CopyMinor | Strategy::CopyModerate);
    let m = match (copies, &s.reference) {
        (true, None) => format!("{} copies but names no reference", s.user),
        (true, Some(r)) => {
            let rpos = a.generation_order.iter().position(|u| u == r);
            let spos = a.generation_order.iter().position(|u| *u == s.user);
            if a.slot(r).is_some_and(|rs| rs.strategy != Strategy::Skip)
                && rpos.is_some()
                && rpos < spos
            {
                return None;
            }
            format!(
                "{} copies from {r}, which is not generated before it",
                s.user
            )
        }
        (false, Some(_)) => format!("{}: only copy strategies take a reference", s.user),
        (false, None) => return None,
    };
    Some(("slot.reference", m))
}

/// At least one compromise pattern; each non-empty and naming only members with a table.
fn patterns_problem(patterns: &[Vec<String>], planned: &[&str]) -> Option<String> {
    if patterns.is_empty() {
        return Some("at least one pattern is needed".into());
    }
    for p in patterns {
        if let Some(u) = p.iter().find(|u| !planned.contains(&u.as_str())) {
            return Some(format!(
                "pattern [{}] names {u}, which is not a member with a table ({})",
                p.join(", "),
                planned.join(", ")
            ));
        }
        if p.is_empty() {
            return Some("a pattern is empty".into());
        }
    }
    None
}

/// What is wrong with a generation order: it must list every member with a table (not
/// skipped) exactly once, and nobody else.
fn order_problem(order: &[String], planned: &[&str]) -> Option<String> {
    let members = planned.join(", ");
    if let Some(u) = order.iter().find(|u| !planned.contains(&u.as_str())) {
        return Some(format!(
            "{u} is not a member with a table of this archetype ({members})"
        ));
    }
    if let Some(u) = order
        .iter()
        .enumerate()
        .find(|(i, u)| order[..*i].contains(u))
        .map(|(_, u)| u)
    {
        return Some(format!("{u} is listed twice"));
    }
    let missing: Vec<&str> = planned
        .iter()
        .copied()
        .filter(|p| !order.iter().any(|u| u == p))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} missing: every member with a table ({members}) is listed once",
            missing.join(", ")
        )
    })
}
