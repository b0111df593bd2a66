//! `gtb build`: the whole pipeline for one split (or several, leakage-free).

use super::sinks::{JsonlFile, ReportDir, ReportSink, TaskSink};
use crate::config::Config;
use crate::difficulty::Class;
use crate::generate::{PreferenceGenerator, TaskContext, assemble, offline::OfflineGenerator};
use crate::pipeline::{Decision, Fingerprint, WorkDir, from_jsonl, to_jsonl};
use crate::resources::Resources;
use crate::rng::item_rng;
use crate::sample::Sampler;
use crate::task::{Skeleton, Task};
use crate::validate::report::Report;
use crate::validate::{Mode, Outcome, Validator};
use crate::{CODE_VERSION, digest};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::PathBuf;

/// A validated run plan: the resolved config plus what to do.
#[derive(Debug, Clone)]
pub struct BuildPlan {
    pub cfg: Config,
    /// show the stage plan without running it
    pub explain: bool,
    /// named splits (name, size); empty = one split of cfg.run.n named "test"
    pub splits: Vec<(String, usize)>,
    /// print stage decisions to stderr
    pub verbose: bool,
}

#[derive(Debug, Clone)]
pub struct SplitSummary {
    pub name: String,
    pub tasks: usize,
    pub path: PathBuf,
    pub sha256: String,
    pub dropped: usize,
}

#[derive(Debug, Clone, Default)]
pub struct BuildSummary {
    /// (stage, decision) in run order
    pub stages: Vec<(String, Decision)>,
    pub splits: Vec<SplitSummary>,
}

fn bar(len: usize, msg: &'static str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(ProgressStyle::with_template("{msg:>9} [{bar:30}] {pos}/{len} {elapsed}").expect("template").progress_chars("=> "));
    pb.set_message(msg);
    pb
}

/// Run the plan.
pub fn build(plan: &BuildPlan) -> Result<BuildSummary> {
    let cfg = &plan.cfg;
    cfg.validate()?;
    let res = super::load_resources(cfg)?;
    let generator = OfflineGenerator { conflicts: cfg.generate.conflicts.clone() };
    let mut summary = BuildSummary::default();
    let splits = if plan.splits.is_empty() { vec![("test".to_string(), cfg.run.n)] } else { plan.splits.clone() };
    let mut seen_signatures: HashSet<String> = HashSet::new();
    for (name, n) in &splits {
        let single = plan.splits.is_empty();
        let out_dir = if single { cfg.run.out.clone() } else { cfg.run.out.join(name) };
        let work = WorkDir::new(&if single { cfg.run.work_dir.clone() } else { cfg.run.work_dir.join(name) });
        let reports = if single { cfg.run.reports.clone() } else { cfg.run.reports.join(name) };
        let mut split_cfg = cfg.clone();
        split_cfg.run.n = *n;
        if !single {
            // every split has its own stream, derived from the master seed and its name
            let d = blake3::hash(format!("{}/{}", cfg.run.seed, name).as_bytes());
            split_cfg.run.seed = u64::from_le_bytes(d.as_bytes()[..8].try_into().expect("8 bytes"));
        }
        let s = build_split(plan, &split_cfg, &res, &generator, &work, &out_dir, &reports, name, &mut seen_signatures, &mut summary)?;
        if let Some(s) = s {
            summary.splits.push(s);
        }
    }
    Ok(summary)
}

