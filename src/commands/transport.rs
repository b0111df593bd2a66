//! `gtb transport`: transport.csv modelled from the rail network, airports and roads.

use anyhow::Result;
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, out: &Path) -> Result<()> {
    let n = gtb_ops::transport(cfg, out)?;
    println!("{n} rows -> {}", out.display());
    Ok(())
}
