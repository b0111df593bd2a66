//! Settling slots: validate a batch of attempts, regenerate the failing ones with the
//! validator's messages as feedback, and book what each slot ended with.

use super::generate::{Attempt, attempt};
use super::split::Split;
use anyhow::Result;
use gtb_audit::report::Tally as AuditTally;
use gtb_core::task::{Skeleton, Task};
use gtb_plan::PlanLine;
use gtb_solve::NoWitness;
use gtb_validate::report::Report;
use gtb_validate::{Finding, Mode, Outcome, Validator};
use rayon::prelude::*;

/// An accepted task with its fixes and, when the build solves (`[solve]`), its witness line.
pub(super) type Accepted = (Task, Outcome, Option<PlanLine>);

/// A slot's end: the accepted task, or the last failure; plus every failed try.
pub(super) type Settled = (std::result::Result<Accepted, Outcome>, Vec<Outcome>);

/// Validate a batch of first attempts; regenerate the failing ones (with the validator's
/// messages as feedback) in rounds until they pass or run out of tries.
pub(super) fn settle_batch(
    ctx: &Split,
    validator: &Validator,
    sks: Vec<&Skeleton>,
    first: Vec<Option<Task>>,
) -> Result<Vec<Settled>> {
    let n = sks.len();
    let mut failures: Vec<Vec<Outcome>> = vec![Vec::new(); n];
    let mut done: Vec<Option<Accepted>> = vec![None; n];
    let mut current: Vec<Option<Task>> = first;
    for round in 0..ctx.cfg.generate.max_tries.max(1) {
        if round > 0 {
            let todo: Vec<usize> = (0..n).filter(|&i| done[i].is_none()).collect();
            if todo.is_empty() {
                break;
            }
            let items: Vec<Attempt> = todo
                .iter()
                .map(|&i| (sks[i], round, failures[i].last().map(feedback)))
                .collect();
            for (&i, t) in todo.iter().zip(attempt(ctx, &items)?) {
                current[i] = t.ok();
            }
        }
        let checked: Vec<Option<Accepted>> = current
            .par_iter_mut()
            .zip(done.par_iter())
            .map(|(t, d)| {
                if d.is_some() {
                    return None;
                }
                t.take().map(|mut t| {
                    let mut o = validator.check_task(&mut t, Mode::Fix);
                    let mut witness = None;
                    if o.problems.is_empty() && ctx.cfg.solve.enabled {
                        match witness_line(ctx, &t) {
                            Ok(line) => witness = Some(line),
                            Err(no) => o.problems.push(no_witness(&t, &no)),
                        }
                    }
                    (t, o, witness)
                })
            })
            .collect();
        for (i, c) in checked.into_iter().enumerate() {
            if done[i].is_some() {
                continue;
            }
            match c {
                Some((t, o, w)) if o.problems.is_empty() => done[i] = Some((t, o, w)),
                Some((_, o, _)) => failures[i].push(o),
                None => failures[i].push(no_table(&sks[i].task_id)),
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

/// The validator's problems, one per line: what the next attempt is told.
fn feedback(o: &Outcome) -> String {
    o.problems
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `[solve]`: a task the validator accepts still needs a witness plan: its plans-file line,
/// or why there is none (a proof of infeasibility, or the breach an exhausted search left).
fn witness_line(ctx: &Split, t: &Task) -> std::result::Result<PlanLine, NoWitness> {
    let w = ctx.solver().solve(t)?;
    Ok(gtb_ops::solve::line_of(t, Ok(w)))
}

/// The finding of check `witness` for a task without one: the task is regenerated with it as
/// feedback, then dropped and replaced.
fn no_witness(t: &Task, no: &NoWitness) -> Finding {
    Finding {
        check: gtb_validate::WITNESS,
        task_id: t.task_id.clone(),
        user: String::new(),
        city: String::new(),
        field: String::new(),
        item: no.verdict().to_string(),
        message: format!("no witness plan ({}): {}", no.verdict(), no.reason()),
    }
}

/// The failure of an attempt that produced no task at all.
fn no_table(task_id: &str) -> Outcome {
    Outcome {
        fixes: vec![],
        problems: vec![Finding {
            check: "format",
            task_id: task_id.to_string(),
            user: String::new(),
            city: String::new(),
            field: String::new(),
            item: String::new(),
            message: "the generator returned no usable table".into(),
        }],
    }
}

/// What happened to one slot, in order: its skeleton's task settled, then each replacement's.
/// The last one is accepted once the slot is done.
pub(super) struct SlotHistory(pub Vec<(Skeleton, Settled)>);

impl SlotHistory {
    /// The slot's accepted task, if it has one yet.
    pub fn accepted(&self) -> Option<&Task> {
        match self.0.last() {
            Some((_, (Ok((t, _, _)), _))) => Some(t),
            _ => None,
        }
    }

    /// The accepted task's witness line (`[solve]`).
    pub fn witness(&self) -> Option<&PlanLine> {
        match self.0.last() {
            Some((_, (Ok((_, _, w)), _))) => w.as_ref(),
            _ => None,
        }
    }

    /// Whether the slot needed another attempt or skeleton for want of a witness plan.
    pub fn regenerated_for_witness(&self) -> bool {
        self.0.iter().any(|(_, (r, failures))| {
            let dropped = r.as_ref().err().into_iter();
            failures
                .iter()
                .chain(dropped)
                .any(|o| o.problems.iter().any(|f| f.check == gtb_validate::WITNESS))
        })
    }

    /// The slot's first attempt was accepted as the generator wrote it: no replacement, no
    /// retry, no fix.
    pub fn untouched_first(&self) -> bool {
        matches!(&self.0[..], [(_, (Ok((_, o, _)), tries))] if tries.is_empty() && o.fixes.is_empty())
    }
    pub fn last_skeleton(&self) -> &Skeleton {
        &self
            .0
            .last()
            .expect("a history starts with the slot's skeleton")
            .0
    }
}

/// What the validate stage accumulates: the report, booked slot by slot in slot order (so
/// that shards' reports merge into the whole build's), and the users of accepted tasks.
pub(super) struct Tally {
    pub report: Report,
    pub users: usize,
    pub slots: usize,
    /// `[solve]`: slots regenerated or replaced for want of a witness plan
    pub regenerated_for_witness: usize,
    /// the audit's counts of the accepted tasks, taken while they are in memory (publishing
    /// then needs no second parse of the task file)
    pub audit: AuditTally,
    /// `[solve]`: the witness figures' samples of the accepted slots, in slot order
    /// (publishing then needs not read the plans back)
    pub samples: gtb_ops::solve::SlotSamples,
}

impl Tally {
    pub fn new(slots: usize) -> Self {
        let mut report = Report::new();
        report.generated = slots;
        Tally {
            report,
            users: 0,
            slots,
            regenerated_for_witness: 0,
            audit: AuditTally::default(),
            samples: Default::default(),
        }
    }

    /// Count the accepted tasks of a chunk's histories into the audit, in parallel.
    pub fn audit_all(&mut self, histories: &[SlotHistory]) {
        let part = histories
            .par_iter()
            .filter_map(SlotHistory::accepted)
            .fold(AuditTally::default, |mut a, t| {
                a.add(t);
                a
            })
            .reduce(AuditTally::default, AuditTally::merge);
        self.audit = std::mem::take(&mut self.audit).merge(part);
    }

    /// Book a slot's history: each try's retries, fixes or drop, and the replacements.
    pub fn record_slot(&mut self, history: &SlotHistory) {
        for (k, (sk, (r, failures))) in history.0.iter().enumerate() {
            if k > 0 {
                self.report.generated += 1;
                self.report.replacements += 1;
            }
            match r {
                Ok((t, o, _)) => {
                    failures.iter().for_each(|f| self.report.retry(f));
                    self.report.accept(o);
                    self.users += t.user_preferences.len();
                }
                Err(o) => {
                    // the last failure is the drop itself, counted by `drop_task`
                    failures[..failures.len().saturating_sub(1)]
                        .iter()
                        .for_each(|f| self.report.retry(f));
                    self.report.drop_task(&sk.task_id, o);
                }
            }
        }
    }
}
