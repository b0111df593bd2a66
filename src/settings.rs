//! The raw arguments and the config file, resolved once into a validated `Settings` (ripgrep's
//! `HiArgs`): flags are laid over the config, every value is checked, and each command receives
//! the options of its `gtb_ops` operation. Nothing here reads data or writes a file.

use crate::args::{self, Cli, Command};
use anyhow::{Context, Result, bail};
use gtb_build::BuildRequest;
use gtb_core::config::{self, Config};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Everything a command needs, checked.
pub struct Settings {
    /// the config file (or the defaults) with the flags laid over it
    pub cfg: Config,
    pub command: Resolved,
}

/// A command with its validated options.
pub enum Resolved {
    Build(Box<BuildRequest>),
    Merge(gtb_ops::merge::MergeOptions),
    Import(gtb_store::import::ImportOptions),
    Sample { out: PathBuf },
    Clusters(gtb_clusters::ClusterParams),
    Transport { out: PathBuf },
    Validate { file: PathBuf },
    Audit(gtb_ops::audit::AuditOptions),
    Export(gtb_ops::export::ExportOptions),
    Solve(gtb_ops::solve::SolveOptions),
    Score(gtb_ops::score::ScoreOptions, ScoreGate),
    PoiTable { out: PathBuf, world: bool },
    ToolsServe(gtb_tools::ServeOptions),
    ToolsFill(gtb_tools::FillOptions),
}

/// What makes `gtb score` fail besides an invalid plan.
#[derive(Debug, Clone, Copy)]
pub struct ScoreGate {
    /// `--witness`: a broken witness contract or a task without a plan
    pub witness: bool,
}

impl Settings {
    pub fn resolve(cli: Cli) -> Result<Settings> {
        let mut cfg = load_config(cli.config.as_deref())?;
        if let Some(t) = cli.threads {
            cfg.run.threads = t;
        }
        // bounded before any thread is spawned
        config::check_threads(cfg.run.threads)?;
        let command = match cli.command {
            Command::Build(a) => Resolved::Build(Box::new(build_request(&mut cfg, a)?)),
            Command::Merge(a) => Resolved::Merge(gtb_ops::merge::MergeOptions {
                dirs: a.dirs,
                out: a.out,
                wait: a.wait,
            }),
            Command::Import(a) => Resolved::Import(import_options(a)?),
            Command::Sample(a) => {
                a.run.apply(&mut cfg);
                cfg.validate()?;
                Resolved::Sample { out: a.out }
            }
            Command::Clusters(a) => Resolved::Clusters(gtb_clusters::ClusterParams {
                target: a.target,
                ..Default::default()
            }),
            Command::Transport(a) => Resolved::Transport {
                out: a.out.unwrap_or_else(|| cfg.paths.transport.clone()),
            },
            Command::Validate(a) => {
                a.inputs.apply(&mut cfg);
                Resolved::Validate { file: a.file }
            }
            Command::Audit(a) => Resolved::Audit(gtb_ops::audit::AuditOptions {
                file: a.file,
                against: a.against.as_deref().map(gtb_audit::Against::parse),
                format: a.format,
                out: a.out,
                skip_bad: a.skip_bad,
            }),
            Command::Export(a) => Resolved::Export(gtb_ops::export::ExportOptions {
                license: a.license,
                rows_per_file: a.rows_per_file,
                ..gtb_ops::export::ExportOptions::new(&a.split_dir, a.format, &a.out)
            }),
            Command::Solve(a) => {
                a.inputs.apply(&mut cfg);
                Resolved::Solve(gtb_ops::solve::SolveOptions {
                    tasks: a.tasks,
                    out: a.out,
                    format: a.format,
                })
            }
            Command::Score(a) => {
                a.inputs.apply(&mut cfg);
                Resolved::Score(
                    gtb_ops::score::ScoreOptions {
                        tasks: a.tasks,
                        plans: a.plans,
                        format: a.format,
                        out: a.out,
                        credit_stand_ins: a.credit_stand_ins,
                        against: a.against,
                    },
                    ScoreGate { witness: a.witness },
                )
            }
            Command::PoiTable(a) => {
                a.inputs.apply(&mut cfg);
                Resolved::PoiTable {
                    out: a.out,
                    world: a.world,
                }
            }
            Command::Tools(t) => match t.command {
                args::ToolsCommand::Serve(a) => Resolved::ToolsServe(gtb_tools::ServeOptions {
                    addr: listen_addr(&a.host, a.port)?,
                    split: a.split,
                }),
                args::ToolsCommand::Fill(a) => Resolved::ToolsFill(gtb_tools::FillOptions {
                    split: a.split_dir,
                    missed: a.missed,
                    wait: a.wait,
                }),
            },
        };
        Ok(Settings { cfg, command })
    }
}

