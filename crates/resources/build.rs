//! Embeds the default data (raw_data/, archetypes/, city_clusters/ at the repository root) so
//! that gtb builds anywhere, not only from its repository root: `$OUT_DIR/embedded_data.rs`
//! holds (path relative to the repository, bytes) of every data file the default configuration
//! reads, sorted by path.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
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

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let repo = Path::new(&manifest).join("../..");
    let mut files = Vec::new();
    for dir in ["raw_data", "archetypes", "city_clusters"] {
        walk(&repo.join(dir), &["csv", "toml"], &mut files);
        println!("cargo:rerun-if-changed={}", repo.join(dir).display());
    }
    let mut entries: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&repo).expect("under the repository");
            (rel.to_string_lossy().replace('\\', "/"), f)
        })
        .collect();
    entries.sort();
    let mut code = String::from("&[\n");
    for (rel, f) in &entries {
        let abs = std::fs::canonicalize(f).expect("a data file that was just listed");
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    code.push_str("]\n");
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_data.rs");
    std::fs::write(out, code).expect("write embedded_data.rs");
}
