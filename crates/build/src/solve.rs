//! Stage `solve` (`[solve] enabled = true`): a witness plan for every published task, written
//! to `plans.jsonl` beside the task file (same order), and the reference figures (group
//! utility and fairness by difficulty, shares with compromises or subgroups) to
//! `<reports>/witness.{md,json}`. The validate stage already refused tasks without a witness,
//! so a task without one here is an error, not a line with `"plan": null`. The task file and
//! its manifest are not touched: with `[solve]` off this stage does not exist.

use super::BuildStage;
use super::split::{Artifacts, Split};
use crate::CODE_VERSION;
use anyhow::{Result, bail};
use gtb_core::digest;
use gtb_ops::solve::{Figures, plans_bytes, read_tasks, solve_tasks};
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::Stage;
use serde_json::json;
use std::path::PathBuf;

pub(super) struct Solve;

/// Where the plans of a split go: beside its task file.
pub(super) fn plans_path(ctx: &Split) -> PathBuf {
    ctx.paths.tasks.with_file_name("plans.jsonl")
}

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for Solve {
    fn id(&self) -> BuildStage {
        BuildStage::Solve
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Write]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        Fingerprint::default()
            .with_json("config solve", &ctx.cfg.solve)
            .with("code", CODE_VERSION)
            .with("output", plans_path(ctx).display().to_string())
    }
    fn outputs(&self, ctx: &Split<'a>) -> Vec<PathBuf> {
        let r = &ctx.paths.reports;
        vec![
            plans_path(ctx),
            r.join("witness.md"),
            r.join("witness.json"),
        ]
    }
    fn run(&self, ctx: &Split<'a>, _art: &mut Artifacts) -> Result<()> {
        let tasks = read_tasks(&ctx.paths.tasks)?;
        let lines = solve_tasks(&ctx.solver(), &tasks);
        if let Some(l) = lines.iter().find(|l| l.plan.is_none()) {
            bail!(
                "{}: task {} has no witness plan although validation required one ({})",
                ctx.paths.tasks.display(),
                l.task_id,
                l.reason.as_deref().unwrap_or("no reason")
            );
        }
        let plans = plans_bytes(&lines);
        digest::write_atomic(&plans_path(ctx), &plans)?;
        let figures = Figures::of(&tasks, &lines);
        let r = &ctx.paths.reports;
        std::fs::create_dir_all(r)?;
        let described = json!({
            "tasks": ctx.paths.tasks.display().to_string(),
            "tasks_sha256": digest::sha256_file(&ctx.paths.tasks)?,
            "plans_sha256": digest::sha256_file(&plans_path(ctx))?,
            "figures": figures,
        });
        digest::write_atomic(
            &r.join("witness.json"),
            &serde_json::to_vec_pretty(&described)?,
        )?;
        let md = format!(
            "# Witness plans\n\nEvery task of `{}` has a witness plan in `{}` (docs/PLANS.md). \
             Reference figures of the witnesses (means over the tasks; shares of tasks):\n\n{}",
            ctx.paths.tasks.display(),
            plans_path(ctx).display(),
            figures.to_markdown()
        );
        digest::write_atomic(&r.join("witness.md"), md.as_bytes())?;
        digest::write_atomic(&ctx.paths.work.artifact(BuildStage::Solve), b"")?;
        Ok(())
    }
}
