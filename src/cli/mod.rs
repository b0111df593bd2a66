//! The command line: parse arguments, resolve them once with the config file into a plan,
//! call `ops`, print results. No pipeline logic lives here.

use crate::config::Config;
use crate::ops;
use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "gtb", version, about = "Build GroupTravelBench-style multi-user travel-planning datasets")]
pub struct Cli {
    /// Config file (default: ./gtb.toml when present, else built-in defaults)
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Worker threads (0 = all cores); results do not depend on it
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Default, Clone)]
pub struct RunArgs {
    /// Master seed
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of tasks
    #[arg(long)]
    pub n: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the pipeline: prepare -> sample -> generate -> validate -> write
    Build {
        #[command(flatten)]
        run: RunArgs,
        /// Output folder (test.jsonl, manifest.json)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Show which stages would run, and why, without running them
        #[arg(long)]
        explain: bool,
        /// Leakage-free named splits, e.g. train=5000,dev=500,test=650
        #[arg(long)]
        splits: Option<String>,
        /// With --splits: this many destination cities appear only in the test split
        #[arg(long, default_value_t = 0)]
        holdout_cities: usize,
        /// Preference generator: offline (default) or openai
        #[arg(long)]
        llm: Option<String>,
    },
    /// Sample task skeletons only
    Sample {
        #[command(flatten)]
        run: RunArgs,
        /// Output JSONL file
        #[arg(long)]
        out: PathBuf,
    },
    /// Build the destination clusters from city coordinates
    Clusters {
        /// Number of clusters to aim at
        #[arg(long, default_value_t = 175)]
        target: usize,
    },
    /// Run every validator on a task file
    Validate {
        file: PathBuf,
    },
}

fn load_config(cli: &Cli) -> Result<Config> {
    let mut cfg = match &cli.config {
        Some(p) => Config::from_file(p)?,
        None if PathBuf::from("gtb.toml").exists() => Config::from_file(&PathBuf::from("gtb.toml"))?,
        None => Config::default(),
    };
    if let Some(t) = cli.threads {
        cfg.run.threads = t;
    }
    Ok(cfg)
}

fn apply_run(cfg: &mut Config, run: &RunArgs) {
    if let Some(s) = run.seed {
        cfg.run.seed = s;
    }
    if let Some(n) = run.n {
        cfg.run.n = n;
    }
}

fn parse_splits(s: &str) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (name, n) = part.split_once('=').with_context(|| format!("--splits: {part:?} is not NAME=COUNT"))?;
        let n: usize = n.trim().parse().with_context(|| format!("--splits: {n:?} is not a count"))?;
        if name.trim().is_empty() || n == 0 || out.iter().any(|(x, _): &(String, usize)| x == name.trim()) {
            bail!("--splits: {part:?}: names must be distinct and non-empty, counts positive");
        }
        out.push((name.trim().to_string(), n));
    }
    // the test split is sampled first so that it does not depend on the others
    out.sort_by_key(|(n, _)| match n.as_str() { "test" => 0, "dev" | "val" | "valid" => 1, _ => 2 });
    Ok(out)
}

fn run(cli: Cli) -> Result<()> {
    let mut cfg = load_config(&cli)?;
    if cfg.run.threads > 0 {
        rayon::ThreadPoolBuilder::new().num_threads(cfg.run.threads).build_global().ok();
    }
    match cli.command {
        Command::Build { run, out, explain, splits, holdout_cities, llm } => {
            apply_run(&mut cfg, &run);
            if let Some(o) = out {
                // a build elsewhere keeps all of its outputs together
                cfg.run.work_dir = o.join(".work");
                cfg.run.reports = o.join("validation_reports");
                cfg.run.out = o;
            }
            if let Some(g) = llm {
                cfg.run.generator = g;
            }
            if cfg.run.generator != "offline" {
                bail!("generator {:?} is not available in this build; use the offline generator (the default)", cfg.run.generator);
            }
            let splits = splits.as_deref().map(parse_splits).transpose()?.unwrap_or_default();
            let plan = ops::BuildPlan { cfg, explain, splits, verbose: true, holdout_cities };
            let s = ops::build(&plan)?;
            for sp in &s.splits {
                println!("{}: {} tasks -> {} (sha256 {}, {} dropped and replaced)", sp.name, sp.tasks, sp.path.display(), sp.sha256, sp.dropped);
            }
        }
        Command::Sample { run, out } => {
            apply_run(&mut cfg, &run);
            cfg.validate()?;
            let sk = ops::sample(&cfg)?;
            crate::digest::write_atomic(&out, &crate::pipeline::to_jsonl(&sk))?;
            println!("{} skeletons -> {}", sk.len(), out.display());
        }
        Command::Clusters { target } => {
            let (n, _) = ops::clusters(&cfg, crate::clusters::ClusterParams { target, ..Default::default() })?;
            println!("{n} clusters -> {}", cfg.paths.clusters.display());
        }
        Command::Validate { file } => {
            let (n, findings) = ops::validate_file(&cfg, &file)?;
            for f in &findings {
                println!("{f}");
            }
            if !findings.is_empty() {
                bail!("{}: {} problem(s) in {n} task(s)", file.display(), findings.len());
            }
            println!("{}: {n} tasks, every check passed", file.display());
        }
    }
    Ok(())
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
