//! gtb: a dataset builder for GroupTravelBench-style multi-user travel-planning tasks.
//!
//! The CLI (`cli`) is a thin layer over `ops`; every stage can run from tests without it.
//! See docs/ARCHITECTURE.md for the map.

/// mimalloc for every binary and test that links gtb: the pipeline allocates and frees millions
/// of short strings (task fields), where glibc's malloc took about a quarter of a build's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A hash map with a fixed fast hasher (foldhash) for the pipeline's lookups by short strings and
/// ids, where std's SipHash cost several per cent of a build. No per-process seed; nothing
/// iterates these maps where the order could reach an output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

pub mod audit;
pub mod cli;
pub mod clusters;
pub mod config;
pub mod difficulty;
pub mod digest;
pub mod export;
pub mod generate;
pub mod geodesy;
pub mod network;
pub mod ops;
pub mod pipeline;
pub mod plan;
pub mod pyjson;
pub mod resources;
pub mod rng;
pub mod sample;
pub mod score;
pub mod solve;
pub mod store;
pub mod task;
pub mod validate;

/// Version of the code that shapes outputs; part of every stage fingerprint.
pub const CODE_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+src.",
    env!("GTB_SOURCE_DIGEST")
);
