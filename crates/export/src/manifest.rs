//! What an export takes from a split's `manifest.json`: seed, generator, versions, stage
//! fingerprints and the sha256 of the task file it describes. Read leniently (a field a build
//! did not write is simply absent), but a checksum that disagrees with the file is an error.

use anyhow::{Context, Result};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub gtb_version: Option<String>,
    pub code_version: Option<String>,
    pub seed: Option<u64>,
    pub generator: Option<String>,
    /// the build's own command line, when the manifest records one
    pub command: Option<String>,
    /// (stage, digest) in the manifest's order
    pub stage_fingerprints: Vec<(String, String)>,
    /// sha256 of the task file
    pub sha256: Option<String>,
    pub tasks: Option<u64>,
    /// `config.run.n` and the LLM model, to restate the command
    pub n: Option<u64>,
    pub llm_model: Option<String>,
    /// the file is `<split>/<split>.jsonl`: one split of a `--splits` build, whose seed is
    /// derived from a master seed the manifest does not hold
    pub part_of_splits: bool,
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn number(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_u64)
}

impl Manifest {
    /// Read `manifest` describing `jsonl`.
    pub fn read(manifest: &Path, jsonl: &Path) -> Result<Manifest> {
        let bytes = std::fs::read(manifest)
            .with_context(|| format!("{}: cannot read", manifest.display()))?;
        let v: Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("{}: not JSON", manifest.display()))?;
        let stage_fingerprints = v
            .get("stage_fingerprints")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, d)| Some((k.clone(), d.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let stem = jsonl.file_stem().and_then(|s| s.to_str());
        let folder = jsonl
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|s| s.to_str());
        Ok(Manifest {
            gtb_version: text(&v, &["gtb_version"]),
            code_version: text(&v, &["code_version"]),
            seed: number(&v, &["seed"]),
            generator: text(&v, &["generator"]),
            command: text(&v, &["command"]),
            stage_fingerprints,
            sha256: text(&v, &["test_jsonl_sha256"]),
            tasks: number(&v, &["counts", "tasks"]),
            n: number(&v, &["config", "run", "n"]),
            llm_model: (text(&v, &["config", "run", "generator"]).as_deref() == Some("openai"))
                .then(|| text(&v, &["config", "llm", "model"]))
                .flatten(),
            part_of_splits: stem.is_some() && stem == folder,
        })
    }

    /// `--llm openai --model M` for an LLM build, else nothing.
    pub fn generator_args(&self) -> String {
        match &self.llm_model {
            Some(m) => format!(" --llm openai --model {m}"),
            None => String::new(),
        }
    }

    /// The arguments of `gtb build` that give this single split back.
    pub fn build_args(&self) -> String {
        let mut a = Vec::new();
        if let Some(s) = self.seed {
            a.push(format!("--seed {s}"));
        }
        if let Some(n) = self.n.or(self.tasks) {
            a.push(format!("--n {n}"));
        }
        a.join(" ") + &self.generator_args()
    }
}
