//! Publishing a split (a build's `write` stage and `gtb merge` share it), and the files that
//! carry a split between processes: the manifest's contents (`ManifestBase`) and a shard's
//! `shard.json`.
//!
//! Publish order, so that a crash at any point leaves no report or manifest that disagrees
//! with the task file: (1) remove the manifest, the plans and the reports of the previous
//! file; (2) put the new task file and its plans in place (`[solve]`: `plans`; each temp +
//! rename, written at once); (3) write the validation report, the audit and the witness
//! figures, each carrying the sha256 of the file it describes; (4) write the manifest, last.
//! A split without a manifest is incomplete, and the next build's write stage reruns. The
//! validated lines are copied in a seeded shuffled order (`crate::lines`).

use crate::plans::{WITNESS_REPORTS, Witnesses, plans_path, publish_plans, write_plans};
use crate::sinks::{ReportDir, ReportSink};
use anyhow::{Context, Result};
use gtb_core::digest;
use gtb_pipeline::{Fingerprint, WorkDir};
use gtb_validate::report::Report;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Slice `index` of `count` of a plan: `gtb build --shard I/N` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The slots of a split of `n` this shard builds: contiguous, sizes differing by one at most.
    pub fn slots(&self, n: usize) -> Range<usize> {
        self.index * n / self.count..(self.index + 1) * n / self.count
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Shard> {
        let parsed = s.split_once('/').and_then(|(i, n)| {
            Some(Shard {
                index: i.trim().parse().ok()?,
                count: n.trim().parse().ok()?,
            })
        });
        match parsed {
            Some(sh) if sh.count >= 1 && sh.index < sh.count => Ok(sh),
            _ => anyhow::bail!(
                "{s:?} is not I/N with 0 <= I < N (shards count from 0, as Slurm array and Kubernetes completion indexes do)"
            ),
        }
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

/// What the validate stage learns beside its artifact (kept in the work directory).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ValidateSummary {
    pub classes: [usize; 3],
    pub users: usize,
    pub dropped: usize,
    /// `[solve]`: slots whose task was regenerated or replaced for want of a witness plan
    #[serde(default)]
    pub regenerated_for_witness: usize,
}

impl ValidateSummary {
    /// The counts of this slice and a later one together.
    pub fn add(&mut self, other: &ValidateSummary) {
        for (a, b) in self.classes.iter_mut().zip(other.classes) {
            *a += b;
        }
        self.users += other.users;
        self.dropped += other.dropped;
        self.regenerated_for_witness += other.regenerated_for_witness;
    }
    pub fn path(work: &WorkDir) -> PathBuf {
        work.root.join("validate.summary.json")
    }
    pub fn read(work: &WorkDir) -> Result<Self> {
        let p = Self::path(work);
        let bytes =
            std::fs::read(&p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))
    }
}

/// The reports published with a task file.
pub const REPORTS: [&str; 5] = [
    "report.json",
    "report.md",
    "audit.html",
    "audit.json",
    "audit.md",
];

/// A split to publish: its validated lines in slot order (one file for a build, one per shard
/// for `gtb merge`), where it goes, its validation report and what its manifest says.
pub struct Publication<'a> {
    /// the split's lines in slot order
    pub lines: crate::lines::Lines,
    /// `[solve]`: the witness lines of the same slots, published as `plans.jsonl`
    pub witnesses: Option<Witnesses>,
    pub seed: u64,
    pub tasks: PathBuf,
    pub manifest: PathBuf,
    pub reports: PathBuf,
    pub report: Report,
    /// the audit's counts of the lines, when validate took them in this process (else the
    /// published task file is read for the audit)
    pub audit: Option<gtb_audit::report::Tally>,
    pub base: ManifestBase,
    /// the resources the split was built from: its world (`gtb-world`: `sandbox_cache/`,
    /// `poi2category/`) is written beside the task file and listed in the manifest
    pub resources: Option<&'a gtb_resources::Resources>,
}

