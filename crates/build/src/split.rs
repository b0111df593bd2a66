//! What the stages of one split share: the context they read (`Split`) and the artifacts they
//! hand on (`Artifacts`).

use super::BuildStage;
use super::sampled::Sampled;
use anyhow::Result;
use gtb_core::config::Config;
use gtb_generate::PreferenceGenerator;
use gtb_ops::publish::{Shard, ValidateSummary};
use gtb_pipeline::StageId;
use gtb_pipeline::WorkDir;
use gtb_pipeline::dag::Decided;
use gtb_resources::{CityId, Resources};
use gtb_sample::Sampler;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where a split's files go.
pub(super) struct SplitPaths {
    pub work: WorkDir,
    pub reports: PathBuf,
    pub tasks: PathBuf,
    pub manifest: PathBuf,
}

impl SplitPaths {
    /// A single split writes `test.jsonl` into the output folder itself; named splits get a
    /// sub-folder each (`<out>/<name>/<name>.jsonl`, reports and work folder likewise).
    pub fn of(cfg: &Config, name: &str, single: bool) -> Self {
        if single {
            SplitPaths {
                work: WorkDir::new(&cfg.run.work_dir),
                reports: cfg.run.reports.clone(),
                tasks: cfg.run.out.join("test.jsonl"),
                manifest: cfg.run.out.join("manifest.json"),
            }
        } else {
            SplitPaths {
                work: WorkDir::new(&cfg.run.work_dir.join(name)),
                reports: cfg.run.reports.join(name),
                tasks: cfg.run.out.join(name).join(format!("{name}.jsonl")),
                manifest: cfg.run.out.join(name).join("manifest.json"),
            }
        }
    }
}

/// Where a split stands among the splits of a build, for leakage-free splits: the sampled
/// signatures of the splits before it (avoided by its sample), of every other split (avoided by
/// its replacements), and its class: a replacement's signature hashes to `class.0` mod
/// `class.1`, so two splits' replacements never meet.
#[derive(Debug, Clone, Default)]
pub(super) struct Neighbours {
    pub earlier: Vec<String>,
    pub others: Vec<String>,
    pub class: (usize, usize),
}

/// Everything a stage of one split may read.
pub(super) struct Split<'a> {
    /// the split's config: its own `run.n` and `run.seed`
    pub cfg: &'a Config,
    pub res: &'a Resources,
    pub generator: &'a dyn PreferenceGenerator,
    pub paths: SplitPaths,
    pub name: String,
    /// destination cities this split must not visit
    pub held_out: &'a [CityId],
    /// the other splits (empty for a single split)
    pub neighbours: Neighbours,
    /// `--shard`: this process builds the slots `slots` only
    pub shard: Option<Shard>,
    pub slots: Range<usize>,
    sampler: OnceLock<Sampler<'a>>,
    /// `[solve]`: the POI resolver the witness search scores with, made on first use
    poi_db: OnceLock<gtb_score::PoiDb>,
}

impl<'a> Split<'a> {
    pub fn new(
        cfg: &'a Config,
        res: &'a Resources,
        generator: &'a dyn PreferenceGenerator,
        paths: SplitPaths,
        name: &str,
        held_out: &'a [CityId],
        shard: Option<Shard>,
    ) -> Self {
        let n = cfg.run.n;
        Split {
            cfg,
            res,
            generator,
            paths,
            name: name.to_string(),
            held_out,
            neighbours: Neighbours {
                class: (0, 1),
                ..Neighbours::default()
            },
            shard,
            slots: shard.map_or(0..n, |s| s.slots(n)),
            sampler: OnceLock::new(),
            poi_db: OnceLock::new(),
        }
    }

    /// The fitted sampler of this split, made on first use (a fully fresh rerun never needs it).
    pub fn sampler(&self) -> Result<&Sampler<'a>> {
        if let Some(s) = self.sampler.get() {
            return Ok(s);
        }
        let s = Sampler::excluding(self.cfg, self.res, self.cfg.run.n, self.held_out)?;
        Ok(self.sampler.get_or_init(|| s))
    }

    /// The witness solver over this split's resources (`[solve]`).
    pub fn solver(&self) -> gtb_solve::Solver<'_> {
        let db = self
            .poi_db
            .get_or_init(|| gtb_score::PoiDb::from_resources(self.res));
        gtb_solve::Solver::new(self.res, db)
    }
}

/// Whether a sorted list holds `signature`.
pub(super) fn holds(sorted: &[String], signature: &str) -> bool {
    sorted
        .binary_search_by(|s| s.as_str().cmp(signature))
        .is_ok()
}

/// What the stages of a split hand to the stages after them, one typed slot per stage that
/// hands something on. A stage reads an upstream slot through its accessor, which names the
/// stage when it is empty instead of failing on a default.
#[derive(Default)]
pub(super) struct Artifacts {
    /// every stage's fingerprint and freshness (the manifest records them)
    pub decided: Vec<Decided<BuildStage>>,
    pub sample: Option<Sampled>,
    /// `generate` streams into `validate` (`Stage::stream`): validate makes the first attempts
    /// chunk by chunk and writes `generate.jsonl` as it goes, instead of reading it back
    pub generate_streams: bool,
    pub validate: Option<Validated>,
    pub publish: Option<Published>,
}

/// What `validate` hands on.
pub(super) struct Validated {
    /// counts for the manifest
    pub summary: ValidateSummary,
    /// the audit's counts of the accepted tasks, when validate ran in this process
    pub audit: Option<gtb_audit::report::Tally>,
    /// `[solve]`: the witness figures' samples, when validate ran in this process
    pub samples: Option<gtb_ops::solve::SlotSamples>,
}

/// What `write` (or `shard`) hands on: the published file and its sha256.
pub(super) struct Published {
    pub sha256: String,
    /// the shard's slice; None: the split's task file
    pub path: Option<PathBuf>,
}

impl Artifacts {
    pub fn sampled(&self) -> Result<&Sampled> {
        self.sample
            .as_ref()
            .ok_or_else(|| not_run(BuildStage::Sample))
    }
    pub fn validated(&mut self) -> Result<&mut Validated> {
        self.validate
            .as_mut()
            .ok_or_else(|| not_run(BuildStage::Validate))
    }
}

fn not_run(stage: BuildStage) -> anyhow::Error {
    anyhow::anyhow!(
        "stage {} handed nothing on (it did not run or reuse)",
        stage.name()
    )
}
