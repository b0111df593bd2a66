//! The operations behind the commands besides `gtb build` (which is `gtb_build`, above this
//! crate): audit, export, merge, solve and score, import, clusters, transport, validate, and
//! publishing a split (`publish`), which builds and merges share. Tests call them directly.

pub mod audit;
pub mod export;
pub mod lines;
pub mod lock;
pub mod merge;
pub mod official;
pub mod plans;
pub mod publish;
pub mod score;
pub mod sinks;
pub mod solve;
pub mod world;

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
    let v = gtb_validate::Validator::new(&res, cfg);
    let checked = gtb_audit::load::fold_reader(&CheckFold(&v), open_input(file)?, 32 << 20)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    checked.findings(&name)
}

/// [`validate_file`] on the bytes of a file called `name` in messages.
pub fn validate_bytes(
    v: &gtb_validate::Validator,
    name: &str,
    bytes: &[u8],
) -> Result<(usize, Vec<gtb_validate::Finding>)> {
    gtb_audit::load::fold_bytes(&CheckFold(v), bytes).findings(name)
}

/// What checking a task file found: per line, its task id and its findings, or why it is not
/// a task.
#[derive(Default)]
struct Checked {
    ids: Vec<(usize, String)>,
    findings: Vec<(usize, gtb_validate::Finding)>,
    bad: Vec<gtb_audit::report::BadLine>,
}

impl Checked {
    fn merge(mut self, other: Checked) -> Checked {
        self.ids.extend(other.ids);
        self.findings.extend(other.findings);
        self.bad.extend(other.bad);
        self
    }

    /// (tasks, findings): the repeated task ids first, then each task's findings in file
    /// order; malformed lines are an error naming them.
    fn findings(mut self, name: &str) -> Result<(usize, Vec<gtb_validate::Finding>)> {
        if !self.bad.is_empty() {
            self.bad.sort_by_key(|b| b.line);
            return Err(gtb_audit::load::malformed_lines(name, &self.bad, ""));
        }
        self.ids.sort_unstable_by_key(|(line, _)| *line);
        // stable: a task's own findings keep the order the checks gave them
        self.findings.sort_by_key(|(line, _)| *line);
        let ids = self.ids.iter().map(|(line, id)| (*line, id.as_str()));
        let mut out = gtb_validate::duplicate_task_ids(ids);
        out.extend(self.findings.into_iter().map(|(_, f)| f));
        Ok((self.ids.len(), out))
    }
}

/// Every line of a task file through every check, lines in parallel
/// (`gtb_audit::load::LineFold`).
struct CheckFold<'v, 'r>(&'v gtb_validate::Validator<'r>);

impl gtb_audit::load::LineFold for CheckFold<'_, '_> {
    type Acc = Checked;
    // the findings are put back in file order (`Checked::findings`)
    const BY_DESTINATION: bool = true;
    fn init(&self) -> Checked {
        Checked::default()
    }
    fn fold(&self, acc: &mut Checked, line: usize, task: Result<gtb_core::task::Task, String>) {
        match task {
            Ok(mut t) => {
                let found = self
                    .0
                    .check_task(&mut t, gtb_validate::Mode::Audit)
                    .problems;
                acc.findings.extend(found.into_iter().map(|f| (line, f)));
                acc.ids.push((line, t.task_id));
            }
            Err(message) => acc.bad.push(gtb_audit::report::BadLine { line, message }),
        }
    }
    fn merge(&self, a: Checked, b: Checked) -> Checked {
        a.merge(b)
    }
}