#[allow(clippy::too_many_arguments)]
fn build_split(
    plan: &BuildPlan,
    cfg: &Config,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
    work: &WorkDir,
    out_dir: &PathBuf,
    reports: &PathBuf,
    split: &str,
    seen: &mut HashSet<String>,
    summary: &mut BuildSummary,
) -> Result<Option<SplitSummary>> {
    let say = |stage: &str, d: &Decision| {
        if plan.verbose || plan.explain {
            let verb = if plan.explain { "would" } else { "" };
            match d {
                Decision::Fresh => eprintln!("{split:>6} {stage:<9} fresh{}", if plan.explain { " (would reuse)" } else { ", reused" }),
                Decision::Rerun(r) => eprintln!("{split:>6} {stage:<9} {verb}{}run: {r}", if verb.is_empty() { "re" } else { " " }),
            }
        }
    };
    let exclusions: Vec<String> = {
        let mut v: Vec<&String> = seen.iter().collect();
        v.sort();
        v.into_iter().cloned().collect()
    };
    // ---- fingerprints (a chain of input digests: computable without running anything) ----
    let mut fp_prepare = Fingerprint::default().with("code", CODE_VERSION);
    for (f, d) in &res.input_digests {
        fp_prepare = fp_prepare.with(&format!("input {f}"), d.clone());
    }
    let fp_sample = Fingerprint::default()
        .with("upstream prepare", fp_prepare.digest())
        .with("config run.seed", cfg.run.seed.to_string())
        .with("config run.n", cfg.run.n.to_string())
        .with_json("config sample", &cfg.sample)
        .with("excluded signatures", digest::digest_bytes(exclusions.join("\n").as_bytes()))
        .with("code", CODE_VERSION);
    let fp_generate = Fingerprint::default()
        .with("upstream sample", fp_sample.digest())
        .with("generator", format!("{} {}", generator.name(), generator.version()))
        .with_json("config generate", &cfg.generate);
    let fp_validate = Fingerprint::default().with("upstream generate", fp_generate.digest()).with_json("config validate", &cfg.validate).with("code", CODE_VERSION);
    let test_path = out_dir.join(if split == "test" || plan.splits.is_empty() { "test.jsonl".to_string() } else { format!("{split}.jsonl") });
    let manifest_path = out_dir.join("manifest.json");
    let fp_write = Fingerprint::default().with("upstream validate", fp_validate.digest()).with("config run.seed", cfg.run.seed.to_string()).with("output", test_path.display().to_string());

    let d_prepare = work.decide("prepare", &fp_prepare, &[]);
    let d_sample = work.decide("sample", &fp_sample, &[]);
    let d_generate = work.decide("generate", &fp_generate, &[]);
    let d_validate = work.decide("validate", &fp_validate, &[&reports.join("report.json")]);
    let d_write = work.decide("write", &fp_write, &[&test_path, &manifest_path]);
    // a stage whose upstream reran must rerun as well
    let chain = [("prepare", d_prepare), ("sample", d_sample), ("generate", d_generate), ("validate", d_validate), ("write", d_write)];
    let mut decisions: Vec<(String, Decision)> = Vec::new();
    let mut upstream_reran: Option<String> = None;
    for (stage, d) in chain {
        let d = match (&d, &upstream_reran) {
            (Decision::Fresh, Some(up)) => Decision::Rerun(format!("upstream {up} reran")),
            _ => d,
        };
        if matches!(d, Decision::Rerun(_)) && upstream_reran.is_none() {
            upstream_reran = Some(stage.to_string());
        }
        say(stage, &d);
        decisions.push((stage.to_string(), d));
    }
    summary.stages.extend(decisions.iter().map(|(s, d)| (format!("{split}/{s}"), d.clone())));
    if plan.explain {
        return Ok(None);
    }
    let runs = |stage: &str| decisions.iter().any(|(s, d)| s == stage && matches!(d, Decision::Rerun(_)));

    // ---- prepare -----------------------------------------------------------------------
    if runs("prepare") {
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
        work.commit("prepare", &fp_prepare, &to_jsonl(&[info]))?;
    }
    // ---- sample ------------------------------------------------------------------------
    let sampler = Sampler::new(cfg, res, cfg.run.n)?;
    let excluded: HashSet<&String> = exclusions.iter().collect();
    let mut next_index = cfg.run.n;
    let skeletons: Vec<Skeleton> = if runs("sample") {
        let plan_classes = sampler.class_plan();
        let mut sk = sampler.sample();
        // leakage-free splits: a skeleton whose signature another split holds is redrawn
        for (i, s) in sk.iter_mut().enumerate() {
            let mut guard = 0;
            while excluded.contains(&s.signature()) {
                *s = sampler.draw(next_index, plan_classes[i]);
                next_index += 1;
                guard += 1;
                if guard > 10_000 {
                    bail!("split {split}: cannot find a skeleton unseen in earlier splits; the splits are too large for the resources");
                }
            }
        }
        work.commit("sample", &fp_sample, &to_jsonl(&sk))?;
        sk
    } else {
        from_jsonl(&work.read_artifact("sample")?, &work.artifact("sample"))?
    };
    next_index = next_index.max(skeletons.iter().map(|s| s.index + 1).max().unwrap_or(0));
    // ---- generate ----------------------------------------------------------------------
    let generate_one = |sk: &Skeleton, attempt: u32, feedback: Option<&str>| -> Result<Task> {
        let ctx = TaskContext::new(sk, res, cfg.run.seed).map_err(|e| anyhow::anyhow!("skeleton {}: {e}", sk.task_id))?;
        let g = generator.generate(&ctx, attempt, feedback).map_err(|e| anyhow::anyhow!("{}: {e}", sk.task_id))?;
        Ok(assemble(&ctx, g))
    };
    let generated: Vec<Task> = if runs("generate") {
        let pb = bar(skeletons.len(), "generate");
        let v: Vec<Task> = skeletons.par_iter().map(|sk| {
            let t = generate_one(sk, 0, None);
            pb.inc(1);
            t
        }).collect::<Result<_>>()?;
        pb.finish_and_clear();
        work.commit("generate", &fp_generate, &to_jsonl(&v))?;
        v
    } else {
        from_jsonl(&work.read_artifact("generate")?, &work.artifact("generate"))?
    };
    // ---- validate (fix, regenerate, drop and replace) ---------------------------------------
    let validator = Validator::new(res, cfg);
    let (validated, report): (Vec<Task>, Report) = if runs("validate") {
        let pb = bar(generated.len(), "validate");
        // one task through its tries: Ok(task, outcome, failed attempts) or Err(last outcome)
        let settle = |sk: &Skeleton, first: Task| -> (Result<(Task, Outcome), Outcome>, Vec<Outcome>) {
            let mut failures = Vec::new();
            let mut task = first;
            for attempt in 0..cfg.generate.max_tries {
                if attempt > 0 {
                    let fb: Vec<String> = failures.last().map(|o: &Outcome| o.problems.iter().map(|f| f.to_string()).collect()).unwrap_or_default();
                    match generate_one(sk, attempt, Some(&fb.join("\n"))) {
                        Ok(t) => task = t,
                        Err(_) => continue,
                    }
                }
                let o = validator.check_task(&mut task, Mode::Fix);
                if o.problems.is_empty() {
                    return (Ok((task, o)), failures);
                }
                failures.push(o);
            }
            let last = failures.last().cloned().unwrap_or_default();
            (Err(last), failures)
        };
        let results: Vec<_> = skeletons.par_iter().zip(generated.into_par_iter()).map(|(sk, t)| {
            let r = settle(sk, t);
            pb.inc(1);
            r
        }).collect();
        let mut report = Report::new();
        report.generated = skeletons.len();
        let mut out: Vec<Task> = Vec::with_capacity(skeletons.len());
        let classes: Vec<Class> = skeletons.iter().map(|s| match s.difficulty_type.as_str() { "easy" => Class::Easy, "medium" => Class::Medium, _ => Class::Hard }).collect();
        let mut pending: Vec<(usize, Result<(Task, Outcome), Outcome>, Vec<Outcome>)> = results.into_iter().enumerate().map(|(i, (r, f))| (i, r, f)).collect();
        // replacements run in order, one after another, so they are deterministic
        let mut slot_tasks: Vec<Option<Task>> = vec![None; skeletons.len()];
        let mut guard = 0usize;
        while let Some((slot, r, failures)) = pending.pop() {
            for f in failures.iter().take(failures.len().saturating_sub(usize::from(r.is_err()))) {
                report.retry(f);
            }
            match r {
                Ok((t, o)) => {
                    report.accept(&o);
                    slot_tasks[slot] = Some(t);
                }
                Err(o) => {
                    let dropped_id = skeletons[slot].task_id.clone();
                    report.drop_task(&dropped_id, &o);
                    guard += 1;
                    if guard > skeletons.len() * 4 + 100 {
                        bail!("too many tasks dropped ({guard}); see {}", reports.display());
                    }
                    let mut sk = sampler.draw(next_index, classes[slot]);
                    next_index += 1;
                    while excluded.contains(&sk.signature()) {
                        sk = sampler.draw(next_index, classes[slot]);
                        next_index += 1;
                    }
                    report.generated += 1;
                    report.replacements += 1;
                    let first = generate_one(&sk, 0, None)?;
                    let (r2, f2) = settle(&sk, first);
                    pending.push((slot, r2, f2));
                }
            }
            pb.set_position((skeletons.len() - pending.len()) as u64);
        }
        pb.finish_and_clear();
        out.extend(slot_tasks.into_iter().map(|t| t.expect("every slot settled")));
        report.written = out.len();
        work.commit("validate", &fp_validate, &to_jsonl(&out))?;
        ReportDir(reports.clone()).write_report(&report)?;
        std::fs::write(work.root.join("validate.report.json"), serde_json::to_vec(&report)?).context("saving the report beside the artifact")?;
        (out, report)
    } else {
        let tasks = from_jsonl(&work.read_artifact("validate")?, &work.artifact("validate"))?;
        let rep: serde_json::Value = serde_json::from_slice(&std::fs::read(work.root.join("validate.report.json")).unwrap_or_default()).unwrap_or_default();
        let mut report = Report::new();
        report.dropped = rep["dropped"].as_u64().unwrap_or(0) as usize;
        (tasks, report)
    };
    for t in &validated {
        seen.insert(signature_of(t));
    }
    // ---- write -------------------------------------------------------------------------
    let bytes = if runs("write") {
        let mut order = validated.clone();
        order.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        order.shuffle(&mut item_rng(cfg.run.seed, "write", "order"));
        let bytes = JsonlFile(test_path.clone()).write_tasks(&order)?;
        let manifest = manifest(cfg, res, generator, &bytes, &order, &report, &decisions, &[&fp_prepare, &fp_sample, &fp_generate, &fp_validate])?;
        digest::write_atomic(&manifest_path, &crate::pyjson::to_string(&manifest).into_bytes())?;
        work.commit("write", &fp_write, b"")?;
        bytes
    } else {
        std::fs::read(&test_path)?
    };
    Ok(Some(SplitSummary { name: split.to_string(), tasks: validated.len(), path: test_path, sha256: digest::sha256_hex(&bytes), dropped: report.dropped }))
}

