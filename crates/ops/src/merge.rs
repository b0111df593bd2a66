//! `gtb merge DIR... --out DIR`: join the slices of `gtb build --shard I/N` runs into the split
//! the unsharded build writes, byte for byte (the same lines in the same seeded order), with
//! its reports and manifest.
//!
//! Before anything is written, the shards are checked from their `shard.json`: every shard of
//! one build (same stage inputs but the slice), the same N, none missing, none given twice, and
//! each slice's lines as their sha256 says.

use crate::plans::Witnesses;
use crate::publish::{Publication, Shard, ShardFile, SplitSummary, publish};
use anyhow::{Context, Result, bail};
use gtb_core::digest;
use gtb_validate::report::Report;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to merge, and where to.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// the `--out` folders of the shard builds, in any order
    pub dirs: Vec<PathBuf>,
    pub out: PathBuf,
    /// wait for another build or merge that holds `out` instead of failing
    pub wait: bool,
}

/// A shard found in a folder.
struct Found {
    dir: PathBuf,
    file: ShardFile,
}

/// Merge the shards; one summary per split.
pub fn merge(opts: &MergeOptions) -> Result<Vec<SplitSummary>> {
    if opts.dirs.is_empty() {
        bail!("gtb merge: name the shard folders (the --out of each gtb build --shard I/N)");
    }
    let mut splits: BTreeMap<String, Vec<Found>> = BTreeMap::new();
    let mut single = true;
    for dir in &opts.dirs {
        let (found, nested) = shards_in(dir)?;
        single &= !nested;
        for f in found {
            splits.entry(f.file.split.clone()).or_default().push(f);
        }
    }
    let reports = opts.out.join("validation_reports");
    let _lock = super::lock::lock_folders(&[opts.out.as_path(), reports.as_path()], opts.wait)?;
    let mut checked = Vec::new();
    for (name, mut found) in splits {
        check_one_build(&name, &mut found)?;
        checked.push((name, found));
    }
    let mut summaries = Vec::new();
    for (name, found) in checked {
        let (tasks, manifest, reports) = if single {
            (
                opts.out.join("test.jsonl"),
                opts.out.join("manifest.json"),
                reports.clone(),
            )
        } else {
            let dir = opts.out.join(&name);
            (
                dir.join(format!("{name}.jsonl")),
                dir.join("manifest.json"),
                reports.join(&name),
            )
        };
        let count = found.len();
        let mut report = Report::default();
        let mut base = found[0].file.manifest.clone();
        for (k, f) in found.iter().enumerate() {
            if k == 0 {
                report = f.file.report.clone();
            } else {
                report.merge(f.file.report.clone());
                base.counts.add(&f.file.manifest.counts);
            }
        }
        let build = found[0].file.build.digest();
        base.stage_fingerprints = [("build".to_string(), build.into())].into_iter().collect();
        base.stage_decisions = [("merge".to_string(), format!("ran: {count} shards").into())]
            .into_iter()
            .collect();
        base.llm = shards_llm(&found);
        let parts: Vec<PathBuf> = found
            .iter()
            .map(|f| f.dir.join(&f.file.validated))
            .collect();
        let witnesses = shard_witnesses(&found, base.counts.regenerated_for_witness)?;
        // the world is built on the witness plans: shards without them merge without one
        let res = match &witnesses {
            Some(_) => Some(shard_resources(&base)?),
            None => None,
        };
        let (sha, n) = publish(Publication {
            lines: crate::lines::Lines::scan(&parts)?,
            witnesses,
            seed: base.seed,
            tasks: tasks.clone(),
            manifest,
            reports,
            report,
            audit: None,
            base: base.clone(),
            resources: res.as_ref(),
        })?;
        summaries.push(SplitSummary {
            name,
            tasks: n,
            path: tasks,
            sha256: sha,
            dropped: base.counts.dropped,
            shard: None,
        });
    }
    Ok(summaries)
}

/// The resources the shards were built from (for the split's world), which must still be the
/// ones their manifests name.
fn shard_resources(base: &crate::publish::ManifestBase) -> Result<gtb_resources::Resources> {
    let cfg: gtb_core::config::Config =
        serde_json::from_value(base.config.clone()).context("shard.json: field manifest.config")?;
    let res = super::load_resources(&cfg)?;
    if res.input_digests != base.inputs {
        bail!(
            "shard.json: the resources the shards were built from changed since (field manifest.inputs: their blake3 digests differ); rebuild the shards"
        );
    }
    Ok(res)
}

/// The shards' witness lines (`[solve]`), all or none: shards of one build solve alike.
fn shard_witnesses(found: &[Found], regenerated: usize) -> Result<Option<Witnesses>> {
    let parts: Vec<std::path::PathBuf> = found
        .iter()
        .filter_map(|f| Some(f.dir.join(f.file.witnesses.as_ref()?)))
        .collect();
    if parts.is_empty() {
        return Ok(None);
    }
    if parts.len() != found.len() {
        anyhow::bail!(
            "{} of {} shards have witness plans (witnesses.jsonl); shards of one build all solve or none does",
            parts.len(),
            found.len()
        );
    }
    Ok(Some(Witnesses {
        parts,
        regenerated,
        samples: None,
    }))
}

