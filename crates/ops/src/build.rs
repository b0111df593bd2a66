//! `gtb build`: the pipeline for one split (or several, leakage-free).
//!
//! The stages are units (`pipeline::dag::Stage`), one file each under `ops/build/`, listed in
//! `stages()`; `pipeline::dag::Dag` plans them from fingerprints and runs them in order. This
//! file only resolves the splits, hands each split's context to the runner and prints what the
//! runner reports as it happens.
//!
//! Tasks stream through generate and validate in chunks, and the written file is assembled
//! from release-format lines, so a 100,000-task split never holds its tasks as structs at once.

mod generate;
mod plans;
mod prepare;
mod sample;
mod settle;
mod shard;
mod split;
mod validate;
mod write;

use anyhow::{Result, bail};
use gtb_core::config::Config;
use gtb_core::task::Task;
use gtb_generate::{PreferenceGenerator, offline::OfflineGenerator};
use gtb_pipeline::Decision;
use gtb_pipeline::dag::{Dag, Event, Stage};
use gtb_resources::{CityId, Resources};
use indicatif::{ProgressBar, ProgressStyle};
pub(crate) use plans::Witnesses;
pub(crate) use shard::ShardFile;
pub use split::Shard;
use split::{Artifacts, Split, SplitPaths};
use std::path::PathBuf;
pub(crate) use write::{Publication, publish};

/// A validated run plan: the resolved config plus what to do.
#[derive(Debug, Clone)]
pub struct BuildPlan {
    pub cfg: Config,
    /// show the stage plan without running it
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

impl BuildPlan {
    /// Build one split of `cfg.run.n` tasks quietly.
    pub fn new(cfg: Config) -> Self {
        BuildPlan {
            cfg,
            explain: false,
            splits: Vec::new(),
            verbose: false,
            holdout_cities: 0,
            wait: false,
            shard: None,
        }
    }

