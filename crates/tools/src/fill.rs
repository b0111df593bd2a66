//! `gtb tools fill`: the calls a finished run of the release's harness missed, answered from
//! the split's world and added to its cache.
//!
//! The harness logs every miss in `<tool>_missed.json` beside the cache: a JSON array of
//! records `{"params": <the call's parameters as json.dumps(kwargs, sort_keys=True,
//! ensure_ascii=False)>, "simulated_result": <what the simulator answered>, "timestamp": <unix
//! seconds>}`, appended on every miss (the same call again on every trial). Only `params` is
//! read: the simulated result is what a rerun should no longer see.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The suffix of a missed-calls file.
pub const MISSED_SUFFIX: &str = "_missed.json";

/// One logged miss.
#[derive(Debug, Clone, PartialEq)]
pub struct MissedCall {
    pub tool: String,
    pub params: Map<String, Value>,
}

/// The `<tool>_missed.json` files of `dir`, by name.
pub fn missed_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(tool) = name.strip_suffix(MISSED_SUFFIX)
            && !tool.is_empty()
            && e.path().is_file()
        {
            out.push((tool.to_string(), e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The calls of one missed-calls file, in its order. Errors name the file, the record (1 is
/// the first) and the field.
pub fn read_missed(tool: &str, path: &Path) -> Result<Vec<MissedCall>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let records: Vec<Value> = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: line {} column {}: not a JSON array of missed calls ({e})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let mut out = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let at = || format!("{}: record {}", path.display(), i + 1);
        let Value::Object(r) = r else {
            bail!("{}: not an object", at());
        };
        let params = match r.get("params") {
            Some(Value::String(p)) => p,
            Some(_) => bail!("{}: field params: not a string", at()),
            None => bail!("{}: field params: missing", at()),
        };
        let params = match serde_json::from_str::<Value>(params) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!("{}: field params: not a JSON object", at()),
            Err(e) => bail!(
                "{}: field params: not JSON (column {}: {:?} error)",
                at(),
                e.column(),
                e.classify()
            ),
        };
        out.push(MissedCall {
            tool: tool.to_string(),
            params,
        });
    }
    Ok(out)
}

/// `gtb tools fill`'s options.
#[derive(Debug, Clone)]
pub struct FillOptions {
    /// the split folder
    pub split: PathBuf,
    /// the folder of the run's `<tool>_missed.json` files
    pub missed: PathBuf,
    /// wait for a build that holds the split folder
    pub wait: bool,
}

/// What a fill did, per tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFill {
    /// records of the missed-calls file
    pub records: usize,
    /// distinct calls among them
    pub calls: usize,
    /// calls added to the cache
    pub added: usize,
    /// calls the cache already held with the same answer
    pub unchanged: usize,
    /// calls the cache held with another answer (kept)
    pub conflicting: usize,
    /// distinct calls whose answer is a no-data answer
    pub no_data: usize,
}

/// What `fill` did: per tool, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FillReport {
    pub tools: std::collections::BTreeMap<String, ToolFill>,
}

impl std::fmt::Display for FillReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tools.is_empty() {
            return writeln!(f, "no *{MISSED_SUFFIX} files: nothing to fill");
        }
        for (tool, t) in &self.tools {
            writeln!(
                f,
                "{tool}: {} missed records, {} distinct calls ({} answered no-data): {} added, {} \
                 already cached, {} cached with another answer (kept)",
                t.records, t.calls, t.no_data, t.added, t.unchanged, t.conflicting
            )?;
        }
        Ok(())
    }
}

/// Answer the missed calls of `opts.missed` from the split's world and add them to its cache
/// (`gtb_world::add_answers`: atomic, existing entries kept, the manifest updated), holding the
/// split folder's lock as a build does. Every file is read and checked before anything is
/// written, so bad input changes nothing.
pub fn fill(opts: &FillOptions) -> Result<FillReport> {
    let files = missed_files(&opts.missed)?;
    let mut calls = Vec::with_capacity(files.len());
    for (tool, path) in &files {
        if !gtb_world::TOOLS.contains(&tool.as_str()) {
            bail!(
                "{}: {tool:?} is not one of the release's tools ({})",
                path.display(),
                gtb_world::TOOLS.join(", ")
            );
        }
        calls.push((tool, read_missed(tool, path)?));
    }
    let mut report = FillReport::default();
    if calls.is_empty() {
        return Ok(report);
    }
    let manifest = opts.split.join("manifest.json");
    if !manifest.is_file() {
        bail!(
            "{}: not a published split (no manifest.json)",
            opts.split.display()
        );
    }
    let _lock = gtb_ops::lock::lock_folders(&[opts.split.as_path()], opts.wait)?;
    let world = crate::open_world(&opts.split)?;
    for (tool, records) in calls {
        let mut answers = std::collections::BTreeMap::new();
        for c in &records {
            answers
                .entry(gtb_world::cache_key(&c.params))
                .or_insert_with(|| crate::served_answer(world.as_ref(), tool, &c.params));
        }
        let answers: Vec<(String, String)> = answers.into_iter().collect();
        let done = gtb_world::add_answers(&opts.split, tool, &answers)?;
        let no_data = answers
            .iter()
            .filter(|(_, v)| gtb_world::is_no_data(v))
            .count();
        report.tools.insert(
            tool.clone(),
            ToolFill {
                records: records.len(),
                calls: answers.len(),
                added: done.added,
                unchanged: done.unchanged,
                conflicting: done.conflicting.len(),
                no_data,
            },
        );
    }
    Ok(report)
}
