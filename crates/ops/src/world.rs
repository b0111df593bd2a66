//! A published split's world (`gtb-world`, docs/HARNESS.md): written when a split is published
//! (build and merge alike), and reopened over the resources the split was built from.

use anyhow::{Context, Result, bail};
use gtb_core::config::Config;
use gtb_world::World;
use std::path::Path;

/// Write the world of a published task file (and its `plans.jsonl` when there is one) beside
/// it; returns the manifest's `world` section.
pub fn publish_world(tasks: &Path, res: &gtb_resources::Resources) -> Result<serde_json::Value> {
    let dir = tasks.parent().unwrap_or(Path::new("."));
    let plans = crate::plans::plans_path(tasks);
    let written = gtb_world::write::write_world(dir, tasks, &plans, res)?;
    Ok(written.manifest_section())
}

/// The world of a published split folder, over the resources its manifest names (the config
/// it was built with: the snapshot, `[paths]`, or a POI store). Fails, naming the file, when
/// the split has no manifest or no world, or when the resources' input digests are no longer
/// the manifest's (the data changed since the build: the answers would not be the split's).
pub fn open(split_dir: &Path) -> Result<World<'static>> {
    let manifest_path = split_dir.join("manifest.json");
    let m = gtb_world::write::read_manifest(&manifest_path)?;
    let cfg: Config = serde_json::from_value(m["config"].clone())
        .with_context(|| format!("{}: field config", manifest_path.display()))?;
    let res = super::load_resources(&cfg)?;
    let recorded: Vec<(String, String)> = m["inputs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    let s = |k: &str| x[k].as_str().unwrap_or_default().to_string();
                    (s("file"), s("blake3"))
                })
                .collect()
        })
        .unwrap_or_default();
    if recorded != res.input_digests {
        bail!(
            "{}: the resources it was built from changed since (field inputs: their blake3 digests differ); rebuild the split",
            manifest_path.display()
        );
    }
    World::open(split_dir, res)
}
