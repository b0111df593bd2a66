//! Stages as units, and the small runner that orders them.
//!
//! A stage declares its id, the stages whose artifacts it reads (`upstream`), the inputs that
//! make its fingerprint, and the files it must leave behind. The runner decides every stage from
//! fingerprints alone (nothing runs), cascades a rerun to every stage downstream of it, then
//! executes the decisions in order and reports each step as it happens. A new stage (import,
//! solve, export) is one more `Stage` in the list handed to `Dag::new`; the runner never changes.

use super::{DirtyReason, Fingerprint, Freshness, StageId, WorkDir};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One unit of the pipeline, run over a context `C` (what every stage may read: config,
/// resources, paths) and the artifacts `A` that stages hand to the ones after them; `I` names
/// the stages.
pub trait Stage<C, A, I: StageId> {
    /// The stage's id: its artifact is `<name>.jsonl` and its fingerprint
    /// `<name>.fingerprint.json` in the work folder.
    fn id(&self) -> I;
    /// The stages whose outputs this one reads. Their fingerprints are part of this stage's
    /// fingerprint (`upstream <name>`), and when one of them reruns, this stage reruns too.
    fn upstream(&self) -> &'static [I];
    /// The inputs besides the upstream stages that decide the stage's output: config sections,
    /// versions, seeds, input digests.
    fn inputs(&self, ctx: &C) -> Fingerprint;
    /// Files besides the artifact that a fresh stage must have left in place.
    fn outputs(&self, _ctx: &C) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Do the work: write the artifact and outputs, and leave in `art` what downstream stages
    /// read. The runner records the fingerprint only after this returns `Ok`.
    fn run(&self, ctx: &C, art: &mut A) -> Result<()>;
    /// The stage is fresh: load from its artifact what downstream stages read.
    fn reuse(&self, _ctx: &C, _art: &mut A) -> Result<()> {
        Ok(())
    }
    /// Pipelining: asked instead of `run` when the next stage runs too. A stage whose work the
    /// next one can do as it goes (making each piece as it is needed, its artifact included,
    /// rather than reading it back) leaves in `art` what the next stage needs for that and
    /// says `true`. The runner then records both fingerprints only once the next stage's `run`
    /// succeeds. `false` (the default): the stage runs on its own.
    fn stream(&self, _ctx: &C, _art: &mut A) -> Result<bool> {
        Ok(false)
    }
}

/// A stage's fingerprint and whether it runs, decided before anything runs.
#[derive(Debug, Clone)]
pub struct Decided<I> {
    pub stage: I,
    pub fingerprint: Fingerprint,
    pub freshness: Freshness<I>,
}

/// What the runner reports while it works, in order.
pub enum Event<'a, I> {
    /// `--explain`: the decision, nothing runs.
    Explained(&'a Decided<I>),
    /// A fresh stage whose artifact is reused.
    Reused(&'a Decided<I>),
    /// A stage starts (its decision says why).
    Started(&'a Decided<I>),
    /// A started stage's work is done inside the next stage's (`Stage::stream`); it finishes
    /// or fails with it.
    Streams(&'a Decided<I>, I),
    /// A stage finished and its fingerprint is recorded.
    Finished(&'a Decided<I>, Duration),
    /// A stage failed; nothing of it was recorded as done.
    Failed(&'a Decided<I>, Duration),
}

/// The stages of a pipeline in execution order.
pub struct Dag<'s, C, A, I: StageId> {
    stages: Vec<&'s dyn Stage<C, A, I>>,
}

impl<'s, C, A, I: StageId> Dag<'s, C, A, I> {
    /// Check the list: ids distinct, every upstream listed before the stage that reads it.
    pub fn new(stages: Vec<&'s dyn Stage<C, A, I>>) -> Result<Self> {
        for (i, s) in stages.iter().enumerate() {
            let name = s.id().name();
            if stages[..i].iter().any(|o| o.id() == s.id()) {
                bail!("stage {name} is listed twice");
            }
            for up in s.upstream() {
                if !stages[..i].iter().any(|o| o.id() == *up) {
                    bail!(
                        "stage {name} reads {}, which is not listed before it",
                        up.name()
                    );
                }
            }
        }
        Ok(Dag { stages })
    }

    pub fn ids(&self) -> Vec<I> {
        self.stages.iter().map(|s| s.id()).collect()
    }

    /// Fingerprint every stage and decide whether it runs. A stage whose own inputs did not
    /// change still reruns when an upstream stage reruns; the reason names the stage where the
    /// rerun started.
    pub fn decide(&self, ctx: &C, work: &WorkDir) -> Vec<Decided<I>> {
        let mut decided: Vec<Decided<I>> = Vec::with_capacity(self.stages.len());
        // stage -> the stage whose rerun made it rerun (itself when its inputs changed)
        let mut rerun_root: BTreeMap<I, I> = BTreeMap::new();
        for s in &self.stages {
            let mut fp = s.inputs(ctx);
            for up in s.upstream() {
                let u = decided
                    .iter()
                    .find(|d| d.stage == *up)
                    .expect("checked in new");
                fp = fp.with(&format!("upstream {}", up.name()), u.fingerprint.digest());
            }
            let outputs = s.outputs(ctx);
            let outputs: Vec<&std::path::Path> = outputs.iter().map(PathBuf::as_path).collect();
            let mut freshness = work.freshness(s.id(), &fp, &outputs);
            let cascade = s
                .upstream()
                .iter()
                .find_map(|up| rerun_root.get(up).copied());
            match (&freshness, cascade) {
                (Freshness::Dirty(_), _) => {
                    rerun_root.insert(s.id(), cascade.unwrap_or(s.id()));
                }
                (Freshness::Fresh, Some(root)) => {
                    freshness = Freshness::Dirty(DirtyReason::UpstreamReruns(root));
                    rerun_root.insert(s.id(), root);
                }
                (Freshness::Fresh, None) => {}
            }
            decided.push(Decided {
                stage: s.id(),
                fingerprint: fp,
                freshness,
            });
        }
        decided
    }

    /// Report every decision without running anything.
    pub fn explain(&self, decided: &[Decided<I>], report: &mut dyn FnMut(Event<I>)) {
        for d in decided {
            report(Event::Explained(d));
        }
    }

    /// Execute decisions made by `decide`: reuse fresh stages, run the others in order and
    /// record their fingerprints. The first failure stops the run; stages after it are not
    /// touched.
    pub fn execute(
        &self,
        decided: &[Decided<I>],
        ctx: &C,
        work: &WorkDir,
        art: &mut A,
        report: &mut dyn FnMut(Event<I>),
    ) -> Result<()> {
        // a stage streaming into the current one: its index and start
        let mut streaming: Option<(usize, Instant)> = None;
        for (i, (s, d)) in self.stages.iter().zip(decided).enumerate() {
            if d.freshness.is_fresh() {
                report(Event::Reused(d));
                s.reuse(ctx, art)?;
                continue;
            }
            report(Event::Started(d));
            let t0 = Instant::now();
            let next_runs = decided.get(i + 1).is_some_and(|n| !n.freshness.is_fresh());
            let streams = match next_runs {
                true => s.stream(ctx, art),
                false => Ok(false),
            };
            if let Ok(true) = streams {
                report(Event::Streams(d, decided[i + 1].stage));
                streaming = Some((i, t0));
                continue;
            }
            let up = streaming.take();
            let done = streams.and_then(|_| s.run(ctx, art)).and_then(|()| {
                if let Some((j, _)) = up {
                    work.commit_fingerprint(decided[j].stage, &decided[j].fingerprint)?;
                }
                work.commit_fingerprint(s.id(), &d.fingerprint)
            });
            if let Some((j, t)) = up {
                report(match &done {
                    Ok(()) => Event::Finished(&decided[j], t.elapsed()),
                    Err(_) => Event::Failed(&decided[j], t.elapsed()),
                });
            }
            match done {
                Ok(()) => report(Event::Finished(d, t0.elapsed())),
                Err(e) => {
                    report(Event::Failed(d, t0.elapsed()));
                    // one message with the whole chain: `to_string()` names the stage (both
                    // stages, when one streamed into the other) and the cause
                    let name = match up {
                        Some((j, _)) => format!(
                            "{} ({} streamed into it)",
                            s.id().name(),
                            decided[j].stage.name()
                        ),
                        None => s.id().name().to_string(),
                    };
                    return Err(anyhow::anyhow!("stage {name}: {e:#}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Id {
        A,
        B,
        C,
        D,
    }

    impl StageId for Id {
        fn name(self) -> &'static str {
            ["a", "b", "c", "d"][self as usize]
        }
    }

    /// A stage that records its runs; its input is a value in the context.
    struct Probe {
        id: Id,
        upstream: &'static [Id],
        fail: bool,
        /// its work (its artifact) is done by the next stage when that runs too
        streams: bool,
    }

    struct Ctx {
        inputs: BTreeMap<&'static str, String>,
        ran: RefCell<Vec<&'static str>>,
        /// a stage that streamed into the next: the next writes its artifact
        pending: RefCell<Option<&'static str>>,
    }

    impl Stage<Ctx, Vec<&'static str>, Id> for Probe {
        fn id(&self) -> Id {
            self.id
        }
        fn upstream(&self) -> &'static [Id] {
            self.upstream
        }
        fn inputs(&self, ctx: &Ctx) -> Fingerprint {
            Fingerprint::default().with("value", ctx.inputs[self.id.name()].clone())
        }
        fn run(&self, ctx: &Ctx, art: &mut Vec<&'static str>) -> Result<()> {
            let name = self.id.name();
            ctx.ran.borrow_mut().push(name);
            if self.fail {
                bail!("{name} broke");
            }
            let streamed = ctx.pending.borrow_mut().take();
            for n in streamed.into_iter().chain([name]) {
                art.push(n);
                std::fs::write(ctx.inputs["dir"].clone() + "/" + n + ".jsonl", b"")?;
            }
            Ok(())
        }
        fn stream(&self, ctx: &Ctx, _art: &mut Vec<&'static str>) -> Result<bool> {
            if self.streams {
                ctx.ran.borrow_mut().push("streams");
                *ctx.pending.borrow_mut() = Some(self.id.name());
            }
            Ok(self.streams)
        }
    }

    const A: Probe = Probe {
        id: Id::A,
        upstream: &[],
        fail: false,
        streams: false,
    };
    const B: Probe = Probe {
        id: Id::B,
        upstream: &[Id::A],
        fail: false,
        streams: false,
    };
    const C: Probe = Probe {
        id: Id::C,
        upstream: &[],
        fail: false,
        streams: false,
    };
    const D: Probe = Probe {
        id: Id::D,
        upstream: &[Id::B, Id::C],
        fail: false,
        streams: false,
    };

    fn ctx(dir: &std::path::Path, a: &str) -> Ctx {
        let mut inputs = BTreeMap::new();
        inputs.insert("dir", dir.display().to_string());
        for s in ["a", "b", "c", "d"] {
            inputs.insert(s, "1".to_string());
        }
        inputs.insert("a", a.to_string());
        Ctx {
            inputs,
            ran: RefCell::new(Vec::new()),
            pending: RefCell::new(None),
        }
    }

    fn reasons(d: &[Decided<Id>]) -> Vec<String> {
        d.iter()
            .map(|d| match &d.freshness {
                Freshness::Fresh => format!("{} fresh", d.stage.name()),
                Freshness::Dirty(r) => format!("{} {r}", d.stage.name()),
            })
            .collect()
    }

    #[test]
    fn a_change_reruns_its_stage_and_everything_downstream_only() {
        let dir = tempfile::tempdir().unwrap();
        let work = WorkDir::new(dir.path());
        let dag = Dag::new(vec![&A, &B, &C, &D]).unwrap();
        let c1 = ctx(dir.path(), "1");
        let p = dag.decide(&c1, &work);
        dag.execute(&p, &c1, &work, &mut Vec::new(), &mut |_| {})
            .unwrap();
        assert_eq!(*c1.ran.borrow(), ["a", "b", "c", "d"]);
        let c2 = ctx(dir.path(), "2");
        let p = dag.decide(&c2, &work);
        assert_eq!(
            reasons(&p),
            [
                "a value changed",
                "b upstream a changed",
                "c fresh",
                "d upstream b changed"
            ]
        );
        // a lost artifact reruns its stage; a downstream stage with unchanged inputs follows
        dag.execute(&p, &c2, &work, &mut Vec::new(), &mut |_| {})
            .unwrap();
        std::fs::remove_file(dir.path().join("b.jsonl")).unwrap();
        let p = dag.decide(&c2, &work);
        assert_eq!(
            reasons(&p),
            [
                "a fresh",
                "b artifact missing",
                "c fresh",
                "d upstream b reruns"
            ]
        );
    }

    #[test]
    fn events_come_as_the_work_happens_and_a_failure_stops_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let work = WorkDir::new(dir.path());
        let broken = Probe { fail: true, ..B };
        let dag = Dag::new(vec![&A, &broken, &C]).unwrap();
        let c = ctx(dir.path(), "1");
        let (r, log) = logged(&dag, &c, &work);
        assert!(format!("{:#}", r.unwrap_err()).contains("stage b: b broke"));
        assert_eq!(log, ["start a", "done a", "start b", "failed b"]);
        assert_eq!(*c.ran.borrow(), ["a", "b"]);
        // the failed stage left no fingerprint: it reruns next time, a stays fresh
        let p = dag.decide(&c, &work);
        assert_eq!(p[0].freshness, Freshness::Fresh);
        assert_eq!(p[1].freshness, Freshness::Dirty(DirtyReason::NoPreviousRun));
    }

    /// Execute with every event logged as a short line.
    fn logged(
        dag: &Dag<Ctx, Vec<&'static str>, Id>,
        c: &Ctx,
        work: &WorkDir,
    ) -> (Result<()>, Vec<String>) {
        let p = dag.decide(c, work);
        let mut log = Vec::new();
        let r = dag.execute(&p, c, work, &mut Vec::new(), &mut |e| {
            log.push(match e {
                Event::Explained(d) => format!("explain {}", d.stage.name()),
                Event::Reused(d) => format!("reuse {}", d.stage.name()),
                Event::Started(d) => format!("start {}", d.stage.name()),
                Event::Streams(d, into) => {
                    format!("{} streams into {}", d.stage.name(), into.name())
                }
                Event::Finished(d, _) => format!("done {}", d.stage.name()),
                Event::Failed(d, _) => format!("failed {}", d.stage.name()),
            })
        });
        (r, log)
    }

    #[test]
    fn a_streamed_stage_finishes_or_fails_with_the_stage_it_streams_into() {
        let dir = tempfile::tempdir().unwrap();
        let work = WorkDir::new(dir.path());
        let a = Probe { streams: true, ..A };
        let broken = Probe { fail: true, ..B };
        let c = ctx(dir.path(), "1");
        let (r, log) = logged(&Dag::new(vec![&a, &broken]).unwrap(), &c, &work);
        let e = format!("{:#}", r.unwrap_err());
        assert!(e.contains("stage b (a streamed into it): b broke"), "{e}");
        assert_eq!(
            log,
            [
                "start a",
                "a streams into b",
                "start b",
                "failed a",
                "failed b"
            ]
        );
        // neither left a fingerprint
        let dag = Dag::new(vec![&a, &B, &C]).unwrap();
        let p = dag.decide(&c, &work);
        assert_eq!(p[0].freshness, Freshness::Dirty(DirtyReason::NoPreviousRun));
        // the next stage does the streamed one's work; both are recorded once it succeeds
        let (r, log) = logged(&dag, &c, &work);
        r.unwrap();
        assert_eq!(
            log,
            [
                "start a",
                "a streams into b",
                "start b",
                "done a",
                "done b",
                "start c",
                "done c"
            ]
        );
        assert_eq!(*c.ran.borrow(), ["streams", "b", "streams", "b", "c"]);
        assert!(dag.decide(&c, &work).iter().all(|d| d.freshness.is_fresh()));
        // a stage whose next stage does not run runs on its own
        std::fs::remove_file(dir.path().join("a.jsonl")).unwrap();
        c.ran.borrow_mut().clear();
        let (r, _) = logged(&Dag::new(vec![&a]).unwrap(), &c, &work);
        r.unwrap();
        assert_eq!(*c.ran.borrow(), ["a"]);
    }

    #[test]
    fn the_list_must_name_each_stage_once_after_its_upstream() {
        assert!(Dag::new(vec![&B, &A]).is_err());
        assert!(Dag::new(vec![&A, &A]).is_err());
        assert!(Dag::new(vec![&A, &B, &C, &D]).is_ok());
    }
}
