//! Stage `sample`: the split's task skeletons (archetype, cities, hub, days, date, pattern,
//! difficulty), one per slot, avoiding the signatures of earlier splits.

use super::split::{Artifacts, Split};
use crate::CODE_VERSION;
use crate::difficulty::Class;
use crate::pipeline::dag::Stage;
use crate::pipeline::{Fingerprint, from_jsonl, to_jsonl};
use crate::task::Skeleton;
use anyhow::{Result, bail};

pub(super) struct Sample;

impl<'a> Stage<Split<'a>, Artifacts> for Sample {
    fn name(&self) -> &'static str {
        "sample"
    }
    fn upstream(&self) -> &'static [&'static str] {
        &["prepare"]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        let cfg = ctx.cfg;
        Fingerprint::default()
            .with("config run.seed", cfg.run.seed.to_string())
            .with("config run.n", cfg.run.n.to_string())
            .with_json("config sample", &cfg.sample)
            .with(
                "excluded signatures",
                crate::digest::digest_bytes(ctx.exclusions.join("\n").as_bytes()),
            )
            .with(
                "held-out cities",
                ctx.held_out
                    .iter()
                    .map(|&c| ctx.res.city(c).name.clone())
                    .collect::<Vec<_>>()
                    .join("、"),
            )
            .with("code", CODE_VERSION)
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let sampler = ctx.sampler()?;
        let classes = sampler.class_plan();
        let mut skeletons = sampler.sample();
        let mut next = ctx.cfg.run.n;
        for (s, &class) in skeletons.iter_mut().zip(&classes) {
            redraw_excluded(ctx, s, class, &mut next)?;
        }
        let work = &ctx.paths.work;
        crate::digest::write_atomic(&work.artifact("sample"), &to_jsonl(&skeletons))?;
        art.skeletons = skeletons;
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let work = &ctx.paths.work;
        art.skeletons = from_jsonl(&work.read_artifact("sample")?, &work.artifact("sample"))?;
        Ok(())
    }
}

/// Redraw a skeleton whose signature an earlier split holds, from stream position `next` on
/// (leakage-free splits).
pub(super) fn redraw_excluded(
    ctx: &Split,
    sk: &mut Skeleton,
    class: Class,
    next: &mut usize,
) -> Result<()> {
    let sampler = ctx.sampler()?;
    let mut guard = 0;
    while ctx.is_excluded(&sk.signature()) {
        *sk = sampler.draw(*next, class);
        *next += 1;
        guard += 1;
        if guard > 10_000 {
            bail!(
                "split {}: cannot find a skeleton unseen in earlier splits; the splits are too large for the resources",
                ctx.name
            );
        }
    }
    Ok(())
}

/// The class of a skeleton, from its difficulty type.
pub(super) fn class_of(s: &str) -> Class {
    match s {
        "easy" => Class::Easy,
        "medium" => Class::Medium,
        _ => Class::Hard,
    }
}
