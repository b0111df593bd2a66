//! Stage `validate`: fix what can be fixed, regenerate (at most `max_tries`), drop and replace
//! what still fails. Accepted lines are listed in slot order as chunks settle
//! (`validate.index`, a span per slot): a first attempt accepted as the generator wrote it stays
//! in `generate.jsonl`, and the artifact `validate.jsonl` holds the other lines (fixed,
//! regenerated, replaced), so a 100,000-task build does not copy its file once more. The
//! validation report (`report.{json,md}`) waits in the work folder for the write stage to
//! publish it, and `validate.summary.json` keeps the counts for the manifest.

use super::BuildStage;
use super::generate::{CHUNK, LineAt, TASK_LINE_BYTES, attempt, make_first_attempts, write_lines};
use super::sample::replacement;
use super::sampled::Sampled;
use super::settle::{Settled, SlotHistory, Tally, settle_batch};
use super::split::{Artifacts, Split, Validated};
use crate::CODE_VERSION;
use anyhow::{Context, Result, bail};
use gtb_audit::report::Tally as AuditTally;
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
            index_path(&ctx.paths.work),
        ];
        if ctx.cfg.solve.enabled {
            out.push(witness_path(&ctx.paths.work));
        }
        out
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        // the witness search, and the checks, free and take pages at a high rate (`gtb_alloc`)
        let _keep = gtb_alloc::keep_freed_pages();
        let streamed = std::mem::take(&mut art.generate_streams);
        let sampled = art.sampled()?;
        let validator = Validator::new(ctx.res, ctx.cfg);
        let work = &ctx.paths.work;
        let pb = super::bar(sampled.n, "validate");
        let mut tally = Tally::new(sampled.n);
        if ctx.cfg.solve.enabled {
            let witness = gtb_validate::WITNESS.to_string();
            tally.report.checks.insert(witness, Default::default());
        }
        // the index goes in place last: until then this stage looks unfinished, also to a
        // later run whose inputs match an earlier finished run's fingerprint
        let index = index_path(work);
        if index.exists() {
            std::fs::remove_file(&index)
                .with_context(|| format!("removing {}", index.display()))?;
        }
        let mut spans = Spans::default();
        let mut settle = |first: &mut FirstAttempts| -> Result<()> {
            settle_all(ctx, &validator, sampled, first, &mut tally, &mut spans, &pb)
        };
        let generated = work.artifact(BuildStage::Generate);
        if streamed {
            // the generate stage streams into this one: its artifact is made here, chunk by
            // chunk, and put in place before this stage's index
            gtb_core::digest::write_streaming_atomic(&generated, |w| {
                settle(&mut FirstAttempts::Made { w, pos: 0 })
            })?;
        } else {
            let file = std::fs::File::open(&generated)
                .with_context(|| format!("reading {}", generated.display()))?;
            settle(&mut FirstAttempts::Read(Reader {
                r: std::io::BufReader::with_capacity(1 << 20, file),
                pos: 0,
            }))?;
        }
        gtb_ops::publish::crash_point("validate:lines-written");
        pb.finish_and_clear();
        let samples = std::mem::take(&mut tally.samples);
        let (report, summary, audit) = summarise(sampled, tally);
        // published by the write stage, with the sha256 of the file it describes
        ReportDir(work.root.clone()).write_report(&report)?;
        gtb_core::digest::write_atomic(
            &ValidateSummary::path(work),
            &serde_json::to_vec(&summary)?,
        )?;
        gtb_ops::lines::write_index(&spans.list, &index)?;
        art.validate = Some(Validated {
            summary,
            audit: Some(audit),
            samples: Some(samples),
        });
        Ok(())
    }
    fn reuse(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        art.validate = Some(Validated {
            summary: ValidateSummary::read(&ctx.paths.work)?,
            audit: None,
            samples: None,
        });
        Ok(())
    }
}

