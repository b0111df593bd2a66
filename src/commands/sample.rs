//! `gtb sample`: task skeletons only.

use anyhow::Result;
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, out: &Path) -> Result<()> {
    let skeletons = gtb_build::sample(cfg)?;
    gtb_core::jsonl::write_jsonl(out, &skeletons)?;
    println!("{} skeletons -> {}", skeletons.len(), out.display());
    Ok(())
}
