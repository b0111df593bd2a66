//! `gtb validate`: every validator on any task file; a non-zero exit on problems.

use anyhow::{Result, bail};
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, file: &Path) -> Result<()> {
    let (n, findings) = gtb_ops::validate_file(cfg, file)?;
    for f in &findings {
        println!("{f}");
    }
    let name = gtb_audit::load::input_name(file);
    if !findings.is_empty() {
        bail!("{name}: {} problem(s) in {n} task(s)", findings.len());
    }
    println!("{name}: {n} tasks, every check passed");
    Ok(())
}
