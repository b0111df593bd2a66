//! Issue 22: the workspace is cut along layers, and the compiler is to enforce what the docs
//! promise. This checks every crate's manifest against the layer table of
//! docs/ARCHITECTURE.md: a crate depends (normally) only on crates of lower layers.

use crate::common::root;
use std::collections::BTreeMap;

/// docs/ARCHITECTURE.md, "Crates, by layer" (dev-only crates sit outside the layers).
const LAYERS: [(&str, u32); 25] = [
    ("gtb-alloc", 0),
    ("gtb-core", 0),
    ("gtb-plan", 0),
    ("gtb-parquet", 0),
    ("gtb-resources", 1),
    ("gtb-pipeline", 1),
    ("gtb-audit", 1),
    ("gtb-clusters", 2),
    ("gtb-network", 2),
    ("gtb-sample", 2),
    ("gtb-generate", 2),
    ("gtb-validate", 2),
    ("gtb-score", 2),
    ("gtb-store", 3),
    ("gtb-llm", 3),
    ("gtb-solve", 3),
    ("gtb-export", 3),
    ("gtb-world", 3),
    ("gtb-ops", 4),
    ("gtb-build", 5),
    ("gtb-tools", 5),
    ("gtb", 6),
    ("gtb-fake-llm", 7),
    ("gtb-pbf-write", 7),
    ("gtb-bench", 7),
];

/// Every package of the workspace: name -> its gtb dependencies (normal ones only).
fn packages() -> BTreeMap<String, Vec<String>> {
    let mut manifests = vec![root().join("Cargo.toml")];
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        manifests.push(e.unwrap().path().join("Cargo.toml"));
    }
    let mut out = BTreeMap::new();
    for m in manifests {
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        let name = v["package"]["name"].as_str().unwrap().to_string();
        let deps = v
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| t.keys().filter(|k| k.starts_with("gtb")).cloned().collect())
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

#[test]
fn issue22_no_crate_depends_on_a_crate_of_its_layer_or_above() {
    let layer: BTreeMap<&str, u32> = LAYERS.into_iter().collect();
    let pkgs = packages();
    let mut problems = Vec::new();
    for (name, deps) in &pkgs {
        let Some(&own) = layer.get(name.as_str()) else {
            problems.push(format!("{name} is in no layer of docs/ARCHITECTURE.md"));
            continue;
        };
        for d in deps {
            match layer.get(d.as_str()) {
                Some(&l) if l < own || own == 7 => {}
                Some(&l) => {
                    problems.push(format!("{name} (layer {own}) depends on {d} (layer {l})"))
                }
                None => problems.push(format!("{name} depends on {d}, which is in no layer")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        pkgs.len(),
        LAYERS.len(),
        "a layer names a crate that does not exist"
    );
}
