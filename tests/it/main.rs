//! The one integration-test binary (uv's layout): every module is a former test file, named
//! after what it covers; `common` holds the shared helpers (`TestContext`: the binary, temp
//! projects, the shipped config). Tests that need a real engine (llama.cpp, Slurm, Python
//! `datasets`) are `#[ignore]`d here and run by their make targets, which prepare the engine
//! first and print "skipped: <why>" when they cannot (docs/TESTING.md).

// the same allocator as the gtb binary, so that in-process builds allocate alike (without its
// `init`: nothing here is timed, and `allocator` checks that gtb itself calls it)
use gtb_alloc as _;

mod allocator;
mod architecture;
mod audit;
mod build_pipeline;
mod cli_snapshots;
mod common;
mod deploy;
mod export;
mod export_datasets;
mod fuzz;
mod golden;
mod infrastructure;
mod inputs;
mod llm;
mod llm_e2e;
mod llm_member;
mod newcomer;
mod official;
mod poi;
mod raw_data;
mod robustness;
mod sample_distribution;
mod shards;
mod slurm_e2e;
mod store_build;
mod store_chinatravel;
mod store_missing;
mod store_osm;
mod store_release;
mod store_table;
mod tools_fill;
mod tools_serve;
mod transport_calibration;
mod validate_checks;
mod validate_inputs;
mod witness;
mod world;
