//! `gtb solve`: a witness plan per task, or the constraint that blocks one.

use anyhow::Result;
use gtb_core::config::Config;
use std::path::Path;

pub fn run(cfg: &Config, tasks: &Path, out: &Path) -> Result<()> {
    let s = gtb_ops::solve::solve_file(cfg, tasks, out)?;
    for (id, why) in &s.unsolved {
        eprintln!("{id}: no plan: {why}");
    }
    print!("{}", s.figures.to_markdown());
    println!(
        "{} of {} tasks have a witness plan -> {}",
        s.solved,
        s.tasks,
        out.display()
    );
    Ok(())
}
