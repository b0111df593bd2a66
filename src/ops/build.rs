//! `gtb build`: the whole pipeline for one split (or several, leakage-free).
//!
//! Tasks stream through generate and validate in chunks, and the written file is assembled
//! from release-format lines, so a 100,000-task split never holds its tasks as structs at once.

use super::sinks::{ReportDir, ReportSink};
use crate::config::Config;
use crate::difficulty::Class;
use crate::generate::{
    PreferenceGenerator, Request, TaskContext, assemble, offline::OfflineGenerator,
};
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
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Tasks per chunk of the streaming stages.
const CHUNK: usize = 4096;

/// A validated run plan: the resolved config plus what to do.
#[derive(Debug, Clone)]
pub struct BuildPlan {
    pub cfg: Config,
    /// show the stage plan without running it
    pub explain: bool,
    /// named splits (name, size); empty = one split of cfg.run.n written as test.jsonl
    pub splits: Vec<(String, usize)>,
    /// print stage decisions to stderr
    pub verbose: bool,
    /// destination cities reserved for the test split: other splits never visit them
    pub holdout_cities: usize,
}

impl BuildPlan {
    /// Build one split of `cfg.run.n` tasks quietly.
    pub fn new(cfg: Config) -> Self {
        BuildPlan {
            cfg,
            explain: false,
            splits: Vec::new(),
            verbose: false,
            holdout_cities: 0,
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
}

#[derive(Debug, Clone, Default)]
pub struct BuildSummary {
    /// (split/stage, decision) in run order
    pub stages: Vec<(String, Decision)>,
    pub splits: Vec<SplitSummary>,
}

/// What the validate stage learns beside its artifact (kept in the work directory).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ValidateSummary {
    classes: [usize; 3],
    users: usize,
    dropped: usize,
    signatures: Vec<String>,
}

fn bar(len: usize, msg: &'static str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg:>9} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("template")
            .progress_chars("=> "),
    );
    pb.set_message(msg);
    pb
}

/// Run the plan.
pub fn build(plan: &BuildPlan) -> Result<BuildSummary> {
    let cfg = &plan.cfg;
    cfg.validate()?;
    let res = super::load_resources(cfg)?;
    if cfg.run.generator != "openai" {
        let generator = OfflineGenerator {
            conflicts: cfg.generate.conflicts.clone(),
        };
        return build_with(plan, &res, &generator);
    }
    // a run the generator stops fails at the batch in progress: that stage is not committed,
    // answers received so far stay in the cache
    let generator = crate::generate::llm::LlmGenerator::new(cfg)?;
    let result = build_with(plan, &res, &generator);
    // token usage and cost go into the manifests written by this run and <reports>/llm_report.json
    let manifests: Vec<PathBuf> = match &result {
        Ok(s) if !plan.explain => s
            .splits
            .iter()
            .filter(|sp| {
                s.stages.iter().any(|(st, d)| {
                    *st == format!("{}/write", sp.name) && matches!(d, Decision::Rerun(_))
                })
            })
            .filter_map(|sp| sp.path.parent().map(|d| d.join("manifest.json")))
            .collect(),
        _ => Vec::new(),
    };
    if !plan.explain {
        generator.finish(&manifests)?;
    }
    result
}

