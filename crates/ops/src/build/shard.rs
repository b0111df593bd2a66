//! Stage `shard` (instead of `write` in a `--shard I/N` build): publish the slice for
//! `gtb merge`. Beside the split's task file would go, it writes `validated.jsonl` (the slice's
//! release lines in slot order), with `[solve]` `witnesses.jsonl` (their witness lines), and,
//! last, `shard.json`: which slice of which plan this is,
//! the sha256 of the lines, the slice's validation report and manifest counts.

use super::sample::SHARD_KEY;
use super::split::{Artifacts, Shard, Split};
use super::write::ManifestBase;
use anyhow::{Context, Result};
use gtb_core::digest;
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::{Planned, Stage};
use gtb_validate::report::Report;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `shard.json`: a slice of a plan, as `gtb merge` reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ShardFile {
    pub split: String,
    pub shard: usize,
    pub shards: usize,
    /// the slots of the split this slice holds, [start, end)
    pub slots: [usize; 2],
    /// every stage's inputs but the slice: equal for all shards of one plan
    pub plan: Fingerprint,
    /// the slice's lines, beside this file
    pub validated: String,
    pub validated_sha256: String,
    /// `[solve]`: the witness lines of the slice's tasks (slot order), beside this file
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnesses: Option<String>,
    pub manifest: ManifestBase,
    pub report: Report,
    /// the LLM accounting of the shard's build (added by the generator after the run, as to
    /// a manifest)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<serde_json::Value>,
}

impl ShardFile {
    pub const NAME: &'static str = "shard.json";

    /// The shard file in `dir` (a shard build's output folder, or a split's sub-folder of it).
    pub fn read(dir: &Path) -> Result<ShardFile> {
        let p = dir.join(Self::NAME);
        let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_slice(&bytes).with_context(|| format!("reading {}", p.display()))
    }

    pub fn index(&self) -> Shard {
        Shard {
            index: self.shard,
            count: self.shards,
        }
    }
}

pub(super) struct ShardSlice;

/// Where a split's slice goes: the folder its task file would go to.
fn slice_dir(ctx: &Split) -> PathBuf {
    ctx.paths
        .tasks
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

impl<'a> Stage<Split<'a>, Artifacts> for ShardSlice {
    fn name(&self) -> &'static str {
        "shard"
    }
    fn upstream(&self) -> &'static [&'static str] {
        &["validate"]
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
        copy_file(&work.artifact("validate"), &lines)?;
        let sha = digest::sha256_file(&lines)?;
        let witnesses = if ctx.cfg.solve.enabled {
            copy_file(&super::validate::witness_path(work), &dir.join(WITNESSES))?;
            Some(WITNESSES.to_string())
        } else {
            None
        };
        let report = super::validate::waiting_report(work)?;
        let counts = art.validated.clone().context("no validate summary")?;
        let shard_file = ShardFile {
            split: ctx.name.clone(),
            shard: shard.index,
            shards: shard.count,
            slots: [ctx.slots.start, ctx.slots.end],
            plan: plan_fingerprint(&art.planned),
            validated: "validated.jsonl".into(),
            validated_sha256: sha.clone(),
            witnesses,
            manifest: ManifestBase::of(ctx, &art.planned, counts),
            report,
            llm: None,
        };
        digest::write_atomic(&file, &serde_json::to_vec_pretty(&shard_file)?)?;
        digest::write_atomic(&work.artifact("shard"), b"")?;
        art.sha256 = Some(sha);
        art.published = Some(lines);
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let lines = slice_dir(ctx).join("validated.jsonl");
        art.sha256 = Some(digest::sha256_file(&lines)?);
        art.published = Some(lines);
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

/// The plan a slice belongs to: the inputs of every stage before this one, without the slice
/// (`shard`) and without upstream digests (they chain the slice in), as `stage/input`.
fn plan_fingerprint(planned: &[Planned]) -> Fingerprint {
    let mut fp = Fingerprint::default();
    for p in planned.iter().filter(|p| p.stage != "shard") {
        for (k, v) in &p.fingerprint.0 {
            if k != SHARD_KEY && !k.starts_with("upstream ") {
                fp = fp.with(&format!("{}/{k}", p.stage), v.clone());
            }
        }
    }
    fp
}
