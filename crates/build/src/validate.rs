//! Stage `validate`: fix what can be fixed, regenerate (at most `max_tries`), drop and replace
//! what still fails. Accepted lines are written in slot order as chunks settle; the artifact
//! `validate.jsonl` holds one release-format line per slot, the validation report
//! (`report.{json,md}`) waits in the work folder for the write stage to publish it, and
//! `validate.summary.json` keeps the counts for the manifest.

use super::BuildStage;
use super::generate::{CHUNK, attempt};
use super::sample::{class_of, replacement};
use super::settle::{Settled, SlotHistory, Tally, settle_batch};
use super::split::{Artifacts, Split, Validated};
use crate::CODE_VERSION;
use anyhow::{Context, Result, bail};
use gtb_core::task::{Skeleton, Task};
use gtb_ops::publish::ValidateSummary;
use gtb_ops::sinks::{ReportDir, ReportSink};
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::Stage;
use gtb_validate::Validator;
use gtb_validate::report::Report;
use rayon::prelude::*;
use std::io::{BufRead, Write};

pub(super) struct Validate;

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for Validate {
    fn id(&self) -> BuildStage {
        BuildStage::Validate
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Generate]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        let fp = Fingerprint::default()
            .with_json("config validate", &ctx.cfg.validate)
            .with("code", CODE_VERSION);
        // `[solve]` makes a witness part of acceptance; off, the fingerprint is as before
        if ctx.cfg.solve.enabled {
            fp.with_json("config solve", &ctx.cfg.solve)
        } else {
            fp
        }
    }
    fn outputs(&self, ctx: &Split<'a>) -> Vec<std::path::PathBuf> {
        let work = &ctx.paths.work.root;
        let mut out = vec![
            work.join("report.json"),
            work.join("report.md"),
            ValidateSummary::path(&ctx.paths.work),
        ];
        if ctx.cfg.solve.enabled {
            out.push(witness_path(&ctx.paths.work));
        }
        out
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let skeletons = &art.sampled()?.skeletons;
        let validator = Validator::new(ctx.res, ctx.cfg);
        let work = &ctx.paths.work;
        let pb = super::bar(skeletons.len(), "validate");
        let mut tally = Tally::new(skeletons.len());
        if ctx.cfg.solve.enabled {
            let witness = gtb_validate::WITNESS.to_string();
            tally.report.checks.insert(witness, Default::default());
        }
        let generated = work.artifact(BuildStage::Generate);
        let file = std::fs::File::open(&generated)
            .with_context(|| format!("reading {}", generated.display()))?;
        let mut first_attempts = std::io::BufReader::with_capacity(1 << 20, file);
        // chunk by chunk: settle the first attempts, replace what was dropped, write the lines
        // (and with `[solve]` their witnesses) in slot order and book every slot's history in
        // slot order
        gtb_core::digest::write_streaming_atomic(&work.artifact(BuildStage::Validate), |w| {
            let mut fill = |witnesses: &mut dyn Write| -> Result<()> {
                for (ci, chunk) in skeletons.chunks(CHUNK).enumerate() {
                    let (first, raw) = read_first_attempts(chunk, &mut first_attempts)?;
                    let settled = settle_batch(ctx, &validator, chunk.iter().collect(), first)?;
                    let start = ctx.slots.start + ci * CHUNK;
                    let histories =
                        replace_dropped(ctx, &validator, chunk, start, settled, &tally)?;
                    write_slots(histories, raw, &mut tally, w, witnesses)?;
                    pb.inc(chunk.len() as u64);
                }
                Ok(())
            };
            if ctx.cfg.solve.enabled {
                gtb_core::digest::write_streaming_atomic(&witness_path(work), fill)
            } else {
                fill(&mut std::io::sink())
            }
        })?;
        pb.finish_and_clear();
        let regenerated_for_witness = tally.regenerated_for_witness;
        let Tally {
            mut report,
            users,
            audit,
            ..
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
            regenerated_for_witness,
        };
        // published by the write stage, with the sha256 of the file it describes
        ReportDir(work.root.clone()).write_report(&report)?;
        gtb_core::digest::write_atomic(
            &ValidateSummary::path(work),
            &serde_json::to_vec(&summary)?,
        )?;
        art.validate = Some(Validated {
            summary,
            audit: Some(audit),
        });
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        art.validate = Some(Validated {
            summary: ValidateSummary::read(&ctx.paths.work)?,
            audit: None,
        });
        Ok(())
    }
}

/// `[solve]`: the witness lines of the accepted tasks, in slot order (the artifact the write
/// stage publishes as `plans.jsonl`, in the task file's order).
pub(super) fn witness_path(work: &gtb_pipeline::WorkDir) -> std::path::PathBuf {
    work.root.join("witness.jsonl")
}

