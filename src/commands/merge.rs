//! `gtb merge`: the slices of `gtb build --shard I/N` runs joined into the unsharded split.

use anyhow::Result;
use gtb_ops::merge::MergeOptions;

pub fn run(opts: &MergeOptions) -> Result<()> {
    let splits = gtb_ops::merge::merge(opts)?;
    super::build::print_splits(&splits);
    Ok(())
}
