//! The world a split is played in (issue 28): the release harness's ten tools answered from
//! the split's own resources (the embedded snapshot or a POI store), its tasks and its witness
//! plans, so that a name, category, opening hours, ticket, price, fare or journey time reads the
//! same in every answer, in the scoring table and in the witness. docs/HARNESS.md has the
//! layout and each answer's shape.
//!
//! * `World` answers a call (`World::answer`): deterministic, a JSON object as a string (the
//!   exact string stored in the cache for that call).
//! * `cache` has the release's key (`cache_key`), the canonical bytes of a cache file and
//!   `add_answers` (for `gtb tools fill`).
//! * `calls` lists the calls gtb pre-populates for a split, read from the task and plans files
//!   block by block (the world holds no tasks); `runs` collects their cache keys per tool,
//!   sorted and unique, spilling sorted runs beside the cache past 64 MiB and merging them (an
//!   external sort), so that a split's world is written in memory that does not grow with it;
//!   `write` writes `sandbox_cache/<tool>_cache.json` and `poi2category/all_poi_by_city.json`
//!   and the manifest's `world` section.
//! * `validate` restates the release's parameter rules.
//!
//! One world (the rule chosen for the stand-ins): the world's table is the resources' real
//! venues plus every modelled venue (`X（city·示意）`, `gtb_plan::standin`) under the category
//! it names (`gtb_score::PoiDb::with_stand_ins`). Tool answers list modelled venues labelled
//! `"modelled": true` with their category and price band, `poi2category` lists them, and so the
//! release's evaluator scores a stand-in by its category exactly as `gtb score
//! --credit-stand-ins` does.

pub mod cache;
pub mod calls;
mod known;
pub mod names;
mod poi;
mod route;
pub mod runs;
mod transport;
pub mod validate;
pub mod witness;
pub mod write;

pub use cache::{Added, add_answers, cache_key, cache_path};

use gtb_core::FastMap as HashMap;
use gtb_resources::{CityId, Resources};
use gtb_score::PoiDb;
use names::CityNames;
use serde_json::{Map, Value};

/// The release's ten tools, in the order its registry lists them.
pub const TOOLS: [&str; 10] = [
    "maps_geo",
    "maps_weather",
    "travel_search_flights",
    "travel_search_trains",
    "web_search",
    "search_poi",
    "get_poi_detail",
    "plan_route",
    "compare_routes",
    "search_along_route",
];

/// The longest answer gtb writes, in characters (the release's judge reads answers in full).
pub const MAX_ANSWER_CHARS: usize = 2000;

/// Why a call gets no answer. "No data" is NOT an error: a call the world has no data for
/// (weather, web search, a pair of cities without trains, an unknown name) gets an answer
/// whose JSON has `"status": "no_data"` and a `note` saying what is missing (`is_no_data`);
/// such answers are cached like any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// not one of `TOOLS`
    UnknownTool(String),
    /// the release's validation rejects the parameters (`validate::validate`): the message
    /// names the problem as the release's tool does; the release never looks such a call up
    Invalid { tool: String, message: String },
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::UnknownTool(t) => {
                write!(
                    f,
                    "unknown tool {t:?} (the release's tools: {})",
                    TOOLS.join(", ")
                )
            }
            ToolError::Invalid { tool, message } => write!(f, "{tool}: {message}"),
        }
    }
}

impl std::error::Error for ToolError {}

/// Whether an answer of `World::answer` is an explicit no-data answer.
pub fn is_no_data(answer: &str) -> bool {
    serde_json::from_str::<Value>(answer)
        .is_ok_and(|v| v.get("status").and_then(Value::as_str) == Some("no_data"))
}

/// The resources of a world, borrowed (a build) or owned (a reopened split).
pub enum ResourcesRef<'a> {
    Borrowed(&'a Resources),
    Owned(Box<Resources>),
}

impl std::ops::Deref for ResourcesRef<'_> {
    type Target = Resources;
    fn deref(&self) -> &Resources {
        match self {
            ResourcesRef::Borrowed(r) => r,
            ResourcesRef::Owned(r) => r,
        }
    }
}

impl<'a> From<&'a Resources> for ResourcesRef<'a> {
    fn from(r: &'a Resources) -> Self {
        ResourcesRef::Borrowed(r)
    }
}

impl From<Resources> for ResourcesRef<'static> {
    fn from(r: Resources) -> Self {
        ResourcesRef::Owned(Box::new(r))
    }
}

/// A split's world: its resources and what its witness plans fix, indexed for answering.
pub struct World<'a> {
    pub res: ResourcesRef<'a>,
    /// the world's table: real venues and every modelled venue (`PoiDb::with_stand_ins`)
    pub db: PoiDb,
    /// what the witnesses fix (`by_name` and `known` are built from it: set once, in `new`)
    pub(crate) facts: witness::Facts,
    cities: CityNames,
    /// venue id → (city, index in `db.city(city)`)
    ids: HashMap<String, (CityId, usize)>,
    /// a venue's or witness place's exact name → the cities that have it (ascending)
    by_name: HashMap<String, Vec<CityId>>,
    /// a witness place → the cities that know it (`route_city`)
    known: known::Known,
}

