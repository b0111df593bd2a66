//! The run configuration: one documented TOML file (`gtb.toml`), overridden by CLI flags,
//! resolved once into a validated `Config` that every stage reads.

use crate::difficulty::{Formula, Thresholds};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod llm;
pub use llm::Llm;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Paths {
    pub cities: PathBuf,
    pub attractions: PathBuf,
    /// other names of attractions (optional: absent = no aliases)
    pub aliases: PathBuf,
    pub food: PathBuf,
    pub hotels: PathBuf,
    pub transport: PathBuf,
    pub profiles: PathBuf,
    pub archetypes: PathBuf,
    pub clusters: PathBuf,
    /// a POI store (`gtb import`) laid over the embedded attractions, restaurants and hotel
    /// prices (`--resources`; docs/RESOURCES.md)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<PathBuf>,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            cities: "raw_data/cities.csv".into(),
            attractions: "raw_data/attractions".into(),
            aliases: "raw_data/aliases.csv".into(),
            food: "raw_data/food".into(),
            hotels: "raw_data/hotels".into(),
            transport: "raw_data/transport.csv".into(),
            profiles: "raw_data/profiles.csv".into(),
            archetypes: "archetypes/archetypes.toml".into(),
            clusters: "city_clusters/clusters.csv".into(),
            resources: None,
        }
    }
}

impl Paths {
    /// Resolve relative paths against a base directory (the config file's folder).
    pub fn rebase(&mut self, base: &Path) {
        for p in [
            &mut self.cities,
            &mut self.attractions,
            &mut self.aliases,
            &mut self.food,
            &mut self.hotels,
            &mut self.transport,
            &mut self.profiles,
            &mut self.archetypes,
            &mut self.clusters,
        ] {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        if let Some(p) = &mut self.resources
            && p.is_relative()
        {
            *p = base.join(&*p);
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Run {
    pub seed: u64,
    pub n: usize,
    pub out: PathBuf,
    pub work_dir: PathBuf,
    pub reports: PathBuf,
    /// 0 = all cores
    pub threads: usize,
    /// `offline` (default, no network) or `openai`
    pub generator: String,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            seed: 1,
            n: 650,
            out: "output".into(),
            work_dir: "output/.work".into(),
            reports: "validation_reports".into(),
            threads: 0,
            generator: "offline".into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Sample {
    /// tasks per class for `quota_base` tasks; other sizes scale proportionally
    pub quotas: [usize; 3],
    pub date_start: String,
    pub date_end: String,
    /// sampling weight of tier 1, 2, 3 cities
    pub tier_weights: [f64; 3],
    pub difficulty: Formula,
    /// `None` = the formula's own thresholds
    pub thresholds: Option<Thresholds>,
    /// Target cross-tabs the joint (archetype, cities, days) distribution is fitted to, per class
    /// easy/medium/hard (paper Table 8). Rows: 1/2/3 cities; 2-3/4-5/6-7 days; N=2..6.
    pub target_cities: [[f64; 3]; 3],
    pub target_days: [[f64; 3]; 3],
    pub target_size: [[f64; 3]; 5],
    /// Tasks per group size follow `target_size`'s row totals, archetype shares split each row
    /// (paper Table 5 and Table 8 disagree on tasks per size); false: archetype shares alone.
    pub size_totals_from_targets: bool,
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            quotas: [200, 250, 200],
            date_start: "2025-09-01".into(),
            date_end: "2026-05-01".into(),
            tier_weights: [3.0, 2.0, 1.0],
            difficulty: Formula::Release,
            thresholds: None,
            target_cities: [[116.0, 43.0, 0.0], [82.0, 131.0, 48.0], [2.0, 76.0, 152.0]],
            target_days: [[144.0, 66.0, 0.0], [56.0, 134.0, 109.0], [0.0, 50.0, 91.0]],
            target_size: [
                [75.0, 15.0, 0.0],
                [76.0, 50.0, 0.0],
                [33.0, 72.0, 0.0],
                [16.0, 65.0, 123.0],
                [0.0, 48.0, 77.0],
            ],
            size_totals_from_targets: true,
        }
    }
}

impl Sample {
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds.unwrap_or(match self.difficulty {
            Formula::Release => Thresholds::release(),
            Formula::Paper => Thresholds::paper(),
        })
    }
    pub const QUOTA_BASE: usize = 650;
    /// Per-class quotas for `n` tasks (largest remainder, exact sum).
    pub fn quotas_for(&self, n: usize) -> [usize; 3] {
        let total: usize = self.quotas.iter().sum();
        if total == n {
            return self.quotas;
        }
        let exact: Vec<f64> = self
            .quotas
            .iter()
            .map(|&q| q as f64 * n as f64 / total as f64)
            .collect();
        let mut out = [0usize; 3];
        for i in 0..3 {
            out[i] = exact[i].floor() as usize;
        }
        let mut rest = n - out.iter().sum::<usize>();
        let mut order: Vec<usize> = (0..3).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor())
                .total_cmp(&(exact[a] - exact[a].floor()))
                .then(a.cmp(&b))
        });
        for i in order {
            if rest == 0 {
                break;
            }
            out[i] += 1;
            rest -= 1;
        }
        out
    }
}

