//! The operations behind the commands besides `gtb build` (which is `gtb_build`, above this
//! crate): audit, export, merge, solve and score, import, clusters, transport, validate, and
//! publishing a split (`publish`), which builds and merges share. Tests call them directly.

pub mod audit;
pub mod export;
pub mod lock;
pub mod merge;
pub mod official;
pub mod plans;
pub mod publish;
pub mod score;
pub mod sinks;
pub mod solve;

use anyhow::Result;
use gtb_core::config::Config;
use gtb_resources::Resources;

/// Load the resources named by a config, with the config's error messages.
pub fn load_resources(cfg: &Config) -> Result<Resources> {
    gtb_store::overlay::load_with_store(&cfg.paths, &cfg.store.clone().unwrap_or_default())
}

/// `gtb import`: read a source into a POI store. The store folder is locked for the run.
pub fn import(
    cfg: &Config,
    opts: &gtb_store::import::ImportOptions,
) -> Result<gtb_store::StoreSummary> {
    let _lock = lock::lock_folders(&[opts.out.as_path()], false)?;
    lock::remove_stale_temps(&[opts.out.as_path()])?;
    let res = load_resources(cfg)?;
    gtb_store::import::run(opts, &res.cities)
}

/// `gtb clusters`: build the cluster table from the coordinates and write it.
/// A target the table cannot meet from above is an error, and nothing is written (the table
/// is tracked in the repository); one it cannot reach from below gives fewer clusters.
pub fn clusters(cfg: &Config, params: gtb_clusters::ClusterParams) -> Result<(usize, String)> {
    if params.target == 0 {
        anyhow::bail!(
            "--target 0: a cluster table needs at least one cluster; nothing was written"
        );
    }
    let mut paths = cfg.paths.clone();
    // build from the raw data alone: an existing cluster file is an output here, not an input
    paths.clusters = paths.clusters.with_extension("does-not-exist");
    let res = gtb_resources::load(&paths)?;
    let cl = gtb_clusters::build(&res, params);
    if cl.len() > params.target {
        anyhow::bail!(
            "--target {}: every destination keeps a cluster of its own or a place in a multi-city one, so this table has at least {} clusters ({} destinations); nothing was written to {}",
            params.target,
            cl.len(),
            res.destinations().count(),
            cfg.paths.clusters.display()
        );
    }
    let csv = gtb_clusters::to_csv(&res, &cl);
    gtb_core::digest::write_atomic(&cfg.paths.clusters, csv.as_bytes())?;
    Ok((cl.len(), csv))
}

/// `gtb transport`: model transport.csv from the tables beside the configured cities.csv
/// (airports.csv, rail_lines.csv, rail_services.csv, rail_nodes.csv) and write it to `out`.
/// Returns the number of rows.
pub fn transport(cfg: &Config, out: &std::path::Path) -> Result<usize> {
    let dir = cfg
        .paths
        .cities
        .parent()
        .unwrap_or_else(|| std::path::Path::new("."));
    let inputs = gtb_network::Inputs::load(dir)?;
    let rows = gtb_network::model(&inputs);
    gtb_core::digest::write_atomic(out, gtb_network::to_csv(&inputs, &rows).as_bytes())?;
    Ok(rows.len())
}

/// `gtb validate FILE` (`-`: standard input): every check on each task, and the file's own
/// (task_ids unique); returns (tasks, findings). A line that is not a task is an error that
/// names it (`FILE:LINE: why`), like `gtb audit`'s.
pub fn validate_file(
    cfg: &Config,
    file: &std::path::Path,
) -> Result<(usize, Vec<gtb_validate::Finding>)> {
    use gtb_audit::load::{input_name, open_input};
    // names are matched against every city the store has POIs of, however few: the
    // destination thresholds are for sampling
    let mut cfg = cfg.clone();
    if cfg.paths.resources.is_some() {
        let st = cfg.store.get_or_insert_with(Default::default);
        (st.min_attractions, st.min_food) = (1, 0);
    }
    let cfg = &cfg;
    let res = load_resources(cfg)?;
    let name = input_name(file);
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_input(file)?, &mut bytes)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    validate_bytes(&gtb_validate::Validator::new(&res, cfg), &name, &bytes)
}

/// [`validate_file`] on the bytes of a file called `name` in messages.
pub fn validate_bytes(
    v: &gtb_validate::Validator,
    name: &str,
    bytes: &[u8],
) -> Result<(usize, Vec<gtb_validate::Finding>)> {
    use gtb_audit::load::{malformed_lines, parse_line};
    let mut tasks = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        match parse_line(raw) {
            None => {}
            Some(Ok(t)) => tasks.push((i + 1, t)),
            Some(Err(message)) => bad.push(gtb_audit::report::BadLine {
                line: i + 1,
                message,
            }),
        }
    }
    if !bad.is_empty() {
        return Err(malformed_lines(name, &bad, ""));
    }
    let mut findings = gtb_validate::duplicate_task_ids(&tasks);
    for (_, t) in &mut tasks {
        findings.extend(v.check_task(t, gtb_validate::Mode::Audit).problems);
    }
    Ok((tasks.len(), findings))
}
