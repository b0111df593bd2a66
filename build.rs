//! Tells the tests whether the shared reference data is present (`cfg(has_reference_data)`,
//! `cfg(has_official_examples)`): the cross-checks are compiled as ignored without it, so
//! `cargo test` lists them as ignored instead of passing them silently. The code digest of the
//! stage fingerprints is `crates/ops/build.rs`; the embedded data is `crates/resources/build.rs`.

use std::path::Path;

/// `../shared` next to the repository (CI's layout), or `$GTB_SHARED`.
fn shared_data_cfgs() {
    println!("cargo:rerun-if-env-changed=GTB_SHARED");
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let shared = std::env::var_os("GTB_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(&root).join("../shared"));
    for (cfg, rel) in [
        ("has_reference_data", "reference_data"),
        ("has_official_examples", "spec/official_examples.jsonl"),
    ] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
        let p = shared.join(rel);
        // watched only when present: a missing watched path would rerun this script (and
        // recompile the crate) on every build; after adding ../shared, `touch build.rs`
        if p.exists() {
            println!("cargo:rustc-cfg={cfg}");
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}

fn main() {
    shared_data_cfgs();
}