/// Conflict targets: share of tasks with a must/reject clash between two members.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Conflicts {
    pub attractions: f64,
    pub food: f64,
    pub transport: f64,
}

impl Default for Conflicts {
    fn default() -> Self {
        Conflicts {
            attractions: 0.331,
            food: 0.212,
            transport: 0.008,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Generate {
    pub conflicts: Conflicts,
    /// tries per task before it is dropped and replaced
    pub max_tries: u32,
}

impl Default for Generate {
    fn default() -> Self {
        Generate {
            conflicts: Conflicts::default(),
            max_tries: 3,
        }
    }
}

/// The release's range of `avg_budget` per person, CNY, inclusive (550..10,500): the default
/// of `[validate] avg_budget`, and the range the offline generator draws budgets in.
pub const RELEASE_BUDGET_RANGE: [u32; 2] = [550, 10_500];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Validate {
    /// Jaro-Winkler similarity needed to snap a POI name to the inventory
    pub fuzzy_threshold: f64,
    /// the best match must beat the runner-up by this much
    pub fuzzy_margin: f64,
    /// meals per person per day assumed by the budget certificate, CNY
    pub min_meal_cost: u32,
    /// a transport option with more changes of train does not count as serving a leg
    /// (reachability and the certificate); 0 = direct services only
    pub max_transfers: u32,
    /// plausible avg_budget per person, CNY, inclusive (the release: 550..10,500); the LLM's
    /// JSON schema carries the same bounds
    pub avg_budget: [u32; 2],
    /// plausible intensity.max_poi_per_day, inclusive (the release: 2..4)
    pub max_poi_per_day: [u32; 2],
    /// plausible intensity.max_active_hours, inclusive (the release: 6..10)
    pub max_active_hours: [u32; 2],
}

impl Validate {
    /// The plausible range of a scalar of the table (`scalars` check, LLM schema and replies).
    pub fn scalar_range(&self, s: crate::prefs::Scalar) -> std::ops::RangeInclusive<u32> {
        let [lo, hi] = match s {
            crate::prefs::Scalar::AvgBudget => self.avg_budget,
            crate::prefs::Scalar::MaxPoiPerDay => self.max_poi_per_day,
            crate::prefs::Scalar::MaxActiveHours => self.max_active_hours,
        };
        lo..=hi
    }
}

impl Default for Validate {
    fn default() -> Self {
        Validate {
            fuzzy_threshold: 0.88,
            fuzzy_margin: 0.03,
            min_meal_cost: 60,
            max_transfers: 2,
            avg_budget: RELEASE_BUDGET_RANGE,
            max_poi_per_day: [2, 4],
            max_active_hours: [6, 10],
        }
    }
}

/// `[solve]`: witness plans in the build (docs/PLANS.md); on by default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Solve {
    /// every accepted task needs a witness plan (a task without one is regenerated or
    /// replaced like a validation drop), and `plans.jsonl` is published beside the tasks
    pub enabled: bool,
}

impl Default for Solve {
    fn default() -> Self {
        Solve { enabled: true }
    }
}

/// `[store]`: builds over a POI store (docs/RESOURCES.md). Absent, the defaults apply; the
/// section is recorded only when written, so builds without a store keep their manifests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSettings {
    /// a store city is a destination when it has at least this many attractions ...
    pub min_attractions: usize,
    /// ... and this many restaurants
    pub min_food: usize,
    /// the share of must_eat / prefer_eat values that name one of the store's restaurants
    /// (of the category drawn) instead of the category; the release's examples name none
    pub named_restaurants: f64,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            min_attractions: 20,
            min_food: 5,
            named_restaurants: 0.1,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub run: Run,
    pub paths: Paths,
    pub sample: Sample,
    pub generate: Generate,
    pub validate: Validate,
    pub llm: Llm,
    pub solve: Solve,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreSettings>,
}

impl Config {
    /// Read a config file; relative paths in it are taken from the file's folder.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config {}", path.display()))?;
        let mut cfg: Config = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start].matches('\n').count() + 1)
                .unwrap_or(0);
            anyhow::anyhow!("{}:{}: {}", path.display(), line, e.message())
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        cfg.paths.rebase(base);
        Ok(cfg)
    }

    /// Check every knob once, with messages that name the setting.
    pub fn validate(&self) -> Result<()> {
        let s = &self.sample;
        let d0 = chrono::NaiveDate::parse_from_str(&s.date_start, "%Y-%m-%d")
            .with_context(|| format!("sample.date_start {:?} is not YYYY-MM-DD", s.date_start))?;
        let d1 = chrono::NaiveDate::parse_from_str(&s.date_end, "%Y-%m-%d")
            .with_context(|| format!("sample.date_end {:?} is not YYYY-MM-DD", s.date_end))?;
        if d1 < d0 {
            bail!(
                "sample.date_end {} is before sample.date_start {}",
                s.date_end,
                s.date_start
            );
        }
        if s.tier_weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || s.tier_weights.iter().sum::<f64>() <= 0.0
        {
            bail!(
                "sample.tier_weights must be non-negative with a positive sum, got {:?}",
                s.tier_weights
            );
        }
        if s.quotas.iter().sum::<usize>() == 0 {
            bail!("sample.quotas must not all be zero");
        }
        check_task_count("run.n (--n)", self.run.n)?;
        check_threads(self.run.threads)?;
        if self.generate.max_tries == 0 {
            bail!(
                "generate.max_tries must be at least 1: it counts the first try (1 = no regeneration; a task that fails is dropped and replaced)"
            );
        }
        let t = s.thresholds();
        if t.easy_below > t.hard_above {
            bail!(
                "sample.thresholds: easy_below {} is above hard_above {}",
                t.easy_below,
                t.hard_above
            );
        }
        for (name, v) in [
            ("attractions", self.generate.conflicts.attractions),
            ("food", self.generate.conflicts.food),
            ("transport", self.generate.conflicts.transport),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("generate.conflicts.{name} must be a share in 0..1, got {v}");
            }
        }
        if !(0.0..=1.0).contains(&self.validate.fuzzy_threshold) {
            bail!("validate.fuzzy_threshold must be in 0..1");
        }
        for s in crate::prefs::Scalar::ALL {
            let r = self.validate.scalar_range(s);
            if r.is_empty() {
                let name = s.path().rsplit('.').next().unwrap_or_default();
                bail!(
                    "validate.{name} must be [low, high] with low <= high, got [{}, {}]",
                    r.start(),
                    r.end()
                );
            }
        }
        if let Some(st) = &self.store
            && !(0.0..=1.0).contains(&st.named_restaurants)
        {
            bail!(
                "store.named_restaurants must be a share in 0..1, got {}",
                st.named_restaurants
            );
        }
        if self.run.generator != "offline" && self.run.generator != "openai" {
            bail!(
                "run.generator must be \"offline\" or \"openai\", got {:?}",
                self.run.generator
            );
        }
        Ok(())
    }

    pub fn date_window(&self) -> (chrono::NaiveDate, chrono::NaiveDate) {
        let p = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("validated");
        (p(&self.sample.date_start), p(&self.sample.date_end))
    }
}

