#![allow(dead_code)]
use gtb_core::config::Config;
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped config, with outputs redirected into `dir`.
pub fn config_in(dir: &Path) -> Config {
    let mut cfg = Config::from_file(&root().join("gtb.toml")).expect("gtb.toml");
    cfg.run.out = dir.join("out");
    cfg.run.work_dir = dir.join("out/.work");
    cfg.run.reports = dir.join("reports");
    cfg
}

/// The shared reference folder: `$GTB_SHARED`, else `../shared` next to the repository.
/// Tests that need it carry `#[cfg_attr(not(has_reference_data), ignore = "...")]` (build.rs
/// sets the cfg), so that they show as ignored when it is absent; this check stays for a
/// folder removed after the build.
pub fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("GTB_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    if p.join("reference_data").exists() {
        Some(p)
    } else {
        eprintln!(
            "NOTE: ../shared/reference_data is absent: the cross-checks against reference data are skipped"
        );
        None
    }
}

pub fn build(cfg: &Config, threads: usize) -> gtb_build::BuildSummary {
    let req = gtb_build::BuildRequest::new(cfg.clone());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| gtb_build::build(&req))
        .expect("build")
}

/// Every file under a folder.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.push(p)
            }
        }
    }
    out
}

/// Copy a folder tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A private copy of the shipped data under `dir` (raw_data/, archetypes/, city_clusters/) and
/// the shipped config pointing at it, outputs inside `dir`.
pub fn data_copy(dir: &Path) -> Config {
    for d in ["raw_data", "archetypes", "city_clusters"] {
        copy_dir(&root().join(d), &dir.join(d));
    }
    let mut cfg = config_in(dir);
    cfg.paths = gtb_core::config::Paths::default();
    cfg.paths.rebase(dir);
    cfg
}

/// The path an engine script exported for an engine test (`scripts/engines/*.sh prepare`),
/// e.g. `GTB_LLAMA_SERVER`. Engine tests are `#[ignore]`d and run by their make target; run by
/// hand without it, they fail and say which target prepares the engine.
pub fn engine(var: &str, target: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            panic!("{var} is not set: run this test through `{target}`, which prepares the engine")
        }
    }
}
