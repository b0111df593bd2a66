//! `gtb build`: prepare -> sample -> generate -> validate -> write, for one split or several.

use anyhow::Result;
use gtb_build::BuildRequest;
use gtb_build::SplitSummary;

pub fn run(req: &BuildRequest) -> Result<()> {
    let s = gtb_build::build(req)?;
    print_splits(&s.splits);
    Ok(())
}

/// One line per split (or shard slice) written; `gtb merge` prints the same.
pub(super) fn print_splits(splits: &[SplitSummary]) {
    for sp in splits {
        let what = match sp.shard {
            Some(sh) => format!("{} shard {sh}", sp.name),
            None => sp.name.clone(),
        };
        println!(
            "{what}: {} tasks -> {} (sha256 {}, {} dropped and replaced)",
            sp.tasks,
            sp.path.display(),
            sp.sha256,
            sp.dropped
        );
    }
}
