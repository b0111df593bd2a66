//! `gtb build`: the pipeline for one split (or several, leakage-free).
//!
//! The stages are units (`gtb_pipeline::dag::Stage`), one file each here, listed in
//! `stages()`; `gtb_pipeline::dag::Dag` decides them from fingerprints and runs them in order.
//! This file only resolves the splits, hands each split's context to the runner and prints what
//! the runner reports as it happens. Publishing (shared with `gtb merge`) is `gtb_ops::publish`.
//!
//! Tasks stream through generate and validate in chunks, and the written file is assembled
//! from release-format lines, so a 100,000-task split never holds its tasks as structs at once.

mod generate;
mod prepare;
mod sample;
mod sampled;
mod settle;
mod shard;
mod split;
mod validate;
mod write;

use anyhow::{Result, bail};
use gtb_core::config::Config;
use gtb_core::task::Task;
use gtb_generate::{PreferenceGenerator, offline::OfflineGenerator};
use gtb_ops::publish::ShardFile;
pub use gtb_ops::publish::{Shard, SplitSummary};
use gtb_pipeline::dag::{Dag, Event, Stage};
use gtb_pipeline::{Freshness, StageId};
use gtb_resources::{CityId, Resources};
use indicatif::{ProgressBar, ProgressStyle};
use split::{Artifacts, Split, SplitPaths};
use std::path::PathBuf;

/// Version of the code that shapes outputs; part of every stage fingerprint and manifest. It
/// is digested here (build.rs), in the crate that fingerprints stages, so that an edit
/// recompiles the edited crate and its dependants only.
pub const CODE_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+src.",
    env!("GTB_SOURCE_DIGEST")
);

/// `gtb sample`: skeletons only.
pub fn sample(cfg: &Config) -> Result<Vec<gtb_core::task::Skeleton>> {
    gtb_core::config::check_process_tasks("run.n (--n)", cfg.run.n, 1)?;
    let res = gtb_ops::load_resources(cfg)?;
    let s = gtb_sample::Sampler::new(cfg, &res, cfg.run.n)?;
    Ok(s.sample())
}

/// A validated run req: the resolved config plus what to do.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub cfg: Config,
    /// show which stages would run, and why, without running them
    pub explain: bool,
    /// named splits (name, size); empty = one split of cfg.run.n written as test.jsonl
    pub splits: Vec<(String, usize)>,
    /// print stage decisions to stderr
    pub verbose: bool,
    /// destination cities reserved for the test split: other splits never visit them
    pub holdout_cities: usize,
    /// when another build holds the output folder: wait for it (else fail at once)
    pub wait: bool,
    /// build one slice of every split (`gtb merge` joins the slices)
    pub shard: Option<Shard>,
}

impl BuildRequest {
    /// Build one split of `cfg.run.n` tasks quietly.
    pub fn new(cfg: Config) -> Self {
        BuildRequest {
            cfg,
            explain: false,
            splits: Vec::new(),
            verbose: false,
            holdout_cities: 0,
            wait: false,
            shard: None,
        }
    }

    /// Check the request before anything runs: the config, the size of every split, and what
    /// one process (a shard) builds of it.
    pub fn validate(&self) -> Result<()> {
        use gtb_core::config::{check_process_tasks, check_task_count};
        self.cfg.validate()?;
        let shards = self.shard.map_or(1, |s| s.count);
        let sizes: Vec<(String, usize)> = if self.splits.is_empty() {
            vec![("run.n (--n)".into(), self.cfg.run.n)]
        } else {
            self.splits
                .iter()
                .map(|(name, n)| (format!("--splits {name}"), *n))
                .collect()
        };
        for (what, n) in &sizes {
            check_task_count(what, *n)?;
            check_process_tasks(what, *n, shards)?;
            if shards > *n {
                bail!("{what} is {n}: fewer tasks than the {shards} shards of --shard");
            }
        }
        Ok(())
    }
}

/// The stages of a build, named in code (`BuildStage::Sample`), with their file names in the
/// work folder (`sample.jsonl`, `sample.fingerprint.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BuildStage {
    Prepare,
    Sample,
    Generate,
    Validate,
    Write,
    Shard,
}

impl StageId for BuildStage {
    fn name(self) -> &'static str {
        match self {
            BuildStage::Prepare => "prepare",
            BuildStage::Sample => "sample",
            BuildStage::Generate => "generate",
            BuildStage::Validate => "validate",
            BuildStage::Write => "write",
            BuildStage::Shard => "shard",
        }
    }
}

/// What the runner decided for one stage of one split.
#[derive(Debug, Clone)]
pub struct StageRun {
    pub split: String,
    pub stage: BuildStage,
    pub freshness: Freshness<BuildStage>,
}

#[derive(Debug, Clone, Default)]
pub struct BuildSummary {
    /// every stage of every split, in run order
    pub stages: Vec<StageRun>,
    pub splits: Vec<SplitSummary>,
}

