//! Fingerprints, the work folder and JSONL artifacts; `dag` holds the `Stage` unit and the
//! runner that orders stages (the build's list is in `ops::build`).
//!
//! Each stage has a fingerprint: a sorted map of its inputs (resolved config section, upstream
//! fingerprints, hashes of raw files, code and prompt versions). Its artifact and the map are
//! persisted in the work directory; a rerun reuses a fresh stage and says why a stale one reruns.

pub mod dag;

use anyhow::{Context, Result};
use gtb_core::digest::{digest_bytes, write_atomic};
use std::collections::BTreeMap;
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
    /// Why `self` differs from a previous fingerprint, in words.
    pub fn reason_against(&self, old: &Fingerprint) -> Option<String> {
        let mut reasons = Vec::new();
        for (k, v) in &self.0 {
            match old.0.get(k) {
                None => reasons.push(format!("{k} is new")),
                Some(o) if o != v => reasons.push(format!("{k} changed")),
                _ => {}
            }
        }
        for k in old.0.keys() {
            if !self.0.contains_key(k) {
                reasons.push(format!("{k} was removed"));
            }
        }
        (!reasons.is_empty()).then(|| reasons.join(", "))
    }
}

/// What the runner decided for a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Fresh,
    Rerun(String),
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
    pub fn artifact(&self, stage: &str) -> PathBuf {
        self.root.join(format!("{stage}.jsonl"))
    }
    fn fp_path(&self, stage: &str) -> PathBuf {
        self.root.join(format!("{stage}.fingerprint.json"))
    }
    /// Decide whether a stage must run.
    pub fn decide(&self, stage: &str, fp: &Fingerprint, extra_outputs: &[&Path]) -> Decision {
        let Ok(text) = std::fs::read(self.fp_path(stage)) else {
            return Decision::Rerun("no previous run".into());
        };
        let Ok(old) = serde_json::from_slice::<Fingerprint>(&text) else {
            return Decision::Rerun("previous fingerprint unreadable".into());
        };
        if let Some(r) = fp.reason_against(&old) {
            return Decision::Rerun(r);
        }
        if !self.artifact(stage).exists() {
            return Decision::Rerun("artifact missing".into());
        }
        if let Some(p) = extra_outputs.iter().find(|p| !p.exists()) {
            return Decision::Rerun(format!("{} missing", p.display()));
        }
        Decision::Fresh
    }
    /// Record a stage's fingerprint, after the stage put its artifact and outputs in place (a
    /// crash before this reruns the stage).
    pub fn commit_fingerprint(&self, stage: &str, fp: &Fingerprint) -> Result<()> {
        write_atomic(&self.fp_path(stage), &serde_json::to_vec_pretty(fp)?)
            .context("writing fingerprint")
    }
    pub fn read_artifact(&self, stage: &str) -> Result<Vec<u8>> {
        let p = self.artifact(stage);
        std::fs::read(&p).with_context(|| format!("reading {}", p.display()))
    }
}
