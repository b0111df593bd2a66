//! Stages as units, and the small runner that orders them.
//!
//! A stage declares its name, the stages whose artifacts it reads (`upstream`), the inputs that
//! make its fingerprint, and the files it must leave behind. The runner plans every stage from
//! fingerprints alone (nothing runs), cascades a rerun to every stage downstream of it, then
//! executes the plan in order and reports each step as it happens. A new stage (import, solve,
//! export) is one more `Stage` in the list handed to `Dag::new`; the runner never changes.

use super::{Decision, Fingerprint, WorkDir};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One unit of the pipeline, run over a context `C` (what every stage may read: config,
/// resources, paths) and the artifacts `A` that stages hand to the ones after them.
pub trait Stage<C, A> {
    /// The stage's name: its artifact is `<name>.jsonl` and its fingerprint
    /// `<name>.fingerprint.json` in the work folder.
    fn name(&self) -> &'static str;
    /// The stages whose outputs this one reads. Their fingerprints are part of this stage's
    /// fingerprint (`upstream <name>`), and when one of them reruns, this stage reruns too.
    fn upstream(&self) -> &'static [&'static str];
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
}

/// A stage's fingerprint and the runner's decision about it, computed before anything runs.
#[derive(Debug, Clone)]
pub struct Planned {
    pub stage: &'static str,
    pub fingerprint: Fingerprint,
    pub decision: Decision,
}