/// Settle every slot, chunk by chunk: the first attempts, the replacements of what was dropped,
/// the lines (and with `[solve]` their witnesses) written in slot order and every slot's
/// history booked in slot order.
fn settle_all(
    ctx: &Split,
    validator: &Validator,
    sampled: &Sampled,
    first_attempts: &mut FirstAttempts,
    tally: &mut Tally,
    spans: &mut Spans,
    pb: &indicatif::ProgressBar,
) -> Result<()> {
    let work = &ctx.paths.work;
    gtb_core::digest::write_streaming_atomic(&work.artifact(BuildStage::Validate), |w| {
        let mut fill = |witnesses: &mut dyn Write| -> Result<()> {
            for (ci, chunk) in sampled.chunks(CHUNK)?.enumerate() {
                let chunk = chunk?;
                let (settled, at) = first_attempts.settle(ctx, validator, &chunk)?;
                let start = ctx.slots.start + ci * CHUNK;
                let histories = replace_dropped(ctx, validator, &chunk, start, settled, tally)?;
                let out = Out {
                    w,
                    witnesses,
                    spans,
                };
                write_slots(histories, at, tally, out)?;
                pb.inc(chunk.len() as u64);
            }
            Ok(())
        };
        if ctx.cfg.solve.enabled {
            gtb_core::digest::write_streaming_atomic(&witness_path(work), fill)
        } else {
            fill(&mut std::io::sink())
        }
    })
}

/// Where a chunk's first attempts come from: the generate artifact, read back; or, when the
/// generate stage streams into this one, the generator, whose lines go to that artifact.
enum FirstAttempts<'w> {
    Read(Reader<std::io::BufReader<std::fs::File>>),
    Made { w: &'w mut dyn Write, pos: u64 },
}

impl FirstAttempts<'_> {
    /// A chunk's first attempts settled (`settle_batch`), and the span of each slot's first
    /// attempt in the generate artifact. Made attempts' lines are written while the workers
    /// check the tasks.
    fn settle(
        &mut self,
        ctx: &Split,
        validator: &Validator,
        chunk: &[Skeleton],
    ) -> Result<(Vec<Settled>, Vec<LineAt>)> {
        match self {
            FirstAttempts::Read(lines) => {
                let (first, at) = read_first_attempts(chunk, lines)?;
                Ok((
                    settle_batch(ctx, validator, chunk.iter().collect(), first)?,
                    at,
                ))
            }
            FirstAttempts::Made { w, pos } => {
                let (first, lines) = make_first_attempts(ctx, chunk)?;
                std::thread::scope(|s| {
                    let checking =
                        s.spawn(|| settle_batch(ctx, validator, chunk.iter().collect(), first));
                    let at = write_lines(*w, pos, lines);
                    let settled = checking
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p));
                    Ok((settled?, at?))
                })
            }
        }
    }
}

/// The stage's report, the manifest's counts and the audit's, once every slot is booked.
fn summarise(sampled: &Sampled, tally: Tally) -> (Report, ValidateSummary, AuditTally) {
    let regenerated_for_witness = tally.regenerated_for_witness;
    let Tally {
        mut report,
        users,
        audit,
        ..
    } = tally;
    report.written = sampled.n;
    let summary = ValidateSummary {
        classes: sampled.classes,
        users,
        dropped: report.dropped,
        regenerated_for_witness,
    };
    (report, summary, audit)
}

/// `[solve]`: the witness lines of the accepted tasks, in slot order (the artifact the write
/// stage publishes as `plans.jsonl`, in the task file's order).
pub(super) fn witness_path(work: &gtb_pipeline::WorkDir) -> std::path::PathBuf {
    work.root.join("witness.jsonl")
}

/// Where the validate stage lists its lines, one span per slot in slot order: an untouched
/// first attempt in `generate.jsonl` (part 0), any other line in `validate.jsonl` (part 1),
/// which holds only those.
pub(super) fn index_path(work: &gtb_pipeline::WorkDir) -> std::path::PathBuf {
    work.root.join("validate.index")
}

