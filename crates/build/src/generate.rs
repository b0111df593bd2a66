//! Stage `generate`: the first attempt at every slot's preferences, streamed in chunks to the
//! artifact (`generate.jsonl`, one task or failure marker per slot). A task is written as the
//! release line it would be published as, so that validate passes an untouched first attempt
//! on as it is instead of writing it again. `attempt` is also the one way the validate stage
//! asks the generator again.
//!
//! When validate runs too (always, after a rerun of this stage), the stage streams into it
//! (`Stage::stream`): validate makes each chunk with [`first_attempts`] as it needs it, writing
//! the same artifact, and checks the tasks as made instead of parsing their lines back (a
//! seventh of a no-witness build's CPU). Both stages are recorded once validate succeeds.

use super::BuildStage;
use super::split::{Artifacts, Split};
use anyhow::Result;
use gtb_core::task::{Skeleton, Task};
use gtb_generate::{Request, TaskContext, assemble};
use gtb_pipeline::Fingerprint;
use gtb_pipeline::dag::Stage;
use rayon::prelude::*;

/// What a line of `generate.jsonl` holds: a task as its release line (pyjson), or a failure
/// marker. Part of the stage's fingerprint, so that an artifact of another format is never
/// reused.
const ARTIFACT_FORMAT: &str = "release-line-v1";

/// A task line's buffer to begin with: most lines are 3–8 KB.
pub(super) const TASK_LINE_BYTES: usize = 8192;

/// Tasks per chunk of the streaming stages.
pub(super) const CHUNK: usize = 4096;

/// One request to the generator: a slot's skeleton, the 0-based attempt, and the validator's
/// complaints about the previous attempt.
pub(super) type Attempt<'s> = (&'s Skeleton, u32, Option<String>);

pub(super) struct Generate;

impl<'a> Stage<Split<'a>, Artifacts, BuildStage> for Generate {
    fn id(&self) -> BuildStage {
        BuildStage::Generate
    }
    fn upstream(&self) -> &'static [BuildStage] {
        &[BuildStage::Sample]
    }
    fn inputs(&self, ctx: &Split<'a>) -> Fingerprint {
        Fingerprint::default()
            .with(
                "generator",
                format!("{} {}", ctx.generator.name(), ctx.generator.version()),
            )
            .with_json("config generate", &ctx.cfg.generate)
            // the artifact's line format (validate passes untouched lines on as they are)
            .with("artifact", ARTIFACT_FORMAT)
    }
    fn run(&self, ctx: &Split<'a>, art: &mut Artifacts) -> Result<()> {
        let sampled = art.sampled()?;
        let pb = super::bar(sampled.n, "generate");
        let work = &ctx.paths.work;
        gtb_core::digest::write_streaming_atomic(&work.artifact(BuildStage::Generate), |w| {
            let mut pos = 0;
            for chunk in sampled.chunks(CHUNK)? {
                let chunk = chunk?;
                // the tasks are freed by the workers, not one by one here
                first_attempts(ctx, &chunk, w, &mut pos)?
                    .0
                    .into_par_iter()
                    .for_each(drop);
                pb.inc(chunk.len() as u64);
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        Ok(())
    }
    fn stream(&self, _ctx: &Split<'a>, art: &mut Artifacts) -> Result<bool> {
        art.generate_streams = true;
        Ok(true)
    }
}

/// Where a line of the generate artifact is: its offset and length (without its newline).
pub(super) type LineAt = (u64, usize);

/// A chunk's first attempts, their lines appended to the generate artifact `w`, which is `pos`
/// bytes long (and is moved on): each slot's task (`None`: a failure, stored as a marker line
/// and retried by validate) and its line's span.
pub(super) fn first_attempts(
    ctx: &Split,
    chunk: &[Skeleton],
    w: &mut dyn std::io::Write,
    pos: &mut u64,
) -> Result<(Vec<Option<Task>>, Vec<LineAt>)> {
    let (tasks, lines) = make_first_attempts(ctx, chunk)?;
    Ok((tasks, write_lines(w, pos, lines)?))
}

/// A chunk's first attempts and their lines for the generate artifact, not yet written: each
/// slot's task (`None`: a failure, whose line is a marker) and its line.
pub(super) type Made = (Vec<Option<Task>>, Vec<Vec<u8>>);

/// [`Made`] for a chunk.
pub(super) fn make_first_attempts(ctx: &Split, chunk: &[Skeleton]) -> Result<Made> {
    let items: Vec<Attempt> = chunk.iter().map(|s| (s, 0, None)).collect();
    let tasks = attempt(ctx, &items)?;
    // serialise in parallel, write in order
    let lines: Vec<Vec<u8>> = chunk
        .par_iter()
        .zip(tasks.par_iter())
        .map(|(sk, t)| match t {
            Ok(t) => Ok(gtb_core::pyjson::to_vec_sized(t, TASK_LINE_BYTES)),
            Err(e) => serde_json::to_vec(&serde_json::json!({"failed": sk.task_id, "error": e})),
        })
        .collect::<Result<_, _>>()?;
    // what validate would read back from these lines: a failure marker, or a line of another
    // skeleton, is no first attempt
    let tasks = (tasks.into_iter().zip(chunk))
        .map(|(t, sk)| t.ok().filter(|t| t.task_id == sk.task_id))
        .collect();
    Ok((tasks, lines))
}

/// Append a chunk's lines to the generate artifact `w`, which is `pos` bytes long (and is
/// moved on); returns each line's span.
pub(super) fn write_lines(
    w: &mut dyn std::io::Write,
    pos: &mut u64,
    lines: Vec<Vec<u8>>,
) -> Result<Vec<LineAt>> {
    let mut at = Vec::with_capacity(lines.len());
    for l in lines {
        w.write_all(&l)?;
        w.write_all(b"\n")?;
        at.push((*pos, l.len()));
        *pos += l.len() as u64 + 1;
    }
    gtb_ops::publish::crash_point("generate:chunk-written");
    Ok(at)
}

/// One batch of generation requests -> assembled tasks (errors stay per item). A run-level
/// stop of the generator (auth, quota, error rate, replay miss) fails the whole batch.
pub(super) fn attempt(ctx: &Split, items: &[Attempt]) -> Result<Vec<Result<Task, String>>> {
    let (res, seed) = (ctx.res, ctx.cfg.run.seed);
    let reqs = items
        .par_iter()
        .map(|(sk, attempt, fb)| {
            Ok(Request {
                ctx: TaskContext::new(sk, res, seed)
                    .map_err(|e| anyhow::anyhow!("skeleton {}: {e}", sk.task_id))?,
                attempt: *attempt,
                feedback: fb.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let out = ctx.generator.generate_batch(&reqs);
    if let Some(why) = ctx.generator.stopped() {
        anyhow::bail!("LLM generation stopped: {why}");
    }
    Ok(reqs
        .par_iter()
        .zip(out.into_par_iter())
        .map(|(r, g)| g.map(|g| assemble(&r.ctx, g)).map_err(|e| e.to_string()))
        .collect())
}
