//! `gtb score`: a plans file scored as the release does; a non-zero exit on an invalid plan.

use crate::settings::ScoreGate;
use anyhow::{Result, bail};
use gtb_core::config::Config;
use gtb_ops::solve::ScoreOptions;

pub fn run(cfg: &Config, opts: &ScoreOptions, gate: ScoreGate) -> Result<()> {
    let (r, text) = gtb_ops::solve::score_file(cfg, opts)?;
    match &opts.out {
        Some(d) => eprintln!("score -> {}", d.display()),
        None => print!("{text}"),
    }
    if r.invalid > 0 {
        bail!("{} of {} plans are invalid", r.invalid, r.plans);
    }
    let missing = r.without_plan + r.missing;
    if gate.witness && (r.breaking > 0 || missing > 0) {
        bail!(
            "{} plans break the witness contract; {missing} tasks have no plan",
            r.breaking
        );
    }
    Ok(())
}