impl<'a> World<'a> {
    /// The world of resources and the facts of a split's witnesses (a split built with
    /// `--no-witness` has none: its world answers from the resources alone).
    pub fn new(res: impl Into<ResourcesRef<'a>>, facts: witness::Facts) -> World<'a> {
        let res = res.into();
        let db = PoiDb::with_stand_ins(&res);
        let cities = CityNames::new(&res);
        let mut ids = HashMap::default();
        let mut by_name: HashMap<String, Vec<CityId>> = HashMap::default();
        for (c, city) in res.cities.iter().enumerate() {
            let c = c as CityId;
            let places = facts.places.get(&city.name).into_iter().flatten();
            for (i, p) in db.city(&city.name).iter().enumerate() {
                ids.insert(names::venue_id(&city.name, &p.name), (c, i));
            }
            for name in db.city(&city.name).iter().map(|p| &p.name).chain(places) {
                let list = by_name.entry(name.clone()).or_default();
                if list.last() != Some(&c) {
                    list.push(c);
                }
            }
        }
        let known = known::Known::new(&res, &db, &facts);
        World {
            res,
            db,
            facts,
            cities,
            ids,
            by_name,
            known,
        }
    }

    /// The world of a published split folder: the facts of its `plans.jsonl` (beside its task
    /// file, `test.jsonl` or `<name>.jsonl` in a `--splits` folder `<name>/`; none when
    /// absent), over the resources it was built from. The caller loads those resources (a
    /// store needs `gtb-store`): `gtb_ops::world::open` reads the manifest, loads them and
    /// checks that their input digests are the manifest's.
    pub fn open(
        split_dir: &std::path::Path,
        res: impl Into<ResourcesRef<'a>>,
    ) -> anyhow::Result<World<'a>> {
        let plans = task_file(split_dir)?.with_file_name("plans.jsonl");
        let res = res.into();
        let facts = witness::Facts::read(&res, &plans, |_| Ok(()))?;
        Ok(World::new(res, facts))
    }

    /// The answer to a call, exactly the string the cache stores for it. The parameters are
    /// checked with the release's rules first (`ToolError::Invalid`); a call the world has no
    /// data for gets an explicit no-data answer (`is_no_data`). Deterministic: the same call
    /// on the same world gives the same bytes. Every answer is at most `MAX_ANSWER_CHARS`.
    pub fn answer(&self, tool: &str, params: &Map<String, Value>) -> Result<String, ToolError> {
        if !TOOLS.contains(&tool) {
            return Err(ToolError::UnknownTool(tool.to_string()));
        }
        validate::validate(tool, params).map_err(|message| ToolError::Invalid {
            tool: tool.to_string(),
            message,
        })?;
        Ok(self.answer_valid(tool, params))
    }

    /// `answer` of a call of a known tool whose parameters have passed `validate` (the
    /// pre-populated calls are checked as they are gathered: `calls::add`).
    pub(crate) fn answer_valid(&self, tool: &str, params: &Map<String, Value>) -> String {
        let answer: poi::Answer = match tool {
            "search_poi" => self.search_poi(params),
            "get_poi_detail" => self.poi_detail(params).into(),
            "maps_geo" => self.geo(params).into(),
            "travel_search_trains" => self.trains(params),
            "travel_search_flights" => self.flights(params),
            "plan_route" => self.plan_route(params).into(),
            "compare_routes" => self.compare_routes(params).into(),
            "search_along_route" => route::along_route(params).into(),
            "maps_weather" => route::weather(params).into(),
            _ => route::web_search(params).into(),
        };
        answer.text()
    }

    /// The cities where a venue or a witness place has exactly this name (ascending).
    pub(crate) fn cities_named(&self, name: &str) -> &[CityId] {
        self.by_name.get(name.trim()).map_or(&[], Vec::as_slice)
    }

    /// The city a name means (`names::CityNames::resolve`).
    pub fn city(&self, name: &str) -> Option<CityId> {
        self.cities.resolve(name)
    }
}

/// The task file of a split folder: `test.jsonl`, else `<folder name>.jsonl` (`--splits`).
pub fn task_file(split_dir: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let test = split_dir.join("test.jsonl");
    if test.exists() {
        return Ok(test);
    }
    let named = split_dir
        .file_name()
        .map(|n| split_dir.join(format!("{}.jsonl", n.to_string_lossy())));
    match named {
        Some(p) if p.exists() => Ok(p),
        _ => anyhow::bail!(
            "{}: no test.jsonl (nor <folder>.jsonl): not a split folder",
            split_dir.display()
        ),
    }
}

/// A no-data answer: `{"status": "no_data", ...fields, "note": note}`.
pub(crate) fn no_data(fields: &[(&str, Value)], note: &str) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), "no_data".into());
    for (k, v) in fields {
        m.insert((*k).into(), v.clone());
    }
    m.insert("note".into(), note.into());
    Value::Object(m)
}

/// A call's parameter by name: a scan of its few entries (cheaper than hashing the name, and
/// a world looks up millions).
pub(crate) fn get<'p>(p: &'p Map<String, Value>, k: &str) -> Option<&'p Value> {
    p.iter().find_map(|(n, v)| (n == k).then_some(v))
}

/// A string parameter, trimmed; `None` when absent or blank.
pub(crate) fn param<'p>(p: &'p Map<String, Value>, k: &str) -> Option<&'p str> {
    get(p, k)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}
