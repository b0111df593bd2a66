//! The global allocator of gtb's binaries: mimalloc. A build allocates and frees millions of
//! short strings (task fields), on which glibc's malloc spent about a quarter of the time.
//!
//! It is declared here rather than in a binary's `main.rs` because the allocator's glue
//! (`__rg_alloc` and the inlined `GlobalAlloc` methods) is compiled in the crate that declares
//! it, and the root package `gtb` is compiled at opt-level 0 (Cargo.toml, the edit loop):
//! declared there, every allocation went through unoptimised glue, some 6 % of a build's CPU.
//! A binary links it with `use gtb_alloc as _;`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
