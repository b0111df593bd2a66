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

/// mimalloc's `mi_option_purge_delay` (`mi_option_e` in mimalloc.h, v3): how many ms after a
/// page is freed mimalloc returns it to the OS (-1: never). [`purge_delay_is_mimallocs`] checks
/// the number against the option's default.
const PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_collect(force: bool);
}

/// While it lives, memory freed stays with the process for the next allocations instead of
/// going back to the OS; when the last one held is dropped, mimalloc's purging is as before
/// and what is free goes back.
///
/// The witness search frees and takes pages at a high rate, and each page mimalloc returned
/// came back as a fresh fault, zeroed by the kernel (on a virtual machine, first touched on the
/// host too). A 100,000-task default build: 185.3 s and 785 MiB at peak; with purging off for
/// the whole process 173.5 s (system time 5.3 s against 14.0 s) but 1,047 MiB, the world
/// written on top of all the search had freed; held for the validate stage alone
/// (`gtb_build`), 177.6 s and 880 MiB. Without witnesses, 6.05–6.23 s against 5.74–5.98 s
/// (RSS +10–20 MiB). A user's `MIMALLOC_PURGE_DELAY` wins: then this does nothing.
pub struct KeepFreedPages {
    held: bool,
}

/// How many [`KeepFreedPages`] live, and the purge delay before the first.
static HOLDS: std::sync::Mutex<(usize, std::ffi::c_long)> = std::sync::Mutex::new((0, 0));

/// See [`KeepFreedPages`].
pub fn keep_freed_pages() -> KeepFreedPages {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return KeepFreedPages { held: false };
    }
    let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
    if holds.0 == 0 {
        // SAFETY: mimalloc's option calls take and return plain integers
        holds.1 = unsafe { mi_option_get(PURGE_DELAY) };
        unsafe { mi_option_set(PURGE_DELAY, -1) };
    }
    holds.0 += 1;
    KeepFreedPages { held: true }
}

impl Drop for KeepFreedPages {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
        holds.0 -= 1;
        if holds.0 == 0 {
            // SAFETY: as above; mi_collect only frees what no allocation holds
            unsafe {
                mi_option_set(PURGE_DELAY, holds.1);
                mi_collect(true);
            }
        }
    }
}

/// Whether [`PURGE_DELAY`] names mimalloc's purge delay: its default (1,000 ms in mimalloc
/// v3's `options.c`) unless the user set it, -1 while held (twice over), the default again
/// after (a test of gtb's runs this).
pub fn purge_delay_is_mimallocs() -> bool {
    // SAFETY: as above
    let now = || unsafe { mi_option_get(PURGE_DELAY) };
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return true;
    }
    let default = now() == 1000;
    let held = {
        let first = keep_freed_pages();
        let second = keep_freed_pages();
        drop(first);
        let still = now() == -1;
        drop(second);
        still
    };
    default && held && now() == 1000
}

#[cfg(test)]
mod tests {
    /// Issue 27: the option number gtb sets is mimalloc's purge delay (its default, -1 while
    /// held, the default again after), so that a mimalloc whose options moved fails here.
    #[test]
    fn issue27_the_purge_delay_gtb_holds_is_mimallocs() {
        assert!(super::purge_delay_is_mimallocs());
    }
}
