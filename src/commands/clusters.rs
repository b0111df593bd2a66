//! `gtb clusters`: the destination clusters from the city coordinates.

use anyhow::Result;
use gtb_clusters::ClusterParams;
use gtb_core::config::Config;

pub fn run(cfg: &Config, params: ClusterParams) -> Result<()> {
    let target = params.target;
    let (n, _) = gtb_ops::clusters(cfg, params)?;
    if n < target {
        eprintln!(
            "note: {n} clusters, fewer than --target {target}: every multi-city candidate is used"
        );
    }
    println!("{n} clusters -> {}", cfg.paths.clusters.display());
    Ok(())
}