    /// Check the plan before anything runs: the config, the size of every split, and what
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

#[derive(Debug, Clone)]
pub struct SplitSummary {
    pub name: String,
    pub tasks: usize,
    pub path: PathBuf,
    pub sha256: String,
    pub dropped: usize,
    /// the slice a `--shard` build made (its `path` is the slice's validated lines)
    pub shard: Option<Shard>,
}

#[derive(Debug, Clone, Default)]
pub struct BuildSummary {
    /// (split/stage, decision) in run order
    pub stages: Vec<(String, Decision)>,
    pub splits: Vec<SplitSummary>,
}

/// The build's stages in execution order. A new stage is a `Stage` implementation in its own
/// file under `ops/build/`, added here; its upstream stages must come before it. A shard ends
/// with its slice (`shard`) instead of the published split (`write`, after `gtb merge`).
/// Witness plans (`[solve]`) are found by `validate` and published by `write`.
fn stages<'a>(sharded: bool) -> Vec<&'a dyn Stage<Split<'a>, Artifacts>> {
    let last: &'a dyn Stage<Split<'a>, Artifacts> = if sharded {
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

/// Run the plan.
pub fn build(plan: &BuildPlan) -> Result<BuildSummary> {
    let cfg = &plan.cfg;
    plan.validate()?;
    let res = super::load_resources(cfg)?;
    if cfg.run.generator != "openai" {
        let generator = OfflineGenerator::new(cfg.generate.conflicts.clone(), &res);
        return build_with(plan, &res, &generator);
    }
    // a run the generator stops fails at the batch in progress: that stage is not committed,
    // answers received so far stay in the cache
    let generator = gtb_llm::LlmGenerator::new(cfg)?;
    let result = build_with(plan, &res, &generator);
    // token usage and cost go into the manifests (a shard's: shard.json, which `gtb merge`
    // adds up) written by this run and <reports>/llm_report.json
    let (last, file) = match plan.shard {
        Some(_) => ("shard", ShardFile::NAME),
        None => ("write", "manifest.json"),
    };
    let manifests: Vec<PathBuf> = match &result {
        Ok(s) if !plan.explain => s
            .splits
            .iter()
            .filter(|sp| {
                s.stages.iter().any(|(st, d)| {
                    *st == format!("{}/{last}", sp.name) && matches!(d, Decision::Rerun(_))
                })
            })
            .filter_map(|sp| sp.path.parent().map(|d| d.join(file)))
            .collect(),
        _ => Vec::new(),
    };
    if !plan.explain {
        generator.finish(&manifests)?;
    }
    result
}

/// Run the plan with a given generator (tests and the LLM path plug theirs in here).
pub fn build_with(
    plan: &BuildPlan,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
) -> Result<BuildSummary> {
    let cfg = &plan.cfg;
    // --explain only reads; a build holds its folders for as long as it runs
    let _lock = if plan.explain {
        None
    } else {
        Some(lock_run_folders(plan)?)
    };
    let mut summary = BuildSummary::default();
    let single = plan.splits.is_empty();
    let splits = if single {
        vec![("test".to_string(), cfg.run.n)]
    } else {
        plan.splits.clone()
    };
    if let Some(st) = &res.store
        && (plan.verbose || plan.explain)
    {
        for line in st.describe() {
            eprintln!("{line}");
        }
    }
    let held_out = gtb_sample::Sampler::held_out_cities(cfg, res, plan.holdout_cities);
    if !held_out.is_empty() && plan.verbose {
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
            Split::new(split_cfg, res, generator, paths, name, avoid, plan.shard)
        })
        .collect();
    if !single {
        introduce_neighbours(&mut ctxs)?;
    }
    for ctx in &ctxs {
        summary
            .splits
            .extend(run_split(plan, ctx, &mut summary.stages)?);
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
fn lock_run_folders(plan: &BuildPlan) -> Result<super::lock::FolderLock> {
    let r = &plan.cfg.run;
    let dirs = [r.out.as_path(), r.work_dir.as_path(), r.reports.as_path()];
    let held = super::lock::lock_folders(&dirs, plan.wait)?;
    let removed = super::lock::remove_stale_temps(&dirs)?;
    if plan.verbose && !removed.is_empty() {
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

/// Plan and run the stages of one split; `None` with `--explain`. The decisions go to
/// `decisions` as (split/stage, decision).
fn run_split(
    plan: &BuildPlan,
    ctx: &Split,
    decisions: &mut Vec<(String, Decision)>,
) -> Result<Option<SplitSummary>> {
    let dag = Dag::new(stages(plan.shard.is_some()))?;
    let planned = dag.plan(ctx, &ctx.paths.work);
    decisions.extend(
        planned
            .iter()
            .map(|p| (format!("{}/{}", ctx.name, p.stage), p.decision.clone())),
    );
    let split = ctx.name.as_str();
    let mut report = |e: Event| {
        if plan.verbose || plan.explain {
            print_event(split, &e);
        }
    };
    let mut art = Artifacts::default();
    if plan.explain {
        dag.explain(&planned, &mut report);
        return Ok(None);
    }
    art.planned = planned.clone();
    dag.execute(&planned, ctx, &ctx.paths.work, &mut art, &mut report)?;
    Ok(Some(SplitSummary {
        name: ctx.name.clone(),
        tasks: art.skeletons.len(),
        path: art
            .published
            .clone()
            .unwrap_or_else(|| ctx.paths.tasks.clone()),
        sha256: art.sha256.clone().unwrap_or_default(),
        dropped: art.validated.as_ref().map_or(0, |v| v.dropped),
        shard: plan.shard,
    }))
}

/// One line per event on stderr, as it happens: a failed build shows which stages ran.
fn print_event(split: &str, e: &Event) {
    let line = |stage: &str, what: String| eprintln!("{split:>6} {stage:<9} {what}");
    match e {
        Event::Explained(p) => match &p.decision {
            Decision::Fresh => line(p.stage, "fresh: would reuse".into()),
            Decision::Rerun(r) => line(p.stage, format!("would run: {r}")),
        },
        Event::Reused(p) => line(p.stage, "fresh, reused".into()),
        Event::Started(p) => match &p.decision {
            Decision::Rerun(r) => line(p.stage, format!("runs: {r}")),
            Decision::Fresh => line(p.stage, "runs".into()),
        },
        Event::Finished(p, t) => line(p.stage, format!("done ({:.1} s)", t.as_secs_f64())),
        Event::Failed(p, t) => line(p.stage, format!("failed ({:.1} s)", t.as_secs_f64())),
    }
}

/// Test hook for crash safety: `GTB_CRASH_AT=<point>` aborts the process at that point, as a
/// kill -9 would (no destructor runs, nothing is cleaned up). The points: `generate:chunk-written`,
/// `write:unpublished`, `write:task-file-half-written`, `write:tasks-in-place`,
/// `write:reports-written`.
fn crash_point(point: &str) {
    if std::env::var_os("GTB_CRASH_AT").is_some_and(|p| p == point) {
        std::process::abort();
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
