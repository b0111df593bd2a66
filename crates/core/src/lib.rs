//! gtb-core: what every layer shares. The task model (`task`, the release's format), seeded
//! streams (`rng`), digests and atomic writes (`digest`), the Python-compatible JSON writer
//! (`pyjson`), JSON-lines helpers (`jsonl`), the difficulty formulas (`difficulty`), the
//! validated configuration (`config`) and URL redaction (`redact`). It depends on no other gtb
//! crate; docs/ARCHITECTURE.md has the map of the others.

/// A hash map with a fixed fast hasher (foldhash) for the pipeline's lookups by short strings and
/// ids, where std's SipHash cost several per cent of a build. No per-process seed; nothing
/// iterates these maps where the order could reach an output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
/// A set with the same hasher as `FastMap`.
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;

pub mod config;
pub mod difficulty;
pub mod digest;
pub mod direct;
pub mod jsonl;
pub mod prefs;
pub mod pyjson;
pub mod redact;
pub mod rng;
pub mod task;
pub mod text;