/// A slot's accepted task line and its witness line, serialised.
type SlotLines = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Write a chunk's accepted lines (and their witnesses) in slot order and book each slot;
/// `raw` holds the generate artifact's line of each slot.
fn write_slots(
    histories: Vec<SlotHistory>,
    raw: Vec<Vec<u8>>,
    tally: &mut Tally,
    w: &mut dyn Write,
    witnesses: &mut dyn Write,
) -> Result<()> {
    let lines: Vec<SlotLines> = histories
        .par_iter()
        .zip(raw)
        .map(|(h, raw)| {
            // a first attempt accepted as it was is already its release line
            let task = match h.untouched_first() {
                true => Some(raw),
                false => h.accepted().map(gtb_core::pyjson::to_vec),
            };
            (task, h.witness().map(gtb_core::pyjson::to_vec))
        })
        .collect();
    tally.audit_all(&histories);
    for (h, (line, witness)) in histories.iter().zip(lines) {
        tally.regenerated_for_witness += usize::from(h.regenerated_for_witness());
        tally.record_slot(h);
        w.write_all(&line.context("a slot without an accepted task")?)?;
        w.write_all(b"\n")?;
        if let Some(witness) = witness {
            witnesses.write_all(&witness)?;
            witnesses.write_all(b"\n")?;
        }
    }
    // the tasks are many and large: freed by the workers, not one by one here
    histories.into_par_iter().for_each(drop);
    Ok(())
}

/// The validation report the validate stage left in the work folder for the stage that
/// publishes it (write, or shard).
pub(super) fn waiting_report(work: &gtb_pipeline::WorkDir) -> Result<Report> {
    let path = work.root.join("report.json");
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("reading {}", path.display()))
}

/// The first attempts of a chunk's slots (a failure marker, or a line of another skeleton, is
/// no first attempt), and their lines as the generate stage wrote them.
fn read_first_attempts(
    chunk: &[Skeleton],
    lines: &mut impl BufRead,
) -> Result<(Vec<Option<Task>>, Vec<Vec<u8>>)> {
    let raw: Vec<Vec<u8>> = chunk
        .iter()
        .map(|_| {
            let mut line = Vec::new();
            match lines.read_until(b'\n', &mut line)? {
                0 => bail!("generate artifact is shorter than the skeleton list"),
                _ => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    Ok(line)
                }
            }
        })
        .collect::<Result<_>>()?;
    let tasks = chunk
        .par_iter()
        .zip(raw.par_iter())
        .map(|(sk, line)| {
            serde_json::from_slice::<Task>(line)
                .ok()
                .filter(|t| t.task_id == sk.task_id)
        })
        .collect();
    Ok((tasks, raw))
}

/// Replace the dropped tasks of a chunk (slot `start + i` holds `chunk[i]`): each dropped
/// slot draws its next alternative skeleton, in rounds over all still-dropped slots (one batch
/// per round for the generator), until every slot has an accepted task. Each slot's draws are
/// its own (`sample::replacement`), so the result does not depend on the other slots.
fn replace_dropped(
    ctx: &Split,
    validator: &Validator,
    chunk: &[Skeleton],
    start: usize,
    settled: Vec<Settled>,
    tally: &Tally,
) -> Result<Vec<SlotHistory>> {
    let mut histories: Vec<SlotHistory> = chunk
        .iter()
        .zip(settled)
        .map(|(sk, st)| SlotHistory(vec![(sk.clone(), st)]))
        .collect();
    let mut dropped = tally.report.dropped;
    loop {
        let open: Vec<usize> = (0..histories.len())
            .filter(|&i| histories[i].accepted().is_none())
            .collect();
        if open.is_empty() {
            return Ok(histories);
        }
        dropped += open.len();
        if dropped > tally.slots * 4 + 100 {
            bail!(
                "too many tasks dropped ({dropped}); see {}",
                ctx.paths.work.root.join("report.md").display()
            );
        }
        let sks: Vec<Skeleton> = open
            .iter()
            .map(|&i| replacement(ctx, start + i, histories[i].last_skeleton()))
            .collect::<Result<_>>()?;
        let items: Vec<_> = sks.iter().map(|sk| (sk, 0, None)).collect();
        let first: Vec<Option<Task>> = attempt(ctx, &items)?
            .into_iter()
            .map(std::result::Result::ok)
            .collect();
        let settled = settle_batch(ctx, validator, sks.iter().collect(), first)?;
        for ((&i, sk), st) in open.iter().zip(sks).zip(settled) {
            histories[i].0.push((sk, st));
        }
    }
}