/// Run the plan with a given generator (tests and the LLM path plug theirs in here).
pub fn build_with(
    plan: &BuildPlan,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
) -> Result<BuildSummary> {
    let cfg = &plan.cfg;
    let mut summary = BuildSummary::default();
    let single = plan.splits.is_empty();
    let splits = if single {
        vec![("test".to_string(), cfg.run.n)]
    } else {
        plan.splits.clone()
    };
    let mut seen: HashSet<String> = HashSet::new();
    let held_out = crate::sample::Sampler::held_out_cities(cfg, res, plan.holdout_cities);
    if !held_out.is_empty() && plan.verbose {
        let names: Vec<&str> = held_out
            .iter()
            .map(|&c| res.city(c).name.as_str())
            .collect();
        eprintln!("held-out cities (test split only): {}", names.join("、"));
    }
    for (name, n) in &splits {
        let mut split_cfg = cfg.clone();
        split_cfg.run.n = *n;
        if !single {
            // every split has its own stream, derived from the master seed and its name
            let d = blake3::hash(format!("{}/{}", cfg.run.seed, name).as_bytes());
            split_cfg.run.seed = u64::from_le_bytes(d.as_bytes()[..8].try_into().expect("8 bytes"));
        }
        let paths = SplitPaths {
            work: WorkDir::new(&if single {
                cfg.run.work_dir.clone()
            } else {
                cfg.run.work_dir.join(name)
            }),
            reports: if single {
                cfg.run.reports.clone()
            } else {
                cfg.run.reports.join(name)
            },
            tasks: if single {
                cfg.run.out.join("test.jsonl")
            } else {
                cfg.run.out.join(name).join(format!("{name}.jsonl"))
            },
            manifest: if single {
                cfg.run.out.join("manifest.json")
            } else {
                cfg.run.out.join(name).join("manifest.json")
            },
        };
        let avoid: &[crate::resources::CityId] = if name == "test" { &[] } else { &held_out };
        if let Some(s) = build_split(
            plan,
            &split_cfg,
            res,
            generator,
            &paths,
            name,
            avoid,
            &mut seen,
            &mut summary,
        )? {
            summary.splits.push(s);
        }
    }
    Ok(summary)
}

struct SplitPaths {
    work: WorkDir,
    reports: PathBuf,
    tasks: PathBuf,
    manifest: PathBuf,
}

