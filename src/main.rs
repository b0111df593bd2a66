//! gtb: a dataset builder for GroupTravelBench-style multi-user travel-planning tasks.
//!
//! `args` is the raw command line, `settings` resolves it once with the config file into a
//! validated `Settings`, and `commands` has one file per subcommand over `gtb_ops`.
//! docs/ARCHITECTURE.md has the map of the crates.

mod args;
mod commands;
mod settings;

use clap::Parser;
use std::process::ExitCode;

// the global allocator (mimalloc) is declared in an optimised crate, gtb_alloc
fn main() -> ExitCode {
    gtb_alloc::init();
    let cli = args::Cli::parse();
    let run = settings::Settings::resolve(cli).and_then(|s| {
        if s.cfg.run.threads > 0 {
            rayon::ThreadPoolBuilder::new()
                .num_threads(s.cfg.run.threads)
                .build_global()
                .ok();
        }
        commands::run(s)
    });
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
