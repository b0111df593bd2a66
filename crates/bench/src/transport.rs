//! `gtb transport`: the time to regenerate raw_data/transport.csv from the network.

use crate::cfg;
use std::time::Instant;

/// `gtb transport`: load the network, model every pair and mode, write the CSV (best of 3).
pub fn transport_model(dir: &std::path::Path) -> anyhow::Result<()> {
    let c = cfg(650, dir)?;
    let out = dir.join("transport.csv");
    let mut best = f64::INFINITY;
    let mut rows = 0;
    for _ in 0..3 {
        let t = Instant::now();
        rows = gtb_ops::transport(&c, &out)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    anyhow::ensure!(
        std::fs::read(&out)? == std::fs::read(&c.paths.transport)?,
        "the regenerated transport.csv differs from the shipped one"
    );
    println!("regenerate transport.csv: {best:.3}s ({rows} rows, same bytes as shipped)");
    Ok(())
}
