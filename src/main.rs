//! gtb: a dataset builder for GroupTravelBench-style multi-user travel-planning tasks. The
//! command line (`cli`) is a thin layer over `gtb_ops`; docs/ARCHITECTURE.md has the map.

mod cli;

/// mimalloc: the pipeline allocates and frees millions of short strings (task fields), where
/// glibc's malloc took about a quarter of a build's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
