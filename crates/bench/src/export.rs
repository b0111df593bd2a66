//! `gtb export --format hf` of a built split, in a child process of this binary so that its
//! peak memory is the export's alone: wall time, peak RSS, Parquet size against JSONL.

use crate::peak_rss_mib;
use std::time::Instant;

/// The hidden argument that makes this binary run one export and report on it.
pub const EXPORT_CHILD: &str = "--export-child";

/// Run in a process of its own, so that its peak memory is the export's alone.
pub fn export_child(split_dir: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    use gtb_ops::export::{ExportFormat, ExportOptions, export};
    let t = Instant::now();
    let s = export(&ExportOptions::new(split_dir, ExportFormat::Hf, out))?;
    let parquet: u64 = s.files.iter().map(|f| f.bytes).sum();
    let jsonl: u64 = s.splits.iter().map(|x| x.source_bytes).sum();
    println!(
        "{:.3} {} {parquet} {jsonl} {:.0}",
        t.elapsed().as_secs_f64(),
        s.files.len(),
        peak_rss_mib()
    );
    Ok(())
}

/// `gtb export --format hf` of a built split: wall time, peak RSS, Parquet against JSONL.
pub fn export_split(
    split_dir: &std::path::Path,
    out: &std::path::Path,
    n: usize,
) -> anyhow::Result<()> {
    let o = std::process::Command::new(std::env::current_exe()?)
        .arg(EXPORT_CHILD)
        .arg(split_dir)
        .arg(out)
        .output()?;
    anyhow::ensure!(
        o.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let f: Vec<f64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    anyhow::ensure!(f.len() == 5, "unexpected child output: {text}");
    let mb = |b: f64| b / 1e6;
    println!(
        "export hf n={n}: {:.3}s wall, {} file(s), Parquet {:.1} MB vs JSONL {:.1} MB ({:.1} %), peak RSS {:.0} MiB",
        f[0],
        f[1],
        mb(f[2]),
        mb(f[3]),
        100.0 * f[2] / f[3],
        f[4]
    );
    std::fs::remove_dir_all(out).ok();
    Ok(())
}
