//! Stage `prepare`: the checked resources. Loading happens before the stages run (every stage
//! reads the resources); this stage records what was loaded and the digest of every input
//! file, so that a changed raw file reruns everything downstream.

use super::BuildStage;
use super::split::{Artifacts, Split};
use crate::CODE_VERSION;
use anyhow::Result;
use gtb_core::jsonl::write_jsonl;
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::Stage;

pub(super) struct Prepare;

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for Prepare {
    fn id(&self) -> BuildStage {
        BuildStage::Prepare
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        let mut fp = Fingerprint::default().with("code", CODE_VERSION);
        for (f, d) in &ctx.res.input_digests {
            fp = fp.with(&format!("input {f}"), d.clone());
        }
        fp
    }
    fn run(&self, ctx: &Split<'a>, _art: &mut Artifacts) -> Result<()> {
        let res = ctx.res;
        let info = serde_json::json!({
            "cities": res.cities.len(),
            "destinations": res.destinations().count(),
            "hubs": res.hubs().count(),
            "attractions": res.attractions.iter().map(Vec::len).sum::<usize>(),
            "food": res.food.iter().map(Vec::len).sum::<usize>(),
            "profiles": res.profiles.len(),
            "archetypes": res.archetypes.len(),
            "clusters": res.clusters.len(),
            "inputs": res.input_digests,
        });
        let work = &ctx.paths.work;
        write_jsonl(&work.artifact(BuildStage::Prepare), &[info])
    }
}