/// `--host H --port P` as an address to bind: an IP address, or `localhost` (loopback).
fn listen_addr(host: &str, port: u16) -> Result<std::net::SocketAddr> {
    let ip = match host {
        "localhost" => std::net::IpAddr::from([127, 0, 0, 1]),
        h => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .with_context(|| {
                format!("--host {h:?}: not an IP address (127.0.0.1, ::1, 0.0.0.0, localhost)")
            })?,
    };
    Ok(std::net::SocketAddr::new(ip, port))
}

/// `--config FILE`, else ./gtb.toml when present, else the built-in defaults.
fn load_config(path: Option<&Path>) -> Result<Config> {
    match path {
        Some(p) => Config::from_file(p),
        None if Path::new("gtb.toml").exists() => Config::from_file(Path::new("gtb.toml")),
        None => Ok(Config::default()),
    }
}

/// `gtb build`: the flags over the config, checked as one request.
fn build_request(cfg: &mut Config, a: args::BuildArgs) -> Result<BuildRequest> {
    a.run.apply(cfg);
    a.inputs.apply(cfg);
    if let Some(o) = a.out {
        // a build elsewhere keeps all of its outputs together
        cfg.run.work_dir = o.join(".work");
        cfg.run.reports = o.join("validation_reports");
        cfg.run.out = o;
    }
    if cfg.run.generator == "openai" {
        a.llm.apply(&mut cfg.llm);
        gtb_llm::resolve(&mut cfg.llm);
    }
    let splits = a
        .splits
        .as_deref()
        .map(parse_splits)
        .transpose()?
        .unwrap_or_default();
    let req = BuildRequest {
        explain: a.explain,
        splits,
        verbose: true,
        holdout_cities: a.holdout_cities,
        wait: a.wait,
        shard: a.shard,
        ..BuildRequest::new(cfg.clone())
    };
    req.validate()?;
    Ok(req)
}

/// `--splits train=5000,dev=500,test=650`, the test split first so that it does not depend on
/// the others.
fn parse_splits(s: &str) -> Result<Vec<(String, usize)>> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for part in s.split(',') {
        let (name, n) = part
            .split_once('=')
            .with_context(|| format!("--splits: {part:?} is not NAME=COUNT"))?;
        let n: usize = n
            .trim()
            .parse()
            .with_context(|| format!("--splits: {n:?} is not a count"))?;
        let name = name.trim();
        if name.is_empty() || n == 0 || out.iter().any(|(x, _)| x == name) {
            bail!("--splits: {part:?}: names must be distinct and non-empty, counts positive");
        }
        out.push((name.to_string(), n));
    }
    out.sort_by_key(|(n, _)| match n.as_str() {
        "test" => 0,
        "dev" | "val" | "valid" => 1,
        _ => 2,
    });
    Ok(out)
}

fn import_options(a: args::ImportArgs) -> Result<gtb_store::import::ImportOptions> {
    Ok(gtb_store::import::ImportOptions {
        adapter: a.adapter,
        input: a.input,
        out: a.out,
        cities: a.cities.map(|c| c.into_iter().collect::<BTreeSet<_>>()),
        licence: a.licence,
        map: parse_map(&a.map)?,
        radius_km: a.radius_km,
        progress: !a.quiet,
    })
}

/// `--map name=名称,city=城市` as store column -> input column.
fn parse_map(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .with_context(|| format!("--map {p:?}: want FIELD=COLUMN, e.g. name=名称"))?;
        if out.insert(k.to_string(), v.to_string()).is_some() {
            bail!("--map: {k} is mapped twice");
        }
    }
    Ok(out)
}
