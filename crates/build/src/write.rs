//! Stage `write`: publish the split (`gtb_ops::publish`: the task file in its seeded shuffled
//! order, with `[solve]` the witness plans the validate stage found (`gtb_ops::plans`), the
//! reports, the manifest last).

use super::BuildStage;
use super::split::{Artifacts, Published, Split};
use crate::CODE_VERSION;
use anyhow::Result;
use gtb_core::digest;
use gtb_ops::plans::{WITNESS_REPORTS, Witnesses, plans_path};
use gtb_ops::publish::{ManifestBase, Publication, REPORTS, ValidateSummary, publish};
use gtb_pipeline::dag::{Decided, Stage};
use gtb_pipeline::{Fingerprint, Freshness, StageId};

pub(super) struct WriteSplit;

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for WriteSplit {
    fn id(&self) -> BuildStage {
        BuildStage::Write
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Validate]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        Fingerprint::default()
            .with("config run.seed", ctx.cfg.run.seed.to_string())
            .with("output", ctx.paths.tasks.display().to_string())
    }
    fn outputs(&self, ctx: &Split<'a>) -> Vec<std::path::PathBuf> {
        let r = &ctx.paths.reports;
        let mut outputs = vec![ctx.paths.tasks.clone(), ctx.paths.manifest.clone()];
        outputs.extend(REPORTS.iter().map(|f| r.join(f)));
        if ctx.cfg.solve.enabled {
            let dir = ctx
                .paths
                .tasks
                .parent()
                .unwrap_or(std::path::Path::new("."));
            outputs.extend(gtb_world::write::world_files().iter().map(|f| dir.join(f)));
            outputs.push(plans_path(&ctx.paths.tasks));
            outputs.extend(WITNESS_REPORTS.iter().map(|f| r.join(f)));
        }
        outputs
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let validated = art.validated()?;
        let (counts, audit) = (validated.summary.clone(), validated.audit.take());
        let samples = validated.samples.take();
        let work = &ctx.paths.work;
        let report = super::validate::waiting_report(work)?;
        let witnesses = ctx.cfg.solve.enabled.then(|| Witnesses {
            parts: vec![super::validate::witness_path(work)],
            regenerated: counts.regenerated_for_witness,
            samples,
        });
        let base = manifest_base(ctx, &art.decided, counts);
        let (sha, _) = publish(Publication {
            lines: super::validate::validated_lines(work)?,
            witnesses,
            seed: ctx.cfg.run.seed,
            tasks: ctx.paths.tasks.clone(),
            manifest: ctx.paths.manifest.clone(),
            reports: ctx.paths.reports.clone(),
            report,
            audit,
            base,
            // the world is built on the witness plans: `--no-witness` builds write none
            resources: ctx.cfg.solve.enabled.then_some(ctx.res),
        })?;
        digest::write_atomic(&work.artifact(BuildStage::Write), b"")?;
        art.publish = Some(Published {
            sha256: sha,
            path: None,
        });
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        art.publish = Some(Published {
            sha256: digest::sha256_file(&ctx.paths.tasks)?,
            path: None,
        });
        Ok(())
    }
}

/// What a split's manifest says: every stage's fingerprint (the last one's excepted) and
/// decision, the config, inputs and counts.
pub(super) fn manifest_base(
    ctx: &Split,
    decided: &[Decided<BuildStage>],
    counts: ValidateSummary,
) -> ManifestBase {
    let last = decided.last().map(|d| d.stage);
    let stage_fingerprints = decided
        .iter()
        .filter(|d| Some(d.stage) != last)
        .map(|d| (d.stage.name().to_string(), d.fingerprint.digest().into()))
        .collect();
    let stage_decisions = decided
        .iter()
        .map(|d| {
            let what = match &d.freshness {
                Freshness::Fresh => "reused".into(),
                Freshness::Dirty(r) => format!("ran: {r}"),
            };
            (d.stage.name().to_string(), what.into())
        })
        .collect();
    ManifestBase {
        code_version: CODE_VERSION.to_string(),
        seed: ctx.cfg.run.seed,
        generator: format!("{} {}", ctx.generator.name(), ctx.generator.version()),
        config: serde_json::to_value(ctx.cfg).expect("the config serialises"),
        inputs: ctx.res.input_digests.clone(),
        stage_fingerprints,
        stage_decisions,
        counts,
        llm: None,
        store: ctx.res.store.clone(),
    }
}