/// The signature of a written task (same shape as `Skeleton::signature`).
pub fn signature_of(t: &Task) -> String {
    format!("{}|{}|{}|{}", t.metadata.group_id, t.metadata.departure_city, t.metadata.cities.join("、"), t.days().unwrap_or(0))
}

#[allow(clippy::too_many_arguments)]
fn manifest(
    cfg: &Config,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
    bytes: &[u8],
    tasks: &[Task],
    report: &Report,
    decisions: &[(String, Decision)],
    fps: &[&Fingerprint],
) -> Result<serde_json::Value> {
    let mut classes = [0usize; 3];
    for t in tasks {
        match t.difficulty_type.as_str() {
            "easy" => classes[0] += 1,
            "medium" => classes[1] += 1,
            _ => classes[2] += 1,
        }
    }
    let members: usize = tasks.iter().map(|t| t.user_preferences.len()).sum();
    let names = ["prepare", "sample", "generate", "validate"];
    Ok(serde_json::json!({
        "gtb_version": env!("CARGO_PKG_VERSION"),
        "code_version": CODE_VERSION,
        "seed": cfg.run.seed,
        "generator": format!("{} {}", generator.name(), generator.version()),
        "config": cfg,
        "inputs": res.input_digests.iter().map(|(f, d)| serde_json::json!({"file": f, "blake3": d})).collect::<Vec<_>>(),
        "stage_fingerprints": names.iter().zip(fps).map(|(n, f)| (n.to_string(), serde_json::Value::String(f.digest()))).collect::<serde_json::Map<_, _>>(),
        "stage_decisions": decisions.iter().map(|(s, d)| (s.clone(), serde_json::Value::String(match d { Decision::Fresh => "reused".into(), Decision::Rerun(r) => format!("ran: {r}") }))).collect::<serde_json::Map<_, _>>(),
        "counts": {
            "tasks": tasks.len(),
            "easy": classes[0], "medium": classes[1], "hard": classes[2],
            "users_with_preferences": members,
            "dropped": report.dropped,
        },
        "test_jsonl_sha256": digest::sha256_hex(bytes),
    }))
}