/// Stream lines into a file atomically (temp + rename).
fn write_lines_atomic(
    path: &Path,
    mut fill: impl FnMut(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all().ok();
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {}", tmp.display()))
}

#[allow(clippy::too_many_arguments)]
fn build_split(
    plan: &BuildPlan,
    cfg: &Config,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
    paths: &SplitPaths,
    split: &str,
    held_out: &[crate::resources::CityId],
    seen: &mut HashSet<String>,
    summary: &mut BuildSummary,
) -> Result<Option<SplitSummary>> {
    let work = &paths.work;
    let exclusions: Vec<String> = {
        let mut v: Vec<&String> = seen.iter().collect();
        v.sort();
        v.into_iter().cloned().collect()
    };
    // ---- fingerprints: a chain of input digests, computable without running anything ----
    let mut fp_prepare = Fingerprint::default().with("code", CODE_VERSION);
    for (f, d) in &res.input_digests {
        fp_prepare = fp_prepare.with(&format!("input {f}"), d.clone());
    }
    let fp_sample = Fingerprint::default()
        .with("upstream prepare", fp_prepare.digest())
        .with("config run.seed", cfg.run.seed.to_string())
        .with("config run.n", cfg.run.n.to_string())
        .with_json("config sample", &cfg.sample)
        .with(
            "excluded signatures",
            digest::digest_bytes(exclusions.join("\n").as_bytes()),
        )
        .with(
            "held-out cities",
            held_out
                .iter()
                .map(|&c| res.city(c).name.clone())
                .collect::<Vec<_>>()
                .join("、"),
        )
        .with("code", CODE_VERSION);
    let fp_generate = Fingerprint::default()
        .with("upstream sample", fp_sample.digest())
        .with(
            "generator",
            format!("{} {}", generator.name(), generator.version()),
        )
        .with_json("config generate", &cfg.generate);
    let fp_validate = Fingerprint::default()
        .with("upstream generate", fp_generate.digest())
        .with_json("config validate", &cfg.validate)
        .with("code", CODE_VERSION);
    let fp_write = Fingerprint::default()
        .with("upstream validate", fp_validate.digest())
        .with("config run.seed", cfg.run.seed.to_string())
        .with("output", paths.tasks.display().to_string());

    let raw = [
        ("prepare", work.decide("prepare", &fp_prepare, &[])),
        ("sample", work.decide("sample", &fp_sample, &[])),
        ("generate", work.decide("generate", &fp_generate, &[])),
        (
            "validate",
            work.decide(
                "validate",
                &fp_validate,
                &[
                    &paths.reports.join("report.json"),
                    &work.root.join("validate.summary.json"),
                ],
            ),
        ),
        (
            "write",
            work.decide(
                "write",
                &fp_write,
                &[
                    &paths.tasks,
                    &paths.manifest,
                    &paths.reports.join("audit.html"),
                    &paths.reports.join("audit.json"),
                    &paths.reports.join("audit.md"),
                ],
            ),
        ),
    ];
    // a stage whose upstream reruns reruns as well
    let mut decisions: Vec<(String, Decision)> = Vec::new();
    let mut upstream: Option<&str> = None;
    for (stage, d) in raw {
        let d = match (&d, upstream) {
            (Decision::Fresh, Some(up)) => Decision::Rerun(format!("upstream {up} reruns")),
            _ => d,
        };
        if matches!(d, Decision::Rerun(_)) && upstream.is_none() {
            upstream = Some(stage);
        }
        if plan.verbose || plan.explain {
            match &d {
                Decision::Fresh => eprintln!(
                    "{split:>6} {stage:<9} fresh{}",
                    if plan.explain {
                        ": would reuse"
                    } else {
                        ", reused"
                    }
                ),
                Decision::Rerun(r) => eprintln!(
                    "{split:>6} {stage:<9} {}: {r}",
                    if plan.explain { "would run" } else { "runs" }
                ),
            }
        }
        decisions.push((stage.to_string(), d));
    }
    summary.stages.extend(
        decisions
            .iter()
            .map(|(s, d)| (format!("{split}/{s}"), d.clone())),
    );
    if plan.explain {
        return Ok(None);
    }
    let runs = |stage: &str| {
        decisions
            .iter()
            .any(|(s, d)| s == stage && matches!(d, Decision::Rerun(_)))
    };

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
    let sampler = Sampler::excluding(cfg, res, cfg.run.n, held_out)?;
    let excluded: HashSet<&String> = exclusions.iter().collect();
    let plan_classes = sampler.class_plan();
    let mut next_index = cfg.run.n;
    // a skeleton whose signature another split holds is redrawn (leakage-free splits)
    let redraw = |sk: &mut Skeleton, class: Class, next: &mut usize| -> Result<()> {
        let mut guard = 0;
        while excluded.contains(&sk.signature()) {
            *sk = sampler.draw(*next, class);
            *next += 1;
            guard += 1;
            if guard > 10_000 {
                bail!(
                    "split {split}: cannot find a skeleton unseen in earlier splits; the splits are too large for the resources"
                );
            }
        }
        Ok(())
    };
    let skeletons: Vec<Skeleton> = if runs("sample") {
        let mut sk = sampler.sample();
        for (i, s) in sk.iter_mut().enumerate() {
            redraw(s, plan_classes[i], &mut next_index)?;
        }
        work.commit("sample", &fp_sample, &to_jsonl(&sk))?;
        sk
    } else {
        from_jsonl(&work.read_artifact("sample")?, &work.artifact("sample"))?
    };
    next_index = next_index.max(skeletons.iter().map(|s| s.index + 1).max().unwrap_or(0));
    let classes: Vec<Class> = skeletons
        .iter()
        .map(|s| class_of(&s.difficulty_type))
        .collect();

    // one batch of generation requests -> assembled tasks (errors stay per item)
    let generate =
        |items: &[(&Skeleton, u32, Option<String>)]| -> Result<Vec<Result<Task, String>>> {
            let reqs = items
                .par_iter()
                .map(|(sk, attempt, fb)| {
                    Ok(Request {
                        ctx: TaskContext::new(sk, res, cfg.run.seed)
                            .map_err(|e| anyhow::anyhow!("skeleton {}: {e}", sk.task_id))?,
                        attempt: *attempt,
                        feedback: fb.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let out = generator.generate_batch(&reqs);
            // a run-level stop (auth, quota, error rate, replay miss): nothing of this batch counts
            if let Some(why) = generator.stopped() {
                anyhow::bail!("LLM generation stopped: {why}");
            }
            Ok(reqs
                .par_iter()
                .zip(out.into_par_iter())
                .map(|(r, g)| g.map(|g| assemble(&r.ctx, g)).map_err(|e| e.to_string()))
                .collect())
        };

    // ---- generate: first attempts, streamed to the artifact ---------------------------------
    if runs("generate") {
        let pb = bar(skeletons.len(), "generate");
        let tmp = work.root.join("generate.jsonl.part");
        write_lines_atomic(&tmp, |w| {
            for chunk in skeletons.chunks(CHUNK) {
                let items: Vec<(&Skeleton, u32, Option<String>)> =
                    chunk.iter().map(|s| (s, 0, None)).collect();
                let tasks = generate(&items)?;
                // serialise in parallel, write in order; a failed first attempt is stored as
                // a marker line and retried by validate
                let lines: Vec<Vec<u8>> = chunk
                    .par_iter()
                    .zip(tasks.par_iter())
                    .map(|(sk, t)| match t {
                        Ok(t) => serde_json::to_vec(t),
                        Err(e) => serde_json::to_vec(
                            &serde_json::json!({"failed": sk.task_id, "error": e}),
                        ),
                    })
                    .collect::<Result<_, _>>()?;
                for l in lines {
                    w.write_all(&l)?;
                    w.write_all(b"\n")?;
                }
                pb.inc(chunk.len() as u64);
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        std::fs::rename(&tmp, work.artifact("generate"))?;
        work.commit_fingerprint("generate", &fp_generate)?;
    }

    // ---- validate: fix, regenerate (≤ max_tries), drop and replace --------------------------------
    let validator = Validator::new(res, cfg);
    let vsummary: ValidateSummary = if runs("validate") {
        let pb = bar(skeletons.len(), "validate");
        let mut tally = Tally {
            report: Report::new(),
            users: 0,
            signatures: vec![String::new(); skeletons.len()],
        };
        tally.report.generated = skeletons.len();
        // accepted lines go straight to a part file in slot order; a dropped slot leaves an
        // empty line that the replacement fills in the final pass
        let part = work.root.join("validate.slots.part");
        let mut part_w = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(&part).with_context(|| format!("creating {}", part.display()))?,
        );
        let mut replaced: std::collections::BTreeMap<usize, Vec<u8>> =
            std::collections::BTreeMap::new();
        let mut failed_slots: Vec<(usize, Outcome)> = Vec::new();
        let file = std::fs::File::open(work.artifact("generate"))
            .with_context(|| format!("reading {}", work.artifact("generate").display()))?;
        let mut reader = std::io::BufReader::new(file).lines();
        for (ci, chunk) in skeletons.chunks(CHUNK).enumerate() {
            let base = ci * CHUNK;
            let raw: Vec<String> = chunk
                .iter()
                .map(|_| {
                    reader
                        .next()
                        .context("generate artifact is shorter than the skeleton list")?
                        .map_err(anyhow::Error::from)
                })
                .collect::<Result<_>>()?;
            let tasks: Vec<Option<Task>> = chunk
                .par_iter()
                .zip(raw.par_iter())
                .map(|(sk, line)| {
                    serde_json::from_str::<Task>(line)
                        .ok()
                        .filter(|t| t.task_id == sk.task_id)
                })
                .collect();
            let settled = settle_batch(
                chunk.iter().collect(),
                tasks,
                &validator,
                cfg.generate.max_tries,
                &generate,
            )?;
            let lines: Vec<Option<String>> = settled
                .par_iter()
                .map(|(r, _)| r.as_ref().ok().map(|(t, _)| crate::pyjson::to_string(t)))
                .collect();
            for (k, ((r, failures), line)) in settled.into_iter().zip(lines).enumerate() {
                let slot = base + k;
                match tally.record(slot, r, &failures) {
                    Ok(_) => part_w
                        .write_all(line.expect("accepted tasks were serialised").as_bytes())?,
                    Err(o) => failed_slots.push((slot, o)),
                }
                part_w.write_all(b"\n")?;
            }
            pb.inc(chunk.len() as u64);
        }
        part_w.flush()?;
        drop(part_w);
        // replacements, one after another in slot order: deterministic
        let mut guard = 0usize;
        for (slot, outcome) in failed_slots {
            let mut last = outcome;
            let mut dropped_id = skeletons[slot].task_id.clone();
            loop {
                tally.report.drop_task(&dropped_id, &last);
                guard += 1;
                if guard > skeletons.len() * 4 + 100 {
                    bail!(
                        "too many tasks dropped ({guard}); see {}",
                        paths.reports.display()
                    );
                }
                let mut sk = sampler.draw(next_index, classes[slot]);
                next_index += 1;
                redraw(&mut sk, classes[slot], &mut next_index)?;
                tally.report.generated += 1;
                tally.report.replacements += 1;
                let first = generate(&[(&sk, 0, None)])?.pop().expect("one answer").ok();
                let (r, failures) = settle_batch(
                    vec![&sk],
                    vec![first],
                    &validator,
                    cfg.generate.max_tries,
                    &generate,
                )?
                .pop()
                .expect("one");
                match tally.record(slot, r, &failures) {
                    Ok(t) => {
                        replaced.insert(slot, crate::pyjson::to_string(&t).into_bytes());
                        break;
                    }
                    Err(o) => {
                        dropped_id = sk.task_id.clone();
                        last = o;
                    }
                }
            }
        }
        pb.finish_and_clear();
        let Tally {
            mut report,
            users,
            signatures,
        } = tally;
        report.written = skeletons.len();
        let tmp = work.root.join("validate.jsonl.part");
        write_lines_atomic(&tmp, |w| {
            let r = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&part)?);
            for (slot, line) in r.split(b'\n').enumerate() {
                let line = line?;
                let line = if line.is_empty() {
                    replaced
                        .get(&slot)
                        .context("a dropped slot without replacement")?
                        .clone()
                } else {
                    line
                };
                w.write_all(&line)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        std::fs::remove_file(&part).ok();
        let mut classes_count = [0usize; 3];
        for k in &classes {
            classes_count[k.index()] += 1;
        }
        let vs = ValidateSummary {
            classes: classes_count,
            users,
            dropped: report.dropped,
            signatures,
        };
        ReportDir(paths.reports.clone()).write_report(&report)?;
        digest::write_atomic(
            &work.root.join("validate.summary.json"),
            &serde_json::to_vec(&vs)?,
        )?;
        std::fs::rename(&tmp, work.artifact("validate"))?;
        work.commit_fingerprint("validate", &fp_validate)?;
        vs
    } else {
        serde_json::from_slice(&std::fs::read(work.root.join("validate.summary.json"))?)
            .context("reading validate.summary.json")?
    };
    seen.extend(vsummary.signatures.iter().cloned());

    // ---- write: release bytes in a seeded shuffled order ----------------------------------
    let sha = if runs("write") {
        // index the artifact's lines, then copy them in shuffled order with positioned reads
        use std::os::unix::fs::FileExt;
        let artifact = work.artifact("validate");
        let file = std::fs::File::open(&artifact)
            .with_context(|| format!("reading {}", artifact.display()))?;
        let mut spans: Vec<(u64, usize)> = Vec::with_capacity(skeletons.len());
        {
            let mut pos = 0u64;
            let r = std::io::BufReader::with_capacity(1 << 20, &file);
            for line in r.split(b'\n') {
                let len = line?.len();
                if len > 0 {
                    spans.push((pos, len));
                }
                pos += len as u64 + 1;
            }
        }
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.shuffle(&mut item_rng(cfg.run.seed, "write", "order"));
        let mut hasher = sha2::Sha256::default();
        write_lines_atomic(&paths.tasks, |w| {
            use sha2::Digest;
            let mut buf = Vec::new();
            for &i in &order {
                let (off, len) = spans[i];
                buf.resize(len, 0);
                file.read_exact_at(&mut buf, off)?;
                buf.push(b'\n');
                w.write_all(&buf)?;
                hasher.update(&buf);
            }
            Ok(())
        })?;
        let sha: String = {
            use sha2::Digest;
            hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        let m = manifest(
            cfg,
            res,
            generator,
            &sha,
            spans.len(),
            &vsummary,
            &decisions,
            &[&fp_prepare, &fp_sample, &fp_generate, &fp_validate],
        );
        digest::write_atomic(&paths.manifest, crate::pyjson::to_string(&m).as_bytes())?;
        // the split's audit against the paper's figures, next to its validation report
        let audit =
            crate::audit::Audit::run(&paths.tasks, Some(&crate::audit::Against::Paper), false)?;
        ReportDir(paths.reports.clone()).write_audit(&audit)?;
        work.commit("write", &fp_write, b"")?;
        sha
    } else {
        digest::sha256_file(&paths.tasks)?
    };
    Ok(Some(SplitSummary {
        name: split.to_string(),
        tasks: skeletons.len(),
        path: paths.tasks.clone(),
        sha256: sha,
        dropped: vsummary.dropped,
    }))
}

/// What the validate stage accumulates over accepted tasks.
struct Tally {
    report: Report,
    users: usize,
    signatures: Vec<String>,
}

impl Tally {
    /// Book a settled slot: its retries, and the accepted task's fixes, users and signature.
    fn record(
        &mut self,
        slot: usize,
        r: std::result::Result<(Task, Outcome), Outcome>,
        failures: &[Outcome],
    ) -> std::result::Result<Task, Outcome> {
        match r {
            Ok((t, o)) => {
                failures.iter().for_each(|f| self.report.retry(f));
                self.report.accept(&o);
                self.users += t.user_preferences.len();
                self.signatures[slot] = signature_of(&t);
                Ok(t)
            }
            Err(o) => {
                // the last failure is the drop itself, counted by `drop_task`
                failures[..failures.len().saturating_sub(1)]
                    .iter()
                    .for_each(|f| self.report.retry(f));
                Err(o)
            }
        }
    }
}

type Settled = (std::result::Result<(Task, Outcome), Outcome>, Vec<Outcome>);

/// Generates a batch of (skeleton, attempt, feedback) requests; one result per request.
type GenerateFn<'a> = dyn Fn(&[(&Skeleton, u32, Option<String>)]) -> Result<Vec<std::result::Result<Task, String>>>
    + 'a;

/// Validate a batch of first attempts; regenerate the failing ones (with the validator's
/// messages as feedback) in rounds until they pass or run out of tries.
fn settle_batch(
    sks: Vec<&Skeleton>,
    first: Vec<Option<Task>>,
    validator: &Validator,
    max_tries: u32,
    generate: &GenerateFn,
) -> Result<Vec<Settled>> {
    let n = sks.len();
    let mut failures: Vec<Vec<Outcome>> = vec![Vec::new(); n];
    let mut done: Vec<Option<(Task, Outcome)>> = vec![None; n];
    let mut current: Vec<Option<Task>> = first;
    for attempt in 0..max_tries.max(1) {
        if attempt > 0 {
            let todo: Vec<usize> = (0..n).filter(|&i| done[i].is_none()).collect();
            if todo.is_empty() {
                break;
            }
            let items: Vec<(&Skeleton, u32, Option<String>)> = todo
                .iter()
                .map(|&i| {
                    (
                        sks[i],
                        attempt,
                        failures[i].last().map(|o| {
                            o.problems
                                .iter()
                                .map(|f| f.to_string())
                                .collect::<Vec<_>>()
                                .join("\n")
                        }),
                    )
                })
                .collect();
            for (&i, t) in todo.iter().zip(generate(&items)?) {
                current[i] = t.ok();
            }
        }
        let checked: Vec<Option<(Task, Outcome)>> = current
            .par_iter_mut()
            .zip(done.par_iter())
            .map(|(t, d)| {
                if d.is_some() {
                    return None;
                }
                t.take().map(|mut t| {
                    let o = validator.check_task(&mut t, Mode::Fix);
                    (t, o)
                })
            })
            .collect();
        for (i, c) in checked.into_iter().enumerate() {
            if done[i].is_some() {
                continue;
            }
            match c {
                Some((t, o)) if o.problems.is_empty() => done[i] = Some((t, o)),
                Some((_, o)) => failures[i].push(o),
                None => failures[i].push(Outcome {
                    fixes: vec![],
                    problems: vec![crate::validate::Finding {
                        check: "format",
                        task_id: sks[i].task_id.clone(),
                        user: String::new(),
                        city: String::new(),
                        field: String::new(),
                        item: String::new(),
                        message: "the generator returned no usable table".into(),
                    }],
                }),
            }
        }
    }
    Ok(done
        .into_iter()
        .zip(failures)
        .map(|(d, f)| match d {
            Some(ok) => (Ok(ok), f),
            None => (Err(f.last().cloned().unwrap_or_default()), f),
        })
        .collect())
}

fn class_of(s: &str) -> Class {
    match s {
        "easy" => Class::Easy,
        "medium" => Class::Medium,
        _ => Class::Hard,
    }
}

/// The signature of a written task (same shape as `Skeleton::signature`).
pub fn signature_of(t: &Task) -> String {
    format!(
        "{}|{}|{}|{}",
        t.metadata.group_id,
        t.metadata.departure_city,
        t.metadata.cities.join("、"),
        t.days().unwrap_or(0)
    )
}

#[allow(clippy::too_many_arguments)]
fn manifest(
    cfg: &Config,
    res: &Resources,
    generator: &dyn PreferenceGenerator,
    sha: &str,
    tasks: usize,
    vs: &ValidateSummary,
    decisions: &[(String, Decision)],
    fps: &[&Fingerprint],
) -> serde_json::Value {
    let names = ["prepare", "sample", "generate", "validate"];
    serde_json::json!({
        "gtb_version": env!("CARGO_PKG_VERSION"),
        "code_version": CODE_VERSION,
        "seed": cfg.run.seed,
        "generator": format!("{} {}", generator.name(), generator.version()),
        "config": cfg,
        "inputs": res.input_digests.iter().map(|(f, d)| serde_json::json!({"file": f, "blake3": d})).collect::<Vec<_>>(),
        "stage_fingerprints": names.iter().zip(fps).map(|(n, f)| (n.to_string(), serde_json::Value::String(f.digest()))).collect::<serde_json::Map<_, _>>(),
        "stage_decisions": decisions.iter().map(|(s, d)| (s.clone(), serde_json::Value::String(match d { Decision::Fresh => "reused".into(), Decision::Rerun(r) => format!("ran: {r}") }))).collect::<serde_json::Map<_, _>>(),
        "counts": {
            "tasks": tasks,
            "easy": vs.classes[0], "medium": vs.classes[1], "hard": vs.classes[2],
            "users_with_preferences": vs.users,
            "dropped": vs.dropped,
        },
        "test_jsonl_sha256": sha,
    })
}
