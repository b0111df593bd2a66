//! `gtb export SPLIT_DIR --format parquet|hf --out DIR`: the splits of a build as Parquet files
//! (`DIR/<split>.parquet`), or in the Hugging Face layout (`DIR/data/<split>-NNNNN-of-NNNNN.parquet`
//! plus the dataset card `DIR/README.md`). See docs/EXPORT.md.
//!
//! Everything is written into a staging folder inside DIR first and moved into place at the
//! end; `DIR/export_manifest.json` (every file with its rows and sha256) is written last, so a
//! folder with it is a complete export, and an interrupted one never looks complete.

use anyhow::{Context, Result, bail};
use gtb_export::{SplitExport, card, source};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The default licence of the card. The shipped data is facts written from public knowledge,
/// modelled tables, census-sampled profiles and tables derived from MIT-licensed PyPI packages
/// (raw_data/SOURCES.md): CC BY 4.0 is the Hub's usual licence for such data and keeps the
/// attribution those sources ask for. Someone exporting their own data says theirs.
pub const DEFAULT_LICENSE: &str = "cc-by-4.0";

/// Rows per Parquet file in the `hf` layout (about 100 MB at 100,000 tasks).
pub const DEFAULT_ROWS_PER_FILE: u64 = 50_000;

/// Name of the file that lists a finished export.
pub const EXPORT_MANIFEST: &str = "export_manifest.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// one Parquet file per split: DIR/<split>.parquet
    Parquet,
    /// Hugging Face dataset layout: DIR/data/<split>-*.parquet and a dataset card DIR/README.md
    #[default]
    Hf,
}

#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// a build output folder, the `--splits` layout, or a JSONL file
    pub input: PathBuf,
    pub format: ExportFormat,
    pub out: PathBuf,
    /// the card's licence (an SPDX-like id as the Hub spells it, e.g. cc-by-4.0, mit)
    pub license: String,
    /// `hf` only: rows per Parquet file
    pub rows_per_file: u64,
}

impl ExportOptions {
    pub fn new(input: &Path, format: ExportFormat, out: &Path) -> ExportOptions {
        ExportOptions {
            input: input.to_path_buf(),
            format,
            out: out.to_path_buf(),
            license: DEFAULT_LICENSE.into(),
            rows_per_file: DEFAULT_ROWS_PER_FILE,
        }
    }
}

/// One written file, as listed in `export_manifest.json`.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedFile {
    /// path relative to the output folder
    pub path: String,
    pub split: String,
    pub rows: u64,
    pub bytes: u64,
    pub sha256: String,
}

/// What `export` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ExportSummary {
    pub format: ExportFormat,
    pub gtb_version: &'static str,
    pub splits: Vec<ExportedSplit>,
    pub files: Vec<ExportedFile>,
    /// each split's world (docs/HARNESS.md), copied as it is under `world/<split>/`
    pub world: Vec<ExportedFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExportedSplit {
    pub name: String,
    pub rows: u64,
    pub source_sha256: String,
    pub source_bytes: u64,
}

/// The Hub's licence ids are lower-case words joined by `-` and `.` (cc-by-4.0, apache-2.0).
fn check_license(license: &str) -> Result<()> {
    let ok = !license.is_empty()
        && license
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !ok {
        bail!(
            "--license {license:?}: expected a licence id as the Hugging Face Hub spells it (e.g. cc-by-4.0, mit, apache-2.0, other)"
        );
    }
    Ok(())
}

/// The Hub's split names: word characters, optionally dotted.
fn check_split_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .split('.')
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_'));
    if !ok {
        bail!(
            "split {name:?}: the Hugging Face layout needs split names of letters, digits and _ (rename the file)"
        );
    }
    Ok(())
}

/// DIR must be new, empty, or an earlier export (which this one replaces).
fn check_out(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(out)
        .with_context(|| format!("{}: cannot read the folder", out.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with(STAGING));
    if entries.next().is_none() || out.join(EXPORT_MANIFEST).is_file() {
        return Ok(());
    }
    bail!(
        "{}: the folder is not empty and holds no earlier export ({EXPORT_MANIFEST}); choose an empty or new folder",
        out.display()
    )
}

const STAGING: &str = ".gtb-export.tmp";

/// Remove staging folders left by exports that died (their process is gone).
fn remove_dead_staging(out: &Path) {
    let Ok(rd) = std::fs::read_dir(out) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix(STAGING) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            std::fs::remove_dir_all(e.path()).ok();
        }
    }
}

/// The published name of a split's k-th of n files.
fn file_name(format: ExportFormat, split: &str, k: usize, n: usize) -> String {
    match format {
        ExportFormat::Parquet => format!("{split}.parquet"),
        ExportFormat::Hf => format!("data/{split}-{k:05}-of-{n:05}.parquet"),
    }
}

/// Every file of a split under its published name (relative), with rows, size and sha256.
fn list_files(format: ExportFormat, s: &SplitExport) -> Result<Vec<(PathBuf, ExportedFile)>> {
    let n = s.files.len();
    s.files
        .iter()
        .enumerate()
        .map(|(k, (tmp, rows))| {
            let meta = std::fs::metadata(tmp).with_context(|| format!("{}", tmp.display()))?;
            Ok((
                tmp.clone(),
                ExportedFile {
                    path: file_name(format, &s.source.name, k, n),
                    split: s.source.name.clone(),
                    rows: *rows,
                    bytes: meta.len(),
                    sha256: gtb_core::digest::sha256_file(tmp)?,
                },
            ))
        })
        .collect()
}