/// Publish a split (the order is in the module's doc); returns the task file's sha256 and
/// line count.
pub fn publish(mut p: Publication) -> Result<(String, usize)> {
    unpublish(&p)?;
    crash_point("write:unpublished");
    // the task file and the plans at once: each copy is bound by its one hashing thread
    let (written, plans) = std::thread::scope(|s| {
        let plans = (p.witnesses.as_ref()).map(|w| s.spawn(|| write_plans(w, p.seed, &p.tasks)));
        let written = p.lines.write_shuffled(p.seed, &p.tasks);
        let plans = plans.map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        (written, plans)
    });
    let (sha, tasks) = written?;
    let plans = plans.transpose()?;
    crash_point("write:tasks-in-place");
    let witness = match (&p.witnesses, plans) {
        (Some(w), Some((plans_sha, n))) => Some(publish_plans(
            w,
            (plans_sha, n, p.seed),
            &p.tasks,
            &p.reports,
            (&sha, tasks),
        )?),
        _ => None,
    };
    let world = match p.resources {
        Some(res) => Some(crate::world::publish_world(&p.tasks, res)?),
        None => None,
    };
    crash_point("write:world-written");
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
    crash_point("write:reports-written");
    let mut m = p.base.manifest(&sha, tasks);
    if let Some(w) = witness {
        m["witness"] = w;
    }
    if let Some(w) = world {
        m["world"] = w;
    }
    digest::write_atomic(&p.manifest, gtb_core::pyjson::to_string(&m).as_bytes())?;
    Ok((sha, tasks))
}

/// Step (1) of publishing: the split stops looking complete (no manifest), and no report of
/// the previous file survives to describe the next one.
fn unpublish(p: &Publication) -> Result<()> {
    let reports = REPORTS
        .iter()
        .chain(&WITNESS_REPORTS)
        .map(|f| p.reports.join(f));
    let plans = plans_path(&p.tasks);
    let dir = p.tasks.parent().unwrap_or(Path::new("."));
    let world = gtb_world::write::world_files()
        .into_iter()
        .map(|f| dir.join(f));
    for path in [p.manifest.clone(), plans]
        .into_iter()
        .chain(reports)
        .chain(world)
    {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a split's manifest says besides its task file's sha256 and line count. A shard keeps
/// it in `shard.json`; `gtb merge` adds the shards' up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestBase {
    /// the version of the code that built it (`gtb_build::CODE_VERSION`)
    pub code_version: String,
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
    pub fn manifest(&self, sha: &str, tasks: usize) -> serde_json::Value {
        let vs = &self.counts;
        let mut m = serde_json::json!({
            "gtb_version": env!("CARGO_PKG_VERSION"),
            "code_version": self.code_version,
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

/// `shard.json`: a slice of a build, as `gtb merge` reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardFile {
    pub split: String,
    pub shard: usize,
    pub shards: usize,
    /// the slots of the split this slice holds, [start, end)
    pub slots: [usize; 2],
    /// every stage's inputs but the slice: equal for all shards of one build
    pub build: Fingerprint,
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

/// Test hooks at named points of a build: `generate:chunk-written`, `write:unpublished`,
/// `write:task-file-half-written`, `write:tasks-in-place`, `write:world-written`,
/// `write:reports-written`.
///
/// * `GTB_CRASH_AT=<point>` aborts the process there, as a kill -9 would (no destructor runs,
///   nothing is cleaned up): the crash tests.
/// * `GTB_HANG_AT=<point>` stops there as a hung node would: it creates the file
///   `$GTB_HANG_MARK` (when set) and sleeps until it is killed: the Slurm test cancels such a
///   shard mid-run, then resumes it.
pub fn crash_point(point: &str) {
    if std::env::var_os("GTB_CRASH_AT").is_some_and(|p| p == point) {
        std::process::abort();
    }
    if std::env::var_os("GTB_HANG_AT").is_some_and(|p| p == point) {
        if let Some(mark) = std::env::var_os("GTB_HANG_MARK") {
            std::fs::write(mark, point).ok();
        }
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}