/// What the runner reports while it works, in order.
pub enum Event<'a> {
    /// `--explain`: the decision, nothing runs.
    Explained(&'a Planned),
    /// A fresh stage whose artifact is reused.
    Reused(&'a Planned),
    /// A stage starts (its decision says why).
    Started(&'a Planned),
    /// A stage finished and its fingerprint is recorded.
    Finished(&'a Planned, Duration),
    /// A stage failed; nothing of it was recorded as done.
    Failed(&'a Planned, Duration),
}

/// The stages of a pipeline in execution order.
pub struct Dag<'s, C, A> {
    stages: Vec<&'s dyn Stage<C, A>>,
}

impl<'s, C, A> Dag<'s, C, A> {
    /// Check the list: names distinct, every upstream listed before the stage that reads it.
    pub fn new(stages: Vec<&'s dyn Stage<C, A>>) -> Result<Self> {
        for (i, s) in stages.iter().enumerate() {
            if stages[..i].iter().any(|o| o.name() == s.name()) {
                bail!("stage {} is listed twice", s.name());
            }
            for up in s.upstream() {
                if !stages[..i].iter().any(|o| o.name() == *up) {
                    bail!(
                        "stage {} reads {up}, which is not listed before it",
                        s.name()
                    );
                }
            }
        }
        Ok(Dag { stages })
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.stages.iter().map(|s| s.name()).collect()
    }

    /// Fingerprint every stage and decide whether it runs. A stage whose own inputs did not
    /// change still reruns when an upstream stage reruns; the reason names the stage where the
    /// rerun started.
    pub fn plan(&self, ctx: &C, work: &WorkDir) -> Vec<Planned> {
        let mut planned: Vec<Planned> = Vec::with_capacity(self.stages.len());
        // stage -> the stage whose rerun made it rerun (itself when its inputs changed)
        let mut rerun_root: BTreeMap<&'static str, &'static str> = BTreeMap::new();
        for s in &self.stages {
            let mut fp = s.inputs(ctx);
            for up in s.upstream() {
                let u = planned
                    .iter()
                    .find(|p| p.stage == *up)
                    .expect("checked in new");
                fp = fp.with(&format!("upstream {up}"), u.fingerprint.digest());
            }
            let outputs = s.outputs(ctx);
            let outputs: Vec<&std::path::Path> = outputs.iter().map(PathBuf::as_path).collect();
            let mut decision = work.decide(s.name(), &fp, &outputs);
            let cascade = s
                .upstream()
                .iter()
                .find_map(|up| rerun_root.get(up).copied());
            match (&decision, cascade) {
                (Decision::Rerun(_), _) => {
                    rerun_root.insert(s.name(), cascade.unwrap_or(s.name()));
                }
                (Decision::Fresh, Some(root)) => {
                    decision = Decision::Rerun(format!("upstream {root} reruns"));
                    rerun_root.insert(s.name(), root);
                }
                (Decision::Fresh, None) => {}
            }
            planned.push(Planned {
                stage: s.name(),
                fingerprint: fp,
                decision,
            });
        }
        planned
    }

    /// Report every decision of a plan without running anything.
    pub fn explain(&self, planned: &[Planned], report: &mut dyn FnMut(Event)) {
        for p in planned {
            report(Event::Explained(p));
        }
    }

    /// Execute a plan made by `plan`: reuse fresh stages, run the others in order and record
    /// their fingerprints. The first failure stops the run; stages after it are not touched.
    pub fn execute(
        &self,
        planned: &[Planned],
        ctx: &C,
        work: &WorkDir,
        art: &mut A,
        report: &mut dyn FnMut(Event),
    ) -> Result<()> {
        for (s, p) in self.stages.iter().zip(planned) {
            if p.decision == Decision::Fresh {
                report(Event::Reused(p));
                s.reuse(ctx, art)?;
                continue;
            }
            report(Event::Started(p));
            let t0 = Instant::now();
            let done = s
                .run(ctx, art)
                .and_then(|()| work.commit_fingerprint(s.name(), &p.fingerprint));
            match done {
                Ok(()) => report(Event::Finished(p, t0.elapsed())),
                Err(e) => {
                    report(Event::Failed(p, t0.elapsed()));
                    // one message with the whole chain: `to_string()` names the stage and the cause
                    return Err(anyhow::anyhow!("stage {}: {e:#}", s.name()));
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

    /// A stage that records its runs; its input is a value in the context.
    struct Probe {
        name: &'static str,
        upstream: &'static [&'static str],
        fail: bool,
    }

    struct Ctx {
        inputs: BTreeMap<&'static str, String>,
        ran: RefCell<Vec<&'static str>>,
    }

    impl Stage<Ctx, Vec<&'static str>> for Probe {
        fn name(&self) -> &'static str {
            self.name
        }
        fn upstream(&self) -> &'static [&'static str] {
            self.upstream
        }
        fn inputs(&self, ctx: &Ctx) -> Fingerprint {
            Fingerprint::default().with("value", ctx.inputs[self.name].clone())
        }
        fn run(&self, ctx: &Ctx, art: &mut Vec<&'static str>) -> Result<()> {
            ctx.ran.borrow_mut().push(self.name);
            if self.fail {
                bail!("{} broke", self.name);
            }
            art.push(self.name);
            std::fs::write(ctx.inputs["dir"].clone() + "/" + self.name + ".jsonl", b"")?;
            Ok(())
        }
    }

    const A: Probe = Probe {
        name: "a",
        upstream: &[],
        fail: false,
    };
    const B: Probe = Probe {
        name: "b",
        upstream: &["a"],
        fail: false,
    };
    const C: Probe = Probe {
        name: "c",
        upstream: &[],
        fail: false,
    };
    const D: Probe = Probe {
        name: "d",
        upstream: &["b", "c"],
        fail: false,
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
        }
    }

    fn reasons(p: &[Planned]) -> Vec<String> {
        p.iter()
            .map(|p| match &p.decision {
                Decision::Fresh => format!("{} fresh", p.stage),
                Decision::Rerun(r) => format!("{} {r}", p.stage),
            })
            .collect()
    }

    #[test]
    fn a_change_reruns_its_stage_and_everything_downstream_only() {
        let dir = tempfile::tempdir().unwrap();
        let work = WorkDir::new(dir.path());
        let dag = Dag::new(vec![&A, &B, &C, &D]).unwrap();
        let c1 = ctx(dir.path(), "1");
        let p = dag.plan(&c1, &work);
        dag.execute(&p, &c1, &work, &mut Vec::new(), &mut |_| {})
            .unwrap();
        assert_eq!(*c1.ran.borrow(), ["a", "b", "c", "d"]);
        let c2 = ctx(dir.path(), "2");
        let p = dag.plan(&c2, &work);
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
        let p = dag.plan(&c2, &work);
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
        let broken = Probe {
            name: "b",
            upstream: &["a"],
            fail: true,
        };
        let dag = Dag::new(vec![&A, &broken, &C]).unwrap();
        let c = ctx(dir.path(), "1");
        let p = dag.plan(&c, &work);
        let mut log = Vec::new();
        let r = dag.execute(&p, &c, &work, &mut Vec::new(), &mut |e| {
            log.push(match e {
                Event::Explained(p) => format!("explain {}", p.stage),
                Event::Reused(p) => format!("reuse {}", p.stage),
                Event::Started(p) => format!("start {}", p.stage),
                Event::Finished(p, _) => format!("done {}", p.stage),
                Event::Failed(p, _) => format!("failed {}", p.stage),
            })
        });
        assert!(format!("{:#}", r.unwrap_err()).contains("stage b: b broke"));
        assert_eq!(log, ["start a", "done a", "start b", "failed b"]);
        assert_eq!(*c.ran.borrow(), ["a", "b"]);
        // the failed stage left no fingerprint: it reruns next time, a stays fresh
        let p = dag.plan(&c, &work);
        assert_eq!(p[0].decision, Decision::Fresh);
        assert_eq!(p[1].decision, Decision::Rerun("no previous run".into()));
    }

    #[test]
    fn the_list_must_name_each_stage_once_after_its_upstream() {
        assert!(Dag::new(vec![&B, &A]).is_err());
        assert!(Dag::new(vec![&A, &A]).is_err());
        assert!(Dag::new(vec![&A, &B, &C, &D]).is_ok());
    }
}
