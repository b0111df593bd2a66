//! One file per subcommand (cargo's `commands/`): each runs its `gtb_ops` operation with the
//! validated settings and prints what it did. No pipeline logic lives here.

mod audit;
mod build;
mod clusters;
mod export;
mod import;
mod merge;
mod poi_table;
mod sample;
mod score;
mod solve;
mod tools;
mod transport;
mod validate;

use crate::settings::{Resolved, Settings};
use anyhow::Result;

pub fn run(s: Settings) -> Result<()> {
    let cfg = &s.cfg;
    match s.command {
        Resolved::Build(req) => build::run(&req),
        Resolved::Merge(opts) => merge::run(&opts),
        Resolved::Import(opts) => import::run(cfg, &opts),
        Resolved::Sample { out } => sample::run(cfg, &out),
        Resolved::Clusters(params) => clusters::run(cfg, params),
        Resolved::Transport { out } => transport::run(cfg, &out),
        Resolved::Validate { file } => validate::run(cfg, &file),
        Resolved::Audit(opts) => audit::run(&opts),
        Resolved::Export(opts) => export::run(&opts),
        Resolved::Solve(opts) => solve::run(cfg, &opts),
        Resolved::Score(opts, gate) => score::run(cfg, &opts, gate),
        Resolved::PoiTable { out, world } => poi_table::run(cfg, &out, world),
        Resolved::ToolsServe(opts) => tools::serve(&opts, cfg.run.threads),
        Resolved::ToolsFill(opts) => tools::fill(&opts),
    }
}