impl BuildSummary {
    /// The freshness of a split's stage, if the build had that stage.
    pub fn freshness(&self, split: &str, stage: BuildStage) -> Option<&Freshness<BuildStage>> {
        self.stages
            .iter()
            .find(|r| r.split == split && r.stage == stage)
            .map(|r| &r.freshness)
    }
}

/// A stage of the build: runs over a split's context and hands on typed artifacts.
type BuildStep<'a> = dyn Stage<Split<'a>, Artifacts, BuildStage> + 'a;

/// The build's stages in execution order. A new stage is a `Stage` implementation in its own
/// file in this crate, added here; its upstream stages must come before it. A shard ends
/// with its slice (`shard`) instead of the published split (`write`, after `gtb merge`).
/// Witness plans (`[solve]`) are found by `validate` and published by `write`.
fn stages<'a>(sharded: bool) -> Vec<&'a BuildStep<'a>> {
    let last: &'a BuildStep<'a> = if sharded {
        &shard::ShardSlice
    } else {
        &write::WriteSplit
    };
    vec![
        &prepare::Prepare,
        &sample::Sample,
        &generate::Generate,
        &validate::Validate,
        last,
    ]
}

/// Run the req.
pub fn build(req: &BuildRequest) -> Result<BuildSummary> {
    let cfg = &req.cfg;
    req.validate()?;
    let res = gtb_ops::load_resources(cfg)?;
    if cfg.run.generator != "openai" {
        let generator = OfflineGenerator::new(cfg.generate.conflicts.clone(), &res);
        return build_with(req, &res, &generator);
    }
    // a run the generator stops fails at the batch in progress: that stage is not committed,
    // answers received so far stay in the cache
    let generator = gtb_llm::LlmGenerator::new(cfg)?;
    let result = build_with(req, &res, &generator);
    // token usage and cost go into the manifests (a shard's: shard.json, which `gtb merge`
    // adds up) written by this run and <reports>/llm_report.json
    let (last, file) = match req.shard {
        Some(_) => (BuildStage::Shard, ShardFile::NAME),
        None => (BuildStage::Write, "manifest.json"),
    };
    let manifests: Vec<PathBuf> = match &result {
        Ok(s) if !req.explain => s
            .splits
            .iter()
            .filter(|sp| s.freshness(&sp.name, last).is_some_and(|f| !f.is_fresh()))
            .filter_map(|sp| sp.path.parent().map(|d| d.join(file)))
            .collect(),
        _ => Vec::new(),
    };
    if !req.explain {
        generator.finish(&manifests)?;
    }
    result
}

/// Run a build with a given generator (tests and the LLM path plug theirs in here).
pub fn build_with(
    req: &BuildRequest,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
) -> Result<BuildSummary> {
    let cfg = &req.cfg;
    // --explain only reads; a build holds its folders for as long as it runs
    let _lock = if req.explain {
        None
    } else {
        Some(lock_run_folders(req)?)
    };
    let mut summary = BuildSummary::default();
    let single = req.splits.is_empty();
    let splits = if single {
        vec![("test".to_string(), cfg.run.n)]
    } else {
        req.splits.clone()
    };
    if let Some(st) = &res.store
        && (req.verbose || req.explain)
    {
        for line in st.describe() {
            eprintln!("{line}");
        }
    }
    let held_out = gtb_sample::Sampler::held_out_cities(cfg, res, req.holdout_cities);
    if !held_out.is_empty() && req.verbose {
        let names: Vec<&str> = held_out
            .iter()
            .map(|&c| res.city(c).name.as_str())
            .collect();
        eprintln!("held-out cities (test split only): {}", names.join("、"));
    }
    let split_cfgs: Vec<Config> = splits
        .iter()
        .map(|(name, n)| {
            let mut split_cfg = cfg.clone();
            split_cfg.run.n = *n;
            if !single {
                // every split has its own stream, derived from the master seed and its name
                let d = blake3::hash(format!("{}/{}", cfg.run.seed, name).as_bytes());
                split_cfg.run.seed =
                    u64::from_le_bytes(d.as_bytes()[..8].try_into().expect("8 bytes"));
            }
            split_cfg
        })
        .collect();
    let mut ctxs: Vec<Split> = splits
        .iter()
        .zip(&split_cfgs)
        .map(|((name, _), split_cfg)| {
            let avoid: &[CityId] = if name == "test" { &[] } else { &held_out };
            let paths = SplitPaths::of(cfg, name, single);
            Split::new(split_cfg, res, generator, paths, name, avoid, req.shard)
        })
        .collect();
    if !single {
        introduce_neighbours(&mut ctxs)?;
    }
    for ctx in &ctxs {
        summary
            .splits
            .extend(run_split(req, ctx, &mut summary.stages)?);
    }
    Ok(summary)
}