/// A split's world (`sandbox_cache/`, `poi2category/`, docs/HARNESS.md), copied as it is
/// into `world/<split>/` (rows: the file's entries, as its manifest lists them). A split
/// without a world (a file that is no published split) has none.
fn world_files(s: &source::SplitSource, staging: &Path) -> Result<Vec<(PathBuf, ExportedFile)>> {
    let Some(manifest) = &s.manifest else {
        return Ok(Vec::new());
    };
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(manifest).with_context(|| format!("reading {}", manifest.display()))?,
    )
    .with_context(|| format!("reading {}", manifest.display()))?;
    let Some(files) = m["world"]["files"].as_object() else {
        return Ok(Vec::new());
    };
    let dir = s.jsonl.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (rel, fig) in files {
        let from = dir.join(rel);
        let sha = gtb_core::digest::sha256_file(&from)?;
        if fig["sha256"].as_str() != Some(sha.as_str()) {
            bail!(
                "{}: its sha256 is not the one {} lists (field world.files)",
                from.display(),
                manifest.display()
            );
        }
        let tmp = staging.join("world").join(&s.name).join(rel);
        if let Some(d) = tmp.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        let bytes = std::fs::copy(&from, &tmp)
            .with_context(|| format!("copying {} to {}", from.display(), tmp.display()))?;
        out.push((
            tmp,
            ExportedFile {
                path: format!("world/{}/{rel}", s.name),
                split: s.name.clone(),
                rows: fig["entries"].as_u64().unwrap_or(0),
                bytes,
                sha256: sha,
            },
        ));
    }
    Ok(out)
}

/// Move the staged files into `out`: the previous export's listing goes first (so a crash in
/// between leaves no complete-looking export), then its files, then the new files, the card,
/// and the new listing last.
fn publish(
    out: &Path,
    staged: &[&(PathBuf, ExportedFile)],
    card: Option<&str>,
    summary: &ExportSummary,
) -> Result<()> {
    let listing = out.join(EXPORT_MANIFEST);
    if let Ok(bytes) = std::fs::read(&listing) {
        std::fs::remove_file(&listing)
            .with_context(|| format!("removing {}", listing.display()))?;
        let old: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let listed = |k: &str| old[k].as_array().cloned().unwrap_or_default();
        let old_files = [listed("files"), listed("world")].concat();
        for f in old_files.iter().filter_map(|f| f["path"].as_str()) {
            std::fs::remove_file(out.join(f)).ok();
        }
        std::fs::remove_file(out.join("README.md")).ok();
    }
    for (tmp, f) in staged {
        let to = out.join(&f.path);
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        std::fs::rename(tmp, &to)
            .with_context(|| format!("moving {} to {}", tmp.display(), to.display()))?;
    }
    if let Some(card) = card {
        gtb_core::digest::write_atomic(&out.join("README.md"), card.as_bytes())?;
    }
    gtb_core::digest::write_atomic(&listing, &serde_json::to_vec_pretty(summary)?)
}

/// Run the export.
pub fn export(opts: &ExportOptions) -> Result<ExportSummary> {
    check_license(&opts.license)?;
    let sources = source::discover(&opts.input)?;
    if opts.format == ExportFormat::Hf {
        sources.iter().try_for_each(|s| check_split_name(&s.name))?;
    }
    check_out(&opts.out)?;
    remove_dead_staging(&opts.out);
    let staging = opts.out.join(format!("{STAGING}{}", std::process::id()));
    let result = export_into(opts, &sources, &staging);
    std::fs::remove_dir_all(&staging).ok();
    result
}

fn export_into(
    opts: &ExportOptions,
    sources: &[source::SplitSource],
    staging: &Path,
) -> Result<ExportSummary> {
    let rows_per_file = match opts.format {
        ExportFormat::Parquet => u64::MAX,
        ExportFormat::Hf => opts.rows_per_file,
    };
    let splits: Vec<SplitExport> = sources
        .iter()
        .map(|s| gtb_export::export_split(s, staging, rows_per_file))
        .collect::<Result<_>>()?;
    let mut staged = Vec::new();
    for s in &splits {
        staged.extend(list_files(opts.format, s)?);
    }
    let mut world = Vec::new();
    for s in sources {
        world.extend(world_files(s, staging)?);
    }
    let summary = ExportSummary {
        format: opts.format,
        gtb_version: env!("CARGO_PKG_VERSION"),
        splits: splits
            .iter()
            .map(|s| ExportedSplit {
                name: s.source.name.clone(),
                rows: s.rows,
                source_sha256: s.source_sha256.clone(),
                source_bytes: s.source_bytes,
            })
            .collect(),
        files: staged.iter().map(|(_, f)| f.clone()).collect(),
        world: world.iter().map(|(_, f)| f.clone()).collect(),
    };
    let card = (opts.format == ExportFormat::Hf).then(|| {
        let cards: Vec<card::SplitCard> = splits
            .iter()
            .map(|s| card::SplitCard {
                name: &s.source.name,
                rows: s.rows,
                files: staged
                    .iter()
                    .filter(|(_, f)| f.split == s.source.name)
                    .map(|(_, f)| f.path.clone())
                    .collect(),
                source_sha256: &s.source_sha256,
                source_bytes: s.source_bytes,
                manifest: s.manifest.as_ref(),
                audit: &s.audit,
            })
            .collect();
        card::render(&opts.license, &cards)
    });
    let moved: Vec<&(PathBuf, ExportedFile)> = staged.iter().chain(&world).collect();
    publish(&opts.out, &moved, card.as_deref(), &summary)?;
    Ok(summary)
}
