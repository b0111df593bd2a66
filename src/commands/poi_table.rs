//! `gtb poi-table`: the table plans are scored against, in the release's layout.

use anyhow::Result;
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, out: &Path, world: bool) -> Result<()> {
    let (cities, pois) = gtb_ops::score::write_poi_table(cfg, out, world)?;
    println!("{pois} POIs of {cities} cities -> {}", out.display());
    Ok(())
}
