//! `gtb export`: a build's splits as Parquet, or as a Hugging Face dataset.

use anyhow::Result;
use gtb_ops::export::ExportOptions;

pub fn run(opts: &ExportOptions) -> Result<()> {
    let s = gtb_ops::export::export(opts)?;
    for f in &s.files {
        println!(
            "{}: {} rows -> {} ({} bytes)",
            f.split,
            f.rows,
            opts.out.join(&f.path).display(),
            f.bytes
        );
    }
    Ok(())
}
