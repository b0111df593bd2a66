//! `gtb audit FILE`: statistics of a task file, optionally compared with another file or the
//! paper, rendered as Markdown, JSON or HTML (see `gtb_audit`).

use anyhow::{Context, Result};
use gtb_audit::{Against, Audit, Format};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    pub file: PathBuf,
    pub against: Option<Against>,
    pub format: Format,
    /// write `audit.<ext>` into this folder
    pub out: Option<PathBuf>,
    /// skip (and count) malformed lines instead of failing
    pub skip_bad: bool,
}

/// What `audit` produced.
#[derive(Debug, Clone)]
pub struct AuditOutput {
    pub audit: Audit,
    /// the rendered document
    pub text: String,
    /// where it was written, with `out`
    pub written: Option<PathBuf>,
}

pub fn audit(opts: &AuditOptions) -> Result<AuditOutput> {
    let audit = Audit::run(&opts.file, opts.against.as_ref(), opts.skip_bad)?;
    let text = opts.format.render(&audit);
    let written = match &opts.out {
        Some(dir) => Some(write(dir, opts.format, &text)?),
        None => None,
    };
    Ok(AuditOutput {
        audit,
        text,
        written,
    })
}

fn write(dir: &Path, format: Format, text: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join(format.file_name());
    gtb_core::digest::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}
