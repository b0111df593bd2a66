//! The global allocator of gtb's binaries: mimalloc. A build allocates and frees millions of
//! short strings (task fields), on which glibc's malloc spent about a quarter of the time.
//!
//! It is declared here rather than in a binary's `main.rs` because the allocator's glue
//! (`__rg_alloc` and the inlined `GlobalAlloc` methods) is compiled in the crate that declares
//! it, and the root package `gtb` is compiled at opt-level 0 (Cargo.toml, the edit loop):
//! declared there, every allocation went through unoptimised glue, some 6 % of a build's CPU.
//! A binary links it with `use gtb_alloc as _;` and calls [`init`] first thing in `main`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process (Linux), unless the user chose through
/// mimalloc's own `MIMALLOC_ALLOW_THP`.
///
/// mimalloc asks the kernel for huge pages on its arenas (`madvise(MADV_HUGEPAGE)`), and the
/// witness search frees and takes pages at a high rate: with huge pages, each fresh page was a
/// 2 MiB fault zeroed by the kernel (`clear_page_erms` under `do_huge_pmd_anonymous_page`).
/// Witness builds on 2 threads, with and without them: 3,000 tasks, 3.6–4.0 s of system time
/// against 0.65–0.70 s, the generate stage 8.7–9.5 s against 7.0–8.2 s; 20,000 tasks, 76–82 s
/// against 72–76 s, 15–16 s of system time against 6–7 s.
///
/// The kernel reads the flag at each fault, so the arena mimalloc reserved before `main` is
/// covered too. Child processes inherit it (`prctl(2)`): gtb starts none; gtb-bench starts
/// gtb and its fake LLM server.
pub fn init() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}
