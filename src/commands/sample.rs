//! `gtb sample`: task skeletons only.

use anyhow::Result;
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, out: &Path) -> Result<()> {
    let skeletons = gtb_build::sample(cfg)?;
    gtb_core::digest::write_atomic(out, &gtb_core::jsonl::to_jsonl(&skeletons))?;
    println!("{} skeletons -> {}", skeletons.len(), out.display());
    Ok(())
}
