//! Stage `shard` (instead of `write` in a `--shard I/N` build): publish the slice for
//! `gtb merge`. Beside the split's task file would go, it writes `validated.jsonl` (the slice's
//! release lines in slot order), with `[solve]` `witnesses.jsonl` (their witness lines), and,
//! last, `shard.json`: which slice of which build this is,
//! the sha256 of the lines, the slice's validation report and manifest counts.

use super::BuildStage;
use super::sample::SHARD_KEY;
use super::split::{Artifacts, Published, Split};
use super::write::manifest_base;
use anyhow::{Context, Result};
use gtb_core::digest;
use gtb_ops::publish::ShardFile;
use gtb_pipeline::Fingerprint;
use gtb_pipeline::StageId;
use gtb_pipeline::dag::{Decided, Stage};
use std::path::{Path, PathBuf};

pub(super) struct ShardSlice;

/// Where a split's slice goes: the folder its task file would go to.
fn slice_dir(ctx: &Split) -> PathBuf {
    ctx.paths
        .tasks
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for ShardSlice {
    fn id(&self) -> BuildStage {
        BuildStage::Shard
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Validate]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        Fingerprint::default().with("output", slice_dir(ctx).display().to_string())
    }
    fn outputs(&self, ctx: &Split<'a>) -> Vec<PathBuf> {
        let dir = slice_dir(ctx);
        vec![dir.join("validated.jsonl"), dir.join(ShardFile::NAME)]
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let shard = ctx.shard.context("a shard stage without --shard")?;
        let dir = slice_dir(ctx);
        let work = &ctx.paths.work;
        // the previous slice stops looking complete before its lines change
        let file = dir.join(ShardFile::NAME);
        if file.exists() {
            std::fs::remove_file(&file).with_context(|| format!("removing {}", file.display()))?;
        }
        let lines = dir.join("validated.jsonl");
        let sha = super::validate::validated_lines(work)?.write_in_order(&lines)?;
        let witnesses = if ctx.cfg.solve.enabled {
            copy_file(&super::validate::witness_path(work), &dir.join(WITNESSES))?;
            Some(WITNESSES.to_string())
        } else {
            None
        };
        let report = super::validate::waiting_report(work)?;
        let counts = art.validated()?.summary.clone();
        let shard_file = ShardFile {
            split: ctx.name.clone(),
            shard: shard.index,
            shards: shard.count,
            slots: [ctx.slots.start, ctx.slots.end],
            build: build_fingerprint(&art.decided),
            validated: "validated.jsonl".into(),
            validated_sha256: sha.clone(),
            witnesses,
            manifest: manifest_base(ctx, &art.decided, counts),
            report,
            llm: None,
        };
        digest::write_atomic(&file, &serde_json::to_vec_pretty(&shard_file)?)?;
        digest::write_atomic(&work.artifact(BuildStage::Shard), b"")?;
        art.publish = Some(Published {
            sha256: sha,
            path: Some(lines),
        });
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let lines = slice_dir(ctx).join("validated.jsonl");
        art.publish = Some(Published {
            sha256: digest::sha256_file(&lines)?,
            path: Some(lines),
        });
        Ok(())
    }
}

/// The slice's witness lines (`[solve]`), beside `validated.jsonl`.
const WITNESSES: &str = "witnesses.jsonl";

/// Copy an artifact into place atomically.
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    digest::write_streaming_atomic(to, |w| {
        let mut r =
            std::fs::File::open(from).with_context(|| format!("reading {}", from.display()))?;
        std::io::copy(&mut r, w).with_context(|| format!("copying {}", from.display()))?;
        Ok(())
    })
}

/// The build a slice belongs to: the inputs of every stage before this one, without the slice
/// (`shard`) and without upstream digests (they chain the slice in), as `stage/input`.
fn build_fingerprint(decided: &[Decided<BuildStage>]) -> Fingerprint {
    let mut fp = Fingerprint::default();
    for d in decided.iter().filter(|d| d.stage != BuildStage::Shard) {
        for (k, v) in &d.fingerprint.0 {
            if k != SHARD_KEY && !k.starts_with("upstream ") {
                fp = fp.with(&format!("{}/{k}", d.stage.name()), v.clone());
            }
        }
    }
    fp
}
