//! Stage `validate`: fix what can be fixed, regenerate (at most `max_tries`), drop and replace
//! what still fails. Accepted lines are written in slot order as chunks settle; the artifact
//! `validate.jsonl` holds one release-format line per slot, the validation report
//! (`report.{json,md}`) waits in the work folder for the write stage to publish it, and
//! `validate.summary.json` keeps the counts for the manifest.

use super::generate::{CHUNK, attempt};
use super::sample::{class_of, redraw_excluded};
use super::settle::{Tally, settle_batch};
use super::split::{Artifacts, Split, ValidateSummary};
use crate::CODE_VERSION;
use crate::difficulty::Class;
use crate::digest::{FileWriter, TempPath};
use crate::ops::sinks::{ReportDir, ReportSink};
use crate::pipeline::Fingerprint;
use crate::pipeline::dag::Stage;
use crate::task::{Skeleton, Task};
use crate::validate::{Outcome, Validator};
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

pub(super) struct Validate;

impl<'a> Stage<Split<'a>, Artifacts> for Validate {
    fn name(&self) -> &'static str {
        "validate"
    }
    fn upstream(&self) -> &'static [&'static str] {
        &["generate"]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        Fingerprint::default()
            .with_json("config validate", &ctx.cfg.validate)
            .with("code", CODE_VERSION)
    }
    fn outputs(&self, ctx: &Split<'a>) -> Vec<std::path::PathBuf> {
        let work = &ctx.paths.work.root;
        vec![
            work.join("report.json"),
            work.join("report.md"),
            ValidateSummary::path(&ctx.paths.work),
        ]
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let skeletons = &art.skeletons;
        let validator = Validator::new(ctx.res, ctx.cfg);
        let work = &ctx.paths.work;
        let pb = super::bar(skeletons.len(), "validate");
        let mut tally = Tally::new(skeletons.len());
        // accepted lines go straight to a temp file in slot order; a dropped slot leaves an
        // empty line that the replacement fills in the final pass
        let slots = TempPath::beside(&work.root.join("validate.slots"));
        let failed = first_pass(ctx, &validator, skeletons, slots.path(), &mut tally, &pb)?;
        let replaced = replace_dropped(ctx, &validator, skeletons, failed, &mut tally)?;
        pb.finish_and_clear();
        crate::digest::write_streaming_atomic(&work.artifact("validate"), |w| {
            fill_slots(slots.path(), &replaced, w)
        })?;
        drop(slots);
        let Tally {
            mut report,
            users,
            signatures,
        } = tally;
        report.written = skeletons.len();
        let mut classes = [0usize; 3];
        for s in skeletons {
            classes[class_of(&s.difficulty_type).index()] += 1;
        }
        let summary = ValidateSummary {
            classes,
            users,
            dropped: report.dropped,
            signatures,
        };
        // published by the write stage, with the sha256 of the file it describes
        ReportDir(work.root.clone()).write_report(&report)?;
        crate::digest::write_atomic(&ValidateSummary::path(work), &serde_json::to_vec(&summary)?)?;
        art.validated = Some(summary);
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        art.validated = Some(ValidateSummary::read(&ctx.paths.work)?);
        Ok(())
    }
}

/// Settle every slot's first attempt chunk by chunk, writing accepted lines to `part` in slot
/// order (an empty line for a dropped slot). Returns the dropped slots with their last failure.
fn first_pass(
    ctx: &Split,
    validator: &Validator,
    skeletons: &[Skeleton],
    part: &Path,
    tally: &mut Tally,
    pb: &ProgressBar,
) -> Result<Vec<(usize, Outcome)>> {
    let mut part_w = FileWriter::create(part)?;
    let mut failed_slots = Vec::new();
    let generated = ctx.paths.work.artifact("generate");
    let file = std::fs::File::open(&generated)
        .with_context(|| format!("reading {}", generated.display()))?;
    let mut reader = std::io::BufReader::new(file).lines();
    for (ci, chunk) in skeletons.chunks(CHUNK).enumerate() {
        let raw: Vec<String> = chunk
            .iter()
            .map(|_| {
                reader
                    .next()
                    .context("generate artifact is shorter than the skeleton list")?
                    .map_err(anyhow::Error::from)
            })
            .collect::<Result<_>>()?;
        // a failure marker, or a line of another skeleton, is no first attempt
        let tasks: Vec<Option<Task>> = chunk
            .par_iter()
            .zip(raw.par_iter())
            .map(|(sk, line)| {
                serde_json::from_str::<Task>(line)
                    .ok()
                    .filter(|t| t.task_id == sk.task_id)
            })
            .collect();
        let settled = settle_batch(ctx, validator, chunk.iter().collect(), tasks)?;
        let lines: Vec<Option<String>> = settled
            .par_iter()
            .map(|(r, _)| r.as_ref().ok().map(|(t, _)| crate::pyjson::to_string(t)))
            .collect();
        for (k, ((r, failures), line)) in settled.into_iter().zip(lines).enumerate() {
            let slot = ci * CHUNK + k;
            match tally.record(slot, r, &failures) {
                Ok(_) => {
                    part_w.write_all(line.expect("accepted tasks were serialised").as_bytes())?
                }
                Err(o) => failed_slots.push((slot, o)),
            }
            part_w.write_all(b"\n")?;
        }
        pb.inc(chunk.len() as u64);
    }
    part_w.finish()?;
    Ok(failed_slots)
}

/// Replacements for the dropped slots, one after another in slot order (deterministic): each
/// draws a new skeleton of the dropped slot's class until one is accepted.
fn replace_dropped(
    ctx: &Split,
    validator: &Validator,
    skeletons: &[Skeleton],
    failed_slots: Vec<(usize, Outcome)>,
    tally: &mut Tally,
) -> Result<BTreeMap<usize, Vec<u8>>> {
    let mut replaced = BTreeMap::new();
    if failed_slots.is_empty() {
        return Ok(replaced);
    }
    let sampler = ctx.sampler()?;
    let classes: Vec<Class> = skeletons
        .iter()
        .map(|s| class_of(&s.difficulty_type))
        .collect();
    // replacement skeletons continue the stream after the split's slots and earlier redraws
    let mut next_index = ctx
        .cfg
        .run
        .n
        .max(skeletons.iter().map(|s| s.index + 1).max().unwrap_or(0));
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
                    ctx.paths.reports.display()
                );
            }
            let mut sk = sampler.draw(next_index, classes[slot]);
            next_index += 1;
            redraw_excluded(ctx, &mut sk, classes[slot], &mut next_index)?;
            tally.report.generated += 1;
            tally.report.replacements += 1;
            let first = attempt(ctx, &[(&sk, 0, None)])?
                .pop()
                .expect("one answer")
                .ok();
            let (r, failures) = settle_batch(ctx, validator, vec![&sk], vec![first])?
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
    Ok(replaced)
}

/// The artifact's lines: the part file's, with each empty (dropped) slot filled by its
/// replacement.
fn fill_slots(part: &Path, replaced: &BTreeMap<usize, Vec<u8>>, w: &mut dyn Write) -> Result<()> {
    let f = std::fs::File::open(part).with_context(|| format!("reading {}", part.display()))?;
    let r = std::io::BufReader::with_capacity(1 << 20, f);
    for (slot, line) in r.split(b'\n').enumerate() {
        let line = line?;
        if line.is_empty() {
            let fill = replaced
                .get(&slot)
                .context("a dropped slot without replacement")?;
            w.write_all(fill)?;
        } else {
            w.write_all(&line)?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}
