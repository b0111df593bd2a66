//! Fingerprints, typed stage ids, why a stage reruns (`DirtyReason`) and the work folder; `dag`
//! holds the `Stage` unit and the runner that orders stages (the build's list is in
//! `gtb_build`).
//!
//! Each stage has a fingerprint: a sorted map of its inputs (resolved config section, upstream
//! fingerprints, hashes of raw files, code and prompt versions). Its artifact and the map are
//! persisted in the work directory; a rerun reuses a fresh stage and says why a stale one reruns.

pub mod dag;

use anyhow::{Context, Result};
use gtb_core::digest::{digest_bytes, write_atomic};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Inputs of a stage, name -> digest or value.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint(pub BTreeMap<String, String>);

impl Fingerprint {
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.0.insert(key.to_string(), value.into());
        self
    }
    /// Hash a serialisable value (a config section) into the map.
    pub fn with_json<T: serde::Serialize>(self, key: &str, value: &T) -> Self {
        let v = serde_json::to_vec(value).expect("config serialises");
        self.with(key, digest_bytes(&v))
    }
    pub fn digest(&self) -> String {
        digest_bytes(&serde_json::to_vec(&self.0).expect("map serialises"))
    }
    /// What changed since a previous fingerprint: new and changed keys in key order, then the
    /// removed ones.
    pub fn changes_from(&self, old: &Fingerprint) -> Vec<InputChange> {
        let mut out: Vec<InputChange> = Vec::new();
        for (k, v) in &self.0 {
            let how = match old.0.get(k) {
                None => Change::New,
                Some(o) if o != v => Change::Changed,
                _ => continue,
            };
            out.push(InputChange {
                key: k.clone(),
                how,
            });
        }
        for k in old.0.keys().filter(|k| !self.0.contains_key(*k)) {
            out.push(InputChange {
                key: k.clone(),
                how: Change::Removed,
            });
        }
        out
    }
}

/// How one input of a fingerprint changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    New,
    Changed,
    Removed,
}

/// One input of a fingerprint that differs from the previous run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputChange {
    pub key: String,
    pub how: Change,
}

impl fmt::Display for InputChange {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let how = match self.how {
            Change::New => "is new",
            Change::Changed => "changed",
            Change::Removed => "was removed",
        };
        write!(f, "{} {how}", self.key)
    }
}

/// Input changes in words: "config sample changed, code changed".
pub fn describe_changes(changes: &[InputChange]) -> String {
    let words: Vec<String> = changes.iter().map(ToString::to_string).collect();
    words.join(", ")
}

/// A stage of a pipeline, named in code rather than by a string (the build's are
/// `gtb_build::BuildStage`). `name` is its file name in the work folder and its word in
/// messages.
pub trait StageId: Copy + Eq + Ord + fmt::Debug + 'static {
    fn name(self) -> &'static str;
}

/// Why a stage must run again (after cargo's `DirtyReason`), shown when it reruns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirtyReason<I> {
    NoPreviousRun,
    FingerprintUnreadable,
    /// the stage's own inputs (config section, seed, code, input digests, an upstream stage's
    /// fingerprint) differ from the previous run's
    InputsChanged(Vec<InputChange>),
    ArtifactMissing,
    OutputMissing(PathBuf),
    /// an upstream stage reruns: the stage where the rerun started
    UpstreamReruns(I),
}

impl<I: StageId> fmt::Display for DirtyReason<I> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            DirtyReason::NoPreviousRun => f.write_str("no previous run"),
            DirtyReason::FingerprintUnreadable => f.write_str("previous fingerprint unreadable"),
            DirtyReason::InputsChanged(changes) => f.write_str(&describe_changes(changes)),
            DirtyReason::ArtifactMissing => f.write_str("artifact missing"),
            DirtyReason::OutputMissing(p) => write!(f, "{} missing", p.display()),
            DirtyReason::UpstreamReruns(s) => write!(f, "upstream {} reruns", s.name()),
        }
    }
}

/// Whether a stage can be reused or must run (after cargo's `Freshness`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness<I> {
    Fresh,
    Dirty(DirtyReason<I>),
}

impl<I> Freshness<I> {
    pub fn is_fresh(&self) -> bool {
        matches!(self, Freshness::Fresh)
    }
}

pub struct WorkDir {
    pub root: PathBuf,
}

impl WorkDir {
    pub fn new(root: &Path) -> Self {
        WorkDir {
            root: root.to_path_buf(),
        }
    }
    pub fn artifact(&self, stage: impl StageId) -> PathBuf {
        self.root.join(format!("{}.jsonl", stage.name()))
    }
    fn fp_path(&self, stage: impl StageId) -> PathBuf {
        self.root.join(format!("{}.fingerprint.json", stage.name()))
    }
    /// Whether a stage must run: its fingerprint against the stored one, then its artifact and
    /// outputs.
    pub fn freshness<I: StageId>(
        &self,
        stage: I,
        fp: &Fingerprint,
        outputs: &[&Path],
    ) -> Freshness<I> {
        let dirty = Freshness::Dirty;
        let Ok(text) = std::fs::read(self.fp_path(stage)) else {
            return dirty(DirtyReason::NoPreviousRun);
        };
        let Ok(old) = serde_json::from_slice::<Fingerprint>(&text) else {
            return dirty(DirtyReason::FingerprintUnreadable);
        };
        let changes = fp.changes_from(&old);
        if !changes.is_empty() {
            return dirty(DirtyReason::InputsChanged(changes));
        }
        if !self.artifact(stage).exists() {
            return dirty(DirtyReason::ArtifactMissing);
        }
        match outputs.iter().find(|p| !p.exists()) {
            Some(p) => dirty(DirtyReason::OutputMissing(p.to_path_buf())),
            None => Freshness::Fresh,
        }
    }
    /// Record a stage's fingerprint, after the stage put its artifact and outputs in place (a
    /// crash before this reruns the stage).
    pub fn commit_fingerprint(&self, stage: impl StageId, fp: &Fingerprint) -> Result<()> {
        write_atomic(&self.fp_path(stage), &serde_json::to_vec_pretty(fp)?)
            .context("writing fingerprint")
    }
    pub fn read_artifact(&self, stage: impl StageId) -> Result<Vec<u8>> {
        let p = self.artifact(stage);
        std::fs::read(&p).with_context(|| format!("reading {}", p.display()))
    }
}
