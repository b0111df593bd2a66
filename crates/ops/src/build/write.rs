//! Stage `write`: publish the split. The validated lines are copied in a seeded shuffled order
//! (positioned reads, so the 100,000-task file is never held in memory) into the task file,
//! then come the reports and the manifest.
//!
//! Publish order, so that a crash at any point leaves no report or manifest that disagrees
//! with the task file: (1) remove the manifest and the reports of the previous file; (2) put
//! the new task file in place (temp + rename); (3) write the validation report and the audit,
//! each carrying the sha256 of the file it describes; (4) write the manifest, last. A split
//! without a manifest is incomplete, and the next build's write stage reruns.

use super::BuildStage;
use super::split::{Artifacts, Published, Split, ValidateSummary};
use crate::CODE_VERSION;
use crate::sinks::{ReportDir, ReportSink};
use anyhow::{Context, Result};
use gtb_core::digest;
use gtb_core::rng::item_rng;
use gtb_pipeline::dag::{Decided, Stage};
use gtb_pipeline::{Fingerprint, Freshness, StageId};
use gtb_validate::report::Report;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::path::{Path, PathBuf};

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
        outputs
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let validated = art.validated()?;
        let (counts, audit) = (validated.summary.clone(), validated.audit.take());
        let work = &ctx.paths.work;
        let report = super::validate::waiting_report(work)?;
        let base = ManifestBase::of(ctx, &art.decided, counts);
        let (sha, _) = publish(Publication {
            parts: vec![work.artifact(BuildStage::Validate)],
            seed: ctx.cfg.run.seed,
            tasks: ctx.paths.tasks.clone(),
            manifest: ctx.paths.manifest.clone(),
            reports: ctx.paths.reports.clone(),
            report,
            audit,
            base,
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

/// The reports published with a task file.
const REPORTS: [&str; 5] = [
    "report.json",
    "report.md",
    "audit.html",
    "audit.json",
    "audit.md",
];

/// A split to publish: its validated lines in slot order (one file for a build, one per shard
/// for `gtb merge`), where it goes, its validation report and what its manifest says.
pub(crate) struct Publication {
    pub parts: Vec<PathBuf>,
    pub seed: u64,
    pub tasks: PathBuf,
    pub manifest: PathBuf,
    pub reports: PathBuf,
    pub report: Report,
    /// the audit's counts of the lines, when validate took them in this process (else the
    /// published task file is read for the audit)
    pub audit: Option<gtb_audit::report::Tally>,
    pub base: ManifestBase,
}

/// Publish a split (the order is in the module's doc); returns the task file's sha256 and
/// line count.
pub(crate) fn publish(mut p: Publication) -> Result<(String, usize)> {
    unpublish(&p)?;
    super::crash_point("write:unpublished");
    let (sha, tasks) = write_shuffled(&p.parts, p.seed, &p.tasks)?;
    super::crash_point("write:tasks-in-place");
    p.report.test_jsonl_sha256 = Some(sha.clone());
    ReportDir(p.reports.clone()).write_report(&p.report)?;
    // the split's audit against the paper's figures, next to its validation report
    let mut audit = match p.audit.take() {
        Some(t) => {
            let report = t.report(&p.tasks.display().to_string());
            gtb_audit::Audit::new(report, Some(&gtb_audit::paper::profile()))
        }
        None => gtb_audit::Audit::run(&p.tasks, Some(&gtb_audit::Against::Paper), false)?,
    };
    audit.report.sha256 = Some(sha.clone());
    ReportDir(p.reports.clone()).write_audit(&audit)?;
    super::crash_point("write:reports-written");
    let m = p.base.manifest(&sha, tasks);
    digest::write_atomic(&p.manifest, gtb_core::pyjson::to_string(&m).as_bytes())?;
    Ok((sha, tasks))
}

/// Step (1) of publishing: the split stops looking complete (no manifest), and no report of
/// the previous file survives to describe the next one.
fn unpublish(p: &Publication) -> Result<()> {
    let reports = REPORTS.iter().map(|f| p.reports.join(f));
    for path in std::iter::once(p.manifest.clone()).chain(reports) {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Copy the lines of `parts` (in order, slot order) in the seeded shuffled order into
/// `tasks`; returns its sha256 and line count.
fn write_shuffled(parts: &[PathBuf], seed: u64, tasks: &Path) -> Result<(String, usize)> {
    use sha2::Digest;
    use std::os::unix::fs::FileExt;
    let files = parts
        .iter()
        .map(|p| std::fs::File::open(p).with_context(|| format!("reading {}", p.display())))
        .collect::<Result<Vec<_>>>()?;
    // index the lines (part, offset, length), then copy them in shuffled order with
    // positioned reads
    let mut spans: Vec<(usize, u64, usize)> = Vec::new();
    for (k, file) in files.iter().enumerate() {
        let mut pos = 0u64;
        for line in std::io::BufReader::with_capacity(1 << 20, file).split(b'\n') {
            let len = line
                .with_context(|| format!("reading {}", parts[k].display()))?
                .len();
            if len > 0 {
                spans.push((k, pos, len));
            }
            pos += len as u64 + 1;
        }
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.shuffle(&mut item_rng(seed, "write", "order"));
    let mut hasher = sha2::Sha256::default();
    digest::write_streaming_atomic(tasks, |w| {
        let mut buf = Vec::new();
        for (done, &i) in order.iter().enumerate() {
            let (k, off, len) = spans[i];
            buf.resize(len, 0);
            files[k]
                .read_exact_at(&mut buf, off)
                .with_context(|| format!("reading {}", parts[k].display()))?;
            buf.push(b'\n');
            w.write_all(&buf)?;
            hasher.update(&buf);
            if done == order.len() / 2 {
                super::crash_point("write:task-file-half-written");
            }
        }
        Ok(())
    })?;
    Ok((digest::hex(&hasher.finalize()), spans.len()))
}

/// What a split's manifest says besides its task file's sha256 and line count. A shard keeps
/// it in `shard.json`; `gtb merge` adds the shards' up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ManifestBase {
    pub seed: u64,
    pub generator: String,
    pub config: serde_json::Value,
    pub inputs: Vec<(String, String)>,
    pub stage_fingerprints: serde_json::Map<String, serde_json::Value>,
    pub stage_decisions: serde_json::Map<String, serde_json::Value>,
    pub counts: ValidateSummary,
    /// the LLM accounting when it is known at publishing (`gtb merge`: the shards'); a build
    /// adds its own after the run
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<serde_json::Value>,
    /// the POI store the build read, its destinations and the cities it excluded
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<gtb_resources::StoreUse>,
}

impl ManifestBase {
    /// A split's: every stage's fingerprint (the last one's excepted) and decision.
    pub(super) fn of(
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

    fn manifest(&self, sha: &str, tasks: usize) -> serde_json::Value {
        let vs = &self.counts;
        let mut m = serde_json::json!({
            "gtb_version": env!("CARGO_PKG_VERSION"),
            "code_version": CODE_VERSION,
            "seed": self.seed,
            "generator": self.generator,
            "config": self.config,
            "inputs": self.inputs.iter().map(|(f, d)| serde_json::json!({"file": f, "blake3": d})).collect::<Vec<_>>(),
            "stage_fingerprints": self.stage_fingerprints,
            "stage_decisions": self.stage_decisions,
            "counts": {
                "tasks": tasks,
                "easy": vs.classes[0], "medium": vs.classes[1], "hard": vs.classes[2],
                "users_with_preferences": vs.users,
                "dropped": vs.dropped,
            },
            "test_jsonl_sha256": sha,
        });
        if let Some(llm) = &self.llm {
            m["llm"] = llm.clone();
        }
        if let Some(st) = &self.store {
            m["store"] = serde_json::to_value(st).expect("store use serialises");
        }
        m
    }
}
