//! What the stages of one split share: the context they read (`Split`) and the artifacts they
//! hand on (`Artifacts`).

use crate::config::Config;
use crate::generate::PreferenceGenerator;
use crate::pipeline::dag::Planned;
use crate::pipeline::{Decision, WorkDir};
use crate::resources::{CityId, Resources};
use crate::sample::Sampler;
use crate::task::Skeleton;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use std::path::PathBuf;

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
    /// signatures of the splits built before this one, sorted: this split avoids them
    pub exclusions: Vec<String>,
    sampler: OnceCell<Sampler<'a>>,
}

impl<'a> Split<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &'a Config,
        res: &'a Resources,
        generator: &'a dyn PreferenceGenerator,
        paths: SplitPaths,
        name: &str,
        held_out: &'a [CityId],
        exclusions: Vec<String>,
    ) -> Self {
        Split {
            cfg,
            res,
            generator,
            paths,
            name: name.to_string(),
            held_out,
            exclusions,
            sampler: OnceCell::new(),
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

    /// Whether an earlier split holds a skeleton of this signature.
    pub fn is_excluded(&self, signature: &str) -> bool {
        self.exclusions
            .binary_search_by(|s| s.as_str().cmp(signature))
            .is_ok()
    }
}

/// What the validate stage learns beside its artifact (kept in the work directory).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct ValidateSummary {
    pub classes: [usize; 3],
    pub users: usize,
    pub dropped: usize,
    pub signatures: Vec<String>,
}

impl ValidateSummary {
    pub fn path(work: &WorkDir) -> PathBuf {
        work.root.join("validate.summary.json")
    }
    pub fn read(work: &WorkDir) -> Result<Self> {
        let p = Self::path(work);
        let bytes =
            std::fs::read(&p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))
    }
}

/// What the stages of a split hand to the stages after them.
#[derive(Default)]
pub(super) struct Artifacts {
    /// every stage's fingerprint and decision (the manifest records them)
    pub planned: Vec<Planned>,
    /// sample: the skeletons of the split's slots, in slot order
    pub skeletons: Vec<Skeleton>,
    /// validate: counts and the accepted tasks' signatures
    pub validated: Option<ValidateSummary>,
    /// write: sha256 of the published task file
    pub sha256: Option<String>,
}

impl Artifacts {
    /// Signatures of the split's accepted tasks (empty before validate ran or was reused).
    pub fn signatures(&self) -> &[String] {
        self.validated.as_ref().map_or(&[], |v| &v.signatures)
    }

    /// `--explain` runs nothing, but the next split's fingerprint needs this split's
    /// signatures: take them from a fresh validate stage.
    pub fn reuse_signatures(&mut self, ctx: &Split, planned: &[Planned]) {
        let fresh = planned
            .iter()
            .any(|p| p.stage == "validate" && p.decision == Decision::Fresh);
        if fresh {
            self.validated = ValidateSummary::read(&ctx.paths.work).ok();
        }
    }
}