/// Leakage-free splits, decided without building any split (so that a shard can decide
/// alone): each split avoids the sampled signatures of the splits before it; a replacement
/// avoids every other split's sampled signatures and hashes to its own split's class.
fn introduce_neighbours(ctxs: &mut [Split]) -> Result<()> {
    let mut sampled: Vec<Vec<String>> = Vec::with_capacity(ctxs.len());
    for ctx in ctxs.iter_mut() {
        let mut earlier: Vec<String> = sampled.iter().flatten().cloned().collect();
        earlier.sort_unstable();
        earlier.dedup();
        ctx.neighbours.earlier = earlier;
        sampled.push(sample::sampled_signatures(ctx)?);
    }
    let count = ctxs.len();
    for (k, ctx) in ctxs.iter_mut().enumerate() {
        let mut others: Vec<String> = (0..count)
            .filter(|&j| j != k)
            .flat_map(|j| sampled[j].iter().cloned())
            .collect();
        others.sort_unstable();
        others.dedup();
        ctx.neighbours.others = others;
        ctx.neighbours.class = (k, count);
    }
    Ok(())
}

/// Lock the output, work and reports folders, then remove the temp files that runs which died
/// left in them.
fn lock_run_folders(req: &BuildRequest) -> Result<gtb_ops::lock::FolderLock> {
    let r = &req.cfg.run;
    let dirs = [r.out.as_path(), r.work_dir.as_path(), r.reports.as_path()];
    let held = gtb_ops::lock::lock_folders(&dirs, req.wait)?;
    let removed = gtb_ops::lock::remove_stale_temps(&dirs)?;
    if req.verbose && !removed.is_empty() {
        eprintln!(
            "removed {} temp file(s) left by runs that died: {}",
            removed.len(),
            removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(held)
}

/// Decide and run the stages of one split; `None` with `--explain`. The decisions go to
/// `runs`.
fn run_split(
    req: &BuildRequest,
    ctx: &Split,
    runs: &mut Vec<StageRun>,
) -> Result<Option<SplitSummary>> {
    let dag = Dag::new(stages(req.shard.is_some()))?;
    let decided = dag.decide(ctx, &ctx.paths.work);
    runs.extend(decided.iter().map(|d| StageRun {
        split: ctx.name.clone(),
        stage: d.stage,
        freshness: d.freshness.clone(),
    }));
    let split = ctx.name.as_str();
    let mut report = |e: Event<BuildStage>| {
        if req.verbose || req.explain {
            print_event(split, &e);
        }
    };
    let mut art = Artifacts::default();
    if req.explain {
        dag.explain(&decided, &mut report);
        return Ok(None);
    }
    art.decided = decided.clone();
    dag.execute(&decided, ctx, &ctx.paths.work, &mut art, &mut report)?;
    let published = art.publish.take();
    Ok(Some(SplitSummary {
        name: ctx.name.clone(),
        tasks: art.sampled()?.n,
        path: published
            .as_ref()
            .and_then(|p| p.path.clone())
            .unwrap_or_else(|| ctx.paths.tasks.clone()),
        sha256: published.map(|p| p.sha256).unwrap_or_default(),
        dropped: art.validate.as_ref().map_or(0, |v| v.summary.dropped),
        shard: req.shard,
    }))
}

/// One line per event on stderr, as it happens: a failed build shows which stages ran.
fn print_event(split: &str, e: &Event<BuildStage>) {
    let line = |stage: BuildStage, what: String| eprintln!("{split:>6} {:<9} {what}", stage.name());
    match e {
        Event::Explained(d) => match &d.freshness {
            Freshness::Fresh => line(d.stage, "fresh: would reuse".into()),
            Freshness::Dirty(r) => line(d.stage, format!("would run: {r}")),
        },
        Event::Reused(d) => line(d.stage, "fresh, reused".into()),
        Event::Started(d) => match &d.freshness {
            Freshness::Dirty(r) => line(d.stage, format!("runs: {r}")),
            Freshness::Fresh => line(d.stage, "runs".into()),
        },
        Event::Streams(d, into) => line(d.stage, format!("streams into {}", into.name())),
        Event::Finished(d, t) => line(d.stage, format!("done ({:.1} s)", t.as_secs_f64())),
        Event::Failed(d, t) => line(d.stage, format!("failed ({:.1} s)", t.as_secs_f64())),
    }
}

/// A progress bar for a streaming stage (hidden when stderr is not a terminal).
fn bar(len: usize, msg: &'static str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg:>9} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("template")
            .progress_chars("=> "),
    );
    pb.set_message(msg);
    pb
}

/// The signature of a written task (same shape as `Skeleton::signature`).
pub fn signature_of(t: &Task) -> String {
    format!(
        "{}|{}|{}|{}",
        t.metadata.group_id,
        t.metadata.departure_city,
        t.metadata.cities.join("、"),
        t.days().unwrap_or(0)
    )
}