/// The shards' LLM accounting for the merged manifest: each shard's, and the totals of what
/// adds up (requests, tokens, cost); `None` for offline shards.
fn shards_llm(found: &[Found]) -> Option<serde_json::Value> {
    use serde_json::{Value, json};
    let each: Vec<(&Found, &Value)> = found
        .iter()
        .filter_map(|f| Some((f, f.file.llm.as_ref()?)))
        .collect();
    if each.is_empty() {
        return None;
    }
    let count = |pointer: &str| -> u64 {
        each.iter()
            .filter_map(|(_, v)| v.pointer(pointer)?.as_u64())
            .sum()
    };
    let money = |pointer: &str| -> f64 {
        let sum: f64 = each
            .iter()
            .filter_map(|(_, v)| v.pointer(pointer)?.as_f64())
            .sum();
        (sum * 1e6).round() / 1e6
    };
    let shards: Vec<Value> = each
        .iter()
        .map(|(f, v)| json!({"shard": f.file.index().to_string(), "accounting": v}))
        .collect();
    Some(json!({
        "totals": {
            "requests": {
                "sent": count("/requests/sent"), "cached": count("/requests/cached"),
                "retries": count("/requests/retries"), "failed": count("/requests/failed"),
            },
            "tokens": {
                "this_run": {"prompt": count("/tokens/this_run/prompt"), "completion": count("/tokens/this_run/completion")},
                "from_cache": {"prompt": count("/tokens/from_cache/prompt"), "completion": count("/tokens/from_cache/completion")},
            },
            "cost": {
                "currency": each[0].1.pointer("/cost/currency"),
                "this_run": money("/cost/this_run"), "dataset": money("/cost/dataset"),
            },
        },
        "shards": shards,
    }))
}

/// The shards in a shard build's folder: `shard.json` there (one split), or in its split
/// sub-folders (`--splits`). The flag says which.
fn shards_in(dir: &Path) -> Result<(Vec<Found>, bool)> {
    if dir.join(ShardFile::NAME).exists() {
        let file = ShardFile::read(dir)?;
        return Ok((
            vec![Found {
                dir: dir.to_path_buf(),
                file,
            }],
            false,
        ));
    }
    let mut found = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut subs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    subs.sort();
    for sub in subs {
        if sub.join(ShardFile::NAME).exists() {
            found.push(Found {
                file: ShardFile::read(&sub)?,
                dir: sub,
            });
        }
    }
    if found.is_empty() {
        bail!(
            "{}: no {} here or in its sub-folders (is it the --out of a gtb build --shard I/N that finished?)",
            dir.display(),
            ShardFile::NAME
        );
    }
    Ok((found, true))
}

/// The shards of one split: one build, one N, each index once, none missing, lines intact.
/// Sorts them by index.
fn check_one_build(split: &str, found: &mut [Found]) -> Result<()> {
    found.sort_by_key(|f| f.file.shard);
    let first = &found[0];
    let n = first.file.shards;
    for f in &found[1..] {
        let changes = f.file.build.changes_from(&first.file.build);
        if !changes.is_empty() {
            let why = gtb_pipeline::describe_changes(&changes);
            bail!(
                "{} is a shard of another build than {} (split {split}: {why}); merge only the shards of one build command",
                f.dir.display(),
                first.dir.display()
            );
        }
        if f.file.shards != n {
            bail!(
                "{} is shard {} but {} is shard {} (split {split}): one N for all shards",
                f.dir.display(),
                f.file.index(),
                first.dir.display(),
                first.file.index()
            );
        }
    }
    for w in found.windows(2) {
        if w[0].file.shard == w[1].file.shard {
            bail!(
                "shard {} of split {split} is given twice: {} and {}",
                w[0].file.index(),
                w[0].dir.display(),
                w[1].dir.display()
            );
        }
    }
    let have: Vec<usize> = found.iter().map(|f| f.file.shard).collect();
    let missing: Vec<String> = (0..n)
        .filter(|i| !have.contains(i))
        .map(|i| Shard { index: i, count: n }.to_string())
        .collect();
    if !missing.is_empty() {
        bail!(
            "split {split}: missing shard(s) {} (given: {}); build them with gtb build --shard I/{n}, then merge again",
            missing.join(", "),
            found
                .iter()
                .map(|f| format!("{} in {}", f.file.index(), f.dir.display()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for f in found.iter() {
        let lines = f.dir.join(&f.file.validated);
        let sha = digest::sha256_file(&lines)?;
        if sha != f.file.validated_sha256 {
            bail!(
                "{}: sha256 {sha}, but {} says {}: the shard changed after it was built; rebuild shard {}",
                lines.display(),
                f.dir.join(ShardFile::NAME).display(),
                f.file.validated_sha256,
                f.file.index()
            );
        }
    }
    Ok(())
}
