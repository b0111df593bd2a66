//! `gtb solve`: a witness plan per task, or why there is none (a proof of infeasibility, or a
//! search that ran out), as a plans file or as the release's inference records.

use anyhow::Result;
use gtb_core::config::Config;
use gtb_ops::solve::SolveOptions;

pub fn run(cfg: &Config, opts: &SolveOptions) -> Result<()> {
    let s = gtb_ops::solve::solve_file(cfg, opts)?;
    for (id, verdict, why) in &s.unsolved {
        eprintln!("{id}: no plan ({verdict}): {why}");
    }
    print!("{}", s.figures.to_markdown());
    println!(
        "{} of {} tasks have a witness plan ({} proven infeasible, {} search exhausted) -> {}",
        s.solved,
        s.tasks,
        s.infeasible,
        s.exhausted,
        opts.out.display()
    );
    Ok(())
}