/// The most tasks one build process makes: it holds a skeleton per task and, at the limit,
/// peaks near 2 GB (651 MiB were measured for 300,000 tasks). Larger splits are built in shards.
pub const MAX_TASKS: usize = 1_000_000;

/// The most tasks of a build (a split, all shards together): every process holds a class and a
/// few task ids per task of the build (about 400 MB at the limit).
pub const MAX_BUILD_TASKS: usize = 10_000_000;

/// More worker threads than this only cost: gtb's work is CPU-bound and does not depend on the
/// thread count (1,024 threads took 11 s for 20 tasks on 2 cores, 256 took 1 s).
pub const MAX_THREADS: usize = 256;

/// A build's task count (`what` names the setting): between 1 and `MAX_BUILD_TASKS`.
pub fn check_task_count(what: &str, n: usize) -> Result<()> {
    if n == 0 {
        bail!("{what} must be at least 1");
    }
    if n > MAX_BUILD_TASKS {
        bail!(
            "{what} is {n}: a build has at most {MAX_BUILD_TASKS} tasks (every process holds a class and a few ids per task of the build)"
        );
    }
    Ok(())
}

/// What one process builds of a build of `n` tasks in `shards` slices: at most `MAX_TASKS`.
pub fn check_process_tasks(what: &str, n: usize, shards: usize) -> Result<()> {
    if n.div_ceil(shards) > MAX_TASKS {
        bail!(
            "{what} is {n}: one build process makes at most {MAX_TASKS} tasks (each is held in memory while it is built); build it in shards: --shard I/N with N >= {}, then gtb merge",
            n.div_ceil(MAX_TASKS)
        );
    }
    Ok(())
}

/// A worker thread count: 0 (all cores) up to `MAX_THREADS`.
pub fn check_threads(threads: usize) -> Result<()> {
    if threads > MAX_THREADS {
        bail!(
            "run.threads (--threads) is {threads}: at most {MAX_THREADS} (0 = one per core); results never depend on it, and threads beyond the cores only add overhead"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_scale_with_exact_sum() {
        let s = Sample::default();
        assert_eq!(s.quotas_for(650), [200, 250, 200]);
        assert_eq!(s.quotas_for(100).iter().sum::<usize>(), 100);
        assert_eq!(s.quotas_for(100_000), [30769, 38462, 30769]);
    }

    #[test]
    fn shipped_config_parses_and_equals_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../gtb.toml");
        let cfg = Config::from_file(&path).unwrap();
        cfg.validate().unwrap();
        let mut def = Config::default();
        def.paths.rebase(path.parent().unwrap());
        assert_eq!(
            cfg, def,
            "gtb.toml documents the defaults; keep them in step"
        );
    }

    #[test]
    fn broken_config_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, "[run]\nseed = 1\nn = \"many\"\n").unwrap();
        let e = Config::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("bad.toml:3"), "{e}");
    }
}
