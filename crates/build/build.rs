//! `GTB_SOURCE_DIGEST`: a digest of the source of every crate that shapes outputs (all of
//! `crates/*/src` but the dev-only ones, and the binary's `src/`), part of every stage
//! fingerprint through `CODE_VERSION`, so that a stale artifact is never reused after an edit.
//! It lives here, in the crate that fingerprints stages (gtb-build), so that an edit recompiles only the
//! edited crate, its dependants and this one; a digest in gtb-core would rebuild everything.

use std::path::{Path, PathBuf};

/// Crates that never shape an output (tests and benchmarks only).
const DEV_ONLY: [&str; 3] = ["bench", "fake-llm", "pbf-write"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let repo = Path::new(&manifest).join("../..");
    let mut dirs = vec![repo.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(repo.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| !DEV_ONLY.iter().any(|d| p.ends_with(d)))
        .collect();
    crates.sort();
    dirs.extend(crates.into_iter().map(|c| c.join("src")));
    let mut files = Vec::new();
    for d in &dirs {
        walk(d, &mut files);
        println!("cargo:rerun-if-changed={}", d.display());
    }
    files.sort();
    // FNV-1a over paths (relative to the repository) and contents: no build dependency needed,
    // stable across platforms and checkouts
    let mut h: u64 = 0xcbf29ce484222325;
    for f in &files {
        let rel = f
            .strip_prefix(&repo)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        for b in rel.bytes().chain(std::fs::read(f).unwrap_or_default()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    println!("cargo:rustc-env=GTB_SOURCE_DIGEST={h:016x}");
}