/// The files the validate stage's spans point into, in part order.
fn line_parts(work: &gtb_pipeline::WorkDir) -> Vec<std::path::PathBuf> {
    vec![
        work.artifact(BuildStage::Generate),
        work.artifact(BuildStage::Validate),
    ]
}

/// The validate stage's lines, in slot order.
pub(super) fn validated_lines(work: &gtb_pipeline::WorkDir) -> Result<gtb_ops::lines::Lines> {
    gtb_ops::lines::Lines::indexed(&line_parts(work), &index_path(work))
}

/// The spans of the slots written so far, and the bytes written to `validate.jsonl`.
#[derive(Default)]
struct Spans {
    list: Vec<gtb_ops::lines::Span>,
    written: u64,
}

/// Where a chunk's lines go.
struct Out<'w> {
    w: &'w mut dyn Write,
    witnesses: &'w mut dyn Write,
    spans: &'w mut Spans,
}

/// A slot's task line when it is not its untouched first attempt, and its witness line,
/// serialised.
type SlotLines = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Write a chunk's changed lines (and the witnesses) in slot order, list every slot's span and
/// book each slot; `at` holds the span of each slot's first attempt in the generate artifact.
fn write_slots(
    histories: Vec<SlotHistory>,
    at: Vec<LineAt>,
    tally: &mut Tally,
    out: Out,
) -> Result<()> {
    let lines: Vec<SlotLines> = histories
        .par_iter()
        .map(|h| {
            // a first attempt accepted as it was stays where the generate stage wrote it
            let task = match h.untouched_first() {
                true => None,
                false => h
                    .accepted()
                    .map(|t| gtb_core::pyjson::to_vec_sized(t, TASK_LINE_BYTES)),
            };
            (task, h.witness().map(gtb_core::pyjson::to_vec))
        })
        .collect();
    tally.audit_all(&histories);
    for ((h, (line, witness)), (off, len)) in histories.iter().zip(lines).zip(at) {
        tally.regenerated_for_witness += usize::from(h.regenerated_for_witness());
        tally.record_slot(h);
        match line {
            Some(line) => {
                out.w.write_all(&line)?;
                out.w.write_all(b"\n")?;
                out.spans.list.push((1, out.spans.written, line.len()));
                out.spans.written += line.len() as u64 + 1;
            }
            None if h.untouched_first() => out.spans.list.push((0, off, len)),
            None => bail!("a slot without an accepted task"),
        }
        if let Some(witness) = witness {
            out.witnesses.write_all(&witness)?;
            out.witnesses.write_all(b"\n")?;
        }
        if let (Some(task), Some(w)) = (h.accepted(), h.witness()) {
            tally.samples.push(&task.difficulty_type, w);
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

/// The generate artifact, read line by line, and the offset of its next line.
struct Reader<R> {
    r: R,
    pos: u64,
}

/// The first attempts of a chunk's slots (a failure marker, or a line of another skeleton, is
/// no first attempt), and the span of each slot's line in the generate artifact.
fn read_first_attempts(
    chunk: &[Skeleton],
    lines: &mut Reader<impl BufRead>,
) -> Result<(Vec<Option<Task>>, Vec<LineAt>)> {
    let raw: Vec<(u64, Vec<u8>)> = chunk
        .iter()
        .map(|_| {
            let mut line = Vec::new();
            let at = lines.pos;
            let n = lines.r.read_until(b'\n', &mut line)?;
            if n == 0 {
                bail!("generate artifact is shorter than the skeleton list");
            }
            lines.pos += n as u64;
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            Ok((at, line))
        })
        .collect::<Result<_>>()?;
    let tasks = chunk
        .par_iter()
        .zip(raw.par_iter())
        .map(|(sk, (_, line))| {
            // the line checked as UTF-8 at once: serde then skips the check per string
            let text = std::str::from_utf8(line).ok()?;
            serde_json::from_str::<Task>(text)
                .ok()
                .filter(|t| t.task_id == sk.task_id)
        })
        .collect();
    Ok((tasks, raw.iter().map(|(at, l)| (*at, l.len())).collect()))
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
