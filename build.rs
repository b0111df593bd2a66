//! Tells the tests whether the shared reference data is present (`cfg(has_reference_data)`,
//! `cfg(has_official_examples)`: the cross-checks are compiled as ignored without it, so
//! `cargo test` lists them as ignored instead of passing them silently). Embeds a digest of
//! the source tree, so that every stage fingerprint changes when the code
//! that shapes outputs changes (a stale artifact is never reused after an edit), and the default
//! data (raw_data/, archetypes/, city_clusters/) so that gtb builds anywhere, not only from its
//! repository root.

use std::path::Path;

fn walk(dir: &Path, exts: &[&str], out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, exts, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
}

/// `$OUT_DIR/embedded_data.rs`: (path relative to the repository, bytes) of every data file
/// the default configuration reads, sorted by path.
fn embed_data() {
    let mut files = Vec::new();
    for dir in ["raw_data", "archetypes", "city_clusters"] {
        walk(Path::new(dir), &["csv", "toml"], &mut files);
        println!("cargo:rerun-if-changed={dir}");
    }
    files.sort();
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let mut code = String::from("&[\n");
    for f in &files {
        let rel = f.to_string_lossy().replace('\\', "/");
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            format!("{root}/{rel}")
        ));
    }
    code.push_str("]\n");
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_data.rs");
    std::fs::write(out, code).expect("write embedded_data.rs");
}

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
    let mut files = Vec::new();
    walk(Path::new("src"), &["rs"], &mut files);
    files.sort();
    // FNV-1a over paths and contents: no build dependency needed, stable across platforms
    let mut h: u64 = 0xcbf29ce484222325;
    for f in &files {
        for b in f
            .to_string_lossy()
            .bytes()
            .chain(std::fs::read(f).unwrap_or_default())
        {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rustc-env=GTB_SOURCE_DIGEST={h:016x}");
    embed_data();
}
