//! Stage `write`: publish the split. The validated lines are copied in a seeded shuffled order
//! (positioned reads, so the 100,000-task file is never held in memory) into the task file,
//! then come the reports and the manifest.
//!
//! Publish order, so that a crash at any point leaves no report or manifest that disagrees
//! with the task file: (1) remove the manifest and the reports of the previous file; (2) put
//! the new task file in place (temp + rename); (3) write the validation report and the audit,
//! each carrying the sha256 of the file it describes; (4) write the manifest, last. A split
//! without a manifest is incomplete, and the next build's write stage reruns.

use super::split::{Artifacts, Split, ValidateSummary};
use crate::pipeline::dag::{Planned, Stage};
use crate::pipeline::{Decision, Fingerprint};
use crate::rng::item_rng;
use crate::{CODE_VERSION, digest};
use anyhow::{Context, Result};
use rand::seq::SliceRandom;
use std::io::BufRead;

pub(super) struct WriteSplit;

impl<'a> Stage<Split<'a>, Artifacts> for WriteSplit {
    fn name(&self) -> &'static str {
        "write"
    }
    fn upstream(&self) -> &'static [&'static str] {
        &["validate"]
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
        outputs
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let validated = art
            .validated
            .as_ref()
            .context("the validate stage left no summary")?;
        unpublish(ctx)?;
        super::crash_point("write:unpublished");
        let (sha, tasks) = write_shuffled(ctx)?;
        super::crash_point("write:tasks-in-place");
        publish_validation_report(ctx, &sha)?;
        // the split's audit against the paper's figures, next to its validation report
        let mut audit =
            crate::audit::Audit::run(&ctx.paths.tasks, Some(&crate::audit::Against::Paper), false)?;
        audit.report.sha256 = Some(sha.clone());
        crate::ops::sinks::ReportDir(ctx.paths.reports.clone()).write_audit(&audit)?;
        super::crash_point("write:reports-written");
        let m = manifest(ctx, &sha, tasks, validated, &art.planned);
        digest::write_atomic(&ctx.paths.manifest, crate::pyjson::to_string(&m).as_bytes())?;
        digest::write_atomic(&ctx.paths.work.artifact("write"), b"")?;
        art.sha256 = Some(sha);
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        art.sha256 = Some(digest::sha256_file(&ctx.paths.tasks)?);
        Ok(())
    }
}

/// The reports published with a task file.
const REPORTS: [&str; 5] = [
    "report.json",
    "report.md",
    "audit.html",
    "audit.json",
    "audit.md",
];

/// Step (1) of publishing: the split stops looking complete (no manifest), and no report of
/// the previous file survives to describe the next one.
fn unpublish(ctx: &Split) -> Result<()> {
    let reports = REPORTS.iter().map(|f| ctx.paths.reports.join(f));
    for p in std::iter::once(ctx.paths.manifest.clone()).chain(reports) {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", p.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The validate stage's report (waiting in the work folder), published beside the task file
/// with the sha256 of the file it describes.
fn publish_validation_report(ctx: &Split, sha: &str) -> Result<()> {
    let work = &ctx.paths.work.root;
    let read = |name: &str| {
        let p = work.join(name);
        std::fs::read(&p).with_context(|| format!("reading {}", p.display()))
    };
    let mut json: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&read("report.json")?).context("reading report.json")?;
    json.insert("test_jsonl_sha256".into(), sha.into());
    let md = String::from_utf8_lossy(&read("report.md")?).into_owned();
    let md = match md.split_once("\n\n") {
        Some((title, rest)) => {
            format!("{title}\n\nDescribes the task file with sha256 `{sha}`.\n\n{rest}")
        }
        None => format!("{md}\nDescribes the task file with sha256 `{sha}`.\n"),
    };
    let reports = &ctx.paths.reports;
    digest::write_atomic(
        &reports.join("report.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    digest::write_atomic(&reports.join("report.md"), md.as_bytes())
}

/// Copy the validate artifact's lines in the split's shuffled order into the task file;
/// returns its sha256 and line count.
fn write_shuffled(ctx: &Split) -> Result<(String, usize)> {
    use sha2::Digest;
    use std::os::unix::fs::FileExt;
    let artifact = ctx.paths.work.artifact("validate");
    let file = std::fs::File::open(&artifact)
        .with_context(|| format!("reading {}", artifact.display()))?;
    // index the artifact's lines, then copy them in shuffled order with positioned reads
    let mut spans: Vec<(u64, usize)> = Vec::new();
    let mut pos = 0u64;
    for line in std::io::BufReader::with_capacity(1 << 20, &file).split(b'\n') {
        let len = line?.len();
        if len > 0 {
            spans.push((pos, len));
        }
        pos += len as u64 + 1;
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.shuffle(&mut item_rng(ctx.cfg.run.seed, "write", "order"));
    let mut hasher = sha2::Sha256::default();
    digest::write_streaming_atomic(&ctx.paths.tasks, |w| {
        let mut buf = Vec::new();
        for &i in &order {
            let (off, len) = spans[i];
            buf.resize(len, 0);
            file.read_exact_at(&mut buf, off)
                .with_context(|| format!("reading {}", artifact.display()))?;
            buf.push(b'\n');
            w.write_all(&buf)?;
            hasher.update(&buf);
            if i == order[order.len() / 2] {
                super::crash_point("write:task-file-half-written");
            }
        }
        Ok(())
    })?;
    let sha = crate::digest::hex(&hasher.finalize());
    Ok((sha, spans.len()))
}

/// The manifest: versions, seed, resolved config, inputs, every upstream stage's fingerprint
/// and decision, counts and the task file's sha256.
fn manifest(
    ctx: &Split,
    sha: &str,
    tasks: usize,
    vs: &ValidateSummary,
    planned: &[Planned],
) -> serde_json::Value {
    let fingerprints: serde_json::Map<_, _> = planned
        .iter()
        .filter(|p| p.stage != "write")
        .map(|p| (p.stage.to_string(), p.fingerprint.digest().into()))
        .collect();
    let decisions: serde_json::Map<_, _> = planned
        .iter()
        .map(|p| {
            let d = match &p.decision {
                Decision::Fresh => "reused".into(),
                Decision::Rerun(r) => format!("ran: {r}"),
            };
            (p.stage.to_string(), d.into())
        })
        .collect();
    let (cfg, generator) = (ctx.cfg, ctx.generator);
    serde_json::json!({
        "gtb_version": env!("CARGO_PKG_VERSION"),
        "code_version": CODE_VERSION,
        "seed": cfg.run.seed,
        "generator": format!("{} {}", generator.name(), generator.version()),
        "config": cfg,
        "inputs": ctx.res.input_digests.iter().map(|(f, d)| serde_json::json!({"file": f, "blake3": d})).collect::<Vec<_>>(),
        "stage_fingerprints": fingerprints,
        "stage_decisions": decisions,
        "counts": {
            "tasks": tasks,
            "easy": vs.classes[0], "medium": vs.classes[1], "hard": vs.classes[2],
            "users_with_preferences": vs.users,
            "dropped": vs.dropped,
        },
        "test_jsonl_sha256": sha,
    })
}
